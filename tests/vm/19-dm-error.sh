#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Backing-device faults: dm-pcm (gap_interval:1, so gap moves and
# superblock writes run all the time) over a dm-linear device over a
# ramdisk.  A versioned writer (fsync after each batch) and a fio writer
# with verify run side by side; mid-run the lower table is swapped to
# "error" (then, in a second round, to dm-flakey error_writes).  I/O
# errors must reach both writers, a gap move and a superblock write that
# fail must show as move_errors and metadata:failed, and nothing may hang
# (every command is bounded).  With the linear table back: while
# metadata:failed, writes are refused and reads work, a resume (of the
# same table, or of a reloaded one) clears it, every batch fsynced before
# the fault verifies (live, and after remove + create), and fio verify
# passes on the device afterwards.  A third round keeps the superblocks
# on a meta_device and fails only that device: writes refused, reads
# work, a resume is refused until the device is back, data intact.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load 8 2 || skip_all "brd not available"
here=$(dirname "$0")/lib	# the helpers (lib/*.py)
T=30			# bound on every single command that may block
sz=$(sectors /dev/ram0)
linear="0 $sz linear /dev/ram0 0"
words="gap_interval:1"
declare -A faulty=([error]="0 $sz error")
if modprobe dm-flakey 2>/dev/null; then
	faulty[flakey]="0 $sz flakey /dev/ram0 0 0 3600 1 error_writes"
fi

# swap_dev DEV TABLE: replace DEV's table under dm-pcm
swap_dev() {
	timeout "$T" dmsetup suspend --nolockfs "$1" &&
		timeout "$T" dmsetup load "$1" --table "$2" &&
		timeout "$T" dmsetup resume "$1"
}
swap() { swap_dev lower "$1"; }

# gone PID SECS: PID exits within SECS seconds (else it is killed)
gone() {
	local pid=$1 i
	for ((i = 0; i < $2 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	return 1
}

# fio_bounded SECS ARGS...: run_fio under a time limit
fio_bounded() {
	local secs=$1
	shift
	timeout "$secs" fio --output-format=terse --terse-version=3 --minimal --direct=1 \
		--ioengine=libaio --group_reporting "$@" >/tmp/fio.out 2>/tmp/fio.err
	local rc=$?
	if [ $rc -ne 0 ] || grep -q 'verify:' /tmp/fio.err; then
		sed 's/^/# fio: /' /tmp/fio.err | head -20
		return 1
	fi
}

msg() { timeout 60 dmsetup message pe 0 "$@" 2>/dev/null; }

# the rows of one 4 KiB block of dm-pcm, read or written directly
blk_write() { timeout "$T" dd if=/dev/urandom of=/dev/mapper/pe bs=4k count=1 seek="$1" oflag=direct status=none 2>/dev/null; }
blk_read() { timeout "$T" dd if=/dev/mapper/pe of=/dev/null bs=4k count=1 skip="$1" iflag=direct status=none 2>/dev/null; }

dmsetup create lower --table "$linear" || skip_all "cannot create dm-linear"
table=$(pcm_table /dev/mapper/lower $words)
blocks=$(( $(pcm_len /dev/mapper/lower $words) / 8 ))
half=$((blocks / 2))
seed=$((RANDOM * 32768 + RANDOM))
note "seed $seed, $blocks blocks: versioned writer on 0..$((half - 1)), fio on the rest"
faults=0 fio_errors=0 verified=0 moves_failed=0

round() {
	local kind=$1 r=$2 wpid fpid durable moves errs

	# a fresh, zeroed device for each round
	dmsetup remove pe 2>/dev/null
	dd if=/dev/zero of=/dev/mapper/lower bs=1M oflag=direct status=none 2>/dev/null
	expect "$kind: create dm-pcm" dmsetup create pe --table "$table" || return

	rm -f /tmp/progress
	python3 "$here/versioned.py" write /dev/mapper/pe $((seed + r)) /tmp/progress \
		--blocks $half --batch 8 > /tmp/writer.out 2>&1 &
	wpid=$!
	fio --name=w --filename=/dev/mapper/pe --offset=$((half * 4096)) \
		--size=$(((blocks - half) * 4096)) --direct=1 --ioengine=libaio \
		--iodepth=4 --rw=randwrite --bs=4k --verify=crc32c --loops=1000 \
		--randseed=$((seed + r)) > /tmp/fio-bg.out 2>&1 &
	fpid=$!
	# let some batches become durable, then cut at a random instant
	for ((i = 0; i < 600; i++)); do
		[ "$(cat /tmp/progress 2>/dev/null || echo 0)" -ge 5 ] && break
		kill -0 $wpid 2>/dev/null || break
		sleep 0.1
	done
	sleep "$(python3 -c "import random; print(random.Random($seed + $r).uniform(0, 1))")"
	expect "$kind: both writers running when the fault comes" kill -0 $wpid $fpid
	moves=$(status_field pe gap_moves)
	expect "$kind: swap the lower table to $kind" swap "${faulty[$kind]}" || return
	faults=$((faults + 1))

	expect "$kind: versioned writer stops" gone $wpid 60
	wait $wpid
	expect "$kind: versioned writer sees the error" grep -q 'Input/output error' /tmp/writer.out
	expect "$kind: fio stops" gone $fpid 60
	wait $fpid
	expect "$kind: fio fails" test $? -ne 0
	errs=$(grep -c 'Input/output error' /tmp/fio-bg.out)
	expect "$kind: fio sees EIO" test "$errs" -ge 1
	fio_errors=$((fio_errors + errs))
	durable=$(cat /tmp/progress 2>/dev/null || echo 0)
	note "$kind: $durable batches durable, $moves gap moves before the fault"

	# a write, a forced move and a superblock write, all failing
	expect_fail "$kind: a write fails" blk_write $half
	expect_fail "$kind: move_gap fails" msg move_gap
	expect_fail "$kind: persist fails" msg persist
	expect "$kind: move_errors counts the failed moves" test "$(status_field pe move_errors)" -ge 1
	moves_failed=$((moves_failed + $(status_field pe move_errors)))
	expect_eq "$kind: metadata failed" "$(status_field pe metadata)" failed
	if [ "$kind" = flakey ]; then
		expect "$kind: reads work while writes fail" blk_read 0
	else
		expect_fail "$kind: reads fail too" blk_read 0
	fi

	expect "$kind: swap the linear table back" swap "$linear" || return
	expect_fail "metadata:failed after $kind: writes refused" blk_write $half
	expect "metadata:failed after $kind: reads work" blk_read $half
	expect "metadata:failed after $kind: flushed data verifies live" \
		timeout 120 python3 "$here/versioned.py" check /dev/mapper/pe $((seed + r)) \
		"$durable" --blocks $half --batch 8
	expect_eq "metadata:failed after $kind: still failed" "$(status_field pe metadata)" failed
	# a resume clears it, of the same table (error) or of a reloaded one (flakey)
	if [ "$kind" = flakey ]; then
		expect "after $kind: reload" timeout $T dmsetup reload pe --table "$table"
	fi
	expect "after $kind: suspend/resume" bash -c "timeout $T dmsetup suspend pe && timeout $T dmsetup resume pe"
	expect_eq "after $kind: resume clears metadata:failed" "$(status_field pe metadata)" ok
	expect "after $kind: writes work again" blk_write $half
	expect "after $kind: move_gap works again" msg move_gap 2
	expect "after $kind: persist works again" msg persist

	expect "after $kind: remove + create" bash -c "timeout $T dmsetup remove pe && timeout $T dmsetup create pe --table '$table'"
	if timeout 120 python3 "$here/versioned.py" check /dev/mapper/pe $((seed + r)) \
		"$durable" --blocks $half --batch 8; then
		pass "after $kind: every batch fsynced before the fault verifies"
		verified=$((verified + half * 4096))
	else
		fail "after $kind: every batch fsynced before the fault verifies"
	fi
	if fio_bounded 300 --name=v --filename=/dev/mapper/pe --offset=$((half * 4096)) \
		--size=$(((blocks - half) * 4096)) --iodepth=8 --rw=randwrite --bs=4k \
		--verify=crc32c --do_verify=1 --verify_fatal=1; then
		pass "after $kind: fio verify pass"
		verified=$((verified + (blocks - half) * 4096))
	else
		fail "after $kind: fio verify pass"
	fi
	expect_eq "after $kind: no move errors, metadata ok" \
		"$(status_field pe move_errors) $(status_field pe metadata)" "0 ok"
	expect "after $kind: remove" timeout $T dmsetup remove pe
}

r=0
for kind in error flakey; do
	r=$((r + 1))
	if [ -z "${faulty[$kind]:-}" ]; then
		skip "$kind: dm-flakey not available"
		continue
	fi
	round "$kind" "$r"
done
# The metadata on its own device, and that device failing: dm-pcm over
# the linear device, its superblocks on "mlower" (linear over ram1),
# which is swapped to error.  The data device works all along.
meta_round() {
	local mtable mlinear bytes merror
	mlinear="0 $(sectors /dev/ram1) linear /dev/ram1 0"
	merror="0 $(sectors /dev/ram1) error"
	dmsetup remove pe 2>/dev/null
	dd if=/dev/zero of=/dev/mapper/lower bs=1M oflag=direct status=none 2>/dev/null
	dmsetup create mlower --table "$mlinear" || { fail "meta: create mlower"; return; }
	mtable=$(pcm_table /dev/mapper/lower $words meta_device:/dev/mapper/mlower)
	expect "meta: create dm-pcm with meta_device" dmsetup create pe --table "$mtable" || return
	# the oracle: 2 MiB of random data written and fsynced, zeros after it
	bytes=$(( $(sectors /dev/mapper/pe) * 512 ))
	head -c $((2 << 20)) /dev/urandom > /tmp/oracle.img
	truncate -s $bytes /tmp/oracle.img
	expect "meta: write 2 MiB (gap_interval:1) and fsync" timeout 120 dd if=/tmp/oracle.img \
		of=/dev/mapper/pe bs=64k count=32 oflag=direct conv=fsync status=none
	expect "meta: settle the moves" msg move_gap 1

	expect "meta: swap the metadata device to error" swap_dev mlower "$merror" || return
	faults=$((faults + 1))
	expect_fail "meta: persist fails" msg persist
	expect_eq "meta: metadata failed" "$(status_field pe metadata)" failed
	expect_fail "meta: move_gap fails" msg move_gap
	expect_fail "meta: writes refused" blk_write 600
	expect "meta: reads work" same
	# the superblock cannot be read: a resume is refused and the device
	# stays suspended until the metadata device is back
	expect "meta: suspend" timeout $T dmsetup suspend pe
	expect_fail "meta: resume refused while the metadata device fails" \
		timeout $T dmsetup resume pe
	expect "meta: swap the metadata device back" swap_dev mlower "$mlinear" || return
	expect "meta: resume" timeout $T dmsetup resume pe
	expect_eq "meta: resume clears metadata:failed" "$(status_field pe metadata)" ok
	expect "meta: data intact" same
	expect "meta: remove + create" bash -c "timeout $T dmsetup remove pe && timeout $T dmsetup create pe --table '$mtable'"
	expect "meta: data intact after remove + create" same
	expect "meta: writes and moves work again" bash -c "timeout $T dd if=/tmp/oracle.img of=/dev/mapper/pe \
		bs=64k count=1 oflag=direct status=none && timeout 60 dmsetup message pe 0 move_gap 4"
	expect "meta: data intact at the end" same
	expect "meta: remove" timeout $T dmsetup remove pe
	dmsetup remove mlower
}
# same: dm-pcm holds exactly the oracle image
same() {
	timeout 120 cmp -s <(dd if=/dev/mapper/pe bs=64k iflag=direct status=none) /tmp/oracle.img &&
		verified=$((verified + $(stat -c %s /tmp/oracle.img)))
}
meta_round

dmsetup remove lower
note "faults injected: $faults, fio I/O errors: $fio_errors, failed gap moves: $moves_failed, bytes verified: $verified"
finish
