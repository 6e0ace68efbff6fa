#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make demo, the README's first command, end to end: "make demo NATIVE=1"
# (the README's form for a host that loads modules) runs tools/demo's host
# part and its guest part here, the same code as in its own VM (--short:
# fio jobs of 1 s; --no-build: the module built for this kernel; --outdir:
# the tree is read-only here).  Then its summary is checked from the raw
# figures: fsck clean, the table as long as 'pcmctl length' says, and
# dm-pcm's counters consistent with the bytes fio moved.
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
out=/tmp/demo
rm -rf $out
make -s -C "$PCM_ROOT" demo NATIVE=1 DEMO_ARGS="--short --no-build --outdir $out" \
	> /tmp/demo.out 2>&1
rc=$?
sed 's/^/# demo: /' /tmp/demo.out
expect_eq "make demo NATIVE=1 (short) exits 0" "$rc" 0
expect "it printed the pcmctl commands it ran" grep -q '^# tools/pcmctl create pcm-demo /dev/ram0' /tmp/demo.out
[ -s $out/summary.json ] || { fail "summary.json written"; finish; }

# the summary's own figures, checked here without the demo's verdicts
expect "summary: fsck clean, table, counters against fio" python3 - $out/summary.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
st, jobs = s['status'], s['fio']
ok = True
def check(what, cond):
    global ok
    print(f"# {'ok' if cond else 'FAILED'}: {what}")
    ok &= bool(cond)
check('fsck.ext4 -fn clean', s['fsck_clean'] is True)
table = s['table'].split()
check(f"table length {table[1]} is pcmctl length's {s['length']}", int(table[1]) == s['length'])
check('four fio jobs, each moved data', len(jobs) == 4 and all(j['read_bytes'] + j['write_bytes'] > 0 for j in jobs))
fr = sum(j['read_bytes'] for j in jobs)
fw = sum(j['write_bytes'] for j in jobs)
rb, wb = st['read_bytes'], st['write_bytes']
check(f'dm-pcm read at least what fio read ({rb} >= {fr})', rb >= fr)
check(f'dm-pcm wrote at least what fio wrote ({wb} >= {fw})', wb >= fw)
check(f'and not twice as much ({rb} < 2 * {fr} + 96 MiB, {wb} < 2 * {fw} + 96 MiB)',
      rb < 2 * fr + (96 << 20) and wb < 2 * fw + (96 << 20))
check('4 KiB rows: pieces >= bytes / 4096', st['reads'] * 4096 >= rb and st['writes'] * 4096 >= wb)
check('gap moves happened (default gap_interval 128)', st['gap_moves'] >= st['writes'] // 128 - 1 > 0)
check('no move failed, metadata ok', st['move_errors'] == 0 and st['metadata'] == 'ok')
check("the demo's own checks all passed", all(c['ok'] for c in s['checks']))
sys.exit(0 if ok else 1)
PY
# the characterization: pss and onyx beside their papers, the report and its figures
expect "it printed pss's and onyx's QD1 read latency beside their papers" \
	bash -c "grep -q '^pss: 4 KB random read, QD1, latency ' /tmp/demo.out &&
		grep -q '^onyx: 4 KB random read, QD1, latency ' /tmp/demo.out"
expect "the report, its figure and every run in points.csv" python3 - $out/char/demo <<'PY'
import csv, os, sys
d = sys.argv[1]
md = open(os.path.join(d, 'report.md')).read()
rows = list(csv.DictReader(open(os.path.join(d, 'points.csv'))))
runs = sorted((r['on'], r['rw'], r['iodepth']) for r in rows)
want = sorted([('preset:pss', 'randread', '1'), ('preset:pss', 'randread', '32'),
               ('preset:pss', 'randwrite', '1'), ('preset:onyx', 'randread', '1'),
               ('preset:onyx', 'randread', '64'), ('preset:onyx', 'randwrite', '1'),
               ('dm-linear', 'randread', '1'), ('dm-linear', 'randread', '32'),
               ('dm-linear', 'randread', '64'), ('dm-linear', 'randwrite', '1')])
ok = runs == want and all(r['target'] == 'ext4' for r in rows)
print(f"# {'ok' if ok else 'FAILED'}: points.csv {runs}")
for s in ('## Paper vs dm-pcm', '## Figures', '## Devices', '## Commands'):
    ok &= s in md
ok &= os.path.getsize(os.path.join(d, 'figures', 'pss-cdf.png')) > 0
sys.exit(0 if ok else 1)
PY
expect "the device and the ramdisk are gone" bash -c "! dmsetup info pcm-demo >/dev/null 2>&1 && [ ! -e /sys/module/brd ]"
finish
