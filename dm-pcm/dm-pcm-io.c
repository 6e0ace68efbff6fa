// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm data path: a bio's row is looked up and remapped without a lock;
 * bios that must wait for the gap mover park per domain in arrival order.
 *
 * A gap move copies one row (the source) into the gap.  While it does,
 * writes, discards and write-zeroes of that row park: they would change
 * the source under the copy.  Reads go on: the source stays intact until
 * the registers switch, and the next move into it (it is then the gap)
 * first waits for every bio mapped before that move began.
 *
 * The wait is an SRCU-style grace period over per-CPU counters
 * (dm-pcm-epoch.c): a mapped bio enters the current epoch's counter, then
 * looks at its domain's gate.  The mover's doorbell (pcm_move_due()) is
 * here too: the map path rings it, the mover (dm-pcm-move.c) calls down
 * into this file to hold, switch and release rows, never the other way.
 */
#include <linux/blkdev.h>
#include <linux/percpu.h>

#include "dm-pcm.h"
#include "dm-pcm-ecc.h"
#include "dm-pcm-epoch.h"
#include "dm-pcm-errs.h"
#include "dm-pcm-io.h"
#include "dm-pcm-timing.h"
#include "dm-pcm-wear.h"

/*
 * Status counters: one this_cpu_add() each, as the block layer's disk
 * stats; a 32-bit reader may see a torn sum, never a lost count.
 */
static inline void pcm_count(struct pcm_c *pc, enum pcm_counter c, u64 n)
{
	this_cpu_add(pc->stats->c[c], n);
}

/* Count @bio, which touches @pieces rows, in status. */
static void pcm_account(struct pcm_c *pc, struct bio *bio, u32 pieces)
{
	unsigned int size = bio->bi_iter.bi_size;

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		pcm_count(pc, PCM_READS, pieces);
		pcm_count(pc, PCM_READ_BYTES, size);
		break;
	case REQ_OP_WRITE:
		/* core sends a preflush as an empty bio of its own */
		if (bio->bi_opf & REQ_PREFLUSH)
			pcm_count(pc, PCM_FLUSHES, 1);
		if (!size)
			break;
		pcm_count(pc, PCM_WRITES, pieces);
		pcm_count(pc, PCM_WRITE_BYTES, size);
		if (bio->bi_opf & REQ_FUA)
			pcm_count(pc, PCM_FUA_WRITES, pieces);
		break;
	case REQ_OP_DISCARD:
		pcm_count(pc, PCM_DISCARDS, pieces);
		pcm_count(pc, PCM_DISCARD_BYTES, size);
		break;
	case REQ_OP_WRITE_ZEROES:
		pcm_count(pc, PCM_WRITE_ZEROES, pieces);
		pcm_count(pc, PCM_WRITE_ZEROES_BYTES, size);
		break;
	default:
		break;
	}
}

/* Writes that program cells count toward the gap interval. */
static bool programs_cells(struct bio *bio)
{
	return (bio_op(bio) == REQ_OP_WRITE && bio_sectors(bio)) ||
	       bio_op(bio) == REQ_OP_WRITE_ZEROES;
}

static struct pcm_io *io_of(struct pcm_c *pc, struct bio *bio)
{
	return pcm_io_of(pc, bio);
}

static inline void io_entered(struct pcm_io *io, unsigned int idx)
{
	io->state = PCM_IO_MAPPED + idx;
	io->timed = false;
}

static inline void pcm_enter(struct pcm_c *pc, struct pcm_io *io)
{
	io_entered(io, pcm_enter_epoch(pc));
}

/*
 * A clone's bi_private, which the dm core leaves to the target (as
 * dm_hook_bio() uses it), is either its pcm_io, or for a bio map_fast()
 * sent on with nothing more to do, only its epoch, tagged in bit 0 (a
 * pcm_io is aligned): such a bio needs no dm_per_bio_data() call in .map
 * and end_io only counts its exit.
 */
#define PCM_EPOCH_TAG	1UL

static inline void *epoch_tag(unsigned int idx)
{
	BUILD_BUG_ON(__alignof__(struct pcm_io) <= PCM_EPOCH_TAG);
	return (void *)(((unsigned long)idx << 1) | PCM_EPOCH_TAG);
}

/* The bio's pcm_io, from now on its clone's bi_private. */
static struct pcm_io *io_attach(struct pcm_c *pc, struct bio *bio)
{
	struct pcm_io *io = io_of(pc, bio);

	bio->bi_private = io;
	io->ecc = PCM_ECC_IO_NONE;
	return io;
}

/*
 * What is rare after map_fast() entered the bio needs its pcm_io: @io
 * (map_ecc()'s, entered already), or attach it in place of the epoch tag.
 */
static struct pcm_io *io_fast(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	unsigned long tag = (unsigned long)bio->bi_private;

	if (io)
		return io;
	io = io_attach(pc, bio);
	io_entered(io, tag >> 1);
	return io;
}

/* Logical row -> domain and domain row; no division for 2^n domains. */
static inline struct pcm_domain *domain_of(struct pcm_c *pc, u64 row, u64 *l)
{
	struct pcm_domain *dom;
	u32 d;

	if (likely(pc->one_domain)) {
		*l = row;
		return pc->dom;
	}
	if (pc->domain_shift != U32_MAX) {
		d = row & (pc->nr_domains - 1);
		*l = row >> pc->domain_shift;
	} else {
		*l = div_u64_rem(row, pc->nr_domains, &d);
	}
	dom = &pc->dom[d];
	if (pc->randomize)
		*l = pcm_feistel_permute(&dom->feistel, dom->nr_rows, *l);
	return dom;
}

/* Domain row @l's physical row in @dom, as the registers place it now. */
static inline u64 phys_of(struct pcm_domain *dom, u64 l)
{
	unsigned int seq;
	u64 p;

	do {
		seq = read_seqcount_begin(&dom->seq);
		p = pcm_sg_map(&dom->regs, dom->nr_rows, l);
	} while (read_seqcount_retry(&dom->seq, seq));
	return p;
}

/* First backing sector of domain row @l, as the registers place it now. */
static inline u64 slot_of(struct pcm_c *pc, struct pcm_domain *dom, u64 l)
{
	u64 p = phys_of(dom, l);

	if (likely(pc->one_domain))
		return pc->layout.offset + (p << pc->layout.row_shift);
	return pcm_layout_slot(&pc->layout, dom->id, p);
}

static void remap(struct pcm_c *pc, struct pcm_domain *dom, struct bio *bio,
		  u64 l, u32 in_row)
{
	bio->bi_iter.bi_sector = slot_of(pc, dom, l) + in_row;
}

/* Writes park while the domain owes this many moves (one moving, one owed). */
#define PCM_OWED_MAX	2

static void update_gate(struct pcm_domain *dom)
{
	lockdep_assert_held(&dom->lock);
	WRITE_ONCE(dom->gate, dom->moving != PCM_NOT_MOVING || dom->releasing ||
		   !bio_list_empty(&dom->parked) || dom->owed >= PCM_OWED_MAX);
}

/* Count a row write with one atomic; true when it makes a gap move due. */
static inline bool count_write(struct pcm_c *pc, struct pcm_domain *dom)
{
	u64 interval = READ_ONCE(pc->live.val[PCM_GAP_INTERVAL]);
	int old = atomic_read(&dom->writes), new;

	if (!interval || pc->read_only)
		return false;
	do {
		new = old + 1 >= interval ? 0 : old + 1;
	} while (!atomic_try_cmpxchg(&dom->writes, &old, new));
	return !new;
}

/* A move fell due: the worker makes it.  Under dom->lock. */
static void owe_move(struct pcm_c *pc, struct pcm_domain *dom)
{
	lockdep_assert_held(&dom->lock);
	dom->owed++;
	update_gate(dom);
}

/* count_write() made a move due outside the lock: owe it, wake the worker. */
static noinline void move_fell_due(struct pcm_c *pc, struct pcm_domain *dom)
{
	spin_lock(&dom->lock);
	owe_move(pc, dom);
	spin_unlock(&dom->lock);
	pcm_move_due(pc);
}

/* A write programmed the row at @slot of @dom (map path, no lock held). */
static inline void row_written(struct pcm_c *pc, struct pcm_domain *dom, u64 slot)
{
	pcm_wear_count(pc, slot);
	if (unlikely(count_write(pc, dom)))
		move_fell_due(pc, dom);
}

/*
 * @bio may not go now (under dom->lock); @head: it is the first parked.
 * A new write waits behind parked ones, and behind a batch of them being
 * submitted, so that they reach the device in arrival order.
 */
static bool must_wait(struct pcm_domain *dom, struct bio *bio, u64 l, bool head)
{
	if (l == dom->moving)
		return true;
	return programs_cells(bio) &&
	       (dom->owed >= PCM_OWED_MAX ||
		(!head && (!bio_list_empty(&dom->parked) || dom->releasing)));
}

/* The gate is up: decide under the lock whether @bio goes or parks. */
static int map_gated(struct pcm_c *pc, struct pcm_domain *dom, struct bio *bio,
		     u64 l, u32 in_row)
{
	struct pcm_io *io = io_of(pc, bio);
	bool nowait = bio->bi_opf & REQ_NOWAIT, due = false;

	spin_lock(&dom->lock);
	if (!must_wait(dom, bio, l, false)) {
		remap(pc, dom, bio, l, in_row);
		if (programs_cells(bio))
			pcm_wear_count(pc, bio->bi_iter.bi_sector);
		if (programs_cells(bio) && count_write(pc, dom)) {
			owe_move(pc, dom);
			due = true;
		}
		spin_unlock(&dom->lock);
		if (due)
			pcm_move_due(pc);
		return DM_MAPIO_REMAPPED;
	}
	/* not issued: out of the epoch before the mover can see it parked */
	pcm_io_done(pc, io);
	io->state = PCM_IO_IDLE;
	if (!nowait) {
		io->row = l;
		bio_list_add(&dom->parked, bio);
		update_gate(dom);
	}
	spin_unlock(&dom->lock);
	if (nowait) {
		/* as the dm core does: a parked bio could wait a whole move */
		atomic64_inc(&pc->wouldblock);
		bio_wouldblock_error(bio);
	} else {
		atomic64_inc(&pc->parked_writes);
	}
	return DM_MAPIO_SUBMITTED;
}

/* A clone covers at most this many rows: bounds the time .map takes. */
#define PCM_RUN_ROWS	256

/*
 * Remap @bio, which starts at sector @in_row of logical row @row, over as
 * many rows as lie back to back on the backing device (up to PCM_RUN_ROWS
 * and the bio's end); a write stops before a row whose domain's gate is
 * up.  Each row a write programs counts toward its domain's interval.
 * Returns the sectors mapped: 0 when the first row must take map_gated().
 * Never sleeps; takes no lock unless a move falls due.
 */
static u32 map_run(struct pcm_c *pc, struct bio *bio, u64 row, u32 in_row)
{
	u32 rs = 1U << pc->layout.row_shift, left = bio_sectors(bio), done = 0;
	bool write = op_is_write(bio_op(bio)), counts = programs_cells(bio);
	u64 base = 0;
	unsigned int i;

	for (i = 0; i < PCM_RUN_ROWS && done < left; i++, row++) {
		struct pcm_domain *dom;
		u64 l, slot;

		dom = domain_of(pc, row, &l);
		/* reads never wait: the source row stays intact during its copy */
		if (write && unlikely(READ_ONCE(dom->gate)))
			break;
		slot = slot_of(pc, dom, l);
		if (!i)
			base = slot + in_row;
		else if (slot != base + done)
			break;
		done += min(left - done, i ? rs : rs - in_row);
		if (counts)
			row_written(pc, dom, slot);
	}
	if (done)
		bio->bi_iter.bi_sector = base;
	return done;
}

/*
 * map_run() for one unrandomized domain: the run's rows from one reading
 * of the registers, counted one by one as map_run() does.  One reading
 * serves the whole bio: a write saw the gate down after it entered, so
 * a move that holds one of its rows waits for it before switching; a
 * read mapped before a switch reads the old source, intact until the
 * next move, which waits for the read (the file's head comment).
 */
static u32 map_run_one(struct pcm_c *pc, struct bio *bio, u64 row, u32 in_row)
{
	u32 shift = pc->layout.row_shift, left = bio_sectors(bio), done, rows, i;
	struct pcm_domain *dom = pc->dom;
	unsigned int seq;
	u64 p, run, slot;

	if (op_is_write(bio_op(bio)) && unlikely(READ_ONCE(dom->gate)))
		return 0;
	do {
		seq = read_seqcount_begin(&dom->seq);
		p = pcm_sg_map(&dom->regs, dom->nr_rows, row);
		run = pcm_sg_run(&dom->regs, dom->nr_rows, row);
	} while (read_seqcount_retry(&dom->seq, seq));
	run = min_t(u64, run, PCM_RUN_ROWS);
	done = min_t(u64, left, (run << shift) - in_row);
	slot = pc->layout.offset + (p << shift);
	if (programs_cells(bio)) {
		rows = (in_row + done + (1U << shift) - 1) >> shift;
		for (i = 0; i < rows; i++) {
			/* as map_run(): a row after the gate went up is not written */
			if (i && unlikely(READ_ONCE(dom->gate))) {
				done = (i << shift) - in_row;
				break;
			}
			row_written(pc, dom, slot + ((u64)i << shift));
		}
	}
	bio->bi_iter.bi_sector = slot + in_row;
	return done;
}

void pcm_hold_row(struct pcm_domain *dom, u64 row)
{
	spin_lock(&dom->lock);
	dom->moving = row;
	update_gate(dom);
	spin_unlock(&dom->lock);
}

void pcm_switch(struct pcm_c *pc, struct pcm_domain *dom,
		const struct pcm_sg_domain *next, bool paid)
{
	spin_lock(&dom->lock);
	if (next)
		pcm_set_regs(dom, next);
	dom->moving = PCM_NOT_MOVING;
	/* after a failure no write waits: a later write owes a retry */
	if (!next)
		dom->owed = 0;
	else if (paid && dom->owed)
		dom->owed--;
	update_gate(dom);
	spin_unlock(&dom->lock);
}

/* A bio mapped outside map context (it waited): charge it, issue it. */
static void submit_remapped(struct pcm_c *pc, struct bio *bio)
{
	if (READ_ONCE(pc->timed))
		pcm_timing_charge(pc, bio, io_of(pc, bio));
	if (unlikely(pc->ecc_on) &&
	    pcm_ecc_remapped(pc, bio, io_of(pc, bio)) == DM_MAPIO_SUBMITTED)
		return;
	dm_submit_bio_remap(bio, NULL);
}

void pcm_release(struct pcm_c *pc, struct pcm_domain *dom, bool all)
{
	struct bio_list go, fail;
	bool due, more;
	struct bio *bio;

again:
	bio_list_init(&go);
	bio_list_init(&fail);
	due = false;
	spin_lock(&dom->lock);
	while ((bio = bio_list_peek(&dom->parked))) {
		struct pcm_io *io = io_of(pc, bio);
		sector_t sector = dm_target_offset(pc->ti, bio->bi_iter.bi_sector);

		if (!all && must_wait(dom, bio, io->row, true))
			break;
		bio_list_pop(&dom->parked);
		pcm_enter(pc, io);
		/*
		 * A write the metadata's failure fails never reaches a cell:
		 * it neither wears its row nor brings a gap move nearer.
		 */
		if (op_is_write(bio_op(bio)) && READ_ONCE(pc->meta_failed)) {
			bio_list_add(&fail, bio);
			continue;
		}
		remap(pc, dom, bio, io->row, sector & ((1U << pc->layout.row_shift) - 1));
		if (programs_cells(bio))
			pcm_wear_count(pc, bio->bi_iter.bi_sector);
		if (programs_cells(bio) && count_write(pc, dom)) {
			owe_move(pc, dom);
			due = true;
		}
		bio_list_add(&go, bio);
	}
	if (bio_list_empty(&go) && bio_list_empty(&fail)) {
		update_gate(dom);
		spin_unlock(&dom->lock);
		return;
	}
	dom->releasing++;
	update_gate(dom);
	spin_unlock(&dom->lock);
	if (due)
		pcm_move_due(pc);
	while ((bio = bio_list_pop(&fail))) {
		pcm_io_done(pc, io_of(pc, bio));
		bio_io_error(bio);
	}
	while ((bio = bio_list_pop(&go)))
		submit_remapped(pc, bio);
	/* writes that came meanwhile parked behind the batch: they may go */
	spin_lock(&dom->lock);
	dom->releasing--;
	more = !dom->releasing && !bio_list_empty(&dom->parked);
	update_gate(dom);
	spin_unlock(&dom->lock);
	if (more)
		goto again;
}

/* map_run() for a bio within one row, the common case: no loop. */
static inline u32 map_one(struct pcm_c *pc, struct bio *bio, u64 row, u32 in_row)
{
	struct pcm_domain *dom;
	u64 l;

	dom = domain_of(pc, row, &l);
	if (op_is_write(bio_op(bio)) && unlikely(READ_ONCE(dom->gate)))
		return 0;
	bio->bi_iter.bi_sector = slot_of(pc, dom, l) + in_row;
	if (programs_cells(bio))
		row_written(pc, dom, bio->bi_iter.bi_sector);
	return bio_sectors(bio);
}

/* Logical rows that @n sectors from @sector touch: status counts pieces. */
static u32 rows_spanned(struct pcm_c *pc, sector_t sector, u32 n)
{
	u32 shift = pc->layout.row_shift;

	return ((sector + n - 1) >> shift) - (sector >> shift) + 1;
}

/* Map context: cut @bio to the rest of its first row. */
static void one_row(struct pcm_c *pc, struct bio *bio, u32 in_row)
{
	u32 rs = 1U << pc->layout.row_shift;

	if (bio_sectors(bio) > rs - in_row)
		dm_accept_partial_bio(bio, rs - in_row);
}

/* Map context: a write whose first row's gate is up; counted before it can park. */
static noinline int map_parked(struct pcm_c *pc, struct bio *bio,
			       struct pcm_domain *dom, u64 l, u32 in_row)
{
	one_row(pc, bio, in_row);
	pcm_account(pc, bio, 1);
	return map_gated(pc, dom, bio, l, in_row);
}

/*
 * Map @bio (map context; it is counted in status).  A flush passes down; the
 * registers are durable before any write through them goes (dm-pcm-move.c),
 * so a flush or FUA write needs nothing of dm-pcm's own.  Once a metadata
 * write failed, writes and flushes fail: nothing written can be made durable.
 */
static int pcm_map_bio(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	u32 rs = 1U << pc->layout.row_shift, in_row, n;
	struct pcm_domain *dom;
	sector_t sector;
	u64 row, l;

	if (!bio_sectors(bio)) {
		pcm_account(pc, bio, 1);
		return READ_ONCE(pc->meta_failed) ? DM_MAPIO_KILL : DM_MAPIO_REMAPPED;
	}
	sector = dm_target_offset(pc->ti, bio->bi_iter.bi_sector);
	row = sector >> pc->layout.row_shift;
	in_row = sector & (rs - 1);
	if (op_is_write(bio_op(bio)) && READ_ONCE(pc->meta_failed)) {
		pcm_account(pc, bio, rows_spanned(pc, sector, bio_sectors(bio)));
		return DM_MAPIO_KILL;
	}
	pcm_enter(pc, io);
	if (likely(bio_sectors(bio) <= rs - in_row)) {
		if (likely(map_one(pc, bio, row, in_row))) {
			pcm_account(pc, bio, 1);
			return DM_MAPIO_REMAPPED;
		}
	} else {
		/* only map context sees a bio over rows: waiting ones were cut */
		n = pc->one_domain ? map_run_one(pc, bio, row, in_row) :
				     map_run(pc, bio, row, in_row);
		if (n) {
			if (n < bio_sectors(bio))
				dm_accept_partial_bio(bio, n);
			pcm_account(pc, bio, rows_spanned(pc, sector, n));
			return DM_MAPIO_REMAPPED;
		}
	}
	dom = domain_of(pc, row, &l);
	return map_parked(pc, bio, dom, l, in_row);
}

/* Map context, not map_fast(): charge a remapped bio to the timing model. */
static int map_charge(struct pcm_c *pc, struct bio *bio, struct pcm_io *io, int r)
{
	if (unlikely(READ_ONCE(pc->timed)) && r == DM_MAPIO_REMAPPED)
		pcm_timing_charge(pc, bio, io);
	return r;
}

/* map_fast() could not: the bio is not a plain read or write within a row. */
static noinline int map_slow(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	if (!io)
		io = io_attach(pc, bio);
	io->state = PCM_IO_IDLE;
	io->timed = false;
	return map_charge(pc, bio, io, pcm_map_bio(pc, bio, io));
}

/* map_fast() found the gate of a write's row up. */
static noinline int map_fast_parked(struct pcm_c *pc, struct bio *bio, struct pcm_io *io,
				    struct pcm_domain *dom, u64 l, u32 in_row)
{
	io = io_fast(pc, bio, io);
	return map_charge(pc, bio, io, map_parked(pc, bio, dom, l, in_row));
}

/* map_fast() remapped a bio the timing model must charge (out of line: rare). */
static noinline int map_fast_timed(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	pcm_timing_charge(pc, bio, io_fast(pc, bio, io));
	return DM_MAPIO_REMAPPED;
}

/* map_fast()'s write made a gap move due: owe it, then charge the write. */
static noinline int map_fast_due(struct pcm_c *pc, struct pcm_domain *dom,
				 struct bio *bio, struct pcm_io *io)
{
	io = io_fast(pc, bio, io);
	move_fell_due(pc, dom);
	return map_charge(pc, bio, io, DM_MAPIO_REMAPPED);
}

/*
 * The common case in one pass, without a lock: a read or a plain write
 * within one row of a device of one unrandomized domain whose gate is
 * down, its metadata writable (map_fast_ok: one flag for both, so a
 * write tests nothing a read does not; read racily, as meta_failed was:
 * a write racing a failed persist fails or not, either is right).
 * Everything else goes through pcm_map_bio(), a gated write through
 * map_parked().  Reads the bio before pcm_enter()'s stores, so it reads
 * it once.  Inlined into pcm_map(), and what is rare is a tail call:
 * nothing lives across a call, so the hot path saves few registers.
 * @io: NULL from pcm_map(), which leaves the epoch in bi_private (what is
 * rare attaches the pcm_io); map_ecc()'s, which its work needs.
 */
static __always_inline int map_fast(struct pcm_c *pc, struct bio *bio,
				    struct pcm_io *io, sector_t sector)
{
	u32 shift = pc->layout.row_shift, n = bio_sectors(bio);
	u32 in_row = sector & pc->row_mask;
	enum req_op op = bio_op(bio);
	bool write = op == REQ_OP_WRITE;
	struct pcm_domain *dom = pc->dom;
	u64 __percpu *st;
	unsigned int idx;
	sector_t slot;

	/* status counts reads and writes as READS + write, READ_BYTES + write */
	BUILD_BUG_ON(PCM_WRITES != PCM_READS + 1 || PCM_WRITE_BYTES != PCM_READ_BYTES + 1);

	/* empty, over a row's end, not a plain read or write, domains, meta_failed */
	if (unlikely(!n || ((in_row + n - 1) >> shift) ||
		     (bio->bi_opf & (REQ_OP_MASK & ~REQ_OP_WRITE)) ||
		     (bio->bi_opf & (REQ_FUA | REQ_PREFLUSH)) ||
		     /* racy: a write racing a failed persist may pass */
		     !data_race(pc->map_fast_ok)))
		return map_slow(pc, bio, io);
	idx = pcm_enter_epoch(pc);
	if (io)
		io_entered(io, idx);
	else
		bio->bi_private = epoch_tag(idx);
	if (write && unlikely(READ_ONCE(dom->gate)))
		return map_fast_parked(pc, bio, io, dom, sector >> shift, in_row);
	/* one domain: slot_of() without its check */
	slot = pc->layout.offset + (phys_of(dom, sector >> shift) << shift);
	bio->bi_iter.bi_sector = slot + in_row;
	st = &pc->stats->c[write];
	this_cpu_inc(st[PCM_READS]);
	this_cpu_add(st[PCM_READ_BYTES], bio->bi_iter.bi_size);
	if (write) {
		pcm_wear_count(pc, slot);
		if (unlikely(count_write(pc, dom)))
			return map_fast_due(pc, dom, bio, io);
	}
	if (unlikely(READ_ONCE(pc->timed)))
		return map_fast_timed(pc, bio, io);
	return DM_MAPIO_REMAPPED;
}

/* ecc:bch: the same mapping, then the ECC work (dm-pcm-ecc.c). */
static noinline int map_ecc(struct dm_target *ti, struct bio *bio, struct pcm_io *io)
{
	struct pcm_c *pc = ti->private;
	int r;

	io->ecc = PCM_ECC_IO_NONE;
	if (unlikely(dm_bio_get_target_bio_nr(bio))) {
		/* the core's second flush bio (num_flush_bios): the meta_device's */
		io->state = PCM_IO_IDLE;
		io->timed = false;
		bio_set_dev(bio, pc->meta_dev->bdev);
		return DM_MAPIO_REMAPPED;
	}
	io->lsector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	/* map_fast() charged it to the timing model */
	r = map_fast(pc, bio, io, io->lsector);
	if (r != DM_MAPIO_REMAPPED)
		return r;
	return pcm_ecc_remapped(pc, bio, io);
}

/* ecc:none with rber above 0: a read keeps its pcm_io for its raw errors. */
static noinline int map_raw(struct dm_target *ti, struct bio *bio, struct pcm_io *io)
{
	struct pcm_c *pc = ti->private;
	int r;

	r = map_fast(pc, bio, io, dm_target_offset(ti, bio->bi_iter.bi_sector));
	if (r != DM_MAPIO_REMAPPED)
		return r;
	return pcm_raw_remapped(pc, bio, io);
}

int pcm_map(struct dm_target *ti, struct bio *bio)
{
	struct pcm_c *pc = ti->private;

	bio_set_dev(bio, pc->dev->bdev);
	if (unlikely(pc->ecc_on))
		return map_ecc(ti, bio, io_attach(pc, bio));
	if (unlikely(READ_ONCE(pc->raw_errs)) && bio_op(bio) == REQ_OP_READ)
		return map_raw(ti, bio, io_attach(pc, bio));
	return map_fast(pc, bio, NULL, dm_target_offset(ti, bio->bi_iter.bi_sector));
}

/* pcm_end_io() with ecc:bch */
static noinline int end_io_ecc(struct pcm_c *pc, struct bio *bio, blk_status_t *error)
{
	struct pcm_io *io = io_of(pc, bio);
	int r;

	/* inline: the second of its data and parity decodes, or unlocks the rows */
	if (io->ecc == PCM_ECC_IO_PAIR || io->ecc == PCM_ECC_IO_WPAIR) {
		r = pcm_ecc_pair_end_io(pc, bio, io, error);
		if (r != DM_ENDIO_DONE)
			return r;
	}
	/* a read to decode keeps its count until its parity is read */
	if (io->ecc == PCM_ECC_IO_READ && !*error)
		return pcm_ecc_end_io(pc, bio, io);
	if (io->ecc == PCM_ECC_IO_LOCKED)
		pcm_ecc_write_end_io(pc, io);
	pcm_io_done(pc, io);
	if (unlikely(io->timed))
		return pcm_timing_end_io(pc, bio, io, error);
	return DM_ENDIO_DONE;
}

/* pcm_end_io() of a bio the timing model charged */
static noinline int end_io_timed(struct pcm_c *pc, struct bio *bio, struct pcm_io *io,
				 blk_status_t *error)
{
	pcm_io_done(pc, io);
	return pcm_timing_end_io(pc, bio, io, error);
}

int pcm_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct pcm_c *pc = ti->private;
	unsigned long tag = (unsigned long)bio->bi_private;	/* pcm_map() */
	struct pcm_io *io;

	if (likely(tag & PCM_EPOCH_TAG)) {
		pcm_exit_epoch(pc, tag >> 1);
		return DM_ENDIO_DONE;
	}
	if (unlikely(pc->ecc_on))
		return end_io_ecc(pc, bio, error);
	io = bio->bi_private;
	if (unlikely(io->ecc == PCM_ECC_IO_RAW) && !*error) {
		/* ecc:none: the backing I/O is over; its raw errors, then the rest */
		pcm_io_done(pc, io);
		return pcm_raw_end_io(pc, bio, io);
	}
	if (unlikely(io->timed))
		return end_io_timed(pc, bio, io, error);
	pcm_io_done(pc, io);
	return DM_ENDIO_DONE;
}

void pcm_move_due(struct pcm_c *pc)
{
	if (!READ_ONCE(pc->quiesced))
		queue_work(pc->wq, &pc->move_work);
}
