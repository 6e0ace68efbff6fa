// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-pcm authors.
 *
 * dm-pcm: a device-mapper target that makes any block device behave like
 * phase-change memory.  Each bio is split at row boundaries and passed to
 * the backing device; the wear-leveling, timing and ECC models are layered
 * on that path (see Documentation/admin-guide/device-mapper/dm-pcm.rst).
 */
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/u64_stats_sync.h>

#include "dm-pcm-compat.h"
#include "pcm-params.h"

#define DM_MSG_PREFIX "pcm"

/*
 * Counters, in the order "dmsetup status" prints them.  The order is part
 * of the interface: append only.
 */
enum pcm_counter {
	PCM_READS,
	PCM_WRITES,
	PCM_READ_BYTES,
	PCM_WRITE_BYTES,
	PCM_FLUSHES,
	PCM_FUA_WRITES,
	PCM_DISCARDS,
	PCM_DISCARD_BYTES,
	PCM_WRITE_ZEROES,
	PCM_WRITE_ZEROES_BYTES,
	PCM_NR_COUNTERS
};

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

/* Per-CPU so that the I/O path never bounces a shared cache line. */
struct pcm_stats {
	u64_stats_t c[PCM_NR_COUNTERS];
	struct u64_stats_sync syncp;
};

struct pcm_c {
	struct dm_dev *dev;
	sector_t start;			/* first backing sector used */
	struct pcm_config cfg;

	struct pcm_stats __percpu *stats;
	spinlock_t lock;		/* protects stats_base */
	u64 stats_base[PCM_NR_COUNTERS];	/* snapshot of "stats reset" */
};

static void pcm_count(struct pcm_stats *s, enum pcm_counter ops,
		      enum pcm_counter bytes, unsigned int size)
{
	u64_stats_inc(&s->c[ops]);
	u64_stats_add(&s->c[bytes], size);
}

static void pcm_account(struct pcm_c *pc, struct bio *bio)
{
	struct pcm_stats *s = get_cpu_ptr(pc->stats);
	unsigned int size = bio->bi_iter.bi_size;

	u64_stats_update_begin(&s->syncp);
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		pcm_count(s, PCM_READS, PCM_READ_BYTES, size);
		break;
	case REQ_OP_WRITE:
		/* core sends a preflush as an empty bio of its own */
		if (bio->bi_opf & REQ_PREFLUSH)
			u64_stats_inc(&s->c[PCM_FLUSHES]);
		if (!size)
			break;
		pcm_count(s, PCM_WRITES, PCM_WRITE_BYTES, size);
		if (bio->bi_opf & REQ_FUA)
			u64_stats_inc(&s->c[PCM_FUA_WRITES]);
		break;
	case REQ_OP_DISCARD:
		pcm_count(s, PCM_DISCARDS, PCM_DISCARD_BYTES, size);
		break;
	case REQ_OP_WRITE_ZEROES:
		pcm_count(s, PCM_WRITE_ZEROES, PCM_WRITE_ZEROES_BYTES, size);
		break;
	default:
		break;
	}
	u64_stats_update_end(&s->syncp);
	put_cpu_ptr(pc->stats);
}

static struct pcm_stats __percpu *pcm_stats_alloc(void)
{
	struct pcm_stats __percpu *stats = alloc_percpu(struct pcm_stats);
	unsigned int cpu;

	if (stats)
		for_each_possible_cpu(cpu)
			u64_stats_init(&per_cpu_ptr(stats, cpu)->syncp);
	return stats;
}

static void pcm_stats_sum(struct pcm_c *pc, u64 *sum)
{
	unsigned int cpu, i, seq;

	memset(sum, 0, sizeof(u64) * PCM_NR_COUNTERS);
	for_each_possible_cpu(cpu) {
		struct pcm_stats *s = per_cpu_ptr(pc->stats, cpu);
		u64 v[PCM_NR_COUNTERS];

		do {
			seq = u64_stats_fetch_begin(&s->syncp);
			for (i = 0; i < PCM_NR_COUNTERS; i++)
				v[i] = u64_stats_read(&s->c[i]);
		} while (u64_stats_fetch_retry(&s->syncp, seq));
		for (i = 0; i < PCM_NR_COUNTERS; i++)
			sum[i] += v[i];
	}
}

static int pcm_map(struct dm_target *ti, struct bio *bio)
{
	struct pcm_c *pc = ti->private;

	pcm_account(pc, bio);
	bio_set_dev(bio, pc->dev->bdev);
	bio->bi_iter.bi_sector = pc->start + dm_target_offset(ti, bio->bi_iter.bi_sector);
	return DM_MAPIO_REMAPPED;
}

static void pcm_dtr(struct dm_target *ti)
{
	struct pcm_c *pc = ti->private;

	if (pc->dev)
		dm_put_device(ti, pc->dev);
	free_percpu(pc->stats);
	kfree(pc);
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
	r = dm_get_device(ti, argv[0], dm_table_get_mode(ti->table), &pc->dev);
	if (r) {
		ti->error = "Device lookup failed";
		return r;
	}
	/* 6.12's dm_get_device() refuses this itself; 6.1's does not */
	if (pc->dev->bdev->bd_dev == disk_devt(dm_disk(dm_table_get_md(ti->table)))) {
		ti->error = "Device cannot map onto itself";
		return -EINVAL;
	}
	return 0;
}

/* The backing device must hold the whole table length, in whole rows. */
static int pcm_check_geometry(struct dm_target *ti, struct pcm_c *pc)
{
	struct block_device *bdev = pc->dev->bdev;
	sector_t dev_sectors = bdev_nr_sectors(bdev);
	u32 row_sectors = pc->cfg.val[PCM_ROW_SIZE] >> SECTOR_SHIFT;
	unsigned int lbs = bdev_logical_block_size(bdev);
	sector_t rows, capacity;

	if (pc->cfg.val[PCM_ROW_SIZE] < lbs) {
		DMERR("row_size:%llu is smaller than the device's %u-byte logical blocks",
		      pc->cfg.val[PCM_ROW_SIZE], lbs);
		ti->error = "Row size below logical block size";
		return -EINVAL;
	}
	if (pc->start & ((lbs >> SECTOR_SHIFT) - 1)) {
		DMERR("offset %llu is not a multiple of the device's %u-byte logical blocks",
		      (unsigned long long)pc->start, lbs);
		ti->error = "Misaligned device offset";
		return -EINVAL;
	}
	if (pc->start >= dev_sectors) {
		DMERR("offset %llu is beyond the device's %llu sectors",
		      (unsigned long long)pc->start, (unsigned long long)dev_sectors);
		ti->error = "Device offset beyond end of device";
		return -EINVAL;
	}
	rows = dev_sectors - pc->start;
	sector_div(rows, row_sectors);
	capacity = rows * row_sectors;
	if (ti->len > capacity) {
		DMERR("length %llu exceeds capacity: largest legal length is %llu sectors",
		      (unsigned long long)ti->len, (unsigned long long)capacity);
		ti->error = "Length exceeds device capacity";
		return -EINVAL;
	}
	return 0;
}

/*
 * Construct a pcm mapping:
 *   <dev_path> <offset> [<#opt_params> <opt_param>...]
 *
 * opt_param is a key:value word or a bare flag:
 *   preset:<none>      defaults for every other parameter
 *   row_size:<bytes>   remap, wear and timing unit (power of two)
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
	spin_lock_init(&pc->lock);

	r = pcm_parse_args(ti, pc, argc, argv);
	if (r)
		goto bad;
	r = pcm_check_geometry(ti, pc);
	if (r)
		goto bad;

	pc->stats = pcm_stats_alloc();
	if (!pc->stats) {
		ti->error = "Cannot allocate statistics";
		r = -ENOMEM;
		goto bad;
	}

	r = dm_set_target_max_io_len(ti, pc->cfg.val[PCM_ROW_SIZE] >> SECTOR_SHIFT);
	if (r) {
		ti->error = "Cannot set row size";
		goto bad;
	}
	ti->num_flush_bios = 1;
	ti->num_discard_bios = 1;
	ti->num_write_zeroes_bios = 1;
	return 0;

bad:
	pcm_dtr(ti);
	return r;
}

static void pcm_status_info(struct pcm_c *pc, char *result, unsigned int maxlen)
{
	u64 sum[PCM_NR_COUNTERS];
	unsigned int i, sz = 0;

	pcm_stats_sum(pc, sum);
	spin_lock(&pc->lock);
	for (i = 0; i < PCM_NR_COUNTERS; i++)
		sum[i] -= pc->stats_base[i];
	spin_unlock(&pc->lock);

	for (i = 0; i < PCM_NR_COUNTERS; i++)
		DMEMIT("%s%s:%llu", i ? " " : "", pcm_counter_names[i], sum[i]);
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
	spin_lock(&pc->lock);
	memcpy(pc->stats_base, sum, sizeof(sum));
	spin_unlock(&pc->lock);
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
	pcm_config_emit(&pc->cfg, PCM_EMIT_ALL, result, maxlen);
	memmove(result, result + 1, strlen(result));
	return 1;
}

/*
 * "set <key> <value>": only parameters marked runtime-tunable change on a
 * live device; the table line keeps what was loaded (reload to persist).
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
	WRITE_ONCE(pc->cfg.val[id], val);
	return 0;
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

	DMERR("unknown message: %.40s", argv[0]);
	return -EINVAL;
}

static int pcm_iterate_devices(struct dm_target *ti,
			       iterate_devices_callout_fn fn, void *data)
{
	struct pcm_c *pc = ti->private;

	return fn(ti, pc->dev, pc->start, ti->len, data);
}

/* Whole rows are the device's natural write unit: say so to mkfs and fio. */
static void pcm_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct pcm_c *pc = ti->private;
	unsigned int row = pc->cfg.val[PCM_ROW_SIZE];

	if (limits->io_min < row)
		limits->io_min = row;
}

static struct target_type pcm_target = {
	.name = "pcm",
	.version = {1, 0, 0},
	.features = DM_TARGET_NOWAIT,
	.module = THIS_MODULE,
	.ctr = pcm_ctr,
	.dtr = pcm_dtr,
	.map = pcm_map,
	.status = pcm_status,
	.message = pcm_message,
	.iterate_devices = pcm_iterate_devices,
	.io_hints = pcm_io_hints,
};
module_dm(pcm);

MODULE_DESCRIPTION(DM_NAME " target emulating phase-change memory");
MODULE_AUTHOR("The dm-pcm authors");
MODULE_LICENSE("GPL");
