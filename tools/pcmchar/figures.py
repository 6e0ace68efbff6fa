# SPDX-License-Identifier: GPL-2.0-only
"""The papers' figures redrawn from a run's points, each a PNG with the CSV
of what it plots beside it.  A figure is drawn when the run has points for
it (the spec decides), and the papers' values, where they give one, are
drawn beside dm-pcm's (papers.py).

  psd-fig1   random / sequential mean latency vs I/O depth, read and write
  psd-fig2   write / read mean latency vs I/O depth, random and sequential
  psd-fig3   throughput vs read share (rw, randrw), normalized to 50/50
  onyx-fig4  bandwidth vs access size: read, write, 50/50
  onyx-fig6  write bandwidth and latency vs the gap interval
  pss-cdf    QD1 random-write latency distribution, 99.9 % point marked
  rank-util  each dm-pcm device's rank utilisation, points x ranks (a heat
             map; rank-util-N for the N-th device when there are several)

Each builder takes results, [(point, device label, stats)], and returns
(figure, CSV head, CSV rows), or None without the points it needs.

A legend names a device as the papers do, its other table words as the
table has them (device_name(): "Onyx (dm-pcm), completion:early",
"dm-linear (baseline)"), and an axis as a reader says it (axis_text():
"64 in flight"); every axis has its unit.  The CSVs keep the spec's
words (preset:onyx, iodepth=64): they are data.
"""
import os
import textwrap

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402 (after matplotlib.use('Agg'))

from . import results as R  # noqa: E402 (after matplotlib.use('Agg'))
from .papers import BY_KEY as PAPER  # noqa: E402 (after matplotlib.use('Agg'))
from .spec import parse_size, size_word  # noqa: E402 (after matplotlib.use('Agg'))
from pcmlib import words as pwords  # noqa: E402 (after matplotlib.use('Agg'))

PAPER_STYLE = {'color': 'black', 'linestyle': '--', 'linewidth': 1}
LINEAR = 'dm-linear'


def groups(res, keep, where):
    """{(device, rest): {kept axes tuple: stats}}: results passing where(p),
    keyed by device and the axes not in keep (a series each), then by the
    kept axes (the points of a series)."""
    out = {}
    for p, dev, st in res:
        if not where(p):
            continue
        rest = tuple((k, v) for k, v in p.axes.items() if k not in keep + ('device',))
        out.setdefault((dev, rest), {})[tuple(p.axes[k] for k in keep)] = st
    return out


def varying(all_rests):
    """The axes whose values tell a figure's series apart."""
    return {k for r in all_rests for k, v in r if any(dict(o).get(k) != v for o in all_rests)}


def label(dev, rest, all_rests):
    """The series' key in a figure's CSV: the device, and the axes that
    tell this series from the others of the figure, as fio's names
    (iodepth=16); a legend says it as series_name() does."""
    vary = varying(all_rests)
    extra = ' '.join(f'{k}={size_word(v) if k in ("bs", "size") else v}'
                     for k, v in rest if k in vary)
    return f'{dev} {extra}'.strip()


# the presets by the names of the devices they model (pcm-params.c's
# pcm_presets[], papers.py's sources)
PRESET_NAMES = {'onyx': 'Onyx', 'pss': 'PSS', 'psd': 'PSD', 'reram': 'ReRAM',
                'optane': 'Optane P4800X', 'iodrive': 'ioDrive', 'none': 'no delay'}


def device_name(dev):
    """A device as a figure names it: dm-linear as the baseline; a dm-pcm
    table by its preset's name, "(dm-pcm)", then its other words as the
    table has them: 'preset:onyx completion:early' is 'Onyx (dm-pcm),
    completion:early'."""
    if dev == LINEAR:
        return 'dm-linear (baseline)'
    words = dev.split()
    preset = [w.split(':', 1)[1] for w in words if w.startswith('preset:')]
    name = f'{PRESET_NAMES.get(preset[0], preset[0])} (dm-pcm)' if preset else 'dm-pcm'
    return ', '.join([name] + [w for w in words if not w.startswith('preset:')])


def axis_text(k, v):
    """An axis's value as a legend says it: 16 in flight, 4k requests."""
    if k == 'iodepth':
        return f'{v} in flight'
    if k in ('bs', 'size'):
        return f'{size_word(v)} {"requests" if k == "bs" else "file"}'
    if k in ('rwmixread', 'fullness', 'region'):
        return f'{v} % {dict(rwmixread="reads", fullness="full", region="of the file")[k]}'
    if k == 'direct':
        return 'O_DIRECT' if v else 'buffered'
    if k == 'threads':
        return f'{v} threads'
    if k == 'warmup_ios':
        return f'warm-up {v} I/Os'
    if k == 'ramp':
        return f'ramp {v:g} s'
    return str(v)   # target (raw, ext4), scheduler, pattern


def series_name(dev, rest, all_rests, *what):
    """A series as its legend names it: the device (device_name()), the
    axes that tell it from the figure's other series (axis_text()), and
    @what (the operation): 'Onyx (dm-pcm), 64 in flight, read'."""
    vary = varying(all_rests)
    return ', '.join([device_name(dev)] + [axis_text(k, v) for k, v in rest if k in vary] +
                     list(what))


def new_figure(title, xlabel, ylabel):
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    ax.set_title(title, fontsize=10)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    return fig, ax


def log2_axis(ax, xs):
    """A log2 x axis with a plain tick at each value drawn."""
    ax.set_xscale('log', base=2)
    ax.set_xticks(sorted(set(xs)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f'{v:g}'))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def plot_lines(ax, lines):
    """Each series its own marker and dash too: curves that coincide
    (random and sequential on a PCM device) stay told apart."""
    for i, (lab, xs, ys) in enumerate(lines):
        ax.plot(xs, ys, marker='osv^D'[i % 5], linestyle=('-', '--')[i % 2],
                markersize=8 - 2 * (i % 2), label=lab)


def ratio_figure(res, pairs, paper_key, title, ylabel, what):
    """Mean-latency ratios vs I/O depth: pairs [(series name, numerator rw,
    denominator rw)]; the paper's value as a dashed line."""
    rows, lines = [], []
    for name, num, den in pairs:
        g = groups(res, ('rw', 'iodepth'), lambda p, a=num, b=den: p.rw in (a, b))
        rests = [rest for _, rest in g]
        for (dev, rest), pts in g.items():
            side = 'read' if num.endswith('read') else 'write'
            den_side = 'read' if den.endswith('read') else 'write'
            xs = sorted(d for rw, d in pts if rw == num and (den, d) in pts)
            ys = []
            for d in xs:
                a = R.value(pts[(num, d)], side, 'lat_mean_us')
                b = R.value(pts[(den, d)], den_side, 'lat_mean_us')
                ys.append(a / b)
                rows.append([dev, name, label('', rest, rests), d, a, b, a / b])
            if len(xs) > 1:  # one depth is no curve over the depth (a QD1-only run)
                lines.append((series_name(dev, rest, rests, name), xs, ys))
    if not lines:
        return None
    fig, ax = new_figure(title, 'I/O depth (requests in flight)', ylabel)
    plot_lines(ax, lines)
    f = PAPER[paper_key]
    ax.axhline(f.value, label=f'{f.source}: {what}', **PAPER_STYLE)
    log2_axis(ax, [x for _, xs, _ in lines for x in xs])
    # room above the paper's line and the curves (a ratio of 1 sat on the frame)
    ax.set_ylim(0, 1.3 * max([f.value] + [y for _, _, ys in lines for y in ys]))
    ax.legend(fontsize=8, loc='upper right')
    return fig, ['device', 'series', 'axes', 'iodepth', 'numerator_us', 'denominator_us',
                 'ratio'], rows


def psd_fig1(res):
    return ratio_figure(res, [('read', 'randread', 'read'), ('write', 'randwrite', 'write')],
                        'psd.randseq.read', 'PSD Fig. 1: sensitivity to randomness',
                        'random / sequential mean latency (x)', 'random ~ sequential (1x)')


def psd_fig2(res):
    return ratio_figure(res, [('random', 'randwrite', 'randread'), ('sequential', 'write', 'read')],
                        'psd.writeread', 'PSD Fig. 2: write / read imbalance',
                        'write / read mean latency (x)', 'up to 19x')


def psd_fig3(res):
    g = groups(res, ('rw', 'rwmixread'), lambda p: p.rw in ('rw', 'randrw'))
    rests = [rest for _, rest in g]
    rows, lines = [], []
    for (dev, rest), pts in g.items():
        for rw in ('randrw', 'rw'):
            mix = sorted(m for r, m in pts if r == rw)
            base = pts.get((rw, 50))
            if len(mix) < 2 or not base:  # one mix is no curve (Onyx's 50/50)
                continue
            b = R.total(base, 'iops')
            ys = [R.total(pts[(rw, m)], 'iops') / b for m in mix]
            for m, y in zip(mix, ys):
                rows.append([dev, rw, label('', rest, rests), m, R.total(pts[(rw, m)], 'iops'), y])
            kind = 'random' if rw == 'randrw' else 'sequential'
            lines.append((series_name(dev, rest, rests, kind), mix, ys))
    if not lines:
        return None
    fig, ax = new_figure('PSD Fig. 3: sensitivity to the read/write mix (paper: 50 % full, '
                         'depth 64)', 'reads (% of requests)', 'IOPS / IOPS at 50/50 (x)')
    plot_lines(ax, lines)
    # the paper's Fig. 3 gives bars, no numbers in its text: its reference
    # point (each mix over 50/50) is what can be drawn beside dm-pcm's
    ax.axhline(1, label=f"{PAPER['psd.bestdepth'].source}: normalized to 50/50 (1x)",
               **PAPER_STYLE)
    ax.set_xticks(sorted({x for _, xs, _ in lines for x in xs}))
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8)
    return fig, ['device', 'rw', 'axes', 'rwmixread', 'iops', 'normalized'], rows


OP_NAMES = {'read': 'read', 'write': 'write', '50/50': '50/50 read/write'}


def onyx_fig4(res):
    ops = (('read', 'randread', lambda st: R.value(st, 'read', 'mbps')),
           ('write', 'randwrite', lambda st: R.value(st, 'write', 'mbps')),
           ('50/50', 'randrw', lambda st: R.total(st, 'mbps')))
    g = groups(res, ('rw', 'bs'), lambda p: p.rw in ('randread', 'randwrite') or
               (p.rw == 'randrw' and p.rwmixread == 50))
    rests = [rest for _, rest in g]
    rows, lines = [], []
    for (dev, rest), pts in g.items():
        for name, rw, get in ops:
            xs = sorted(bs for r, bs in pts if r == rw)
            if len(xs) < 2:
                continue  # one size is no curve
            ys = [get(pts[(rw, bs)]) for bs in xs]
            rows += [[dev, name, label('', rest, rests), x, y] for x, y in zip(xs, ys)]
            lines.append((dev, rest, name, xs, ys))
    if not lines:
        return None
    fig, ax = new_figure('Onyx Fig. 4: bandwidth vs access size (the paper: 16 in flight)',
                         'access size (bytes)', 'bandwidth (MB/s)')
    fig.set_size_inches(10.5, 5)
    # a colour per operation, a line style per device: late (solid), early
    # completion (dashed), the dm-linear baseline (dotted, pale); squares
    # where the depth is not the paper's 16 (its 512 B and 4 KB IOPS are at 64)
    colour = {'read': 'tab:blue', 'write': 'tab:red', '50/50': 'tab:green'}
    deep = 'iodepth' in varying(rests)
    for dev, rest, op, xs, ys in lines:
        style = ':' if dev == LINEAR else '--' if 'completion:early' in dev.split() else '-'
        ax.plot(xs, ys, marker='s' if deep and dict(rest).get('iodepth') != 16 else 'o',
                linestyle=style, color=colour.get(op), alpha=0.5 if style == ':' else 1,
                label=series_name(dev, rest, rests, OP_NAMES[op]))
    for key in ('onyx.read512.iops', 'onyx.read4k.iops', 'onyx.read1m.mbps',
                'onyx.write1m.mbps'):
        f = PAPER[key]
        bs = parse_size('bs', f.bs)
        mbps = f.value * bs / 1e6 if f.unit == 'IOPS' else f.value
        marker = 'x' if f.side == 'read' else '+'
        ax.plot([bs], [mbps], marker=marker, markersize=10, linestyle='none', color='black',
                label=f'Onyx paper: {f.what}')
        rows.append(['Onyx paper', f.key, f.what, bs, mbps])
    log2_axis(ax, [x for *_, xs, _ in lines for x in xs])
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: size_word(int(v)) if v >= 512 else f'{v:g}'))
    ax.set_yscale('log')  # 512 B reads and 1 MB writes on one page
    ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1))  # beside, not over
    return fig, ['device', 'op', 'axes', 'bs', 'mbps'], rows


def gap_of(dev):
    v = pwords.word_value(dev, 'gap_interval')
    return None if v is None else int(v)


def onyx_fig6(res):
    byrest = {}
    for p, dev, st in res:
        g = gap_of(dev)
        if g is None or p.rw != 'randwrite':
            continue
        base = ' '.join(w for w in dev.split() if not w.startswith('gap_interval:'))
        key = (base, tuple(sorted((k, v) for k, v in p.axes.items() if k != 'device')))
        byrest.setdefault(key, {})[g] = st
    byrest = {k: v for k, v in byrest.items() if len(v) > 1}
    if not byrest:
        return None
    fig, ax = new_figure("Onyx Fig. 6: start-gap's impact", 'gap write interval (writes '
                         'per gap move)', 'write bandwidth (MB/s)')
    # off (0) drawn right of the largest interval
    off = 4 * max([g for pts in byrest.values() for g in pts if g] or [256])
    ax2 = ax.twinx()
    ax2.set_ylabel('mean write latency (µs)')
    rows = []
    rests = [r for _, r in byrest]
    for (base, rest), pts in byrest.items():
        xs = sorted(pts, key=lambda g: g or 1 << 30)
        at = [g or off for g in xs]
        bw = [R.value(pts[g], 'write', 'mbps') for g in xs]
        lat = [R.value(pts[g], 'write', 'lat_mean_us') for g in xs]
        ax.plot(at, bw, marker='o', label=series_name(base, rest, rests, 'bandwidth'))
        ax2.plot(at, lat, marker='s', linestyle=':',
                 label=series_name(base, rest, rests, 'mean latency'))
        rows += [[base, label('', rest, rests), g, b, l] for g, b, l in zip(xs, bw, lat)]
    log2_axis(ax, [g or off for pts in byrest.values() for g in pts])
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _: 'off' if v == off else f'{v:g}'))
    ax.axvline(128, label="Onyx's default interval (128)", color='grey', linewidth=0.8)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc='center right')
    return fig, ['device', 'axes', 'gap_interval', 'write_mbps', 'write_lat_mean_us'], rows


def pss_cdf(res):
    g = groups(res, (), lambda p: p.rw == 'randwrite' and p.iodepth == 1)
    if not g:
        return None
    rests = [rest for _, rest in g]
    fig, ax = new_figure('PSS: QD1 random-write latency distribution', 'completion latency (µs)',
                         'fraction of writes completed (CDF)')
    rows = []
    for (dev, rest), pts in g.items():
        st = pts[()]
        bins = st['write']['bins']
        if not bins:
            continue
        c = R.cdf(bins)
        lab = series_name(dev, rest, rests)
        line, = ax.plot([x for x, _ in c], [y for _, y in c], drawstyle='steps-post', label=lab)
        p999 = R.percentile_us(bins, 99.9)
        ax.plot([p999], [0.999], marker='o', color=line.get_color(), linestyle='none',
                label=f'{lab}: 99.9 % within {p999:.0f} µs')
        rows += [[dev, label('', rest, rests), x, y] for x, y in c]
    f, top = PAPER['pss.write4k.p999'], PAPER['pss.write4k.max']
    ax.plot([f.value], [0.999], marker='*', markersize=12, color='black', linestyle='none',
            label=f'PSS paper: 99.9 % within {f.value:g} µs')
    ax.axvline(top.value, label=f'PSS paper: highest {top.value:g} µs', **PAPER_STYLE)
    ax.set_xscale('log')
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, loc='lower right')
    return fig, ['device', 'axes', 'latency_us', 'fraction'], rows


UTIL_LABEL = "rank utilisation (% of the point's time)"


def rank_heatmaps(res):
    """{name: (figure, CSV head, CSV rows)}: for each dm-pcm device with
    a "ranks" reply, a heat map of its ranks' utilisation (columns,
    channel.rank) at each point (rows), in % of the point's time."""
    grids = R.rank_grids(res)
    out = {}
    for i, (dev, (labels, rows)) in enumerate(grids.items()):
        name = 'rank-util' if len(grids) == 1 else f'rank-util-{i + 1}'
        fig, ax = plt.subplots(figsize=(max(5, min(14, 2.5 + 0.45 * len(labels))),
                                        max(2.5, min(14, 1.5 + 0.35 * len(rows)))), dpi=100)
        ax.set_title(f'{device_name(dev)}: rank utilisation per point (%)', fontsize=10)
        data = [us for _, us in rows]
        # the scale up to the busiest rank (1 % at least): a QD1 point's
        # ranks, busy a fraction of 1 %, are not all one colour
        top = max(1.0, max(max(us) for us in data))
        im = ax.imshow(data, aspect='auto', cmap='viridis', vmin=0, vmax=top,
                       interpolation='nearest')
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, fontsize=7, rotation=90 if len(labels) > 16 else 0)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f'{p.id} {p.describe()}'[:48] for p, _ in rows], fontsize=7)
        ax.set_xlabel('rank (channel.rank)')
        ax.set_ylabel('point (workload)')
        if len(labels) * len(rows) <= 200:
            for y, us in enumerate(data):
                for x, u in enumerate(us):
                    ax.text(x, y, R.util_text(u), ha='center', va='center', fontsize=6,
                            color='white' if u < top / 2 else 'black')
        # the values are % (0-100), not fractions: a QD1 run's scale, 0-1 %,
        # says so on every tick
        bar = fig.colorbar(im, ax=ax, label=UTIL_LABEL,
                           format=matplotlib.ticker.FuncFormatter(lambda v, _: f'{v:g} %'))
        bar.ax.tick_params(labelsize=7)
        csv_rows = [[dev, p.id, lab, u] for p, us in rows for lab, u in zip(labels, us)]
        out[name] = (fig, ['device', 'point', 'rank', 'util_pct'], csv_rows)
    return out


BUILDERS = {'psd-fig1': psd_fig1, 'psd-fig2': psd_fig2, 'psd-fig3': psd_fig3,
            'onyx-fig4': onyx_fig4, 'onyx-fig6': onyx_fig6, 'pss-cdf': pss_cdf}


CONDITIONS = ('clock', 'dilation', 'calibration')


def conditions_line(conditions):
    """The figures' clock, dilation and calibration, one line."""
    c = dict({'clock': '-', 'dilation': 1, 'calibration': 'uncalibrated'}, **(conditions or {}))
    return (f"clock: {c['clock']}; dilation: {c['dilation']} (latencies / K, rates x K); "
            f"{c['calibration']}")


def draw_all(res, outdir, conditions=None):
    """Every figure the run has points for: {name: (png path, csv path)}.
    Each carries @conditions (the run's clock, dilation, calibration):
    under the PNG's title, and as the CSV's last columns (CONDITIONS)."""
    os.makedirs(outdir, exist_ok=True)
    made = {}
    c = dict({'clock': '-', 'dilation': 1, 'calibration': 'uncalibrated'}, **(conditions or {}))
    built = ((name, build(res)) for name, build in BUILDERS.items())
    for name, out in [*built, *rank_heatmaps(res).items()]:
        if out is None:
            continue
        fig, head, rows = out
        png, csv = (os.path.join(outdir, f'{name}.{ext}') for ext in ('png', 'csv'))
        ax = fig.axes[0]
        # wrapped to the figure's width: a line longer than it was cut off
        cond = textwrap.fill(conditions_line(c), int(15 * fig.get_figwidth()))
        ax.set_title(f'{ax.get_title()}\n{cond}', fontsize=9)
        fig.tight_layout()
        fig.savefig(png)
        plt.close(fig)
        R.write_csv(csv, head + list(CONDITIONS),
                    [list(r) + [c[k] for k in CONDITIONS] for r in rows])
        made[name] = (png, csv)
    return made
