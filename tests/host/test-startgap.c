// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-startgap.c: exhaustive over every
 * start/gap state of small domains, and a simulation that really moves
 * rows and checks every logical row after every move.
 */
#include "../../dm-pcm/pcm-startgap.h"
#include "tap.h"

#define MAXN 40

/* Every state of every small domain: a bijection onto the rows but the gap. */
static void test_map_bijection(void)
{
	struct pcm_sg_domain dom;
	u64 n, l, p;
	int seen[MAXN + 1];
	long bad = 0;

	for (n = 1; n <= MAXN; n++) {
		for (dom.start = 0; dom.start < n; dom.start++) {
			for (dom.gap = 0; dom.gap <= n; dom.gap++) {
				memset(seen, 0, sizeof(seen));
				for (l = 0; l < n; l++) {
					p = pcm_sg_map(&dom, n, l);
					if (p > n || p == dom.gap || seen[p]++)
						bad++;
				}
			}
		}
	}
	check(bad == 0, "%ld collisions or gap hits", bad);
}

/*
 * pcm_sg_run() is the longest run of back-to-back rows, in every state of
 * every small domain: each of its rows follows the one before, and the
 * row after it (if any) does not.
 */
static void test_run_exact(void)
{
	struct pcm_sg_domain dom;
	u64 n, l, k, run;
	long bad = 0, runs = 0;

	for (n = 1; n <= MAXN; n++) {
		for (dom.start = 0; dom.start < n; dom.start++) {
			for (dom.gap = 0; dom.gap <= n; dom.gap++) {
				for (l = 0; l < n; l++) {
					run = pcm_sg_run(&dom, n, l);
					runs++;
					if (!run || l + run > n)
						bad++;
					for (k = 1; k < run && l + k < n; k++)
						if (pcm_sg_map(&dom, n, l + k) != pcm_sg_map(&dom, n, l) + k)
							bad++;
					if (l + run < n &&
					    pcm_sg_map(&dom, n, l + run) == pcm_sg_map(&dom, n, l) + run)
						bad++;
				}
			}
		}
	}
	check(bad == 0 && runs > 20000, "%ld of %ld runs wrong", bad, runs);
}

/* pcm_sg_row_at() inverts pcm_sg_map() in every state. */
static void test_row_at_inverts(void)
{
	struct pcm_sg_domain dom;
	u64 n, l;
	long bad = 0;

	for (n = 1; n <= MAXN; n++)
		for (dom.start = 0; dom.start < n; dom.start++)
			for (dom.gap = 0; dom.gap <= n; dom.gap++)
				for (l = 0; l < n; l++)
					if (pcm_sg_row_at(&dom, n, pcm_sg_map(&dom, n, l)) != l)
						bad++;
	check(bad == 0, "%ld rows not recovered", bad);
}

/* Simulate the data: physical rows hold logical ids; move them for real. */
static void test_moves_keep_data(void)
{
	struct pcm_sg_domain dom;
	struct pcm_sg_move m;
	u64 n, l, i, phys[MAXN + 1];
	long bad = 0, wraps;

	for (n = 1; n <= MAXN; n++) {
		pcm_sg_init(&dom, n);
		for (i = 0; i <= n; i++)
			phys[i] = (u64)-1;
		for (l = 0; l < n; l++)
			phys[pcm_sg_map(&dom, n, l)] = l;
		wraps = 0;
		/* n + 1 moves advance start once: run until start wraps twice */
		for (i = 0; i < 2 * n * (n + 1); i++) {
			m = pcm_sg_next_move(&dom, n);
			if (m.dst != dom.gap || m.src > n || m.src == m.dst)
				bad++;
			phys[m.dst] = phys[m.src];
			wraps += m.wraps;
			pcm_sg_apply_move(&dom, n);
			for (l = 0; l < n; l++)
				if (phys[pcm_sg_map(&dom, n, l)] != l)
					bad++;
		}
		check(wraps == 2 * n, "n=%llu: %ld wraps", n, wraps);
		/* start advanced 2n times: it wrapped around twice, back to 0 */
		check(dom.start == 0 && dom.gap == n, "n=%llu: back to start=0, gap=n", n);
	}
	check(bad == 0, "%ld rows lost or misplaced", bad);
}

/* N + 1 moves rotate every row by one physical position. */
static void test_rotation(void)
{
	struct pcm_sg_domain dom;
	u64 n, l, i, before[MAXN];
	long bad = 0;

	for (n = 2; n <= MAXN; n++) {
		pcm_sg_init(&dom, n);
		for (l = 0; l < n; l++)
			before[l] = pcm_sg_map(&dom, n, l);
		for (i = 0; i < n + 1; i++)
			pcm_sg_apply_move(&dom, n);
		for (l = 0; l < n; l++)
			if (pcm_sg_map(&dom, n, l) != (before[l] + 1) % n)
				bad++;
	}
	check(bad == 0, "%ld rows not shifted by one", bad);
}

/* Interleaved domains tile the backing rows 0 .. R + K - 1 exactly. */
static void test_domains_tile(void)
{
	struct pcm_sg_domain dom[8];
	u64 r, total, phys_rows, l, p, seen[300];
	u32 k, d;
	long bad = 0;

	for (k = 1; k <= 8; k++) {
		for (r = k; r <= 200; r++) {
			total = 0;
			for (d = 0; d < k; d++) {
				u64 n = pcm_sg_domain_rows(r, k, d);

				total += n;
				pcm_sg_init(&dom[d], n);
				/* an arbitrary reachable state per domain */
				for (l = 0; l < (r * 7 + d * 13) % (2 * n + 3); l++)
					pcm_sg_apply_move(&dom[d], n);
			}
			if (total != r)
				bad++;
			phys_rows = pcm_sg_physical_rows(r, k);
			memset(seen, 0, sizeof(seen));
			for (l = 0; l < r; l++) {
				d = l % k;
				p = d + k * pcm_sg_map(&dom[d], pcm_sg_domain_rows(r, k, d), l / k);
				if (p >= phys_rows || seen[p]++)
					bad++;
			}
		}
	}
	check(bad == 0, "%ld overlaps or rows past the end", bad);
}

static void test_feistel_permutation(void)
{
	static const u64 seeds[] = { 0, 1, 42, 0x8000000000000000ULL, 0xdeadbeefULL };
	static const u64 sizes[] = { 1000, 1024, 4097, 65536, 100003 };
	static unsigned char seen[100003];
	struct pcm_feistel f;
	unsigned int s, i;
	u64 n, l, p, fixed;
	long bad = 0;

	for (s = 0; s < ARRAY_SIZE(seeds); s++) {
		for (i = 0; i < 300 + ARRAY_SIZE(sizes); i++) {
			n = i < 300 ? i + 1 : sizes[i - 300];
			pcm_feistel_init(&f, seeds[s], n);
			memset(seen, 0, n);
			fixed = 0;
			for (l = 0; l < n; l++) {
				p = pcm_feistel_permute(&f, n, l);
				if (p >= n || seen[p]++)
					bad++;
				fixed += p == l;
			}
			/* it must scatter: few fixed points in larger domains */
			if (n >= 64 && fixed > n / 8)
				bad++;
		}
	}
	check(bad == 0, "%ld permutation failures", bad);
	pcm_feistel_init(&f, 1, 1 << 20);
	check(pcm_feistel_permute(&f, 1 << 20, 0) != pcm_feistel_permute(&f, 1 << 20, 1) - 1,
	      "neighbours do not stay neighbours");
	pcm_feistel_init(&f, 2, 1 << 20);
	{
		struct pcm_feistel g;

		pcm_feistel_init(&g, 3, 1 << 20);
		for (l = 0, bad = 0; l < 1000; l++)
			bad += pcm_feistel_permute(&f, 1 << 20, l) == pcm_feistel_permute(&g, 1 << 20, l);
		check(bad < 10, "seeds give different permutations (%ld equal)", bad);
	}
}

int main(void)
{
	RUN(test_map_bijection);
	RUN(test_run_exact);
	RUN(test_row_at_inverts);
	RUN(test_moves_keep_data);
	RUN(test_rotation);
	RUN(test_domains_tile);
	RUN(test_feistel_permutation);
	return tap_done();
}
