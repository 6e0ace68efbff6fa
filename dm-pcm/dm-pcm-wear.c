// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm wear counters (wear:on|ROWS, endurance:N): a 32-bit counter per
 * physical row, or per group of rows, counted on the map path, kept in
 * RAM and persisted to the wear region (pcm-wear.h, pcm-layout.h) on
 * postsuspend, on "persist" and every PCM_WEAR_PERIOD.  What wear does:
 * reads of a row see its rber raised along pcm_wear_rber_curve (ecc:bch,
 * and ecc:none while rber is above 0) and, with ecc:bch, past endurance,
 * its stuck-at cells (pcm-errmodel.c); with the timing model, a write's program time grows
 * along pcm_wear_lat_curve.
 *
 * Counting is a racy READ_ONCE/WRITE_ONCE increment, not an atomic: a
 * locked read-modify-write per row written would cost the map path as
 * much as a shared lock's cache line when writes hit the same rows, and
 * all a race can do is lose a count when two CPUs write rows of one
 * counter at the same instant, which leaves the figures statistically
 * right.  A 32-bit store never tears; counters saturate at U32_MAX.
 */
#include <linux/blkdev.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "dm-pcm.h"
#include "dm-pcm-meta.h"
#include "dm-pcm-wear.h"
#include "pcm-errmodel.h"
#include "pcm-wear.h"
#include "pcm_trace.h"

#define PCM_WEAR_PERIOD		(10 * HZ)	/* a crash loses at most this */
#define PCM_WEAR_CHUNK		32		/* blocks per I/O: 128 KiB */
#define PCM_WEAR_BUCKETS	16		/* the histogram: endurance / 8 each */

static void wear_period(struct work_struct *work);

int pcm_wear_init(struct pcm_c *pc)
{
	u64 group = pc->cfg.val[PCM_WEAR], rows;
	struct pcm_wear *w;

	if (!group)
		return 0;
	rows = pcm_sg_physical_rows(pc->logical_rows, pc->nr_domains);
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	pc->wear = w;
	w->pc = pc;
	w->group = group;
	w->shift = pc->layout.row_shift + ilog2(group);
	w->nr = pcm_wear_counters(rows, group);
	w->endurance = pc->cfg.val[PCM_ENDURANCE];
	/* the count at which a counter's rows reach endurance (saturated: never) */
	if (w->endurance && w->endurance * group < U32_MAX)
		w->limit = w->endurance * group;
	mutex_init(&w->lock);
	INIT_DELAYED_WORK(&w->work, wear_period);
	/* kvmalloc() refuses (and warns of) more than INT_MAX bytes */
	if (w->nr > INT_MAX / sizeof(u32)) {
		DMERR("wear:%llu: %llu counters need %llu MiB: use wear:%llu or more",
		      group, w->nr, w->nr * sizeof(u32) >> 20,
		      group * roundup_pow_of_two(div64_u64(w->nr, INT_MAX / sizeof(u32)) + 1));
		return -ENOMEM;
	}
	w->ctr = kvcalloc(w->nr, sizeof(u32), GFP_KERNEL | __GFP_NOWARN);
	w->buf = kvmalloc(PCM_WEAR_CHUNK * PCM_WEAR_BLOCK, GFP_KERNEL);
	if (!w->ctr || !w->buf) {
		DMERR("wear:%llu: cannot allocate %llu counters (%llu KiB)", group,
		      w->nr, w->nr * sizeof(u32) >> 10);
		return -ENOMEM;
	}
	return 0;
}

void pcm_wear_exit(struct pcm_c *pc)
{
	struct pcm_wear *w = pc->wear;

	if (!w)
		return;
	cancel_delayed_work_sync(&w->work);
	kvfree(w->buf);
	kvfree(w->ctr);
	kfree(w);
	pc->wear = NULL;
}

/* RAM the counters take (the "wear" message says it). */
static u64 wear_ram(const struct pcm_wear *w)
{
	return w->nr * sizeof(u32) + PCM_WEAR_CHUNK * PCM_WEAR_BLOCK + sizeof(*w);
}

static int chunk_io(struct pcm_c *pc, blk_opf_t opf, unsigned int copy,
		    u64 block, u32 n)
{
	const struct pcm_layout *l = &pc->layout;

	return pcm_io(pc, meta_bdev(pc), opf,
		      l->wear_start + copy * l->wear_sectors + block * PCM_WEAR_BLOCK_SECTORS,
		      (sector_t)n * PCM_WEAR_BLOCK_SECTORS, pc->wear->buf);
}

static u32 block_counters(const struct pcm_wear *w, u64 block)
{
	return min_t(u64, w->nr - block * PCM_WEAR_PER_BLOCK, PCM_WEAR_PER_BLOCK);
}

/*
 * Read both copies, block by block the valid one with the higher
 * sequence number; a block valid in neither is zero (never written) or
 * lost (damaged: said once, unless @fresh: a format overwrites it).
 * Sets w->seq past anything on the device.
 */
static int wear_read(struct pcm_c *pc, bool fresh)
{
	struct pcm_wear *w = pc->wear;
	u64 blocks = pcm_wear_blocks(w->nr), b, seq, seq0[PCM_WEAR_CHUNK];
	bool valid0[PCM_WEAR_CHUNK];
	unsigned int lost = 0, copy;
	u32 *tmp, n, k;
	int r = 0;

	tmp = kmalloc_array(PCM_WEAR_PER_BLOCK, sizeof(u32), GFP_KERNEL);
	if (!tmp)
		return -ENOMEM;
	/* copy 0 into the counters; copy 1 replaces a block where it is newer */
	for (b = 0; b < blocks && !r; b += PCM_WEAR_CHUNK) {
		n = min_t(u64, blocks - b, PCM_WEAR_CHUNK);
		for (copy = 0; copy < 2 && !r; copy++) {
			r = chunk_io(pc, REQ_OP_READ | REQ_SYNC, copy, b, n);
			for (k = 0; k < n && !r; k++) {
				u32 cnt = block_counters(w, b + k);
				u32 *ctr = &w->ctr[(b + k) * PCM_WEAR_PER_BLOCK];
				enum pcm_wear_block_status st;

				st = pcm_wear_block_decode(w->buf + k * PCM_WEAR_BLOCK, b + k,
							   &seq, copy ? tmp : ctr, cnt);
				if (st == PCM_WEAR_BLK_BAD)
					lost |= 1U << copy;
				if (!copy) {
					valid0[k] = st == PCM_WEAR_BLK_VALID;
					seq0[k] = seq;
					if (!valid0[k])
						memset(ctr, 0, cnt * sizeof(u32));
				} else if (st == PCM_WEAR_BLK_VALID &&
					   (!valid0[k] || seq > seq0[k])) {
					memcpy(ctr, tmp, cnt * sizeof(u32));
				}
				if (st == PCM_WEAR_BLK_VALID)
					w->seq = max(w->seq, seq);
			}
		}
	}
	kfree(tmp);
	if (!r && lost && !fresh)
		DMWARN("%s: wear region: torn or damaged blocks in copy %s: %s",
		       pcm_name(pc), lost == 3 ? "0 and 1" : lost == 1 ? "0" : "1",
		       "the last period's counts of those blocks are lost");
	return r;
}

int pcm_wear_persist(struct pcm_c *pc, bool force)
{
	struct pcm_wear *w = pc->wear;
	u64 blocks, b;
	u32 n, k;
	int r = 0;

	if (!w || pc->read_only)
		return 0;
	mutex_lock(&w->lock);
	if (!w->loaded || (!force && !READ_ONCE(w->dirty)))
		goto out;
	/* counts from now on make it dirty again */
	WRITE_ONCE(w->dirty, false);
	w->seq++;
	blocks = pcm_wear_blocks(w->nr);
	for (b = 0; b < blocks && !r; b += PCM_WEAR_CHUNK) {
		n = min_t(u64, blocks - b, PCM_WEAR_CHUNK);
		for (k = 0; k < n; k++)
			pcm_wear_block_encode(w->buf + k * PCM_WEAR_BLOCK, b + k, w->seq,
					      &w->ctr[(b + k) * PCM_WEAR_PER_BLOCK],
					      block_counters(w, b + k));
		r = chunk_io(pc, REQ_OP_WRITE | REQ_SYNC | REQ_FUA, w->seq & 1, b, n);
	}
	if (r) {
		WRITE_ONCE(w->dirty, true);
		w->errors++;
		DMERR_LIMIT("%s: cannot write the wear counters: %d (tried again later)",
			    pcm_name(pc), r);
	} else {
		w->persists++;
	}
out:
	mutex_unlock(&w->lock);
	return r;
}

static void wear_period(struct work_struct *work)
{
	struct pcm_wear *w = container_of(to_delayed_work(work), struct pcm_wear, work);

	pcm_wear_persist(w->pc, false);
	queue_delayed_work(w->pc->wq, &w->work, PCM_WEAR_PERIOD);
}

int pcm_wear_load(struct pcm_c *pc, bool fresh)
{
	struct pcm_wear *w = pc->wear;
	int r;

	if (!w || w->loaded)
		return 0;
	mutex_lock(&w->lock);
	r = wear_read(pc, fresh);
	if (!r && fresh)
		memset(w->ctr, 0, w->nr * sizeof(u32));
	if (!r)
		w->loaded = true;
	mutex_unlock(&w->lock);
	if (r) {
		DMERR("%s: cannot read the wear counters: %d", pcm_name(pc), r);
		return r;
	}
	if (fresh)
		r = pcm_wear_persist(pc, true) ?: pcm_wear_persist(pc, true);
	return r;
}

void pcm_wear_resume(struct pcm_c *pc)
{
	struct pcm_wear *w = pc->wear;

	if (w && !pc->read_only)
		queue_delayed_work(pc->wq, &w->work, PCM_WEAR_PERIOD);
}

void pcm_wear_suspend(struct pcm_c *pc)
{
	struct pcm_wear *w = pc->wear;

	if (!w)
		return;
	cancel_delayed_work_sync(&w->work);
	pcm_wear_persist(pc, false);
}

u32 pcm_wear_row_x(struct pcm_c *pc, sector_t slot)
{
	struct pcm_wear *w = pc->wear;

	if (!w)
		return 0;
	return pcm_wear_x(READ_ONCE(w->ctr[(slot - pc->layout.offset) >> w->shift]) / w->group,
			  w->endurance);
}

u64 pcm_wear_read_rber(struct pcm_c *pc, sector_t slot, u64 rber)
{
	return pc->wear ? pcm_wear_rber(rber, pcm_wear_row_x(pc, slot)) : rber;
}

u32 pcm_wear_prog_q16(struct pcm_c *pc, sector_t slot)
{
	return pc->wear ? pcm_wear_curve(pcm_wear_lat_curve, pcm_wear_row_x(pc, slot)) : 0;
}

void pcm_wear_passed(struct pcm_c *pc, sector_t slot)
{
	struct pcm_wear *w = pc->wear;

	trace_pcm_endurance(pc->devt, (slot - pc->layout.offset) >> pc->layout.row_shift,
			    w->group, w->endurance);
}

void pcm_wear_stuck_begin(struct pcm_c *pc, sector_t slot, u32 sector_bits,
			  struct pcm_stuck_iter *it)
{
	pcm_stuck_begin(it, pc->cfg.val[PCM_SEED], slot - pc->layout.offset,
			pcm_wear_row_x(pc, slot), sector_bits);
}

/* Every counter summed up, the histogram in endurance / 8 steps per row. */
static void wear_scan(struct pcm_c *pc, struct pcm_wear_summary *s, u64 *hist)
{
	struct pcm_wear *w = pc->wear;
	u64 i, step = max_t(u64, w->endurance / 8, 1) * w->group;
	u32 chunk[64];
	size_t n, k;

	pcm_wear_summary_init(s);
	for (i = 0; i < w->nr; i += n) {
		n = min_t(u64, w->nr - i, ARRAY_SIZE(chunk));
		for (k = 0; k < n; k++) {
			chunk[k] = READ_ONCE(w->ctr[i + k]);
			if (hist)
				hist[min_t(u64, div64_u64(chunk[k], step),
					   PCM_WEAR_BUCKETS - 1)]++;
		}
		pcm_wear_summary_add(s, chunk, n);
		cond_resched();
	}
}

void pcm_wear_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		     unsigned int *szp)
{
	struct pcm_wear_summary s;
	struct pcm_wear_life life = {};
	unsigned int sz = *szp;

	if (pc->wear) {
		wear_scan(pc, &s, NULL);
		pcm_wear_life(&s, pc->wear->group, pc->wear->endurance, &life);
	}
	DMEMIT(" wear_max:%llu wear_mean:%llu", life.max, div_u64(life.mean_milli, 1000));
	*szp = sz;
}

int pcm_wear_message(struct pcm_c *pc, unsigned int argc, char *result,
		     unsigned int maxlen)
{
	struct pcm_wear *w = pc->wear;
	u64 hist[PCM_WEAR_BUCKETS] = {}, ratio;
	struct pcm_wear_summary s;
	struct pcm_wear_life life;
	unsigned int sz = 0, i;

	if (argc != 1) {
		DMERR("usage: wear");
		return -EINVAL;
	}
	if (!w) {
		DMERR("wear: no wear counters on this device (wear:off)");
		return -EINVAL;
	}
	wear_scan(pc, &s, hist);
	pcm_wear_life(&s, w->group, w->endurance, &life);
	/* max / mean in hundredths; a device never written is level */
	ratio = life.mean_milli ? div64_u64(life.max * 100000, life.mean_milli) : 100;
	DMEMIT("rows_per_counter:%u counters:%llu endurance:%llu", w->group, w->nr, w->endurance);
	DMEMIT(" writes:%llu max:%llu mean:%llu.%03llu", s.sum, life.max,
	       div_u64(life.mean_milli, 1000), life.mean_milli % 1000);
	DMEMIT(" max_mean:%llu.%02llu used:%u.%u%%", div_u64(ratio, 100), ratio % 100,
	       life.used_permille / 10, life.used_permille % 10);
	if (life.remaining == U64_MAX)
		DMEMIT(" remaining:unbounded");
	else
		DMEMIT(" remaining:%llu", life.remaining);
	if (life.remaining_ideal == U64_MAX)
		DMEMIT(" remaining_level:unbounded");
	else
		DMEMIT(" remaining_level:%llu", life.remaining_ideal);
	DMEMIT(" persists:%llu persist_errors:%llu ram:%llu hist:", READ_ONCE(w->persists),
	       READ_ONCE(w->errors), wear_ram(w));
	for (i = 0; i < PCM_WEAR_BUCKETS; i++)
		DMEMIT("%s%llu", i ? "," : "", hist[i]);
	return 1;
}
