// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm wear region codec; see pcm-wear.h.
 */
#include <linux/crc32.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "pcm-wear.h"

struct pcm_wear_disk {
	__le32 magic;
	__le32 csum;		/* CRC32 of the block, this field zero, seeded by its index */
	__le64 seq;
	__le32 ctr[PCM_WEAR_PER_BLOCK];
} __packed;

static u32 block_csum(const struct pcm_wear_disk *d, u64 index)
{
	static const u8 zero[4];
	u32 crc = crc32_le(~0U ^ (u32)index ^ (u32)(index >> 32), (const u8 *)d, 4);

	crc = crc32_le(crc, zero, sizeof(zero));
	return ~crc32_le(crc, (const u8 *)d + 8, PCM_WEAR_BLOCK - 8);
}

/* Block @index of a copy: @n counters (the rest of the block zero). */
void pcm_wear_block_encode(void *buf, u64 index, u64 seq, const u32 *ctr, u32 n)
{
	struct pcm_wear_disk *d = buf;
	u32 i;

	BUILD_BUG_ON(sizeof(*d) != PCM_WEAR_BLOCK);
	memset(d, 0, sizeof(*d));
	d->magic = cpu_to_le32(PCM_WEAR_MAGIC);
	d->seq = cpu_to_le64(seq);
	for (i = 0; i < n && i < PCM_WEAR_PER_BLOCK; i++)
		d->ctr[i] = cpu_to_le32(ctr[i]);
	d->csum = cpu_to_le32(block_csum(d, index));
}

/* Block @index as read: its @n counters and sequence number when valid. */
enum pcm_wear_block_status pcm_wear_block_decode(const void *buf, u64 index,
						 u64 *seq, u32 *ctr, u32 n)
{
	const struct pcm_wear_disk *d = buf;
	u32 i;

	if (!memchr_inv(buf, 0, PCM_WEAR_BLOCK))
		return PCM_WEAR_BLK_ZERO;
	if (le32_to_cpu(d->magic) != PCM_WEAR_MAGIC ||
	    le32_to_cpu(d->csum) != block_csum(d, index))
		return PCM_WEAR_BLK_BAD;
	*seq = le64_to_cpu(d->seq);
	for (i = 0; i < n && i < PCM_WEAR_PER_BLOCK; i++)
		ctr[i] = le32_to_cpu(d->ctr[i]);
	return PCM_WEAR_BLK_VALID;
}
