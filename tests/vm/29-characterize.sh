#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# pcm-bench characterize end to end, here (--native --no-build, as 23-demo
# runs make demo): a tiny spec on preset:none and preset:pss, 4 KiB random
# reads and writes at QD1, 2 repetitions of 0.5 s.  The report must have
# every section, the CSV every point on every device, the figures their
# PNG and CSV, and pss's modeled latency must show in what fio measured.
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || skip_all "python3-matplotlib not installed"
out=/tmp/char
spec=/tmp/char-vm.toml
rm -rf $out
cat > $spec <<'EOF'
name = "vm"
repetitions = 2
runtime = 0.5
warmup = 0.2
ramdisk = "64m"
[axes]
device = ["preset:none", "preset:pss"]
rw = ["randread", "randwrite"]
size = "16m"
EOF
"$PCM_ROOT/tools/pcm-bench" --native --no-build --outdir $out characterize $spec \
	> /tmp/char.out 2>&1
rc=$?
sed 's/^/# char: /' /tmp/char.out | grep -v '^# char: # [0-9]*/' | tail -40
expect_eq "pcm-bench characterize exits 0" "$rc" 0
run=$(ls -d $out/char/vm-* 2>/dev/null | head -1)
[ -n "$run" ] && [ -s "$run/report.md" ] || { fail "report.md written"; finish; }
expect "it showed its progress (6 runs)" grep -q '^# 6/6: ' /tmp/char.out
expect "it printed the headline table and the report's path" \
	grep -q "^report: $run/report.md" /tmp/char.out

expect "report, CSV, job files and figures hold what was asked" python3 - "$run" <<'PY'
import csv, os, sys
run = sys.argv[1]
md = open(os.path.join(run, 'report.md')).read()
ok = True
def check(what, cond):
    global ok
    print(f"# {'ok' if cond else 'FAILED'}: {what}")
    ok &= bool(cond)
for s in ('# dm-pcm characterization: vm', '## Paper vs dm-pcm', '## Figures', '## Points',
          '## blktrace', '## Devices', '## Commands', '## Spec'):
    check(f'section {s}', f'\n{s}\n' in '\n' + md)
rows = list(csv.DictReader(open(os.path.join(run, 'points.csv'))))
got = sorted((r['point'], r['on'], r['rw'], r['side']) for r in rows)
want = sorted([('p001', 'preset:none', 'randread', 'read'), ('p002', 'preset:none', 'randwrite', 'write'),
               ('p003', 'preset:pss', 'randread', 'read'), ('p004', 'preset:pss', 'randwrite', 'write'),
               ('p001', 'dm-linear', 'randread', 'read'), ('p002', 'dm-linear', 'randwrite', 'write')])
check(f'points.csv: every point on its device and each workload on dm-linear {got}', got == want)
check('2 repetitions each, IOPS > 0', all(r['reps'] == '2' and float(r['iops']) > 0 for r in rows))
for p in ('p001', 'p002', 'p003', 'p004'):
    check(f'job file {p}', 'stonewall' in open(os.path.join(run, 'jobs', p + '.fio')).read())
for f in ('pss-cdf.png', 'pss-cdf.csv'):
    check(f'figure {f}', os.path.getsize(os.path.join(run, 'figures', f)) > 0)
lat = {(r['on'], r['rw']): float(r['clat_mean_us']) for r in rows}
# the pss preset holds a 4 KiB read for about 35 us (pcmctl model)
check(f"pss reads held: {lat[('preset:pss', 'randread')]:.1f} us >= 30 and more than "
      f"dm-linear's {lat[('dm-linear', 'randread')]:.1f}",
      lat[('preset:pss', 'randread')] >= 30 > lat[('dm-linear', 'randread')] or
      lat[('preset:pss', 'randread')] >= max(30, lat[('dm-linear', 'randread')] + 20))
check('the headline table: pss 4 KB random read latency, paper 35 us',
      '| 4 KB random read, QD1, latency (PSS' in md and '| 35 us |' in md)
check('the device table line and config reply', 'dmsetup table: 0 ' in md and 'config: ' in md)
sys.exit(0 if ok else 1)
PY
expect "the device and the ramdisk are gone" bash -c "! dmsetup info char-dut >/dev/null 2>&1 && [ ! -e /sys/module/brd ]"
finish
