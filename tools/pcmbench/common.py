# SPDX-License-Identifier: GPL-2.0-only
"""What the modes share: the ramdisk, dm devices over it, fio, status."""
import json
import os
import statistics
import subprocess
import time

from pcmlib import dmioctl, status as pcmstatus, words as pwords

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

RAM_MIB = 256
VM_TIMEOUT = 4 * 3600  # s: a long run under TCG
RAMP_S = 0.5  # fio's ramp before each measured run


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, text=True,
                          stdout=subprocess.PIPE, **kw).stdout


def remove_devices():
    sh('for d in $(dmsetup ls | awk \'$1 ~ /^bench-/ {print $1}\' | tac); do dmsetup remove $d; done; true')


def prefetch_fio():
    """fio and the shared libraries it loads (libaio among them), read
    once into the guest's page cache.  Read over 9p while a job starts,
    they would idle an icount guest, whose clock then jumps to its next
    timer, again and again while the loaded host answers, and fio gives
    up on a job whose start took its timeout ("job startup hung?")."""
    sh('f=$(command -v fio) && cat "$f" $(ldd "$f" | awk \'$3 ~ /^\\// {print $3}\') '
       '> /dev/null')


def fresh_ramdisk():
    """brd filled: a fresh ramdisk allocates pages on first write."""
    prefetch_fio()
    remove_devices()
    sh('rmmod brd 2>/dev/null; true')
    sh(f'modprobe brd rd_nr=1 rd_size={RAM_MIB * 1024} max_part=0')
    sh(f'dd if=/dev/zero of=/dev/ram0 bs=1M count={RAM_MIB} oflag=direct status=none')


def pcm_length(backing, words):
    """The length pcmctl says is legal."""
    return int(sh(f'{TOP}/tools/pcmctl length {backing} {words}'))


def pcm_create(name, words, backing='/dev/ram0'):
    """dm-pcm over backing, as long as pcmctl says is legal."""
    sh(f'dmsetup create {name} --table "0 {pcm_length(backing, words)} pcm {backing} 0 '
       f'{len(words.split())} {words}"')
    return f'/dev/mapper/{name}'


def dm_timed(call, name, *args):
    """One device-mapper ioctl (dmioctl.DM's call: create, load, resume,
    message), timed with time.monotonic (s).  Not dmsetup: its exec reads
    files over 9p, and an icount guest idle while the host answers has its
    clock jump to its next timer, any number of times."""
    dm = dmioctl.DM()
    try:
        start = time.monotonic()
        err = getattr(dm, call)(name, *args)
        took = time.monotonic() - start
    finally:
        dm.close()
    err = err[0] if isinstance(err, tuple) else err
    if err:
        raise RuntimeError(f'{call} {name} {args}: {os.strerror(err)}')
    return took


def move_gap_timed(name, n):
    return dm_timed('message', name, [b'move_gap', str(n).encode()])


def pcm_words(extra):
    """preset:none gap_interval:0, with the words of extra added or
    replacing those of the same key."""
    return pwords.merge_words('preset:none gap_interval:0', extra)


def fio_cmd(dev, rw, qd, runtime, bs='4k', cpus=1, size_mib=RAM_MIB - 1, engine=None):
    """@engine: psync at QD1 and libaio deeper unless given."""
    engine = engine or ('psync' if qd == 1 else 'libaio')
    jobs = [f'--numjobs={cpus}', '--group_reporting'] if cpus > 1 else []
    return ['fio', '--name=bench', f'--filename={dev}', f'--rw={rw}', f'--bs={bs}',
            '--direct=1', f'--ioengine={engine}', f'--iodepth={qd}', *jobs,
            # in ms: fio reads a time without a unit as whole seconds, so
            # "0.5" was 0 (no ramp; and a runtime under 1 s is no runtime)
            '--time_based', f'--runtime={round(runtime * 1000)}ms',
            f'--ramp_time={round(RAMP_S * 1000)}ms',
            '--norandommap', '--randrepeat=0', f'--size={size_mib}m',
            '--output-format=json']


def run_fio(cmd):
    out = subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE).stdout
    job = json.loads(out[out.index('{'):])['jobs'][0]  # all jobs: group_reporting
    side = job['read'] if job['read']['io_bytes'] else job['write']
    clat = side['clat_ns']
    return {'iops': side['iops'], 'clat_mean_ns': clat['mean'],
            'lat_mean_ns': side['lat_ns']['mean'],
            'clat_median_ns': clat.get('percentile', {}).get('50.000000'),
            'fio_cpu_pct': job['usr_cpu'] + job['sys_cpu']}


def measure(runs, rnd, name, dev, rw, qd, args, extra=None, bs='4k', size_mib=None,
            engine=None):
    cmd = fio_cmd(dev, rw, qd, args.runtime, bs, args.cpus,
                  RAM_MIB - 1 if size_mib is None else size_mib, engine)
    r = run_fio(cmd)
    r.update(device=name, rw=rw, qd=qd, bs=bs, cpus=args.cpus, round=rnd,
             cmd=' '.join(cmd), **(extra or {}))
    runs.append(r)
    print(f'# round {rnd} {name:9} {bs:>4} {rw:9} QD{qd:<2} {r["iops"]:10.0f} IOPS',
          flush=True)


def status(dev):
    name = os.path.basename(dev)
    return pcmstatus.parse_dmsetup(sh(f'dmsetup status {name}'), name)


def med(rs, key):
    return statistics.median(r[key] for r in rs)
