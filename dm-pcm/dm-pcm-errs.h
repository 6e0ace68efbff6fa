/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-errs.c: the rows' read numbers, and ecc:none's raw errors.
 */
#ifndef DM_PCM_ERRS_H
#define DM_PCM_ERRS_H

#include "dm-pcm.h"

/**
 * pcm_errs_enable() - Make the read numbers, 4 bytes per physical row.
 * @pc: the target
 *
 * Nothing if they are made already.
 *
 * Context: constructor or message; may sleep.
 * Return: 0, or -ENOMEM.
 */
int pcm_errs_enable(struct pcm_c *pc);

/**
 * pcm_errs_exit() - Free the read numbers.
 * @pc: the target
 */
void pcm_errs_exit(struct pcm_c *pc);

/**
 * pcm_row_read() - Take the read number of a physical row.
 * @pc: the target
 * @slot: the row's first backing sector
 *
 * Return: how many reads of the row drew errors before this one (0
 * before the numbers are made).
 */
u32 pcm_row_read(struct pcm_c *pc, sector_t slot);

/**
 * pcm_errs_rber() - "set rber": ecc:none reads take the raw path above 0.
 * @pc: the target
 * @rber: the new raw bit error rate
 */
void pcm_errs_rber(struct pcm_c *pc, u64 rber);

/**
 * pcm_raw_remapped() - A raw read is remapped: note where its data lies.
 * @pc: the target
 * @bio: the read
 * @io: its per-bio data
 *
 * Context: the map path.
 * Return: DM_MAPIO_REMAPPED.
 */
int pcm_raw_remapped(struct pcm_c *pc, struct bio *bio, struct pcm_io *io);

/**
 * pcm_raw_end_io() - A raw read's data is in: hold it for its errors.
 * @pc: the target
 * @bio: the read
 * @io: its per-bio data
 *
 * Context: bio completion.
 * Return: DM_ENDIO_INCOMPLETE: the worker completes the bio again.
 */
int pcm_raw_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io);

#endif
