# SPDX-License-Identifier: GPL-2.0-only
"""The part of a characterization that runs where the module is loaded
(the VM, or the host with --native): the backing ramdisk, each device in
turn as char-dut (every dm-pcm device of the spec, then the dm-linear
baseline), file systems, fullness, schedulers, and fio on every point.

Writes into the run's directory: jobs/pNNN.fio, raw/pNNN-dK.json (fio's
json+ of point NNN on device K) and run.json (what ran where, the
commands, the tables and config replies, the wall time, the dilation
and the calibration; per run on dm-pcm its dilation, the overhead_ns it
ran with and the device's status after it: held, late, late_max_ns, the
modeled mean latencies and the lateness histogram, and the "ranks"
reply (each rank's and bus's requests, busy time, utilisation and
waits), counted from a "stats reset" just before fio)."""
import json
import os
import stat
import subprocess
import time
import types

from pcmlib import fio as pfio, status as pcmstatus, words as pwords
from . import fiojob, trace
from .spec import MIXED, size_word

LINEAR = 'dm-linear'
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NULLB = '/sys/kernel/config/nullb/charb'
TRACE_DIR = '/tmp/pcm-char-bt'  # a tmpfs while tracing


def nullb_device():
    """The block device of the configfs null_blk: named after its
    directory on recent kernels, nullbINDEX on older ones."""
    name = os.path.basename(NULLB)
    if not os.path.exists(f'/sys/block/{name}'):
        with open(f'{NULLB}/index', encoding='utf-8') as fh:
            name = f'nullb{fh.read().strip()}'
    for _ in range(100):  # devtmpfs makes the node; nothing else may have run yet
        if os.path.exists(f'/dev/{name}') and stat.S_ISBLK(os.stat(f'/dev/{name}').st_mode):
            return f'/dev/{name}'
        time.sleep(0.05)
    raise RuntimeError(f'null_blk: no block device /dev/{name}')


# what run.json keeps of a point's status (pcmlib.status's names)
STATUS_KEEP = ('reads', 'writes', 'held', 'late', 'late_max_ns', 'read_lat_mean_ns',
               'write_lat_mean_ns', 'tag_waits', 'cache_waits')


def point_overhead(p, overhead):
    """The overhead_ns point @p's device runs with: @overhead's (ns per
    direction, {'read', 'write'}) of its direction; a mix: the mean of
    both weighted by its read share.  None: uncalibrated."""
    if not overhead:
        return None
    if p.rw in MIXED:
        share = p.rwmixread / 100
        return round(share * overhead['read'] + (1 - share) * overhead['write'])
    return round(overhead['read' if p.rw.endswith('read') else 'write'])


def parse_lateness(text):
    """The "lateness" message's reply: [[from_ns, to_ns, count]]."""
    hist = []
    for w in text.split():
        rng, n = pwords.split_word(w)
        if rng != 'completions' and n is not None and '-' in rng:
            lo, hi = rng.split('-', 1)
            hist.append([int(lo), int(hi), int(n)])
    return hist


def device_status(text, lateness_text):
    """What run.json keeps of a dm-pcm device's status after a point
    (STATUS_KEEP) and its lateness histogram."""
    st = pcmstatus.parse_dmsetup(text, fiojob.DEVICE_NAME)
    out = {k: st.get(k) for k in STATUS_KEEP}
    out['lateness'] = parse_lateness(lateness_text)
    return out


def device_ranks(text):
    """What run.json keeps of a dm-pcm device's "ranks" reply after a
    point (counted from the "stats reset" before it): the reply as
    'pcmctl ranks --json' gives it (pcmlib.status.parse_ranks())."""
    return pcmstatus.parse_ranks(text)


def backing_too_slow(dev, probe_us, need_us, k):
    """Why the backing device @dev cannot carry the run, or None: @probe_us,
    {'read': us, 'write': us}, its 4 KiB QD1 mean latency through
    dm-linear; @need_us, {'read': (us, words), ...}, the fastest QD1 4 KiB
    latency the spec's devices model (device clock), held K = @k times
    longer on the host's.  dm-pcm only adds time to what the backing
    device takes: one slower than the model makes every completion late."""
    for side in ('read', 'write'):
        if side not in need_us or side not in probe_us:
            continue
        need, words = need_us[side]
        if probe_us[side] >= need * k:
            return (f'{dev}: 4 KiB random {side}s take {probe_us[side]:.1f} us through '
                    f'dm-linear, and {words} at dilation {k} holds them {need * k:.1f} us: '
                    f'the backing device is {(probe_us[side] / (need * k) - 1) * 100:.0f} % '
                    f'slower than the device it should emulate (dm-pcm only adds time, so '
                    f'its completions would be late); use a faster device or a larger '
                    f'--dilation')
    return None


class Guest:
    def __init__(self, spec, run_dir, log=print, tracing=False, backing_dev=None):
        self.spec, self.dir, self.log, self.tracing = spec, run_dir, log, tracing
        self.backing_dev = backing_dev   # a real block device, its data destroyed
        self.commands = []
        self.backing = None
        self.overhead = None        # ns per direction: {'read', 'write'}
        self.calibration = None     # how it was had, for run.json

    def sh(self, cmd, record=True):
        """Run cmd (from the repository, as the report shows it); its stdout."""
        if record:
            self.commands.append(cmd)
        res = subprocess.run(cmd, shell=True, cwd=TOP, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        if res.returncode:
            raise RuntimeError(f'"{cmd}" failed (exit {res.returncode}): {res.stderr.strip()}')
        return res.stdout.strip()

    def cleanup(self):
        self.sh(f'umount {fiojob.MOUNT} 2>/dev/null; dmsetup remove {fiojob.DEVICE_NAME} '
                '2>/dev/null; true', record=False)

    def make_backing(self):
        """brd, or a memory-backed blk-mq null_blk (configfs: any size in
        MiB), filled once so every page is allocated before any timing."""
        mib = self.spec.ramdisk >> 20
        self.cleanup()
        if self.backing_dev:
            self.backing = self.backing_dev
            # the first RAMDISK of it, where the points run
            self.sh(f'dd if=/dev/zero of={self.backing} bs=1M count={mib} oflag=direct '
                    'status=none')
            self.probe_backing()
            return
        if self.spec.backing == 'brd':
            self.sh('rmmod brd 2>/dev/null; true', record=False)
            self.sh(f'modprobe brd rd_nr=1 rd_size={mib * 1024} max_part=0')
            self.backing = '/dev/ram0'
        else:
            # null_blk loads configfs, which makes /sys/kernel/config
            self.sh('modprobe null_blk nr_devices=0')
            self.sh('mountpoint -q /sys/kernel/config || mount -t configfs none '
                    '/sys/kernel/config')
            self.sh(f'rmdir {NULLB} 2>/dev/null; mkdir {NULLB} && echo {mib} > {NULLB}/size && '
                    f'echo 1 > {NULLB}/memory_backed && echo 2 > {NULLB}/queue_mode && '
                    f'echo 1 > {NULLB}/power')
            self.backing = nullb_device()
        self.sh(f'dd if=/dev/zero of={self.backing} bs=1M count={mib} oflag=direct status=none')

    def probe_backing(self):
        """--backing-dev: 4 KiB QD1 random reads and writes through
        dm-linear over it, 1 s each; RuntimeError (backing_too_slow()) if
        it is slower than a device of the spec models them."""
        from pcmlib import model as pmodel
        sectors = self.spec.ramdisk >> 9
        self.sh(f'dmsetup create char-probe --table "0 {sectors} linear {self.backing} 0"')
        probe = {}
        try:
            for side in ('read', 'write'):
                probe[side] = self.probe_us(side, sectors)
        finally:
            self.sh('dmsetup remove char-probe', record=False)
        need = {}
        for dev in self.spec.devices():
            if dev == 'linear':
                continue
            for side in ('read', 'write'):
                got = pmodel.metric(pmodel.predict(dev, rw=f'rand{side}', ios=2000), side,
                                    'lat_mean_us')
                if got is not None and (side not in need or got < need[side][0]):
                    need[side] = (got, dev)
        self.log(f'# backing {self.backing}: 4 KiB QD1 through dm-linear: read '
                 f'{probe["read"]:.1f} us, write {probe["write"]:.1f} us; the fastest the '
                 f'spec models: ' + ', '.join(f'{side} {v:.1f} us ({w})'
                                              for side, (v, w) in need.items()))
        why = backing_too_slow(self.backing, probe, need, self.spec.dilation)
        if why:
            raise RuntimeError(why)

    def probe_us(self, side, sectors):
        """fio's mean clat (us) of 4 KiB QD1 random @side I/Os for 1 s
        over char-probe (@sectors long)."""
        cmd = (f'fio --name=probe --filename=/dev/mapper/char-probe '
               f'--rw=rand{side} --bs=4k --iodepth=1 --direct=1 '
               f'--ioengine=psync --time_based --runtime=1 '
               f'--size={sectors >> 11}m --output-format=json')
        self.commands.append(cmd)
        job = pfio.jobs(pfio.run(cmd, cwd=TOP))[0]
        return pfio.lat(job[side], 'clat')['mean'] / 1000

    def remove_backing(self):
        self.cleanup()
        if self.backing_dev:
            return
        if self.spec.backing == 'brd':
            self.sh('rmmod brd', record=False)
        else:
            self.sh(f'echo 0 > {NULLB}/power; rmdir {NULLB}; rmmod null_blk', record=False)

    def calibrate(self):
        """The overhead_ns per direction the points run with: measured here
        (calibrate = true: pcmlib.calibrate.calibrate() over the backing
        device at the run's dilation, before any device of the run), given
        (overhead_ns in the spec), or none ("uncalibrated")."""
        spec = self.spec
        if spec.calibrate:
            from pcmlib import calibrate as pcal
            runs = []
            args = types.SimpleNamespace(runtime=max(1.0, spec.runtime), cpus=1)
            self.log(f'# calibration: this host\'s completion overhead at dilation '
                     f'{spec.dilation} ({pcal.TIMING_CAL_US} us held, 4 KiB QD1)')
            # libaio, as every job file: its submission path is the figures'
            got = pcal.calibrate(args, runs, dilation=spec.dilation, backing=self.backing,
                                 size_mib=(spec.ramdisk >> 20) - 1, engine='libaio')
            self.overhead = {'read': round(got['randread']), 'write': round(got['randwrite'])}
            self.calibration = {'how': 'measured', 'overhead_ns': self.overhead,
                                'dilation': spec.dilation, 'hold_us': pcal.TIMING_CAL_US,
                                'runs': runs}
        elif spec.overhead_ns:
            self.overhead = dict(spec.overhead_ns)
            self.calibration = {'how': 'given', 'overhead_ns': self.overhead}

    def create(self, dev):
        """char-dut as dev (table words, or dm-linear): {table, config}."""
        if dev == LINEAR:
            sectors = self.sh(f'blockdev --getsz {self.backing}', record=False)
            self.sh(f'dmsetup create {fiojob.DEVICE_NAME} --table '
                    f'"0 {sectors} linear {self.backing} 0"')
            return {'table': self.sh(f'dmsetup table {fiojob.DEVICE_NAME}', record=False)}
        # format: a fresh geometry whatever the last device left;
        # dilation:K from the spec among the words (table_words)
        words = self.spec.table_words(dev)
        self.sh(f'tools/pcmctl create {fiojob.DEVICE_NAME} {self.backing} {words} format')
        return {'table': self.sh(f'dmsetup table {fiojob.DEVICE_NAME}', record=False),
                'config': self.sh(f'tools/pcmctl message {fiojob.DEVICE_NAME} config',
                                  record=False),
                'dilation': self.spec.dilation_of(dev)}

    def prepare(self, target, fullness, scheduler, need):
        """The file system (or none), filled to fullness percent; need: the
        bytes the points' files take."""
        dev = fiojob.DEVICE
        sched = f'/sys/block/{os.path.basename(self.backing)}/queue/scheduler'
        if self.spec.backing != 'brd':
            self.sh(f'echo {scheduler} > {sched}')
        if target == 'raw':
            size = int(self.sh(f'blockdev --getsize64 {dev}', record=False))
            fill = size * fullness // 100 >> 20
            if fill:  # the end of the device: fio's files are at its start
                self.sh(f'dd if=/dev/zero of={dev} bs=1M seek={(size >> 20) - fill} '
                        f'count={fill} oflag=direct status=none')
            return
        # 4 KiB blocks: mke2fs picks 1 KiB on a small device, and 4 KiB
        # file I/O would then straddle rows
        self.sh(f'mkfs.{target} -q -F -b 4096 {dev}')
        self.sh(f'mkdir -p {fiojob.MOUNT} && mount {dev} {fiojob.MOUNT}')
        st = os.statvfs(fiojob.MOUNT)
        fill = (st.f_blocks * st.f_frsize * fullness // 100 - need) >> 20
        if fill > 0:
            self.sh(f'dd if=/dev/zero of={fiojob.MOUNT}/fill bs=1M count={fill} oflag=direct '
                    f'status=none')

    def run_point(self, p, dev, k, done):
        """fio on point p (one job file: warm-up and repetitions) on dev,
        the k-th device of the spec; blktrace around it if tracing."""
        spec, total = self.spec, self.spec.runs()
        out = os.path.join(self.dir, 'raw', f'{p.id}-d{k}.json')
        # in fio's own time: an icount guest's clock jumps while it
        # idles, so its elapsed time says little of the host's
        left = spec.seconds() * (total - done) / total
        self.log(f'# {done + 1}/{total}: {p.id} on {dev}: {p.describe()} '
                 f'({total - done - 1} after it; {left:.0f} s of fio runtime left, '
                 f'{time.monotonic() - self.start:.0f} s on the guest clock so far)')
        devs = [fiojob.DEVICE, self.backing]
        pcm = dev != LINEAR
        oh = point_overhead(p, self.overhead) if pcm else None
        if oh is not None:
            self.sh(f'dmsetup message {fiojob.DEVICE_NAME} 0 set overhead_ns {oh}')
        if pcm:   # the device's own counters of this point alone
            self.sh(f'dmsetup message {fiojob.DEVICE_NAME} 0 stats reset', record=False)
        tracer = trace.start(devs, TRACE_DIR) if self.tracing else None
        t = time.monotonic()
        subprocess.run(['fio', *fiojob.FIO_ARGS, f'--output={out}',
                        os.path.join(self.dir, 'jobs', f'{p.id}.fio')],
                       check=True, cwd=self.dir, stdout=subprocess.DEVNULL)
        r = {'point': p.id, 'device': dev, 'file': os.path.basename(out),
             's': time.monotonic() - t}
        if pcm:
            r.update(dilation=self.spec.dilation_of(dev), overhead_ns=oh, status=device_status(
                self.sh(f'dmsetup status {fiojob.DEVICE_NAME}', record=False),
                self.sh(f'dmsetup message {fiojob.DEVICE_NAME} 0 lateness', record=False)),
                ranks=device_ranks(
                    self.sh(f'dmsetup message {fiojob.DEVICE_NAME} 0 ranks', record=False)))
        if tracer:
            r['trace'] = {'dropped': trace.stop(tracer), 'devices': {
                ('top' if d == fiojob.DEVICE else 'below'): v for d, v in
                trace.summarize(devs, TRACE_DIR, os.path.join(self.dir, 'trace'),
                                f'{p.id}-d{k}').items()}}
            self.sh(f'umount {TRACE_DIR}', record=False)
        return r

    def run(self):
        spec, self.start = self.spec, time.monotonic()
        os.makedirs(os.path.join(self.dir, 'raw'), exist_ok=True)
        fiojob.write_jobs(spec, os.path.join(self.dir, 'jobs'))
        devices, runs = {}, []
        try:
            pfio.prefetch()
            self.make_backing()
            self.calibrate()
            for dev, (target, fullness, sched), pts in spec.plan():
                k = spec.devices().index(dev)
                dev = LINEAR if dev == 'linear' else dev
                devices[dev] = self.create(dev)
                self.prepare(target, fullness, sched, max(p.size * p.threads for p in pts))
                runs += [self.run_point(p, dev, k, len(runs) + i) for i, p in enumerate(pts)]
                self.cleanup()
        except BaseException:
            try:  # leave nothing behind, and say what failed first
                self.cleanup()
                if self.backing:
                    self.remove_backing()
            except RuntimeError as e:
                self.log(f'# cleanup after the failure: {e}')
            raise
        self.remove_backing()
        return {'kernel': os.uname().release, 'fio': self.sh('fio --version', record=False),
                'cpus': os.cpu_count(), 'backing': self.backing,
                'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                'devices': devices, 'runs': runs, 'commands': self.commands,
                'wall_s': time.monotonic() - self.start,
                'fio_s': sum(r['s'] for r in runs), 'ramdisk': size_word(spec.ramdisk),
                'dilation': spec.dilation, 'calibration': self.calibration}


def run(spec, run_dir, log=print, tracing=False, backing_dev=None):
    """Run spec (with blktrace around every fio run if tracing; over the
    block device @backing_dev, its data destroyed, instead of a ramdisk),
    write run_dir/run.json; returns it."""
    info = Guest(spec, run_dir, log, tracing, backing_dev).run()
    with open(os.path.join(run_dir, 'run.json'), 'w', encoding='utf-8') as fh:
        json.dump(info, fh, indent=1)
    return info
