#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of the characterization toolkit (tools/pcmchar, behind
'tools/pcm-bench characterize'), without a VM: the spec parser and its
errors, the fio job files (fio itself parses them), fio's JSON and the
statistics over repetitions, the CSVs, the figures (the matplotlib
objects: series, labels, the papers' values) and the report.

The fixtures in fixtures/fio are real fio 3.33 output (json+) of job files
that pcmchar wrote, run on this host against a 16 MiB file:

  fio --output-format=json+ --output=randread-qd1.json JOB   (3 repetitions)
  fio --output-format=json+ --output=randrw-qd4.json JOB     (2, 70 % reads)

Debian's Python (/usr/bin/python3): matplotlib is its python3-matplotlib.
Prints TAP, like tap.h.
"""
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'tools'))
sys.dont_write_bytecode = True
from pcmchar import figures, fiojob, papers, report, results, spec, trace  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taplib  # noqa: E402
from taplib import check, run_case  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures', 'fio')
WORK = tempfile.mkdtemp(prefix='test-char.')


TINY = '''
name = "tiny"
repetitions = 2
runtime = 1
warmup = 0.5
[axes]
device = ["preset:pss", "preset:none"]
rw = ["randread", "randwrite"]
iodepth = [1, 4]
'''


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding='utf-8') as fh:
        return results.loads(fh.read())


# --- the spec ------------------------------------------------------------------

def test_spec_points():
    s = spec.loads(TINY)
    check(len(s.points) == 8, f'{len(s.points)} points')
    check([p.id for p in s.points][:3] == ['p001', 'p002', 'p003'], 'ids')
    p = s.points[0]
    check((p.device, p.rw, p.iodepth) == ('preset:pss', 'randread', 1), f'first {p.axes}')
    check((s.points[1].rw, s.points[2].iodepth) == ('randwrite', 4), 'product order: the '
          'last axis fastest')
    check(p.target == 'raw' and p.bs == 4096 and p.size == 64 << 20 and p.direct is True and
          p.scheduler == 'none' and p.region == 100 and p.threads == 1, f'defaults {p.axes}')
    check(s.devices() == ['preset:pss', 'preset:none', 'linear'], f'devices {s.devices()}')
    plan = s.plan()
    check([(d, len(pts)) for d, _, pts in plan] ==
          [('preset:pss', 4), ('preset:none', 4), ('linear', 4)],
          f'plan: each point on its device, each workload once on dm-linear: {plan}')
    check(all(key == ('raw', 0, 'none') for _, key, _ in plan), 'one setup each')
    check(s.runs() == 12 and s.seconds() == (0.5 + 2 * 1) * 12, f'seconds {s.seconds()}')
    s2 = spec.loads(TINY + 'target = ["raw", "ext4"]\nfullness = [0, 50]\n')
    keys = [(d, key) for d, key, _ in s2.plan()]
    check(len(keys) == 12 and keys[:4] == [('preset:pss', ('raw', 0, 'none')),
                                          ('preset:pss', ('raw', 50, 'none')),
                                          ('preset:pss', ('ext4', 0, 'none')),
                                          ('preset:pss', ('ext4', 50, 'none'))], f'setups {keys}')
    combos = {(p.device, p.rw, p.iodepth) for p in s.points}
    check(len(combos) == 8, 'every combination once')
    s = spec.loads(TINY.replace('baseline', 'x') + 'bs = ["4k", "1m"]\n')
    check(len(s.points) == 16 and {p.bs for p in s.points} == {4096, 1 << 20}, 'bs axis')


def test_spec_sweeps():
    s = spec.loads('''
[axes]
device = "preset:psd"
bs = "4k"
[[sweep]]
name = "fig1"
rw = ["read", "randread"]
iodepth = [1, 64]
[[sweep]]
name = "fig3"
rw = ["randrw", "rw"]
rwmixread = [0, 50, 100]
iodepth = 64
fullness = 50
target = "ext3"
[[sweep]]
name = "again"
rw = "read"
iodepth = 1
''')
    names = [p.sweep for p in s.points]
    check(names.count('fig1') == 4 and names.count('fig3') == 6, f'sweeps {names}')
    check('again' not in names, 'a point twice is run once')
    f3 = [p for p in s.points if p.sweep == 'fig3']
    check(all(p.target == 'ext3' and p.fullness == 50 and p.iodepth == 64 for p in f3),
          'a sweep overrides [axes]')
    check(all(p.device == 'preset:psd' for p in s.points), '[axes] reaches every sweep')
    check(s.name == 'spec', f'default name {s.name}')


def test_example_specs():
    """tools/char/*.toml, the studies the README names, parse and cover
    their figures."""
    d = os.path.join(TOP, 'tools', 'char')
    specs = {f[:-5]: spec.load(os.path.join(d, f)) for f in sorted(os.listdir(d))
             if f.endswith('.toml')}
    check({'tiny', 'psd', 'onyx', 'pss'} <= set(specs), f'specs {sorted(specs)}')
    psd = specs['psd']
    fig1 = {(p.rw, p.iodepth) for p in psd.points if p.sweep == 'fig1-2'}
    check(len(fig1) == 16 and psd.repetitions == 5, 'PSD Fig. 1-2: 4 patterns x 4 depths, 5 reps')
    fig3 = [p for p in psd.points if p.sweep == 'fig3']
    check(fig3 and all(p.fullness == 50 and p.iodepth == 64 for p in fig3), 'Fig. 3 setup')
    for axis in ('bs', 'size', 'pattern', 'threads', 'region', 'target', 'direct'):
        check(len({p.axes[axis] for p in psd.points}) > 1, f'PSD study varies {axis}')
    onyx = specs['onyx']
    check(len({p.device for p in onyx.points}) == 8, 'Onyx: late, early, 6 gap intervals')


def test_spec_errors():
    dev = '[axes]\ndevice = "preset:pss"\n'
    cases_ = [
        ('x = [', '(file)', 'TOML'),
        ('foo = 1\n' + dev, 'foo', 'repetitions'),
        ('[axes]\nrw = "read"\n', 'axes.device', 'preset:pss'),
        (dev + 'rw = "randx"', 'axes.rw', 'read, write, randread, randwrite, rw, randrw'),
        (dev + 'iodepth = [1, 0]', 'axes.iodepth[1]', 'an integer from 1 to 1024'),
        (dev + 'iodepth = "4"', 'axes.iodepth', 'an integer from 1 to 1024'),
        (dev + 'bs = "3000"', 'axes.bs', 'a multiple of 512 bytes'),
        (dev + 'target = "xfs"', 'axes.target', 'raw, ext3, ext4'),
        (dev + 'direct = 1', 'axes.direct', 'true, false'),
        (dev + 'pattern = "spiky"', 'axes.pattern', 'sustained, bursty'),
        (dev + 'scheduler = "mq-deadline"', 'axes.scheduler', 'backing = "null_blk"'),
        (dev + 'scheduler = "bfq"', 'axes.scheduler', 'none, mq-deadline'),
        (dev + 'region = 50\nrw = "read"', 'axes.region', 'region 100'),
        (dev + 'fullness = 99', 'axes.fullness', 'from 0 to 95'),
        (dev + 'rw = []', 'axes.rw', 'one value or a list'),
        (dev + 'colour = "red"', 'axes.colour', 'bs, device, direct'),
        (dev + 'size = "1g"', 'axes.size', 'at most half the ramdisk'),
        (dev + 'bs = "8k"\nsize = "12k"', 'axes.size', 'a multiple of every bs'),
        ('[axes]\ndevice = "linear"', 'axes.device', 'baseline = true'),
        ('[axes]\ndevice = "preset:pss gap interval:3!"', 'axes.device', 'key:value'),
        ('repetitions = 0\n' + dev, 'repetitions', 'from 1 to 100'),
        ('runtime = "1s"\n' + dev, 'runtime', 'a number from 0.1'),
        ('ramdisk = "100k"\n' + dev, 'ramdisk', 'whole MiB'),
        ('backing = "loop"\n' + dev, 'backing', 'brd, null_blk'),
        ('bursty = { ios = 0 }\n' + dev, 'bursty.ios', 'an integer from 1'),
        ('bursty = { idle = 5 }\n' + dev, 'bursty.idle', 'idle_us, ios'),
        ('[[sweep]]\nfoo = 1\n' + dev, 'sweep[0].foo', 'bs, device'),
        ('[[sweep]]\nrw = "write"\n[[sweep]]\nrw = "read"\nregion = 5\n' + dev,
         'sweep[1].region', 'region 100'),
    ]
    for text, field, allowed in cases_:
        try:
            spec.loads(text)
            check(False, f'no error for {text!r}')
        except spec.SpecError as e:
            check(e.field == field and str(e).startswith(field + ':') and allowed in str(e),
                  f'{text!r}: {e} (wanted {field}, allowed ... {allowed} ...)')
    path = os.path.join(WORK, 'bad.toml')
    with open(path, 'w') as fh:
        fh.write(dev + 'rw = "randx"')
    res = subprocess.run([os.path.join(TOP, 'tools', 'pcm-bench'), 'characterize', path],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    check(res.returncode == 2 and f'{path}: axes.rw: \'randx\' (allowed: read,' in res.stderr,
          f'pcm-bench: {res.returncode} {res.stderr[-300:]!r}')
    check(not os.path.exists(os.path.join(TOP, 'build', 'bench', 'char', 'bad-6.12')),
          'a bad spec makes no run directory')


# --- fio job files ---------------------------------------------------------------

def job_lines(text, point=0):
    s = spec.loads(text)
    return s, fiojob.job_text(s, s.points[point]).splitlines()


def test_job_files():
    s, lines = job_lines(TINY)
    check('filename=/dev/mapper/char-dut' in lines and 'rw=randread' in lines and
          'iodepth=1' in lines and 'direct=1' in lines and 'bs=4k' in lines and
          'size=64m' in lines, f'raw randread {lines}')
    check(lines.count('stonewall') == 2 and '[rep1]' in lines and '[rep2]' in lines and
          '[warmup]' in lines and 'runtime=500ms' in lines and
          lines.count('runtime=1000ms') == 2, 'warm-up and 2 repetitions')
    check(not any(l.startswith(('rwmixread', 'thinktime', 'random_distribution',
                                'offset_increment')) for l in lines), 'nothing else')
    _, lines = job_lines('warmup = 0\nrepetitions = 3\nbursty = { ios = 8, idle_us = 500 }\n'
                         '[axes]\ndevice = "preset:none"\nrw = "randrw"\nrwmixread = 30\n'
                         'threads = 2\npattern = "bursty"\nregion = 25\n')
    check('[warmup]' not in lines and lines.count('new_group') == 3, 'no warm-up, 3 reps')
    for want in ('rwmixread=30', 'numjobs=2', 'offset_increment=64m', 'thinktime=500',
                 'thinktime_blocks=8', 'random_distribution=zoned:100/25'):
        check(want in lines, f'{want} in {lines}')
    _, lines = job_lines('[axes]\ndevice = "preset:none"\ntarget = "ext4"\ndirect = false\n'
                         'threads = 2\nrw = "write"\nbs = "1m"\n')
    check('directory=/tmp/pcm-char' in lines and 'filename_format=char.$jobnum' in lines and
          'direct=0' in lines and not any(l.startswith('filename=') for l in lines) and
          not any(l.startswith('offset_increment') for l in lines), f'ext4 {lines}')
    # fio itself reads every kind of job file written
    s = spec.loads('[axes]\ndevice = "preset:none"\nrw = ["randrw", "write"]\n'
                   'target = ["raw", "ext3"]\npattern = ["sustained", "bursty"]\nthreads = [1, 3]\n'
                   'size = "16m"\n')
    paths = fiojob.write_jobs(s, os.path.join(WORK, 'jobs'))
    check(len(paths) == len(s.points) == 16, f'{len(paths)} job files')
    for pid, path in paths.items():
        res = subprocess.run(['fio', '--parse-only', path], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        check(res.returncode == 0, f'fio --parse-only {pid}: {res.stdout.strip()}')


# --- fio's JSON and the statistics -----------------------------------------------

def test_fio_parse():
    data = fixture('randread-qd1.json')
    reps = results.repetitions(data)
    jobs = [j for j in data['jobs'] if j['jobname'].startswith('rep')]
    check(len(reps) == 3 and len(data['jobs']) == 4, f'{len(reps)} repetitions of 4 jobs')
    for rep, job in zip(reps, jobs):
        r = job['read']
        check(rep['write'] is None, 'no writes')
        got = rep['read']
        check(got['iops'] == r['iops'] and got['mbps'] == r['bw_bytes'] / 1e6 and
              got['clat_mean_us'] == r['clat_ns']['mean'] / 1000 and
              got['clat_p99_us'] == r['clat_ns']['percentile']['99.000000'] / 1000 and
              got['clat_p999_us'] == r['clat_ns']['percentile']['99.900000'] / 1000 and
              got['clat_max_us'] == r['clat_ns']['max'] / 1000, f'figures {got}')
        check(sum(rep['bins']['read'].values()) == r['clat_ns']['N'] > 0,
              'the histogram holds every I/O')
    mix = results.repetitions(fixture('randrw-qd4.json'))
    check(len(mix) == 2 and all(r['read'] and r['write'] for r in mix), 'both sides of a mix')
    share = sum(r['read']['ios'] for r in mix) / sum(r['read']['ios'] + r['write']['ios']
                                                     for r in mix)
    check(0.6 < share < 0.8, f'70 % reads: {share:.2f}')
    text = 'fio: warning: something\n' + json.dumps(data)
    check(len(results.repetitions(results.loads(text))) == 3, 'JSON after a warning')
    for bad, why in (('no json here', 'no JSON'), ('{"jobs": [', 'not JSON'),
                     (json.dumps({'jobs': [data['jobs'][0]]}), 'no repetition')):
        try:
            results.repetitions(results.loads(bad))
            check(False, f'no error for {bad[:30]!r}')
        except results.FioError as e:
            check(why in str(e), f'{e}')
    broken = json.loads(json.dumps(data))
    broken['jobs'][2]['error'] = 5
    try:
        results.repetitions(broken)
        check(False, 'a failed job was taken')
    except results.FioError as e:
        check('rep2' in str(e) and 'error 5' in str(e), str(e))


def fake_rep(read=None, write=None, cpu=10.0):
    """A repetition as results.repetitions() returns it: figures per side
    (every metric, unset ones derived), bins from 'bins'."""
    rep = {'cpu_pct': cpu, 'bins': {}}
    for side, v in (('read', read), ('write', write)):
        if v is None:
            rep[side] = None
            continue
        v = dict(v)
        bins = v.pop('bins', {int(v.get('clat_mean_us', 1) * 1000): 10})
        fig = {m: v.get(m, 1.0) for m in results.METRICS}
        fig['ios'] = sum(bins.values())
        rep[side], rep['bins'][side] = fig, bins
    return rep


def test_statistics():
    reps = [fake_rep(read={'iops': x, 'clat_mean_us': 2 * x}) for x in (1.0, 2.0, 3.0, 6.0)]
    st = results.summarize(reps)
    sp = st['read']['iops']
    check(sp['mean'] == 3.0 and abs(sp['stdev'] - statistics.stdev([1, 2, 3, 6])) < 1e-12 and
          sp['min'] == 1.0 and sp['max'] == 6.0 and sp['n'] == 4, f'spread {sp}')
    check(st['write'] is None and st['reps'] == 4, 'no writes')
    check(results.spread([5.0]) == {'mean': 5.0, 'stdev': 0.0, 'min': 5.0, 'max': 5.0, 'n': 1},
          'one repetition: no spread')
    check(results.spread([None, None]) is None, 'no values')
    check(results.value(st, 'read', 'clat_mean_us') == 6.0, 'value')
    mix = results.summarize([fake_rep(read={'iops': 10.0}, write={'iops': 5.0})])
    check(results.total(mix, 'iops') == 15.0, 'total of a mix')
    merged = results.summarize([fake_rep(read={'bins': {1000: 2, 3000: 1}}),
                                fake_rep(read={'bins': {1000: 1, 9000: 1}})])['read']['bins']
    check(merged == {1000: 3, 3000: 1, 9000: 1}, f'merged bins {merged}')
    check(results.cdf(merged) == [(1.0, 0.6), (3.0, 0.8), (9.0, 1.0)],
          f'cdf {results.cdf(merged)}')
    check(results.percentile_us(merged, 50) == 1.0 and results.percentile_us(merged, 80) == 3.0
          and results.percentile_us(merged, 99.9) == 9.0, 'percentiles from the histogram')
    real = results.summarize(results.repetitions(fixture('randread-qd1.json')))
    iops = [r['read']['iops'] for r in results.repetitions(fixture('randread-qd1.json'))]
    check(abs(real['read']['iops']['mean'] - statistics.fmean(iops)) < 1e-9 and
          abs(real['read']['iops']['stdev'] - statistics.stdev(iops)) < 1e-9, 'fixture spread')
    bins = real['read']['bins']
    p50 = results.percentile_us(bins, 50)
    fio_p50 = statistics.fmean(r['read']['clat_p50_us'] for r in
                               results.repetitions(fixture('randread-qd1.json')))
    check(abs(p50 - fio_p50) / fio_p50 < 0.1, f'median from bins {p50} vs fio {fio_p50}')


def test_points_csv():
    s = spec.loads(TINY.replace('iodepth = [1, 4]', 'iodepth = 1\nrwmixread = 70').replace(
        'rw = ["randread", "randwrite"]', 'rw = ["randread", "randrw"]'))
    rd = results.summarize(results.repetitions(fixture('randread-qd1.json')))
    mx = results.summarize(results.repetitions(fixture('randrw-qd4.json')))
    res = [(s.points[0], 'preset:pss', rd), (s.points[1], 'preset:pss', mx),
           (s.points[0], 'dm-linear', rd)]
    path = os.path.join(WORK, 'points.csv')
    results.write_points_csv(path, res)
    with open(path, newline='') as fh:
        rows = list(csv.DictReader(fh))
    check(len(rows) == 4, f'{len(rows)} rows: read, read+write, read')
    check([(r['point'], r['on'], r['side']) for r in rows] ==
          [('p001', 'preset:pss', 'read'), ('p002', 'preset:pss', 'read'),
           ('p002', 'preset:pss', 'write'), ('p001', 'dm-linear', 'read')], 'rows')
    r = rows[0]
    check(r['rw'] == 'randread' and r['bs'] == '4k' and r['size'] == '64m' and r['reps'] == '3'
          and r['iodepth'] == '1' and r['target'] == 'raw', f'axes {r}')
    check(abs(float(r['iops']) - rd['read']['iops']['mean']) / rd['read']['iops']['mean'] < 1e-5
          and abs(float(r['iops_stdev']) - rd['read']['iops']['stdev']) <=
          1e-5 * rd['read']['iops']['stdev'], 'iops and spread')
    check(rows[1]['rwmixread'] == '70', 'mix')


# --- figures and report -----------------------------------------------------------

def synthetic(text, figures_of):
    """Results for every point of spec text on each device: figures_of(point,
    device) -> (read figures, write figures)."""
    s = spec.loads(text)
    res = []
    for dev in s.devices():
        dev = 'dm-linear' if dev == 'linear' else dev
        for p in s.points:
            if p.device == dev or dev == 'dm-linear':
                rd, wr = figures_of(p, dev)
                res.append((p, dev, results.summarize([fake_rep(rd, wr), fake_rep(rd, wr)])))
    return s, res


def lat(p, dev):
    """Latencies: writes 19x reads on pss, random 1.5x sequential, 10 us
    more per queued request."""
    base = (40.0 if dev == 'preset:pss' else 10.0) + 10 * (p.iodepth - 1)
    base *= 1.5 if p.rw.startswith('rand') else 1
    if p.rw.endswith('write'):
        return None, {'clat_mean_us': base * (19 if dev == 'preset:pss' else 2)}
    return {'clat_mean_us': base}, None


def legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_figure_ratios():
    _, res = synthetic('[axes]\ndevice = "preset:pss"\nrw = ["read", "randread", "write", '
                       '"randwrite"]\niodepth = [1, 4, 16, 64]\n', lat)
    fig, head, rows = figures.psd_fig1(res)
    ax = fig.axes[0]
    lines = {l.get_label(): l for l in ax.get_lines()}
    check(set(legend(ax)) >= {'preset:pss: read', 'preset:pss: write', 'dm-linear: read',
                              'dm-linear: write'}, f'legend {legend(ax)}')
    l = lines['preset:pss: read']
    check(list(l.get_xdata()) == [1, 4, 16, 64] and
          all(abs(y - 1.5) < 1e-9 for y in l.get_ydata()), 'random / sequential 1.5x')
    paper = [l for l in ax.get_lines() if 'PSD' in l.get_label()]
    check(len(paper) == 1 and list(paper[0].get_ydata()) == [1, 1] and
          'random ~ sequential' in paper[0].get_label(), 'the paper: ~1x')
    check('I/O depth' in ax.get_xlabel() and '(x)' in ax.get_ylabel() and
          'Fig. 1' in ax.get_title(), f'labels {ax.get_xlabel()} / {ax.get_ylabel()}')
    check(len(rows) == 16 and head[-1] == 'ratio' and rows[0][-1] == rows[0][-3] / rows[0][-2],
          f'csv {len(rows)} rows')
    figures.plt.close(fig)
    fig, _, rows = figures.psd_fig2(res)
    ax = fig.axes[0]
    y = {l.get_label(): list(l.get_ydata()) for l in ax.get_lines()}
    check(all(abs(v - 19) < 1e-9 for v in y['preset:pss: random']) and
          all(abs(v - 2) < 1e-9 for v in y['dm-linear: sequential']), f'write/read {y}')
    check(any('19x' in k and v == [19, 19] for k, v in y.items()), 'the paper: 19x')
    figures.plt.close(fig)
    check(figures.psd_fig3(res) is None and figures.onyx_fig4(res) is None and
          figures.onyx_fig6(res) is None, 'no points, no figure')


def test_figure_onyx_and_cdf():
    def bw(p, dev):
        mbps = p.bs / 4096 * (100.0 if 'early' in dev else 50.0)
        v = {'mbps': mbps, 'clat_mean_us': 1e6 * p.bs / (mbps * 1e6),
             'bins': {20000: 998, 200000: 1, 900000: 1}}
        if p.rw == 'randread':
            return v, None
        if p.rw == 'randwrite':
            return None, v
        return v, dict(v, mbps=mbps / 2)
    _, res = synthetic('baseline = false\n[axes]\ndevice = ["preset:onyx completion:early", '
                       '"preset:onyx"]\nrw = ["randread", "randwrite", "randrw"]\n'
                       'bs = ["512", "4k", "1m"]\niodepth = 16\nsize = "16m"\n', bw)
    fig, _, rows = figures.onyx_fig4(res)
    ax = fig.axes[0]
    labels = legend(ax)
    check('preset:onyx completion:early: read' in labels and 'preset:onyx: 50/50' in labels,
          f'legend {labels}')
    paper = {l.get_label(): (l.get_xdata()[0], l.get_ydata()[0]) for l in ax.get_lines()
             if l.get_label().startswith('Onyx paper')}
    check(len(paper) == 4 and any(v == (1 << 20, 1100) for v in paper.values()) and
          any(v == (1 << 20, 470) for v in paper.values()) and
          any(v == (512, 478000 * 512 / 1e6) for v in paper.values()), f'paper {paper}')
    mix = [l for l in ax.get_lines() if l.get_label() == 'preset:onyx: 50/50'][0]
    check(list(mix.get_ydata()) == [6.25 * 1.5, 50 * 1.5, 12800 * 1.5], 'read + write of a mix')
    check(ax.get_xlabel() == 'access size (bytes)' and ax.get_ylabel() == 'bandwidth (MB/s)',
          'labels')
    figures.plt.close(fig)
    check(figures.onyx_fig6(res) is None, 'no gap intervals, no Fig. 6')
    check(figures.pss_cdf(res) is None, 'no QD1 writes, no CDF')
    _, res = synthetic('[axes]\ndevice = ["preset:pss"]\nrw = "randwrite"\n', bw)
    fig, _, rows = figures.pss_cdf(res)
    ax = fig.axes[0]
    labels = legend(ax)
    check('preset:pss: 99.9 % within 200 us' in labels and
          'PSS paper: 99.9 % within 240 us' in labels and 'PSS paper: highest 2000 us' in labels,
          f'legend {labels}')
    curve = [l for l in ax.get_lines() if l.get_label() == 'preset:pss'][0]
    check(list(curve.get_xdata()) == [20, 200, 900] and
          list(curve.get_ydata()) == [0.998, 0.999, 1.0], 'the CDF')
    check(ax.get_xscale() == 'log' and 'us' in ax.get_xlabel(), 'log latency axis')
    figures.plt.close(fig)


def test_figure_gap():
    def gw(p, dev):
        g = figures.gap_of(dev) or 1024
        return None, {'mbps': 100.0 * g / (g + 1), 'clat_mean_us': 40.0 + 40.0 / g}
    _, res = synthetic('[axes]\ndevice = ["preset:onyx gap_interval:1", '
                       '"preset:onyx gap_interval:16", "preset:onyx gap_interval:128", '
                       '"preset:onyx gap_interval:0"]\nrw = "randwrite"\n', gw)
    fig, _, rows = figures.onyx_fig6(res)
    ax, ax2 = fig.axes
    bw = [l for l in ax.get_lines() if l.get_label().endswith('bandwidth')][0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    check(ticks == ['1', '16', '128', 'off'], f'ticks {ticks}')
    check(list(bw.get_xdata()) == [1, 16, 128, 512] and bw.get_label() ==
          'preset:onyx: bandwidth', f'{bw.get_label()} {list(bw.get_xdata())}')
    check('MB/s' in ax.get_ylabel() and 'us' in ax2.get_ylabel() and
          'gap write interval' in ax.get_xlabel(), 'two labelled axes')
    check([r[2] for r in rows] == [1, 16, 128, 0], f'CSV keeps 0 for off: {rows}')
    figures.plt.close(fig)
    made = figures.draw_all(res, os.path.join(WORK, 'figs'))
    check(set(made) == {'onyx-fig6', 'pss-cdf'}, f'drawn {sorted(made)}')
    for png, csvp in made.values():
        with open(png, 'rb') as fh:
            check(fh.read(8) == b'\x89PNG\r\n\x1a\n', f'{png} is a PNG')
        with open(csvp) as fh:
            check(len(fh.read().splitlines()) > 1, f'{csvp} has rows')


def test_report():
    def perf(p, dev):
        if p.rw == 'randwrite':
            return None, {'clat_mean_us': 66.0, 'iops': 14000.0, 'clat_p999_us': 300.0,
                          'clat_max_us': 900.0}
        return {'clat_mean_us': 35.0, 'iops': 28000.0}, None
    text = TINY.replace('"preset:pss", "preset:none"', '"preset:pss"')
    s, res = synthetic(text, perf)
    rows = report.headline(res)
    got = {r[0].key: r for r in rows}
    check(set(got) == {'pss.read4k.lat', 'pss.write4k.iops', 'pss.write4k.lat',
                       'pss.write4k.p999', 'pss.write4k.max'}, f'headline {sorted(got)}')
    check(report.error_text(got['pss.write4k.lat'][0], got['pss.write4k.lat'][3]) == '+8.2 %',
          'error against the paper')
    check(report.error_text(got['pss.write4k.p999'][0], 300.0) == 'over by 25 %' and
          report.error_text(got['pss.write4k.max'][0], 900.0) == 'within', 'bounds')
    check(got['pss.read4k.lat'][2].iodepth == 1 and got['pss.read4k.lat'][5] == 35.0,
          'point QD1, dm-linear beside')
    txt = report.headline_text(rows)
    check('pss: 4 KB random write, QD1, write cache full, latency' in txt and '+8.2 %' in txt,
          txt)
    run = {'date': 'D', 'kernel': '6.12.0', 'fio': 'fio-3.33', 'cpus': 1, 'icount': True,
           'wall_s': 12.0, 'fio_s': 10.0, 'host_wall_s': 30.0, 'commands': ['modprobe brd rd_nr=1'],
           'runs': [{} for _ in res],
           'devices': {'preset:pss': {'table': '0 8 pcm /dev/ram0 0 1 preset:pss',
                                      'config': 'row_size:4096 preset:pss'},
                       'dm-linear': {'table': '0 8 linear /dev/ram0 0'}}}
    d = os.path.join(WORK, 'run')
    figs = figures.draw_all(res, os.path.join(d, 'figures'))
    path = os.path.join(d, 'report.md')
    report.write(path, s, text, run, res, figs, rows)
    with open(path) as fh:
        md = fh.read()
    for section in ('# dm-pcm characterization: tiny', '## Paper vs dm-pcm', '## Figures',
                    '## Points', '## blktrace', '## Devices', '## Commands', '## Spec'):
        check(f'\n{section}\n' in '\n' + md, f'section {section}')
    check('![pss-cdf](figures/pss-cdf.png)' in md and 'kernel 6.12.0; fio-3.33' in md and
          'config: row_size:4096 preset:pss' in md and
          'fio --output-format=json+ jobs/p004.fio' in md and '| 61 us | 66 ' in md and
          'modprobe brd rd_nr=1' in md, 'contents')
    check('(not traced: pcm-bench characterize --trace' in md, 'no trace')
    run['runs'][1]['trace'] = {'dropped': 0, 'devices': {
        'top': {'btt': trace.parse_btt(BTT), 'remaps': trace.parse_remaps('')},
        'below': {'btt': {'Q2C': (1.0, 2.5, 9.0, 100)}, 'remaps': trace.parse_remaps(REMAPS)}}}
    report.write(path, s, text, run, res, figs, rows)
    with open(path) as fh:
        md = fh.read()
    check(f'| {res[1][0].id} | `preset:pss` | 38.2 (21434) | 2.5 (100) | - | 2 | 1 | 0 |' in md,
          'the traced run: Q2C above and below, remaps')
    points = md[md.index('## Points'):md.index('## blktrace')]
    check(points.count('| p00') == 8, 'every point (4) on both devices, one side each')


BTT = '''==================== All Devices ====================

            ALL           MIN           AVG           MAX           N
--------------- ------------- ------------- ------------- -----------

Q2Q               0.000004136   0.000046612   0.002013227       21433
Q2C               0.000002511   0.000038212   0.000152138       21434
D2C               0.000001000   0.000002000   0.000003000       21434

==================== Device Overhead ====================

       DEV |       Q2G       G2I       Q2M       I2D       D2C
---------- | --------- --------- --------- --------- ---------
Q2C               0.000009999   0.000099999   0.000199999       1
'''
REMAPS = '''  1,0    0       11     0.000123456  1234  A   W 4104 + 8 <- (253,0) 8
  1,0    0       12     0.000123999  1234  A   R 16 + 8 <- (253,0) 16
  1,0    0       13     0.000124000  1234  Q   R 16 + 8 [fio]
'''


def test_trace_parsing():
    # btt's real output on brd (6.12 VM, 100 4 KiB direct writes of dd): no D2C,
    # a bio-based device
    with open(os.path.join(os.path.dirname(FIXTURES), 'btt-ram0.txt')) as fh:
        real = trace.parse_btt(fh.read())
    check(set(real) == {'Q2C'} and abs(real['Q2C'][1] - 23.701) < 1e-6 and
          real['Q2C'][3] == 100, f'real btt: {real}')
    # and on dm-pcm (preset:pss, QD1 random writes, icount): btt's dm rows
    with open(os.path.join(os.path.dirname(FIXTURES), 'btt-dm.txt')) as fh:
        real = trace.parse_btt(fh.read())
    check(set(real) == {'Q2C'} and abs(real['Q2C'][1] - 48.907) < 1e-6 and
          real['Q2C'][3] == 7875, f'real btt of dm-0: {real}')
    got = trace.parse_btt(BTT)
    check(set(got) == {'Q2C', 'D2C'} and abs(got['Q2C'][1] - 38.212) < 1e-6 and
          got['Q2C'][3] == 21434 and abs(got['D2C'][0] - 1.0) < 1e-9,
          f'the All Devices table, in us: {got}')
    rm = trace.parse_remaps(REMAPS)
    check(rm == {'remaps': 2, 'moved': 1, 'sample': [(8, 4104, 8), (16, 16, 8)]}, f'{rm}')
    check(trace.parse_remaps(REMAPS, start_sector=4096)['moved'] == 1 and
          trace.parse_btt('') == {} and trace.parse_remaps('')['remaps'] == 0, 'offsets, empty')


FX_SPEC = ('repetitions = 3\n[axes]\ndevice = "preset:pss"\nsize = "16m"\n'
           '[[sweep]]\nrw = "randread"\n[[sweep]]\nrw = "randrw"\nrwmixread = 70\n'
           'iodepth = 4\n')


def fixture_run(d):
    """A run directory as the guest leaves it (run.json, raw/, spec.toml),
    from fio's real output (the fixtures); FX_SPEC's run."""
    os.makedirs(os.path.join(d, 'raw'))
    with open(os.path.join(d, 'spec.toml'), 'w') as fh:
        fh.write(FX_SPEC)
    runs = []
    for i, (pid, dev, fx) in enumerate((('p001', 'preset:pss', 'randread-qd1'),
                                        ('p002', 'preset:pss', 'randrw-qd4'),
                                        ('p001', 'dm-linear', 'randread-qd1'))):
        shutil.copyfile(os.path.join(FIXTURES, fx + '.json'), os.path.join(d, 'raw', f'{i}.json'))
        runs.append({'point': pid, 'device': dev, 'file': f'{i}.json', 's': 1.0})
    run = {'date': 'D', 'kernel': 'K', 'fio': 'fio-3.33', 'cpus': 1, 'wall_s': 5.0,
           'fio_s': 4.0, 'commands': [], 'runs': runs,
           'devices': {'preset:pss': {'table': 'T', 'config': 'C'}, 'dm-linear': {'table': 'L'}}}
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)


def test_finish_from_fixtures():
    """report.finish on a run directory as the guest leaves it: run.json
    and fio's real output under raw/ (the fixtures)."""
    d = os.path.join(WORK, 'run-fx')
    os.makedirs(os.path.join(d, 'raw'))
    text = FX_SPEC
    with open(os.path.join(d, 'spec.toml'), 'w') as fh:
        fh.write(text)
    s = spec.loads(text)
    runs = []
    for i, (pid, dev, fx) in enumerate((('p001', 'preset:pss', 'randread-qd1'),
                                        ('p002', 'preset:pss', 'randrw-qd4'),
                                        ('p001', 'dm-linear', 'randread-qd1'))):
        shutil.copyfile(os.path.join(FIXTURES, fx + '.json'), os.path.join(d, 'raw', f'{i}.json'))
        runs.append({'point': pid, 'device': dev, 'file': f'{i}.json', 's': 1.0})
    run = {'date': 'D', 'kernel': 'K', 'fio': 'fio-3.33', 'cpus': 1, 'wall_s': 5.0,
           'fio_s': 4.0, 'commands': [], 'runs': runs,
           'devices': {'preset:pss': {'table': 'T', 'config': 'C'}, 'dm-linear': {'table': 'L'}}}
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)
    path, figs, rows, got = report.finish(s, d, host_wall_s=42.0, icount=True)
    with open(os.path.join(d, 'run.json')) as fh:
        check(json.load(fh)['host_wall_s'] == 42.0 and got['icount'] is True, 'extras kept')
    with open(path) as fh:
        md = fh.read()
    check('42 s on the host' in md and 'icount (guest time' in md, 'wall time, icount')
    with open(os.path.join(d, 'points.csv')) as fh:
        pts = list(csv.DictReader(fh))
    check([(r['point'], r['on'], r['side']) for r in pts] ==
          [('p001', 'preset:pss', 'read'), ('p002', 'preset:pss', 'read'),
           ('p002', 'preset:pss', 'write'), ('p001', 'dm-linear', 'read')], 'points.csv')
    check([r[0].key for r in rows] == ['pss.read4k.lat'] and rows[0][5] is not None,
          f'headline {[r[0].key for r in rows]}: pss QD1 read beside dm-linear')
    check(set(figs) == set(), f'no figure from these points: {sorted(figs)}')
    # the paper table beside the report, as CSV and JSON, the same rows
    with open(os.path.join(d, 'paper-table.csv'), newline='') as fh:
        tab = list(csv.DictReader(fh))
    with open(os.path.join(d, 'paper-table.json')) as fh:
        js = json.load(fh)
    check(len(tab) == len(rows) == len(js['rows']) == 1 and
          js['fields'] == list(report.PAPER_FIELDS) and list(tab[0]) == js['fields'],
          f'paper-table: {tab} {js}')
    r, j = tab[0] if tab else {}, js['rows'][0] if js['rows'] else {}
    got = rows[0][3] if rows else None
    check(r.get('figure') == j.get('figure') == 'pss.read4k.lat' and r.get('point') == 'p001'
          and float(r.get('paper', 0)) == j.get('paper') == 35 and
          abs(float(r.get('measured', 0)) - got) < 1e-9 and j.get('measured') == got and
          abs(j.get('error_pct') - (got - 35) / 35 * 100) < 1e-9 and
          j.get('clock') == r.get('clock') == 'icount' and j.get('kernel') == 'K' and
          j.get('dm_linear') == rows[0][5] and r.get('unit') == 'us',
          f'paper-table row: {r} {j}')
    check('paper-table.csv' in md and 'paper-table.json' in md, 'the report links them')


def test_spec_tables_libpcm():
    """The devices' words through the module's own parser (libpcm) on the
    host: refused with the parser's message, naming the field."""
    bad = {'"preset:psss"': ('axes.device', 'unknown preset'),
           '"bogus_key:1"': ('axes.device', 'bogus_key:1: unknown parameter'),
           '"read_ns:-5"': ('axes.device', 'read_ns:-5: not a decimal number'),
           '["preset:pss", "preset:onyx domains:0"]': ('axes.device[1]', 'domains:0'),
           }
    for dev, (field, reason) in bad.items():
        text = f'[axes]\ndevice = {dev}\n'
        try:
            spec.loads(text, tables=True)
            check(False, f'{dev}: accepted')
        except spec.SpecError as e:
            check(e.field == field and reason in str(e) and 'the module refuses it' in str(e),
                  f'{dev}: {e}')
        # without tables (the guest's load), the words' form alone
        check(len(spec.loads(text).points) >= 1, f'{dev}: tables=False')
    try:
        spec.loads('[axes]\ndevice = "preset:pss"\n[[sweep]]\ndevice = "preset:psss"\n',
                   tables=True)
        check(False, 'a sweep\'s device: accepted')
    except spec.SpecError as e:
        check(e.field == 'sweep[0].device' and 'unknown preset' in str(e), f'sweep: {e}')
    for name in sorted(os.listdir(os.path.join(TOP, 'tools', 'char'))):
        s = spec.load(os.path.join(TOP, 'tools', 'char', name), tables=True)
        check(s.points, f'tools/char/{name} passes libpcm')
    # pcm-bench characterize refuses it before any VM, and makes no run directory
    out = os.path.join(WORK, 'out-bad')
    for word in ('preset:psss', 'bogus_key:1', 'read_ns:-5'):
        path = os.path.join(WORK, 'badword.toml')
        with open(path, 'w') as fh:
            fh.write(f'[axes]\ndevice = "gap_interval:64 {word}"\n')
        res = subprocess.run([os.path.join(TOP, 'tools', 'pcm-bench'), '--outdir', out,
                              '--kernel', '6.12', 'characterize', path],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             stdin=subprocess.DEVNULL, timeout=120)
        check(res.returncode == 2 and f"{path}: axes.device: 'gap_interval:64 {word}': the module "
              f"refuses it: " in res.stderr and word in res.stderr.split('refuses it:')[-1],
              f'pcm-bench {word}: {res.returncode} {res.stderr[-400:]!r}')
    check(not os.path.exists(out), f'no run directory: {os.listdir(out) if os.path.exists(out) else ""}')


def bench(*argv):
    """pcm-bench with @argv, each call one that must end before any VM
    boots: in a session of its own, killed whole if it runs 60 s."""
    p = subprocess.Popen([os.path.join(TOP, 'tools', 'pcm-bench')] + list(argv), text=True,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        err += '\n(killed after 60 s: it went on to boot a VM?)'
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def test_bench_cli():
    """pcm-bench: a subcommand per mode, each with its own --help (what it
    measures, the options it uses), and every command line that worked
    before still parses the same (options before or after MODE)."""
    sys.path.insert(0, os.path.join(TOP, 'tools'))
    from pcmbench import main as bmain
    modes = ('passthrough', 'scaling', 'ecc', 'startgap', 'barriers', 'timing', 'bigdev',
             'characterize')
    res = bench('--help')
    check(res.returncode == 0 and all(f'\n    {m} ' in res.stdout for m in modes),
          f'--help lists the modes: {res.stdout[-800:]!r}')
    for mode in modes:
        res = bench(mode, '--help')
        out = ' '.join(res.stdout.split())
        uses = bmain.USES[mode]
        check(res.returncode == 0 and res.stdout.startswith(f'usage: pcm-bench {mode} ') and
              f'pcm-bench {mode}: ' in out, f'{mode} --help: {res.stdout[:300]!r}')
        for opt in ('runtime', 'rounds', 'bs', 'pcm_words', 'trace', 'redraw'):
            flag = '--' + opt.replace('_', '-')
            check((f'{flag} ' in res.stdout) == (opt in uses),
                  f'{mode} --help shows {flag} if and only if it uses it')
    check('read_ns = write_ns = X' in ' '.join(bench('timing', '--help').stdout.split()),
          'timing --help says what it measures')
    ap, _ = bmain.build_parser()
    same = [(['--rounds', '2', 'timing'], ['timing', '--rounds', '2']),
            (['--native', '--bs', '4k,1m', 'passthrough'], ['passthrough', '--native', '--bs',
                                                            '4k,1m']),
            (['--trace', 'characterize', 'x.toml'], ['characterize', 'x.toml', '--trace']),
            (['--kernel', '6.1', 'ecc', '--pcm-words', '+ecc_fast:1'],
             ['ecc', '--pcm-words', '+ecc_fast:1', '--kernel', '6.1'])]
    for a, b in same:
        va, vb = vars(ap.parse_args(a)), vars(ap.parse_args(b))
        check(va == vb, f'{a} and {b}: {va} {vb}')
    a = ap.parse_args(['--guest', '--out', '/tmp/x', '--icount', '--runtime', '0.5', '--rounds',
                       '1', '--cpus', '1', '--bs', '4k', '--pcm-words', '', 'timing'])
    check((a.mode, a.guest, a.icount, a.out, a.runtime, a.rounds, a.cpus, a.bs) ==
          ('timing', True, True, '/tmp/x', 0.5, 1, 1, '4k'), f'the guest\'s line: {a}')
    a = ap.parse_args(['timing'])
    check((a.runtime, a.rounds, a.bs, a.pcm_words, a.outdir.endswith('build/bench')) ==
          (2, 3, '4k', '', True), f'defaults: {a}')
    for bs in ('1000', '2m', '4k,0'):    # not 512-byte multiples, or not dividing 255 MiB
        res = bench('passthrough', '--bs', bs)
        check(res.returncode == 2 and f'--bs {bs.split(",")[-1]}: want sizes like 4k' in res.stderr,
              f'bad --bs {bs}: {res}')
    res = bench('scaling', '--cpus', '1')
    check(res.returncode == 2 and 'scaling needs --cpus 2' in res.stderr, f'scaling {res}')
    res = bench('timing', '--trace')
    check(res.returncode == 2 and 'characterize does' in res.stderr, f'--trace {res}')
    res = bench('nomode')
    check(res.returncode == 2 and 'invalid choice' in res.stderr, f'bad mode {res}')
    res = bench('characterize')
    check(res.returncode == 2 and 'characterize needs a SPEC' in res.stderr, f'no spec {res}')


def test_rundir():
    """A rerun never removes an earlier run: NAME-KERNEL, then .2, .3;
    --redraw works on the newest (or --run-dir's) and leaves the others."""
    from pcmchar import rundir
    base = os.path.join(WORK, 'rd', 'char', 'x-6.12')
    check(rundir.runs(base) == [] and rundir.newest(base) is None, 'none yet')
    made = [rundir.new(base) for _ in range(3)]
    check(made == [base, base + '.2', base + '.3'], f'new: {made}')
    os.makedirs(base + '-other')
    os.makedirs(base + '.x')
    check(rundir.runs(base) == made and rundir.newest(base) == base + '.3',
          f'runs: {rundir.runs(base)}')
    os.makedirs(base + '.10')
    check(rundir.newest(base) == base + '.10' and rundir.new(base) == base + '.11',
          'numeric order, not text')
    # pcm-bench --redraw on the newest of two runs of a spec
    out = os.path.join(WORK, 'out-redraw')
    sp = os.path.join(WORK, 'fx.toml')
    with open(sp, 'w') as fh:
        fh.write(FX_SPEC)
    first = os.path.join(out, 'char', 'fx-6.12')
    fixture_run(first)
    fixture_run(first + '.2')
    before = sorted(os.listdir(first))
    cmd = [os.path.join(TOP, 'tools', 'pcm-bench'), '--outdir', out, '--kernel', '6.12',
           'characterize', sp, '--redraw']
    res = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         timeout=300)
    check(res.returncode == 0 and f'report: {first}.2/report.md' in res.stdout and
          os.path.exists(os.path.join(first + '.2', 'paper-table.json')),
          f'redraw: {res.returncode} {res.stdout[-300:]!r} {res.stderr[-300:]!r}')
    check(sorted(os.listdir(first)) == before, f'the first run untouched: {os.listdir(first)}')
    res = subprocess.run(cmd + ['--run-dir', first], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=300)
    check(res.returncode == 0 and os.path.exists(os.path.join(first, 'paper-table.csv')),
          f'--run-dir: {res.returncode} {res.stderr[-300:]!r}')
    res = subprocess.run(cmd[:2] + [os.path.join(WORK, 'none')] + cmd[3:],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    check(res.returncode == 1 and '--redraw: no run of fx' in res.stderr,
          f'redraw without a run: {res.returncode} {res.stderr[-300:]!r}')


def test_papers_table():
    keys = [f.key for f in papers.FIGURES]
    check(len(keys) == len(set(keys)), 'keys unique')
    for f in papers.FIGURES:
        check(f.preset in ('onyx', 'pss', 'psd', 'reram') and f.kind in ('near', 'at_most', 'note')
              and (f.kind == 'note' or f.metric in results.METRICS), f'{f.key}')
        spec.parse_size('bs', f.bs)
    check(papers.BY_KEY['onyx.read4k.lat'].value == 38 and
          papers.BY_KEY['pss.write4k.p999'].value == 240, 'values')


def main():
    cases = (
        test_spec_points, test_spec_sweeps, test_example_specs, test_spec_errors, test_job_files,
        test_fio_parse, test_statistics, test_points_csv, test_figure_ratios,
        test_figure_onyx_and_cdf, test_figure_gap, test_report, test_trace_parsing,
        test_finish_from_fixtures, test_spec_tables_libpcm, test_bench_cli, test_rundir,
        test_papers_table)
    return taplib.run_all(cases, cleanup=lambda: shutil.rmtree(WORK, ignore_errors=True))


if __name__ == '__main__':
    sys.exit(main())
