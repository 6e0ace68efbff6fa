// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm/pcm-timing.c from several threads at once, as the module calls
 * it from several CPUs, built with ThreadSanitizer and real locks
 * (PCM_SHIM_THREADS): a data race the model's locking lets through is a
 * ThreadSanitizer report, which fails the run.
 *
 * Channels are independent when the front end costs nothing and there
 * are no tags and no write cache, so each thread working on its own
 * channel must get exactly what the same requests give one at a time.
 * Then everything at once: a front end, gap moves, and "set" switching
 * tags, the write cache and the front end's buffer (xfer_slots), which
 * moves requests between the per-channel
 * path and the model's lock while others are on it.
 */
#include "../../dm-pcm/pcm-timing.h"
#include "tap.h"

#define THREADS		4
#define REQS		20000

static u8 chans[4096];	/* a pthread mutex is larger than a spinlock */
static u64 tag_free[PCM_TM_MAX_TAGS];
static struct pcm_tm tm;
static u64 done[THREADS][REQS];
static pthread_barrier_t go;
static volatile int setting;

static struct pcm_tm_params params(void)
{
	return (struct pcm_tm_params){
		.channels = THREADS, .ranks = 4, .stripe_rows = 1,
		.read_ns = 1000, .write_ns = 5000, .zero_write_ns = 2000,
		.read_mbps = 400, .write_mbps = 200,
	};
}

static void init(const struct pcm_tm_params *p)
{
	if (pcm_tm_chans_bytes(p) > sizeof(chans))
		abort();
	pcm_tm_init(&tm, p, chans, tag_free);
}

/* Thread @t's requests: all on channel @t, reads and writes of 1-4 KiB. */
static void run(long t)
{
	u64 i;

	for (i = 0; i < REQS; i++) {
		struct pcm_tm_req rq = {
			.arrival = i * 900, .write = i % 3 == 0, .zero = i % 7 == 0,
			.row = t + THREADS * (i * 37 % 1024), .row_bytes = 4096,
			.bytes = 1024 << (i % 3),	/* within its row: its channel only */
		};
		struct pcm_tm_result res;

		pcm_tm_submit(&tm, &rq, &res);
		done[t][i] = res.done;
	}
}

static void *worker(void *arg)
{
	long t = (long)arg;

	pthread_barrier_wait(&go);
	run(t);
	/* the last thread also makes gap moves, across channels */
	if (setting && t == THREADS - 1) {
		u64 i;

		for (i = 0; i < 2000; i++)
			pcm_tm_move(&tm, i * 900, i % 64, (i + 1) % 64, 4096, 0);
	}
	return NULL;
}

/* "set" while the workers run: tags, write cache and xfer_slots on and off. */
static void *setter(void *arg)
{
	struct pcm_tm_params p = params();
	int i;

	(void)arg;
	p.cmd_ns = 500;
	p.host_mbps = 4000;
	pthread_barrier_wait(&go);
	for (i = 0; i < 3000; i++) {
		p.tags = i % 3 * 8;
		p.write_cache = i % 2 * 65536;
		/* the front end's buffer alone too: its pool without tags or cache */
		p.xfer_slots = i / 6 % 2 * 15;
		p.read_ns = 1000 + i % 5 * 100;
		p.dilation = 1;		/* ignored: fixed at init */
		pcm_tm_set(&tm, &p);
	}
	return NULL;
}

static void start(int with_setter)
{
	pthread_t th[THREADS + 1];
	long t;

	setting = with_setter;
	pthread_barrier_init(&go, NULL, THREADS + with_setter);
	for (t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, worker, (void *)t);
	if (with_setter)
		pthread_create(&th[THREADS], NULL, setter, NULL);
	for (t = 0; t < THREADS + with_setter; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&go);
}

/* Rows the ranks of every channel counted, and the buses. */
static u64 rows_counted(u64 *bus_rows)
{
	struct pcm_tm_use bus, ranks[PCM_TM_MAX_RANKS];
	u64 n = 0;
	u32 c, r;

	*bus_rows = 0;
	for (c = 0; c < tm.p.channels; c++) {
		pcm_tm_usage(&tm, c, &bus, ranks, 0, PCM_TM_MAX_RANKS);
		*bus_rows += bus.requests;
		for (r = 0; r < tm.p.ranks; r++)
			n += ranks[r].requests;
	}
	return n;
}

static void test_channels_apart(void)
{
	static u64 together[THREADS][REQS];
	struct pcm_tm_params p = params();
	long t, diff = 0;
	u64 i;

	u64 bus_rows;

	init(&p);
	start(0);
	memcpy(together, done, sizeof(done));
	check(rows_counted(&bus_rows) == THREADS * REQS && bus_rows == THREADS * REQS,
	      "every row counted once, on a rank and a bus");
	init(&p);
	for (t = 0; t < THREADS; t++)
		run(t);
	for (t = 0; t < THREADS; t++)
		for (i = 0; i < REQS; i++)
			diff += together[t][i] != done[t][i];
	check(diff == 0, "%ld of %d requests differ from one at a time", diff,
	      THREADS * REQS);
	check(done[0][REQS - 1] > (REQS - 1) * 900ULL, "the model charged them");
}

/* Undilated, then at dilation 7, which "set" (asking for 1) cannot change. */
static void test_all_at_once(void)
{
	struct pcm_tm_params p = params();
	long t, early;
	u32 k;
	u64 i;

	p.cmd_ns = 500;
	p.host_mbps = 4000;
	p.tags = 8;
	for (k = 1; k <= 7; k += 6) {
		p.dilation = k;
		init(&p);
		start(1);
		for (early = 0, t = 0; t < THREADS; t++)
			for (i = 0; i < REQS; i++)
				early += done[t][i] < i * 900;
		check(early == 0, "dilation %u: %ld requests done before they arrived", k, early);
		check(tm.p.dilation == k, "dilation %u: set made it %u", k, tm.p.dilation);
		/* the moves: two rows each, on two ranks and two buses */
		check(rows_counted(&i) == THREADS * REQS + 2 * 2000 &&
		      i == THREADS * REQS + 2 * 2000, "dilation %u: rows counted", k);
	}
}

int main(void)
{
	RUN(test_channels_apart);
	RUN(test_all_at_once);
	return tap_done();
}
