/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Start-gap wear-leveling arithmetic (Qureshi et al., MICRO'09; Onyx
 * section 2.3), with interleaved domains and a static Feistel-network
 * randomization of logical rows.  Pure logic shared by the module, the
 * host unit tests and pcm-model.
 *
 * Logical row L belongs to domain d = L mod K as its row l = L / K.  A
 * domain of N logical rows owns N + 1 physical rows, the backing rows
 * d, d + K, d + 2K, ...; one of them is the gap.  With registers start and
 * gap, domain row l lives at p = (l + start) mod N, plus one if p >= gap.
 */
#ifndef PCM_STARTGAP_H
#define PCM_STARTGAP_H

#include <linux/types.h>

struct pcm_sg_domain {
	u64 start;	/* 0 .. nr_rows - 1 */
	u64 gap;	/* 0 .. nr_rows */
};

/* A gap move: copy physical row @src of the domain into @dst (the gap). */
struct pcm_sg_move {
	u64 src, dst;
	bool wraps;	/* this move advances start */
};

/* Static randomization of a domain's logical rows: a keyed permutation. */
struct pcm_feistel {
	u64 seed;
	u32 half_bits;	/* each half of the network's input, in bits */
};

u64 pcm_sg_domain_rows(u64 logical_rows, u32 domains, u32 d);
u64 pcm_sg_physical_rows(u64 logical_rows, u32 domains);
void pcm_sg_init(struct pcm_sg_domain *dom, u64 nr_rows);
u64 pcm_sg_row_at(const struct pcm_sg_domain *dom, u64 nr_rows, u64 phys);
struct pcm_sg_move pcm_sg_next_move(const struct pcm_sg_domain *dom, u64 nr_rows);
void pcm_sg_apply_move(struct pcm_sg_domain *dom, u64 nr_rows);

void pcm_feistel_init(struct pcm_feistel *f, u64 seed, u64 nr_rows);
u64 pcm_feistel_permute(const struct pcm_feistel *f, u64 nr_rows, u64 row);

/* Domain row -> domain physical row (0 .. nr_rows), never the gap. */
static inline u64 pcm_sg_map(const struct pcm_sg_domain *dom, u64 nr_rows, u64 row)
{
	u64 p = row + dom->start;

	if (p >= nr_rows)
		p -= nr_rows;
	return p >= dom->gap ? p + 1 : p;
}

/*
 * Domain rows from @row on that lie back to back from pcm_sg_map(@row):
 * the run ends where it would reach the gap, where start's rotation wraps
 * and at the domain's last row.  One reading of the registers places a
 * whole multi-row bio.
 */
static inline u64 pcm_sg_run(const struct pcm_sg_domain *dom, u64 nr_rows, u64 row)
{
	u64 p = row + dom->start;

	if (p < nr_rows)
		return (p < dom->gap ? dom->gap : nr_rows) - p;
	p -= nr_rows;
	if (p < dom->gap && dom->gap - p < nr_rows - row)
		return dom->gap - p;
	return nr_rows - row;
}

/* Backing row of domain @d's physical row @p when @domains interleave. */
static inline u64 pcm_sg_backing_row(u32 domains, u32 d, u64 p)
{
	return p * domains + d;
}

#endif
