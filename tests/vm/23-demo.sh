#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make demo, the README's first command, end to end: "make demo NATIVE=1"
# (the README's form for a host that loads modules) runs tools/demo's host
# part and its guest part here, the same code as in its own VM (--short:
# fio jobs of 1 s; --no-build: the module built for this kernel; --outdir:
# the tree is read-only here; here, not under icount: dilation 1,
# calibrated as on a real host; --no-figures: matplotlib's import and
# drawing took ~200 of this test's ~370 s under TCG, and the figures are
# the host tests' (test-char.py draws every one and checks its PNG)).  Then its summary is checked from the raw
# figures: fsck clean, the table as long as 'pcmctl length' says, the
# calibration measured and set, and dm-pcm's counters consistent with the
# bytes fio moved.
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
out=/tmp/demo
rm -rf $out
make -s -C "$PCM_ROOT" demo NATIVE=1 DEMO_ARGS="--short --no-build --no-figures --outdir $out" \
	> /tmp/demo.out 2>&1
rc=$?
sed 's/^/# demo: /' /tmp/demo.out
expect_eq "make demo NATIVE=1 (short) exits 0" "$rc" 0
expect "it printed the pcmctl commands it ran" grep -q '^# tools/pcmctl create pcm-demo /dev/ram0' /tmp/demo.out
[ -s $out/summary.json ] || { fail "summary.json written"; finish; }

# the summary's own figures, checked here without the demo's verdicts
expect "summary: fsck clean, table, counters against fio" py - $out/summary.json "$PCM_ROOT/tools" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[2])
from pcmlib import tap
s = json.load(open(sys.argv[1]))
st, jobs = s['status'], s['fio']
def check(what, cond):
    tap.check(cond, what, shown=True)
check('fsck.ext4 -fn clean', s['fsck_clean'] is True)
table = s['table'].split()
check(f"table length {table[1]} is pcmctl length's {s['length']}", int(table[1]) == s['length'])
check(f"preset onyx, calibrated: {s['table']}", s['preset'] == 'onyx' and
      'preset:onyx' in table and s['overhead_ns'] and
      f"overhead_ns:{s['overhead_ns']['read']}" in table and s['dilation'] == 1)
check('four fio jobs, each moved data', len(jobs) == 4 and all(j['read_bytes'] + j['write_bytes'] > 0 for j in jobs))
fr = sum(j['read_bytes'] for j in jobs)
fw = sum(j['write_bytes'] for j in jobs)
rb, wb = st['read_bytes'], st['write_bytes']
check(f'dm-pcm read at least what fio read ({rb} >= {fr})', rb >= fr)
check(f'dm-pcm wrote at least what fio wrote ({wb} >= {fw})', wb >= fw)
check(f'and not twice as much ({rb} < 2 * {fr} + 96 MiB, {wb} < 2 * {fw} + 96 MiB)',
      rb < 2 * fr + (96 << 20) and wb < 2 * fw + (96 << 20))
check('4 KiB rows: pieces >= bytes / 4096', st['reads'] * 4096 >= rb and st['writes'] * 4096 >= wb)
check('gap moves happened (gap_interval 128 in each of onyx\'s 8 domains)',
      st['writes'] // 128 >= st['gap_moves'] >= st['writes'] // 128 - 8 > 0)
check('no move failed, metadata ok', st['move_errors'] == 0 and st['metadata'] == 'ok')
check("the demo's own checks all passed", all(c['ok'] for c in s['checks']))
sys.exit(tap.exit_code())
PY
# the characterization (tools/char/demo.toml, --short: its QD1 points):
# pss, onyx and reram beside their papers and the model, each with a
# verdict, where the time went, the report, its figures and CSVs
expect "it printed pss's, onyx's and reram's QD1 read latency, each with a verdict" \
	bash -c "grep -Eq '^pss: 4 KB random read, QD1, latency .*(reproduced|host-bound|model-differs-from-paper|not reproduced)' /tmp/demo.out &&
		grep -q '^onyx: 4 KB random read, QD1, latency ' /tmp/demo.out &&
		grep -q '^reram: 256 B random read, QD1, mean latency' /tmp/demo.out &&
		grep -q \"^where each I/O's time went\" /tmp/demo.out &&
		grep -q '^clock: real time; dilation: 1 ' /tmp/demo.out &&
		grep -q '^report:  $out/char/demo/report.md' /tmp/demo.out"
expect "the report has every section, the CSVs every point asked for" \
	py - $out/char/demo "$PCM_ROOT/tools" <<'PY'
import csv, os, sys
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from pcmlib import tap
def check(what, cond):
    tap.check(cond, what, shown=True)
md = open(os.path.join(d, 'report.md')).read()
for s in ('# dm-pcm characterization: demo', '## Paper vs dm-pcm', '## Figures', '## Points',
          '## Rank utilisation', '## blktrace', '## Devices', '## Commands', '## Spec'):
    check(f'section {s}', f'\n{s}\n' in '\n' + md)
rows = list(csv.DictReader(open(os.path.join(d, 'points.csv'))))
runs = sorted((r['on'], r['rw'], r['iodepth'], r['side']) for r in rows)
want = sorted([(dev, rw, '1', rw[4:]) for dev in ('preset:pss', 'preset:onyx')
               for rw in ('randread', 'randwrite')] +
              [('preset:reram', 'randread', '1', 'read')] +
              # dm-linear: 4 KiB and 512 B reads; plain writes and PSS's after
              # its warm-up (another workload)
              [('dm-linear', rw, '1', rw[4:]) for rw in ('randread', 'randread', 'randwrite',
                                                          'randwrite')])
check(f'points.csv: each QD1 point on pss, onyx, reram and dm-linear: {runs}', runs == want)
# each dm-pcm device's table of its "ranks" reply after each of its
# points: a row per point, its busiest rank busy
ranks = md.split('\n## Rank utilisation\n')[-1].split('\n## ')[0]
for dev in ('preset:pss', 'preset:onyx', 'preset:reram'):
    sub = ranks.split(f'\n### `{dev}`\n')[1].split('\n### ')[0] if f'### `{dev}`' in ranks else ''
    got = [ln.split('|')[-3].strip() for ln in sub.splitlines()
           if ln.startswith('| ') and not ln.startswith('| point ')]
    check(f'rank utilisation of {dev}: busiest rank % per point {got}',
          len(got) == sum(r['on'] == dev for r in rows) and
          all(g.replace('.', '', 1).isdigit() and float(g) > 0 for g in got))
check('raw device, 2 repetitions each, IOPS > 0',
      all(r['target'] == 'raw' and r['reps'] == '2' and float(r['iops']) > 0 for r in rows))
pss = next(r for r in rows if (r['on'], r['rw']) == ('preset:pss', 'randread'))
lat, oh = float(pss['lat_mean_us']), int(pss['overhead_ns'] or 0) / 1000
# a completion is held to its modeled instant, less the overhead_ns the
# calibration gave the device: pss's 4 KiB read, 34.96 us
check(f"pss reads held: {lat:.1f} us >= 34.96 - overhead_ns {oh:.1f} us - 0.5",
      oh > 0 and lat >= 34.96 - oh - 0.5)
check('job files', all('stonewall' in open(os.path.join(d, 'jobs', f)).read()
                       for f in os.listdir(os.path.join(d, 'jobs'))))
check('--no-figures: no figure drawn, and the report says so',
      not os.path.exists(os.path.join(d, 'figures')) and '--no-figures' in md)
check('the devices: table line and config reply', md.count('dmsetup table: 0 ') == 4 and
      'config: ' in md)
sys.exit(tap.exit_code())
PY
expect "the device and the ramdisk are gone" bash -c "! dmsetup info pcm-demo >/dev/null 2>&1 && [ ! -e /sys/module/brd ]"
finish
