// SPDX-License-Identifier: GPL-2.0-only
/*
 * Start-gap arithmetic and the Feistel randomizer; see pcm-startgap.h.
 * Nothing here allocates, sleeps or divides by a value that can be zero.
 */
#include <linux/kernel.h>
#include <linux/math64.h>

#include "pcm-startgap.h"

/* Domain d of K gets one extra row when the rows do not divide evenly. */
u64 pcm_sg_domain_rows(u64 logical_rows, u32 domains, u32 d)
{
	u32 rem;
	u64 q = div_u64_rem(logical_rows, domains, &rem);

	return q + (d < rem);
}

/*
 * Backing rows needed: every domain owns one more physical row than it
 * has logical rows, and the domains interleave, so R logical rows in K
 * domains use exactly the backing rows 0 .. R + K - 1.
 */
u64 pcm_sg_physical_rows(u64 logical_rows, u32 domains)
{
	return logical_rows + domains;
}

/* Qureshi's initial state: the gap is the extra, last physical row. */
void pcm_sg_init(struct pcm_sg_domain *dom, u64 nr_rows)
{
	dom->start = 0;
	dom->gap = nr_rows;
}

/*
 * Inverse of pcm_sg_map(): the domain row stored in physical row @phys,
 * which must not be the gap.  A gap move uses it to know which row's I/O
 * must wait while that row is copied.
 */
u64 pcm_sg_row_at(const struct pcm_sg_domain *dom, u64 nr_rows, u64 phys)
{
	u64 p = phys > dom->gap ? phys - 1 : phys;

	return p >= dom->start ? p - dom->start : p + nr_rows - dom->start;
}

/*
 * The next move copies the row before the gap into the gap; when the gap
 * is at the bottom, the last row wraps around into it and start advances.
 */
struct pcm_sg_move pcm_sg_next_move(const struct pcm_sg_domain *dom, u64 nr_rows)
{
	struct pcm_sg_move m;

	m.dst = dom->gap;
	m.wraps = dom->gap == 0;
	m.src = m.wraps ? nr_rows : dom->gap - 1;
	return m;
}

/* Update the registers once the move's copy is durable. */
void pcm_sg_apply_move(struct pcm_sg_domain *dom, u64 nr_rows)
{
	if (dom->gap) {
		dom->gap--;
		return;
	}
	dom->gap = nr_rows;
	dom->start = dom->start + 1 == nr_rows ? 0 : dom->start + 1;
}

/*
 * Feistel network on 2 * half_bits bits, with cycle walking to stay inside
 * 0 .. nr_rows - 1: a bijection of the domain's rows for any size, as the
 * Randomized Start-Gap of Qureshi et al. needs.  The round function is a
 * 64-bit mixer (splitmix64's finalizer) keyed by the seed and round.
 */
#define PCM_FEISTEL_ROUNDS 4

static u64 mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

void pcm_feistel_init(struct pcm_feistel *f, u64 seed, u64 nr_rows)
{
	u32 bits = 1;

	while (bits < 64 && (1ULL << bits) < nr_rows)
		bits++;
	f->seed = seed;
	f->half_bits = (bits + 1) / 2;
}

static u64 feistel_once(const struct pcm_feistel *f, u64 x)
{
	u64 mask = (1ULL << f->half_bits) - 1;
	u64 left = x >> f->half_bits, right = x & mask, t;
	unsigned int r;

	for (r = 0; r < PCM_FEISTEL_ROUNDS; r++) {
		t = right;
		right = left ^ (mix64(right ^ f->seed ^ ((u64)r << 56)) & mask);
		left = t;
	}
	return (left << f->half_bits) | right;
}

/* Cycle walking: the permutation of 0 .. 4 * nr_rows restricted to nr_rows. */
u64 pcm_feistel_permute(const struct pcm_feistel *f, u64 nr_rows, u64 row)
{
	u64 x = row;

	if (nr_rows < 2)
		return row;
	do {
		x = feistel_once(f, x);
	} while (x >= nr_rows);
	return x;
}
