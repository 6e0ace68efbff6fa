# SPDX-License-Identifier: GPL-2.0-only
"""fio's JSON (json+) of one point: its repetitions, their statistics, and
the CSV of every point of a run (fio's report read by pcmlib/fio.py)."""
import csv
import json
import lzma
import math
import os
import statistics

from pcmlib import fio
from pcmlib.fio import FioError

# per repetition and side (read, write); latencies in us, lat_*: fio's
# lat (latency() says when a run's are its clat)
METRICS = ('iops', 'mbps', 'lat_mean_us', 'lat_min_us', 'lat_p50_us', 'lat_p99_us',
           'lat_p999_us', 'lat_p9999_us', 'lat_max_us')
PCTS = {'lat_p50_us': 50, 'lat_p99_us': 99, 'lat_p999_us': 99.9, 'lat_p9999_us': 99.99}
SIDES = fio.SIDES


def latency(side):
    """The latency a side's lat_* figures are of: fio's lat, from the
    request's submission to its completion, where the job recorded its
    percentiles (lat_percentiles=1: every job file since issue 33), else
    its clat, from the submission's return (a run from before, the only
    latency it has percentiles of; libaio's io_submit() is ~1 us of a
    1-vCPU icount guest's time, which clat leaves out)."""
    lat = fio.lat(side, 'lat')
    return lat if 'percentile' in lat else fio.lat(side, 'clat')


def side_figures(side):
    """One side (read or write) of one job (a reporting group): METRICS, or
    None if it moved nothing."""
    if not side.get('io_bytes'):
        return None
    lat = latency(side)
    r = {'iops': side['iops'], 'mbps': side['bw_bytes'] / 1e6,
         'lat_mean_us': lat['mean'] / 1000, 'lat_min_us': lat['min'] / 1000,
         'lat_max_us': lat['max'] / 1000,
         'ios': side['total_ios']}
    for k, pct in PCTS.items():
        ns = fio.percentile_ns(lat, pct)
        r[k] = ns / 1000 if ns is not None else None
    return r


def repetitions(data):
    """The measured jobs (rep1, rep2...; not the warm-up): per repetition
    {'read': figures or None, 'write': ..., 'bins': {side: {ns: count}},
    'cpu_pct': usr + sys}."""
    reps = []
    for job in data.get('jobs', []):
        if not job['jobname'].startswith('rep'):
            continue
        if job.get('error'):
            raise FioError(f'fio job {job["jobname"]}: error {job["error"]}')
        rep = {s: side_figures(job[s]) for s in SIDES}
        rep['bins'] = {s: {int(k): v for k, v in latency(job[s]).get('bins', {}).items()}
                       for s in SIDES if rep[s]}
        rep['cpu_pct'] = job['usr_cpu'] + job['sys_cpu']
        reps.append(rep)
    if not reps:
        raise FioError('no repetition (job rep1...) in the fio output')
    return reps


def spread(values):
    """mean, sample standard deviation (0 for one value), min, max."""
    vals = [v for v in values if v is not None]
    if not vals:
        return None
    return {'mean': statistics.fmean(vals),
            'stdev': statistics.stdev(vals) if len(vals) > 1 else 0.0,
            'min': min(vals), 'max': max(vals), 'n': len(vals)}


def merge_bins(reps, side):
    counts = {}
    for r in reps:
        for ns, n in r['bins'].get(side, {}).items():
            counts[ns] = counts.get(ns, 0) + n
    return dict(sorted(counts.items()))


def summarize(reps):
    """Statistics of a point over its repetitions: {side: {metric: spread}},
    the merged latency histogram per side, and fio's CPU share."""
    out = {'reps': len(reps), 'cpu_pct': spread(r['cpu_pct'] for r in reps)}
    for s in SIDES:
        if not any(r[s] for r in reps):
            out[s] = None
            continue
        out[s] = {m: spread(r[s][m] if r[s] else None for r in reps) for m in METRICS}
        out[s]['bins'] = merge_bins(reps, s)
    return out


LATENCIES = tuple(m for m in METRICS if m.startswith('lat_'))
RATES = ('iops', 'mbps')


def dilate(stats, k):
    """@stats (summarize()'s) of a run at dilation:K put on the device's
    clock: every latency (and the histogram's bins) divided by K, every
    rate multiplied by K (dm-pcm.rst, "Time dilation"); a new dict, with
    'dilation': K.  K = 1 changes nothing."""
    k = k or 1
    out = dict(stats, dilation=k)
    for s in SIDES:
        side = stats.get(s)
        if not side:
            continue
        new = {}
        for m, sp in side.items():
            if m == 'bins':
                new[m] = {ns / k if k != 1 else ns: n for ns, n in sp.items()}
            elif sp is None or m not in METRICS:
                new[m] = sp
            else:
                f = k if m in RATES else 1 / k
                new[m] = {key: (v * f if key != 'n' else v) for key, v in sp.items()}
        out[s] = new
    return out


def rescale(v, metric, k_from, k_to):
    """A figure on the clock of dilation k_from put on that of k_to (a
    latency x k_from / k_to, a rate x k_to / k_from)."""
    if v is None:
        return None
    return v * k_to / k_from if metric in RATES else v * k_from / k_to


def cdf(bins):
    """[(latency_us, fraction of I/Os at or below it)] of a histogram."""
    total, seen, out = sum(bins.values()), 0, []
    for ns, n in sorted(bins.items()):
        seen += n
        out.append((ns / 1000, seen / total))
    return out


def percentile_us(bins, pct):
    """The latency (us) below which pct percent of the I/Os completed."""
    total, seen = sum(bins.values()), 0
    for ns, n in sorted(bins.items()):
        seen += n
        if seen * 100 >= pct * total:
            return ns / 1000
    return math.nan


def value(stats, side, metric):
    """The mean of metric over the repetitions, or None."""
    s = stats.get(side) if stats else None
    return s[metric]['mean'] if s and s.get(metric) else None


def total(stats, metric):
    """metric summed over read and write (iops, mbps of a mix)."""
    vals = [value(stats, s, metric) for s in SIDES]
    vals = [v for v in vals if v is not None]
    return sum(vals) if vals else None


CSV_AXES = ('device', 'target', 'scheduler', 'direct', 'bs', 'size', 'iodepth', 'rw',
            'rwmixread', 'fullness', 'pattern', 'threads', 'region')


# after the metrics: the figures' clock, dilation and calibration, and
# the device's own view of the point (its status: dm-pcm only)
CSV_CONDITIONS = ('clock', 'dilation', 'overhead_ns', 'calibration')
CSV_STATUS = ('held', 'late', 'late_max_us', 'model_lat_mean_us')


def write_points_csv(path, results, conditions=None):
    """One row per point, device and side: the axes, then mean and stdev
    of every metric over the repetitions (on the device's clock: a
    dilated run's divided by K), then CSV_CONDITIONS (@conditions: a dict
    of the run's: clock, calibration; a stats' own 'dilation' and
    'overhead_ns' first) and CSV_STATUS (a stats' 'status', latencies on
    the device's clock).  results: [(point, device label, stats)]."""
    conditions = conditions or {}
    head = ['point', 'sweep', 'on', *CSV_AXES, 'side', 'reps']
    for m in METRICS:
        head += [m, m + '_stdev']
    head += [*CSV_CONDITIONS, *CSV_STATUS]
    with open(path, 'w', newline='', encoding='utf-8') as fh:
        w = csv.writer(fh)
        w.writerow(head)
        for p, dev, st in results:
            row = p.row()
            for s in SIDES:
                if not st.get(s):
                    continue
                cells = [p.id, p.sweep, dev, *(row[a] for a in CSV_AXES), s, st['reps']]
                for m in METRICS:
                    sp = st[s][m]
                    cells += [f'{sp["mean"]:.6g}', f'{sp["stdev"]:.6g}'] if sp else ['', '']
                oh = st.get('overhead_ns')
                cells += [conditions.get('clock', ''), st.get('dilation', 1),
                          '' if oh is None else oh,
                          conditions.get('calibration', '')]
                view = st.get('status') or {}
                cells += ['' if view.get(k) is None else f'{view[k]:.6g}' if
                          isinstance(view[k], float) else view[k] for k in
                          ('held', 'late', 'late_max_us', f'{s}_lat_mean_us')]
                w.writerow(cells)


def write_csv(path, head, rows):
    with open(path, 'w', newline='', encoding='utf-8') as fh:
        w = csv.writer(fh)
        w.writerow(head)
        for r in rows:
            w.writerow([f'{c:.6g}' if isinstance(c, float) else c for c in r])


def device_view(status, k):
    """dm-pcm's own view of a point from its status after it (the guest's
    run.json: held, late, late_max_ns, read_lat_mean_ns, write_lat_mean_ns,
    and the lateness histogram): counts as they are, times in us on the
    device's clock (the status's host times divided by K); None without."""
    if not status:
        return None
    k = k or 1
    out = {key: status.get(key) for key in ('held', 'late')}
    out['timed'] = (status.get('held') or 0) + (status.get('late') or 0)
    out['late_max_us'] = (status['late_max_ns'] / k / 1000
                          if status.get('late_max_ns') is not None else None)
    for side in SIDES:
        v = status.get(f'{side}_lat_mean_ns')
        out[f'{side}_lat_mean_us'] = v / k / 1000 if v is not None else None
    out['lateness'] = status.get('lateness')
    return out


def rank_util(ranks):
    """A point's rank utilisation from its "ranks" reply (load_run()'s
    'ranks'): [(channel, rank, utilisation %)], channel by channel; [] if
    none was recorded.  Utilisation is busy time over the time since the
    "stats reset" before the point, on either clock (a ratio)."""
    if not ranks:
        return []
    return [(x['channel'], x['rank'], x['util_ppm'] / 1e4) for x in ranks['per_rank']]


def util_text(u):
    """A utilisation in % as the rank tables and heat maps print it: one
    decimal from 1 % up (and 0), two significant digits below, so that a
    rank busy 0.04 % of a QD1 point (one of Onyx's 128) does not read
    as idle."""
    if u == 0 or u >= 1:
        return f'{u:.1f}'
    return f'{u:.{1 - math.floor(math.log10(u))}f}'


def rank_grids(res):
    """The rank-utilisation heat maps' data, one per dm-pcm device with a
    "ranks" reply: {device: (['c.r' per rank], [(point, [util % per
    rank])])}, the points in the order they ran."""
    out = {}
    for p, dev, st in res:
        u = rank_util(st.get('ranks'))
        if not u:
            continue
        labels, rows = out.setdefault(dev, ([f'{c}.{r}' for c, r, _ in u], []))
        if len(u) == len(labels):
            rows.append((p, [v for _, _, v in u]))
    return out


def read_raw(run_dir, name):
    """fio's JSON output @name of a run: raw/NAME, or raw/NAME.xz where a
    committed run keeps it compressed (Documentation/characterization:
    what --redraw needs)."""
    path = os.path.join(run_dir, 'raw', name)
    if not os.path.exists(path) and os.path.exists(path + '.xz'):
        with lzma.open(path + '.xz', 'rt', encoding='utf-8') as fh:
            return fh.read()
    with open(path, encoding='utf-8') as fh:
        return fh.read()


def load_run(spec, run_dir):
    """The run's results, [(point, device, stats)] in the order they ran,
    from run.json and the fio outputs under raw/; each stats on the
    device's clock (dilate(): the run's own dilation, else the run's;
    dm-linear at the run's, as the host it stands for), with its
    'overhead_ns' (what the device's overhead_ns was, None: not set),
    'status' (device_view(): dm-pcm's own counters, None: not recorded)
    and 'ranks' (the device's "ranks" reply over the point, as
    pcmlib.status.parse_ranks() gives it; None: not recorded)."""
    with open(os.path.join(run_dir, 'run.json'), encoding='utf-8') as fh:
        run = json.load(fh)
    points = {p.id: p for p in spec.points}
    res = []
    for r in run['runs']:
        st = summarize(repetitions(fio.loads(read_raw(run_dir, r['file']))))
        k = r.get('dilation') or run.get('dilation') or 1
        st = dilate(st, k)
        st['overhead_ns'] = r.get('overhead_ns')
        st['status'] = device_view(r.get('status'), k)
        st['ranks'] = r.get('ranks')
        res.append((points[r['point']], r['device'], st))
    return run, res
