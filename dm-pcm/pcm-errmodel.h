/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm's bit-error model and wear arithmetic (dm-pcm.rst, "ECC and bit errors"), in
 * integers only: the raw bit error rate parsed from decimal text, a seeded
 * random stream, error positions by geometric skipping, the wear curve,
 * stuck-at cells of rows past endurance, and the wear summary the "wear"
 * message prints.  Pure logic shared by the module and the host tests.
 */
#ifndef PCM_ERRMODEL_H
#define PCM_ERRMODEL_H

#include <linux/types.h>

/* Rates are kept in units of 1e-18 ("e18"), exact for any decimal rber. */
#define PCM_RBER_ONE		1000000000000000000ULL
#define PCM_RBER_MAX		(PCM_RBER_ONE / 2)	/* 0.5: a coin flip */

int pcm_rber_parse(const char *str, u64 *e18);
int pcm_rber_format(char *buf, size_t len, u64 e18);

/*
 * The random stream: splitmix64 (Steele et al., OOPSLA'14).  Every draw
 * comes from a stream named by the device's seed and a stream number the
 * caller picks (a read's sequence number, a row), so that the same seed
 * and the same I/O sequence give the same errors whatever the order in
 * which workers run.
 */
struct pcm_rng {
	u64 state;
};

u64 pcm_hash64(u64 seed, u64 a, u64 b);
void pcm_rng_init(struct pcm_rng *rng, u64 seed, u64 stream);
u64 pcm_rng_next(struct pcm_rng *rng);

/*
 * A per-bit error probability p, kept as -log2(1 - p), the rate at which
 * the log of the survival probability falls per bit: mant * 2^exp, mant
 * normalized (bit 63 set), or 0 for p = 0.
 */
struct pcm_err_rate {
	u64 mant;
	int exp;
};

void pcm_err_rate_init(struct pcm_err_rate *rate, u64 p_e18);
u64 pcm_err_skip(const struct pcm_err_rate *rate, struct pcm_rng *rng, u64 limit);

/*
 * A read's errors, a pure function of what no scheduling changes: the
 * device's seed, the sector's place in the data area (its physical
 * sector, from 0) and its row's read number (the reads of that physical
 * row counted before this one), one stream per kind of draw.  The same
 * three numbers give the same bits, whatever the queue depth, bio size,
 * CPU or coding path of the read.
 */
enum pcm_err_kind {
	PCM_ERR_RBER = 1,	/* rber's draws: pcm_err_begin() */
	PCM_ERR_INJECT,		/* the positions of the bits "inject" flips */
};

void pcm_err_stream(struct pcm_rng *rng, u64 seed, enum pcm_err_kind kind,
		    u64 sector, u32 nread);

/* rber's raw errors of one read of a sector of @nbits bits, in ascending order. */
struct pcm_err_iter {
	const struct pcm_err_rate *rate;
	struct pcm_rng rng;
	u32 pos, nbits;
};

void pcm_err_begin(struct pcm_err_iter *it, const struct pcm_err_rate *rate, u64 seed,
		   u64 sector, u32 nread, u32 nbits);
bool pcm_err_next(struct pcm_err_iter *it, u32 *pos);

/*
 * Wear: x = writes / endurance in 1/65536 units (Q16), and what it does to
 * a row: its bit error rate, its write time (multipliers in Q16) and,
 * past endurance, its stuck-at cells.
 */
#define PCM_Q16			65536U
#define PCM_WEAR_X_MAX		(16 * PCM_Q16)	/* x saturates at 16 endurances */
#define PCM_WEAR_MAX_GROUP	65536		/* wear:ROWS, rows per counter */
#define PCM_WEAR_MAX_ENDURANCE	1000000000000ULL	/* endurance:N, 10^12 */

struct pcm_wear_point {
	u32 x;		/* writes / endurance, Q16 */
	u32 val;	/* the curve's value there, Q16 */
};

extern const struct pcm_wear_point pcm_wear_rber_curve[];
extern const struct pcm_wear_point pcm_wear_lat_curve[];
extern const struct pcm_wear_point pcm_wear_stuck_curve[];

u32 pcm_wear_x(u64 writes, u64 endurance);
u32 pcm_wear_curve(const struct pcm_wear_point *curve, u32 x);
u64 pcm_wear_rber(u64 rber_e18, u32 x);
u32 pcm_stuck_count(u64 seed, u64 unit, u32 x, u32 nbits);
void pcm_stuck_cell(u64 seed, u64 unit, u32 i, u32 nbits, u32 *pos, u8 *val);

/*
 * A row's stuck-at cells, a sector at a time: each sector of the data
 * area is a unit of its own (its cells drawn from its number), so a read
 * walks each sector's cells once, O(cells), however large the row.
 */
struct pcm_stuck_iter {
	u64 seed;
	u64 first;		/* the row's first sector in the data area */
	u32 x;			/* the row's wear; 0: no stuck cell */
	u32 sector_bits;	/* a sector's bits in ECC numbering */
	u64 unit;		/* the sector being walked */
	u32 i, n;		/* its cell i of n */
};

void pcm_stuck_begin(struct pcm_stuck_iter *it, u64 seed, u64 first_sector, u32 x,
		     u32 sector_bits);
void pcm_stuck_sector(struct pcm_stuck_iter *it, u32 k);
bool pcm_stuck_next(struct pcm_stuck_iter *it, u32 *pos, u8 *val);

/* Wear counters summed up: 32-bit counters, histogram by powers of two. */
#define PCM_WEAR_HIST		33	/* bucket fls(count): 0, 1, 2-3, 4-7, ... */

struct pcm_wear_summary {
	u64 counters;
	u64 sum;
	u32 max;
	u32 min;
	u64 hist[PCM_WEAR_HIST];
};

/*
 * What the summary means for the device's life, per row.  @remaining:
 * the writes the device takes before its most worn rows reach endurance
 * if wear keeps today's spread (U64_MAX: no write yet, or more than
 * that); @remaining_ideal: the same if wear were perfectly even.
 */
struct pcm_wear_life {
	u64 max;		/* writes, the most worn counter's rows */
	u64 mean_milli;		/* writes x 1000, all rows */
	u32 used_permille;	/* max / endurance, in 1/1000 (saturates) */
	u64 remaining;
	u64 remaining_ideal;
};

void pcm_wear_summary_init(struct pcm_wear_summary *s);
void pcm_wear_summary_add(struct pcm_wear_summary *s, const u32 *ctr, size_t n);
void pcm_wear_life(const struct pcm_wear_summary *s, u32 rows_per_counter,
		   u64 endurance, struct pcm_wear_life *life);

#endif
