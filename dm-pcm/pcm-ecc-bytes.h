/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm parity code's reads of a codeword: 8 bytes as a big-endian
 * number, and a codeword's first block.  Both parity engines read the
 * data so, the tables' (pcm-ecc.c) and carry-less multiply's
 * (pcm-ecc-clmul.h); inline, as their loops need them.
 */
#ifndef PCM_ECC_BYTES_H
#define PCM_ECC_BYTES_H

#include <linux/types.h>

/* 8 bytes as a big-endian number (the compiler makes it one load and a swap) */
static inline u64 ecc_be64(const u8 *p)
{
	return (u64)p[0] << 56 | (u64)p[1] << 48 | (u64)p[2] << 40 | (u64)p[3] << 32 |
	       (u64)p[4] << 24 | (u64)p[5] << 16 | (u64)p[6] << 8 | p[7];
}

/*
 * A codeword's first block into @x: its first len % 8 bytes as the last of
 * a block (after zeros), or 8 bytes; returns how many.
 */
static __always_inline unsigned int ecc_head(const u8 *d, unsigned int len, u64 *x)
{
	unsigned int h = len % 8, i;

	if (!h) {
		*x = ecc_be64(d);
		return 8;
	}
	if (len > 8) {
		*x = ecc_be64(d) >> (64 - 8 * h);
		return h;
	}
	*x = 0;
	for (i = 0; i < h; i++)
		*x = *x << 8 | d[i];
	return h;
}

#endif
