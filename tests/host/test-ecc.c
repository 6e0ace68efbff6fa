// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-ecc.c over the kernel's own lib/bch.c
 * (compiled from linux-source-6.12): the layouts' arithmetic and fit
 * messages, every geometry the checks accept really working in lib/bch,
 * round trips, every error pattern up to t of a small code, random ones
 * of the papers' codes, and what happens beyond t.  The parity tables:
 * byte for byte lib/bch's parity on every layout and codeword length, and
 * decoding with them gives what lib/bch alone gave, within t and beyond.
 */
#include <linux/bch.h>

#include "../../dm-pcm/pcm-ecc.h"
#include "tap.h"

static u64 rng_state = 42;

static u64 rnd(void)
{
	u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void fill(u8 *buf, size_t len)
{
	while (len--)
		*buf++ = rnd();
}

static const struct pcm_ecc_layout *layout(const char *name)
{
	const struct pcm_ecc_layout *l;

	for (l = pcm_ecc_layouts; l->name; l++)
		if (!strcmp(l->name, name))
			return l;
	return NULL;
}

static int geom(struct pcm_ecc_geom *g, unsigned int cw, unsigned int t, unsigned int meta)
{
	char msg[200];

	return pcm_ecc_geom_init(g, cw, t, meta, msg, sizeof(msg));
}

/* The papers' layouts derive what pcm-ecc.c's comment says they do. */
static void test_layouts(void)
{
	static const struct { const char *name; u8 m, pb; u16 parity; } want[] = {
		{ "pss", 10, 5, 30 }, { "onyx", 7, 2, 128 }, { "reram", 12, 24, 48 },
		{ "optane", 13, 26, 26 },
	};
	const struct pcm_ecc_layout *l;
	struct pcm_ecc_geom g;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		l = layout(want[i].name);
		check(l, "no layout %s", want[i].name);
		if (!l)
			continue;
		check(!geom(&g, l->codewords, l->t, l->meta_bytes), "%s refused", l->name);
		check(g.m == want[i].m && g.parity_bytes == want[i].pb &&
		      pcm_ecc_sector_parity(&g) == want[i].parity,
		      "%s: m %u, %u parity bytes, %u per sector", l->name, g.m,
		      g.parity_bytes, pcm_ecc_sector_parity(&g));
		check(pcm_ecc_row_meta(&g, 4096) == 8U * l->meta_bytes, "%s row meta", l->name);
	}
	l = layout("onyx");
	check(l && !geom(&g, l->codewords, l->t, l->meta_bytes) && pcm_ecc_cw_len(&g, 0) == 8,
	      "onyx: one codeword per 8-byte word");
}

/* Codewords tile the sector: contiguous, lengths within one byte; pcm_ecc_cw_of() inverts. */
static void test_split(void)
{
	struct pcm_ecc_geom g = { 0 };
	unsigned int cw, i, lo, hi, end;
	long bad = 0;

	for (cw = 1; cw <= PCM_ECC_MAX_CODEWORDS; cw++) {
		g.codewords = cw;
		lo = 512;
		hi = 0;
		for (i = end = 0; i < cw; i++) {
			bad += pcm_ecc_cw_start(&g, i) != end;
			end += pcm_ecc_cw_len(&g, i);
			lo = min(lo, pcm_ecc_cw_len(&g, i));
			hi = max(hi, pcm_ecc_cw_len(&g, i));
		}
		bad += end != 512 || hi - lo > 1 || hi != DIV_ROUND_UP(512, cw);
	}
	for (cw = 1; cw <= PCM_ECC_MAX_CODEWORDS; cw++) {
		g.codewords = cw;
		for (i = 0; i < 512; i++) {
			end = pcm_ecc_cw_of(&g, i);
			bad += end >= cw || i < pcm_ecc_cw_start(&g, end) ||
			       i >= pcm_ecc_cw_start(&g, end) + pcm_ecc_cw_len(&g, end);
		}
	}
	check(!bad, "%ld bad splits", bad);
	g.codewords = 6;
	check(pcm_ecc_cw_len(&g, 0) == 85 && pcm_ecc_cw_len(&g, 2) == 86, "pss split");
}

/*
 * Out-of-range words are refused with the word's name, and a layout whose
 * parity does not fit says what would: its advice is checked to fit, and
 * one more t to not fit.
 */
static void test_fit_messages(void)
{
	struct pcm_ecc_geom g, gf, keep = { 1, 2, 3, 4, 5 };
	unsigned int cw, t, meta, ft, fm, need;
	long bad = 0, advised = 0, reported = 0;
	char msg[200];
	int n, off;

	check(pcm_ecc_geom_init(&keep, 0, 4, 64, msg, sizeof(msg)) == -EINVAL &&
	      strstr(msg, "ecc_codewords:0"), "%s", msg);
	check(pcm_ecc_geom_init(&keep, 257, 4, 64, msg, sizeof(msg)) == -EINVAL &&
	      strstr(msg, "ecc_codewords:257"), "%s", msg);
	check(pcm_ecc_geom_init(&keep, 6, 0, 64, msg, sizeof(msg)) == -EINVAL &&
	      strstr(msg, "ecc_t:0"), "%s", msg);
	check(pcm_ecc_geom_init(&keep, 6, 65, 64, msg, sizeof(msg)) == -EINVAL &&
	      strstr(msg, "ecc_t:65"), "%s", msg);
	check(pcm_ecc_geom_init(&keep, 6, 4, 513, msg, sizeof(msg)) == -EINVAL &&
	      strstr(msg, "meta_bytes:513"), "%s", msg);
	check(pcm_ecc_geom_init(&keep, 6, 9, 64, msg, sizeof(msg)) == -EINVAL &&
	      !strcmp(msg, "ecc_codewords:6 ecc_t:9 needs 72 parity bytes per sector, meta_bytes is 64: ecc_t:8 fits, or meta_bytes:72"),
	      "%s", msg);
	check(keep.codewords == 1 && keep.meta_bytes == 2 && keep.t == 3, "refusal changed the geometry");

	for (cw = 1; cw <= PCM_ECC_MAX_CODEWORDS; cw++) {
		for (t = 1; t <= PCM_ECC_MAX_T; t += 3) {
			meta = rnd() % 200;
			if (!pcm_ecc_geom_init(&g, cw, t, meta, msg, sizeof(msg)))
				continue;
			advised++;
			n = sscanf(msg, "%*s %*s needs %u parity bytes per sector, meta_bytes is %*u: %n",
				   &need, &off);
			if (n != 1 || (geom(&gf, cw, t, PCM_ECC_MAX_META) ? need <= PCM_ECC_MAX_META :
						need != cw * gf.parity_bytes)) {
				bad++;
			} else if (sscanf(msg + off, "ecc_t:%u fits, or meta_bytes:%u", &ft, &fm) == 2) {
				bad += geom(&g, cw, ft, meta) || !geom(&g, cw, ft + 1, meta) ||
				       geom(&g, cw, t, fm) || !geom(&g, cw, t, fm - 1) || fm != need;
			} else if (sscanf(msg + off, "ecc_t:%u fits (meta_bytes:512 at most)", &ft) == 1) {
				bad += geom(&g, cw, ft, meta) || !geom(&g, cw, ft + 1, meta) ||
				       need <= PCM_ECC_MAX_META;
			} else if (sscanf(msg + off, "no ecc_t fits, ecc_t:1 needs meta_bytes:%u", &fm) == 1) {
				bad += !geom(&g, cw, 1, meta) || geom(&g, cw, 1, fm) ||
				       !geom(&g, cw, 1, fm - 1);
			} else {
				bad++;
			}
			if (bad > reported && reported++ < 5)
				printf("#   bad advice: %s\n", msg);
		}
	}
	check(!bad && advised > 1000, "%ld bad advices of %ld", bad, advised);
}

/* Pack and unpack: a round trip, and words this code never packs refused. */
static void test_pack(void)
{
	struct pcm_ecc_geom g, u;
	u64 w;
	int i;

	check(!geom(&g, 6, 4, 64), "pss");
	w = pcm_ecc_geom_pack(&g);
	check(!pcm_ecc_geom_unpack(&u, w) && !memcmp(&u, &g, sizeof(g)), "round trip");
	check(pcm_ecc_geom_unpack(&u, w ^ (1ULL << 40)) == -EINVAL, "another m accepted");
	check(pcm_ecc_geom_unpack(&u, w ^ (1ULL << 48)) == -EINVAL, "another parity size accepted");
	check(pcm_ecc_geom_unpack(&u, w | (1ULL << 60)) == -EINVAL, "unknown bits accepted");
	check(pcm_ecc_geom_unpack(&u, w + 4) == -EINVAL, "a layout that does not fit accepted");
	check(pcm_ecc_geom_unpack(&u, 0) == -EINVAL, "zero accepted");
	for (i = 0; i < 1000; i++) {
		if (geom(&g, 1 + rnd() % 256, 1 + rnd() % 64, rnd() % 513))
			continue;
		check(!pcm_ecc_geom_unpack(&u, pcm_ecc_geom_pack(&g)) && !memcmp(&u, &g, sizeof(g)),
		      "random round trip");
	}
}

/* Flip stored bit @bit of a codeword: data bits first, then its parity bytes. */
static void flip(u8 *data, unsigned int len, u8 *par, unsigned int bit)
{
	if (bit < 8 * len)
		data[bit / 8] ^= 1U << (bit % 8);
	else
		par[(bit - 8 * len) / 8] ^= 1U << ((bit - 8 * len) % 8);
}

/* Whether stored parity bit @b is one of the code's (not the last byte's padding). */
static bool parity_bit_used(const struct pcm_ecc *e, unsigned int b)
{
	return 8 * (b / 8) + 7 - b % 8 < e->bch->ecc_bits;
}

/* The code's bits of a codeword: its data bits and its used parity bits. */
static unsigned int code_bits(const struct pcm_ecc *e, unsigned int len, unsigned int *bits)
{
	unsigned int n = 0, b;

	for (b = 0; b < 8 * len; b++)
		bits[n++] = b;
	for (b = 0; b < 8U * e->geom.parity_bytes; b++)
		if (parity_bit_used(e, b))
			bits[n++] = 8 * len + b;
	return n;
}

/*
 * Every geometry the checks accept is one lib/bch builds, with the parity
 * size derived, and it corrects t errors in its longest codeword (each
 * (m, t) built once).
 */
static void test_every_accepted_code(void)
{
	static bool seen[16][PCM_ECC_MAX_T + 1];
	unsigned int cw, t, i, len, bits[4096 + 1024], n, pos;
	u8 data[512], truth[512], par[PCM_ECC_MAX_CODEWORDS * 120], tpar[sizeof(par)];
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	long built = 0, bad = 0;

	for (cw = 1; cw <= PCM_ECC_MAX_CODEWORDS; cw++) {
		for (t = 1; t <= PCM_ECC_MAX_T; t++) {
			if (geom(&g, cw, t, PCM_ECC_MAX_META))
				continue;
			/* m is the smallest field lib/bch takes for the longest codeword */
			n = 8 * DIV_ROUND_UP(512, cw);
			bad += g.m > 5 && (g.m - 1) * t < (1U << (g.m - 1)) - 1 &&
			       n + (g.m - 1) * t <= (1U << (g.m - 1)) - 1;
			if (seen[g.m][t])
				continue;
			seen[g.m][t] = true;
			if (pcm_ecc_init(&e, &g)) {
				bad++;
				printf("#   m %u t %u: lib/bch refused\n", g.m, t);
				continue;
			}
			built++;
			fill(truth, 512);
			pcm_ecc_encode_sector(&e, truth, tpar);
			memcpy(data, truth, 512);
			memcpy(par, tpar, pcm_ecc_sector_parity(&g));
			for (i = 0; pcm_ecc_cw_len(&g, i) < DIV_ROUND_UP(512, cw); i++)
				;	/* the longest codeword */
			len = pcm_ecc_cw_len(&g, i);
			n = code_bits(&e, len, bits);
			for (pos = 0; pos < t; pos++)	/* t distinct bits, spread out */
				flip(data + pcm_ecc_cw_start(&g, i), len, par + i * g.parity_bytes,
				     bits[pos * (n / t)]);
			bad += pcm_ecc_decode_cw(&e, i, data, par) != (int)t ||
			       memcmp(data, truth, 512);
			pcm_ecc_exit(&e);
		}
	}
	check(!bad && built > 300, "%ld failures, %ld codes built", bad, built);
	check(seen[5][1] && seen[13][64], "the smallest and the largest field not built");
}

/* Each layout: clean sectors decode clean, and zeros are a codeword. */
static void test_round_trip(void)
{
	const struct pcm_ecc_layout *l;
	u8 data[512], truth[512], par[PCM_ECC_MAX_META], zero[PCM_ECC_MAX_META] = { 0 };
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	unsigned int failed;
	int i;

	for (l = pcm_ecc_layouts; l->name; l++) {
		check(!geom(&g, l->codewords, l->t, l->meta_bytes) && !pcm_ecc_init(&e, &g),
		      "%s", l->name);
		for (i = 0; i < 200; i++) {
			fill(truth, 512);
			memcpy(data, truth, 512);
			pcm_ecc_encode_sector(&e, data, par);
			check(!memcmp(data, truth, 512), "encode changed the data");
			check(pcm_ecc_decode_sector(&e, data, par, &failed) == 0 && !failed &&
			      !memcmp(data, truth, 512), "%s: clean sector", l->name);
		}
		fill(truth, 512);
		pcm_ecc_encode_sector(&e, truth, par);
		for (i = 0; i < (int)g.codewords; i++) {	/* one codeword alone: the same */
			memset(zero, 0xa5, sizeof(zero));
			pcm_ecc_encode_cw(&e, i, truth, zero);
			check(!memcmp(zero + i * g.parity_bytes, par + i * g.parity_bytes,
				      g.parity_bytes), "%s: codeword %d's parity", l->name, i);
		}
		memset(zero, 0, sizeof(zero));
		memset(data, 0, 512);
		pcm_ecc_encode_sector(&e, data, par);
		check(!memcmp(par, zero, pcm_ecc_sector_parity(&g)), "%s: zeros' parity", l->name);
		check(pcm_ecc_decode_sector(&e, data, zero, &failed) == 0,
		      "%s: a fresh device does not decode clean", l->name);
		pcm_ecc_exit(&e);
	}
}

/*
 * Every pattern of up to t = 3 errors over the 88 stored bits of a codeword
 * of 8 data bytes (m = 7, 21 parity bits in 3 bytes): the data comes back,
 * the count is the number of the code's bits flipped (padding is not part
 * of the code), and the parity is repaired.
 */
static void test_exhaustive_small(void)
{
	u8 truth[512], tpar[64 * 3], data[512], par[64 * 3];
	unsigned int a, b, c, nb = 8 * 8 + 8 * 3, want;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	long patterns = 0, bad = 0;
	int r;

	check(!geom(&g, 64, 3, 192) && g.m == 7 && g.parity_bytes == 3, "small code");
	check(!pcm_ecc_init(&e, &g), "init");
	fill(truth, 512);
	pcm_ecc_encode_sector(&e, truth, tpar);
	for (a = 0; a <= nb; a++) {
		for (b = a; b <= nb; b++) {
			for (c = b; c <= nb; c++) {
				/* a, b, c == nb: no flip; equal ones: one flip */
				if ((a == b && a < nb) || (b == c && b < nb))
					continue;
				memcpy(data, truth, 8);
				memcpy(par, tpar, 3);
				want = 0;
				if (a < nb) {
					flip(data, 8, par, a);
					want += a < 64 || parity_bit_used(&e, a - 64);
				}
				if (b < nb) {
					flip(data, 8, par, b);
					want += b < 64 || parity_bit_used(&e, b - 64);
				}
				if (c < nb) {
					flip(data, 8, par, c);
					want += c < 64 || parity_bit_used(&e, c - 64);
				}
				r = pcm_ecc_decode_cw(&e, 0, data, par);
				patterns++;
				if (r != (int)want || memcmp(data, truth, 8) ||
				    ((par[0] ^ tpar[0]) | (par[1] ^ tpar[1]) | ((par[2] ^ tpar[2]) & 0xf8)))
					bad++;
			}
		}
	}
	check(!bad, "%ld of %ld patterns wrong", bad, patterns);
	check(patterns == 1 + 88 + 88 * 87 / 2 + 88 * 87 * 86 / 6, "%ld patterns", patterns);
	pcm_ecc_exit(&e);
}

/* Flip @w distinct code bits of codeword @cw at random; returns them in @at. */
static void flip_random(struct pcm_ecc *e, unsigned int cw, u8 *data, u8 *par,
			unsigned int w, unsigned int *bits, unsigned int n)
{
	unsigned int i, j, tmp, len = pcm_ecc_cw_len(&e->geom, cw);

	for (i = 0; i < w; i++) {	/* partial Fisher-Yates over the code's bits */
		j = i + rnd() % (n - i);
		tmp = bits[i];
		bits[i] = bits[j];
		bits[j] = tmp;
		flip(data + pcm_ecc_cw_start(&e->geom, cw), len,
		     par + cw * e->geom.parity_bytes, bits[i]);
	}
}

/* Flip @w distinct bits of codeword @cw at random, among every stored bit (padding too). */
static void flip_anywhere(struct pcm_ecc *e, unsigned int cw, u8 *data, u8 *par, unsigned int w)
{
	unsigned int bits[8 * (512 + PCM_ECC_MAX_META)], n;
	unsigned int nb = 8 * (pcm_ecc_cw_len(&e->geom, cw) + e->geom.parity_bytes);

	for (n = 0; n < nb; n++)
		bits[n] = n;
	flip_random(e, cw, data, par, w, bits, nb);
}

/*
 * A codec for @cw codewords of @t bits with the most metadata: false if
 * the geometry is refused, or if the codec is not set up (counted in @bad).
 */
static bool codec_for(struct pcm_ecc *e, struct pcm_ecc_geom *g, unsigned int cw,
		      unsigned int t, long *bad)
{
	if (geom(g, cw, t, PCM_ECC_MAX_META))
		return false;
	if (pcm_ecc_init(e, g)) {
		(*bad)++;
		return false;
	}
	return true;
}

/* Random patterns of weight 1..t on the papers' codes (12000 each): all corrected. */
static void test_random_up_to_t(void)
{
	const struct pcm_ecc_layout *l;
	u8 truth[512], tpar[PCM_ECC_MAX_META], data[512], par[PCM_ECC_MAX_META];
	unsigned int bits[4096 + 1024], n = 0, w, cw, failed, len;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	long trials, bad;

	for (l = pcm_ecc_layouts; l->name; l++) {
		check(!geom(&g, l->codewords, l->t, l->meta_bytes) && !pcm_ecc_init(&e, &g), "init");
		fill(truth, 512);
		pcm_ecc_encode_sector(&e, truth, tpar);
		trials = bad = 0;
		len = 0;
		for (w = 1; w <= g.t; w++) {
			for (int i = 0; i < 12000 / g.t; i++, trials++) {
				memcpy(data, truth, 512);
				memcpy(par, tpar, pcm_ecc_sector_parity(&g));
				cw = rnd() % g.codewords;
				if (pcm_ecc_cw_len(&g, cw) != len) {	/* the bits depend on it alone */
					len = pcm_ecc_cw_len(&g, cw);
					n = code_bits(&e, len, bits);
				}
				flip_random(&e, cw, data, par, w, bits, n);
				bad += pcm_ecc_decode_sector(&e, data, par, &failed) != (int)w ||
				       pcm_ecc_classify(w, data, truth, 512) != PCM_ECC_CORRECTED;
			}
		}
		check(!bad, "%s: %ld of %ld patterns not corrected", l->name, bad, trials);
		pcm_ecc_exit(&e);
	}
}

/*
 * Beyond t: the decoder refuses or miscorrects, never returns the truth
 * (a codeword within t of the received word is not the one written), and
 * pcm_ecc_classify() counts each miscorrection as silent.  A small code
 * miscorrects often, a long one seldom; both are seen.
 */
static void test_beyond_t(void)
{
	static const struct { unsigned int cw, t, meta, trials; long min_silent; } codes[] = {
		{ 64, 2, 128, 60000, 1000 },	/* onyx: 78-bit codewords */
		{ 6, 4, 64, 60000, 30 },	/* pss */
	};
	u8 truth[512], tpar[PCM_ECC_MAX_META], data[512], par[PCM_ECC_MAX_META];
	unsigned int bits[4096 + 1024], n, w, cw, k, i;
	long silent, refused, other;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	int r;

	for (k = 0; k < ARRAY_SIZE(codes); k++) {
		check(!geom(&g, codes[k].cw, codes[k].t, codes[k].meta) && !pcm_ecc_init(&e, &g),
		      "init");
		fill(truth, 512);
		pcm_ecc_encode_sector(&e, truth, tpar);
		silent = refused = other = 0;
		for (i = 0; i < codes[k].trials; i++) {
			w = g.t + 1 + i % 3;
			memcpy(data, truth, 512);
			memcpy(par, tpar, pcm_ecc_sector_parity(&g));
			cw = rnd() % g.codewords;
			n = code_bits(&e, pcm_ecc_cw_len(&g, cw), bits);
			flip_random(&e, cw, data, par, w, bits, n);
			r = pcm_ecc_decode_cw(&e, cw, data, par);
			switch (pcm_ecc_classify(r, data, truth, 512)) {
			case PCM_ECC_SILENT:
				silent++;
				break;
			case PCM_ECC_UNCORRECTABLE:
				refused++;
				break;
			default:
				other++;
			}
		}
		printf("#   m %u t %u, %u..%u errors: %ld refused, %ld miscorrected (%.2f %%)\n",
		       g.m, g.t, g.t + 1, g.t + 3, refused, silent, 100.0 * silent / codes[k].trials);
		check(!other && silent >= codes[k].min_silent && refused > silent,
		      "%ld decoded to the truth, %ld silent, %ld refused", other, silent, refused);
		pcm_ecc_exit(&e);
	}
}

/* A sector with one codeword beyond t: refused, the others still corrected. */
static void test_sector_partial(void)
{
	u8 truth[512], tpar[64], data[512], par[64];
	unsigned int bits[1024], failed, cw;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;

	check(!geom(&g, 6, 4, 64) && !pcm_ecc_init(&e, &g), "pss");
	fill(truth, 512);
	pcm_ecc_encode_sector(&e, truth, tpar);
	memcpy(data, truth, 512);
	memcpy(par, tpar, 30);
	for (cw = 0; cw < 6; cw++)
		flip_random(&e, cw, data, par, cw == 3 ? 12 : 2, bits,
			    code_bits(&e, pcm_ecc_cw_len(&g, cw), bits));
	check(pcm_ecc_decode_sector(&e, data, par, &failed) == -EBADMSG && failed == 1,
	      "failed %u", failed);
	for (cw = 0; cw < 6; cw++)
		check((cw == 3) == !!memcmp(data + pcm_ecc_cw_start(&g, cw),
					    truth + pcm_ecc_cw_start(&g, cw), pcm_ecc_cw_len(&g, cw)),
		      "codeword %u", cw);
	check(pcm_ecc_classify(-EBADMSG, data, truth, 512) == PCM_ECC_UNCORRECTABLE, "classify");
	check(pcm_ecc_classify(0, truth, truth, 512) == PCM_ECC_CLEAN, "classify clean");
	pcm_ecc_exit(&e);
}

/* lib/bch's own parity of a sector, codeword by codeword: the reference. */
static void ref_encode(struct pcm_ecc *e, const u8 *data, u8 *par)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int i;

	for (i = 0; i < g->codewords; i++) {
		memset(par + i * g->parity_bytes, 0, g->parity_bytes);
		bch_encode(e->bch, data + pcm_ecc_cw_start(g, i), pcm_ecc_cw_len(g, i),
			   par + i * g->parity_bytes);
	}
}

/*
 * The decode before the parity tables, codeword by codeword: bch_decode()
 * recomputes the parity itself; what it locates is flipped in place.
 */
static int ref_decode_cw(struct pcm_ecc *e, unsigned int cw, u8 *data, u8 *par)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int len = pcm_ecc_cw_len(g, cw), loc[PCM_ECC_MAX_T];
	u8 *d = data + pcm_ecc_cw_start(g, cw), *p = par + cw * g->parity_bytes;
	int i, n;

	n = bch_decode(e->bch, d, len, p, NULL, NULL, loc);
	if (n < 0)
		return n == -EINVAL ? -EINVAL : -EBADMSG;
	for (i = 0; i < n; i++) {
		if (loc[i] < 8 * len)
			d[loc[i] / 8] ^= 1U << (loc[i] % 8);
		else
			p[(loc[i] - 8 * len) / 8] ^= 1U << ((loc[i] - 8 * len) % 8);
	}
	return n;
}

static int ref_decode_sector(struct pcm_ecc *e, u8 *data, u8 *par, unsigned int *failed)
{
	unsigned int i, bad = 0;
	int n, bits = 0;

	for (i = 0; i < e->geom.codewords; i++) {
		n = ref_decode_cw(e, i, data, par);
		if (n < 0)
			bad++;
		else
			bits += n;
	}
	*failed = bad;
	return bad ? -EBADMSG : bits;
}

/*
 * Data of kind @k: zeros, ones, a single bit (@bit), a single zero bit,
 * random bytes, or a random run of 0x00/0xff bytes.
 */
static void pattern(u8 *d, unsigned int k, unsigned int bit)
{
	unsigned int i;

	switch (k) {
	case 0:
		memset(d, 0, 512);
		break;
	case 1:
		memset(d, 0xff, 512);
		break;
	case 2:
		memset(d, 0, 512);
		d[bit / 8] = 1U << (bit % 8);
		break;
	case 3:
		memset(d, 0xff, 512);
		d[bit / 8] = ~(1U << (bit % 8));
		break;
	case 4:
		fill(d, 512);
		break;
	default:
		for (i = 0; i < 512; i++)
			d[i] = rnd() % 2 ? 0xff : 0;
	}
}

/*
 * The parity from the tables is byte for byte bch_encode()'s: a sector
 * (at every alignment) and each codeword alone, for zeros, ones, single
 * bits and random data; returns the mismatches.
 */
static long fast_vs_bch(struct pcm_ecc *e, unsigned int single_bits)
{
	const struct pcm_ecc_geom *g = &e->geom;
	u8 buf[512 + 8], *data, want[PCM_ECC_MAX_META], got[PCM_ECC_MAX_META + 1];
	unsigned int sp = pcm_ecc_sector_parity(g), k, n, i, bit;
	long bad = 0;

	for (k = 0; k < 6; k++) {
		n = k == 2 || k == 3 ? single_bits : k >= 4 ? 8 : 1;
		for (i = 0; i < n; i++) {
			data = buf + rnd() % 8;
			bit = single_bits >= 4096 ? i : rnd() % 4096;
			pattern(data, k, bit);
			ref_encode(e, data, want);
			memset(got, 0x5a, sizeof(got));
			pcm_ecc_encode_sector(e, data, got);
			bad += !!memcmp(want, got, sp) || got[sp] != 0x5a;
			memset(got, 0xa5, sizeof(got));
			for (bit = 0; bit < g->codewords; bit++)
				pcm_ecc_encode_cw(e, bit, data, got);
			bad += !!memcmp(want, got, sp) || got[sp] != 0xa5;
		}
	}
	return bad;
}

/*
 * Every built-in layout, every codeword count (each codeword length and
 * alignment the tables walk) and random accepted geometries: the tables
 * are used when the parity fits ECC_FAST_MAX_WORDS (32 bytes), and give
 * lib/bch's parity.
 */
static void test_fast_parity(void)
{
	const struct pcm_ecc_layout *l;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	unsigned int cw, t, i;
	long bad = 0, fast = 0, slow = 0, codes = 0;
	bool tables;

	for (l = pcm_ecc_layouts; l->name; l++) {
		check(!geom(&g, l->codewords, l->t, l->meta_bytes) && !pcm_ecc_init(&e, &g),
		      "%s", l->name);
		check(pcm_ecc_fast(&e), "%s: no parity tables", l->name);
		check(!fast_vs_bch(&e, 4096), "%s: parity differs from bch_encode()", l->name);
		pcm_ecc_exit(&e);
	}
	for (i = 0; i < 620; i++) {
		if (i < 256) {	/* every codeword count, a t that fits */
			cw = i + 1;
			t = 1 + rnd() % (cw > 64 ? 2 : 8);
		} else if (i < 276) {	/* parity over 32 bytes */
			cw = 1 + (i - 256) % 5;
			t = 64 - 8 * ((i - 256) / 5);
		} else {
			cw = 1 + rnd() % PCM_ECC_MAX_CODEWORDS;
			t = 1 + rnd() % (rnd() % 2 ? 8 : PCM_ECC_MAX_T);
		}
		if (!codec_for(&e, &g, cw, t, &bad))
			continue;
		codes++;
		tables = g.parity_bytes <= 32;
		if (pcm_ecc_fast(&e) != tables) {
			printf("#   %u codewords, t %u, %u parity bytes: tables %d\n", cw, t,
			       g.parity_bytes, pcm_ecc_fast(&e));
			bad++;
		}
		fast += pcm_ecc_fast(&e);
		slow += !pcm_ecc_fast(&e);
		bad += fast_vs_bch(&e, 16);
		pcm_ecc_exit(&e);
	}
	printf("#   %ld geometries: %ld with tables, %ld with bch_encode()\n", codes, fast, slow);
	check(!bad && fast > 250 && slow > 10, "%ld mismatches", bad);
}

/*
 * Decoding with the tables gives what decoding with lib/bch alone gave:
 * the same return, failed count, data and parity, for random patterns of
 * 1 to t + 3 errors anywhere in the stored bits (parity padding too) of
 * one or several codewords, on the layouts and random geometries.
 */
static void test_fast_decode_same(void)
{
	u8 truth[512], tpar[PCM_ECC_MAX_META], d1[512], p1[PCM_ECC_MAX_META];
	u8 d2[512], p2[PCM_ECC_MAX_META];
	unsigned int w, cw, f1, f2, sp, i, k, j, ncw;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	long bad = 0, trials = 0, beyond = 0;
	int r1, r2;

	for (k = 0; k < 40; k++) {
		const struct pcm_ecc_layout *l = &pcm_ecc_layouts[k % 3];

		if (k < 3 ? geom(&g, l->codewords, l->t, l->meta_bytes) :
			    geom(&g, 1 + rnd() % 64, 1 + rnd() % 12, PCM_ECC_MAX_META))
			continue;
		if (pcm_ecc_init(&e, &g)) {
			bad++;
			continue;
		}
		sp = pcm_ecc_sector_parity(&g);
		for (i = 0; i < (k < 3 ? 6000U : 300U); i++, trials++) {
			fill(truth, 512);
			pcm_ecc_encode_sector(&e, truth, tpar);
			memcpy(d1, truth, 512);
			memcpy(p1, tpar, sp);
			ncw = i % 4 ? 1 : 1 + rnd() % g.codewords;
			for (j = 0; j < ncw; j++) {
				cw = rnd() % g.codewords;
				w = 1 + rnd() % (g.t + 3);
				beyond += w > g.t;
				flip_anywhere(&e, cw, d1, p1, w);
			}
			memcpy(d2, d1, 512);
			memcpy(p2, p1, sp);
			if (i % 2) {
				r1 = pcm_ecc_decode_sector(&e, d1, p1, &f1);
				r2 = ref_decode_sector(&e, d2, p2, &f2);
			} else {
				cw = rnd() % g.codewords;
				r1 = pcm_ecc_decode_cw(&e, cw, d1, p1);
				r2 = ref_decode_cw(&e, cw, d2, p2);
				f1 = 0;
				f2 = 0;
			}
			bad += r1 != r2 || f1 != f2 || memcmp(d1, d2, 512) || memcmp(p1, p2, sp);
		}
		pcm_ecc_exit(&e);
	}
	check(!bad && beyond > 1000, "%ld of %ld decodes differ", bad, trials);
}

/*
 * Codecs sharing one codec's tables: the same parity, and the tables live
 * until the last of them goes, whichever goes first.
 */
static void test_shared_tables(void)
{
	u8 data[512], want[64], got[64];
	struct pcm_ecc_geom g;
	struct pcm_ecc a, b, c;
	unsigned int failed;

	check(!geom(&g, 6, 4, 64) && !pcm_ecc_init(&a, &g), "pss");
	check(!pcm_ecc_init_shared(&b, &a) && !pcm_ecc_init_shared(&c, &b), "shared");
	check(a.tab && b.tab == a.tab && c.tab == a.tab, "not shared");
	check(b.bch != a.bch && c.calc != a.calc, "lib/bch instance or buffer shared");
	fill(data, 512);
	ref_encode(&a, data, want);
	pcm_ecc_exit(&a);	/* the owner first: b and c still work */
	pcm_ecc_encode_sector(&b, data, got);
	check(!memcmp(want, got, 30), "b");
	pcm_ecc_exit(&b);
	memset(got, 0, sizeof(got));
	pcm_ecc_encode_sector(&c, data, got);
	check(!memcmp(want, got, 30), "c");
	data[7] ^= 4;
	check(pcm_ecc_decode_sector(&c, data, got, &failed) == 1 && !failed, "c decodes");
	pcm_ecc_exit(&c);
	pcm_ecc_exit(&c);	/* twice: a zeroed codec */
}

#ifdef CONFIG_X86_64
/* Whether this host can run the clmul parity (what the shim's boot_cpu_has() asks). */
static bool host_clmul(void)
{
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3");
}

/*
 * The parity of every length from 1 to @max bytes at random alignments,
 * through pcm_ecc_encode() (clmul inside a section), against bch_encode();
 * returns the mismatches.  The bytes around the parity stay as they were.
 */
static long clmul_lengths(struct pcm_ecc *e, unsigned int max, unsigned int rounds)
{
	u8 buf[512 + 16], *d, want[8], got[8 + 2];
	unsigned int pb = e->geom.parity_bytes, len, r;
	long bad = 0;

	for (r = 0; r < rounds; r++) {
		for (len = 1; len <= max; len++) {
			d = buf + rnd() % 16;
			if (r % 3 == 0)
				pattern(buf, 4, 0);
			else
				pattern(buf, r % 3 == 1 ? 2 : 3, rnd() % (8 * sizeof(buf) - 64));
			memset(want, 0, pb);
			bch_encode(e->bch, d, len, want);
			memset(got, 0x5a, sizeof(got));
			if (!pcm_ecc_simd_begin(e))
				return -1;
			pcm_ecc_encode(e, d, len, got + 1);
			pcm_ecc_simd_end(e);
			bad += !!memcmp(want, got + 1, pb) || got[0] != 0x5a || got[pb + 1] != 0x5a;
		}
	}
	return bad;
}

/* fast_vs_bch() inside a clmul section; -1 if clmul would not start */
static long clmul_vs_bch(struct pcm_ecc *e, unsigned int single_bits)
{
	long bad;

	if (!pcm_ecc_simd_begin(e))
		return -1;
	bad = fast_vs_bch(e, single_bits);
	pcm_ecc_simd_end(e);
	return bad;
}

/*
 * Carry-less multiply parity (where the parity fits 64 bits): the codec
 * uses it, and it is byte for byte bch_encode()'s for every built-in
 * layout, every codeword count, random geometries with m * t <= 64, every
 * length from 1 to 512 bytes at random alignments; decoding inside a
 * section gives what lib/bch alone gives.
 */
static void test_clmul_parity(void)
{
	u8 truth[512], d1[512], d2[512], p1[PCM_ECC_MAX_META], p2[PCM_ECC_MAX_META];
	unsigned int cw, t, i, j, f1, f2, sp;
	const struct pcm_ecc_layout *l;
	long bad = 0, codes = 0, clmul = 0, decodes = 0;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	int r1, r2;

	if (!host_clmul()) {
		printf("#   SKIP: this host has no PCLMULQDQ\n");
		return;
	}
	for (l = pcm_ecc_layouts; l->name; l++) {
		check(!geom(&g, l->codewords, l->t, l->meta_bytes) && !pcm_ecc_init(&e, &g),
		      "%s", l->name);
		check(pcm_ecc_clmul(&e) == (g.m * g.t <= 64), "%s: clmul %d, m * t = %u",
		      l->name, pcm_ecc_clmul(&e), g.m * g.t);
		check(!strncmp(pcm_ecc_engine(&e), g.m * g.t <= 64 ? "clmul" : "tables", 5),
		      "%s: engine %s", l->name, pcm_ecc_engine(&e));
		if (pcm_ecc_clmul(&e)) {
			check(!clmul_vs_bch(&e, 4096), "%s: clmul parity differs", l->name);
			check(!clmul_lengths(&e, pcm_ecc_cw_len(&g, 0) + 1, 20),
			      "%s: clmul parity of some length differs", l->name);
		}
		pcm_ecc_exit(&e);
	}
	for (i = 0; i < 700; i++) {
		if (i < 256) {	/* every codeword count, the largest t with m * t <= 64 */
			cw = i + 1;
			t = 1 + rnd() % 8;
		} else if (i < 260) {	/* one codeword: every length up to 512 */
			cw = 1;
			t = i - 255;
		} else {
			cw = 1 + rnd() % PCM_ECC_MAX_CODEWORDS;
			t = 1 + rnd() % 12;
		}
		if (!codec_for(&e, &g, cw, t, &bad))
			continue;
		codes++;
		if (pcm_ecc_clmul(&e) != (e.bch->ecc_bits <= 64)) {
			printf("#   %u codewords, t %u, %u ecc bits: clmul %d\n", cw, t,
			       e.bch->ecc_bits, pcm_ecc_clmul(&e));
			bad++;
		}
		if (pcm_ecc_clmul(&e)) {
			clmul++;
			bad += clmul_vs_bch(&e, 16) != 0;
			if (i >= 256 && i < 260)
				bad += clmul_lengths(&e, 512, 3) != 0;
			else
				bad += clmul_lengths(&e, pcm_ecc_cw_len(&g, 0), 1) != 0;
			/* decoding in a section: what lib/bch alone does */
			sp = pcm_ecc_sector_parity(&g);
			for (j = 0; j < 20; j++, decodes++) {
				fill(truth, 512);
				ref_encode(&e, truth, p1);
				memcpy(d1, truth, 512);
				flip_anywhere(&e, rnd() % g.codewords, d1, p1, 1 + rnd() % (g.t + 2));
				memcpy(d2, d1, 512);
				memcpy(p2, p1, sp);
				pcm_ecc_simd_begin(&e);
				r1 = pcm_ecc_decode_sector(&e, d1, p1, &f1);
				pcm_ecc_simd_end(&e);
				r2 = ref_decode_sector(&e, d2, p2, &f2);
				bad += r1 != r2 || f1 != f2 || memcmp(d1, d2, 512) ||
				       memcmp(p1, p2, sp);
			}
		}
		pcm_ecc_exit(&e);
	}
	printf("#   %ld geometries: %ld with clmul, %ld decodes\n", codes, clmul, decodes);
	check(!bad && clmul > 250, "%ld mismatches", bad);
	check(!pcm_shim_fpu_depth && pcm_shim_fpu_sections > 1000,
	      "FPU sections: %d open, %d in all", pcm_shim_fpu_depth, pcm_shim_fpu_sections);
}

/*
 * The fallbacks: where the FPU may not be used (may_use_simd() false) a
 * section starts no kernel_fpu_begin() and parity comes from the tables;
 * a CPU without PCLMULQDQ gives a codec without clmul.  Both still give
 * bch_encode()'s parity.
 */
static void test_clmul_fallback(void)
{
	const struct pcm_ecc_layout *l;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	int sections;

	for (l = pcm_ecc_layouts; l->name; l++) {
		check(!geom(&g, l->codewords, l->t, l->meta_bytes) && !pcm_ecc_init(&e, &g),
		      "%s", l->name);
		pcm_shim_no_simd = true;
		sections = pcm_shim_fpu_sections;
		check(!pcm_ecc_simd_begin(&e) && !e.simd, "%s: a section without the FPU", l->name);
		check(!fast_vs_bch(&e, 512), "%s: fallback parity differs", l->name);
		pcm_ecc_simd_end(&e);
		check(pcm_shim_fpu_sections == sections && !pcm_shim_fpu_depth,
		      "%s: kernel_fpu_begin() where the FPU may not be used", l->name);
		pcm_shim_no_simd = false;
		pcm_ecc_exit(&e);

		pcm_shim_no_cpu_simd = true;
		check(!pcm_ecc_init(&e, &g), "%s", l->name);
		check(!pcm_ecc_clmul(&e) && !strcmp(pcm_ecc_engine(&e), "tables"),
		      "%s: clmul without PCLMULQDQ", l->name);
		check(!pcm_ecc_simd_begin(&e), "%s: a section without PCLMULQDQ", l->name);
		check(!fast_vs_bch(&e, 512), "%s: no-PCLMULQDQ parity differs", l->name);
		pcm_ecc_simd_end(&e);
		pcm_shim_no_cpu_simd = false;
		pcm_ecc_exit(&e);
	}
	check(!pcm_shim_fpu_depth, "an FPU section left open");
}

/*
 * The engine a caller picked (pcm_ecc_use_clmul(), after timing both):
 * off, every codec sharing the tables computes by the tables, outside a
 * SIMD section and inside one (which then takes no FPU), the same parity;
 * on again, clmul; and never on where clmul was not set up.
 */
static void test_use_clmul(void)
{
	static u8 row[8 * 512], want[8 * 64], got[8 * 64];
	struct pcm_ecc_geom g;
	struct pcm_ecc a, b;
	int sections;

	if (!host_clmul()) {
		printf("#   SKIP: this host has no PCLMULQDQ\n");
		return;
	}
	check(!geom(&g, 6, 4, 64) && !pcm_ecc_init(&a, &g) && !pcm_ecc_init_shared(&b, &a),
	      "pss");
	check(pcm_ecc_clmul(&b) && pcm_ecc_clmul_ok(&b), "pss: clmul set up");
	fill(row, sizeof(row));
	check(pcm_ecc_simd_begin(&b), "a clmul section");
	pcm_ecc_encode_sectors(&b, row, 8, want, 64);
	pcm_ecc_simd_end(&b);
	pcm_ecc_use_clmul(&a, false);
	check(!pcm_ecc_clmul(&b) && pcm_ecc_clmul_ok(&b) && !strcmp(pcm_ecc_engine(&b), "tables"),
	      "off: engine %s", pcm_ecc_engine(&b));
	sections = pcm_shim_fpu_sections;
	check(!pcm_ecc_simd_begin(&b) && !b.simd, "off: a section without the FPU");
	pcm_ecc_encode_sectors(&b, row, 8, got, 64);
	check(pcm_ecc_check_sectors(&b, row, 8, want, 64), "off: the check fails clmul's parity");
	pcm_ecc_simd_end(&b);
	check(pcm_shim_fpu_sections == sections, "off: kernel_fpu_begin() all the same");
	check(!memcmp(want, got, sizeof(want)), "off: the tables' parity differs from clmul's");
	pcm_ecc_use_clmul(&b, true);
	check(pcm_ecc_clmul(&a) && !strncmp(pcm_ecc_engine(&a), "clmul", 5), "on again: %s",
	      pcm_ecc_engine(&a));
	pcm_ecc_exit(&a);
	pcm_ecc_exit(&b);

	check(!geom(&g, 4, 16, 128) && !pcm_ecc_init(&a, &g), "m * t over 64");
	pcm_ecc_use_clmul(&a, true);
	check(!pcm_ecc_clmul(&a) && !pcm_ecc_clmul_ok(&a), "clmul on without its set-up");
	pcm_ecc_exit(&a);
}
#endif

/*
 * A row's sectors in one call (pcm_ecc_encode_sectors(),
 * pcm_ecc_check_sectors()), every built-in layout, inside a SIMD section
 * (clmul where the layout has it) and outside: the parity of each sector
 * as pcm_ecc_encode_sector() gives it, at its stride, nothing written
 * between or past; the check passes on what was encoded and fails when
 * one bit of any sector's data or parity changes.
 */
static void test_sectors(void)
{
	static u8 row[8 * 512], meta[8 * PCM_ECC_MAX_META + 1], want[PCM_ECC_MAX_META];
	const struct pcm_ecc_layout *l;
	unsigned int n, i, k, sp, mb, bad = 0, missed = 0;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;

	for (l = pcm_ecc_layouts; l->name; l++) {
		check(!geom(&g, l->codewords, l->t, l->meta_bytes) && !pcm_ecc_init(&e, &g),
		      "%s", l->name);
		sp = pcm_ecc_sector_parity(&g);
		mb = g.meta_bytes;
		for (k = 0; k < 64; k++) {
			n = 1 + k % 8;
			fill(row, sizeof(row));
			memset(meta, 0x5a, sizeof(meta));
			if (k & 8)
				pcm_ecc_simd_begin(&e);
			pcm_ecc_encode_sectors(&e, row, n, meta, mb);
			for (i = 0; i < n; i++) {
				pcm_ecc_encode_sector(&e, row + i * 512, want);
				bad += !!memcmp(meta + i * mb, want, sp) ||
				       (sp < mb && meta[i * mb + sp] != 0x5a);
			}
			bad += meta[n * mb] != 0x5a;
			bad += !pcm_ecc_check_sectors(&e, row, n, meta, mb);
			i = rnd() % n;
			if (k & 1) {
				row[i * 512 + rnd() % 512] ^= 1U << (rnd() % 8);
			} else {
				meta[i * mb + rnd() % sp] ^= 1U << (rnd() % 8);
			}
			missed += pcm_ecc_check_sectors(&e, row, n, meta, mb);
			if (k & 8)
				pcm_ecc_simd_end(&e);
		}
		pcm_ecc_exit(&e);
	}
	check(!bad && !missed, "%u wrong parities, %u changes not seen", bad, missed);
}

/*
 * @rounds rows of 1 to 8 sectors (each kind of pattern()) through the
 * row entry points, @stride bytes of metadata a sector: the parity is
 * lib/bch's, codeword by codeword, nothing between the sectors' parity
 * or past the last is written; the check passes on it and fails once one
 * bit of the data or of the parity changes; a sector alone
 * (pcm_ecc_encode_sector()) gives the same.  Returns the mismatches.
 */
static long rows_vs_bch(struct pcm_ecc *e, unsigned int stride, unsigned int rounds)
{
	static u8 row[8 * 512], meta[8 * PCM_ECC_MAX_META + 16], want[PCM_ECC_MAX_META + 8];
	unsigned int sp = pcm_ecc_sector_parity(&e->geom), n, i, r, b;
	long bad = 0;

	for (r = 0; r < rounds; r++) {
		n = r % 4 ? 1 + rnd() % 8 : 8;
		for (i = 0; i < n; i++)
			pattern(row + i * 512, r % 6, rnd() % 4096);
		memset(meta, 0x5a, sizeof(meta));
		pcm_ecc_encode_sectors(e, row, n, meta, stride);
		for (i = 0; i < n; i++) {
			ref_encode(e, row + i * 512, want);
			bad += !!memcmp(meta + i * stride, want, sp);
			for (b = sp; b < stride; b++)
				bad += meta[i * stride + b] != 0x5a;
		}
		for (b = n * stride; b < n * stride + 16; b++)
			bad += meta[b] != 0x5a;
		bad += !pcm_ecc_check_sectors(e, row, n, meta, stride);
		i = rnd() % n;
		memset(want, 0xa5, sizeof(want));
		pcm_ecc_encode_sector(e, row + i * 512, want);
		bad += !!memcmp(want, meta + i * stride, sp) || want[sp] != 0xa5;
		if (r % 2) {
			b = rnd() % 4096;
			row[i * 512 + b / 8] ^= 1U << (b % 8);
		} else {
			b = rnd() % (8 * sp);
			meta[i * stride + b / 8] ^= 1U << (b % 8);
		}
		bad += pcm_ecc_check_sectors(e, row, n, meta, stride);
	}
	return bad;
}

/*
 * The row entry points (pcm_ecc_encode_sectors(), pcm_ecc_check_sectors():
 * ecc_rows_clmul() where the geometry has its plan) against lib/bch's
 * parity: every accepted geometry whose parity fits 8 bytes (every
 * codeword count, every t), random rows, at the tightest stride (a
 * sector's parity alone: a byte written past it is seen) and at 512
 * bytes, in a SIMD section and, for one geometry in four, outside one
 * (the tables), half of them with AVX (VEX-encoded asm) and half
 * without; then the layouts with the FPU refused (may_use_simd()
 * false), on a CPU without PCLMULQDQ and on one without AVX.  A build for another
 * architecture (test-ecc-nox86) runs it with the tables alone.
 */
static void test_rows(void)
{
	const struct pcm_ecc_layout *l;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	unsigned int cw, t, sp;
	long bad = 0, codes = 0, rows = 0;

	for (cw = 1; cw <= PCM_ECC_MAX_CODEWORDS; cw++) {
		for (t = 1; t <= PCM_ECC_MAX_T; t++) {
			if (geom(&g, cw, t, PCM_ECC_MAX_META))
				continue;
			if (g.parity_bytes > 8)
				break;
#ifdef CONFIG_X86_64
			pcm_shim_no_avx = codes % 2;	/* half without VEX */
#endif
			if (pcm_ecc_init(&e, &g)) {
				bad++;
				continue;
			}
			codes++;
			sp = pcm_ecc_sector_parity(&g);
			pcm_ecc_simd_begin(&e);
			rows += pcm_ecc_clmul_rows(&e) && e.simd;
			bad += rows_vs_bch(&e, sp, 6) + rows_vs_bch(&e, 512, 6);
			pcm_ecc_simd_end(&e);
			if (codes % 4 == 0)
				bad += rows_vs_bch(&e, sp, 6);
			pcm_ecc_exit(&e);
		}
	}
	for (l = pcm_ecc_layouts; l->name; l++) {
		check(!geom(&g, l->codewords, l->t, l->meta_bytes) && !pcm_ecc_init(&e, &g),
		      "%s", l->name);
		bad += rows_vs_bch(&e, g.meta_bytes, 60);
#ifdef CONFIG_X86_64
		check(pcm_ecc_clmul_rows(&e) == (host_clmul() && !strcmp(l->name, "pss")),
		      "%s: row path %d", l->name, pcm_ecc_clmul_rows(&e));
		pcm_ecc_simd_begin(&e);
		bad += rows_vs_bch(&e, g.meta_bytes, 60);
		pcm_ecc_simd_end(&e);
		pcm_shim_no_simd = true;
		pcm_ecc_simd_begin(&e);
		bad += rows_vs_bch(&e, g.meta_bytes, 60);
		pcm_ecc_simd_end(&e);
		pcm_shim_no_simd = false;
		pcm_ecc_exit(&e);
		pcm_shim_no_cpu_simd = true;
		check(!pcm_ecc_init(&e, &g) && !pcm_ecc_clmul_rows(&e), "%s: no PCLMULQDQ", l->name);
		pcm_ecc_simd_begin(&e);
		bad += rows_vs_bch(&e, g.meta_bytes, 60);
		pcm_ecc_simd_end(&e);
		pcm_shim_no_cpu_simd = false;
		pcm_ecc_exit(&e);
		pcm_shim_no_avx = true;
		check(!pcm_ecc_init(&e, &g), "%s", l->name);
		pcm_ecc_simd_begin(&e);
		bad += rows_vs_bch(&e, g.meta_bytes, 60);
		pcm_ecc_simd_end(&e);
		pcm_shim_no_avx = false;
#else
		check(!pcm_ecc_clmul_rows(&e), "%s: a row path without x86", l->name);
#endif
		pcm_ecc_exit(&e);
	}
	printf("#   %ld geometries with parity up to 8 bytes, %ld a row at a time\n", codes, rows);
#ifdef CONFIG_X86_64
	check(!host_clmul() || rows > 100, "%ld geometries a row at a time", rows);
#endif
	check(!bad && codes > 1000, "%ld mismatches, %ld geometries", bad, codes);
}

/*
 * pcm_ecc_same(), the parity compare of every clean read: every length a
 * sector's parity can have up to PCM_ECC_MAX_META, equal, and unequal in
 * each byte in turn (each bit of it), at unaligned addresses.
 */
static void test_same(void)
{
	u8 a[PCM_ECC_MAX_META + 8], b[PCM_ECC_MAX_META + 8];
	unsigned int len, i, bit, bad = 0;

	for (len = 1; len <= PCM_ECC_MAX_META; len++) {
		fill(a, sizeof(a));
		memcpy(b, a, sizeof(b));
		bad += !pcm_ecc_same(a + 1, b + 3 - 2, len);
		for (i = 0; i < len; i++) {
			for (bit = 0; bit < 8; bit += len > 64 ? 7 : 1) {
				b[1 + i] ^= 1U << bit;
				bad += pcm_ecc_same(a + 1, b + 1, len);
				b[1 + i] ^= 1U << bit;
			}
		}
		/* a difference just outside is not seen */
		b[0] ^= 1;
		b[1 + len] ^= 1;
		bad += !pcm_ecc_same(a + 1, b + 1, len);
	}
	check(!bad, "%u wrong answers", bad);
}

int main(void)
{
	RUN(test_layouts);
	RUN(test_split);
	RUN(test_fit_messages);
	RUN(test_pack);
	RUN(test_every_accepted_code);
	RUN(test_round_trip);
	RUN(test_exhaustive_small);
	RUN(test_random_up_to_t);
	RUN(test_beyond_t);
	RUN(test_sector_partial);
	RUN(test_fast_parity);
	RUN(test_fast_decode_same);
	RUN(test_shared_tables);
	RUN(test_same);
	RUN(test_sectors);
	RUN(test_rows);
#ifdef CONFIG_X86_64
	RUN(test_clmul_parity);
	RUN(test_clmul_fallback);
	RUN(test_use_clmul);
#endif
	return tap_done();
}
