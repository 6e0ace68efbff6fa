// SPDX-License-Identifier: GPL-2.0-only
/*
 * BCH ECC over 512-byte sectors; see pcm-ecc.h.  Geometry checks are
 * plain arithmetic; pcm_ecc_init() and pcm_ecc_init_shared() are the only
 * calls that allocate (bch_init(), the parity tables, GFP_KERNEL:
 * constructor or worker setup only).
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/swab.h>
#include <linux/bch.h>

#include "pcm-ecc.h"
#include "pcm-ecc-bytes.h"
#include "pcm-ecc-clmul.h"

/*
 * The papers' layouts.
 *
 * pss: 6 codewords per 512-byte sector, t = 4, 64 bytes of metadata per
 * sector (the slides: "for each user sector (512 B = 8 x 64) we store
 * 64 bytes of metadata, i.e. 9 blocks").  85-86 data bytes need m = 10,
 * so 40 parity bits, 5 bytes: 30 bytes of the 64.  (9 blocks are 576 =
 * 6 x 96 bytes, so PSS's own codewords likely also cover its 34 spare
 * metadata bytes; dm-pcm's cover the data, and its own metadata is kept
 * elsewhere.)
 *
 * onyx: one codeword per 8-byte word with 2 bytes of parity (section
 * 2.2: 64 data bits and 16 for ECC per rank access): 64 codewords of 8
 * bytes, m = 7, t = 2 is 14 bits, the most 16 bits hold; 128 bytes of
 * metadata per sector.
 *
 * reram: the paper gives no ECC strength (its controller has "flexible
 * LDPC").  A codeword per 256-byte LBA, the unit its measurements read,
 * so 2 per sector, m = 12; the medium endures 100,000 writes, a tenth of
 * PCM's 10^6, so a code a third stronger per data byte than PSS's (16
 * bits per 256 bytes against 4 per 85): 24 parity bytes each, 48 of 64
 * metadata bytes per sector, PSS's metadata budget.
 *
 * optane: Intel publishes no ECC figure for the P4800X.  A codeword per
 * 512-byte LBA (the smallest unit it reads), so m = 13; t = 16, the
 * correction reram gives a 512-byte sector (32 bits per 512 bytes are
 * half of it spent on one codeword, which then corrects any 16 errors in
 * the sector, wherever they fall): 26 parity bytes, of PSS's 64
 * metadata bytes, within the 32 that the parity tables take.
 */
const struct pcm_ecc_layout pcm_ecc_layouts[] = {
	{ .name = "pss", .codewords = 6, .t = 4, .meta_bytes = 64 },
	{ .name = "onyx", .codewords = 64, .t = 2, .meta_bytes = 128 },
	{ .name = "reram", .codewords = 2, .t = 16, .meta_bytes = 64 },
	{ .name = "optane", .codewords = 1, .t = 16, .meta_bytes = 64 },
	{ }
};

/*
 * The smallest m lib/bch takes for codewords of @bits data bits and t:
 * 5 <= m <= 15, m * t < 2^m - 1 (bch_init) and bits + m * t <= 2^m - 1
 * (bch_decode: 8 * len <= n - ecc_bits, and ecc_bits <= m * t).  0 if
 * none.
 */
static unsigned int ecc_field(unsigned int bits, unsigned int t)
{
	unsigned int m;

	for (m = 5; m <= 15; m++)
		if (m * t < (1U << m) - 1 && bits + m * t <= (1U << m) - 1)
			return m;
	return 0;
}

static unsigned int ecc_parity_bytes(unsigned int codewords, unsigned int t)
{
	unsigned int len = DIV_ROUND_UP(PCM_ECC_SECTOR, codewords);

	return DIV_ROUND_UP(ecc_field(8 * len, t) * t, 8);
}

/*
 * When the parity does not fit, say what would: the largest t that does
 * with these codewords, and the metadata this t needs (if it is allowed).
 */
static int ecc_no_fit(char *msg, size_t msg_len, unsigned int codewords,
		      unsigned int t, unsigned int meta_bytes)
{
	unsigned int need = codewords * ecc_parity_bytes(codewords, t);
	unsigned int ft = t;
	int n;

	while (ft > 0 && codewords * ecc_parity_bytes(codewords, ft) > meta_bytes)
		ft--;
	n = scnprintf(msg, msg_len,
		      "ecc_codewords:%u ecc_t:%u needs %u parity bytes per sector, meta_bytes is %u: ",
		      codewords, t, need, meta_bytes);
	if (!ft)
		scnprintf(msg + n, msg_len - n, "no ecc_t fits, ecc_t:1 needs meta_bytes:%u",
			  codewords * ecc_parity_bytes(codewords, 1));
	else if (need > PCM_ECC_MAX_META)
		scnprintf(msg + n, msg_len - n, "ecc_t:%u fits (meta_bytes:%u at most)",
			  ft, PCM_ECC_MAX_META);
	else
		scnprintf(msg + n, msg_len - n, "ecc_t:%u fits, or meta_bytes:%u", ft, need);
	return -EINVAL;
}

/*
 * Check and derive an ECC layout.  On error, @msg says which word is
 * wrong and what would fit; @g is left untouched.
 */
int pcm_ecc_geom_init(struct pcm_ecc_geom *g, unsigned int codewords,
		      unsigned int t, unsigned int meta_bytes,
		      char *msg, size_t msg_len)
{
	unsigned int m;

	if (codewords < 1 || codewords > PCM_ECC_MAX_CODEWORDS) {
		scnprintf(msg, msg_len, "ecc_codewords:%u: out of range, allowed 1..%u",
			  codewords, PCM_ECC_MAX_CODEWORDS);
		return -EINVAL;
	}
	if (t < 1 || t > PCM_ECC_MAX_T) {
		scnprintf(msg, msg_len, "ecc_t:%u: out of range, allowed 1..%u",
			  t, PCM_ECC_MAX_T);
		return -EINVAL;
	}
	if (meta_bytes > PCM_ECC_MAX_META) {
		scnprintf(msg, msg_len, "meta_bytes:%u: out of range, allowed 0..%u",
			  meta_bytes, PCM_ECC_MAX_META);
		return -EINVAL;
	}
	m = ecc_field(8 * DIV_ROUND_UP(PCM_ECC_SECTOR, codewords), t);
	if (!m) {
		scnprintf(msg, msg_len,
			  "ecc_codewords:%u ecc_t:%u: no BCH field up to GF(2^15) holds it",
			  codewords, t);
		return -EINVAL;
	}
	if (codewords * DIV_ROUND_UP(m * t, 8) > meta_bytes)
		return ecc_no_fit(msg, msg_len, codewords, t, meta_bytes);
	g->codewords = codewords;
	g->meta_bytes = meta_bytes;
	g->t = t;
	g->m = m;
	g->parity_bytes = DIV_ROUND_UP(m * t, 8);
	return 0;
}

/* One word for the superblock: the inputs and what was derived from them. */
u64 pcm_ecc_geom_pack(const struct pcm_ecc_geom *g)
{
	return (u64)g->codewords | (u64)g->meta_bytes << 16 | (u64)g->t << 32 |
	       (u64)g->m << 40 | (u64)g->parity_bytes << 48;
}

/*
 * The inverse, checked: a word this code would not have packed (unknown
 * bits, a layout it refuses, another derivation of m) gives -EINVAL.
 */
int pcm_ecc_geom_unpack(struct pcm_ecc_geom *g, u64 word)
{
	struct pcm_ecc_geom d;
	char msg[8];

	if (word >> 56)
		return -EINVAL;
	if (pcm_ecc_geom_init(&d, word & 0xffff, (word >> 32) & 0xff,
			      (word >> 16) & 0xffff, msg, sizeof(msg)))
		return -EINVAL;
	if (pcm_ecc_geom_pack(&d) != word)
		return -EINVAL;
	*g = d;
	return 0;
}

/*
 * Fast parity.  lib/bch's parity of a codeword M is a remainder: M's bits,
 * first byte's most significant bit first, times x^ecc_bits, modulo the
 * generator polynomial, stored left-aligned in parity_bytes bytes whose
 * last low bits stay zero.  Kept in w 64-bit words S (parity_bytes / 8
 * rounded up: the parity bytes big-endian, zero padded), it is a CRC of
 * degree 64 * w, and appending 8 data bytes N is the slicing-by-8 step of
 * a CRC:
 *
 *   x = S's first word ^ N;  S = (S shifted up one word) ^ T0[x's last
 *   byte] ^ T1[the byte before] ^ ... ^ T7[x's first byte]
 *
 * where Tk[b] is the parity of the message "b, then k zero bytes".  The
 * tables are made with bch_encode() itself (its parity is linear in the
 * data), so nothing is assumed of lib/bch's bit order beyond this frame,
 * and pcm_ecc_init() checks the result against bch_encode() before using
 * it.  Leading zero bytes change no remainder, so a codeword whose length
 * is not a multiple of 8 starts with its first len % 8 bytes as the last
 * bytes of a block.  The tables take 16 KiB per state word (pss and onyx
 * one, reram three), built once per geometry and shared read-only by the
 * codecs of a device.  The state lives in registers, unrolled for 1 to 4
 * words; parity over 32 bytes (only custom layouts: a long codeword with a
 * large t) stays with bch_encode(), as a loop over the words measured
 * slower than lib/bch (reram's 3 words: 146K instructions a row, against
 * 89K).
 *
 * Why: bch_encode() takes four table lookups of ecc_words 32-bit words per
 * 4 data bytes, and decoding a clean codeword re-encodes it.  Per 4 KiB row
 * (callgrind, the host's bench-ecc at -O2), encode / clean decode, in
 * instructions: pss 65K / 67K before, 22K / 23K after; onyx 175K / 202K
 * before, 38K / 39K after; reram 89K / 88K before, 38K / 39K after.  A
 * clean sector (the common case) is now one parity computation and one
 * memcmp(); lib/bch decodes only the codewords whose parity differs, from
 * the computed parity (calc_ecc), which it would have computed the same
 * way.  Slicing by 4 and by 16 (measured on pss's parity loop alone): 25K
 * and 18K instructions a row against 18K by 8, so 8, at half of 16's
 * tables (by 16 runs about a quarter faster on an out-of-order host).
 */
#define ECC_MAX_PARITY		DIV_ROUND_UP(15 * PCM_ECC_MAX_T, 8)	/* m <= 15 */
#define ECC_FAST_MAX_WORDS	4	/* parity bytes up to 32; more: bch_encode() */

/*
 * The state @s plus table entry Tk[b], b being byte k of @x from the
 * last.  @w, the state's words, is a constant wherever this is inlined,
 * so that the state lives in registers: no loop over it.
 */
static __always_inline void ecc_add(u64 *s, const u64 *t, unsigned int k, u64 x,
				    const unsigned int w)
{
	const u64 *e = t + (k * 256 + (x >> (8 * k) & 0xff)) * w;

	s[0] ^= e[0];
	if (w > 1)
		s[1] ^= e[1];
	if (w > 2)
		s[2] ^= e[2];
	if (w > 3)
		s[3] ^= e[3];
}

/* @n (1 to 8) parity bytes from a state word, big-endian. */
static __always_inline void ecc_store(u8 *p, unsigned int n, u64 v)
{
	u8 *end = p + n;

	do {
		*p++ = v >> 56;
		v <<= 8;
	} while (p < end);
}

/*
 * The parity of the @len bytes at @d into @p (@pb bytes) from tables @t,
 * with a state of @w words (1 to ECC_FAST_MAX_WORDS, a constant).
 */
static __always_inline void ecc_parity_w(const u64 *t, const u8 *d, unsigned int len,
					 u8 *p, unsigned int pb, const unsigned int w)
{
	u64 s[ECC_FAST_MAX_WORDS] = { 0 }, x;
	unsigned int i;

	i = ecc_head(d, len, &x);
	for (;;) {
		x ^= s[0];
		s[0] = w > 1 ? s[1] : 0;
		if (w > 1)
			s[1] = w > 2 ? s[2] : 0;
		if (w > 2)
			s[2] = w > 3 ? s[3] : 0;
		if (w > 3)
			s[3] = 0;
		ecc_add(s, t, 0, x, w);
		ecc_add(s, t, 1, x, w);
		ecc_add(s, t, 2, x, w);
		ecc_add(s, t, 3, x, w);
		ecc_add(s, t, 4, x, w);
		ecc_add(s, t, 5, x, w);
		ecc_add(s, t, 6, x, w);
		ecc_add(s, t, 7, x, w);
		if (i >= len)
			break;
		x = ecc_be64(d + i);
		i += 8;
	}
	ecc_store(p, w > 1 ? 8 : pb, s[0]);
	if (w > 1)
		ecc_store(p + 8, w > 2 ? 8 : pb - 8, s[1]);
	if (w > 2)
		ecc_store(p + 16, w > 3 ? 8 : pb - 16, s[2]);
	if (w > 3)
		ecc_store(p + 24, pb - 24, s[3]);
}

struct pcm_ecc_tab {
	unsigned int users;	/* codecs sharing it: their init and exit are serialized */
	unsigned int words;	/* of the parity state */
	bool clmul;		/* clmul computes parity (pcm_ecc_use_clmul()) */
	bool clmul_ok;		/* @k is set and checked: clmul may compute parity */
	struct ecc_clmul_k k;
	u64 t[];		/* Tk[b]'s words at [(k * 256 + b) * words] */
};

/*
 * The parity of @len bytes at @d into @p (@pb bytes, 8 at most) by clmul.
 * Where the buffer goes on to @end at least 8 bytes, as all 8 bytes of S:
 * one store, whose bytes past @pb the next codewords' parity overwrites.
 */
static __always_inline void ecc_parity_clmul(const struct pcm_ecc_tab *tab, const u8 *d,
					     unsigned int len, u8 *p, unsigned int pb,
					     const u8 *end)
{
	u64 v = ecc_clmul(&tab->k, d, len);

	if (end - p >= 8) {
		v = swab64(v);
		memcpy(p, &v, 8);
	} else {
		ecc_store(p, pb, v);
	}
}

/*
 * Every codeword of a sector, walking the codeword boundaries
 * i * 512 / codewords without a division each.
 */
static __always_inline void ecc_sector_w(const struct pcm_ecc *e, const u8 *data,
					 u8 *parity, const unsigned int w, const bool clmul)
{
	unsigned int n = e->geom.codewords, pb = e->geom.parity_bytes;
	unsigned int base = PCM_ECC_SECTOR / n, rem = PCM_ECC_SECTOR % n;
	unsigned int i, len, frac = 0;
	const u8 *end = parity + n * pb;

	for (i = 0; i < n; i++) {
		len = base;
		frac += rem;
		if (frac >= n) {
			frac -= n;
			len++;
		}
		if (clmul)
			ecc_parity_clmul(e->tab, data, len, parity, pb, end);
		else
			ecc_parity_w(e->tab->t, data, len, parity, pb, w);
		data += len;
		parity += pb;
	}
}

/*
 * A sector's parity by ecc_sector_clmul(): S of each codeword, then its
 * parity bytes stored as ecc_parity_clmul() does.
 */
static void ecc_sector_simd(const struct pcm_ecc *e, const u8 *data, u8 *parity)
{
	unsigned int n = e->geom.codewords, pb = e->geom.parity_bytes, i;
	const u8 *end = parity + n * pb;
	u64 s[ECC_SECTOR_CW_MAX], v;

	ecc_sector_clmul(&e->tab->k, data, n, s);
	for (i = 0; i < n; i++, parity += pb) {
		if (end - parity >= 8) {
			v = swab64(s[i]);
			memcpy(parity, &v, 8);
		} else {
			ecc_store(parity, pb, s[i]);
		}
	}
}

/*
 * Whether ecc_rows_clmul() computes this codec's parity here: in a SIMD
 * section, where the geometry has its plan.
 */
static inline bool ecc_rows(const struct pcm_ecc *e)
{
	return ECC_CLMUL && e->simd && e->tab->k.row;
}

/* A sector's parity from the tables, as bch_encode() gives it. */
static void ecc_sector(const struct pcm_ecc *e, const u8 *data, u8 *parity)
{
	const struct pcm_ecc_geom *g = &e->geom;

	if (ECC_CLMUL && e->simd) {
		if (e->tab->k.row)
			ecc_rows_clmul(&e->tab->k, data, 1, parity, pcm_ecc_sector_parity(g),
				       g->codewords, g->parity_bytes, false);
		else if (e->tab->k.sector)
			ecc_sector_simd(e, data, parity);
		else
			ecc_sector_w(e, data, parity, 1, true);
		return;
	}
	switch (e->tab->words) {
	case 1:
		ecc_sector_w(e, data, parity, 1, false);
		break;
	case 2:
		ecc_sector_w(e, data, parity, 2, false);
		break;
	case 3:
		ecc_sector_w(e, data, parity, 3, false);
		break;
	default:
		ecc_sector_w(e, data, parity, 4, false);
	}
}

/* The parity of @len bytes at @d into @p, as bch_encode() gives it. */
static void ecc_parity(const struct pcm_ecc *e, const u8 *d, unsigned int len, u8 *p)
{
	unsigned int pb = e->geom.parity_bytes;

	if (!e->tab) {
		/* bch_encode() adds to what the buffer holds */
		memset(p, 0, pb);
		bch_encode(e->bch, d, len, p);
		return;
	}
	if (ECC_CLMUL && e->simd) {
		ecc_parity_clmul(e->tab, d, len, p, pb, p + pb);
		return;
	}
	switch (e->tab->words) {
	case 1:
		ecc_parity_w(e->tab->t, d, len, p, pb, 1);
		break;
	case 2:
		ecc_parity_w(e->tab->t, d, len, p, pb, 2);
		break;
	case 3:
		ecc_parity_w(e->tab->t, d, len, p, pb, 3);
		break;
	default:
		ecc_parity_w(e->tab->t, d, len, p, pb, 4);
	}
}

/* Tk[b] from bch_encode(): 2048 short encodes, once per geometry. */
static struct pcm_ecc_tab *ecc_tab_build(struct bch_control *bch, unsigned int pb)
{
	unsigned int w = DIV_ROUND_UP(pb, 8), k, b, i;
	u8 msg[8] = { 0 }, par[ECC_MAX_PARITY];
	struct pcm_ecc_tab *tb;
	u64 *t;

	if (w > ECC_FAST_MAX_WORDS)
		return NULL;
	tb = kvmalloc(sizeof(*tb) + 8 * 256 * w * sizeof(u64), GFP_KERNEL);
	if (!tb)
		return NULL;
	tb->users = 1;
	tb->words = w;
	tb->clmul = false;
	tb->clmul_ok = false;
	for (k = 0; k < 8; k++) {
		for (b = 0; b < 256; b++) {
			msg[0] = b;
			memset(par, 0, pb);
			bch_encode(bch, msg, k + 1, par);
			t = tb->t + (k * 256 + b) * w;
			memset(t, 0, w * sizeof(u64));
			for (i = 0; i < pb; i++)
				t[i / 8] |= (u64)par[i] << (56 - 8 * (i % 8));
		}
	}
	return tb;
}

/*
 * Whether the tables give what bch_encode() gives, a sector and each of
 * its codewords alone, for pseudo-random data and all ones.
 */
static bool ecc_tab_ok(struct pcm_ecc *e)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int pb = g->parity_bytes, sp = pcm_ecc_sector_parity(g), i, k;
	u8 data[PCM_ECC_SECTOR], want[ECC_MAX_PARITY], got[ECC_MAX_PARITY];
	u32 x = 2463534242U;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < PCM_ECC_SECTOR; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			data[i] = k ? 0xff : x >> 24;
		}
		ecc_sector(e, data, e->calc);
		/* the row path's check: this parity is clean, one bit off is not */
		if (ecc_rows(e)) {
			if (!pcm_ecc_check_sectors(e, data, 1, e->calc, sp))
				return false;
			e->calc[(x >> 8) % sp] ^= 1U << (x % 8);
			if (pcm_ecc_check_sectors(e, data, 1, e->calc, sp))
				return false;
			ecc_sector(e, data, e->calc);
		}
		for (i = 0; i < g->codewords; i++) {
			memset(want, 0, pb);
			bch_encode(e->bch, data + pcm_ecc_cw_start(g, i), pcm_ecc_cw_len(g, i),
				   want);
			ecc_parity(e, data + pcm_ecc_cw_start(g, i), pcm_ecc_cw_len(g, i), got);
			if (memcmp(want, e->calc + i * pb, pb) || memcmp(want, got, pb))
				return false;
		}
	}
	return true;
}

/*
 * A codec for @g without parity tables: one lib/bch instance (not
 * reentrant).  lib/bch may find the generator polynomial of lower degree
 * than m * t, never higher; the check keeps the layout's parity size
 * honest anyway.
 */
static int ecc_codec_init(struct pcm_ecc *e, const struct pcm_ecc_geom *g)
{
	e->geom = *g;
	e->tab = NULL;
	e->simd = false;
	e->errloc = kcalloc(g->t, sizeof(*e->errloc), GFP_KERNEL);
	e->calc = kmalloc(pcm_ecc_sector_parity(g), GFP_KERNEL);
	e->bch = bch_init(g->m, g->t, 0, false);
	if (!e->errloc || !e->calc || !e->bch || e->bch->ecc_bytes != g->parity_bytes) {
		pcm_ecc_exit(e);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Set up a codec for @g, with parity tables of its own.  Should they not
 * match bch_encode() (or not fit in memory), the codec uses bch_encode().
 */
int pcm_ecc_init(struct pcm_ecc *e, const struct pcm_ecc_geom *g)
{
	int r = ecc_codec_init(e, g);

	if (r)
		return r;
	e->tab = ecc_tab_build(e->bch, g->parity_bytes);
	if (e->tab && !ecc_tab_ok(e)) {
		kvfree(e->tab);
		e->tab = NULL;
	}
	if (e->tab && e->tab->words == 1 && ecc_clmul_cpu()) {
		/* Glow: T0[1], the parity of the one-byte message 1 */
		ecc_clmul_init(&e->tab->k, e->tab->t[1]);
		ecc_clmul_plan(&e->tab->k, g);
		ecc_rows_plan(&e->tab->k, g);
		e->tab->clmul = true;
		if (pcm_ecc_simd_begin(e)) {
			e->tab->clmul = ecc_tab_ok(e);
			pcm_ecc_simd_end(e);
		} else {
			e->tab->clmul = false;
		}
		e->tab->clmul_ok = e->tab->clmul;
	}
	return 0;
}

/*
 * Whether clmul computes parity where it was set up and checked (@on),
 * or the tables do: for a caller that timed both on this CPU.  Codecs
 * sharing the tables follow; call it before any of them codes.
 */
void pcm_ecc_use_clmul(struct pcm_ecc *e, bool on)
{
	if (e->tab)
		e->tab->clmul = on && e->tab->clmul_ok;
}

/* Whether clmul was set up and checked for this codec (in use or not). */
bool pcm_ecc_clmul_ok(const struct pcm_ecc *e)
{
	return ECC_CLMUL && e->tab && e->tab->clmul_ok;
}

/*
 * Set up a codec for @from's geometry that shares @from's parity tables
 * (read-only): a lib/bch instance and buffers of its own.  Codecs that
 * share tables are set up and freed one at a time (a constructor's loop),
 * in any order.
 */
int pcm_ecc_init_shared(struct pcm_ecc *e, struct pcm_ecc *from)
{
	int r = ecc_codec_init(e, &from->geom);

	if (r)
		return r;
	e->tab = from->tab;
	if (e->tab)
		e->tab->users++;
	return 0;
}

/* Frees what is set up; a zeroed codec is fine. */
void pcm_ecc_exit(struct pcm_ecc *e)
{
	if (e->tab && !--e->tab->users)
		kvfree(e->tab);
	bch_free(e->bch);
	kfree(e->errloc);
	kfree(e->calc);
	e->tab = NULL;
	e->bch = NULL;
	e->errloc = NULL;
	e->calc = NULL;
}

/* Whether parity is computed from tables (else by bch_encode()). */
bool pcm_ecc_fast(const struct pcm_ecc *e)
{
	return e->tab;
}

/* Whether parity is computed by clmul in a pcm_ecc_simd_begin() section. */
bool pcm_ecc_clmul(const struct pcm_ecc *e)
{
	return ECC_CLMUL && e->tab && e->tab->clmul;
}

/*
 * Whether a SIMD section computes this codec's parity a row at a time
 * (ecc_rows_clmul(): the geometry has its plan), for the tests.
 */
bool pcm_ecc_clmul_rows(const struct pcm_ecc *e)
{
	return pcm_ecc_clmul(e) && e->tab->k.row;
}

/*
 * What computes parity, for a log line: "clmul" (with ", a row at a
 * time" where ecc_rows_clmul() does, and ", AVX" in its VEX encoding),
 * "tables" or "lib/bch".
 */
const char *pcm_ecc_engine(const struct pcm_ecc *e)
{
	if (pcm_ecc_clmul_rows(e))
		return e->tab->k.avx ? "clmul, a row at a time, AVX" : "clmul, a row at a time";
	return pcm_ecc_clmul(e) ? "clmul" : e->tab ? "tables" : "lib/bch";
}

/*
 * Begin a section in which parity may be computed by clmul: where the
 * codec has it and the FPU may be used here (process context, as the
 * ECC workers and the constructor are), kernel_fpu_begin().  The section
 * must not sleep: keep it to one row's sectors, never across I/O.
 * Returns whether clmul is on; pcm_ecc_simd_end() ends it either way.
 */
bool pcm_ecc_simd_begin(struct pcm_ecc *e)
{
#if ECC_CLMUL
	if (pcm_ecc_clmul(e) && may_use_simd()) {
		kernel_fpu_begin();
		e->simd = true;
	}
#endif
	return e->simd;
}

void pcm_ecc_simd_end(struct pcm_ecc *e)
{
#if ECC_CLMUL
	if (e->simd) {
		e->simd = false;
		kernel_fpu_end();
	}
#endif
}

/*
 * Parity of the @len bytes at @d (1 to the longest codeword) into
 * @parity (parity_bytes): what pcm_ecc_encode_cw() does for a codeword.
 */
void pcm_ecc_encode(struct pcm_ecc *e, const u8 *d, unsigned int len, u8 *parity)
{
	ecc_parity(e, d, len, parity);
}

/*
 * Parity of codeword @cw of a sector (@data and @parity are the sector's):
 * what a read that finds errors in one codeword needs, when the parity is
 * computed from the data the backing device holds rather than read.
 */
void pcm_ecc_encode_cw(struct pcm_ecc *e, unsigned int cw, const u8 *data, u8 *parity)
{
	const struct pcm_ecc_geom *g = &e->geom;

	ecc_parity(e, data + pcm_ecc_cw_start(g, cw), pcm_ecc_cw_len(g, cw),
		   parity + cw * g->parity_bytes);
}

/* Parity of one sector's 512 bytes into @parity (codewords x parity_bytes). */
void pcm_ecc_encode_sector(struct pcm_ecc *e, const u8 *data, u8 *parity)
{
	unsigned int i;

	if (e->tab) {
		ecc_sector(e, data, parity);
		return;
	}
	for (i = 0; i < e->geom.codewords; i++)
		pcm_ecc_encode_cw(e, i, data, parity);
}

/*
 * Parity of @n consecutive sectors at @data (a row's part) into @parity,
 * a sector's every @stride bytes: what pcm_ecc_encode_sector() does for
 * each, in one call.
 */
void pcm_ecc_encode_sectors(struct pcm_ecc *e, const u8 *data, unsigned int n,
			    u8 *parity, unsigned int stride)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int i;

	if (ecc_rows(e)) {
		ecc_rows_clmul(&e->tab->k, data, n, parity, stride, g->codewords,
			       g->parity_bytes, false);
		return;
	}
	for (i = 0; i < n; i++)
		pcm_ecc_encode_sector(e, data + i * PCM_ECC_SECTOR, parity + i * stride);
}

/*
 * Whether each of @n consecutive sectors at @data has the parity stored
 * for it (a sector's every @stride bytes of @parity): a clean read of a
 * row's part, nothing to decode.  False at the first that differs.
 */
bool pcm_ecc_check_sectors(struct pcm_ecc *e, const u8 *data, unsigned int n,
			   const u8 *parity, unsigned int stride)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int sp = pcm_ecc_sector_parity(g), i;

	if (ecc_rows(e))
		return ecc_rows_clmul(&e->tab->k, data, n, (u8 *)parity, stride, g->codewords,
				      g->parity_bytes, true);
	for (i = 0; i < n; i++) {
		pcm_ecc_encode_sector(e, data + i * PCM_ECC_SECTOR, e->calc);
		if (!pcm_ecc_same(e->calc, parity + i * stride, sp))
			return false;
	}
	return true;
}

/* Flip bit @n of @buf in lib/bch's numbering: byte n / 8, bit n % 8. */
static void ecc_flip(u8 *buf, unsigned int n)
{
	buf[n / 8] ^= 1U << (n % 8);
}

/*
 * lib/bch's decode of the @len data bytes at @d with parity @p, given
 * the parity @calc computed from the data (NULL: lib/bch computes it);
 * the errors it locates are corrected in place.
 */
static int ecc_correct(struct pcm_ecc *e, u8 *d, unsigned int len, u8 *p, const u8 *calc)
{
	int i, n;

	n = bch_decode(e->bch, d, len, p, calc, NULL, e->errloc);
	if (n < 0)
		return n == -EINVAL ? -EINVAL : -EBADMSG;
	for (i = 0; i < n; i++) {
		if (e->errloc[i] < 8 * len)
			ecc_flip(d, e->errloc[i]);
		else
			ecc_flip(p, e->errloc[i] - 8 * len);
	}
	return n;
}

/*
 * Decode codeword @cw of a sector in place: its data within @data (the
 * sector) and its parity within @parity (the sector's).  Returns the bits
 * corrected (in data or parity), or -EBADMSG when the decoder finds more
 * errors than it can correct; the data is then left as read.  A codeword
 * whose parity matches its data is clean: lib/bch, given the same
 * parity, would return 0 at once (the geometry guarantees the length
 * check before that passes).
 */
int pcm_ecc_decode_cw(struct pcm_ecc *e, unsigned int cw, u8 *data, u8 *parity)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int len = pcm_ecc_cw_len(g, cw);
	u8 *d = data + pcm_ecc_cw_start(g, cw);
	u8 *p = parity + cw * g->parity_bytes;

	if (!e->tab)
		return ecc_correct(e, d, len, p, NULL);
	ecc_parity(e, d, len, e->calc);
	if (!memcmp(e->calc, p, g->parity_bytes))
		return 0;
	return ecc_correct(e, d, len, p, e->calc);
}

/*
 * Decode a sector in place.  Returns the bits corrected, or -EBADMSG if
 * any codeword is uncorrectable (the others are still corrected), with
 * *@failed the number of such codewords.  With tables, the sector's
 * parity is computed whole and compared at once; only the codewords that
 * differ go to lib/bch.
 */
int pcm_ecc_decode_sector(struct pcm_ecc *e, u8 *data, u8 *parity,
			  unsigned int *failed)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int i, bad = 0, pb = g->parity_bytes;
	int n, bits = 0;

	*failed = 0;
	if (e->tab) {
		ecc_sector(e, data, e->calc);
		if (pcm_ecc_same(e->calc, parity, pcm_ecc_sector_parity(g)))
			return 0;
	}
	for (i = 0; i < g->codewords; i++) {
		u8 *d = data + pcm_ecc_cw_start(g, i), *p = parity + i * pb;

		if (!e->tab)
			n = ecc_correct(e, d, pcm_ecc_cw_len(g, i), p, NULL);
		else if (memcmp(e->calc + i * pb, p, pb))
			n = ecc_correct(e, d, pcm_ecc_cw_len(g, i), p, e->calc + i * pb);
		else
			continue;
		if (n == -EINVAL)
			return n;
		if (n < 0)
			bad++;
		else
			bits += n;
	}
	*failed = bad;
	return bad ? -EBADMSG : bits;
}

/*
 * What a decode with result @ret really did, @data against what was
 * written (@truth): a decoder that reports success on wrong data is a
 * silent corruption, which only an emulator that knows the truth can count.
 */
enum pcm_ecc_outcome pcm_ecc_classify(int ret, const u8 *data,
				      const u8 *truth, size_t len)
{
	if (ret < 0)
		return PCM_ECC_UNCORRECTABLE;
	if (memcmp(data, truth, len))
		return PCM_ECC_SILENT;
	return ret ? PCM_ECC_CORRECTED : PCM_ECC_CLEAN;
}
