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
#include <linux/completion.h>
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>

#include "dm-pcm.h"
#include "dm-pcm-epoch.h"
#include "dm-pcm-io.h"
#include "dm-pcm-meta.h"
#include "dm-pcm-move.h"
#include "dm-pcm-timing.h"
#include "dm-pcm-wear.h"
#include "pcm_trace.h"

#define PCM_ROUNDS_PER_PASS	16	/* then the worker requeues itself */

/*
 * A round's copies run concurrently, in batches of up to PCM_COPY_BYTES
 * of rows: every copy's reads (the row, and its parity with ECC) are
 * submitted, all are waited for, then every write, and all are waited
 * for; a 1024-domain round over an NVMe drive pays about two device
 * latencies per batch instead of two per domain.
 *
 * Async bios of our own, with a completion count, rather than dm-kcopyd:
 *  - they are submitted by the task that runs the round (the mover, or
 *    the "move_gap" message's), in a fixed order, so fault injection by
 *    task (fail_make_request's task-filter, tests/vm/20-fail-io.sh) and
 *    a bio's number still name one step of one domain's copy;
 *  - a ramdisk completes them inside submit_bio(): a one-domain round
 *    costs no thread hop (kcopyd would add two per copy, and a callback
 *    on its workqueue);
 *  - buffers and bios are allocated once, at ctr: a round (which writes
 *    may wait for, on a WQ_MEM_RECLAIM queue) allocates nothing, where
 *    kcopyd falls back to a reserve of a few pages.
 * Both phases are waited for completely, so the order of a round stays
 * as it was: every copy done (data, then parity, in any order), one
 * persist that flushes them, then the switches.
 */
#define PCM_COPY_BYTES		(512 * 1024)	/* rows in flight per batch */

struct pcm_copy {
	struct bio *bio;		/* the row: read, then written */
	struct bio *meta;		/* its parity (ecc:bch) */
	struct bio_vec *bv, *mbv;
	void *buf, *mbuf;
	int err;			/* of its reads, then of its writes */
	bool sent;			/* a bio of this phase is out */
	bool worn;			/* its row was written: the gap wears */
};

struct pcm_copier {
	unsigned int nr;		/* copies in a batch */
	unsigned short vecs, mvecs;	/* bio_vecs of a row and of its parity */
	atomic_t pending;
	struct completion done;
	struct pcm_copy c[];
};

/* A row's parity, which moves with it (ecc:bch); 0: none. */
static unsigned int copy_meta_len(struct pcm_c *pc)
{
	return pc->ecc_on ? pc->layout.row_meta_sectors << SECTOR_SHIFT : 0;
}

static void copy_end_io(struct bio *bio)
{
	struct pcm_copier *cp = bio->bi_private;

	if (atomic_dec_and_test(&cp->pending))
		complete(&cp->done);
}

/* Send @len bytes of @buf (kmalloc or vmalloc memory) with @bio. */
static void copy_submit(struct pcm_copier *cp, struct bio *bio, struct bio_vec *bv,
			unsigned short vecs, struct block_device *bdev, blk_opf_t opf,
			sector_t sector, void *buf, unsigned int len)
{
	bool vm = is_vmalloc_addr(buf);

	/* no flush or invalidate of a vmalloc alias: the CPU never touches @buf */
	bio_init(bio, bdev, bv, vecs, opf);
	bio->bi_iter.bi_sector = sector;
	bio->bi_end_io = copy_end_io;
	bio->bi_private = cp;
	while (len) {
		unsigned int off = offset_in_page(buf);
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - off);

		__bio_add_page(bio, vm ? vmalloc_to_page(buf) : virt_to_page(buf), n, off);
		buf += n;
		len -= n;
	}
	atomic_inc(&cp->pending);
	submit_bio(bio);
}

/* Wait for every bio of a phase (the count starts at one, the submitter's). */
static void copy_wait(struct pcm_copier *cp)
{
	if (!atomic_dec_and_test(&cp->pending))
		wait_for_completion_io(&cp->done);
	reinit_completion(&cp->done);
	atomic_set(&cp->pending, 1);
}

/*
 * One phase of @k copies for the domains at pc->round[@i]: reads from
 * each source slot, or (@write) writes to each gap of the copies whose
 * reads all succeeded.  With ECC a row's parity travels with it.
 */
static void copy_phase(struct pcm_c *pc, unsigned int i, unsigned int k, bool write)
{
	struct pcm_copier *cp = pc->copier;
	struct block_device *mbdev = meta_bdev(pc);
	blk_opf_t opf = (write ? REQ_OP_WRITE : REQ_OP_READ) | REQ_SYNC;
	unsigned int len = pc->cfg.val[PCM_ROW_SIZE];
	unsigned int mlen = copy_meta_len(pc);
	struct blk_plug plug;
	unsigned int j;

	blk_start_plug(&plug);
	for (j = 0; j < k; j++) {
		struct pcm_domain *dom = pc->round[i + j];
		struct pcm_sg_move m = pcm_sg_next_move(&dom->regs, dom->nr_rows);
		sector_t slot = pcm_layout_slot(&pc->layout, dom->id, write ? m.dst : m.src);
		struct pcm_copy *c = &cp->c[j];

		if (c->err)
			continue;
		c->sent = true;
		copy_submit(cp, c->bio, c->bv, cp->vecs, pc->dev->bdev, opf,
			    slot, c->buf, len);
		if (mlen)
			copy_submit(cp, c->meta, c->mbv, cp->mvecs, mbdev, opf,
				    pcm_layout_row_meta(&pc->layout, slot), c->mbuf, mlen);
	}
	blk_finish_plug(&plug);
	copy_wait(cp);
}

/* The phase's outcome for each copy sent: the errno of its first failed bio. */
static void copy_results(struct pcm_c *pc, unsigned int k, bool write)
{
	struct pcm_copier *cp = pc->copier;
	unsigned int j;

	for (j = 0; j < k; j++) {
		struct pcm_copy *c = &cp->c[j];
		blk_status_t st;

		if (!c->sent)
			continue;
		c->sent = false;
		st = c->bio->bi_status;
		c->worn = write && !st;
		if (copy_meta_len(pc)) {
			st = st ?: c->meta->bi_status;
			bio_uninit(c->meta);
		}
		bio_uninit(c->bio);
		c->err = blk_status_to_errno(st);
	}
}

/*
 * Copy @k rows, of the domains at pc->round[@i], each into its gap:
 * cp->c[j].err says how each went.
 */
static void copy_batch(struct pcm_c *pc, unsigned int i, unsigned int k)
{
	unsigned int j;

	for (j = 0; j < k; j++) {
		pc->copier->c[j].err = 0;
		pc->copier->c[j].worn = false;
	}
	copy_phase(pc, i, k, false);
	copy_results(pc, k, false);
	copy_phase(pc, i, k, true);
	copy_results(pc, k, true);
}

/* After @dom's copy: its gap wears, the timing model charges both rows. */
static int copy_done(struct pcm_c *pc, struct pcm_domain *dom, struct pcm_copy *c)
{
	struct pcm_sg_move m = pcm_sg_next_move(&dom->regs, dom->nr_rows);
	sector_t dst = pcm_layout_slot(&pc->layout, dom->id, m.dst);

	if (c->worn)		/* the copy programs the gap's row: it wears */
		pcm_wear_count(pc, dst);
	if (!c->err)
		pcm_timing_move(pc, pcm_sg_backing_row(pc->nr_domains, dom->id, m.src),
				pcm_sg_backing_row(pc->nr_domains, dom->id, m.dst), dst);
	return c->err;
}

static void copier_free(struct pcm_copier *cp)
{
	unsigned int j;

	if (!cp)
		return;
	for (j = 0; j < cp->nr; j++) {
		kfree(cp->c[j].mbuf);
		kfree(cp->c[j].bv);
		kfree(cp->c[j].bio);
		kvfree(cp->c[j].buf);
	}
	kvfree(cp);
}

/* Buffers and bio_vecs for a batch: as many rows as PCM_COPY_BYTES, or domains. */
static int copier_alloc(struct pcm_c *pc)
{
	unsigned int len = pc->cfg.val[PCM_ROW_SIZE], mlen = copy_meta_len(pc);
	unsigned int nr = clamp_t(unsigned int, PCM_COPY_BYTES / len, 1, pc->nr_domains);
	struct pcm_copier *cp;
	unsigned int j;

	cp = kvzalloc(struct_size(cp, c, nr), GFP_KERNEL);
	pc->copier = cp;
	if (!cp)
		return -ENOMEM;
	cp->nr = nr;
	cp->vecs = DIV_ROUND_UP(len, PAGE_SIZE) + 1;
	cp->mvecs = DIV_ROUND_UP(mlen, PAGE_SIZE) + 1;
	atomic_set(&cp->pending, 1);
	init_completion(&cp->done);
	for (j = 0; j < nr; j++) {
		struct pcm_copy *c = &cp->c[j];

		/* two bios in one allocation: struct bio ends in a flexible array */
		c->bio = kcalloc(2, sizeof(*c->bio), GFP_KERNEL);
		c->buf = kvmalloc(len, GFP_KERNEL);
		c->bv = kcalloc(cp->vecs + cp->mvecs, sizeof(*c->bv), GFP_KERNEL);
		c->mbuf = mlen ? kmalloc(mlen, GFP_KERNEL) : NULL;
		if (!c->bio || !c->buf || !c->bv || (mlen && !c->mbuf))
			return -ENOMEM;
		c->meta = c->bio + 1;
		c->mbv = c->bv + cp->vecs;
	}
	return 0;
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
 * writes owed.  The copies first (concurrently, a batch at a time: see
 * above), then one persist of the registers that point at them (in
 * pc->sb), then the switches.  Returns the first error; the other
 * domains still move.  Caller holds meta_lock, and checked can_move().
 */
static int move_round(struct pcm_c *pc, unsigned int n, bool paid)
{
	struct pcm_copier *cp = pc->copier;
	struct pcm_sg_move m;
	unsigned int i, j, k, copied = 0;
	int r, err = 0;

	for (i = 0; i < n; i++) {
		struct pcm_domain *dom = pc->round[i];

		m = pcm_sg_next_move(&dom->regs, dom->nr_rows);
		pcm_hold_row(dom, pcm_sg_row_at(&dom->regs, dom->nr_rows, m.src));
	}
	pcm_grace(pc);
	for (i = 0; i < n; i += k) {
		k = min(n - i, cp->nr);
		copy_batch(pc, i, k);
		for (j = 0; j < k; j++) {
			struct pcm_domain *dom = pc->round[i + j];

			r = copy_done(pc, dom, &cp->c[j]);
			if (r) {
				move_failed(pc, dom, paid, r);
				pc->round[i + j] = NULL;
				err = err ?: r;
				continue;
			}
			pcm_sg_apply_move(&pc->sb.dom[dom->id], dom->nr_rows);
			copied++;
		}
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
	if (!pc->row_buf || !pc->round || copier_alloc(pc))
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
	copier_free(pc->copier);
	kvfree(pc->round);
	kvfree(pc->row_buf);
}

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

void pcm_move_suspending(struct pcm_c *pc, bool suspending)
{
	WRITE_ONCE(pc->suspending, suspending);
}

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
