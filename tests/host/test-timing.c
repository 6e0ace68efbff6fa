// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-timing.c: single requests against the
 * formulas of DESIGN.md section 5, closed loops against the parallelism
 * the geometry allows, and the interactions (a read behind a program, a
 * gap move, the write cache, tags, "set" mid-run).
 */
#include "../../dm-pcm/pcm-timing.h"
#include "tap.h"

static u8 chans[PCM_TM_MAX_CHANNELS * (SMP_CACHE_BYTES + 8 * PCM_TM_MAX_RANKS)];
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
	end = pcm_tm_move(&tm, 0, 0, 2, 4096);	/* both on channel 0 */
	check(end == 1000 + 10240 + 20480 + 100000, "move %llu", end);
	check(one(0, false, 1, 4096, false, NULL) == rd, "other channel unaffected");
	check(one(0, false, 0, 4096, false, NULL) == end + rd,
	      "same rank waits for the move's program");
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
	return tap_done();
}
