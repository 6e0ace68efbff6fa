// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm timing: the model of pcm-timing.c on the data path.
 *
 * A bio is charged to the model when it is remapped, at the instant it
 * arrives (ktime_get_ns(), the clock of the hrtimers below); the model
 * gives its completion instant.  The backing I/O is issued at once.  When
 * it is over, end_io holds the completion (DM_ENDIO_INCOMPLETE) on an
 * hrtimer set to that absolute instant, and the timer ends the bio again:
 * end_io then lets it go.  A completion whose backing I/O ended after its
 * modeled instant cannot be held: it is counted late.
 *
 * With every latency, rate and tag count at 0 (preset:none) the model is
 * off and costs the map path one load.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/slab.h>

#include "dm-pcm.h"
#include "dm-pcm-compat.h"

/*
 * Lateness histogram: 32 buckets of 128 ns up to 4 us, then powers of
 * two: bucket 32 + k holds [4 us << k, 8 us << k).
 */
#define PCM_LATE_FINE		32
#define PCM_LATE_FINE_SHIFT	7

static unsigned int late_bucket(u64 ns)
{
	u64 coarse = ns >> (PCM_LATE_FINE_SHIFT + 5);

	if (!coarse)
		return ns >> PCM_LATE_FINE_SHIFT;
	return min_t(unsigned int, PCM_LATE_FINE + ilog2(coarse), PCM_LATE_BUCKETS - 1);
}

static u64 late_bucket_floor(unsigned int b)
{
	if (b < PCM_LATE_FINE)
		return (u64)b << PCM_LATE_FINE_SHIFT;
	return 1ULL << (PCM_LATE_FINE_SHIFT + 5 + b - PCM_LATE_FINE);
}

int pcm_timing_init(struct pcm_c *pc)
{
	struct pcm_timing *t;
	struct pcm_tm_params p;
	u32 ranks, buses, tags;

	pcm_config_timing(&pc->live, &p);
	pcm_tm_sizes(&p, &ranks, &buses, &tags);
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	pc->timing = t;
	spin_lock_init(&t->lock);
	t->rank_busy = kvcalloc(ranks, sizeof(u64), GFP_KERNEL);
	t->bus_busy = kvcalloc(buses, sizeof(u64), GFP_KERNEL);
	/* as many as "set tags" may ask for: set never allocates */
	t->tag_free = kvcalloc(PCM_TM_MAX_TAGS, sizeof(u64), GFP_KERNEL);
	t->hist = alloc_percpu(struct pcm_late_hist);
	if (!t->rank_busy || !t->bus_busy || !t->tag_free || !t->hist)
		return -ENOMEM;
	pcm_tm_init(&t->tm, &p, t->rank_busy, t->bus_busy, t->tag_free);
	t->overhead = pc->live.val[PCM_OVERHEAD_NS];
	pc->timed = pcm_tm_active(&p);
	return 0;
}

void pcm_timing_exit(struct pcm_c *pc)
{
	struct pcm_timing *t = pc->timing;

	if (!t)
		return;
	free_percpu(t->hist);
	kvfree(t->tag_free);
	kvfree(t->bus_busy);
	kvfree(t->rank_busy);
	kfree(t);
}

/* "set" changed a parameter: new requests see it. */
void pcm_timing_update(struct pcm_c *pc)
{
	struct pcm_timing *t = pc->timing;
	struct pcm_tm_params p;

	pcm_config_timing(&pc->live, &p);
	spin_lock(&t->lock);
	pcm_tm_set(&t->tm, &p);
	spin_unlock(&t->lock);
	WRITE_ONCE(t->overhead, pc->live.val[PCM_OVERHEAD_NS]);
	WRITE_ONCE(pc->timed, pcm_tm_active(&p));
}

/* Charge the remapped @bio, arriving now; end_io holds it until io->deadline. */
void pcm_timing_charge(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	struct pcm_timing *t = pc->timing;
	u32 shift = pc->layout.row_shift;
	u64 rel = bio->bi_iter.bi_sector - pc->layout.offset;
	struct pcm_tm_req rq = {
		.arrival = ktime_get_ns(),
		.write = op_is_write(bio_op(bio)),
		.zero = bio_op(bio) == REQ_OP_WRITE_ZEROES,
		.row_bytes = 1U << (shift + SECTOR_SHIFT),
		.bytes = bio->bi_iter.bi_size,
	};
	struct pcm_tm_result res;
	unsigned int dir = rq.write;
	u64 lat;

	/* a discard moves no data; a flush has none: the front end only */
	if (bio_op(bio) == REQ_OP_DISCARD || !rq.bytes) {
		rq.bytes = 0;
	} else {
		rq.row = rel >> shift;
		rq.offset = (rel & ((1U << shift) - 1)) << SECTOR_SHIFT;
	}
	spin_lock(&t->lock);
	pcm_tm_submit(&t->tm, &rq, &res);
	lat = res.done - rq.arrival;
	t->lat_sum[dir] += lat;
	t->lat_n[dir]++;
	t->lat_max[dir] = max(t->lat_max[dir], lat);
	t->tag_waits += res.tag_waited;
	t->cache_waits += res.cache_waited;
	spin_unlock(&t->lock);
	/*
	 * What the host adds after a hold ends (the timer's interrupt, the
	 * dm core, waking the submitter) comes off it, so that the submitter
	 * sees the modeled latency; never before the bio arrived.
	 */
	io->deadline = res.done - min(READ_ONCE(t->overhead), lat);
	io->held = false;
	io->timed = true;
}

/* A gap move copied backing row @src into @dst: it holds their ranks. */
void pcm_timing_move(struct pcm_c *pc, u64 src, u64 dst)
{
	struct pcm_timing *t = pc->timing;

	if (!READ_ONCE(pc->timed))
		return;
	spin_lock(&t->lock);
	pcm_tm_move(&t->tm, ktime_get_ns(), src, dst,
		    1U << (pc->layout.row_shift + SECTOR_SHIFT));
	spin_unlock(&t->lock);
}

static void atomic64_raise(atomic64_t *v, s64 to)
{
	s64 old = atomic64_read(v);

	while (old < to && !atomic64_try_cmpxchg(v, &old, to))
		;
}

static void count_lateness(struct pcm_timing *t, u64 ns)
{
	this_cpu_inc(t->hist->n[late_bucket(ns)]);
}

static enum hrtimer_restart pcm_timer_fn(struct hrtimer *timer)
{
	struct pcm_io *io = container_of(timer, struct pcm_io, timer);
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));
	struct pcm_c *pc = io->pc;
	u64 now = ktime_get_ns();

	count_lateness(pc->timing, now > io->deadline ? now - io->deadline : 0);
	/* end_io runs again and lets it go */
	bio_endio(bio);
	return HRTIMER_NORESTART;
}

/* end_io of a charged bio: hold it until its modeled instant. */
int pcm_timing_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	struct pcm_timing *t = pc->timing;
	u64 now;

	if (io->held) {
		io->held = false;
		io->timed = false;
		return DM_ENDIO_DONE;
	}
	now = ktime_get_ns();
	if (now < io->deadline) {
		io->held = true;
		io->pc = pc;
		atomic64_inc(&t->held);
		pcm_hrtimer_init(&io->timer, pcm_timer_fn);
		hrtimer_start(&io->timer, ns_to_ktime(io->deadline), HRTIMER_MODE_ABS);
		return DM_ENDIO_INCOMPLETE;
	}
	/* the backing I/O took longer than the model: this host was too slow */
	atomic64_inc(&t->late);
	atomic64_raise(&t->late_max, now - io->deadline);
	count_lateness(t, now - io->deadline);
	io->timed = false;
	return DM_ENDIO_DONE;
}

void pcm_timing_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		       unsigned int *szp)
{
	struct pcm_timing *t = pc->timing;
	unsigned int sz = *szp;
	u64 mean[2], max[2], n[2], waits, cwaits;
	int d;

	spin_lock(&t->lock);
	for (d = 0; d < 2; d++) {
		n[d] = t->lat_n[d];
		mean[d] = n[d] ? div64_u64(t->lat_sum[d], n[d]) : 0;
		max[d] = t->lat_max[d];
	}
	waits = t->tag_waits;
	cwaits = t->cache_waits;
	spin_unlock(&t->lock);
	DMEMIT(" timing:%s read_lat_mean_ns:%llu read_lat_max_ns:%llu",
	       READ_ONCE(pc->timed) ? "on" : "off", mean[0], max[0]);
	DMEMIT(" write_lat_mean_ns:%llu write_lat_max_ns:%llu", mean[1], max[1]);
	DMEMIT(" tag_waits:%llu cache_waits:%llu held:%lld late:%lld late_max_ns:%lld",
	       waits, cwaits, atomic64_read(&t->held), atomic64_read(&t->late),
	       atomic64_read(&t->late_max));
	*szp = sz;
}

void pcm_timing_reset(struct pcm_c *pc)
{
	struct pcm_timing *t = pc->timing;
	unsigned int cpu;

	spin_lock(&t->lock);
	memset(t->lat_sum, 0, sizeof(t->lat_sum));
	memset(t->lat_n, 0, sizeof(t->lat_n));
	memset(t->lat_max, 0, sizeof(t->lat_max));
	t->tag_waits = 0;
	t->cache_waits = 0;
	spin_unlock(&t->lock);
	atomic64_set(&t->held, 0);
	atomic64_set(&t->late, 0);
	atomic64_set(&t->late_max, 0);
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(t->hist, cpu), 0, sizeof(struct pcm_late_hist));
}

/*
 * "lateness": how long after their modeled instants completions happened,
 * one "from_ns-to_ns:count" word per bucket that has any.
 */
int pcm_timing_lateness(struct pcm_c *pc, char *result, unsigned int maxlen)
{
	struct pcm_timing *t = pc->timing;
	unsigned int sz = 0, b, cpu;
	u64 n, total = 0;

	for (b = 0; b < PCM_LATE_BUCKETS; b++) {
		n = 0;
		for_each_possible_cpu(cpu)
			n += READ_ONCE(per_cpu_ptr(t->hist, cpu)->n[b]);
		total += n;
		if (n)
			DMEMIT("%s%llu-%llu:%llu", sz ? " " : "", late_bucket_floor(b),
			       b + 1 < PCM_LATE_BUCKETS ? late_bucket_floor(b + 1) : U64_MAX,
			       n);
	}
	DMEMIT("%scompletions:%llu", sz ? " " : "", total);
	return 1;
}
