/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm write-intent bitmap bookkeeping: which bits a write sets, which
 * a clear pass clears, and so which bitmap blocks each must write.  Pure
 * logic, shared by the module (dm-pcm-wib.c, which holds the lock that
 * covers these bitmaps and does the I/O) and the host tests.
 *
 * One bit per region of PCM_WIB_ROWS physical rows, in the on-disk order
 * (bit b is bit b % 8 of byte b / 8), in three bitmaps: the bits as on
 * disk once the writes in flight are done, the regions written since
 * the current clear pass began, and the pass's candidates (the regions
 * written before it began).  A write sets bits PCM_WIB_CHUNK regions at
 * a time, so that it knows which bits it set itself: if its bitmap
 * write fails, it clears those and no other (another write's bit, set
 * and durable, must stay set while that write's data may be in flight).
 */
#ifndef PCM_WIB_H
#define PCM_WIB_H

#include <linux/types.h>

#define PCM_WIB_CHUNK	64	/* regions pcm_wib_set() takes at once */

struct pcm_wib_bits {
	u8 *bits;	/* the bitmap, as on disk once no write is pending */
	u8 *touched;	/* regions written since the current pass began */
	u8 *cand;	/* the current pass's: regions written before it began */
	u64 nbits;
	u32 pending;	/* pcm_wib_set()s whose bits are not yet written */
};

/* Bits [lo, hi] of a bitmap, to be written; empty when lo > hi. */
struct pcm_wib_range {
	u64 lo, hi;
};

static inline bool pcm_wib_test(const u8 *map, u64 b)
{
	return map[b / 8] & (1U << (b % 8));
}

u64 pcm_wib_next(const u8 *map, u64 nbits, u64 from);
bool pcm_wib_touch(struct pcm_wib_bits *m, u64 first, u64 last);
u64 pcm_wib_set(struct pcm_wib_bits *m, u64 first, u32 n);
void pcm_wib_written(struct pcm_wib_bits *m, u64 first, u64 set, bool durable);
bool pcm_wib_pass_begin(struct pcm_wib_bits *m);
void pcm_wib_pass_end(struct pcm_wib_bits *m, bool durable, struct pcm_wib_range *cleared);

#endif
