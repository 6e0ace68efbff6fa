// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-timing.c: single requests against the
 * formulas of dm-pcm.rst's "Timing" section, closed loops against the parallelism
 * the geometry allows, and the interactions (a read behind a program, a
 * gap move, the write cache, tags, "set" mid-run).
 */
#include <math.h>

#include "../../dm-pcm/pcm-timing.h"
#include "tap.h"

static u8 chans[PCM_TM_MAX_CHANNELS * (sizeof(struct pcm_tm_chan) + SMP_CACHE_BYTES +
				       (8 + sizeof(struct pcm_tm_use)) * PCM_TM_MAX_RANKS)];
static u64 tag_free[PCM_TM_MAX_TAGS];
static struct pcm_tm tm;

/* A device with every cost distinct, so that a formula can't match by luck. */
static struct pcm_tm_params base(void)
{
	return (struct pcm_tm_params){
		.channels = 1, .ranks = 1, .stripe_rows = 1,
		.read_ns = 1000, .write_ns = 100000, .zero_write_ns = 30000,
		.cmd_ns = 700, .read_mbps = 400, .write_mbps = 200,
		.host_mbps = 2000,
	};
}

static void init(const struct pcm_tm_params *p)
{
	check(pcm_tm_chans_bytes(p) <= sizeof(chans), "channels fit");
	pcm_tm_init(&tm, p, chans, tag_free);
}

static u64 bus(u32 c)
{
	return pcm_tm_chan(&tm, c)->bus_busy;
}

/* One request of one piece: its modeled latency. */
static u64 one(u64 at, bool write, u64 row, u32 bytes, bool zero,
	       struct pcm_tm_result *res)
{
	struct pcm_tm_req rq = { .arrival = at, .write = write, .zero = zero,
				 .row = row, .row_bytes = 4096, .bytes = bytes };
	struct pcm_tm_result r;

	pcm_tm_submit(&tm, &rq, res ? res : &r);
	return (res ? res : &r)->done - at;
}

static void test_xfer(void)
{
	check(pcm_tm_xfer_ns(4096, 400) == 10240, "%llu", pcm_tm_xfer_ns(4096, 400));
	check(pcm_tm_xfer_ns(1, 3) == 334, "rounds up: %llu", pcm_tm_xfer_ns(1, 3));
	check(pcm_tm_xfer_ns(1 << 20, 0) == 0, "0 MB/s: no limit");
}

/* Rows stripe over channels in units of stripe_rows, then over ranks. */
static void test_locate(void)
{
	struct pcm_tm_params p = base();
	long bad = 0;
	u64 row;

	p.channels = 3;
	p.ranks = 5;
	p.stripe_rows = 2;
	for (row = 0; row < 200; row++) {
		struct pcm_tm_loc at = pcm_tm_locate(&p, row);

		if (at.channel != (row / 2) % 3 || at.rank != (row / 2 / 3) % 5)
			bad++;
	}
	check(bad == 0, "%ld rows placed wrong", bad);
}

/* An idle device: each request's latency is the sum of its stages. */
static void test_qd1_formula(void)
{
	struct pcm_tm_params p = base();
	u64 rd = 700 + 1000 + 10240 + 2048, wr_bus = 700 + 2048 + 20480;

	init(&p);
	check(one(0, false, 0, 4096, false, NULL) == rd, "read");
	check(one(20000000, true, 0, 4096, false, NULL) == wr_bus + 100000,
	      "late write");
	check(one(30000000, true, 0, 4096, true, NULL) == wr_bus + 30000,
	      "late write of zeros");
	p.zero_write_ns = 0;
	pcm_tm_set(&tm, &p);
	check(one(35000000, true, 0, 4096, true, NULL) == wr_bus + 100000,
	      "zero_write_ns 0: zeros take write_ns");
	p.zero_write_ns = 30000;
	p.early = true;
	pcm_tm_set(&tm, &p);
	check(one(40000000, true, 0, 4096, false, NULL) == wr_bus, "early write");
	/* the program still happened: a read right after it waits for it */
	check(one(40000000 + wr_bus, false, 0, 4096, false, NULL) == 100000 + rd,
	      "read after an early write waits for the program");
}

/* A read behind a program waits on the same rank, not on another. */
static void test_read_behind_write(void)
{
	struct pcm_tm_params p = base();
	u64 rd = 700 + 1000 + 10240 + 2048;

	p.channels = 2;
	p.ranks = 2;
	p.early = true;
	init(&p);
	one(0, true, 0, 4096, false, NULL);		/* channel 0, rank 0 */
	/* row 2: channel 0, rank 1: shares only the bus, idle by then */
	check(one(50000, false, 2, 4096, false, NULL) == rd, "other rank");
	/* row 1: channel 1: nothing shared */
	check(one(70000, false, 1, 4096, false, NULL) == rd, "other channel");
	/* the program of row 0 ends at 700 + 2048 + 20480 + 100000 */
	check(one(90000, false, 0, 4096, false, NULL) == 123228 - 90000 + rd,
	      "same rank waits");
	/* and holds neither the bus nor the front end for the reads behind it */
	check(one(115000, false, 2, 4096, false, NULL) == rd, "other rank, same bus");
	check(one(125000, false, 1, 4096, false, NULL) == rd, "other channel");
}

/*
 * The front end serves one request at a time for cmd_ns plus its
 * transfer: small requests are bound by their sum, as Onyx's are.
 */
static void test_front_end(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_result r[8];
	u64 i, rd = 700 + 1000 + 10240 + 2048;

	p.channels = 8;
	init(&p);
	for (i = 0; i < 8; i++)
		one(0, false, i, 4096, false, &r[i]);
	/* eight channels read at once, then queue at the front end */
	check(r[0].done == rd && r[7].done == rd + 7 * (700 + 2048),
	      "reads %llu .. %llu", r[0].done, r[7].done);
	init(&p);
	for (i = 0; i < 8; i++)
		one(0, true, i, 4096, false, &r[i]);
	/* writes pass it first: the eighth program starts 7 front ends later */
	check(r[7].done == 8 * (700 + 2048) + 20480 + 100000, "writes %llu", r[7].done);
}

/*
 * A stage that takes no time delays nothing: with no command time and no
 * host rate, a write is not queued behind the front-end slot a read on
 * another channel reserved for later (the read's data is still on its
 * rank), and with tags and the write cache off no request waits on
 * anything but its own channel.
 */
static void test_free_stage(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_result r;

	p.cmd_ns = 0;
	p.host_mbps = 0;
	p.channels = 2;
	init(&p);
	one(0, false, 0, 4096, false, NULL);
	check(one(0, true, 1, 4096, false, &r) == 20480 + 100000,
	      "write on the other channel: %llu", r.done);
	check(atomic64_read(&tm.front_busy) == 0, "the front end was never touched");
	check(pcm_tm_chan(&tm, 0)->rank_busy[0] == 1000 &&
	      pcm_tm_chan(&tm, 1)->rank_busy[0] == 20480 + 100000,
	      "each request only on its channel's rank");
}

/* Writes to one rank serialize; on different channels they overlap. */
static void test_parallel_writes(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_result r[4];
	u64 i;

	p.channels = 4;
	p.cmd_ns = 0;
	p.host_mbps = 0;
	init(&p);
	for (i = 0; i < 4; i++)
		one(0, true, i, 4096, false, &r[i]);
	check(r[3].done == 20480 + 100000, "4 channels overlap: %llu", r[3].done);
	init(&p);
	for (i = 0; i < 4; i++)
		one(0, true, 4 * i, 4096, false, &r[i]);
	check(r[3].done == 20480 + 4 * 100000, "one rank serializes: %llu", r[3].done);
}

/* A request over rows is charged row by row where each row lives. */
static void test_pieces(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_req rq = { .row = 0, .row_bytes = 4096, .bytes = 8192 };
	struct pcm_tm_result r;

	p.cmd_ns = 0;
	p.host_mbps = 0;
	p.channels = 2;
	init(&p);
	pcm_tm_submit(&tm, &rq, &r);
	check(r.done == 1000 + 10240, "two channels in parallel: %llu", r.done);
	p.channels = 1;
	init(&p);
	pcm_tm_submit(&tm, &rq, &r);
	/* the second read overlaps the first's transfer, then waits for the bus */
	check(r.done == 1000 + 2 * 10240, "one rank and bus: %llu", r.done);
	/* 8 KiB from the middle of a row: 2 KiB, 4 KiB, 2 KiB on three channels */
	p.channels = 4;
	init(&p);
	rq.offset = 2048;
	pcm_tm_submit(&tm, &rq, &r);
	check(bus(0) == 1000 + 5120 && bus(1) == 1000 + 10240 &&
	      bus(2) == 1000 + 5120 && bus(3) == 0,
	      "buses %llu %llu %llu %llu", bus(0), bus(1), bus(2), bus(3));
	check(r.done == 1000 + 10240, "done %llu", r.done);
}

/* A gap move holds its ranks: the next request there waits for it. */
static void test_gap_move(void)
{
	struct pcm_tm_params p = base();
	u64 end, rd = 700 + 1000 + 10240 + 2048;

	p.channels = 2;
	init(&p);
	end = pcm_tm_move(&tm, 0, 0, 2, 4096, 0);	/* both on channel 0 */
	check(end == 1000 + 10240 + 20480 + 100000, "move %llu", end);
	check(one(0, false, 1, 4096, false, NULL) == rd, "other channel unaffected");
	check(one(0, false, 0, 4096, false, NULL) == end + rd,
	      "same rank waits for the move's program");

	/* a worn destination (program time x1.5) programs slower */
	init(&p);
	end = pcm_tm_move(&tm, 0, 0, 2, 4096, 3U << 15);
	check(end == 1000 + 10240 + 20480 + 150000, "worn move %llu", end);
	check(one(0, false, 0, 4096, false, NULL) == end + rd,
	      "the next request waits for the worn program");
}

/* At most @tags in flight; the rest start, in order, as tags free up. */
static void test_tags(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_result r[3];
	u64 i, rd = 700 + 1000 + 10240 + 2048;

	p.channels = 4;
	p.cmd_ns = 0;
	p.host_mbps = 0;
	p.tags = 2;
	rd -= 700 + 2048;
	init(&p);
	for (i = 0; i < 3; i++)
		one(0, false, i, 4096, false, &r[i]);
	check(!r[0].tag_waited && !r[1].tag_waited && r[2].tag_waited, "waits");
	check(r[2].start == rd && r[2].done == 2 * rd, "third starts %llu done %llu",
	      r[2].start, r[2].done);
	p.tags = 3;
	pcm_tm_set(&tm, &p);
	one(5 * rd, false, 0, 4096, false, &r[0]);
	one(5 * rd, false, 1, 4096, false, &r[1]);
	one(5 * rd, false, 2, 4096, false, &r[2]);
	check(!r[2].tag_waited && r[2].done == 6 * rd, "set tags 3: no wait");
	p.tags = 1;
	pcm_tm_set(&tm, &p);
	one(10 * rd, false, 0, 4096, false, &r[0]);
	one(10 * rd, false, 1, 4096, false, &r[1]);
	check(r[1].tag_waited && r[1].start == 11 * rd, "set tags 1: serial");
}

/* Closed loop of depth @qd over @n rows round robin: requests per second. */
static double closed_loop(u32 qd, bool write, u32 nrows, u32 n)
{
	u64 next[64] = { 0 }, first = 0, last = 0;
	u32 i, k, slot;

	for (i = 0; i < n; i++) {
		struct pcm_tm_req rq = { .write = write, .row = i % nrows,
					 .row_bytes = 4096, .bytes = 4096 };
		struct pcm_tm_result r;

		for (slot = 0, k = 1; k < qd; k++)
			if (next[k] < next[slot])
				slot = k;
		rq.arrival = next[slot];
		pcm_tm_submit(&tm, &rq, &r);
		next[slot] = r.done;
		if (i == n / 4)
			first = r.done;
		last = max(last, r.done);
	}
	return (n - n / 4 - 1) * 1e9 / (double)(last - first);
}

/* Throughput = min(depth, tags, parallel resources) / service time. */
static void test_closed_loop(void)
{
	struct pcm_tm_params p = base();
	static const u32 qds[] = { 1, 2, 4, 8, 16, 32 };
	u32 i, tags;

	p.channels = 4;
	p.ranks = 2;
	p.cmd_ns = 0;
	p.host_mbps = 0;
	p.read_mbps = 0;
	for (tags = 4; tags <= 16; tags += 12) {
		p.tags = tags;
		for (i = 0; i < ARRAY_SIZE(qds); i++) {
			double want = min(min(qds[i], tags), 8U) * 1e9 / 1000, got;

			init(&p);
			got = closed_loop(qds[i], false, 8, 4000);
			check(got > want * 0.99 && got < want * 1.01,
			      "tags %u qd %u: %.0f/s, want %.0f/s", tags, qds[i], got, want);
		}
	}
}

/* The write cache takes a burst at link speed, then the ranks' rate. */
static void test_write_cache(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_result r;
	u64 i, at = 700 + 2048;

	p.write_cache = 4 * 4096;
	p.cmd_ns = 0;
	p.host_mbps = 0;
	p.write_mbps = 0;
	init(&p);
	for (i = 0; i < 4; i++) {
		one(0, true, 0, 4096, false, &r);
		check(r.done == 0 && !r.cache_waited, "write %llu absorbed: %llu", i, r.done);
	}
	for (i = 1; i <= 4; i++) {
		one(0, true, 0, 4096, false, &r);
		check(r.done == i * 100000 && r.cache_waited,
		      "write %llu waits for program %llu: %llu", 3 + i, i, r.done);
	}
	/* once drained, a burst is absorbed again */
	p.cmd_ns = 700;
	p.host_mbps = 2000;
	pcm_tm_set(&tm, &p);
	check(one(10000000, true, 0, 4096, false, &r) == at && !r.cache_waited,
	      "absorbed after draining");
}

/* "set" changes timing for new requests only, never the geometry. */
static void test_set_mid_run(void)
{
	struct pcm_tm_params p = base(), q;
	u64 rd = 700 + 1000 + 10240 + 2048;

	init(&p);
	check(one(0, false, 0, 4096, false, NULL) == rd, "before");
	q = p;
	q.read_ns = 5000;
	q.channels = 8;
	pcm_tm_set(&tm, &q);
	check(one(1000000, false, 0, 4096, false, NULL) == rd + 4000, "after");
	check(tm.p.channels == 1, "geometry kept: %u channels", tm.p.channels);
}


/*
 * The variability of a stage (struct pcm_tm_var), exactly: P(X <= x) for
 * X = U + K * retry, U uniform on the jitter_ns + 1 integers 0..jitter_ns,
 * K geometric (failure q) truncated at retries.
 */
static double var_pk(const struct pcm_tm_var *v, u32 k)
{
	double q = v->retry_ppm / 1e6;

	return k < v->retries ? pow(q, k) * (1 - q) : pow(q, k);
}

static double var_cdf(const struct pcm_tm_var *v, double x)
{
	double f = 0;
	u32 k;

	for (k = 0; k <= v->retries; k++) {
		double y = x - (double)k * v->retry_ns;

		if (y >= v->jitter_ns)
			f += var_pk(v, k);
		else if (y >= 0)
			f += var_pk(v, k) * (floor(y) + 1) / (v->jitter_ns + 1);
	}
	return f;
}

static double var_mean(const struct pcm_tm_var *v)
{
	double m = v->jitter_ns / 2.0;
	u32 k;

	for (k = 1; k <= v->retries; k++)
		m += (double)k * v->retry_ns * var_pk(v, k);
	return m;
}

#define NDRAWS 1000000
static u64 draws[NDRAWS];

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * A million draws against the distribution's own formulas: the mean within
 * five standard errors, the empirical CDF within five binomial standard
 * errors at every decile and far into the tail, and the bounds.
 */
static void check_var(const struct pcm_tm_var *v, const char *name)
{
	static const double pts[] = { 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 0.999, 0.9999 };
	double sum = 0, sq = 0, mean, sd, want = var_mean(v);
	u64 hi = v->jitter_ns + (u64)v->retries * v->retry_ns;
	struct rnd_state rnd;
	unsigned int i;

	pcm_rand_stream(&rnd, 1, 0);
	for (i = 0; i < NDRAWS; i++) {
		draws[i] = pcm_tm_draw(&rnd, v);
		sum += draws[i];
		sq += (double)draws[i] * draws[i];
	}
	mean = sum / NDRAWS;
	sd = sqrt(sq / NDRAWS - mean * mean);
	check(fabs(mean - want) <= 5 * sd / sqrt(NDRAWS) + 0.5,
	      "%s: mean %.2f, want %.2f (sd %.1f)", name, mean, want, sd);
	qsort(draws, NDRAWS, sizeof(draws[0]), cmp_u64);
	check(draws[NDRAWS - 1] <= hi, "%s: max %llu > %llu", name, draws[NDRAWS - 1], hi);
	check(draws[0] <= hi / 1000, "%s: min %llu: the fixed time is reached", name, draws[0]);
	for (i = 0; i < ARRAY_SIZE(pts); i++) {
		u64 x = draws[(u64)(pts[i] * NDRAWS)];
		double f = var_cdf(v, x), emp = 0, se;
		u64 j;

		/* the share of draws at or below x, from the sorted array */
		for (j = (u64)(pts[i] * NDRAWS); j < NDRAWS && draws[j] <= x; j++)
			;
		emp = (double)j / NDRAWS;
		se = sqrt(f * (1 - f) / NDRAWS);
		check(fabs(emp - f) <= 5 * se + 2.0 / NDRAWS,
		      "%s: P(X <= %llu): drawn %.6f, formula %.6f", name, x, emp, f);
	}
}

static void test_var_distribution(void)
{
	struct pcm_tm_var reram = { .jitter_ns = 3200, .retry_ns = 1000,
				    .retry_ppm = 47619, .retries = 4 };
	struct pcm_tm_var pss = { .retry_ns = 120000, .retry_ppm = 110000, .retries = 16 };
	struct pcm_tm_var jitter = { .jitter_ns = 999 };
	struct pcm_tm_var always = { .retry_ns = 7, .retry_ppm = PCM_TM_PPM, .retries = 5 };
	struct pcm_tm_var none = { .retry_ns = 7, .retries = 5 };
	struct rnd_state rnd;
	u64 k[4] = { 0 };
	unsigned int i;

	check_var(&reram, "reram");
	check_var(&pss, "pss");
	check_var(&jitter, "jitter");
	check(draws[NDRAWS - 1] == jitter.jitter_ns, "jitter reaches %llu: %llu",
	      jitter.jitter_ns, draws[NDRAWS - 1]);
	/* the retry count alone: P(K >= k) = q^k, truncated */
	pcm_rand_stream(&rnd, 2, 0);
	for (i = 0; i < NDRAWS; i++) {
		u64 n = pcm_tm_draw(&rnd, &pss) / pss.retry_ns;

		k[min(n, 3ULL)]++;
	}
	for (i = 1; i < 4; i++) {
		u64 ge = 0, j;
		double want = pow(0.11, i) * NDRAWS;

		for (j = i; j < 4; j++)
			ge += k[j];
		check(fabs(ge - want) <= 5 * sqrt(want) + 1,
		      "%u or more retries: %llu, want %.0f", i, ge, want);
	}
	check(pcm_tm_draw(&rnd, &always) == 35, "every iteration fails: the cap");
	check(pcm_tm_draw(&rnd, &none) == 0, "retry_ppm 0: none");
	check(!pcm_tm_var_active(&none) && pcm_tm_var_active(&jitter) &&
	      pcm_tm_var_active(&always), "active when it can add time");
}

/* The latencies of a fixed mixed sequence over @p's channels. */
static void run_sequence(const struct pcm_tm_params *p, u64 *lat, unsigned int n)
{
	unsigned int i;

	init(p);
	for (i = 0; i < n; i++)
		lat[i] = one(i * 3000ULL, i % 3 == 0, i * 7 % 64, 4096, false, NULL);
}

static struct pcm_tm_params varied(void)
{
	struct pcm_tm_params p = base();

	p.channels = 4;
	p.ranks = 4;
	p.read_var = (struct pcm_tm_var){ .jitter_ns = 5000, .retry_ns = 2000,
					  .retry_ppm = 300000, .retries = 6 };
	p.write_var = (struct pcm_tm_var){ .jitter_ns = 100, .retry_ns = 50000,
					   .retry_ppm = 200000, .retries = 10 };
	return p;
}

/* The same seed and requests: the same latencies; another seed: others. */
static void test_var_determinism(void)
{
	static u64 a[3000], b[3000], c[3000];
	struct pcm_tm_params p = varied();
	unsigned int i, same = 0, diff = 0;

	p.seed = 42;
	run_sequence(&p, a, 3000);
	run_sequence(&p, b, 3000);
	p.seed = 43;
	run_sequence(&p, c, 3000);
	for (i = 0; i < 3000; i++) {
		same += a[i] == b[i];
		diff += a[i] != c[i];
	}
	check(same == 3000, "seed 42 twice: %u of 3000 latencies agree", same);
	check(diff > 2000, "seeds 42 and 43: only %u of 3000 latencies differ", diff);
}

/*
 * Each channel draws from a stream of its own: a channel's latencies do
 * not depend on what the others do, and two streams are uncorrelated.
 */
static void test_var_streams(void)
{
	static u64 alone[500], mixed[500];
	struct pcm_tm_params p = varied();
	struct rnd_state s0, s1;
	double sx = 0, sy = 0, sxy = 0, sxx = 0, syy = 0, r;
	unsigned int i, n = 200000;

	p.seed = 7;
	/* channel 0 only, then the same requests with channel 1's between */
	init(&p);
	for (i = 0; i < 500; i++)
		alone[i] = one(i * 1000000ULL, i & 1, 0, 4096, false, NULL);
	init(&p);
	for (i = 0; i < 500; i++) {
		mixed[i] = one(i * 1000000ULL, i & 1, 0, 4096, false, NULL);
		one(i * 1000000ULL + 500000, !(i % 3), 1, 4096, false, NULL);
	}
	check(!memcmp(alone, mixed, sizeof(alone)), "channel 1's draws change channel 0's");
	/* channel 1 given channel 0's requests: other draws */
	init(&p);
	for (i = 0; i < 500; i++)
		mixed[i] = one(i * 1000000ULL, i & 1, 1, 4096, false, NULL);
	check(memcmp(alone, mixed, sizeof(alone)), "channels 0 and 1 draw alike");
	pcm_rand_stream(&s0, 7, PCM_RAND_TIMING);
	pcm_rand_stream(&s1, 7, PCM_RAND_TIMING + 1);
	for (i = 0; i < n; i++) {
		double x = prandom_u32_state(&s0), y = prandom_u32_state(&s1);

		sx += x;
		sy += y;
		sxy += x * y;
		sxx += x * x;
		syy += y * y;
	}
	r = (sxy - sx * sy / n) / sqrt((sxx - sx * sx / n) * (syy - sy * sy / n));
	check(fabs(r) < 5 / sqrt(n), "streams 0 and 1 correlate: r = %.4f", r);
}

/* Variability off: exactly the fixed stages, whatever the seed. */
static void test_var_off(void)
{
	static u64 plain[600], off[600];
	struct pcm_tm_params p = base(), q;
	u64 rd = 700 + 1000 + 10240 + 2048;
	unsigned int i;

	p.channels = 4;
	p.ranks = 4;
	run_sequence(&p, plain, 600);
	q = p;
	q.seed = 99;
	q.read_var.retries = 3;		/* no probability, no time: off */
	q.write_var.retry_ppm = 500000;
	run_sequence(&q, off, 600);
	check(!memcmp(plain, off, sizeof(plain)), "inactive variability changed latencies");
	/* on, then off again with "set": the formula exactly */
	q = varied();
	init(&q);
	check(one(0, false, 0, 4096, false, NULL) >= rd, "varied read");
	q.read_var = (struct pcm_tm_var){ 0 };
	q.write_var = (struct pcm_tm_var){ 0 };
	pcm_tm_set(&tm, &q);
	for (i = 0; i < 50; i++)
		check(one(10000000ULL * (i + 1), false, i, 4096, false, NULL) == rd,
		      "read %u after set: not the formula", i);
}

/* A varied stage adds within its bounds, to its own direction only. */
static void test_var_stage(void)
{
	struct pcm_tm_params p = base();
	u64 rd = 700 + 1000 + 10240 + 2048, wr = 700 + 2048 + 20480 + 100000;
	u64 i, lo = U64_MAX, hi = 0, wlo = U64_MAX, whi = 0;

	p.read_var = (struct pcm_tm_var){ .jitter_ns = 4000, .retry_ns = 3000,
					  .retry_ppm = 500000, .retries = 2 };
	init(&p);
	for (i = 0; i < 4000; i++) {
		u64 r = one(i * 1000000, false, 0, 4096, false, NULL);
		u64 w = one(i * 1000000 + 500000, true, 0, 4096, false, NULL);

		lo = min(lo, r);
		hi = max(hi, r);
		wlo = min(wlo, w);
		whi = max(whi, w);
	}
	check(lo >= rd && lo < rd + 100, "reads from the fixed time: %llu", lo);
	check(hi <= rd + 10000 && hi > rd + 9000, "reads up to jitter + 2 retries: %llu", hi);
	check(wlo == wr && whi == wr, "writes do not vary: %llu..%llu", wlo, whi);
}

/* A device whose buffers are all that delays a write's data. */
static struct pcm_tm_params buffered(void)
{
	struct pcm_tm_params p = base();

	p.ranks = 4;
	p.cmd_ns = 0;
	p.host_mbps = 0;
	p.write_mbps = 0;
	return p;
}

/*
 * A channel's buffer holds ctrl_slots rows until their programs end:
 * early completion gains only while it has room, and a program waits for
 * a slot even on an idle rank.
 */
static void test_ctrl_buffer(void)
{
	struct pcm_tm_params p = buffered();
	struct pcm_tm_result r;
	u64 i;

	p.early = true;
	init(&p);
	for (i = 0; i < 3; i++)
		check(one(0, true, i, 4096, false, &r) == 0, "unbounded: write %llu at once", i);
	p.ctrl_slots = 2;
	init(&p);
	check(one(0, true, 0, 4096, false, NULL) == 0, "1st write: a slot");
	check(one(0, true, 1, 4096, false, NULL) == 0, "2nd write: a slot");
	check(one(0, true, 2, 4096, false, NULL) == 100000,
	      "3rd write waits for the 1st program to end");
	check(one(0, true, 3, 4096, false, NULL) == 100000, "4th: the 2nd program's slot");
	check(one(0, false, 3, 4096, false, NULL) == 200000 + 1000 + 10240,
	      "the 4th program, from its slot, then a read of its rank");
	p.early = false;
	init(&p);
	for (i = 0; i < 4; i++)
		check(one(0, true, i, 4096, false, NULL) == (i / 2 + 1) * 100000,
		      "late write %llu: its program waits for a slot", i);
	p.ctrl_slots = 3;
	pcm_tm_set(&tm, &p);
	check(tm.p.ctrl_slots == 2, "ctrl_slots needs a reload: %u", tm.p.ctrl_slots);
}

/*
 * The front end's buffer holds a row until the write completes: early,
 * once the row reached its controller; late, once it is programmed.
 */
static void test_xfer_buffer(void)
{
	struct pcm_tm_params p = buffered();
	u64 i;

	p.channels = 4;
	p.ranks = 1;
	p.write_mbps = 400;		/* 10240 ns a row over its bus */
	p.xfer_slots = 2;
	init(&p);
	for (i = 0; i < 4; i++)
		check(one(0, true, i, 4096, false, NULL) == (i / 2) * 110240 + 110240,
		      "late write %llu: a slot once a program ended", i);
	p.early = true;
	init(&p);
	for (i = 0; i < 4; i++)
		check(one(0, true, i, 4096, false, NULL) == (i / 2 + 1) * 10240,
		      "early write %llu: a slot once a row reached its controller", i);
	/* "set" resizes it: unbounded, every channel's bus at once */
	p.xfer_slots = 0;
	pcm_tm_set(&tm, &p);
	for (i = 0; i < 4; i++)
		check(one(1000000, true, i, 4096, false, NULL) == 10240,
		      "unbounded: write %llu at once", i);
	p.xfer_slots = 1;
	pcm_tm_set(&tm, &p);
	check(one(2000000, true, 0, 4096, false, NULL) == 10240 &&
	      one(2000000, true, 1, 4096, false, NULL) == 20480, "one slot: in turn");
}

/*
 * Time dilation: a fixed sequence of reads, writes (some of zeros, some
 * over several rows, at odd sizes whose transfers round) and gap moves,
 * arriving every @gap ns times @k, through @p at dilation @k.  Records
 * every request's start and completion and every move's end.
 */
#define DIL_N 4000
static void dilated_run(struct pcm_tm_params p, u32 k, u64 gap, u64 *start, u64 *done)
{
	static const u32 sizes[] = { 4096, 512, 12288, 1536, 8192, 4096, 700 * 512 };
	unsigned int i;

	p.dilation = k;
	init(&p);
	for (i = 0; i < DIL_N; i++) {
		struct pcm_tm_req rq = {
			.arrival = (u64)i * gap * (k ? k : 1), .write = i % 3 == 0,
			.zero = i % 9 == 0, .row = i * 7 % 61, .offset = i % 5 ? 0 : 1024,
			.row_bytes = 4096, .bytes = sizes[i % ARRAY_SIZE(sizes)],
			.prog_q16 = i % 11 ? 0 : 3U << 15,
		};
		struct pcm_tm_result r;

		pcm_tm_submit(&tm, &rq, &r);
		start[i] = r.start;
		done[i] = r.done;
		if (i % 13 == 0)	/* a gap move beside it: its end stands in start */
			start[i] = pcm_tm_move(&tm, rq.arrival, i % 61, (i + 1) % 61, 4096,
					       i % 2 ? 0 : 1U << 16);
	}
}

/* Every stage the model has, each at a time and rate that round. */
static struct pcm_tm_params dilated_params(bool early, bool cache)
{
	struct pcm_tm_params p = varied();

	p.read_mbps = 333;
	p.write_mbps = 177;
	p.host_mbps = 1138;
	p.cmd_ns = 1640;
	p.tags = 16;
	p.ctrl_slots = 3;
	p.xfer_slots = 5;
	p.early = early;
	p.write_cache = cache ? 65536 : 0;
	p.seed = 3;
	return p;
}

/*
 * dilation:K makes every modeled time exactly K times longer: the same
 * requests, arriving K times further apart, start and complete at exactly
 * K times the instants of K = 1, transfers, draws, tags, buffers, the
 * cache and gap moves included; dilation 0 is 1.
 */
static void test_dilation_exact(void)
{
	static u64 s1[DIL_N], d1[DIL_N], sk[DIL_N], dk[DIL_N];
	static const u32 ks[] = { 0, 2, 8, 7, PCM_TM_MAX_DILATION };
	unsigned int c, j, i, bad;

	for (c = 0; c < 3; c++) {
		struct pcm_tm_params p = dilated_params(c == 1, c == 2);

		dilated_run(p, 1, 2500, s1, d1);
		for (i = 0; i < DIL_N; i++)
			check(d1[i] > i * 2500ULL, "config %u: request %u took no time", c, i);
		for (j = 0; j < ARRAY_SIZE(ks); j++) {
			u64 k = ks[j] ? ks[j] : 1;

			dilated_run(p, ks[j], 2500, sk, dk);
			for (bad = 0, i = 0; i < DIL_N; i++)
				bad += sk[i] != k * s1[i] || dk[i] != k * d1[i];
			check(!bad, "config %u, dilation %u: %u of %u requests not exactly x%llu",
			      c, ks[j], bad, DIL_N, k);
		}
	}
}

/*
 * At K the idle device's formula is K times the stages; an arrival that
 * is not a device nanosecond waits for the next one (never completing
 * before it arrived); "set" cannot change the factor.
 */
static void test_dilation_clock(void)
{
	struct pcm_tm_params p = base(), q;
	u64 rd = 700 + 1000 + 10240 + 2048, lat;

	p.dilation = 8;
	init(&p);
	lat = one(0, false, 0, 4096, false, NULL);
	check(lat == 8 * rd, "read at x8: %llu", lat);
	lat = one(8000013, false, 0, 4096, false, NULL);
	check(lat == 8 * rd + 3, "arrival 13 ns past a device ns: %llu", lat);
	q = p;
	q.dilation = 1;
	q.read_ns = 2000;
	pcm_tm_set(&tm, &q);
	lat = one(16000000, false, 0, 4096, false, NULL);
	check(lat == 8 * (rd + 1000), "set changes read_ns, keeps x8: %llu", lat);
	/* a model that delays nothing but tags: done never before arrival */
	p = (struct pcm_tm_params){ .channels = 1, .ranks = 1, .stripe_rows = 1,
				    .tags = 4, .dilation = PCM_TM_MAX_DILATION };
	init(&p);
	for (lat = 0; lat < 3000; lat += 7) {
		struct pcm_tm_result r;

		one(lat, false, 0, 4096, false, &r);
		check(r.done >= lat && r.done - lat < PCM_TM_MAX_DILATION &&
		      r.done % PCM_TM_MAX_DILATION == 0, "arrival %llu: done %llu", lat, r.done);
	}
}

/* Channel @c's figures: the bus's, and rank @r's in *@rank. */
static struct pcm_tm_use usage(u32 c, u32 r, struct pcm_tm_use *rank)
{
	struct pcm_tm_use bus, ranks[PCM_TM_MAX_RANKS];

	pcm_tm_usage(&tm, c, &bus, ranks, 0, PCM_TM_MAX_RANKS);
	*rank = ranks[r];
	return bus;
}

static bool use_is(const struct pcm_tm_use *u, u64 n, u64 busy, u64 wait, u64 wait_max)
{
	return u->requests == n && u->busy_ns == busy && u->wait_ns == wait &&
	       u->wait_max_ns == wait_max;
}

/*
 * QD1 on one rank: it counts every row and its service time, never a
 * wait, so its busy time over the run is service time x IOPS; the other
 * rank of the channel stays at zero, and so does the other channel.
 */
static void test_usage_qd1(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_use r, bus;
	u64 rd = 700 + 1000 + 10240 + 2048, at = 0, i, n = 1000;
	struct pcm_tm_result res;

	p.channels = 2;
	p.ranks = 2;
	init(&p);
	for (i = 0; i < n; i++) {
		/* rows 0, 4, 8...: channel 0, rank 0 */
		at += one(at, false, 4 * (i % 50), 4096, false, &res);
		check(res.loc.channel == 0 && res.loc.rank == 0, "loc %u.%u",
		      res.loc.channel, res.loc.rank);
		check(res.front_ns == 700 + 2048 && !res.front_wait && !res.tag_wait,
		      "front %llu wait %llu tag %llu", res.front_ns, res.front_wait,
		      res.tag_wait);
	}
	check(at == n * rd, "QD1: %llu", at);
	bus = usage(0, 0, &r);
	check(use_is(&r, n, n * 1000, 0, 0), "rank 0: %llu %llu %llu %llu",
	      r.requests, r.busy_ns, r.wait_ns, r.wait_max_ns);
	/* utilisation (busy / elapsed) = service time x IOPS (n / elapsed) */
	check(fabs((double)r.busy_ns / at - 1000.0 * n / at) < 1e-12, "utilisation");
	check(use_is(&bus, n, n * 10240, 0, 0), "bus 0: %llu %llu %llu", bus.requests,
	      bus.busy_ns, bus.wait_ns);
	usage(0, 1, &r);
	check(use_is(&r, 0, 0, 0, 0), "idle rank: %llu", r.requests);
	/* a window of the ranks: rank 0 alone, rank 1 alone, past the end */
	{
		struct pcm_tm_use w[2] = { { .requests = 77 }, { .requests = 77 } };

		pcm_tm_usage(&tm, 0, &bus, w, 0, 1);
		check(w[0].requests == n && w[1].requests == 77, "window 0..0");
		pcm_tm_usage(&tm, 0, &bus, w, 1, 2);
		check(w[0].requests == 0 && w[1].requests == 77, "window 1..2 stops at 1");
	}
	bus = usage(1, 0, &r);
	check(use_is(&r, 0, 0, 0, 0) && use_is(&bus, 0, 0, 0, 0), "idle channel");
	one(at, true, 1, 4096, false, &res);
	check(res.loc.channel == 1 && res.loc.rank == 0, "write loc %u.%u",
	      res.loc.channel, res.loc.rank);
	one(at, true, 3, 4096, false, &res);
	check(res.loc.channel == 1 && res.loc.rank == 1, "write loc %u.%u",
	      res.loc.channel, res.loc.rank);
}

/*
 * Two writes at once to one rank: the second queues for the front end,
 * the bus and the rank by what the first holds them (dm-pcm.rst's
 * formulas), and the figures say so; reset zeroes them, not the instants.
 */
static void test_usage_queue(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_result a, b;
	struct pcm_tm_use r, bus;

	init(&p);
	one(0, true, 0, 4096, false, &a);
	one(0, true, 0, 4096, false, &b);
	/* front 700 + 2048; bus 20480 from 2748: 23228; program to 123228 */
	check(a.done == 123228 && !a.front_wait, "first %llu", a.done);
	/* front 2748..5496; bus 23228..43708; program 123228..223228 */
	check(b.done == 223228 && b.front_wait == 2748 && b.front_ns == 2748,
	      "second %llu front wait %llu", b.done, b.front_wait);
	bus = usage(0, 0, &r);
	check(use_is(&r, 2, 200000, 123228 - 43708, 123228 - 43708),
	      "rank: %llu %llu %llu %llu", r.requests, r.busy_ns, r.wait_ns, r.wait_max_ns);
	check(use_is(&bus, 2, 40960, 43708 - (5496 + 20480), 43708 - (5496 + 20480)),
	      "bus: %llu %llu %llu %llu", bus.requests, bus.busy_ns, bus.wait_ns,
	      bus.wait_max_ns);
	/* a third, later, waits less: the total adds up, the largest stays */
	one(200000, true, 0, 4096, false, NULL);
	usage(0, 0, &r);
	check(r.requests == 3 && r.wait_ns == 79520 + 223228 - (200000 + 2748 + 20480) &&
	      r.wait_max_ns == 79520, "third: %llu %llu", r.wait_ns, r.wait_max_ns);
	pcm_tm_usage_reset(&tm);
	bus = usage(0, 0, &r);
	check(use_is(&r, 0, 0, 0, 0) && use_is(&bus, 0, 0, 0, 0), "reset");
	/* the instants are not the figures: the rank is still booked */
	check(one(300000, false, 0, 4096, false, NULL) == 323228 - 300000 + 1000 +
	      10240 + 700 + 2048, "still busy after reset");
	usage(0, 0, &r);
	check(r.requests == 1 && r.wait_ns == 323228 - 300000, "wait after reset %llu",
	      r.wait_ns);

	/* tags: the second of two at once waits for the first's tag */
	p.tags = 1;
	init(&p);
	one(0, false, 0, 4096, false, &a);
	one(0, false, 0, 4096, false, &b);
	check(!a.tag_wait && b.tag_wait == a.done && b.tag_waited, "tag wait %llu",
	      b.tag_wait);
}

/* A bus without a rate for a direction is no resource: it counts nothing. */
static void test_usage_no_rate(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_use r, bus;

	p.read_mbps = 0;
	init(&p);
	one(0, false, 0, 4096, false, NULL);
	bus = usage(0, 0, &r);
	check(use_is(&bus, 0, 0, 0, 0) && use_is(&r, 1, 1000, 0, 0), "read: bus %llu rank %llu",
	      bus.requests, r.requests);
	one(0, true, 0, 4096, false, NULL);
	bus = usage(0, 0, &r);
	check(bus.requests == 1 && bus.busy_ns == 20480 && r.requests == 2,
	      "write: bus %llu rank %llu", bus.requests, r.requests);
}

/*
 * A program that takes no time (write_ns 0) leaves its rank's instant
 * where it was.  A write behind cmd_ns reaches its rank at the end of its
 * front-end turn; a read charged after it that reaches the same rank
 * earlier finds it idle (it did nothing), as a write charged after
 * another CPU's later one does in the kernel, where the front end is
 * lock-free: 36-ranks's "longest front-end wait is the longest write
 * latency less cmd_ns" failed by a rank wait of a rank that never
 * worked.  Behind a real program a zero one still waits.
 */
static void test_usage_zero_program(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_result a, b;
	struct pcm_tm_use r;

	p.write_ns = 0;
	p.zero_write_ns = 0;
	p.write_mbps = 0;
	p.host_mbps = 0;
	p.read_mbps = 0;
	p.cmd_ns = 300000;
	init(&p);
	one(0, true, 0, 4096, false, &a);
	check(a.done == 300000 && !a.front_wait, "write %llu", a.done);
	/* the read's rank stage 0..1000, then the front end behind the write */
	one(0, false, 0, 4096, false, &b);
	check(b.done == 600000 && b.front_wait == 600000 - (1000 + 300000),
	      "read %llu front wait %llu", b.done, b.front_wait);
	usage(0, 0, &r);
	check(use_is(&r, 2, 1000, 0, 0), "rank: %llu stages, busy %llu, wait %llu",
	      r.requests, r.busy_ns, r.wait_ns);
	/* a zero program behind a read still waits for it, without moving it */
	p.cmd_ns = 0;
	p.read_ns = 50000;
	init(&p);
	one(0, false, 0, 4096, false, NULL);
	check(one(10, true, 0, 4096, false, &a) == 50000 - 10, "behind a read: %llu",
	      a.done);
	check(pcm_tm_chan(&tm, 0)->rank_busy[0] == 50000, "instant %llu",
	      pcm_tm_chan(&tm, 0)->rank_busy[0]);
}

/* A gap move counts a row on its source's rank and its destination's. */
static void test_usage_move(void)
{
	struct pcm_tm_params p = base();
	struct pcm_tm_use r, bus;

	p.ranks = 2;
	init(&p);
	pcm_tm_move(&tm, 0, 0, 1, 4096, 0);
	bus = usage(0, 0, &r);
	check(use_is(&r, 1, 1000, 0, 0), "source rank %llu %llu", r.requests, r.busy_ns);
	check(bus.requests == 2 && bus.busy_ns == 10240 + 20480, "bus %llu %llu",
	      bus.requests, bus.busy_ns);
	usage(0, 1, &r);
	check(use_is(&r, 1, 100000, 0, 0), "destination rank %llu %llu", r.requests,
	      r.busy_ns);
}

/*
 * A closed loop over every rank: each row is counted once, on the rank
 * pcm_tm_locate() gives, busy for exactly its stage (no variability);
 * with variability the busy time is the stages drawn, at least the fixed
 * part.  Under dilation every figure but the counts is K times longer.
 */
static void test_usage_totals(void)
{
	struct pcm_tm_params p = base();
	u64 n = 4000, i, next[16] = { 0 }, reqs = 0, busy = 0, bus_busy = 0;
	u64 per_rank[4][3] = { { 0 } };
	struct pcm_tm_use r[PCM_TM_MAX_RANKS], bus, r1[PCM_TM_MAX_RANKS], bus1;
	u32 c, k;

	p.channels = 4;
	p.ranks = 3;
	p.stripe_rows = 2;
	init(&p);
	for (i = 0; i < n; i++) {
		struct pcm_tm_req rq = { .arrival = next[i % 16], .row = i * 7919 % 1000,
					 .row_bytes = 4096, .bytes = 4096 };
		struct pcm_tm_loc at = pcm_tm_locate(&p, rq.row);
		struct pcm_tm_result res;

		pcm_tm_submit(&tm, &rq, &res);
		next[i % 16] = res.done;
		per_rank[at.channel][at.rank]++;
	}
	for (c = 0; c < p.channels; c++) {
		pcm_tm_usage(&tm, c, &bus, r, 0, PCM_TM_MAX_RANKS);
		for (k = 0; k < p.ranks; k++) {
			check(r[k].requests == per_rank[c][k] &&
			      r[k].busy_ns == per_rank[c][k] * 1000,
			      "rank %u.%u: %llu of %llu", c, k, r[k].requests, per_rank[c][k]);
			reqs += r[k].requests;
			busy += r[k].busy_ns;
			check(r[k].wait_max_ns <= r[k].wait_ns, "max <= total");
		}
		bus_busy += bus.busy_ns;
	}
	check(reqs == n && busy == n * 1000 && bus_busy == n * 10240, "totals %llu %llu",
	      reqs, busy);

	/* the same run at K = 5: counts equal, every time x5 */
	p.channels = 1;
	p.ranks = 2;
	p.read_var = (struct pcm_tm_var){ .jitter_ns = 300 };
	for (k = 1; k <= 5; k += 4) {
		p.dilation = k;
		init(&p);
		for (i = 0; i < 200; i++)
			one(i * 3000 * k, i & 1, i % 4, 4096, false, NULL);
		pcm_tm_usage(&tm, 0, k == 1 ? &bus1 : &bus, k == 1 ? r1 : r, 0, 2);
	}
	check(bus.requests == bus1.requests && bus.busy_ns == 5 * bus1.busy_ns &&
	      bus.wait_ns == 5 * bus1.wait_ns, "bus x5: %llu %llu", bus.busy_ns,
	      bus1.busy_ns);
	for (k = 0; k < 2; k++)
		check(r[k].requests == r1[k].requests && r[k].busy_ns == 5 * r1[k].busy_ns &&
		      r[k].wait_ns == 5 * r1[k].wait_ns &&
		      r[k].wait_max_ns == 5 * r1[k].wait_max_ns,
		      "rank %u x5: %llu %llu", k, r[k].busy_ns, r1[k].busy_ns);
	/* stripes of 2 rows: each rank has 50 reads (1000 + up to 300 ns) and 50 writes */
	for (k = 0; k < 2; k++)
		check(r1[k].requests == 100 && r1[k].busy_ns > 50 * 1000 + 50 * 100000 &&
		      r1[k].busy_ns <= 50 * 1300 + 50 * 100000, "jitter counted: %llu",
		      r1[k].busy_ns);
}

int main(void)
{
	RUN(test_xfer);
	RUN(test_locate);
	RUN(test_qd1_formula);
	RUN(test_read_behind_write);
	RUN(test_front_end);
	RUN(test_free_stage);
	RUN(test_parallel_writes);
	RUN(test_pieces);
	RUN(test_gap_move);
	RUN(test_tags);
	RUN(test_closed_loop);
	RUN(test_write_cache);
	RUN(test_set_mid_run);
	RUN(test_var_distribution);
	RUN(test_var_determinism);
	RUN(test_var_streams);
	RUN(test_var_off);
	RUN(test_var_stage);
	RUN(test_ctrl_buffer);
	RUN(test_xfer_buffer);
	RUN(test_dilation_exact);
	RUN(test_dilation_clock);
	RUN(test_usage_qd1);
	RUN(test_usage_queue);
	RUN(test_usage_no_rate);
	RUN(test_usage_zero_program);
	RUN(test_usage_move);
	RUN(test_usage_totals);
	return tap_done();
}
