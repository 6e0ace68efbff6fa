// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bit-error model and wear arithmetic; see pcm-errmodel.h.  No
 * floating point: probabilities are decimal integers (1e-18 units) or
 * numbers of the form mant * 2^exp with a 64-bit mantissa.  Nothing here
 * allocates or sleeps.
 */
#include <linux/kernel.h>
#include <linux/errno.h>
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/string.h>

#include "pcm-errmodel.h"

/* ---- rber as decimal text ------------------------------------------------ */

/* Append decimal digit @d to @mant; false when it would overflow. */
static bool rber_digit(u64 *mant, unsigned int d)
{
	if (*mant > (U64_MAX - d) / 10)
		return false;
	*mant = *mant * 10 + d;
	return true;
}

/*
 * Parse "0", "1e-9", "2.5e-7", "0.000001", "1E-6" into units of 1e-18.
 * -EINVAL: not such a number; -ERANGE: above 0.5 or finer than 1e-18.
 */
int pcm_rber_parse(const char *str, u64 *e18)
{
	const char *s = str;
	int exp10 = 18, e = 0, esign = 1;
	u64 mant = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++)
		if (!rber_digit(&mant, *s - '0'))
			return -ERANGE;
	if (*s == '.') {
		if (*++s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			if (rber_digit(&mant, *s - '0'))
				exp10--;
			else if (*s != '0')	/* a zero past the precision adds nothing */
				return -ERANGE;
		}
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			esign = *s++ == '-' ? -1 : 1;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++) {
			e = e * 10 + *s - '0';
			if (e > 999)
				return -ERANGE;
		}
	}
	if (*s)
		return -EINVAL;
	for (exp10 += esign * e; mant && exp10 < 0; exp10++) {
		if (mant % 10)
			return -ERANGE;
		mant /= 10;
	}
	for (; mant && exp10 > 0; exp10--) {
		if (mant > PCM_RBER_MAX / 10 + 1)
			return -ERANGE;
		mant *= 10;
	}
	if (mant > PCM_RBER_MAX)
		return -ERANGE;
	*e18 = mant;
	return 0;
}

/* The shortest form pcm_rber_parse() reads back: "0", "5e-1", "2.5e-7". */
int pcm_rber_format(char *buf, size_t len, u64 e18)
{
	char digits[24];
	int exp10 = -18, nd;

	if (!e18)
		return scnprintf(buf, len, "0");
	for (; e18 % 10 == 0; e18 /= 10)
		exp10++;
	nd = scnprintf(digits, sizeof(digits), "%llu", e18);
	exp10 += nd - 1;
	if (nd == 1)
		return scnprintf(buf, len, "%se%d", digits, exp10);
	return scnprintf(buf, len, "%c.%se%d", digits[0], digits + 1, exp10);
}

/* ---- the random stream ---------------------------------------------------- */

#define GOLDEN64	0x9e3779b97f4a7c15ULL

static u64 mix64(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A keyed hash of two words: independent-looking values for each (a, b). */
u64 pcm_hash64(u64 seed, u64 a, u64 b)
{
	return mix64((mix64(mix64(seed + GOLDEN64) ^ a) + GOLDEN64) ^ b);
}

void pcm_rng_init(struct pcm_rng *rng, u64 seed, u64 stream)
{
	rng->state = pcm_hash64(seed, stream, 0);
}

u64 pcm_rng_next(struct pcm_rng *rng)
{
	rng->state += GOLDEN64;
	return mix64(rng->state);
}

/* ---- numbers mant * 2^exp -------------------------------------------------- */

struct pcm_fp {
	u64 mant;	/* bit 63 set, or 0 */
	int exp;
};

static struct pcm_fp fp_make(u64 v, int exp)
{
	struct pcm_fp r = { 0, 0 };
	int s;

	if (v) {
		s = 64 - fls64(v);
		r.mant = v << s;
		r.exp = exp - s;
	}
	return r;
}

static struct pcm_fp fp_mul(struct pcm_fp a, struct pcm_fp b)
{
	if (!a.mant || !b.mant)
		return fp_make(0, 0);
	return fp_make(mul_u64_u64_shr(a.mant, b.mant, 64), a.exp + b.exp + 64);
}

static const struct pcm_fp FP_LOG2E = { 0xb8aa3b295c17f0bcULL, -63 };	/* 1/ln 2 */
static const struct pcm_fp FP_1E_18 = { 0x9392ee8e921d5d07ULL, -123 };	/* 1e-18 */

#define LOG2_FRAC	48	/* fraction bits of the fixed-point log2 */
#define SMALL_SHIFT	16	/* x < 2^-16 takes the series */

/*
 * -log2(1 - x) for a small x (< 2^-16): (x + x^2/2 + x^3/3 ...) / ln 2,
 * the series up to x^2, relative error below x^2 / 3 < 2^-33.
 */
static struct pcm_fp neglog2_1m_small(struct pcm_fp x)
{
	int sh = -(x.exp + 62);		/* x / 2 in units of 2^-63 */
	struct pcm_fp onep = { 1ULL << 63, -63 };

	if (x.mant && sh < 64)
		onep.mant += x.mant >> sh;
	return fp_mul(fp_mul(x, FP_LOG2E), onep);
}

/*
 * -log2(1 - X / 2^64) for X >= 2^48: 64 - log2(2^64 - X), the log by
 * repeated squaring of the normalized mantissa, one bit per square.
 */
static struct pcm_fp neglog2_1m_big(u64 x)
{
	u64 y = -x, z, sq, frac = 0;
	int k = fls64(y) - 1, i;

	z = y << (63 - k);		/* y / 2^k in [1, 2), 63 fraction bits */
	for (i = 0; i < LOG2_FRAC; i++) {
		sq = mul_u64_u64_shr(z, z, 64);	/* (z^2 / 2) with 63 bits */
		frac <<= 1;
		if (sq >> 63) {
			frac |= 1;
			z = sq;
		} else {
			z = sq << 1;
		}
	}
	return fp_make((64ULL << LOG2_FRAC) - ((u64)k << LOG2_FRAC) - frac, -LOG2_FRAC);
}

/* -log2(1 - X / 2^64): X uniform gives an exponential variable (in bits). */
static struct pcm_fp neglog2_1m(u64 x)
{
	if (x >> (64 - SMALL_SHIFT))
		return neglog2_1m_big(x);
	return neglog2_1m_small(fp_make(x, -64));
}

/* ---- error positions by geometric skipping -------------------------------- */

/* @p_e18 is capped at PCM_RBER_MAX. */
void pcm_err_rate_init(struct pcm_err_rate *rate, u64 p_e18)
{
	struct pcm_fp p = fp_mul(fp_make(min(p_e18, PCM_RBER_MAX), 0), FP_1E_18);
	struct pcm_fp b;

	if (!p.mant)
		b = p;
	else if (p.exp + 64 <= -SMALL_SHIFT)
		b = neglog2_1m_small(p);
	else
		b = neglog2_1m_big(p.mant >> -(p.exp + 64));
	rate->mant = b.mant;
	rate->exp = b.exp;
}

/*
 * How many error-free bits come before the next bit error: a geometric
 * variable with P(K = k) = (1 - p)^k p, drawn with one random number as
 * K = floor(A / B), A = -log2(U) for U uniform in (0, 1] and
 * B = -log2(1 - p).  Returns min(K, @limit): @limit means "none in the
 * next @limit bits".  The quotient keeps 31 bits, far below what any
 * statistic over a device's life can see.
 */
u64 pcm_err_skip(const struct pcm_err_rate *rate, struct pcm_rng *rng, u64 limit)
{
	struct pcm_fp a = neglog2_1m(pcm_rng_next(rng));
	u64 q, k;
	int sh;

	if (!rate->mant)
		return limit;
	if (!a.mant)
		return 0;
	q = div64_u64(a.mant, rate->mant >> 32);	/* A / B * 2^(32 - sh) */
	sh = a.exp - rate->exp - 32;
	if (sh >= 30)
		return limit;
	if (sh >= 0)
		k = q << sh;
	else
		k = sh > -64 ? q >> -sh : 0;
	return min(k, limit);
}

/* ---- a read's errors, by seed, physical sector and read number ------------ */

#define ERR_SALT	0x5241574552524f52ULL	/* "RAWERROR" */

void pcm_err_stream(struct pcm_rng *rng, u64 seed, enum pcm_err_kind kind,
		    u64 sector, u32 nread)
{
	rng->state = pcm_hash64(seed ^ ERR_SALT ^ ((u64)kind << 56), sector, nread);
}

/*
 * The raw errors of read @nread of physical sector @sector (@nbits bits,
 * data and parity in ECC numbering) at @rate: nothing drawn until
 * pcm_err_next() asks.  @rate must outlive the walk.
 */
void pcm_err_begin(struct pcm_err_iter *it, const struct pcm_err_rate *rate, u64 seed,
		   u64 sector, u32 nread, u32 nbits)
{
	it->rate = rate;
	pcm_err_stream(&it->rng, seed, PCM_ERR_RBER, sector, nread);
	it->pos = rate->mant ? 0 : nbits;
	it->nbits = nbits;
}

/* The next bit in error, by geometric skipping; false when there is none. */
bool pcm_err_next(struct pcm_err_iter *it, u32 *pos)
{
	u64 k, left = it->nbits - it->pos;

	if (!left)
		return false;
	k = pcm_err_skip(it->rate, &it->rng, left);
	if (k >= left) {
		it->pos = it->nbits;
		return false;
	}
	*pos = it->pos + k;
	it->pos += k + 1;
	return true;
}

/* ---- wear ------------------------------------------------------------------ */

#define Q16(num, den)	((u32)((u64)(num) * PCM_Q16 / (den)))

/*
 * Curves of x = writes / endurance, linear between points, flat past the
 * last.  The PSS slides ("PCM endurance measurements": 10K write cycles
 * of 32 sectors of random data, each written, read back and compared)
 * show write time and bit error rate growing with age; their plotted
 * values are not in the text, so the points are this model's, with that
 * shape and anchored where the papers give figures:
 *
 * rber: x1 until a tenth of endurance (PSS's whole 10K-cycle experiment
 * stays under 1 % of its 10^6), x2 at half, x10 at endurance, where Onyx
 * (section 2.2) puts the first bit error of a large population without
 * ECC, then x100 and x1000 as cells fail (stuck-at cells take over).
 *
 * write time: PSS's writes take 61 us on average and 240 us at the
 * 99.9th percentile; the model lets a row's writes slow down to that
 * percentile, 240/61 = 3.93x, at twice its endurance: 1.25x at half,
 * 2x at endurance, 3x at 1.5.
 *
 * stuck-at cells per 4 KiB (32768 bits) past endurance: 1 at endurance,
 * 8 at 1.5, 64 at 2 (about one error per PSS codeword of 6 x 48 per
 * 4 KiB: uncorrectable sectors appear), 1024 at 3, 4096 at 4.
 */
const struct pcm_wear_point pcm_wear_rber_curve[] = {
	{ 0, Q16(1, 1) },
	{ Q16(1, 10), Q16(1, 1) },
	{ Q16(1, 2), Q16(2, 1) },
	{ Q16(1, 1), Q16(10, 1) },
	{ Q16(3, 2), Q16(100, 1) },
	{ Q16(2, 1), Q16(1000, 1) },
	{ U32_MAX, 0 }
};

const struct pcm_wear_point pcm_wear_lat_curve[] = {
	{ 0, Q16(1, 1) },
	{ Q16(1, 2), Q16(5, 4) },
	{ Q16(1, 1), Q16(2, 1) },
	{ Q16(3, 2), Q16(3, 1) },
	{ Q16(2, 1), Q16(240, 61) },
	{ U32_MAX, 0 }
};

const struct pcm_wear_point pcm_wear_stuck_curve[] = {
	{ Q16(1, 1), 0 },
	{ Q16(1, 1) + 1, Q16(1, 1) },
	{ Q16(3, 2), Q16(8, 1) },
	{ Q16(2, 1), Q16(64, 1) },
	{ Q16(3, 1), Q16(1024, 1) },
	{ Q16(4, 1), Q16(4096, 1) },
	{ U32_MAX, 0 }
};

/*
 * writes / endurance in Q16, rounded up, so that x > 1.0 exactly when a
 * row is past its endurance; saturates at PCM_WEAR_X_MAX, 0 without
 * endurance.  (ceil(r / e) = 1 - floor((e - r) / e), in Q16.)
 */
u32 pcm_wear_x(u64 writes, u64 endurance)
{
	u64 q, r;

	if (!endurance)
		return 0;
	if (writes / (PCM_WEAR_X_MAX / PCM_Q16) >= endurance)
		return PCM_WEAR_X_MAX;
	q = div64_u64_rem(writes, endurance, &r);
	return (q + 1) * PCM_Q16 - mul_u64_u64_div_u64(endurance - r, PCM_Q16, endurance);
}

/* A curve's value at @x (its first point is at or below any x asked). */
u32 pcm_wear_curve(const struct pcm_wear_point *c, u32 x)
{
	u64 dx, dv;

	if (x <= c[0].x)
		return c[0].val;
	for (; c[1].x != U32_MAX && x >= c[1].x; c++)
		;
	if (c[1].x == U32_MAX)
		return c[0].val;
	dx = c[1].x - c[0].x;
	dv = c[1].val - c[0].val;	/* the curves only grow */
	return c[0].val + div64_u64(dv * (x - c[0].x), dx);
}

/* A row's error rate at wear @x, capped at PCM_RBER_MAX. */
u64 pcm_wear_rber(u64 rber_e18, u32 x)
{
	u32 mult = pcm_wear_curve(pcm_wear_rber_curve, x);

	if (rber_e18 >= div64_u64((u64)PCM_RBER_MAX * PCM_Q16, mult))
		return PCM_RBER_MAX;
	return mul_u64_u32_shr(rber_e18, mult, 16);
}

#define STUCK_SALT	0x5354554b43454c4cULL	/* "STUCKCELL" */

/*
 * How many stuck-at cells a unit (a sector) of @nbits bits (data and
 * parity) has at wear @x: the curve's count per 32768 bits, scaled,
 * rounded up or down by a fraction fixed per unit, so that the mean is
 * right and a unit's count only grows with its wear.
 */
u32 pcm_stuck_count(u64 seed, u64 unit, u32 x, u32 nbits)
{
	u64 q16 = (u64)pcm_wear_curve(pcm_wear_stuck_curve, x) * nbits >> 15;
	u32 dither = pcm_hash64(seed ^ STUCK_SALT, unit, U64_MAX) & (PCM_Q16 - 1);

	return min_t(u64, (q16 + dither) >> 16, nbits);
}

/*
 * Stuck cell @i of @unit: a bit position below @nbits and the value it
 * reads as, the same on every call.  Cell i does not depend on how many
 * cells the unit has, so a unit that wears further keeps its stuck cells.
 */
void pcm_stuck_cell(u64 seed, u64 unit, u32 i, u32 nbits, u32 *pos, u8 *val)
{
	u64 h = pcm_hash64(seed ^ STUCK_SALT, unit, i);

	*pos = mul_u64_u32_shr(h >> 32, nbits, 32);
	*val = h & 1;
}

/*
 * The stuck cells of the row whose first sector in the data area is
 * @first_sector, at the row's wear @x; nothing is drawn until a sector
 * is picked.  it->x is 0 when the row has none (not past endurance).
 */
void pcm_stuck_begin(struct pcm_stuck_iter *it, u64 seed, u64 first_sector, u32 x,
		     u32 sector_bits)
{
	it->seed = seed;
	it->first = first_sector;
	it->x = pcm_wear_curve(pcm_wear_stuck_curve, x) ? x : 0;
	it->sector_bits = sector_bits;
	it->i = 0;
	it->n = 0;
}

/* Sector @k of the row: its cells from the first. */
void pcm_stuck_sector(struct pcm_stuck_iter *it, u32 k)
{
	it->unit = it->first + k;
	it->i = 0;
	it->n = it->x ? pcm_stuck_count(it->seed, it->unit, it->x, it->sector_bits) : 0;
}

bool pcm_stuck_next(struct pcm_stuck_iter *it, u32 *pos, u8 *val)
{
	if (it->i >= it->n)
		return false;
	pcm_stuck_cell(it->seed, it->unit, it->i++, it->sector_bits, pos, val);
	return true;
}

/* ---- the wear summary ------------------------------------------------------ */

void pcm_wear_summary_init(struct pcm_wear_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->min = U32_MAX;
}

/* Add @n counters: callable chunk by chunk over a large array. */
void pcm_wear_summary_add(struct pcm_wear_summary *s, const u32 *ctr, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		s->sum += ctr[i];
		s->max = max(s->max, ctr[i]);
		s->min = min(s->min, ctr[i]);
		s->hist[fls(ctr[i])]++;
	}
	s->counters += n;
}

/*
 * Per row, when a counter counts the writes of @rows_per_counter rows
 * (wear:ROWS; its rows' mean is all it knows), and the writes left: at
 * today's spread, the device has taken sum writes while its most worn
 * rows took max, so it takes sum / max more for each write those rows
 * still have before @endurance.
 */
void pcm_wear_life(const struct pcm_wear_summary *s, u32 rows_per_counter,
		   u64 endurance, struct pcm_wear_life *life)
{
	u64 rows = s->counters * rows_per_counter, rem = 0, whole = 0;
	u64 cap = endurance > div64_u64(U64_MAX, rows_per_counter) ? U64_MAX :
		  endurance * rows_per_counter;	/* a counter's endurance */
	u64 left = cap > s->max ? cap - s->max : 0;

	if (rows)
		whole = div64_u64_rem(s->sum, rows, &rem);
	life->max = s->max / rows_per_counter;
	life->mean_milli = whole * 1000 + (rows ? div64_u64(rem * 1000, rows) : 0);
	life->used_permille = endurance ?
		min_t(u64, div64_u64(life->max * 1000, endurance), U32_MAX) : 0;
	if (!s->max || div64_u64(left, s->max) + 1 > div64_u64(U64_MAX, max_t(u64, s->sum, 1)))
		life->remaining = U64_MAX;
	else
		life->remaining = mul_u64_u64_div_u64(left, s->sum, s->max);
	if (s->counters && cap > div64_u64(U64_MAX, s->counters))
		life->remaining_ideal = U64_MAX;
	else
		life->remaining_ideal = cap * s->counters > s->sum ? cap * s->counters - s->sum : 0;
}
