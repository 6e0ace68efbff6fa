#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# I/O faults from fail_make_request (debug kernels: CONFIG_FAIL_MAKE_REQUEST)
# on the ramdisks under dm-pcm.  With "space" and "times=1" exactly the
# k-th bio that a ramdisk receives fails (from the message's own task
# where the message does the I/O itself), so each step of a plain write, a
# gap move (row read, row write, the superblock copy that persists it
# before the registers switch) and a superblock write is failed
# in turn, with the metadata on the data device and on a
# separate meta_device.  Each time: the error reaches the caller (dd,
# the message), status shows move_errors or metadata:failed as the
# contract says, nothing hangs (every command is bounded); with the fault
# off, while metadata:failed writes are refused and reads work, a
# suspend/resume clears it, and every byte written before verifies
# (live, after the resume, and after remove + create).
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

F=/sys/kernel/debug/fail_make_request
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -d $F ] || skip_all "$F absent: kernel without CONFIG_FAIL_MAKE_REQUEST (use a debug kernel)"
brd_load "$(scaled 8 2)" 2 || skip_all "brd not available"	# MiB: 2 in make check
[ -e /sys/block/ram0/make-it-fail ] || skip_all "no /sys/block/ram0/make-it-fail"
T=30				# bound on every command that may block
BS=4096

# the fault attributes are global: save them and put them back at the end
attrs="probability interval times space verbose task-filter"
declare -A saved
for a in $attrs; do saved[$a]=$(cat "$F/$a"); done
restore() {
	local a
	echo 0 > /sys/block/ram0/make-it-fail 2>/dev/null
	echo 0 > /sys/block/ram1/make-it-fail 2>/dev/null
	for a in $attrs; do echo "${saved[$a]}" > "$F/$a"; done
	cleanup_all
}
trap restore EXIT
echo 0 > $F/verbose		# no log line, no stack dump per failure
echo N > $F/task-filter
echo 1 > $F/interval
echo 0 > $F/times
echo 100 > $F/probability

injected=0 last=0 armed=0 armed_disk=""
# arm DISK SPACE TIMES: fail bios on DISK once SPACE bytes have passed
arm() {
	echo "$2" > $F/space && echo "$3" > $F/times &&
		echo 1 > "/sys/block/$1/make-it-fail"
	armed=$3 armed_disk=$1
}
# disarm: sets $last to the number of bios failed since arm
disarm() {
	local left
	echo 0 > "/sys/block/$armed_disk/make-it-fail"
	left=$(cat $F/times)
	echo 0 > $F/times
	last=$((armed - left))
	injected=$((injected + last))
}

verified=0
# same NAME: NAME holds exactly the oracle image ($bytes long)
same() {
	timeout 60 cmp -s <(dd if="/dev/mapper/$1" bs=64k iflag=direct status=none) /tmp/oracle.img &&
		verified=$((verified + bytes))
}
# put_block NAME N [oflag]: write oracle block N to NAME
put_block() {
	timeout "$T" dd if=/tmp/oracle.img of="/dev/mapper/$1" bs="$BS" skip="$2" seek="$2" count=1 \
		oflag=direct${3:+,$3} status=none conv=notrunc 2>/tmp/dd.err
}
get_block() {
	timeout "$T" dd if="/dev/mapper/$1" of=/dev/null bs="$BS" skip="$2" count=1 iflag=direct status=none 2>/dev/null
}
sf() { status_field "$@"; }
msg() { local name=$1; shift; timeout "$T" dmsetup message "$name" 0 "$@" 2>/dev/null; }
# (these in the shell, not in a bash -c each: under TCG on the debug
# kernel an exec is the cost of this test)
suspend_resume() { timeout "$T" dmsetup suspend "$1" && timeout "$T" dmsetup resume "$1"; }
recreate() { timeout "$T" dmsetup remove "$1" && timeout "$T" dmsetup create "$1" --table "$2"; }

# settle NAME: owed moves done, counters zero
settle() {
	timeout $T dmsetup message "$1" 0 move_gap 1 && dmsetup message "$1" 0 stats reset
}

# afterwards NAME TABLE WHAT: the fault is off; check the failed state,
# recover, verify at each stage
afterwards() {
	local name=$1 table=$2 what=$3 regs
	if [ "$(sf "$name" metadata)" = failed ]; then
		expect_fail "$what: metadata:failed refuses writes" put_block "$name" 3
		expect "$what: metadata:failed still reads" get_block "$name" 3
		expect "$what: data intact while metadata:failed" same "$name"
		# fi: resume the same table; fm: reload it first
		if [ "$name" = fm ]; then
			expect "$what: reload" timeout $T dmsetup reload "$name" --table "$table"
		fi
		expect "$what: suspend/resume" suspend_resume "$name"
		expect_eq "$what: resume clears metadata:failed" "$(sf "$name" metadata)" ok
	fi
	expect "$what: data intact" same "$name"
	regs=$(registers "$name")
	expect "$what: remove + create" recreate "$name" "$table"
	expect_eq "$what: registers survive remove + create" "$(registers "$name")" "$regs"
	expect "$what: data intact after remove + create" same "$name"
	expect "$what: a move works" timeout $T dmsetup message "$name" 0 move_gap 1
}

# in_task CMD...: CMD with only the bios it submits itself eligible to fail
# (task-filter): move_gap and persist do their I/O in the caller's task,
# so no other bio to the disk, whoever sends it, can take the fault
in_task() {
	echo Y > $F/task-filter
	bash -c 'echo 1 > /proc/self/make-it-fail && exec "$@"' in_task "$@"
	local rc=$?
	echo N > $F/task-filter
	return $rc
}

# every: true at full PCM_SCALE (make check-full, make check-debug).  Under
# TCG on the debug kernel, where make check runs this test, each trial is
# ~25 s of process starts; below full scale it runs one trial of each kind
# of bio a message sends (a row copy's read, the superblock copy, the
# second round's bio) and leaves out the repeats of a kind (a row copy's
# write, the second superblock copy, the same bio under "move_gap 2")
every() { [ "$PCM_SCALE" -ge 100 ]; }

# trial NAME TABLE DISK K WANT_RC WANT_MOVE_ERRORS WANT_META CMD...: the
# K-th bio (from 0) that CMD sends to DISK fails
trial() {
	local name=$1 table=$2 disk=$3 k=$4 rc=$5 me=$6 meta=$7 what
	shift 7
	what="$name: ${*:5} (bio $k on $disk fails)"
	settle "$name" || { fail "$what: settle"; return; }
	local moves0
	moves0=$(sf "$name" gap_moves)
	arm "$disk" $((k * BS + 1)) 1
	in_task timeout $T "$@" >/dev/null 2>&1
	local got=$?
	disarm
	expect_eq "$what: one fault injected" "$last" 1
	# want_moves: the moves the message still made (the other domains')
	[ -z "${want_moves-}" ] ||
		expect_eq "$what: moves made" $(($(sf "$name" gap_moves) - moves0)) "$want_moves"
	expect_eq "$what: result" "$([ $got -eq 0 ] && echo ok || echo fails)" "$rc"
	expect_eq "$what: move_errors, metadata" "$(sf "$name" move_errors metadata)" "$me $meta"
	afterwards "$name" "$table" "$what"
}

# --- metadata on the data device -----------------------------------------

words="gap_interval:1"
table=$(pcm_table /dev/ram0 $words)
dmsetup create "fi" --table "$table" || skip_all "cannot create dm-pcm"
bytes=$(( $(sectors /dev/mapper/fi) * 512 ))
blocks=$((bytes / BS))
head -c $bytes /dev/urandom > /tmp/oracle.img
dmsetup message "fi" 0 set gap_interval 0
expect "fi: write the pattern" timeout 120 dd if=/tmp/oracle.img of=/dev/mapper/fi bs=64k \
	oflag=direct conv=fsync status=none
dmsetup message "fi" 0 set gap_interval 1

# (a) plain writes and reads, no moves
settle "fi"
dmsetup message "fi" 0 set gap_interval 0
arm ram0 0 1000000
head -c $BS /dev/urandom > /tmp/junk
expect_fail "fi: a write to a failing device fails" timeout $T dd if=/tmp/junk of=/dev/mapper/fi \
	bs=$BS seek=7 count=1 oflag=direct status=none
expect "fi: ... with EIO" grep -q 'Input/output error' <(timeout $T dd if=/tmp/junk \
	of=/dev/mapper/fi bs=$BS seek=7 count=1 oflag=direct status=none 2>&1)
expect_fail "fi: a read from a failing device fails" get_block "fi" 7
disarm
expect "fi: faults injected" test "$last" -ge 3
expect_eq "fi: no move, metadata ok" "$(sf "fi" move_errors gap_moves metadata)" "0 0 ok"
afterwards "fi" "$table" "fi: plain writes"

# (b) gap moves: row read, row write, then one superblock copy (with
# PREFLUSH) persists the move before the registers switch: if it fails,
# the move is not made (a move error) and metadata:failed.  Two rounds:
# bios 0-2 and 3-5; a failed round stops the message.
trial "fi" "$table" ram0 0 fails 1 ok dmsetup message "fi" 0 move_gap
every && trial "fi" "$table" ram0 1 fails 1 ok dmsetup message "fi" 0 move_gap
trial "fi" "$table" ram0 2 fails 1 failed dmsetup message "fi" 0 move_gap
every && trial "fi" "$table" ram0 2 fails 1 failed dmsetup message "fi" 0 move_gap 2
trial "fi" "$table" ram0 3 fails 1 ok dmsetup message "fi" 0 move_gap 2
every && trial "fi" "$table" ram0 5 fails 1 failed dmsetup message "fi" 0 move_gap 2
# (c) superblock writes: copy 1, copy 2
trial "fi" "$table" ram0 0 fails 0 failed dmsetup message "fi" 0 persist
every && trial "fi" "$table" ram0 1 fails 0 failed dmsetup message "fi" 0 persist

# (b) writes that owe a move (gap_interval:1): the data write and each
# bio of the move it starts fail in turn (the worker copies the row and
# persists the move before the registers switch)
# (below full scale, the row copy's write is left out: its read is one)
declare -A seen=()
ks="0 1 2 3"
every || ks="0 1 3"
for k in $ks; do
	what="fi: write + move (bio $k fails)"
	settle "fi" || { fail "$what: settle"; continue; }
	b=$(( (RANDOM * 32768 + RANDOM) % blocks ))
	head -c $BS /dev/urandom > /tmp/newblock
	arm ram0 $((k * BS + 1)) 1
	timeout $T dd if=/tmp/newblock of=/dev/mapper/fi bs=$BS seek=$b count=1 \
		oflag=direct status=none 2>/dev/null
	rc=$?
	# the move runs on the worker, the persist after it: wait for both
	for ((i = 0; i < 300; i++)); do
		read -r me sb meta <<<"$(sf "fi" move_errors sb_writes metadata)"
		[ "${me:-0}" -ge 1 ] || [ "${sb:-0}" -ge 1 ] || [ "$meta" = failed ] && break
		sleep 0.1
	done
	disarm
	expect_eq "$what: one fault injected" "$last" 1
	me=$(sf "fi" move_errors) meta=$(sf "fi" metadata)
	[ $rc -eq 0 ] && dd if=/tmp/newblock of=/tmp/oracle.img bs=$BS seek=$b count=1 conv=notrunc status=none
	if [ $rc -ne 0 ]; then
		seen[write]=1
		expect_eq "$what: the write failed, the move did not" "$me $(sf "fi" gap_moves) $meta" "0 1 ok"
	elif [ "$meta" = failed ]; then
		seen[superblock]=1
		expect_eq "$what: the persist failed, so the move was not made" "$me $(sf "fi" gap_moves)" "1 0"
	else
		seen[copy]=1
		expect_eq "$what: the row copy failed" "$me" 1
	fi
	afterwards "fi" "$table" "$what"
done
expect_eq "fi: write + move: failed a data write, a row copy and a superblock write" \
	"${seen[write]:-0}${seen[copy]:-0}${seen[superblock]:-0}" 111
dmsetup remove "fi"

# --- a round over several domains ------------------------------------------

# A round's row copies go out together (dm-pcm-move.c): the reads of all
# four domains (bios 0-3), then the writes of those whose read succeeded,
# then the superblock.  A fault in one copy fails that domain's move only
# (one move error, the three others made and persisted); a fault in the
# superblock fails all four.
words="gap_interval:0 domains:4"
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(pcm_table /dev/ram0 $words)
wipe_meta /dev/ram0	# fi's rows: a data area holding data is not formatted
dmsetup create fd --table "$table" || { fail "fd: create"; finish; }
bytes=$(( $(sectors /dev/mapper/fd) * 512 ))
head -c $bytes /dev/urandom > /tmp/oracle.img
expect "fd: write the pattern" timeout 120 dd if=/tmp/oracle.img of=/dev/mapper/fd bs=64k \
	oflag=direct conv=fsync status=none
want_moves=3
trial fd "$table" ram0 1 fails 1 ok dmsetup message fd 0 move_gap
trial fd "$table" ram0 6 fails 1 ok dmsetup message fd 0 move_gap
want_moves=0
every && trial fd "$table" ram0 8 fails 4 failed dmsetup message fd 0 move_gap
unset want_moves
dmsetup remove fd

# --- metadata on a meta_device ----------------------------------------------

words="gap_interval:1 meta_device:/dev/ram1"
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(pcm_table /dev/ram0 $words)
wipe_meta /dev/ram0	# fi's rows: a data area holding data is not formatted
dmsetup create fm --table "$table" || { fail "fm: create"; finish; }
bytes=$(( $(sectors /dev/mapper/fm) * 512 ))
head -c $bytes /dev/urandom > /tmp/oracle.img
dmsetup message fm 0 set gap_interval 0
expect "fm: write the pattern" timeout 120 dd if=/tmp/oracle.img of=/dev/mapper/fm bs=64k \
	oflag=direct conv=fsync status=none
dmsetup message fm 0 set gap_interval 1

# a move: row read and write on ram0, a flush of ram0, one copy on ram1
# (PREFLUSH, FUA); two rounds: a copy on ram1 after each
trial fm "$table" ram0 0 fails 1 ok dmsetup message fm 0 move_gap
every && trial fm "$table" ram0 1 fails 1 ok dmsetup message fm 0 move_gap
trial fm "$table" ram1 0 fails 1 failed dmsetup message fm 0 move_gap
every && trial fm "$table" ram1 0 fails 1 failed dmsetup message fm 0 move_gap 2
trial fm "$table" ram1 1 fails 1 failed dmsetup message fm 0 move_gap 2
# persist: the flush of the data device (space 0 fails even an empty
# bio), then each copy
settle fm
arm ram0 0 1
expect_fail "fm: persist with the data flush failing" \
	in_task timeout $T dmsetup message fm 0 persist 2>/dev/null
disarm
expect_eq "fm: persist (flush fails): one fault injected" "$last" 1
expect_eq "fm: persist (flush fails): metadata failed" "$(sf fm metadata)" failed
afterwards fm "$table" "fm: persist (flush fails)"
trial fm "$table" ram1 0 fails 0 failed dmsetup message fm 0 persist
every && trial fm "$table" ram1 1 fails 0 failed dmsetup message fm 0 persist

# metadata device failing: writes to the data device still fail once the
# superblock cannot be written, reads go on
settle fm
arm ram1 0 1000000
expect_fail "fm: persist while the metadata device fails" msg fm persist
expect_fail "fm: metadata:failed refuses writes (fault on)" put_block fm 5
expect "fm: reads work (fault on)" same fm
# a resume cannot read the superblock: refused, the device stays suspended
timeout $T dmsetup suspend fm
expect_fail "fm: resume refused while the metadata device fails" \
	bash -c "timeout $T dmsetup resume fm 2>/dev/null"
disarm
expect "fm: resume once the fault is gone" timeout $T dmsetup resume fm
expect_eq "fm: resume clears metadata:failed" "$(sf fm metadata)" ok
expect "fm: data intact" same fm

# a table cannot load when its superblock cannot be read
dmsetup remove fm
arm ram1 0 1000000
expect_fail "fm: create refused while the metadata device fails" \
	bash -c "timeout $T dmsetup create fm --table '$table' 2>/dev/null"
disarm
expect_fail "fm: no device left" bash -c "dmsetup info fm >/dev/null 2>&1"
expect_eq "fm: module refcount" "$(pcm_refcnt)" 0
expect "fm: create once the fault is gone" timeout $T dmsetup create fm --table "$table"
expect "fm: data intact" same fm
dmsetup remove fm
note "I/O faults injected: $injected, bytes verified: $verified"
finish
