/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-io.c: map and end_io, parked bios, and what the mover calls to
 * hold, switch and release rows; the mover's doorbell.
 */
#ifndef DM_PCM_IO_H
#define DM_PCM_IO_H

#include "dm-pcm.h"

/**
 * pcm_map() - The target's map method.
 * @ti: the target
 * @bio: the bio to map
 *
 * The clone's bi_private holds its epoch (PCM_EPOCH_TAG) or its pcm_io.
 *
 * Context: the map path: no sleeping.
 * Return: a DM_MAPIO_* value.
 */
int pcm_map(struct dm_target *ti, struct bio *bio);

/**
 * pcm_end_io() - The target's end_io method.
 * @ti: the target
 * @bio: the bio completed
 * @error: its status, which end_io may change
 *
 * Idempotent: a held or re-decoded completion comes back here.  The
 * in-flight count drops when the backing I/O is over, not when the model
 * lets the bio go.
 *
 * Context: bio completion.
 * Return: a DM_ENDIO_* value.
 */
int pcm_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error);

/**
 * pcm_move_due() - Ring the mover's doorbell: writes made a move due.
 * @pc: the target
 *
 * Context: any but hard IRQ.
 */
void pcm_move_due(struct pcm_c *pc);

/**
 * pcm_hold_row() - Park the writes of a domain row from now on.
 * @dom: the domain
 * @row: its row about to be copied
 *
 * The mover then waits for the bios mapped before (pcm_grace()).
 *
 * Context: the mover; takes @dom->lock.
 */
void pcm_hold_row(struct pcm_domain *dom, u64 row);

/**
 * pcm_switch() - A move in @dom is over: switch registers, stop holding.
 * @pc: the target
 * @dom: the domain
 * @next: its registers after the move; NULL: the copy failed, keep them
 * @paid: it was a move that writes owed
 *
 * Context: the mover; takes @dom->lock.
 */
void pcm_switch(struct pcm_c *pc, struct pcm_domain *dom,
		const struct pcm_sg_domain *next, bool paid);

/**
 * pcm_release() - Submit parked bios from the head, in arrival order.
 * @pc: the target
 * @dom: the domain
 * @all: release everything (no mover will run: suspended)
 *
 * Bios go while they may; a released write can make a move due and stop
 * the release there.  The batch is submitted outside @dom->lock, and the
 * gate stays up meanwhile (releasing), so a new write cannot overtake it.
 *
 * Context: process.
 */
void pcm_release(struct pcm_c *pc, struct pcm_domain *dom, bool all);

#endif
