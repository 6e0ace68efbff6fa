// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm ECC data path (ecc:bch): every 512-byte sector has parity in its
 * physical row's metadata (pcm-layout.h), encoded when it is written and
 * checked when it is read, with the bit errors of the model (inject,
 * rber) applied to what the backing device returned before decoding.
 *
 * Correctness first: one ordered workqueue does all the coding, so its
 * one lib/bch instance and buffers need no lock, and parity updates of
 * a row (read-modify-write of its metadata sectors) never interleave.
 *
 *  - A write is mapped as any other (it counts in its epoch, may park),
 *    then queued instead of issued: the worker encodes its sectors,
 *    writes their parity (FUA if the bio is FUA), then issues the data.
 *    Its count drops when the data is written, so a gap move that waits
 *    for it copies data and parity both.  Write-zeroes zero the parity
 *    (zero data and zero parity are a codeword).
 *  - A read is issued as any other; its completion is held
 *    (DM_ENDIO_INCOMPLETE): the worker reads the parity of its rows,
 *    flips the model's bits, decodes, puts the corrected data in the bio
 *    (or fails it with BLK_STS_MEDIUM, zeroing what could not be
 *    corrected) and completes it again.  Its count drops after the parity
 *    read: until then no move may reuse the row.  The timing model's hold
 *    comes after (pcm_end_io()): decoding is part of the modeled latency.
 *
 * Two writes of one sector in flight at once may reach the device in one
 * order and their parity in the other (the block layer promises neither
 * order): reads of that sector then fail until it is written again.
 */
#include <linux/bio.h>
#include <linux/bvec.h>
#include <linux/slab.h>

#include "dm-pcm.h"
#include "pcm-ecc.h"
#include "pcm-errmodel.h"
#include "pcm-rand.h"

/* An error "inject" left for the next read (or every read) of a sector. */
struct pcm_inject {
	struct list_head list;
	sector_t sector;
	u32 nbits;
	bool sticky;
};

#define PCM_SECTOR_BITS_MAX	(8 * (PCM_ECC_SECTOR + PCM_ECC_MAX_META))

struct pcm_ecc_dev {
	struct workqueue_struct *wq;	/* ordered: owns everything below */
	struct pcm_ecc codec;
	u8 *meta;			/* one row's metadata */
	u8 data[PCM_ECC_SECTOR], truth[PCM_ECC_SECTOR];
	u8 parity[PCM_ECC_MAX_META];
	DECLARE_BITMAP(flipped, PCM_SECTOR_BITS_MAX);	/* inject's draws */
	u64 reads;			/* the error model's stream per read: n */

	u8 *move_meta;			/* the mover's: a row's metadata */

	spinlock_t inject_lock;		/* @injected, @nr_injected */
	struct list_head injected;
	unsigned int nr_injected;

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

static struct block_device *meta_bdev(struct pcm_c *pc)
{
	return (pc->meta_dev ?: pc->dev)->bdev;
}

static unsigned int meta_len(struct pcm_c *pc)
{
	return pc->layout.row_meta_sectors << SECTOR_SHIFT;
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

/* Encode (or zero) the parity of one row's part of a write; write it. */
static int ecc_write_row(struct pcm_c *pc, struct bio *bio, struct bvec_iter *it,
			 const struct ecc_span *sp, bool zero, blk_opf_t fua)
{
	struct pcm_ecc_dev *e = pc->ecc;
	const struct pcm_ecc_geom *g = &e->codec.geom;
	sector_t where = pcm_layout_row_meta(&pc->layout, sp->slot);
	u32 rs = 1U << pc->layout.row_shift, i;
	int r = 0;

	/* a whole row whose metadata fills whole sectors: nothing to keep */
	if (!sp->first && sp->n == rs && pcm_ecc_row_meta(g, rs << SECTOR_SHIFT) == meta_len(pc))
		memset(e->meta, 0, meta_len(pc));
	else
		r = pcm_io(pc, meta_bdev(pc), REQ_OP_READ | REQ_SYNC, where,
			   pc->layout.row_meta_sectors, e->meta);
	if (r)
		return r;
	for (i = 0; i < sp->n; i++) {
		u8 *p = e->meta + (sp->first + i) * g->meta_bytes;

		if (zero) {
			memset(p, 0, pcm_ecc_sector_parity(g));
			continue;
		}
		bio_sector_copy(bio, it, e->data, false);
		pcm_ecc_encode_sector(&e->codec, e->data, p);
	}
	return pcm_io(pc, meta_bdev(pc), REQ_OP_WRITE | REQ_SYNC | fua, where,
		      pc->layout.row_meta_sectors, e->meta);
}

static void ecc_write(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	bool zero = bio_op(bio) != REQ_OP_WRITE;
	blk_opf_t fua = bio->bi_opf & REQ_FUA;
	struct bvec_iter it = io->iter;
	u32 left = io->iter.bi_size >> SECTOR_SHIFT;
	sector_t s = io->iter.bi_sector;
	struct ecc_span sp;
	int r = 0;

	while (left && !r) {
		span_of(pc, s, left, &sp);
		r = ecc_write_row(pc, bio, &it, &sp, zero, fua);
		s += sp.n;
		left -= sp.n;
	}
	if (r) {
		/* nothing of it reached the data: fail it as it stands */
		pcm_io_over(pc, io);
		bio->bi_status = errno_to_blk_status(r);
		bio_endio(bio);
		return;
	}
	dm_submit_bio_remap(bio, NULL);
}

/* Flip bit @n of a sector in ECC numbering: data bits, then each codeword's m * t. */
static void flip_bit(const struct pcm_ecc_geom *g, u8 *data, u8 *parity, u32 n)
{
	u32 mt = g->m * g->t, cw, b;

	if (n < 8 * PCM_ECC_SECTOR) {
		data[n / 8] ^= 1U << (n % 8);
		return;
	}
	n -= 8 * PCM_ECC_SECTOR;
	cw = n / mt;
	b = n % mt;
	parity[cw * g->parity_bytes + b / 8] ^= 1U << (b % 8);
}

static u32 sector_bits(const struct pcm_ecc_geom *g)
{
	return 8 * PCM_ECC_SECTOR + g->codewords * g->m * g->t;
}

/* wear hook (dm-pcm-wear.c): a worn row's stuck-at cells read as their value */
static void stuck_cells(struct pcm_ecc_dev *e, struct pcm_wear_stuck *ws)
{
	const struct pcm_ecc_geom *g = &e->codec.geom;
	u32 pos, mt = g->m * g->t, b;
	u8 val, *byte;

	while (pcm_wear_stuck_next(ws, &pos, &val)) {
		if (pos < 8 * PCM_ECC_SECTOR) {
			byte = &e->data[pos / 8];
			b = pos % 8;
		} else {
			pos -= 8 * PCM_ECC_SECTOR;
			b = pos % mt;
			byte = &e->parity[pos / mt * g->parity_bytes + b / 8];
			b %= 8;
		}
		if (((*byte >> b) & 1) != val) {
			*byte ^= 1U << b;
			atomic64_inc(&e->figs[PCM_ECC_RAW_BITS]);
		}
	}
}

/* Bits "inject" left for logical sector @sector; a one-shot is used up. */
static u32 injected_bits(struct pcm_c *pc, sector_t sector)
{
	struct pcm_ecc_dev *e = pc->ecc;
	struct pcm_inject *in, *tmp;
	u32 bits = 0;

	if (!READ_ONCE(e->nr_injected))
		return 0;
	spin_lock(&e->inject_lock);
	list_for_each_entry_safe(in, tmp, &e->injected, list) {
		if (in->sector != sector)
			continue;
		bits += in->nbits;
		if (!in->sticky) {
			list_del(&in->list);
			e->nr_injected--;
			kfree(in);
		}
	}
	spin_unlock(&e->inject_lock);
	return bits;
}

/* @nbits distinct positions of the sector, drawn from @rng. */
static void inject_flips(struct pcm_ecc_dev *e, struct pcm_rng *rng, u32 nbits)
{
	const struct pcm_ecc_geom *g = &e->codec.geom;
	u32 total = sector_bits(g), i, pos;

	nbits = min(nbits, total);
	bitmap_zero(e->flipped, total);
	for (i = 0; i < nbits; i++) {
		do {
			pos = pcm_rng_next(rng) % total;
		} while (test_bit(pos, e->flipped));
		__set_bit(pos, e->flipped);
		flip_bit(g, e->data, e->parity, pos);
	}
	atomic64_add(nbits, &e->figs[PCM_ECC_INJECTED_BITS]);
}

/* The raw bit errors of one read of a sector, by geometric skipping. */
static void rber_flips(struct pcm_ecc_dev *e, const struct pcm_err_rate *rate,
		       struct pcm_rng *rng)
{
	const struct pcm_ecc_geom *g = &e->codec.geom;
	u32 total = sector_bits(g), flips = 0;
	u64 pos, k;

	for (pos = 0; ; pos += k + 1) {
		k = pcm_err_skip(rate, rng, total - pos);
		if (k >= total - pos)
			break;
		flip_bit(g, e->data, e->parity, pos + k);
		flips++;
	}
	if (flips)
		atomic64_add(flips, &e->figs[PCM_ECC_RAW_BITS]);
}

/*
 * One sector as read: apply the errors, decode, classify against what
 * the device held.  Returns false when it is uncorrectable (zeroed).
 */
static bool ecc_read_sector(struct pcm_c *pc, sector_t lsector, u8 *p,
			    const struct pcm_err_rate *rate, struct pcm_rng *rng,
			    struct pcm_wear_stuck *ws)
{
	struct pcm_ecc_dev *e = pc->ecc;
	const struct pcm_ecc_geom *g = &e->codec.geom;
	unsigned int failed;
	u32 inj;
	int ret;

	memcpy(e->truth, e->data, PCM_ECC_SECTOR);
	memcpy(e->parity, p, pcm_ecc_sector_parity(g));
	inj = injected_bits(pc, lsector);
	if (inj)
		inject_flips(e, rng, inj);
	if (rate->mant)
		rber_flips(e, rate, rng);
	stuck_cells(e, ws);	/* wear hook */
	ret = pcm_ecc_decode_sector(&e->codec, e->data, e->parity, &failed);
	switch (pcm_ecc_classify(ret, e->data, e->truth, PCM_ECC_SECTOR)) {
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
		memset(e->data, 0, PCM_ECC_SECTOR);
		return false;
	}
	return true;
}

static void ecc_read(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	struct pcm_ecc_dev *e = pc->ecc;
	struct bvec_iter it = io->iter, out;
	u32 left = io->iter.bi_size >> SECTOR_SHIFT, i;
	sector_t s = io->iter.bi_sector, lsector = io->lsector;
	u64 rber = READ_ONCE(pc->live.val[PCM_RBER]);
	struct pcm_wear_stuck ws;
	struct pcm_err_rate rate;
	struct pcm_rng rng;
	struct ecc_span sp;
	bool bad = false;
	int r = 0;

	pcm_err_rate_init(&rate, rber);
	pcm_rng_init(&rng, pc->cfg.val[PCM_SEED], e->reads++);
	while (left && !r) {
		span_of(pc, s, left, &sp);
		r = pcm_io(pc, meta_bdev(pc), REQ_OP_READ | REQ_SYNC,
			   pcm_layout_row_meta(&pc->layout, sp.slot),
			   pc->layout.row_meta_sectors, e->meta);
		if (pc->wear)	/* wear hook: the row's rate */
			pcm_err_rate_init(&rate, pcm_wear_read_rber(pc, sp.slot, rber));
		for (i = 0; i < sp.n && !r; i++) {
			out = it;
			bio_sector_copy(bio, &it, e->data, false);
			pcm_wear_stuck_begin(pc, sp.slot, sp.first + i,
					     sector_bits(&e->codec.geom), &ws);
			if (!ecc_read_sector(pc, lsector + i,
					     e->meta + (sp.first + i) * e->codec.geom.meta_bytes,
					     &rate, &rng, &ws))
				bad = true;
			bio_sector_copy(bio, &out, e->data, true);
		}
		s += sp.n;
		lsector += sp.n;
		left -= sp.n;
	}
	/* the row's parity is read: a move may reuse it now */
	pcm_io_over(pc, io);
	io->ecc = PCM_ECC_IO_NONE;
	if (r)
		bio->bi_status = errno_to_blk_status(r);
	else if (bad)
		bio->bi_status = BLK_STS_MEDIUM;
	bio_endio(bio);
}

static void ecc_work(struct work_struct *work)
{
	struct pcm_io *io = container_of(work, struct pcm_io, work);
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(struct pcm_io));

	if (io->ecc == PCM_ECC_IO_WRITE)
		ecc_write(io->pc, bio, io);
	else
		ecc_read(io->pc, bio, io);
}

/*
 * A bio has been remapped (map context, or a parked one released): a
 * write goes to the worker first (DM_MAPIO_SUBMITTED), a read records
 * where its data lies for the decode after it completes.
 */
int pcm_ecc_remapped(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	enum req_op op = bio_op(bio);

	if (!bio_sectors(bio))
		return DM_MAPIO_REMAPPED;
	io->iter = bio->bi_iter;
	io->pc = pc;
	if (op == REQ_OP_READ) {
		io->ecc = PCM_ECC_IO_READ;
		return DM_MAPIO_REMAPPED;
	}
	if (op != REQ_OP_WRITE && op != REQ_OP_WRITE_ZEROES)
		return DM_MAPIO_REMAPPED;
	io->ecc = PCM_ECC_IO_WRITE;
	INIT_WORK(&io->work, ecc_work);
	queue_work(pc->ecc->wq, &io->work);
	return DM_MAPIO_SUBMITTED;
}

/* A read's data is in: hold it for decoding (end_io context). */
int pcm_ecc_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io)
{
	INIT_WORK(&io->work, ecc_work);
	queue_work(pc->ecc->wq, &io->work);
	return DM_ENDIO_INCOMPLETE;
}

/* The mover: physical row @src's metadata goes with its data to @dst. */
int pcm_ecc_move(struct pcm_c *pc, sector_t src, sector_t dst)
{
	u32 n = pc->layout.row_meta_sectors;
	int r;

	r = pcm_io(pc, meta_bdev(pc), REQ_OP_READ | REQ_SYNC,
		   pcm_layout_row_meta(&pc->layout, src), n, pc->ecc->move_meta);
	if (!r)
		r = pcm_io(pc, meta_bdev(pc), REQ_OP_WRITE | REQ_SYNC,
			   pcm_layout_row_meta(&pc->layout, dst), n, pc->ecc->move_meta);
	return r;
}

/* "inject <sector> <nbits> [sticky]" */
int pcm_ecc_inject(struct pcm_c *pc, sector_t sector, u32 nbits, bool sticky)
{
	struct pcm_ecc_dev *e = pc->ecc;
	struct pcm_inject *in;

	in = kmalloc(sizeof(*in), GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	in->sector = sector;
	in->nbits = nbits;
	in->sticky = sticky;
	spin_lock(&e->inject_lock);
	list_add_tail(&in->list, &e->injected);
	e->nr_injected++;
	spin_unlock(&e->inject_lock);
	return 0;
}

/* Most bits one "inject" flips: every bit of a sector and its parity. */
u32 pcm_ecc_max_inject(struct pcm_c *pc)
{
	return sector_bits(&pc->ecc->codec.geom);
}

void pcm_ecc_clear_injected(struct pcm_c *pc)
{
	struct pcm_ecc_dev *e = pc->ecc;
	struct pcm_inject *in, *tmp;
	LIST_HEAD(gone);

	spin_lock(&e->inject_lock);
	list_splice_init(&e->injected, &gone);
	e->nr_injected = 0;
	spin_unlock(&e->inject_lock);
	list_for_each_entry_safe(in, tmp, &gone, list)
		kfree(in);
}

/* Status: the ECC figures after the timing model's; zeros with ecc:none. */
void pcm_ecc_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		    unsigned int *szp)
{
	unsigned int sz = *szp, i;

	for (i = 0; i < PCM_ECC_NR_FIGS; i++)
		DMEMIT(" %s:%lld", pcm_ecc_fig_names[i],
		       pc->ecc ? atomic64_read(&pc->ecc->figs[i]) : 0);
	*szp = sz;
}

/* "stats reset" zeroes them with the other counters. */
void pcm_ecc_reset(struct pcm_c *pc)
{
	unsigned int i;

	for (i = 0; pc->ecc && i < PCM_ECC_NR_FIGS; i++)
		atomic64_set(&pc->ecc->figs[i], 0);
}

int pcm_ecc_dev_init(struct pcm_c *pc)
{
	struct pcm_ecc_dev *e;

	if (!pc->ecc_on)
		return 0;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	pc->ecc = e;
	spin_lock_init(&e->inject_lock);
	INIT_LIST_HEAD(&e->injected);
	e->meta = kvmalloc(meta_len(pc), GFP_KERNEL);
	e->move_meta = kvmalloc(meta_len(pc), GFP_KERNEL);
	if (!e->meta || !e->move_meta || pcm_ecc_init(&e->codec, &pc->ecc_geom))
		return -ENOMEM;
	e->wq = alloc_ordered_workqueue("dm-" DM_MSG_PREFIX "-ecc", WQ_MEM_RECLAIM);
	return e->wq ? 0 : -ENOMEM;
}

void pcm_ecc_dev_exit(struct pcm_c *pc)
{
	struct pcm_ecc_dev *e = pc->ecc;

	if (!e)
		return;
	if (e->wq)
		destroy_workqueue(e->wq);
	pcm_ecc_clear_injected(pc);
	pcm_ecc_exit(&e->codec);
	kvfree(e->move_meta);
	kvfree(e->meta);
	kfree(e);
	pc->ecc = NULL;
}
