// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm timing model: see pcm-timing.h.  Every resource is a busy-until
 * instant; a request starts on a resource at max(its arrival there, the
 * resource's busy-until) and moves it forward by its service time.
 */
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/string.h>

#include "pcm-timing.h"

/* Row @row's channel and rank: interleave units striped over channels. */
struct pcm_tm_loc pcm_tm_locate(const struct pcm_tm_params *p, u64 row)
{
	u64 unit = div_u64(row, p->stripe_rows);
	u32 ch, rk;

	unit = div_u64_rem(unit, p->channels, &ch);
	div_u64_rem(unit, p->ranks, &rk);
	return (struct pcm_tm_loc){ .channel = ch, .rank = rk };
}

/* Whether a stage varies at all: otherwise it draws nothing. */
bool pcm_tm_var_active(const struct pcm_tm_var *v)
{
	return v->jitter_ns || (v->retries && v->retry_ppm && v->retry_ns);
}

/* Whether the model can delay anything: otherwise callers skip it. */
bool pcm_tm_active(const struct pcm_tm_params *p)
{
	return p->read_ns || p->write_ns || p->zero_write_ns || p->cmd_ns ||
	       p->read_mbps || p->write_mbps || p->host_mbps || p->tags ||
	       pcm_tm_var_active(&p->read_var) || pcm_tm_var_active(&p->write_var);
}

/*
 * What a stage adds to its fixed time this once (struct pcm_tm_var): a
 * jitter, then failed iterations one draw each, so that the count is
 * geometric without a logarithm.  At most 1 + PCM_TM_MAX_RETRIES draws.
 */
u64 pcm_tm_draw(struct rnd_state *rnd, const struct pcm_tm_var *v)
{
	u64 ns = 0;
	u32 k;

	if (v->jitter_ns)
		ns = pcm_rand_upto(rnd, v->jitter_ns);
	if (!v->retry_ns || !v->retry_ppm)
		return ns;
	for (k = 0; k < v->retries && pcm_rand_ppm(rnd, v->retry_ppm); k++)
		ns += v->retry_ns;
	return ns;
}

/* A stage of @ns on channel @ch: varied, when @v says so. */
static u64 stage(struct pcm_tm_chan *ch, u64 ns, const struct pcm_tm_var *v)
{
	if (!pcm_tm_var_active(v))
		return ns;
	return ns + pcm_tm_draw(&ch->rnd, v);
}

/* Nanoseconds to move @bytes at @mbps (10^6 bytes/s), rounded up; 0: free. */
u64 pcm_tm_xfer_ns(u64 bytes, u64 mbps)
{
	if (!mbps)
		return 0;
	return div64_u64(bytes * 1000 + mbps - 1, mbps);
}

/*
 * Time dilation: an instant of the caller's clock on the device's, rounded
 * up (so that a request never completes before it arrived), and back.
 * At K = 8 a device nanosecond is 8 of the caller's: every modeled time
 * comes out exactly K times longer, and a rate exactly K times slower.
 */
static u64 to_device(const struct pcm_tm_params *p, u64 ns)
{
	return p->dilation > 1 ? div_u64(ns + p->dilation - 1, p->dilation) : ns;
}

static u64 to_caller(const struct pcm_tm_params *p, u64 ns)
{
	return p->dilation > 1 ? ns * p->dilation : ns;
}

/* A resource served a row for @busy ns after it waited @wait ns. */
static __always_inline void use_add(struct pcm_tm_use *u, u64 busy, u64 wait)
{
	if (!PCM_COUNTERS)
		return;
	u->requests++;
	u->busy_ns += busy;
	u->wait_ns += wait;
	u->wait_max_ns = max(u->wait_max_ns, wait);
}

/*
 * Rank @r of @ch serves a stage of @ns from @at on: when it ends.  It
 * counts the row, the stage and the wait for what was ahead.  A stage
 * that takes no time (write_ns 0) waits for a stage ahead but leaves the
 * rank's instant where it was: it delays nothing.  Were it to move the
 * instant to @at, a request charged after it but reaching the rank
 * earlier (another CPU's write, whose front end's turn came first while
 * this one went past it, the front end being lock-free) would wait for
 * a rank that was doing nothing.
 */
static __always_inline u64 rank_serve(const struct pcm_tm_params *p,
				      struct pcm_tm_chan *ch, u32 r, u64 at, u64 ns)
{
	u64 start = max(at, ch->rank_busy[r]);

	if (ns)
		ch->rank_busy[r] = start + ns;
	use_add(&pcm_tm_rank_use(p, ch)[r], ns, start - at);
	return start + ns;
}

/* Occupy a resource busy until *@busy from @at for @ns: when it is done. */
static u64 occupy(u64 *busy, u64 at, u64 ns)
{
	*busy = max(at, *busy) + ns;
	return *busy;
}

static void heap_down(u64 *h, u32 n, u32 i)
{
	for (;;) {
		u32 l = 2 * i + 1, m = i;

		if (l < n && h[l] < h[m])
			m = l;
		if (l + 1 < n && h[l + 1] < h[m])
			m = l + 1;
		if (m == i)
			return;
		swap(h[i], h[m]);
		i = m;
	}
}

/*
 * A pool of slots (tags, a write buffer's rows) is a min-heap of the
 * instants its slots free.  Resize @h from @old slots to @n.
 */
static void pool_resize(u64 *h, u32 old, u32 n)
{
	u32 i;

	/* shrinking keeps the latest: the requests still in flight */
	while (old > n) {
		h[0] = h[--old];
		heap_down(h, old, 0);
	}
	for (i = old; i < n; i++)
		h[i] = 0;
	for (i = n / 2; i-- > 0;)
		heap_down(h, n, i);
}

/* When a slot of pool @h (@n slots, 0: no limit) is free from @at on. */
static u64 pool_take(const u64 *h, u32 n, u64 at)
{
	return n && h[0] > at ? h[0] : at;
}

/* The slot pool_take() gave is held until @until. */
static void pool_put(u64 *h, u32 n, u64 until)
{
	if (!n)
		return;
	h[0] = until;
	heap_down(h, n, 0);
}

static void tags_rebuild(struct pcm_tm *tm, u32 old, u32 n)
{
	pool_resize(tm->tag_free, old, n);
	tm->nr_tags = n;
}

static void xfer_rebuild(struct pcm_tm *tm, u32 old, u32 n)
{
	pool_resize(tm->xfer_free, old, n);
	tm->nr_xfer = n;
}

/*
 * @chans holds pcm_tm_chans_bytes(@p); @tag_free holds PCM_TM_MAX_TAGS
 * instants, so that "set tags" needs no allocation.
 */
void pcm_tm_init(struct pcm_tm *tm, const struct pcm_tm_params *p,
		 void *chans, u64 *tag_free)
{
	u32 c;

	memset(tm, 0, sizeof(*tm));
	tm->p = *p;
	spin_lock_init(&tm->lock);
	seqcount_spinlock_init(&tm->seq, &tm->lock);
	atomic64_set(&tm->front_busy, 0);
	tm->chans = chans;
	tm->chan_stride = pcm_tm_chan_stride(p);
	memset(chans, 0, pcm_tm_chans_bytes(p));
	for (c = 0; c < p->channels; c++) {
		spin_lock_init(&pcm_tm_chan(tm, c)->lock);
		pcm_rand_stream(&pcm_tm_chan(tm, c)->rnd, p->seed, PCM_RAND_TIMING + c);
	}
	tm->tag_free = tag_free;
	tags_rebuild(tm, 0, p->tags);
	xfer_rebuild(tm, 0, p->xfer_slots);
}

/*
 * New timing for new requests; the geometry, the seed and the dilation
 * stay what init gave (the streams go on: a reload starts them again; the
 * instants are the device's, on the clock the dilation gave).
 */
void pcm_tm_set(struct pcm_tm *tm, const struct pcm_tm_params *p)
{
	struct pcm_tm_params n = *p;

	spin_lock(&tm->lock);
	n.channels = tm->p.channels;
	n.ranks = tm->p.ranks;
	n.stripe_rows = tm->p.stripe_rows;
	n.seed = tm->p.seed;
	n.ctrl_slots = tm->p.ctrl_slots;
	n.dilation = tm->p.dilation;
	write_seqcount_begin(&tm->seq);
	tm->p = n;
	write_seqcount_end(&tm->seq);
	if (n.tags != tm->nr_tags)
		tags_rebuild(tm, tm->nr_tags, n.tags);
	if (n.xfer_slots != tm->nr_xfer)
		xfer_rebuild(tm, tm->nr_xfer, n.xfer_slots);
	spin_unlock(&tm->lock);
}

/* The parameters as one consistent copy, whatever "set" does meanwhile. */
static void read_params(struct pcm_tm *tm, struct pcm_tm_params *p)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&tm->seq);
		*p = tm->p;
	} while (read_seqcount_retry(&tm->seq, seq));
}

/* Take the tag that frees first: when the request may start. */
static u64 take_tag(struct pcm_tm *tm, u64 arrival, bool *waited)
{
	u64 start = pool_take(tm->tag_free, tm->nr_tags, arrival);

	*waited = start > arrival;
	return start;
}

/* The cache's writes as a min-heap of the instants their programs end. */
static void cache_down(struct pcm_tm *tm, u32 i)
{
	struct pcm_tm_cache_slot *h = tm->cache;
	u32 n = tm->cache_len;

	for (;;) {
		u32 l = 2 * i + 1, m = i;

		if (l < n && h[l].free_at < h[m].free_at)
			m = l;
		if (l + 1 < n && h[l + 1].free_at < h[m].free_at)
			m = l + 1;
		if (m == i)
			return;
		swap(h[i], h[m]);
		i = m;
	}
}

/* Writes whose programs ended by @t leave the cache, in any order. */
static void cache_drain(struct pcm_tm *tm, u64 t)
{
	while (tm->cache_len && tm->cache[0].free_at <= t) {
		tm->cache_bytes -= tm->cache[0].bytes;
		tm->cache[0] = tm->cache[--tm->cache_len];
		cache_down(tm, 0);
	}
}

/*
 * When the cache admits @bytes arriving at @t: once it has room for them
 * and a free slot (it tracks PCM_TM_CACHE_SLOTS writes).  A write larger
 * than the cache waits for it to be empty.
 */
static u64 cache_admit(struct pcm_tm *tm, u64 size, u64 t, u64 bytes, bool *waited)
{
	u64 need = min(bytes, size);

	cache_drain(tm, t);
	*waited = false;
	while (tm->cache_bytes + need > size ||
	       tm->cache_len == PCM_TM_CACHE_SLOTS) {
		t = tm->cache[0].free_at;
		*waited = true;
		cache_drain(tm, t);
	}
	return t;
}

/* The write occupies the cache until its program ends at @free_at. */
static void cache_add(struct pcm_tm *tm, u64 size, u64 bytes, u64 free_at)
{
	struct pcm_tm_cache_slot *h = tm->cache;
	u32 i = tm->cache_len++;

	bytes = min(bytes, size);
	h[i] = (struct pcm_tm_cache_slot){ .free_at = free_at, .bytes = bytes };
	while (i && h[(i - 1) / 2].free_at > h[i].free_at) {
		swap(h[i], h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	tm->cache_bytes += bytes;
}

/*
 * A serial resource every request shares (a channel's bus, the front
 * end).  Its time is reserved in the order requests would reach it if
 * nothing delayed them (@reserve), so that a request waiting elsewhere
 * (a read behind its rank's program) does not hold up the ones behind
 * it; its own transfer ends at the later of its reservation's end and
 * @ready + @ns.  Throughput stays bounded by the resource, and an idle
 * device adds the stages up.  A stage that takes no time delays nothing
 * and is not touched (no rate, no command time: the common case).
 * Callers hold the resource's lock.
 */
static u64 pass(u64 *busy, u64 reserve, u64 ready, u64 ns)
{
	if (!ns)
		return ready;
	return max(occupy(busy, reserve, ns), ready + ns);
}

/*
 * pass() on the front end, which every CPU's requests share: no lock.
 * What it held the front end and queued for it go to @res.
 */
static u64 pass_front(struct pcm_tm *tm, u64 reserve, u64 ready, u64 ns,
		      struct pcm_tm_result *res)
{
	s64 old, busy;
	u64 done;

	if (!ns)
		return ready;
	old = atomic64_read(&tm->front_busy);
	do {
		busy = max_t(u64, reserve, old) + ns;
	} while (!atomic64_try_cmpxchg(&tm->front_busy, &old, busy));
	done = max_t(u64, busy, ready + ns);
	res->front_ns += ns;
	res->front_wait += done - (ready + ns);
	return done;
}

/*
 * Read @bytes of @row from its rank, then over its bus, for a request
 * that reached the device at @t: when they left the bus.  The rank and
 * the bus count the row (@where: where it lives, if not NULL).
 */
static u64 read_row(struct pcm_tm *tm, const struct pcm_tm_params *p, u64 t,
		    u64 row, u64 bytes, struct pcm_tm_loc *where)
{
	struct pcm_tm_loc at = pcm_tm_locate(p, row);
	struct pcm_tm_chan *ch = pcm_tm_chan(tm, at.channel);
	u64 xfer = pcm_tm_xfer_ns(bytes, p->read_mbps);
	u64 ready, out;

	if (where)
		*where = at;
	spin_lock(&ch->lock);
	ready = rank_serve(p, ch, at.rank, t, stage(ch, p->read_ns, &p->read_var));
	out = pass(&ch->bus_busy, t + p->read_ns, ready, xfer);
	if (xfer)	/* a bus without a rate is no resource: it counts nothing */
		use_add(&ch->bus_use, xfer, out - (ready + xfer));
	spin_unlock(&ch->lock);
	return out;
}

/*
 * Write @bytes of @row over its bus (reserved from @reserve, the data
 * ready at @t) into a slot of its controller's buffer, then program its
 * rank; the slot frees when the program ends (with ctrl_slots 0 the
 * buffer has no bound).  *@in_ctrl: when the data reached the
 * controller; returns when the program ends.
 */
static u64 write_row(struct pcm_tm *tm, const struct pcm_tm_params *p,
		     u64 reserve, u64 t, u64 row, u64 bytes, bool zero, u32 prog_q16,
		     u64 *in_ctrl, struct pcm_tm_loc *where)
{
	struct pcm_tm_loc at = pcm_tm_locate(p, row);
	struct pcm_tm_chan *ch = pcm_tm_chan(tm, at.channel);
	u64 *slots = &ch->rank_busy[p->ranks];
	u64 xfer = pcm_tm_xfer_ns(bytes, p->write_mbps);
	/* zero_write_ns 0: zeros program like any data */
	u64 prog = zero && p->zero_write_ns ? p->zero_write_ns : p->write_ns;
	u64 done;

	/* a worn row programs slower (pcm_wear_lat_curve) */
	if (prog_q16)
		prog = mul_u64_u32_shr(prog, prog_q16, 16);
	if (where)
		*where = at;
	spin_lock(&ch->lock);
	/* the bus's wait includes the wait for a slot of the buffer */
	*in_ctrl = pass(&ch->bus_busy, reserve, pool_take(slots, p->ctrl_slots, t), xfer);
	if (xfer)
		use_add(&ch->bus_use, xfer, *in_ctrl - (t + xfer));
	done = rank_serve(p, ch, at.rank, *in_ctrl, stage(ch, prog, &p->write_var));
	pool_put(slots, p->ctrl_slots, done);
	spin_unlock(&ch->lock);
	return done;
}

/* Bytes of @rq in its @i-th row. */
static u64 piece(const struct pcm_tm_req *rq, u64 i)
{
	u64 first = min_t(u64, rq->bytes, rq->row_bytes - rq->offset);

	if (!i)
		return first;
	return min_t(u64, rq->bytes - first - (i - 1) * rq->row_bytes, rq->row_bytes);
}

static u64 nr_pieces(const struct pcm_tm_req *rq)
{
	return div64_u64(rq->offset + rq->bytes + rq->row_bytes - 1, rq->row_bytes);
}

/*
 * The front end handles a request's command and moves its data over the
 * host link, one request at a time: @cmd_ns (first piece only) plus the
 * transfer.  Reads pass it last, as their data streams to the host.
 */
static u64 front_end(struct pcm_tm *tm, const struct pcm_tm_params *p,
		     u64 reserve, u64 ready, u64 bytes, bool first,
		     struct pcm_tm_result *res)
{
	return pass_front(tm, reserve, ready, (first ? p->cmd_ns : 0) +
			  pcm_tm_xfer_ns(bytes, p->host_mbps), res);
}

static u64 submit_read(struct pcm_tm *tm, const struct pcm_tm_params *p, u64 t,
		       const struct pcm_tm_req *rq, struct pcm_tm_result *res)
{
	u64 i, n = nr_pieces(rq), done = t;

	/* rows stream to the host as they leave their buses */
	for (i = 0; i < n; i++) {
		u64 bytes = piece(rq, i);
		u64 idle = t + p->read_ns + pcm_tm_xfer_ns(bytes, p->read_mbps);
		u64 ready = read_row(tm, p, t, rq->row + i, bytes, i ? NULL : &res->loc);

		done = max(done, front_end(tm, p, idle, ready, bytes, !i, res));
	}
	return done;
}

static u64 submit_write(struct pcm_tm *tm, const struct pcm_tm_params *p, u64 t,
			const struct pcm_tm_req *rq, struct pcm_tm_result *res)
{
	u64 i, n = nr_pieces(rq), in_ctrl = t, programmed = t, c, end;

	t = front_end(tm, p, t, t, rq->bytes, true, res);
	if (p->write_cache)
		t = cache_admit(tm, p->write_cache, t, rq->bytes, &res->cache_waited);
	for (i = 0; i < n; i++) {
		/* a row leaves the front end's buffer once it completes */
		u64 ready = pool_take(tm->xfer_free, p->xfer_slots, t);

		end = write_row(tm, p, t, ready, rq->row + i, piece(rq, i), rq->zero,
				rq->prog_q16, &c, i ? NULL : &res->loc);
		pool_put(tm->xfer_free, p->xfer_slots,
			 p->early && !p->write_cache ? c : end);
		in_ctrl = max(in_ctrl, c);
		programmed = max(programmed, end);
	}
	if (p->write_cache) {
		cache_add(tm, p->write_cache, rq->bytes, programmed);
		return t;
	}
	return p->early ? in_ctrl : programmed;
}

static void charge(struct pcm_tm *tm, const struct pcm_tm_params *p,
		   const struct pcm_tm_req *rq, struct pcm_tm_result *res)
{
	res->cache_waited = false;
	res->front_ns = 0;
	res->front_wait = 0;
	res->loc = (struct pcm_tm_loc){};
	if (rq->write)
		res->done = submit_write(tm, p, res->start, rq, res);
	else
		res->done = submit_read(tm, p, res->start, rq, res);
}

/*
 * Charge @rq to the model; @res says when it completes.  Both are on the
 * caller's clock; the model works on the device's (the dilation).
 */
void pcm_tm_submit(struct pcm_tm *tm, const struct pcm_tm_req *rq,
		   struct pcm_tm_result *res)
{
	struct pcm_tm_params p;
	u64 arrival;

	read_params(tm, &p);
	arrival = to_device(&p, rq->arrival);
	/*
	 * Tags, buffer and cache are the whole device's: the model's lock.
	 * Without them, @p says so and the pools are not touched, whatever
	 * "set" does meanwhile; with them, the parameters are read again
	 * under the lock "set" takes, so that they match the pools' sizes
	 * (the dilation never changes).
	 */
	if (!p.tags && !p.write_cache && !p.xfer_slots) {
		res->start = arrival;
		res->tag_waited = false;
		charge(tm, &p, rq, res);
	} else {
		spin_lock(&tm->lock);
		p = tm->p;
		res->start = take_tag(tm, arrival, &res->tag_waited);
		charge(tm, &p, rq, res);
		pool_put(tm->tag_free, tm->nr_tags, res->done);
		spin_unlock(&tm->lock);
	}
	res->tag_wait = res->start - arrival;
	if (p.dilation > 1) {	/* to_caller(), at once */
		res->tag_wait *= p.dilation;
		res->front_ns *= p.dilation;
		res->front_wait *= p.dilation;
		res->start *= p.dilation;
		res->done *= p.dilation;
	}
}

/*
 * A gap move from backing row @src to @dst at @now: a row read and a row
 * write on their ranks and buses, without a tag or the front end.  The
 * destination's rank is charged from when the copy would reach it on an
 * idle device, not from when a busy source lets it go: a controller
 * serves other requests there meanwhile, and a rank left idle while it
 * waits would cost throughput that the hardware does not lose.  A worn
 * destination programs slower, as a write there does (@prog_q16, 0: x1).
 * Returns when the copy's program ends; @now and that instant are on the
 * caller's clock, as pcm_tm_submit()'s.
 */
u64 pcm_tm_move(struct pcm_tm *tm, u64 now, u64 src, u64 dst, u32 bytes, u32 prog_q16)
{
	struct pcm_tm_params p;
	u64 idle, read, in_ctrl, programmed, prog;

	read_params(tm, &p);
	now = to_device(&p, now);
	prog = prog_q16 ? mul_u64_u32_shr(p.write_ns, prog_q16, 16) : p.write_ns;
	idle = now + p.read_ns + pcm_tm_xfer_ns(bytes, p.read_mbps);
	read = read_row(tm, &p, now, src, bytes, NULL);
	programmed = write_row(tm, &p, idle, idle, dst, bytes, false, prog_q16, &in_ctrl,
			       NULL);
	return to_caller(&p, max(programmed, read + pcm_tm_xfer_ns(bytes, p.write_mbps) + prog));
}

/* A resource's figures on the caller's clock (@k: the dilation). */
static void use_out(struct pcm_tm_use *out, const struct pcm_tm_use *u, u32 k)
{
	*out = *u;
	if (k > 1) {
		out->busy_ns *= k;
		out->wait_ns *= k;
		out->wait_max_ns *= k;
	}
}

/*
 * Channel @c's figures since the model was made or last reset: its bus's
 * in @bus, its ranks @first to @first + @n - 1's in @ranks, all taken at
 * once under its lock, on the caller's clock.  Busy and wait times count
 * when a row is charged, so a resource booked ahead (requests queued
 * behind it) has counted time it will be busy.
 */
void pcm_tm_usage(struct pcm_tm *tm, u32 c, struct pcm_tm_use *bus,
		  struct pcm_tm_use *ranks, u32 first, u32 n)
{
	struct pcm_tm_chan *ch = pcm_tm_chan(tm, c);
	struct pcm_tm_params p;
	struct pcm_tm_use *u;
	u32 r;

	read_params(tm, &p);	/* geometry, slots and dilation: as init gave */
	spin_lock(&ch->lock);
	u = pcm_tm_rank_use(&p, ch);
	use_out(bus, &ch->bus_use, p.dilation);
	for (r = 0; r < n && first + r < p.ranks; r++)
		use_out(&ranks[r], &u[first + r], p.dilation);
	spin_unlock(&ch->lock);
}

/* Every rank's and bus's figures to zero; the busy-until instants stay. */
void pcm_tm_usage_reset(struct pcm_tm *tm)
{
	struct pcm_tm_params p;
	u32 c;

	read_params(tm, &p);
	for (c = 0; c < p.channels; c++) {
		struct pcm_tm_chan *ch = pcm_tm_chan(tm, c);

		spin_lock(&ch->lock);
		memset(&ch->bus_use, 0, sizeof(ch->bus_use));
		memset(pcm_tm_rank_use(&p, ch), 0, p.ranks * sizeof(struct pcm_tm_use));
		spin_unlock(&ch->lock);
	}
}
