/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm wear region codec: the wear counters' on-disk form.  Pure logic,
 * shared by the module, pcm-layout.c (the region's size) and the host
 * tests.
 *
 * The region holds two copies, each of whole PCM_WEAR_BLOCK blocks of
 * PCM_WEAR_PER_BLOCK little-endian 32-bit counters behind a header with
 * a magic, a CRC32 and the sequence number of the write that wrote it.
 * A persist writes one copy (seq & 1), so a torn write leaves the other
 * copy, one period older; a loader takes, block by block, the valid copy
 * with the higher sequence number, and zeros where neither is valid.
 */
#ifndef PCM_WEAR_H
#define PCM_WEAR_H

#include <linux/types.h>

#define PCM_WEAR_MAGIC		0x7257436dU	/* "mCWr" on disk */
#define PCM_WEAR_BLOCK		4096
#define PCM_WEAR_HDR		16
#define PCM_WEAR_PER_BLOCK	((PCM_WEAR_BLOCK - PCM_WEAR_HDR) / 4)
#define PCM_WEAR_BLOCK_SECTORS	(PCM_WEAR_BLOCK >> 9)

enum pcm_wear_block_status {
	PCM_WEAR_BLK_VALID,
	PCM_WEAR_BLK_ZERO,	/* never written */
	PCM_WEAR_BLK_BAD,	/* torn, damaged or another block's */
};

/* Counters of a device of @phys_rows rows, @group rows per counter. */
static inline u64 pcm_wear_counters(u64 phys_rows, u32 group)
{
	return group ? (phys_rows + group - 1) / group : 0;
}

/* Blocks one copy of the region takes for @counters counters. */
static inline u64 pcm_wear_blocks(u64 counters)
{
	return (counters + PCM_WEAR_PER_BLOCK - 1) / PCM_WEAR_PER_BLOCK;
}

void pcm_wear_block_encode(void *buf, u64 index, u64 seq, const u32 *ctr, u32 n);
enum pcm_wear_block_status pcm_wear_block_decode(const void *buf, u64 index,
						 u64 *seq, u32 *ctr, u32 n);

#endif
