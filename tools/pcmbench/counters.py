# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench counters

what dm-pcm's counters (the "ranks" figures, the front end's and the
tags' waits) and its tracepoints, disabled, cost: 4 KiB random read and
write IOPS at QD1 and QD32 on dm-pcm with the timing model on and
nothing to delay (preset:none gap_interval:0 read_ns:1 write_ns:1
cmd_ns:1: every request charged to a rank and the front end, counted,
and completed late, past the tracepoints' sites), against the same
table on dm-pcm-bare: the same sources built with the counters and
tracepoints compiled out (make module-bare: PCM_COUNTERS=0, NOTRACE;
target "pcm_bare"), loaded beside dm-pcm in the same boot.  dm-linear
runs beside them.  Each device has a ramdisk of its own, of the same
size, filled.  Rounds interleave the devices, forward then backward;
the cost is one less the median over the rounds of each round's own
ratio of dm-pcm's IOPS to dm-pcm-bare's (the goal: at most 1 %).
--pcm-words adds words to both tables (e.g. "tags:1024": every request
under the model's lock too).
"""
import os
import statistics
import subprocess

from pcmlib import fio
from pcmlib.bench import pcm_length, measure
from .common import TOP, sh, remove_devices, pcm_words, med, table
from .options import HOST, ICOUNT, ROUNDS, RUNTIME, PCM_WORDS

NAME = 'counters'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS, RUNTIME, PCM_WORDS)   # its options' groups (options.py)

DISK_MIB = 128          # each device's ramdisk
FIO_MIB = 120           # what fio covers of each device (dm-pcm's is a little smaller)
WORDS = 'read_ns:1 write_ns:1 cmd_ns:1'
BARE = 'dm-pcm-bare'


def bare_ko(rel):
    return os.path.join(TOP, 'build', rel, 'dm-pcm-bare', 'dm-pcm-bare.ko')


def host_prepare(args, rel):
    """Build dm-pcm-bare.ko for kernel @rel on the host (the guest sees
    the repository read-only)."""
    subprocess.run(['make', '-s', '-C', TOP, 'module-bare', f'KVER={rel}'], check=True,
                   stdin=subprocess.DEVNULL)


def setup(words):
    """Three ramdisks of DISK_MIB, filled: dm-linear over the first,
    dm-pcm over the second, dm-pcm-bare (the module of the same sources
    without counters or tracepoints) over the third."""
    fio.prefetch()
    remove_devices()
    sh('rmmod brd 2>/dev/null; true')
    sh(f'modprobe brd rd_nr=3 rd_size={DISK_MIB * 1024} max_part=0')
    for i in range(3):
        sh(f'dd if=/dev/zero of=/dev/ram{i} bs=1M count={DISK_MIB} oflag=direct status=none')
    ko = bare_ko(os.uname().release)
    if not os.path.exists(ko):
        raise RuntimeError(f'{ko} is missing: make module-bare KVER={os.uname().release}')
    sh('rmmod dm_pcm_bare 2>/dev/null; true')
    sh(f'insmod {ko}')
    sh(f'dmsetup create bench-linear --table "0 {DISK_MIB * 2048} linear /dev/ram0 0"')
    devs = {'dm-linear': '/dev/mapper/bench-linear'}
    for name, target, disk in (('dm-pcm', 'pcm', '/dev/ram1'), (BARE, 'pcm_bare', '/dev/ram2')):
        n = pcm_length(disk, words)
        sh(f'dmsetup create bench-{target} --table "0 {n} {target} {disk} 0 '
           f'{len(words.split())} {words}"')
        devs[name] = f'/dev/mapper/bench-{target}'
    return devs


def guest(args, runs):
    words = pcm_words(f'{WORDS} {args.pcm_words}'.strip())
    devs = list(setup(words).items())
    for rnd in range(args.rounds):
        for rw in ('randread', 'randwrite'):
            for qd in (1, 32):
                for name, dev in devs if rnd % 2 == 0 else devs[::-1]:
                    measure(runs, rnd, name, dev, rw, qd, args, size_mib=FIO_MIB,
                            extra={'words': words})
    remove_devices()
    sh('rmmod dm_pcm_bare; rmmod brd; true')


def paired(rs, base):
    """The median over rounds of each round's own ratio of @rs's IOPS to @base's."""
    b = {r['round']: r['iops'] for r in base}
    return statistics.median(r['iops'] / b[r['round']] for r in rs)


def summarize(res):
    rows = {}
    for r in res['runs']:
        rows.setdefault((r['rw'], r['qd'], r['device']), []).append(r)
    words = res['runs'][0].get('words', '') if res['runs'] else ''
    lines = [f"kernel {res['kernel']}, {res['fio']}, {res['cpus']} vCPU, {res['rounds']} "
             f"rounds of {res['runtime_s']} s, medians; both dm-pcm tables: {words}",
             "dm-pcm-bare: the same sources, counters and tracepoints compiled out "
             "(make module-bare); paired: the median of each round's own ratio"]
    cells, summary = [], []
    for rw in ('randread', 'randwrite'):
        for qd in (1, 32):
            lin, bare = rows[(rw, qd, 'dm-linear')], rows[(rw, qd, BARE)]
            for dev in ('dm-linear', 'dm-pcm', BARE):
                rs = rows[(rw, qd, dev)]
                iops = med(rs, 'iops')
                vs_bare = paired(rs, bare)
                p50 = statistics.median(r['clat_median_ns'] or 0 for r in rs) / 1000
                cost = f'{(1 - vs_bare) * 100:+.2f}%' if dev == 'dm-pcm' else ''
                cells.append([f'{rw} QD{qd}', dev, f'{iops:.0f}', f'{p50:.1f}us',
                              f'{paired(rs, lin):.3f}x', f'{vs_bare:.3f}x', cost])
                summary.append({'rw': rw, 'qd': qd, 'device': dev, 'iops': iops,
                                'clat_median_us': p50,
                                'paired_ratio_to_dm_linear': paired(rs, lin),
                                'paired_ratio_to_bare': vs_bare,
                                **({'cost_pct': (1 - vs_bare) * 100} if dev == 'dm-pcm'
                                   else {})})
    lines += table(['workload', 'device', 'IOPS', 'clat p50', 'vs dm-linear', 'vs bare', 'cost'],
                   cells, '<<>>>>>')
    return '\n'.join(lines), summary
