/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm parameters: the table-driven description of every optional table
 * argument, the presets, and the parser that turns "key:value" words into a
 * configuration.  Pure logic: it builds into the module and into the host
 * unit tests (tests/host), so it includes nothing but basic kernel headers.
 */
#ifndef PCM_PARAMS_H
#define PCM_PARAMS_H

#include <linux/types.h>

/*
 * One entry per optional parameter.  A new parameter is one enum value
 * here plus one row in pcm_params[]; parsing, "set", "config", the table
 * line and the host tests pick it up from there.
 */
enum pcm_param {
	PCM_ROW_SIZE,
	PCM_GAP_INTERVAL,
	PCM_DOMAINS,
	PCM_RANDOMIZE,
	PCM_META_DEVICE,
	PCM_FORMAT,
	/* timing model (pcm-timing.h): geometry, then what "set" changes */
	PCM_CHANNELS,
	PCM_RANKS,
	PCM_STRIPE,
	PCM_READ_NS,
	PCM_WRITE_NS,
	PCM_ZERO_WRITE_NS,
	PCM_CMD_NS,
	PCM_READ_MBPS,
	PCM_WRITE_MBPS,
	PCM_HOST_MBPS,
	PCM_TAGS,
	PCM_COMPLETION,
	PCM_WRITE_CACHE,
	PCM_CTRL_SLOTS,		/* write buffers: a channel's, the front end's */
	PCM_XFER_SLOTS,
	PCM_READ_JITTER_NS,	/* the ranks' stages vary: struct pcm_tm_var */
	PCM_READ_RETRY_NS,
	PCM_READ_RETRY_PPM,
	PCM_READ_RETRIES,
	PCM_WRITE_JITTER_NS,
	PCM_WRITE_RETRY_NS,
	PCM_WRITE_RETRY_PPM,
	PCM_WRITE_RETRIES,
	PCM_SEED,		/* every random stream (pcm-rand.h) */
	PCM_OVERHEAD_NS,	/* not the model's: the host's, taken off holds */
	PCM_ECC,		/* ECC (pcm-ecc.h): the code, then its layout */
	PCM_ECC_CODEWORDS,
	PCM_ECC_T,
	PCM_META_BYTES,
	PCM_RBER,		/* raw bit error rate (pcm-errmodel.h), 1e-18 units */
	PCM_WEAR,		/* wear counters (dm-pcm-wear.c): rows per counter, 0 off */
	PCM_ENDURANCE,		/* writes per row before cells stick */
	PCM_DILATION,		/* the timing model's clock: host ns per device ns */
	PCM_ECC_WORKQUEUE,	/* ECC coded by the worker, never inline (dm-pcm-ecc.c) */
	PCM_NR_PARAMS
};

/*
 * Whether parameter @id is the timing model's (pcm_config_timing() takes
 * it): "set" of one hands the model its new parameters.  The dilation was
 * added last, so that "config" and the table line only ever grow at the end.
 */
static inline bool pcm_param_timing(unsigned int id)
{
	return (id >= PCM_CHANNELS && id <= PCM_OVERHEAD_NS) || id == PCM_DILATION;
}

/* PCM_COMPLETION's values */
enum pcm_completion {
	PCM_COMPLETION_LATE,
	PCM_COMPLETION_EARLY,
};

/* PCM_ECC's values */
enum pcm_ecc_kind {
	PCM_ECC_NONE,
	PCM_ECC_BCH,
};

enum pcm_param_kind {
	PCM_KIND_U64,		/* decimal integer in [min, max] */
	PCM_KIND_POW2,		/* power of two in [min, max] */
	PCM_KIND_ENUM,		/* one of choices[]; value is the index */
	PCM_KIND_FLAG,		/* bare word; value 1 when present */
	PCM_KIND_PATH,		/* a device path, kept in pcm_config.path */
	PCM_KIND_RBER,		/* a probability as decimal text, kept in 1e-18 units */
	PCM_KIND_WEAR,		/* off (0), on (1) or a power of two in [min, max] */
};

#define PCM_PATH_MAX	128	/* longest path a PCM_KIND_PATH value takes */
#define PCM_MAX_DOMAINS	1024

struct pcm_param_desc {
	const char *name;
	const char *unit;	/* shown by "config" and the documentation */
	enum pcm_param_kind kind;
	u64 def;		/* value when neither preset nor table sets it */
	u64 min, max;
	bool runtime;		/* may change with "set" on a live device */
	bool once;		/* acts when loaded; the table line omits it */
	const char * const *choices;	/* PCM_KIND_ENUM, NULL-terminated */
};

struct pcm_preset_value {
	enum pcm_param id;
	u64 val;
};

struct pcm_preset {
	const char *name;
	const char *source;	/* the paper the calibration comes from */
	const struct pcm_preset_value *values;	/* ends with PCM_NR_PARAMS */
};

struct pcm_config {
	u64 val[PCM_NR_PARAMS];
	u64 given;		/* bit per parameter set on the table line */
	char path[PCM_PATH_MAX];	/* the one PCM_KIND_PATH value */
	unsigned int preset;	/* index into pcm_presets[] */
	bool preset_given;
};

extern const struct pcm_param_desc pcm_params[PCM_NR_PARAMS];
extern const struct pcm_preset pcm_presets[];
extern const unsigned int pcm_nr_presets;

/* Most optional words a table line can carry: every parameter and a preset. */
#define PCM_MAX_OPT_WORDS	(PCM_NR_PARAMS + 1)

/*
 * Errors carry two texts: a static phrase for ti->error (the kernel wants
 * no format there) and a detailed one, naming the word and what is
 * allowed, for DMERR.
 */
struct pcm_err {
	char *what;		/* for ti->error, which is a plain char * */
	char detail[160];
};

struct pcm_tm_params;

int pcm_parse_u64(const char *str, u64 *val);
void pcm_config_timing(const struct pcm_config *c, struct pcm_tm_params *p);
void pcm_config_init(struct pcm_config *cfg);
int pcm_config_parse(struct pcm_config *cfg, unsigned int argc, char **argv,
		     struct pcm_err *err);
int pcm_param_lookup(const char *name);
int pcm_param_parse_value(enum pcm_param id, const char *str, u64 *val,
			  struct pcm_err *err);
int pcm_param_check_set(enum pcm_param id, struct pcm_err *err);
unsigned int pcm_config_nr_table_words(const struct pcm_config *cfg);
enum pcm_emit {
	PCM_EMIT_GIVEN,		/* table line: only what was given */
	PCM_EMIT_ALL,		/* "config": every effective value */
	PCM_EMIT_IMA,		/* IMA measurement: ",key=value" */
};

size_t pcm_params_emit(char *buf, size_t len);
size_t pcm_config_emit(const struct pcm_config *cfg, enum pcm_emit mode,
		       char *buf, size_t len);

#endif
