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
import lzma
import os
import shutil
import stat
import statistics
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'tools'))
sys.dont_write_bytecode = True
from pcmchar import figures, fiojob, papers, report, results, spec, trace  # noqa: E402 (sys.path set first)
from pcmchar import guest as cguest, verdict  # noqa: E402 (sys.path set first)
from pcmlib import fio as pfio  # noqa: E402 (sys.path set first)
from pcmlib import tap  # noqa: E402 (sys.path set first)
from pcmlib.tap import check  # noqa: E402 (sys.path set first)

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
    return pfio.load(os.path.join(FIXTURES, name))


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
              got['lat_mean_us'] == r['clat_ns']['mean'] / 1000 and
              got['lat_p99_us'] == r['clat_ns']['percentile']['99.000000'] / 1000 and
              got['lat_p999_us'] == r['clat_ns']['percentile']['99.900000'] / 1000 and
              got['lat_max_us'] == r['clat_ns']['max'] / 1000, f'figures {got}')
        check(sum(rep['bins']['read'].values()) == r['clat_ns']['N'] > 0,
              'the histogram holds every I/O')
    mix = results.repetitions(fixture('randrw-qd4.json'))
    check(len(mix) == 2 and all(r['read'] and r['write'] for r in mix), 'both sides of a mix')
    share = sum(r['read']['ios'] for r in mix) / sum(r['read']['ios'] + r['write']['ios']
                                                     for r in mix)
    check(0.6 < share < 0.8, f'70 % reads: {share:.2f}')
    text = 'fio: warning: something\n' + json.dumps(data)
    check(len(results.repetitions(pfio.loads(text))) == 3, 'JSON after a warning')
    for bad, why in (('no json here', 'no JSON'), ('{"jobs": [', 'not JSON'),
                     (json.dumps({'jobs': [data['jobs'][0]]}), 'no repetition')):
        try:
            results.repetitions(pfio.loads(bad))
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
        bins = v.pop('bins', {int(v.get('lat_mean_us', 1) * 1000): 10})
        fig = {m: v.get(m, 1.0) for m in results.METRICS}
        fig['ios'] = sum(bins.values())
        rep[side], rep['bins'][side] = fig, bins
    return rep


def test_statistics():
    reps = [fake_rep(read={'iops': x, 'lat_mean_us': 2 * x}) for x in (1.0, 2.0, 3.0, 6.0)]
    st = results.summarize(reps)
    sp = st['read']['iops']
    check(sp['mean'] == 3.0 and abs(sp['stdev'] - statistics.stdev([1, 2, 3, 6])) < 1e-12 and
          sp['min'] == 1.0 and sp['max'] == 6.0 and sp['n'] == 4, f'spread {sp}')
    check(st['write'] is None and st['reps'] == 4, 'no writes')
    check(results.spread([5.0]) == {'mean': 5.0, 'stdev': 0.0, 'min': 5.0, 'max': 5.0, 'n': 1},
          'one repetition: no spread')
    check(results.spread([None, None]) is None, 'no values')
    check(results.value(st, 'read', 'lat_mean_us') == 6.0, 'value')
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
    fio_p50 = statistics.fmean(r['read']['lat_p50_us'] for r in
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
        return None, {'lat_mean_us': base * (19 if dev == 'preset:pss' else 2)}
    return {'lat_mean_us': base}, None


def legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_figure_ratios():
    _, res = synthetic('[axes]\ndevice = "preset:pss"\nrw = ["read", "randread", "write", '
                       '"randwrite"]\niodepth = [1, 4, 16, 64]\n', lat)
    fig, head, rows = figures.psd_fig1(res)
    ax = fig.axes[0]
    lines = {l.get_label(): l for l in ax.get_lines()}
    check(set(legend(ax)) >= {'PSS (dm-pcm), read', 'PSS (dm-pcm), write',
                              'dm-linear (baseline), read', 'dm-linear (baseline), write'},
          f'legend {legend(ax)}')
    l = lines['PSS (dm-pcm), read']
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
    check(all(abs(v - 19) < 1e-9 for v in y['PSS (dm-pcm), random']) and
          all(abs(v - 2) < 1e-9 for v in y['dm-linear (baseline), sequential']), f'write/read {y}')
    check(any('19x' in k and v == [19, 19] for k, v in y.items()), 'the paper: 19x')
    figures.plt.close(fig)
    check(figures.psd_fig3(res) is None and figures.onyx_fig4(res) is None and
          figures.onyx_fig6(res) is None, 'no points, no figure')


def test_figure_onyx_and_cdf():
    def bw(p, dev):
        mbps = p.bs / 4096 * (100.0 if 'early' in dev else 50.0)
        v = {'mbps': mbps, 'lat_mean_us': 1e6 * p.bs / (mbps * 1e6),
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
    check('Onyx (dm-pcm), completion:early, read' in labels and
          'Onyx (dm-pcm), 50/50 read/write' in labels, f'legend {labels}')
    paper = {l.get_label(): (l.get_xdata()[0], l.get_ydata()[0]) for l in ax.get_lines()
             if l.get_label().startswith('Onyx paper')}
    check(len(paper) == 4 and any(v == (1 << 20, 1100) for v in paper.values()) and
          any(v == (1 << 20, 470) for v in paper.values()) and
          any(v == (512, 478000 * 512 / 1e6) for v in paper.values()), f'paper {paper}')
    mix = [l for l in ax.get_lines() if l.get_label() == 'Onyx (dm-pcm), 50/50 read/write'][0]
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
    check('PSS (dm-pcm): 99.9 % within 200 µs' in labels and
          'PSS paper: 99.9 % within 240 µs' in labels and 'PSS paper: highest 2000 µs' in labels,
          f'legend {labels}')
    curve = [l for l in ax.get_lines() if l.get_label() == 'PSS (dm-pcm)'][0]
    check(list(curve.get_xdata()) == [20, 200, 900] and
          list(curve.get_ydata()) == [0.998, 0.999, 1.0], 'the CDF')
    check(ax.get_xscale() == 'log' and ax.get_xlabel() == 'completion latency (µs)',
          'log latency axis')
    figures.plt.close(fig)


def test_figure_gap():
    def gw(p, dev):
        g = figures.gap_of(dev) or 1024
        return None, {'mbps': 100.0 * g / (g + 1), 'lat_mean_us': 40.0 + 40.0 / g}
    _, res = synthetic('[axes]\ndevice = ["preset:onyx gap_interval:1", '
                       '"preset:onyx gap_interval:16", "preset:onyx gap_interval:128", '
                       '"preset:onyx gap_interval:0"]\nrw = "randwrite"\n', gw)
    fig, _, rows = figures.onyx_fig6(res)
    ax, ax2 = fig.axes
    bw = [l for l in ax.get_lines() if l.get_label().endswith('bandwidth')][0]
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    check(ticks == ['1', '16', '128', 'off'], f'ticks {ticks}')
    check(list(bw.get_xdata()) == [1, 16, 128, 512] and bw.get_label() ==
          'Onyx (dm-pcm), bandwidth', f'{bw.get_label()} {list(bw.get_xdata())}')
    check('MB/s' in ax.get_ylabel() and '(µs)' in ax2.get_ylabel() and
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


def test_figure_words():
    """The figures in the words a reader expects (issue 49, item 6): a
    legend names a device as the paper does ("Onyx (dm-pcm)", the
    baseline "dm-linear (baseline)"), its other table words as the table
    has them, and an axis as a reader says it ("64 in flight"), never as
    the spec's keys (preset:onyx iodepth=64 warmup_ios=0 ramp=0.0: read,
    Documentation/characterization/onyx-fig4's first legend); every axis
    has its unit; the rank heat map's colour bar says its values are %."""
    def bw(p, dev):
        v = {'mbps': p.bs / 4096 * 50.0, 'clat_mean_us': 100.0}
        return ((v, None) if p.rw == 'randread' else (None, v) if p.rw == 'randwrite' else
                (v, dict(v)))
    with open(os.path.join(TOP, 'Documentation', 'characterization', 'onyx-fig4',
                           'spec.toml'), encoding='utf-8') as fh:
        _, res = synthetic(fh.read(), bw)   # the committed run's devices and axes
    fig, _, rows = figures.onyx_fig4(res)
    ax = fig.axes[0]
    labels = legend(ax)
    check({'Onyx (dm-pcm), 16 in flight, read', 'Onyx (dm-pcm), 64 in flight, read',
           'Onyx (dm-pcm), completion:early, 16 in flight, write',
           'dm-linear (baseline), 16 in flight, 50/50 read/write',
           'Onyx paper: 512 B random reads, 64 in flight'} <= set(labels), f'legend {labels}')
    check(not [t for t in labels if 'preset:' in t or '=' in t or 'warmup' in t or
               'ramp' in t], f'no spec key in the legend: {labels}')
    check(any(r[2] == 'iodepth=64' for r in rows), 'the CSV keeps its keys (iodepth=64)')
    check(ax.get_xlabel() == 'access size (bytes)' and ax.get_ylabel() == 'bandwidth (MB/s)',
          'units on both axes')
    figures.plt.close(fig)
    check(figures.device_name('preset:optane ecc:bch') == 'Optane P4800X (dm-pcm), ecc:bch' and
          figures.device_name('gap_interval:16') == 'dm-pcm, gap_interval:16' and
          figures.device_name('dm-linear') == 'dm-linear (baseline)', 'device names')
    # every figure: a unit in brackets on each axis, no "preset:" in a legend
    _, res = synthetic('[axes]\ndevice = ["preset:pss"]\nrw = ["read", "randread", "write", '
                       '"randwrite", "rw", "randrw"]\niodepth = [1, 4]\nrwmixread = [30, 50]\n',
                       lambda p, dev: ({'clat_mean_us': 10.0, 'iops': 100.0},
                                       {'clat_mean_us': 20.0, 'iops': 50.0}))
    drawn = 0
    for name, build in figures.BUILDERS.items():
        out = build(res)
        if out is None:
            continue
        drawn += 1
        for a in out[0].axes:
            check('(' in a.get_xlabel() + a.get_ylabel() and
                  all(('(' in t and ')' in t) for t in (a.get_xlabel(), a.get_ylabel()) if t),
                  f'{name}: units: {a.get_xlabel()!r} / {a.get_ylabel()!r}')
            if a.get_legend():
                check(not [t for t in legend(a) if 'preset:' in t or ' us' in t],
                      f'{name}: legend {legend(a)}')
        figures.plt.close(out[0])
    check(drawn >= 4, f'{drawn} figures drawn')


def test_report():
    def perf(p, dev):
        if p.rw == 'randwrite':
            return None, {'lat_mean_us': 66.0, 'iops': 14000.0, 'lat_p999_us': 300.0,
                          'lat_max_us': 900.0}
        return {'lat_mean_us': 35.0, 'iops': 28000.0}, None
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


# TINY on Onyx (early completion) and the ioDrive, 512 B, 1 KB and 1 MB, 16 in flight
IODRIVE_SPEC = TINY.replace('["preset:pss", "preset:none"]',
                            '["preset:onyx completion:early", "preset:iodrive"]').replace(
    'iodepth = [1, 4]', 'bs = ["512", "1k", "1m"]\niodepth = 16')


def test_report_versus():
    """Figures of one device over another (Onyx over the ioDrive): the
    ratio of the two devices' points that differ only in the device, its
    model the ratio of the two predictions, a range's verdict; the
    application figures no characterization measures: listed where the
    run has their devices, not measured, with what run they wait for."""
    def perf(p, dev):
        onyx = dev.startswith('preset:onyx')
        bw = {('randread', 512): (245.0, 46.0), ('randread', 1024): (400.0, 92.0),
              ('randread', 1048576): (1136.0, 1020.0), ('randwrite', 512): (175.0, 84.0),
              ('randwrite', 1024): (310.0, 120.0),
              ('randwrite', 1048576): (467.0, 810.0)}[p.rw, p.bs][0 if onyx else 1]
        fig = {'mbps': bw, 'iops': bw * 1e6 / p.bs, 'lat_mean_us': 16 * p.bs / bw}
        return (fig, None) if p.rw == 'randread' else (None, fig)
    s, res = synthetic(IODRIVE_SPEC, perf)
    rows = report.headline(res, model=False)
    got = {r.fig.key: r for r in rows}
    want = {'iodrive.read512.iops', 'iodrive.vs.read512', 'iodrive.vs.read.least',
            'iodrive.vs.write512', 'iodrive.vs.write1k', 'iodrive.vs.write1m',
            'iodrive.write1m.mbps', 'iodrive.bdb.hash', 'iodrive.bdb.btree',
            'onyx.read1m.mbps', 'onyx.write1m.mbps'}
    check(set(got) == want, f'headline {sorted(got)}')
    v = {k: (r.got, r.verdict['verdict'], r.verdict['reason']) for k, r in got.items()}
    check(abs(v['iodrive.vs.read512'][0] - 245 / 46) < 1e-9 and
          v['iodrive.vs.read512'][1] == 'reproduced', f'512 B reads: {v["iodrive.vs.read512"]}')
    check(abs(v['iodrive.vs.write512'][0] - 175 / 84) < 1e-9 and
          v['iodrive.vs.write512'][1] == 'reproduced' and
          'within the range' in v['iodrive.vs.write512'][2], f'512 B: {v["iodrive.vs.write512"]}')
    check(v['iodrive.vs.write1k'][1] == 'not reproduced' and
          'over the bound by 17.4 %' in v['iodrive.vs.write1k'][2],
          f'1 KB writes, 2.58x: over the range: {v["iodrive.vs.write1k"]}')
    check(v['iodrive.vs.write1m'][1] == 'reproduced' and
          v['iodrive.write1m.mbps'][1] == 'reproduced', 'large writes: Onyx slower, 810 MB/s')
    r = got['iodrive.vs.read512']
    check(r.dev == 'preset:iodrive' and r.base is None and
          report.row_device(r) == 'preset:onyx completion:early / preset:iodrive',
          f'the two devices, no dm-linear: {report.row_device(r)} {r.base}')
    for key in ('iodrive.bdb.hash', 'iodrive.bdb.btree'):
        r = got[key]
        check(r.point is None and r.got is None and r.verdict['verdict'] == 'not reproduced' and
              r.verdict['reason'].startswith('not measured: dm-pcm.rst, Presets, iodrive: not '
                                             'measured by a characterization') and
              'Documentation/characterization/bdb' in r.verdict['reason'],
              f'{key}: {r.verdict}')
    lines = '\n'.join(report.headline_lines(rows))
    check('| BerkeleyDB hash table: transactional swaps' in lines and
          '| 1.72-2.2 x |' in lines and '`preset:onyx completion:early / preset:iodrive`' in lines,
          'the markdown table: the application, the range, both devices')
    recs = {x['figure']: x for x in report.headline_records(rows, {})}
    check(recs['iodrive.vs.write512']['paper'] == 1.72 and
          recs['iodrive.vs.write512']['paper_high'] == 2.2 and
          recs['iodrive.bdb.btree']['point'] is None and
          recs['iodrive.bdb.btree']['measured'] is None and
          recs['iodrive.bdb.btree']['workload'].startswith('BerkeleyDB B-tree'),
          f'records: {recs["iodrive.vs.write512"]} {recs["iodrive.bdb.btree"]}')
    # without the Onyx device: no ratio, and no application row
    alone = [(p, d, st) for p, d, st in res if d == 'preset:iodrive']
    keys = sorted(r.fig.key for r in report.headline(alone, model=False))
    check(keys == ['iodrive.read512.iops', 'iodrive.write1m.mbps'], f'alone: {keys}')
    # the model's figure: the ratio of the two devices' predictions
    p = next(q for q, d, _ in res if d == 'preset:iodrive' and q.rw == 'randread' and
             q.bs == 512)
    mod = report.model_figure('preset:iodrive', papers.BY_KEY['iodrive.vs.read512'], p)
    check(mod is not None and abs(mod - 5.31) < 0.05 * 5.31, f'model: {mod}')


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
             'counters', 'trace', 'characterize', 'app')
    # of the options below, those each mode takes (the rest it refuses)
    fio = {'runtime', 'rounds'}
    takes = {'passthrough': fio | {'bs', 'pcm_words'}, 'scaling': fio,
             'ecc': fio | {'pcm_words'}, 'startgap': fio, 'barriers': {'rounds'},
             'timing': fio, 'bigdev': {'rounds'}, 'counters': fio | {'pcm_words'},
             'trace': {'rounds'}, 'characterize': {'trace', 'redraw'}, 'app': set()}
    res = bench('--help')
    check(res.returncode == 0 and all(f'\n    {m} ' in res.stdout for m in modes),
          f'--help lists the modes: {res.stdout[-800:]!r}')
    for mode in modes:
        res = bench(mode, '--help')
        out = ' '.join(res.stdout.split())
        uses = takes[mode]
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
                       '1', '--cpus', '1', 'timing'])
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
    check(res.returncode == 2 and 'unrecognized arguments: --trace' in res.stderr, f'--trace {res}')
    res = bench('nomode')
    check(res.returncode == 2 and 'invalid choice' in res.stderr, f'bad mode {res}')
    res = bench('characterize')
    check(res.returncode == 2 and 'characterize needs a SPEC' in res.stderr, f'no spec {res}')


def test_bench_counters():
    """pcm-bench counters' table: dm-pcm against dm-pcm-bare (the same
    module without counters and tracepoints) round by round, the cost one
    less the median of the rounds' own ratios."""
    sys.path.insert(0, os.path.join(TOP, 'tools'))
    from pcmbench import counters
    runs = []
    for rnd, (lin, pcm, bare) in enumerate(((1000, 990, 1000), (1100, 1078, 1100),
                                            (900, 900, 900))):
        for rw in ('randread', 'randwrite'):
            for qd in (1, 32):
                for dev, iops in (('dm-linear', lin), ('dm-pcm', pcm), ('dm-pcm-bare', bare)):
                    runs.append({'round': rnd, 'rw': rw, 'qd': qd, 'device': dev, 'iops': iops,
                                 'clat_median_ns': 5000, 'words': 'preset:none read_ns:1'})
    table, summary = counters.summarize({'kernel': 'K', 'fio': 'fio-3.33', 'cpus': 1,
                                         'rounds': 3, 'runtime_s': 2, 'runs': runs})
    pcm = [r for r in summary if r['device'] == 'dm-pcm']
    check(len(summary) == 12 and len(pcm) == 4 and
          all(abs(r['cost_pct'] - 1.0) < 1e-9 and abs(r['paired_ratio_to_bare'] - 0.99) < 1e-9
              for r in pcm) and
          all('cost_pct' not in r for r in summary if r['device'] != 'dm-pcm'),
          f'cost: the median of 1 %, 2 %, 0 %: {pcm}')
    check('randread QD1   dm-pcm ' in table and '+1.00%' in table and
          'both dm-pcm tables: preset:none read_ns:1' in table, table)
    check(counters.bare_ko('6.12.0').endswith('build/6.12.0/dm-pcm-bare/dm-pcm-bare.ko'),
          'the bare module\'s path')


def test_ecc_profile():
    """tools/ecc-profile (guest side): --help exits 0 and names its
    modes, an unknown mode or kind is refused with status 2; its reader
    (ecc-profile.py trace) cuts a tracefs trace into reads at each .map
    and gives each step's median: two reads whose parity completes 15
    and 25 us after the data, decoded 5 us after."""
    prof = os.path.join(TOP, 'tools', 'ecc-profile')
    res = subprocess.run([prof, '--help'], capture_output=True, text=True)
    check(res.returncode == 0 and all(m in res.stdout for m in ('perf', 'fgraph', 'trace')),
          f'ecc-profile --help: {res.returncode} {res.stdout[:200]!r}')
    res = subprocess.run([prof, 'bogus'], capture_output=True, text=True)
    check(res.returncode == 2, f'ecc-profile bogus: exit {res.returncode}')
    res = subprocess.run([prof, 'trace', '--kinds', 'bogus'], capture_output=True, text=True)
    check(res.returncode == 2 and 'unknown kind' in res.stderr,
          f'ecc-profile --kinds bogus: {res.returncode} {res.stderr!r}')
    lines = []
    for i, (second, dec) in enumerate(((15, 20), (25, 30))):
        t0 = 100.0 + i
        for dt, ev in ((0, 'ep_map'), (2, 'block_rq_issue'), (3, 'block_rq_issue'),
                       (10, 'block_rq_complete'), (second, 'block_rq_complete'),
                       (dec, 'ep_dec'), (dec + 5, 'ep_decx'), (dec + 6, 'ep_done'),
                       (dec + 8, 'ep_woke')):
            lines.append(f'   fio-42   [000] d..1. {t0 + dt / 1e6:.6f}: {ev}: x\n')
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 't.txt'), 'w') as f:
            f.writelines(lines)
        res = subprocess.run([sys.executable, prof + '.py', 'trace', 'ecc',
                              os.path.join(d, 't.txt')], capture_output=True, text=True)
    out = res.stdout
    check(res.returncode == 0 and 'ecc: 2 reads' in out, f'ecc-profile.py trace: {out!r}')
    step = [ln.split() for ln in out.splitlines() if 'first to second completion' in ln]
    check(step and float(step[0][4]) == 10.0, f'first to second completion: median 10 us: {step}')
    dec = [ln.split() for ln in out.splitlines() if 'decode (ecc_pair_decode)' in ln]
    check(dec and float(dec[0][2]) == 5.0, f'decode: 5 us: {dec}')
    # its summary of a run: fio's report (a real one), IOPS and fio's clat
    rep = os.path.join(FIXTURES, 'randrw-2jobs.json')
    res = subprocess.run([sys.executable, prof + '.py', 'summary', rep], capture_output=True,
                         text=True)
    s = json.load(open(rep))['jobs'][0]['read']
    want = (f"iops {s['iops']:.0f}  ns/io {1e9 / s['iops']:.0f}  clat p50 "
            f"{s['clat_ns']['percentile']['50.000000'] / 1e3:.1f} us  mean "
            f"{s['clat_ns']['mean'] / 1e3:.1f} us")
    check(res.returncode == 0 and res.stdout.strip() == want,
          f'ecc-profile.py summary: {res.stdout!r} {res.stderr[-300:]!r}, want {want!r}')


def test_bench_trace():
    """pcm-bench trace: --dilation taken (default 8 under icount, as the
    other dilated modes), --overhead-ns refused; its table and
    verdict from tracecmp's lines: met only when every read is within
    1 % at Q, every rank's busy time is the kernel's and its utilisation
    within 2 %."""
    sys.path.insert(0, os.path.join(TOP, 'tools'))
    from pcmbench import main as bmain, trace as btrace
    ap, _ = bmain.build_parser()
    a = ap.parse_args(['trace', '--dilation', '1', '--rounds', '2'])
    check((a.mode, a.dilation, a.rounds) == ('trace', 1, 2), f'trace: {a}')
    check('trace' in bmain.DILATED, 'trace runs at a dilation')
    res = bench('trace', '--help')
    out = ' '.join(res.stdout.split())
    check(res.returncode == 0 and '--dilation K' in out and '--pcm-words' not in out and
          'pcmlib/tracecmp.py' in out, f'trace --help: {out[:300]}')
    res = bench('trace', '--overhead-ns', '5')
    check(res.returncode == 2 and 'unrecognized arguments: --overhead-ns' in res.stderr,
          res.stderr[-200:])

    def lines(q_within, worst, util, busy=7530000):
        return ['kernel_requests 1000', 'replay_requests 1000', 'matched 1',
                f'q_within_1pct {q_within:.2f}',
                f'q_worst_pct {worst:+.3f} at 2 kernel 60190 replay 60879',
                'q_mean_pct +0.0024', 'gap_spread_ns 689 host_us_min 0.0 max 5.5',
                'q_beyond_spread 0',
                'charge_after_q_ns_rel min p10 p50 p90 p99 max 0 0 0 142 142 5512',
                'charge_before_a_ns_rel min p10 p50 p90 p99 max 0 5 5 5 236 236',
                'q_to_a_max_ns 1019 median_host_us 2.6', 'q_beyond_window 0',
                'a_within_1pct 100.00', 'a_worst_pct +0.019 at 1 kernel 47711 replay 47720',
                'a_mean_pct +0.0019', 'a_beyond_window 0', 'k_within_1pct 100.00',
                'k_worst_pct +0.0008',
                'window_ns kernel 15418560 replay 15418560 util_bound_pct 0.004',
                f'rank_0.0 kernel_reqs 502 replay_reqs 502 kernel_busy_ns 7530000 '
                f'replay_busy_ns {busy} kernel_util 0.48837 replay_util 0.48837 '
                f'util_diff_pct {util:+.3f}',
                'rank_0.1 kernel_reqs 498 replay_reqs 498 kernel_busy_ns 7470000 '
                'replay_busy_ns 7470000 kernel_util 0.48448 replay_util 0.48448 '
                'util_diff_pct -0.001']
    base = {'kernel': 'K', 'fio': 'fio-3.33', 'cpus': 1, 'rounds': 1, 'runtime_s': 2}
    for (q_within, worst, util, busy), want in (
            ((100, 0.5, 0.0, 7530000), 'met'),
            ((99.9, 1.145, 0.0, 7530000), 'not met (1 of 1000 reads beyond 1 % at Q)'),
            ((100, 0.5, -2.5, 7530000), 'not met (0 of 1000 reads beyond 1 % at Q)'),
            ((100, 0.5, 0.0, 7530001), 'not met (0 of 1000 reads beyond 1 % at Q)')):
        runs = [{'round': 0, 'qd': qd, 'dilation': 8, 'reads': 1000,
                 'compare': lines(q_within if qd == 32 else 100, worst, util, busy)}
                for qd in (1, 32)]
        table, summary = btrace.summarize(dict(base, runs=runs))
        got = [r['verdict'] for r in summary['runs']]
        check(got[1] == want and summary['verdict'] == ('met' if want == 'met' else 'not met'),
              f'{q_within} {worst} {util} {busy}: {got} {summary["verdict"]}')
        check(f'verdict: {summary["verdict"]} (issue 35' in table and
              'preset:pss dilation:8' in table, table)
    r = summary['runs'][1]
    check((r['q_worst_index'], r['charge_after_q_ns'], r['rank_util_worst_pct']) ==
          (2, [0, 0, 0, 142, 142, 5512], 0.001), f'figures: {r}')


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
        check(f.preset in ('onyx', 'pss', 'psd', 'reram', 'optane', 'iodrive') and
              f.kind in ('near', 'at_most', 'at_least', 'between', 'note', 'app') and
              (f.kind in ('note', 'app') or f.metric in results.METRICS), f'{f.key}')
        check((f.kind == 'between') == (f.high is not None) and
              (f.high is None or f.value < f.high), f'{f.key}: a range has two ends')
        check((f.kind == 'app') == (f.app is not None) and
              (f.kind != 'app' or (f.differs and not f.reached)),
              f'{f.key}: an application\'s figure says what run it waits for')
        if f.kind != 'app':
            spec.parse_size('bs', f.bs)
    check(papers.BY_KEY['onyx.read4k.lat'].value == 38 and
          papers.BY_KEY['pss.write4k.p999'].value == 240, 'values')


# --- the verdict, dilation, calibration (issue 33) ---------------------------------

# judge()'s fixtures: (what, judge's keyword arguments, verdict, against,
# words its reason must hold)
JUDGE_CASES = [
    ('a latency within 2 % of the paper',
     dict(metric='lat_mean_us', paper=38, measured=38.6), 'reproduced', 'paper', 'within 2 %'),
    ('a latency 2.6 % off, nothing else known',
     dict(metric='lat_mean_us', paper=38, measured=39), 'not reproduced', None, '+2.6 %'),
    ('a rate within 5 % of the paper',
     dict(metric='iops', paper=191000, measured=182000), 'reproduced', 'paper', 'within 5 %'),
    ('a rate 5.8 % off',
     dict(metric='iops', paper=191000, measured=180000), 'not reproduced', None, '-5.8 %'),
    ('a bandwidth is a rate',
     dict(metric='mbps', paper=1100, measured=1150), 'reproduced', 'paper', 'within 5 %'),
    ('a bound met',
     dict(metric='lat_p999_us', kind='at_most', paper=240, measured=232), 'reproduced',
     'paper', 'at most the bound'),
    ('a bound over by more than 2 %',
     dict(metric='lat_p999_us', kind='at_most', paper=240, measured=250), 'not reproduced',
     None, 'over the bound by 4.2 %'),
    ('off the paper, within 2 % of a model the .rst says differs',
     dict(metric='lat_mean_us', paper=12.05, measured=12.5, model=12.42,
          differs=papers.AT_512), 'reproduced', 'model', '256 B'),
    ('within 2 % of the model, but the model does not differ: not reproduced',
     dict(metric='lat_mean_us', paper=35, measured=36.5, model=36.4), 'not reproduced', None,
     '+4.3 % from the paper'),
    ('off both paper and model where the model differs: not reproduced, against the model',
     dict(metric='lat_mean_us', paper=61, measured=70, model=62.9,
          differs=papers.BY_KEY['pss.write4k.lat'].differs), 'not reproduced', None,
     "+11.3 % from the model"),
    ('2 % of the timed completions late: host-bound',
     dict(metric='lat_mean_us', paper=38, measured=47.4, late=20, timed=1000), 'host-bound',
     None, '20 of 1000 completions late (2.0 %'),
    ('1 % late is not over 1 %',
     dict(metric='lat_mean_us', paper=38, measured=47.4, late=10, timed=1000),
     'not reproduced', None, '+24.7 %'),
    ('dm-linear within 20 % of the measurement: host-bound',
     dict(metric='iops', paper=191000, measured=77000, linear=85000), 'host-bound', None,
     'dm-linear 8.5e+04 on the same point, +10.4 %'),
    ('dm-linear far faster: no evidence',
     dict(metric='iops', paper=191000, measured=77000, linear=300000), 'not reproduced', None,
     '-59.7 %'),
    ('a figure the model does not reach: model-differs-from-paper',
     dict(metric='lat_max_us', kind='at_most', paper=2000, measured=700, model=381.5,
          differs=papers.BY_KEY['pss.write4k.max'].differs, reached=False),
     'model-differs-from-paper', None, 'not reproduced, by the model alone: 10^8 QD1'),
    ('... and where the host is the bound, host-bound first',
     dict(metric='lat_max_us', kind='at_most', paper=2000, measured=700, model=381.5,
          differs='x', reached=False, late=50, timed=100), 'host-bound', None, '50 of 100'),
    ('... its model matched: reproduced against the model',
     dict(metric='lat_max_us', kind='at_most', paper=2000, measured=385, model=381.5,
          differs='the reason', reached=False), 'reproduced', 'model', 'the reason'),
    ('reproduced beats the evidence, which is kept',
     dict(metric='lat_mean_us', paper=38, measured=38.2, late=500, timed=1000), 'reproduced',
     'paper', 'within 2 %'),
    ('not measured',
     dict(metric='iops', paper=1, measured=None), 'not reproduced', None, 'not measured'),
    ('not measured, and what run it waits for',
     dict(metric='ops', paper=1.21, measured=None, kind='app', missing='no BerkeleyDB run'),
     'not reproduced', None, 'not measured: no BerkeleyDB run'),
    ('at least a bound',
     dict(metric='mbps', kind='at_least', paper=480, measured=460), 'reproduced', 'paper',
     'at least the bound (-5 %)'),
    ('under an at-least bound by more than 5 %',
     dict(metric='mbps', kind='at_least', paper=480, measured=450), 'not reproduced', None,
     'under the bound by 6.2 %'),
    ('within a range',
     dict(metric='mbps', kind='between', paper=(1.72, 2.20), measured=2.08), 'reproduced',
     'paper', 'within the range'),
    ('a range\'s ends widened by the tolerance',
     dict(metric='mbps', kind='between', paper=(1.72, 2.20), measured=1.64), 'reproduced',
     'paper', 'within the range'),
    ('below a range',
     dict(metric='mbps', kind='between', paper=(1.72, 2.20), measured=1.6), 'not reproduced',
     None, 'under the bound by 7.0 %'),
    ('above a range',
     dict(metric='mbps', kind='between', paper=(1.72, 2.20), measured=2.5), 'not reproduced',
     None, 'over the bound by 13.6 %'),
]


def test_verdict():
    """verdict.judge(): each verdict from small fixtures, its reason, and
    the errors against the paper and the model."""
    for what, kw, want, against, words in JUDGE_CASES:
        v = verdict.judge(**kw)
        check(v['verdict'] == want and v['against'] == against and words in v['reason'],
              f'{what}: {v["verdict"]} ({v["against"]}): {v["reason"]}')
        check(v['verdict'] in verdict.VERDICTS and v['reason'], f'{what}: a verdict, a reason')
    v = verdict.judge('lat_mean_us', 38, 38.2, late=500, timed=1000)
    check(len(v['evidence']) == 1 and '50.0 %' in v['evidence'][0], f'evidence kept: {v}')
    v = verdict.judge('lat_mean_us', 12.05, 12.5, model=12.42, differs='r')
    check(abs(v['error_paper_pct'] - (12.5 - 12.05) / 12.05 * 100) < 1e-9 and
          abs(v['error_model_pct'] - (12.5 - 12.42) / 12.42 * 100) < 1e-9 and
          v['tolerance_pct'] == 2, f'errors: {v}')
    v = verdict.judge('lat_p999_us', 240, 250, kind='at_most', model=232)
    check(v['error_paper_pct'] is None and v['error_model_pct'] is not None, 'a bound: no '
          'error against the paper, one against the model')
    # the host's spread: dm-linear's own tail (or min) as far from its mean
    v = verdict.judge('lat_p9999_us', 15.6, 21.5, model=15.8, linear_spread=6.0)
    check(v['verdict'] == 'host-bound' and "host's spread" in v['reason'], f'tail: {v}')
    v = verdict.judge('lat_p9999_us', 15.6, 21.5, model=15.8, linear_spread=2.0)
    check(v['verdict'] == 'not reproduced', f'a tail wider than the host\'s: {v}')
    v = verdict.judge('lat_min_us', 10.4, 10.0, model=10.8, differs='r', linear_spread=-0.8)
    check(v['verdict'] == 'host-bound' and "own min is -0.8" in v['reason'], f'min: {v}')
    v = verdict.judge('lat_min_us', 10.4, 11.5, model=10.8, differs='r', linear_spread=-0.8)
    check(v['verdict'] == 'not reproduced', f'the other side of the model: {v}')
    v = verdict.judge('lat_p9999_us', 15.6, 23.4, model=15.8, lateness_top=1.02)
    check(v['verdict'] == 'host-bound' and 'within 1.02 us of its modeled instant' in
          v['reason'], f'a tail after a punctual device: {v}')
    v = verdict.judge('lat_p9999_us', 15.6, 23.4, model=15.8, lateness_top=9.0)
    check(v['verdict'] == 'not reproduced', f'a late device: its own tail: {v}')
    v = verdict.judge('lat_mean_us', 38, 39, lateness_top=0.1)
    check(v['verdict'] == 'not reproduced', f'not for a mean: {v}')
    check(report.lateness_top({'lateness': [[512, 640, 3], [4096, 8192, 1], [8192, 16384, 0]]},
                              8) == 1.024 and report.lateness_top({}, 8) is None,
          'the histogram\'s top on the device\'s clock')
    v = verdict.judge('lat_mean_us', 38, 39, linear_spread=5)
    check(v['verdict'] == 'not reproduced', f'a mean has no spread evidence: {v}')
    check(verdict.tolerance('iops') == verdict.tolerance('mbps') == 0.05 and
          all(verdict.tolerance(m) == 0.02 for m in results.METRICS if m.startswith('lat_')),
          'a rate 5 %, a latency 2 %')


RST = os.path.join(TOP, 'Documentation', 'admin-guide', 'device-mapper', 'dm-pcm.rst')


def rst_preset_rows():
    """dm-pcm.rst's "Presets" tables: [(preset, paper cell, error cell)]."""
    with open(RST, encoding='utf-8') as fh:
        text = fh.read()
    sec = text[text.index('\nPresets\n'):]
    sec = sec[:sec.index('\nStart-gap\n')]
    rows, preset, lines = [], None, sec.splitlines()
    for i, line in enumerate(lines):
        if i + 1 < len(lines) and set(lines[i + 1]) == {'-'} and len(lines[i + 1]) == len(line):
            preset = line.strip()
        cells = [c for c in line.split('  ') if c.strip()]
        if (len(cells) == 4 and not line.startswith(('=', ' ')) and
                cells[0].strip() != 'figure'):
            rows.append((preset, cells[1].strip(), cells[3].strip()))
    return rows


def rst_value(cell):
    """A paper cell of the .rst as (value, unit): 191K IOPS, 1.1 GB/s, 2 ms, ~1, 19x, 64;
    a range, 1.72-2.20x, as its low end."""
    c = cell.replace('~', '').replace('+', '')
    if '-' in c.strip('-'):
        low, high = c.split('-', 1)
        c = low + high.lstrip('0123456789.')
    unit = None
    for suffix, u, f in ((' GB/s', 'MB/s', 1000), (' MB/s', 'MB/s', 1), (' ms', 'us', 1000),
                         (' us', 'us', 1), ('K IOPS', 'IOPS', 1000), (' %', '%', 1),
                         ('x', 'x', 1)):
        if c.endswith(suffix):
            return float(c[:-len(suffix)]) * f, u
    if cell.startswith('~'):
        unit = 'x'
    return float(c), unit


def test_papers_rst():
    """papers.py's differs/reached against dm-pcm.rst's Presets tables:
    a row the .rst marks 'bound' is not reached by the model; a row whose
    model is off the paper by more than the verdict's tolerance has the
    .rst's reason (differs); the others have none."""
    rows = rst_preset_rows()
    check(len(rows) >= 25, f'{len(rows)} rows in the .rst\'s preset tables')
    used = set()
    for preset, paper, err in rows:
        val, unit = rst_value(paper)
        cands = [f for f in papers.FIGURES if f.preset == preset and f.key not in used and
                 abs(f.value - val) <= 1e-6 * max(1, val) and (unit is None or f.unit == unit)]
        if not cands:
            check(False, f'{preset}: the .rst\'s row "{paper}" has no figure in papers.py')
            continue
        f = cands[0]
        used.add(f.key)
        if f.kind == 'note':
            continue
        if err in ('range', 'not run'):
            check(f.kind == ('between' if err == 'range' else 'app') and
                  (err == 'range' or (not f.reached and 'not measured' in f.differs)),
                  f'{f.key}: the .rst says {err}')
            continue
        if err == 'bound':
            check(not f.reached and f.differs and 'not reproduced' in f.differs,
                  f'{f.key}: the .rst says bound: not reached, with its reason')
            continue
        off = 0.0 if err.startswith('<') else abs(float(err.rstrip(' %')))
        beyond = off > verdict.tolerance(f.metric) * 100 and f.kind == 'near'
        check(bool(f.differs) == beyond and f.reached,
              f'{f.key}: the .rst\'s model is {err} off: {"a reason" if beyond else "no reason"}'
              f' in papers.py ({f.differs!r})')
        if f.differs:
            check(f.differs.startswith(f'dm-pcm.rst, Presets, {preset}:'),
                  f'{f.key}: the reason cites the .rst\'s section')
    with open(RST, encoding='utf-8') as fh:
        rst = ' '.join(fh.read().split())
    for f in papers.FIGURES:
        if f.differs and f.differs is papers.AT_512:
            check('Linux sends nothing smaller than 512 B, so the 256 B figures are compared at '
                  '512 B' in rst, f'{f.key}: the .rst says so')
    check(not papers.BY_KEY['reram.read256.qd16.mbps'].reached, 'the .rst\'s "Not '
          'reproduced" 100 MB/s: not reached')


def test_dilate():
    """results.dilate(): latencies / K, rates x K, the histogram too; K = 1
    changes nothing; rescale() between clocks."""
    st = results.summarize([fake_rep(read={'iops': 1000.0, 'mbps': 4.0, 'lat_mean_us': 304.0,
                                           'bins': {304000: 3, 320000: 1}}),
                            fake_rep(read={'iops': 3000.0, 'mbps': 12.0, 'lat_mean_us': 312.0,
                                           'bins': {304000: 4}})])
    d = results.dilate(st, 8)
    check(d['dilation'] == 8 and st.get('dilation') is None, 'a new dict, with its K')
    check(d['read']['iops']['mean'] == 16000 and d['read']['mbps']['mean'] == 64 and
          d['read']['lat_mean_us']['mean'] == 38.5 and d['read']['lat_mean_us']['min'] == 38
          and abs(d['read']['iops']['stdev'] - 8 * st['read']['iops']['stdev']) < 1e-9 and
          abs(d['read']['lat_mean_us']['stdev'] - st['read']['lat_mean_us']['stdev'] / 8)
          < 1e-9 and d['read']['iops']['n'] == 2, f'figures: {d["read"]["iops"]}')
    check(d['read']['bins'] == {38000.0: 7, 40000.0: 1} and
          results.percentile_us(d['read']['bins'], 50) == 38, f'bins {d["read"]["bins"]}')
    check(d['write'] is None and d['cpu_pct'] == st['cpu_pct'], 'the rest as it was')
    one = results.dilate(st, 1)
    check(one['read'] == st['read'], 'K = 1: the same figures')
    check(results.rescale(80.0, 'lat_mean_us', 1, 8) == 10 and
          results.rescale(1000.0, 'iops', 1, 8) == 8000 and
          results.rescale(None, 'iops', 1, 8) is None, 'rescale')
    view = results.device_view({'held': 990, 'late': 10, 'late_max_ns': 80000,
                                'read_lat_mean_ns': 304000, 'write_lat_mean_ns': 0,
                                'lateness': [[0, 128, 5]]}, 8)
    check(view['timed'] == 1000 and view['late_max_us'] == 10 and
          view['read_lat_mean_us'] == 38 and view['lateness'] == [[0, 128, 5]],
          f'the device\'s view on its clock: {view}')
    check(results.device_view(None, 8) is None, 'none recorded')


def status_line(**kw):
    """A "dmsetup status" reply of a one-domain pcm device: zeros but @kw."""
    from pcmlib import status as pst
    vals = {k: 0 for k in pst.FIELDS}
    vals.update(metadata='ok', domains=1, start=0, gap=5, timing='on', **kw)
    return '0 8 pcm ' + ' '.join(f'{k}:{vals[k]}' for k in pst.FIELDS)


def test_guest_recording():
    """The guest's part, on the host with its commands faked: dilation:K
    among the words it creates a device with, the overhead_ns of a
    point's direction, the status and lateness it keeps per point."""
    s = spec.loads('dilation = 8\n[axes]\ndevice = ["preset:onyx", "preset:pss dilation:4"]\n'
                   'rw = ["randread", "randwrite", "randrw"]\nrwmixread = 75\n')
    check(s.dilation == 8 and s.table_words('preset:onyx') == 'preset:onyx dilation:8' and
          s.table_words('preset:pss dilation:4') == 'preset:pss dilation:4' and
          s.dilation_of('preset:onyx') == 8 and s.dilation_of('preset:pss dilation:4') == 4 and
          s.dilation_of('linear') == 1, 'the spec\'s K, or the device\'s own')
    check(spec.loads(TINY).table_words('preset:pss') == 'preset:pss', 'K = 1 adds no word')
    g = cguest.Guest(s, WORK, log=lambda m: None)
    g.backing = '/dev/ram0'
    ran = []

    def fake_sh(cmd, record=True):
        ran.append(cmd)
        if record:
            g.commands.append(cmd)
        return 'REPLY'
    g.sh = fake_sh
    info = g.create('preset:onyx')
    check(any(c == 'tools/pcmctl create char-dut /dev/ram0 preset:onyx dilation:8 format'
              for c in ran) and info['dilation'] == 8, f'created with dilation:8: {ran}')
    oh = {'read': 9000, 'write': 11000}
    rd, wr, mix = s.points[0], s.points[1], s.points[2]
    check(cguest.point_overhead(rd, oh) == 9000 and cguest.point_overhead(wr, oh) == 11000 and
          cguest.point_overhead(mix, oh) == 9500 and cguest.point_overhead(rd, None) is None,
          'overhead_ns by direction, a mix by its read share')
    hist = cguest.parse_lateness('0-128:40 128-256:2 4096-8192:1 completions:43')
    check(hist == [[0, 128, 40], [128, 256, 2], [4096, 8192, 1]], f'lateness {hist}')
    st = cguest.device_status(status_line(held=990, late=10, late_max_ns=7000, reads=1000,
                                          read_lat_mean_ns=304000), '0-128:990 completions:990')
    check(st['held'] == 990 and st['late'] == 10 and st['late_max_ns'] == 7000 and
          st['read_lat_mean_ns'] == 304000 and st['lateness'] == [[0, 128, 990]] and
          set(st) == set(cguest.STATUS_KEEP) | {'lateness'}, f'status kept: {st}')
    # the calibration: given in the spec, or none
    g.calibrate()
    check(g.overhead is None and g.calibration is None, 'uncalibrated')
    g2 = cguest.Guest(spec.loads('overhead_ns = { read = 9400, write = 9800 }\n' + TINY), WORK)
    g2.calibrate()
    check(g2.overhead == {'read': 9400, 'write': 9800} and g2.calibration['how'] == 'given',
          f'given: {g2.calibration}')


def test_calibrate_function():
    """The calibration (pcmlib/calibrate.py: pcm-bench timing's and
    calibrate's, and a characterization's at its start): the
    device it makes (at the run's dilation), the overhead per direction
    (fio's mean lat minus the hold: 100 us on the host's clock at any K),
    the device removed after."""
    sys.path.insert(0, os.path.join(TOP, 'tools'))
    import types
    from pcmlib import calibrate as pcal
    check(pcal.calibration_words() == 'preset:none gap_interval:0 read_ns:100000 '
          'write_ns:100000' and pcal.calibration_words(8) == 'preset:none gap_interval:0 '
          'read_ns:12500 write_ns:12500 dilation:8', 'words')
    check(pcal.overhead_of(109400) == 9400 and pcal.overhead_of(109800.4, 8) == 9800 and
          pcal.overhead_of(99000, 8) == 0 and pcal.overhead_of(109999, 3) == 10000,
          'overhead_of: the hold 33333 x 3 at K = 3')
    made, ran = [], []
    saved = {k: getattr(pcal, k) for k in ('pcm_create', 'sh', 'measure', 'status',
                                             'lateness')}
    lat = {'randread': 109400, 'randwrite': 110200}

    def fake_measure(runs, rnd, name, dev, rw, qd, args, extra=None, bs='4k', size_mib=None,
                     engine=None):
        runs.append(dict(extra or {}, device=name, rw=rw, lat_mean_ns=lat[rw], engine=engine,
                         size_mib=size_mib))
    try:
        pcal.pcm_create = lambda name, words, backing='/dev/ram0': made.append(
            (name, words, backing))
        pcal.sh = lambda cmd, **kw: ran.append(cmd) or ''
        pcal.measure = fake_measure
        pcal.status = lambda dev: {'late': 0}
        pcal.lateness = lambda name: []
        runs = []
        got = pcal.calibrate(types.SimpleNamespace(runtime=1.0, cpus=1), runs, dilation=8,
                             backing='/dev/nullb0', size_mib=63, engine='libaio')
    finally:
        for k, v in saved.items():
            setattr(pcal, k, v)
    check(got == {'randread': 9400, 'randwrite': 10200}, f'overhead {got}')
    check(made == [('bench-tm', pcal.calibration_words(8) + ' format', '/dev/nullb0')],
          f'device {made}')
    check(ran[-1] == 'dmsetup remove bench-tm' and 'set overhead_ns 0' in ran[0],
          f'commands {ran}')
    check(len(runs) == 2 and all(r['set_us'] == 100 and r['dilation'] == 8 and
                                 r['engine'] == 'libaio' and
                                 r['size_mib'] == 63 for r in runs), f'runs {runs}')


def test_char_imports_no_pcmbench():
    """pcmchar runs inside pcm-bench characterize and imports nothing of
    it (its calibration and fio are pcmlib's): no module of tools/pcmchar
    names pcmbench in an import."""
    d = os.path.join(TOP, 'tools', 'pcmchar')
    bad = []
    for name in sorted(os.listdir(d)):
        if name.endswith('.py'):
            with open(os.path.join(d, name), encoding='utf-8') as fh:
                bad += [f'{name}: {ln.strip()}' for ln in fh
                        if ln.lstrip().startswith(('import ', 'from ')) and 'pcmbench' in ln]
    check(not bad, f'pcmchar imports pcmbench: {bad}')


DIL_SPEC = ('dilation = 8\nrepetitions = 3\n[axes]\ndevice = "preset:pss"\nsize = "16m"\n'
            '[[sweep]]\nrw = "randread"\n[[sweep]]\nrw = "randrw"\nrwmixread = 70\n'
            'iodepth = 4\n')


def test_finish_dilated():
    """report.finish on a dilated, calibrated run with the device's
    status: every figure on the device's clock (the fixtures' latencies /
    8, rates x 8), the model's figure, a verdict with its reason, and the
    clock, dilation and calibration in run.json's record, the report, the
    paper table, points.csv and the figures' CSVs."""
    d = os.path.join(WORK, 'run-dil')
    os.makedirs(os.path.join(d, 'raw'))
    with open(os.path.join(d, 'spec.toml'), 'w') as fh:
        fh.write(DIL_SPEC)
    s = spec.loads(DIL_SPEC)
    raw = results.summarize(results.repetitions(fixture('randread-qd1.json')))
    runs = []
    for i, (pid, dev, fx) in enumerate((('p001', 'preset:pss', 'randread-qd1'),
                                        ('p002', 'preset:pss', 'randrw-qd4'),
                                        ('p001', 'dm-linear', 'randread-qd1'))):
        shutil.copyfile(os.path.join(FIXTURES, fx + '.json'), os.path.join(d, 'raw', f'{i}.json'))
        r = {'point': pid, 'device': dev, 'file': f'{i}.json', 's': 1.0}
        if dev != 'dm-linear':
            r.update(dilation=8, overhead_ns=9400 if pid == 'p001' else 9520,
                     status={'reads': 1000, 'writes': 0, 'held': 950, 'late': 50,
                             'late_max_ns': 80000, 'read_lat_mean_ns': 280000,
                             'write_lat_mean_ns': 0, 'lateness': [[0, 128, 950]]})
        runs.append(r)
    run = {'date': 'D', 'kernel': 'K', 'fio': 'fio-3.33', 'cpus': 1, 'wall_s': 5.0,
           'fio_s': 4.0, 'commands': [], 'runs': runs, 'dilation': 8,
           'calibration': {'how': 'measured', 'overhead_ns': {'read': 9400, 'write': 9800}},
           'devices': {'preset:pss': {'table': 'T', 'config': 'C', 'dilation': 8},
                       'dm-linear': {'table': 'L'}}}
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)
    path, figs, rows, got = report.finish(s, d, icount=True)
    check(len(rows) == 1 and rows[0].k == 8, f'one row at K = 8: {rows}')
    r = rows[0]
    want = raw['read']['lat_mean_us']['mean'] / 8
    check(abs(r.got - want) < 1e-9 and abs(r.base - want) < 1e-9,
          f'measured and dm-linear / 8: {r.got} {r.base} {want}')
    check(r.model is not None and abs(r.model - 34.96) < 0.2,
          f'the model\'s figure for the point (libpcm): {r.model}')
    check(r.verdict['verdict'] in verdict.VERDICTS and r.verdict['evidence'] and
          '50 of 1000 completions late' in r.verdict['evidence'][0],
          f'a verdict, the late completions as evidence: {r.verdict}')
    with open(path) as fh:
        md = fh.read()
    cond = ("clock: icount; dilation: 8 (latencies / K, rates x K: the device's clock); "
            "calibration: overhead_ns read 9400, write 9800 (measured at the run's start)")
    check(cond in md, 'the report\'s header: clock, dilation, calibration')
    table = md[md.index('## Paper vs dm-pcm'):md.index('## Figures')]
    check('| error vs paper | error vs model | verdict | why |' in table and
          f'**{report.verdict_text(r.verdict)}**' in table and
          'icount, K=8, overhead_ns 9400 ns here;' in table, 'the table: verdict, why, '
          'clock, K and calibration per row')
    pts = md[md.index('## Points'):md.index('## blktrace')]
    check('| 8 | 950 / 50, 10 | 35 |' in pts, 'points: K, held / late, late max (us, / 8), '
          'modeled mean (us, / 8)')
    with open(os.path.join(d, 'paper-table.json')) as fh:
        js = json.load(fh)
    j = js['rows'][0]
    check(js['fields'] == list(report.PAPER_FIELDS) and
          all(k in j for k in ('paper', 'model', 'measured', 'error_pct', 'error_model_pct',
                               'verdict', 'reason', 'clock', 'dilation', 'calibration')),
          f'paper-table.json: every column: {sorted(j)}')
    check(j['verdict'] == r.verdict['verdict'] and j['dilation'] == 8 and
          j['clock'] == 'icount' and j['calibration'].startswith('overhead_ns read 9400') and
          j['overhead_ns'] == 9400 and j['late'] == 50 and j['timed'] == 1000 and
          abs(j['model'] - r.model) < 1e-9 and
          abs(j['error_model_pct'] - (r.got - r.model) / r.model * 100) < 1e-9,
          f'paper-table.json: {j}')
    with open(os.path.join(d, 'paper-table.csv'), newline='') as fh:
        tab = list(csv.DictReader(fh))
    check(list(tab[0]) == list(report.PAPER_FIELDS) and tab[0]['verdict'] == j['verdict'] and
          tab[0]['dilation'] == '8', 'paper-table.csv: the same columns')
    with open(os.path.join(d, 'points.csv'), newline='') as fh:
        pc = list(csv.DictReader(fh))
    first = pc[0]
    check(first['dilation'] == '8' and first['clock'] == 'icount' and
          first['overhead_ns'] == '9400' and first['held'] == '950' and
          first['late'] == '50' and 'overhead_ns read 9400' in first['calibration'] and
          abs(float(first['lat_mean_us']) - want) / want < 1e-5 and
          pc[-1]['on'] == 'dm-linear' and pc[-1]['held'] == '', f'points.csv: {first}')
    check(abs(float(first['iops']) - raw['read']['iops']['mean'] * 8) /
          (raw['read']['iops']['mean'] * 8) < 1e-5, 'points.csv: IOPS x 8')
    txt = report.headline_text(rows, got)
    check(txt.splitlines()[0].startswith('clock: icount; dilation: 8') and
          txt.splitlines()[2].startswith('pss: 4 KB random read, QD1, latency ') and
          r.verdict['verdict'] in txt, f'the console\'s table: {txt}')
    # a figure drawn from dilated points carries them too
    _, res = synthetic('[axes]\ndevice = ["preset:pss"]\nrw = "randwrite"\n',
                       lambda p, dev: (None, {'lat_mean_us': 500.0,
                                              'bins': {480000: 9, 520000: 1}}))
    res = [(p, dev, results.dilate(st, 8)) for p, dev, st in res]
    made = figures.draw_all(res, os.path.join(d, 'figs8'), conditions={
        'clock': 'icount', 'dilation': 8, 'calibration': 'uncalibrated'})
    with open(made['pss-cdf'][1], newline='') as fh:
        rows_csv = list(csv.DictReader(fh))
    check(rows_csv and all(r['clock'] == 'icount' and r['dilation'] == '8' and
                           r['calibration'] == 'uncalibrated' for r in rows_csv) and
          float(rows_csv[0]['latency_us']) == 60, f'the figure\'s CSV, / 8: {rows_csv[:2]}')


def test_spec_dilation():
    """The spec's dilation, calibrate and overhead_ns: defaults, errors,
    the command line's override, libpcm's check of the words as created."""
    s = spec.loads(TINY)
    check(s.dilation == 1 and s.calibrate is False and s.overhead_ns is None, 'defaults')
    s = spec.loads('dilation = 8\ncalibrate = true\n' + TINY)
    check(s.dilation == 8 and s.calibrate is True, 'set')
    s = spec.loads('overhead_ns = { read = 9400 }\n' + TINY)
    check(s.overhead_ns == {'read': 9400, 'write': 0}, f'a side left out is 0: {s.overhead_ns}')
    bad = {'dilation = 0\n': 'dilation: 0', 'dilation = 1001\n': 'dilation: 1001',
           'dilation = 1.5\n': 'dilation: 1.5', 'calibrate = 1\n': 'calibrate: 1',
           'overhead_ns = 5\n': 'overhead_ns: 5',
           'overhead_ns = { reads = 5 }\n': "overhead_ns.reads: unknown key",
           'overhead_ns = { read = -1 }\n': 'overhead_ns.read: -1',
           'calibrate = true\noverhead_ns = { read = 1 }\n': 'calibrate: true with overhead_ns'}
    for text, msg in bad.items():
        try:
            spec.loads(text + TINY)
            check(False, f'{text!r} accepted')
        except spec.SpecError as e:
            check(str(e).startswith(msg), f'{text!r}: {e}')
    # the command line's values lead the spec.toml the guest runs
    t = spec.override_text('dilation = 2\ncalibrate = true\n' + TINY, dilation=8,
                           overhead_ns={'read': 9400, 'write': 9800})
    s = spec.loads(t)
    check(s.dilation == 8 and s.calibrate is False and s.overhead_ns == {'read': 9400,
                                                                         'write': 9800} and
          len(s.points) == 8 and '# (set on the command line) dilation = 2' in t,
          f'override: {t[:300]}')
    check(spec.override_text(TINY) == TINY, 'nothing to override: the same text')
    s = spec.loads(spec.override_text(TINY, dilation=4, calibrate=True))
    check(s.dilation == 4 and s.calibrate is True, '--dilation 4 --calibrate')
    # libpcm checks the words with dilation:K among them
    s = spec.loads('dilation = 8\n' + TINY, tables=True)
    check(s.table_words('preset:pss') == 'preset:pss dilation:8', 'libpcm takes dilation:8')
    try:
        spec.loads('[axes]\ndevice = "preset:pss dilation:1001"\n', tables=True)
        check(False, 'dilation:1001 accepted')
    except spec.SpecError as e:
        check('the module refuses it' in str(e) and 'dilation' in str(e), str(e))


def test_bench_cli_dilation():
    """pcm-bench characterize's --dilation, --calibrate, --no-calibrate,
    --overhead-ns: parsed, refused when bad (before any VM), and refused
    by the other modes."""
    sys.path.insert(0, os.path.join(TOP, 'tools'))
    from pcmbench import main as bmain
    ap, _ = bmain.build_parser()
    a = ap.parse_args(['characterize', 'x.toml', '--dilation', '8', '--overhead-ns', '9400,9800'])
    check((a.dilation, a.overhead_ns, a.calibrate) == (8, {'read': 9400, 'write': 9800}, None),
          f'{a}')
    a = ap.parse_args(['--dilation', '4', '--calibrate', 'characterize', 'x.toml'])
    b = ap.parse_args(['characterize', 'x.toml', '--no-calibrate'])
    check((a.dilation, a.calibrate, b.calibrate, b.dilation) == (4, True, False, None),
          'before or after the mode')
    check(ap.parse_args(['characterize', 'x', '--overhead-ns', '7']).overhead_ns ==
          {'read': 7, 'write': 7}, 'one number for both')
    for argv, msg in ((['characterize', 'x.toml', '--dilation', '0'], "'0': an integer from 1"),
                      (['characterize', 'x.toml', '--dilation', '1001'], 'from 1 to 1000'),
                      (['characterize', 'x.toml', '--overhead-ns', '1,2,3'], 'READ[,WRITE]'),
                      (['timing', '--calibrate'], 'unrecognized arguments: --calibrate'),
                      (['passthrough', '--dilation', '8'], 'unrecognized arguments: --dilation'),
                      (['passthrough', '--calibrate'], 'unrecognized arguments: --calibrate')):
        res = bench(*argv)
        check(res.returncode == 2 and msg in res.stderr, f'{argv}: {res.stderr[-300:]!r}')
    res = bench('characterize', '--help')
    out = ' '.join(res.stdout.split())
    check(all(f in out for f in ('--dilation K', '--calibrate', '--no-calibrate',
                                 '--overhead-ns R[,W]', 'verdict')), 'characterize --help')
    # pcm-bench calibrate: timing's calibration alone, at --dilation K, saved
    from pcmbench import calibrate as bcal
    res = bench('calibrate', '--help')
    out = ' '.join(res.stdout.split())
    check(res.returncode == 0 and '--dilation K' in out and 'overhead_ns' in out and
          '--overhead-ns' not in out.split('options:')[-1], f'calibrate --help: {out[:300]}')
    a = ap.parse_args(['calibrate', '--dilation', '8', '--rounds', '2'])
    check((a.mode, a.dilation, a.rounds) == ('calibrate', 8, 2), f'calibrate: {a}')
    res = bench('calibrate', '--overhead-ns', '5')
    check(res.returncode == 2 and 'unrecognized arguments: --overhead-ns' in res.stderr,
          res.stderr[-200:])
    runs = [{'round': rnd, 'rw': rw, 'dilation': 8, 'overhead_ns': ns}
            for rnd, rw, ns in ((0, 'randread', 9000), (0, 'randwrite', 9900),
                                (1, 'randread', 9400), (1, 'randwrite', 9800),
                                (2, 'randread', 9600), (2, 'randwrite', 9700))]
    table, summary = bcal.summarize({'kernel': 'K', 'fio': 'fio-3.33', 'cpus': 1, 'rounds': 3,
                                     'runtime_s': 2, 'icount': True, 'runs': runs})
    check(summary == {'overhead_ns': {'read': 9400, 'write': 9800}, 'dilation': 8,
                      'clock': 'icount'} and
          '--dilation 8 --overhead-ns 9400,9800' in table and 'clock icount, dilation 8' in table,
          f'calibrate summary: {summary} {table}')


def test_run_clock_defaults():
    """pcm-bench characterize's dilation and calibration when neither the
    command line nor the spec names them: dilation 8 in an icount VM, 1
    with --native or --no-icount, calibrated; the spec's own keys and the
    command line's win; the run's spec.toml says which were defaults."""
    sys.path.insert(0, os.path.join(TOP, 'tools'))
    from pcmbench import main as bmain, characterize as bchar
    from pcmlib import clock
    ap, _ = bmain.build_parser()

    def got(argv, text=TINY):
        a = ap.parse_args(['characterize', 'x.toml'] + argv)
        c = bchar.run_clock(a, text)
        s = spec.loads(spec.override_text(text, **c))
        return s.dilation, s.calibrate, s.overhead_ns, c['defaults']
    check(clock.ICOUNT_DILATION == 8 and clock.default_dilation(native=False, icount=True) == 8
          and clock.default_dilation(native=True) == 1 and
          clock.default_dilation(icount=False) == 1, 'clock defaults')
    check(got([]) == (8, True, None, {'dilation', 'calibrate'}), f'icount VM: {got([])}')
    check(got(['--native'])[:2] == (1, True), f'--native: {got(["--native"])}')
    check(got(['--no-icount'])[:2] == (1, True), 'no icount: K = 1')
    check(got(['--dilation', '4', '--no-calibrate']) == (4, False, None, set()),
          'the command line wins')
    check(got(['--overhead-ns', '9000'])[:3] == (8, False, {'read': 9000, 'write': 9000}),
          '--overhead-ns: no calibration run')
    check(got([], 'dilation = 2\ncalibrate = false\n' + TINY) == (2, False, None, set()),
          "the spec's keys win over the defaults")
    check(got([], 'overhead_ns = { read = 5 }\n' + TINY)[:3] == (8, False,
                                                                   {'read': 5, 'write': 0}),
          "the spec's overhead_ns: no calibration run")
    a = ap.parse_args(['characterize', 'x.toml'])
    t = spec.override_text(TINY, **bchar.run_clock(a, TINY))
    check(t.startswith('# pcm-bench characterize: dilation by default, calibrate by default'),
          t[:120])


def test_read_raw_xz():
    """A committed run keeps fio's JSON as raw/NAME.xz (what --redraw
    needs); read_raw() reads either form, the plain file first."""
    import lzma
    d = os.path.join(WORK, 'xzrun')
    os.makedirs(os.path.join(d, 'raw'), exist_ok=True)
    with lzma.open(os.path.join(d, 'raw', 'p001-d0.json.xz'), 'wt') as fh:
        fh.write('{"jobs": []}')
    check(results.read_raw(d, 'p001-d0.json') == '{"jobs": []}', 'read from .xz')
    with open(os.path.join(d, 'raw', 'p001-d0.json'), 'w') as fh:
        fh.write('{"plain": 1}')
    check(results.read_raw(d, 'p001-d0.json') == '{"plain": 1}', 'the plain file first')
    try:
        results.read_raw(d, 'p002-d0.json')
        check(False, 'a missing file read')
    except FileNotFoundError:
        pass


def test_latency_is_lat():
    """The figures' latency is fio's lat (submission to completion) where
    the job recorded its percentiles, else clat (earlier runs); job files
    ask for lat_percentiles."""
    side = {'io_bytes': 4096, 'iops': 1.0, 'bw_bytes': 4096, 'total_ios': 1,
            'clat_ns': {'mean': 37000, 'min': 1, 'max': 2, 'percentile': {'50.000000': 37000}},
            'lat_ns': {'mean': 38000, 'min': 1, 'max': 2, 'percentile': {'50.000000': 38000},
                       'bins': {'38000': 1}}}
    check(results.side_figures(side)['lat_mean_us'] == 38.0 and
          results.latency(side)['bins'] == {'38000': 1}, 'lat first')
    del side['lat_ns']['percentile']
    check(results.side_figures(side)['lat_mean_us'] == 37.0, 'clat without lat percentiles')
    s = spec.loads(TINY)
    check('lat_percentiles=1' in fiojob.job_text(s, s.points[0]), 'job files ask for them')


def test_warmup_ios():
    """warmup_ios = N: the point's warm-up job runs N I/Os, not warmup
    seconds (PSS's full write cache at any dilation); 0 keeps the time."""
    s = spec.loads('warmup = 0.5\n[axes]\ndevice = "preset:pss"\nrw = "randwrite"\n'
                   '[[sweep]]\nwarmup_ios = 4000\n[[sweep]]\nbs = "512"\n')
    with_ios, plain = (fiojob.job_text(s, p) for p in s.points)
    warm = with_ios.split('[warmup]')[1].split('[rep1]')[0].split()
    check(warm == ['time_based=0', 'number_ios=4000'], f'warm-up by count: {warm}')
    check('runtime=500ms' in plain.split('[warmup]')[1].split('[rep1]')[0],
          'warm-up by time otherwise')
    check(s.points[0].describe().endswith('after 4000 I/Os'), s.points[0].describe())
    s = spec.loads('[axes]\ndevice = "preset:pss"\nramp = 0.25\n')
    reps = fiojob.job_text(s, s.points[0]).split('[rep1]')[1]
    check('ramp_time=250ms' in reps and s.points[0].describe().endswith('ramp 0.25 s'),
          f'ramp: each repetition ramps: {reps}')
    try:
        spec.loads('[axes]\nwarmup_ios = -1\n')
        check(False, 'warmup_ios -1 accepted')
    except spec.SpecError as e:
        check(str(e).startswith('axes.warmup_ios'), str(e))


def test_backing_dev():
    """--backing-dev DEV: refused without --native, without --destroy-data,
    for a file or a mounted device; the probe's verdict says by how much
    a backing device is slower than the spec's fastest device."""
    sys.path.insert(0, os.path.join(TOP, 'tools'))
    import types
    from pcmbench import characterize as bchar
    from pcmchar import guest

    def why(dev, native=True, destroy=True, mounts='/dev/null'):
        a = types.SimpleNamespace(backing_dev=dev, native=native, destroy_data=destroy)
        return bchar.backing_refusal(a, mounts) or ''
    check('--native' in why('/dev/null', native=False), 'a VM: refused')
    check('--destroy-data' in why('/dev/null', destroy=False), 'no --destroy-data: refused')
    check('not a block device' in why('/dev/null'), '/dev/null is a character device')
    check('No such file' in why('/dev/nonexistent-pcm'), 'missing')
    blk = next((os.path.join('/dev', d) for d in sorted(os.listdir('/dev'))
                if d.startswith(('loop', 'sd', 'vd', 'nvme', 'ram')) and
                stat.S_ISBLK(os.stat(os.path.join('/dev', d)).st_mode)), None)
    if blk:
        mounts = os.path.join(WORK, 'mounts')
        with open(mounts, 'w') as fh:
            fh.write(f'{blk} /mnt ext4 rw 0 0\n')
        check(why(blk) == '' and 'is mounted on /mnt' in why(blk, mounts=mounts),
              f'{blk}: free, then mounted: {why(blk, mounts=mounts)!r}')
    need = {'read': (38.0, 'preset:onyx'), 'write': (178.7, 'preset:onyx')}
    check(guest.backing_too_slow('/dev/x', {'read': 20.0, 'write': 30.0}, need, 1) is None,
          'a faster backing device')
    msg = guest.backing_too_slow('/dev/x', {'read': 76.0, 'write': 30.0}, need, 1) or ''
    check('4 KiB random reads take 76.0 us' in msg and '100 % slower' in msg and
          'preset:onyx' in msg, msg)
    check(guest.backing_too_slow('/dev/x', {'read': 76.0, 'write': 30.0}, need, 8) is None,
          'at dilation 8 the hold is 304 us')


def ranks_reply(utils, channels=1):
    """A "ranks" reply: @utils, each rank's util_ppm, channel by channel."""
    nr = len(utils) // channels
    use = lambda n, u: (f' requests:{n} busy_ns:{u * 10} util_ppm:{u} wait_ns:{n} '  # noqa: E731 (a one-line helper)
                        f'wait_max_ns:1')
    lines = [f'elapsed_ns:10000000 channels:{channels} ranks:{nr}',
             'front' + use(7, 0), 'tags waits:0 wait_ns:0 wait_max_ns:0']
    for c in range(channels):
        lines.append(f'bus:{c}' + use(0, 0))
        lines += [f'rank:{c}.{r}' + use(5, utils[c * nr + r]) for r in range(nr)]
    return '\n'.join(lines)


def test_rank_heatmap():
    """Each dm-pcm point's "ranks" reply, as the guest keeps it in
    run.json, becomes the report's rank-utilisation table (with or
    without figures) and, with figures, a heat map per device (points x
    ranks) with its CSV."""
    kept = cguest.device_ranks(ranks_reply([612345, 0]))
    check(kept['channels'] == 1 and kept['ranks'] == 2 and
          [x['util_ppm'] for x in kept['per_rank']] == [612345, 0] and
          kept['per_rank'][0]['requests'] == 5, f'the guest keeps the reply: {kept}')
    d = os.path.join(WORK, 'run-ranks')
    os.makedirs(os.path.join(d, 'raw'))
    with open(os.path.join(d, 'spec.toml'), 'w') as fh:
        fh.write(FX_SPEC)
    s = spec.loads(FX_SPEC)
    runs = []
    for i, (pid, dev, fx, utils) in enumerate((
            ('p001', 'preset:pss', 'randread-qd1', [612345, 0]),
            ('p002', 'preset:pss', 'randrw-qd4', [250000, 990000]),
            ('p001', 'dm-linear', 'randread-qd1', None))):
        shutil.copyfile(os.path.join(FIXTURES, fx + '.json'), os.path.join(d, 'raw', f'{i}.json'))
        r = {'point': pid, 'device': dev, 'file': f'{i}.json', 's': 1.0}
        if utils:
            r['ranks'] = cguest.device_ranks(ranks_reply(utils))
        runs.append(r)
    run = {'date': 'D', 'kernel': 'K', 'fio': 'fio-3.33', 'cpus': 1, 'wall_s': 5.0,
           'fio_s': 4.0, 'commands': [], 'runs': runs,
           'devices': {'preset:pss': {'table': 'T', 'config': 'C'}, 'dm-linear': {'table': 'L'}}}
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)
    _, res = results.load_run(s, d)
    grids = results.rank_grids(res)
    check(list(grids) == ['preset:pss'] and grids['preset:pss'][0] == ['0.0', '0.1'] and
          [(p.id, us) for p, us in grids['preset:pss'][1]] ==
          [('p001', [61.2345, 0.0]), ('p002', [25.0, 99.0])], f'the grid: {grids}')

    # a rank busy a fraction of 1 % (one of Onyx's 128 at QD1) is not 0.0
    check([results.util_text(u) for u in (0, 0.0412, 0.00049, 0.5, 1, 61.2345)] ==
          ['0.0', '0.041', '0.00049', '0.50', '1.0', '61.2'], 'utilisation text')

    def section(md):
        return md[md.index('## Rank utilisation'):md.index('## blktrace')]
    path, figs, _, _ = report.finish(s, d, draw=False)
    with open(path) as fh:
        md = fh.read()
    tab = section(md)
    check('| point | workload | rank 0.0 | rank 0.1 | busiest | mean |' in tab and
          '| p001 | ' in tab and '| 61.2 | 0.0 | 61.2 | 30.6 |' in tab and
          '| 25.0 | 99.0 | 99.0 | 62.0 |' in tab and '![' not in tab and not figs,
          f'--no-figures: the table, no image: {tab}')
    path, figs, _, _ = report.finish(s, d)
    with open(path) as fh:
        md = fh.read()
    tab = section(md)
    check('rank-util' in figs and os.path.exists(figs['rank-util'][0]) and
          '![rank-util](figures/rank-util.png)' in tab and '| 25.0 | 99.0 |' in tab and
          '### rank-util' not in md, f'figures: the heat map beside its table: {tab}')
    with open(figs['rank-util'][1], newline='') as fh:
        rows = list(csv.DictReader(fh))
    check([(r['point'], r['rank'], float(r['util_pct'])) for r in rows] ==
          [('p001', '0.0', 61.2345), ('p001', '0.1', 0.0), ('p002', '0.0', 25.0),
           ('p002', '0.1', 99.0)] and rows[0]['device'] == 'preset:pss', f'its CSV: {rows}')
    # many ranks: the table per channel (mean / busiest), the map every rank
    p, dev, st = res[0]
    st = dict(st, ranks=cguest.device_ranks(ranks_reply(list(range(0, 340000, 10000)), 2)))
    lines = report.rank_lines([(p, dev, st)])
    check(any('ch 0 mean / max | ch 1 mean / max |' in ln for ln in lines) and
          any('| 8.0 / 16.0 | 25.0 / 33.0 | 33.0 | 16.5 |' in ln for ln in lines),
          f'34 ranks: per channel: {lines}')
    made = figures.rank_heatmaps([(p, dev, st)])
    check(len(made['rank-util'][2]) == 34, 'the map: every rank')
    # its values are % (0-100): the colour bar says so, on its ticks too (a
    # QD1 run's scale, 0-1 %, read as fractions under a bare "%")
    fig = made['rank-util'][0]
    ax, bar = fig.axes
    tick = bar.yaxis.get_major_formatter()
    check(bar.get_ylabel() == "rank utilisation (% of the point's time)" and
          tick(0.5, 0) == '0.5 %' and tick(30, 0) == '30 %',
          f'colour bar: {bar.get_ylabel()!r}, ticks {tick(0.5, 0)!r}')
    check(ax.get_title().startswith('PSS (dm-pcm): rank utilisation') and
          ax.get_xlabel() == 'rank (channel.rank)' and ax.get_ylabel(),
          f'title {ax.get_title()!r}, axes {ax.get_xlabel()!r} / {ax.get_ylabel()!r}')
    figures.plt.close(fig)
    check(report.rank_lines([(p, dev, dict(st, ranks=None))])[0].startswith('(no "ranks"'),
          'none recorded')


APP_SPEC = '''
name = "app-t"
scale = 1
clients = 4
duration = 5
ramdisk = "256m"
devices = ["preset:none", "preset:onyx"]
[short]
clients = 2
duration = 1
'''


def test_app_spec():
    """pcm-bench app's spec (tools/pcmbench/app/spec.py): the settings, --short's
    [short] over them, and every bad spec refused with the field and what
    it allows; on the command line refused before any VM boots, with no
    run directory made."""
    from pcmbench import app
    from pcmbench.app import spec as aspec
    s = aspec.loads(APP_SPEC, tables=True)
    check((s.name, s.workload, s.scale, s.clients, s.threads, s.duration, s.devices()) ==
          ('app-t', 'tpcb-like', 1, 4, 1, 5, ['preset:none', 'preset:onyx', 'dm-linear']),
          f'settings: {vars(s)}')
    s = aspec.loads(APP_SPEC, short=True)
    check((s.clients, s.duration, s.short) == (2, 1, True) and '(--short)' in s.describe(),
          f'--short: {s.describe()}')
    s = aspec.loads(APP_SPEC.replace('name = "app-t"', 'dilation = 16'), 'x', tables=True)
    check(s.table_words('preset:onyx') == 'preset:onyx dilation:16' and
          s.dilation_of('dm-linear') == 1, 'dilation:K on every dm-pcm device')
    pg = os.path.join(TOP, 'tools', 'app', 'pgbench.toml')
    s = aspec.loads(open(pg).read(), 'pgbench', tables=True)
    check(s.devices() == ['preset:none', 'preset:pss', 'preset:onyx', 'preset:optane',
                          'preset:iodrive', 'dm-linear'] and s.dilation == 16 and
          s.scale * aspec.SCALE_BYTES >= 4 * s.memory, f'tools/app/pgbench.toml: {vars(s)}')
    sel = os.path.join(TOP, 'tools', 'app', 'pgbench-select.toml')
    s = aspec.loads(open(sel).read(), 'pgbench-select', tables=True)
    check(s.workload == 'select-only' and s.scale * aspec.SCALE_BYTES >= 4 * s.memory,
          f'tools/app/pgbench-select.toml: {vars(s)}')
    # a memory cgroup: the scale chosen so that the database is data_ratio
    # x memory (15.68 MB a scale unit), shared_buffers a quarter of it
    def text(top, short=''):
        """APP_SPEC with @top's keys in place of its own (and of scale),
        @short as its [short] table."""
        keys = {x.split(' = ')[0] for x in top.splitlines()} | {'scale'}
        base = APP_SPEC.split('[short]')[0]
        return '\n'.join([top] + [x for x in base.splitlines() if x.split(' = ')[0] not in keys]
                          + ['[short]', short])
    s = aspec.loads(text('memory = "64m"\nramdisk = "1g"'), tables=True)
    check((s.memory, s.data_ratio, s.scale, s.shared_buffers) == (64 << 20, 4, 18, 16 << 20) and
          s.scale * aspec.SCALE_BYTES >= 4 * s.memory > (s.scale - 1) * aspec.SCALE_BYTES and
          '64 MiB memory cgroup' in s.describe() and '4.2x it' in s.describe(),
          f'memory: {vars(s)} {s.describe()}')
    s = aspec.loads(text('memory = "32m"\nshared_buffers = "4m"\nramdisk = "512m"',
                       'data_ratio = 2'), short=True)
    check((s.scale, s.shared_buffers, s.data_ratio) == (5, 4 << 20, 2),
          f'[short] data_ratio: {vars(s)}')
    check(aspec.loads(APP_SPEC).memory is None, 'no memory: no cgroup')
    # pcm-bench app --help's example spec, as written, full and --short
    import textwrap
    ex = textwrap.dedent(app.__doc__.split('workload:\n\n', 1)[1].split('\n\n', 1)[0])
    s, sh = aspec.loads(ex, tables=True), aspec.loads(ex, tables=True, short=True)
    check((s.memory, s.scale, sh.memory, sh.scale) == (64 << 20, 18, 32 << 20, 5),
          f'--help\'s example: {s.describe()}; {sh.describe()}')
    for top, field, msg in (('memory = "8m"', 'memory', 'at least 16m'),
                            ('data_ratio = 4', 'data_ratio', 'without memory'),
                            ('memory = "64m"\ndata_ratio = 0.5', 'data_ratio',
                             'a number from 1 to 1000'),
                            ('memory = "64m"\nscale = 2\nramdisk = "1g"', 'scale',
                             'at least 18 (data_ratio 4 x memory)'),
                            ('memory = "64m"\nramdisk = "1g"\nshared_buffers = "40m"',
                             'shared_buffers', 'to half of memory'),
                            ('memory = "1g"\ndata_ratio = 1000', 'data_ratio',
                             'scale 1000 or less'),
                            ('memory = "64m"', 'ramdisk', 'at least 704 MiB')):
        try:
            aspec.loads(text(top))
            check(False, f'{top!r} accepted')
        except spec.SpecError as e:
            check(e.field == field and msg in str(e), f'{top!r}: {e}')
    bad = (('workload = "tpcc"', 'workload', "'tpcc' (allowed: tpcb-like, simple-update, "
            'select-only)'),
           ('clients = 0', 'clients', '0 (allowed: an integer from 1 to 64)'),
           ('clients = 3\nthreads = 2', 'threads', 'a divisor of clients'),
           ('duration = 0', 'duration', 'an integer from 1 to 3600'),
           ('scale = 40', 'ramdisk', 'at least 1408 MiB'),
           ('devices = []', 'devices', 'missing'),
           ('devices = ["linear"]', 'devices[0]', 'dm-linear is the baseline'),
           ('devices = ["preset:psss"]', 'devices[0]', 'the module refuses it'),
           ('bogus = 1', 'bogus', 'unknown key'),
           ('[short]\nclients = 0', 'short.clients', 'an integer from 1 to 64'),
           ('warmup = -1', 'warmup', 'an integer from 0 to 3600'),
           ('[short]\nwarmup = 4000', 'short.warmup', 'an integer from 0 to 3600'),
           ('[short]\nramdisk = "1g"', 'short.ramdisk', 'unknown key'))
    for line, field, msg in bad:
        text = '\n'.join(x for x in APP_SPEC.splitlines() if x.split(' = ')[0] not in
                         (line.split(' = ')[0], '[short]') and not x.startswith(('clients = 2',
                                                                                'duration = 1')))
        text = f'{line}\n{text}' if not line.startswith('[') else f'{text}\n{line}\n'
        try:
            aspec.loads(text, tables=True, short=True)
            check(False, f'{line!r} accepted')
        except spec.SpecError as e:
            check(e.field == field and msg in str(e), f'{line!r}: {e}')
    text = '\n'.join(x for x in APP_SPEC.splitlines() if not x.startswith('devices'))
    try:
        aspec.loads(text)
        check(False, 'no devices: accepted')
    except spec.SpecError as e:
        check(e.field == 'devices' and 'missing' in str(e), f'no devices: {e}')
    # on the command line: refused before a VM boots (exit 2, the message,
    # no run directory)
    out = os.path.join(WORK, 'out-app')
    for line, msg in (('workload = "tpcc"', "workload: 'tpcc' (allowed: tpcb-like"),
                      ('clients = 0', 'clients: 0 (allowed: an integer from 1 to 64)'),
                      ('devices = []', 'devices: missing')):
        path = os.path.join(WORK, 'bad-app.toml')
        with open(path, 'w') as fh:
            fh.write(line + '\n' + '\n'.join(x for x in APP_SPEC.splitlines()
                                             if x.split(' = ')[0] != line.split(' = ')[0]))
        res = bench('--outdir', out, 'app', path)
        check(res.returncode == 2 and f'{path}: {msg}' in res.stderr,
              f'pcm-bench app {line}: {res.returncode} {res.stderr[-400:]!r}')
    res = bench('--outdir', out, 'app')
    check(res.returncode == 2 and 'app needs a SPEC' in res.stderr, f'no spec {res}')
    check(not os.path.exists(out), 'no run directory')
    res = bench('app', '--help')
    check(res.returncode == 0 and 'pgbench' in res.stdout and '--short' in res.stdout and
          '--no-figures' in res.stdout, f'app --help: {res.stdout[:300]!r}')
    app_kv_spec()


KV_SPEC = '''
name = "kv-t"
program = "db_bench"
memory = "16m"
data_ratio = 2
value_size = 4000
duration = 5
ramdisk = "512m"
devices = ["preset:onyx"]
[short]
duration = 1
benchmarks = ["fillrandom", "readrandom"]
'''


def app_kv_spec():
    """The spec's program: db_bench's and bdb-swap's keys (appwork.py),
    tools/app/bdb.toml full and --short, their refusals."""
    from pcmbench import appwork
    from pcmbench.app import spec as aspec
    s = aspec.loads(KV_SPEC, tables=True)
    w = s.work
    check((s.program, w.benchmarks, w.value_size, w.threads, w.duration, w.cache_size,
           s.devices()) == ('db_bench', list(appwork.DB_BENCHES), 4000, 1, 5, 1 << 20,
                            ['preset:onyx', 'dm-linear']), f'db_bench settings: {vars(w)}')
    # num random keys drawn of num: 63.2 % distinct, the database 2 x 16 MiB
    check(w.db_bytes() >= 2 * (16 << 20) > (w.num - 1) * appwork.DISTINCT * 4016 and
          w.write_buffer == 2 << 20 and '2.0x the 16 MiB memory cgroup' in s.describe(),
          f'db_bench: the database data_ratio x memory: {w.num} {s.describe()}')
    cmd = w.command('readrandom', '/m/db')
    for word in ('--benchmarks=readrandom', '--use_existing_db=1', '--duration=5', '--sync=1',
                 '--histogram=1', '--cache_size=1048576', f'--num={w.num}',
                 '--compression_type=none', '--ops_between_duration_checks=1'):
        check(word in cmd, f'db_bench: {word} in {cmd}')
    check('--duration' not in w.command('fillrandom', '/m/db') and
          '--use_existing_db=0' in w.command('fillrandom', '/m/db'), 'fillrandom: num keys')
    sh = aspec.loads(KV_SPEC, short=True).work
    check((sh.duration, sh.benchmarks) == (1, ['fillrandom', 'readrandom']), f'[short] {vars(sh)}')
    dbt = open(os.path.join(TOP, 'tools', 'app', 'db_bench.toml')).read()
    b, bs = aspec.loads(dbt, 'db_bench', tables=True), aspec.loads(dbt, 'db_bench', short=True)
    check((b.work.num, b.memory, b.dilation, len(b.devices()), bs.work.num, bs.memory) ==
          (26436, 16 << 20, 16, 3, 1989, 16 << 20) and b.work.db_bytes() >= 4 * (16 << 20),
          f'tools/app/db_bench.toml: {b.describe()}; {bs.describe()}')
    bdb = os.path.join(TOP, 'tools', 'app', 'bdb.toml')
    b = aspec.loads(open(bdb).read(), 'bdb', tables=True)
    check((b.program, b.work.access, b.work.threads, b.work.keys, b.work.warmup, b.work.duration,
           b.work.checkpoint_txns, b.devices()) ==
          ('bdb-swap', ['hash', 'btree'], [1, 2, 4, 8], 279621, 10, 20, 20000,
           ['preset:onyx completion:early', 'preset:iodrive', 'dm-linear']) and
          b.seconds() == 2 * 4 * 30 * 3, f'tools/app/bdb.toml: {vars(b.work)} {b.seconds()}')
    b = aspec.loads(open(bdb).read(), 'bdb', tables=True, short=True)
    check((b.work.keys, b.work.value_bytes, b.work.threads, b.work.duration) ==
          (19738, 1000, [2], 3), f'bdb.toml --short: {vars(b.work)}')
    kv = '\n'.join(x for x in KV_SPEC.split('[short]')[0].splitlines()
                   if not x.startswith(('value_size', 'duration', 'program')))
    bd = kv + '\nprogram = "bdb-swap"\naccess = "btree"\nvalue_bytes = 1000\n'
    b = aspec.loads(bd)
    check(b.work.access == ['btree'] and b.work.db_bytes() >= 2 * (16 << 20) and
          b.work.keys == -(-2 * (16 << 20) // 1020), f'bdb-swap: keys from memory {b.work.keys}')
    db = kv + '\nprogram = "db_bench"\n'
    for text, field, msg in (
            (db.replace('program = "db_bench"', 'program = "ycsb"'), 'program',
             "'ycsb' (allowed: pgbench, db_bench, bdb-swap)"),
            (db + 'clients = 2\n', 'clients', 'unknown key'),
            (db.replace('memory = "16m"', '').replace('data_ratio = 2', ''), 'memory', 'missing'),
            (db + 'benchmarks = ["readrandom"]\n', 'benchmarks', 'fillrandom first'),
            (db + 'benchmarks = ["fillrandom", "readwhilewriting", "readrandom"]\n',
             'benchmarks', 'in that order'),
            (db + 'benchmarks = ["fillrandom", "fillseq"]\n', 'benchmarks[1]', "'fillseq'"),
            (db + 'cache_size = "8m"\n', 'cache_size', 'a quarter of memory'),
            (db + 'value_size = 8\n', 'value_size', 'an integer from 16'),
            (db + 'threads = 0\n', 'threads', 'an integer from 1 to 64'),
            (db.replace('ramdisk = "512m"', 'ramdisk = "128m"'), 'ramdisk', 'at least'),
            (db + '[short]\nworkload = "x"\n', 'short.workload', 'unknown key'),
            (bd + 'cache_mb = 9\n', 'cache_mb', 'at most half of memory'),
            (bd + 'keys = 100\n', 'keys', 'at least 32897'),
            (bd.replace('access = "btree"', 'access = ["hash", "hash"]'), 'access',
             'each at most once'),
            (bd + 'threads = []\n', 'threads', 'an empty list'),
            (bd + 'threads = [1, 100]\n', 'threads[1]', 'an integer from 1 to 64'),
            (bd.replace('memory = "16m"', '').replace('data_ratio = 2', ''), 'keys', 'missing')):
        try:
            aspec.loads(text, tables=True)
            check(False, f'{text!r} accepted')
        except spec.SpecError as e:
            check(e.field == field and msg in str(e), f'{field}: {e}')
    check(aspec.loads(APP_SPEC + '\n').program == 'pgbench' and
          aspec.loads('program = "pgbench"\n' + APP_SPEC).work is None, 'pgbench, the default')


def app_run_json(d):
    """A run.json as the guest writes it: two dm-pcm devices and dm-linear,
    at dilation 4; pgbench's logs beside it."""
    from pcmbench.app import postgres as apg
    os.makedirs(os.path.join(d, 'logs'), exist_ok=True)
    runs = []
    for k, (dev, tps, lat_us) in enumerate((('preset:none', 100.0, 40000),
                                            ('preset:onyx', 50.0, 80000),
                                            ('dm-linear', 104.0, 38000))):
        lats = [lat_us + i * 10 for i in range(100)]
        with open(os.path.join(d, 'logs', f'd{k}.123'), 'w') as fh:
            fh.writelines(f'{i % 4} {i} {v} 0 1795792679 {i}\n' for i, v in enumerate(lats))
        r = {'device': dev, 'k': k, 'dilation': None if dev == 'dm-linear' else 4,
             'overhead_ns': None, 'table': f'0 1 {dev}', 'copy_s': 1.0, 'init_s': 2.0,
             'run_s': 10.0, 'fsck_rc': 0, 'fsck': ['clean'], 'removed': True,
             'blk': {'reads': 50, 'read_sectors': 400, 'read_ms': 5, 'writes': 1000,
                     'write_sectors': 8000, 'write_ms': 100, 'busy_ms': 2500, 'flushes': 100,
                     'flush_ms': 0},
             'pg_blocks': {'hit': 900, 'read': 100},
             'pgbench': {'tps': tps, 'latency_avg_ms': lat_us / 1000, 'transactions': 100,
                         'failed': 0},
             'latency': apg.latency_figures(apg.read_logs(os.path.join(d, 'logs', f'd{k}')))}
        if dev != 'dm-linear':
            r['status'] = {'reads': 50, 'writes': 1000, 'read_lat_mean_ns': 4000,
                           'write_lat_mean_ns': 8000, 'gap_moves': 7, 'ecc_corrected_bits': 0,
                           'wear_max': 0, 'wear_mean': 0, 'write_bytes': 4096000,
                           'read_bytes': 204800, 'held': 1050, 'late': 0, 'flushes': 100}
            r['ranks'] = {'per_rank': [{'util_ppm': 200000}, {'util_ppm': 100000}]}
            # the measured run's blktrace (blkparse's text, xz): writes to
            # 8 hot rows of a 1 MiB device, one every ms of the guest's clock
            lines = [f'253,0    0 {i + 1:8d} {i / 1000:14.9f}  100  Q  WS {(i % 8) * 8} + 8 '
                     '[postgres]' for i in range(2000)]
            lines += ['253,0    0     2001     2.000000000  100  Q FWS [postgres]', '',
                      'CPU0 (253,0):', ' Reads Queued:           0,        0KiB']
            with lzma.open(os.path.join(d, 'logs', f'd{k}-blkparse.txt.xz'), 'wt') as fh:
                fh.write('\n'.join(lines) + '\n')
            r['trace'] = {'file': f'logs/d{k}-blkparse.txt.xz', 'dropped': 0,
                          'sectors': 1 << 11}
            r['cgroup'] = {'max': 32 << 20, 'peak': 32 << 20, 'current': 30 << 20,
                           'file': 20 << 20, 'anon': 2 << 20, 'shmem': 8 << 20,
                           'events_max': 700, 'oom_kill': 0, 'refault_file': 1500,
                           'before': {'events_max': 200, 'refault_file': 500}}
        runs.append(r)
    run = {'kernel': '6.12.0', 'cpus': 1, 'postgres': 'postgres (PostgreSQL) 15.18',
           'pgbench': 'pgbench 15.18', 'date': '2026-11-27T00:00:00Z', 'backing': '/dev/ram0',
           'ramdisk_mib': 256, 'workload': 'pgbench tpcb-like, scale 1, 4 clients, 1 thread, '
           '5 s', 'runs': runs, 'commands': ['mkfs.ext4 -q -F -b 4096 /dev/mapper/char-dut'],
           'wall_s': 60.0, 'dilation': 4, 'calibration': None, 'memory': 32 << 20}
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)
    with open(os.path.join(d, 'spec.toml'), 'w') as fh:
        fh.write(APP_SPEC)


def test_app_report():
    """pcm-bench app's report from a run.json: the per-transaction logs'
    percentiles, the figures on the device's clock (TPS x K, latencies /
    K), where the time went from the status counters, the verdicts, every
    section, app-table.csv, and the figure with its CSV."""
    from pcmbench.app import (postgres as apg, report as arep, results as ares, spec as aspec,
                              tables as atab, verdict as aver)
    lat = apg.latency_figures(list(range(1, 1001)))
    check((lat['n'], lat['mean_us'], lat['p50_us'], lat['p99_us'], lat['p99.9_us'],
           lat['max_us']) == (1000, 500.5, 500, 990, 999, 1000), f'percentiles {lat}')
    pg = apg.parse_pgbench('number of transactions actually processed: 1234\n'
                           'number of failed transactions: 0 (0.000%)\n'
                           'latency average = 3.241 ms\n'
                           'initial connection time = 12.5 ms\n'
                           'tps = 1234.567890 (without initial connection time)\n')
    check(pg == {'tps': 1234.56789, 'latency_avg_ms': 3.241, 'transactions': 1234.0,
                 'failed': 0.0, 'conn_ms': 12.5}, f'pgbench summary {pg}')
    # the halves of a run: pgbench -P 1's intervals weighted by their overlap
    # (a first report at 2.5 s: a slow connection's interval spans both)
    h = apg.halves([(2.5, 100.0), (3.0, 200.0), (4.0, 300.0)], 4)
    check(h == (100.0, (100.0 * 0.5 + 200.0 * 0.5 + 300.0) / 2), f'halves {h}')
    check(apg.halves([], 4) == (None, None), 'halves of no progress')
    d = os.path.join(WORK, 'app-run')
    app_run_json(d)
    s = aspec.loads(APP_SPEC)
    path, rs, run, png = arep.finish(s, d, draw_figs=True, icount=True, host_wall_s=70.0)
    by = {r['device']: r for r in rs}
    none, onyx, lin = by['preset:none'], by['preset:onyx'], by['dm-linear']
    check(none['tps'] == 400 and lin['tps'] == 416 and none['lat_mean_us'] == 40495 / 4,
          f'x K and / K, dm-linear at the run\'s K: {none["tps"]} {lin["tps"]} '
          f'{none["lat_mean_us"]}')
    check(abs(onyx['model_write_us'] - 1000 * 8 / 4 / 100) < 1e-9 and
          abs(onyx['model_read_us'] - 50 * 4 / 4 / 100) < 1e-9,
          f'where the time went: {onyx["model_read_us"]} {onyx["model_write_us"]}')
    check(none['verdict'] == 'host-bound' and '(1.04x)' in none['reason'] and
          onyx['verdict'] == 'device-bound' and lin['verdict'] == 'baseline',
          f'verdicts {[(r["verdict"], r["reason"]) for r in rs]}')
    check(onyx['rank_util_max_pct'] == 20 and onyx['rank_util_mean_pct'] == 15 and
          onyx['write_iops'] == 1000 / (10 / 4) and onyx['busy_pct'] == 25,
          f'device view {onyx}')
    check(atab.time_cell(onyx).startswith('busy 25 % of the run; reads 2 %, writes 98 % of its '
                                         'modeled time (0 + 20 us per transaction)'),
          atab.time_cell(onyx))
    # the cache: reads and writes per transaction, the hit ratios (200 KiB
    # read by the device of 1,000 blocks asked, 100 of them from the kernel)
    check((onyx['dev_reads_per_txn'], onyx['dev_writes_per_txn'], onyx['buffer_hit_pct'],
           onyx['pagecache_hit_pct'], onyx['cache_hit_pct'], onyx['reads_reached']) ==
          (0.5, 10.0, 90.0, 75.0, 97.5, True) and
          abs(onyx['read_share_pct'] - 100 * 0.5 / 20.5) < 1e-9, f'cache figures {onyx}')
    check((lin['dev_reads_per_txn'], lin['cache_hit_pct']) == (0.5, 97.5),
          f'dm-linear: /sys/block/dm-N/stat {lin}')
    check((onyx['memory_max'], onyx['cgroup_limit_hits'], onyx['refaults']) ==
          (32 << 20, 500, 1000) and lin.get('memory_max') is None, f'the cgroup {onyx}')
    check(onyx['oom_kills'] == 0 and 'killed' not in onyx['reason'], 'no OOM kill')
    # the lifetime: 2,000 writes to 8 rows in 2 s of the guest's clock, 0.5
    # s of the device's (K 4); without start-gap the hottest row takes 250
    # a pass; start-gap spreads them
    life = run['runs'][1]['lifetime']
    no, sg = life['no_start_gap'], life['start_gap']
    check(life['passes'] == aspec.WEAR_PASSES and life['speed'] == 4 and
          no['max'] == 250 * aspec.WEAR_PASSES and no['gap_moves'] == 0 and
          abs(no['lifetime_s'] - (no['endurance'] - no['max']) / (no['max'] / (0.5 * aspec.WEAR_PASSES))) <
          0.01 * no['lifetime_s'] and sg['gap_moves'] > 0 and sg['max'] < no['max'] and
          sg['lifetime_s'] > no['lifetime_s'], f'lifetime {life}')
    check(onyx['life_start_gap_s'] == sg['lifetime_s'] and
          atab.life_cell(onyx) == f'{atab.human_secs(sg["lifetime_s"])} / '
          f'{atab.human_secs(no["lifetime_s"])}', f'{atab.life_cell(onyx)}')
    check('--repeat 1000' in life['command'] and '--speed 4' in life['command'] and
          'dilation:4' in life['command'], life['command'])
    check(atab.io_cell(onyx) == '0.5 / 10' and
          atab.hit_cell(onyx) == '97.5 % (buffers 90.0 %, page cache 75.0 %)',
          f'{atab.io_cell(onyx)} {atab.hit_cell(onyx)}')
    check('reads did not reach' not in onyx['reason'], onyx['reason'])
    md = open(path).read()
    check('| `preset:onyx` | 32.0 MiB | 32.0 MiB | 20.0 MiB | 500 | 1000 | yes |' in md,
          'the cache section: the cgroup\'s row')
    for sec in arep.SECTIONS:
        check(f'\n{sec}\n' in md, f'section {sec}')
    check('clock: icount; dilation: 4' in md and 'calibration: uncalibrated' in md,
          'conditions')
    # PostgreSQL's timers, on the guest's clock, K x their defaults
    check(apg.pg_timers(16) == {'wal_writer_delay': '3200ms', 'bgwriter_delay': '3200ms',
                                'checkpoint_timeout': '4800s', 'autovacuum_naptime': '960s'} and
          apg.pg_timers(1) == {} and apg.pg_timers(100)['bgwriter_delay'] == '10000ms',
          f'pg_timers {apg.pg_timers(16)}')
    check("PostgreSQL's timers (the guest's clock, which dilation does not slow): their "
          'defaults (a run before they were scaled by K)' in md, 'timers: an older run')
    rows = list(csv.DictReader(open(os.path.join(d, 'app-table.csv'))))
    check([r['device'] for r in rows] == ['preset:none', 'preset:onyx', 'dm-linear'],
          'app-table.csv')
    check(png and os.path.getsize(png[0]) > 1000 and
          open(png[1]).read().startswith('device,tps,'), f'figure {png}')
    text = arep.headline(rs, run)
    check(text.startswith('clock: icount; dilation: 4') and 'device-bound' in text, text)
    check(apg.parse_progress('progress: 1.0 s, 235.0 tps, lat 8.249 ms stddev 2.330, 0 failed\n'
                             'progress: 2.0 s, 258.0 tps, lat 7.715 ms stddev 1.079\n') ==
          [(1.0, 235.0), (2.0, 258.0)], 'pgbench -P lines')
    # a run whose reads the caches served says so in its verdict
    run = json.load(open(os.path.join(d, 'run.json')))
    run['runs'][1]['status']['reads'] = 0
    run['runs'][1]['status']['read_bytes'] = 0
    onyx = ares.rows(run)[1]
    check(onyx['reads_reached'] is False and onyx['cache_hit_pct'] == 100 and
          onyx['verdict'] == 'device-bound' and
          onyx['reason'].endswith('; reads did not reach the device (0 per transaction, caches '
                                  '100.0 % hits): its read latency is not in this result, only '
                                  'its writes'), f'reads not reached: {onyx["reason"]}')
    run['runs'][1]['cgroup']['oom_kill'] = 2
    check(ares.rows(run)[1]['reason'].endswith('; the memory cgroup killed 2 of the server\'s '
                                              'processes (out of memory: a smaller '
                                              'shared_buffers or a larger memory)'),
          f'OOM kills: {ares.rows(run)[1]["reason"]}')
    check('| `preset:onyx` |' in '\n'.join(atab.cache_lines(ares.rows(run), 32 << 20)) and
          atab.cache_lines([], None)[0].startswith('No memory cgroup'), 'cache lines')
    # a run in which no transaction completed failed: no figure, no verdict
    # (pgbench prints no tps line then); dm-linear's failing leaves the
    # others with nothing to compare, not device-bound
    run = json.load(open(os.path.join(d, 'run.json')))
    out = apg.parse_pgbench('number of transactions actually processed: 0\n'
                            'number of failed transactions: 0 (NaN%)\n')
    check(out['transactions'] == 0 and out['tps'] is None, f'0 transactions {out}')
    run['runs'][1]['pgbench'] = out
    run['runs'][1]['latency'] = apg.latency_figures([])
    rs = ares.rows(run)
    onyx = rs[1]
    check(onyx['verdict'] == aver.FAILED and onyx['tps'] is None and
          onyx.get('tps_vs_linear') is None and 'no transaction completed' in onyx['reason'],
          f'0 transactions: {onyx["verdict"]}: {onyx["reason"]}')
    check(rs[0]['verdict'] == 'host-bound' and rs[2]['verdict'] == 'baseline',
          f'the others: {[(r["verdict"], r["reason"]) for r in rs]}')
    run['runs'][2]['pgbench'] = out
    run['runs'][1]['pgbench'] = {'tps': 50.0, 'transactions': 100}
    rs = ares.rows(run)
    check(rs[2]['verdict'] == aver.FAILED and rs[1]['verdict'] == aver.NO_VERDICT and
          'dm-linear' in rs[1]['reason'],
          f'dm-linear failed: {[(r["verdict"], r["reason"]) for r in rs]}')
    app_kv_report()


def kv_phase(label, text, reads, writes, rchar, read_bytes, extra=None):
    """A measured phase as the guest keeps it (app.WorkCtx.measure)."""
    ph = {'label': label, 'cmd': 'x', 'rc': 0, 'run_s': 2.0, 'p9_requests': None,
          'major_faults': 0, 'proc_io': {'rchar': rchar, 'read_bytes': read_bytes},
          'blk': {'reads': reads, 'read_sectors': read_bytes // 512, 'read_ms': 5,
                  'writes': writes, 'write_sectors': 8 * writes, 'write_ms': 100,
                  'busy_ms': 1000, 'flushes': 10, 'flush_ms': 0},
          'cgroup': {'max': 16 << 20, 'peak': 16 << 20, 'current': 15 << 20, 'file': 9 << 20,
                     'anon': 6 << 20, 'shmem': 0, 'events_max': 300, 'oom_kill': 0,
                     'refault_file': 800, 'before': {'events_max': 100, 'refault_file': 200,
                                                     'oom_kill': 0}}}
    ph.update(extra or {})
    return ph


def app_kv_report():
    """db_bench's and bdb-swap's output parsed (real outputs: db_bench
    7.8.3 of Debian's rocksdb-tools, bdb-swap's on this host), and the
    report of a run of each from its run.json: ops/s x K, latencies / K,
    reads and writes per operation, the page cache's hit ratio from
    rchar, bdb-swap's best thread count."""
    from pcmbench import appwork
    from pcmbench.app import report as arep, spec as aspec, tables as atab, verdict as aver
    fx = os.path.join(TOP, 'tests', 'host', 'fixtures')
    texts = {b: open(os.path.join(fx, f'db_bench-{b}.txt')).read() for b in appwork.DB_BENCHES}
    got = {b: appwork.parse_db_bench(t, b) for b, t in texts.items()}
    check(got['fillrandom'] == {'ops': 6267, 'ops_per_s': 3260.0, 'us_per_op': 306.735,
                                'p50_us': 80.16, 'p99_us': 7735.31, 'p99.9_us': 15466.0,
                                'mean_us': 306.794, 'seconds': 1.922}, f'fillrandom {got}')
    check((got['readrandom']['ops'], got['readrandom']['ops_per_s'], got['readrandom']['p99.9_us'],
           got['readrandom']['found']) == (75999, 37101.0, 6453.41, 50583), f'readrandom {got}')
    check((got['readwhilewriting']['ops_per_s'], got['readwhilewriting']['p50_us'],
           got['readwhilewriting']['p99_us']) == (61973.0, 2.83, 21.87), f'readwhilewriting {got}')
    check(appwork.parse_db_bench('', 'readrandom')['ops_per_s'] is None and
          appwork.parse_db_bench(texts['fillrandom'], 'readrandom')['ops'] is None,
          'db_bench: nothing where the benchmark did not run')
    bdb = open(os.path.join(fx, 'bdb-swap-run.json')).read()
    got = appwork.parse_bdb_swap(bdb)
    check((got['ops'], got['ops_per_s'], got['p50_us'], got['p99_us'], got['p99.9_us'],
           got['deadlocks'], got['log_syncs']) == (8344, 4171.8, 94.5, 5718.0, 9928.7, 1, 6554),
          f'bdb-swap {got}')
    check(appwork.parse_bdb_swap('Segmentation fault')['ops'] is None, 'bdb-swap: no JSON')
    # a db_bench run: onyx and dm-linear, at dilation 4
    d = os.path.join(WORK, 'app-kv-run')
    os.makedirs(d, exist_ok=True)
    runs = []
    for k, dev in enumerate(('preset:onyx', 'dm-linear')):
        phases = [kv_phase(b, texts[b], reads, writes, rchar, rb) for b, reads, writes, rchar, rb in
                  (('fillrandom', 10, 12534, 1 << 20, 40960),
                   ('readrandom', 37100, 0, 400 << 20, 300 << 20),
                   ('readwhilewriting', 20000, 5000, 100 << 20, 100 << 20))]
        if dev == 'dm-linear':
            for ph in phases:   # dm-linear's twice as fast
                ph['result_scale'] = 2
        r = {'device': dev, 'k': k, 'dilation': 4 if dev != 'dm-linear' else None,
             'overhead_ns': None, 'table': f'0 1 {dev}', 'phases': phases, 'load_s': 1.0,
             'fsck_rc': 0, 'fsck': ['clean'], 'removed': True}
        for ph in phases:
            res = appwork.parse_db_bench(texts[ph['label']], ph['label'])
            if ph.pop('result_scale', None):
                res['ops_per_s'] *= 2
            ph['result'] = res
            if dev != 'dm-linear':
                ph['status'] = {'reads': ph['blk']['reads'], 'writes': ph['blk']['writes'],
                                'read_bytes': ph['proc_io']['read_bytes'],
                                'read_lat_mean_ns': 4000, 'write_lat_mean_ns': 8000,
                                'held': 1000, 'late': 0}
            if dev != 'dm-linear' and ph['label'] == 'fillrandom':
                # its blktrace: 2,000 writes to 8 hot rows of 1 MiB in 2 s
                os.makedirs(os.path.join(d, 'logs'), exist_ok=True)
                with lzma.open(os.path.join(d, 'logs', 'd0-0-blkparse.txt.xz'), 'wt') as fh:
                    fh.write('\n'.join(f'253,0    0 {i + 1:8d} {i / 1000:14.9f}  100  Q  WS '
                                       f'{(i % 8) * 8} + 8 [db_bench]' for i in range(2000))
                             + '\n')
                ph['trace'] = {'file': 'logs/d0-0-blkparse.txt.xz', 'dropped': 0,
                               'sectors': 1 << 11}
        runs.append(r)
    run = {'kernel': '6.12.0', 'cpus': 2, 'program': 'db_bench', 'version': 'db_bench 7.8.3',
           'date': '2026-12-07T00:00:00Z', 'backing': '/dev/ram0', 'ramdisk_mib': 256,
           'memory': 16 << 20, 'workload': 'db_bench ...', 'runs': runs,
           'commands': ['db_bench --benchmarks=fillrandom'], 'wall_s': 60.0, 'dilation': 4,
           'calibration': None}
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)
    with open(os.path.join(d, 'spec.toml'), 'w') as fh:
        fh.write(KV_SPEC)
    s = aspec.loads(KV_SPEC)
    path, rs, run, png = arep.finish(s, d, draw_figs=True, icount=True, host_wall_s=70.0)
    by = {(r['device'], r['bench']): r for r in rs}
    fill, rr = by[('preset:onyx', 'fillrandom')], by[('preset:onyx', 'readrandom')]
    check(len(rs) == 6 and fill['ops_per_s'] == 3260 * 4 and fill['lat_p99_us'] == 7735.31 / 4
          and by[('dm-linear', 'fillrandom')]['ops_per_s'] == 3260 * 2 * 4,
          f'ops/s x K, latencies / K, dm-linear at the run\'s K: {fill}')
    check(fill['ops_vs_linear'] == 0.5 and fill['verdict'] == 'device-bound' and
          '2.00x dm-linear\'s time per operation' in fill['reason'], f'verdict {fill}')
    check(abs(rr['dev_reads_per_op'] - 37100 / 75999) < 1e-12 and rr['dev_writes_per_op'] == 0 and
          rr['read_share_pct'] == 100 and rr['pagecache_hit_pct'] == 25.0 and
          abs(fill['write_share_pct'] - 100 * 12534 * 8 / (12534 * 8 + 10 * 4)) < 1e-9,
          f'per operation, shares, the page cache\'s hits (1 - 300 / 400 MiB): {rr}')
    life = run['runs'][0]['phases'][0]['lifetime']
    no, sg = life['no_start_gap'], life['start_gap']
    check(life['passes'] == aspec.WEAR_PASSES and life['speed'] == 4 and
          no['max'] == 250 * aspec.WEAR_PASSES and sg['gap_moves'] > 0 and sg['max'] < no['max']
          and fill['life_no_start_gap_s'] == no['lifetime_s'] and
          'lifetime' not in run['runs'][0]['phases'][1] and rr.get('life_start_gap_s') is None,
          f'the traced phase\'s lifetime, the others none: {life}')
    check(json.load(open(os.path.join(d, 'run.json')))['runs'][0]['phases'][0]['lifetime'] ==
          life, 'kept in run.json')
    check(by[('dm-linear', 'readrandom')]['pagecache_hit_pct'] == 25.0 and
          by[('dm-linear', 'readrandom')]['verdict'] == 'baseline', 'dm-linear: its diskstats')
    check(rr['cgroup_limit_hits'] == 200 and rr['refaults'] == 600 and rr['oom_kills'] == 0,
          f'the cgroup {rr}')
    md = open(path).read()
    for sec in appwork.SECTIONS:
        check(f'\n{sec}\n' in md, f'db_bench report: section {sec}')
    check(f'| `preset:onyx` | fillrandom | {aspec.WEAR_PASSES} | {atab.human_secs(sg["lifetime_s"])} |'
          in md and f'| {atab.life_cell(fill)} |' in md.split('\n## The cache\n')[0] and
          '--speed 4 --repeat 1000' in md.split('\n## Lifetime\n')[1], 'the lifetime in the report')
    check('| device | benchmark | ops/s |' in md and 'TPS' not in md.split('## The cache')[0]
          and '| `preset:onyx` | readrandom | 148,404 | 0.5x |' in md, 'the table: ops/s')
    rows = list(csv.DictReader(open(os.path.join(d, 'app-table.csv'))))
    check([(r['device'], r['bench']) for r in rows][:3] == [
        ('preset:onyx', b) for b in appwork.DB_BENCHES], 'app-table.csv')
    text = appwork.headline(rs, run)
    check(text.startswith('clock: icount; dilation: 4') and 'ops/s' in text, text)
    # a phase that failed: its verdict
    run['runs'][0]['phases'][1]['rc'] = 1
    check(appwork.rows(run)[1]['verdict'] == aver.FAILED, 'a phase that exited 1: failed')
    run['runs'][0]['phases'][1]['rc'] = 0
    run['runs'][0]['phases'][2]['status']['reads'] = 0
    check('reads did not reach the device' in appwork.rows(run)[2]['reason'], 'reads not reached')
    # bdb-swap: a sweep of 1, 2, 4 threads: the best is each device's figure
    run['program'] = 'bdb-swap'
    for r in run['runs']:
        r['phases'] = []
        for t, ops in ((1, 100.0), (2, 300.0), (4, 200.0)):
            lin1 = r['device'] == 'dm-linear' and t == 1   # dm-linear's best at 1 and 2
            out = bdb.replace('"ops_per_s": 4171.8', f'"ops_per_s": {ops * (2 if lin1 else 1)}')
            ph = kv_phase(f'hash x{t}', out, 100, 1000, 1 << 20, 1 << 19,
                          {'access': 'hash', 'threads': t})
            ph['result'] = appwork.parse_bdb_swap(out)
            r['phases'].append(ph)
        r['verify'] = {'hash': {'ok': True}}
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)
    bs = aspec.loads(open(os.path.join(TOP, 'tools', 'app', 'bdb.toml')).read(), 'bdb')
    path, rs, run, png = arep.finish(bs, d, draw_figs=False)
    check([(r['device'], r['bench'], r['threads'], r['ops_per_s']) for r in rs] ==
          [('preset:onyx', 'hash', 2, 1200.0), ('dm-linear', 'hash', 2, 1200.0)] and
          rs[0]['sweep'] == [[1, 400.0], [2, 1200.0], [4, 800.0]] or
          rs[0]['sweep'] == [(1, 400.0), (2, 1200.0), (4, 800.0)], f'the best thread count {rs}')
    check(rs[0]['pagecache_hit_pct'] == 50.0 and rs[0]['deadlocks'] == 1 and
          rs[0]['verdict'] == 'host-bound', f'bdb-swap row {rs[0]}')
    md = open(path).read()
    check('| device | benchmark (the best thread count) | ops/s |' in md and
          '`preset:onyx` hash: 1: 400, 2: 1,200, 4: 800' in md and
          "verify: {'hash': {'ok': True}}" in md, 'bdb-swap report: the sweep')
    check('## The paper' not in md, 'no paper section without Onyx and the ioDrive')
    # Onyx's Figure 5: Onyx early over the ioDrive, each at its best thread count
    onyx, iod = 'preset:onyx completion:early', 'preset:iodrive'

    def row(dev, bench, ops, t, late=0):
        return {'device': dev, 'bench': bench, 'ops_per_s': ops, 'threads': t, 'held': 1000 - late,
                'late': late}
    prs = appwork.paper_rows([row(onyx, 'hash', 1220.0, 4), row(iod, 'hash', 1000.0, 1),
                              row(onyx, 'btree', 500.0, 4), row(iod, 'btree', 1000.0, 1)])
    by = {p['key']: p for p in prs}
    check(len(prs) == 2 and by['iodrive.bdb.hash']['measured'] == 1.22 and
          by['iodrive.bdb.hash']['verdict'] == 'reproduced' and
          by['iodrive.bdb.hash']['onyx_threads'] == 4 and
          by['iodrive.bdb.btree']['measured'] == 0.5 and
          by['iodrive.bdb.btree']['verdict'] == 'not reproduced' and
          '-26.0 % from the paper' in by['iodrive.bdb.btree']['reason'], f'Figure 5 {prs}')
    prs = appwork.paper_rows([row(onyx, 'btree', 500.0, 4, late=100), row(iod, 'btree', 1000.0, 1)])
    check([p['verdict'] for p in prs] == ['host-bound'] and '100 of 2000 completions late'
          in prs[0]['reason'], f'late completions: host-bound {prs}')
    check(appwork.paper_rows([row(onyx, 'hash', 1.0, 4), row('preset:onyx', 'hash', 1.0, 1)])
          == [], 'no ioDrive: no row')
    for r, dev in zip(run['runs'], (onyx, iod)):
        r['device'] = dev
    with open(os.path.join(d, 'run.json'), 'w') as fh:
        json.dump(run, fh)
    path, rs, run, png = arep.finish(bs, d, draw_figs=False)
    md = open(path).read()
    pt = json.load(open(os.path.join(d, 'paper-table.json')))
    check('\n## The paper\n' in md and len(pt) == 1 and pt[0]['key'] == 'iodrive.bdb.hash' and
          pt[0]['measured'] == 1200.0 / 1200.0 and pt[0]['verdict'] == 'not reproduced' and
          '| 1.21x | 1x |' in md, f'the report\'s paper section {pt}')


def main():
    cases = (
        test_spec_points, test_spec_sweeps, test_example_specs, test_spec_errors, test_job_files,
        test_fio_parse, test_statistics, test_points_csv, test_figure_ratios,
        test_figure_onyx_and_cdf, test_figure_gap, test_figure_words, test_report, test_trace_parsing,
        test_finish_from_fixtures, test_spec_tables_libpcm, test_bench_cli, test_rundir,
        test_report_versus, test_papers_table, test_verdict, test_papers_rst, test_dilate,
        test_guest_recording,
        test_calibrate_function, test_char_imports_no_pcmbench, test_finish_dilated,
        test_spec_dilation,
        test_bench_cli_dilation, test_run_clock_defaults, test_read_raw_xz,
        test_warmup_ios, test_backing_dev, test_latency_is_lat, test_rank_heatmap,
        test_bench_counters, test_bench_trace, test_ecc_profile, test_app_spec, test_app_report)
    return tap.run_all(cases, cleanup=lambda: shutil.rmtree(WORK, ignore_errors=True))


if __name__ == '__main__':
    sys.exit(main())
