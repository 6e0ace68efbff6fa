#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# "Any block device": dm-pcm over QEMU's emulated NVMe (a volatile write
# cache, FUA, discard and write-zeroes): fio verify, pass-down, ext4.
. "$(dirname "$0")/lib/lib.sh"

nvme=${PCM_NVME:-}
# shellcheck disable=SC2015 # skip unless both tests hold
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

# --- ecc:bch over NVMe: its completions come in hard-IRQ context, where
# reads are not decoded inline but in softirq context on a BH workqueue
# (6.9+; by the ECC worker on 6.1), the parity read beside the data all
# the same; whole-row writes still encode in .map ---
field() { status_field "$1" "$2"; }
wipe_meta "$nvme"
expect "ecc:bch preset:pss seed:5 gap_interval:16" \
	pcm_create nve "$nvme" ecc:bch preset:pss seed:5 gap_interval:16
expect "fio 512 B..64 KiB randwrite verify=crc32c, QD32, 32 MiB" \
	run_fio --name=nve --filename=/dev/mapper/nve --rw=randwrite \
	--bssplit=512/20:4k/50:64k/30 --blockalign=512 --iodepth=32 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --size=$((32 << 20))
dmsetup message nve 0 inject 16 4
expect "4 bits injected in sector 16: the first 64 KiB read (QD1, O_DIRECT)" \
	dd if=/dev/mapper/nve of=/dev/null bs=64k count=1 iflag=direct status=none
expect_eq "corrected: 4 bits" "$(field nve ecc_corrected_bits)" 4
expect_eq "none uncorrectable" "$(field nve ecc_uncorrectable_sectors)" 0
expect_eq "none silent" "$(field nve ecc_silent_sectors)" 0
dmsetup remove nve

fs_cycle ext4 "$nvme"
finish
