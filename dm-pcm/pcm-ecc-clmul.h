/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm BCH parity by carry-less multiply (x86-64 PCLMULQDQ): the
 * x86 code of pcm-ecc.c, in a header of its own that stands alone (it
 * reads codewords as the tables do, pcm-ecc-bytes.h, and takes their
 * geometry from pcm-ecc.h).  Everything here is static and inlined into
 * pcm-ecc.c's parity loops (a call per codeword would cost onyx's 64
 * codewords of 8 bytes a sector more than the multiply), but
 * ecc_rows_clmul(), one call per row: pcm-ecc.c is the one file that
 * includes it.  Other architectures get stubs that pcm-ecc.c never calls
 * (ECC_CLMUL is 0 there).
 */
#ifndef PCM_ECC_CLMUL_H
#define PCM_ECC_CLMUL_H

#include <linux/types.h>

#include "pcm-ecc.h"
#include "pcm-ecc-bytes.h"

#ifdef CONFIG_X86_64
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#endif

#define ECC_SECTOR_CW_MAX	32	/* ecc_sector_clmul(): codewords of 16 bytes or more */
#define ECC_ROW_NB_MAX		8	/* ecc_rows_clmul(): blocks a codeword, unrolled */

/* ecc_rows_clmul()'s codeword: its head's pshufb mask, its length */
struct ecc_row_cw {
	u8 mask[16];		/* first h bytes, last first, zeros above */
	u64 len;
	u64 pad;
};

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
	/* ecc_rows_clmul()'s plan: pshufb and pand operands, 16-byte aligned */
	struct ecc_row_cw cw[ECC_SECTOR_CW_MAX] __aligned(16);
	u8 last8[16] __aligned(16);	/* a codeword's last 8 bytes, last first, above 8 zeros */
	u8 out8[16] __aligned(16);	/* S's bytes, first parity byte first */
	u8 lastout[16] __aligned(16);	/* S's pb bytes as the last of 8 */
	u8 prev[16] __aligned(16);	/* the codeword before's last 8 - pb before them */
	u8 cmp[16] __aligned(16);	/* 8 stored bytes to S's frame, the first pb */
	u8 lastcmp[16] __aligned(16);	/* the same, the last pb of 8 */
	u8 nb;			/* blocks of 16 bytes a codeword, after its head */
	bool avx;		/* VEX encoding: three operands, no movdqa */
	bool row;		/* ecc_rows_clmul() serves this geometry */
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
 * A row at a time (ecc_rows_clmul(): pcm_ecc_encode_sectors() and the
 * clean check, pcm_ecc_check_sectors(); bench-ecc's pss-encode-row and
 * pss-check-row, 4,955 / 5,251 before it): pss 2,495 / 2,580, and
 * 2,199 / 2,292 in AVX's encoding (no movdqa: 43 instructions a codeword
 * of 85-86 bytes, 48 a row).  A sector alone by it (pcm_ecc_encode_sector(),
 * pcm_ecc_decode_sector() of a clean sector, each of a row's 8): 2,856 /
 * 3,384.  Geometries its plan refuses (onyx's codewords of 8 bytes, a
 * codeword a sector, parity under 4 bytes, codewords of more than 8
 * blocks or of blocks that differ in number) keep ecc_sector_clmul() or
 * the codeword at a time.
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
#ifdef __SSE2__
#define ECC_XMM_CLOBBERS_ROW	"xmm7", "xmm8"
#else
#define ECC_XMM_CLOBBERS_ROW	"cc"
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

/*
 * A whole row's codewords in one asm block: ecc_rows_clmul().  Each
 * codeword M of L bytes is taken as M x^64, L + 8 bytes whose last 8
 * are zero: its head is the first (L + 8) % 16 bytes (or 16), then
 * nb - 1 blocks of 16, then its last 8 bytes above 8 zero bytes (one
 * movq and a pshufb: no read past the codeword), so that the 128 bits
 * A left are congruent to M x^64 itself and S = A mod G is one Barrett
 * step: q = a1 + the top half of a1 (mu - x^64), S = a0 + the low half
 * of q Glow (no x^64 multiply before it, as ecc_clmul() has).  The blocks
 * are unrolled (.rept, nb a constant: no loop per block) and addressed
 * from the codeword's end.  Each codeword's parity is stored as 8 bytes
 * at once (the next codeword's overwrites the bytes past pb), the last
 * of a sector's as the 8 bytes that end at its parity's end, its first
 * 8 - pb the codeword before's (kept in xmm8 from its stored register:
 * no load of what was just stored, which would wait for the store):
 * nothing is written past a sector's parity,
 * nothing read past it or past the data.  Checking, the stored parity is
 * loaded the same way, put in S's frame and compared: S xor it is ORed
 * into xmm7, zero at the end if every codeword's parity is as stored.
 * Where the CPU has AVX, the folds are in its three-operand VEX encoding
 * (no movdqa; .if in the asm, %[avx] a constant; SSE's encoding and
 * VEX's 128-bit one mix at no cost, as both leave the upper halves
 * clean).  Registers as ECC_ASM_FOLD's; xmm6 holds last8, xmm7 out8
 * (encoding) or the difference (checking), xmm8 the codeword before the
 * last's parity bytes (encoding).
 */
#define ECC_ROW_BODY_SSE	/* S of the codeword at %[p] in xmm0, %[p] at its end */ \
	"movdqu (%[p]), %%xmm0\n\t"					\
	"pshufb (%[t]), %%xmm0\n\t"		/* A: the head */	\
	"add 16(%[t]), %[p]\n\t"					\
	".set .Lecc_off, -8 - 16 * (%c[nb] - 1)\n\t"			\
	".rept %c[nb] - 1\n\t"						\
	"movdqa %%xmm0, %%xmm2\n\t"					\
	"pclmulqdq $0x00, %%xmm1, %%xmm0\n\t"				\
	"pclmulqdq $0x11, %%xmm1, %%xmm2\n\t"				\
	"movdqu .Lecc_off(%[p]), %%xmm3\n\t"				\
	"pshufb %%xmm5, %%xmm3\n\t"					\
	"pxor %%xmm2, %%xmm0\n\t"					\
	"pxor %%xmm3, %%xmm0\n\t"					\
	".set .Lecc_off, .Lecc_off + 16\n\t"				\
	".endr\n\t"							\
	"movdqa %%xmm0, %%xmm2\n\t"		/* the last 8 bytes */	\
	"pclmulqdq $0x00, %%xmm1, %%xmm0\n\t"				\
	"pclmulqdq $0x11, %%xmm1, %%xmm2\n\t"				\
	"movq -8(%[p]), %%xmm3\n\t"					\
	"pshufb %%xmm6, %%xmm3\n\t"					\
	"pxor %%xmm2, %%xmm0\n\t"					\
	"pxor %%xmm3, %%xmm0\n\t"					\
	"movdqa %%xmm0, %%xmm2\n\t"		/* Barrett */		\
	"pclmulqdq $0x01, %%xmm4, %%xmm2\n\t"	/* a1 (mu - x^64) */	\
	"pxor %%xmm0, %%xmm2\n\t"		/* top half: q */	\
	"pclmulqdq $0x11, %%xmm4, %%xmm2\n\t"	/* q Glow */		\
	"pxor %%xmm2, %%xmm0\n\t"		/* low half: S */
#define ECC_ROW_BODY_AVX	/* ECC_ROW_BODY_SSE's, in AVX's three operands: no movdqa */ \
	"vmovdqu (%[p]), %%xmm0\n\t"				\
	"vpshufb (%[t]), %%xmm0, %%xmm0\n\t"			\
	"add 16(%[t]), %[p]\n\t"					\
	".set .Lecc_off, -8 - 16 * (%c[nb] - 1)\n\t"			\
	".rept %c[nb] - 1\n\t"						\
	"vpclmulqdq $0x11, %%xmm1, %%xmm0, %%xmm2\n\t"		\
	"vpclmulqdq $0x00, %%xmm1, %%xmm0, %%xmm0\n\t"		\
	"vmovdqu .Lecc_off(%[p]), %%xmm3\n\t"				\
	"vpshufb %%xmm5, %%xmm3, %%xmm3\n\t"				\
	"vpxor %%xmm2, %%xmm0, %%xmm0\n\t"			\
	"vpxor %%xmm3, %%xmm0, %%xmm0\n\t"			\
	".set .Lecc_off, .Lecc_off + 16\n\t"				\
	".endr\n\t"							\
	"vpclmulqdq $0x11, %%xmm1, %%xmm0, %%xmm2\n\t"		\
	"vpclmulqdq $0x00, %%xmm1, %%xmm0, %%xmm0\n\t"		\
	"vmovq -8(%[p]), %%xmm3\n\t"					\
	"vpshufb %%xmm6, %%xmm3, %%xmm3\n\t"				\
	"vpxor %%xmm2, %%xmm0, %%xmm0\n\t"			\
	"vpxor %%xmm3, %%xmm0, %%xmm0\n\t"			\
	"vpclmulqdq $0x01, %%xmm4, %%xmm0, %%xmm2\n\t"		\
	"vpxor %%xmm0, %%xmm2, %%xmm2\n\t"				\
	"vpclmulqdq $0x11, %%xmm4, %%xmm2, %%xmm2\n\t"			\
	"vpxor %%xmm2, %%xmm0, %%xmm0\n\t"
#define ECC_ROW_BODY	/* in the encoding %[avx] says */		\
	".if %c[avx]\n\t"						\
	ECC_ROW_BODY_AVX						\
	".else\n\t"							\
	ECC_ROW_BODY_SSE						\
	".endif\n\t"
#define ECC_ROW_HEAD	/* constants, then each sector */		\
	"movdqu %[fold], %%xmm1\n\t"					\
	"movdqu %[bar], %%xmm4\n\t"					\
	"movdqu %[bswap], %%xmm5\n\t"					\
	"movdqu %[last8], %%xmm6\n"					\
	"0:\n\t"							\
	"lea %[cw], %[t]\n\t"						\
	"mov %[ncw], %[c]\n"						\
	"1:\n\t"
#define ECC_ROW_NEXT	/* the sector's codewords but its last */	\
	"add $32, %[t]\n\t"						\
	"dec %[c]\n\t"							\
	"jnz 1b\n\t"
#define ECC_ROW_TAIL	/* the next sector's parity */			\
	"add %[skip], %[o]\n\t"						\
	"dec %[n]\n\t"							\
	"jnz 0b\n\t"

static __always_inline void ecc_rows_encode(const struct ecc_clmul_k *k, const u8 *d,
					    unsigned long n, u8 *o, unsigned long ncw,
					    long pb, long skip, const unsigned int nb,
					    const bool avx)
{
	const struct ecc_row_cw *t;
	unsigned long c;

	asm volatile("movdqu %[out8], %%xmm7\n\t"
		     ECC_ROW_HEAD
		     ECC_ROW_BODY
		     ".if %c[avx]\n\t"
		     "vpshufb %%xmm7, %%xmm0, %%xmm0\n\t"
		     ".else\n\t"
		     "pshufb %%xmm7, %%xmm0\n\t"
		     ".endif\n\t"
		     "movq %%xmm0, (%[o])\n\t"
		     "add %[pb], %[o]\n\t"
		     ECC_ROW_NEXT
		     ".if %c[avx]\n\t"		/* the codeword before's */
		     "vpshufb %[prev], %%xmm0, %%xmm8\n\t"
		     ".else\n\t"
		     "movdqa %%xmm0, %%xmm8\n\t"
		     "pshufb %[prev], %%xmm8\n\t"
		     ".endif\n\t"
		     ECC_ROW_BODY
		     ".if %c[avx]\n\t"
		     "vpshufb %[lastout], %%xmm0, %%xmm0\n\t"
		     ".else\n\t"
		     "pshufb %[lastout], %%xmm0\n\t"
		     ".endif\n\t"
		     "por %%xmm8, %%xmm0\n\t"
		     "lea -8(%[o], %[pb]), %[o]\n\t"	/* the 8 bytes ending at pb */
		     "movq %%xmm0, (%[o])\n\t"
		     ECC_ROW_TAIL
		     : [p] "+r" (d), [n] "+r" (n), [o] "+r" (o), [t] "=&r" (t), [c] "=&r" (c)
		     : [nb] "i" (nb), [avx] "i" (avx), [ncw] "rm" (ncw), [pb] "r" (pb),
		       [skip] "rm" (skip), [cw] "m" (k->cw), [fold] "m" (k->fold),
		       [bar] "m" (k->barrett), [bswap] "m" (k->bswap), [last8] "m" (k->last8),
		       [out8] "m" (k->out8), [lastout] "m" (k->lastout), [prev] "m" (k->prev)
		     : "memory", "cc", ECC_XMM_CLOBBERS, ECC_XMM_CLOBBERS_ROW);
}

static __always_inline bool ecc_rows_check(const struct ecc_clmul_k *k, const u8 *d,
					   unsigned long n, const u8 *o, unsigned long ncw,
					   long pb, long skip, const unsigned int nb,
					   const bool avx)
{
	const struct ecc_row_cw *t;
	unsigned long c;
	u64 diff;

	asm("pxor %%xmm7, %%xmm7\n\t"
	    ECC_ROW_HEAD
	    ECC_ROW_BODY
	    "movq (%[o]), %%xmm3\n\t"
	    "add %[pb], %[o]\n\t"
	    ".if %c[avx]\n\t"
	    "vpshufb %[cmp], %%xmm3, %%xmm3\n\t"
	    ".else\n\t"
	    "pshufb %[cmp], %%xmm3\n\t"
	    ".endif\n\t"
	    "pxor %%xmm3, %%xmm0\n\t"
	    "por %%xmm0, %%xmm7\n\t"
	    ECC_ROW_NEXT
	    ECC_ROW_BODY
	    "lea -8(%[o], %[pb]), %[o]\n\t"	/* the 8 bytes ending at pb */
	    "movq (%[o]), %%xmm3\n\t"
	    ".if %c[avx]\n\t"
	    "vpshufb %[lastcmp], %%xmm3, %%xmm3\n\t"
	    ".else\n\t"
	    "pshufb %[lastcmp], %%xmm3\n\t"
	    ".endif\n\t"
	    "pxor %%xmm3, %%xmm0\n\t"
	    "por %%xmm0, %%xmm7\n\t"
	    ECC_ROW_TAIL
	    "movq %%xmm7, %[diff]"
	    : [p] "+r" (d), [n] "+r" (n), [o] "+r" (o), [t] "=&r" (t), [c] "=&r" (c),
	      [diff] "=r" (diff)
	    : [nb] "i" (nb), [avx] "i" (avx), [ncw] "rm" (ncw), [pb] "r" (pb),
	      [skip] "rm" (skip), [cw] "m" (k->cw), [fold] "m" (k->fold),
	      [bar] "m" (k->barrett), [bswap] "m" (k->bswap), [last8] "m" (k->last8),
	      [cmp] "m" (k->cmp), [lastcmp] "m" (k->lastcmp)
	    : "memory", "cc", ECC_XMM_CLOBBERS, ECC_XMM_CLOBBERS_ROW);
	return !diff;
}

/* ecc_rows_clmul()'s work for @nb, a constant: the encoding and the asm */
static __always_inline bool ecc_rows_nb(const struct ecc_clmul_k *k, const u8 *d,
					unsigned long n, u8 *o, unsigned long ncw, long pb,
					long skip, bool check, const unsigned int nb)
{
	if (check)
		return k->avx ? ecc_rows_check(k, d, n, o, ncw, pb, skip, nb, true) :
				ecc_rows_check(k, d, n, o, ncw, pb, skip, nb, false);
	if (k->avx)
		ecc_rows_encode(k, d, n, o, ncw, pb, skip, nb, true);
	else
		ecc_rows_encode(k, d, n, o, ncw, pb, skip, nb, false);
	return true;
}

/*
 * The parity of @n consecutive sectors at @d, a sector's every @stride
 * bytes at @o (@check: compared with what is there instead, and whether
 * all of it is the same returned), nb a constant for each case.  One
 * copy (noinline): 16 unrolled bodies, a call per row or sector.
 */
static noinline bool ecc_rows_clmul(const struct ecc_clmul_k *k, const u8 *d,
				    unsigned int n, u8 *o, unsigned int stride,
				    unsigned int cws, unsigned int pb, bool check)
{
	long skip = (long)stride - (long)(cws - 1) * pb - ((long)pb - 8);

	switch (k->nb) {
	case 1:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 1);
	case 2:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 2);
	case 3:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 3);
	case 4:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 4);
	case 5:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 5);
	case 6:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 6);
	case 7:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 7);
	default:
		return ecc_rows_nb(k, d, n, o, cws - 1, pb, skip, check, 8);
	}
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

/* Whether VEX-encoded SSE may run: AVX, and its registers' state saved */
static bool ecc_avx_cpu(void)
{
	return boot_cpu_has(X86_FEATURE_AVX) &&
	       cpu_has_xfeatures(XFEATURE_MASK_SSE | XFEATURE_MASK_YMM, NULL);
}

/*
 * ecc_rows_clmul()'s plan for @g's codewords (@pb parity bytes each):
 * where each is 16 bytes or more (its head is loaded as 16), all have
 * the same number of blocks after their heads (up to ECC_ROW_NB_MAX),
 * and a sector's parity takes the 8-byte stores (pb >= 4: only its last
 * codeword's 8 bytes would go past it; two codewords at least, so that
 * the 8 bytes that end its parity start within it), and the operands
 * are aligned as pshufb's and pand's must be.
 */
static void ecc_rows_plan(struct ecc_clmul_k *k, const struct pcm_ecc_geom *g)
{
	unsigned int pb = g->parity_bytes, i, j, len, h, nb;

	k->row = g->codewords >= 2 && g->codewords <= ECC_SECTOR_CW_MAX && pb >= 4 &&
		 pb <= 8 && !((unsigned long)k->cw % 16);
	k->nb = 0;
	k->avx = ecc_avx_cpu();
	for (i = 0; k->row && i < g->codewords; i++) {
		len = pcm_ecc_cw_len(g, i);
		h = (len + 8 - 1) % 16 + 1;
		nb = (len + 8 - h) / 16;
		if (len < 16 || nb > ECC_ROW_NB_MAX || (i && nb != k->nb))
			k->row = false;
		k->nb = nb;
		k->cw[i].len = len;
		k->cw[i].pad = 0;
		for (j = 0; j < 16; j++)
			k->cw[i].mask[j] = j < h ? h - 1 - j : 0x80;
	}
	for (j = 0; j < 16; j++) {
		/* movq put the last 8 bytes in bytes 0-7: byte 15 - j is byte j */
		k->last8[j] = j >= 8 ? 15 - j : 0x80;
		k->out8[j] = j < 8 ? 7 - j : 0x80;
		/* parity byte i: byte 7 - i of S, byte 8 - pb + i of the 8 that end it */
		k->lastout[j] = j >= 8 - pb && j < 8 ? 7 - (j - (8 - pb)) : 0x80;
		/* out8's bytes pb - (8 - pb) to pb - 1 as bytes 0 to 7 - pb */
		k->prev[j] = j < 8 - pb ? 2 * pb - 8 + j : 0x80;
		k->cmp[j] = j < 8 && j >= 8 - pb ? 7 - j : 0x80;
		k->lastcmp[j] = j < 8 && j >= 8 - pb ? 8 - pb + 7 - j : 0x80;
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

static inline void ecc_rows_plan(struct ecc_clmul_k *k, const struct pcm_ecc_geom *g)
{
}

static inline bool ecc_rows_clmul(const struct ecc_clmul_k *k, const u8 *d, unsigned int n,
				  u8 *o, unsigned int stride, unsigned int cws,
				  unsigned int pb, const bool check)
{
	return false;
}

static inline bool ecc_clmul_cpu(void)
{
	return false;
}
#endif

#endif
