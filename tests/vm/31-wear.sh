#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Wear counters (wear:on|ROWS, endurance:N): every row piece of a write,
# a write-zeroes and a gap move's copy counts; status and the "wear"
# message show it; the counters survive remove + create (postsuspend
# persists them), a suspend, and "persist"; a geometry mismatch is
# refused naming the field.  Qureshi's hot-spot result: with start-gap
# off the hot rows wear out (with ecc:bch their reads fail), with
# start-gap on and randomize the same writes leave max/mean near 1.
. "$(dirname "$0")/lib.sh"

brd_load 16 2 || skip_all "brd not available"

field() { status_field "$1" "$2"; }
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2://p"; }
wear() { dmsetup message "$1" 0 wear; }
RS=4096

# --- counting ---
pcm_create w /dev/ram0 wear:on gap_interval:0 format
m=$(wear w)
note "fresh: $m"
expect_eq "a fresh device: nothing written" "$(kv "$m" writes)" 0
expect_eq "a counter per physical row" "$(kv "$m" counters)" \
	$(($(dmsetup table w | awk '{print $2}') / 8 + 1))
dd if=/dev/urandom of=/dev/mapper/w bs=40k count=1 oflag=direct status=none
expect_eq "one write over 10 rows counts 10 row pieces" "$(kv "$(wear w)" writes)" 10
for i in 1 2 3 4 5; do
	dd if=/dev/urandom of=/dev/mapper/w bs=$RS seek=3 count=1 oflag=direct status=none
done
blkdiscard -z -o $((8 * RS)) -l $RS /dev/mapper/w
m=$(wear w)
note "$m"
expect_eq "writes and a write-zeroes: 16" "$(kv "$m" writes)" 16
expect_eq "the most worn row took 6" "$(kv "$m" max)" 6
expect_eq "status wear_max" "$(field w wear_max)" 6
expect_eq "status wear_mean (integer)" "$(field w wear_mean)" 0
expect_eq "all rows in the first histogram bucket" "$(kv "$m" hist | cut -d, -f1)" "$(kv "$m" counters)"

# --- persistence ---
dmsetup remove w
pcm_create w /dev/ram0 wear:on gap_interval:0
expect_eq "remove + create: the counts are back" "$(kv "$(wear w)" writes)" 16
expect_eq "and the max" "$(field w wear_max)" 6
dd if=/dev/urandom of=/dev/mapper/w bs=$RS seek=3 count=1 oflag=direct status=none
dmsetup suspend w
dd if=/dev/ram0 of=/tmp/wear.img bs=1M iflag=direct status=none
dmsetup resume w
expect_eq "suspend + resume keeps the counts" "$(field w wear_max)" 7
dd if=/dev/urandom of=/dev/mapper/w bs=$RS seek=3 count=1 oflag=direct status=none
dmsetup message w 0 persist
dd if=/dev/ram0 of=/tmp/wear.persist bs=1M iflag=direct status=none
dd if=/dev/urandom of=/dev/mapper/w bs=$RS seek=3 count=2 oflag=direct status=none
dmsetup remove w
dd if=/tmp/wear.img of=/dev/ram0 bs=1M oflag=direct status=none
pcm_create w /dev/ram0 wear:on gap_interval:0
expect_eq "the suspend persisted them: 17 writes, max 7" \
	"$(kv "$(wear w)" writes) $(field w wear_max)" "17 7"
dmsetup remove w
dd if=/tmp/wear.persist of=/dev/ram0 bs=1M oflag=direct status=none
pcm_create w /dev/ram0 wear:on gap_interval:0
expect_eq "persist persisted them: 18 writes, max 8" \
	"$(kv "$(wear w)" writes) $(field w wear_max)" "18 8"
dmsetup remove w
rm -f /tmp/wear.img /tmp/wear.persist

# --- geometry: refused, naming the field ---
mark=$(dmesg_mark wear-geo)
expect_fail "wear:2 on a device formatted with wear:on" pcm_create w /dev/ram0 wear:2 gap_interval:0
expect "names the field" bash -c "dmesg | sed -n '/$mark/,\$p' | grep -q 'wear is 1 on the device, 2 in the table'"
expect_fail "wear:off on a device formatted with wear" pcm_create w /dev/ram0 gap_interval:0
expect_fail "wear:on on a device formatted without" pcm_create w /dev/ram1 wear:on
expect_fail "wear:3 refused" pcm_create w /dev/ram1 wear:3 format
expect_fail "endurance:0 refused" pcm_create w /dev/ram1 wear:on endurance:0 format

# --- wear:ROWS: a counter per group ---
pcm_create w /dev/ram0 wear:4 gap_interval:0 format
dd if=/dev/urandom of=/dev/mapper/w bs=16k count=1 oflag=direct status=none
m=$(wear w)
expect_eq "wear:4: four rows in one counter, 1 write per row" \
	"$(kv "$m" rows_per_counter) $(kv "$m" writes) $(kv "$m" max)" "4 4 1"
dmsetup remove w

# --- Qureshi's hot spot: 32 rows, endurance 1000, 2 hot rows ---
hot_mb=$(scaled 128 32)	# 8192 writes at make check's size, 2 x 4096 a row
hot() {
	fio --name=hot --filename=/dev/mapper/$1 --rw=randwrite --bs=$RS --size=8k \
		--io_size=${hot_mb}m --norandommap --direct=1 --ioengine=psync \
		--randseed=1 --output=/dev/null
}
line() { echo "0 $((32 * RS / 512)) pcm $1 0 $(($# - 1)) ${*:2}"; }

# hot_run NAME DEV WORDS...: create it, write the hot spot, note the wear reply
hot_run() {
	local t0 name=$1 dev=$2
	shift 2
	dmsetup create "$name" --table "$(line "$dev" "$@")" || return 1
	t0=$(date +%s)
	hot "$name"
	m=$(wear "$name")
	note "$name ($*): $m ($(($(date +%s) - t0)) s)"
}

hot_run hot /dev/ram0 ecc:bch wear:on endurance:1000 gap_interval:0 seed:3 format
ratio_off=$(kv "$m" max_mean)
expect "start-gap off: the hot rows took all (max $(kv "$m" max) >= 4 x endurance)" \
	test "$(kv "$m" max)" -ge 4000
expect "max/mean $ratio_off: far from level" test "${ratio_off%.*}" -ge 10
expect_fail "reads of the worn rows fail" \
	dd if=/dev/mapper/hot of=/dev/null bs=$RS count=2 iflag=direct status=none
expect "uncorrectable sectors counted ($(field hot ecc_uncorrectable_sectors))" \
	test "$(field hot ecc_uncorrectable_sectors)" -gt 0
expect "a cold row still reads" \
	dd if=/dev/mapper/hot of=/dev/null bs=$RS skip=20 count=1 iflag=direct status=none
dmsetup remove hot

hot_run lev /dev/ram1 ecc:bch wear:on endurance:1000 gap_interval:4 randomize:7 seed:3 format
ratio_on=$(kv "$m" max_mean)
note "FIGURE: hot spot, 2 rows of 32, $((hot_mb * 256)) writes: max/mean $ratio_off with start-gap off, $ratio_on with start-gap (gap_interval:4) and randomize"
expect "start-gap on: max/mean $ratio_on under 2" test "${ratio_on%.*}" -lt 2
expect "no row past endurance (max $(kv "$m" max))" test "$(kv "$m" max)" -lt 1000
expect "every row reads" dd if=/dev/mapper/lev of=/dev/null bs=$RS iflag=direct status=none
expect_eq "none uncorrectable" "$(field lev ecc_uncorrectable_sectors)" 0
dmsetup remove lev

finish
