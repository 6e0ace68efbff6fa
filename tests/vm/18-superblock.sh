#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Damaged and foreign metadata: a flipped bit or a wiped copy is recovered
# from the other copy; both damaged, a geometry mismatch, foreign data and
# a newer version are refused cleanly unless "format" is given; so is a
# device whose superblocks are zeros but whose rows hold data (a device
# that grew under dm-pcm: an extended dm-linear "LV").
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

brd_load 16 || skip_all "brd not available"
dev=/dev/ram0
words="gap_interval:1 domains:2"
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(pcm_table $dev $words)
sbs=8					# sectors per copy with 2 domains
meta=$(( $(sectors $dev) / 8 * 8 - 2 * sbs ))	# copy 0; copy 1 follows

dmsetup create sb --table "$table"
head -c $((4 << 20)) /dev/urandom > /tmp/sbdata
dd if=/tmp/sbdata of=/dev/mapper/sb bs=1M oflag=direct status=none
dmsetup message sb 0 move_gap 5
regs=$(registers sb)
dmsetup remove sb

# newest copy: the one with the higher sequence number (seq at byte 16)
seq_of() { dd if=$dev bs=512 skip=$((meta + $1 * sbs)) count=1 status=none | od -An -t u8 -j 16 -N 8 | tr -d ' '; }
s0=$(seq_of 0) s1=$(seq_of 1)
new=$([ "$s0" -gt "$s1" ] && echo 0 || echo 1)
note "copy 0 seq $s0, copy 1 seq $s1: newest is copy $new"
cp_sector() { echo $((meta + $1 * sbs)); }

flip_bit() {	# flip_bit COPY BYTE BIT
	local at=$(( $(cp_sector "$1") * 512 + $2 )) b
	b=$(dd if=$dev bs=1 skip=$at count=1 status=none | od -An -t u1 | tr -d ' ')
	# shellcheck disable=SC2059 # the format is the octal escape of the flipped byte
	printf "$(printf '\\%03o' $((b ^ (1 << $3))))" |
		dd of=$dev bs=1 seek=$at count=1 conv=notrunc status=none
}
loads_same() {	# the device loads with the same registers and data
	dmsetup create sb --table "$table" &&
		[ "$(registers sb)" = "$regs" ] &&
		cmp -s /tmp/sbdata <(dd if=/dev/mapper/sb bs=1M count=4 iflag=direct status=none)
	local r=$?
	dmsetup remove sb 2>/dev/null
	return "$r"
}
refused() {	# refused TABLE PHRASE: create fails and the log explains
	local m
	m=$(dmesg_mark)
	! dmsetup create sbx --table "$1" 2>/dev/null &&
		! dmsetup info sbx >/dev/null 2>&1 &&
		dmesg_since "$m" | grep -q "$2"
}
save_meta() { dd if=$dev of=/tmp/meta bs=512 skip=$meta count=$((2 * sbs)) status=none; }
restore_meta() { dd if=/tmp/meta of=$dev bs=512 seek=$meta conv=notrunc status=none; }
save_meta

flip_bit "$new" 100 3
m=$(dmesg_mark)
expect "a flipped bit in the newest copy: loads from the other copy" loads_same
expect "and says so in the log" bash -c "dmesg | sed -n '/$m/,\$p' | grep -q 'damaged; rewriting'"
# the repair rewrote the damaged copy: start from the saved copies again
restore_meta
dd if=/dev/zero of=$dev bs=512 seek="$(cp_sector "$new")" count="$sbs" conv=notrunc status=none
expect "the newest copy wiped: loads from the other copy" loads_same
restore_meta
flip_bit 0 200 0
flip_bit 1 200 0
expect "both copies damaged: refused" refused "$table" "no valid superblock copy"
restore_meta
expect "... and nothing was overwritten: with the copies restored it loads" loads_same

expect "geometry mismatch (domains) refused, naming the field" \
	refused "$(pcm_table $dev gap_interval:1 domains:3)" "domains is 2 on the device, 3 in the table"
# shellcheck disable=SC2086 # $words: table words, split on purpose
expect "geometry mismatch (length) refused, naming the field" \
	refused "0 $(( $(pcm_len $dev $words) - 8 )) pcm $dev 0 2 $words" "logical_rows is"
# shellcheck disable=SC2086 # $words: table words, split on purpose
expect "geometry mismatch (row_size) refused" \
	refused "$(pcm_table $dev $words row_size:8192)" "row_size is 4096 on the device, 8192"
# shellcheck disable=SC2086 # $words: table words, split on purpose
expect "geometry mismatch (randomize) refused" \
	refused "$(pcm_table $dev $words randomize:5)" "randomize is 0 on the device, 1"
expect "after all refusals, the device still loads" loads_same

# version from the future: bump version (byte 4) and leave the checksum
printf '\x09' | dd of=$dev bs=1 seek=$(( $(cp_sector 0) * 512 + 4 )) conv=notrunc status=none
printf '\x09' | dd of=$dev bs=1 seek=$(( $(cp_sector 1) * 512 + 4 )) conv=notrunc status=none
expect "a newer format version is refused" refused "$table" "newer than"
restore_meta

# foreign data where the superblocks go
head -c $((2 * sbs * 512)) /dev/urandom | dd of=$dev bs=512 seek=$meta conv=notrunc status=none
expect "foreign data refused without format" refused "$table" "not a dm-pcm superblock"
expect "foreign data left untouched" bash -c "! cmp -s /tmp/meta <(dd if=$dev bs=512 skip=$meta count=$((2 * sbs)) status=none)"
# shellcheck disable=SC2086 # $words: table words, split on purpose
expect "format overwrites it" dmsetup create sb --table "$(pcm_table $dev $words format)"
# shellcheck disable=SC2086 # $words: table words, split on purpose
rows=$(( $(pcm_len $dev $words) / 8 ))
expect_eq "formatted registers" "$(registers sb)" "0/$(( (rows + 1) / 2 )) 0/$(( rows / 2 ))"
dmsetup remove sb
expect "the formatted device loads without format" dmsetup create sb --table "$table"
dmsetup remove sb

# a read-only table never formats (a blank device: with data in its rows
# and no superblock, any table is refused, test below)
blkdiscard -f -z $dev 2>/dev/null
m=$(dmesg_mark)
expect "create --readonly on blank metadata is refused" bash -c "! dmsetup create --readonly sbro --table '$table' 2>/dev/null"
expect "... saying why" bash -c "dmesg | sed -n '/$m/,\$p' | grep -q 'Read-only table cannot format'"
expect "... and writes nothing" cmp -s <(dd if=$dev bs=512 skip=$meta count=$((2 * sbs)) status=none) <(head -c $((2 * sbs * 512)) /dev/zero)

# a device that grows under dm-pcm: its metadata area moves onto zeros at
# the new end, and its rows hold data; never formatted without "format"
blkdiscard -f -z $dev 2>/dev/null
half=$(( $(sectors $dev) / 2 ))
dmsetup create lv --table "0 $half linear $dev 0"
# shellcheck disable=SC2086 # $words: table words, split on purpose
gtable=$(pcm_table /dev/mapper/lv $words)
dmsetup create sb --table "$gtable"
dd if=/tmp/sbdata of=/dev/mapper/sb bs=1M count=2 oflag=direct status=none
dmsetup message sb 0 move_gap 3
dmsetup remove sb
dmsetup suspend lv && dmsetup load lv --table "0 $((2 * half)) linear $dev 0" && dmsetup resume lv
# shellcheck disable=SC2086 # $words: table words, split on purpose
gtable2=$(pcm_table /dev/mapper/lv $words)
sum0=$(dd if=/dev/mapper/lv bs=1M status=none | md5sum)
m=$(dmesg_mark)
expect "the grown device, superblocks now zeros, rows holding data: refused" \
	bash -c "! dmsetup create sb --table '$gtable2' 2>/dev/null"
expect "... saying why" bash -c "dmesg | sed -n '/$m/,\$p' | grep -q 'holds data but no superblock'"
expect_eq "... and nothing on the device changed" "$(dd if=/dev/mapper/lv bs=1M status=none | md5sum)" "$sum0"
# shellcheck disable=SC2086 # $words: table words, split on purpose
expect "with 'format' it is formatted" dmsetup create sb --table "$(pcm_table /dev/mapper/lv $words format)"
dmsetup remove sb
dmsetup remove lv
finish
