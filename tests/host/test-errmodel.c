// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-errmodel.c: rber text both ways, the
 * random stream, the integer -log2(1 - p) against libm, error counts and
 * gaps against the binomial and geometric laws over 10^9 and more
 * simulated bits (z and chi-square bounds at a 1e-6 false-alarm level),
 * determinism, the wear curves at their documented points, stuck-at
 * cells, and the wear summary's arithmetic.  (The tests may use floating
 * point; the code under test does not.)
 */
#include <math.h>

#include "../../dm-pcm/pcm-errmodel.h"
#include "tap.h"

#define Z_BOUND		5.0	/* |z| above it: p < 6e-7 */
#define Z_ONE_SIDED	4.75	/* upper tail 1e-6 */

static double rate_value(const struct pcm_err_rate *r)
{
	return ldexp((double)r->mant, r->exp);
}

/* The chi-square value with @k degrees of freedom exceeded with probability 1e-6. */
static double chi2_bound(int k)
{
	double h = 2.0 / (9 * k);	/* Wilson-Hilferty */

	return k * pow(1 - h + Z_ONE_SIDED * sqrt(h), 3);
}

static void test_rber_parse(void)
{
	static const struct { const char *s; int ret; u64 v; } cases[] = {
		{ "0", 0, 0 }, { "1e-9", 0, 1000000000ULL }, { "2.5e-7", 0, 250000000000ULL },
		{ "0.000001", 0, 1000000000000ULL }, { "1E-6", 0, 1000000000000ULL },
		{ "5e-1", 0, PCM_RBER_MAX }, { "0.5", 0, PCM_RBER_MAX }, { "1e-18", 0, 1 },
		{ "10e-10", 0, 1000000000ULL }, { "0.00e0", 0, 0 }, { "1e+0", -ERANGE, 0 },
		{ "1.5000000000000000000000000e-9", 0, 1500000000ULL },
		{ "0.000000000000000001", 0, 1 }, { "0e-999", 0, 0 }, { "5e-01", 0, PCM_RBER_MAX },
		{ "", -EINVAL, 0 }, { "-1e-9", -EINVAL, 0 }, { "e-9", -EINVAL, 0 },
		{ "1e", -EINVAL, 0 }, { "1e-", -EINVAL, 0 }, { ".5", -EINVAL, 0 },
		{ "1.", -EINVAL, 0 }, { "abc", -EINVAL, 0 }, { "1e-9x", -EINVAL, 0 },
		{ " 1e-9", -EINVAL, 0 }, { "0x1", -EINVAL, 0 }, { "1e-9\n", -EINVAL, 0 },
		{ "1", -ERANGE, 0 }, { "0.6", -ERANGE, 0 }, { "1e-19", -ERANGE, 0 },
		{ "1.5e-18", -ERANGE, 0 }, { "1e999", -ERANGE, 0 }, { "1e-1000", -ERANGE, 0 },
		{ "99999999999999999999999", -ERANGE, 0 }, { "0.5000000000000000001", -ERANGE, 0 },
		{ "0.50000000000000000001", -ERANGE, 0 },
	};
	unsigned int i;
	u64 v;
	int r;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		v = 12345;
		r = pcm_rber_parse(cases[i].s, &v);
		check(r == cases[i].ret && (r ? v == 12345 : v == cases[i].v),
		      "\"%s\": %d, %llu", cases[i].s, r, v);
	}
}

/* The shortest text, and back to the same value for any value. */
static void test_rber_format(void)
{
	static const struct { u64 v; const char *s; } cases[] = {
		{ 0, "0" }, { 1000000000ULL, "1e-9" }, { 250000000000ULL, "2.5e-7" },
		{ PCM_RBER_MAX, "5e-1" }, { 1, "1e-18" }, { 123456789, "1.23456789e-10" },
		{ 120, "1.2e-16" },
	};
	char buf[40];
	unsigned int i;
	long bad = 0;
	u64 v, back;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		pcm_rber_format(buf, sizeof(buf), cases[i].v);
		check(!strcmp(buf, cases[i].s), "%llu: \"%s\"", cases[i].v, buf);
	}
	srand(1);
	for (i = 0; i < 200000; i++) {
		v = ((u64)rand() << 31 | rand()) % (PCM_RBER_MAX + 1);
		v /= (u64)pow(10, rand() % 18);		/* every magnitude */
		pcm_rber_format(buf, sizeof(buf), v);
		bad += pcm_rber_parse(buf, &back) || back != v;
	}
	check(!bad, "%ld values not read back", bad);
}

/* splitmix64 itself, streams that differ, and no hidden state. */
static void test_rng(void)
{
	struct pcm_rng a = { 0 }, b, c;
	u64 x[100];
	int i, same = 0;

	check(pcm_rng_next(&a) == 0xe220a8397b1dcdafULL, "not splitmix64");
	pcm_rng_init(&a, 7, 1);
	pcm_rng_init(&b, 7, 2);
	pcm_rng_init(&c, 8, 1);
	for (i = 0; i < 100; i++) {
		x[i] = pcm_rng_next(&a);
		same += x[i] == pcm_rng_next(&b);
		same += x[i] == pcm_rng_next(&c);
	}
	check(!same, "streams collide");
	pcm_rng_init(&a, 7, 1);
	for (i = 0; i < 100; i++)
		same += x[i] != pcm_rng_next(&a);
	check(!same, "the same stream differs");
	check(pcm_hash64(1, 2, 3) == pcm_hash64(1, 2, 3) && pcm_hash64(1, 2, 3) != pcm_hash64(1, 3, 2),
	      "hash");
}

/* -log2(1 - p), in integers, against libm over the whole range. */
static void test_rate_precision(void)
{
	struct pcm_err_rate r;
	double worst = 0, p, want, err;
	u64 e18;
	int i;

	pcm_err_rate_init(&r, 0);
	check(!r.mant, "p = 0 gives a rate");
	for (i = 0; i <= 1770; i++) {	/* 1e-18 .. 0.5, 100 steps a decade */
		e18 = (u64)llround(pow(10, i / 100.0));
		e18 = min(e18, PCM_RBER_MAX);
		p = e18 * 1e-18;
		pcm_err_rate_init(&r, e18);
		want = -log1pl(-(long double)p) / logl(2);
		err = fabs(rate_value(&r) / want - 1);
		worst = fmax(worst, err);
		check((r.mant >> 63) && err < 1e-9, "p %g: %.17g, want %.17g", p,
		      rate_value(&r), want);
	}
	printf("#   worst relative error of -log2(1 - p): %.2g\n", worst);
	pcm_err_rate_init(&r, U64_MAX);
	check(fabs(rate_value(&r) - 1) < 1e-12, "p is not capped at 0.5");
}

/*
 * Each skip is the floor of log(U) / log(1 - p) for the draw's U, to the
 * last bit but for quotients within 1e-7 of an integer.
 */
static void test_skip_exact(void)
{
	static const u64 ps[] = { 1, 1000, 1000000000ULL, 1000000000000ULL, 100000000000000ULL,
				  10000000000000000ULL, PCM_RBER_MAX };
	struct pcm_rng rng, shadow;
	struct pcm_err_rate r;
	long bad = 0, n = 0;
	long double u, q;
	unsigned int i;
	int j;
	u64 k;

	for (i = 0; i < ARRAY_SIZE(ps); i++) {
		pcm_err_rate_init(&r, ps[i]);
		pcm_rng_init(&rng, 99, i);
		for (j = 0; j < 100000; j++, n++) {
			shadow = rng;
			u = 1 - ldexpl(pcm_rng_next(&shadow), -64);
			q = logl(u) / log1pl(-(long double)ps[i] * 1e-18L);
			k = pcm_err_skip(&r, &rng, U64_MAX);
			if (q >= 1e18)
				bad += k < (u64)1e18;
			else if (k != (u64)floorl(q) && fabsl(q - roundl(q)) > 1e-7 * fmaxl(1, q))
				bad++;
		}
	}
	check(!bad, "%ld of %ld skips off", bad, n);
}

/*
 * Error count over @bits simulated bits, read by read of @read_bits each;
 * with @gaps, the skips binned by @bin_lo (for one read: the gaps).
 */
static u64 count_errors(u64 p_e18, u64 seed, u64 bits, u64 read_bits, u64 *gaps, int nbins,
			const u64 *bin_lo)
{
	struct pcm_err_rate r;
	struct pcm_rng rng;
	u64 done, pos, k, errors = 0;
	int b;

	pcm_err_rate_init(&r, p_e18);
	for (done = 0; done < bits; done += read_bits) {
		pcm_rng_init(&rng, seed, done);		/* a stream per read */
		for (pos = 0; ; pos += k + 1) {
			k = pcm_err_skip(&r, &rng, read_bits - pos);
			if (k >= read_bits - pos)
				break;
			errors++;
			if (!gaps)
				continue;
			for (b = nbins - 1; b > 0 && k < bin_lo[b]; b--)
				;
			gaps[b]++;
		}
	}
	return errors;
}

/*
 * The number of errors over 10^9 bits is binomial(10^9, p): within five
 * standard deviations, for rates from 1e-9 (over 10^12 bits, so that
 * some errors come) to 1e-3, read 4 KiB row by row with PSS's parity and
 * in one long run.
 */
static void test_rate_statistics(void)
{
	static const struct { u64 p_e18, bits, read_bits; } runs[] = {
		{ 1000000000ULL, 1000000000000ULL, 10000000000ULL },	/* 1e-9, 10^12 bits */
		{ 1000000000000ULL, 1000000000ULL, 34688 },		/* 1e-6, PSS rows */
		{ 100000000000000ULL, 1000000000ULL, 34688 },		/* 1e-4, PSS rows */
		{ 1000000000000000ULL, 1000000000ULL, 1000000000ULL },	/* 1e-3, one run */
		{ 1000000000000000ULL, 1000000000ULL, 4096 * 8 },	/* 1e-3, plain rows */
	};
	unsigned int i;
	double p, mu, sd, z;
	u64 n;

	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		p = runs[i].p_e18 * 1e-18;
		n = count_errors(runs[i].p_e18, i, runs[i].bits, runs[i].read_bits, NULL, 0, NULL);
		mu = runs[i].bits * p;
		sd = sqrt(mu * (1 - p));
		z = (n - mu) / sd;
		printf("#   p %g over %.3g bits in reads of %llu: %llu errors, expected %.0f, z %.2f\n",
		       p, (double)runs[i].bits, runs[i].read_bits, n, mu, z);
		check(fabs(z) < Z_BOUND, "p %g: z = %.2f", p, z);
	}
}

/*
 * The gaps between errors follow the geometric law: 20 bins of about
 * equal probability, chi-square with 19 degrees of freedom.
 */
static void test_gap_distribution(void)
{
	static const u64 ps[] = { 1000000000000000ULL, 100000000000000000ULL };	/* 1e-3, 0.1 */
	u64 lo[20], gaps[20];
	double p, q, chi, pr, hi_surv;
	unsigned int i;
	int b, dof;
	u64 n, bits;

	for (i = 0; i < ARRAY_SIZE(ps); i++) {
		p = ps[i] * 1e-18;
		q = log1p(-p);
		for (b = 0; b < 20; b++)
			lo[b] = (u64)ceil(log(1 - b / 20.0) / q);
		memset(gaps, 0, sizeof(gaps));
		bits = (u64)(1e6 / p);
		n = count_errors(ps[i], 1000 + i, bits, bits, gaps, 20, lo);
		chi = 0;
		dof = -1;
		for (b = 0; b < 20; b++) {
			hi_surv = b == 19 ? 0 : exp(q * lo[b + 1]);
			pr = exp(q * lo[b]) - hi_surv;	/* P(lo[b] <= K < lo[b+1]) */
			if (pr <= 0)	/* an empty bin: boundaries merge for a large p */
				continue;
			chi += pow(gaps[b] - n * pr, 2) / (n * pr);
			dof++;
		}
		printf("#   p %g: %llu gaps in %d bins, chi-square %.1f (bound %.1f)\n", p, n, dof + 1,
		       chi, chi2_bound(dof));
		check(dof >= 5 && chi < chi2_bound(dof), "p %g: chi-square %.1f", p, chi);
	}
}

/* Errors land uniformly within a read: 16 position bins, chi-square. */
static void test_positions_uniform(void)
{
	const u64 read_bits = 34688;
	struct pcm_err_rate r;
	struct pcm_rng rng;
	u64 bins[16] = { 0 }, pos, k, n = 0, row;
	double chi = 0;
	int b;

	pcm_err_rate_init(&r, 10000000000000ULL);	/* 1e-5 */
	for (row = 0; row < 300000; row++) {
		pcm_rng_init(&rng, 5, row);
		for (pos = 0; ; pos += k + 1) {
			k = pcm_err_skip(&r, &rng, read_bits - pos);
			if (k >= read_bits - pos)
				break;
			bins[(pos + k) * 16 / read_bits]++;
			n++;
		}
	}
	for (b = 0; b < 16; b++)
		chi += pow(bins[b] - n / 16.0, 2) / (n / 16.0);
	printf("#   %llu errors in 16 position bins: chi-square %.1f (bound %.1f)\n", n, chi,
	       chi2_bound(15));
	check(chi < chi2_bound(15), "chi-square %.1f", chi);
}

/* The same seed and reads give the same errors; another seed others. */
static void test_determinism(void)
{
	struct pcm_err_rate r;
	struct pcm_rng rng;
	u64 run[2][3][400], pos, k, seeds[3] = { 11, 11, 12 };
	int s, row, n;

	pcm_err_rate_init(&r, 100000000000000ULL);	/* 1e-4: ~3.5 a row */
	memset(run, 0, sizeof(run));
	for (s = 0; s < 3; s++) {
		n = 0;
		for (row = 0; row < 1000 && n < 400; row++) {
			pcm_rng_init(&rng, seeds[s], row);
			for (pos = 0; n < 400; pos += k + 1) {
				k = pcm_err_skip(&r, &rng, 34688 - pos);
				if (k >= 34688 - pos)
					break;
				run[0][s][n++] = (u64)row << 32 | (pos + k);
			}
		}
	}
	check(!memcmp(run[0][0], run[0][1], sizeof(run[0][0])), "same seed, other errors");
	check(memcmp(run[0][0], run[0][2], sizeof(run[0][0])), "other seed, same errors");
	check(run[0][0][399], "too few errors to compare");
}

/*
 * A read's errors are a pure function of (seed, physical sector, read
 * number): the same three give the same positions, in any order of
 * calls; another read number, sector or seed gives another draw; the
 * iterator is the skip loop over the stream pcm_err_stream() names; and
 * over many (sector, read number) pairs the count is binomial.
 */
#define ERR_N		64	/* positions kept per walk */

static u32 walk(const struct pcm_err_rate *r, u64 seed, u64 sector, u32 nread, u32 nbits,
		u32 *pos)
{
	struct pcm_err_iter it;
	u32 n = 0, p;

	pcm_err_begin(&it, r, seed, sector, nread, nbits);
	while (pcm_err_next(&it, &p)) {
		if (n < ERR_N)
			pos[n] = p;
		n++;
	}
	return n;
}

/* Two walks found the same errors (as far as they kept them). */
static int same_walk(u32 na, const u32 *a, u32 nb, const u32 *b)
{
	return na == nb && !memcmp(a, b, sizeof(u32) * (na < ERR_N ? na : ERR_N));
}

static void test_read_errors(void)
{
	u32 a[ERR_N], b[ERR_N], na, nb, i, p, nread;
	u64 sector, k, pos, total = 0, reads = 0;
	int same = 0, differ = 0, sorted = 1, loop_ok = 1, rev_ok = 1;
	struct pcm_err_rate r;
	struct pcm_err_iter it;
	struct pcm_rng rng;
	double mean, sd;

	pcm_err_rate_init(&r, 1000000000000000ULL);	/* 1e-3: ~35 per 34688 bits */
	for (sector = 0; sector < 200; sector++) {
		for (nread = 0; nread < 4; nread++) {
			na = walk(&r, 4242, sector, nread, 34688, a);
			nb = walk(&r, 4242, sector, nread, 34688, b);
			same += same_walk(na, a, nb, b);
			/* the next read of the same sector: another draw */
			nb = walk(&r, 4242, sector, nread + 1, 34688, b);
			differ += !same_walk(na, a, nb, b);
			for (i = 1; i < na && i < ERR_N; i++)
				sorted &= a[i] > a[i - 1];
		}
	}
	check(same == 800, "same (seed, sector, read number): same positions (%d of 800)", same);
	check(differ == 800, "next read number: another draw (%d of 800)", differ);
	check(sorted, "positions ascending, distinct");

	/* walks in reverse order, interleaved with others: the same */
	for (sector = 0; sector < 50; sector++) {
		na = walk(&r, 9, 1000 - sector, 7, 4096, a);
		walk(&r, 9, sector, 3, 4096, b);
		nb = walk(&r, 9, 1000 - sector, 7, 4096, b);
		rev_ok &= same_walk(na, a, nb, b);
	}
	check(rev_ok, "the draw does not depend on the walks made before it");

	na = walk(&r, 4242, 17, 0, 34688, a);
	nb = walk(&r, 4242, 18, 0, 34688, b);
	check(!same_walk(na, a, nb, b), "another sector: another draw");
	nb = walk(&r, 4243, 17, 0, 34688, b);
	check(!same_walk(na, a, nb, b), "another seed: another draw");

	/* the iterator is the skip loop over the named stream */
	for (sector = 0; sector < 100; sector++) {
		pcm_err_begin(&it, &r, 5, sector, 2, 34688);
		pcm_err_stream(&rng, 5, PCM_ERR_RBER, sector, 2);
		for (pos = 0; ; pos += k + 1) {
			k = pcm_err_skip(&r, &rng, 34688 - pos);
			if (k >= 34688 - pos) {
				loop_ok &= !pcm_err_next(&it, &p);
				break;
			}
			loop_ok &= pcm_err_next(&it, &p) && p == pos + k;
		}
	}
	check(loop_ok, "pcm_err_next() follows pcm_err_skip() on the stream");

	/* the inject stream is another stream */
	pcm_err_stream(&rng, 5, PCM_ERR_RBER, 3, 0);
	k = pcm_rng_next(&rng);
	pcm_err_stream(&rng, 5, PCM_ERR_INJECT, 3, 0);
	check(k != pcm_rng_next(&rng), "rber and inject streams differ");

	/* rate 0: nothing */
	pcm_err_rate_init(&r, 0);
	check(walk(&r, 1, 1, 1, 34688, a) == 0, "rber 0: no error");

	/* counts over 20000 sectors x 5 reads of 4096 bits at 1e-3: binomial */
	pcm_err_rate_init(&r, 1000000000000000ULL);
	for (sector = 0; sector < 20000; sector++)
		for (nread = 0; nread < 5; nread++, reads++) {
			pcm_err_begin(&it, &r, 77, sector, nread, 4096);
			while (pcm_err_next(&it, &p))
				total++;
		}
	mean = reads * 4096 * 0.001;
	sd = sqrt(mean * 0.999);
	printf("# %llu errors over %llu reads of 4096 bits, expected %.0f +- %.0f\n",
	       (unsigned long long)total, (unsigned long long)reads, mean, sd);
	check(fabs(total - mean) < Z_BOUND * sd, "count binomial (z %.2f)", (total - mean) / sd);
}

#define E 1000000ULL	/* endurance for the curve tests */

/* The curves hold the values pcm-errmodel.c documents, and only grow. */
static void test_wear_curves(void)
{
	static const struct { double x, rber, lat; } pts[] = {
		{ 0, 1, 1 }, { 0.1, 1, 1.05 }, { 0.5, 2, 1.25 }, { 0.75, 6, 1.625 },
		{ 1, 10, 2 }, { 1.5, 100, 3 }, { 2, 1000, 240.0 / 61 }, { 16, 1000, 240.0 / 61 },
	};
	static const struct { double x, stuck; } st[] = {
		{ 0, 0 }, { 0.5, 0 }, { 1, 0 }, { 1.5, 8 }, { 2, 64 }, { 2.5, 544 }, { 3, 1024 },
		{ 4, 4096 }, { 16, 4096 },
	};
	u32 x, prev[3] = { 0 }, v[3];
	unsigned int i;
	long bad = 0;

	for (i = 0; i < ARRAY_SIZE(pts); i++) {
		x = pcm_wear_x((u64)(pts[i].x * E), E);
		check(fabs(pcm_wear_curve(pcm_wear_rber_curve, x) / 65536.0 - pts[i].rber) < 1e-4,
		      "rber x %g: %g", pts[i].x, pcm_wear_curve(pcm_wear_rber_curve, x) / 65536.0);
		check(fabs(pcm_wear_curve(pcm_wear_lat_curve, x) / 65536.0 - pts[i].lat) < 1e-4,
		      "lat x %g: %g", pts[i].x, pcm_wear_curve(pcm_wear_lat_curve, x) / 65536.0);
	}
	for (i = 0; i < ARRAY_SIZE(st); i++) {
		x = pcm_wear_x((u64)(st[i].x * E), E);
		check(fabs(pcm_wear_curve(pcm_wear_stuck_curve, x) / 65536.0 - st[i].stuck) < 1e-3,
		      "stuck x %g: %g", st[i].x, pcm_wear_curve(pcm_wear_stuck_curve, x) / 65536.0);
	}
	check(pcm_wear_x(E, E) == 65536 && pcm_wear_x(E + 1, E) == 65537 &&
	      pcm_wear_curve(pcm_wear_stuck_curve, pcm_wear_x(E, E)) == 0 &&
	      pcm_wear_curve(pcm_wear_stuck_curve, pcm_wear_x(E + 1, E)) == 65536,
	      "stuck cells start with the first write past endurance");
	for (x = 0; x <= PCM_WEAR_X_MAX; x++) {
		v[0] = pcm_wear_curve(pcm_wear_rber_curve, x);
		v[1] = pcm_wear_curve(pcm_wear_lat_curve, x);
		v[2] = pcm_wear_curve(pcm_wear_stuck_curve, x);
		for (i = 0; i < 3; i++)
			bad += v[i] < prev[i];
		memcpy(prev, v, sizeof(v));
	}
	check(!bad, "%ld decreasing steps", bad);
	check(pcm_wear_x(0, 0) == 0 && pcm_wear_x(U64_MAX, 0) == 0, "no endurance, no wear");
	check(pcm_wear_x(U64_MAX, 1) == PCM_WEAR_X_MAX && pcm_wear_x(U64_MAX - 1, U64_MAX) == 65536 &&
	      pcm_wear_x(1, U64_MAX) == 1 && pcm_wear_x(0, 1) == 0 && pcm_wear_x(E / 2, E) == 32768,
	      "saturation, rounding up, large values");
	check(pcm_wear_rber(1000000000ULL, pcm_wear_x(E, E)) == 10000000000ULL, "1e-9 x 10");
	check(pcm_wear_rber(PCM_RBER_MAX / 100, pcm_wear_x(2 * E, E)) == PCM_RBER_MAX, "cap");
	check(pcm_wear_rber(0, PCM_WEAR_X_MAX) == 0, "zero stays zero");
}

/* Stuck cells: none before endurance, the same every call, more with wear. */
static void test_stuck_cells(void)
{
	const u32 nbits = 34688;
	u32 c, c2, pos, pos2, i, ones = 0, total = 0, moved = 0, x;
	u64 row, sum = 0;
	long bad = 0;
	u8 val, val2;

	for (row = 0; row < 1000; row++) {
		bad += pcm_stuck_count(3, row, pcm_wear_x(E, E), nbits) != 0;
		c = pcm_stuck_count(3, row, pcm_wear_x(2 * E, E), nbits);
		sum += c;
		bad += c != pcm_stuck_count(3, row, pcm_wear_x(2 * E, E), nbits);
		for (x = pcm_wear_x(E, E); x < pcm_wear_x(4 * E, E); x += 997)
			bad += pcm_stuck_count(3, row, x + 997, nbits) < pcm_stuck_count(3, row, x, nbits);
		for (i = 0; i < c; i++) {
			pcm_stuck_cell(3, row, i, nbits, &pos, &val);
			pcm_stuck_cell(4, row, i, nbits, &pos2, &val2);	/* other calls between */
			moved += pos != pos2;
			pcm_stuck_cell(3, row, i, nbits, &pos2, &val2);
			bad += pos >= nbits || pos != pos2 || val != val2;
			ones += val;
			total++;
		}
	}
	check(!bad, "%ld unstable or out of range", bad);
	/* 64 per 32768 bits, scaled: mean exact to the dithering's noise */
	check(fabs(sum / 1000.0 - 64.0 * nbits / 32768) < 0.1, "mean %g", sum / 1000.0);
	check(fabs(ones - total / 2.0) < Z_BOUND * sqrt(total / 4.0), "%u of %u stuck at 1", ones, total);
	check(moved > total * 0.99, "another seed moves few cells: %u of %u", moved, total);
	c = pcm_stuck_count(3, 7, pcm_wear_x(E + E / 100, E), 512 * 8 + 30 * 8);
	c2 = pcm_stuck_count(3, 7, PCM_WEAR_X_MAX, 512 * 8 + 30 * 8);
	check(c <= 1 && c2 == 512 + 30, "small rows: %u, %u", c, c2);
}

/*
 * A row's stuck cells a sector at a time: each sector walks only its own
 * cells (a 1 MiB row at the curve's top, 2048 sectors of ~548 cells, is
 * ~1.1M steps in all, not 2048 times that), all within the sector, the
 * same on every walk, none below endurance, and the row's total is the
 * curve's count for its bits.
 */
static void test_stuck_iter(void)
{
	const u32 sbits = 4384, sectors = 2048;
	struct pcm_stuck_iter it, again;
	u64 steps = 0, total = 0;
	u32 k, pos, pos2, first_n = 0;
	long bad = 0;
	u8 val, val2;

	pcm_stuck_begin(&it, 9, 4096, pcm_wear_x(E, E), sbits);
	pcm_stuck_sector(&it, 3);
	check(!it.x && !pcm_stuck_next(&it, &pos, &val), "no stuck cell at endurance");
	pcm_stuck_begin(&it, 9, 4096, PCM_WEAR_X_MAX, sbits);
	pcm_stuck_begin(&again, 9, 4096, PCM_WEAR_X_MAX, sbits);
	for (k = 0; k < sectors; k++) {
		pcm_stuck_sector(&it, k);
		pcm_stuck_sector(&again, k);
		if (!k)
			first_n = it.n;
		while (pcm_stuck_next(&it, &pos, &val)) {
			bad += !pcm_stuck_next(&again, &pos2, &val2) || pos != pos2 ||
			       val != val2 || pos >= sbits;
			steps++;
		}
		bad += pcm_stuck_next(&again, &pos2, &val2);
		total += it.n;
	}
	check(!bad, "%ld cells out of the sector or not the same on a second walk", bad);
	check(steps == total, "%llu steps for %llu cells", (unsigned long long)steps,
	      (unsigned long long)total);
	/* 4096 per 32768 bits at the top of the curve */
	check(fabs(total / (double)sectors - 4096.0 * sbits / 32768) < 1, "mean per sector %g",
	      total / (double)sectors);
	pcm_stuck_begin(&it, 9, 8192, PCM_WEAR_X_MAX, sbits);
	pcm_stuck_sector(&it, 0);
	pcm_stuck_next(&it, &pos, &val);
	pcm_stuck_begin(&again, 9, 4096, PCM_WEAR_X_MAX, sbits);
	pcm_stuck_sector(&again, 0);
	pcm_stuck_next(&again, &pos2, &val2);
	check(first_n && (pos != pos2 || it.n != again.n), "another row, other cells");
}

/* The summary of known counters, in one call and chunk by chunk. */
static void test_wear_summary(void)
{
	static const u32 ctr[] = { 0, 1, 2, 3, 4, 1000, U32_MAX };
	static const u32 even[] = { 100, 200, 300, 400 }, groups[] = { 400, 800 };
	struct pcm_wear_summary s, t;
	struct pcm_wear_life l;
	unsigned int i;

	pcm_wear_summary_init(&s);
	pcm_wear_summary_add(&s, ctr, ARRAY_SIZE(ctr));
	check(s.counters == 7 && s.sum == 1010ULL + U32_MAX && s.max == U32_MAX && s.min == 0,
	      "totals");
	check(s.hist[0] == 1 && s.hist[1] == 1 && s.hist[2] == 2 && s.hist[3] == 1 &&
	      s.hist[10] == 1 && s.hist[32] == 1, "histogram");
	pcm_wear_summary_init(&t);
	for (i = 0; i < ARRAY_SIZE(ctr); i++)
		pcm_wear_summary_add(&t, ctr + i, 1);
	check(!memcmp(&s, &t, sizeof(s)), "chunked differs");
	pcm_wear_life(&s, 1, 1000, &l);
	check(l.max == U32_MAX && l.used_permille == U32_MAX && l.remaining == 0 &&
	      l.remaining_ideal == 0, "worn out");

	pcm_wear_summary_init(&s);
	pcm_wear_summary_add(&s, even, 4);
	pcm_wear_life(&s, 1, 1000, &l);
	check(l.max == 400 && l.mean_milli == 250000 && l.used_permille == 400 &&
	      l.remaining == 1500 && l.remaining_ideal == 3000, "rows: %llu %llu %u %llu %llu",
	      l.max, l.mean_milli, l.used_permille, l.remaining, l.remaining_ideal);

	pcm_wear_summary_init(&s);
	pcm_wear_summary_add(&s, groups, 2);
	pcm_wear_life(&s, 4, 1000, &l);
	check(l.max == 200 && l.mean_milli == 150000 && l.used_permille == 200 &&
	      l.remaining == 4800 && l.remaining_ideal == 6800, "groups: %llu %llu %u %llu %llu",
	      l.max, l.mean_milli, l.used_permille, l.remaining, l.remaining_ideal);

	pcm_wear_summary_init(&s);
	pcm_wear_life(&s, 1, 1000, &l);
	check(l.mean_milli == 0 && l.remaining == U64_MAX && l.remaining_ideal == 0, "empty");
	pcm_wear_summary_add(&s, groups, 1);
	pcm_wear_life(&s, 1, U64_MAX, &l);
	check(l.remaining == U64_MAX - 400 && l.remaining_ideal == U64_MAX - 400, "no overflow");
	pcm_wear_summary_add(&s, groups, 1);
	pcm_wear_life(&s, 1, U64_MAX, &l);
	check(l.remaining == U64_MAX && l.remaining_ideal == U64_MAX, "saturation");
	pcm_wear_life(&s, 1000, U64_MAX / 10, &l);
	check(l.remaining == U64_MAX && l.remaining_ideal == U64_MAX && l.max == 0,
	      "saturation, groups");
	pcm_wear_summary_init(&s);
	pcm_wear_summary_add(&s, (const u32[]){ 0, 0, 1, 2 }, 4);
	pcm_wear_life(&s, 3, 10, &l);
	check(l.mean_milli == 250 && l.max == 0, "fractions: %llu", l.mean_milli);
}

int main(void)
{
	RUN(test_rber_parse);
	RUN(test_rber_format);
	RUN(test_rng);
	RUN(test_rate_precision);
	RUN(test_skip_exact);
	RUN(test_rate_statistics);
	RUN(test_gap_distribution);
	RUN(test_positions_uniform);
	RUN(test_determinism);
	RUN(test_read_errors);
	RUN(test_wear_curves);
	RUN(test_stuck_cells);
	RUN(test_stuck_iter);
	RUN(test_wear_summary);
	return tap_done();
}
