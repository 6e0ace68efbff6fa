/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-epoch.c: in-flight epochs.  The map path's and end_io's counts
 * are inline here; the wait for them (pcm_grace()) is out of line.
 */
#ifndef DM_PCM_EPOCH_H
#define DM_PCM_EPOCH_H

#include "dm-pcm.h"

/*
 * Bios mapped to rows, per CPU and epoch, as SRCU counts its readers: the
 * map path never takes a shared lock or writes a shared cache line, and a
 * gap move waits only for the bios that were mapped before it held its
 * rows (pcm_grace()).
 */
struct pcm_inflight {
	unsigned long enter[2];
	unsigned long exit[2];
};

/**
 * pcm_epoch_init() - Allocate the per-CPU in-flight counts.
 * @pc: the target, being constructed
 *
 * Return: 0, or -ENOMEM.
 */
int pcm_epoch_init(struct pcm_c *pc);

/**
 * pcm_epoch_exit() - Free what pcm_epoch_init() allocated.
 * @pc: the target, no bio in flight
 */
void pcm_epoch_exit(struct pcm_c *pc);

/**
 * pcm_grace() - Wait until every bio mapped before the call is over.
 * @pc: the target
 *
 * The gates set before the call are seen by all bios mapped after it.  As
 * synchronize_srcu(): drain the idle epoch of stragglers that read the
 * epoch before the last flip, flip, drain the epoch that was current.
 *
 * Context: process; sleeps.  Caller holds @pc->meta_lock.
 */
void pcm_grace(struct pcm_c *pc);

/**
 * pcm_wake_drain() - Wake pcm_grace(): a bio of its epoch exited.
 * @pc: the target
 *
 * pcm_exit_epoch()'s slow path, out of line: a grace period is rare.
 *
 * Context: any.
 */
void pcm_wake_drain(struct pcm_c *pc);

/**
 * pcm_enter_epoch() - Count a bio in the current epoch.
 * @pc: the target
 *
 * The full barrier after the count pairs with pcm_grace()'s: either
 * pcm_grace() sees this enter, or the caller sees the gates it set.
 *
 * Context: the map path (preemption may be on: this_cpu_inc()).
 * Return: the epoch entered (0 or 1), for pcm_exit_epoch().
 */
static inline unsigned int pcm_enter_epoch(struct pcm_c *pc)
{
	unsigned int idx = READ_ONCE(pc->epoch) & 1;

	this_cpu_inc(pc->inflight->enter[idx]);
	smp_mb(); /* pairs with pcm_grace(): it sees this enter, or we its gates */
	return idx;
}

/**
 * pcm_exit_epoch() - Count the exit of a bio of epoch @idx.
 * @pc: the target
 * @idx: what pcm_enter_epoch() returned for it
 *
 * What the bio did comes before its count drops; a waiting pcm_grace()
 * is woken.
 *
 * Context: any.
 */
static inline void pcm_exit_epoch(struct pcm_c *pc, unsigned int idx)
{
	smp_mb(); /* what the bio did comes before its count drops */
	this_cpu_inc(pc->inflight->exit[idx]);
	smp_mb(); /* pairs with pcm_grace(): it sees this exit, or we see draining */
	if (unlikely(READ_ONCE(pc->draining)))
		pcm_wake_drain(pc);
}

/**
 * pcm_io_done() - Drop a bio's in-flight count, once.
 * @pc: the target
 * @io: the bio's per-bio data
 *
 * The bio's backing I/O is over, or it was never issued.  A bio that is
 * not MAPPED (IDLE, or DONE already) is left as it is.
 *
 * Context: any.
 */
static inline void pcm_io_done(struct pcm_c *pc, struct pcm_io *io)
{
	unsigned int idx = io->state - PCM_IO_MAPPED;

	if (io->state < PCM_IO_MAPPED)
		return;
	io->state = PCM_IO_DONE;
	pcm_exit_epoch(pc, idx);
}

#endif
