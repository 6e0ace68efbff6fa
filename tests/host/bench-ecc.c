// SPDX-License-Identifier: GPL-2.0-only
/*
 * What ECC and the error model cost per 4 KiB row on the host, with the
 * kernel's lib/bch.c built -O2 as the kernel builds it: not a test (make
 * bench-ecc; run it under valgrind --tool=callgrind for instruction
 * counts).  Usage: bench-ecc [ITERATIONS [OP]]; OP is one of the lines it
 * prints (pss-encode, pss-check-row, onyx-decode-clean, ...), all by
 * default.  The -row lines are the kernel's row entry points
 * (pcm_ecc_encode_sectors(), pcm_ecc_check_sectors() of a clean row):
 * valgrind --tool=callgrind --toggle-collect=op_encode_row (or
 * op_check_row) counts their instructions alone.  BENCH_NO_AVX=1 in
 * the environment: as on a CPU without AVX.
 */
#include <math.h>
#include <time.h>

#include "pcm-ecc.h"
#include "pcm-errmodel.h"

#define ROW	4096
#define SECTORS	(ROW / 512)

static u8 row[ROW], truth[ROW], par[SECTORS * PCM_ECC_MAX_META], tpar[sizeof(par)];

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* A row's sectors in one SIMD section (clmul where the codec has it), as the kernel codes them */
static void encode_row(struct pcm_ecc *e)
{
	pcm_ecc_simd_begin(e);
	for (int s = 0; s < SECTORS; s++)
		pcm_ecc_encode_sector(e, row + 512 * s, par + s * e->geom.meta_bytes);
	pcm_ecc_simd_end(e);
}

/* A row through the kernel's row entry points: pcm_ecc_encode_sectors(), pcm_ecc_check_sectors() */
static void encode_sectors_row(struct pcm_ecc *e)
{
	pcm_ecc_simd_begin(e);
	pcm_ecc_encode_sectors(e, row, SECTORS, par, e->geom.meta_bytes);
	pcm_ecc_simd_end(e);
}

static bool check_sectors_row(struct pcm_ecc *e)
{
	bool clean;

	pcm_ecc_simd_begin(e);
	clean = pcm_ecc_check_sectors(e, row, SECTORS, par, e->geom.meta_bytes);
	pcm_ecc_simd_end(e);
	return clean;
}

static int decode_row(struct pcm_ecc *e)
{
	unsigned int failed;
	int s, bits = 0;

	pcm_ecc_simd_begin(e);
	for (s = 0; s < SECTORS; s++)
		bits += pcm_ecc_decode_sector(e, row + 512 * s, par + s * e->geom.meta_bytes,
					      &failed);
	pcm_ecc_simd_end(e);
	return bits;
}

/* @errs bit errors in each codeword of the row (spread over its data). */
static void corrupt(struct pcm_ecc *e, int errs)
{
	const struct pcm_ecc_geom *g = &e->geom;
	unsigned int s, cw, i, len;

	memcpy(row, truth, ROW);
	memcpy(par, tpar, sizeof(par));
	for (s = 0; s < SECTORS; s++)
		for (cw = 0; cw < g->codewords; cw++)
			for (i = 0, len = pcm_ecc_cw_len(g, cw); i < (unsigned int)errs; i++)
				row[512 * s + pcm_ecc_cw_start(g, cw) + i * len / errs] ^= 1;
}

/* Time @n runs of one operation; report the best of 5 rounds (the host is shared). */
static void run(const char *name, const char *only, long n, void (*fn)(void *), void *arg)
{
	double best = 1e30, t;
	int r;

	if (only && strcmp(only, name))
		return;
	for (r = 0; r < 5; r++) {
		t = now_ns();
		for (long i = 0; i < n; i++)
			fn(arg);
		best = fmin(best, (now_ns() - t) / n);
	}
	printf("%-26s %9.0f ns per 4 KiB row\n", name, best);
}

static struct pcm_ecc *cur;
static int cur_errs;

static void op_encode(void *a)
{
	encode_row(a);
}

static noinline void op_encode_row(void *a)
{
	encode_sectors_row(a);
}

static noinline void op_check_row(void *a)
{
	if (!check_sectors_row(a))
		abort();
}

static void op_decode(void *a)
{
	if (cur_errs)
		corrupt(a, cur_errs);	/* (a memcpy of 4 KiB: tens of ns) */
	decode_row(a);
}

static struct pcm_err_rate rate;

static void op_errmodel(void *a)
{
	static u64 seq;
	struct pcm_rng rng;
	u64 pos, k, nbits = *(u64 *)a;

	pcm_rng_init(&rng, 1, seq++);
	for (pos = 0; ; pos += k + 1) {
		k = pcm_err_skip(&rate, &rng, nbits - pos);
		if (k >= nbits - pos)
			break;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	const char *only = argc > 2 ? argv[2] : NULL;
	const struct pcm_ecc_layout *l;
	struct pcm_ecc_geom g;
	struct pcm_ecc e;
	char name[64], msg[160];
	u64 nbits;
	int i;

#ifdef CONFIG_X86_64
	pcm_shim_no_avx = getenv("BENCH_NO_AVX");	/* the row asm's SSE encoding */
#endif
	for (i = 0; i < ROW; i++)
		truth[i] = i * 2654435761U >> 13;
	for (l = pcm_ecc_layouts; l->name; l++) {
		if (pcm_ecc_geom_init(&g, l->codewords, l->t, l->meta_bytes, msg, sizeof(msg)) ||
		    pcm_ecc_init(&e, &g))
			return 1;
		cur = &e;
		memcpy(row, truth, ROW);
		encode_row(&e);
		memcpy(tpar, par, sizeof(par));
		snprintf(name, sizeof(name), "%s-encode", l->name);
		run(name, only, n, op_encode, &e);
		snprintf(name, sizeof(name), "%s-encode-row", l->name);
		run(name, only, n, op_encode_row, &e);
		snprintf(name, sizeof(name), "%s-check-row", l->name);
		run(name, only, n, op_check_row, &e);
		cur_errs = 0;
		snprintf(name, sizeof(name), "%s-decode-clean", l->name);
		run(name, only, n, op_decode, &e);
		cur_errs = 1;
		snprintf(name, sizeof(name), "%s-decode-1-per-cw", l->name);
		run(name, only, n / 10 + 1, op_decode, &e);
		cur_errs = g.t;
		snprintf(name, sizeof(name), "%s-decode-t-per-cw", l->name);
		run(name, only, n / 10 + 1, op_decode, &e);
		pcm_ecc_exit(&e);
	}
	nbits = ROW * 8 + SECTORS * 30 * 8;	/* a PSS row with its parity */
	pcm_err_rate_init(&rate, 1000000000ULL);
	run("errmodel-1e-9", only, n * 10, op_errmodel, &nbits);
	pcm_err_rate_init(&rate, 100000000000000ULL);
	run("errmodel-1e-4", only, n * 10, op_errmodel, &nbits);
	return 0;
}
