#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# fio verify=crc32c over the whole device: 4 KiB random writes, then mixed
# sizes 512 B..1 MiB at unaligned (512 B) offsets that straddle rows,
# with several row sizes.
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load "$(scaled 64 16)" || skip_all "brd not available"	# MiB
total=0

for rs in 4096 512 65536; do
	wipe_meta /dev/ram0
	pcm_create fv /dev/ram0 row_size:$rs
	size=$(( $(sectors /dev/mapper/fv) * 512 ))
	expect "row_size:$rs: 4 KiB randwrite verify=crc32c over ${size} bytes" \
		run_fio --name=v4k --filename=/dev/mapper/fv --rw=randwrite --bs=4k \
		--iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1 --size="$size"
	total=$((total + size))
	expect "row_size:$rs: mixed 512 B..1 MiB unaligned verify=crc32c" \
		run_fio --name=vmix --filename=/dev/mapper/fv --rw=randwrite \
		--bssplit=512/10:4k/25:12k/15:64k/25:256k/15:1m/10 --blockalign=512 \
		--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --size="$size"
	total=$((total + size))
	expect "row_size:$rs: gap moves happened" test "$(status_field fv gap_moves)" -gt 0
	# the data survive a further rotation's worth of moves
	dmsetup message fv 0 move_gap 500
	expect "row_size:$rs: verify again after 500 more gap moves" \
		run_fio --name=vmix --filename=/dev/mapper/fv --rw=randwrite \
		--bssplit=512/10:4k/25:12k/15:64k/25:256k/15:1m/10 --blockalign=512 \
		--iodepth=8 --verify=crc32c --verify_only=1 --size="$size"
	dmsetup remove fv
done
note "bytes written and verified: $total"
finish
