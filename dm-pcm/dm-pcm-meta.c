// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm metadata: reading, checking, formatting and writing the two
 * superblock copies (the codec is pcm-sb.c, the layout pcm-layout.c).
 *
 * Copy (seq & 1) holds sequence number seq.  A persist writes the next
 * copy; a suspend and "persist" write both, so a torn write leaves the
 * other copy to load and a copy damaged at rest leaves one just as new.
 */
#include <linux/blkdev.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "dm-pcm.h"
#include "dm-pcm-meta.h"

/*
 * pcm_io() of a buffer within one page of kmalloc memory (a 4 KiB row's
 * parity, a bitmap block): one bio on the stack, as md's sync_page_io()
 * does, without dm-io's request and its completion counting.
 */
static int pcm_io_page(struct block_device *bdev, blk_opf_t opf, sector_t sector,
		       unsigned int len, void *buf)
{
	struct bio_vec bv;
	struct bio bio;
	int r;

	bio_init(&bio, bdev, &bv, 1, opf);
	bio.bi_iter.bi_sector = sector;
	__bio_add_page(&bio, virt_to_page(buf), len, offset_in_page(buf));
	r = submit_bio_wait(&bio);
	bio_uninit(&bio);
	return r;
}

int pcm_io(struct pcm_c *pc, struct block_device *bdev, blk_opf_t opf,
	   sector_t sector, sector_t count, void *buf)
{
	size_t len = count << SECTOR_SHIFT;
	struct dm_io_region where = {
		.bdev = bdev,
		.sector = sector,
		.count = count,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.client = pc->io_client,
	};

	if (len && !is_vmalloc_addr(buf) && offset_in_page(buf) + len <= PAGE_SIZE)
		return pcm_io_page(bdev, opf, sector, len, buf);
	if (is_vmalloc_addr(buf)) {
		req.mem.type = DM_IO_VMA;
		req.mem.ptr.vma = buf;
	} else {
		req.mem.type = DM_IO_KMEM;
		req.mem.ptr.addr = buf;
	}
	return dm_io(&req, 1, &where, NULL, IOPRIO_DEFAULT);
}

static int sb_io(struct pcm_c *pc, blk_opf_t opf, unsigned int copy)
{
	return pcm_io(pc, meta_bdev(pc), opf,
		      pc->layout.meta_start + copy * pc->layout.sb_sectors,
		      pc->layout.sb_sectors, pc->sb_buf);
}

int pcm_meta_init(struct pcm_c *pc)
{
	size_t doms = pc->nr_domains * sizeof(struct pcm_sg_domain);

	pc->sb_buf = kmalloc(pc->layout.sb_sectors << SECTOR_SHIFT, GFP_KERNEL);
	pc->sb.dom = kzalloc(doms, GFP_KERNEL);
	pc->disk[0].dom = kzalloc(doms, GFP_KERNEL);
	pc->disk[1].dom = kzalloc(doms, GFP_KERNEL);
	if (!pc->sb_buf || !pc->sb.dom || !pc->disk[0].dom || !pc->disk[1].dom)
		return -ENOMEM;
	pc->io_client = dm_io_client_create();
	if (IS_ERR(pc->io_client)) {
		int r = PTR_ERR(pc->io_client);

		pc->io_client = NULL;
		return r;
	}
	pc->sb.geo = pcm_table_geometry(pc);
	return 0;
}

void pcm_meta_exit(struct pcm_c *pc)
{
	if (pc->io_client)
		dm_io_client_destroy(pc->io_client);
	kfree(pc->disk[1].dom);
	kfree(pc->disk[0].dom);
	kfree(pc->sb.dom);
	kfree(pc->sb_buf);
}

/* Read and classify both copies; a copy in the wrong slot is corrupt. */
static int read_copies(struct pcm_c *pc, enum pcm_sb_status st[2])
{
	size_t len = pc->layout.sb_sectors << SECTOR_SHIFT;
	unsigned int i;
	int r;

	for (i = 0; i < 2; i++) {
		r = sb_io(pc, REQ_OP_READ | REQ_SYNC, i);
		if (r) {
			DMERR("%s: cannot read superblock copy %u: %d",
			      pcm_name(pc), i, r);
			return r;
		}
		st[i] = pcm_sb_decode(&pc->disk[i], pc->nr_domains, pc->sb_buf, len);
		if (st[i] == PCM_SB_VALID && (pc->disk[i].seq & 1) != i)
			st[i] = PCM_SB_CORRUPT;
	}
	return 0;
}

/* Rows of the data area judge() reads when there is no superblock. */
#define PCM_BLANK_SAMPLES	64

/*
 * Whether the data area looks unused: its first rows and rows spread
 * evenly over the rest are zero.  A device with zeros where its
 * superblocks should be but data in its rows is not new: a device that
 * grew under dm-pcm (an extended LV) has its metadata area moved onto
 * fresh zeros, and formatting it would scramble every moved row.  A
 * sample, not a proof: data only in rows between the samples passes.
 */
static int data_area_blank(struct pcm_c *pc, bool *blank)
{
	u64 rows = pcm_sg_physical_rows(pc->logical_rows, pc->nr_domains);
	u32 len = pc->cfg.val[PCM_ROW_SIZE], i;
	sector_t at;
	int r;

	*blank = true;
	for (i = 0; i < PCM_BLANK_SAMPLES && *blank; i++) {
		/* the first half of the samples are the first rows */
		u64 row = i < PCM_BLANK_SAMPLES / 2 ? i :
			  div_u64(rows * (i - PCM_BLANK_SAMPLES / 2), PCM_BLANK_SAMPLES / 2);

		if (row >= rows)
			continue;
		at = pc->layout.offset + (row << pc->layout.row_shift);
		r = pcm_io(pc, pc->dev->bdev, REQ_OP_READ | REQ_SYNC, at,
			   len >> SECTOR_SHIFT, pc->row_buf);
		if (r)
			return r;
		*blank = !memchr_inv(pc->row_buf, 0, len);
	}
	return 0;
}

/* No superblock copy: format if the data area is unused, else refuse. */
static int judge_blank(struct pcm_c *pc)
{
	bool blank;
	int r = data_area_blank(pc, &blank);

	if (r) {
		pc->ti->error = "Cannot read the data area";
		return r;
	}
	if (blank)
		return 1;
	/* a device that grew moved its metadata area onto zeros */
	DMERR("no dm-pcm superblock, but the data area holds data");
	DMERR("add 'format' to initialize it, losing the data");
	pc->ti->error = "Device holds data but no superblock";
	return -EINVAL;
}

/*
 * What the two copies allow: 0 load copy *pick, 1 format, or an error
 * with ti->error set.  "format" on the table line overrides anything.
 */
static int judge(struct pcm_c *pc, const enum pcm_sb_status st[2], int *pick)
{
	struct dm_target *ti = pc->ti;
	struct pcm_sb_geometry table = pcm_table_geometry(pc);
	const char *field;
	u64 dv, tv;

	if (pc->cfg.val[PCM_FORMAT] && !pc->formatted)
		return 1;
	*pick = pcm_sb_pick(st[0], &pc->disk[0], st[1], &pc->disk[1]);
	if (*pick >= 0) {
		/* ECC formatted before the WIB region: kept as it is, without one */
		if (pc->disk[*pick].geo.features == (table.features & ~PCM_SB_FEAT_WIB))
			table.features = pc->disk[*pick].geo.features;
		field = pcm_sb_geometry_diff(&pc->disk[*pick].geo, &table, &dv, &tv);
		if (!field) {
			pc->sb.geo.features = table.features;
			return 0;
		}
		DMERR("superblock geometry differs: %s is %llu on the device, %llu in the table",
		      field, dv, tv);
		DMERR("add 'format' to reinitialize it, losing the data");
		ti->error = "Superblock geometry differs from table";
		return -EINVAL;
	}
	if (st[0] == PCM_SB_ZERO && st[1] == PCM_SB_ZERO)
		return judge_blank(pc);
	if (st[0] == PCM_SB_NEWER || st[1] == PCM_SB_NEWER) {
		DMERR("superblock has a format version newer than %u", PCM_SB_VERSION);
		ti->error = "Superblock version too new";
		return -EINVAL;
	}
	if (st[0] == PCM_SB_CORRUPT || st[1] == PCM_SB_CORRUPT) {
		DMERR("no valid superblock copy (checksum or fields bad)");
		DMERR("add 'format' to reinitialize it, losing the data");
		ti->error = "Superblock corrupt";
		return -EINVAL;
	}
	DMERR("the metadata area holds what is not a dm-pcm superblock");
	DMERR("add 'format' to overwrite it, losing what is there");
	ti->error = "Device holds foreign data";
	return -EINVAL;
}

int pcm_meta_check(struct pcm_c *pc)
{
	enum pcm_sb_status st[2];
	int pick, r;

	r = read_copies(pc, st);
	if (r) {
		pc->ti->error = "Cannot read superblock";
		return r;
	}
	r = judge(pc, st, &pick);
	if (r > 0 && pc->read_only) {
		pc->ti->error = "Read-only table cannot format the device";
		return -EINVAL;
	}
	return r < 0 ? r : 0;
}

/*
 * Write the copy that pc->sb.seq selects, durably (FUA); @preflush first
 * makes everything written before it durable, rows copied by a move too.
 */
static int write_copy(struct pcm_c *pc, bool preflush)
{
	blk_opf_t opf = REQ_OP_WRITE | REQ_FUA | REQ_SYNC;

	pcm_sb_encode(&pc->sb, pc->sb_buf, pc->layout.sb_sectors << SECTOR_SHIFT);
	return sb_io(pc, preflush ? opf | REQ_PREFLUSH : opf, pc->sb.seq & 1);
}

/* Fresh registers in both copies, numbered past anything on the device. */
static int format(struct pcm_c *pc, const enum pcm_sb_status st[2])
{
	u64 seq = 0;
	unsigned int i;
	int r;

	for (i = 0; i < 2; i++)
		if (st[i] == PCM_SB_VALID)
			seq = max(seq, pc->disk[i].seq);
	pc->sb.seq = (seq + 2) & ~1ULL;
	for (i = 0; i < pc->nr_domains; i++) {
		struct pcm_domain *dom = &pc->dom[i];
		struct pcm_sg_domain fresh;

		pcm_sg_init(&fresh, dom->nr_rows);
		spin_lock(&dom->lock);
		pcm_set_regs(dom, &fresh);
		spin_unlock(&dom->lock);
		pc->sb.dom[i] = dom->regs;
	}
	r = write_copy(pc, true);
	if (!r) {
		pc->sb.seq++;
		r = write_copy(pc, false);
	}
	if (r)
		return r;
	pc->copies_differ = false;
	pc->formatted = true;
	DMINFO("%s: formatted %llu rows in %u domains",
	       pcm_name(pc),
	       pc->logical_rows, pc->nr_domains);
	return 0;
}

/* Registers from the device.  Under meta_lock. */
static void take_registers(struct pcm_c *pc, const struct pcm_sb *good,
			   const enum pcm_sb_status st[2])
{
	unsigned int i;

	for (i = 0; i < pc->nr_domains; i++) {
		struct pcm_domain *dom = &pc->dom[i];

		spin_lock(&dom->lock);
		pcm_set_regs(dom, &good->dom[i]);
		spin_unlock(&dom->lock);
		pc->sb.dom[i] = good->dom[i];
	}
	pc->sb.seq = good->seq;
	pc->copies_differ = st[0] != PCM_SB_VALID || st[1] != PCM_SB_VALID ||
		memcmp(pc->disk[0].dom, pc->disk[1].dom,
		       pc->nr_domains * sizeof(*pc->disk[0].dom));
}

int pcm_meta_load(struct pcm_c *pc)
{
	enum pcm_sb_status st[2];
	int pick = -1, r;

	mutex_lock(&pc->meta_lock);
	r = read_copies(pc, st);
	if (!r)
		r = judge(pc, st, &pick);
	if (r > 0) {
		r = pc->read_only ? -EROFS : format(pc, st);
		goto out;
	}
	if (r)
		goto out;
	take_registers(pc, &pc->disk[pick], st);
	if (st[!pick] != PCM_SB_VALID && !pc->read_only) {
		DMWARN("%s: superblock copy %d is damaged; rewriting it from copy %d (seq %llu)",
		       pcm_name(pc), !pick,
		       pick, pc->sb.seq);
		pc->sb.seq++;
		r = write_copy(pc, true);
		pc->copies_differ = false;
	}
out:
	if (!r) {
		pc->loaded = true;
		pc->meta_failed = false;
		WRITE_ONCE(pc->map_fast_ok, pc->one_domain);
	}
	mutex_unlock(&pc->meta_lock);
	return r;
}

int pcm_meta_persist(struct pcm_c *pc, bool both)
{
	unsigned int i, copies = both ? 2 : 1;
	int r = 0;

	lockdep_assert_held(&pc->meta_lock);
	if (pc->meta_failed)
		return -EIO;
	if (both && !pc->copies_differ)
		return 0;
	if (pc->meta_dev) {
		pc->meta_flushes++;
		r = blkdev_issue_flush(pc->dev->bdev);
	}
	for (i = 0; i < copies && !r; i++) {
		pc->sb.seq++;
		pc->sb_writes++;
		pc->meta_flushes += !i;
		r = write_copy(pc, !i);
	}
	if (r) {
		WRITE_ONCE(pc->meta_failed, true);
		/* writes now fail in pcm_map_bio(): map_fast() does not look */
		WRITE_ONCE(pc->map_fast_ok, false);
		DMERR("%s: superblock write failed (%d): writes and flushes fail until reloaded",
		      pcm_name(pc), r);
		return r;
	}
	pc->copies_differ = copies == 1;
	return 0;
}
