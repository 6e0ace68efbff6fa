// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm on-disk layout; see pcm-layout.h.
 */
#include <linux/kernel.h>
#include <linux/math64.h>

#include "pcm-layout.h"
#include "pcm-sb.h"
#include "pcm-wear.h"

#define SB_ALIGN_SECTORS	(PCM_SB_BLOCK >> 9)

/* One copy of the wear region of @phys_rows rows, in sectors. */
u64 pcm_layout_wear_sectors(u64 phys_rows, u32 wear_group)
{
	return pcm_wear_blocks(pcm_wear_counters(phys_rows, wear_group)) *
	       PCM_WEAR_BLOCK_SECTORS;
}

/* Both copies of the wear region and its alignment, 0 without wear. */
static u64 wear_reserve(const struct pcm_layout *l, u64 rows)
{
	if (!l->wear_group)
		return 0;
	return 2 * pcm_layout_wear_sectors(rows, l->wear_group) + PCM_WEAR_BLOCK_SECTORS;
}

/* The WIB region of @rows physical rows, with ECC only: inject table, bitmap. */
static u64 wib_reserve(const struct pcm_layout *l, u64 rows)
{
	if (!l->row_meta_sectors)
		return 0;
	return l->inj_sectors + pcm_layout_wib_sectors(l, rows);
}

/*
 * Superblock copies are whole PCM_SB_BLOCKs so that any device with
 * logical blocks up to that size can write one without read-modify-write.
 */
enum pcm_layout_err pcm_layout_compute(struct pcm_layout *l)
{
	u64 end = l->dev_sectors, rows, extra;
	u32 features = (l->row_meta ? PCM_SB_FEAT_ECC : 0) |
		       (l->wear_group ? PCM_SB_FEAT_WEAR : 0);
	u32 blk = l->meta_block > 512 ? l->meta_block >> 9 : 1;

	l->block_sectors = l->data_block > 512 ? l->data_block >> 9 : 1;
	/* whole blocks of the device that holds them, so no read-modify-write */
	l->row_meta_sectors = DIV_ROUND_UP(l->row_meta, 512 * blk) * blk;
	l->row_meta_start = 0;
	l->inj_sectors = l->row_meta ? DIV_ROUND_UP(PCM_INJ_SECTORS, blk) * blk : 0;
	l->wib_start = 0;
	l->wib_sectors = 0;
	l->wear_start = 0;
	l->wear_sectors = 0;
	l->sb_sectors = pcm_sb_size(l->domains, features) >> 9;
	l->row_shift = 0;
	while ((512U << l->row_shift) < l->row_size)
		l->row_shift++;
	l->max_rows = 0;
	l->max_length = 0;
	if (l->meta_block > PCM_SB_BLOCK)
		return PCM_LAYOUT_META_BLOCK;
	/* a row is remapped whole: it cannot be a part of a logical block */
	if (l->row_size < l->block_sectors << 9)
		return PCM_LAYOUT_ROW_BLOCK;
	if (l->offset & (l->block_sectors - 1))
		return PCM_LAYOUT_OFFSET_BLOCK;
	if (l->meta_dev) {
		if (!l->meta_dev_sectors)
			return PCM_LAYOUT_META_EMPTY;
		if (l->meta_dev_sectors < 2 * l->sb_sectors)
			return PCM_LAYOUT_META_SMALL;
		l->meta_start = 0;
	} else {
		end -= end % SB_ALIGN_SECTORS;
		if (end < 2 * l->sb_sectors)
			return PCM_LAYOUT_META_SMALL;
		end -= 2 * l->sb_sectors;
		l->meta_start = end;
	}
	if (l->offset >= end)
		return PCM_LAYOUT_OFFSET;
	/*
	 * What follows the parity area (the WIB region, then the wear
	 * region) grows with the rows: reserve it for the rows there would
	 * be without it, then take the rows that still fit, which need no
	 * more.
	 */
	if (l->meta_dev) {
		u64 avail = l->meta_dev_sectors - 2 * l->sb_sectors;

		rows = div_u64(end - l->offset, l->row_size >> 9);
		if (l->row_meta_sectors)
			rows = min(rows, div_u64(avail, l->row_meta_sectors));
		extra = wib_reserve(l, rows) + wear_reserve(l, rows);
		if (avail < extra)
			return PCM_LAYOUT_META_SMALL;
		if (l->row_meta_sectors)
			rows = min(rows, div_u64(avail - extra, l->row_meta_sectors));
	} else {
		rows = div_u64(end - l->offset, (l->row_size >> 9) + l->row_meta_sectors);
		extra = wib_reserve(l, rows) + wear_reserve(l, rows);
		if (extra) {
			if (end - l->offset <= extra)
				return PCM_LAYOUT_TOO_SMALL;
			rows = div_u64(end - l->offset - extra,
				       (l->row_size >> 9) + l->row_meta_sectors);
		}
	}
	/* every domain needs a logical row and its gap */
	if (rows < 2ULL * l->domains)
		return PCM_LAYOUT_TOO_SMALL;
	l->max_rows = rows - l->domains;
	l->max_length = l->max_rows * (l->row_size >> 9);
	return PCM_LAYOUT_OK;
}

const char *pcm_layout_error(enum pcm_layout_err e)
{
	switch (e) {
	case PCM_LAYOUT_OK:
		return "ok";
	case PCM_LAYOUT_OFFSET:
		return "offset leaves no room for rows before the metadata";
	case PCM_LAYOUT_META_EMPTY:
		return "meta_device has no sectors";
	case PCM_LAYOUT_META_SMALL:
		return "no room for the two superblock copies";
	case PCM_LAYOUT_META_BLOCK:
		return "metadata device has logical blocks over 4096 bytes";
	case PCM_LAYOUT_ROW_BLOCK:
		return "row_size is smaller than the device's logical block size";
	case PCM_LAYOUT_OFFSET_BLOCK:
		return "offset is not a multiple of the device's logical block size";
	case PCM_LAYOUT_TOO_SMALL:
		return "fewer than two physical rows per domain";
	}
	return "?";
}

/*
 * Where the row metadata goes once the table's @phys_rows (logical rows
 * plus a gap per domain) are known: after them on the data device, or
 * after the superblock copies on a meta_device; then, with ECC, the WIB
 * region, and with wear counters the wear region, 4 KiB aligned.
 */
void pcm_layout_place(struct pcm_layout *l, u64 phys_rows)
{
	u64 next;

	if (l->meta_dev)
		l->row_meta_start = 2 * l->sb_sectors;
	else
		l->row_meta_start = l->offset + (phys_rows << l->row_shift);
	next = l->row_meta_start + phys_rows * l->row_meta_sectors;
	if (l->row_meta_sectors) {
		/* the WIB region: right after the parity area */
		l->wib_start = next;
		l->wib_sectors = pcm_layout_wib_sectors(l, phys_rows);
		next += l->inj_sectors + l->wib_sectors;
	}
	if (!l->wear_group)
		return;
	l->wear_start = next + (-next & (PCM_WEAR_BLOCK_SECTORS - 1));	/* 4 KiB */
	l->wear_sectors = pcm_layout_wear_sectors(phys_rows, l->wear_group);
}

/* Bits of the write-intent bitmap of @phys_rows physical rows. */
u64 pcm_layout_wib_bits(u64 phys_rows)
{
	return (phys_rows + PCM_WIB_ROWS - 1) >> PCM_WIB_ROW_SHIFT;
}

/* Sectors of that bitmap: whole blocks of the metadata device. */
u64 pcm_layout_wib_sectors(const struct pcm_layout *l, u64 phys_rows)
{
	u32 blk = l->meta_block > 512 ? l->meta_block >> 9 : 1;
	u64 sectors = (pcm_layout_wib_bits(phys_rows) + 8 * 512 - 1) >> 12;

	return div_u64(sectors + blk - 1, blk) * blk;
}

/* Logical rows a table of @length sectors covers (the last may be partial). */
u64 pcm_layout_rows(u64 length, u32 row_size)
{
	u32 rs = row_size >> 9;

	return div_u64(length + rs - 1, rs);
}
