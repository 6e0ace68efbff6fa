# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench passthrough

random read and write IOPS at QD1 and QD32 on brd, dm-linear and dm-pcm
(preset:none, gap_interval:0), all over one ramdisk, for each block size
of --bs (default 4k; e.g. 4k,1m).  With --cpus N > 1, fio runs N jobs
(numjobs=N, group_reporting) and the IOPS are their sum.  --pcm-words
adds table words to dm-pcm's (e.g. "gap_interval:128", or "channels:2
tags:1024": the timing model on, no delay).
"""
import statistics
from pcmlib.bench import pcm_create, measure
from .common import RAM_MIB, sh, remove_devices, fresh_ramdisk, pcm_words, med, table
from .options import HOST, ICOUNT, ROUNDS, RUNTIME, PCM_WORDS

NAME = 'passthrough'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS, RUNTIME, PCM_WORDS)   # its options' groups (options.py)


def add_args(p):
    """passthrough's own option (main.py checks the sizes)."""
    p.add_argument('--bs', default='4k',
                   help='block sizes, comma-separated (default 4k; e.g. 4k,1m)')


def setup_passthrough(words=''):
    """brd, dm-linear and dm-pcm (pcm_words(words)) over the same ramdisk."""
    fresh_ramdisk()
    sectors = RAM_MIB * 2048
    sh(f'dmsetup create bench-linear --table "0 {sectors} linear /dev/ram0 0"')
    return {'brd': '/dev/ram0', 'dm-linear': '/dev/mapper/bench-linear',
            'dm-pcm': pcm_create('bench-pcm', pcm_words(words))}


def paired_ratio(rs, base):
    """The median over rounds of a device's IOPS over dm-linear's in the
    same round."""
    lin = {r['round']: r['iops'] for r in base}
    return statistics.median(r['iops'] / lin[r['round']] for r in rs)


def guest(args, runs):
    devs = list(setup_passthrough(args.pcm_words).items())
    # rounds interleave the devices so that slow drift hits all alike, in
    # turn forward and backward: dm-pcm and dm-linear each run right before
    # the other as often as after it
    for rnd in range(args.rounds):
        for bs in args.bs.split(','):
            for rw in ('randread', 'randwrite'):
                for qd in (1, 32):
                    for name, dev in devs if rnd % 2 == 0 else devs[::-1]:
                        measure(runs, rnd, name, dev, rw, qd, args, bs=bs)
    remove_devices()


def summarize(res):
    rows = {}
    for r in res['runs']:
        rows.setdefault((r['bs'], r['rw'], r['qd'], r['device']), []).append(r)
    cpus = res['cpus']
    jobs = f', numjobs={cpus} (IOPS summed)' if cpus > 1 else ''
    lines = [f"kernel {res['kernel']}, {res['fio']}, {cpus} vCPU{jobs}, {res['rounds']} "
             f"rounds of {res['runtime_s']} s, medians; dm-pcm: "
             f"{res.get('pcm_words', 'preset:none gap_interval:0')}",
             "(paired: the median of each round's own ratio, the device beside "
             "dm-linear in the same round; it cancels drift between rounds)"]
    cells, summary = [], []
    for bs in dict.fromkeys(r['bs'] for r in res['runs']):
        for rw in ('randread', 'randwrite'):
            for qd in (1, 32):
                lin = rows[(bs, rw, qd, 'dm-linear')]
                base = med(lin, 'iops')
                for dev in ('brd', 'dm-linear', 'dm-pcm'):
                    rs = rows[(bs, rw, qd, dev)]
                    iops = med(rs, 'iops')
                    paired = paired_ratio(rs, lin)
                    p50 = statistics.median(r['clat_median_ns'] or 0 for r in rs) / 1000
                    cells.append([cpus, bs, f'{rw} QD{qd}', dev, f'{iops:.0f}',
                                  f'{p50:.1f}us', f'{iops / base:.3f}x', f'{paired:.3f}x'])
                    summary.append({'cpus': cpus, 'bs': bs, 'rw': rw, 'qd': qd,
                                    'device': dev, 'iops': iops,
                                    'clat_median_us': p50, 'ratio_to_dm_linear': iops / base,
                                    'paired_ratio_to_dm_linear': paired})
    lines += table(['cpus', 'bs', 'workload', 'device', 'IOPS', 'clat p50', 'vs dm-linear',
                    'paired'], cells, '>><<>>>>')
    return '\n'.join(lines), summary
