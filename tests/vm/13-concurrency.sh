#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Concurrency and load: four devices at once, io_uring and libaio at depth
# 128 with numjobs = CPUs, remove under I/O, and suspend/resume, same-table
# reloads and message storms while fio writes and verifies.
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load 32 4 || skip_all "brd not available"
cpus=$(nproc)

for i in 0 1 2 3; do
	pcm_create c$i /dev/ram$i
done
jobs=()
for i in 0 1 2 3; do
	jobs+=(--name="d$i" --filename="/dev/mapper/c$i")
done
expect "four devices at once, io_uring depth 128, verify" \
	run_fio --ioengine=io_uring --rw=randwrite --bs=4k --iodepth=128 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --size=32m "${jobs[@]}"
expect "libaio depth 128, numjobs=$cpus, verify" \
	run_fio --name=aio --filename=/dev/mapper/c0 --ioengine=libaio --rw=randwrite \
	--bs=4k --iodepth=128 --numjobs="$cpus" --offset_increment=8m --size=8m \
	--verify=crc32c --do_verify=1 --verify_fatal=1

# remove while fio holds the device open: EBUSY at once, no hang
dmsetup message c1 0 stats reset
fio --name=busy --filename=/dev/mapper/c1 --rw=randread --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=16 --time_based --runtime=20 >/dev/null 2>&1 &
fpid=$!
# wait until fio is reading: it opens the device once to size it and
# closes it again before the job opens it for good, so "open" alone
# can be seen in that gap (fio starts slowly under TCG)
for _ in $(seq 1 600); do
	[ "$(status_field c1 reads)" -gt 0 ] && break
	sleep 0.1
done
expect "fio is reading c1" test "$(status_field c1 reads)" -gt 0
expect_fail "remove under I/O is refused" timeout 10 dmsetup remove c1
expect "fio finishes after the refused remove" wait $fpid
expect "the device works after it" dd if=/dev/zero of=/dev/mapper/c1 bs=4k count=4 oflag=direct status=none

# 100 suspend/resume cycles (at PCM_SCALE: 25 in make check), a same-table
# reload every 5th, and message storms, under a writer that verifies as it
# goes (verify_backlog)
want=$(scaled 100 5)
table=$(dmsetup table c2)
fio --name=churn --filename=/dev/mapper/c2 --rw=randwrite --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=8 --size=32m --time_based --runtime=3600 \
	--verify=crc32c --verify_backlog=256 --verify_fatal=1 --verify_state_save=0 \
	>/tmp/churn.out 2>&1 &
fpid=$!
sleep 1
cycles=0 reloads=0 msgs=0 bad=0
while kill -0 $fpid 2>/dev/null && [ $cycles -lt "$want" ]; do
	if [ $((cycles % 5)) = 4 ]; then
		dmsetup reload c2 --table "$table" || bad=$((bad + 1))
		reloads=$((reloads + 1))
	fi
	dmsetup suspend c2 || bad=$((bad + 1))
	dmsetup resume c2 || bad=$((bad + 1))
	cycles=$((cycles + 1))
	for m in "stats reset" config "bogus verb" "set row_size 8192"; do
		# shellcheck disable=SC2086 # $m: the message's words, split on purpose
		dmsetup message c2 0 $m >/dev/null 2>&1
		msgs=$((msgs + 1))
	done
done
alive=no
kill -INT $fpid 2>/dev/null && alive=yes
wait $fpid
note "suspend/resume cycles $cycles, same-table reloads $reloads, messages $msgs"
expect_eq "$want cycles ran with the writer alive throughout" "$cycles:$alive" "$want:yes"
expect_eq "every suspend, resume and reload succeeded" "$bad" 0
expect "the writer reported no error" grep -q 'err= 0' /tmp/churn.out
expect_fail "and no verify failure" grep -qiE 'verify.*(fail|bad|mismatch)|bad magic' /tmp/churn.out
expect_eq "the table is unchanged" "$(dmsetup table c2)" "$table"
finish
