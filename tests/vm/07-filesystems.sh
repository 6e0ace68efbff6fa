#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# ext3 and ext4: mkfs, mount, write and verify files, umount, fsck -fn clean;
# ext4 again with gap_interval:1, so that a row moves under every write.
. "$(dirname "$0")/lib/lib.sh"

dev=${PCM_FS_BACKING:-}
if [ -z "$dev" ]; then
	brd_load 128 || skip_all "brd not available"
	dev=/dev/ram0
fi
fs_cycle ext3 "$dev"
fs_cycle ext4 "$dev"
FS_FIO_MB=$(scaled 8 4) fs_cycle ext4 "$dev" gap_interval:1
finish
