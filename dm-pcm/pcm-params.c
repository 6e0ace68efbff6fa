// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm parameter table, presets and "key:value" parser.
 *
 * The table line's optional words are "key:value" or bare flags (the
 * dm-integrity style).  A preset sets defaults first, whatever its position;
 * every other word then overrides it.  Nothing here allocates or sleeps.
 */
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/string.h>

#include "pcm-ecc.h"
#include "pcm-errmodel.h"
#include "pcm-params.h"
#include "pcm-timing.h"

static const char * const completion_choices[] = {
	[PCM_COMPLETION_LATE] = "late",
	[PCM_COMPLETION_EARLY] = "early",
	NULL,
};

static const char * const ecc_choices[] = {
	[PCM_ECC_NONE] = "none",
	[PCM_ECC_BCH] = "bch",
	NULL,
};

const struct pcm_param_desc pcm_params[PCM_NR_PARAMS] = {
	[PCM_ROW_SIZE] = {
		.name = "row_size", .unit = "bytes", .kind = PCM_KIND_POW2,
		.def = 4096, .min = 512, .max = 1048576,
	},
	[PCM_GAP_INTERVAL] = {
		.name = "gap_interval", .unit = "writes", .kind = PCM_KIND_U64,
		.def = 128, .min = 0, .max = 1000000000, .runtime = true,
	},
	[PCM_DOMAINS] = {
		.name = "domains", .unit = "domains", .kind = PCM_KIND_U64,
		.def = 1, .min = 1, .max = PCM_MAX_DOMAINS,
	},
	[PCM_RANDOMIZE] = {
		.name = "randomize", .unit = "seed", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = U64_MAX,
	},
	[PCM_META_DEVICE] = {
		.name = "meta_device", .unit = "path", .kind = PCM_KIND_PATH,
	},
	[PCM_FORMAT] = {
		.name = "format", .unit = "flag", .kind = PCM_KIND_FLAG,
		.once = true,
	},
	[PCM_CHANNELS] = {
		.name = "channels", .unit = "channels", .kind = PCM_KIND_U64,
		.def = 1, .min = 1, .max = PCM_TM_MAX_CHANNELS,
	},
	[PCM_RANKS] = {
		.name = "ranks", .unit = "ranks", .kind = PCM_KIND_U64,
		.def = 1, .min = 1, .max = PCM_TM_MAX_RANKS,
	},
	[PCM_STRIPE] = {
		.name = "stripe", .unit = "rows", .kind = PCM_KIND_U64,
		.def = 1, .min = 1, .max = 1048576,
	},
	[PCM_READ_NS] = {
		.name = "read_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_WRITE_NS] = {
		.name = "write_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_ZERO_WRITE_NS] = {
		.name = "zero_write_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_CMD_NS] = {
		.name = "cmd_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_READ_MBPS] = {
		.name = "read_mbps", .unit = "MB/s", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_MBPS, .runtime = true,
	},
	[PCM_WRITE_MBPS] = {
		.name = "write_mbps", .unit = "MB/s", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_MBPS, .runtime = true,
	},
	[PCM_HOST_MBPS] = {
		.name = "host_mbps", .unit = "MB/s", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_MBPS, .runtime = true,
	},
	[PCM_TAGS] = {
		.name = "tags", .unit = "requests", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_TAGS, .runtime = true,
	},
	[PCM_COMPLETION] = {
		.name = "completion", .unit = "late|early", .kind = PCM_KIND_ENUM,
		.def = PCM_COMPLETION_LATE, .runtime = true,
		.choices = completion_choices,
	},
	[PCM_WRITE_CACHE] = {
		.name = "write_cache", .unit = "bytes", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_CACHE, .runtime = true,
	},
	[PCM_CTRL_SLOTS] = {
		.name = "ctrl_slots", .unit = "rows", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_SLOTS,
	},
	[PCM_XFER_SLOTS] = {
		.name = "xfer_slots", .unit = "rows", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_SLOTS, .runtime = true,
	},
	[PCM_READ_JITTER_NS] = {
		.name = "read_jitter_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_READ_RETRY_NS] = {
		.name = "read_retry_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_READ_RETRY_PPM] = {
		.name = "read_retry_ppm", .unit = "ppm", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_PPM, .runtime = true,
	},
	[PCM_READ_RETRIES] = {
		.name = "read_retries", .unit = "iterations", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_RETRIES, .runtime = true,
	},
	[PCM_WRITE_JITTER_NS] = {
		.name = "write_jitter_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_WRITE_RETRY_NS] = {
		.name = "write_retry_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	[PCM_WRITE_RETRY_PPM] = {
		.name = "write_retry_ppm", .unit = "ppm", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_PPM, .runtime = true,
	},
	[PCM_WRITE_RETRIES] = {
		.name = "write_retries", .unit = "iterations", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_RETRIES, .runtime = true,
	},
	[PCM_SEED] = {
		.name = "seed", .unit = "seed", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = U64_MAX,
	},
	[PCM_OVERHEAD_NS] = {
		.name = "overhead_ns", .unit = "ns", .kind = PCM_KIND_U64,
		.def = 0, .min = 0, .max = PCM_TM_MAX_NS, .runtime = true,
	},
	/* the layout's defaults are PSS's: pcm_ecc_layouts[] */
	[PCM_ECC] = {
		.name = "ecc", .unit = "none|bch", .kind = PCM_KIND_ENUM,
		.def = PCM_ECC_NONE, .choices = ecc_choices,
	},
	[PCM_ECC_CODEWORDS] = {
		.name = "ecc_codewords", .unit = "codewords", .kind = PCM_KIND_U64,
		.def = 6, .min = 1, .max = PCM_ECC_MAX_CODEWORDS,
	},
	[PCM_ECC_T] = {
		.name = "ecc_t", .unit = "bits", .kind = PCM_KIND_U64,
		.def = 4, .min = 1, .max = PCM_ECC_MAX_T,
	},
	[PCM_META_BYTES] = {
		.name = "meta_bytes", .unit = "bytes", .kind = PCM_KIND_U64,
		.def = 64, .min = 0, .max = PCM_ECC_MAX_META,
	},
	[PCM_RBER] = {
		.name = "rber", .unit = "probability", .kind = PCM_KIND_RBER,
		.def = 0, .min = 0, .max = PCM_RBER_MAX, .runtime = true,
	},
	[PCM_WEAR] = {
		.name = "wear", .unit = "off|on|rows", .kind = PCM_KIND_WEAR,
		.def = 0, .min = 0, .max = PCM_WEAR_MAX_GROUP,	/* 0: off */
	},
	/* the default is Qureshi's PCM (start-gap, MICRO'09): 10^8 writes */
	[PCM_ENDURANCE] = {
		.name = "endurance", .unit = "writes", .kind = PCM_KIND_U64,
		.def = 100000000, .min = 1, .max = PCM_WEAR_MAX_ENDURANCE,
	},
	/*
	 * Time dilation (DieCast, NSDI'08): every modeled time K times longer,
	 * every rate K times slower, so that the software above runs K times
	 * faster against the device, as on a faster host.  Set at load: the
	 * model keeps its instants on the device's clock (pcm-timing.h).
	 * Not scaled: overhead_ns, which is this host's cost, measured at the
	 * run's dilation; sizes and counts (write_cache, tags, slots).
	 */
	[PCM_DILATION] = {
		.name = "dilation", .unit = "factor", .kind = PCM_KIND_U64,
		.def = 1, .min = 1, .max = PCM_TM_MAX_DILATION,
	},
	/*
	 * ecc:bch codes reads and whole-row writes inline (in .map and in
	 * the completion, dm-pcm-ecc.c); this flag sends every one of them
	 * through the ECC workqueue instead, as dm-crypt's
	 * no_read_workqueue does the other way round.
	 */
	[PCM_ECC_WORKQUEUE] = {
		.name = "ecc_workqueue", .unit = "flag", .kind = PCM_KIND_FLAG,
	},
};

static const struct pcm_preset_value preset_none[] = {
	{ PCM_NR_PARAMS, 0 },
};

/*
 * The calibrated presets.  Documentation/admin-guide/device-mapper/dm-pcm.rst
 * derives every value from its paper and lists the figures it reproduces;
 * tests/host/test-presets.py checks them through the model.
 */
static const struct pcm_preset_value preset_onyx[] = {
	{ PCM_DOMAINS, 8 },		/* one start-gap domain per bank */
	{ PCM_CHANNELS, 8 },		/* DIMM controllers */
	{ PCM_RANKS, 16 },		/* per controller (a DIMM pair) */
	{ PCM_TAGS, 64 },
	{ PCM_CMD_NS, 1640 },		/* 512 B and 4 KB read rates */
	{ PCM_HOST_MBPS, 1138 },
	{ PCM_READ_NS, 6500 },		/* 4 KB read: 38 us */
	{ PCM_READ_MBPS, 156 },		/* read peak per DIMM pair */
	{ PCM_WRITE_NS, 104000 },	/* 4 KB write, late: 179 us */
	{ PCM_WRITE_MBPS, 59 },		/* 470 MB/s over 8 controllers */
	{ PCM_CTRL_SLOTS, 7 },		/* early over late: +174 % at 512 B */
	{ PCM_XFER_SLOTS, 15 },		/* and +32 % at 1 MB */
	{ PCM_ECC_CODEWORDS, 64 },	/* one per 8-byte word ... */
	{ PCM_ECC_T, 2 },		/* ... with 16 bits of parity */
	{ PCM_META_BYTES, 128 },
	{ PCM_ENDURANCE, 1000000 },	/* section 2.2: 10^6 writes */
	{ PCM_NR_PARAMS, 0 },
};

static const struct pcm_preset_value preset_pss[] = {
	{ PCM_CHANNELS, 1 },		/* one card: 8 PCM channels per 4 KB */
	{ PCM_RANKS, 2 },		/* two banks per channel */
	{ PCM_CMD_NS, 2000 },
	{ PCM_HOST_MBPS, 1600 },
	{ PCM_READ_NS, 15000 },		/* 4 KB read: 35 us */
	{ PCM_READ_MBPS, 266 },		/* 65K 4 KB reads/s */
	{ PCM_WRITE_NS, 112000 },	/* a first program-and-verify pass */
	{ PCM_WRITE_RETRY_NS, 120000 },	/* another program: P5Q's average */
	{ PCM_WRITE_RETRY_PPM, 110000 },	/* 99.9 % of QD1 writes in 240 us */
	{ PCM_WRITE_RETRIES, 16 },	/* longest program 2.03 ms */
	{ PCM_WRITE_MBPS, 352 },	/* 8 x 49.5 MB/s, less metadata */
	{ PCM_WRITE_CACHE, 1048576 },
	{ PCM_ECC_CODEWORDS, 6 },	/* 512 B = 8 x 64 plus 64 B of metadata */
	{ PCM_ECC_T, 4 },
	{ PCM_META_BYTES, 64 },
	{ PCM_ENDURANCE, 1000000 },	/* "reprogrammed at least 10^6 times" */
	{ PCM_NR_PARAMS, 0 },
};

static const struct pcm_preset_value preset_psd[] = {
	{ PCM_RANDOMIZE, 1 },		/* random and sequential alike */
	{ PCM_CHANNELS, 3 },		/* daughter boards */
	{ PCM_RANKS, 22 },
	{ PCM_TAGS, 64 },		/* best throughput at I/O depth 64 */
	{ PCM_CMD_NS, 2000 },
	{ PCM_HOST_MBPS, 2000 },
	{ PCM_READ_NS, 6500 },
	{ PCM_READ_MBPS, 156 },
	{ PCM_WRITE_NS, 668700 },	/* writes 19x slower than reads */
	{ PCM_WRITE_MBPS, 156 },
	{ PCM_NR_PARAMS, 0 },
};

static const struct pcm_preset_value preset_reram[] = {
	{ PCM_CHANNELS, 16 },
	{ PCM_RANKS, 4 },
	{ PCM_CMD_NS, 2013 },		/* QD16: 33 us at 256 B, 46 us at 4 KB */
	{ PCM_HOST_MBPS, 5207 },
	{ PCM_READ_NS, 8018 },		/* QD1 256 B read: min 10.4 us */
	{ PCM_READ_JITTER_NS, 3200 },	/* mean 12.05 us */
	{ PCM_READ_RETRY_NS, 1000 },	/* a re-read: the media's 1 us */
	{ PCM_READ_RETRY_PPM, 47619 },	/* 99.99 % within 15.6 us */
	{ PCM_READ_RETRIES, 4 },
	{ PCM_READ_MBPS, 800 },
	{ PCM_WRITE_NS, 10668 },	/* media write 1 us slower than read */
	{ PCM_WRITE_MBPS, 800 },
	{ PCM_ECC_CODEWORDS, 2 },	/* a codeword per 256-byte LBA */
	{ PCM_ECC_T, 16 },
	{ PCM_META_BYTES, 64 },
	{ PCM_ENDURANCE, 100000 },	/* the model's cells: 10^5 writes */
	{ PCM_NR_PARAMS, 0 },
};

static const struct pcm_preset_value preset_optane[] = {
	{ PCM_CHANNELS, 1 },		/* its channels move a 4 KiB together */
	{ PCM_RANKS, 6 },		/* QD16 reads: 99 % within 41 us */
	{ PCM_HOST_MBPS, 2480 },	/* QD16: 584.8K IOPS, mean 25.5 us */
	{ PCM_READ_NS, 5830 },		/* QD1 read: median 9 us */
	{ PCM_READ_JITTER_NS, 2000 },	/* 99 % within 10 us */
	{ PCM_READ_RETRY_NS, 28000 },	/* 99.999 % within 37 us */
	{ PCM_READ_RETRY_PPM, 30 },
	{ PCM_READ_RETRIES, 1 },
	{ PCM_READ_MBPS, 8600 },	/* and how long a read holds a rank */
	{ PCM_WRITE_NS, 5340 },		/* QD1 write: 9 us (spec: < 10) */
	{ PCM_WRITE_MBPS, 2040 },	/* 500K 4 KiB writes/s, 2,000 MB/s */
	{ PCM_ECC_CODEWORDS, 1 },	/* a codeword per 512-byte LBA */
	{ PCM_ECC_T, 16 },
	{ PCM_META_BYTES, 64 },
	{ PCM_ENDURANCE, 54750 },	/* 30 drive writes a day for 5 years */
	{ PCM_NR_PARAMS, 0 },
};

/*
 * Not PCM: the flash SSD Onyx was compared with (its section 3.1), a
 * fresh 80 GB FusionIO ioDrive, no garbage collection.  Its figures are
 * Onyx's, as ratios: calibrated against preset_onyx (completion:early).
 */
static const struct pcm_preset_value preset_iodrive[] = {
	{ PCM_GAP_INTERVAL, 0 },	/* the FTL remaps: no start-gap */
	{ PCM_CHANNELS, 8 },		/* 96 flash dies ... */
	{ PCM_RANKS, 12 },		/* ... as 8 x 12 */
	{ PCM_CMD_NS, 2000 },
	{ PCM_HOST_MBPS, 1024 },	/* reads: Onyx +11 % at 1 MB */
	{ PCM_READ_NS, 161500 },	/* 90K 512 B reads at 16 in flight */
	{ PCM_WRITE_NS, 486000 },	/* writes < 2 KB: Onyx +72 to +120 % */
	{ PCM_WRITE_CACHE, 16777216 },	/* 16 x 1 MB writes */
	{ PCM_NR_PARAMS, 0 },
};

const struct pcm_preset pcm_presets[] = {
	{ .name = "none", .source = "no delay, no errors", .values = preset_none },
	{ .name = "onyx", .source = "onyx-pcm-storage-array", .values = preset_onyx },
	{ .name = "pss", .source = "pss-ibm-pcm-prototype-storage", .values = preset_pss },
	{ .name = "psd", .source = "psd-characterizing-real-pcm-storage", .values = preset_psd },
	{ .name = "reram", .source = "reram-nvme-ssd-model", .values = preset_reram },
	{ .name = "optane", .source = "intel-optane-ssd-dc-p4800x", .values = preset_optane },
	{ .name = "iodrive", .source = "onyx-pcm-storage-array", .values = preset_iodrive },
};

const unsigned int pcm_nr_presets = ARRAY_SIZE(pcm_presets);

/*
 * The timing model's parameters from a configuration, in the device's time
 * (the dilation scales the model's clock, not these values).
 */
void pcm_config_timing(const struct pcm_config *c, struct pcm_tm_params *p)
{
	*p = (struct pcm_tm_params) {
		.channels = c->val[PCM_CHANNELS],
		.ranks = c->val[PCM_RANKS],
		.stripe_rows = c->val[PCM_STRIPE],
		.tags = c->val[PCM_TAGS],
		.read_ns = c->val[PCM_READ_NS],
		.write_ns = c->val[PCM_WRITE_NS],
		.zero_write_ns = c->val[PCM_ZERO_WRITE_NS],
		.cmd_ns = c->val[PCM_CMD_NS],
		.read_mbps = c->val[PCM_READ_MBPS],
		.write_mbps = c->val[PCM_WRITE_MBPS],
		.host_mbps = c->val[PCM_HOST_MBPS],
		.write_cache = c->val[PCM_WRITE_CACHE],
		.ctrl_slots = c->val[PCM_CTRL_SLOTS],
		.xfer_slots = c->val[PCM_XFER_SLOTS],
		.early = c->val[PCM_COMPLETION] == PCM_COMPLETION_EARLY,
		.read_var = {
			.jitter_ns = c->val[PCM_READ_JITTER_NS],
			.retry_ns = c->val[PCM_READ_RETRY_NS],
			.retry_ppm = c->val[PCM_READ_RETRY_PPM],
			.retries = c->val[PCM_READ_RETRIES],
		},
		.write_var = {
			.jitter_ns = c->val[PCM_WRITE_JITTER_NS],
			.retry_ns = c->val[PCM_WRITE_RETRY_NS],
			.retry_ppm = c->val[PCM_WRITE_RETRY_PPM],
			.retries = c->val[PCM_WRITE_RETRIES],
		},
		.seed = c->val[PCM_SEED],
		/* the one place the factor enters the model: its clock */
		.dilation = c->val[PCM_DILATION],
	};
}

/* Fill both error texts; returns -EINVAL for "return pcm_fail(...)". */
static __printf(3, 4) int pcm_fail(struct pcm_err *err, char *what,
				   const char *fmt, ...)
{
	va_list args;

	err->what = what;
	va_start(args, fmt);
	vscnprintf(err->detail, sizeof(err->detail), fmt, args);
	va_end(args);
	return -EINVAL;
}

static void apply_preset(struct pcm_config *cfg, unsigned int preset)
{
	const struct pcm_preset_value *v;

	for (v = pcm_presets[preset].values; v->id != PCM_NR_PARAMS; v++)
		cfg->val[v->id] = v->val;
	cfg->preset = preset;
}

void pcm_config_init(struct pcm_config *cfg)
{
	unsigned int i;

	memset(cfg, 0, sizeof(*cfg));
	for (i = 0; i < PCM_NR_PARAMS; i++)
		cfg->val[i] = pcm_params[i].def;
	apply_preset(cfg, 0);
}

static int lookup_n(const char *name, size_t n)
{
	unsigned int i;

	for (i = 0; i < PCM_NR_PARAMS; i++)
		if (strlen(pcm_params[i].name) == n &&
		    !strncmp(name, pcm_params[i].name, n))
			return i;
	return -ENOENT;
}

int pcm_param_lookup(const char *name)
{
	return lookup_n(name, strlen(name));
}

/*
 * A decimal u64 and nothing else: no sign, blank, base prefix or the
 * trailing newline kstrtoull() allows, and overflow is an error (the
 * kernel's sscanf("%llu") silently wraps 2^64 to 0).
 */
int pcm_parse_u64(const char *str, u64 *val)
{
	unsigned long long v;
	const char *s;

	if (!*str)
		return -EINVAL;
	for (s = str; *s; s++)
		if (*s < '0' || *s > '9')
			return -EINVAL;
	if (kstrtoull(str, 10, &v))
		return -ERANGE;
	*val = v;
	return 0;
}

static int parse_choice(const struct pcm_param_desc *p, const char *str,
			u64 *val, struct pcm_err *err)
{
	unsigned int i;

	for (i = 0; p->choices[i]; i++) {
		if (!strcmp(str, p->choices[i])) {
			*val = i;
			return 0;
		}
	}
	return pcm_fail(err, "Invalid parameter value",
			"%s:%.32s: not one of the allowed values", p->name, str);
}

/* A probability such as 1e-6 or 0.00025, without floating point. */
static int parse_rber(const struct pcm_param_desc *p, const char *str,
		      u64 *val, struct pcm_err *err)
{
	int r = pcm_rber_parse(str, val);

	if (r == -ERANGE)
		return pcm_fail(err, "Parameter out of range",
				"%s:%.32s: out of range, allowed 0..0.5, at most 18 decimals",
				p->name, str);
	if (r)
		return pcm_fail(err, "Invalid parameter value",
				"%s:%.32s: not a probability such as 1e-6 or 0.001 in 0..0.5",
				p->name, str);
	return 0;
}

/* wear:off, wear:on (a counter per row) or wear:ROWS, a power of two */
static int parse_wear(const struct pcm_param_desc *p, const char *str,
		      u64 *val, struct pcm_err *err)
{
	u64 v;

	if (!strcmp(str, "off") || !strcmp(str, "on")) {
		*val = str[1] == 'n';
		return 0;
	}
	if (pcm_parse_u64(str, &v))
		return pcm_fail(err, "Invalid parameter value",
				"%s:%.32s: not off, on or rows per counter (a power of two in 1..%llu)",
				p->name, str, p->max);
	if (!v || v > p->max || !is_power_of_2(v))
		return pcm_fail(err, "Parameter out of range",
				"%s:%llu: rows per counter must be a power of two in 1..%llu",
				p->name, v, p->max);
	*val = v;
	return 0;
}

int pcm_param_parse_value(enum pcm_param id, const char *str, u64 *val,
			  struct pcm_err *err)
{
	const struct pcm_param_desc *p = &pcm_params[id];
	u64 v;

	if (p->kind == PCM_KIND_ENUM)
		return parse_choice(p, str, val, err);
	if (p->kind == PCM_KIND_PATH || p->kind == PCM_KIND_FLAG)
		return pcm_fail(err, "Invalid parameter value",
				"%s takes no numeric value", p->name);
	if (p->kind == PCM_KIND_RBER)
		return parse_rber(p, str, val, err);
	if (p->kind == PCM_KIND_WEAR)
		return parse_wear(p, str, val, err);
	if (pcm_parse_u64(str, &v))
		return pcm_fail(err, "Invalid parameter value",
				"%s:%.32s: not a decimal number in %llu..%llu",
				p->name, str, p->min, p->max);
	if (v < p->min || v > p->max)
		return pcm_fail(err, "Parameter out of range",
				"%s:%llu: out of range, allowed %llu..%llu %s",
				p->name, v, p->min, p->max, p->unit);
	if (p->kind == PCM_KIND_POW2 && !is_power_of_2(v))
		return pcm_fail(err, "Parameter must be a power of two",
				"%s:%llu: not a power of two in %llu..%llu",
				p->name, v, p->min, p->max);
	*val = v;
	return 0;
}

/* Whether "set" may change parameter @id on a live device. */
int pcm_param_check_set(enum pcm_param id, struct pcm_err *err)
{
	const struct pcm_param_desc *p = &pcm_params[id];

	if (!p->runtime || p->kind == PCM_KIND_FLAG || p->kind == PCM_KIND_PATH)
		return pcm_fail(err, "Parameter not tunable at runtime",
				"%s cannot change on a live device: reload the table",
				p->name);
	return 0;
}

static int parse_preset(struct pcm_config *cfg, const char *name,
			struct pcm_err *err)
{
	unsigned int i;

	if (cfg->preset_given)
		return pcm_fail(err, "Duplicate parameter",
				"preset given twice");
	for (i = 0; i < pcm_nr_presets; i++) {
		if (!strcmp(name, pcm_presets[i].name)) {
			apply_preset(cfg, i);
			cfg->preset_given = true;
			return 0;
		}
	}
	return pcm_fail(err, "Unknown preset", "preset:%.32s: unknown preset",
			name);
}

static int parse_word(struct pcm_config *cfg, const char *word,
		      struct pcm_err *err)
{
	const char *value = strchr(word, ':');
	size_t keylen = value ? (size_t)(value - word) : strlen(word);
	const struct pcm_param_desc *p;
	u64 v;
	int id, r;

	if (value)
		value++;
	if (keylen == 6 && !strncmp(word, "preset", 6)) {
		if (!value)
			return pcm_fail(err, "Missing parameter value",
					"preset needs a name: preset:<name>");
		return 0;	/* applied before the other words */
	}
	id = lookup_n(word, keylen);
	if (id < 0)
		return pcm_fail(err, "Unknown parameter",
				"%.40s: unknown parameter", word);
	p = &pcm_params[id];
	if (cfg->given & BIT_ULL(id))
		return pcm_fail(err, "Duplicate parameter",
				"%s given twice", p->name);
	if (p->kind == PCM_KIND_FLAG) {
		if (value)
			return pcm_fail(err, "Invalid parameter value",
					"%s is a flag and takes no value", p->name);
		v = 1;
	} else if (p->kind == PCM_KIND_PATH) {
		if (!value || !*value)
			return pcm_fail(err, "Missing parameter value",
					"%s needs a value: %s:<%s>", p->name,
					p->name, p->unit);
		if (strscpy(cfg->path, value, sizeof(cfg->path)) < 0)
			return pcm_fail(err, "Invalid parameter value",
					"%s: path longer than %zu bytes", p->name,
					sizeof(cfg->path) - 1);
		v = 1;
	} else {
		if (!value)
			return pcm_fail(err, "Missing parameter value",
					"%s needs a value: %s:<%s>", p->name,
					p->name, p->unit);
		r = pcm_param_parse_value(id, value, &v, err);
		if (r)
			return r;
	}
	cfg->val[id] = v;
	cfg->given |= BIT_ULL(id);
	return 0;
}

/*
 * Parse the optional words of a table line.  The preset goes first so the
 * other words override it, wherever they stand.
 */
int pcm_config_parse(struct pcm_config *cfg, unsigned int argc, char **argv,
		     struct pcm_err *err)
{
	unsigned int i;
	int r;

	BUILD_BUG_ON(PCM_NR_PARAMS > 64);
	pcm_config_init(cfg);
	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "preset:", 7))
			continue;
		r = parse_preset(cfg, argv[i] + 7, err);
		if (r)
			return r;
	}
	for (i = 0; i < argc; i++) {
		r = parse_word(cfg, argv[i], err);
		if (r)
			return r;
	}
	if (cfg->val[PCM_ECC_WORKQUEUE] && cfg->val[PCM_ECC] != PCM_ECC_BCH)
		return pcm_fail(err, "Conflicting parameters",
				"ecc_workqueue: needs ecc:bch (there is no coding to queue)");
	return 0;
}

/* The parameters the table line prints back: given, and not "once". */
static u64 table_params(const struct pcm_config *cfg)
{
	u64 mask = cfg->given;
	unsigned int i;

	for (i = 0; i < PCM_NR_PARAMS; i++)
		if (pcm_params[i].once)
			mask &= ~BIT_ULL(i);
	return mask;
}

unsigned int pcm_config_nr_table_words(const struct pcm_config *cfg)
{
	return cfg->preset_given + hweight64(table_params(cfg));
}

/*
 * Word format per mode: the table line and "config" print " key:value",
 * IMA prints ",key=value" (the kernel's IMA convention).
 */
static size_t emit_param(const struct pcm_config *cfg, unsigned int id,
			 enum pcm_emit mode, char *buf, size_t len)
{
	const struct pcm_param_desc *p = &pcm_params[id];
	char pre = mode == PCM_EMIT_IMA ? ',' : ' ';
	char sep = mode == PCM_EMIT_IMA ? '=' : ':';
	u64 v = cfg->val[id];

	switch (p->kind) {
	case PCM_KIND_FLAG:
		if (mode == PCM_EMIT_IMA)
			return scnprintf(buf, len, ",%s=%c", p->name, v ? 'y' : 'n');
		return v ? scnprintf(buf, len, " %s", p->name) : 0;
	case PCM_KIND_ENUM:
		return scnprintf(buf, len, "%c%s%c%s", pre, p->name, sep,
				 p->choices[v]);
	case PCM_KIND_PATH:
		return v ? scnprintf(buf, len, "%c%s%c%s", pre, p->name, sep,
				     cfg->path) : 0;
	case PCM_KIND_RBER: {
		size_t n = scnprintf(buf, len, "%c%s%c", pre, p->name, sep);

		return n + pcm_rber_format(buf + n, len - n, v);
	}
	case PCM_KIND_WEAR:
		if (v <= 1)
			return scnprintf(buf, len, "%c%s%c%s", pre, p->name, sep,
					 v ? "on" : "off");
		return scnprintf(buf, len, "%c%s%c%llu", pre, p->name, sep, v);
	default:
		return scnprintf(buf, len, "%c%s%c%llu", pre, p->name, sep, v);
	}
}

/*
 * Print the configuration, each word with a leading separator.
 * PCM_EMIT_GIVEN prints only what the table line gave, in canonical order,
 * so that the line recreates the device (without "once" words such as
 * format, which would wipe it); the other modes print every
 * effective value.  Returns the length written.
 */
size_t pcm_config_emit(const struct pcm_config *cfg, enum pcm_emit mode,
		       char *buf, size_t len)
{
	bool all = mode != PCM_EMIT_GIVEN;
	u64 table = table_params(cfg);
	size_t sz = 0;
	unsigned int i;

	if (!len)
		return 0;
	buf[0] = '\0';
	if (all || cfg->preset_given)
		sz += scnprintf(buf + sz, len - sz, "%cpreset%c%s",
				mode == PCM_EMIT_IMA ? ',' : ' ',
				mode == PCM_EMIT_IMA ? '=' : ':',
				pcm_presets[cfg->preset].name);
	for (i = 0; i < PCM_NR_PARAMS; i++)
		if (all || (table & BIT_ULL(i)))
			sz += emit_param(cfg, i, mode, buf + sz, len - sz);
	return sz;
}

static const char *const kind_names[] = {
	[PCM_KIND_U64] = "u64",
	[PCM_KIND_POW2] = "pow2",
	[PCM_KIND_ENUM] = "enum",
	[PCM_KIND_FLAG] = "flag",
	[PCM_KIND_PATH] = "path",
	[PCM_KIND_RBER] = "rber",
	[PCM_KIND_WEAR] = "wear",
};

/* Parameter @id's default under preset @preset. */
static u64 preset_default(unsigned int preset, unsigned int id)
{
	const struct pcm_preset_value *v;

	for (v = pcm_presets[preset].values; v->id != PCM_NR_PARAMS; v++)
		if (v->id == id)
			return v->val;
	return pcm_params[id].def;
}

static size_t emit_value(const struct pcm_param_desc *p, u64 v, char *buf, size_t len)
{
	if (p->kind == PCM_KIND_ENUM)
		return scnprintf(buf, len, "%s", p->choices[v]);
	if (p->kind == PCM_KIND_RBER)
		return pcm_rber_format(buf, len, v);
	if (p->kind == PCM_KIND_WEAR && v <= 1)
		return scnprintf(buf, len, "%s", v ? "on" : "off");
	return scnprintf(buf, len, "%llu", v);
}

/*
 * The "params" reply: a line per parameter, in table order, of key:value
 * words: name, kind, the range (min and max, or the values of an enum),
 * unit, whether "set" changes it on a live device, and its default under
 * each preset (default.<preset>).  The one description the documents,
 * pcmctl and the fuzz oracle take the parameters from.
 */
size_t pcm_params_emit(char *buf, size_t len)
{
	size_t sz = 0;
	unsigned int i, k;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (i = 0; i < PCM_NR_PARAMS; i++) {
		const struct pcm_param_desc *p = &pcm_params[i];

		sz += scnprintf(buf + sz, len - sz, "%sname:%s kind:%s", i ? "\n" : "",
				p->name, kind_names[p->kind]);
		if (p->kind == PCM_KIND_ENUM) {
			sz += scnprintf(buf + sz, len - sz, " values:");
			for (k = 0; p->choices[k]; k++)
				sz += scnprintf(buf + sz, len - sz, "%s%s", k ? "|" : "",
						p->choices[k]);
		} else if (p->kind == PCM_KIND_WEAR) {
			sz += scnprintf(buf + sz, len - sz, " values:off|on min:1 max:%llu",
					p->max);
		} else if (p->kind == PCM_KIND_U64 || p->kind == PCM_KIND_POW2) {
			sz += scnprintf(buf + sz, len - sz, " min:%llu max:%llu", p->min, p->max);
		} else if (p->kind == PCM_KIND_RBER) {
			sz += scnprintf(buf + sz, len - sz, " min:0 max:");
			sz += pcm_rber_format(buf + sz, len - sz, p->max);
		}
		sz += scnprintf(buf + sz, len - sz, " unit:%s set:%s", p->unit,
				p->runtime ? "yes" : "no");
		if (p->kind == PCM_KIND_FLAG || p->kind == PCM_KIND_PATH)
			continue;
		for (k = 0; k < pcm_nr_presets; k++) {
			sz += scnprintf(buf + sz, len - sz, " default.%s:", pcm_presets[k].name);
			sz += emit_value(p, preset_default(k, i), buf + sz, len - sz);
		}
	}
	return sz;
}
