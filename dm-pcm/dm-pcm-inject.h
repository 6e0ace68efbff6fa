/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-inject.c: injected errors, one-shot and sticky (ecc:bch).  The
 * read's racy look at whether anything is injected is inline here.
 */
#ifndef DM_PCM_INJECT_H
#define DM_PCM_INJECT_H

#include "dm-pcm.h"

/**
 * pcm_inject_init() - Set up the injections (ecc:bch; nothing otherwise).
 * @pc: the target, being constructed
 *
 * Return: 0, or -ENOMEM.
 */
int pcm_inject_init(struct pcm_c *pc);

/**
 * pcm_inject_exit() - Forget every injection and free the table.
 * @pc: the target
 */
void pcm_inject_exit(struct pcm_c *pc);

/**
 * pcm_inject_load() - Load the sticky table at the first resume.
 * @pc: the target, at preresume, after pcm_wib_load()
 *
 * A device this table formatted gets an empty sticky table; otherwise
 * the one on the device is read, the first time.
 *
 * Context: process; sleeps (I/O).
 * Return: 0, or a negative errno.
 */
int pcm_inject_load(struct pcm_c *pc);

/**
 * pcm_inject_save() - Write a sticky injection durably, before it counts.
 * @pc: the target
 * @sector: the logical sector
 * @nbits: its bits in error
 *
 * Context: message; sleeps (I/O).
 * Return: 0, -EROFS (a read-only table), -ENOSPC (the table is full) or
 * another negative errno.
 */
int pcm_inject_save(struct pcm_c *pc, sector_t sector, u32 nbits);

/**
 * pcm_inject_add() - "inject <sector> <nbits> [sticky]".
 * @pc: the target
 * @sector: the logical sector
 * @nbits: bits in error its next read (one-shot) or every read gets
 * @sticky: for every read (after pcm_inject_save())
 *
 * Context: message.
 * Return: 0, or a negative errno.
 */
int pcm_inject_add(struct pcm_c *pc, sector_t sector, u32 nbits, bool sticky);

/**
 * pcm_inject_clear() - "clear_injected": every injection goes.
 * @pc: the target
 *
 * The sticky table is emptied durably.
 *
 * Context: message; sleeps (I/O).
 * Return: 0, or a negative errno.
 */
int pcm_inject_clear(struct pcm_c *pc);

/**
 * pcm_inject_max() - The most bits one "inject" flips.
 * @pc: the target
 *
 * Return: every bit of a sector and its parity.
 */
u32 pcm_inject_max(struct pcm_c *pc);

/**
 * __pcm_inject_take() - Take the bits injected in a logical sector.
 * @pc: the target
 * @sector: the logical sector, being decoded by a read
 *
 * A one-shot is used up.  pcm_inject_take() looked at @pc->nr_injected
 * first.
 *
 * Context: BHs off.
 * Return: the bits in error, 0 if none.
 */
u32 __pcm_inject_take(struct pcm_c *pc, sector_t sector);

/**
 * pcm_injected() - Whether any sector has errors injected.
 * @pc: the target
 *
 * A racy look, as a read takes it.
 *
 * Return: true if an injection may be there.
 */
static inline bool pcm_injected(struct pcm_c *pc)
{
	return READ_ONCE(pc->nr_injected);
}

/**
 * pcm_inject_take() - Take the bits injected in a logical sector, if any.
 * @pc: the target
 * @sector: the logical sector, being decoded by a read
 *
 * One-shots go.
 *
 * Context: BHs off.
 * Return: the bits in error, 0 if none.
 */
static inline u32 pcm_inject_take(struct pcm_c *pc, sector_t sector)
{
	return pcm_injected(pc) ? __pcm_inject_take(pc, sector) : 0;
}

#endif
