#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The presets against their papers' figures (DESIGN.md section 4).

Each figure is replayed through the timing model and start-gap code the
module runs (tools/pcmctl model, libpcm.so) and must come within 5 % of
the paper's value, or satisfy the paper's bound.  The table printed as
comments is the one Documentation/.../dm-pcm.rst shows per preset;
figures the model does not reproduce are printed with the reason and are
not counted.  Prints TAP, one case per figure.
"""
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PCMCTL = os.path.join(TOP, 'tools', 'pcmctl')
TOL = 0.05

N = [0]
FAILED = [0]


def model(preset, *args, ios=20000):
    """pcmctl model --json of preset and args; the parsed reply."""
    cmd = [PCMCTL, 'model', '--json', '--ios', str(ios), '--size', '8g',
           f'preset:{preset}', *args]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if res.returncode:
        raise RuntimeError(f'{" ".join(cmd)}: {res.stderr.strip()}')
    return json.loads(res.stdout)


def result(ok, what, detail=''):
    N[0] += 1
    print(f'{"ok" if ok else "not ok"} {N[0]} - {what}')
    if not ok:
        FAILED[0] += 1
        if detail:
            print(f'#   {detail}')


def near(preset, what, paper, got, unit):
    err = (got - paper) / paper
    result(abs(err) <= TOL, f'{preset}: {what}: paper {paper:g} {unit}, model {got:.4g} {unit} '
           f'({err * 100:+.1f} %)')


def at_most(preset, what, bound, got, unit):
    result(got <= bound, f'{preset}: {what}: paper at most {bound:g} {unit}, model {got:.4g} {unit}')


def note(preset, what, paper, got, why):
    print(f'# {preset}: {what}: paper {paper}, model {got}: not reproduced: {why}')


def rd(r):
    return r['read']


def wr(r):
    return r['write']


def onyx():
    p = 'onyx'
    near(p, '4 KB random read, QD1, latency', 38,
         rd(model(p, '--bs', '4k'))['mean_us'], 'us')
    near(p, '4 KB random reads, 64 in flight', 191000,
         rd(model(p, '--bs', '4k', '--iodepth', '64'))['iops'], 'IOPS')
    near(p, '512 B random reads, 64 in flight', 478000,
         rd(model(p, '--bs', '512', '--iodepth', '64'))['iops'], 'IOPS')
    big = rd(model(p, '--bs', '1m', '--iodepth', '16', ios=2000))['mbps']
    near(p, '1 MB random reads, 16 in flight (just over 1.1 GB/s)', 1100, big, 'MB/s')
    near(p, '4 KB random write, QD1, late completion', 179,
         wr(model(p, '--rw', 'randwrite', '--bs', '4k'))['mean_us'], 'us')
    near(p, '1 MB random writes, 16 in flight, early completion', 470,
         wr(model(p, '--rw', 'randwrite', '--bs', '1m', '--iodepth', '16',
                  'completion:early', ios=2000))['mbps'], 'MB/s')
    # Figure 6: bandwidth of 4 KB writes falls as the gap interval shrinks
    bw = [wr(model(p, '--rw', 'randwrite', '--bs', '4k', '--iodepth', '16',
                   f'gap_interval:{g}'))['mbps'] for g in (1, 4, 16, 64, 128)]
    result(all(a < b for a, b in zip(bw, bw[1:])),
           'onyx: Figure 6: 4 KB write bandwidth grows with the gap interval '
           f'(1, 4, 16, 64, 128: {", ".join(f"{b:.0f}" for b in bw)} MB/s)')
    # Figure 4: early completion's gain, 16 streams (XDD threads)
    for bs, what, paper in (('512', '512 B', 174), ('1m', '1 MB', 32)):
        late = wr(model(p, '--rw', 'randwrite', '--bs', bs, '--iodepth', '16', ios=4000))
        early = wr(model(p, '--rw', 'randwrite', '--bs', bs, '--iodepth', '16',
                         'completion:early', ios=4000))
        near(p, f'early over late completion, {what} writes, 16 in flight', paper,
             (early['mbps'] / late['mbps'] - 1) * 100, '%')


def pss():
    p = 'pss'
    near(p, '4 KB random read, QD1, latency', 35,
         rd(model(p, '--bs', '4k'))['mean_us'], 'us')
    near(p, '4 KB random reads, 32 in flight', 65000,
         rd(model(p, '--bs', '4k', '--iodepth', '32'))['iops'], 'IOPS')
    # QD1 writes once the write cache is full (the paper preconditioned for 12 h)
    w = wr(model(p, '--rw', 'randwrite', '--bs', '4k', ios=60000))
    near(p, '4 KB random writes, QD1, write cache full', 15000, w['iops'], 'IOPS')
    near(p, '4 KB random write, QD1, write cache full, latency', 61, w['mean_us'], 'us')
    near(p, '4 KB random writes, QD1: 99.9 % within', 240, w['pct_us']['99.9'], 'us')
    at_most(p, '4 KB random writes, QD1: highest latency', 2000, w['max_us'], 'us')
    note(p, '4 KB random writes, QD1: highest latency', '2 ms (of about 10^8 writes)',
         f'{w["max_us"]:.0f} us (of 60000)',
         'a program may take 2.03 ms (16 retries), but the write cache lets the other '
         'bank admit writes meanwhile: a QD1 write waits that long only when both '
         'banks are in such a program, which 60000 writes do not show')


def psd():
    p = 'psd'
    for rw in ('read', 'write'):
        for qd in (1, 4, 16, 64):
            seq = model(p, '--rw', rw, '--bs', '4k', '--iodepth', str(qd), ios=8000)[rw]
            rnd = model(p, '--rw', 'rand' + rw, '--bs', '4k', '--iodepth', str(qd),
                        ios=8000)[rw]
            near(p, f'random / sequential 4 KB {rw} latency, {qd} in flight (Fig. 1: ~1)', 1,
                 rnd['mean_us'] / seq['mean_us'], 'x')
    near(p, 'write / read 4 KB latency, QD1 (Fig. 2: up to 19x)', 19,
         wr(model(p, '--rw', 'randwrite', '--bs', '4k', ios=4000))['mean_us'] /
         rd(model(p, '--bs', '4k', ios=4000))['mean_us'], 'x')
    iops = {qd: sum(model(p, '--rw', 'randrw', '--bs', '4k', '--iodepth', str(qd),
                          ios=20000)[d]['iops'] for d in ('read', 'write'))
            for qd in (8, 16, 32, 64, 128, 256)}
    best = max(iops, key=iops.get)
    result(iops[64] >= 0.99 * iops[best] and iops[32] < 0.95 * iops[64],
           f'psd: 50/50 4 KB throughput is best from 64 in flight (Fig. 3) '
           f'({", ".join(f"{q}: {v:.0f}" for q, v in iops.items())} IOPS)')


def reram():
    # Linux sends nothing smaller than 512 B: the paper's 256 B figures are
    # compared at 512 B, 256 B more to move (0.37 us at QD1)
    p = 'reram'
    q1 = rd(model(p, '--bs', '512'))
    near(p, '256 B random read, QD1, mean latency (at 512 B)', 12.05, q1['mean_us'], 'us')
    near(p, '256 B random reads, QD1 (at 512 B)', 83000, q1['iops'], 'IOPS')
    q16 = rd(model(p, '--bs', '512', '--iodepth', '16'))
    near(p, '256 B random reads, 16 in flight, mean latency (at 512 B)', 33,
         q16['mean_us'], 'us')
    big = rd(model(p, '--bs', '4k', '--iodepth', '16'))
    near(p, '4 KB random reads, 16 in flight, mean latency', 46, big['mean_us'], 'us')
    near(p, '4 KB random reads, 16 in flight', 1500, big['mbps'], 'MB/s')
    note(p, '256 B random reads, 16 in flight', '100 MB/s',
         f'{q16["mbps"] / 2:.0f} MB/s of 256 B requests',
         '16 requests of 256 B in 33 us are 124 MB/s (Little\'s law): the paper\'s two '
         'figures disagree; the model keeps its latency')
    near(p, '256 B random read, QD1, lowest latency (at 512 B)', 10.4, q1['min_us'], 'us')
    near(p, '256 B random read, QD1, 99.99 % within (at 512 B)', 15.6,
         q1['pct_us']['99.99'], 'us')


def main():
    for fn in (onyx, pss, psd, reram):
        try:
            fn()
        except Exception as e:  # pylint: disable=broad-except
            result(False, f'{fn.__name__}: {e}')
    print(f'1..{N[0]}')
    return 1 if FAILED[0] else 0


if __name__ == '__main__':
    sys.exit(main())
