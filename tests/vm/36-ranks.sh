#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The "ranks" message and status's summary of it against known loads:
# QD1 reads of one rank make its utilisation service time x IOPS (the
# utilisation law) within 2 %, every other rank and bus idle; writes to
# one rank from two jobs queue on it (never longer than one program);
# tags and the front end queue too; "stats reset" clears it all.  Then
# the tracepoints: the .rst's trace-cmd example as written, each event's
# fields as documented, and each firing where it should (held, late, ECC
# corrected and uncorrectable, a row reaching its endurance, a gap move).
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

brd_load 32 || skip_all "brd not available"
command -v trace-cmd >/dev/null || skip_all "trace-cmd not installed (tools/install-deps)"

RST=$PCM_ROOT/Documentation/admin-guide/device-mapper/dm-pcm.rst
# 2 channels x 2 ranks, 64-row stripes: rows 0-63 are rank 0.0
GEOM="channels:2 ranks:2 stripe:64 gap_interval:0"

field() { status_field "$1" "$2"; }

# ranks NAME: the "ranks" reply as "KEY VALUE" lines of pcmlib's parse
# (elapsed_ns, channels, ranks, front.X, tags.X, bus.C.X, rank.C.R.X)
ranks() {
	dmsetup message "$1" 0 ranks | PYTHONPATH=$PCM_ROOT/tools py -c '
import sys
from pcmlib import status
r = status.parse_ranks(sys.stdin.read())
for k in ("elapsed_ns", "channels", "ranks"):
    print(k, r[k])
for k in ("front", "tags"):
    for f, v in r[k].items():
        print(f"{k}.{f}", v)
for b in r["per_bus"]:
    for f in status.RESOURCE:
        print("bus.%d.%s" % (b["channel"], f), b[f])
for x in r["per_rank"]:
    for f in status.RESOURCE:
        print("rank.%d.%d.%s" % (x["channel"], x["rank"], f), x[f])'
}

# get KEY: one value of the last ranks reply (in /tmp/ranks.out)
get() { awk -v k="$1" '$1 == k { print $2 }' /tmp/ranks.out; }

# idle_except C.R: every rank but C.R and every bus but C's served nothing
idle_except() {
	awk -v r="rank.$1." -v b="bus.${1%.*}." '
		($1 ~ /^rank\./ && index($1, r) != 1) || ($1 ~ /^bus\./ && index($1, b) != 1) {
			if ($2 != 0) { print "busy: " $0; bad = 1 }
		}
		END { exit bad }' /tmp/ranks.out
}

# --- QD1 reads of one rank: utilisation = service time x IOPS ------------
svc=200000
# shellcheck disable=SC2086 # $GEOM: table words, split on purpose
pcm_create rk /dev/ram0 preset:none read_ns:$svc $GEOM
n=$(scaled 1000 200)
# in one process, through the dm ioctls: reset, the reads, "ranks", with
# nothing between them, so that the device's window is the reads': the
# reads start when the reset returns and "ranks" comes right after the
# last; the IOPS are over that window.  The device's own window is
# bracketed by the instants before and after each of the two messages
# (a stall of the VM inside one widens the bracket, not the error)
PYTHONPATH=$PCM_ROOT/tools py - rk "$n" "$svc" > /tmp/qd1.out <<'PY'
import mmap, os, random, sys, time
from pcmlib import dmioctl, status
name, n, svc = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dm = dmioctl.DM()
buf = mmap.mmap(-1, 4096)
fd = os.open('/dev/mapper/' + name, os.O_RDONLY | os.O_DIRECT)
rng = random.Random(1)
offs = [rng.randrange(64) * 4096 for _ in range(n)]	# rows 0-63: rank 0.0
# once first: under TCG a kernel path's first run is translated, slowly
for _ in range(2):
    dm.message(name, [b'stats', b'reset'])
    os.preadv(fd, [buf], 0)
    dm.message(name, [b'ranks'])
tb_reset = time.monotonic_ns()
assert dm.message(name, [b'stats', b'reset'])[0] == 0
t0 = time.monotonic_ns()
for off in offs:
    os.preadv(fd, [buf], off)
t1 = time.monotonic_ns()
err, _, data = dm.message(name, [b'ranks'])
ta_ranks = time.monotonic_ns()
assert err == 0
st = status.parse(dm.status(name).decode())	# microseconds after "ranks"
r = status.parse_ranks(data.split(b'\0', 1)[0].decode())
rk = r['per_rank'][0]
iops = n * 1e9 / (t1 - t0)
print('iops', round(iops))
print('want_ppm', round(svc * iops / 1000))		# svc (ns) x IOPS, in ppm
# the device's window lies between (t1 - t0) and (ta_ranks - tb_reset)
print('want_min_ppm', round(svc * n * 1e6 / (ta_ranks - tb_reset)))
print('got_ppm', rk['util_ppm'])
print('requests', rk['requests'])
print('busy_ns', rk['busy_ns'])
print('wait_ns', rk['wait_ns'])
print('window_ns', t1 - t0)
print('elapsed_ns', r['elapsed_ns'])
print('st_max_ppm', st['rank_util_max_ppm'])
print('st_mean_ppm', st['rank_util_mean_ppm'])
print('others', sum(x['requests'] + x['busy_ns'] for x in r['per_rank'][1:]) +
      sum(b['requests'] for b in r['per_bus'][1:]))
PY
q() { awk -v k="$1" '$1 == k { print $2 }' /tmp/qd1.out; }
note "QD1 on rank 0.0: $(xargs < /tmp/qd1.out)"
expect_eq "rank 0.0 served every read" "$(q requests)" "$n"
expect_eq "busy for read_ns each" "$(q busy_ns)" $((n * svc))
expect_eq "and never queued" "$(q wait_ns)" 0
expect "utilisation $(q got_ppm) ppm = service time x IOPS $(q want_ppm) ppm, within 2 % (or the bracket from $(q want_min_ppm))" \
	py -c "import sys; g, w, lo = map(int, sys.argv[1:]); sys.exit(not 0.98 * lo <= g <= 1.02 * w)" \
	"$(q got_ppm)" "$(q want_ppm)" "$(q want_min_ppm)"
expect_eq "the other ranks and the other bus served nothing" "$(q others)" 0
ranks rk > /tmp/ranks.out
expect "idle ranks and bus at 0 in the reply" idle_except 0.0
umax=$(q st_max_ppm) umean=$(q st_mean_ppm)
expect "status: the busiest rank is 0.0 ($umax ppm, the reply just before $(q got_ppm))" \
	py -c "import sys; a, b = int(sys.argv[1]), int(sys.argv[2]); sys.exit(not (0 < a and abs(a - b) <= 0.02 * b))" \
	"$umax" "$(q got_ppm)"
expect "status: the mean of 4 ranks is a quarter of it ($umean ppm)" \
	py -c "import sys; a, m = int(sys.argv[1]), int(sys.argv[2]); sys.exit(not abs(a / 4 - m) <= 0.02 * m + 1)" \
	"$umax" "$umean"
dmsetup remove rk

# --- writes to one rank from two jobs queue on it --------------------------
# two_jobs NAME: two jobs of QD1 4 KiB random writes to rank 0.0 for 2 s
# each (a time, not a count: both run at once whenever either starts);
# sets $nw to the writes they made
two_jobs() {
	rm -f /tmp/ranks-fio.json
	fio --name=w --filename=/dev/mapper/"$1" --rw=randwrite --bs=4k --size=256k \
		--direct=1 --ioengine=psync --numjobs=2 --time_based --runtime=2 \
		--output-format=json --output=/tmp/ranks-fio.json 2>/dev/null
	nw=$(py "$PCM_ROOT/tools/pcmlib/fio.py" /tmp/ranks-fio.json --sum write.total_ios)
}
wns=500000
# shellcheck disable=SC2086 # $GEOM: table words, split on purpose
pcm_create rk /dev/ram0 preset:none write_ns:$wns $GEOM
dmsetup message rk 0 stats reset
two_jobs rk
expect "fio: two jobs of QD1 writes to rank 0.0 for 2 s ($nw writes)" test "${nw:-0}" -gt 0
ranks rk > /tmp/ranks.out
note "rank 0.0: $(grep '^rank\.0\.0\.' /tmp/ranks.out | xargs)"
expect_eq "rank 0.0 served both jobs' writes" "$(get rank.0.0.requests)" "$nw"
expect_eq "busy for write_ns each" "$(get rank.0.0.busy_ns)" $((nw * wns))
wmax=$(get rank.0.0.wait_max_ns)
expect "they queued: waits $(get rank.0.0.wait_ns) ns in all" \
	test "$(get rank.0.0.wait_ns)" -gt 0
# a write's modeled latency is its wait for the rank plus its program
# (no command time, rates or tags here): the longest wait is the longest
# latency less write_ns, and the waits add up to the latencies less the
# programs (status's mean is rounded down: within a ns a write)
read -r lmax lmean < <(status_field rk write_lat_max_ns write_lat_mean_ns)
expect_eq "the longest wait is status's longest write latency less write_ns" \
	"$wmax" $((lmax - wns))
expect "the waits add up to the latencies less the programs ($(get rank.0.0.wait_ns) ~ $(((lmean - wns) * nw)))" \
	py -c "import sys; w, m, n, s = map(int, sys.argv[1:]); sys.exit(not 0 <= w - (m - s) * n < n)" \
	"$(get rank.0.0.wait_ns)" "$lmean" "$nw" "$wns"
expect "idle ranks and bus at 0" idle_except 0.0
read -r sw swmax < <(status_field rk rank_wait_ns rank_wait_max_ns)
expect_eq "status: rank_wait_ns and rank_wait_max_ns as the reply's" "$sw $swmax" \
	"$(get rank.0.0.wait_ns) $wmax"

# the tags and the front end: one tag, then a command time
dmsetup message rk 0 set tags 1
dmsetup message rk 0 stats reset
two_jobs rk
ranks rk > /tmp/ranks.out
expect "one tag: requests waited for it ($(get tags.waits), $(get tags.wait_ns) ns)" \
	test "$(get tags.waits)" -gt 0 -a "$(get tags.wait_ns)" -gt 0
expect_eq "the longest tag wait is the longest write latency less write_ns" \
	"$(get tags.wait_max_ns)" $(($(status_field rk write_lat_max_ns) - wns))
expect_eq "so none queued on the rank" "$(get rank.0.0.wait_ns)" 0
expect_eq "status: tag_wait_ns as the reply's" "$(field rk tag_wait_ns)" "$(get tags.wait_ns)"
dmsetup message rk 0 set tags 0
dmsetup message rk 0 set write_ns 0
dmsetup message rk 0 set cmd_ns 300000
dmsetup message rk 0 stats reset
# issue 45 item 6: the flake's write latency (1,328,122 ns) fits one of
# the tags section's (its tag wait plus write_ns): that the reset cleared
# them is checked here, so that a next time tells the two apart
expect_eq "the reset cleared the tags section's latencies" \
	"$(status_field rk write_lat_max_ns write_lat_mean_ns)" "0 0"
two_jobs rk
ranks rk > /tmp/ranks.out
expect_eq "the front end served every request" "$(get front.requests)" "$nw"
expect_eq "busy cmd_ns each" "$(get front.busy_ns)" $((nw * 300000))
expect "two jobs queued on it ($(get front.wait_ns) ns, longest $(get front.wait_max_ns))" \
	test "$(get front.wait_ns)" -gt 0
expect_eq "the longest front-end wait is the longest write latency less cmd_ns" \
	"$(get front.wait_max_ns)" $(($(status_field rk write_lat_max_ns) - 300000))
# issue 45 item 6: this once differed beside another VM (670,682 against
# 1,028,122), cause not found; the waits of every resource, so that a
# next time shows where the rest of that latency queued
note "waits: $(awk '$1 ~ /wait/ && $2 != 0 { printf "%s %s ", $1, $2 }' /tmp/ranks.out)"
expect_eq "status: front_wait_ns as the reply's" "$(field rk front_wait_ns)" "$(get front.wait_ns)"

# --- stats reset clears them ----------------------------------------------
dmsetup message rk 0 stats reset
ranks rk > /tmp/ranks.out
expect_eq "reset: every count, busy time and wait is 0" \
	"$(grep -v -e '^elapsed_ns' -e '^channels' -e '^ranks ' /tmp/ranks.out | awk '{print $2}' | sort -u)" 0
expect_eq "reset: status's summary is 0" \
	"$(status_field rk rank_util_max_ppm rank_util_mean_ppm rank_wait_ns rank_wait_max_ns bus_wait_ns front_wait_ns tag_wait_ns)" \
	"0 0 0 0 0 0 0"
expect "reset: the clock restarted ($(get elapsed_ns) ns ago)" test "$(get elapsed_ns)" -lt 60000000000
expect_fail "ranks takes no argument" dmsetup message rk 0 ranks 1
dmsetup remove rk
rmmod brd

# --- the .rst's trace-cmd example, as written -------------------------------
# (11-doc-examples runs every example of the .rst, this one included, in
# make check; below full PCM_SCALE it is not run a second time here: a
# trace-cmd record is half a minute under TCG)
if [ "$PCM_SCALE" -ge 100 ]; then
	# its Tracepoints section alone, through the runner of 11-doc-examples
	py - "$RST" > /tmp/tracepoints.rst <<'PY'
import sys
lines = open(sys.argv[1]).read().split('\n')
i = lines.index('Tracepoints')
j = i + 2
while not (lines[j + 1].startswith('===') and lines[j].strip()):
    j += 1
print('\n'.join(lines[i:j]))
PY
	expect "the .rst has a Tracepoints section with commands" grep -q '^  # trace-cmd' /tmp/tracepoints.rst
	# shellcheck disable=SC2097,SC2098 # PCM_ROOT=$PCM_ROOT puts the shell's value in the command's environment
	PCM_ROOT=$PCM_ROOT python3 "$PCM_ROOT/tests/vm/lib/doc-examples.py" /tmp/tracepoints.rst > /tmp/doc.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/doc.out
	expect_eq "the example runs and prints what the .rst says" "$rc" 0
else
	note "the .rst's trace-cmd example: 11-doc-examples runs it (PCM_SCALE below 100)"
fi

# --- every event's fields as documented -------------------------------------
tracefs=/sys/kernel/tracing
[ -d $tracefs/events ] || mount -t tracefs nodev $tracefs
for ev in pcm_charge pcm_held pcm_late pcm_ecc pcm_endurance pcm_gap_move; do
	doc=$(sed -n "s/^$ev (\`\`\([a-z_ ]*\)\`\`)\$/\1/p" "$RST")
	got=$(sed -n 's/^\tfield:[^;]* \([a-z_]*\);.*/\1/p' $tracefs/events/pcm/$ev/format |
		grep -v '^common_' | xargs)
	expect_eq "$ev: fields as documented" "$got" "${doc:-(not documented)}"
done

# --- and each fires where it should ------------------------------------------
# (through tracefs: a trace-cmd record costs half a minute under TCG)
brd_load 32
# trace NAME CMD...: every pcm event while CMD runs; the lines of NAME's
# device in /tmp/ev.txt
trace() {
	local dev
	dev=$(dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' ')
	shift
	echo 0 > $tracefs/tracing_on
	echo > $tracefs/trace
	echo 1 > $tracefs/events/pcm/enable
	echo 1 > $tracefs/tracing_on
	"$@"
	echo 0 > $tracefs/tracing_on
	echo 0 > $tracefs/events/pcm/enable
	grep "dev $dev " $tracefs/trace > /tmp/ev.txt
	sed 's/^ */# /' /tmp/ev.txt | head -4
}
# evcount EVENT: how many lines of EVENT
evcount() { grep -c " $1: " /tmp/ev.txt; }

# shellcheck disable=SC2086 # $GEOM: table words, split on purpose
pcm_create tp /dev/ram0 preset:none read_ns:5000000 $GEOM
trace tp dd if=/dev/mapper/tp of=/dev/null bs=4k count=4 skip=62 iflag=direct status=none
# rows 62, 63 are rank 0.0; 64, 65 rank 0 of channel 1
expect_eq "pcm_held: 4 reads held, on their rows' channels and ranks" \
	"$(grep -o 'pcm_held: .* read .* channel [0-9]* rank [0-9]*' /tmp/ev.txt | sed 's/.* channel/channel/' | xargs)" \
	"channel 0 rank 0 channel 0 rank 0 channel 1 rank 0 channel 1 rank 0"
expect_eq "pcm_charge: 4 reads charged, 4096 bytes each, on their rows' channels and ranks" \
	"$(grep -o 'pcm_charge: .* read bytes [0-9]* .* channel [0-9]* rank [0-9]*' /tmp/ev.txt |
	   sed 's/.* read bytes \([0-9]*\) .* channel/\1 channel/' | xargs)" \
	"4096 channel 0 rank 0 4096 channel 0 rank 0 4096 channel 1 rank 0 4096 channel 1 rank 0"
expect "pcm_charge: modeled = arrival + 5 ms (idle ranks), lat = modeled - arrival; pcm_held's modeled is it" py -c '
import re, sys
ch = [re.search(r"arrival (\d+) modeled (\d+) lat (\d+)", l) for l in open("/tmp/ev.txt") if " pcm_charge: " in l]
held = sorted(int(re.search(r"modeled (\d+)", l)[1]) for l in open("/tmp/ev.txt") if " pcm_held: " in l)
ok = len(ch) == 4 and all(int(m[3]) == int(m[2]) - int(m[1]) == 5000000 for m in ch)
sys.exit(not (ok and held == sorted(int(m[2]) for m in ch)))'
expect "pcm_held: late = actual - modeled, actual never before modeled" py -c '
import re, sys
for l in (l for l in open("/tmp/ev.txt") if " pcm_held: " in l):
    m = re.search(r"modeled (\d+) actual (\d+) late (\d+)", l)
    if not m or int(m[3]) != max(0, int(m[2]) - int(m[1])) or int(m[2]) < int(m[1]):
        sys.exit(1)'
dmsetup remove tp

# shellcheck disable=SC2086 # $GEOM: table words, split on purpose
pcm_create tp /dev/ram0 preset:none read_ns:1 $GEOM
trace tp dd if=/dev/mapper/tp of=/dev/null bs=4k count=4 iflag=direct status=none
expect "pcm_late: a 1 ns read completes late ($(evcount pcm_late) of 4)" test "$(evcount pcm_late)" -ge 1
expect "pcm_late: late = actual - modeled > 0" py -c '
import re, sys
ls = [l for l in open("/tmp/ev.txt") if " pcm_late: " in l]
for l in ls:
    m = re.search(r"modeled (\d+) actual (\d+) late (\d+)", l)
    if not m or int(m[3]) != int(m[2]) - int(m[1]) or int(m[3]) <= 0:
        sys.exit(1)
sys.exit(not ls)'
dmsetup remove tp

# ecc: 30-ecc's one-codeword layout, t = 8: 8 bits corrected, 9 refused
wipe_meta /dev/ram0
pcm_create tp /dev/ram0 ecc:bch ecc_codewords:1 ecc_t:8 meta_bytes:16 seed:7 gap_interval:0
dd if=/dev/urandom of=/dev/mapper/tp bs=4k count=8 oflag=direct status=none
dmsetup message tp 0 inject 2 8
dmsetup message tp 0 inject 20 9
trace tp bash -c 'dd if=/dev/mapper/tp of=/dev/null bs=4k count=8 iflag=direct status=none; true'
expect_eq "pcm_ecc: sector 2 corrected, 8 bits; sector 20 uncorrectable" \
	"$(grep -o 'pcm_ecc: .* sector [0-9]* psector [0-9]* [a-z]* bits [0-9]* flips [0-9]*' /tmp/ev.txt |
	   sed 's/.* sector \([0-9]*\) psector [0-9]* \([a-z]*\) bits \([0-9]*\) flips \([0-9]*\)/\1 \2 \3 \4/' | sort -n | xargs)" \
	"2 corrected 8 8 20 uncorrectable 0 9"
dmsetup remove tp

# a row reaching its endurance: the third write of row 5, and only that
wipe_meta /dev/ram0
pcm_create tp /dev/ram0 preset:none wear:on endurance:3 gap_interval:0
trace tp bash -c 'for i in 1 2 3 4; do dd if=/dev/zero of=/dev/mapper/tp bs=4k count=1 seek=5 oflag=direct status=none; done'
expect_eq "pcm_endurance: row 5 once, at endurance 3" \
	"$(grep -o 'pcm_endurance: .*' /tmp/ev.txt | sed 's/.*: *dev [0-9:]* //' | xargs)" "row 5 rows 1 endurance 3"
dmsetup remove tp

pcm_create tp /dev/ram0 preset:none wear:on endurance:3
trace tp dmsetup message tp 0 move_gap 2
expect_eq "pcm_gap_move: two moves" "$(evcount pcm_gap_move)" 2
dmsetup remove tp
rmmod brd
finish
