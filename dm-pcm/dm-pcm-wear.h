/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-wear.c: wear counters (wear:on|ROWS).  The map path's count is
 * inline here.
 */
#ifndef DM_PCM_WEAR_H
#define DM_PCM_WEAR_H

#include "dm-pcm.h"

/*
 * Wear counters: @ctr[(slot - offset) >> @shift] counts the writes of a
 * group of @group physical rows.  The map path reads and stores a counter
 * and @dirty without a lock; the rest is @lock's.
 */
struct pcm_wear {
	u32 *ctr;
	u64 nr;				/* counters */
	u32 group;			/* rows per counter, a power of two */
	u32 shift;			/* backing sectors -> counter */
	u64 endurance;
	u32 limit;			/* a counter reaches endurance: 0, never */
	bool dirty;			/* counted since the last persist */
	struct pcm_c *pc;
	struct mutex lock;		/* below: loading and persisting */
	bool loaded;
	u64 seq;			/* the last write's; copy seq & 1 */
	void *buf;			/* PCM_WEAR_CHUNK blocks */
	struct delayed_work work;	/* the periodic persist */
	u64 persists, errors;
};

/**
 * pcm_wear_init() - Allocate the counters, all zero until loaded.
 * @pc: the target, being constructed (nothing with wear:off)
 *
 * Return: 0, or -ENOMEM.
 */
int pcm_wear_init(struct pcm_c *pc);

/**
 * pcm_wear_exit() - Stop the periodic persist and free the counters.
 * @pc: the target
 */
void pcm_wear_exit(struct pcm_c *pc);

/**
 * pcm_wear_load() - Load the counters at the first preresume.
 * @pc: the target
 * @fresh: the device was formatted just now
 *
 * The first time, the counters come from the device; @fresh: zeros,
 * written to both copies past whatever an earlier format left there.
 * Later resumes keep what RAM counted.
 *
 * Context: process; sleeps (I/O).
 * Return: 0, or a negative errno.
 */
int pcm_wear_load(struct pcm_c *pc, bool fresh);

/**
 * pcm_wear_persist() - Write the counters to the copy after the last.
 * @pc: the target
 * @force: even if nothing was counted since the last persist
 *
 * FUA, a chunk at a time; the copy not written keeps the previous
 * period.  A failure is said and the counts stay dirty for the next try;
 * it never fails the device.
 *
 * Context: process; sleeps (I/O).
 * Return: 0, or a negative errno.
 */
int pcm_wear_persist(struct pcm_c *pc, bool force);

/**
 * pcm_wear_resume() - Resume: start the periodic persist.
 * @pc: the target
 */
void pcm_wear_resume(struct pcm_c *pc);

/**
 * pcm_wear_suspend() - Postsuspend: stop the periodic persist, persist.
 * @pc: the target
 *
 * Context: process; sleeps.
 */
void pcm_wear_suspend(struct pcm_c *pc);

/**
 * pcm_wear_row_x() - A row's wear x.
 * @pc: the target
 * @slot: the row's first backing sector
 *
 * Return: writes / endurance, Q16 (pcm_wear_x()); 0 without wear.
 */
u32 pcm_wear_row_x(struct pcm_c *pc, sector_t slot);

/**
 * pcm_wear_read_rber() - The rber a read of a row sees.
 * @pc: the target
 * @slot: the row's first backing sector
 * @rber: the table's rber
 *
 * Return: @rber raised by the row's wear.
 */
u64 pcm_wear_read_rber(struct pcm_c *pc, sector_t slot, u64 rber);

/**
 * pcm_wear_prog_q16() - A write's program time at the row's wear.
 * @pc: the target
 * @slot: the row's first backing sector
 *
 * For the timing model; one counter read, no lock.
 *
 * Return: the factor, Q16 (pcm_wear_lat_curve); 0 without wear.
 */
u32 pcm_wear_prog_q16(struct pcm_c *pc, sector_t slot);

/**
 * pcm_wear_passed() - A row's counter reached its endurance: trace it.
 * @pc: the target
 * @slot: the row's first backing sector
 *
 * pcm_wear_count()'s slow path (pcm:pcm_endurance).
 *
 * Context: the map path.
 */
void pcm_wear_passed(struct pcm_c *pc, sector_t slot);

/**
 * pcm_wear_stuck_begin() - Start on a worn row's stuck-at cells.
 * @pc: the target
 * @slot: the row's first backing sector
 * @sector_bits: a sector's bits, in ECC numbering
 * @it: the iterator to set up, for pcm_stuck_sector() and pcm_stuck_next()
 *
 * Its sectors' cells one by one, deterministic in the sector and seed:
 * every read fails the same way.
 */
void pcm_wear_stuck_begin(struct pcm_c *pc, sector_t slot, u32 sector_bits,
			  struct pcm_stuck_iter *it);

/**
 * pcm_wear_status() - Emit wear_max:N wear_mean:N into a status line.
 * @pc: the target
 * @result: the status buffer
 * @maxlen: its size
 * @szp: where the line ends in it, moved on past what is emitted
 *
 * Writes per row; 0 0 without wear.
 */
void pcm_wear_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		     unsigned int *szp);

/**
 * pcm_wear_message() - "wear": the rows' wear and the projected lifetime.
 * @pc: the target
 * @argc: the message's words
 * @result: the message's result buffer
 * @maxlen: its size
 *
 * The histogram of rows by wear in endurance / 8 steps (the last bucket
 * takes everything from 15/8 endurance on), max and mean writes per row,
 * max/mean (1.00: perfectly level), the share of endurance the most worn
 * rows used, and the projected lifetime: the row writes the device takes
 * before its most worn rows reach endurance at today's spread, and if
 * wear were perfectly even.
 *
 * Return: 1 (a result), or -EINVAL.
 */
int pcm_wear_message(struct pcm_c *pc, unsigned int argc, char *result,
		     unsigned int maxlen);

/**
 * pcm_wear_count() - Count a write of a row.
 * @pc: the target
 * @slot: the row's first backing sector
 *
 * A row piece of a write or write-zeroes, or a gap move's destination.
 * A racy increment, not an atomic: dm-pcm-wear.c says why.
 *
 * Context: the map path, or the mover; no lock.
 */
static inline void pcm_wear_count(struct pcm_c *pc, sector_t slot)
{
	struct pcm_wear *w = pc->wear;
	u32 *c, v;

	if (likely(!w))
		return;
	c = &w->ctr[(slot - pc->layout.offset) >> w->shift];
	v = READ_ONCE(*c);
	if (likely(v != U32_MAX))
		WRITE_ONCE(*c, v + 1);
	if (unlikely(v + 1 == w->limit))
		pcm_wear_passed(pc, slot);
	if (unlikely(!READ_ONCE(w->dirty)))
		WRITE_ONCE(w->dirty, true);
}

#endif
