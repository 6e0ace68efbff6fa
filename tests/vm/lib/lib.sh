#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Shared helpers for the dm-pcm VM tests.  Each test is a bash script that
# sources this file, prints KTAP subtest lines through pass/fail/expect,
# and ends with finish (exit 0 pass, 1 fail, 4 skip: the kselftest codes).

set -u
export LC_ALL=C
# Without udev, dmsetup makes the /dev/mapper nodes itself.
pgrep -x systemd-udevd >/dev/null || pgrep -x udevd >/dev/null || export DM_DISABLE_UDEV=1

T_N=0
T_FAIL=0
T_SKIP=0
KSFT_SKIP=4
PCM_ROOT=${PCM_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}

# PCM_SCALE: how much of its full size every heavy loop runs, in percent
# (suspend/resume cycles, power cuts, crash points, storm seconds, fuzz
# cases, racing moves, the fio sizes of 04 and the file-system tests).  100 (the default, make check-full, make soak) is the full size;
# make check, and so CI, runs 25 (tools/check's CHECK_SCALE).  A test's own
# knob (PCM_POWER_CUTS...) still wins.
PCM_SCALE=${PCM_SCALE:-100}
[[ $PCM_SCALE =~ ^[1-9][0-9]*$ ]] || { echo "PCM_SCALE must be a positive integer (percent), got '$PCM_SCALE'" >&2; exit 2; }

# scaled FULL [MIN]: FULL at PCM_SCALE percent, at least MIN (default 1).
scaled() {
	local n=$(($1 * PCM_SCALE / 100))
	((n >= ${2:-1})) || n=${2:-1}
	echo "$n"
}

# compat_skip WHAT: true, with a note, on make check's compat tier
# (tests/vm/run --tier compat sets PCM_TIER=compat): for the sections of
# a compat test that are kernel-independent (tests/vm/tiers names them
# and says why); make check-full runs them on every kernel.
compat_skip() {
	[ "${PCM_TIER:-all}" = compat ] || return 1
	note "$1: not run on the compat tier (kernel-independent; tests/vm/tiers)"
}

pass() { T_N=$((T_N + 1)); echo "ok $T_N $*"; }
fail() { T_N=$((T_N + 1)); T_FAIL=$((T_FAIL + 1)); echo "not ok $T_N $*"; }
skip() { T_N=$((T_N + 1)); T_SKIP=$((T_SKIP + 1)); echo "ok $T_N $* # SKIP"; }
note() { echo "# $*"; }

# expect DESC CMD...: one subtest that passes when CMD succeeds.
expect() {
	local desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# expect_fail DESC CMD...: one subtest that passes when CMD fails.
expect_fail() {
	local desc=$1
	shift
	if "$@"; then fail "$desc"; else pass "$desc"; fi
}

# expect_eq DESC GOT WANT
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		note "  got:  '$2'"
		note "  want: '$3'"
	fi
}

# py ARG...: python3 for the tests' own helpers, which need only the
# standard library, without the site module (-S): its .pth files
# (matplotlib's namespace package, setuptools' distutils shim) made a
# start take 2.6-5.5 s in a TCG guest on a loaded host, 1.0 s without.
# Not for a background job: its $! would be a subshell's, not python's.
py() { python3 -S "$@"; }

# quiet CMD...: run CMD, show its output only if it fails.
quiet() {
	"$@" > /tmp/quiet.out 2>&1 && return 0
	sed 's/^/# /' /tmp/quiet.out | tail -30
	return 1
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

finish() {
	echo "1..$T_N"
	[ "$T_FAIL" -eq 0 ] || exit 1
	[ "$T_N" -gt 0 ] && [ "$T_SKIP" -eq "$T_N" ] && exit $KSFT_SKIP
	exit 0
}

# --- devices -------------------------------------------------------------

# brd_load MIB [COUNT]: fresh ramdisks /dev/ram0.., filled so that brd has
# allocated its pages (a fresh ramdisk writes slower than a filled one).
brd_load() {
	local mib=$1 nr=${2:-1} i
	rmmod brd 2>/dev/null
	modprobe brd rd_nr="$nr" rd_size=$((mib * 1024)) max_part=0 || return 1
	for ((i = 0; i < nr; i++)); do
		dd if=/dev/zero of=/dev/ram$i bs=1M count="$mib" oflag=direct status=none || return 1
	done
}

sectors() { blockdev --getsz "$1"; }

# dm_kname NAME: the kernel name (dm-N) of a device-mapper device.
dm_kname() { dmsetup info -c --noheadings -o blkdevname "$1"; }

# pcm_len DEV [WORD...]: the largest legal length for DEV with those
# optional words: pcmctl length's, from build/host/pcm-length (the same
# libpcm calls, the module's layout arithmetic, in one small process:
# pcmctl took 8 s a call, python3 and its imports, in 26-timing under TCG
# on a loaded host: 13 calls, 104 of its 272 s).
pcm_len() {
	local dev=$1 exe=$PCM_ROOT/build/host/pcm-length
	shift
	# (the helper takes words only: --offset and the like go to pcmctl)
	case "${1-}" in
	--*) exe= ;;
	esac
	if [ -n "$exe" ] && [ -x "$exe" ]; then
		"$exe" "$dev" "$@"
	else
		"$PCM_ROOT/tools/pcmctl" length "$dev" "$@"
	fi
}

# pcm_table DEV [WORD...]: a table line over all of DEV, offset 0, as long
# as the metadata and the gap rows allow.
pcm_table() {
	local dev=$1 len
	shift
	len=$(pcm_len "$dev" "$@") || return 1
	if [ $# -gt 0 ]; then
		echo "0 $len pcm $dev 0 $# $*"
	else
		echo "0 $len pcm $dev 0"
	fi
}

# wipe_meta DEV: zero all of DEV, so that the next table may have another
# geometry: with no superblock, dm-pcm formats only a data area that holds
# nothing (a device that grew keeps its data there; the .rst's "Crash
# safety").  BLKZEROOUT: write-zeroes where the device has it.
wipe_meta() {
	blkdiscard -f -z "$1" 2>/dev/null
}

# registers NAME: every domain's start/gap, e.g. "0/7 3/2".
registers() { dmsetup message "$1" 0 registers; }

# pcm_create NAME DEV [WORD...]
pcm_create() {
	local name=$1
	shift
	dmsetup create "$name" --table "$(pcm_table "$@")"
}

# status_field DEV KEY [KEY...]: values from the INFO line (several keys:
# their values in that order, space-separated, from one status read).
# The field list and its
# order are tools/pcmlib/status.py's (FIELDS), the one parser of the line;
# this stays a bash extractor, not a call of status.py or pcmctl status,
# because tests call it in loops and in $(...) and a python3 start costs up
# to a second under TCG.  So the key list comes from status.py --keys
# once, cached in a file (a variable would not outlive the $(...) subshell)
# and made again when status.py is newer; a call then costs one dmsetup.
# KEY must be a field there, and the word at its place in the line must be
# KEY:VALUE: an unknown key or a line out of order is an error (status 2/1).
status_field() {
	local py=$PCM_ROOT/tools/pcmlib/status.py fkeys sw i v line key vals=()
	local cache=/tmp/pcmstatus-keys${PCM_ROOT//\//_}
	if ! [ "$cache" -nt "$py" ]; then
		v=$cache.$BASHPID
		python3 "$py" --keys > "$v" && mv -f "$v" "$cache" || return 2
	fi
	read -r -a fkeys < "$cache"
	line=$(dmsetup status "$1") || return 1
	read -r -a sw <<<"$line"
	for key in "${@:2}"; do
		for i in "${!fkeys[@]}"; do
			[ "${fkeys[i]}" = "$key" ] && break
		done
		if [ "${fkeys[i]-}" != "$key" ]; then
			echo "status_field: $key: not a status field (${fkeys[*]})" >&2
			return 2
		fi
		v=${sw[i + 3]-}
		if [ "${sw[2]-}" != pcm ] || [ "${v%%:*}" != "$key" ] || [ "$v" = "$key" ]; then
			echo "status_field: $1: no $key at field $((i + 1)) of '$line'" >&2
			return 1
		fi
		vals+=("${v#*:}")
	done
	echo "${vals[*]}"
}

# power_cut DEV SEED BLOCKS MAX_S CUT_CMD...: from zeros (so that only this
# round's blocks are on DEV), tests/vm/lib/versioned.py writes BLOCKS 4 KiB
# blocks to DEV in flushed batches of 8 (seed SEED) in the background;
# after 0.3 to MAX_S seconds (drawn from SEED) CUT_CMD cuts the power
# under it (e.g. swaps a dm-flakey drop_writes table in), writes go on
# being lost for 0.3 s, then the writer is stopped.  Sets $durable: the
# batches flushed before the cut (versioned.py check verifies them).
power_cut() {
	local dev=$1 seed=$2 blocks=$3 max=$4 wpid
	shift 4
	durable=0
	blkdiscard -z "$dev" || return 1
	rm -f /tmp/progress
	# (python3 itself, not the py function: $! must be the writer's pid)
	python3 -S "$PCM_ROOT/tests/vm/lib/versioned.py" write "$dev" "$seed" /tmp/progress \
		--blocks "$blocks" --batch 8 &
	wpid=$!
	sleep "$(py -c "import random; print(random.Random($seed).uniform(0.3, $max))")"
	durable=$(cat /tmp/progress 2>/dev/null || echo 0)
	"$@" || { kill $wpid 2>/dev/null; wait $wpid 2>/dev/null; return 1; }
	sleep 0.3		# dm-pcm keeps writing (and moving): all of it is lost
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	return 0
}

# swap_table NAME TABLE: load TABLE into NAME, a device under a pcm
# device, suspended --nolockfs (the pcm device above goes on): the power
# switch of the power-cut tests (dm-flakey drop_writes, then back).
swap_table() {
	dmsetup suspend --nolockfs "$1" && dmsetup load "$1" --table "$2" &&
		dmsetup resume "$1"
}

# power_cuts PC UNDER TABLE CUTS SEED BLOCKS UP DOWN [MAX_S]: CUTS rounds
# of power_cut (after 0.3 to MAX_S seconds, default 2.5) on the pcm
# device PC (its table TABLE) over the device UNDER,
# the power cut by loading DOWN under it (dm-flakey drop_writes); after
# each, PC removed, UP loaded again, PC created on what survived, and the
# batches flushed before the cut verified (versioned.py, seed SEED + the
# round).  Sets cuts_survived and cut_moves (gap moves before the cuts);
# a step that fails fails a subtest and ends the rounds (status 1).
power_cuts() {
	local pc=$1 under=$2 table=$3 cuts=$4 seed=$5 blocks=$6 up=$7 down=$8 max=${9:-2.5} i
	cuts_survived=0 cut_moves=0
	for ((i = 1; i <= cuts; i++)); do
		power_cut "/dev/mapper/$pc" $((seed + i)) "$blocks" "$max" swap_table "$under" "$down" ||
			{ fail "cut $i: zero the device, write, swap to drop_writes"; return 1; }
		cut_moves=$((cut_moves + $(status_field "$pc" gap_moves)))
		# shellcheck disable=SC2015 # fail if either fails
		dmsetup remove "$pc" && swap_table "$under" "$up" ||
			{ fail "cut $i: power back on"; return 1; }
		dmsetup create "$pc" --table "$table" ||
			{ fail "cut $i: dm-pcm loads after the cut"; return 1; }
		if py "$PCM_ROOT/tests/vm/lib/versioned.py" check "/dev/mapper/$pc" $((seed + i)) \
			"$durable" --blocks "$blocks" --batch 8; then
			cuts_survived=$((cuts_survived + 1))
		else
			fail "cut $i (after $durable durable batches): flushed data verifies"
		fi
	done
}

# rows_race NAME MIB: fio's 4 KiB writes (QD4) and reads (QD8) of the same
# 4 rows of the pcm device NAME, from MIB MiB on, for 8 s at full
# PCM_SCALE (3 at least): with ecc:bch a read's data and its parity are
# read at different moments, and a write of its rows may land in between.
rows_race() {
	run_fio --filename="/dev/mapper/$1" --offset="${2}M" --size=16k --bs=4k \
		--time_based --runtime="$(scaled 8 3)" \
		--name=w --rw=randwrite --iodepth=4 --name=r --rw=randread --iodepth=8
}

pcm_refcnt() { cat /sys/module/dm_pcm/refcnt 2>/dev/null || echo none; }

# Remove every dm device (most recent first) and the ramdisks.
cleanup_all() {
	local d
	umount /tmp/pcm-mnt 2>/dev/null
	for d in $(dmsetup ls 2>/dev/null | awk '$1 != "No" {print $1}' | tac); do
		dmsetup remove --retry "$d" >/dev/null 2>&1
	done
	rmmod brd 2>/dev/null
	return 0
}

# Guarantee the module is loaded (a test may have unloaded it).
pcm_module_loaded() {
	[ -d /sys/module/dm_pcm ] || insmod "$PCM_KO"
}

# dmesg_since MARK: kernel messages printed after a marker line.
dmesg_mark() {
	local m="pcm-test-mark-$RANDOM$RANDOM"
	echo "$m" > /dev/kmsg
	echo "$m"
}
dmesg_since() { dmesg | sed -n "/$1/,\$p" | tail -n +2; }

# fio with the defaults every test wants; extra arguments override.
run_fio() {
	fio --output-format=terse --terse-version=3 --minimal --direct=1 \
	    --ioengine=libaio --group_reporting "$@" >/tmp/fio.out 2>/tmp/fio.err
	local rc=$?
	if [ $rc -ne 0 ] || grep -q 'verify:' /tmp/fio.err; then
		sed 's/^/# fio: /' /tmp/fio.err | head -20
		return 1
	fi
	return 0
}

trap cleanup_all EXIT
pcm_module_loaded

# --- pass-down checks shared by the brd and NVMe tests ----------------------

# blktrace_around DEV CMD...: run CMD while tracing DEV; print the RWBS
# column of what DEV received.
blktrace_around() {
	local dev=$1 pid
	shift
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	rm -f /tmp/bt.*
	blktrace -d "$dev" -D /tmp -o bt >/dev/null 2>&1 &
	pid=$!
	sleep 1
	"$@"
	sync
	sleep 1
	kill -INT $pid
	wait $pid
	blkparse -i /tmp/bt -f '%a %d\n' 2>/dev/null | awk '$1 == "Q" {print $2}' | sort -u | xargs
}

# check_passdown NAME BACKING: flush, FUA, discard and write-zeroes given to
# the pcm device NAME reach BACKING whenever BACKING supports them, and the
# pcm device advertises exactly what BACKING does.
check_passdown() {
	local name=$1 back=$2 q qb rwbs
	q=/sys/block/$(dm_kname "$name")/queue
	qb=/sys/block/$(basename "$back")/queue
	expect_eq "$name: write cache as the backing device's" "$(cat "$q/write_cache")" "$(cat "$qb/write_cache")"
	if [ "$(cat "$qb/write_cache")" = "write back" ]; then
		dmsetup message "$name" 0 stats reset
		rwbs=$(blktrace_around "$back" dd if=/dev/urandom of="/dev/mapper/$name" bs=4k count=4 oflag=direct conv=fsync status=none)
		note "backing device saw: $rwbs"
		expect "$name: fsync sends a flush to dm-pcm" test "$(status_field "$name" flushes)" -ge 1
		expect "$name: the flush reaches the backing device" grep -q F <<<"$rwbs"
		if [ "$(cat "$qb/fua" 2>/dev/null)" = 1 ]; then
			dmsetup message "$name" 0 stats reset
			rwbs=$(blktrace_around "$back" dd if=/dev/urandom of="/dev/mapper/$name" bs=4k count=2 oflag=direct,dsync status=none)
			expect "$name: O_DSYNC writes are FUA writes" test "$(status_field "$name" fua_writes)" -ge 2
			expect "$name: FUA reaches the backing device ($rwbs)" grep -qE 'WF|FWS|WFS|WS?F' <<<"$rwbs"
		else
			skip "$name: backing device has no FUA"
		fi
	else
		skip "$name: backing device has no volatile write cache, flushes end above it"
	fi

	expect_eq "$name: discard support as the backing device's" \
		"$([ "$(cat "$q/discard_max_bytes")" -gt 0 ] && echo yes || echo no)" \
		"$([ "$(cat "$qb/discard_max_bytes")" -gt 0 ] && echo yes || echo no)"
	if [ "$(cat "$qb/discard_max_bytes")" -gt 0 ]; then
		dd if=/dev/urandom of="/dev/mapper/$name" bs=1M count=4 oflag=direct status=none
		dmsetup message "$name" 0 stats reset
		expect "$name: blkdiscard" blkdiscard -o 0 -l $((4 << 20)) "/dev/mapper/$name"
		expect "$name: discards counted" test "$(status_field "$name" discard_bytes)" -eq $((4 << 20))
	else
		skip "$name: backing device has no discard"
	fi

	dd if=/dev/urandom of="/dev/mapper/$name" bs=1M count=2 oflag=direct status=none
	dmsetup message "$name" 0 stats reset
	expect "$name: zero-out (BLKZEROOUT)" blkdiscard -z -o 0 -l $((2 << 20)) "/dev/mapper/$name"
	expect "$name: zeroed range reads zeros" \
		cmp <(dd if="/dev/mapper/$name" bs=1M count=2 iflag=direct status=none) <(head -c $((2 << 20)) /dev/zero)
	if [ "$(cat "$qb/write_zeroes_max_bytes")" -gt 0 ]; then
		expect "$name: as WRITE_ZEROES, passed down" test "$(status_field "$name" write_zeroes_bytes)" -eq $((2 << 20))
	else
		expect "$name: as plain writes (no WRITE_ZEROES below)" test "$(status_field "$name" write_bytes)" -eq $((2 << 20))
	fi
}

# --- file systems -----------------------------------------------------------

# small_files DIR: 300 small files in DIR, 100 of them renamed, each
# fsynced; 300 there after.  The renames are one process's, not a mv
# each: under TCG an exec costs about a second on a loaded host.
small_files() (
	mkdir -p "$1" && cd "$1" || exit 1
	# shellcheck disable=SC2046,SC2012 # the shuffled numbers are perl's arguments; ls counts plain names
	for i in $(seq 1 300); do echo "$i" > "f$i"; done &&
		perl -e 'for (@ARGV) { rename("f$_", "g$_") or die "f$_: $!\n" }' \
			$(seq 1 300 | shuf -n 100 --random-source=<(yes)) &&
		sync ./* && [ "$(ls | wc -l)" -eq 300 ]
)

# fs_cycle FS BACKING [WORD...]: mkfs, mount, fio file verify, a
# metadata-heavy load, umount, fsck -fn, remount and compare, on a pcm
# device with those optional words.  FS_FIO_MB sizes the fio part (32 at
# full PCM_SCALE); FS_BLOCK, if set, is the file system's block size.
fs_cycle() {
	local fs=$1 dev=$2 mnt=/tmp/pcm-mnt sum1 t
	shift 2
	t="$fs${FS_BLOCK:+ -b $FS_BLOCK}${*:+ ($*)}"
	mkdir -p $mnt
	wipe_meta "$dev"
	pcm_create fs "$dev" "$@" || return 1
	expect "$t: mkfs" "mkfs.$fs" -q -F ${FS_BLOCK:+-b "$FS_BLOCK"} /dev/mapper/fs
	expect "$t: mount" mount /dev/mapper/fs $mnt
	expect "$t: fio file verify" run_fio --name=f --directory=$mnt --nrfiles=8 \
		--size="${FS_FIO_MB:-$(scaled 32 8)}m" --bs=4k --rw=randwrite --verify=crc32c --do_verify=1 --fsync=64
	expect "$t: many small files, renames, fsync" small_files $mnt/d
	sum1=$(cat $mnt/d/* | md5sum)
	expect "$t: umount" umount $mnt
	expect "$t: fsck -fn clean" quiet "fsck.$fs" -fn /dev/mapper/fs
	mount /dev/mapper/fs $mnt
	expect_eq "$t: files intact after remount" "$(cat $mnt/d/* | md5sum)" "$sum1"
	umount $mnt
	note "$t: $(status_field fs gap_moves) gap moves, start $(status_field fs start)"
	dmsetup remove fs
}
