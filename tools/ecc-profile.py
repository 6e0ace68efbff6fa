#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/ecc-profile.py trace|fgraph NAME TRACE[.xz]

tools/ecc-profile's reader (NAME only names the report).

trace: a tracefs trace of QD1 reads (one at a time) cut into reads at
each .map (ep_map: dm-pcm's pcm_map, ep_linmap: dm-linear's linear_map),
each read's events in their order, and for each interval from .map the
median, 10th and 90th percentile over every read, in microseconds.

fgraph: a function_graph trace (funcgraph-tail on) of a few functions:
for each, its calls per I/O (I/Os: __blkdev_direct_IO_simple's calls)
and the median and mean of its durations, in ns (under icount, guest
instructions), nested traced calls included.
"""
import collections
import lzma
import re
import statistics
import sys

LINE = re.compile(r'^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+\S+\s+([\d.]+): (\w+): ?(.*)$')
STARTS = ('ep_map', 'ep_linmap')


def reads(lines):
    """Each read's events: (time in us, name, cpu, rest), from its .map
    to fio's task running again (ep_woke)."""
    cur = None
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        task, cpu, t, name, rest = m.group(1), int(m.group(3)), float(m.group(4)) * 1e6, \
            m.group(5), m.group(6)
        if name == 'irq_handler_entry' and 'nvme' not in rest:
            continue
        if name in STARTS:
            cur = [(t, name, cpu, task)]
        elif cur is not None:
            cur.append((t, name, cpu, task))
            if name == 'ep_woke':
                yield cur
                cur = None


def intervals(ev):
    """Named times from .map (us) of one read's events."""
    t0 = ev[0][0]
    out = {}
    counts = {}
    for t, name, _, _ in ev[1:]:
        n = counts.get(name, 0) + 1
        counts[name] = n
        key = name if n == 1 else f'{name}#{n}'
        out.setdefault(key, t - t0)
    # the context each completion ran in, for the report
    out['_map'] = 0.0
    out['_irqs'] = counts.get('irq_handler_entry', 0)
    out['_cmds'] = counts.get('block_rq_issue', 0)
    out['_cpu_map'] = ev[0][2]
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
FG_CLOSE = re.compile(r'([\d.]+) us\s+\|\s+\} /\* ([\w.]+)(?: \[\w+\])? \*/')


def fgraph(name, path):
    durs = collections.defaultdict(list)
    with open_trace(path) as f:
        for line in f:
            m = FG_LEAF.search(line) or FG_CLOSE.search(line)
            if m:
                durs[m.group(2)].append(float(m.group(1)) * 1e3)
    ios = len(durs.get('__blkdev_direct_IO_simple', []))
    if not ios:
        print(f'{name}: no I/Os in {path}')
        return 1
    print(f'{name}: {ios} I/Os traced; per function: calls per I/O, median and mean ns a call')
    for fn, d in sorted(durs.items(), key=lambda kv: -statistics.median(kv[1]) * len(kv[1])):
        print(f'  {fn:28} {len(d) / ios:6.2f} {statistics.median(d):9.0f} '
              f'{statistics.mean(d):9.0f}')
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
        return fgraph(argv[2], argv[3])
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
