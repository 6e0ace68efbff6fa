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
 * off and costs the map path one load.  When it is on, a bio takes its
 * channel's lock (under which it draws from the channel's random stream,
 * when the ranks' times vary) and moves the front end's instant by
 * cmpxchg (and takes the model's lock only if tags, the front end's write
 * buffer or a write cache are set: those are the whole device's); the
 * figures status shows are counted per CPU, but the ranks' and buses'
 * ("ranks"), which the model counts under the channel's lock it holds.
 *
 * With dilation:K the model hands back instants K times further away
 * (pcm-timing.h): holds, the latencies in status and lateness are all on
 * this host's clock, K times the device's.  overhead_ns is this host's
 * own completion cost, measured at the run's dilation, and is not scaled.
 */
#include <linux/highmem.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>

#include "dm-pcm.h"
#include "dm-pcm-timing.h"
#include "dm-pcm-wear.h"
#include "dm-pcm-compat.h"
#include "pcm_trace.h"

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

/* The figures being counted: under rcu_read_lock() (pcm_timing_reset()). */
static struct pcm_timing_stats __percpu *stats_of(struct pcm_timing *t)
{
	return READ_ONCE(t->stats);
}

int pcm_timing_init(struct pcm_c *pc)
{
	struct pcm_timing *t;
	struct pcm_tm_params p;

	pcm_config_timing(&pc->live, &p);
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	pc->timing = t;
	t->chans = kvzalloc(pcm_tm_chans_bytes(&p), GFP_KERNEL);
	/* as many as "set tags" may ask for: set never allocates */
	t->tag_free = kvcalloc(PCM_TM_MAX_TAGS, sizeof(u64), GFP_KERNEL);
	t->stats = alloc_percpu(struct pcm_timing_stats);
	t->spare = alloc_percpu(struct pcm_timing_stats);
	mutex_init(&t->reset_lock);
	if (!t->chans || !t->tag_free || !t->stats || !t->spare)
		return -ENOMEM;
	pcm_tm_init(&t->tm, &p, t->chans, t->tag_free);
	t->overhead = pc->live.val[PCM_OVERHEAD_NS];
	t->since = ktime_get_ns();
	pc->timed = pcm_tm_active(&p);
	return 0;
}

void pcm_timing_exit(struct pcm_c *pc)
{
	struct pcm_timing *t = pc->timing;

	if (!t)
		return;
	free_percpu(t->spare);
	free_percpu(t->stats);
	kvfree(t->tag_free);
	kvfree(t->chans);
	kfree(t);
}

void pcm_timing_update(struct pcm_c *pc)
{
	struct pcm_timing *t = pc->timing;
	struct pcm_tm_params p;

	pcm_config_timing(&pc->live, &p);
	pcm_tm_set(&t->tm, &p);
	WRITE_ONCE(t->overhead, pc->live.val[PCM_OVERHEAD_NS]);
	WRITE_ONCE(pc->timed, pcm_tm_active(&p));
}

/*
 * Raise this CPU's maximum @m to @v.  A cmpxchg on this CPU's copy: an
 * interrupt's end_io between the read and the write cannot be lost.
 */
static void pcm_cpu_raise(u64 __percpu *m, u64 v)
{
	u64 old = this_cpu_read(*m), cur;

	while (old < v) {
		cur = this_cpu_cmpxchg(*m, old, v);
		if (cur == old)
			return;
		old = cur;
	}
}

/*
 * Whether a write carries only zeros: programming zeros (RESET) is what
 * zero_write_ns times.  Only looked at while zero_write_ns is set; stops
 * at the first byte that is not zero.
 */
static bool bio_is_zeros(struct bio *bio)
{
	struct bvec_iter iter;
	struct bio_vec bv;
	bool zero = true;

	bio_for_each_segment(bv, bio, iter) {
		void *p = kmap_local_page(bv.bv_page);

		zero = !memchr_inv(p + bv.bv_offset, 0, bv.bv_len);
		kunmap_local(p);
		if (!zero)
			break;
	}
	return zero;
}

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
	struct pcm_timing_stats __percpu *st;
	struct pcm_tm_result res;
	unsigned int dir = rq.write;
	u64 lat;

	/* a discard moves no data; a flush has none: the front end only */
	if (bio_op(bio) == REQ_OP_DISCARD || !rq.bytes) {
		rq.bytes = 0;
	} else {
		rq.row = rel >> shift;
		rq.offset = (rel & ((1U << shift) - 1)) << SECTOR_SHIFT;
		if (bio_op(bio) == REQ_OP_WRITE &&
		    READ_ONCE(pc->live.val[PCM_ZERO_WRITE_NS]))
			rq.zero = bio_is_zeros(bio);
		if (rq.write)	/* wear hook: one counter read */
			rq.prog_q16 = pcm_wear_prog_q16(pc, bio->bi_iter.bi_sector);
	}
	pcm_tm_submit(&t->tm, &rq, &res);
	trace_pcm_charge(pc->devt, rq.write, rq.bytes, rq.arrival, res.done, res.loc.channel,
			 res.loc.rank);
	lat = res.done - rq.arrival;
	rcu_read_lock();
	st = stats_of(t);
	/*
	 * The maximum before the count before the sum, as sum_figs() reads
	 * them the other way round: a latency the mean includes is within
	 * the maximum it prints.
	 */
	pcm_cpu_raise(&st->f.lat_max[dir], lat);
	smp_wmb();	/* the maximum before the count: sum_figs()'s smp_rmb()s */
	this_cpu_inc(st->f.lat_n[dir]);
	smp_wmb();	/* the count before the sum */
	this_cpu_add(st->f.lat_sum[dir], lat);
	if (PCM_COUNTERS && res.front_ns) {
		this_cpu_add(st->f.front_busy, res.front_ns);
		if (res.front_wait) {
			this_cpu_add(st->f.front_wait, res.front_wait);
			pcm_cpu_raise(&st->f.front_wait_max, res.front_wait);
		}
	}
	if (res.tag_waited) {
		this_cpu_inc(st->f.tag_waits);
		if (PCM_COUNTERS) {
			this_cpu_add(st->f.tag_wait, res.tag_wait);
			pcm_cpu_raise(&st->f.tag_wait_max, res.tag_wait);
		}
	}
	if (res.cache_waited)
		this_cpu_inc(st->f.cache_waits);
	rcu_read_unlock();
	/*
	 * What the host adds after a hold ends (the timer's interrupt, the
	 * dm core, waking the submitter) comes off it, so that the submitter
	 * sees the modeled latency; never before the bio arrived.  A host
	 * cost, so never dilated.
	 */
	io->deadline = res.done - min(READ_ONCE(t->overhead), lat);
	io->held = false;
	io->timed = true;
	if (PCM_COUNTERS) {	/* for the tracepoints */
		io->chan = res.loc.channel;
		io->rank = res.loc.rank;
	}
}

void pcm_timing_move(struct pcm_c *pc, u64 src, u64 dst, sector_t dst_slot)
{
	struct pcm_timing *t = pc->timing;

	if (!READ_ONCE(pc->timed))
		return;
	pcm_tm_move(&t->tm, ktime_get_ns(), src, dst,
		    1U << (pc->layout.row_shift + SECTOR_SHIFT),
		    pcm_wear_prog_q16(pc, dst_slot));
}

static void count_lateness(struct pcm_timing_stats __percpu *st, u64 ns)
{
	this_cpu_inc(st->late_hist[late_bucket(ns)]);
}

static enum hrtimer_restart pcm_timer_fn(struct hrtimer *timer)
{
	struct pcm_io *io = container_of(timer, struct pcm_io, timer);
	struct pcm_c *pc = io->pc;
	struct bio *bio = pcm_bio_of(pc, io);
	u64 now = ktime_get_ns();

	rcu_read_lock();
	count_lateness(stats_of(pc->timing), now > io->deadline ? now - io->deadline : 0);
	rcu_read_unlock();
	trace_pcm_held(pc->devt, op_is_write(bio_op(bio)), io->deadline, now, io->chan,
		       io->rank);
	/* end_io runs again and lets it go */
	bio_endio(bio);
	return HRTIMER_NORESTART;
}

int pcm_timing_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io,
		      blk_status_t *error)
{
	struct pcm_timing *t = pc->timing;
	struct pcm_timing_stats __percpu *st;
	u64 now;

	if (io->held) {
		io->held = false;
		io->timed = false;
		return DM_ENDIO_DONE;
	}
	now = ktime_get_ns();
	rcu_read_lock();
	st = stats_of(t);
	if (now < io->deadline) {
		this_cpu_inc(st->f.held);
		rcu_read_unlock();
		bio->bi_status = *error;
		io->held = true;
		io->pc = pc;
		pcm_hrtimer_init(&io->timer, pcm_timer_fn);
		hrtimer_start(&io->timer, ns_to_ktime(io->deadline), HRTIMER_MODE_ABS);
		return DM_ENDIO_INCOMPLETE;
	}
	/* the backing I/O took longer than the model: this host was too slow */
	this_cpu_inc(st->f.late);
	pcm_cpu_raise(&st->f.late_max, now - io->deadline);
	count_lateness(st, now - io->deadline);
	rcu_read_unlock();
	trace_pcm_late(pc->devt, op_is_write(bio_op(bio)), io->deadline, now, io->chan,
		       io->rank);
	io->timed = false;
	return DM_ENDIO_DONE;
}

/*
 * The CPUs' figures added up (the maxima: the largest), under
 * rcu_read_lock().  The sums first, then the counts, then the rest, each
 * over every CPU: an updater writes them the other way round
 * (pcm_timing_charge()), and may move to another CPU in between.
 */
static void sum_figs(struct pcm_timing_stats __percpu *st, struct pcm_timing_figs *sum)
{
	const struct pcm_timing_figs *c;
	unsigned int cpu, i;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu)
		for (i = 0; i < 2; i++)
			sum->lat_sum[i] += READ_ONCE(per_cpu_ptr(st, cpu)->f.lat_sum[i]);
	smp_rmb();	/* the sums before the counts: pcm_timing_charge()'s smp_wmb()s */
	for_each_possible_cpu(cpu)
		for (i = 0; i < 2; i++)
			sum->lat_n[i] += READ_ONCE(per_cpu_ptr(st, cpu)->f.lat_n[i]);
	smp_rmb();	/* the counts before the maxima */
	for_each_possible_cpu(cpu) {
		c = &per_cpu_ptr(st, cpu)->f;
		for (i = 0; i < 2; i++)
			sum->lat_max[i] = max(sum->lat_max[i], READ_ONCE(c->lat_max[i]));
		sum->tag_waits += READ_ONCE(c->tag_waits);
		sum->cache_waits += READ_ONCE(c->cache_waits);
		sum->held += READ_ONCE(c->held);
		sum->late += READ_ONCE(c->late);
		sum->late_max = max(sum->late_max, READ_ONCE(c->late_max));
		sum->front_busy += READ_ONCE(c->front_busy);
		sum->front_wait += READ_ONCE(c->front_wait);
		sum->front_wait_max = max(sum->front_wait_max, READ_ONCE(c->front_wait_max));
		sum->tag_wait += READ_ONCE(c->tag_wait);
		sum->tag_wait_max = max(sum->tag_wait_max, READ_ONCE(c->tag_wait_max));
	}
}

/* The figures now counted, summed. */
static void timing_figs(struct pcm_timing *t, struct pcm_timing_figs *sum)
{
	rcu_read_lock();
	sum_figs(stats_of(t), sum);
	rcu_read_unlock();
}

void pcm_timing_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		       unsigned int *szp)
{
	struct pcm_timing_figs fig, *s = &fig;
	unsigned int sz = *szp;
	u64 mean[2];
	int d;

	timing_figs(pc->timing, s);
	for (d = 0; d < 2; d++)
		mean[d] = s->lat_n[d] ? div64_u64(s->lat_sum[d], s->lat_n[d]) : 0;
	DMEMIT(" timing:%s read_lat_mean_ns:%llu read_lat_max_ns:%llu",
	       READ_ONCE(pc->timed) ? "on" : "off", mean[0], s->lat_max[0]);
	DMEMIT(" write_lat_mean_ns:%llu write_lat_max_ns:%llu", mean[1], s->lat_max[1]);
	DMEMIT(" tag_waits:%llu cache_waits:%llu held:%llu late:%llu late_max_ns:%llu",
	       s->tag_waits, s->cache_waits, s->held, s->late, s->late_max);
	*szp = sz;
}

void pcm_timing_reset(struct pcm_c *pc)
{
	struct pcm_timing *t = pc->timing;
	struct pcm_timing_stats __percpu *old;
	unsigned int cpu;

	mutex_lock(&t->reset_lock);
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(t->spare, cpu), 0, sizeof(struct pcm_timing_stats));
	old = t->stats;
	/* the zeros before the pointer (updaters reach them through it) */
	smp_store_release(&t->stats, t->spare);
	/* expedited, as dm core's table swap (dm_sync_table()): a message waits */
	synchronize_rcu_expedited();
	t->spare = old;
	pcm_tm_usage_reset(&t->tm);
	WRITE_ONCE(t->since, ktime_get_ns());
	mutex_unlock(&t->reset_lock);
}

int pcm_timing_lateness(struct pcm_c *pc, char *result, unsigned int maxlen)
{
	struct pcm_timing *t = pc->timing;
	struct pcm_timing_stats __percpu *st;
	unsigned int sz = 0, b, cpu;
	u64 n, total = 0;

	rcu_read_lock();
	st = stats_of(t);
	for (b = 0; b < PCM_LATE_BUCKETS; b++) {
		n = 0;
		for_each_possible_cpu(cpu)
			n += READ_ONCE(per_cpu_ptr(st, cpu)->late_hist[b]);
		total += n;
		if (n)
			DMEMIT("%s%llu-%llu:%llu", sz ? " " : "", late_bucket_floor(b),
			       b + 1 < PCM_LATE_BUCKETS ? late_bucket_floor(b + 1) : U64_MAX,
			       n);
	}
	rcu_read_unlock();
	DMEMIT("%scompletions:%llu", sz ? " " : "", total);
	return 1;
}

/* Ranks' figures read at a time: a small array on the stack. */
#define PCM_USE_BATCH	8

/* @busy over @elapsed, in parts per million. */
static u64 pcm_util_ppm(u64 busy, u64 elapsed)
{
	return elapsed ? mul_u64_u64_div_u64(busy, 1000000, elapsed) : 0;
}

static unsigned int pcm_emit_use(const struct pcm_tm_use *u, u64 elapsed,
				 char *result, unsigned int maxlen, unsigned int sz)
{
	DMEMIT(" requests:%llu busy_ns:%llu util_ppm:%llu wait_ns:%llu wait_max_ns:%llu",
	       u->requests, u->busy_ns, pcm_util_ppm(u->busy_ns, elapsed), u->wait_ns,
	       u->wait_max_ns);
	return sz;
}

int pcm_timing_ranks(struct pcm_c *pc, char *result, unsigned int maxlen)
{
	struct pcm_timing *t = pc->timing;
	u32 channels = pc->cfg.val[PCM_CHANNELS], ranks = pc->cfg.val[PCM_RANKS];
	struct pcm_tm_use bus, u[PCM_USE_BATCH];
	u64 elapsed = ktime_get_ns() - READ_ONCE(t->since);
	struct pcm_timing_figs fig;
	unsigned int sz = 0;
	u32 c, r, i, n;

	timing_figs(t, &fig);
	DMEMIT("elapsed_ns:%llu channels:%u ranks:%u\n", elapsed, channels, ranks);
	DMEMIT("front requests:%llu busy_ns:%llu util_ppm:%llu wait_ns:%llu wait_max_ns:%llu\n",
	       fig.lat_n[0] + fig.lat_n[1], fig.front_busy,
	       pcm_util_ppm(fig.front_busy, elapsed), fig.front_wait, fig.front_wait_max);
	DMEMIT("tags waits:%llu wait_ns:%llu wait_max_ns:%llu", fig.tag_waits, fig.tag_wait,
	       fig.tag_wait_max);
	for (c = 0; c < channels; c++) {
		for (r = 0; r < ranks; r += n) {
			n = min_t(u32, ranks - r, PCM_USE_BATCH);
			pcm_tm_usage(&t->tm, c, &bus, u, r, n);
			if (!r) {
				DMEMIT("\nbus:%u", c);
				sz = pcm_emit_use(&bus, elapsed, result, maxlen, sz);
			}
			for (i = 0; i < n; i++) {
				DMEMIT("\nrank:%u.%u", c, r + i);
				sz = pcm_emit_use(&u[i], elapsed, result, maxlen, sz);
			}
		}
	}
	return 1;
}

void pcm_timing_status_ranks(struct pcm_c *pc, char *result, unsigned int maxlen,
			     unsigned int *szp)
{
	struct pcm_timing *t = pc->timing;
	u32 channels = pc->cfg.val[PCM_CHANNELS], ranks = pc->cfg.val[PCM_RANKS];
	struct pcm_tm_use bus, u[PCM_USE_BATCH];
	u64 elapsed = ktime_get_ns() - READ_ONCE(t->since);
	u64 busy_max = 0, busy = 0, wait = 0, wait_max = 0, bus_wait = 0;
	struct pcm_timing_figs fig;
	unsigned int sz = *szp;
	u32 c, r, i, n;

	timing_figs(t, &fig);
	for (c = 0; c < channels; c++) {
		for (r = 0; r < ranks; r += n) {
			n = min_t(u32, ranks - r, PCM_USE_BATCH);
			pcm_tm_usage(&t->tm, c, &bus, u, r, n);
			for (i = 0; i < n; i++) {
				busy_max = max(busy_max, u[i].busy_ns);
				busy += u[i].busy_ns;
				wait += u[i].wait_ns;
				wait_max = max(wait_max, u[i].wait_max_ns);
			}
		}
		bus_wait += bus.wait_ns;
	}
	DMEMIT(" rank_util_max_ppm:%llu rank_util_mean_ppm:%llu",
	       pcm_util_ppm(busy_max, elapsed),
	       pcm_util_ppm(div_u64(busy, channels * ranks), elapsed));
	DMEMIT(" rank_wait_ns:%llu rank_wait_max_ns:%llu bus_wait_ns:%llu", wait, wait_max,
	       bus_wait);
	DMEMIT(" front_wait_ns:%llu tag_wait_ns:%llu", fig.front_wait, fig.tag_wait);
	*szp = sz;
}
