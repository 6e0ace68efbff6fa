// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm injected errors (ecc:bch): "inject <sector> <nbits> [sticky]"
 * leaves bit errors for the next read (one-shot) or every read (sticky)
 * of a logical sector; ECC draws their positions (dm-pcm-ecc.c) and asks
 * here how many each sector it decodes has (pcm_inject_take()).
 *
 * The sectors are kept in an rb-tree, as dm-dust keeps its bad blocks:
 * a sector read looks itself up in O(log n), and only while anything is
 * injected (a racy look at pc->nr_injected first, inline).  A sector's
 * node sums its sticky bits and its one-shot bits: a read takes both and
 * uses up the one-shots; the node goes with its last bit.
 *
 * The sticky table (PCM_INJ_SECTORS at the start of the WIB region,
 * pcm-layout.h): "inject ... sticky" is written there (FUA) before it
 * takes effect, reloaded at the first resume of a table, and emptied
 * durably by "clear_injected", as a stuck PCM cell outlives a power cycle.
 */
#include <linux/crc32.h>
#include <linux/rbtree.h>
#include <linux/slab.h>

#include "dm-pcm.h"
#include "dm-pcm-errs.h"
#include "dm-pcm-inject.h"
#include "dm-pcm-meta.h"

#define PCM_INJ_MAGIC		0x69435070U	/* "pPCi" on disk */
#define PCM_INJ_HDR		16
#define PCM_INJ_ENTRY		16
#define PCM_INJ_MAX		((PCM_INJ_SECTORS * 512 - PCM_INJ_HDR) / PCM_INJ_ENTRY)

struct pcm_inj_disk {
	__le32 magic;
	__le32 csum;		/* CRC32 of the whole table, this field zero */
	__le32 count;
	__le32 reserved;
	struct {
		__le64 sector;
		__le32 nbits;
		__le32 reserved;
	} e[];
};

/* What is injected in one logical sector. */
struct pcm_inj_node {
	struct rb_node rb;
	sector_t sector;
	u32 sticky_bits;	/* every read's */
	u32 once_bits;		/* the next read's */
	bool sticky;		/* @sticky_bits were injected (their sum may wrap) */
};

struct pcm_injects {
	spinlock_t lock;		/* @tree, pc->nr_injected; reads take it with BHs off */
	struct rb_root tree;

	struct mutex io_lock;		/* the sticky table's image and writes */
	struct pcm_inj_disk *disk;
	bool on;			/* the device has the table (set at load) */
	bool zeroed;			/* this table formatted it and emptied the table */
	bool loaded;			/* the table is read (first resume) */
};

static struct pcm_inj_node *inj_find(struct pcm_injects *in, sector_t sector)
{
	struct rb_node *n = in->tree.rb_node;

	while (n) {
		struct pcm_inj_node *x = rb_entry(n, struct pcm_inj_node, rb);

		if (sector < x->sector)
			n = n->rb_left;
		else if (sector > x->sector)
			n = n->rb_right;
		else
			return x;
	}
	return NULL;
}

/* Add @nbits to @sector's node, made from @new if it has none (lock held). */
static void inj_insert(struct pcm_c *pc, struct pcm_inj_node *new, sector_t sector,
		       u32 nbits, bool sticky)
{
	struct pcm_injects *in = pc->inj;
	struct rb_node **link = &in->tree.rb_node, *parent = NULL;
	struct pcm_inj_node *x = NULL;

	while (*link) {
		parent = *link;
		x = rb_entry(parent, struct pcm_inj_node, rb);
		if (sector < x->sector)
			link = &parent->rb_left;
		else if (sector > x->sector)
			link = &parent->rb_right;
		else
			break;
	}
	if (*link) {
		kfree(new);
	} else {
		x = new;
		x->sector = sector;
		rb_link_node(&x->rb, parent, link);
		rb_insert_color(&x->rb, &in->tree);
		WRITE_ONCE(pc->nr_injected, pc->nr_injected + 1);
	}
	if (sticky) {
		x->sticky_bits += nbits;
		x->sticky = true;
	} else {
		x->once_bits += nbits;
	}
}

int pcm_inject_add(struct pcm_c *pc, sector_t sector, u32 nbits, bool sticky)
{
	struct pcm_injects *in = pc->inj;
	struct pcm_inj_node *new;
	int r;

	/* its bits are drawn by read number */
	r = pcm_errs_enable(pc);
	if (r)
		return r;
	new = kzalloc(sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	spin_lock_bh(&in->lock);	/* reads decode in softirq context too */
	inj_insert(pc, new, sector, nbits, sticky);
	spin_unlock_bh(&in->lock);
	return 0;
}

u32 __pcm_inject_take(struct pcm_c *pc, sector_t sector)
{
	struct pcm_injects *in = pc->inj;
	struct pcm_inj_node *x;
	u32 bits = 0;

	spin_lock(&in->lock);
	x = inj_find(in, sector);
	if (x) {
		bits = x->sticky_bits + x->once_bits;
		x->once_bits = 0;
		if (!x->sticky) {
			rb_erase(&x->rb, &in->tree);
			WRITE_ONCE(pc->nr_injected, pc->nr_injected - 1);
			kfree(x);
		}
	}
	spin_unlock(&in->lock);
	return bits;
}

u32 pcm_inject_max(struct pcm_c *pc)
{
	return pcm_ecc_sector_bits(&pc->ecc_geom);
}

/* Forget every injection, in memory. */
static void inj_forget(struct pcm_c *pc)
{
	struct pcm_injects *in = pc->inj;
	struct pcm_inj_node *x, *tmp;
	struct rb_root gone;

	spin_lock_bh(&in->lock);
	gone = in->tree;
	in->tree = RB_ROOT;
	WRITE_ONCE(pc->nr_injected, 0);
	spin_unlock_bh(&in->lock);
	rbtree_postorder_for_each_entry_safe(x, tmp, &gone, rb)
		kfree(x);
}

static u32 inj_csum(struct pcm_inj_disk *d)
{
	__le32 saved = d->csum;
	u32 c;

	d->csum = 0;
	c = crc32_le(~0U, (const u8 *)d, PCM_INJ_SECTORS << SECTOR_SHIFT);
	d->csum = saved;
	return c;
}

/* Write the sticky table as @in->disk holds it, durably.  io_lock held. */
static int inj_write(struct pcm_c *pc)
{
	struct pcm_injects *in = pc->inj;

	lockdep_assert_held(&in->io_lock);
	in->disk->magic = cpu_to_le32(PCM_INJ_MAGIC);
	in->disk->csum = cpu_to_le32(inj_csum(in->disk));
	return pcm_io(pc, meta_bdev(pc), REQ_OP_WRITE | REQ_SYNC | REQ_FUA,
		      pc->layout.wib_start, PCM_INJ_SECTORS, in->disk);
}

int pcm_inject_save(struct pcm_c *pc, sector_t sector, u32 nbits)
{
	struct pcm_injects *in = pc->inj;
	u32 n;
	int r;

	if (!in->on)
		return 0;	/* a device without the region: in RAM only */
	if (pc->read_only) {
		DMERR("inject sticky: a read-only table cannot persist it");
		return -EROFS;
	}
	mutex_lock(&in->io_lock);
	n = le32_to_cpu(in->disk->count);
	if (n >= PCM_INJ_MAX) {
		mutex_unlock(&in->io_lock);
		DMERR("inject sticky: the sticky table is full (%u): clear_injected first",
		      (unsigned int)PCM_INJ_MAX);
		return -ENOSPC;
	}
	in->disk->e[n].sector = cpu_to_le64(sector);
	in->disk->e[n].nbits = cpu_to_le32(nbits);
	in->disk->e[n].reserved = 0;
	in->disk->count = cpu_to_le32(n + 1);
	r = inj_write(pc);
	if (r) {
		in->disk->count = cpu_to_le32(n);
		DMERR("inject sticky: cannot write the table: %d", r);
	}
	mutex_unlock(&in->io_lock);
	return r;
}

/* The sticky table emptied durably. */
static int inj_clear_disk(struct pcm_c *pc)
{
	struct pcm_injects *in = pc->inj;
	int r;

	if (!in->on || pc->read_only)
		return 0;
	mutex_lock(&in->io_lock);
	memset(in->disk, 0, PCM_INJ_SECTORS << SECTOR_SHIFT);
	r = inj_write(pc);
	mutex_unlock(&in->io_lock);
	return r;
}

int pcm_inject_clear(struct pcm_c *pc)
{
	int r;

	inj_forget(pc);
	r = inj_clear_disk(pc);
	if (r)
		DMERR("clear_injected: cannot write the table: %d", r);
	return r;
}

/* First resume of this table: the stickies on the device take effect. */
static int inj_load(struct pcm_c *pc)
{
	struct pcm_inj_disk *d = pc->inj->disk;
	u32 n, i, bad = 0;
	u64 sector;
	int r;

	r = pcm_io(pc, meta_bdev(pc), REQ_OP_READ | REQ_SYNC, pc->layout.wib_start,
		   PCM_INJ_SECTORS, d);
	if (r)
		return r;
	n = le32_to_cpu(d->count);
	if (!d->magic && !n && !d->csum) {
		memset(d, 0, PCM_INJ_SECTORS << SECTOR_SHIFT);
		return 0;
	}
	if (le32_to_cpu(d->magic) != PCM_INJ_MAGIC || n > PCM_INJ_MAX ||
	    le32_to_cpu(d->csum) != inj_csum(d)) {
		DMWARN("%s: sticky-inject table damaged: ignored (clear_injected rewrites it)",
		       pcm_name(pc));
		memset(d, 0, PCM_INJ_SECTORS << SECTOR_SHIFT);
		return 0;
	}
	for (i = 0; i < n && !r; i++) {
		u32 nbits = le32_to_cpu(d->e[i].nbits);

		sector = le64_to_cpu(d->e[i].sector);
		if (sector >= pc->ti->len || !nbits || nbits > pcm_inject_max(pc)) {
			bad++;
			continue;
		}
		r = pcm_inject_add(pc, sector, nbits, true);
	}
	if (bad)
		DMWARN("%s: %u sticky errors out of this table's range ignored", pcm_name(pc), bad);
	if (n)
		DMINFO("%s: %u sticky errors reloaded", pcm_name(pc), n - bad);
	return r;
}

int pcm_inject_load(struct pcm_c *pc)
{
	struct pcm_injects *in = pc->inj;
	int r;

	if (!in)
		return 0;
	/* the sticky table is the first sectors of the WIB region */
	in->on = pc->sb.geo.features & PCM_SB_FEAT_WIB;
	if (!in->on)
		return 0;
	if (pc->formatted && !in->zeroed) {
		/* nothing is injected yet: this only writes the empty table */
		r = pcm_inject_clear(pc);
		in->zeroed = !r;
		in->loaded = !r;
		return r;
	}
	if (!in->loaded) {
		r = inj_load(pc);
		in->loaded = !r;
		return r;
	}
	return 0;
}

int pcm_inject_init(struct pcm_c *pc)
{
	struct pcm_injects *in;

	if (!pc->ecc_on)
		return 0;
	in = kzalloc(sizeof(*in), GFP_KERNEL);
	if (!in)
		return -ENOMEM;
	pc->inj = in;
	spin_lock_init(&in->lock);
	in->tree = RB_ROOT;
	mutex_init(&in->io_lock);
	in->disk = kzalloc(PCM_INJ_SECTORS << SECTOR_SHIFT, GFP_KERNEL);
	return in->disk ? 0 : -ENOMEM;
}

void pcm_inject_exit(struct pcm_c *pc)
{
	struct pcm_injects *in = pc->inj;

	if (!in)
		return;
	inj_forget(pc);
	kfree(in->disk);
	kfree(in);
	pc->inj = NULL;
}
