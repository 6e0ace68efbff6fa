// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm ECC data path (ecc:bch): every 512-byte sector has parity in its
 * physical row's metadata (pcm-layout.h), encoded when it is written and
 * checked when it is read, with the bit errors of the model (inject,
 * rber) applied to what the backing device returned before decoding.
 *
 * Coding runs concurrently: the ECC workqueue is not ordered, and each
 * CPU has its own coding context (lib/bch instance and sector buffers,
 * struct pcm_ecc_ctx) under a local lock held only while coding, never
 * across I/O; their parity tables are one read-only set (pcm-ecc.c).
 * Where parity is computed by carry-less multiply, a row's coding is also
 * one FPU section (pcm_ecc_simd_begin(): kernel_fpu_begin()).  A row's
 * parity area travels in a buffer of the request's own (a mempool), so
 * parity I/O of different requests overlaps.
 *
 *  - A write is mapped as any other (it counts in its epoch, may park),
 *    then queued instead of issued: the worker locks its rows (hashed
 *    row-in-flight bits, always taken in ascending order), reads each
 *    row's parity (not when the write covers the whole row), encodes its
 *    sectors into it, writes it (FUA if the bio is FUA), then issues the
 *    data.  The rows stay locked until the data is written (end_io), so
 *    writes that share a row take turns with data and parity both: two
 *    writes of one sector reach data and parity in the same order.  Writes
 *    to other rows run in parallel.  Its count drops when the data is
 *    written, so a gap move that waits for it copies data and parity both.
 *    Write-zeroes zero the parity (zero data and zero parity are a
 *    codeword).
 *  - A read is issued as any other; its completion is held
 *    (DM_ENDIO_INCOMPLETE): the worker reads the parity of its rows (one
 *    read per row: a 4 KiB row's parity is one sector), flips the model's
 *    bits, decodes every codeword, puts the corrected data in the bio (or
 *    fails it with BLK_STS_MEDIUM, zeroing what could not be corrected)
 *    and completes it again.  Both code the bio's pages where they lie
 *    (kmap_local, in the worker); a sector is copied into the CPU's
 *    buffers only when the model changes its bits, its parity differs,
 *    or it straddles two bvecs.  Its count drops after the parity read: until
 *    then no move may reuse the row.  The timing model's hold comes after
 *    (pcm_end_io()): decoding is part of the modeled latency.
 *
 * A read that races a write of the same row reads its data and parity at
 * different moments, and a write may land in between: the new parity
 * with the old data would decode as errors that no device makes.  So a
 * write counts a generation up when it locks a row and again when it
 * unlocks it; a read notes its rows' generations when mapped and checks
 * them after each parity read.  If they moved, the read takes its rows'
 * locks, as a write does, and reads the data and parity of the rest of
 * its rows again: it returns the old or the new data, as a device would,
 * and the error model applies the same draws.  Those draws are a pure
 * function of the seed, the sector's physical place and its row's read
 * number (dm-pcm-errs.c), taken when the row is decoded: no order in
 * which workers take reads changes them.
 */
#include <linux/bio.h>
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/ktime.h>
#include <linux/local_lock.h>
#include <linux/mempool.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include "dm-pcm-compat.h"
#include "dm-pcm.h"
#include "dm-pcm-ecc.h"
#include "dm-pcm-errs.h"
#include "dm-pcm-inject.h"
#include "dm-pcm-meta.h"
#include "dm-pcm-wear.h"
#include "dm-pcm-wib.h"
#include "pcm-ecc.h"
#include "pcm-errmodel.h"
#include "pcm-rand.h"
#include "pcm_trace.h"

#define PCM_SECTOR_BITS_MAX	(8 * (PCM_ECC_SECTOR + PCM_ECC_MAX_META))

/*
 * Hashed row-in-flight bits: physical row r is bit r % PCM_ECC_ROW_LOCKS.
 * Two rows that share a bit only take turns.
 */
#define PCM_ECC_ROW_LOCKS	4096
#define PCM_ECC_META_POOL	4	/* parity buffers kept for reclaim */
#define PCM_ECC_REREAD_POOL	2	/* re-read buffers kept for reclaim */
#define PCM_ECC_REREAD_SECTORS	8	/* a re-read's piece, at least: 4 KiB */

/* One CPU's coding context: what lib/bch and the error model work in. */
struct pcm_ecc_ctx {
	local_lock_t lock;		/* held while coding, never across I/O */
	struct pcm_ecc codec;
	u8 data[PCM_ECC_SECTOR], truth[PCM_ECC_SECTOR];
	u8 parity[PCM_ECC_MAX_META];
	DECLARE_BITMAP(flipped, PCM_SECTOR_BITS_MAX);	/* inject's draws */
};

struct pcm_ecc_dev {
	struct workqueue_struct *wq;	/* not ordered: reads and writes in parallel */
	struct pcm_ecc_ctx __percpu *ctx;
	struct pcm_ecc_geom geom;
	struct bio_set bs;		/* inline reads' parity bios */
	mempool_t *meta_pool;		/* a row's metadata, one per request at work */
	mempool_t *reread_pool;		/* reread_sectors, for a read that raced a write */
	u32 reread_sectors;		/* whole logical blocks of the data device */
	unsigned long *row_busy;	/* PCM_ECC_ROW_LOCKS bits: rows being written */
	u32 *row_gen;			/* each bit's writes: +1 at lock, +1 at unlock */

	atomic64_t figs[PCM_ECC_NR_FIGS];
};

static const char * const pcm_ecc_fig_names[PCM_ECC_NR_FIGS] = {
	[PCM_ECC_CORRECTED_BITS] = "ecc_corrected_bits",
	[PCM_ECC_CORRECTED_SECTORS] = "ecc_corrected_sectors",
	[PCM_ECC_UNCORRECTABLE_SECTORS] = "ecc_uncorrectable_sectors",
	[PCM_ECC_SILENT_SECTORS] = "ecc_silent_sectors",
	[PCM_ECC_INJECTED_BITS] = "ecc_injected_bits",
	[PCM_ECC_RAW_BITS] = "ecc_raw_bits",
};

/*
 * The CPU's coding context, held only while coding.  A read may decode in
 * softirq context (its completion's), so BHs are off while it is held:
 * a softirq never takes the context a task on its CPU is coding in.
 */
static struct pcm_ecc_ctx *ctx_get(struct pcm_ecc_dev *e)
{
	local_bh_disable();
	local_lock(&e->ctx->lock);
	return this_cpu_ptr(e->ctx);
}

static void ctx_put(struct pcm_ecc_dev *e)
{
	local_unlock(&e->ctx->lock);
	local_bh_enable();
}

static unsigned int meta_len(struct pcm_c *pc)
{
	return pc->layout.row_meta_sectors << SECTOR_SHIFT;
}

/*
 * The sector of the bio at @it, mapped (kmap_local: worker context, no
 * sleeping until kunmap_local()) when it lies within one page of it,
 * nearly always; NULL when it straddles two bvecs: bio_sector_copy().
 */
static u8 *bio_sector_map(struct bio *bio, struct bvec_iter it)
{
	struct bio_vec bv = bio_iter_iovec(bio, it);

	return bv.bv_len >= PCM_ECC_SECTOR ? bvec_kmap_local(&bv) : NULL;
}

/*
 * The @n sectors of the bio at @it, mapped (as bio_sector_map()) when
 * they lie within one page of it: a row's part of a request, nearly
 * always, which is then coded in one call.  NULL otherwise.
 */
static u8 *bio_sectors_map(struct bio *bio, struct bvec_iter it, u32 n)
{
	struct bio_vec bv = bio_iter_iovec(bio, it);

	return bv.bv_len >= n * PCM_ECC_SECTOR ? bvec_kmap_local(&bv) : NULL;
}

/* Copy 512 bytes between @buf and the bio at @it, advancing @it. */
static void bio_sector_copy(struct bio *bio, struct bvec_iter *it, u8 *buf, bool to_bio)
{
	unsigned int done = 0;

	while (done < PCM_ECC_SECTOR) {
		struct bio_vec bv = bio_iter_iovec(bio, *it);

		bv.bv_len = min(bv.bv_len, PCM_ECC_SECTOR - done);
		if (to_bio)
			memcpy_to_bvec(&bv, buf + done);
		else
			memcpy_from_bvec(buf + done, &bv);
		bio_advance_iter_single(bio, it, bv.bv_len);
		done += bv.bv_len;
	}
}

/*
 * The rows a request covers, one at a time: backing sector @s, @n
 * sectors of it from sector @first of the row that starts at @slot.
 */
struct ecc_span {
	sector_t s, slot;
	u32 first, n;
};

static void span_of(struct pcm_c *pc, sector_t s, u32 left, struct ecc_span *sp)
{
	u32 rs = 1U << pc->layout.row_shift;

	sp->s = s;
	sp->first = (s - pc->layout.offset) & (rs - 1);
	sp->slot = s - sp->first;
	sp->n = min(left, rs - sp->first);
}

/*
 * The row-in-flight bits of @nrows rows from physical row @row, in
 * ascending bit order: [*b0, *b0 + *n0) and, when they wrap, [0, *n1).
 */
static void row_bits(sector_t row, u64 nrows, u32 *b0, u32 *n0, u32 *n1)
{
	u32 b = row % PCM_ECC_ROW_LOCKS;

	if (nrows >= PCM_ECC_ROW_LOCKS) {
		*b0 = 0;
		*n0 = PCM_ECC_ROW_LOCKS;
		*n1 = 0;
		return;
	}
	*b0 = b;
	*n0 = min_t(u64, nrows, PCM_ECC_ROW_LOCKS - b);
	*n1 = nrows - *n0;
}

/* The @i-th of the bits row_bits() gave, in ascending order. */
static inline u32 row_bit(u32 i, u32 b0, u32 n1)
{
	return i < n1 ? i : b0 + i - n1;
}

/* The physical rows of a remapped bio: the first and how many. */
static void io_rows(struct pcm_c *pc, struct pcm_io *io, sector_t *row, u64 *nrows)
{
	sector_t s = io->iter.bi_sector - pc->layout.offset;
	sector_t end = s + (io->iter.bi_size >> SECTOR_SHIFT) - 1;

	*row = s >> pc->layout.row_shift;
	*nrows = (end >> pc->layout.row_shift) - *row + 1;
}

/*
 * Lock a write's rows (@lock, worker: may sleep) in ascending bit order,
 * so no deadlock; or unlock them (end_io context: no sleeping).
 */
static void ecc_rows(struct pcm_c *pc, struct pcm_io *io, bool lock)
{
	unsigned long *busy = pc->ecc->row_busy;
	sector_t row;
	u64 nrows;
	u32 b0, n0, n1, i;

	io_rows(pc, io, &row, &nrows);
	row_bits(row, nrows, &b0, &n0, &n1);
	for (i = 0; i < n0 + n1; i++) {
		u32 bit = row_bit(i, b0, n1);
		u32 *gen = &pc->ecc->row_gen[bit];

		/* only the bit's holder changes its generation: odd while held */
		if (lock) {
			wait_on_bit_lock_io(busy, bit, TASK_UNINTERRUPTIBLE);
			WRITE_ONCE(*gen, *gen + 1);
		} else {
			WRITE_ONCE(*gen, *gen + 1);
			clear_and_wake_up_bit(bit, busy);
		}
	}
	/* a read that sees the parity this write is about to write sees the generation */
	smp_wmb();
	io->ecc = lock ? PCM_ECC_IO_LOCKED : PCM_ECC_IO_NONE;
}

/*
 * Map context: lock a write's rows as ecc_rows() does, but only if none
 * is held (no waiting): false, with none of them taken, otherwise.
 */
static bool ecc_rows_trylock(struct pcm_c *pc, struct pcm_io *io)
{
	unsigned long *busy = pc->ecc->row_busy;
	sector_t row;
	u64 nrows;
	u32 b0, n0, n1, i;

	io_rows(pc, io, &row, &nrows);
	row_bits(row, nrows, &b0, &n0, &n1);
	for (i = 0; i < n0 + n1; i++) {
		if (test_and_set_bit_lock(row_bit(i, b0, n1), busy)) {
			/* nothing was written under them: their generations stand */
			while (i--)
				clear_and_wake_up_bit(row_bit(i, b0, n1), busy);
			return false;
		}
	}
	for (i = 0; i < n0 + n1; i++) {
		u32 *gen = &pc->ecc->row_gen[row_bit(i, b0, n1)];

		WRITE_ONCE(*gen, *gen + 1);
	}
	/* as ecc_rows(): a read that sees this write's parity sees the generation */
	smp_wmb();
	return true;
}

/*
 * The write generations of @io's rows, summed (they only grow: the sum
 * moves when any of them does); U64_MAX while one is being written.
 */
static u64 ecc_gen(struct pcm_c *pc, struct pcm_io *io)
{
	u32 b0, n0, n1, i, g;
	sector_t row;
	u64 nrows, sum = 0;

	/* pairs with ecc_rows()'s: after the parity read, its generation */
	smp_rmb();
	io_rows(pc, io, &row, &nrows);
	row_bits(row, nrows, &b0, &n0, &n1);
	for (i = 0; i < n0 + n1; i++) {
		g = READ_ONCE(pc->ecc->row_gen[row_bit(i, b0, n1)]);
		if (g & 1)
			return U64_MAX;
		sum += g;
	}
	return sum;
}

/* Whether a write of @io's rows may have landed since it was mapped. */
static bool ecc_raced(struct pcm_c *pc, struct pcm_io *io)
{
	return io->gen == U64_MAX || ecc_gen(pc, io) != io->gen;
}

/* Encode @n sectors of the bio at @it that span pages, a sector at a time. */
static void ecc_encode_apart(struct pcm_ecc_ctx *c, struct bio *bio, struct bvec_iter *it,
			     u32 n, u8 *meta, u32 mb)
{
	u32 i;
	u8 *d;

	for (i = 0; i < n; i++) {
		d = bio_sector_map(bio, *it);
		/* straight from the bio's page; a sector across two, copied */
		if (d) {
			pcm_ecc_encode_sector(&c->codec, d, meta + i * mb);
			kunmap_local(d);
			bio_advance_iter_single(bio, it, PCM_ECC_SECTOR);
		} else {
			bio_sector_copy(bio, it, c->data, false);
			pcm_ecc_encode_sector(&c->codec, c->data, meta + i * mb);
		}
	}
}

/* Encode (or zero) the parity of one row's part of a write into @meta. */
static void ecc_encode_row(struct pcm_c *pc, struct bio *bio, struct bvec_iter *it,
			   const struct ecc_span *sp, bool zero, u8 *meta)
{
	u32 mb = pc->ecc->geom.meta_bytes, i;
	struct pcm_ecc_ctx *c;
	u8 *d;

	meta += sp->first * mb;
	if (zero) {
		for (i = 0; i < sp->n; i++)
			memset(meta + i * mb, 0, pcm_ecc_sector_parity(&pc->ecc->geom));
		return;
	}
	c = ctx_get(pc->ecc);
	pcm_ecc_simd_begin(&c->codec);	/* a row's sectors: no I/O, no sleep */
	d = bio_sectors_map(bio, *it, sp->n);
	if (d) {
		/* the row's part within one page (nearly always): one call */
		pcm_ecc_encode_sectors(&c->codec, d, sp->n, meta, mb);
		kunmap_local(d);
		bio_advance_iter(bio, it, sp->n << SECTOR_SHIFT);
	} else {
		ecc_encode_apart(c, bio, it, sp->n, meta, mb);
	}
	pcm_ecc_simd_end(&c->codec);
	ctx_put(pc->ecc);
}

/* One row's part of a write: its parity read (if kept), encoded, written. */
static int ecc_write_row(struct pcm_c *pc, struct bio *bio, struct bvec_iter *it,
			 const struct ecc_span *sp, bool zero, blk_opf_t fua, u8 *meta)
{
	const struct pcm_ecc_geom *g = &pc->ecc->geom;
	sector_t where = pcm_layout_row_meta(&pc->layout, sp->slot);
	u32 rs = 1U << pc->layout.row_shift;
	int r = 0;

	/* a whole row whose metadata fills whole sectors: nothing to keep */
	if (!sp->first && sp->n == rs && pcm_ecc_row_meta(g, rs << SECTOR_SHIFT) == meta_len(pc))
		memset(meta, 0, meta_len(pc));
	else
		r = pcm_io(pc, meta_bdev(pc), REQ_OP_READ | REQ_SYNC, where,
			   pc->layout.row_meta_sectors, meta);
	if (r)
		return r;
	ecc_encode_row(pc, bio, it, sp, zero, meta);
	return pcm_io(pc, meta_bdev(pc), REQ_OP_WRITE | REQ_SYNC | fua, where,
		      pc->layout.row_meta_sectors, meta);
}

static void ecc_write(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	bool zero = bio_op(bio) != REQ_OP_WRITE;
	blk_opf_t fua = bio->bi_opf & REQ_FUA;
	struct bvec_iter it = io->iter;
	u32 left = io->iter.bi_size >> SECTOR_SHIFT;
	sector_t s = io->iter.bi_sector;
	struct ecc_span sp;
	u8 *meta;
	int r;

	/*
	 * The one place where a write to the rows of @io is about to be
	 * issued: its rows are locked, neither parity nor data is written yet.
	 * WIB hook: the rows' bits are durable before their parity (dm-pcm-wib.c).
	 */
	/* the buffer before the rows, as ecc_read() takes them: no ABBA on the pool */
	meta = mempool_alloc(pc->ecc->meta_pool, GFP_NOIO);
	ecc_rows(pc, io, true);
	r = pcm_wib_mark(pc, s, left);
	while (left && !r) {
		span_of(pc, s, left, &sp);
		r = ecc_write_row(pc, bio, &it, &sp, zero, fua, meta);
		s += sp.n;
		left -= sp.n;
	}
	mempool_free(meta, pc->ecc->meta_pool);
	if (r) {
		/* nothing of it reached the data: fail it as it stands (end_io unlocks) */
		bio->bi_status = errno_to_blk_status(r);
		bio_endio(bio);
		return;
	}
	/*
	 * Its parity is written: the data must follow, whatever the queue's
	 * state.  REQ_NOWAIT was honoured when map queued it (no blocking in
	 * the submitter); EAGAIN now would leave new parity over old data.
	 */
	bio->bi_opf &= ~REQ_NOWAIT;
	dm_submit_bio_remap(bio, NULL);
}

/*
 * A sector being read: its data in the bio (@src, mapped; NULL when it
 * straddles two bvecs) and its parity (@p, in the request's metadata
 * buffer).  The error model changes a private copy (the context's data
 * and parity), made when it changes the first bit: a sector it leaves
 * alone is decoded where it lies, nothing copied.
 */
struct ecc_rd {
	struct pcm_ecc_ctx *c;
	const struct pcm_ecc_geom *g;
	u8 *src;
	const u8 *p;
	bool copied;		/* c->data and c->parity hold the sector */
};

/* The sector into the context's buffers, before the first bit changes. */
static void rd_copy(struct ecc_rd *rd)
{
	if (rd->copied)
		return;
	memcpy(rd->c->data, rd->src, PCM_ECC_SECTOR);
	memcpy(rd->c->parity, rd->p, pcm_ecc_sector_parity(rd->g));
	rd->copied = true;
}

/*
 * Where bit @n of a sector in ECC numbering lies (data bits, then each
 * codeword's m * t): bit *@bit of byte *@off of its data (true) or of
 * its parity (false).
 */
static bool bit_pos(const struct pcm_ecc_geom *g, u32 n, u32 *off, u32 *bit)
{
	u32 mt = g->m * g->t, b;

	if (n < 8 * PCM_ECC_SECTOR) {
		*off = n / 8;
		*bit = n % 8;
		return true;
	}
	n -= 8 * PCM_ECC_SECTOR;
	b = n % mt;
	*off = n / mt * g->parity_bytes + b / 8;
	*bit = b % 8;
	return false;
}

/* Bit @n of the sector as it stands (its copy once there is one). */
static u32 rd_bit(const struct ecc_rd *rd, u32 n)
{
	u32 off, b;
	const u8 *buf;

	if (bit_pos(rd->g, n, &off, &b))
		buf = rd->copied ? rd->c->data : rd->src;
	else
		buf = rd->copied ? rd->c->parity : rd->p;
	return (buf[off] >> b) & 1;
}

/* Flip bit @n of the sector, in its private copy. */
static void flip_bit(struct ecc_rd *rd, u32 n)
{
	u32 off, b;

	rd_copy(rd);
	if (bit_pos(rd->g, n, &off, &b))
		rd->c->data[off] ^= 1U << b;
	else
		rd->c->parity[off] ^= 1U << b;
}

static u32 sector_bits(const struct pcm_ecc_geom *g)
{
	return pcm_ecc_sector_bits(g);
}

/*
 * wear hook (dm-pcm-wear.c): a worn row's stuck-at cells read as their
 * value; returns how many bits that changed.
 */
static u32 stuck_cells(struct pcm_ecc_dev *e, struct ecc_rd *rd,
		       struct pcm_stuck_iter *ws)
{
	u32 pos, n = 0;
	u8 val;

	if (!ws->n)
		return 0;	/* nearly every sector */
	while (pcm_stuck_next(ws, &pos, &val)) {
		if (rd_bit(rd, pos) != val) {
			flip_bit(rd, pos);
			n++;
		}
	}
	if (n)
		atomic64_add(n, &e->figs[PCM_ECC_RAW_BITS]);
	return n;
}

/*
 * @nbits distinct positions of the sector, drawn from its inject stream:
 * physical sector @psector, read number @nread.
 */
static u32 inject_flips(struct pcm_c *pc, struct ecc_rd *rd, u64 psector, u32 nread,
			u32 nbits)
{
	struct pcm_ecc_dev *e = pc->ecc;
	u32 total = sector_bits(&e->geom), i, pos;
	struct pcm_rng rng;

	pcm_err_stream(&rng, pc->cfg.val[PCM_SEED], PCM_ERR_INJECT, psector, nread);
	nbits = min(nbits, total);
	bitmap_zero(rd->c->flipped, total);
	for (i = 0; i < nbits; i++) {
		do {
			pos = pcm_rng_next(&rng) % total;
		} while (test_bit(pos, rd->c->flipped));
		__set_bit(pos, rd->c->flipped);
		flip_bit(rd, pos);
	}
	atomic64_add(nbits, &e->figs[PCM_ECC_INJECTED_BITS]);
	return nbits;
}

/*
 * The raw bit errors of read @nread of physical sector @psector, by
 * geometric skipping (pcm_err_next()).
 */
static u32 rber_flips(struct pcm_c *pc, struct ecc_rd *rd, const struct pcm_err_rate *rate,
		      u64 psector, u32 nread)
{
	struct pcm_ecc_dev *e = pc->ecc;
	struct pcm_err_iter ei;
	u32 flips = 0, pos;

	pcm_err_begin(&ei, rate, pc->cfg.val[PCM_SEED], psector, nread, sector_bits(&e->geom));
	for (; pcm_err_next(&ei, &pos); flips++)
		flip_bit(rd, pos);
	if (flips)
		atomic64_add(flips, &e->figs[PCM_ECC_RAW_BITS]);
	return flips;
}

/*
 * One sector of the bio at @it (its parity at @p), as read: apply the
 * errors, decode every codeword, classify against what the device held,
 * put the result in the bio.  The bio keeps what the device returned
 * until the end: a sector the model left alone is checked where it lies
 * (its parity computed from the bio's page and compared), and one it
 * changed, or whose parity differs, is decoded in a private copy, the
 * bio's own data being the truth.  A sector that straddles two bvecs is
 * copied from the start.  Its errors are those of read @nread of physical
 * sector @psector; what is injected in it is taken only if @took_inj
 * (then it runs outside any FPU section).  Returns false when it is
 * uncorrectable (zeroed).
 */
static bool ecc_read_sector(struct pcm_c *pc, struct pcm_ecc_ctx *c, struct bio *bio,
			    struct bvec_iter *it, sector_t lsector, const u8 *p,
			    const struct pcm_err_rate *rate, u64 psector, u32 nread,
			    struct pcm_stuck_iter *ws, bool took_inj)
{
	struct pcm_ecc_dev *e = pc->ecc;
	const struct pcm_ecc_geom *g = &e->geom;
	struct ecc_rd rd = { .c = c, .g = g, .p = p };
	struct bvec_iter at = *it, again;
	unsigned int failed;
	u32 inj, flips = 0;
	bool good = true;
	const u8 *truth;
	int ret, outcome;

	rd.src = bio_sector_map(bio, at);
	if (rd.src) {
		bio_advance_iter_single(bio, it, PCM_ECC_SECTOR);
	} else {
		bio_sector_copy(bio, it, c->data, false);
		memcpy(c->parity, p, pcm_ecc_sector_parity(g));
		rd.copied = true;
	}
	inj = took_inj ? pcm_inject_take(pc, lsector) : 0;
	if (inj)
		flips += inject_flips(pc, &rd, psector, nread, inj);
	if (rate->mant)
		flips += rber_flips(pc, &rd, rate, psector, nread);
	flips += stuck_cells(e, &rd, ws);	/* wear hook */
	if (!rd.copied) {
		/* no error drawn: the parity of the bio's data, as decoding computes it */
		pcm_ecc_encode_sector(&c->codec, rd.src, c->parity);
		if (pcm_ecc_same(c->parity, p, pcm_ecc_sector_parity(g)))
			goto out;
		rd_copy(&rd);
	}
	ret = pcm_ecc_decode_sector(&c->codec, c->data, c->parity, &failed);
	if (!ret && !flips)
		goto out;
	if (rd.src) {
		truth = rd.src;
	} else {
		again = at;
		bio_sector_copy(bio, &again, c->truth, false);
		truth = c->truth;
	}
	outcome = pcm_ecc_classify(ret, c->data, truth, PCM_ECC_SECTOR);
	if (outcome != PCM_ECC_CLEAN)
		trace_pcm_ecc(pc->devt, lsector, psector, outcome, max(ret, 0), flips);
	switch (outcome) {
	case PCM_ECC_CLEAN:
		break;
	case PCM_ECC_CORRECTED:
		atomic64_add(ret, &e->figs[PCM_ECC_CORRECTED_BITS]);
		atomic64_inc(&e->figs[PCM_ECC_CORRECTED_SECTORS]);
		break;
	case PCM_ECC_SILENT:
		/* what such a device returns: the miscorrected data */
		atomic64_inc(&e->figs[PCM_ECC_SILENT_SECTORS]);
		break;
	case PCM_ECC_UNCORRECTABLE:
		atomic64_inc(&e->figs[PCM_ECC_UNCORRECTABLE_SECTORS]);
		memset(c->data, 0, PCM_ECC_SECTOR);
		good = false;
		break;
	}
	if (rd.src)
		memcpy(rd.src, c->data, PCM_ECC_SECTOR);
	else
		bio_sector_copy(bio, &at, c->data, true);
out:
	if (rd.src)
		kunmap_local(rd.src);
	return good;
}

/*
 * The one place where a read of a physical row is decoded: the raw bit
 * error rate its sectors see (the live rber).
 */
static void ecc_row_rate(struct pcm_c *pc, const struct ecc_span *sp,
			 struct pcm_err_rate *rate)
{
	u64 rber = READ_ONCE(pc->live.val[PCM_RBER]);

	/* wear hook: a worn row's rate is raised along the wear curve */
	pcm_err_rate_init(rate, pc->wear ? pcm_wear_read_rber(pc, sp->slot, rber) : rber);
}

/*
 * Whether one row's part of a read is clean as a whole: no error to
 * apply (nothing injected, no rber, no stuck cell: the error model draws
 * nothing then) and every sector's parity as stored.  The common read,
 * checked in one call where the part lies within one page; otherwise,
 * or if a sector differs, ecc_read_sector() takes each in turn.
 */
static bool ecc_row_clean(struct pcm_ecc_dev *e, struct bio *bio, struct bvec_iter it,
			  const struct ecc_span *sp, const u8 *meta,
			  const struct pcm_err_rate *rate, const struct pcm_stuck_iter *ws,
			  struct pcm_ecc_ctx *c)
{
	u32 mb = e->geom.meta_bytes;
	bool clean;
	u8 *d;

	if (rate->mant || ws->x)
		return false;
	d = bio_sectors_map(bio, it, sp->n);
	if (!d)
		return false;
	clean = pcm_ecc_check_sectors(&c->codec, d, sp->n, meta + sp->first * mb, mb);
	kunmap_local(d);
	return clean;
}

/*
 * Decode one row's part of a read, its parity in @meta.  A read that may
 * draw errors (rber above 0, or something injected) takes the row's next
 * read number first.
 */
static bool ecc_decode_row(struct pcm_c *pc, struct bio *bio, struct bvec_iter *it,
			   const struct ecc_span *sp, sector_t lsector, const u8 *meta)
{
	u64 psector = sp->slot - pc->layout.offset + sp->first;
	struct pcm_ecc_dev *e = pc->ecc;
	struct pcm_stuck_iter ws;
	struct pcm_err_rate rate;
	bool good = true, inj = pcm_injected(pc);
	struct pcm_ecc_ctx *c;
	u32 i, nread = 0;

	ecc_row_rate(pc, sp, &rate);
	if (rate.mant || inj)
		nread = pcm_row_read(pc, sp->slot);
	/* wear hook: the row's stuck cells, then this sector's of them */
	pcm_wear_stuck_begin(pc, sp->slot, sector_bits(&e->geom), &ws);
	c = ctx_get(e);
	/*
	 * A row with errors injected takes them sector by sector under the
	 * injections' spinlock, and may kfree a used-up one: both may sleep
	 * on PREEMPT_RT, where kernel_fpu_begin() disables preemption.  So
	 * such a row is decoded outside any FPU section, by the tables (the
	 * same parity as clmul's: pcm_ecc_use_clmul()), with BHs off and
	 * the context's local lock only, which sleep on RT too.  Only reads
	 * after an "inject" pay for it.
	 */
	if (!inj)
		pcm_ecc_simd_begin(&c->codec);	/* a row's sectors: no I/O, no sleep */
	if (!inj && ecc_row_clean(e, bio, *it, sp, meta, &rate, &ws, c)) {
		bio_advance_iter(bio, it, sp->n << SECTOR_SHIFT);
		i = sp->n;	/* nothing to decode */
	} else {
		i = 0;
	}
	for (; i < sp->n; i++) {
		pcm_stuck_sector(&ws, sp->first + i);
		good &= ecc_read_sector(pc, c, bio, it, lsector + i,
					meta + (sp->first + i) * e->geom.meta_bytes,
					&rate, psector + i, nread, &ws, inj);
	}
	if (!inj)
		pcm_ecc_simd_end(&c->codec);
	ctx_put(e);
	return good;
}

/*
 * A read that raced a write, its rows now locked: the data of one row's
 * part (@sp) read again into the bio at @it (not advanced), in pieces of
 * reread_sectors, which start and end on logical blocks of the data
 * device (a device with 4 KiB blocks fails a 512-byte read: 6.12 ends it
 * with an I/O error).  The buffer comes from a mempool, taken after the
 * parity buffer and the rows and held only for this I/O: under memory
 * pressure the read waits for one, it does not fail (with -ENOMEM, as a
 * kmalloc did).
 */
static int ecc_reread(struct pcm_c *pc, struct bio *bio, struct bvec_iter it,
		      const struct ecc_span *sp)
{
	u32 blk = pc->layout.block_sectors, piece = pc->ecc->reread_sectors;
	sector_t s = sp->s, end = sp->s + sp->n, from, to;
	u8 *buf = mempool_alloc(pc->ecc->reread_pool, GFP_NOIO);
	int r = 0;

	while (s < end && !r) {
		/* a row's part is whole blocks; rounded all the same */
		from = round_down(s, blk);
		to = min_t(sector_t, round_up(end, blk), from + piece);
		r = pcm_io(pc, pc->dev->bdev, REQ_OP_READ | REQ_SYNC, from, to - from, buf);
		for (; !r && s < min(end, to); s++)
			bio_sector_copy(bio, &it, buf + ((s - from) << SECTOR_SHIFT), true);
	}
	mempool_free(buf, pc->ecc->reread_pool);
	return r;
}

/* One row's parity into @meta. */
static int ecc_read_meta(struct pcm_c *pc, const struct ecc_span *sp, u8 *meta)
{
	return pcm_io(pc, meta_bdev(pc), REQ_OP_READ | REQ_SYNC,
		      pcm_layout_row_meta(&pc->layout, sp->slot),
		      pc->layout.row_meta_sectors, meta);
}

static void ecc_read(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	struct pcm_ecc_dev *e = pc->ecc;
	struct bvec_iter it = io->iter;
	u32 left = io->iter.bi_size >> SECTOR_SHIFT;
	sector_t s = io->iter.bi_sector, lsector = io->lsector;
	bool bad = false, locked = false;
	struct ecc_span sp;
	u8 *meta;
	int r = 0;

	meta = mempool_alloc(e->meta_pool, GFP_NOIO);
	while (left && !r) {
		span_of(pc, s, left, &sp);
		r = ecc_read_meta(pc, &sp, meta);
		if (!r && !locked && ecc_raced(pc, io)) {
			/* a write of its rows overlapped it: this row on, again */
			ecc_rows(pc, io, true);
			locked = true;
			r = ecc_read_meta(pc, &sp, meta);
		}
		if (!r && locked)
			r = ecc_reread(pc, bio, it, &sp);
		if (!r && unlikely(pc->read_only) && pcm_wib_torn(pc, sp.slot)) {
			/* as the resync a writable load does: parity from the data */
			struct bvec_iter at = it;

			ecc_encode_row(pc, bio, &at, &sp, false, meta);
		}
		if (!r && !ecc_decode_row(pc, bio, &it, &sp, lsector, meta))
			bad = true;
		s += sp.n;
		lsector += sp.n;
		left -= sp.n;
	}
	mempool_free(meta, e->meta_pool);
	if (locked)
		ecc_rows(pc, io, false);
	/* end_io's next pass drops its count: a move may reuse the rows then */
	io->ecc = PCM_ECC_IO_NONE;
	if (r)
		bio->bi_status = errno_to_blk_status(r);
	else if (bad)
		bio->bi_status = BLK_STS_MEDIUM;
	bio_endio(bio);
}

/*
 * Inline reads (not ecc_workqueue): the parity of a read's rows is read
 * beside its data, issued from .map, into a buffer of its own; the
 * second of the two completions decodes, where it runs in task or
 * softirq context.  A hard-IRQ completion (NVMe's) decodes on a BH
 * workqueue (softirq context; the worker before 6.9); a read a write of
 * its rows raced (ecc_raced(): the worker's locked re-read), and one
 * whose buffer or bio could not be had without waiting go through the
 * worker.  Decoding is the worker's, row for row (ecc_decode_row()), so
 * the errors, counts and data are the same on either path.
 */
#define PCM_ECC_PAIR_MAX	(256 << 10)	/* parity of a request coded inline, at most */

static void ecc_pair_free(struct pcm_io *io)
{
	kfree(io->meta);
	io->meta = NULL;
	io->ecc = PCM_ECC_IO_NONE;
}

/* Decode every row of a read whose parity is in io->meta. */
static blk_status_t ecc_pair_decode(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	u32 left = io->iter.bi_size >> SECTOR_SHIFT;
	sector_t s = io->iter.bi_sector, lsector = io->lsector;
	struct bvec_iter it = io->iter;
	const u8 *meta = io->meta;
	struct ecc_span sp;
	bool bad = false;

	while (left) {
		span_of(pc, s, left, &sp);
		if (!ecc_decode_row(pc, bio, &it, &sp, lsector, meta))
			bad = true;
		meta += meta_len(pc);
		s += sp.n;
		lsector += sp.n;
		left -= sp.n;
	}
	return bad ? BLK_STS_MEDIUM : BLK_STS_OK;
}

static void ecc_work(struct work_struct *work);

/*
 * Both reads of an inline read are in: decode here (*@error set, io->ecc
 * NONE, DM_ENDIO_DONE), or hand the bio on (DM_ENDIO_INCOMPLETE: it is
 * completed again).  In hard-IRQ context (NVMe), a BH workqueue decodes
 * in softirq context, as this function does for a softirq completion,
 * without a kworker's wake-up (the ECC worker before 6.9); raced by a
 * write, the worker reads the parity again, as it does for every read
 * with ecc_workqueue.
 */
static int ecc_pair_done(struct pcm_c *pc, struct bio *bio, struct pcm_io *io,
			 blk_status_t *error)
{
	struct workqueue_struct *wq = pc->ecc->wq;

	if (!*error)
		*error = io->meta_status;
	if (io->ecc == PCM_ECC_IO_WPAIR) {
		/* data and parity written (or failed): the rows may be written again */
		kfree(io->meta);
		io->meta = NULL;
		ecc_rows(pc, io, false);
		return DM_ENDIO_DONE;
	}
	if (*error) {
		ecc_pair_free(io);
		return DM_ENDIO_DONE;
	}
	if (unlikely(ecc_raced(pc, io))) {
		ecc_pair_free(io);
		io->ecc = PCM_ECC_IO_READ;
	} else if (likely(!in_hardirq() && !irqs_disabled())) {
		*error = ecc_pair_decode(pc, bio, io);
		ecc_pair_free(io);
		return DM_ENDIO_DONE;
	}
	/*
	 * Two INIT_WORK sites, two lockdep classes: a work item that runs in
	 * softirq context (system_bh_wq) and one that runs in a kworker must
	 * not share one, or lockdep sees one "lock" taken with softirqs on
	 * and in softirq context (an inconsistent lock state, seen on the
	 * debug kernel with 33-ecc-concurrency then 38-error-paths).
	 */
	if (io->ecc == PCM_ECC_IO_PAIR) {	/* not raced: a hard-IRQ completion */
		INIT_WORK(&io->work, ecc_work);
		queue_work(pcm_bh_wq(wq), &io->work);
	} else {
		INIT_WORK(&io->work, ecc_work);
		queue_work(wq, &io->work);
	}
	return DM_ENDIO_INCOMPLETE;
}

/* The parity I/O of an inline read or write is over (any context). */
static void ecc_meta_end_io(struct bio *mbio)
{
	struct pcm_io *io = mbio->bi_private;
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(struct pcm_io));

	io->meta_status = mbio->bi_status;
	bio_put(mbio);
	/* a full barrier: the other completion sees the parity and its status */
	if (!atomic_dec_and_test(&io->pending))
		return;
	/* the data completed first: its end_io left the bio to this one */
	if (ecc_pair_done(io->pc, bio, io, &bio->bi_status) == DM_ENDIO_DONE)
		bio_endio(bio);
}

/*
 * Send @mbio, the parity I/O of @io's rows (@len bytes at @meta), beside
 * its data: each completion counts down @io->pending, and the second one
 * decodes (a read) or ends the bio (a write: both are on the media).
 */
static void meta_pair_submit(struct pcm_c *pc, struct pcm_io *io, struct bio *mbio,
			     u8 *meta, u32 len, enum pcm_ecc_io kind)
{
	struct ecc_span sp;
	u32 off, n;

	span_of(pc, io->iter.bi_sector, 1, &sp);
	mbio->bi_iter.bi_sector = pcm_layout_row_meta(&pc->layout, sp.slot);
	for (off = 0; off < len; off += n) {
		n = min_t(u32, len - off, PAGE_SIZE - offset_in_page(meta + off));
		__bio_add_page(mbio, virt_to_page(meta + off), n, offset_in_page(meta + off));
	}
	mbio->bi_end_io = ecc_meta_end_io;
	mbio->bi_private = io;
	io->meta = meta;
	io->meta_status = BLK_STS_OK;
	atomic_set(&io->pending, 2);
	io->ecc = kind;
	submit_bio_noacct(mbio);
}

/*
 * Map context: issue the parity read of a read's rows (contiguous on the
 * metadata device, as the rows are), without waiting for anything.
 * Returns false when it cannot: the read takes the worker's path.
 */
static bool ecc_pair_start(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	struct pcm_ecc_dev *e = pc->ecc;
	struct bio *mbio;
	sector_t row;
	u32 len;
	u64 nrows;
	u8 *meta;

	if (pc->ecc_wq || unlikely(pc->read_only))
		return false;
	/* a meta_device that cannot honour NOWAIT: the worker reads its parity */
	if ((bio->bi_opf & REQ_NOWAIT) && !bdev_nowait(meta_bdev(pc)))
		return false;
	io_rows(pc, io, &row, &nrows);
	if (nrows * meta_len(pc) > PCM_ECC_PAIR_MAX)
		return false;
	len = nrows * meta_len(pc);
	/* kmalloc: contiguous, aligned to its power-of-two size (>= 512) */
	meta = kmalloc(len, GFP_NOWAIT | __GFP_NOWARN);
	if (!meta)
		return false;
	mbio = bio_alloc_bioset(meta_bdev(pc), DIV_ROUND_UP(offset_in_page(meta) + len, PAGE_SIZE),
				REQ_OP_READ | REQ_SYNC | (bio->bi_opf & REQ_NOWAIT),
				GFP_NOWAIT | __GFP_NOWARN, &e->bs);
	if (!mbio) {
		kfree(meta);
		return false;
	}
	/* on current->bio_list, ahead of the data: both go when .map returns */
	meta_pair_submit(pc, io, mbio, meta, len, PCM_ECC_IO_PAIR);
	return true;
}

/*
 * Map context: a write of whole rows whose write-intent bits are set and
 * durable, and whose rows nobody holds, is encoded here (the CPU's coder,
 * preemption and BHs off only while coding) and its parity written beside
 * its data, FUA if the write is: a power cut between the two leaves a
 * row its bit covers, which the next load resyncs.  The rows stay locked
 * until both are written (the second completion), as the worker's do.
 * Partial rows (their parity is read first), bits not yet durable, rows
 * held, REQ_NOWAIT writes (EAGAIN must leave both unchanged, so only the
 * worker issues them, without NOWAIT) and ecc_workqueue take the worker's
 * path.  Returns false then.
 */
static bool ecc_wpair_start(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	const struct pcm_ecc_geom *g = &pc->ecc->geom;
	u32 rs = 1U << pc->layout.row_shift, left, len, i;
	sector_t s = io->iter.bi_sector, row;
	struct bvec_iter it = io->iter;
	struct ecc_span sp;
	struct bio *mbio;
	u64 nrows;
	u8 *meta;

	left = io->iter.bi_size >> SECTOR_SHIFT;
	if (pc->ecc_wq || bio_op(bio) != REQ_OP_WRITE || (bio->bi_opf & REQ_NOWAIT) ||
	    ((s - pc->layout.offset) & (rs - 1)) || (left & (rs - 1)) ||
	    pcm_ecc_row_meta(g, rs << SECTOR_SHIFT) != meta_len(pc))
		return false;
	io_rows(pc, io, &row, &nrows);
	if (nrows * meta_len(pc) > PCM_ECC_PAIR_MAX)
		return false;
	len = nrows * meta_len(pc);
	/* WIB hook: the bits before the parity; a bit not yet durable, the worker */
	if (!pcm_wib_marked(pc, s, left))
		return false;
	meta = kzalloc(len, GFP_NOWAIT | __GFP_NOWARN);
	if (!meta)
		return false;
	mbio = bio_alloc_bioset(meta_bdev(pc), DIV_ROUND_UP(offset_in_page(meta) + len, PAGE_SIZE),
				REQ_OP_WRITE | REQ_SYNC | (bio->bi_opf & REQ_FUA),
				GFP_NOWAIT | __GFP_NOWARN, &pc->ecc->bs);
	if (!mbio) {
		kfree(meta);
		return false;
	}
	if (!ecc_rows_trylock(pc, io)) {
		bio_put(mbio);
		kfree(meta);
		return false;
	}
	for (i = 0; left; i++) {
		span_of(pc, s, left, &sp);
		ecc_encode_row(pc, bio, &it, &sp, false, meta + i * meta_len(pc));
		s += sp.n;
		left -= sp.n;
	}
	meta_pair_submit(pc, io, mbio, meta, len, PCM_ECC_IO_WPAIR);
	return true;
}

int pcm_ecc_pair_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io,
			blk_status_t *error)
{
	if (!atomic_dec_and_test(&io->pending))
		return DM_ENDIO_INCOMPLETE;
	return ecc_pair_done(pc, bio, io, error);
}

static void ecc_work(struct work_struct *work)
{
	struct pcm_io *io = container_of(work, struct pcm_io, work);
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(struct pcm_io));

	if (io->ecc == PCM_ECC_IO_WRITE) {
		ecc_write(io->pc, bio, io);
	} else if (io->ecc == PCM_ECC_IO_PAIR) {
		/* an inline read completed in hard-IRQ context: its parity is in */
		bio->bi_status = ecc_pair_decode(io->pc, bio, io);
		ecc_pair_free(io);
		bio_endio(bio);
	} else {
		ecc_read(io->pc, bio, io);
	}
}

int pcm_ecc_remapped(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	enum req_op op = bio_op(bio);

	if (!bio_sectors(bio))
		return DM_MAPIO_REMAPPED;
	io->iter = bio->bi_iter;
	io->pc = pc;
	if (op == REQ_OP_READ) {
		/* before its data is read: a write from now on moves it */
		io->gen = ecc_gen(pc, io);
		if (!ecc_pair_start(pc, bio, io))
			io->ecc = PCM_ECC_IO_READ;
		return DM_MAPIO_REMAPPED;
	}
	if (op != REQ_OP_WRITE && op != REQ_OP_WRITE_ZEROES)
		return DM_MAPIO_REMAPPED;
	if (ecc_wpair_start(pc, bio, io))
		return DM_MAPIO_REMAPPED;
	io->ecc = PCM_ECC_IO_WRITE;
	INIT_WORK(&io->work, ecc_work);
	queue_work(pc->ecc->wq, &io->work);
	return DM_MAPIO_SUBMITTED;
}

void pcm_ecc_write_end_io(struct pcm_c *pc, struct pcm_io *io)
{
	ecc_rows(pc, io, false);
}

int pcm_ecc_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	INIT_WORK(&io->work, ecc_work);
	queue_work(pc->ecc->wq, &io->work);
	return DM_ENDIO_INCOMPLETE;
}

/* ecc:none: the raw bits rber flipped, and the sectors they reached the reader in */
static s64 ecc_none_fig(struct pcm_c *pc, unsigned int i)
{
	if (i == PCM_ECC_RAW_BITS)
		return atomic64_read(&pc->raw_bits);
	if (i == PCM_ECC_SILENT_SECTORS)
		return atomic64_read(&pc->raw_silent);
	return 0;
}

void pcm_ecc_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		    unsigned int *szp)
{
	unsigned int sz = *szp, i;

	for (i = 0; i < PCM_ECC_NR_FIGS; i++)
		DMEMIT(" %s:%lld", pcm_ecc_fig_names[i],
		       pc->ecc ? atomic64_read(&pc->ecc->figs[i]) : ecc_none_fig(pc, i));
	*szp = sz;
}

void pcm_ecc_reset(struct pcm_c *pc)
{
	unsigned int i;

	for (i = 0; pc->ecc && i < PCM_ECC_NR_FIGS; i++)
		atomic64_set(&pc->ecc->figs[i], 0);
	atomic64_set(&pc->raw_bits, 0);
	atomic64_set(&pc->raw_silent, 0);
}

static void *meta_pool_alloc(gfp_t gfp, void *len)
{
	return kvmalloc((size_t)len, gfp);
}

static void meta_pool_free(void *p, void *len)
{
	kvfree(p);
}

#define ECC_RACE_SECTORS	8	/* a 4 KiB row */
#define ECC_RACE_ROUNDS		8

/* The fastest of ECC_RACE_ROUNDS encodings of @row by @c as the data path codes it, in ns. */
static u64 ecc_time_row(struct pcm_ecc *c, const u8 *row, u8 *meta, u32 mb)
{
	u64 best = U64_MAX, t;
	int i;

	for (i = 0; i < ECC_RACE_ROUNDS; i++) {
		t = ktime_get_ns();
		pcm_ecc_simd_begin(c);
		pcm_ecc_encode_sectors(c, row, ECC_RACE_SECTORS, meta, mb);
		pcm_ecc_simd_end(c);
		best = min(best, ktime_get_ns() - t);
	}
	return best;
}

/*
 * Where clmul is set up, keep it only if it codes a row faster than the
 * tables on this CPU, timed here as lib/raid6 and the xor code pick their
 * routines: PCLMULQDQ takes a few cycles on most x86-64 CPUs, but is
 * slow on some and a helper call under QEMU's TCG, where the tables code
 * a row 2-3 times faster.  Both give the same parity (checked at init).
 * The log names the engine once per engine, with the times.
 */
static void ecc_pick_engine(struct pcm_ecc *c, u32 mb)
{
	static unsigned long said;	/* bit 0: clmul, 1: tables, 2: lib/bch */
	u64 tclmul = 0, ttab = 0;
	bool raced;
	u8 *row, *meta;

	row = kmalloc(ECC_RACE_SECTORS * (PCM_ECC_SECTOR + mb), GFP_KERNEL);
	raced = row && pcm_ecc_clmul_ok(c);
	if (raced) {
		meta = row + ECC_RACE_SECTORS * PCM_ECC_SECTOR;
		get_random_bytes(row, ECC_RACE_SECTORS * PCM_ECC_SECTOR);
		tclmul = ecc_time_row(c, row, meta, mb);
		pcm_ecc_use_clmul(c, false);
		ttab = ecc_time_row(c, row, meta, mb);
		pcm_ecc_use_clmul(c, tclmul <= ttab);
	}
	kfree(row);
	if (test_and_set_bit(pcm_ecc_clmul(c) ? 0 : pcm_ecc_fast(c) ? 1 : 2, &said))
		return;
	if (raced)
		DMINFO("ecc:bch parity engine: %s (a 4 KiB row: clmul %llu ns, tables %llu ns)",
		       pcm_ecc_engine(c), tclmul, ttab);
	else
		DMINFO("ecc:bch parity engine: %s", pcm_ecc_engine(c));
}

int pcm_ecc_dev_init(struct pcm_c *pc)
{
	struct pcm_ecc *first = NULL;
	struct pcm_ecc_dev *e;
	int cpu;

	if (!pc->ecc_on)
		return 0;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	pc->ecc = e;
	e->geom = pc->ecc_geom;
	e->row_busy = bitmap_zalloc(PCM_ECC_ROW_LOCKS, GFP_KERNEL);
	e->row_gen = kcalloc(PCM_ECC_ROW_LOCKS, sizeof(*e->row_gen), GFP_KERNEL);
	e->meta_pool = mempool_create(PCM_ECC_META_POOL, meta_pool_alloc, meta_pool_free,
				      (void *)(size_t)meta_len(pc));
	/* whole blocks: both are powers of two, the larger a multiple of the other */
	e->reread_sectors = max_t(u32, PCM_ECC_REREAD_SECTORS, pc->layout.block_sectors);
	e->reread_pool = mempool_create_kmalloc_pool(PCM_ECC_REREAD_POOL,
						     e->reread_sectors << SECTOR_SHIFT);
	e->ctx = alloc_percpu(struct pcm_ecc_ctx);
	if (!e->row_busy || !e->row_gen || !e->meta_pool || !e->reread_pool || !e->ctx)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		struct pcm_ecc_ctx *c = per_cpu_ptr(e->ctx, cpu);

		local_lock_init(&c->lock);
		/* one set of parity tables (16 KiB a word), shared read-only */
		if (first ? pcm_ecc_init_shared(&c->codec, first) :
			    pcm_ecc_init(&c->codec, &pc->ecc_geom))
			return -ENOMEM;
		first = first ?: &c->codec;
	}
	ecc_pick_engine(first, e->geom.meta_bytes);
	if (bioset_init(&e->bs, PCM_ECC_META_POOL, 0, BIOSET_NEED_BVECS))
		return -ENOMEM;
	e->wq = alloc_workqueue("dm-" DM_MSG_PREFIX "-ecc", WQ_MEM_RECLAIM, 0);
	return e->wq ? 0 : -ENOMEM;
}

void pcm_ecc_dev_exit(struct pcm_c *pc)
{
	struct pcm_ecc_dev *e = pc->ecc;
	int cpu;

	if (!e)
		return;
	if (e->wq)
		destroy_workqueue(e->wq);
	if (e->ctx) {
		/*
		 * pcm_ecc_exit() takes a codec never set up (zeroed); the last
		 * to go of those sharing the parity tables frees them
		 */
		for_each_possible_cpu(cpu)
			pcm_ecc_exit(&per_cpu_ptr(e->ctx, cpu)->codec);
		free_percpu(e->ctx);
	}
	mempool_destroy(e->meta_pool);
	mempool_destroy(e->reread_pool);
	bioset_exit(&e->bs);
	bitmap_free(e->row_busy);
	kfree(e->row_gen);
	kfree(e);
	pc->ecc = NULL;
}
