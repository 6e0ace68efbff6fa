#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# "Any block device": dm-pcm over QEMU's emulated NVMe (a volatile write
# cache, FUA, discard and write-zeroes): fio verify, pass-down, ext4.
. "$(dirname "$0")/lib.sh"

nvme=${PCM_NVME:-}
[ -n "$nvme" ] && [ -b "$nvme" ] || skip_all "no NVMe device (run with tools/vm-run --nvme)"
nvme=$(readlink -f "$nvme")

wipe_meta "$nvme"
pcm_create nv "$nvme"
size=$(( $(sectors /dev/mapper/nv) * 512 ))
expect "fio 4 KiB randwrite verify=crc32c over the whole device" \
	run_fio --name=nv --filename=/dev/mapper/nv --rw=randwrite --bs=4k \
	--iodepth=32 --verify=crc32c --do_verify=1 --verify_fatal=1 --size="$size"
expect "mixed 512 B..1 MiB verify" run_fio --name=nvm --filename=/dev/mapper/nv \
	--rw=randwrite --bssplit=512/20:4k/40:64k/30:1m/10 --blockalign=512 \
	--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 --size=$((64 << 20))
check_passdown nv "$nvme"
dmsetup remove nv

fs_cycle ext4 "$nvme"
finish
