// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm write-intent bitmap (ecc:bch): the WIB region that follows the
 * per-row parity area (pcm-layout.h), after its first PCM_INJ_SECTORS,
 * which hold the sticky injections (dm-pcm-inject.c).
 *
 * A write of a row is two writes to the media, its parity and then its
 * data (dm-pcm-ecc.c); a power cut between them leaves a row whose data
 * and parity disagree, so that reads of it would fail although nothing
 * is wrong with the cells.  As md's bitmap (drivers/md/md-bitmap.c):
 *
 *  - one bit per PCM_WIB_ROWS physical rows (a region); before the ECC
 *    worker writes a row's parity, the region's bit is set and written
 *    with FUA.  A bit already set costs nothing, so a run of writes to
 *    one region pays one bitmap write.  Bits are set only under io_lock,
 *    held until their block is written: a write that finds its bits set
 *    while such a write is pending (pcm_wib_touch()) takes io_lock too,
 *    so that it never writes parity behind a bit not yet durable.
 *  - bits are cleared lazily: every PCM_WIB_CLEAR_DELAY, at suspend and
 *    on "persist", a pass takes the regions written since the last pass,
 *    waits out the bios mapped before (pcm_grace()), flushes the data
 *    and metadata devices, then clears the bits of the regions no write
 *    touched meanwhile (written with FUA too: a later set of the same
 *    block must not find the clear still in a cache, to land after it).
 *  - on load (preresume), every row of a set bit has its parity
 *    recomputed from its data, made durable, and the bitmap cleared,
 *    before the device accepts I/O: a torn row reads back as its old or
 *    its new data, never as a false uncorrectable error.  A read-only
 *    table cannot write that parity: its reads of the rows of a set bit
 *    take their parity from the data read (pcm_wib_torn()), as the
 *    resync would have computed it, until a writable table resyncs them.
 *
 * Why 64 rows a bit: resyncing a region reads 64 rows (256 KiB of 4 KiB
 * rows) and encodes them, milliseconds; a 1 TiB device of 4 KiB rows
 * needs 512 KiB of bitmap on disk (three copies in RAM: on-disk image,
 * touched, pass candidates), and a sequential writer sets a bit once per
 * 64 rows.  md's default chunk is far larger because its resync copies
 * between disks; ours is local and cheap.
 */
#include <linux/blkdev.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-pcm.h"
#include "dm-pcm-epoch.h"
#include "dm-pcm-meta.h"
#include "dm-pcm-wib.h"
#include "pcm-wib.h"

#define PCM_WIB_CLEAR_DELAY	(5 * HZ)	/* md's default daemon_sleep */

struct pcm_wib {
	struct pcm_c *pc;
	bool on;			/* the device has the WIB region */
	bool zeroed;			/* this table formatted it and zeroed the region */
	bool torn;			/* read-only, bits set: pcm_wib_torn() */

	spinlock_t lock;		/* @map */
	struct pcm_wib_bits map;	/* the bits, written regions, candidates */
	size_t bytes;			/* of @map.bits: whole blocks, wib_sectors */

	struct mutex io_lock;		/* bitmap writes, setting bits, @blk */
	u8 *blk;			/* one block of the bitmap on its way out */
	u32 blk_sectors;

	struct delayed_work clear_work;
	atomic64_t resynced;		/* rows whose parity a load recomputed */
};

static sector_t bits_start(struct pcm_c *pc)
{
	return pc->layout.wib_start + pc->layout.inj_sectors;
}

static u64 block_of(struct pcm_wib *w, u64 bit)
{
	return (bit / 8) / ((size_t)w->blk_sectors << SECTOR_SHIFT);
}

/*
 * Write bitmap blocks @first..@last (by block) from the in-memory bits,
 * FUA: clears too, so that a clear written before a set of the same
 * block is durable before it (no cache, nor dm-log-writes' replay, may
 * put the older block over the newer).  io_lock held.
 */
static int write_blocks(struct pcm_c *pc, u64 first, u64 last)
{
	struct pcm_wib *w = pc->wib;
	size_t bb = (size_t)w->blk_sectors << SECTOR_SHIFT;
	u64 b;
	int r = 0;

	lockdep_assert_held(&w->io_lock);
	for (b = first; b <= last && !r; b++) {
		spin_lock(&w->lock);
		memcpy(w->blk, w->map.bits + b * bb, bb);
		spin_unlock(&w->lock);
		r = pcm_io(pc, meta_bdev(pc), REQ_OP_WRITE | REQ_SYNC | REQ_FUA,
			   bits_start(pc) + b * w->blk_sectors, w->blk_sectors, w->blk);
	}
	return r;
}

static int write_all_blocks(struct pcm_c *pc)
{
	struct pcm_wib *w = pc->wib;
	int r;

	mutex_lock(&w->io_lock);
	r = write_blocks(pc, 0, block_of(w, w->map.nbits - 1));
	mutex_unlock(&w->io_lock);
	return r;
}

static u64 region_of(struct pcm_c *pc, sector_t s)
{
	return ((s - pc->layout.offset) >> pc->layout.row_shift) >> PCM_WIB_ROW_SHIFT;
}

/*
 * Set the bits of regions [@first, @first + @n) that are clear (@n <=
 * PCM_WIB_CHUNK) and write their blocks.  io_lock held.
 */
static int mark_chunk(struct pcm_c *pc, u64 first, u32 n)
{
	struct pcm_wib *w = pc->wib;
	u64 set;
	int r;

	spin_lock(&w->lock);
	set = pcm_wib_set(&w->map, first, n);
	spin_unlock(&w->lock);
	if (!set)
		return 0;
	r = write_blocks(pc, block_of(w, first + __ffs64(set)),
			 block_of(w, first + fls64(set) - 1));
	spin_lock(&w->lock);
	/* not durable: cleared again, so that the next write of them retries */
	pcm_wib_written(&w->map, first, set, !r);
	spin_unlock(&w->lock);
	if (r)
		DMERR_LIMIT("%s: write-intent bitmap write failed: %d", pcm_name(pc), r);
	return r;
}

int pcm_wib_mark(struct pcm_c *pc, sector_t s, u32 sectors)
{
	struct pcm_wib *w = pc->wib;
	u64 first, last, b;
	bool need;
	int r = 0;

	if (!w || !w->on || !sectors)
		return 0;
	first = region_of(pc, s);
	last = min(region_of(pc, s + sectors - 1), w->map.nbits - 1);
	spin_lock(&w->lock);
	need = pcm_wib_touch(&w->map, first, last);
	spin_unlock(&w->lock);
	queue_delayed_work(pc->wq, &w->clear_work, PCM_WIB_CLEAR_DELAY);
	if (!need)
		return 0;	/* every bit set and written: nearly every write */
	/* a bit set by a write still writing it is durable once it gives io_lock back */
	mutex_lock(&w->io_lock);
	for (b = first; b <= last && !r; b += PCM_WIB_CHUNK)
		r = mark_chunk(pc, b, min_t(u64, last - b + 1, PCM_WIB_CHUNK));
	mutex_unlock(&w->io_lock);
	return r;
}

bool pcm_wib_marked(struct pcm_c *pc, sector_t s, u32 sectors)
{
	struct pcm_wib *w = pc->wib;
	u64 first, last;
	bool need;

	if (!w || !w->on || !sectors)
		return true;
	first = region_of(pc, s);
	last = min(region_of(pc, s + sectors - 1), w->map.nbits - 1);
	spin_lock(&w->lock);
	need = pcm_wib_touch(&w->map, first, last);
	spin_unlock(&w->lock);
	if (!need)
		queue_delayed_work(pc->wq, &w->clear_work, PCM_WIB_CLEAR_DELAY);
	return !need;
}

/*
 * Clear the bits of regions written before the call whose data and
 * parity are now durable.  Takes meta_lock (pcm_grace()).
 */
static void clear_pass(struct pcm_c *pc)
{
	struct pcm_wib *w = pc->wib;
	struct pcm_wib_range cl;
	bool any;
	int r;

	mutex_lock(&pc->meta_lock);
	if (!w->on || pc->read_only || !pc->loaded || pc->meta_failed)
		goto out;
	spin_lock(&w->lock);
	any = pcm_wib_pass_begin(&w->map);
	spin_unlock(&w->lock);
	if (!any)
		goto out;
	/* every write that marked them was mapped before: now it is over */
	pcm_grace(pc);
	r = blkdev_issue_flush(pc->dev->bdev);
	if (!r && pc->meta_dev)
		r = blkdev_issue_flush(pc->meta_dev->bdev);
	/* not known durable: they count as written again, for a later pass */
	spin_lock(&w->lock);
	pcm_wib_pass_end(&w->map, !r, &cl);
	spin_unlock(&w->lock);
	if (cl.lo > cl.hi)
		goto out;
	mutex_lock(&w->io_lock);
	if (write_blocks(pc, block_of(w, cl.lo), block_of(w, cl.hi)))
		DMERR_LIMIT("%s: write-intent bitmap clear failed", pcm_name(pc));
	mutex_unlock(&w->io_lock);
out:
	mutex_unlock(&pc->meta_lock);
}

static void clear_work(struct work_struct *work)
{
	struct pcm_wib *w = container_of(to_delayed_work(work), struct pcm_wib, clear_work);

	clear_pass(w->pc);
}

void pcm_wib_clear_now(struct pcm_c *pc)
{
	if (!pc->wib)
		return;
	cancel_delayed_work_sync(&pc->wib->clear_work);
	clear_pass(pc);
}

void pcm_wib_quiesce(struct pcm_c *pc)
{
	pcm_wib_clear_now(pc);
}

/* Recompute the parity of every physical row of region @b from its data. */
static int resync_region(struct pcm_c *pc, struct pcm_ecc *codec, u64 b, u64 phys_rows,
			 u8 *row, u8 *meta)
{
	const struct pcm_ecc_geom *g = &pc->ecc_geom;
	u32 rs = 1U << pc->layout.row_shift;
	u64 p, end = min(phys_rows, (b + 1) << PCM_WIB_ROW_SHIFT);
	sector_t slot;
	int r;

	for (p = b << PCM_WIB_ROW_SHIFT; p < end; p++) {
		slot = pc->layout.offset + (p << pc->layout.row_shift);
		r = pcm_io(pc, pc->dev->bdev, REQ_OP_READ | REQ_SYNC, slot, rs, row);
		if (r)
			return r;
		memset(meta, 0, pc->layout.row_meta_sectors << SECTOR_SHIFT);
		pcm_ecc_encode_sectors(codec, row, rs, meta, g->meta_bytes);
		r = pcm_io(pc, meta_bdev(pc), REQ_OP_WRITE | REQ_SYNC,
			   pcm_layout_row_meta(&pc->layout, slot),
			   pc->layout.row_meta_sectors, meta);
		if (r)
			return r;
		atomic64_inc(&pc->wib->resynced);
		cond_resched();
	}
	return 0;
}

/* Load: the rows of every set bit get parity that matches their data. */
static int resync(struct pcm_c *pc)
{
	struct pcm_wib *w = pc->wib;
	u64 phys_rows = pcm_sg_physical_rows(pc->logical_rows, pc->nr_domains);
	u64 b, regions = 0, before = atomic64_read(&w->resynced);
	struct pcm_ecc codec;
	u8 *row, *meta;
	int r;

	if (pcm_wib_next(w->map.bits, w->map.nbits, 0) >= w->map.nbits)
		return 0;
	row = kvmalloc(pc->cfg.val[PCM_ROW_SIZE], GFP_KERNEL);
	meta = kvmalloc(pc->layout.row_meta_sectors << SECTOR_SHIFT, GFP_KERNEL);
	r = row && meta ? pcm_ecc_init(&codec, &pc->ecc_geom) : -ENOMEM;
	if (r)
		goto out_free;
	for (b = pcm_wib_next(w->map.bits, w->map.nbits, 0); b < w->map.nbits && !r;
	     b = pcm_wib_next(w->map.bits, w->map.nbits, b + 1)) {
		r = resync_region(pc, &codec, b, phys_rows, row, meta);
		regions++;
	}
	pcm_ecc_exit(&codec);
	/* the new parity is durable before the bits that ask for it go */
	if (!r)
		r = blkdev_issue_flush(pc->dev->bdev);
	if (!r && pc->meta_dev)
		r = blkdev_issue_flush(pc->meta_dev->bdev);
	if (!r) {
		memset(w->map.bits, 0, w->bytes);
		r = write_all_blocks(pc);
	}
	if (r)
		DMERR("%s: recomputing the parity of possibly torn rows failed: %d",
		      pcm_name(pc), r);
	else
		DMINFO("%s: resynced the parity of %llu rows in %llu bitmap regions",
		       pcm_name(pc), atomic64_read(&w->resynced) - before, regions);
out_free:
	kvfree(meta);
	kvfree(row);
	return r;
}

/* Format: a fresh bitmap, no bit set (the sticky table: pcm_inject_load()). */
static int wib_zero(struct pcm_c *pc)
{
	struct pcm_wib *w = pc->wib;

	memset(w->map.bits, 0, w->bytes);
	return write_all_blocks(pc);
}

int pcm_wib_load(struct pcm_c *pc)
{
	struct pcm_wib *w = pc->wib;
	int r;

	if (!w)
		return 0;
	w->on = pc->sb.geo.features & PCM_SB_FEAT_WIB;
	if (!w->on)
		return 0;
	if (pc->formatted && !w->zeroed) {
		r = wib_zero(pc);
		if (r)
			return r;
		w->zeroed = true;
		return 0;
	}
	r = pcm_io(pc, meta_bdev(pc), REQ_OP_READ | REQ_SYNC, bits_start(pc),
		   pc->layout.wib_sectors, w->map.bits);
	if (r)
		return r;
	if (pc->read_only) {
		/* nothing writes the bits while read-only: no lock needed to test them */
		w->torn = pcm_wib_next(w->map.bits, w->map.nbits, 0) < w->map.nbits;
		if (w->torn)
			DMINFO("%s: rows may be torn; read-only: parity from their data",
			       pcm_name(pc));
	} else {
		r = resync(pc);
	}
	return r;
}

bool pcm_wib_torn(struct pcm_c *pc, sector_t slot)
{
	struct pcm_wib *w = pc->wib;

	return w && w->torn && pcm_wib_test(w->map.bits, region_of(pc, slot));
}

void pcm_wib_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		    unsigned int *szp)
{
	unsigned int sz = *szp;

	DMEMIT(" ecc_resynced_rows:%lld", pc->wib ? atomic64_read(&pc->wib->resynced) : 0);
	*szp = sz;
}

int pcm_wib_init(struct pcm_c *pc)
{
	struct pcm_wib *w;
	u64 rows;

	if (!pc->ecc_on)
		return 0;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	pc->wib = w;
	w->pc = pc;
	spin_lock_init(&w->lock);
	mutex_init(&w->io_lock);
	INIT_DELAYED_WORK(&w->clear_work, clear_work);
	rows = pcm_sg_physical_rows(pc->logical_rows, pc->nr_domains);
	w->map.nbits = pcm_layout_wib_bits(rows);
	w->bytes = pc->layout.wib_sectors << SECTOR_SHIFT;
	w->blk_sectors = pc->layout.meta_block > 512 ? pc->layout.meta_block >> SECTOR_SHIFT : 1;
	w->map.bits = kvzalloc(w->bytes, GFP_KERNEL);
	w->map.touched = kvzalloc(DIV_ROUND_UP(w->map.nbits, 8), GFP_KERNEL);
	w->map.cand = kvzalloc(DIV_ROUND_UP(w->map.nbits, 8), GFP_KERNEL);
	w->blk = kmalloc((size_t)w->blk_sectors << SECTOR_SHIFT, GFP_KERNEL);
	if (!w->map.bits || !w->map.touched || !w->map.cand || !w->blk)
		return -ENOMEM;
	return 0;
}

void pcm_wib_exit(struct pcm_c *pc)
{
	struct pcm_wib *w = pc->wib;

	if (!w)
		return;
	cancel_delayed_work_sync(&w->clear_work);
	kfree(w->blk);
	kvfree(w->map.cand);
	kvfree(w->map.touched);
	kvfree(w->map.bits);
	kfree(w);
	pc->wib = NULL;
}
