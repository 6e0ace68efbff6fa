#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 4 KiB logical blocks (issue 45, item 2): dm-pcm over null_blk bs=4096
# and over an NVMe namespace of 4 KiB blocks (tools/vm-run --nvme-4k,
# $PCM_NVME_4K), the row of the block-size matrix that make check runs.
# On each device: the length pcm_len prints (pcmctl length's arithmetic,
# the device's logical block size taken as the kernel takes it) is the
# largest the kernel accepts, with and without ecc:bch, wear and a
# meta_device of other blocks; rows below a block, an offset or a length
# off a block are refused with their reason; data written with ecc:bch
# and gap moves reads back after more moves and a reload; reads racing
# writes of the same rows (the ECC path's locked re-read, which read
# 512 bytes at a time: an I/O error on 6.12) come back whole.  On
# null_blk also: power cuts (dm-flakey drop_writes) with ecc:bch and gap
# moves, ext4 with 4 KiB blocks, and pcmctl create.
. "$(dirname "$0")/lib/lib.sh"

field() { status_field "$1" "$2"; }
ecc_bad() { status_field "$1" ecc_uncorrectable_sectors ecc_silent_sectors | tr ' ' /; }

# --- the devices: null_blk of 4 KiB blocks (configfs, as 34 makes its
# own), a 512-byte ramdisk for the meta_device cases, the NVMe namespace ---
cfs=/sys/kernel/config
modprobe configfs 2>/dev/null
mountpoint -q $cfs || mount -t configfs none $cfs 2>/dev/null
rmmod null_blk 2>/dev/null
# shellcheck disable=SC2015 # the fallback if either fails
modprobe null_blk nr_devices=0 2>/dev/null && mkdir $cfs/nullb/lb4k 2>/dev/null ||
	skip_all "null_blk through configfs not available"
nbc=$cfs/nullb/lb4k
echo 64 > $nbc/size; echo 1 > $nbc/memory_backed; echo 4096 > $nbc/blocksize
echo 1 > $nbc/power
# the disk is named after the configfs item on 6.12, nullb<index> on 6.1
nbname=lb4k
[ -e /sys/block/$nbname ] || nbname=nullb$(cat $nbc/index)
nb=/dev/$nbname
# no udev in the VM: the node by hand
# shellcheck disable=SC2046 # MAJOR MINOR: mknod's two arguments
[ -b "$nb" ] || mknod "$nb" b $(tr : ' ' < "/sys/block/$nbname/dev")
nbdone() {
	echo 0 > $nbc/power
	rmdir $nbc
	rmmod null_blk 2>/dev/null
}
brd_load 8 || skip_all "brd not available"
nvme=${PCM_NVME_4K:-}
[ -n "$nvme" ] && [ -b "$nvme" ] && nvme=$(readlink -f "$nvme") || nvme=
for d in "$nb" $nvme; do
	expect_eq "$d: 4 KiB logical blocks" "$(blockdev --getss "$d")" 4096
done
[ -n "$nvme" ] || skip "no NVMe namespace of 4 KiB blocks (tools/vm-run --nvme-4k)"

# table DEV LEN [WORD...]: a table line over DEV from offset 0
table() {
	local dev=$1 len=$2
	shift 2
	echo "0 $len pcm $dev 0 $#${*:+ $*}"
}

# refused DESC PHRASE TABLE: the line fails and the kernel log says why
refused() {
	local mark log
	mark=$(dmesg_mark)
	if dmsetup create lbbad --table "$3" 2>/dev/null; then
		dmsetup remove lbbad
		fail "$1: accepted"
		return
	fi
	log=$(dmesg_since "$mark")
	if grep -qF "pcm: $2" <<<"$log"; then
		pass "$1"
	else
		fail "$1: '$2' not in the kernel log"
		grep -F 'device-mapper' <<<"$log" | sed 's/^/#   /' | head -4
	fi
}

# agree DEV WORD...: pcm_len's length is the one the kernel states as the
# largest legal when a block more is asked, and a table of it loads
# ("format": each case another layout on the same device)
agree() {
	local dev=$1 len mark got t="$1 ${*:2}"
	shift
	if ! len=$(pcm_len "$dev" "$@"); then
		fail "$t: pcm_len"
		return
	fi
	mark=$(dmesg_mark)
	dmsetup create lbagree --table "$(table "$dev" $((len + 8)) "$@")" 2>/dev/null &&
		dmsetup remove lbagree
	got=$(dmesg_since "$mark" | sed -n 's/.*largest legal length is \([0-9]*\) sectors.*/\1/p')
	expect_eq "$t: pcm_len $len is the kernel's largest legal length" "$got" "$len"
	if dmsetup create lbagree --table "$(table "$dev" "$len" "$@" format)"; then
		pass "$t: a table of that length loads"
		dmsetup remove lbagree
	else
		fail "$t: a table of that length loads"
	fi
}

# round_trip DEV: ecc:bch with rber and gap moves: fio writes and verifies,
# the data reads back the same after more moves and a reload, and every
# raw bit error was corrected
round_trip() {
	local dev=$1 words="ecc:bch seed:7 rber:2e-5 gap_interval:4 domains:2" sum mib
	mib=$(scaled 16 4)
	wipe_meta "$dev"
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	if ! pcm_create lbrt "$dev" $words; then
		fail "$dev: ecc:bch rber gap moves: create"
		return
	fi
	expect "$dev: fio 4..64 KiB randwrite verify=crc32c, QD16, $mib MiB" \
		run_fio --name=rt --filename=/dev/mapper/lbrt --rw=randwrite --bsrange=4k-64k \
		--iodepth=16 --verify=crc32c --do_verify=1 --verify_fatal=1 --size="${mib}M"
	expect "$dev: gap moves ran under it" test "$(field lbrt gap_moves)" -gt 0
	sum=$(dd if=/dev/mapper/lbrt bs=1M count="$mib" iflag=direct status=none | md5sum)
	dmsetup message lbrt 0 move_gap 64
	dmsetup remove lbrt
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	pcm_create lbrt "$dev" $words
	expect_eq "$dev: the same data after 64 more moves and a reload" \
		"$(dd if=/dev/mapper/lbrt bs=1M count="$mib" iflag=direct status=none | md5sum)" "$sum"
	note "$dev: raw bit errors $(field lbrt ecc_raw_bits), corrected $(field lbrt ecc_corrected_bits)"
	expect_eq "$dev: none uncorrectable, none silent" "$(ecc_bad lbrt)" 0/0
	expect_eq "$dev: every raw bit error corrected" \
		"$(field lbrt ecc_corrected_bits)" "$(field lbrt ecc_raw_bits)"

	# reads racing writes of the same 4 rows: a raced read re-reads its
	# rows' data under their locks, in whole logical blocks
	dmsetup message lbrt 0 set gap_interval 0
	dmsetup message lbrt 0 set rber 0
	dmsetup message lbrt 0 stats reset
	expect "$dev: 4 KiB writes and QD8 reads of the same 4 rows, $(scaled 8 3) s" \
		rows_race lbrt 1
	note "$dev: reads $(field lbrt reads), writes $(field lbrt writes) of those 4 rows"
	expect_eq "$dev: none uncorrectable, none silent, none corrected" \
		"$(ecc_bad lbrt)/$(field lbrt ecc_corrected_sectors)" 0/0/0
	dmsetup remove lbrt
}

# --- 1. lengths: pcm_len and the kernel agree -------------------------------
agree "$nb" ecc:bch
if ! compat_skip "1. lengths of the other layouts (pcm-layout.c: plain C)"; then
	agree "$nb" preset:none
	agree "$nb" ecc:bch wear:on domains:3 row_size:8192
	agree "$nb" ecc:bch meta_device:/dev/ram0
	# a meta_device of 4 KiB blocks small enough to bound the rows
	dmsetup create lbmeta --table "0 8192 linear $nb 0"
	agree /dev/ram0 ecc:bch meta_device:/dev/mapper/lbmeta
	dmsetup remove lbmeta
	[ -z "$nvme" ] || agree "$nvme" ecc:bch wear:on
fi
len=$(pcm_len "$nb")
refused "2 KiB rows on 4 KiB blocks" "Row size below logical block size" \
	"$(table "$nb" "$len" row_size:2048)"
refused "a length off a 4 KiB block" "Length not a multiple of logical block size" \
	"$(table "$nb" $((len / 2 / 8 * 8 + 4)) format)"
refused "an offset off a 4 KiB block" "Misaligned device offset" "0 8 pcm $nb 4"

# --- 2. data, ECC, gap moves, raced reads -----------------------------------
round_trip "$nb"
[ -z "$nvme" ] || round_trip "$nvme"

# --- 3. power cuts: dm-pcm (ecc:bch, gap moves) over dm-flakey over the
# first 8 MiB of null_blk, as 16-powercut does over a ramdisk ---
if modprobe dm-flakey 2>/dev/null; then
	cuts=$(scaled 8 2)
	words="ecc:bch gap_interval:2 domains:2"
	dmsetup create lbunder --table "0 16384 linear $nb 0"
	wipe_meta /dev/mapper/lbunder
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	ptable=$(pcm_table /dev/mapper/lbunder $words)
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	blocks=$(( $(pcm_len /dev/mapper/lbunder $words) / 8 ))
	seed=$((RANDOM * 32768 + RANDOM))
	note "power cuts: seed $seed, $blocks blocks, $cuts cuts"
	if dmsetup create lbpc --table "$ptable"; then
		# up to 4 s: the writer's python3 takes 1-3 s to start under TCG,
		# and a cut before its first flushed batch verifies little
		power_cuts lbpc lbunder "$ptable" "$cuts" "$seed" "$blocks" \
			"0 16384 linear $nb 0" "0 16384 flakey $nb 0 0 3600 1 drop_writes" 4
		expect_eq "$nb: ecc:bch power cuts survived" "$cuts_survived" "$cuts"
		note "gap moves before the cuts: $cut_moves"
		expect_eq "$nb: no ECC error after them" "$(ecc_bad lbpc)" 0/0
		dmsetup remove lbpc
	else
		fail "power cuts: dm-pcm over dm-flakey over $nb loads"
	fi
	dmsetup remove lbunder
else
	skip "dm-flakey not available: no power cuts"
fi

# --- 4. ext4 of 4 KiB blocks with ecc:bch; pcmctl create ----------------------
if ! compat_skip "4. ext4 and pcmctl create (bios of the shapes 2 and 3 send)"; then
	FS_BLOCK=4096 FS_FIO_MB=$(scaled 16 4) fs_cycle ext4 "$nb" ecc:bch gap_interval:16 ||
		fail "ext4 over $nb: the pcm device is created"
	wipe_meta "$nb"
	expect "pcmctl create: its default length loads (ecc:bch)" \
		quiet "$PCM_ROOT/tools/pcmctl" create lbctl "$nb" ecc:bch
	dmsetup remove lbctl 2>/dev/null
fi
nbdone
finish
