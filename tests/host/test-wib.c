// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-wib.c, the write-intent bitmap's
 * bookkeeping: what a write sets, what a failed bitmap write takes back,
 * what a clear pass clears, and, over random runs of writes, failures
 * and passes, that no region whose write may still be torn ever has its
 * bit clear.
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "../../dm-pcm/pcm-wib.h"

#define NB	300	/* regions: more than four chunks */

static u8 bits[(NB + 7) / 8], touched[(NB + 7) / 8], cand[(NB + 7) / 8];

static struct pcm_wib_bits fresh(void)
{
	struct pcm_wib_bits m = { bits, touched, cand, NB, 0 };

	memset(bits, 0, sizeof(bits));
	memset(touched, 0, sizeof(touched));
	memset(cand, 0, sizeof(cand));
	return m;
}

/* A write of regions [first, last] as dm-pcm-wib.c marks them. */
static bool mark(struct pcm_wib_bits *m, u64 first, u64 last, bool fail)
{
	u64 b, set;

	if (!pcm_wib_touch(m, first, last))
		return true;
	for (b = first; b <= last; b += PCM_WIB_CHUNK) {
		set = pcm_wib_set(m, b, min_t(u64, last - b + 1, PCM_WIB_CHUNK));
		if (set)
			pcm_wib_written(m, b, set, !fail);
		if (set && fail)
			return false;
	}
	return true;
}

static void test_set(void)
{
	struct pcm_wib_bits m = fresh();
	u64 set;

	check(pcm_wib_touch(&m, 3, 5), "clear bits: the write must set them");
	set = pcm_wib_set(&m, 3, 3);
	check(set == 7, "it sets all three: %llx", set);
	check(m.pending == 1, "one write of the bitmap pending: %u", m.pending);
	check(pcm_wib_touch(&m, 4, 4), "a bit set, not yet written: another write waits");
	pcm_wib_written(&m, 3, set, true);
	check(!m.pending, "nothing pending");
	check(!pcm_wib_touch(&m, 4, 4), "set and written: nothing to do");
	check(pcm_wib_set(&m, 2, 5) == 0x11, "only regions 2 and 6 are new");
	check(m.pending == 1, "pending again");
	pcm_wib_written(&m, 2, 0x11, true);
	check(pcm_wib_test(bits, 2) && pcm_wib_test(bits, 6) && !pcm_wib_test(bits, 7),
	      "bits 2..6 set, 7 not");
}

static void test_failed_write(void)
{
	struct pcm_wib_bits m = fresh();
	u64 set;

	mark(&m, 11, 11, false);
	mark(&m, 13, 13, false);
	set = pcm_wib_set(&m, 10, 5);
	check(set == 0x15, "10, 12 and 14 are new: %llx", set);
	pcm_wib_written(&m, 10, set, false);
	check(!pcm_wib_test(bits, 10) && !pcm_wib_test(bits, 12) && !pcm_wib_test(bits, 14),
	      "the failed write's bits are clear again");
	check(pcm_wib_test(bits, 11) && pcm_wib_test(bits, 13),
	      "the bits of 11 and 13, set and written by other writes, stay set");
	check(!m.pending, "nothing pending");
	check(mark(&m, 10, 14, false) && pcm_wib_test(bits, 12), "the next write sets them");
}

static void test_pass(void)
{
	struct pcm_wib_bits m = fresh();
	struct pcm_wib_range r;

	check(!pcm_wib_pass_begin(&m), "nothing written: no candidate");
	mark(&m, 5, 5, false);
	mark(&m, 100, 100, false);
	check(pcm_wib_pass_begin(&m), "5 and 100 are candidates");
	mark(&m, 100, 100, false);	/* written again during the pass */
	mark(&m, 200, 200, false);
	pcm_wib_pass_end(&m, true, &r);
	check(!pcm_wib_test(bits, 5), "5 cleared");
	check(pcm_wib_test(bits, 100) && pcm_wib_test(bits, 200), "100 and 200 kept");
	check(r.lo == 5 && r.hi == 5, "the range to write: %llu..%llu", r.lo, r.hi);
	check(pcm_wib_pass_begin(&m), "next pass: 100 and 200");
	pcm_wib_pass_end(&m, false, &r);
	check(r.lo > r.hi, "not durable: nothing cleared");
	check(pcm_wib_test(bits, 100) && pcm_wib_test(bits, 200), "both still set");
	check(pcm_wib_pass_begin(&m), "they are candidates of the pass after");
	pcm_wib_pass_end(&m, true, &r);
	check(!pcm_wib_test(bits, 100) && !pcm_wib_test(bits, 200), "then cleared");
	check(r.lo == 100 && r.hi == 200, "range %llu..%llu", r.lo, r.hi);
	check(!pcm_wib_pass_begin(&m), "no candidate left");
}

static void test_next(void)
{
	struct pcm_wib_bits m = fresh();
	u64 b, want;
	int i;

	for (i = 0; i < 200; i++) {
		memset(bits, 0, sizeof(bits));
		for (b = 0; b < NB; b++)
			if (rand() % 23 == 0)
				bits[b / 8] |= 1U << (b % 8);
		for (b = 0; b <= NB; b++) {
			for (want = b; want < NB && !pcm_wib_test(bits, want); want++)
				;
			check(pcm_wib_next(m.bits, NB, b) == want, "from %llu", b);
		}
	}
}

/*
 * Random writes, completions, failed bitmap writes and clear passes,
 * with writes between a pass's beginning and its end (a pass completes
 * every write started before it began, as pcm_grace() makes it, and its
 * flush may fail).  A write may be torn until a
 * durable pass that began after it ends: until then its regions' bits
 * must be set.
 */
struct w {
	u64 first, last;
	bool live;		/* may be torn: its data or parity not flushed */
	bool running;		/* not completed */
	unsigned long before;	/* the number of passes begun when it started */
};

static void test_model(void)
{
	struct pcm_wib_bits m = fresh();
	static struct w ws[4000];
	unsigned long passes = 0;
	struct pcm_wib_range r;
	int n = 0, i, step, bad = 0;
	bool in_pass = false;
	u64 b;

	for (step = 0; step < 20000 && n < 4000; step++) {
		int op = rand() % 100;

		if (op < 60) {
			struct w *x = &ws[n];

			x->first = rand() % NB;
			x->last = min_t(u64, NB - 1, x->first + (rand() % 8 ? 0 : rand() % 150));
			x->before = passes;
			x->live = mark(&m, x->first, x->last, rand() % 20 == 0);
			x->running = x->live;
			n++;
		} else if (op < 90) {
			if (n)
				ws[rand() % n].running = false;
		} else if (!in_pass) {
			pcm_wib_pass_begin(&m);
			passes++;
			in_pass = true;
		} else {
			/* writes go on between a pass's beginning and its end */
			bool durable = rand() % 10 != 0;

			for (i = 0; i < n; i++)
				if (ws[i].before < passes)
					ws[i].running = false;	/* the grace */
			pcm_wib_pass_end(&m, durable, &r);
			for (i = 0; i < n && durable; i++)
				if (ws[i].before < passes)
					ws[i].live = false;	/* flushed */
			in_pass = false;
		}
		for (i = 0; i < n; i++)
			for (b = ws[i].first; ws[i].live && b <= ws[i].last; b++)
				bad += !pcm_wib_test(bits, b);
		check(!m.pending, "nothing pending between steps");
	}
	check(!bad, "%d region-steps of a possibly torn write had their bit clear", bad);
	check(n > 1000 && passes > 100, "%d writes, %lu passes", n, passes);
}

int main(void)
{
	srand(1);
	RUN(test_set);
	RUN(test_failed_write);
	RUN(test_pass);
	RUN(test_next);
	RUN(test_model);
	return tap_done();
}
