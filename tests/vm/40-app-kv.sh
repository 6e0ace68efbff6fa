#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# pcm-bench app's other programs end to end (tools/pcmbench/appwork.py),
# each on ext4 over preset:onyx in a 16 MiB memory cgroup, as
# "pcm-bench app --native" runs them on a real host (--short, --no-build,
# --outdir, --no-figures, --no-calibrate: as 37-app): 1. RocksDB's
# db_bench: fillrandom with a synced WAL (16 KB values: a synced put
# costs about the same whatever its size, 60 to 220 a second of TCG in
# these runs), readrandom and readwhilewriting on the database it
# filled, 1.2x the cgroup; 2. bdb-swap (Onyx's Figure 5,
# tools/app/bdb-swap.c, built on the host before the VM boots: make
# tools), hash, 2 threads, the database ~1.2x the cgroup.  Behaviour
# only, a few seconds of each: the program ran, the cgroup bounded its
# cache, the device served the read phases' reads, fsck clean, the
# device removed, the report complete.
# Cost: 166 s at PCM_SCALE=25 on 6.12 under TCG after 37-app in the same
# boot (db_bench's section 48 s, bdb-swap's 105 s at 1.5x; the host at load
# ~2-3 with another VM), 255 to 590 s alone in a boot (the first pcm-bench
# of a boot spends 60 to 245 s before its device, Python and the programs
# read over 9p; 590 s at this commit: Documentation/testing/budget-log.md).
. "$(dirname "$0")/lib/lib.sh"

out=/tmp/app-kv
rm -rf $out

# check_run NAME PROGRAM READ_PHASES: run.json and the report of a run
check_run() {
	local dir
	dir=$out/app/$1-$(uname -r)
	[ -s "$dir/run.json" ] || { fail "$1: run.json written in $dir"; return; }
	expect "$1: no device, mount nor cgroup left" \
		bash -c "! mountpoint -q /tmp/pcm-app/mnt && ! test -e /sys/fs/cgroup/pcm-app &&
			! dmsetup info char-dut >/dev/null 2>&1"
	expect "$1: run.json: each phase ran, the cgroup bounded the cache, reads reached the device" \
		py - "$dir" "$2" "$3" "$PCM_ROOT/tools" <<'PY'
import json, os, sys
d, program, reads = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
sys.path.insert(0, sys.argv[4])
from pcmlib import tap
run = json.load(open(os.path.join(d, 'run.json')))
def check(what, cond):
    tap.check(cond, what, shown=True)
check(f'program {run.get("program")}', run.get('program') == program)
r = run['runs'][0]
check(f'{r["device"]}: no error ({r.get("error")}), fsck clean ({r["fsck"]}), removed',
      not r.get('error') and r['fsck_rc'] == 0 and r['removed'])
for ph in r['phases']:
    res, st = ph['result'], ph.get('status') or {}
    cg, io = ph.get('cgroup') or {}, ph.get('proc_io') or {}
    check(f'{ph["label"]}: exit {ph["rc"]}, {res.get("ops")} ops, {res.get("ops_per_s")} ops/s, '
          f'p50 {res.get("p50_us")} p99 {res.get("p99_us")} p99.9 {res.get("p99.9_us")} us, '
          f'{ph["run_s"]:.1f} s', ph['rc'] == 0 and res.get('ops') and res.get('ops_per_s') and
          res.get('p99.9_us') is not None and res['p99_us'] >= res['p50_us'])
    check(f'{ph["label"]}: the cgroup bounded it (max {cg.get("max")}, peak {cg.get("peak")}, '
          f'page cache {cg.get("file")}, OOM kills {cg.get("oom_kill")})',
          cg.get('max') == 16 << 20 and 0 < cg.get('peak', 0) <= cg['max'] and
          not cg.get('oom_kill'))
    check(f'{ph["label"]}: the device saw it: reads {st.get("reads")}, writes {st.get("writes")}; '
          f'the program read {io.get("rchar")} B', st.get('reads', 0) + st.get('writes', 0) > 0
          and io.get('rchar', 0) > 0)
    if ph['label'].split()[0] in reads:
        check(f'{ph["label"]}: its reads reached the device ({st.get("reads")})',
              st.get('reads', 0) > 0)
sys.exit(tap.exit_code())
PY
	expect "$1: the report has every section, a row per benchmark, ops/s and a verdict" \
		py - "$dir" "$PCM_ROOT/tools" <<'PY'
import csv, os, sys
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from pcmbench.appwork import SECTIONS
md = open(os.path.join(d, 'report.md')).read()
rows = list(csv.DictReader(open(os.path.join(d, 'app-table.csv'))))
ok = all(f'\n{s}\n' in md for s in SECTIONS) and '| ops/s |' in md and bool(rows)
for r in rows:
    print(f'# {r["device"]} {r["bench"]}: {r["ops_per_s"]} ops/s, reads/writes per op '
          f'{r["dev_reads_per_op"]}/{r["dev_writes_per_op"]}, shares {r["read_share_pct"]}/'
          f'{r["write_share_pct"]}, page cache hits {r["pagecache_hit_pct"]} %: {r["verdict"]}')
    ok &= (float(r['ops_per_s']) > 0 and r['dev_writes_per_op'] != '' and
           r['pagecache_hit_pct'] != '' and r['verdict'] in ('device-bound', 'host-bound'))
sys.exit(0 if ok else 1)
PY
}

# 1. db_bench
if ! [ -x /usr/bin/db_bench ]; then
	skip "db_bench not installed (tools/install-deps: rocksdb-tools)"
else
	cat > /tmp/app-kv-db.toml <<'TOML'
name = "kv-db"
program = "db_bench"
memory = "16m"
data_ratio = 1.2
value_size = 16000
duration = 2
ramdisk = "192m"
baseline = false
devices = ["preset:onyx"]
TOML
	start=$SECONDS
	"$PCM_ROOT"/tools/pcm-bench app --native --no-build --no-figures --no-calibrate --short \
		--outdir $out /tmp/app-kv-db.toml > /tmp/app-kv-db.out 2>&1
	rc=$?
	sed 's/^/# app: /' /tmp/app-kv-db.out
	note "pcm-bench app db_bench --short: $((SECONDS - start)) s"
	expect_eq "pcm-bench app (db_bench) exits 0" "$rc" 0
	check_run kv-db db_bench readrandom,readwhilewriting
fi

# 2. bdb-swap
if ! [ -x "$PCM_ROOT/build/host/bdb-swap" ]; then
	skip "build/host/bdb-swap not built (make tools, libdb5.3-dev)"
else
	cat > /tmp/app-kv-bdb.toml <<'TOML'
name = "kv-bdb"
program = "bdb-swap"
memory = "16m"
data_ratio = 1.2
access = ["hash"]
value_bytes = 1000
threads = [2]
duration = 3
ramdisk = "256m"
baseline = false
devices = ["preset:onyx"]
TOML
	start=$SECONDS
	"$PCM_ROOT"/tools/pcm-bench app --native --no-build --no-figures --no-calibrate --short \
		--outdir $out /tmp/app-kv-bdb.toml > /tmp/app-kv-bdb.out 2>&1
	rc=$?
	sed 's/^/# app: /' /tmp/app-kv-bdb.out
	note "pcm-bench app bdb-swap --short: $((SECONDS - start)) s"
	expect_eq "pcm-bench app (bdb-swap) exits 0" "$rc" 0
	check_run kv-bdb bdb-swap hash
	expect "kv-bdb: bdb-swap --verify after the run: every value there once" \
		py - "$out/app/kv-bdb-$(uname -r)/run.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))['runs'][0].get('verify') or {}
print(f'# {v}')
sys.exit(0 if v.get('hash', {}).get('ok') is True else 1)
PY
fi
finish
