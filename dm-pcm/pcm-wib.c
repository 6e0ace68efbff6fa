// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm write-intent bitmap bookkeeping (pcm-wib.h): pure logic, built
 * into the module and the host tests.
 */
#include "pcm-wib.h"

static void set8(u8 *map, u64 b)
{
	map[b / 8] |= 1U << (b % 8);
}

static void clear8(u8 *map, u64 b)
{
	map[b / 8] &= ~(1U << (b % 8));
}

static u64 bytes_of(u64 nbits)
{
	return (nbits + 7) / 8;
}

/* The first set bit of @map at or after @from; @nbits when there is none. */
u64 pcm_wib_next(const u8 *map, u64 nbits, u64 from)
{
	u64 b = from;

	while (b < nbits) {
		if (pcm_wib_test(map, b))
			return b;
		/* a whole byte clear: the next */
		b = !(b % 8) && !map[b / 8] ? b + 8 : b + 1;
	}
	return nbits;
}

/*
 * A write of regions [@first, @last] (@last < nbits): they count as
 * written for the clear pass.  Returns whether the write must go on
 * with pcm_wib_set() before its parity: one of its bits is clear, or a
 * bit was set whose bitmap write is not done (it may be one of these;
 * the caller then waits for that write, see dm-pcm-wib.c).
 */
bool pcm_wib_touch(struct pcm_wib_bits *m, u64 first, u64 last)
{
	bool clear = false;
	u64 b;

	for (b = first; b <= last; b++) {
		set8(m->touched, b);
		if (!pcm_wib_test(m->bits, b))
			clear = true;
	}
	return clear || m->pending;
}

/*
 * Set the bits of regions [@first, @first + @n), @n <= PCM_WIB_CHUNK.
 * Returns those it set, bit i for region @first + i; when there is any,
 * the caller writes the bitmap's blocks from the lowest to the highest
 * and then calls pcm_wib_written().
 */
u64 pcm_wib_set(struct pcm_wib_bits *m, u64 first, u32 n)
{
	u64 set = 0;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!pcm_wib_test(m->bits, first + i)) {
			set8(m->bits, first + i);
			set |= 1ULL << i;
		}
	}
	if (set)
		m->pending++;
	return set;
}

/*
 * The bitmap write of the bits a pcm_wib_set() set (@set) is done.  If
 * it failed (!@durable), those bits are cleared again, and no other, so
 * that the next write of their regions writes them.
 */
void pcm_wib_written(struct pcm_wib_bits *m, u64 first, u64 set, bool durable)
{
	u32 i;

	for (i = 0; i < PCM_WIB_CHUNK && !durable; i++)
		if (set & (1ULL << i))
			clear8(m->bits, first + i);
	m->pending--;
}

/*
 * A clear pass begins: the regions written so far become its
 * candidates, and writes from now on are counted apart.  Returns
 * whether there is any candidate.
 */
bool pcm_wib_pass_begin(struct pcm_wib_bits *m)
{
	u64 i, n = bytes_of(m->nbits);
	u8 *t = m->cand;	/* empty: the last pass ended */

	m->cand = m->touched;
	m->touched = t;
	for (i = 0; i < n; i++)
		if (m->cand[i])
			return true;
	return false;
}

/* Widen @r to the set bits of byte @i's @c. */
static void range_add(struct pcm_wib_range *r, u64 i, u8 c)
{
	u32 lo = 0, hi = 7;

	while (!(c & (1U << lo)))
		lo++;
	while (!(c & (1U << hi)))
		hi--;
	if (i * 8 + lo < r->lo)
		r->lo = i * 8 + lo;
	r->hi = i * 8 + hi;
}

/*
 * A clear pass ends: every write mapped before it began is over and, if
 * @durable, flushed with its parity.  Then the candidates that no write
 * touched since are cleared (@cleared: the bits whose blocks to write);
 * if not durable, the candidates stay set and count as written for the
 * next pass.  The candidates are left empty.
 */
void pcm_wib_pass_end(struct pcm_wib_bits *m, bool durable, struct pcm_wib_range *cleared)
{
	u64 i, n = bytes_of(m->nbits);
	u8 c;

	cleared->lo = ~0ULL;
	cleared->hi = 0;
	for (i = 0; i < n; i++) {
		c = m->cand[i];
		if (!c)
			continue;
		m->cand[i] = 0;
		if (!durable) {
			m->touched[i] |= c;
			continue;
		}
		/* a region written since (a bit set again) keeps its bit */
		c &= ~m->touched[i] & m->bits[i];
		if (!c)
			continue;
		m->bits[i] &= ~c;
		range_add(cleared, i, c);
	}
}
