#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Flush, FUA, discard and write-zeroes over brd (the NVMe test repeats this
# on a device with a volatile write cache).
. "$(dirname "$0")/lib/lib.sh"

brd_load 32 || skip_all "brd not available"
pcm_create pd /dev/ram0
check_passdown pd /dev/ram0
finish
