// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-sb.c: the superblock round-trips, every
 * single-bit flip of an encoded copy is refused, the two-copy choice takes
 * the newest valid copy, and geometry mismatches name their field.
 */
#include "../../dm-pcm/pcm-sb.h"
#include "tap.h"

#define MAXD 600

static struct pcm_sg_domain dom_a[MAXD], dom_b[MAXD];
static u8 buf[3 * PCM_SB_BLOCK];

static void sample(struct pcm_sb *sb, struct pcm_sg_domain *dom, u32 domains, u64 seq)
{
	u32 i;

	sb->seq = seq;
	sb->geo = (struct pcm_sb_geometry){ .logical_rows = 100000 + domains, .row_size = 4096,
					    .domains = domains, .randomize_seed = 0xfeedULL,
					    .randomize = 1 };
	sb->dom = dom;
	for (i = 0; i < domains; i++) {
		u64 n = pcm_sg_domain_rows(sb->geo.logical_rows, domains, i);

		dom[i].start = (i * 7919ULL) % n;
		dom[i].gap = (i * 104729ULL) % (n + 1);
	}
}

static bool same_geo(const struct pcm_sb_geometry *x, const struct pcm_sb_geometry *y)
{
	u64 dv, tv;

	return !pcm_sb_geometry_diff(x, y, &dv, &tv);
}

static void test_sizes(void)
{
	check(pcm_sb_size(1, 0) == PCM_SB_BLOCK, "one domain fits a block");
	check(pcm_sb_size(252, 0) == PCM_SB_BLOCK, "252 domains fit a block");
	check(pcm_sb_size(253, 0) == 2 * PCM_SB_BLOCK, "253 need two");
	check(pcm_sb_size(PCM_SB_MAX_DOMAINS, 0) % PCM_SB_BLOCK == 0, "whole blocks");
}

static void test_round_trip(void)
{
	static const u32 counts[] = { 1, 2, 8, 252, 253, MAXD };
	struct pcm_sb a, b;
	unsigned int c;

	for (c = 0; c < ARRAY_SIZE(counts); c++) {
		sample(&a, dom_a, counts[c], 42 + c);
		pcm_sb_encode(&a, buf, sizeof(buf));
		b.dom = dom_b;
		check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_VALID, "%u domains", counts[c]);
		check(b.seq == a.seq && same_geo(&b.geo, &a.geo) &&
		      !memcmp(dom_a, dom_b, counts[c] * sizeof(dom_a[0])), "%u domains equal", counts[c]);
		check(pcm_sb_decode(&b, counts[c] - 1, buf, sizeof(buf)) == PCM_SB_CORRUPT,
		      "more domains than the caller holds refused");
	}
}

/* Every single-bit flip anywhere in the covered bytes is caught. */
static void test_bit_flips(void)
{
	struct pcm_sb a, b;
	size_t size, bit;
	long missed = 0;
	enum pcm_sb_status st;

	sample(&a, dom_a, 300, 7);
	pcm_sb_encode(&a, buf, sizeof(buf));
	size = pcm_sb_size(300, 0);
	b.dom = dom_b;
	for (bit = 0; bit < size * 8; bit++) {
		buf[bit / 8] ^= 1 << (bit % 8);
		st = pcm_sb_decode(&b, MAXD, buf, sizeof(buf));
		if (st == PCM_SB_VALID)
			missed++;
		buf[bit / 8] ^= 1 << (bit % 8);
	}
	check(missed == 0, "%ld of %zu flips accepted", missed, size * 8);
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_VALID, "restored copy valid");
}

static void test_classes(void)
{
	struct pcm_sb a, b;

	b.dom = dom_b;
	memset(buf, 0, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_ZERO, "zeros");
	buf[4095] = 1;
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_FOREIGN, "one stray byte");
	memset(buf, 0xef, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_FOREIGN, "an ext4 or anything");
	sample(&a, dom_a, 4, 1);
	pcm_sb_encode(&a, buf, sizeof(buf));
	buf[4] = PCM_SB_VERSION + 1;	/* version, little-endian */
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_NEWER, "newer version");
	check(pcm_sb_decode(&b, MAXD, buf, PCM_SB_BLOCK - 1) == PCM_SB_CORRUPT, "short buffer");
}

/*
 * Without features the copy is version 1, which older modules load; a
 * feature this code does not know makes the device one it must refuse.
 */
static void test_features(void)
{
	const size_t at_features = 52;	/* after randomize, in version 1's layout */
	struct pcm_sb a, b;

	b.dom = dom_b;
	sample(&a, dom_a, 4, 1);
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(buf[4] == 1 && !buf[at_features], "no features: version 1");
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_VALID && !b.geo.features,
	      "version 1 decodes");
	buf[4] = 2;
	buf[at_features] = 0x80;
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_NEWER,
	      "unknown feature bit refused");
	buf[4] = 1;
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT,
	      "version 1 with a features word is corrupt");
}

/*
 * ECC is feature bit 0: version 2, its geometry word after the domains,
 * checked by the CRC and compared with the table's like any geometry.
 */
static void test_ecc_feature(void)
{
	struct pcm_sb a, b;
	u64 d, t;

	check(pcm_sb_size(252, PCM_SB_FEAT_ECC) == 2 * PCM_SB_BLOCK &&
	      pcm_sb_size(251, PCM_SB_FEAT_ECC) == PCM_SB_BLOCK, "the ECC word takes 8 bytes");
	b.dom = dom_b;
	sample(&a, dom_a, 4, 1);
	a.geo.features = PCM_SB_FEAT_ECC;
	a.geo.ecc = 0x0a04004000006ULL;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(buf[4] == 2, "ECC: version 2");
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_VALID &&
	      b.geo.features == PCM_SB_FEAT_ECC && b.geo.ecc == a.geo.ecc, "ECC word round trip");
	check(!pcm_sb_geometry_diff(&a.geo, &b.geo, &d, &t), "same geometry");
	b.geo.ecc++;
	check(pcm_sb_geometry_diff(&a.geo, &b.geo, &d, &t) &&
	      !strcmp(pcm_sb_geometry_diff(&a.geo, &b.geo, &d, &t), "ecc") && t == d + 1,
	      "another ECC layout is refused as a geometry mismatch");
	buf[64 + 4 * 16] ^= 1;
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT, "ECC word under the CRC");
}

/* PCM_SB_FEAT_WEAR: the wear word after the ECC word, a mismatch named. */
static void test_wear_feature(void)
{
	struct pcm_sb a, b;
	u64 d, t;

	check(pcm_sb_size(251, PCM_SB_FEAT_ECC | PCM_SB_FEAT_WEAR) == PCM_SB_BLOCK &&
	      pcm_sb_size(252, PCM_SB_FEAT_WEAR) == 2 * PCM_SB_BLOCK, "the wear word takes 8 bytes");
	b.dom = dom_b;
	sample(&a, dom_a, 4, 1);
	a.geo.features = PCM_SB_FEAT_ECC | PCM_SB_FEAT_WEAR;
	a.geo.ecc = 0x0a04004000006ULL;
	a.geo.wear = 1024;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_VALID &&
	      b.geo.features == a.geo.features && b.geo.ecc == a.geo.ecc && b.geo.wear == 1024,
	      "ECC and wear words round trip");
	a.geo.features = PCM_SB_FEAT_WEAR;
	a.geo.ecc = 0;
	a.geo.wear = 1;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_VALID &&
	      b.geo.features == PCM_SB_FEAT_WEAR && b.geo.wear == 1 && !b.geo.ecc,
	      "wear word alone");
	b.geo.wear = 2;
	check(pcm_sb_geometry_diff(&a.geo, &b.geo, &d, &t) &&
	      !strcmp(pcm_sb_geometry_diff(&a.geo, &b.geo, &d, &t), "wear") && d == 1 && t == 2,
	      "another wear granularity is a geometry mismatch");
	b.geo.features = 0;
	b.geo.wear = 0;
	check(pcm_sb_geometry_diff(&a.geo, &b.geo, &d, &t) &&
	      !strcmp(pcm_sb_geometry_diff(&a.geo, &b.geo, &d, &t), "features"),
	      "a table without wear on a device with it is refused");
	a.geo.wear = 3;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT,
	      "a wear word that is not a power of two is corrupt");
	a.geo.wear = 4;
	pcm_sb_encode(&a, buf, sizeof(buf));
	buf[64 + 4 * 16] ^= 1;
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT, "wear word under the CRC");
	a.geo.features = 8;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_NEWER, "bit 3 is not known yet");
}

/* A checksummed copy with impossible registers is still refused. */
static void test_register_ranges(void)
{
	struct pcm_sb a, b;
	u64 n = pcm_sg_domain_rows(100004, 4, 3);

	b.dom = dom_b;
	sample(&a, dom_a, 4, 1);
	dom_a[3].start = n;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT, "start = N");
	sample(&a, dom_a, 4, 1);
	dom_a[3].gap = n + 1;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT, "gap = N + 1");
	sample(&a, dom_a, 4, 1);
	dom_a[3].gap = n;
	dom_a[3].start = n - 1;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_VALID, "gap = N, start = N-1");
	sample(&a, dom_a, 4, 1);
	a.geo.row_size = 3000;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT, "row_size 3000");
	sample(&a, dom_a, 4, 1);
	a.geo.logical_rows = 3;
	pcm_sb_encode(&a, buf, sizeof(buf));
	check(pcm_sb_decode(&b, MAXD, buf, sizeof(buf)) == PCM_SB_CORRUPT, "fewer rows than domains");
}

static void test_pick(void)
{
	struct pcm_sb a = { .seq = 5 }, b = { .seq = 6 };

	check(pcm_sb_pick(PCM_SB_VALID, &a, PCM_SB_VALID, &b) == 1, "newer second");
	b.seq = 4;
	check(pcm_sb_pick(PCM_SB_VALID, &a, PCM_SB_VALID, &b) == 0, "newer first");
	check(pcm_sb_pick(PCM_SB_CORRUPT, &a, PCM_SB_VALID, &b) == 1, "first torn");
	check(pcm_sb_pick(PCM_SB_VALID, &a, PCM_SB_CORRUPT, &b) == 0, "second torn");
	check(pcm_sb_pick(PCM_SB_ZERO, &a, PCM_SB_ZERO, &b) == -1, "none");
	check(pcm_sb_pick(PCM_SB_FOREIGN, &a, PCM_SB_NEWER, &b) == -1, "none valid");
}

static void test_geometry_diff(void)
{
	struct pcm_sb_geometry t = { .data_offset = 8, .logical_rows = 1000,
				      .row_size = 4096, .domains = 4,
				      .randomize_seed = 9, .randomize = 1 }, d;
	u64 dv = 0, tv = 0;

	d = t;
	check(!pcm_sb_geometry_diff(&d, &t, &dv, &tv), "equal");
	d.row_size = 8192;
	check(!strcmp(pcm_sb_geometry_diff(&d, &t, &dv, &tv), "row_size") &&
	      dv == 8192 && tv == 4096, "row_size named with values");
	d = t;
	d.domains = 8;
	check(!strcmp(pcm_sb_geometry_diff(&d, &t, &dv, &tv), "domains"), "domains");
	d = t;
	d.randomize_seed = 10;
	check(!strcmp(pcm_sb_geometry_diff(&d, &t, &dv, &tv), "randomize_seed"), "seed");
	d = t;
	d.logical_rows = 999;
	check(!strcmp(pcm_sb_geometry_diff(&d, &t, &dv, &tv), "logical_rows"), "rows");
	d = t;
	d.data_offset = 16;
	check(!strcmp(pcm_sb_geometry_diff(&d, &t, &dv, &tv), "offset") &&
	      dv == 16 && tv == 8, "offset");
}

int main(void)
{
	RUN(test_sizes);
	RUN(test_round_trip);
	RUN(test_bit_flips);
	RUN(test_classes);
	RUN(test_features);
	RUN(test_ecc_feature);
	RUN(test_wear_feature);
	RUN(test_register_ranges);
	RUN(test_pick);
	RUN(test_geometry_diff);
	return tap_done();
}
