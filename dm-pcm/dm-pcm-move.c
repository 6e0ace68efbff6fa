// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm gap moves: the map path's row lookup, and the worker that copies
 * the row before the gap into the gap (Qureshi's start-gap).
 *
 * A move is: hold new bios for the source row and wait for those already
 * in flight; copy the row through a buffer; make the copy and then the new
 * registers durable (pcm_meta_write); switch the registers and release the
 * held bios.  A power cut before the superblock lands leaves the old
 * registers and an intact source row; after it, the new registers and a
 * durable copy.
 *
 * A controller makes a gap move when it is due.  dm-pcm makes it on a
 * worker, but a write that finds its domain owing PCM_OWED_MAX moves waits
 * until the worker has caught up, so the emulated device pays for
 * wear-leveling as it writes (Onyx Figure 6) and the backlog is bounded.
 */
#include <linux/blkdev.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>

#include "dm-pcm.h"

#define CREATE_TRACE_POINTS
#include "pcm_trace.h"

static u32 row_sectors(const struct pcm_c *pc)
{
	return 1U << pc->row_shift;
}

static sector_t backing_sector(const struct pcm_c *pc, u32 d, u64 p)
{
	return pc->start + (pcm_sg_backing_row(pc->nr_domains, d, p) << pc->row_shift);
}

/* Writes that program cells count toward the gap interval. */
static bool programs_cells(struct bio *bio)
{
	return (bio_op(bio) == REQ_OP_WRITE && bio_sectors(bio)) ||
	       bio_op(bio) == REQ_OP_WRITE_ZEROES;
}

/* Writes run at most one move ahead of the mover (one moving, one owed). */
#define PCM_OWED_MAX	2

/* Count a row write; true when it makes a gap move due.  Under dom->lock. */
static bool owe_move(struct pcm_c *pc, struct pcm_domain *dom)
{
	u64 interval = READ_ONCE(pc->live.val[PCM_GAP_INTERVAL]);

	if (!interval || pc->read_only || ++dom->writes < interval)
		return false;
	dom->writes = 0;
	dom->owed++;
	return true;
}

/*
 * Remap @bio, which lies in logical row @row at sector @in_row of it.
 * Returns DM_MAPIO_SUBMITTED when the row is being moved: the bio waits on
 * the domain's held list and the mover submits it.  Never sleeps.
 */
int pcm_map_row(struct pcm_c *pc, struct bio *bio, u64 row, u32 in_row)
{
	struct pcm_io *io = dm_per_bio_data(bio, sizeof(struct pcm_io));
	struct pcm_domain *dom;
	bool kick = false;
	u64 l, p;
	u32 d;

	l = div_u64_rem(row, pc->nr_domains, &d);
	dom = &pc->dom[d];
	if (pc->randomize)
		l = pcm_feistel_permute(&dom->feistel, dom->nr_rows, l);

	spin_lock_irq(&dom->lock);
	if (unlikely(l == dom->moving)) {
		bio_list_add(&dom->held, bio);
		spin_unlock_irq(&dom->lock);
		return DM_MAPIO_SUBMITTED;
	}
	/* quiesce releases the throttled writes and no move comes: don't wait */
	if (unlikely(dom->owed >= PCM_OWED_MAX) && programs_cells(bio) &&
	    !READ_ONCE(pc->quiesced)) {
		bio_list_add(&dom->throttled, bio);
		spin_unlock_irq(&dom->lock);
		return DM_MAPIO_SUBMITTED;
	}
	p = pcm_sg_map(&dom->regs, dom->nr_rows, l);
	io->dom = dom;
	io->epoch = dom->epoch;
	dom->inflight[io->epoch]++;
	if (programs_cells(bio))
		kick = owe_move(pc, dom);
	spin_unlock_irq(&dom->lock);

	if (kick && !READ_ONCE(pc->quiesced))
		queue_work(pc->wq, &pc->move_work);
	bio->bi_iter.bi_sector = backing_sector(pc, d, p) + in_row;
	return DM_MAPIO_REMAPPED;
}

/* A mapped bio completed (end_io, any context). */
void pcm_end_row(struct pcm_io *io)
{
	struct pcm_domain *dom = io->dom;
	unsigned long flags;

	spin_lock_irqsave(&dom->lock, flags);
	if (!--dom->inflight[io->epoch] && dom->draining &&
	    io->epoch != dom->epoch) {
		dom->draining = false;
		complete(&dom->drained);
	}
	spin_unlock_irqrestore(&dom->lock, flags);
}

/* Hold bios for domain row @l from now on and wait out those in flight. */
static void hold_row(struct pcm_domain *dom, u64 l)
{
	bool wait;

	spin_lock_irq(&dom->lock);
	dom->moving = l;
	wait = dom->inflight[dom->epoch] != 0;
	dom->epoch ^= 1;
	dom->draining = wait;
	if (wait)
		reinit_completion(&dom->drained);
	spin_unlock_irq(&dom->lock);
	if (wait)
		wait_for_completion(&dom->drained);
}

/* Map and submit bios that waited; they may wait again (throttled). */
static void resubmit(struct pcm_c *pc, struct bio_list *list)
{
	struct bio *bio;

	while ((bio = bio_list_pop(list))) {
		sector_t sector = dm_target_offset(pc->ti, bio->bi_iter.bi_sector);

		if (op_is_write(bio_op(bio)) && READ_ONCE(pc->meta_failed)) {
			bio_io_error(bio);
			continue;
		}
		if (pcm_map_row(pc, bio, sector >> pc->row_shift,
				sector & (row_sectors(pc) - 1)) == DM_MAPIO_REMAPPED)
			dm_submit_bio_remap(bio, NULL);
	}
}

/* Switch to @next (NULL: keep the registers) and submit the held bios. */
static void release_row(struct pcm_c *pc, struct pcm_domain *dom,
			const struct pcm_sg_domain *next)
{
	struct bio_list held;

	spin_lock_irq(&dom->lock);
	if (next)
		dom->regs = *next;
	dom->moving = PCM_NOT_MOVING;
	held = dom->held;
	bio_list_init(&dom->held);
	spin_unlock_irq(&dom->lock);
	resubmit(pc, &held);
}

/* Let the writes that waited for the mover to catch up go (not in map). */
static void release_throttled(struct pcm_c *pc, struct pcm_domain *dom)
{
	struct bio_list list;

	spin_lock_irq(&dom->lock);
	list = dom->throttled;
	bio_list_init(&dom->throttled);
	spin_unlock_irq(&dom->lock);
	resubmit(pc, &list);
}

/*
 * Copy physical row @m->src of @dom into the gap @m->dst through the row
 * buffer: two synchronous dm_io calls from the worker (a ramdisk completes
 * them without a context switch; kcopyd would add two thread hops).
 */
static int copy_row(struct pcm_c *pc, struct pcm_domain *dom,
		    const struct pcm_sg_move *m)
{
	struct block_device *bdev = pc->dev->bdev;
	int r;

	r = pcm_io(pc, bdev, REQ_OP_READ | REQ_SYNC,
		   backing_sector(pc, dom->id, m->src), row_sectors(pc), pc->row_buf);
	if (r)
		return r;
	return pcm_io(pc, bdev, REQ_OP_WRITE | REQ_SYNC,
		      backing_sector(pc, dom->id, m->dst), row_sectors(pc), pc->row_buf);
}

/*
 * One gap move in @dom.  Serialized by meta_lock, which also keeps the
 * registers of every domain still while the superblock is encoded.
 * -EAGAIN: the device is suspending or read-only, nothing was done.
 */
int pcm_move_gap(struct pcm_c *pc, struct pcm_domain *dom)
{
	struct pcm_sg_domain next;
	struct pcm_sg_move m;
	int r;

	mutex_lock(&pc->meta_lock);
	if (pc->quiesced || pc->read_only || !pc->loaded) {
		r = -EAGAIN;
		goto out;
	}
	if (pc->meta_failed) {
		r = -EIO;
		goto out;
	}
	m = pcm_sg_next_move(&dom->regs, dom->nr_rows);
	hold_row(dom, pcm_sg_row_at(&dom->regs, dom->nr_rows, m.src));
	r = copy_row(pc, dom, &m);
	next = dom->regs;
	pcm_sg_apply_move(&next, dom->nr_rows);
	if (!r)
		r = pcm_meta_write(pc, dom, &next);
	release_row(pc, dom, r ? NULL : &next);
	if (r) {
		pc->move_errors++;
		DMERR_LIMIT("%s: gap move in domain %u failed: %d",
			    dm_device_name(dm_table_get_md(pc->ti->table)), dom->id, r);
		goto out;
	}
	pc->gap_moves++;
	pc->start_wraps += m.wraps;
	trace_pcm_gap_move(disk_devt(dm_disk(dm_table_get_md(pc->ti->table))), dom->id,
			   pcm_sg_backing_row(pc->nr_domains, dom->id, m.src),
			   pcm_sg_backing_row(pc->nr_domains, dom->id, m.dst),
			   next.start, next.gap, m.wraps);
out:
	mutex_unlock(&pc->meta_lock);
	return r;
}

/*
 * The moves @dom owed when the pass reached it, each followed by the
 * release of the writes that waited for it.  True if it owes more now.
 */
static bool pay_owed(struct pcm_c *pc, struct pcm_domain *dom)
{
	u64 n;
	int r;

	spin_lock_irq(&dom->lock);
	n = dom->owed;
	spin_unlock_irq(&dom->lock);
	for (; n; n--) {
		r = READ_ONCE(pc->quiesced) ? -EAGAIN : pcm_move_gap(pc, dom);
		if (r == -EAGAIN)
			return false;	/* owed after the resume; quiesce released the writes */
		spin_lock_irq(&dom->lock);
		/* after a failure no write waits: a later write owes a retry */
		dom->owed = r ? 0 : dom->owed - 1;
		spin_unlock_irq(&dom->lock);
		release_throttled(pc, dom);
		if (r)
			return false;
		cond_resched();
	}
	return READ_ONCE(dom->owed) != 0;
}

/*
 * One pass over the domains.  Moves owed meanwhile requeue the work, so
 * flush_work() waits for one pass at most even under a steady stream of
 * writes.
 */
static void move_work(struct work_struct *work)
{
	struct pcm_c *pc = container_of(work, struct pcm_c, move_work);
	bool again = false;
	u32 d;

	for (d = 0; d < pc->nr_domains; d++)
		again |= pay_owed(pc, &pc->dom[d]);
	if (again && !READ_ONCE(pc->quiesced))
		queue_work(pc->wq, &pc->move_work);
}

int pcm_move_init(struct pcm_c *pc)
{
	pc->row_buf = kvmalloc(pc->cfg.val[PCM_ROW_SIZE], GFP_KERNEL);
	if (!pc->row_buf)
		return -ENOMEM;
	pc->wq = alloc_workqueue("dm-" DM_MSG_PREFIX, WQ_MEM_RECLAIM | WQ_UNBOUND, 1);
	if (!pc->wq)
		return -ENOMEM;
	INIT_WORK(&pc->move_work, move_work);
	return 0;
}

void pcm_move_exit(struct pcm_c *pc)
{
	if (pc->wq)
		destroy_workqueue(pc->wq);
	kvfree(pc->row_buf);
}

/*
 * Presuspend/postsuspend: no move starts, the running one finishes, and
 * writes that waited for moves go ahead (no move would release them).
 */
void pcm_move_quiesce(struct pcm_c *pc)
{
	u32 d;

	mutex_lock(&pc->meta_lock);
	WRITE_ONCE(pc->quiesced, true);
	mutex_unlock(&pc->meta_lock);
	flush_work(&pc->move_work);
	for (d = 0; d < pc->nr_domains; d++)
		release_throttled(pc, &pc->dom[d]);
}

/* Resume: moves owed before the suspend go ahead. */
void pcm_move_resume(struct pcm_c *pc)
{
	bool owed = false;
	u32 d;

	WRITE_ONCE(pc->quiesced, false);
	for (d = 0; d < pc->nr_domains; d++)
		owed |= READ_ONCE(pc->dom[d].owed) != 0;
	if (owed)
		queue_work(pc->wq, &pc->move_work);
}
