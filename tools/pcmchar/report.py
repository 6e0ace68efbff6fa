# SPDX-License-Identifier: GPL-2.0-only
"""A run's report (report.md in its directory): what ran where, the
paper-vs-dm-pcm headline table, the figures with their CSVs, every point's
mean and spread, the exact table lines and config replies, and the fio
commands that rerun any point by hand.  The headline table is also written
beside it as paper-table.csv and paper-table.json (one record per row:
PAPER_FIELDS).

Each headline row is a paper figure beside the model's prediction of the
same point (pcmlib/model.py: libpcm's timing model, the module's own),
the measurement, the error against both and a verdict (verdict.py:
reproduced, host-bound, model-differs-from-paper, not reproduced) with
its reason; and the figures' clock (icount or real time), dilation (the
measurement is on the device's clock: latencies / K, rates x K) and
calibration (overhead_ns, or "uncalibrated")."""
import collections
import json
import os

from pcmlib import clock
from . import results as R
from . import verdict as V
from .fiojob import FIO_ARGS
from .papers import FIGURES
from .spec import parse_size

LINEAR = 'dm-linear'
MODEL_IOS = 20000   # requests per model run (tests/host/test-presets.py's)

# One headline row: the first six as they always were (figure, device,
# point, measured, stdev, dm-linear), then the model's figure, the
# dilation K, dm-pcm's own view of the point (results.device_view) and
# the verdict (verdict.judge's dict).
Row = collections.namedtuple('Row', 'fig dev point got sd base model k status verdict overhead')


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


def same_words(a, b):
    return sorted(a.split()) == sorted(b.split())


def same_but_device(p, q):
    return all(q.axes[k] == v for k, v in p.axes.items() if k != 'device')


def versus_point(res, fig, p):
    """The point of fig's second device (fig.versus) that matches @p in
    every axis but the device: (point, stats), or (None, None)."""
    devs = [d for _, d, _ in res if same_words(d, fig.versus)]
    return find(res, devs[0], lambda q: same_but_device(p, q)) if devs else (None, None)


def measure(res, dev, fig, depth):
    """fig's value on dev at depth: (point, value, stdev, stats) or None.
    A figure versus a second device is the second's value over dev's, on
    the same point (no stdev); its stats carry both devices' late and
    timed completions summed (the evidence that the host is the bound)."""
    bs = parse_size('bs', fig.bs)
    p, st = find(res, dev, lambda q: q.rw == fig.rw and q.bs == bs and q.iodepth == depth)
    if p is None:
        return None
    got = R.value(st, fig.side, fig.metric)
    if got is None:
        return None
    sd = st[fig.side][fig.metric]['stdev']
    if fig.versus:
        _, other = versus_point(res, fig, p)
        num = R.value(other, fig.side, fig.metric) if other else None
        if num is None:
            return None
        views = [x.get('status') for x in (st, other)]
        st = dict(st, status=None if None in views else dict(
            views[0], late=views[0]['late'] + views[1]['late'],
            timed=views[0]['timed'] + views[1]['timed']))
        return p, num / got, None, st
    if fig.over:
        _, den = find(res, dev, lambda q: same_but_rw(p, q, fig.over))
        side = 'read' if fig.over.endswith('read') else 'write'
        d = R.value(den, side, fig.metric) if den else None
        if not d:
            return None
        got, sd = got / d, None
    return p, got, sd, st


def model_figure(dev, fig, p, cache=None):
    """The model's figure for fig at point p on device words dev
    (pcmlib/model.py, libpcm: the module's timing model; a ratio figure,
    the ratio of two predictions); None if libpcm cannot say."""
    from pcmlib import libpcm, model as pmodel
    cache = {} if cache is None else cache

    def one(rw, side, words=dev):
        key = (words, rw, p.bs, p.iodepth, p.threads, p.rwmixread, p.size)
        if key not in cache:
            try:
                if 'lib' not in cache:      # one library for the whole table
                    cache['lib'] = libpcm.Lib()
                cache[key] = pmodel.predict(words, rw=rw, bs=p.bs, iodepth=p.iodepth,
                                            numjobs=p.threads, rwmixread=p.rwmixread,
                                            size=p.size * p.threads, ios=MODEL_IOS,
                                            lib=cache['lib'])
            except (libpcm.PcmError, OSError) as e:
                cache[key] = None
                cache.setdefault('errors', []).append(f'{words} {rw}: {e}')
        return pmodel.metric(cache[key], side, fig.metric)
    got = one(fig.rw, fig.side)
    if fig.over and got is not None:
        den = one(fig.over, 'read' if fig.over.endswith('read') else 'write')
        got = got / den if den else None
    if fig.versus and got:
        num = one(fig.rw, fig.side, fig.versus)
        got = num / got if num is not None else None
    return got


def headline(res, model=True):
    """A Row for every paper figure that a device of the run (its preset
    and words) and a point of it (workload, depth) measure: the
    measurement (on the device's clock), dm-linear's on the same point and
    clock, the model's figure for the point (model=False: None) and the
    verdict (verdict.judge: the evidence from the device's own counters
    and dm-linear)."""
    devs = list(dict.fromkeys(d for _, d, _ in res if d != LINEAR))
    rows, cache = [], {}
    for fig in FIGURES:
        if fig.kind == 'note':
            continue
        if fig.kind == 'app':
            # pcm-bench app's, never measured here: listed where the run has its
            # devices, with what run it waits for
            dev = next((d for d in devs if has_words(d, fig)), None)
            if dev and (not fig.versus or any(same_words(d, fig.versus) for d in devs)):
                v = V.judge(fig.metric, fig.paper(), None, missing=fig.differs)
                rows.append(Row(fig, dev, None, None, None, None, None, 1, None, v, None))
            continue
        for dev in devs:
            if not has_words(dev, fig):
                continue
            for depth in fig.depths:
                m = measure(res, dev, fig, depth)
                if not m:
                    continue
                p, got, sd, st = m
                k = st.get('dilation', 1)
                base = None if fig.versus else measure(res, LINEAR, fig, depth)
                lin = spread = None
                if base:
                    lin = base[1] if fig.over else R.rescale(
                        base[1], fig.metric, base[3].get('dilation', 1), k)
                    mean = R.value(base[3], fig.side, 'lat_mean_us')
                    if fig.metric in V.SPREAD and not fig.over and mean is not None:
                        spread = lin - R.rescale(mean, 'lat_mean_us',
                                                 base[3].get('dilation', 1), k)
                mod = model_figure(dev, fig, p, cache) if model else None
                view = st.get('status')
                v = V.judge(fig.metric, fig.paper(), got, fig.kind, mod, fig.differs, fig.reached,
                            late=view.get('late') if view else None,
                            timed=view.get('timed') if view else None,
                            linear=None if fig.over or fig.versus else lin,
                            linear_spread=spread,
                            lateness_top=lateness_top(view, k))
                rows.append(Row(fig, dev, p, got, sd, lin, mod, k, view, v,
                                st.get('overhead_ns')))
    return rows


def lateness_top(view, k):
    """The top of the device's lateness histogram over a point, in us on
    the device's clock (its buckets are host ns); None without one."""
    hist = (view or {}).get('lateness')
    if not hist:
        return None
    return max(hi for _, hi, n in hist if n) / (k or 1) / 1000


def fmt(v):
    if v is None:
        return '-'
    return f'{v:.3g}' if abs(v) < 100 else f'{v:,.0f}'


def error_text(fig, got, ref=None):
    """The measurement against the paper (@ref: against that figure, the
    model's), in words: a signed percentage, or against a bound."""
    if got is None:
        return '-'
    if ref is None and fig.kind in ('at_most', 'at_least', 'between'):
        lo, hi = (fig.value, fig.high) if fig.kind == 'between' else (fig.value, fig.value)
        if got > hi and fig.kind != 'at_least':
            return f'over by {(got / hi - 1) * 100:.0f} %'
        if got < lo and fig.kind != 'at_most':
            return f'under by {(1 - got / lo) * 100:.0f} %'
        return 'within'
    ref = fig.value if ref is None else ref
    return f'{(got - ref) / ref * 100:+.1f} %' if ref else '-'


def clock_of(run):
    return clock.name(run.get('icount'))


def calibration_text(run, overhead=None):
    """The calibration of the run's figures: overhead_ns per direction and
    how it was had, or "uncalibrated"; @overhead: a point's own value."""
    cal = run.get('calibration')
    if not cal:
        return 'uncalibrated'
    oh = cal.get('overhead_ns') or {}
    how = {'measured': 'measured at the run\'s start', 'given': 'given in the spec'}.get(
        cal.get('how'), cal.get('how', ''))
    own = f'{overhead} ns here; ' if overhead is not None else ''
    return (f'overhead_ns {own}read {oh.get("read", "-")}, write {oh.get("write", "-")} '
            f'({how})')


def conditions_text(run, rows=None):
    """The clock, dilation and calibration of a run's figures, one line."""
    ks = sorted({r.k for r in rows}) if rows else [run.get('dilation') or 1]
    k = ', '.join(str(x) for x in ks)
    return (f'clock: {clock_of(run)}; dilation: {k} (latencies / K, rates x K: the device\'s '
            f'clock); calibration: {calibration_text(run)}')


def verdict_text(v):
    """The verdict with what it is against (reproduced: the paper or the
    model)."""
    return f'{v["verdict"]} ({v["against"]})' if v['against'] else v['verdict']


def row_what(fig, p):
    """A row's figure in words: at its depth where the figure has several."""
    return fig.what if len(fig.depths) == 1 or p is None else f'{fig.what}, QD{p.iodepth}'


def row_device(r):
    """A row's device: versus a second one, the second's words over its."""
    return f'{r.fig.versus} / {r.dev}' if r.fig.versus else r.dev


def headline_lines(rows, run=None):
    run = run or {}
    out = ['| figure (paper) | dm-pcm device | point | paper | dm-pcm | model | error vs paper | '
           'error vs model | verdict | why | dm-linear | clock, K, calibration |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rows:
        fig, p = r.fig, r.point
        spread = f' ± {fmt(r.sd)}' if r.sd else ''
        late = ''
        if r.status and r.status.get('timed'):
            late = f' (late {r.status["late"]} of {r.status["timed"]})'
        got = f'{fmt(r.got)}{spread} {fig.unit}' if r.got is not None else '-'
        out.append(f'| {row_what(fig, p)} ({fig.source}) | `{row_device(r)}` | '
                   f'{p.id if p else fig.app} | {fig.paper_text()} | {got} | '
                   f'{fmt(r.model) + " " + fig.unit if r.model is not None else "-"} | '
                   f'{error_text(fig, r.got)} | '
                   f'{error_text(fig, r.got, r.model) if r.model is not None else "-"} | '
                   f'**{verdict_text(r.verdict)}** | {r.verdict["reason"]}{late} | '
                   f'{fmt(r.base)} | {clock_of(run)}, K={r.k}, '
                   f'{calibration_text(run, r.overhead)} |')
    return out


# paper-table.csv's columns, paper-table.json's keys per row
PAPER_FIELDS = ('figure', 'source', 'what', 'preset', 'device', 'point', 'workload', 'kind',
                'unit', 'paper', 'model', 'measured', 'stdev', 'error_pct', 'error_model_pct',
                'verdict', 'against', 'reason', 'evidence', 'late', 'timed', 'dm_linear',
                'clock', 'dilation', 'calibration', 'overhead_ns', 'kernel', 'paper_high')


def headline_records(rows, run):
    """The headline rows as dicts of PAPER_FIELDS: numbers as numbers
    (error_pct: dm-pcm against the paper, percent, None for a bound;
    error_model_pct: against the model, None without it; measured,
    model and dm_linear on the device's clock, at dilation K; a range's
    ends are paper and paper_high; a figure versus a second device
    names both, the second's words first; an application's figure,
    never measured here, has no point and its application as workload)."""
    out = []
    for r in rows:
        fig, p, v = r.fig, r.point, r.verdict
        out.append({'figure': fig.key, 'source': fig.source, 'what': row_what(fig, p),
                    'preset': fig.preset, 'device': row_device(r),
                    'point': p.id if p else None,
                    'workload': p.describe() if p else fig.app, 'kind': fig.kind,
                    'unit': fig.unit, 'paper': fig.value, 'model': r.model, 'measured': r.got,
                    'stdev': r.sd, 'error_pct': v['error_paper_pct'],
                    'error_model_pct': v['error_model_pct'], 'verdict': v['verdict'],
                    'against': v['against'], 'reason': v['reason'],
                    'evidence': '; '.join(v['evidence']),
                    'late': r.status.get('late') if r.status else None,
                    'timed': r.status.get('timed') if r.status else None,
                    'dm_linear': r.base, 'clock': clock_of(run), 'dilation': r.k,
                    'calibration': calibration_text(run), 'overhead_ns': r.overhead,
                    'kernel': run.get('kernel'), 'paper_high': fig.high})
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


def headline_text(rows, run=None):
    """The headline table as plain text (the console's): a row per figure
    with its verdict, after a line of the figures' clock, dilation and
    calibration (@run: run.json's; without it, the rows' K alone)."""
    out = [conditions_text(run or {}, rows),
           f'{"figure":58} {"device":16} {"paper":>12} {"dm-pcm":>10} {"model":>10} '
           f'{"error":>10} {"vs model":>9}  verdict']
    for r in rows:
        fig, p = r.fig, r.point
        what = row_what(fig, p)
        vm = error_text(fig, r.got, r.model) if r.model is not None else '-'
        out.append(f'{fig.preset + ": " + what[:50]:58} {r.dev[:16]:16} '
                   f'{fig.paper_text():>12} {fmt(r.got):>10} {fmt(r.model):>10} '
                   f'{error_text(fig, r.got):>10} {vm:>9}  {verdict_text(r.verdict)}: '
                   f'{r.verdict["reason"]}')
    return '\n'.join(out)


def time_split_text(rows):
    """Where each I/O's time went, for every QD1 figure a mean latency
    measures (plain text; means on the device's clock, us): what fio
    measured, the device's modeled time (its status), and the rest, what
    this host's completion path added that the calibration did not take
    off (overhead_ns, shown on the device's clock, was taken off every
    hold); with the share of completions that came late."""
    out = [f'{"figure":44} {"measured":>9} {"device":>9} {"host":>7} {"overhead_ns":>11} '
           f'{"late":>14}']
    for r in rows:
        if r.fig.metric != 'lat_mean_us' or r.fig.over or not r.status:
            continue
        dev = r.status.get(f'{r.fig.side}_lat_mean_us')
        if dev is None or r.got is None:
            continue
        taken = (r.overhead or 0) / (r.k or 1) / 1000
        late = (f'{r.status["late"]} of {r.status["timed"]}' if r.status.get('timed')
                else '-')
        what = f'{r.fig.preset}: {r.fig.what}'
        warm = r.point.axes.get('warmup_ios') or r.point.axes.get('ramp')
        out.append(f'{what[:43] + ("*" if warm else ""):44} {r.got:9.2f} {dev:9.2f} '
                   f'{r.got - dev:+7.2f} {-taken:11.2f} {late:>14}')
    out.append('measured = device + host: the device is the model\'s time (status), the '
               'host what the completion path added beyond the overhead_ns taken off each '
               'hold')
    if any(r.point.axes.get('warmup_ios') or r.point.axes.get('ramp') for r in rows):
        out.append('* the device\'s mean is over the point\'s warm-up and ramps too (PSS: '
                   'its write cache filling, fast), fio\'s over the measured time only')
    return '\n'.join(out)


def points_lines(res):
    """Every point's figures (on the device's clock: K), and dm-pcm's own
    view of it (status: held, late, the largest lateness, the modeled
    mean latency of the side)."""
    out = ['| point | on | workload | side | IOPS | MB/s | mean lat us | p99 us | p99.9 us | K | '
           'held / late, late max us | modeled mean us |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for p, dev, st in res:
        for side in R.SIDES:
            s = st.get(side)
            if not s:
                continue

            def cell(m):
                sp = s[m]
                return f'{fmt(sp["mean"])} ± {fmt(sp["stdev"])}' if sp else '-'
            view = st.get('status')
            held = (f'{view["held"]} / {view["late"]}, {fmt(view["late_max_us"])}'
                    if view else '-')
            modeled = fmt(view.get(f'{side}_lat_mean_us')) if view else '-'
            out.append(f'| {p.id} | `{dev}` | {p.describe()} | {side} | {cell("iops")} | '
                       f'{cell("mbps")} | {cell("lat_mean_us")} | {cell("lat_p99_us")} | '
                       f'{cell("lat_p999_us")} | {st.get("dilation", 1)} | {held} | '
                       f'{modeled} |')
    return out


RANK_COLUMNS = 16   # ranks a table shows one by one; more: per channel


def rank_lines(res, figs=None, rel=lambda p: p):
    """Each dm-pcm device's rank utilisation, point by point: a table
    of its "ranks" reply after every point (the heat map's numbers: with
    more than RANK_COLUMNS ranks, each channel's mean and busiest rank),
    and the heat map itself when it was drawn (@figs)."""
    grids = R.rank_grids(res)
    if not grids:
        return ['(no "ranks" reply recorded: a run before dm-pcm 1.6.0, or dm-linear only)']
    out = ['Utilisation, % of the point\'s time (busy time over the time since the "stats '
           'reset" before it: warm-up and repetitions), from the device\'s `ranks` reply '
           '(`pcmctl ranks --json`, kept in run.json).', '']
    for i, (dev, (labels, rows)) in enumerate(grids.items()):
        chans = sorted({lab.split('.')[0] for lab in labels}, key=int)
        per_rank = len(labels) <= RANK_COLUMNS
        cols = [f'rank {lab}' for lab in labels] if per_rank else \
            [f'ch {c} mean / max' for c in chans]
        out += [f'### `{dev}`', '']
        name = rank_fig_name(i, len(grids))
        if figs and name in figs:
            png, csv = figs[name]
            out += [f'![{name}]({rel(png)})', '', f'Data: [{rel(csv)}]({rel(csv)})', '']
        out += ['| point | workload | ' + ' | '.join(cols) + ' | busiest | mean |',
                '|---|---|' + '---|' * (len(cols) + 2)]
        for p, us in rows:
            ut = R.util_text
            if per_rank:
                cells = [ut(u) for u in us]
            else:
                cells = []
                for c in chans:
                    v = [u for lab, u in zip(labels, us) if lab.split('.')[0] == c]
                    cells.append(f'{ut(sum(v) / len(v))} / {ut(max(v))}')
            out.append(f'| {p.id} | {p.describe()} | ' + ' | '.join(cells) +
                       f' | {ut(max(us))} | {ut(sum(us) / len(us))} |')
        out.append('')
    return out


def rank_fig_name(i, n):
    """The heat map's figure name of the @i-th of @n devices."""
    return 'rank-util' if n == 1 else f'rank-util-{i + 1}'


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
    rel = lambda p: os.path.relpath(p, d)  # noqa: E731 (a one-line helper)
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
         f'- backing: {spec.backing}, {spec.ramdisk >> 20} MiB',
         f'- every figure below: {conditions_text(run, rows)}', '',
         '## Paper vs dm-pcm', '',
         'Each paper figure that the run measures, on the point closest to the paper\'s '
         'setup (raw device, O_DIRECT, one thread, fresh), beside the model\'s figure for the '
         'same point (libpcm: the module\'s own timing model) and the errors against both.  '
         f'Verdicts: reproduced (a latency within {V.TOLERANCE["latency"] * 100:g} %, a rate '
         f'within {V.TOLERANCE["rate"] * 100:g} % of the paper; or of the model where '
         'dm-pcm.rst says the model differs from the paper, with its reason), host-bound '
         f'(late completions over {V.LATE_SHARE * 100:g} % of the device\'s timed ones, or '
         f'dm-linear on the same point within {V.LINEAR_NEAR * 100:g} % of the measurement), '
         'model-differs-from-paper (dm-pcm.rst\'s reason), not reproduced.  dm-linear: the '
         'same point on the baseline, on the same clock.  The same table: '
         '[paper-table.csv](paper-table.csv), [paper-table.json](paper-table.json).', '']
    L += headline_lines(rows, run) if rows else ['(no point of this run measures a paper figure)']
    L += ['', '## Figures', '']
    for name, (png, csv) in figs.items():
        if name.startswith('rank-util'):
            continue    # under Rank utilisation, beside its table
        L += [f'### {name}', '', f'![{name}]({rel(png)})', '', f'Data: [{rel(csv)}]({rel(csv)})',
              '']
    if not [n for n in figs if not n.startswith('rank-util')]:
        L += ['(no figure: the run has no points for one, or it was run with --no-figures)',
              '']
    L += ['## Points', '', 'All points: [points.csv](points.csv).', '']
    L += points_lines(res)
    L += ['', '## Rank utilisation', '']
    L += rank_lines(res, figs, rel)
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


def update_run(run_dir, extra):
    """run_dir/run.json, as the guest wrote it, with @extra (the host's
    wall time, icount) added and written back; the dict."""
    path = os.path.join(run_dir, 'run.json')
    with open(path, encoding='utf-8') as fh:
        run = json.load(fh)
    if extra:
        run.update(extra)
        with open(path, 'w', encoding='utf-8') as fh:
            json.dump(run, fh, indent=1)
    return run


def finish(spec, run_dir, draw=True, **extra):
    """A run's statistics, figures and report, from what its guest wrote
    (run.json, raw/); extra (the host's wall time, icount) is added to
    run.json first.  Every figure on the device's clock (a dilated run's
    latencies / K, rates x K), with its clock, dilation and calibration.
    draw=False: no figure (importing matplotlib and drawing take minutes
    under TCG, where the VM suite runs the demo natively).
    Returns (report path, figures, headline rows, run)."""
    update_run(run_dir, extra)
    run, res = R.load_run(spec, run_dir)
    R.write_points_csv(os.path.join(run_dir, 'points.csv'), res,
                       {'clock': clock_of(run), 'calibration': calibration_text(run)})
    rows = headline(res)
    if draw:
        from . import figures  # matplotlib: only here
    figs = {} if not draw else figures.draw_all(res, os.path.join(run_dir, 'figures'),
                            conditions={'clock': clock_of(run),
                                        'dilation': ', '.join(str(k) for k in sorted(
                                            {st.get('dilation', 1) for _, _, st in res})),
                                        'calibration': calibration_text(run)})
    write_paper_table(run_dir, rows, run)
    out = os.path.join(run_dir, 'report.md')
    with open(os.path.join(run_dir, 'spec.toml'), encoding='utf-8') as fh:
        write(out, spec, fh.read(), run, res, figs, rows)
    return out, figs, rows, run
