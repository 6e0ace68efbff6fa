/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm: the target's private state, shared by the target (map, status,
 * messages), the metadata code and the gap mover.
 */
#ifndef DM_PCM_H
#define DM_PCM_H

#include <linux/bio.h>
#include <linux/completion.h>
#include <linux/device-mapper.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>

#include "pcm-layout.h"
#include "pcm-params.h"
#include "pcm-sb.h"
#include "pcm-startgap.h"

#define DM_MSG_PREFIX "pcm"

struct dm_io_client;

#define PCM_NOT_MOVING	U64_MAX

/*
 * One start-gap domain.  The map path reads the registers under @lock;
 * they change only with pcm_c.meta_lock held as well, so the metadata code
 * reads them under that mutex alone.
 *
 * A gap move must not copy a row while a bio to it is in flight.  Mapped
 * bios count in one of two epochs; a move flips the epoch and waits for
 * the old one to drain, so it waits only for bios issued before it began,
 * and only the bios for the row being moved wait for it (on @held).
 * Writes that find the domain too far behind on its moves wait on
 * @throttled (dm-pcm-move.c).
 */
struct pcm_domain {
	spinlock_t lock;		/* everything below but nr_rows, feistel */
	u32 id;
	u64 nr_rows;			/* logical rows; nr_rows + 1 physical */
	struct pcm_feistel feistel;
	struct pcm_sg_domain regs;
	u64 moving;			/* domain row being copied */
	u64 writes;			/* row writes since a move was last owed */
	u64 owed;			/* gap moves the worker still has to do */
	unsigned int inflight[2];	/* mapped bios per epoch */
	unsigned int epoch;
	bool draining;			/* a move waits for the old epoch */
	struct completion drained;
	struct bio_list held;		/* bios for the row being moved */
	struct bio_list throttled;	/* writes waiting for owed moves */
};

/* Per-bio data: the epoch of the domain a mapped bio counts in. */
struct pcm_io {
	struct pcm_domain *dom;		/* NULL: not counted */
	unsigned int epoch;
};

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
	u64_stats_t c[PCM_NR_COUNTERS];
	struct u64_stats_sync syncp;
};

struct pcm_c {
	struct dm_target *ti;
	struct dm_dev *dev;
	struct dm_dev *meta_dev;	/* NULL: metadata at the end of @dev */
	sector_t start;			/* first backing sector used */
	struct pcm_config cfg;		/* as the table line gave it */
	struct pcm_config live;		/* effective: cfg, changed by "set" */
	unsigned int row_shift;		/* log2 of row size in sectors */
	u64 logical_rows;
	u32 nr_domains;
	bool randomize;
	bool read_only;			/* table loaded without write access */
	struct pcm_layout layout;
	struct pcm_domain *dom;

	/* metadata: dm-pcm-meta.c */
	struct mutex meta_lock;		/* superblock, seq, register changes */
	struct dm_io_client *io_client;
	void *sb_buf;			/* one on-disk copy */
	struct pcm_sb sb;		/* what is written next */
	struct pcm_sb disk[2];		/* what was read */
	bool loaded;			/* registers came from the device */
	bool formatted;			/* "format" has been carried out */
	bool meta_failed;		/* a superblock write failed: no writes */

	/* gap moves: dm-pcm-move.c */
	struct workqueue_struct *wq;
	struct work_struct move_work;
	void *row_buf;			/* a row on its way to the gap */
	bool quiesced;			/* suspended: no moves */
	u64 gap_moves, start_wraps, move_errors;	/* under meta_lock */

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
	};
}

/* dm-pcm-meta.c */
int pcm_meta_init(struct pcm_c *pc);
void pcm_meta_exit(struct pcm_c *pc);
int pcm_meta_check(struct pcm_c *pc);
int pcm_meta_load(struct pcm_c *pc);
int pcm_meta_write(struct pcm_c *pc, const struct pcm_domain *dom,
		   const struct pcm_sg_domain *next);
int pcm_io(struct pcm_c *pc, struct block_device *bdev, blk_opf_t opf,
	   sector_t sector, sector_t count, void *buf);

/* dm-pcm-move.c */
int pcm_move_init(struct pcm_c *pc);
void pcm_move_exit(struct pcm_c *pc);
int pcm_map_row(struct pcm_c *pc, struct bio *bio, u64 row, u32 in_row);
void pcm_end_row(struct pcm_io *io);
int pcm_move_gap(struct pcm_c *pc, struct pcm_domain *dom);
void pcm_move_quiesce(struct pcm_c *pc);
void pcm_move_resume(struct pcm_c *pc);

#endif
