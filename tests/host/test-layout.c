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
	RUN(test_slot);
	RUN(test_refusals);
	RUN(test_row_meta);
	RUN(test_wear_region);
	RUN(test_wear_codec);
	return tap_done();
}
