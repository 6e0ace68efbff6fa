/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-wib.c: the write-intent bitmap (ecc:bch).
 */
#ifndef DM_PCM_WIB_H
#define DM_PCM_WIB_H

#include "dm-pcm.h"

/**
 * pcm_wib_init() - Allocate the bitmap (ecc:bch; nothing otherwise).
 * @pc: the target, being constructed
 *
 * Return: 0, or -ENOMEM.
 */
int pcm_wib_init(struct pcm_c *pc);

/**
 * pcm_wib_exit() - Stop the clear pass and free the bitmap.
 * @pc: the target
 */
void pcm_wib_exit(struct pcm_c *pc);

/**
 * pcm_wib_load() - Format the bitmap, or resync the rows of its set bits.
 * @pc: the target, at preresume, its superblock loaded
 *
 * The sticky injections are loaded next (pcm_inject_load()); the device
 * accepts I/O only after both return.
 *
 * Context: process; sleeps (I/O).
 * Return: 0, or a negative errno.
 */
int pcm_wib_load(struct pcm_c *pc);

/**
 * pcm_wib_mark() - Set and write the bits of backing sectors' regions.
 * @pc: the target
 * @s: the first backing sector
 * @sectors: how many
 *
 * The ECC worker calls it before it writes the parity of sectors
 * @s..@s+@sectors-1: their regions' bits are then set and durable.
 *
 * Context: process; sleeps (I/O).
 * Return: 0, or a negative errno.
 */
int pcm_wib_mark(struct pcm_c *pc, sector_t s, u32 sectors);

/**
 * pcm_wib_marked() - Whether backing sectors' regions are marked durably.
 * @pc: the target
 * @s: the first backing sector
 * @sectors: how many
 *
 * The regions of @s..@s+@sectors-1 count as written for the clear pass,
 * as with pcm_wib_mark().
 *
 * Context: the map path: no sleeping.
 * Return: true if every bit is set and durable; false if one is clear or
 * a bitmap write is pending (then pcm_wib_mark(), from the worker).
 */
bool pcm_wib_marked(struct pcm_c *pc, sector_t s, u32 sectors);

/**
 * pcm_wib_torn() - Whether a row's parity may not match its data.
 * @pc: the target
 * @slot: the row's first backing sector
 *
 * Return: true for a row of a read-only table loaded with its bit set.
 */
bool pcm_wib_torn(struct pcm_c *pc, sector_t slot);

/**
 * pcm_wib_quiesce() - Postsuspend: clear what can be cleared now.
 * @pc: the target, no bio in flight
 *
 * Context: process; sleeps.
 */
void pcm_wib_quiesce(struct pcm_c *pc);

/**
 * pcm_wib_clear_now() - Run the clear pass now (postsuspend, "persist").
 * @pc: the target
 *
 * Context: process; sleeps.
 */
void pcm_wib_clear_now(struct pcm_c *pc);

/**
 * pcm_wib_status() - Emit the bitmap's figure into a status line.
 * @pc: the target
 * @result: the status buffer
 * @maxlen: its size
 * @szp: where the line ends in it, moved on past what is emitted
 *
 * After the ECC figures.
 */
void pcm_wib_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		    unsigned int *szp);

#endif
