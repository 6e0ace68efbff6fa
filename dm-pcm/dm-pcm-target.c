// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-pcm authors.
 *
 * dm-pcm: a device-mapper target that makes any block device behave like
 * phase-change memory.  Each bio's rows are remapped by start-gap
 * wear-leveling (one clone for rows that stay back to back on the backing
 * device, dm-pcm-io.c), and it goes to the backing device;
 * the timing and ECC models are layered on that path (see
 * Documentation/admin-guide/device-mapper/dm-pcm.rst).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stringify.h>

#include "dm-pcm-compat.h"
#include "dm-pcm.h"
#include "dm-pcm-ecc.h"
#include "dm-pcm-epoch.h"
#include "dm-pcm-errs.h"
#include "dm-pcm-inject.h"
#include "dm-pcm-io.h"
#include "dm-pcm-meta.h"
#include "dm-pcm-move.h"
#include "dm-pcm-timing.h"
#include "dm-pcm-wear.h"
#include "dm-pcm-wib.h"

static const char * const pcm_counter_names[PCM_NR_COUNTERS] = {
	[PCM_READS] = "reads",
	[PCM_WRITES] = "writes",
	[PCM_READ_BYTES] = "read_bytes",
	[PCM_WRITE_BYTES] = "write_bytes",
	[PCM_FLUSHES] = "flushes",
	[PCM_FUA_WRITES] = "fua_writes",
	[PCM_DISCARDS] = "discards",
	[PCM_DISCARD_BYTES] = "discard_bytes",
	[PCM_WRITE_ZEROES] = "write_zeroes",
	[PCM_WRITE_ZEROES_BYTES] = "write_zeroes_bytes",
};

/* Sum the per-CPU counters (dm-pcm-io.c: pcm_count()). */
static void pcm_stats_sum(struct pcm_c *pc, u64 *sum)
{
	unsigned int cpu, i;

	memset(sum, 0, sizeof(u64) * PCM_NR_COUNTERS);
	for_each_possible_cpu(cpu) {
		struct pcm_stats *s = per_cpu_ptr(pc->stats, cpu);

		for (i = 0; i < PCM_NR_COUNTERS; i++)
			sum[i] += READ_ONCE(s->c[i]);
	}
}

static void pcm_dtr(struct dm_target *ti)
{
	struct pcm_c *pc = ti->private;

	/* their works run on the mover's workqueue: cancelled before it goes */
	pcm_wear_exit(pc);
	pcm_inject_exit(pc);
	pcm_wib_exit(pc);
	pcm_move_exit(pc);
	pcm_ecc_dev_exit(pc);
	pcm_errs_exit(pc);
	pcm_timing_exit(pc);
	pcm_meta_exit(pc);
	pcm_epoch_exit(pc);
	kvfree(pc->dom);
	if (pc->meta_dev)
		dm_put_device(ti, pc->meta_dev);
	if (pc->dev)
		dm_put_device(ti, pc->dev);
	free_percpu(pc->stats);
	kfree(pc);
}

static int pcm_get_device(struct dm_target *ti, const char *path,
			  struct dm_dev **dev)
{
	struct mapped_device *md = dm_table_get_md(ti->table);
	int r;

	r = dm_get_device(ti, path, dm_table_get_mode(ti->table), dev);
	if (r) {
		ti->error = "Device lookup failed";
		return r;
	}
	/* 6.12's dm_get_device() refuses this itself; 6.1's does not */
	if ((*dev)->bdev->bd_dev == disk_devt(dm_disk(md))) {
		ti->error = "Device cannot map onto itself";
		return -EINVAL;
	}
	return 0;
}

/*
 * Parse "<dev_path> <offset> [<#opt_params> <opt_param>...]".  Numbers go
 * through pcm_parse_u64(): sscanf() and dm_read_arg_group() wrap on
 * overflow, which would turn an offset of 2^64 into 0.
 */
static int pcm_parse_args(struct dm_target *ti, struct pcm_c *pc,
			  unsigned int argc, char **argv)
{
	struct pcm_err err;
	u64 offset, nr_opt = 0;
	int r;

	if (argc < 2) {
		ti->error = "Invalid argument count";
		return -EINVAL;
	}
	if (pcm_parse_u64(argv[1], &offset) || offset != (sector_t)offset) {
		ti->error = "Invalid device offset";
		return -EINVAL;
	}
	pc->start = offset;
	if (argc > 2 && (pcm_parse_u64(argv[2], &nr_opt) ||
			 nr_opt > PCM_MAX_OPT_WORDS || nr_opt > argc - 3)) {
		DMERR("optional parameter count %.24s: need 0..%u words that follow",
		      argv[2], min_t(unsigned int, PCM_MAX_OPT_WORDS, argc - 3));
		ti->error = "Invalid number of optional parameters";
		return -EINVAL;
	}
	if (argc > 3 + nr_opt) {
		ti->error = "Too many arguments";
		return -EINVAL;
	}
	r = pcm_config_parse(&pc->cfg, nr_opt, argv + 3, &err);
	if (r) {
		DMERR("%s", err.detail);
		ti->error = err.what;
		return r;
	}
	r = pcm_get_device(ti, argv[0], &pc->dev);
	if (r || !pc->cfg.val[PCM_META_DEVICE])
		return r;
	r = pcm_get_device(ti, pc->cfg.path, &pc->meta_dev);
	if (r)
		return r;
	if (pc->meta_dev->bdev == pc->dev->bdev) {
		ti->error = "Metadata device is the data device";
		return -EINVAL;
	}
	/* print it back the way dmsetup prints the data device */
	strscpy(pc->cfg.path, pc->meta_dev->name, sizeof(pc->cfg.path));
	return 0;
}

/*
 * The data device's logical blocks: a row is remapped whole, so it cannot
 * be a part of one, and the rows start on one (pcm-layout.c's rule, which
 * pcmctl length shares).
 */
static int pcm_check_alignment(struct dm_target *ti, struct pcm_c *pc, enum pcm_layout_err e)
{
	const struct pcm_layout *l = &pc->layout;

	if (e == PCM_LAYOUT_ROW_BLOCK) {
		DMERR("row_size:%u is smaller than the device's %u-byte logical blocks",
		      l->row_size, l->data_block);
		ti->error = "Row size below logical block size";
	} else {
		DMERR("offset %llu is not a multiple of the device's %u-byte logical blocks",
		      l->offset, l->data_block);
		ti->error = "Misaligned device offset";
	}
	return -EINVAL;
}

/*
 * Rows R + K and the two superblock copies must fit (pcm-layout.c, which
 * pcmctl shares to print the legal length), with a row per domain.
 */
static int pcm_check_geometry(struct dm_target *ti, struct pcm_c *pc)
{
	struct pcm_layout *l = &pc->layout;
	enum pcm_layout_err e;

	l->dev_sectors = bdev_nr_sectors(pc->dev->bdev);
	l->offset = pc->start;
	l->meta_dev = pc->meta_dev;
	l->meta_dev_sectors = pc->meta_dev ? bdev_nr_sectors(pc->meta_dev->bdev) : 0;
	l->data_block = bdev_logical_block_size(pc->dev->bdev);
	l->meta_block = bdev_logical_block_size(meta_bdev(pc));
	l->row_size = pc->cfg.val[PCM_ROW_SIZE];
	l->domains = pc->cfg.val[PCM_DOMAINS];
	l->row_meta = pc->ecc_on ? pcm_ecc_row_meta(&pc->ecc_geom, l->row_size) : 0;
	l->wear_group = pc->cfg.val[PCM_WEAR];
	e = pcm_layout_compute(l);
	if (e == PCM_LAYOUT_ROW_BLOCK || e == PCM_LAYOUT_OFFSET_BLOCK)
		return pcm_check_alignment(ti, pc, e);
	if (e == PCM_LAYOUT_META_EMPTY || e == PCM_LAYOUT_META_BLOCK) {
		DMERR("%s: %s", pc->meta_dev ? pc->meta_dev->name : pc->dev->name,
		      pcm_layout_error(e));
		ti->error = e == PCM_LAYOUT_META_EMPTY ? "Metadata device is empty" :
			    "Metadata device blocks larger than 4 KiB";
		return -EINVAL;
	}
	if (e != PCM_LAYOUT_OK) {
		DMERR("device too small: %s (%llu sectors, offset %llu, domains:%u)",
		      pcm_layout_error(e), l->dev_sectors, l->offset, l->domains);
		ti->error = "Device too small";
		return -EINVAL;
	}
	if (ti->len > l->max_length) {
		DMERR("length %llu exceeds capacity: largest legal length is %llu sectors",
		      (unsigned long long)ti->len, l->max_length);
		ti->error = "Length exceeds device capacity";
		return -EINVAL;
	}
	if (ti->len & (l->block_sectors - 1)) {
		DMERR("length %llu is not a multiple of the device's %u-byte logical blocks",
		      (unsigned long long)ti->len, l->data_block);
		ti->error = "Length not a multiple of logical block size";
		return -EINVAL;
	}
	pc->logical_rows = pcm_layout_rows(ti->len, l->row_size);
	if (pc->logical_rows < l->domains) {
		DMERR("length %llu gives %llu rows: domains:%u needs a row each",
		      (unsigned long long)ti->len, pc->logical_rows, l->domains);
		ti->error = "Fewer rows than domains";
		return -EINVAL;
	}
	pc->nr_domains = l->domains;
	pc->domain_shift = is_power_of_2(l->domains) ? ilog2(l->domains) : U32_MAX;
	pc->row_mask = (1U << l->row_shift) - 1;
	pcm_layout_place(l, pcm_sg_physical_rows(pc->logical_rows, pc->nr_domains));
	return 0;
}

/*
 * ecc:bch: the layout lib/bch must accept, with the parity in meta_bytes;
 * when it is not, pcm-ecc says what would fit.
 */
static int pcm_check_ecc(struct dm_target *ti, struct pcm_c *pc)
{
	const u64 *v = pc->cfg.val;
	char msg[160];

	pc->ecc_on = v[PCM_ECC] == PCM_ECC_BCH;
	pc->ecc_wq = v[PCM_ECC_WORKQUEUE];
	if (!pc->ecc_on)
		return 0;
	if (pcm_ecc_geom_init(&pc->ecc_geom, v[PCM_ECC_CODEWORDS], v[PCM_ECC_T],
			      v[PCM_META_BYTES], msg, sizeof(msg))) {
		DMERR("%s", msg);
		ti->error = "Invalid ECC layout";
		return -EINVAL;
	}
	return 0;
}

static int pcm_domains_init(struct pcm_c *pc)
{
	u32 d;

	pc->dom = kvcalloc(pc->nr_domains, sizeof(*pc->dom), GFP_KERNEL);
	if (!pc->dom)
		return -ENOMEM;
	pc->randomize = pc->cfg.val[PCM_RANDOMIZE] != 0;
	pc->one_domain = pc->nr_domains == 1 && !pc->randomize;
	pc->map_fast_ok = pc->one_domain;
	for (d = 0; d < pc->nr_domains; d++) {
		struct pcm_domain *dom = &pc->dom[d];

		spin_lock_init(&dom->lock);
		seqcount_spinlock_init(&dom->seq, &dom->lock);
		bio_list_init(&dom->parked);
		dom->id = d;
		dom->moving = PCM_NOT_MOVING;
		dom->nr_rows = pcm_sg_domain_rows(pc->logical_rows, pc->nr_domains, d);
		pcm_feistel_init(&dom->feistel, pc->cfg.val[PCM_RANDOMIZE], dom->nr_rows);
		pcm_sg_init(&dom->regs, dom->nr_rows);
	}
	return 0;
}

/* Allocations and clients; each failure names what could not be had. */
static int pcm_alloc(struct dm_target *ti, struct pcm_c *pc)
{
	if (pcm_domains_init(pc) || pcm_epoch_init(pc)) {
		ti->error = "Cannot allocate domains";
		return -ENOMEM;
	}
	pc->stats = alloc_percpu(struct pcm_stats);
	if (!pc->stats) {
		ti->error = "Cannot allocate statistics";
		return -ENOMEM;
	}
	if (pcm_meta_init(pc)) {
		ti->error = "Cannot allocate metadata buffers";
		return -ENOMEM;
	}
	if (pcm_move_init(pc)) {
		ti->error = "Cannot create gap mover";
		return -ENOMEM;
	}
	if (pcm_timing_init(pc)) {
		ti->error = "Cannot allocate the timing model";
		return -ENOMEM;
	}
	if (pcm_ecc_dev_init(pc)) {
		ti->error = "Cannot set up ECC";
		return -ENOMEM;
	}
	if (pcm_wib_init(pc)) {
		ti->error = "Cannot allocate the write-intent bitmap";
		return -ENOMEM;
	}
	if (pcm_inject_init(pc)) {
		ti->error = "Cannot allocate the injection table";
		return -ENOMEM;
	}
	if (pcm_wear_init(pc)) {
		ti->error = "Cannot allocate wear counters";
		return -ENOMEM;
	}
	/* rber's draws are named by read numbers: made when errors are first asked for */
	if (pc->cfg.val[PCM_RBER] && pcm_errs_enable(pc)) {
		ti->error = "Cannot allocate read numbers";
		return -ENOMEM;
	}
	pcm_errs_rber(pc, pc->cfg.val[PCM_RBER]);
	return 0;
}

/*
 * Construct a pcm mapping:
 *   <dev_path> <offset> [<#opt_params> <opt_param>...]
 *
 * opt_param is a key:value word or a bare flag:
 *   preset:<none>        defaults for every other parameter
 *   row_size:<bytes>     remap, wear and timing unit (power of two)
 *   gap_interval:<n>     row writes per gap move in a domain, 0 = off
 *   domains:<k>          independent interleaved start-gap domains
 *   randomize:<seed>     Feistel randomization of rows, 0 = off
 *   meta_device:<path>   superblocks there instead of at the end of dev
 *   format               initialize the metadata, whatever is there
 *   channels:<n> ranks:<n> stripe:<rows>   the timing model's geometry
 *   read_ns: write_ns: zero_write_ns: cmd_ns: read_mbps: write_mbps:
 *   host_mbps: tags: completion:late|early write_cache:   its timing
 *   overhead_ns:<ns>     this host's completion cost, taken off holds
 *   wear:off|on|<rows>   wear counters: per row, or per <rows> rows
 *   endurance:<writes>   writes per row before its cells stick
 *   dilation:<K>         every modeled time K times longer (at load only)
 */
static int pcm_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct pcm_c *pc;
	int r;

	pc = kzalloc(sizeof(*pc), GFP_KERNEL);
	if (!pc) {
		ti->error = "Cannot allocate context";
		return -ENOMEM;
	}
	ti->private = pc;
	pc->ti = ti;
	pc->devt = disk_devt(dm_disk(dm_table_get_md(ti->table)));
	spin_lock_init(&pc->stats_lock);
	mutex_init(&pc->meta_lock);
	pc->read_only = !(dm_table_get_mode(ti->table) & PCM_MODE_WRITE);

	r = pcm_parse_args(ti, pc, argc, argv);
	if (r)
		goto bad;
	pc->live = pc->cfg;
	r = pcm_check_ecc(ti, pc) ?: pcm_check_geometry(ti, pc);
	if (r)
		goto bad;
	r = pcm_alloc(ti, pc);
	if (r)
		goto bad;
	r = pcm_meta_check(pc);
	if (r)
		goto bad;

	/*
	 * dm-pcm keeps no volatile state of its own (registers are durable
	 * before a write goes through them: dm-pcm-move.c), so it has the
	 * data device's cache.  ecc:bch on a meta_device: a flush covers the
	 * parity there too, and that device may cache what the other does not.
	 */
	ti->num_flush_bios = pc->ecc_on && pc->meta_dev ? 2 : 1;
	ti->flush_supported = ti->num_flush_bios == 2;
	/* a discard need not zero: its rows' parity would no longer match */
	ti->num_discard_bios = pc->ecc_on ? 0 : 1;
	ti->num_write_zeroes_bios = 1;
	/* no ECC: no room for its part of struct pcm_io in any bio's data */
	pc->io_size = pcm_io_size(pc->ecc_on);
	ti->per_io_data_size = pc->io_size;
	/* a parked bio may be submitted and done before map returns */
	ti->accounts_remapped_io = true;
	return 0;

bad:
	pcm_dtr(ti);
	return r;
}

/*
 * Suspend: "move_gap" stops at presuspend; the moves that writes owe go
 * on until postsuspend, so the writes of a freeze are throttled as any
 * others and nothing piles up.  dm undoes presuspend when the suspend
 * fails or is interrupted (lock_fs fails, a signal): so must we.
 */
static void pcm_presuspend(struct dm_target *ti)
{
	pcm_move_suspending(ti->private, true);
}

static void pcm_presuspend_undo(struct dm_target *ti)
{
	pcm_move_suspending(ti->private, false);
}

static void pcm_postsuspend(struct dm_target *ti)
{
	pcm_move_quiesce(ti->private);
	pcm_wib_quiesce(ti->private);
	pcm_wear_suspend(ti->private);	/* after the last move's copy */
}

/*
 * The registers on the device are the truth: another table may have
 * moved.  The wear counters come from the device the first time (zeros
 * if it was formatted just now).
 */
static int pcm_preresume(struct dm_target *ti)
{
	struct pcm_c *pc = ti->private;
	bool formatted = pc->formatted;
	unsigned int noio;
	int r;

	/* suspended: an allocation that waits for I/O here waits for us */
	noio = memalloc_noio_save();
	r = pcm_meta_load(pc) ?: pcm_wib_load(pc) ?: pcm_inject_load(pc) ?:
	    pcm_wear_load(pc, !formatted && pc->formatted);
	memalloc_noio_restore(noio);
	return r;
}

static void pcm_resume(struct dm_target *ti)
{
	pcm_move_resume(ti->private);
	pcm_wear_resume(ti->private);
}

#define PCM_STATUS_LIST	16

/* Start and gap per domain: a list up to 16 domains, else min..max. */
static void pcm_status_registers(struct pcm_c *pc, char *result,
				 unsigned int maxlen, unsigned int *szp)
{
	struct pcm_sg_domain r[PCM_STATUS_LIST], lo = { U64_MAX, U64_MAX }, hi = {};
	unsigned int sz = *szp;
	u32 d, n = pc->nr_domains;

	for (d = 0; d < n; d++) {
		struct pcm_sg_domain x;

		spin_lock(&pc->dom[d].lock);
		x = pc->dom[d].regs;
		spin_unlock(&pc->dom[d].lock);
		if (d < PCM_STATUS_LIST)
			r[d] = x;
		lo.start = min(lo.start, x.start);
		lo.gap = min(lo.gap, x.gap);
		hi.start = max(hi.start, x.start);
		hi.gap = max(hi.gap, x.gap);
	}
	if (n > PCM_STATUS_LIST) {
		DMEMIT(" start:%llu..%llu gap:%llu..%llu", lo.start, hi.start,
		       lo.gap, hi.gap);
	} else {
		DMEMIT(" start:");
		for (d = 0; d < n; d++)
			DMEMIT("%s%llu", d ? "," : "", r[d].start);
		DMEMIT(" gap:");
		for (d = 0; d < n; d++)
			DMEMIT("%s%llu", d ? "," : "", r[d].gap);
	}
	*szp = sz;
}

static void pcm_status_info(struct pcm_c *pc, char *result, unsigned int maxlen)
{
	u64 sum[PCM_NR_COUNTERS], owed;
	unsigned int i, sz = 0;

	pcm_stats_sum(pc, sum);
	spin_lock(&pc->stats_lock);
	for (i = 0; i < PCM_NR_COUNTERS; i++)
		sum[i] -= pc->stats_base[i];
	spin_unlock(&pc->stats_lock);

	for (i = 0; i < PCM_NR_COUNTERS; i++)
		DMEMIT("%s%s:%llu", i ? " " : "", pcm_counter_names[i], sum[i]);
	DMEMIT(" gap_moves:%llu start_wraps:%llu move_errors:%llu metadata:%s domains:%u",
	       READ_ONCE(pc->gap_moves), READ_ONCE(pc->start_wraps),
	       READ_ONCE(pc->move_errors),
	       READ_ONCE(pc->meta_failed) ? "failed" : pc->read_only ? "read-only" : "ok",
	       pc->nr_domains);
	pcm_status_registers(pc, result, maxlen, &sz);
	for (i = 0, owed = 0; i < pc->nr_domains; i++)
		owed += READ_ONCE(pc->dom[i].owed);
	DMEMIT(" moves_owed:%llu parked_writes:%lld wouldblock:%lld", owed,
	       atomic64_read(&pc->parked_writes), atomic64_read(&pc->wouldblock));
	DMEMIT(" sb_writes:%llu meta_flushes:%llu", READ_ONCE(pc->sb_writes),
	       READ_ONCE(pc->meta_flushes));
	pcm_timing_status(pc, result, maxlen, &sz);
	pcm_ecc_status(pc, result, maxlen, &sz);
	pcm_wib_status(pc, result, maxlen, &sz);
	pcm_wear_status(pc, result, maxlen, &sz);
	pcm_timing_status_ranks(pc, result, maxlen, &sz);
}

static void pcm_status(struct dm_target *ti, status_type_t type,
		       unsigned int status_flags, char *result, unsigned int maxlen)
{
	struct pcm_c *pc = ti->private;
	unsigned int n, sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		pcm_status_info(pc, result, maxlen);
		break;

	case STATUSTYPE_TABLE:
		DMEMIT("%s %llu", pc->dev->name, (unsigned long long)pc->start);
		n = pcm_config_nr_table_words(&pc->cfg);
		if (n)
			DMEMIT(" %u", n);
		if (n && sz < maxlen)
			pcm_config_emit(&pc->cfg, PCM_EMIT_GIVEN, result + sz, maxlen - sz);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",device_name=%s,start=%llu", pc->dev->name,
		       (unsigned long long)pc->start);
		if (sz < maxlen)
			sz += pcm_config_emit(&pc->cfg, PCM_EMIT_IMA, result + sz, maxlen - sz);
		DMEMIT(";");
		break;
	}
}

static int pcm_msg_stats(struct pcm_c *pc, unsigned int argc, char **argv)
{
	u64 sum[PCM_NR_COUNTERS];

	if (argc != 2 || strcasecmp(argv[1], "reset")) {
		DMERR("usage: stats reset");
		return -EINVAL;
	}
	pcm_stats_sum(pc, sum);
	spin_lock(&pc->stats_lock);
	memcpy(pc->stats_base, sum, sizeof(sum));
	spin_unlock(&pc->stats_lock);
	mutex_lock(&pc->meta_lock);
	pc->gap_moves = 0;
	pc->start_wraps = 0;
	pc->move_errors = 0;
	pc->sb_writes = 0;
	pc->meta_flushes = 0;
	atomic64_set(&pc->parked_writes, 0);
	atomic64_set(&pc->wouldblock, 0);
	mutex_unlock(&pc->meta_lock);
	pcm_timing_reset(pc);
	pcm_ecc_reset(pc);
	return 0;
}

static int pcm_msg_config(struct pcm_c *pc, unsigned int argc,
			  char *result, unsigned int maxlen)
{
	if (argc != 1) {
		DMERR("usage: config");
		return -EINVAL;
	}
	/* skip the leading blank of the first word */
	pcm_config_emit(&pc->live, PCM_EMIT_ALL, result, maxlen);
	memmove(result, result + 1, strlen(result));
	return 1;
}

/*
 * "set <key> <value>": only parameters marked runtime-tunable change on a
 * live device, in pc->live; the table line (pc->cfg) keeps what was
 * loaded, so a saved "dmsetup table" never carries a runtime change.
 */
static int pcm_msg_set(struct pcm_c *pc, unsigned int argc, char **argv)
{
	struct pcm_err err;
	u64 val;
	int id, r;

	if (argc != 3) {
		DMERR("usage: set <key> <value>");
		return -EINVAL;
	}
	id = pcm_param_lookup(argv[1]);
	if (id < 0) {
		DMERR("set: %.40s: unknown parameter", argv[1]);
		return -EINVAL;
	}
	r = pcm_param_check_set(id, &err);
	if (!r)
		r = pcm_param_parse_value(id, argv[2], &val, &err);
	if (r) {
		DMERR("set: %s", err.detail);
		return r;
	}
	if (id == PCM_RBER && val) {
		r = pcm_errs_enable(pc);
		if (r)
			return r;
	}
	WRITE_ONCE(pc->live.val[id], val);
	if (id == PCM_RBER)
		pcm_errs_rber(pc, val);
	if (pcm_param_timing(id))
		pcm_timing_update(pc);
	return 0;
}

/* Moves and superblock writes change the backing device: not while suspended. */
static int pcm_msg_writable(struct pcm_c *pc, const char *verb)
{
	if (dm_suspended(pc->ti)) {
		DMERR("%s: device is suspended", verb);
		return -EINVAL;
	}
	if (pc->read_only) {
		DMERR("%s: table is read-only", verb);
		return -EINVAL;
	}
	return 0;
}

#define PCM_MAX_MOVES	1000000

/*
 * "move_gap [N]": the moves that writes already owe, then N more in every
 * domain; all durable when it returns, so status is exact afterwards.
 */
static int pcm_msg_move_gap(struct pcm_c *pc, unsigned int argc, char **argv)
{
	u64 n = 1;
	int r;

	if (argc == 2 && (pcm_parse_u64(argv[1], &n) || n > PCM_MAX_MOVES))
		n = 0;
	if (argc > 2 || !n) {
		DMERR("usage: move_gap [N], N in 1..%u", PCM_MAX_MOVES);
		return -EINVAL;
	}
	r = pcm_msg_writable(pc, "move_gap");
	if (r)
		return r;
	r = pcm_move_rounds(pc, n);
	if (r == -EAGAIN)
		DMERR("move_gap: device is suspending");
	return r;
}

static int pcm_msg_persist(struct pcm_c *pc, unsigned int argc)
{
	int r;

	if (argc != 1) {
		DMERR("usage: persist");
		return -EINVAL;
	}
	r = pcm_msg_writable(pc, "persist");
	if (r)
		return r;
	mutex_lock(&pc->meta_lock);
	pc->copies_differ = true;	/* "write the superblock now": both copies */
	r = pcm_meta_persist(pc, true);
	mutex_unlock(&pc->meta_lock);
	if (r)
		return r;
	pcm_wib_clear_now(pc);
	return pcm_wear_persist(pc, true);
}

/* "registers": every domain's start/gap, in domain order. */
static int pcm_msg_registers(struct pcm_c *pc, unsigned int argc,
			     char *result, unsigned int maxlen)
{
	struct pcm_sg_domain r;
	unsigned int sz = 0;
	u32 d;

	if (argc != 1) {
		DMERR("usage: registers");
		return -EINVAL;
	}
	for (d = 0; d < pc->nr_domains; d++) {
		spin_lock(&pc->dom[d].lock);
		r = pc->dom[d].regs;
		spin_unlock(&pc->dom[d].lock);
		DMEMIT("%s%llu/%llu", d ? " " : "", r.start, r.gap);
	}
	return 1;
}

/* "params": every parameter, its range, defaults and whether set can change it. */
static int pcm_msg_params(unsigned int argc, char *result, unsigned int maxlen)
{
	if (argc != 1) {
		DMERR("usage: params");
		return -EINVAL;
	}
	pcm_params_emit(result, maxlen);
	return 1;
}

/* "lateness": the histogram of completions' lateness (dm-pcm-timing.c). */
static int pcm_msg_lateness(struct pcm_c *pc, unsigned int argc,
			    char *result, unsigned int maxlen)
{
	if (argc != 1) {
		DMERR("usage: lateness");
		return -EINVAL;
	}
	return pcm_timing_lateness(pc, result, maxlen);
}

/* "ranks": every rank's, bus's, the front end's and the tags' figures. */
static int pcm_msg_ranks(struct pcm_c *pc, unsigned int argc,
			 char *result, unsigned int maxlen)
{
	if (argc != 1) {
		DMERR("usage: ranks");
		return -EINVAL;
	}
	return pcm_timing_ranks(pc, result, maxlen);
}

/* "inject <sector> <nbits> [sticky]": bit errors in what a read of it returns. */
static int pcm_msg_inject(struct pcm_c *pc, unsigned int argc, char **argv)
{
	u64 sector, nbits;
	bool sticky = argc == 4 && !strcasecmp(argv[3], "sticky");

	if (argc < 3 || argc > 4 || (argc == 4 && !sticky)) {
		DMERR("usage: inject <sector> <nbits> [sticky]");
		return -EINVAL;
	}
	if (!pc->ecc) {
		/* a medium without a code: rber's raw errors reach the reader, inject's need one */
		DMERR("inject: needs ecc:bch (this device is ecc:none; rber reaches its reads)");
		return -EINVAL;
	}
	if (pcm_parse_u64(argv[1], &sector) || sector >= pc->ti->len) {
		DMERR("inject: sector %.32s: allowed 0..%llu", argv[1],
		      (unsigned long long)pc->ti->len - 1);
		return -EINVAL;
	}
	if (pcm_parse_u64(argv[2], &nbits) || !nbits || nbits > pcm_inject_max(pc)) {
		DMERR("inject: nbits %.32s: allowed 1..%u", argv[2], pcm_inject_max(pc));
		return -EINVAL;
	}
	if (sticky) {
		int r = pcm_inject_save(pc, sector, nbits);

		if (r)
			return r;
	}
	return pcm_inject_add(pc, sector, nbits, sticky);
}

static int pcm_msg_clear_injected(struct pcm_c *pc, unsigned int argc)
{
	if (argc != 1) {
		DMERR("usage: clear_injected");
		return -EINVAL;
	}
	if (!pc->ecc) {
		DMERR("clear_injected: needs ecc:bch (this device is ecc:none)");
		return -EINVAL;
	}
	return pcm_inject_clear(pc);
}

static int pcm_message(struct dm_target *ti, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen)
{
	struct pcm_c *pc = ti->private;

	if (!strcasecmp(argv[0], "stats"))
		return pcm_msg_stats(pc, argc, argv);
	if (!strcasecmp(argv[0], "config"))
		return pcm_msg_config(pc, argc, result, maxlen);
	if (!strcasecmp(argv[0], "set"))
		return pcm_msg_set(pc, argc, argv);
	if (!strcasecmp(argv[0], "move_gap"))
		return pcm_msg_move_gap(pc, argc, argv);
	if (!strcasecmp(argv[0], "persist"))
		return pcm_msg_persist(pc, argc);
	if (!strcasecmp(argv[0], "registers"))
		return pcm_msg_registers(pc, argc, result, maxlen);
	if (!strcasecmp(argv[0], "lateness"))
		return pcm_msg_lateness(pc, argc, result, maxlen);
	if (!strcasecmp(argv[0], "ranks"))
		return pcm_msg_ranks(pc, argc, result, maxlen);
	if (!strcasecmp(argv[0], "params"))
		return pcm_msg_params(argc, result, maxlen);
	if (!strcasecmp(argv[0], "inject"))
		return pcm_msg_inject(pc, argc, argv);
	if (!strcasecmp(argv[0], "clear_injected"))
		return pcm_msg_clear_injected(pc, argc);
	if (!strcasecmp(argv[0], "wear"))
		return pcm_wear_message(pc, argc, result, maxlen);

	DMERR("unknown message: %.40s", argv[0]);
	return -EINVAL;
}

static int pcm_iterate_devices(struct dm_target *ti,
			       iterate_devices_callout_fn fn, void *data)
{
	struct pcm_c *pc = ti->private;
	u64 len = pcm_sg_physical_rows(pc->logical_rows, pc->nr_domains) <<
		  pc->layout.row_shift;

	return fn(ti, pc->dev, pc->start, len, data);
}

/* Whole rows are the device's natural write unit: say so to mkfs and fio. */
static void pcm_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct pcm_c *pc = ti->private;
	unsigned int row = pc->cfg.val[PCM_ROW_SIZE];

	if (limits->io_min < row)
		limits->io_min = row;
	/* parity is computed from the pages before they are written: they must not change */
	if (pc->ecc_on)
		pcm_stable_writes(ti, limits);
}

static struct target_type pcm_target = {
	.name = PCM_TARGET_NAME,
	.version = {DM_PCM_VERSION_MAJOR, DM_PCM_VERSION_MINOR, DM_PCM_VERSION_PATCH},
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = pcm_ctr,
	.dtr = pcm_dtr,
	.map = pcm_map,
	.end_io = pcm_end_io,
	.presuspend = pcm_presuspend,
	.presuspend_undo = pcm_presuspend_undo,
	.postsuspend = pcm_postsuspend,
	.preresume = pcm_preresume,
	.resume = pcm_resume,
	.status = pcm_status,
	.message = pcm_message,
	.iterate_devices = pcm_iterate_devices,
	.io_hints = pcm_io_hints,
};
module_dm(pcm);

MODULE_DESCRIPTION(DM_NAME " target emulating phase-change memory");
MODULE_AUTHOR("The dm-pcm authors");
MODULE_LICENSE("GPL");
MODULE_VERSION(__stringify(DM_PCM_VERSION_MAJOR) "." __stringify(DM_PCM_VERSION_MINOR) "."
	       __stringify(DM_PCM_VERSION_PATCH));
