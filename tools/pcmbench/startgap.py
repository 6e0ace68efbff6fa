# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench startgap

4 KiB random write IOPS and mean latency at QD1 and QD32 on dm-pcm over
brd for gap intervals 1, 4, 16, 64, 128, 512 and off (0), with ratios to
off: the shape of Onyx Figure 6 before any timing model.
"""
import statistics
from pcmlib.bench import RAMP_S, pcm_create, measure, status
from .common import remove_devices, fresh_ramdisk, med, table
from .options import HOST, ICOUNT, ROUNDS, RUNTIME

NAME = 'startgap'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS, RUNTIME)   # its options' groups (options.py)


GAP_INTERVALS = (1, 4, 16, 64, 128, 512, 0)


def guest(args, runs):
    """One dm-pcm device per gap interval, created fresh for each run so
    that every interval starts from the same registers."""
    fresh_ramdisk()
    for rnd in range(args.rounds):
        for qd in (1, 32):
            for g in GAP_INTERVALS:
                dev = pcm_create('bench-sg', f'preset:none gap_interval:{g} format')
                before = status(dev)
                measure(runs, rnd, f'G={g or "off"}', dev, 'randwrite', qd, args,
                        {'gap_interval': g})
                runs[-1]['gap_moves'] = status(dev)['gap_moves'] - before['gap_moves']
                remove_devices()


def summarize(res):
    rows = {}
    for r in res['runs']:
        rows.setdefault((r['qd'], r['gap_interval']), []).append(r)
    lines = [f"kernel {res['kernel']}, {res['fio']}, {res.get('cpus', 1)} vCPU, "
             f"{res['rounds']} rounds of {res['runtime_s']} s, medians; "
             f"4 KiB randwrite on dm-pcm over brd"]
    cells, summary = [], []
    for qd in (1, 32):
        base = statistics.median(r['iops'] for r in rows[(qd, 0)])
        for g in GAP_INTERVALS:
            rs = rows[(qd, g)]
            iops = statistics.median(r['iops'] for r in rs)
            lat = statistics.median(r['clat_mean_ns'] for r in rs) / 1000
            # the moves were counted over the ramp and the run
            mps = med(rs, 'gap_moves') / (res['runtime_s'] + RAMP_S)
            cells.append([g or 'off', qd, f'{iops:.0f}', f'{lat:.1f}us', f'{mps:.0f}',
                          f'{iops / base:.3f}x'])
            summary.append({'gap_interval': g, 'qd': qd, 'iops': iops,
                            'clat_mean_us': lat, 'ratio_to_off': iops / base})
    lines += table(['gap_interval', 'QD', 'IOPS', 'mean lat', 'moves/s', 'vs off'], cells,
                   '>>>>>>')
    return '\n'.join(lines), summary
