#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Message storms racing I/O: while fio writes and verifies as it goes
# (verify_backlog, verify_fatal) on a device with gap_interval:1 and four
# randomized domains, tools/pcmlib/storm.py (the storm tools/soak runs too)
# sends "set gap_interval N" (N varying, 0 included), "move_gap N",
# "stats reset", "config", "registers", "persist", status reads and bad
# messages (through dmsetup and straight through the ioctl), and its
# control loop suspends and resumes the device and reloads its table.
# Then: fio saw no error and no verify failure, every valid message
# succeeded, every bad one failed, gap_moves grew by at least N per domain
# around every move_gap N, status always parsed, the table line never
# changed, and after remove + create the registers are the same and a
# last full pass of fio reads back whole (verify_only).
#
# move_gap and persist are refused while the device is suspended: the
# control loop, which must never see them fail, is also the one that
# suspends, so they never overlap; another loop races them with the
# suspends on purpose and accepts only that refusal (EINVAL or EAGAIN,
# logged as "device is suspend..."), which it counts.  storm.py is one
# process, its loops threads, and most of its messages go through the
# ioctl: under TCG each process costs about a second of guest CPU.
#
# PCM_STORM_SECS (default $(scaled 60 15): 60 s at PCM_SCALE=100) sets the
# length of the time-based phase.
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load 32 || skip_all "brd not available"

secs=${PCM_STORM_SECS:-$(scaled 60 15)}
doms=4
words="preset:none gap_interval:1 domains:$doms randomize:4321"
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(pcm_table /dev/ram0 $words)
len=$(cut -d' ' -f2 <<<"$table")
dmsetup create ms --table "$table" || skip_all "cannot create the device"
t0_table=$(dmsetup table ms)
size=$((len * 512))
fill=$((size / 65536 * 65536))	# the full pass in 64 KiB writes
W=/tmp/storm
rm -rf $W
mkdir -p $W
: > $W/run
mark=$(dmesg_mark)
# the bad messages log a line each: follow the log, the ring may wrap
dmesg -w > $W/kmsg 2>&1 &
kpid=$!

# set and the table line: a runtime change shows in config, never in the table
dmsetup message ms 0 set gap_interval 7
expect_eq "set gap_interval 7: config shows it" \
	"$(dmsetup message ms 0 config | grep -o 'gap_interval:[0-9]*')" gap_interval:7
expect_eq "set gap_interval 7: the table line does not" "$(dmsetup table ms)" "$t0_table"
dmsetup message ms 0 set gap_interval 1

# phase 1: time-based random writes verified as they go, for $secs
fio --name=storm --filename=/dev/mapper/ms --rw=randwrite --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=16 --size=$size --time_based --runtime="$secs" \
	--verify=crc32c --verify_backlog=256 --verify_fatal=1 --verify_state_save=0 \
	--randseed=1 --output-format=json --output=$W/fio1.json 2> $W/fio1.err &
fpid=$!
t0=$(date +%s)
# the storm runs while $W/run exists, then until it has made 10
# suspend/resume cycles (a loaded host runs slowly), but not for more than
# 5 more minutes; its counters end up in $W/storm.cnt as "key value" lines
python3 "$PCM_ROOT/tools/pcmlib/storm.py" --name ms --table "$table" --stop-file $W/run \
	--min-cycles 10 --max-wait 300 --counts $W/storm.cnt --failures $W/failures \
	2> $W/storm.err &
spid=$!
wait $fpid
rc1=$?
# phase 2, the storm still going: one pass that writes every block once
# (the final verify_only replays it), verified as it goes and at the end
fio_fill() {
	fio --name=fill --filename=/dev/mapper/ms --rw=randwrite --bs=64k --direct=1 \
		--ioengine=libaio --iodepth=16 --size=$fill --verify=crc32c \
		--randseed=2 --verify_state_save=0 --output-format=json "$@"
}
fio_fill --verify_backlog=256 --verify_fatal=1 --output=$W/fio2.json 2> $W/fio2.err
rc2=$?
rm -f $W/run
wait $spid
src=$?
elapsed=$(( $(date +%s) - t0 ))

cnt() { awk -v k="$1" '$1 == k {print $2} END {if (!NR) print "?"}' $W/storm.cnt 2>/dev/null || echo "?"; }
# counters summed over the resets and reloads, with the final status
moves=$(cnt moves_total)
wraps=$(cnt wraps_total)
asked=$(cnt moves_asked)
kill $kpid
wait $kpid 2>/dev/null
refused_log=$(sed -n "/$mark/,\$p" $W/kmsg | grep -cE 'pcm: (move_gap|persist): device is suspend')
bad_log=$(grep -E 'WARNING:|BUG:|Oops|possible circular locking|KASAN|UBSAN|hung task|general protection|Call Trace' $W/kmsg | head -3)

fio_bytes() {
	python3 "$PCM_ROOT/tools/pcmlib/fio.py" "$1" error write.io_bytes read.io_bytes \
		2>/dev/null || echo "? 0 0"
}
read -r e1 w1 v1 <<<"$(fio_bytes $W/fio1.json)"
read -r e2 w2 v2 <<<"$(fio_bytes $W/fio2.json)"

note "storm ran ${elapsed}s: fio wrote $(( (w1 + w2) >> 20 )) MiB, verified $(( (v1 + v2) >> 20 )) MiB"
note "control loop: move_gap ok $(cnt move_gap_msgs) ($(cnt moves_asked) moves asked, gap_moves grew $(cnt moves_grown) meanwhile), persist ok $(cnt persists), stats reset $(cnt stats_resets)"
note "control loop: suspend/resume cycles $(cnt suspends), same-table reloads $(cnt reloads)"
note "set gap_interval ok $(cnt sets) ($(cnt sets_lost) undone by a reload in between); dmsetup: config/registers ok $(cnt dmsetup_ok), bad messages $(cnt dmsetup_bad_tried)"
note "ioctl storm: config/registers ok $(cnt ioctl_ok), bad messages $(cnt ioctl_bad_tried); $(cnt status_reads) status reads, $(cnt via_dmsetup) dmsetup runs in all"
note "racing suspend: ok $(cnt race_ok), refused $(cnt race_refused) (kernel log: $refused_log)"
note "gap moves $moves, start wraps $wraps, registers $(registers ms)"
[ -s $W/storm.err ] && sed 's/^/# storm.py: /' $W/storm.err | head -10
[ -s $W/failures ] && sed 's/^/# failure: /' $W/failures | head -20

expect_eq "fio phase 1: exit 0, no error" "$rc1:$e1" 0:0
expect_fail "fio phase 1: no verify failure" grep -qiE 'verify|bad magic|crc' $W/fio1.err
expect_eq "fio phase 2 (full pass): exit 0, no error" "$rc2:$e2" 0:0
expect_fail "fio phase 2: no verify failure" grep -qiE 'verify|bad magic|crc' $W/fio2.err
expect "fio verified data while the storm ran" test "$((v1 + v2))" -gt 0
expect_eq "storm.py: exit 0, no loop crashed" "$src:$(cnt worker_errors)" 0:0
expect_eq "every set gap_interval succeeded" "$(cnt set_failed)" 0
expect_eq "config always showed the gap_interval just set" "$(cnt config_mismatch)" 0
expect_eq "control loop: every move_gap, persist, stats reset, suspend, resume, reload succeeded" "$(cnt ctl_failed)" 0
expect_eq "config and registers all succeeded" "$(cnt dmsetup_failed)" 0
expect_eq "status and registers always parsed" "$(cnt dmsetup_parse_failures):$(cnt ctl_parse_failures)" 0:0
expect_eq "every bad message failed" "$(cnt dmsetup_bad_accepted)" 0
expect_eq "ioctl storm: every config/registers succeeded" "$(cnt ioctl_failed)" 0
expect_eq "ioctl storm: replies and status always parsed" "$(cnt ioctl_parse_failures)" 0
expect_eq "ioctl storm: every bad message failed with EINVAL" "$(cnt ioctl_bad_accepted)" 0
expect_eq "racing move_gap/persist failed only as refused-while-suspended" "$(cnt race_failed)" 0
expect "every refusal logged as suspended/suspending" test "$refused_log" -ge "$(cnt race_refused)"
expect "at least 10 suspend/resume cycles" test "$(cnt suspends)" -ge 10
expect_eq "gap_moves grew by N per domain around every move_gap N" "$(cnt moves_short)" 0
expect "gap_moves in all ($moves) >= moves asked ($asked)" test "$moves" -ge "$asked"
expect_eq "no move errors" "$(cnt move_errors_total)" 0
expect "final status parses" python3 "$PCM_ROOT/tools/pcmlib/status.py" --check ms \
	--length "$len" --domains $doms --metadata ok
expect_eq "kernel log during the storm: no warning, oops, lockdep, hung task" "$bad_log" ""
expect_eq "the table is unchanged" "$(dmsetup table ms)" "$t0_table"

# final: remove + create, same registers, every byte of the full pass reads back
regs=$(registers ms)
dmsetup remove ms
expect "create again" dmsetup create ms --table "$table"
expect_eq "registers survive remove + create" "$(registers ms)" "$regs"
expect "final full verify_only" fio_fill --verify_only=1 --output=$W/fio3.json
read -r _ _ v3 <<<"$(fio_bytes $W/fio3.json)"
note "final verify_only read $((v3 >> 20)) MiB"
expect_eq "verify_only read the whole pass" "$v3" "$fill"
dmsetup remove ms
finish
