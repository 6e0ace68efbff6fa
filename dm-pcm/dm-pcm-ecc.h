/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-ecc.c: ECC coding on the data path (ecc:bch).
 */
#ifndef DM_PCM_ECC_H
#define DM_PCM_ECC_H

#include "dm-pcm.h"

/* ECC status figures, in the order status prints them: append only. */
enum pcm_ecc_fig {
	PCM_ECC_CORRECTED_BITS,
	PCM_ECC_CORRECTED_SECTORS,
	PCM_ECC_UNCORRECTABLE_SECTORS,
	PCM_ECC_SILENT_SECTORS,
	PCM_ECC_INJECTED_BITS,
	PCM_ECC_RAW_BITS,
	PCM_ECC_NR_FIGS
};

/**
 * pcm_ecc_dev_init() - Set up the codecs, buffers and worker of ecc:bch.
 * @pc: the target, being constructed
 *
 * Nothing without ecc:bch.
 *
 * Return: 0, or a negative errno.
 */
int pcm_ecc_dev_init(struct pcm_c *pc);

/**
 * pcm_ecc_dev_exit() - Free what pcm_ecc_dev_init() set up.
 * @pc: the target
 */
void pcm_ecc_dev_exit(struct pcm_c *pc);

/**
 * pcm_ecc_remapped() - ECC's part of mapping a bio, once it is remapped.
 * @pc: the target
 * @bio: the bio, remapped
 * @io: its per-bio data
 *
 * A write goes to the worker first; a read records where its data lies,
 * for the decode after it completes.
 *
 * Context: the map path, or a parked bio released.
 * Return: DM_MAPIO_SUBMITTED (the worker has the bio) or
 * DM_MAPIO_REMAPPED.
 */
int pcm_ecc_remapped(struct pcm_c *pc, struct bio *bio, struct pcm_io *io);

/**
 * pcm_ecc_end_io() - A read's data is in: hold it for decoding.
 * @pc: the target
 * @bio: the read
 * @io: its per-bio data
 *
 * Context: bio completion.
 * Return: DM_ENDIO_INCOMPLETE: the worker completes the bio again.
 */
int pcm_ecc_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io);

/**
 * pcm_ecc_pair_end_io() - An inline read's data is in, or failed.
 * @pc: the target
 * @bio: the read
 * @io: its per-bio data
 * @error: its status, which the decode may change
 *
 * The second of its two completions (data and parity) decodes; the first
 * leaves the bio to the other.
 *
 * Context: bio completion.
 * Return: DM_ENDIO_INCOMPLETE from the first, a DM_ENDIO_* value from the
 * second.
 */
int pcm_ecc_pair_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io,
			blk_status_t *error);

/**
 * pcm_ecc_write_end_io() - A write's data is written, or failed.
 * @pc: the target
 * @io: its per-bio data
 *
 * Its rows may be written again: their row locks go.
 *
 * Context: bio completion.
 */
void pcm_ecc_write_end_io(struct pcm_c *pc, struct pcm_io *io);

/**
 * pcm_ecc_reset() - Zero the ECC figures ("stats reset").
 * @pc: the target
 */
void pcm_ecc_reset(struct pcm_c *pc);

/**
 * pcm_ecc_status() - Emit the ECC figures into a status line.
 * @pc: the target
 * @result: the status buffer
 * @maxlen: its size
 * @szp: where the line ends in it, moved on past what is emitted
 *
 * They come after the timing model's; with ecc:none, raw errors only.
 */
void pcm_ecc_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		    unsigned int *szp);

#endif
