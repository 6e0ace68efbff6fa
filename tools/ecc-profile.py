#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/ecc-profile.py trace|fgraph NAME TRACE[.xz] [PLAIN.json TRACED.json]
tools/ecc-profile.py summary FIO.json

tools/ecc-profile's reader (NAME only names the report).

summary: one line of fio's JSON report (its one job): IOPS, ns an I/O,
fio's clat median and mean.

trace: a tracefs trace of QD1 reads (one at a time) cut into reads at
each .map (ep_map: dm-pcm's pcm_map, ep_linmap: dm-linear's linear_map),
each read's events in their order (a second event of a name is NAME#2),
and the median, 10th and 90th percentile over every read, in
microseconds, of each event's time from .map and of each step (STEPS).

fgraph NAME TRACE [PLAIN.json TRACED.json]: a function_graph trace
(funcgraph-tail on) of a few functions: for each, its calls per I/O
(I/Os: __blkdev_direct_IO_simple's calls), the median of its durations
in ns (under icount, guest instructions) and of the traced calls nested
in it; with fio's JSON of the same run untraced and traced, the median
less the tracer's cost (fgraph()'s comment), and that per I/O.
"""
import collections
import lzma
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcmlib import fio  # noqa: E402 (sys.path set first)

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): ?(.*)$')
STARTS = ('ep_map', 'ep_linmap')


def reads(lines):
    """Each read's events: (time in us, name), from its .map to fio's
    task running again (ep_woke); interrupts other than NVMe's left out."""
    cur = None
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        t, name, rest = float(m.group(4)) * 1e6, m.group(5), m.group(6)
        if name == 'irq_handler_entry' and 'nvme' not in rest:
            continue
        if name in STARTS:
            cur = [(t, name)]
        elif cur is not None:
            cur.append((t, name))
            if name == 'ep_woke':
                yield cur
                cur = None


def intervals(ev):
    """Named times from .map (us) of one read's events."""
    t0 = ev[0][0]
    out = {}
    counts = {}
    for t, name in ev[1:]:
        n = counts.get(name, 0) + 1
        counts[name] = n
        key = name if n == 1 else f'{name}#{n}'
        out.setdefault(key, t - t0)
    out['_map'] = 0.0
    out['_irqs'] = counts.get('irq_handler_entry', 0)
    out['_cmds'] = counts.get('block_rq_issue', 0)
    return out


def pct(vals, p):
    vals = sorted(vals)
    return vals[min(len(vals) - 1, int(p / 100 * len(vals)))]


LABELS = [
    ('block_rq_issue', 'first NVMe command issued'),
    ('block_rq_issue#2', 'second NVMe command issued'),
    ('irq_handler_entry', 'first NVMe interrupt'),
    ('block_rq_complete', 'first command completed'),
    ('irq_handler_entry#2', 'second NVMe interrupt'),
    ('block_rq_complete#2', 'second command completed'),
    ('ep_dend', "data's end_io (pcm_ecc_pair_end_io)"),
    ('ep_mend', "parity's end_io (ecc_meta_end_io)"),
    ('ep_work', 'decode work starts (ecc_work)'),
    ('ep_dec', 'decode starts (ecc_pair_decode)'),
    ('ep_decx', 'decode ends'),
    ('ep_done', 'original bio completed'),
    ('ep_woke', "fio's task runs again"),
]


FG_LEAF = re.compile(r'([\d.]+) us\s+\|\s+([\w.]+)(?: \[\w+\])?\(\);')
FG_OPEN = re.compile(r'\|\s+([\w.]+)(?: \[\w+\])?\(\) \{')
FG_CLOSE = re.compile(r'([\d.]+) us\s+\|\s+\} /\* ([\w.]+)(?: \[\w+\])? \*/')


def fio_ns(path):
    """ns an I/O (1e9 / IOPS) of a fio JSON, or None."""
    try:
        j = fio.jobs(fio.load(path))[0]
    except (OSError, fio.FioError):
        return None
    s = fio.moved(j)
    return 1e9 / s['iops'] if s['iops'] else None


def summary(path):
    """tools/ecc-profile's line of a run: IOPS, ns an I/O, and fio's clat
    (from the submit call's return) median and mean."""
    s = fio.moved(fio.jobs(fio.load(path))[0])
    c = fio.lat(s, 'clat')
    print('iops %.0f  ns/io %.0f  clat p50 %.1f us  mean %.1f us'
          % (s['iops'], 1e9 / s['iops'], fio.percentile_ns(c, 50) / 1e3, c['mean'] / 1e3))
    return 0


def fgraph(name, path, plain=None, traced=None):
    """Each traced call's duration and how many traced calls ran inside
    it; then each function's median with the tracer's own cost taken
    out: H, what a call's own hooks add to its duration (the shortest
    leaf call's), and F, what a traced call costs the code around it
    ((traced - plain ns an I/O) / traced calls an I/O), for each call
    nested in it."""
    durs = collections.defaultdict(list)
    stack = []
    with open_trace(path) as f:
        for line in f:
            m = FG_LEAF.search(line)
            if m:
                durs[m.group(2)].append((float(m.group(1)) * 1e3, 0))
                if stack:
                    stack[-1][1] += 1
                continue
            m = FG_OPEN.search(line)
            if m:
                stack.append([m.group(1), 0])
                continue
            m = FG_CLOSE.search(line)
            if m:
                nested = 0
                while stack:
                    fn, n = stack.pop()
                    if fn == m.group(2):
                        nested = n
                        break
                durs[m.group(2)].append((float(m.group(1)) * 1e3, nested))
                if stack:
                    stack[-1][1] += 1 + nested
    ios = len(durs.get('__blkdev_direct_IO_simple', []))
    if not ios:
        print(f'{name}: no I/Os in {path}')
        return 1
    calls = sum(len(d) for d in durs.values()) / ios
    h = min(d for v in durs.values() for d, n in v if n == 0)
    a, b = fio_ns(plain) if plain else None, fio_ns(traced) if traced else None
    fcost = (b - a) / calls if a and b else None
    print(f'{name}: {ios} I/Os traced, {calls:.1f} traced calls an I/O; H {h:.0f} ns'
          + (f', F {fcost:.0f} ns ({a:.0f} ns an I/O, {b:.0f} traced)' if fcost else ''))
    print(f'  {"function":28} {"calls/IO":>8} {"median":>8} {"nested":>6}'
          + (f' {"less H,F":>9} {"per I/O":>8}' if fcost else ''))
    rows = []
    for fn, v in durs.items():
        med = statistics.median(d for d, _ in v)
        nest = statistics.median(n for _, n in v)
        # a function called at two depths (submit_bio_noacct): the sum
        cor = sum(max(0.0, d - h - (fcost or 0) * n) for d, n in v) / ios
        rows.append((fn, len(v) / ios, med, nest, cor))
    for fn, cpi, med, nest, cor in sorted(rows, key=lambda r: -r[1] * r[2]):
        line = f'  {fn:28} {cpi:8.2f} {med:8.0f} {nest:6.1f}'
        if fcost:
            line += f' {cor / cpi:9.0f} {cor:8.0f}'
        print(line)
    return 0


def open_trace(path):
    return lzma.open(path, 'rt', errors='replace') if path.endswith('.xz') else \
        open(path, errors='replace')


# consecutive steps of a read: (from, to, what)
STEPS = [
    ('_map', 'block_rq_issue', '.map to the first command issued'),
    ('block_rq_issue', 'block_rq_issue#2', 'first to second command issued'),
    ('block_rq_issue#2', 'irq_handler_entry', 'second issued to first interrupt'),
    ('block_rq_issue', 'irq_handler_entry', 'first issued to first interrupt'),
    ('block_rq_complete', 'block_rq_complete#2', 'first to second completion'),
    ('block_rq_complete#2', 'ep_work', 'second completion to ecc_work (hop)'),
    ('ep_dec', 'ep_decx', 'decode (ecc_pair_decode)'),
    ('ep_decx', 'ep_done', 'decode end to the bio completed'),
    ('block_rq_complete', 'ep_done', 'first completion to the bio completed'),
    ('block_rq_complete#2', 'ep_done', 'second completion to the bio completed'),
    ('ep_done', 'ep_woke', 'bio completed to fio running'),
    ('_map', 'ep_woke', '.map to fio running'),
]


def main(argv):
    if argv[1] == 'fgraph':
        return fgraph(*argv[2:6])
    if argv[1] == 'summary':
        return summary(argv[2])
    if argv[1] == 'trace':
        argv = argv[1:]
    kind, path = argv[1], argv[2]
    with open_trace(path) as f:
        rs = [intervals(ev) for ev in reads(f)]
    if not rs:
        print(f'{kind}: no reads in {path}')
        return 1
    print(f'{kind}: {len(rs)} reads; microseconds from .map: median [p10, p90] (reads)')
    for key, label in LABELS:
        vals = [r[key] for r in rs if key in r]
        if len(vals) < len(rs) / 2:
            continue
        print(f'  {label:40} {statistics.median(vals):8.1f} [{pct(vals, 10):7.1f}, '
              f'{pct(vals, 90):7.1f}] ({len(vals)})')
    print('  steps, each over the reads that have both ends: median [p10, p90]')
    for a, b, label in STEPS:
        d = [r[b] - r[a] for r in rs if a in r and b in r]
        if len(d) >= len(rs) / 2:
            print(f'  {label:40} {statistics.median(d):8.1f} [{pct(d, 10):7.1f}, '
                  f'{pct(d, 90):7.1f}] ({len(d)})')
    if any('ep_mend' in r for r in rs):
        first = sum(1 for r in rs if 'ep_dend' in r and 'ep_mend' in r
                    and r['ep_dend'] < r['ep_mend'])
        print(f'  data completed before its parity in {first} of {len(rs)} reads')
    for key in ('_cmds', '_irqs'):
        c = collections.Counter(r[key] for r in rs)
        print(f'  {key[1:]} per read: ' + ', '.join(f'{k}: {v}' for k, v in sorted(c.items())))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
