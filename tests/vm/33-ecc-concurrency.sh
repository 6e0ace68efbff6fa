#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# ecc:bch under concurrency: coding runs on every CPU at once, writes that
# share a row take turns on its parity, others do not.  Two fio jobs at
# QD32 write and verify (reads racing writes) while gap moves run and
# rber makes corrections happen: no uncorrectable sector, none silent.
# Then two jobs write the even and the odd sectors of the same rows side
# by side (parity read-modify-writes of one row in flight together):
# every sector must still decode.
. "$(dirname "$0")/lib/lib.sh"

brd_load 32 || skip_all "brd not available"
field() { status_field "$1" "$2"; }
[ "$(nproc)" -ge 2 ] || note "one CPU: the workers still interleave, the test runs"

words="ecc:bch ecc_codewords:6 ecc_t:4 meta_bytes:64 seed:11 rber:1e-4 gap_interval:4"
# shellcheck disable=SC2086 # $words: table words, split on purpose
expect "ecc:bch (pss layout) rber:1e-4 gap_interval:4" pcm_create eccc /dev/ram0 $words

# --- two jobs, QD32, each on its own 8 MiB (at most), verify while writing ---
mib=$(scaled 8 2)
expect "fio: 2 jobs x QD32, 512 B..16 KiB, verify_backlog, $mib MiB each" \
	run_fio --name=v --filename=/dev/mapper/eccc --rw=randwrite --bsrange=512-16k \
	--size="${mib}M" --numjobs=2 --offset_increment=8M --iodepth=32 \
	--verify=crc32c --verify_backlog=64 --do_verify=1 --norandommap
moves=$(field eccc gap_moves)
note "gap moves $moves, raw bit errors $(field eccc ecc_raw_bits), corrected bits $(field eccc ecc_corrected_bits) in $(field eccc ecc_corrected_sectors) sectors"
expect "gap moves ran under the load" test "$moves" -gt 0
expect "corrections happened" test "$(field eccc ecc_corrected_sectors)" -gt 0
expect_eq "none uncorrectable" "$(field eccc ecc_uncorrectable_sectors)" 0
expect_eq "none silent" "$(field eccc ecc_silent_sectors)" 0
expect_eq "all raw errors corrected" "$(field eccc ecc_corrected_bits)" "$(field eccc ecc_raw_bits)"

# --- one row's parity written by two writers at once: job 0 writes the
# even sectors of a region once each, job 1 the odd ones, side by side at
# QD32, so every row's parity is read-modified-written by both at about
# the same time; a parity update lost to a race is never written again,
# and its sector fails to decode ---
dmsetup message eccc 0 set rber 0
dmsetup message eccc 0 stats reset
mib=$(scaled 8 2)
expect "fio: 2 jobs x QD32 of 512 B writes, the even and the odd sectors of $mib MiB" \
	run_fio --name=h --filename=/dev/mapper/eccc --offset=16M --offset_increment=512 \
	--size="${mib}M" --rw=write:512 --bs=512 --numjobs=2 --iodepth=32
expect "the $mib MiB read back (every sector decodes)" \
	dd if=/dev/mapper/eccc of=/dev/null bs=64k skip=256 count=$((mib * 16)) iflag=direct status=none
expect "and again after 32 more moves" \
	bash -c "dmsetup message eccc 0 move_gap 32 &&
		 dd if=/dev/mapper/eccc of=/dev/null bs=64k skip=256 count=$((mib * 16)) iflag=direct status=none"
expect_eq "none uncorrectable" "$(field eccc ecc_uncorrectable_sectors)" 0
expect_eq "none corrected (no error drawn, none made by a race)" \
	"$(field eccc ecc_corrected_sectors)" 0

# --- reads racing writes of the same rows: a read's data and its parity
# are read at different moments, and a write of its row may land in
# between (its parity first, then its data); the read must come back
# whole, as the old or the new data, never as an error or a miscorrection ---
dmsetup message eccc 0 set gap_interval 0
dmsetup message eccc 0 stats reset
expect "fio: 4 KiB writes and QD8 reads of the same 4 rows, $(scaled 8 3) s" rows_race eccc 20
note "reads $(field eccc reads), writes $(field eccc writes) of those 4 rows"
expect_eq "none uncorrectable" "$(field eccc ecc_uncorrectable_sectors)" 0
expect_eq "none silent" "$(field eccc ecc_silent_sectors)" 0
expect_eq "none corrected" "$(field eccc ecc_corrected_sectors)" 0
dmsetup remove eccc

finish
