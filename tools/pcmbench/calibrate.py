# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench calibrate

this host's completion overhead per direction, what overhead_ns takes
off every hold: 4 KiB random reads and writes at QD1 on dm-pcm over brd
holding each 100 us on this host's clock (nothing else modeled; at
--dilation K, default 8 under icount: 100 us / K on the device's),
fio's mean latency (libaio, as characterize's job files) minus the
hold, once per round;
the median over the rounds is printed and saved (its JSON's
"overhead_ns") for later runs: pcm-bench characterize --overhead-ns
READ,WRITE, or a table's overhead_ns:N.  The same measurement as pcm-bench
timing's calibration point (pcmlib/calibrate.py: calibrate()), which
characterize --calibrate runs at its start.
"""
import statistics

from pcmlib import calibrate as pcal
from .common import fresh_ramdisk, remove_devices, table
from .options import HOST, ICOUNT, ROUNDS, RUNTIME, DILATION

NAME = 'calibrate'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS, RUNTIME, DILATION)   # its options' groups (options.py)


def guest(args, runs):
    fresh_ramdisk()
    k = getattr(args, 'dilation', None) or 1
    for rnd in range(args.rounds):
        # libaio at QD1, as characterize's job files (its overhead is theirs)
        got = pcal.calibrate(args, runs, rnd, dilation=k, engine='libaio')
        for r in runs[-2:]:
            r['overhead_ns'] = got[r['rw']]
    remove_devices()


def overhead(res):
    """{'read': ns, 'write': ns}: the medians over the rounds."""
    return {side: round(statistics.median(r['overhead_ns'] for r in res['runs']
                                          if r['rw'] == 'rand' + side))
            for side in ('read', 'write')}


def summarize(res):
    oh = overhead(res)
    k = max([r.get('dilation', 1) for r in res['runs']] or [1])
    clock = 'icount' if res.get('icount') else 'real time'
    lines = [f"kernel {res['kernel']}, {res['fio']}, {res['cpus']} vCPU, {res['rounds']} "
             f"rounds of {res['runtime_s']} s; clock {clock}, dilation {k}; 4 KiB QD1 held "
             f"{pcal.TIMING_CAL_US} us (host): fio's mean lat minus the hold"]
    cells = []
    for rnd in sorted({r['round'] for r in res['runs']}):
        got = {r['rw']: r['overhead_ns'] for r in res['runs'] if r['round'] == rnd}
        cells.append([rnd, f"{got.get('randread', 0):.0f}", f"{got.get('randwrite', 0):.0f}"])
    lines += table(['round', 'read ns', 'write ns'], cells, '>>>')
    lines.append(f"overhead_ns read {oh['read']}, write {oh['write']} (medians): "
                 f"pcm-bench characterize --dilation {k} --overhead-ns "
                 f"{oh['read']},{oh['write']} SPEC")
    return '\n'.join(lines), {'overhead_ns': oh, 'dilation': k, 'clock': clock}
