#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Power cuts: dm-pcm over dm-flakey over a ramdisk.  A writer overwrites
# versioned 4 KiB blocks and fsyncs after each batch while gap moves run
# (gap_interval:2, two domains).  At a random instant dm-flakey is swapped
# to drop_writes (loaded with --nolockfs): from then on nothing reaches
# the ramdisk, as after a power cut.  dm-pcm is then recreated on what
# survived, and every block written before the last completed fsync must
# verify.  PCM_POWER_CUTS sets the number of cuts (default 20 at full
# PCM_SCALE, 5 in make check).
. "$(dirname "$0")/lib/lib.sh"

cuts=${PCM_POWER_CUTS:-$(scaled 20 3)}
modprobe dm-flakey 2>/dev/null || skip_all "dm-flakey not available"
brd_load 8 || skip_all "brd not available"
sz=$(sectors /dev/ram0)
up="0 $sz linear /dev/ram0 0"
down="0 $sz flakey /dev/ram0 0 0 3600 1 drop_writes"
words="gap_interval:2 domains:2"

dmsetup create under --table "$up"
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(pcm_table /dev/mapper/under $words)
# shellcheck disable=SC2086 # $words: table words, split on purpose
blocks=$(( $(pcm_len /dev/mapper/under $words) / 8 ))
dmsetup create pc --table "$table"
seed=$((RANDOM * 32768 + RANDOM))
note "seed $seed, $blocks blocks, $cuts cuts"
power_cuts pc under "$table" "$cuts" "$seed" "$blocks" "$up" "$down"
expect_eq "power cuts survived" "$cuts_survived" "$cuts"
note "power cuts survived: $cuts_survived of $cuts, gap moves before the cuts: $cut_moves"
dmsetup remove pc
dmsetup remove under
finish
