// SPDX-License-Identifier: GPL-2.0-only
/*
 * BCH ECC over 512-byte sectors; see pcm-ecc.h.  Geometry checks are
 * plain arithmetic; pcm_ecc_init() is the only call that allocates
 * (bch_init(), GFP_KERNEL: constructor or worker setup only).
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/bch.h>

#include "pcm-ecc.h"

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
 */
const struct pcm_ecc_layout pcm_ecc_layouts[] = {
	{ .name = "pss", .codewords = 6, .t = 4, .meta_bytes = 64 },
	{ .name = "onyx", .codewords = 64, .t = 2, .meta_bytes = 128 },
	{ .name = "reram", .codewords = 2, .t = 16, .meta_bytes = 64 },
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
 * Set up a codec for @g: one lib/bch instance (not reentrant).  lib/bch
 * may find the generator polynomial of lower degree than m * t, never
 * higher; the check keeps the layout's parity size honest anyway.
 */
int pcm_ecc_init(struct pcm_ecc *e, const struct pcm_ecc_geom *g)
{
	e->geom = *g;
	e->errloc = kcalloc(g->t, sizeof(*e->errloc), GFP_KERNEL);
	e->bch = bch_init(g->m, g->t, 0, false);
	if (!e->errloc || !e->bch || e->bch->ecc_bytes != g->parity_bytes) {
		pcm_ecc_exit(e);
		return -ENOMEM;
	}
	return 0;
}

void pcm_ecc_exit(struct pcm_ecc *e)
{
	bch_free(e->bch);
	kfree(e->errloc);
	e->bch = NULL;
	e->errloc = NULL;
}

/*
 * Parity of codeword @cw of a sector (@data and @parity are the sector's):
 * what a read that finds errors in one codeword needs, when the parity is
 * computed from the data the backing device holds rather than read.
 */
void pcm_ecc_encode_cw(struct pcm_ecc *e, unsigned int cw, const u8 *data, u8 *parity)
{
	const struct pcm_ecc_geom *g = &e->geom;
	u8 *p = parity + cw * g->parity_bytes;

	/* bch_encode() adds to what the buffer holds */
	memset(p, 0, g->parity_bytes);
	bch_encode(e->bch, data + pcm_ecc_cw_start(g, cw), pcm_ecc_cw_len(g, cw), p);
}

/* Parity of one sector's 512 bytes into @parity (codewords x parity_bytes). */
void pcm_ecc_encode_sector(struct pcm_ecc *e, const u8 *data, u8 *parity)
{
	unsigned int i;

	for (i = 0; i < e->geom.codewords; i++)
		pcm_ecc_encode_cw(e, i, data, parity);
}

/* Flip bit @n of @buf in lib/bch's numbering: byte n / 8, bit n % 8. */
static void ecc_flip(u8 *buf, unsigned int n)
{
	buf[n / 8] ^= 1U << (n % 8);
}

/*
 * Decode codeword @cw of a sector in place: its data within @data (the
 * sector) and its parity within @parity (the sector's).  Returns the bits
 * corrected (in data or parity), or -EBADMSG when the decoder finds more
 * errors than it can correct; the data is then left as read.
 */
int pcm_ecc_decode_cw(struct pcm_ecc *e, unsigned int cw, u8 *data, u8 *parity)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int len = pcm_ecc_cw_len(g, cw);
	u8 *d = data + pcm_ecc_cw_start(g, cw);
	u8 *p = parity + cw * g->parity_bytes;
	int i, n;

	n = bch_decode(e->bch, d, len, p, NULL, NULL, e->errloc);
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
 * Decode a sector in place.  Returns the bits corrected, or -EBADMSG if
 * any codeword is uncorrectable (the others are still corrected), with
 * *@failed the number of such codewords.
 */
int pcm_ecc_decode_sector(struct pcm_ecc *e, u8 *data, u8 *parity,
			  unsigned int *failed)
{
	unsigned int i, bad = 0;
	int n, bits = 0;

	for (i = 0; i < e->geom.codewords; i++) {
		n = pcm_ecc_decode_cw(e, i, data, parity);
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
