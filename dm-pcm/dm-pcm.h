/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm: the target's private state, shared by the target (table,
 * status, messages), the data path (dm-pcm-io.c), the metadata code and
 * the gap mover.
 *
 * The files call one way, down this list; none calls into a file above
 * it (tools/callgraph checks the built objects: no cycle):
 *
 *   dm-pcm-target.c   table, status, messages, suspend: calls any below
 *   dm-pcm-move.c     the gap mover
 *   dm-pcm-io.c       map and end_io, parked bios, the mover's doorbell
 *   dm-pcm-ecc.c      ECC coding on the data path
 *   dm-pcm-wib.c      the write-intent bitmap
 *   dm-pcm-inject.c   injected errors, one-shot and sticky
 *   dm-pcm-errs.c     read numbers, ecc:none's raw errors
 *   dm-pcm-timing.c   the timing model's charges and holds
 *   dm-pcm-wear.c     wear counters
 *   dm-pcm-epoch.c    in-flight epochs, the grace period
 *   dm-pcm-meta.c     superblock, metadata I/O
 *   dm-pcm-trace.c    the tracepoints
 *   pcm-*.c           pure logic, built on the host too
 *
 * What a lower file needs from a higher one comes as data in struct
 * pcm_c, or as a return value, never as a call.  Keep it so.
 *
 * Each part has a header of its own, dm-pcm-<part>.h: what the part's
 * file gives the files above it (kernel-doc on each function), the
 * inline helpers that call into it (pcm_wear_count() in dm-pcm-wear.h,
 * pcm_io_done() in dm-pcm-epoch.h), and the state only it reads.  A file
 * includes this header and the headers of the parts it calls; this one
 * includes only the kernel's and the pure logic's (pcm-*.h), and calls
 * nothing of the parts, so no header reaches up (tools/includegraph
 * checks the sources: no circle).
 */
/*
 * Locking.  The locks, outermost first; each may be held while taking
 * those below it that it names, never the other way.  Every nesting
 * claimed names a function where it happens; a lock said to be taken
 * alone is never held while another of these is taken, nor taken under
 * one.
 *
 * pc->meta_lock (mutex, dm-pcm-meta.c): the superblock, gap moves and
 *   register changes, pc->epoch, the counters beside them.  Held while
 *   waiting for a grace period (pcm_grace() asserts it; move_round(),
 *   clear_pass()), so no bio's path takes it: only messages, preresume,
 *   postsuspend, the mover's and the bitmap's workers do.  Under it:
 *   - dom->lock: move_round() (pcm_hold_row(), and pcm_switch() and
 *     pcm_release() by move_done()), format() and take_registers() by
 *     pcm_meta_load();
 *   - the timing model's channel locks: move_round() -> copy_done() ->
 *     pcm_timing_move() -> pcm_tm_move() -> read_row(), write_row();
 *   - wib->io_lock, then wib->lock: clear_pass() -> write_blocks();
 *     wib->lock alone too: clear_pass().
 *
 * ECC row bits (ecc:bch, dm-pcm-ecc.c): hashed row-in-flight bits,
 *   wait_on_bit_lock_io() by ecc_rows() in ascending order (the map path
 *   only tries them: ecc_rows_trylock()), held from a write's parity
 *   until its data is written, across I/O, and by a read that raced a
 *   write (ecc_read()).  A parity buffer is taken from the mempool before
 *   them, never after (ecc_write(), ecc_read()).  Under them:
 *   - wib->io_lock, then wib->lock: ecc_write() -> pcm_wib_mark() ->
 *     mark_chunk() -> write_blocks(); wib->lock alone: pcm_wib_mark();
 *   - the CPU's coding context: ecc_read() -> ecc_decode_row(),
 *     ecc_encode_row().
 *
 * wib->io_lock (mutex, dm-pcm-wib.c): bitmap writes, setting bits, the
 *   block buffer.  Under it, wib->lock: write_blocks(), mark_chunk().
 *
 * The CPU's coding context (local_lock_t, with BHs off, dm-pcm-ecc.c:
 *   ctx_get()): held while coding a row, never across I/O.  Under it,
 *   inj->lock: ecc_decode_row() -> ecc_read_sector() -> pcm_inject_take()
 *   -> __pcm_inject_take() (spin_lock(): BHs are off already).
 *
 * dom->lock (spinlock, struct pcm_domain): a domain's parked bios, owed
 *   moves, gate and moving row; one domain's at a time (each site takes
 *   one and lets it go before the next).  Under it, dom->seq's write
 *   side: pcm_set_regs() (lockdep asserts dom->lock) by pcm_switch(),
 *   format(), take_registers().  The map path takes it (map_gated(),
 *   move_fell_due()); nothing else of ours is taken under it: parked bios
 *   are submitted and charged after it is dropped (pcm_release()).
 *
 * The timing model's locks (pcm-timing.c): the model's tm->lock (tags,
 *   write cache, the parameters' writers), then a channel's lock:
 *   pcm_tm_submit() -> charge() -> submit_read(), submit_write() ->
 *   read_row(), write_row().  tm->lock, then tm->seq's write side:
 *   pcm_tm_set().  A channel's lock is also taken alone (pcm_tm_usage()).
 *
 * Taken alone, never nested with another of these: pc->stats_lock
 *   (pcm_status_info(), pcm_msg_stats(), which takes meta_lock only
 *   after dropping it); wear->lock (mutex: loading and persisting the
 *   counters, pcm_wear_load(), pcm_wear_persist()); inj->io_lock (mutex:
 *   the sticky table, pcm_inject_save(), inj_clear_disk()) and inj->lock
 *   in process context (spin_lock_bh(): pcm_inject_add(), inj_forget()),
 *   which pcm_inject_clear() takes one after the other; and
 *   timing->reset_lock (mutex: "stats reset", pcm_timing_reset(), called
 *   after meta_lock is dropped), held across synchronize_rcu_expedited().
 *
 * Lockless, by RCU and epochs: the timing figures are updated and read
 *   under rcu_read_lock() (pcm_timing_charge(), pcm_timing_end_io(),
 *   pcm_timer_fn(), timing_figs(), pcm_timing_lateness()), sections that
 *   take none of the locks above; pcm_timing_reset() waits them out.  A bio mapped to a
 *   row counts in its epoch (dm-pcm-epoch.h) from map to the end of its
 *   backing I/O; pcm_grace() waits for those counts under meta_lock, so
 *   nothing a bio waits for before its count drops may need meta_lock
 *   (no bio path takes it, above).
 */
#ifndef DM_PCM_H
#define DM_PCM_H

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "pcm-ecc.h"
#include "pcm-errmodel.h"
#include "pcm-layout.h"
#include "pcm-params.h"
#include "pcm-sb.h"
#include "pcm-startgap.h"
#include "pcm-timing.h"

#define DM_MSG_PREFIX "pcm"

/*
 * The target's name.  "make module-bare" builds a copy of the module
 * (dm-pcm-bare.ko) with its counters and tracepoints compiled out
 * (PCM_COUNTERS 0, NOTRACE) as target "pcm_bare", for pcm-bench counters
 * to load beside this one and measure what they cost in the same boot.
 */
#ifndef PCM_TARGET_NAME
#define PCM_TARGET_NAME "pcm"
#endif

/*
 * The release, in one place: the target's version (dmsetup targets), the
 * module's MODULE_VERSION, and the version dkms.conf and the Makefile read
 * from these three lines.
 */
#define DM_PCM_VERSION_MAJOR	1
#define DM_PCM_VERSION_MINOR	6
#define DM_PCM_VERSION_PATCH	0

struct dm_io_client;

#define PCM_NOT_MOVING	U64_MAX

/*
 * One start-gap domain.  The map path reads @regs, @moving and @gate
 * without a lock; they change under @lock, the registers inside @seq.
 * The mover (dm-pcm-move.c) is the only writer of @regs and @moving.
 *
 * Writes that must wait (their row is being copied, or the domain owes
 * PCM_OWED_MAX moves) park on @parked in arrival order and are released
 * from its head, as many as the mover's progress allows; @gate sends the
 * map path to the locked slow path while anything of that is going on.
 */
struct pcm_domain {
	seqcount_spinlock_t seq;	/* @regs */
	struct pcm_sg_domain regs;
	u64 moving;			/* domain row being copied */
	bool gate;			/* moving, parked, releasing or owed */
	atomic_t writes;		/* row writes since a move fell due */

	spinlock_t lock;		/* everything below but the constants */
	unsigned int owed;		/* gap moves the worker still has to do */
	struct bio_list parked;		/* FIFO: bios waiting for the mover */
	unsigned int releasing;		/* batches of parked bios being submitted */

	u32 id;
	u64 nr_rows;			/* logical rows; nr_rows + 1 physical */
	struct pcm_feistel feistel;
};

/*
 * Per-bio data.  A bio is IDLE until it is mapped to a row, MAPPED while it
 * counts in the in-flight epoch it entered (MAPPED + epoch: one store), DONE
 * once the count dropped: end_io may run more than once (completions held
 * by the timing model or decoded later by ECC) and drops the count only
 * the first time, when the backing I/O is over.
 */
enum pcm_io_state {
	PCM_IO_IDLE,
	PCM_IO_DONE,
	PCM_IO_MAPPED,		/* in epoch 0; PCM_IO_MAPPED + 1: in epoch 1 */
};

/* What ECC still has to do for a bio (dm-pcm-ecc.c); set with ecc:bch only. */
enum pcm_ecc_io {
	PCM_ECC_IO_NONE,
	PCM_ECC_IO_READ,		/* decode once the data is in */
	PCM_ECC_IO_WRITE,		/* parity written before the data */
	PCM_ECC_IO_LOCKED,		/* a write's rows locked until its data is written */
	PCM_ECC_IO_RAW,			/* ecc:none: rber's errors once the data is in */
	PCM_ECC_IO_PAIR,		/* a read, its parity read beside it: the second decodes */
	PCM_ECC_IO_WPAIR,		/* a whole-row write and its parity, issued together */
};

/*
 * The per-bio data is as long as the table's features need
 * (pcm_io_size()): a table without ecc:bch has none of the ECC part, so
 * everything after @work exists with ecc:bch only.  The timing model and
 * ecc:none's raw errors can be turned on by "set" on a live table, so
 * their part is always there.  Reach a bio's pcm_io with pcm_io_of() and
 * back with pcm_bio_of(), never with sizeof(struct pcm_io) (except in
 * dm-pcm-ecc.c, whose tables have all of it).
 */
struct pcm_io {
	u64 row;			/* domain row, while parked */
	u8 state;			/* enum pcm_io_state, + epoch if MAPPED */
	bool timed;			/* charged to the timing model */
	bool held;			/* its completion waits for @timer */
	u8 ecc;				/* enum pcm_ecc_io, once attached */
	u8 chan, rank;			/* its first row's, when timed (tracepoints) */
	u64 deadline;			/* modeled completion, ktime_get_ns() */
	struct pcm_c *pc;		/* for @timer and @work */
	struct hrtimer timer;
	/* ECC, and ecc:none reads while rber is above 0 */
	struct bvec_iter iter;		/* the data as remapped */
	struct work_struct work;
	/* ECC only (pcm_io_size()) */
	sector_t lsector;		/* first logical sector */
	u64 gen;			/* a read: its rows' write generations when mapped */
	/* ECC_IO_PAIR, _WPAIR: its rows' parity, read or written beside the data */
	u8 *meta;
	atomic_t pending;		/* data and parity I/O not yet completed */
	blk_status_t meta_status;	/* the parity I/O's */
};

/* The per-bio data a table of these features needs: dm_target's per_io_data_size. */
static inline unsigned int pcm_io_size(bool ecc_on)
{
	return ecc_on ? sizeof(struct pcm_io) : offsetof(struct pcm_io, lsector);
}

struct pcm_copier;
struct pcm_ecc_dev;
struct pcm_inflight;
struct pcm_injects;
struct pcm_timing;
struct pcm_wear;
struct pcm_wib;

/* Registers change under dom->lock, inside the seqcount the map path reads. */
static inline void pcm_set_regs(struct pcm_domain *dom, const struct pcm_sg_domain *regs)
{
	lockdep_assert_held(&dom->lock);
	write_seqcount_begin(&dom->seq);
	dom->regs = *regs;
	write_seqcount_end(&dom->seq);
}

/* Counters, in the order "dmsetup status" prints them: append only. */
enum pcm_counter {
	PCM_READS,
	PCM_WRITES,
	PCM_READ_BYTES,
	PCM_WRITE_BYTES,
	PCM_FLUSHES,
	PCM_FUA_WRITES,
	PCM_DISCARDS,
	PCM_DISCARD_BYTES,
	PCM_WRITE_ZEROES,
	PCM_WRITE_ZEROES_BYTES,
	PCM_NR_COUNTERS
};

/* Per-CPU so that the I/O path never bounces a shared cache line. */
struct pcm_stats {
	u64 c[PCM_NR_COUNTERS];
};

struct pcm_c {
	struct dm_target *ti;
	unsigned int io_size;		/* per-bio data: pcm_io_size() */
	dev_t devt;			/* the dm device's, for the tracepoints */
	struct dm_dev *dev;
	struct dm_dev *meta_dev;	/* NULL: metadata at the end of @dev */
	sector_t start;			/* first backing sector used */
	struct pcm_config cfg;		/* as the table line gave it */
	struct pcm_config live;		/* effective: cfg, changed by "set" */
	u64 logical_rows;
	u32 nr_domains;
	u32 domain_shift;		/* log2(nr_domains) when a power of two */
	bool randomize;
	bool one_domain;		/* one domain, not randomized: row == domain row */
	bool map_fast_ok;		/* one_domain and not meta_failed: map_fast() */
	u32 row_mask;			/* sectors per row - 1 */
	bool read_only;			/* table loaded without write access */
	struct pcm_layout layout;	/* where rows and superblocks are */
	struct pcm_domain *dom;

	/* the map path's in-flight counts: dm-pcm-epoch.c */
	struct pcm_inflight __percpu *inflight;
	unsigned long epoch;		/* under meta_lock; the map path reads it */
	bool draining;			/* pcm_grace() waits on drain_wq */
	wait_queue_head_t drain_wq;

	/* metadata: dm-pcm-meta.c */
	struct mutex meta_lock;		/* superblock, moves, register changes */
	struct dm_io_client *io_client;
	void *sb_buf;			/* one on-disk copy */
	struct pcm_sb sb;		/* what is written next: a round's new registers */
	struct pcm_sb disk[2];		/* what was read */
	bool loaded;			/* registers came from the device */
	bool formatted;			/* "format" has been carried out */
	bool meta_failed;		/* a superblock write failed: no writes */
	bool copies_differ;		/* the two copies hold different registers */
	u64 sb_writes, meta_flushes;	/* issued to persist moves; meta_lock */

	/* gap moves: dm-pcm-move.c */
	struct workqueue_struct *wq;
	struct work_struct move_work;
	struct pcm_domain **round;	/* the domains of one round of moves */
	void *row_buf;			/* a row read to check the data area is blank */
	struct pcm_copier *copier;	/* a round's row copies: bios and buffers */
	bool suspending;		/* presuspend .. resume: no move_gap */
	bool quiesced;			/* postsuspend .. resume: no moves */
	u64 gap_moves, start_wraps, move_errors;	/* under meta_lock */
	atomic64_t parked_writes;	/* writes that waited for the mover */
	atomic64_t wouldblock;		/* REQ_NOWAIT bios refused instead */

	/* ECC: dm-pcm-ecc.c */
	bool ecc_on;			/* ecc:bch */
	bool ecc_wq;			/* ecc_workqueue: all coding in the worker */
	struct pcm_ecc_geom ecc_geom;
	struct pcm_ecc_dev *ecc;
	struct pcm_wib *wib;		/* dm-pcm-wib.c: with ecc_on */
	struct pcm_injects *inj;	/* dm-pcm-inject.c: with ecc_on */
	unsigned int nr_injected;	/* sectors with errors injected; inj's lock */
	/* bit errors: dm-pcm-errs.c */
	atomic_t *row_reads;		/* read number per physical row; NULL until asked */
	bool raw_errs;			/* ecc:none and rber > 0: reads take the raw path */
	atomic64_t raw_bits, raw_silent;	/* ecc:none: ecc_raw_bits, ecc_silent_sectors */

	/* wear counters: dm-pcm-wear.c, NULL with wear:off */
	struct pcm_wear *wear;

	/* the timing model: dm-pcm-timing.c */
	struct pcm_timing *timing;
	bool timed;			/* the model is on: charge every bio */

	struct pcm_stats __percpu *stats;
	spinlock_t stats_lock;		/* protects stats_base */
	u64 stats_base[PCM_NR_COUNTERS];	/* snapshot of "stats reset" */
};

static inline struct pcm_sb_geometry pcm_table_geometry(const struct pcm_c *pc)
{
	return (struct pcm_sb_geometry) {
		.data_offset = pc->start,
		.logical_rows = pc->logical_rows,
		.row_size = pc->cfg.val[PCM_ROW_SIZE],
		.domains = pc->nr_domains,
		.randomize_seed = pc->cfg.val[PCM_RANDOMIZE],
		.randomize = pc->randomize,
		.features = (pc->ecc_on ? PCM_SB_FEAT_ECC | PCM_SB_FEAT_WIB : 0) |
			    (pc->cfg.val[PCM_WEAR] ? PCM_SB_FEAT_WEAR : 0),
		.ecc = pc->ecc_on ? pcm_ecc_geom_pack(&pc->ecc_geom) : 0,
		.wear = pc->cfg.val[PCM_WEAR],
	};
}

/* A bio's pcm_io, as long as the table made it (pc->io_size). */
static inline struct pcm_io *pcm_io_of(struct pcm_c *pc, struct bio *bio)
{
	return dm_per_bio_data(bio, pc->io_size);
}

static inline struct bio *pcm_bio_of(struct pcm_c *pc, struct pcm_io *io)
{
	return dm_bio_from_per_bio_data(io, pc->io_size);
}

/* The device's name, for messages in the kernel log. */
static inline const char *pcm_name(struct pcm_c *pc)
{
	return dm_device_name(dm_table_get_md(pc->ti->table));
}

/* Where the metadata lives: the meta_device, or the end of the data device. */
static inline struct block_device *meta_bdev(struct pcm_c *pc)
{
	return (pc->meta_dev ?: pc->dev)->bdev;
}

#endif
