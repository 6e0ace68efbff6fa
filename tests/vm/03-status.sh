#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Status INFO: key:value words a script can parse, counting exactly what
# reached the target, after the split at row boundaries.
. "$(dirname "$0")/lib/lib.sh"

brd_load 32 || skip_all "brd not available"
counters="reads writes read_bytes write_bytes flushes fua_writes discards discard_bytes write_zeroes write_zeroes_bytes gap_moves start_wraps move_errors"
mover="moves_owed parked_writes wouldblock sb_writes meta_flushes"
timing="read_lat_mean_ns read_lat_max_ns write_lat_mean_ns write_lat_max_ns tag_waits cache_waits held late late_max_ns"
ecc="ecc_corrected_bits ecc_corrected_sectors ecc_uncorrectable_sectors ecc_silent_sectors ecc_injected_bits ecc_raw_bits ecc_resynced_rows"
wear="wear_max wear_mean"
ranks="rank_util_max_ppm rank_util_mean_ppm rank_wait_ns rank_wait_max_ns bus_wait_ns front_wait_ns tag_wait_ns"
keys="$counters metadata domains start gap $mover timing $timing $ecc $wear $ranks"

pcm_create st /dev/ram0
info=$(dmsetup status st | cut -d' ' -f4-)
note "status: $info"
expect_eq "fields in their documented order" "$(echo "$info" | tr ' ' '\n' | cut -d: -f1 | xargs)" "$keys"
expect "every counter is key:<decimal>" bash -c "echo '$info' | tr ' ' '\n' | head -13 | grep -vqE '^[a-z_]+:[0-9]+$' && exit 1 || exit 0"
expect "registers are key:<decimal>[,<decimal>...]" bash -c "echo '$info' | tr ' ' '\n' | grep -E '^(start|gap):' | grep -vqE '^(start|gap):[0-9]+(,[0-9]+)*$' && exit 1 || exit 0"
# shellcheck disable=SC2086 # the key lists, split on purpose
expect "mover and timing figures are key:<decimal>" bash -c "echo '$info' | tr ' ' '\n' | grep -E '^($(echo $mover $timing $ecc $wear $ranks | tr ' ' '|')):' | grep -vqE '^[a-z_]+:[0-9]+$' && exit 1 || exit 0"
expect_eq "the timing model is off without latencies" "$(status_field st timing)" off
expect_eq "metadata state" "$(status_field st metadata)" ok

dmsetup message st 0 stats reset
expect_eq "stats reset zeroes every counter" "$(dmsetup status st | cut -d' ' -f4-16 | tr ' ' '\n' | cut -d: -f2 | sort -u)" 0

# 1 MiB in 64 KiB direct writes = 256 rows of 4 KiB
dd if=/dev/urandom of=/dev/mapper/st bs=64k count=16 oflag=direct status=none
expect_eq "write_bytes" "$(status_field st write_bytes)" 1048576
expect_eq "writes counts rows (1 MiB / 4 KiB)" "$(status_field st writes)" 256
dmsetup message st 0 move_gap 1
expect_eq "256 row writes owe 2 gap moves (gap_interval:128), move_gap 1 more" "$(status_field st gap_moves)" 3
dd if=/dev/mapper/st of=/dev/null bs=128k count=4 iflag=direct status=none
expect_eq "read_bytes" "$(status_field st read_bytes)" 524288
expect_eq "reads counts rows (512 KiB / 4 KiB)" "$(status_field st reads)" 128
# an 8-sector write at sector 7 straddles rows 0 and 1: two pieces
dmsetup message st 0 stats reset
dd if=/dev/zero of=/dev/mapper/st bs=4096 count=1 seek=3584 oflag=direct,seek_bytes status=none
expect_eq "a write across a row boundary is split in two" "$(status_field st writes)" 2
dmsetup remove st

# larger rows: fewer pieces; io_min follows the row size
wipe_meta /dev/ram0
pcm_create st64 /dev/ram0 row_size:65536
dd if=/dev/urandom of=/dev/mapper/st64 bs=1M count=1 oflag=direct status=none
expect_eq "1 MiB in 64 KiB rows = 16 writes" "$(status_field st64 writes)" 16
expect_eq "io_min is the row size" "$(blockdev --getiomin /dev/mapper/st64)" 65536
dmsetup remove st64

wipe_meta /dev/ram0
pcm_create st512 /dev/ram0 row_size:512
dd if=/dev/urandom of=/dev/mapper/st512 bs=4k count=1 oflag=direct status=none
expect_eq "4 KiB in 512 B rows = 8 writes" "$(status_field st512 writes)" 8
expect_eq "io_min never below the device's" "$(blockdev --getiomin /dev/mapper/st512)" "$(blockdev --getiomin /dev/ram0)"
expect_eq "logical block size is the backing device's" "$(blockdev --getss /dev/mapper/st512)" "$(blockdev --getss /dev/ram0)"
dmsetup remove st512

# many domains: status summarizes, "registers" lists them all
wipe_meta /dev/ram0
pcm_create many /dev/ram0 domains:40
expect "40 domains: start and gap as min..max" bash -c "dmsetup status many | grep -qE ' start:0\.\.0 gap:[0-9]+\.\.[0-9]+ moves_owed:'"
expect_eq "registers lists 40 domains" "$(registers many | wc -w)" 40
dmsetup remove many
finish
