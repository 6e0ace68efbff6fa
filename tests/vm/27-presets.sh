#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Every calibrated preset holds data: fio verify on the raw device at
# depth 16 (reads and writes held to their modeled instants, gap moves
# under them), then ext4: mkfs, fio file verify, many small files, fsck
# -fn clean, files intact after a remount.  Behaviour only: the papers'
# figures are the host model's (tests/host/test-presets.py) and the
# benchmarks'.
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load 64 || skip_all "brd not available"

for p in onyx pss psd reram iodrive; do
	wipe_meta /dev/ram0
	if pcm_create pv /dev/ram0 "preset:$p"; then
		expect "preset:$p: fio verify, 4 KiB random writes at depth 16" run_fio --name=pv \
			--filename=/dev/mapper/pv --rw=randwrite --bs=4k --iodepth=16 \
			--size="$(scaled 16 4)m" --verify=crc32c --do_verify=1
		expect_eq "preset:$p: timed, no move failed" \
			"$(status_field pv timing) $(status_field pv move_errors)" "on 0"
		dmsetup remove pv
	else
		fail "preset:$p: create"
	fi
	FS_FIO_MB=$(scaled 8 2) fs_cycle ext4 /dev/ram0 "preset:$p"
done
finish
