/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm timing model (dm-pcm.rst, "Timing"): channels x ranks behind a
 * front end, each with a busy-until instant in nanoseconds.  Given a
 * request's arrival and the physical rows it touches, the model says when
 * the emulated device completes it.  Pure logic shared by the module, the
 * host unit tests and pcmctl model: it neither allocates nor sleeps, and
 * calls are made in arrival order.
 *
 * A read occupies its rank for read_ns, then its channel's bus for
 * bytes / read_mbps, then the front end; a write occupies the front end,
 * then the bus for bytes / write_mbps, then its rank for write_ns (or
 * zero_write_ns).  A rank's read and program times may vary (struct
 * pcm_tm_var): a seeded draw per row, from the channel's own random
 * stream, adds a bounded jitter and program-and-verify (or re-read)
 * iterations.  The front end (the controller's command processing
 * and DMA over the host link) serves one request at a time, for cmd_ns
 * plus bytes / host_mbps: so a small request costs the device cmd_ns
 * plus its transfer, as Onyx's 512 B and 4 KB read rates show.  Every
 * request first takes a tag (FIFO when all are in flight).  A write
 * completes when its data reached the controller (early) or when its
 * program ended (late).  A row waits for a slot of its channel's buffer
 * (ctrl_slots) before its bus transfer and keeps it until its program
 * ends; it waits for a slot of the front end's buffer (xfer_slots) after
 * the front end and keeps it until the write completes.  With a write
 * cache it completes once the cache admitted it, and each cached write
 * leaves the cache when its program ends (the cache holds at most
 * PCM_TM_CACHE_SLOTS writes).  A gap move
 * is a row read plus a row write on the ranks involved, and nothing else.
 *
 * Time dilation (dm-pcm.rst, "Time dilation"): with a factor K the model
 * runs on the device's clock, the caller's divided by K.  An arrival comes
 * in on the caller's clock, rounded up to the device's nanosecond (so that
 * nothing completes before it arrived), and every instant goes back out
 * multiplied by K: every modeled time, transfers included, is exactly K
 * times what it is at K = 1, and no rate is divided.  The factor is fixed
 * when the model is made, as its geometry is: its instants are kept in
 * device time.
 *
 * Locking follows the hardware: each channel (its bus and ranks) has its
 * own lock, taken one at a time; the front end is one instant moved by
 * cmpxchg.  Tags, the front end's write buffer and the write cache are
 * shared by every request, so when any is set requests also take the
 * model's lock around the whole charge (before any channel's).  A
 * channel's write buffer and random stream are under its own lock.  The
 * parameters change under a seqcount and each request reads them once.
 *
 * Each rank and each channel's bus also counts what it did (struct
 * pcm_tm_use), under its channel's lock: the rows it served, the time it
 * was busy serving them and the time they queued for it (a bus only in
 * the directions it has a rate for: without one it is no resource).  The front
 * end's and the tags' share of a request comes back in its result, for
 * the caller to add up (the kernel, per CPU).
 */
#ifndef PCM_TIMING_H
#define PCM_TIMING_H

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/cache.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "pcm-rand.h"

#define PCM_TM_MAX_CHANNELS	64
#define PCM_TM_MAX_RANKS	64
#define PCM_TM_MAX_TAGS		1024
#define PCM_TM_CACHE_SLOTS	256	/* writes tracked in the write cache */
#define PCM_TM_MAX_NS		1000000000ULL	/* a stage: 1 s */
#define PCM_TM_MAX_MBPS		1000000ULL	/* 1 TB/s */
#define PCM_TM_MAX_CACHE	BIT_ULL(30)	/* write cache: 1 GiB */
#define PCM_TM_MAX_RETRIES	64	/* iterations a stage may add */
#define PCM_TM_MAX_SLOTS	256	/* rows a write buffer holds */
#define PCM_TM_PPM		1000000	/* probabilities: per million */
#define PCM_TM_MAX_DILATION	1000	/* the time dilation factor (pcm-params.c) */

/*
 * Whether the model counts what each resource did (struct pcm_tm_use,
 * the "ranks" figures) and the module its front end's and tags' waits.
 * Only pcm-bench counters' copy of the module (make module-bare) sets it
 * to 0, to measure what counting costs against the same code without it.
 */
#ifndef PCM_COUNTERS
#define PCM_COUNTERS		1
#endif

/*
 * How a rank's stage (a read, a program) varies from one row to the next:
 * it takes its fixed time, plus a jitter uniform in [0, @jitter_ns], plus
 * @retry_ns for each extra iteration.  An iteration fails (the cells did
 * not verify, the data did not decode) with probability @retry_ppm per
 * million, independently, and the controller gives up after @retries
 * extra ones: the count is geometric, truncated at @retries.  All zero:
 * the stage always takes its fixed time, and draws nothing.
 */
struct pcm_tm_var {
	u64 jitter_ns;
	u64 retry_ns;
	u32 retry_ppm;
	u32 retries;
};

/*
 * What a resource (a rank, a channel's bus) did since the model was made
 * or pcm_tm_usage_reset(): rows served, the time it was busy serving
 * them, and the time they waited for it (in all, and the longest wait).
 */
struct pcm_tm_use {
	u64 requests;
	u64 busy_ns;
	u64 wait_ns;
	u64 wait_max_ns;
};

/* What a preset or the table line sets; 0 rates and counts: unlimited. */
struct pcm_tm_params {
	u32 channels, ranks;		/* geometry: needs a reload */
	u32 stripe_rows;		/* rows per interleave unit, >= 1 */
	u32 tags;			/* requests in flight; 0: no limit */
	u64 read_ns, write_ns, zero_write_ns, cmd_ns;
	u64 read_mbps, write_mbps;	/* per channel bus */
	u64 host_mbps;			/* the host link */
	u64 write_cache;		/* bytes; 0: no cache */
	u32 ctrl_slots;			/* rows a channel buffers: needs a reload */
	u32 xfer_slots;			/* rows the front end buffers */
	bool early;			/* completion:early */
	struct pcm_tm_var read_var, write_var;	/* the ranks' stages */
	u64 seed;			/* the channels' random streams */
	u32 dilation;			/* caller's ns per device ns; 0, 1: none */
};

struct pcm_tm_cache_slot {
	u64 free_at;			/* its programs have ended */
	u64 bytes;
};

/*
 * A channel: its bus, its ranks and its write buffer, on cache lines of
 * their own.  The buffer's slots follow the ranks in @rank_busy, and the
 * ranks' figures follow the slots (pcm_tm_rank_use()).
 */
struct pcm_tm_chan {
	spinlock_t lock;		/* all of it */
	struct rnd_state rnd;		/* stream PCM_RAND_TIMING + channel */
	u64 bus_busy;
	struct pcm_tm_use bus_use;	/* the bus's figures */
	u64 rank_busy[];		/* [ranks], then [ctrl_slots]: a min-heap */
};

/*
 * The model's state.  The caller allocates the channels
 * (pcm_tm_chans_bytes()) and the tags' heap (PCM_TM_MAX_TAGS instants).
 */
struct pcm_tm {
	struct pcm_tm_params p;		/* read under @seq */
	seqcount_spinlock_t seq;	/* @p changes under @lock */
	spinlock_t lock;		/* @p's writers, the tags, the cache */
	atomic64_t front_busy;
	u8 *chans;			/* [channels], @chan_stride apart */
	size_t chan_stride;
	u64 *tag_free;			/* [tags]: a min-heap of free instants */
	u32 nr_tags;			/* heap size: tags in use */
	/* the front end's write buffer: a min-heap of free instants */
	u64 xfer_free[PCM_TM_MAX_SLOTS];
	u32 nr_xfer;
	/* write cache: its writes, a min-heap by the end of their programs */
	struct pcm_tm_cache_slot cache[PCM_TM_CACHE_SLOTS];
	u32 cache_len;
	u64 cache_bytes;
};

/*
 * A request: @bytes from byte @offset of backing row @row on, over as many
 * back-to-back rows of @row_bytes as it takes; each row is charged on the
 * rank and channel it lives on.
 */
struct pcm_tm_req {
	u64 arrival;			/* ns, same clock as every other call */
	bool write;
	bool zero;			/* writes zeros: zero_write_ns, if set */
	u64 row;
	u32 offset;
	u32 row_bytes;
	u64 bytes;
	u32 prog_q16;			/* write: program time x this / 2^16 (wear), 0: x1 */
};

struct pcm_tm_loc {
	u32 channel, rank;
};

struct pcm_tm_result {
	u64 start;			/* got its tag */
	u64 done;			/* the modeled completion instant */
	bool tag_waited;		/* all tags were in flight at arrival */
	bool cache_waited;		/* the write cache was full */
	u64 tag_wait;			/* ns it waited for its tag */
	u64 front_ns;			/* ns it held the front end */
	u64 front_wait;			/* ns it queued for the front end */
	struct pcm_tm_loc loc;		/* its first row's (a flush's: 0, 0) */
};

static inline size_t pcm_tm_chan_stride(const struct pcm_tm_params *p)
{
	return ALIGN(sizeof(struct pcm_tm_chan) +
		     (p->ranks + p->ctrl_slots) * sizeof(u64) +
		     p->ranks * sizeof(struct pcm_tm_use), SMP_CACHE_BYTES);
}

/* Bytes of the channels' array pcm_tm_init() takes. */
static inline size_t pcm_tm_chans_bytes(const struct pcm_tm_params *p)
{
	return p->channels * pcm_tm_chan_stride(p);
}

static inline struct pcm_tm_chan *pcm_tm_chan(const struct pcm_tm *tm, u32 c)
{
	return (struct pcm_tm_chan *)(tm->chans + c * tm->chan_stride);
}

/* Channel @ch's ranks' figures, [ranks] of them, after its buffer's slots. */
static inline struct pcm_tm_use *pcm_tm_rank_use(const struct pcm_tm_params *p,
						 struct pcm_tm_chan *ch)
{
	return (struct pcm_tm_use *)&ch->rank_busy[p->ranks + p->ctrl_slots];
}

bool pcm_tm_active(const struct pcm_tm_params *p);
bool pcm_tm_var_active(const struct pcm_tm_var *v);
u64 pcm_tm_draw(struct rnd_state *rnd, const struct pcm_tm_var *v);
struct pcm_tm_loc pcm_tm_locate(const struct pcm_tm_params *p, u64 row);
u64 pcm_tm_xfer_ns(u64 bytes, u64 mbps);
void pcm_tm_init(struct pcm_tm *tm, const struct pcm_tm_params *p,
		 void *chans, u64 *tag_free);
void pcm_tm_set(struct pcm_tm *tm, const struct pcm_tm_params *p);
void pcm_tm_submit(struct pcm_tm *tm, const struct pcm_tm_req *rq,
		   struct pcm_tm_result *res);
u64 pcm_tm_move(struct pcm_tm *tm, u64 now, u64 src, u64 dst, u32 bytes, u32 prog_q16);
void pcm_tm_usage(struct pcm_tm *tm, u32 c, struct pcm_tm_use *bus,
		  struct pcm_tm_use *ranks, u32 first, u32 n);
void pcm_tm_usage_reset(struct pcm_tm *tm);

#endif
