// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm gap moves (Qureshi's start-gap): the worker that copies the row
 * before the gap into the gap, and when the registers become durable.
 *
 * Moves go in rounds, one move in each domain of the round: hold the rows
 * (their writes park, dm-pcm-io.c), wait out the bios mapped before, copy
 * each row into its gap, switch that domain's registers and release its
 * parked bios.  A round costs one grace period, however many domains.
 *
 * Crash safety: a round is copy -> flush -> superblock with FUA ->
 * switch -> release.  The copies (data, and parity with ECC) are made
 * durable by the persist's flushes before the superblock that points at
 * them is; the registers switch in memory and the held rows' writes go
 * only once that superblock is durable.  So dm-pcm keeps no volatile
 * state of its own: a write completes only after the registers that map
 * it are on the device, and over a backing device without a volatile
 * cache a completed write survives a power cut.  A source row becomes
 * the gap and is written only by the domain's next move, after this
 * round's persist: the older superblock copy, which a torn write of the
 * newer leaves, still maps to intact rows.  K domains moving in one
 * round cost one persist.
 *
 * A write that finds its domain owing PCM_OWED_MAX moves waits until the
 * worker has caught up: the emulated device pays for wear-leveling as it
 * writes (Onyx Figure 6), and the backlog stays bounded, during a suspend
 * too: moves run until postsuspend, which pays what is still owed.
 */
#include <linux/blkdev.h>
#include <linux/sched/signal.h>

#include "dm-pcm.h"
#include "pcm_trace.h"

#define PCM_ROUNDS_PER_PASS	16	/* then the worker requeues itself */

/*
 * Copy physical row @src of @dom into @dst through the row buffer: two
 * synchronous pcm_io() calls from the worker (a ramdisk completes them
 * without a context switch; kcopyd would add two thread hops).  The one
 * place a slot's contents move, so that what belongs to a row (its
 * parity, with ECC) moves with it, and the timing model charges the copy
 * to the ranks of both rows.
 */
static int move_slot(struct pcm_c *pc, struct pcm_domain *dom, u64 src, u64 dst)
{
	struct block_device *bdev = pc->dev->bdev;
	sector_t n = 1U << pc->layout.row_shift;
	int r;

	r = pcm_io(pc, bdev, REQ_OP_READ | REQ_SYNC,
		   pcm_layout_slot(&pc->layout, dom->id, src), n, pc->row_buf);
	if (!r)
		r = pcm_io(pc, bdev, REQ_OP_WRITE | REQ_SYNC,
			   pcm_layout_slot(&pc->layout, dom->id, dst), n, pc->row_buf);
	if (!r)		/* the copy programs the gap's row: it wears */
		pcm_wear_count(pc, pcm_layout_slot(&pc->layout, dom->id, dst));
	if (!r && pc->ecc_on)
		r = pcm_ecc_move(pc, pcm_layout_slot(&pc->layout, dom->id, src),
				 pcm_layout_slot(&pc->layout, dom->id, dst));
	if (!r)
		pcm_timing_move(pc, pcm_sg_backing_row(pc->nr_domains, dom->id, src),
				pcm_sg_backing_row(pc->nr_domains, dom->id, dst),
				pcm_layout_slot(&pc->layout, dom->id, dst));
	return r;
}

/* 0, -EAGAIN (suspended, read-only, or @msg and suspending) or -EIO. */
static int can_move(struct pcm_c *pc, bool msg)
{
	lockdep_assert_held(&pc->meta_lock);
	if (pc->quiesced || pc->read_only || !pc->loaded || (msg && pc->suspending))
		return -EAGAIN;
	return pc->meta_failed ? -EIO : 0;
}

/* The copy in @dom failed, or its persist: keep the registers, let its writes go. */
static void move_failed(struct pcm_c *pc, struct pcm_domain *dom, bool paid, int r)
{
	pc->sb.dom[dom->id] = dom->regs;
	pcm_switch(pc, dom, NULL, paid);
	pcm_release(pc, dom, false);
	pc->move_errors++;
	DMERR_LIMIT("%s: gap move in domain %u failed: %d", pcm_name(pc), dom->id, r);
}

/* The registers that point at @dom's copy are durable: switch, release. */
static void move_done(struct pcm_c *pc, struct pcm_domain *dom,
		      const struct pcm_sg_move *m, bool paid)
{
	const struct pcm_sg_domain *next = &pc->sb.dom[dom->id];

	pcm_switch(pc, dom, next, paid);
	pcm_release(pc, dom, false);
	pc->gap_moves++;
	pc->start_wraps += m->wraps;
	trace_pcm_gap_move(disk_devt(dm_disk(dm_table_get_md(pc->ti->table))), dom->id,
			   pcm_sg_backing_row(pc->nr_domains, dom->id, m->src),
			   pcm_sg_backing_row(pc->nr_domains, dom->id, m->dst),
			   next->start, next->gap, m->wraps);
}

/*
 * One move in each of the @n domains of pc->round; @paid: moves that
 * writes owed.  The copies first, then one persist of the registers
 * that point at them (in pc->sb), then the switches.  Returns the first
 * error; the other domains still move.  Caller holds meta_lock, and
 * checked can_move().
 */
static int move_round(struct pcm_c *pc, unsigned int n, bool paid)
{
	struct pcm_sg_move m;
	unsigned int i, copied = 0;
	int r, err = 0;

	for (i = 0; i < n; i++) {
		struct pcm_domain *dom = pc->round[i];

		m = pcm_sg_next_move(&dom->regs, dom->nr_rows);
		pcm_hold_row(dom, pcm_sg_row_at(&dom->regs, dom->nr_rows, m.src));
	}
	pcm_grace(pc);
	for (i = 0; i < n; i++) {
		struct pcm_domain *dom = pc->round[i];

		m = pcm_sg_next_move(&dom->regs, dom->nr_rows);
		r = move_slot(pc, dom, m.src, m.dst);
		if (r) {
			move_failed(pc, dom, paid, r);
			pc->round[i] = NULL;
			err = err ?: r;
			continue;
		}
		pcm_sg_apply_move(&pc->sb.dom[dom->id], dom->nr_rows);
		copied++;
	}
	r = copied ? pcm_meta_persist(pc, false) : 0;
	for (i = 0; i < n; i++) {
		struct pcm_domain *dom = pc->round[i];

		if (!dom)
			continue;
		m = pcm_sg_next_move(&dom->regs, dom->nr_rows);
		if (r)
			move_failed(pc, dom, paid, r);
		else
			move_done(pc, dom, &m, paid);
	}
	return err ?: r;
}

/* Metadata failed: nothing owed can be paid, writes stop waiting (and fail). */
static void give_up(struct pcm_c *pc)
{
	u32 d;

	for (d = 0; d < pc->nr_domains; d++) {
		struct pcm_domain *dom = &pc->dom[d];

		spin_lock(&dom->lock);
		dom->owed = 0;
		spin_unlock(&dom->lock);
		pcm_release(pc, dom, true);
	}
}

static unsigned int collect_owed(struct pcm_c *pc)
{
	unsigned int n = 0;
	u32 d;

	for (d = 0; d < pc->nr_domains; d++)
		if (READ_ONCE(pc->dom[d].owed))
			pc->round[n++] = &pc->dom[d];
	return n;
}

/*
 * Pay the moves writes owe, in rounds over the domains that owe them.
 * A bounded number of rounds, then requeue: flush_work() waits for one
 * pass at most, even under a steady stream of writes.
 */
static void move_work(struct work_struct *work)
{
	struct pcm_c *pc = container_of(work, struct pcm_c, move_work);
	unsigned int i, n = 0;
	int r = 0;

	for (i = 0; i < PCM_ROUNDS_PER_PASS; i++) {
		mutex_lock(&pc->meta_lock);
		r = can_move(pc, false);
		n = r ? 0 : collect_owed(pc);
		if (n)
			r = move_round(pc, n, true);
		mutex_unlock(&pc->meta_lock);
		if (r == -EIO && READ_ONCE(pc->meta_failed))
			give_up(pc);
		if (r == -EAGAIN || !n)
			return;
		cond_resched();
	}
	pcm_move_due(pc);
}

/*
 * "move_gap N": the moves that writes already owe, then N rounds of one
 * more move in every domain; all durable when it returns.  -EAGAIN: the
 * device is suspending.
 */
int pcm_move_rounds(struct pcm_c *pc, u64 rounds)
{
	u64 i;
	u32 d;
	int r = 0;

	flush_work(&pc->move_work);
	for (i = 0; i < rounds && !r; i++) {
		mutex_lock(&pc->meta_lock);
		r = can_move(pc, true);
		if (!r) {
			for (d = 0; d < pc->nr_domains; d++)
				pc->round[d] = &pc->dom[d];
			r = move_round(pc, pc->nr_domains, false);
		}
		mutex_unlock(&pc->meta_lock);
		if (!r && fatal_signal_pending(current))
			r = -EINTR;
		cond_resched();
	}
	return r;
}

int pcm_move_init(struct pcm_c *pc)
{
	pc->row_buf = kvmalloc(pc->cfg.val[PCM_ROW_SIZE], GFP_KERNEL);
	pc->round = kvcalloc(pc->nr_domains, sizeof(*pc->round), GFP_KERNEL);
	if (!pc->row_buf || !pc->round)
		return -ENOMEM;
	INIT_WORK(&pc->move_work, move_work);
	/* the mover, the bitmap's clear pass, wear persistence: each issues I/O */
	pc->wq = alloc_workqueue("dm-" DM_MSG_PREFIX, WQ_MEM_RECLAIM | WQ_UNBOUND, 0);
	return pc->wq ? 0 : -ENOMEM;
}

void pcm_move_exit(struct pcm_c *pc)
{
	if (pc->wq)
		destroy_workqueue(pc->wq);
	kvfree(pc->round);
	kvfree(pc->row_buf);
}

/*
 * Postsuspend: no bio is in flight.  Pay what writes still owe, stop the
 * mover and make the registers durable in both superblock copies, so a
 * device at rest has two equal copies.
 */
void pcm_move_quiesce(struct pcm_c *pc)
{
	u32 d;

	flush_work(&pc->move_work);
	mutex_lock(&pc->meta_lock);
	WRITE_ONCE(pc->quiesced, true);
	if (pc->loaded && !pc->read_only && !pc->meta_failed)
		pcm_meta_persist(pc, true);
	mutex_unlock(&pc->meta_lock);
	/* nothing parks once the core has waited for every bio; be sure */
	for (d = 0; d < pc->nr_domains; d++)
		pcm_release(pc, &pc->dom[d], true);
}

/* Presuspend: "move_gap" stops; moves that writes owe go on (presuspend_undo too). */
void pcm_move_suspending(struct pcm_c *pc, bool suspending)
{
	WRITE_ONCE(pc->suspending, suspending);
}

/* Resume: moves owed before the suspend go ahead. */
void pcm_move_resume(struct pcm_c *pc)
{
	bool owed = false;
	u32 d;

	WRITE_ONCE(pc->suspending, false);
	WRITE_ONCE(pc->quiesced, false);
	for (d = 0; d < pc->nr_domains; d++)
		owed |= READ_ONCE(pc->dom[d].owed) != 0;
	if (owed)
		pcm_move_due(pc);
}
