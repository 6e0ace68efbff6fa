/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm BCH parity by carry-less multiply (x86-64 PCLMULQDQ): the
 * x86 code of pcm-ecc.c, in a file of its own.  Included by pcm-ecc.c
 * only, after ecc_be64() and ecc_head(), which it uses; everything here
 * is static and inlined into pcm-ecc.c's parity loops (a call per
 * codeword would cost onyx's 64 codewords of 8 bytes a sector more than
 * the multiply).  Other architectures get stubs that pcm-ecc.c never
 * calls (ECC_CLMUL is 0 there).
 */
#ifndef DM_PCM_ECC_CLMUL_H
#define DM_PCM_ECC_CLMUL_H

#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#endif

#define ECC_SECTOR_CW_MAX	32	/* ecc_sector_clmul(): codewords of 16 bytes or more */

/*
 * clmul's constants (see ecc_clmul()), from the generator at init; and
 * for ecc_sector_clmul(), each codeword of a sector's head (a pshufb
 * mask) and its whole 16-byte blocks after it.
 */
struct ecc_clmul_k {
	u8 bswap[16];		/* pshufb: a block's bytes, last first */
	u64 fold[2];		/* x^128 mod G, x^192 mod G */
	u64 barrett[2];		/* floor(x^128 / G) - x^64, G - x^64 */
	u8 head_mask[ECC_SECTOR_CW_MAX][16];	/* first h bytes, last first, zeros above */
	u8 head[ECC_SECTOR_CW_MAX];	/* h: len % 16, or 16 */
	u8 blocks[ECC_SECTOR_CW_MAX];	/* (len - h) / 16 */
	bool sector;		/* ecc_sector_clmul() serves this geometry */
};

/*
 * Carry-less multiply parity (x86-64 PCLMULQDQ), for parity of 8 bytes
 * at most: CRC folding, as the kernel's CRC code does it (crct10dif's
 * MSB-first case).  With ecc_parity_w()'s state (pcm-ecc.c), S = M(x)
 * x^64 mod G, where M is the codeword (first byte's top bit the highest
 * power) and G = g(x) x^(64 - ecc_bits) + ... is the generator scaled
 * up to degree 64:
 * G = x^64 + Glow, and Glow = x^64 mod G is the parity of the one-byte
 * message 1 (T0[1]).  A 128-bit accumulator A = a1 x^64 + a0, congruent
 * to the message so far mod G, takes the next 16 bytes B as
 *
 *   A = a1 (x^192 mod G) + a0 (x^128 mod G) + B      (A x^128 + B, reduced)
 *
 * two multiplies of 64 by 64 bits, each of degree below 128.  At the end,
 * S = A x^64 mod G: a1 (x^128 mod G) + a0 x^64 is 128 bits, C = c1 x^64 +
 * c0, and c1 x^64 mod G comes by Barrett reduction: the quotient is q =
 * floor(c1 mu / x^64) = c1 + the top half of c1 (mu - x^64), where mu =
 * floor(x^128 / G), and the remainder is the low half of q Glow, so S =
 * c0 + low(q Glow).  Leading zero bytes change no remainder: the first
 * len % 16 bytes (or 16) are the accumulator's start.  The constants are
 * computed from Glow when the tables are built and the result checked
 * against bch_encode() (ecc_tab_ok()) before it is used.  A codeword of
 * 8 bytes at most (onyx) is the Barrett step alone.  All but a sector's
 * last codewords store the 8 bytes of S at once (the next codeword's
 * parity overwrites the rest).
 *
 * Per 4 KiB row (callgrind, bench-ecc at -O2, encode / clean decode, in
 * instructions): pss 22.2K / 22.5K with the tables, 6.2K / 6.6K by clmul
 * a codeword at a time, 5.1K / 5.5K a sector at a time (ecc_sector_clmul();
 * its 6 codewords of 85-86 bytes: 5 folds and the reduction each); onyx
 * 38.4K / 38.9K, 19.9K / 20.3K (64 codewords of 8 bytes: the loop over
 * them is most of it now).  reram's 24 parity bytes keep the tables.
 *
 * Kernel C has no SSE (-mno-sse): the compiler never holds anything in
 * an xmm register there, so the asm names none as clobbered, as
 * lib/raid6's SSE code does; the host's C may, so there it does.  Only
 * between kernel_fpu_begin() and kernel_fpu_end() (pcm_ecc_simd_begin()).
 */
#ifdef CONFIG_X86_64
#define ECC_CLMUL	1
#ifdef __SSE2__
#define ECC_XMM_CLOBBERS	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6"
#else
#define ECC_XMM_CLOBBERS	"cc"
#endif

/*
 * What both clmul paths' asm runs: A in xmm0, x^128 and x^192 mod G in
 * xmm1, Barrett's constants in xmm4, the byte swap in xmm5; %[p] points
 * at the next block, %[n] counts the blocks (one at least).
 */
#define ECC_ASM_FOLD	/* A = a1 (x^192 mod G) + a0 (x^128 mod G) + B, each block */ \
	"1:\n\t"							\
	"movdqa %%xmm0, %%xmm2\n\t"					\
	"pclmulqdq $0x00, %%xmm1, %%xmm0\n\t"				\
	"pclmulqdq $0x11, %%xmm1, %%xmm2\n\t"				\
	"movdqu (%[p]), %%xmm3\n\t"					\
	"pshufb %%xmm5, %%xmm3\n\t"					\
	"pxor %%xmm2, %%xmm0\n\t"					\
	"pxor %%xmm3, %%xmm0\n\t"					\
	"add $16, %[p]\n\t"						\
	"dec %[n]\n\t"							\
	"jnz 1b\n"
#define ECC_ASM_REDUCE	/* S, the low half of xmm0 */			\
	"movdqa %%xmm0, %%xmm2\n\t"					\
	"pclmulqdq $0x01, %%xmm1, %%xmm2\n\t"	/* a1 (x^128 mod G) */	\
	"pslldq $8, %%xmm0\n\t"			/* a0 x^64 */		\
	"pxor %%xmm2, %%xmm0\n\t"			/* C */			\
	"movdqa %%xmm0, %%xmm2\n\t"					\
	"pclmulqdq $0x01, %%xmm4, %%xmm2\n\t"	/* c1 (mu - x^64) */	\
	"pxor %%xmm0, %%xmm2\n\t"			/* top half: q */	\
	"pclmulqdq $0x11, %%xmm4, %%xmm2\n\t"	/* q Glow */		\
	"pxor %%xmm2, %%xmm0\n\t"			/* low half: S */

/* The first len % 16 bytes (or 16) of a codeword, as a 128-bit number */
static __always_inline unsigned int ecc_head16(const u8 *d, unsigned int len,
					       u64 *hi, u64 *lo)
{
	unsigned int h = len % 16 ?: 16, i;

	if (h > 8) {
		*hi = ecc_be64(d) >> (128 - 8 * h);
		*lo = ecc_be64(d + h - 8);
		return h;
	}
	*hi = 0;
	if (len >= 8) {
		*lo = ecc_be64(d) >> (64 - 8 * h);
		return h;
	}
	*lo = 0;
	for (i = 0; i < h; i++)
		*lo = *lo << 8 | d[i];
	return h;
}

/*
 * S of a codeword of 8 bytes at most, @x: C = x x^64 (c0 = 0), the
 * Barrett step alone.
 */
static __always_inline u64 ecc_clmul8(const struct ecc_clmul_k *k, u64 x)
{
	asm("movq %[x], %%xmm0\n\t"
	    "movdqu %[bar], %%xmm4\n\t"
	    "movdqa %%xmm0, %%xmm2\n\t"
	    "pclmulqdq $0x00, %%xmm4, %%xmm2\n\t"	/* x (mu - x^64) */
	    "psrldq $8, %%xmm2\n\t"
	    "pxor %%xmm0, %%xmm2\n\t"			/* q */
	    "pclmulqdq $0x10, %%xmm4, %%xmm2\n\t"	/* q Glow */
	    "movq %%xmm2, %[x]"
	    : [x] "+r" (x)
	    : [bar] "m" (k->barrett)
	    : "cc", ECC_XMM_CLOBBERS);
	return x;
}

/* The parity state S (as ecc_parity_w()'s, one word) of @len bytes at @d. */
static __always_inline u64 ecc_clmul(const struct ecc_clmul_k *k, const u8 *d,
				     unsigned int len)
{
	unsigned long n;
	const u8 *p;
	u64 hi, lo;

	if (len <= 8) {
		ecc_head(d, len, &lo);
		return ecc_clmul8(k, lo);
	}
	p = d + ecc_head16(d, len, &hi, &lo);
	n = (d + len - p) / 16;
	asm("movq %[lo], %%xmm0\n\t"
	    "movq %[hi], %%xmm2\n\t"
	    "punpcklqdq %%xmm2, %%xmm0\n\t"		/* A */
	    "movdqu %[fold], %%xmm1\n\t"
	    "movdqu %[bar], %%xmm4\n\t"
	    "test %[n], %[n]\n\t"
	    "jz 2f\n\t"
	    "movdqu %[bswap], %%xmm5\n"
	    ECC_ASM_FOLD
	    "2:\n\t"
	    ECC_ASM_REDUCE
	    "movq %%xmm0, %[lo]"
	    : [lo] "+r" (lo), [p] "+r" (p), [n] "+r" (n)
	    : [hi] "r" (hi), [fold] "m" (k->fold), [bar] "m" (k->barrett),
	      [bswap] "m" (k->bswap)
	    : "memory", "cc", ECC_XMM_CLOBBERS);
	return lo;
}

/*
 * S of every codeword of a sector into @s, in one asm block: the
 * constants are loaded once, each codeword's head is one load and one
 * pshufb (its mask puts its first h bytes, first byte highest, in the
 * low h bytes of the accumulator: a head shorter than 16 bytes is
 * loaded with the bytes after it, which the mask drops), then its
 * blocks are folded and S reduced as ecc_clmul() does.  A codeword's
 * 16-byte load never reads past the sector: each is 16 bytes at least
 * (ecc_clmul_plan()).  What is left is the folds: per codeword of pss,
 * 10 instructions for each of its 5 blocks, 24 for its head and S.
 */
static __always_inline void ecc_sector_clmul(const struct ecc_clmul_k *k, const u8 *d,
					     unsigned int n, u64 *s)
{
	const u8 *head = k->head, *blocks = k->blocks, *mask = k->head_mask[0];
	unsigned long h, b;

	/* volatile: its outputs are dead after it, what it does is the stores */
	asm volatile("movdqu %[fold], %%xmm1\n\t"
		     "movdqu %[bar], %%xmm4\n\t"
		     "movdqu %[bswap], %%xmm5\n"
		     "0:\n\t"
		     "movzbl (%[head]), %k[h]\n\t"
		     "movzbl (%[blocks]), %k[n]\n\t"
		     "movdqu (%[mask]), %%xmm6\n\t"
		     "movdqu (%[p]), %%xmm0\n\t"
		     "pshufb %%xmm6, %%xmm0\n\t"	/* A: the head */
		     "add %[h], %[p]\n\t"
		     "test %[n], %[n]\n\t"
		     "jz 2f\n"
		     ECC_ASM_FOLD
		     "2:\n\t"
		     ECC_ASM_REDUCE
		     "movq %%xmm0, (%[s])\n\t"
		     "add $8, %[s]\n\t"
		     "inc %[head]\n\t"
		     "inc %[blocks]\n\t"
		     "add $16, %[mask]\n\t"
		     "dec %[cw]\n\t"
		     "jnz 0b"
		     : [p] "+r" (d), [cw] "+r" (n), [s] "+r" (s), [head] "+r" (head),
		       [blocks] "+r" (blocks), [mask] "+r" (mask), [h] "=&r" (h), [n] "=&r" (b)
		     : [fold] "m" (k->fold), [bar] "m" (k->barrett), [bswap] "m" (k->bswap)
		     : "memory", "cc", ECC_XMM_CLOBBERS);
}

/* x^@n mod G, from Glow = x^64 mod G (@n >= 64) */
static u64 ecc_xpow(u64 glow, unsigned int n)
{
	u64 r = glow;

	while (n-- > 64)
		r = r << 1 ^ (r >> 63 ? glow : 0);
	return r;
}

/* floor(x^128 / G) - x^64, by long division of x^128 by G = x^64 + Glow */
static u64 ecc_mu(u64 glow)
{
	u64 r[3] = { 0, 0, 1 }, q = 0;	/* r: the dividend's bits 0..191 */
	int i, s;

	for (i = 128; i >= 64; i--) {
		if (!(r[i / 64] >> (i % 64) & 1))
			continue;
		s = i - 64;		/* r -= G x^s */
		q |= s < 64 ? 1ULL << s : 0;
		r[(64 + s) / 64] ^= 1ULL << ((64 + s) % 64);
		r[s / 64] ^= glow << (s % 64);
		if (s % 64)
			r[s / 64 + 1] ^= glow >> (64 - s % 64);
	}
	return q;
}

/* clmul's constants for the generator whose x^64 mod G is @glow */
static void ecc_clmul_init(struct ecc_clmul_k *k, u64 glow)
{
	unsigned int i;

	for (i = 0; i < 16; i++)
		k->bswap[i] = 15 - i;
	k->fold[0] = ecc_xpow(glow, 128);
	k->fold[1] = ecc_xpow(glow, 192);
	k->barrett[0] = ecc_mu(glow);
	k->barrett[1] = glow;
}

/*
 * ecc_sector_clmul()'s plan for @g's codewords: where each is 16 bytes
 * or more (32 codewords a sector at most), its head and blocks.
 */
static void ecc_clmul_plan(struct ecc_clmul_k *k, const struct pcm_ecc_geom *g)
{
	unsigned int i, j, len, h;

	k->sector = g->codewords <= ECC_SECTOR_CW_MAX;
	for (i = 0; k->sector && i < g->codewords; i++) {
		len = pcm_ecc_cw_len(g, i);
		h = len % 16 ?: 16;
		k->head[i] = h;
		k->blocks[i] = (len - h) / 16;
		/* byte j of the accumulator (2^8j) is byte h - 1 - j of the head */
		for (j = 0; j < 16; j++)
			k->head_mask[i][j] = j < h ? h - 1 - j : 0x80;
		k->sector = len >= 16;
	}
}

static bool ecc_clmul_cpu(void)
{
	return boot_cpu_has(X86_FEATURE_PCLMULQDQ) && boot_cpu_has(X86_FEATURE_SSSE3);
}
#else
#define ECC_CLMUL	0
struct ecc_clmul_k;

static inline u64 ecc_clmul(const struct ecc_clmul_k *k, const u8 *d, unsigned int len)
{
	return 0;
}

static inline void ecc_clmul_init(struct ecc_clmul_k *k, u64 glow)
{
}

static inline void ecc_clmul_plan(struct ecc_clmul_k *k, const struct pcm_ecc_geom *g)
{
}

static inline void ecc_sector_clmul(const struct ecc_clmul_k *k, const u8 *d,
				    unsigned int n, u64 *s)
{
}

static inline bool ecc_clmul_cpu(void)
{
	return false;
}
#endif

#endif
