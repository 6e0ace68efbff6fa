#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The README's other make targets that run something in a VM, in short
# form, as a user on a host that loads modules runs them (NATIVE=1):
# make bench (one round of 0.5 s per job) and make soak (a quarter of a
# minute: its shortest fio storm, 10 s).
# Their results must be whole: every workload measured on every device,
# and the soak's PASS with its summary's verdict empty.  (make demo is
# 23's; make check is this suite; make unit, make lint and the other make
# commands' dry forms are the host unit tests' test-readme-make.py.)
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
out=/tmp/readme-make
rm -rf $out

make -s -C "$PCM_ROOT" bench NATIVE=1 \
	BENCH_ARGS="--no-build --outdir $out/bench --runtime 0.5 --rounds 1 passthrough" \
	> /tmp/bench.out 2>&1
rc=$?
sed 's/^/# bench: /' /tmp/bench.out | tail -20
expect_eq "make bench NATIVE=1 (one round) exits 0" "$rc" 0
expect "bench: 4 workloads x brd, dm-linear, dm-pcm, each with IOPS" python3 - $out/bench <<'PY'
import glob, json, sys
files = glob.glob(sys.argv[1] + '/passthrough-*.json')
rows = json.load(open(files[0]))['summary'] if len(files) == 1 else []
cells = {(r['rw'], r['qd'], r['device']) for r in rows if r['iops'] > 0}
print(f'# {len(files)} result file(s), {len(cells)} workload/device cells with IOPS > 0')
sys.exit(0 if len(cells) == 12 else 1)
PY

make -s -C "$PCM_ROOT" soak NATIVE=1 SOAK_MINUTES=0.25 SOAK_ARGS="--no-build --outdir $out/soak" \
	> /tmp/soak.out 2>&1
rc=$?
sed 's/^/# soak: /' /tmp/soak.out | tail -30
expect_eq "make soak NATIVE=1 SOAK_MINUTES=0.25 exits 0" "$rc" 0
expect "soak: PASS" grep -qx PASS /tmp/soak.out
expect "soak: summary with an empty verdict, data written and verified" python3 - $out/soak/summary.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"# verdict {s['verdict']}, storm wrote {s['fio_storm']['written']} B, "
      f"verify_only read {s['fio_verify_only'].get('read', '?')} B")
sys.exit(0 if not s['verdict'] and s['fio_storm']['written'] > 0 else 1)
PY
finish
