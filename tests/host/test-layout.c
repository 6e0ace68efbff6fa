// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-layout.c: the metadata never overlaps a
 * row, the legal length is the largest that fits, and too-small devices
 * are refused with the right reason.
 */
#include "../../dm-pcm/pcm-layout.h"
#include "../../dm-pcm/pcm-sb.h"
#include "../../dm-pcm/pcm-startgap.h"
#include "../../dm-pcm/pcm-wear.h"
#include "tap.h"

/* Rows R + K and the superblocks fit, and one more row would not. */
static void test_fits_exactly(void)
{
	static const u32 rows[] = { 512, 4096, 65536 }, doms[] = { 1, 3, 8, 300 };
	static const u64 offs[] = { 0, 8, 2048 };
	long bad = 0, cases = 0;
	u64 dev, end;
	unsigned int r, d, o;

	for (dev = 70000; dev < 90000; dev += 997)
		for (r = 0; r < 3; r++)
			for (d = 0; d < 4; d++)
				for (o = 0; o < 3; o++) {
					struct pcm_layout l = {
						.dev_sectors = dev, .offset = offs[o],
						.row_size = rows[r], .domains = doms[d],
					};
					u64 rs = rows[r] >> 9, used;

					if (pcm_layout_compute(&l) != PCM_LAYOUT_OK)
						continue;
					cases++;
					used = offs[o] + pcm_sg_physical_rows(l.max_rows, doms[d]) * rs;
					end = l.meta_start + 2 * l.sb_sectors;
					/* fits, and one more row would not */
					if (used > l.meta_start || end > dev ||
					    l.meta_start % 8 || used + rs <= l.meta_start)
						bad++;
					if (l.max_length != l.max_rows * rs ||
					    l.sb_sectors != pcm_sb_size(doms[d], 0) / 512)
						bad++;
				}
	check(cases > 700 && bad == 0, "%ld of %ld layouts wrong", bad, cases);
}

static void test_external_meta(void)
{
	struct pcm_layout l = { .dev_sectors = 8192, .offset = 0, .meta_dev = true,
				.meta_dev_sectors = 16, .row_size = 4096,
				.domains = 1 };

	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.meta_start == 0 &&
	      l.max_rows == 1023 && l.max_length == 8184, "whole device for rows");
	l.meta_dev_sectors = 15;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_META_SMALL, "meta device too small");
	/* a meta_device of 0 sectors is an empty device, not "no meta_device" */
	l.meta_dev_sectors = 0;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_META_EMPTY, "empty meta device");
}

/* Superblocks are written whole: no device with blocks over 4 KiB. */
static void test_meta_block(void)
{
	struct pcm_layout l = { .dev_sectors = 8192, .row_size = 8192, .domains = 1,
				.meta_block = 4096 };

	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK, "4 KiB blocks hold metadata");
	l.meta_block = 8192;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_META_BLOCK, "8 KiB blocks refused");
	l.meta_dev = true;
	l.meta_dev_sectors = 64;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_META_BLOCK,
	      "on a meta_device too");
}

/*
 * The data device's logical blocks: rows no smaller, the offset on one,
 * and so every legal length a whole number of them.
 */
static void test_data_block(void)
{
	struct pcm_layout l = { .dev_sectors = 1 << 16, .row_size = 2048, .domains = 1,
				.data_block = 4096, .meta_block = 4096 };

	check(pcm_layout_compute(&l) == PCM_LAYOUT_ROW_BLOCK && l.block_sectors == 8,
	      "2 KiB rows on 4 KiB blocks refused");
	l.row_size = 4096;
	l.offset = 4;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OFFSET_BLOCK, "offset inside a block refused");
	l.offset = 8;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.max_length % 8 == 0,
	      "4 KiB rows from a 4 KiB offset: ok");
	l.data_block = 0;
	l.offset = 4;
	l.row_size = 512;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.block_sectors == 1,
	      "no block size given: 512 bytes");
	l.data_block = 1024;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_ROW_BLOCK, "512 B rows on 1 KiB blocks");
	l.row_size = 1024;
	l.offset = 3;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OFFSET_BLOCK, "offset 3 on 1 KiB blocks");
	l.offset = 2;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK, "offset 2 on 1 KiB blocks");
	check(!strcmp(pcm_layout_error(PCM_LAYOUT_ROW_BLOCK),
		      "row_size is smaller than the device's logical block size") &&
	      !strcmp(pcm_layout_error(PCM_LAYOUT_OFFSET_BLOCK),
		      "offset is not a multiple of the device's logical block size"), "reasons");
}

/* @x is a whole number of @blk-sector blocks. */
static bool on_blocks(u64 x, u32 blk)
{
	return x % blk == 0;
}

/*
 * One layout with every physical row in use (R + K): each region the
 * module reads or writes starts and ends on a logical block of the device
 * that holds it, and none overlaps another or the device's end.
 */
static bool regions_ok(struct pcm_layout *l, char *why, size_t len)
{
	u32 db = l->block_sectors, mb = l->meta_block > 512 ? l->meta_block >> 9 : 1;
	u64 phys = l->max_rows + l->domains, rows_end, meta_end, end;

	pcm_layout_place(l, phys);
	rows_end = l->offset + (phys << l->row_shift);
	meta_end = l->meta_dev ? l->meta_dev_sectors : l->dev_sectors;
	end = l->row_meta_start + phys * l->row_meta_sectors;
	if (l->row_meta_sectors)
		end = l->wib_start + l->inj_sectors + l->wib_sectors;
	if (l->wear_group)
		end = l->wear_start + 2 * l->wear_sectors;
	if (!on_blocks(l->max_length, db) || !on_blocks(l->offset, db) ||
	    !on_blocks(1ULL << l->row_shift, db))
		snprintf(why, len, "rows off the data device's blocks");
	else if (!on_blocks(l->row_meta_start, mb) || !on_blocks(l->row_meta_sectors, mb) ||
		 !on_blocks(l->wib_start, mb) || !on_blocks(l->inj_sectors, mb) ||
		 !on_blocks(l->wib_sectors, mb) || !on_blocks(l->wear_start, mb) ||
		 !on_blocks(l->wear_sectors, mb) || !on_blocks(l->meta_start, mb) ||
		 !on_blocks(l->sb_sectors, mb))
		snprintf(why, len, "metadata off the %u-sector blocks", mb);
	else if (!l->meta_dev && (rows_end > l->row_meta_start || end > l->meta_start))
		snprintf(why, len, "regions overlap: rows to %llu, parity at %llu, end %llu, sb %llu",
			 (unsigned long long)rows_end, (unsigned long long)l->row_meta_start,
			 (unsigned long long)end, (unsigned long long)l->meta_start);
	else if (l->meta_dev && (l->row_meta_start < 2 * l->sb_sectors || end > meta_end ||
				 rows_end > l->dev_sectors))
		snprintf(why, len, "past a device's end");
	else if (!l->meta_dev && l->meta_start + 2 * l->sb_sectors > meta_end)
		snprintf(why, len, "superblocks past the end");
	else
		return true;
	return false;
}

/*
 * Every region on whole blocks, for every block size on the data device
 * and on a meta_device, each row size, ECC metadata size, wear region and
 * domain count (case @i: each a digit of it).
 */
static void test_block_alignment(void)
{
	static const u32 blks[] = { 512, 1024, 2048, 4096 }, rows[] = { 512, 4096, 32768 };
	static const u32 metas[] = { 0, 7, 64, 512 }, groups[] = { 0, 1, 1024 };
	static const u32 doms[] = { 1, 3, 64 };
	long cases = 0, bad = 0;
	char why[160] = "";
	unsigned int i;

	for (i = 0; i < 4 * 5 * 3 * 4 * 3 * 3; i++) {
		unsigned int db = i % 4, mb = i / 4 % 5, r = i / 20 % 3, m = i / 60 % 4;
		unsigned int g = i / 240 % 3, d = i / 720;
		/* mb 4: metadata on the data device; else a meta_device's blocks */
		bool md = mb < 4;
		u32 meta_blk = md ? blks[mb] : blks[db];
		struct pcm_layout l = {
			.dev_sectors = (1 << 18) + 8 * 37, .offset = 3 * 8 * (blks[db] >> 9),
			.meta_dev = md, .meta_dev_sectors = md ? (1 << 15) + 8 * 5 : 0,
			.data_block = blks[db], .meta_block = meta_blk,
			.row_size = rows[r], .domains = doms[d],
			/* metas[m] bytes per 512-byte sector */
			.row_meta = metas[m] * (rows[r] >> 9), .wear_group = groups[g],
		};
		enum pcm_layout_err e = pcm_layout_compute(&l);

		if (rows[r] < blks[db]) {
			if (e != PCM_LAYOUT_ROW_BLOCK && bad++ < 5)
				printf("#   %u B rows on %u B blocks: %s\n", rows[r], blks[db],
				       pcm_layout_error(e));
			continue;
		}
		if (e != PCM_LAYOUT_OK) {
			snprintf(why, sizeof(why), "refused: %s", pcm_layout_error(e));
		} else {
			cases++;
			if (regions_ok(&l, why, sizeof(why)))
				continue;
		}
		if (bad++ < 5)
			printf("#   data %u B, meta %u B%s, row %u, row_meta %u, wear %u, domains %u: %s\n",
			       blks[db], meta_blk, md ? " (meta_device)" : "", rows[r], l.row_meta,
			       groups[g], doms[d], why);
	}
	check(cases > 1000 && bad == 0, "%ld bad of %ld layouts", bad, cases);
}

/* The slot of (domain, physical row) is the interleaved backing row. */
static void test_slot(void)
{
	struct pcm_layout l = { .dev_sectors = 1 << 20, .offset = 16, .row_size = 8192,
				.domains = 3 };

	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.row_shift == 4,
	      "8 KiB rows are 16 sectors");
	check(pcm_layout_slot(&l, 0, 0) == 16 && pcm_layout_slot(&l, 2, 0) == 16 + 32 &&
	      pcm_layout_slot(&l, 1, 5) == 16 + 16 * 16, "backing row p * K + d");
}

/*
 * ECC metadata: whole sectors per physical row, after the rows on the
 * data device (which then holds fewer rows), after the superblocks on a
 * meta_device (whose size then bounds the rows).
 */
static void test_row_meta(void)
{
	struct pcm_layout l = { .dev_sectors = 8192 + 16, .row_size = 4096, .domains = 1,
				.row_meta = 512 };

	/* the WIB region: 8 sectors of inject table, 1 of bitmap */
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.row_meta_sectors == 1 &&
	      l.max_rows == (8192 - 9) / 9 - 1, "a 9th sector per row and the WIB region: %llu rows",
	      (unsigned long long)l.max_rows);
	pcm_layout_place(&l, l.max_rows + 1);
	check(l.row_meta_start == (l.max_rows + 1) * 8 &&
	      l.row_meta_start + (l.max_rows + 1) <= l.meta_start, "parity area before the superblocks");
	check(l.wib_start == l.row_meta_start + l.max_rows + 1 && l.inj_sectors == 8 &&
	      l.wib_sectors == 1 && l.wib_start + 9 <= l.meta_start,
	      "the WIB region after the parity area, before the superblocks");
	check(pcm_layout_wib_bits(64) == 1 && pcm_layout_wib_bits(65) == 2 &&
	      pcm_layout_wib_sectors(&l, 4096 * 64) == 1 &&
	      pcm_layout_wib_sectors(&l, 4096 * 64 + 1) == 2, "a bit per 64 rows, 4096 bits a sector");
	check(pcm_layout_row_meta(&l, 3 * 8) == l.row_meta_start + 3, "row 3's parity");
	l.row_meta = 64;	/* 512 B rows of PSS's layout: a sector each */
	l.row_size = 512;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.row_meta_sectors == 1,
	      "a partial sector rounds up");
	l.meta_block = 4096;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.row_meta_sectors == 8,
	      "whole blocks of a 4 KiB device");
	l = (struct pcm_layout) { .dev_sectors = 8192, .meta_dev = true, .meta_dev_sectors = 16 + 100,
				  .row_size = 4096, .domains = 1, .row_meta = 1024 };
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.max_rows == (100 - 9) / 2 - 1,
	      "the meta_device bounds the rows: %llu", (unsigned long long)l.max_rows);
	pcm_layout_place(&l, 45);
	check(l.row_meta_start == 16, "after the two superblock copies");
	check(l.wib_start == 16 + 45 * 2 && l.wib_start + l.inj_sectors + l.wib_sectors <= 116,
	      "the WIB region fits on the meta_device");
}

/* The wear region: after the parity area, 4 KiB aligned, two copies, all fit. */
static void test_wear_region(void)
{
	static const u32 groups[] = { 1, 2, 1024 };
	static const u32 metas[] = { 0, 64, 512 };
	unsigned int g, m;

	for (g = 0; g < 3; g++) {
		for (m = 0; m < 3; m++) {
			struct pcm_layout l = { .dev_sectors = 2 * 1024 * 1024 + 77, .row_size = 4096,
						.domains = 3, .row_meta = metas[m],
						.wear_group = groups[g] };
			u64 phys, rows0, end;

			l.wear_group = 0;
			check(pcm_layout_compute(&l) == PCM_LAYOUT_OK, "without wear");
			rows0 = l.max_rows;
			l.wear_group = groups[g];
			check(pcm_layout_compute(&l) == PCM_LAYOUT_OK, "with wear:%u", groups[g]);
			/* both copies and the alignment, in rows, no more */
			check(l.max_rows < rows0 &&
			      rows0 - l.max_rows <= (2 * 8 * pcm_wear_blocks(pcm_wear_counters(
					rows0 + 3, groups[g])) + 8) / (8 + l.row_meta_sectors) + 1,
			      "wear:%u costs %llu of %llu rows", groups[g],
			      (unsigned long long)(rows0 - l.max_rows), (unsigned long long)rows0);
			phys = l.max_rows + l.domains;
			pcm_layout_place(&l, phys);
			end = l.wear_start + 2 * l.wear_sectors;
			check(l.wear_start % 8 == 0 &&
			      l.wear_start >= l.row_meta_start + phys * l.row_meta_sectors &&
			      end <= l.meta_start, "wear:%u meta %u: region %llu..%llu before %llu",
			      groups[g], metas[m], (unsigned long long)l.wear_start,
			      (unsigned long long)end, (unsigned long long)l.meta_start);
			check(l.wear_sectors / 8 * PCM_WEAR_PER_BLOCK >=
			      pcm_wear_counters(phys, groups[g]) &&
			      l.wear_sectors / 8 == pcm_wear_blocks(pcm_wear_counters(phys, groups[g])),
			      "a copy holds every counter");
		}
	}
	{
		struct pcm_layout l = { .dev_sectors = 1 << 20, .meta_dev = true,
					.meta_dev_sectors = 16 + 8, .row_size = 4096,
					.domains = 1, .wear_group = 1 };

		check(pcm_layout_compute(&l) == PCM_LAYOUT_META_SMALL,
		      "a meta_device without room for the wear region is refused");
		/* 2^17 rows: 129 blocks a copy, two copies and the alignment */
		l.meta_dev_sectors = 16 + 2 * 8 * 129 + 8 - 1;
		check(pcm_layout_compute(&l) == PCM_LAYOUT_META_SMALL, "a sector short");
		l.meta_dev_sectors++;
		check(pcm_layout_compute(&l) == PCM_LAYOUT_OK, "room for it: ok");
		pcm_layout_place(&l, l.max_rows + 1);
		check(l.wear_start == 16 && l.wear_start + 2 * l.wear_sectors <= l.meta_dev_sectors,
		      "after the superblocks: %llu + 2 x %llu", (unsigned long long)l.wear_start,
		      (unsigned long long)l.wear_sectors);
	}
}

/* Blocks round trip; a torn or misplaced block is refused; zeros are zeros. */
static void test_wear_codec(void)
{
	static u8 blk[PCM_WEAR_BLOCK];
	u32 in[PCM_WEAR_PER_BLOCK], out[PCM_WEAR_PER_BLOCK];
	u64 seq = 0;
	unsigned int i;

	for (i = 0; i < PCM_WEAR_PER_BLOCK; i++)
		in[i] = i * 2654435761U;
	memset(blk, 0, sizeof(blk));
	check(pcm_wear_block_decode(blk, 0, &seq, out, PCM_WEAR_PER_BLOCK) == PCM_WEAR_BLK_ZERO,
	      "never written");
	pcm_wear_block_encode(blk, 7, 42, in, PCM_WEAR_PER_BLOCK);
	check(pcm_wear_block_decode(blk, 7, &seq, out, PCM_WEAR_PER_BLOCK) == PCM_WEAR_BLK_VALID &&
	      seq == 42 && !memcmp(in, out, sizeof(in)), "round trip");
	check(pcm_wear_block_decode(blk, 8, &seq, out, 10) == PCM_WEAR_BLK_BAD,
	      "another block's place");
	for (i = 0; i < PCM_WEAR_BLOCK * 8; i += 997) {
		blk[i / 8] ^= 1U << (i % 8);
		check(pcm_wear_block_decode(blk, 7, &seq, out, 10) == PCM_WEAR_BLK_BAD,
		      "bit %u flipped", i);
		blk[i / 8] ^= 1U << (i % 8);
	}
	memset(blk + 2048, 0, 2048);	/* a torn write: half the block old */
	check(pcm_wear_block_decode(blk, 7, &seq, out, 10) == PCM_WEAR_BLK_BAD, "torn");
	pcm_wear_block_encode(blk, 0, 1, in, 3);
	check(pcm_wear_block_decode(blk, 0, &seq, out, PCM_WEAR_PER_BLOCK) == PCM_WEAR_BLK_VALID &&
	      out[0] == in[0] && out[2] == in[2] && out[3] == 0, "a partial last block");
	check(pcm_wear_counters(1025, 1024) == 2 && pcm_wear_counters(5, 0) == 0 &&
	      pcm_wear_blocks(PCM_WEAR_PER_BLOCK) == 1 && pcm_wear_blocks(PCM_WEAR_PER_BLOCK + 1) == 2,
	      "counts");
}

static void test_refusals(void)
{
	struct pcm_layout l = { .dev_sectors = 16, .row_size = 4096, .domains = 1 };

	check(pcm_layout_compute(&l) == PCM_LAYOUT_OFFSET, "only metadata fits");
	l.dev_sectors = 15;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_META_SMALL, "not even metadata");
	l.dev_sectors = 16 + 8;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_TOO_SMALL, "one row is not enough");
	l.dev_sectors = 16 + 16;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OK && l.max_rows == 1,
	      "two rows: one logical row and its gap");
	l.offset = 8;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_TOO_SMALL, "offset eats a row");
	l.offset = 24;
	check(pcm_layout_compute(&l) == PCM_LAYOUT_OFFSET, "offset reaches metadata");
	check(pcm_layout_rows(9, 4096) == 2 && pcm_layout_rows(8, 4096) == 1,
	      "partial last row counts");
}

int main(void)
{
	RUN(test_fits_exactly);
	RUN(test_external_meta);
	RUN(test_meta_block);
	RUN(test_data_block);
	RUN(test_block_alignment);
	RUN(test_slot);
	RUN(test_refusals);
	RUN(test_row_meta);
	RUN(test_wear_region);
	RUN(test_wear_codec);
	return tap_done();
}
