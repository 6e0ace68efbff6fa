# SPDX-License-Identifier: GPL-2.0-only
"""A run's report (report.md in its directory): what ran where, the
paper-vs-dm-pcm headline table, the figures with their CSVs, every point's
mean and spread, the exact table lines and config replies, and the fio
commands that rerun any point by hand.  The headline table is also written
beside it as paper-table.csv and paper-table.json (one record per row,
with the run's clock: PAPER_FIELDS)."""
import json
import os

from . import results as R
from .fiojob import FIO_ARGS
from .papers import FIGURES
from .spec import parse_size

LINEAR = 'dm-linear'


def preference(p):
    """Lower is closer to the papers' own setups: the raw device, O_DIRECT,
    one thread, sustained, the whole file, fresh."""
    a = p.axes
    return ((a['target'] != 'raw') + (not a['direct']) + (a['threads'] != 1) +
            (a['pattern'] != 'sustained') + (a['region'] != 100) + (a['fullness'] != 0) +
            (a['scheduler'] != 'none'))


def has_words(dev, fig):
    words = dev.split()
    return f'preset:{fig.preset}' in words and all(w in words for w in fig.words.split())


def find(res, dev, where):
    cands = [(preference(p), p.index, p, st) for p, d, st in res if d == dev and where(p)]
    return min(cands, key=lambda c: c[:2])[2:] if cands else (None, None)


def same_but_rw(p, q, rw):
    return q.rw == rw and all(q.axes[k] == v for k, v in p.axes.items() if k != 'rw')


def measure(res, dev, fig, depth):
    """fig's value on dev at depth: (point, value, stdev) or None."""
    bs = parse_size('bs', fig.bs)
    p, st = find(res, dev, lambda q: q.rw == fig.rw and q.bs == bs and q.iodepth == depth)
    if p is None:
        return None
    got = R.value(st, fig.side, fig.metric)
    if got is None:
        return None
    sd = st[fig.side][fig.metric]['stdev']
    if fig.over:
        _, den = find(res, dev, lambda q: same_but_rw(p, q, fig.over))
        side = 'read' if fig.over.endswith('read') else 'write'
        d = R.value(den, side, fig.metric) if den else None
        if not d:
            return None
        got, sd = got / d, None
    return p, got, sd


def headline(res):
    """[(figure, device, point, value, stdev, baseline value)] for every
    paper figure that a device of the run (its preset and words) and a
    point of it (workload, depth) measure."""
    devs = list(dict.fromkeys(d for _, d, _ in res if d != LINEAR))
    rows = []
    for fig in FIGURES:
        if fig.kind == 'note':
            continue
        for dev in devs:
            if not has_words(dev, fig):
                continue
            for depth in fig.depths:
                m = measure(res, dev, fig, depth)
                if m:
                    base = measure(res, LINEAR, fig, depth)
                    rows.append((fig, dev, m[0], m[1], m[2], base[1] if base else None))
    return rows


def fmt(v):
    if v is None:
        return '-'
    return f'{v:.3g}' if abs(v) < 100 else f'{v:,.0f}'


def verdict(fig, got):
    if fig.kind == 'at_most':
        return 'within' if got <= fig.value else f'over by {(got / fig.value - 1) * 100:.0f} %'
    return f'{(got - fig.value) / fig.value * 100:+.1f} %'


def headline_lines(rows):
    out = ['| figure (paper) | dm-pcm device | point | paper | dm-pcm | error | dm-linear |',
           '|---|---|---|---|---|---|---|']
    for fig, dev, p, got, sd, base in rows:
        spread = f' ± {fmt(sd)}' if sd else ''
        what = fig.what if len(fig.depths) == 1 else f'{fig.what}, QD{p.iodepth}'
        out.append(f'| {what} ({fig.source}) | `{dev}` | {p.id} | {fig.paper_text()} | '
                   f'{fmt(got)}{spread} {fig.unit} | {verdict(fig, got)} | {fmt(base)} |')
    return out


# paper-table.csv's columns, paper-table.json's keys per row
PAPER_FIELDS = ('figure', 'source', 'what', 'preset', 'device', 'point', 'workload', 'kind',
                'unit', 'paper', 'measured', 'stdev', 'error_pct', 'verdict', 'dm_linear',
                'clock', 'kernel')


def headline_records(rows, run):
    """The headline rows as dicts of PAPER_FIELDS: numbers as numbers
    (error_pct: dm-pcm against the paper, percent; None for a bound)."""
    clock = 'icount' if run.get('icount') else 'real time'
    out = []
    for fig, dev, p, got, sd, base in rows:
        what = fig.what if len(fig.depths) == 1 else f'{fig.what}, QD{p.iodepth}'
        out.append({'figure': fig.key, 'source': fig.source, 'what': what, 'preset': fig.preset,
                    'device': dev, 'point': p.id, 'workload': p.describe(), 'kind': fig.kind,
                    'unit': fig.unit, 'paper': fig.value, 'measured': got, 'stdev': sd,
                    'error_pct': (None if fig.kind == 'at_most'
                                  else (got - fig.value) / fig.value * 100),
                    'verdict': verdict(fig, got), 'dm_linear': base, 'clock': clock,
                    'kernel': run.get('kernel')})
    return out


def write_paper_table(run_dir, rows, run):
    """paper-table.csv and paper-table.json in @run_dir; their paths."""
    import csv
    recs = headline_records(rows, run)
    path_csv = os.path.join(run_dir, 'paper-table.csv')
    with open(path_csv, 'w', newline='', encoding='utf-8') as fh:
        w = csv.DictWriter(fh, fieldnames=PAPER_FIELDS)
        w.writeheader()
        for r in recs:
            w.writerow({k: '' if v is None else v for k, v in r.items()})
    path_json = os.path.join(run_dir, 'paper-table.json')
    with open(path_json, 'w', encoding='utf-8') as fh:
        json.dump({'fields': list(PAPER_FIELDS), 'rows': recs}, fh, indent=1)
        fh.write('\n')
    return path_csv, path_json


def headline_text(rows):
    """The headline table as plain text (the console's)."""
    out = [f'{"figure":58} {"device":16} {"paper":>12} {"dm-pcm":>10} {"error":>10}']
    for fig, dev, p, got, _, _ in rows:
        what = fig.what if len(fig.depths) == 1 else f'{fig.what}, QD{p.iodepth}'
        out.append(f'{fig.preset + ": " + what[:50]:58} {dev[:16]:16} '
                   f'{fig.paper_text():>12} {fmt(got):>10} {verdict(fig, got):>10}')
    return '\n'.join(out)


def points_lines(res):
    out = ['| point | on | workload | side | IOPS | MB/s | mean lat us | p99 us | p99.9 us |',
           '|---|---|---|---|---|---|---|---|---|']
    for p, dev, st in res:
        for side in R.SIDES:
            s = st.get(side)
            if not s:
                continue

            def cell(m):
                sp = s[m]
                return f'{fmt(sp["mean"])} ± {fmt(sp["stdev"])}' if sp else '-'
            out.append(f'| {p.id} | `{dev}` | {p.describe()} | {side} | {cell("iops")} | '
                       f'{cell("mbps")} | {cell("clat_mean_us")} | {cell("clat_p99_us")} | '
                       f'{cell("clat_p999_us")} |')
    return out


def trace_lines(res, run):
    """btt's averages above (the device under test) and below (the
    backing device), and the remaps dm logged below."""
    traced = [(p, dev, r['trace']) for (p, dev, _), r in zip(res, run['runs'])
              if r.get('trace')]
    if not traced:
        return ['(not traced: pcm-bench characterize --trace records it)']
    out = ['Microseconds, means over the run (warm-up and repetitions): Q2C, queued to '
           'completed; D2C, issued to completed (a blk-mq device only: brd and dm are '
           'bio-based).  Remaps: the pieces dm sent down, and how many of them landed '
           'elsewhere than at the same sector below.  Texts in trace/.', '',
           '| point | on | Q2C above | Q2C below | D2C below | remaps | moved | dropped |',
           '|---|---|---|---|---|---|---|---|']
    for p, dev, t in traced:
        top, below = t['devices']['top'], t['devices']['below']

        def avg(side, key):
            v = side['btt'].get(key)
            return f'{v[1]:.1f} ({v[3]})' if v else '-'
        rm = below['remaps']
        out.append(f'| {p.id} | `{dev}` | {avg(top, "Q2C")} | {avg(below, "Q2C")} | '
                   f'{avg(below, "D2C")} | {rm["remaps"]} | {rm["moved"]} | {t["dropped"]} |')
    return out


def write(path, spec, spec_text, run, res, figs, rows):
    """report.md: run (the guest's run.json), res [(point, device, stats)],
    figs {name: (png, csv)}, rows: headline()."""
    d = os.path.dirname(path)
    rel = lambda p: os.path.relpath(p, d)  # noqa: E731
    L = [f'# dm-pcm characterization: {spec.name}', '',
         f'- date: {run["date"]}; kernel {run["kernel"]}; {run["fio"]}; '
         f'{run["cpus"]} vCPU{"s" if run["cpus"] > 1 else ""}, '
         f'{"icount (guest time follows instructions)" if run.get("icount") else "no icount"}',
         f'- {len(spec.points)} points, {len(run["runs"])} runs (each point on its dm-pcm '
         f'device, each workload on dm-linear), '
         f'{spec.repetitions} repetitions of {spec.runtime:g} s after a {spec.warmup:g} s '
         f'warm-up; means ± sample standard deviation over the repetitions',
         f'- wall time: {run.get("host_wall_s", float("nan")):.0f} s on the host, boot and '
         f'setup included '
         f'(guest clock: {run["wall_s"]:.0f} s, of which fio {run["fio_s"]:.0f} s; '
         f'{"under icount it jumps while the guest idles" if run.get("icount") else "guest time"})',
         f'- backing: {spec.backing}, {spec.ramdisk >> 20} MiB', '',
         '## Paper vs dm-pcm', '',
         'Each paper figure that the run measures, on the point closest to the paper\'s '
         'setup (raw device, O_DIRECT, one thread, fresh); the error is dm-pcm\'s against '
         'the paper\'s value.  dm-linear: the same point on the baseline.  The same table: '
         '[paper-table.csv](paper-table.csv), [paper-table.json](paper-table.json).', '']
    L += headline_lines(rows) if rows else ['(no point of this run measures a paper figure)']
    L += ['', '## Figures', '']
    for name, (png, csv) in figs.items():
        L += [f'### {name}', '', f'![{name}]({rel(png)})', '', f'Data: [{rel(csv)}]({rel(csv)})',
              '']
    if not figs:
        L += ['(the run has no points for any figure)', '']
    L += ['## Points', '', 'All points: [points.csv](points.csv).', '']
    L += points_lines(res)
    L += ['', '## blktrace', '']
    L += trace_lines(res, run)
    L += ['', '## Devices', '']
    for dev, info in run['devices'].items():
        L += [f'### `{dev}`', '', '```', f'dmsetup table: {info["table"]}',
              f'config: {info.get("config", "-")}', '```', '']
    L += ['## Commands', '', 'The setup, as the guest ran it (each device in turn, named '
          '`char-dut`):', '', '```'] + run['commands'] + ['```', '',
          'Then each point, from the run\'s directory (its job file is in jobs/):', '', '```']
    L += [f'fio {" ".join(FIO_ARGS)} jobs/{p.id}.fio' for p in spec.points]
    L += ['```', '', '## Spec', '', '```toml', spec_text.rstrip(), '```', '']
    with open(path, 'w', encoding='utf-8') as fh:
        fh.write('\n'.join(L))


def finish(spec, run_dir, **extra):
    """A run's statistics, figures and report, from what its guest wrote
    (run.json, raw/); extra (the host's wall time, icount) is added to
    run.json first.  Returns (report path, figures, headline rows, run)."""
    from . import figures  # matplotlib: only here
    path = os.path.join(run_dir, 'run.json')
    with open(path, encoding='utf-8') as fh:
        run = json.load(fh)
    if extra:
        run.update(extra)
        with open(path, 'w', encoding='utf-8') as fh:
            json.dump(run, fh, indent=1)
    run, res = R.load_run(spec, run_dir)
    R.write_points_csv(os.path.join(run_dir, 'points.csv'), res)
    figs = figures.draw_all(res, os.path.join(run_dir, 'figures'))
    rows = headline(res)
    write_paper_table(run_dir, rows, run)
    out = os.path.join(run_dir, 'report.md')
    with open(os.path.join(run_dir, 'spec.toml'), encoding='utf-8') as fh:
        write(out, spec, fh.read(), run, res, figs, rows)
    return out, figs, rows, run
