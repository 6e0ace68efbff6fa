// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm's bit errors on the data path, what ECC and no ECC share: the
 * read number of every physical row, which names a read's error streams
 * (pcm-errmodel.h: seed, physical sector, read number), and, on an
 * ecc:none device, rber's raw errors flipped in the data the reader gets.
 *
 * Read numbers: an atomic counter per physical row, made the first time
 * errors are asked for (a table's rber above 0, "set rber" above 0, an
 * "inject"), kept until the table goes.  A read of a row takes the next
 * number (atomic_fetch_inc()) when it can draw errors there, whatever
 * else is in flight; two reads of one row in flight at once get two
 * numbers in the order their errors are drawn, the pair the same two.
 *
 * ecc:none: while rber is above 0 a read goes the slow map path and
 * keeps its pcm_io; its completion is held (DM_ENDIO_INCOMPLETE) and a
 * worker on the mover's queue (WQ_UNBOUND, not ordered) flips the drawn
 * bits in the bio's pages, counts them (ecc_raw_bits) and the sectors
 * returned wrong (ecc_silent_sectors), and completes it again.
 */
#include <linux/bio.h>
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/mm.h>

#include "dm-pcm.h"
#include "dm-pcm-errs.h"
#include "dm-pcm-wear.h"

/* The read numbers, once made (NULL before). */
static atomic_t *row_reads(struct pcm_c *pc)
{
	/* pairs with pcm_errs_enable()'s cmpxchg: the zeroed array */
	return smp_load_acquire(&pc->row_reads);
}

int pcm_errs_enable(struct pcm_c *pc)
{
	u64 rows = pcm_sg_physical_rows(pc->logical_rows, pc->nr_domains);
	atomic_t *reads;

	if (row_reads(pc))
		return 0;
	/* kvmalloc() refuses (and warns of) more than INT_MAX bytes */
	if (rows > INT_MAX / sizeof(atomic_t)) {
		DMERR("rber: %llu rows need %llu MiB of read numbers, more than one allocation",
		      rows, rows * sizeof(atomic_t) >> 20);
		return -ENOMEM;
	}
	reads = kvcalloc(rows, sizeof(atomic_t), GFP_KERNEL | __GFP_NOWARN);
	if (!reads) {
		DMERR("rber: cannot allocate %llu read numbers (%llu KiB)",
		      rows, rows * sizeof(atomic_t) >> 10);
		return -ENOMEM;
	}
	if (cmpxchg_release(&pc->row_reads, NULL, reads))
		kvfree(reads);	/* another message made them first */
	return 0;
}

void pcm_errs_exit(struct pcm_c *pc)
{
	kvfree(pc->row_reads);
	pc->row_reads = NULL;
}

u32 pcm_row_read(struct pcm_c *pc, sector_t slot)
{
	atomic_t *reads = row_reads(pc);

	if (!reads)
		return 0;
	return atomic_fetch_inc_relaxed(&reads[(slot - pc->layout.offset) >>
					       pc->layout.row_shift]);
}

void pcm_errs_rber(struct pcm_c *pc, u64 rber)
{
	WRITE_ONCE(pc->raw_errs, !pc->ecc_on && rber);
}

/* ---- ecc:none: raw errors reach the reader ------------------------------- */

int pcm_raw_remapped(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	if (bio_op(bio) != REQ_OP_READ || !bio_sectors(bio))
		return DM_MAPIO_REMAPPED;
	io->iter = bio->bi_iter;
	io->pc = pc;
	io->ecc = PCM_ECC_IO_RAW;
	return DM_MAPIO_REMAPPED;
}

/* Flip bit @pos of the 512 bytes of the bio at @at. */
static void raw_flip(struct bio *bio, struct bvec_iter at, u32 pos)
{
	struct bio_vec bv;
	u8 *p;

	bio_advance_iter(bio, &at, pos / 8);
	bv = bio_iter_iovec(bio, at);
	p = bvec_kmap_local(&bv);
	*p ^= 1U << (pos % 8);
	kunmap_local(p);
}

/*
 * One read's raw errors: for each of its rows, the row's rate (rber,
 * raised by wear) and read number; for each sector, its draws, flipped
 * where the data lies.  Only data bits: there is no parity.
 */
static void raw_work(struct work_struct *work)
{
	struct pcm_io *io = container_of(work, struct pcm_io, work);
	struct pcm_c *pc = io->pc;
	struct bio *bio = pcm_bio_of(pc, io);
	u32 rs = 1U << pc->layout.row_shift, left = io->iter.bi_size >> SECTOR_SHIFT;
	u64 seed = pc->cfg.val[PCM_SEED], rber = READ_ONCE(pc->live.val[PCM_RBER]);
	struct bvec_iter it = io->iter;
	sector_t s = io->iter.bi_sector;
	struct pcm_err_rate rate;
	struct pcm_err_iter ei;
	u64 bits = 0, silent = 0;
	u32 first, n, i, pos, nread, flips;
	sector_t slot;

	while (left) {
		first = (s - pc->layout.offset) & (rs - 1);
		slot = s - first;
		n = min(left, rs - first);
		pcm_err_rate_init(&rate, pcm_wear_read_rber(pc, slot, rber));
		nread = rate.mant ? pcm_row_read(pc, slot) : 0;
		for (i = 0; i < n; i++) {
			pcm_err_begin(&ei, &rate, seed, s + i - pc->layout.offset, nread,
				      8 * SECTOR_SIZE);
			for (flips = 0; pcm_err_next(&ei, &pos); flips++)
				raw_flip(bio, it, pos);
			bits += flips;
			silent += !!flips;
			bio_advance_iter(bio, &it, SECTOR_SIZE);
		}
		cond_resched();
		s += n;
		left -= n;
	}
	if (bits) {
		atomic64_add(bits, &pc->raw_bits);
		atomic64_add(silent, &pc->raw_silent);
	}
	bio_endio(bio);
}

int pcm_raw_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	io->ecc = PCM_ECC_IO_NONE;	/* the second completion is an ordinary one */
	INIT_WORK(&io->work, raw_work);
	queue_work(pc->wq, &io->work);
	return DM_ENDIO_INCOMPLETE;
}
