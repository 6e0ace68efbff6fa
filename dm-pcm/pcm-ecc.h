/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * BCH ECC over 512-byte sectors with the kernel's lib/bch (dm-pcm.rst,
 * "ECC and bit errors").  Pure logic shared by the module and the host unit tests,
 * which compile lib/bch.c itself.
 *
 * A sector's 512 data bytes are cut into @codewords codewords, codeword i
 * holding bytes [i * 512 / codewords, (i + 1) * 512 / codewords): lengths
 * differ by one byte at most (PSS's 6 codewords: 85 or 86 bytes).  Each
 * codeword is a shortened binary BCH code over GF(2^m) correcting @t bits;
 * m is the smallest field lib/bch accepts for the longest codeword.  Its
 * parity takes DIV_ROUND_UP(m * t, 8) bytes; the codewords' parities sit
 * back to back at the start of the sector's @meta_bytes of metadata, the
 * rest of which is spare.
 *
 * The code is linear, so all-zero data with all-zero parity is a codeword:
 * a freshly zeroed device decodes without errors, no erased-state masking.
 *
 * One struct pcm_ecc owns one lib/bch instance, which is not reentrant
 * (its scratch buffers live in it): one per worker, never shared.  Parity
 * is computed by table-driven slicing (pcm-ecc.c), byte for byte what
 * bch_encode() gives, with tables that codecs of one geometry may share
 * read-only (pcm_ecc_init_shared()); lib/bch decodes only a codeword
 * whose parity does not match.  Where the parity fits 64 bits and the CPU
 * has a carry-less multiply (x86-64 PCLMULQDQ), it is computed by CRC
 * folding instead, between pcm_ecc_simd_begin() and pcm_ecc_simd_end():
 * a section that may use the FPU (kernel_fpu_begin()), short, never
 * across I/O.  There, for most geometries (pss among them), a row's
 * sectors (pcm_ecc_encode_sectors(), pcm_ecc_check_sectors()) are one
 * asm block that stores each codeword's parity, or compares it with
 * the stored parity, in place (pcm-ecc-clmul.h).
 */
#ifndef PCM_ECC_H
#define PCM_ECC_H

#include <linux/string.h>
#include <linux/types.h>

#define PCM_ECC_SECTOR		512
#define PCM_ECC_MAX_CODEWORDS	256	/* 2 data bytes each */
#define PCM_ECC_MAX_T		64	/* lib/bch's BCH_MAX_T */
#define PCM_ECC_MAX_META	512	/* metadata bytes per sector */

/*
 * The ECC layout, the part of the superblock's geometry that decides
 * where every bit is: fixed-width fields, packed into one 64-bit word by
 * pcm_ecc_geom_pack().
 */
struct pcm_ecc_geom {
	u16 codewords;		/* per 512-byte sector */
	u16 meta_bytes;		/* metadata bytes per sector */
	u8 t;			/* bits corrected per codeword */
	u8 m;			/* GF(2^m), derived */
	u8 parity_bytes;	/* per codeword, derived: DIV_ROUND_UP(m * t, 8) */
};

/* A named layout from a paper (the derivations: see pcm-ecc.c). */
struct pcm_ecc_layout {
	const char *name;
	u16 codewords;
	u8 t;
	u16 meta_bytes;
};

extern const struct pcm_ecc_layout pcm_ecc_layouts[];

struct bch_control;
struct pcm_ecc_tab;

struct pcm_ecc {
	struct pcm_ecc_geom geom;
	struct bch_control *bch;
	unsigned int *errloc;	/* t slots, for bch_decode() */
	struct pcm_ecc_tab *tab;	/* parity tables (shared), or NULL: bch_encode() */
	u8 *calc;		/* a sector's parity as computed, for decoding */
	bool simd;		/* in a pcm_ecc_simd_begin() section that may use clmul */
};

/* What decoding a codeword or a sector did, against the truth. */
enum pcm_ecc_outcome {
	PCM_ECC_CLEAN,		/* no error seen, data right */
	PCM_ECC_CORRECTED,	/* errors corrected, data right */
	PCM_ECC_UNCORRECTABLE,	/* the decoder refused: -EBADMSG */
	PCM_ECC_SILENT,		/* the decoder said good, the data is wrong */
};

int pcm_ecc_geom_init(struct pcm_ecc_geom *g, unsigned int codewords,
		      unsigned int t, unsigned int meta_bytes,
		      char *msg, size_t msg_len);
u64 pcm_ecc_geom_pack(const struct pcm_ecc_geom *g);
int pcm_ecc_geom_unpack(struct pcm_ecc_geom *g, u64 word);

int pcm_ecc_init(struct pcm_ecc *e, const struct pcm_ecc_geom *g);
int pcm_ecc_init_shared(struct pcm_ecc *e, struct pcm_ecc *from);
void pcm_ecc_exit(struct pcm_ecc *e);
bool pcm_ecc_fast(const struct pcm_ecc *e);
bool pcm_ecc_clmul(const struct pcm_ecc *e);
bool pcm_ecc_clmul_rows(const struct pcm_ecc *e);
bool pcm_ecc_clmul_ok(const struct pcm_ecc *e);
void pcm_ecc_use_clmul(struct pcm_ecc *e, bool on);
const char *pcm_ecc_engine(const struct pcm_ecc *e);
bool pcm_ecc_simd_begin(struct pcm_ecc *e);
void pcm_ecc_simd_end(struct pcm_ecc *e);
void pcm_ecc_encode(struct pcm_ecc *e, const u8 *d, unsigned int len, u8 *parity);
void pcm_ecc_encode_cw(struct pcm_ecc *e, unsigned int cw, const u8 *data, u8 *parity);
void pcm_ecc_encode_sector(struct pcm_ecc *e, const u8 *data, u8 *parity);
void pcm_ecc_encode_sectors(struct pcm_ecc *e, const u8 *data, unsigned int n,
			    u8 *parity, unsigned int stride);
bool pcm_ecc_check_sectors(struct pcm_ecc *e, const u8 *data, unsigned int n,
			   const u8 *parity, unsigned int stride);
int pcm_ecc_decode_cw(struct pcm_ecc *e, unsigned int cw, u8 *data, u8 *parity);
int pcm_ecc_decode_sector(struct pcm_ecc *e, u8 *data, u8 *parity,
			  unsigned int *failed);
enum pcm_ecc_outcome pcm_ecc_classify(int ret, const u8 *data,
				      const u8 *truth, size_t len);

/* Codeword @cw's first data byte within the sector, and its length. */
/*
 * Whether the @len bytes at @a and @b are the same, a word at a time (the
 * last word overlapping): a sector's parity, compared on every read.
 */
static inline bool pcm_ecc_same(const u8 *a, const u8 *b, unsigned int len)
{
	unsigned int i;
	u64 x, y;

	if (len < 8)
		return !memcmp(a, b, len);
	for (i = 0; i + 8 < len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return false;
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return x == y;
}

static inline unsigned int pcm_ecc_cw_start(const struct pcm_ecc_geom *g,
					    unsigned int cw)
{
	return cw * PCM_ECC_SECTOR / g->codewords;
}

static inline unsigned int pcm_ecc_cw_len(const struct pcm_ecc_geom *g,
					  unsigned int cw)
{
	return pcm_ecc_cw_start(g, cw + 1) - pcm_ecc_cw_start(g, cw);
}

/* The codeword holding byte @byte (0..511) of a sector: pcm_ecc_cw_start()'s inverse. */
static inline unsigned int pcm_ecc_cw_of(const struct pcm_ecc_geom *g, unsigned int byte)
{
	return (byte * g->codewords + g->codewords - 1) / PCM_ECC_SECTOR;
}

/* Parity bytes one sector uses (at the start of its metadata). */
static inline unsigned int pcm_ecc_sector_parity(const struct pcm_ecc_geom *g)
{
	return g->codewords * g->parity_bytes;
}

/* A sector's bits in ECC numbering: its data, then each codeword's m * t. */
static inline u32 pcm_ecc_sector_bits(const struct pcm_ecc_geom *g)
{
	return 8 * PCM_ECC_SECTOR + g->codewords * g->m * g->t;
}

/* Metadata bytes of a row of @row_size bytes. */
static inline u32 pcm_ecc_row_meta(const struct pcm_ecc_geom *g, u32 row_size)
{
	return row_size / PCM_ECC_SECTOR * g->meta_bytes;
}

#endif
