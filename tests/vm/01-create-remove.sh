#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Create and remove pcm devices over brd; the module's refcount follows.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

brd_load 64 3 || skip_all "brd not available"
len=$(pcm_len /dev/ram0)

expect "create over a whole ramdisk" pcm_create pcm1 /dev/ram0
expect_eq "device size equals the table length" "$(sectors /dev/mapper/pcm1)" "$len"
expect_eq "target type is pcm" "$(dmsetup table pcm1 | awk '{print $3}')" pcm
expect_eq "module held once" "$(pcm_refcnt)" 1
expect "data written through it reads back" \
	bash -c 'head -c 1M /dev/urandom > /tmp/a && dd if=/tmp/a of=/dev/mapper/pcm1 bs=1M oflag=direct status=none &&
		 cmp <(head -c 1M /dev/mapper/pcm1) /tmp/a'
expect "remove" dmsetup remove pcm1
expect_fail "node gone" test -e /dev/mapper/pcm1
expect_eq "module refcount back to 0" "$(pcm_refcnt)" 0

wipe_meta /dev/ram0	# pcm1 formatted it for offset 0
# the lower half keeps its metadata on ram2 and leaves a row for its gap;
# the upper half keeps its own at the end of ram0
half=$(( $(sectors /dev/ram0) / 2 ))
hilen=$(pcm_len /dev/ram0 --offset $half preset:none row_size:512)
expect "two devices on the halves of one ramdisk" bash -c "
	dmsetup create lo --table '0 $((half - 16)) pcm /dev/ram0 0 2 row_size:8192 meta_device:/dev/ram2' &&
	dmsetup create hi --table '0 $hilen pcm /dev/ram0 $half 2 preset:none row_size:512'"
expect "a third on another ramdisk" pcm_create other /dev/ram1
expect_eq "module held three times" "$(pcm_refcnt)" 3
expect "the halves do not overlap" bash -c "
	dd if=/dev/zero of=/dev/mapper/lo bs=64k count=1 oflag=direct status=none &&
	printf 'HIGH' | dd of=/dev/mapper/hi bs=512 conv=sync oflag=direct status=none &&
	[ \"\$(head -c 4 /dev/mapper/lo | tr -d '\\0')\" = '' ] &&
	[ \"\$(dd if=/dev/ram0 bs=512 skip=$half count=1 iflag=direct status=none | head -c 4)\" = HIGH ]"
expect "remove all three" dmsetup remove lo hi other
expect_eq "refcount 0 again" "$(pcm_refcnt)" 0

expect "module unloads with no device" rmmod dm_pcm
expect "and loads again" insmod "$PCM_KO"
recreate() { wipe_meta /dev/ram0 && pcm_create again /dev/ram0 && dmsetup remove again; }
expect "a device works after the reload" recreate
expect_eq "dmsetup targets lists pcm" "$(dmsetup targets | awk '$1 == "pcm" {print $2}')" v1.6.0
finish
