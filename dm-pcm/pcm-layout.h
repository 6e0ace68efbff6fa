/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm on-disk layout: where the rows and the two superblock copies lie
 * on the backing device(s), and how long a table may be.  Pure logic,
 * shared by the module, the host tests and pcmctl, so that the length
 * pcmctl prints is the one the constructor accepts.
 *
 * Data device:  <offset> | row 0 | row 1 | ... | row R+K-1 | row metadata | (unused)
 * Metadata:     superblock copy 0 | copy 1, each pcm_sb_size(K) bytes,
 *               at the end of the data device (aligned down to 4 KiB),
 *               or at sector 0 of a separate meta_device.
 *
 * With ECC, each physical row has row_meta bytes of metadata (its
 * sectors' parity), rounded up to whole sectors: physical row b's are at
 * row_meta_start + b * row_meta_sectors, an area that follows the R+K
 * rows on the data device or the two superblock copies on a meta_device.
 * Being indexed by physical row, parity stays with its row's data until
 * a gap move copies both.
 *
 * With ECC, the WIB region follows the parity area (wib_start): first
 * the sticky-inject table (PCM_INJ_SECTORS), then the write-intent
 * bitmap, one bit per PCM_WIB_ROWS physical rows (dm-pcm-wib.c), each
 * rounded up to whole blocks of the metadata device.
 *
 * With wear counters (wear_group rows per counter), the wear region
 * (pcm-wear.h: two copies of wear_sectors each) follows, 4 KiB aligned at
 * wear_start: after the WIB region, or the row metadata area, or the rows
 * when there is neither.
 *
 * Every region starts and ends on a logical block of the device that
 * holds it (data_block, meta_block): dm-pcm never reads or writes part of
 * one.  Rows may not be smaller than the data device's logical block, the
 * offset must be a multiple of it, and so must a table's length
 * (block_sectors): a bio the block layer sends is whole blocks.
 *
 * A physical row of a start-gap domain is a "slot": pcm_layout_slot() is
 * the one place that turns (domain, physical row) into a backing sector.
 */
#ifndef PCM_LAYOUT_H
#define PCM_LAYOUT_H

#include <linux/types.h>

#include "pcm-startgap.h"

struct pcm_layout {
	/* inputs */
	u64 dev_sectors;	/* size of the data device */
	u64 offset;		/* first data sector used */
	bool meta_dev;		/* metadata on a meta_device ... */
	u64 meta_dev_sectors;	/* ... of this size */
	u32 data_block;		/* logical block size of the data device, 0: 512 */
	u32 meta_block;		/* logical block size where the metadata is, 0: 512 */
	u32 row_size;		/* bytes, a power of two >= 512 */
	u32 domains;
	u32 row_meta;		/* metadata bytes per row, 0: none (no ECC) */
	u32 wear_group;		/* rows per wear counter, 0: no wear region */
	/* outputs of pcm_layout_compute() */
	u32 row_shift;		/* log2 of row_size in sectors */
	u32 block_sectors;	/* a table's length is a multiple of it */
	u64 sb_sectors;		/* one superblock copy */
	u64 meta_start;		/* copy 0, in sectors of the metadata device */
	u64 max_rows;		/* largest legal logical row count */
	u64 max_length;		/* largest legal table length, sectors */
	u32 row_meta_sectors;	/* a physical row's metadata, 0: none */
	u64 row_meta_start;	/* pcm_layout_place(): physical row 0's */
	/* the WIB region, with ECC only (row_meta): inject table, then bitmap */
	u32 inj_sectors;	/* the sticky-inject table, 0: none */
	u64 wib_start;		/* pcm_layout_place(): the inject table's first */
	u64 wib_sectors;	/* pcm_layout_place(): the bitmap, after the table */
	u64 wear_start;		/* pcm_layout_place(): the wear region's copy 0 */
	u64 wear_sectors;	/* pcm_layout_place(): one copy, whole blocks */
};

/* Write-intent bitmap: one bit per 2^PCM_WIB_ROW_SHIFT physical rows. */
#define PCM_WIB_ROW_SHIFT	6
#define PCM_WIB_ROWS		64	/* 1 << PCM_WIB_ROW_SHIFT */
/* Sticky-inject table: one 4 KiB block. */
#define PCM_INJ_SECTORS		8

/* Reasons pcm_layout_compute() refuses; pcm_layout_error() names them. */
enum pcm_layout_err {
	PCM_LAYOUT_OK,
	PCM_LAYOUT_OFFSET,	/* offset at or past the usable end */
	PCM_LAYOUT_META_EMPTY,	/* meta_device has no sectors at all */
	PCM_LAYOUT_META_SMALL,	/* no room for two superblock copies */
	PCM_LAYOUT_META_BLOCK,	/* metadata device blocks over PCM_SB_BLOCK */
	PCM_LAYOUT_ROW_BLOCK,	/* rows smaller than the data device's blocks */
	PCM_LAYOUT_OFFSET_BLOCK,	/* offset not on a block of the data device */
	PCM_LAYOUT_TOO_SMALL,	/* fewer physical rows than 2 per domain */
};

enum pcm_layout_err pcm_layout_compute(struct pcm_layout *l);
const char *pcm_layout_error(enum pcm_layout_err e);
u64 pcm_layout_rows(u64 length, u32 row_size);
u64 pcm_layout_wib_bits(u64 phys_rows);
u64 pcm_layout_wib_sectors(const struct pcm_layout *l, u64 phys_rows);
void pcm_layout_place(struct pcm_layout *l, u64 phys_rows);
u64 pcm_layout_wear_sectors(u64 phys_rows, u32 wear_group);

/* First sector of the metadata of the physical row at backing sector @slot. */
static inline u64 pcm_layout_row_meta(const struct pcm_layout *l, u64 slot)
{
	return l->row_meta_start +
	       ((slot - l->offset) >> l->row_shift) * l->row_meta_sectors;
}

/* First sector of physical row @p of domain @d on the data device. */
static inline u64 pcm_layout_slot(const struct pcm_layout *l, u32 d, u64 p)
{
	return l->offset + (pcm_sg_backing_row(l->domains, d, p) << l->row_shift);
}

#endif
