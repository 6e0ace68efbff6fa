#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# pcm-bench app end to end (tools/pcmbench/app/): PostgreSQL's pgbench
# on ext4 over preset:onyx, as "pcm-bench app --native"
# runs it on a real host, the server in a 32 MiB memory cgroup and the
# database twice that, so that reads reach the device (--short: the
# spec's [short] settings, 2 clients for 1 s; --no-build: the module built for this kernel; --outdir: the
# tree is read-only here; --no-figures: matplotlib under TCG takes
# minutes, and test-char.py draws the figure on the host; --no-calibrate:
# the calibration is characterize's code, run by 23; here, not under
# icount: dilation 1).  For each device: initdb and the server as user
# postgres, pgbench -i and the run, the server down, fsck -fn clean, the
# device removed; then the report has every section and run.json the
# figures it is made of (transactions, per-transaction latencies, the
# device's counters and its ranks).
# Cost: 417 s at PCM_SCALE=25 on 6.12 under TCG on a 2-core host beside
# one other (icount) VM, at the cgroup's commit (176 s before the device:
# the host part, the programs and the cluster read over 9p, the 320 MiB
# ramdisk filled; ~230 s for the device: mkfs, the copy, the server
# started twice, pgbench -i -s 5, fsck); two devices at scale 1 took 434
# s beside four VMs before; not yet measured on a quiet host.
. "$(dirname "$0")/lib/lib.sh"

# shellcheck disable=SC2012 # ls -d of PostgreSQL directories: plain names
PGBIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$PGBIN/pgbench" ] || skip_all "PostgreSQL not installed (tools/install-deps)"
id postgres >/dev/null 2>&1 || skip_all "no user postgres (Debian's postgresql package makes it)"
out=/tmp/app
rm -rf $out
# the server in a 32 MiB memory cgroup (shared_buffers 4 MiB), the
# database twice that (scale 5, 78 MB): its reads reach the device (the
# full runs: 4x and more, tools/app/*.toml)
cat > /tmp/app-test.toml <<'TOML'
name = "app-test"
memory = "32m"
shared_buffers = "4m"
data_ratio = 2
clients = 4
duration = 5
ramdisk = "320m"
baseline = false
devices = ["preset:onyx"]
[short]
clients = 2
duration = 1
TOML
start=$SECONDS
"$PCM_ROOT"/tools/pcm-bench app --native --no-build --no-figures --no-calibrate --short \
	--outdir $out /tmp/app-test.toml > /tmp/app.out 2>&1
rc=$?
sed 's/^/# app: /' /tmp/app.out
note "pcm-bench app --short: $((SECONDS - start)) s"
expect_eq "pcm-bench app --native --short exits 0" "$rc" 0
dir=$out/app/app-test-$(uname -r)
[ -s "$dir/run.json" ] || { fail "run.json written in $dir"; finish; }
expect "it printed the table: a row per device, TPS and a verdict" \
	bash -c "grep -q '^clock: real time; dilation: 1 ' /tmp/app.out &&
		grep -Eq '^preset:onyx +[0-9,.]+ .*(device-bound|host-bound)' /tmp/app.out &&
		grep -q '^report: $dir/report.md' /tmp/app.out"
expect "no server left running, nothing mounted, no device nor cgroup left" \
	bash -c "! pgrep -x postgres && ! mountpoint -q /tmp/pcm-app/mnt && ! test -e /sys/fs/cgroup/pcm-app &&
		! dmsetup info char-dut >/dev/null 2>&1"

expect "run.json: each device ran pgbench end to end, fsck clean, removed" \
	py - "$dir" "$PCM_ROOT/tools" <<'PY'
import json, os, sys
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from pcmlib import tap
run = json.load(open(os.path.join(d, 'run.json')))
def check(what, cond):
    tap.check(cond, what, shown=True)
check('one device', [r['device'] for r in run['runs']] == ['preset:onyx'])
check('--short: 2 clients for 1 s, the database twice the cgroup', 'scale 5, the server in a '
      '32 MiB memory cgroup (shared_buffers 4 MiB; the database 78 MB, 2.3x it), 2 clients, '
      '1 thread, 1 s (--short)' in run['workload'])
cmds = '\n'.join(run['commands'])
for what in ('runuser -u postgres -- ', '/initdb -D ', 'cp -a /tmp/pcm-app/cluster /tmp/pcm-app/mnt/pgdata',
             'pg_ctl -w -t 600 -D /tmp/pcm-app/mnt/pgdata', '-c fsync=on',
             'echo $$ > /sys/fs/cgroup/pcm-app/cgroup.procs && exec runuser',
             'mkdir /sys/fs/cgroup/pcm-app && echo 33554432 > /sys/fs/cgroup/pcm-app/memory.max',
             '-c shared_buffers=4096kB',
             ' start', ' -m fast stop', 'pgbench -h /tmp/pcm-app/sock -U postgres -i',
             'mkfs.ext4 -q -F -b 4096 /dev/mapper/char-dut', 'fsck.ext4 -fn /dev/mapper/char-dut',
             'blktrace -D /tmp/pcm-app/bt -d /dev/mapper/char-dut'):
    check(f'ran {what!r}', what in cmds)
for r in run['runs']:
    dev, pg, lat, st = r['device'], r['pgbench'], r['latency'], r.get('status') or {}
    check(f'{dev}: server up and pgbench ran: {pg}', pg['tps'] and pg['transactions'] > 0 and
          not pg['failed'])
    check(f'{dev}: a latency per transaction in the logs ({lat["n"]} of {pg["transactions"]})',
          lat['n'] == pg['transactions'] and lat['p99_us'] >= lat['p50_us'] > 0)
    check(f'{dev}: fsck -fn clean ({r["fsck"]}), the device removed',
          r['fsck_rc'] == 0 and r['removed'])
    check(f'{dev}: the device saw the run: reads {st.get("reads")}, writes {st.get("writes")}, '
          f'block layer {r["blk"]}', st.get('writes', 0) > 0 and r['blk']['writes'] > 0)
    check(f'{dev}: its ranks (pcmctl ranks --json)', r['ranks'].get('per_rank'))
    cg = r.get('cgroup') or {}
    check(f'{dev}: the cgroup bounded the server\'s memory (max {cg.get("max")}, peak '
          f'{cg.get("peak")}, page cache {cg.get("file")})',
          cg.get('max') == 32 << 20 and 0 < cg.get('peak', 0) <= cg['max'] and
          0 < cg.get('file', 0) < cg['max'] and cg.get('oom_kill') == 0)
    check(f'{dev}: the measured run\'s reads reached the device ({st.get("reads")}; '
          f'PostgreSQL read {r["pg_blocks"]} blocks from the kernel and its buffers)',
          st.get('reads', 0) > 0 and r['pg_blocks']['read'] > 0)
life = run['runs'][0].get('lifetime') or {}
check(f'the measured run traced ({run["runs"][0].get("trace")}) and replayed for its wear: '
      f'{life}', os.path.getsize(os.path.join(d, run['runs'][0]['trace']['file'])) > 0 and
      not life.get('error') and life['passes'] == 1000 and
      all(life[k]['lifetime_s'] > 0 and life[k]['max'] > 0 for k in ('start_gap', 'no_start_gap')) and
      life['start_gap']['gap_moves'] > 0 == life['no_start_gap']['gap_moves'])
onyx = run['runs'][0]['status']
check(f'onyx held its completions ({onyx["held"]}) and modeled its writes '
      f'({onyx["write_lat_mean_ns"]} ns)', onyx['held'] > 0 and onyx['write_lat_mean_ns'] > 0)
sys.exit(tap.exit_code())
PY
expect "the report has every section; app-table.csv a row per device" \
	py - "$dir" "$PCM_ROOT/tools" <<'PY'
import csv, os, sys
d = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from pcmbench.app.report import SECTIONS
from pcmbench.app.results import TABLE_FIELDS
from pcmlib import tap
def check(what, cond):
    tap.check(cond, what, shown=True)
md = open(os.path.join(d, 'report.md')).read()
check('title', md.startswith('# dm-pcm under a database: app-test\n'))
for s in SECTIONS:
    check(f'section {s}', f'\n{s}\n' in md)
check('the figure: not drawn (--no-figures)', '(not drawn: --no-figures)' in md)
rows = list(csv.DictReader(open(os.path.join(d, 'app-table.csv'))))
check(f'app-table.csv: {[r["device"] for r in rows]}',
      [r['device'] for r in rows] == ['preset:onyx'] and
      list(rows[0]) == list(TABLE_FIELDS) and all(float(r['tps']) > 0 for r in rows))
check('where the time went: the modeled writes per transaction',
      all(r['model_write_us'] != '' for r in rows))
check('reads and writes per transaction, the caches\' hit ratio, reads reached the device',
      all(float(r['dev_reads_per_txn']) > 0 and float(r['dev_writes_per_txn']) > 0 and
          0 <= float(r['cache_hit_pct']) < 100 and r['reads_reached'] == 'True' and
          float(r['memory_max']) == 32 << 20 for r in rows))
check('lifetime with and without start-gap in the table',
      all(r['life_start_gap_s'] and r['life_no_start_gap_s'] for r in rows) and
      '| preset:onyx | 1000 |' not in md and '| `preset:onyx` | 1000 | ' in md)
check('the cache section: the cgroup\'s row per device',
      md.count(' | 32.0 MiB | ') >= 1 and 'memory.max 32.0 MiB' in md)
sys.exit(tap.exit_code())
PY
finish
