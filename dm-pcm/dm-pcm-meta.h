/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-meta.c: the superblock's two copies, and the synchronous I/O
 * the other parts' metadata (wear counters, bitmap, sticky injections,
 * gap-move row copies) goes through.
 */
#ifndef DM_PCM_META_H
#define DM_PCM_META_H

#include "dm-pcm.h"

/**
 * pcm_meta_init() - Allocate the superblock buffers and the dm-io client.
 * @pc: the target, being constructed (its geometry set)
 *
 * Return: 0, or a negative errno.
 */
int pcm_meta_init(struct pcm_c *pc);

/**
 * pcm_meta_exit() - Free what pcm_meta_init() allocated.
 * @pc: the target
 */
void pcm_meta_exit(struct pcm_c *pc);

/**
 * pcm_meta_check() - Refuse, in the constructor, what preresume would.
 * @pc: the target, being constructed
 *
 * Reads the superblock copies and checks them against the table, without
 * writing.
 *
 * Context: process; sleeps (I/O).
 * Return: 0, or a negative errno (the table is refused).
 */
int pcm_meta_check(struct pcm_c *pc);

/**
 * pcm_meta_load() - Take the registers from the device at preresume.
 * @pc: the target
 *
 * Another table may have moved gaps since the constructor ran.  The
 * device is formatted if that is allowed; a damaged older copy is
 * rewritten from the good one.
 *
 * Context: process; sleeps (I/O).
 * Return: 0, or a negative errno (the resume fails).
 */
int pcm_meta_load(struct pcm_c *pc);

/**
 * pcm_meta_persist() - Write @pc->sb's registers durably.
 * @pc: the target
 * @both: write both copies if they differ
 *
 * The mover puts in @pc->sb the registers that point at its copies,
 * which reach the media first.  The data device is flushed (the
 * superblock's PREFLUSH when it holds the metadata), and the superblock
 * goes out with PREFLUSH and FUA, which also makes the parity the mover
 * copied on a meta_device durable.  One copy per persist, the one after
 * the last (seq & 1): a torn write leaves the other, whose registers are
 * one round older, and a domain's source rows are overwritten only by
 * its next round (dm-pcm-move.c).  @both keeps two equal copies on a
 * device at rest, so that it survives one damaged in place.  On failure
 * the device can no longer tell which copy is current, so writes and
 * flushes fail until the table is reloaded (meta_failed).
 *
 * Context: process; sleeps.  Caller holds @pc->meta_lock.
 * Return: 0, or a negative errno.
 */
int pcm_meta_persist(struct pcm_c *pc, bool both);

/**
 * pcm_io() - Synchronous I/O of metadata or a row.
 * @pc: the target
 * @bdev: the device: the data device or meta_bdev()
 * @opf: the operation and its flags
 * @sector: the first sector on @bdev
 * @count: sectors
 * @buf: kmalloc or vmalloc memory, @count sectors of it
 *
 * Superblocks, gap-move row copies, parity, wear counters, the bitmap.
 *
 * Context: process; sleeps.
 * Return: 0, or a negative errno.
 */
int pcm_io(struct pcm_c *pc, struct block_device *bdev, blk_opf_t opf,
	   sector_t sector, sector_t count, void *buf);

#endif
