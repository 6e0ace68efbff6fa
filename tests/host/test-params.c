// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host unit tests of dm-pcm/pcm-params.c: the table-driven parser, presets,
 * and the table/config/IMA printers.  Every parameter in pcm_params[] is
 * driven through the same boundary and junk values, so a new parameter is
 * tested by being added to the table.
 */
#include "../../dm-pcm/pcm-params.h"
#include "../../dm-pcm/pcm-timing.h"
#include "tap.h"

#define MAXW 16

/* Parse a space-separated line of optional words. */
static int parse_line(struct pcm_config *cfg, const char *line, struct pcm_err *err)
{
	static char buf[8192];
	char *argv[64], *tok;
	unsigned int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (tok = strtok(buf, " "); tok && argc < 64; tok = strtok(NULL, " "))
		argv[argc++] = tok;
	memset(err, 0, sizeof(*err));
	return pcm_config_parse(cfg, argc, argv, err);
}

static int parse1(struct pcm_config *cfg, const char *word, struct pcm_err *err)
{
	char *argv[1] = { (char *)word };

	memset(err, 0, sizeof(*err));
	return pcm_config_parse(cfg, 1, argv, err);
}

static void test_defaults(void)
{
	struct pcm_config cfg;
	struct pcm_err err;
	unsigned int i;

	check(parse_line(&cfg, "", &err) == 0, "empty line");
	for (i = 0; i < PCM_NR_PARAMS; i++)
		check(cfg.val[i] == pcm_params[i].def, "%s default", pcm_params[i].name);
	check(cfg.val[PCM_ROW_SIZE] == 4096, "row_size default 4096");
	check(!cfg.preset_given && cfg.given == 0, "nothing given");
	check(pcm_config_nr_table_words(&cfg) == 0, "no table words");
	check(!strcmp(pcm_presets[cfg.preset].name, "none"), "preset none");
}

static void test_table_sane(void)
{
	unsigned int i, j;

	for (i = 0; i < PCM_NR_PARAMS; i++) {
		const struct pcm_param_desc *p = &pcm_params[i];

		check(p->name && *p->name && p->unit, "param %u named", i);
		check(p->kind == PCM_KIND_FLAG || p->kind == PCM_KIND_ENUM ||
		      (p->min <= p->def && p->def <= p->max), "%s default in range", p->name);
		check(!strchr(p->name, ':') && strcmp(p->name, "preset"), "%s name", p->name);
		for (j = 0; j < i; j++)
			check(strcmp(p->name, pcm_params[j].name), "%s unique", p->name);
		check(pcm_param_lookup(p->name) == (int)i, "%s lookup", p->name);
	}
	check(pcm_nr_presets >= 1 && !strcmp(pcm_presets[0].name, "none"),
	      "preset none first");
}

static void word(char *buf, size_t len, const char *name, const char *val)
{
	snprintf(buf, len, "%s:%s", name, val);
}

/* Every numeric parameter: boundaries, junk, overflow. */
static void test_numeric_values(void)
{
	static const char * const junk[] = {
		"", "-1", "+1", " 1", "1 ", "0x10", "1e3", "abc", "12abc",
		"18446744073709551616", "99999999999999999999999", "1\n", "--",
	};
	struct pcm_config cfg;
	struct pcm_err err;
	char w[128], v[32];
	unsigned int i, j;

	for (i = 0; i < PCM_NR_PARAMS; i++) {
		const struct pcm_param_desc *p = &pcm_params[i];

		if (p->kind != PCM_KIND_U64 && p->kind != PCM_KIND_POW2)
			continue;
		snprintf(v, sizeof(v), "%llu", (unsigned long long)p->min);
		word(w, sizeof(w), p->name, v);
		check(parse1(&cfg, w, &err) == 0 && cfg.val[i] == p->min, "%s min", w);
		check(cfg.given == BIT_ULL(i), "%s marked given", w);
		snprintf(v, sizeof(v), "%llu", (unsigned long long)p->max);
		word(w, sizeof(w), p->name, v);
		check(parse1(&cfg, w, &err) == 0 && cfg.val[i] == p->max, "%s max", w);
		if (p->min > 0) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)p->min - 1);
			word(w, sizeof(w), p->name, v);
			check(parse1(&cfg, w, &err) == -EINVAL, "%s below min", w);
			check(strstr(err.detail, p->name) && err.what, "%s error names it: %s",
			      w, err.detail);
		}
		if (p->max < UINT64_MAX) {
			snprintf(v, sizeof(v), "%llu", (unsigned long long)p->max + 1);
			word(w, sizeof(w), p->name, v);
			check(parse1(&cfg, w, &err) == -EINVAL, "%s above max", w);
		}
		for (j = 0; j < ARRAY_SIZE(junk); j++) {
			word(w, sizeof(w), p->name, junk[j]);
			check(parse1(&cfg, w, &err) == -EINVAL, "%s junk refused", w);
			check(err.what && *err.detail, "%s junk explained", w);
		}
		check(parse1(&cfg, p->name, &err) == -EINVAL, "%s without value", p->name);
		check(!strcmp(err.what, "Missing parameter value"), "%s: %s", p->name, err.what);
		/* 2^32 is accepted exactly when it is in range */
		word(w, sizeof(w), p->name, "4294967296");
		check((parse1(&cfg, w, &err) == 0) == (p->max >= 4294967296ULL), "%s", w);
	}
}

static void test_parse_u64(void)
{
	static const char * const bad[] = {
		"", "-1", "+1", " 1", "1 ", "1\n", "0x10", "1e3", "abc", "12abc",
		"18446744073709551616", "99999999999999999999999",
	};
	unsigned int i;
	u64 v;

	check(pcm_parse_u64("0", &v) == 0 && v == 0, "0");
	check(pcm_parse_u64("4294967296", &v) == 0 && v == 4294967296ULL, "2^32");
	check(pcm_parse_u64("18446744073709551615", &v) == 0 && v == UINT64_MAX, "2^64-1");
	check(pcm_parse_u64("007", &v) == 0 && v == 7, "leading zeros");
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		v = 12345;
		check(pcm_parse_u64(bad[i], &v) < 0 && v == 12345, "'%s' refused, untouched", bad[i]);
	}
}

static void test_pow2(void)
{
	struct pcm_config cfg;
	struct pcm_err err;
	char w[64];
	u64 v;

	for (v = 512; v <= 1048576; v++) {
		snprintf(w, sizeof(w), "row_size:%llu", (unsigned long long)v);
		if (is_power_of_2(v)) {
			check(parse1(&cfg, w, &err) == 0 && cfg.val[PCM_ROW_SIZE] == v, "%s", w);
		} else if (v < 4200 || v % 997 == 0) {
			check(parse1(&cfg, w, &err) == -EINVAL, "%s refused", w);
			check(!strcmp(err.what, "Parameter must be a power of two"), "%s", w);
		}
	}
}

static void test_words(void)
{
	struct pcm_config cfg;
	struct pcm_err err;
	char huge[4200];

	check(parse_line(&cfg, "row_size:4096 row_size:4096", &err) == -EINVAL, "duplicate");
	check(!strcmp(err.what, "Duplicate parameter"), "duplicate phrase: %s", err.what);
	check(parse_line(&cfg, "preset:none preset:none", &err) == -EINVAL, "dup preset");
	check(parse_line(&cfg, "bogus:1", &err) == -EINVAL, "unknown key");
	check(!strcmp(err.what, "Unknown parameter"), "unknown phrase");
	check(parse_line(&cfg, "row:4096", &err) == -EINVAL, "prefix is not a key");
	check(parse_line(&cfg, "row_size_x:4096", &err) == -EINVAL, "longer key");
	check(parse_line(&cfg, "ROW_SIZE:4096", &err) == -EINVAL, "keys are case sensitive");
	check(parse_line(&cfg, ":4096", &err) == -EINVAL, "empty key");
	check(parse_line(&cfg, "row_size:4096:1", &err) == -EINVAL, "two colons");
	check(parse_line(&cfg, "preset", &err) == -EINVAL, "bare preset");
	check(parse_line(&cfg, "preset:", &err) == -EINVAL, "empty preset");
	check(parse_line(&cfg, "preset:bogus", &err) == -EINVAL, "unknown preset");
	check(!strcmp(err.what, "Unknown preset"), "unknown preset phrase");
	memset(huge, '7', sizeof(huge) - 1);
	huge[sizeof(huge) - 1] = '\0';
	memcpy(huge, "row_size:", 9);
	check(parse1(&cfg, huge, &err) == -EINVAL, "4 KiB value");
	check(strlen(err.detail) < sizeof(err.detail), "detail bounded");
	memset(huge, 'k', sizeof(huge) - 1);
	check(parse1(&cfg, huge, &err) == -EINVAL, "4 KiB key");
	check(parse1(&cfg, "\xff\xfe:1", &err) == -EINVAL, "non-UTF-8 key");
}

/* The preset applies first, whatever its position; explicit words win. */
static void test_preset_order(void)
{
	struct pcm_config a, b;
	struct pcm_err err;

	check(parse_line(&a, "row_size:8192 preset:none", &err) == 0, "after");
	check(parse_line(&b, "preset:none row_size:8192", &err) == 0, "before");
	check(a.val[PCM_ROW_SIZE] == 8192 && b.val[PCM_ROW_SIZE] == 8192, "override");
	check(!memcmp(a.val, b.val, sizeof(a.val)) && a.given == b.given, "same config");
	check(a.preset_given && pcm_config_nr_table_words(&a) == 2, "two words");
}

static void split_emit(const char *s, char *out, size_t len)
{
	while (*s == ' ')
		s++;
	snprintf(out, len, "%s", s);
}

/* TABLE output parses back to the same configuration. */
static void test_round_trip(void)
{
	static const char * const lines[] = {
		"", "preset:none", "row_size:512", "row_size:1048576 preset:none",
		"meta_device:/dev/ram1 domains:4", "randomize:18446744073709551615",
		"gap_interval:0 domains:1024 row_size:512",
	};
	struct pcm_config a, b;
	struct pcm_err err;
	char out[512], line[512];
	unsigned int i, words;

	for (i = 0; i < ARRAY_SIZE(lines); i++) {
		check(parse_line(&a, lines[i], &err) == 0, "'%s'", lines[i]);
		pcm_config_emit(&a, PCM_EMIT_GIVEN, out, sizeof(out));
		split_emit(out, line, sizeof(line));
		check(parse_line(&b, line, &err) == 0, "'%s' reparses", line);
		check(!memcmp(a.val, b.val, sizeof(a.val)) && a.given == b.given &&
		      a.preset == b.preset && a.preset_given == b.preset_given,
		      "'%s' round trip via '%s'", lines[i], line);
		words = 0;
		for (char *p = line; *p; p++)
			words += (p == line || p[-1] == ' ') && *p != ' ';
		check(words == pcm_config_nr_table_words(&a), "'%s' word count %u", line, words);
	}
	parse_line(&a, "row_size:8192", &err);
	pcm_config_emit(&a, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " row_size:8192"), "canonical form '%s'", out);
	parse_line(&a, "format meta_device:/dev/x domains:2 gap_interval:4", &err);
	pcm_config_emit(&a, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " gap_interval:4 domains:2 meta_device:/dev/x"),
	      "format is not printed back, order canonical: '%s'", out);
	check(pcm_config_nr_table_words(&a) == 3 && a.val[PCM_FORMAT] == 1,
	      "format acts but is not counted");
}

/* The one path-valued parameter: kept verbatim, bounded, never numeric. */
static void test_path_param(void)
{
	struct pcm_config cfg;
	struct pcm_err err;
	char w[PCM_PATH_MAX + 32];

	check(parse1(&cfg, "meta_device:/dev/disk/by-id/x:y", &err) == 0 &&
	      !strcmp(cfg.path, "/dev/disk/by-id/x:y"), "path with a colon");
	check(parse1(&cfg, "meta_device:", &err) == -EINVAL &&
	      !strcmp(err.what, "Missing parameter value"), "empty path");
	check(parse1(&cfg, "meta_device", &err) == -EINVAL, "no path");
	memset(w, 'a', sizeof(w));
	memcpy(w, "meta_device:", 12);
	w[12 + PCM_PATH_MAX - 1] = '\0';
	check(parse1(&cfg, w, &err) == 0, "longest path");
	w[12 + PCM_PATH_MAX - 1] = 'a';
	w[12 + PCM_PATH_MAX] = '\0';
	check(parse1(&cfg, w, &err) == -EINVAL && strstr(err.detail, "longer"),
	      "path too long: %s", err.detail);
	check(parse_line(&cfg, "meta_device:/a meta_device:/a", &err) == -EINVAL,
	      "duplicate path");
	check(pcm_param_check_set(PCM_META_DEVICE, &err) == -EINVAL, "not settable");
	check(pcm_param_check_set(PCM_GAP_INTERVAL, &err) == 0, "gap_interval settable");
}

static void test_config_and_ima(void)
{
	struct pcm_config cfg;
	struct pcm_err err;
	char out[1024], key[64];
	unsigned int i;

	parse_line(&cfg, "", &err);
	pcm_config_emit(&cfg, PCM_EMIT_ALL, out, sizeof(out));
	check(!strncmp(out, " preset:none", 12), "config starts with preset: '%s'", out);
	for (i = 0; i < PCM_NR_PARAMS; i++) {
		snprintf(key, sizeof(key), " %s", pcm_params[i].name);
		check(pcm_params[i].kind == PCM_KIND_FLAG ||
		      pcm_params[i].kind == PCM_KIND_PATH || strstr(out, key),
		      "config has %s", pcm_params[i].name);
	}
	pcm_config_emit(&cfg, PCM_EMIT_IMA, out, sizeof(out));
	check(!strcmp(out, ",preset=none,row_size=4096,gap_interval=128,domains=1,"
		      "randomize=0,format=n,channels=1,ranks=1,stripe=1,read_ns=0,write_ns=0,zero_write_ns=0,cmd_ns=0,read_mbps=0,write_mbps=0,host_mbps=0,tags=0,completion=late,write_cache=0,ctrl_slots=0,xfer_slots=0,read_jitter_ns=0,read_retry_ns=0,read_retry_ppm=0,read_retries=0,write_jitter_ns=0,write_retry_ns=0,write_retry_ppm=0,write_retries=0,seed=0,overhead_ns=0,ecc=none,ecc_codewords=6,ecc_t=4,meta_bytes=64,rber=0,"
		     "wear=off,endurance=100000000,dilation=1,ecc_workqueue=n"), "ima '%s'", out);
}

/* Truncated buffers stay terminated and in bounds (ASan watches). */
static void test_emit_truncation(void)
{
	struct pcm_config cfg;
	struct pcm_err err;
	size_t len, n;

	parse_line(&cfg, "preset:none row_size:65536", &err);
	for (len = 0; len < 40; len++) {
		char *buf = malloc(len ? len : 1);

		n = pcm_config_emit(&cfg, PCM_EMIT_ALL, buf, len);
		check(len == 0 ? n == 0 : (n < len && strlen(buf) == n), "len %zu", len);
		free(buf);
	}
}

static void test_runtime_set(void)
{
	struct pcm_err err;
	unsigned int i;

	for (i = 0; i < PCM_NR_PARAMS; i++) {
		int r = pcm_param_check_set(i, &err);

		check((r == 0) == (pcm_params[i].runtime && pcm_params[i].kind != PCM_KIND_FLAG),
		      "%s runtime flag honoured", pcm_params[i].name);
	}
	check(pcm_param_check_set(PCM_ROW_SIZE, &err) == -EINVAL, "row_size fixed");
	check(strstr(err.detail, "reload"), "says how: %s", err.detail);
}

/* "params": a line per parameter that says what the table accepts. */
/*
 * The ECC words: the code, its layout per preset, and rber as decimal
 * text kept in 1e-18 units, printed back in the form it parses from.
 */
static void test_ecc_words(void)
{
	static char big[8192];
	struct pcm_config cfg;
	struct pcm_err err;
	char out[256];

	check(parse_line(&cfg, "ecc:bch rber:2.5e-7", &err) == 0, "ecc:bch rber:2.5e-7");
	check(cfg.val[PCM_ECC] == PCM_ECC_BCH && cfg.val[PCM_RBER] == 250000000000ULL,
	      "rber in 1e-18 units: %llu", (unsigned long long)cfg.val[PCM_RBER]);
	pcm_config_emit(&cfg, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " ecc:bch rber:2.5e-7"), "table line '%s'", out);
	check(parse_line(&cfg, "ecc:bch preset:onyx", &err) == 0 &&
	      cfg.val[PCM_ECC_CODEWORDS] == 64 && cfg.val[PCM_ECC_T] == 2 &&
	      cfg.val[PCM_META_BYTES] == 128, "onyx: 64 codewords, t 2, 128 bytes");
	check(parse_line(&cfg, "preset:reram", &err) == 0 && cfg.val[PCM_ECC] == PCM_ECC_NONE &&
	      cfg.val[PCM_ECC_CODEWORDS] == 2 && cfg.val[PCM_ECC_T] == 16,
	      "reram: 2 codewords, t 16, ECC still off");
	check(parse_line(&cfg, "ecc:bch preset:optane", &err) == 0 &&
	      cfg.val[PCM_ECC_CODEWORDS] == 1 && cfg.val[PCM_ECC_T] == 16 &&
	      cfg.val[PCM_META_BYTES] == 64, "optane: 1 codeword, t 16, 64 bytes");
	check(parse_line(&cfg, "rber:0.6", &err) == -EINVAL && strstr(err.detail, "0..0.5"),
	      "rber over 0.5 refused: %s", err.detail);
	check(parse_line(&cfg, "rber:1e-6x", &err) == -EINVAL && strstr(err.detail, "not a probability"),
	      "rber garbage refused: %s", err.detail);
	check(parse_line(&cfg, "ecc:ldpc", &err) == -EINVAL, "ecc:ldpc refused");
	check(parse_line(&cfg, "ecc_t:65", &err) == -EINVAL && strstr(err.detail, "1..64"),
	      "ecc_t range: %s", err.detail);
	check(parse_line(&cfg, "meta_bytes:513", &err) == -EINVAL && strstr(err.detail, "0..512"),
	      "meta_bytes range: %s", err.detail);
	check(pcm_param_check_set(PCM_RBER, &err) == 0, "rber settable");
	check(pcm_param_check_set(PCM_ECC_T, &err) == -EINVAL, "ecc_t is geometry");
	pcm_params_emit(big, sizeof(big));
	check(strstr(big, "\nname:rber kind:rber min:0 max:5e-1 unit:probability set:yes "
		     "default.none:0 ") != NULL, "params: rber's line");
	check(strstr(big, "\nname:ecc kind:enum values:none|bch ") != NULL, "params: ecc's line");
}

/* ecc_workqueue: a bare flag, printed back when given, only with ecc:bch. */
static void test_ecc_workqueue(void)
{
	struct pcm_config cfg, again;
	struct pcm_err err;
	char out[1024], line[1024];

	check(parse_line(&cfg, "ecc:bch", &err) == 0 && cfg.val[PCM_ECC_WORKQUEUE] == 0,
	      "off unless given");
	pcm_config_emit(&cfg, PCM_EMIT_ALL, out, sizeof(out));
	check(!strstr(out, "ecc_workqueue"), "config omits it when off: '%s'", out);
	check(parse_line(&cfg, "ecc_workqueue ecc:bch seed:3", &err) == 0 &&
	      cfg.val[PCM_ECC_WORKQUEUE] == 1, "ecc_workqueue ecc:bch, in any order");
	pcm_config_emit(&cfg, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " seed:3 ecc:bch ecc_workqueue"), "table line '%s'", out);
	check(pcm_config_nr_table_words(&cfg) == 3, "counted as a word");
	split_emit(out, line, sizeof(line));
	check(parse_line(&again, line, &err) == 0 && again.val[PCM_ECC_WORKQUEUE] == 1,
	      "round-trips");
	pcm_config_emit(&cfg, PCM_EMIT_ALL, out, sizeof(out));
	check(strstr(out, " dilation:1 ecc_workqueue") != NULL, "config ends with it: '%s'", out);
	pcm_config_emit(&cfg, PCM_EMIT_IMA, out, sizeof(out));
	check(strstr(out, ",ecc_workqueue=y") != NULL, "ima '%s'", out);
	check(parse_line(&cfg, "preset:pss ecc_workqueue", &err) == -EINVAL,
	      "preset:pss alone has no ECC: refused");
	check(parse_line(&cfg, "ecc_workqueue preset:pss ecc:bch", &err) == 0,
	      "preset:pss ecc:bch ecc_workqueue");
	check(parse_line(&cfg, "ecc_workqueue", &err) == -EINVAL &&
	      !strcmp(err.what, "Conflicting parameters") && strstr(err.detail, "ecc:bch"),
	      "refused without ecc:bch: %s", err.detail);
	check(parse_line(&cfg, "ecc:none ecc_workqueue", &err) == -EINVAL, "and with ecc:none");
	check(parse_line(&cfg, "ecc:bch ecc_workqueue:1", &err) == -EINVAL &&
	      strstr(err.detail, "takes no value"), "a flag takes no value: %s", err.detail);
	check(parse_line(&cfg, "ecc:bch ecc_workqueue ecc_workqueue", &err) == -EINVAL &&
	      strstr(err.detail, "given twice"), "given twice: %s", err.detail);
	check(pcm_param_check_set(PCM_ECC_WORKQUEUE, &err) == -EINVAL, "not settable live");
}

static void test_params_reply(void)
{
	char out[8192], *line, *save = NULL, want[128];
	unsigned int n = 0, i;

	pcm_params_emit(out, sizeof(out));
	check(strstr(out, "name:row_size kind:pow2 min:512 max:1048576 unit:bytes set:no "
			  "default.none:4096 default.onyx:4096 default.pss:4096 "
			  "default.psd:4096 default.reram:4096 default.optane:4096 "
			  "default.iodrive:4096\n") != NULL,
	      "row_size line: '%s'", out);
	check(strstr(out, "name:gap_interval kind:u64 min:0 max:1000000000 unit:writes "
			  "set:yes default.none:128 ") != NULL, "gap_interval line");
	check(strstr(out, "name:completion kind:enum values:late|early unit:late|early "
			  "set:yes default.none:late ") != NULL, "completion line");
	check(strstr(out, "name:tags kind:u64 min:0 max:1024 unit:requests set:yes "
			  "default.none:0 default.onyx:64 default.pss:0 default.psd:64 "
			  "default.reram:0 default.optane:0 default.iodrive:0\n") != NULL,
	      "tags line: presets' defaults");
	check(strstr(out, "name:format kind:flag unit:flag set:no\n") != NULL, "format line");
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		snprintf(want, sizeof(want), "name:%s kind:", pcm_params[n].name);
		check(!strncmp(line, want, strlen(want)), "line %u: '%s'", n, line);
		for (i = 0; line[i]; i++)
			check(line[i] != ' ' || line[i + 1] != ' ', "double blank in '%s'", line);
		n++;
	}
	check(n == PCM_NR_PARAMS, "%u lines for %d parameters", n, PCM_NR_PARAMS);
	/* the message's buffer may be small: truncated, still terminated */
	check(pcm_params_emit(out, 40) <= 39 && strlen(out) == 39, "truncated: %zu", strlen(out));
}

/* wear:off|on|ROWS and endurance:N, with their refusals and presets. */
static void test_wear_words(void)
{
	struct pcm_config cfg;
	struct pcm_err err;
	char out[256];

	check(parse_line(&cfg, "", &err) == 0 && cfg.val[PCM_WEAR] == 0 &&
	      cfg.val[PCM_ENDURANCE] == 100000000, "defaults: off, 10^8");
	check(parse_line(&cfg, "wear:on endurance:1000", &err) == 0 && cfg.val[PCM_WEAR] == 1 &&
	      cfg.val[PCM_ENDURANCE] == 1000, "wear:on is a counter per row");
	pcm_config_emit(&cfg, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " wear:on endurance:1000"), "table line '%s'", out);
	check(parse_line(&cfg, "wear:1024", &err) == 0 && cfg.val[PCM_WEAR] == 1024, "wear:1024");
	pcm_config_emit(&cfg, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " wear:1024"), "table line '%s'", out);
	check(parse_line(&cfg, "wear:off", &err) == 0 && cfg.val[PCM_WEAR] == 0, "wear:off");
	pcm_config_emit(&cfg, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " wear:off"), "table line '%s'", out);
	check(parse_line(&cfg, "wear:1000", &err) == -EINVAL && strstr(err.detail, "power of two"),
	      "wear:1000 refused: %s", err.detail);
	check(parse_line(&cfg, "wear:0", &err) == -EINVAL && strstr(err.detail, "1..65536"),
	      "wear:0 refused: %s", err.detail);
	check(parse_line(&cfg, "wear:131072", &err) == -EINVAL, "wear over 65536 refused");
	check(parse_line(&cfg, "wear:yes", &err) == -EINVAL && strstr(err.detail, "not off, on"),
	      "wear:yes refused: %s", err.detail);
	check(parse_line(&cfg, "wear", &err) == -EINVAL, "wear without a value refused");
	check(parse_line(&cfg, "endurance:0", &err) == -EINVAL, "endurance:0 refused");
	check(parse_line(&cfg, "endurance:1000000000001", &err) == -EINVAL, "endurance over 10^12");
	check(parse_line(&cfg, "preset:reram", &err) == 0 && cfg.val[PCM_ENDURANCE] == 100000,
	      "reram: 10^5");
	check(parse_line(&cfg, "preset:onyx", &err) == 0 && cfg.val[PCM_ENDURANCE] == 1000000,
	      "onyx: 10^6");
	check(parse_line(&cfg, "preset:pss", &err) == 0 && cfg.val[PCM_ENDURANCE] == 1000000,
	      "pss: 10^6");
	check(parse_line(&cfg, "preset:optane", &err) == 0 && cfg.val[PCM_ENDURANCE] == 30 * 365 * 5,
	      "optane: 30 drive writes a day for 5 years");
	check(parse_line(&cfg, "preset:iodrive", &err) == 0 &&
	      cfg.val[PCM_ENDURANCE] == pcm_params[PCM_ENDURANCE].def &&
	      cfg.val[PCM_GAP_INTERVAL] == 0 && cfg.val[PCM_ECC] == PCM_ECC_NONE,
	      "iodrive: no figure for flash's endurance, no start-gap, no ECC");
	check(pcm_param_check_set(PCM_WEAR, &err) == -EINVAL, "wear is geometry");
}

static bool tm_params_equal(const struct pcm_tm_params *a, const struct pcm_tm_params *b)
{
	const struct pcm_tm_var *ra = &a->read_var, *rb = &b->read_var;
	const struct pcm_tm_var *wa = &a->write_var, *wb = &b->write_var;

	return a->channels == b->channels && a->ranks == b->ranks &&
	       a->stripe_rows == b->stripe_rows && a->tags == b->tags &&
	       a->read_ns == b->read_ns && a->write_ns == b->write_ns &&
	       a->zero_write_ns == b->zero_write_ns && a->cmd_ns == b->cmd_ns &&
	       a->read_mbps == b->read_mbps && a->write_mbps == b->write_mbps &&
	       a->host_mbps == b->host_mbps && a->write_cache == b->write_cache &&
	       a->ctrl_slots == b->ctrl_slots && a->xfer_slots == b->xfer_slots &&
	       a->early == b->early && a->seed == b->seed && a->dilation == b->dilation &&
	       ra->jitter_ns == rb->jitter_ns && ra->retry_ns == rb->retry_ns &&
	       ra->retry_ppm == rb->retry_ppm && ra->retries == rb->retries &&
	       wa->jitter_ns == wb->jitter_ns && wa->retry_ns == wb->retry_ns &&
	       wa->retry_ppm == wb->retry_ppm && wa->retries == wb->retries;
}

/*
 * Every parameter the timing model's parameters come from is one that
 * "set" hands to the model (pcm_param_timing(), which dm-pcm-target.c's
 * "set" asks): change each alone and see whether pcm_config_timing()'s
 * result changes.
 */
static void test_timing_params(void)
{
	struct pcm_tm_params a, b;
	struct pcm_config cfg;
	struct pcm_err err;
	unsigned int i;

	for (i = 0; i < PCM_NR_PARAMS; i++) {
		const struct pcm_param_desc *p = &pcm_params[i];

		if (p->kind == PCM_KIND_FLAG || p->kind == PCM_KIND_PATH)
			continue;
		parse_line(&cfg, "", &err);
		pcm_config_timing(&cfg, &a);
		if (p->kind == PCM_KIND_ENUM)
			cfg.val[i] = !cfg.val[i];
		else
			cfg.val[i] = cfg.val[i] == p->max ? p->min : p->max;
		pcm_config_timing(&cfg, &b);
		check(tm_params_equal(&a, &b) || pcm_param_timing(i),
		      "%s feeds the model but set would not update it", p->name);
	}
	check(pcm_param_timing(PCM_OVERHEAD_NS), "overhead_ns: set updates the hold");
	check(!pcm_param_timing(PCM_ECC_T) && !pcm_param_timing(PCM_GAP_INTERVAL) &&
	      !pcm_param_timing(PCM_FORMAT), "not the model's");
}

/*
 * dilation:K, 1 to 1000: refused like every number out of range or not a
 * number, printed back when given, always in "config", last (the words
 * only ever grow at the end), fixed at load, and handed to the model as
 * its clock: the times stay the device's.
 */
static void test_dilation_word(void)
{
	static char big[8192];
	struct pcm_tm_params tp;
	struct pcm_config cfg, again;
	struct pcm_err err;
	char out[1024], line[1024];
	size_t n;

	check(parse_line(&cfg, "", &err) == 0 && cfg.val[PCM_DILATION] == 1, "default 1");
	pcm_config_emit(&cfg, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, ""), "not printed back when not given: '%s'", out);
	pcm_config_emit(&cfg, PCM_EMIT_ALL, out, sizeof(out));
	n = strlen(out);
	check(n > 11 && !strcmp(out + n - 11, " dilation:1"), "config ends with it: '%s'", out);
	check(parse_line(&cfg, "dilation:8 preset:onyx", &err) == 0 &&
	      cfg.val[PCM_DILATION] == 8 && cfg.given == BIT_ULL(PCM_DILATION),
	      "dilation:8 with a preset");
	pcm_config_emit(&cfg, PCM_EMIT_GIVEN, out, sizeof(out));
	check(!strcmp(out, " preset:onyx dilation:8"), "table line '%s'", out);
	split_emit(out, line, sizeof(line));
	check(parse_line(&again, line, &err) == 0 &&
	      !memcmp(cfg.val, again.val, sizeof(cfg.val)), "table line reparses");
	pcm_config_emit(&cfg, PCM_EMIT_ALL, out, sizeof(out));
	n = strlen(out);
	check(n > 11 && !strcmp(out + n - 11, " dilation:8"), "config: '%s'", out);
	pcm_config_emit(&cfg, PCM_EMIT_IMA, out, sizeof(out));
	n = strlen(out);
	check(n > 27 && !strcmp(out + n - 27, ",dilation=8,ecc_workqueue=n"), "ima: '%s'", out);
	pcm_config_timing(&cfg, &tp);
	check(tp.dilation == 8 && tp.read_ns == 6500 && tp.read_mbps == 156 &&
	      tp.cmd_ns == 1640 && tp.write_ns == 104000 && tp.tags == 64 &&
	      tp.ctrl_slots == 7, "the model gets the factor and the device's times");
	check(parse_line(&cfg, "dilation:1000", &err) == 0 && cfg.val[PCM_DILATION] == 1000,
	      "dilation:1000");
	check(parse_line(&cfg, "dilation:0", &err) == -EINVAL &&
	      !strcmp(err.what, "Parameter out of range") &&
	      !strcmp(err.detail, "dilation:0: out of range, allowed 1..1000 factor"),
	      "dilation:0: %s", err.detail);
	check(parse_line(&cfg, "dilation:1001", &err) == -EINVAL &&
	      strstr(err.detail, "1..1000"), "dilation:1001: %s", err.detail);
	check(parse_line(&cfg, "dilation:2.5", &err) == -EINVAL &&
	      !strcmp(err.detail, "dilation:2.5: not a decimal number in 1..1000"),
	      "dilation:2.5: %s", err.detail);
	check(parse_line(&cfg, "dilation:-8", &err) == -EINVAL, "dilation:-8");
	check(parse_line(&cfg, "dilation", &err) == -EINVAL &&
	      !strcmp(err.detail, "dilation needs a value: dilation:<factor>"),
	      "dilation alone: %s", err.detail);
	check(parse_line(&cfg, "dilation:8 dilation:8", &err) == -EINVAL &&
	      !strcmp(err.what, "Duplicate parameter"), "twice: %s", err.detail);
	check(pcm_param_check_set(PCM_DILATION, &err) == -EINVAL &&
	      strstr(err.detail, "dilation cannot change on a live device: reload"),
	      "set refuses it: %s", err.detail);
	check(pcm_param_timing(PCM_DILATION), "yet it is the model's");
	check(PCM_DILATION == PCM_NR_PARAMS - 2 && PCM_ECC_WORKQUEUE == PCM_NR_PARAMS - 1,
	      "the last word but ecc_workqueue, added after it");
	pcm_params_emit(big, sizeof(big));
	check(strstr(big, "\nname:dilation kind:u64 min:1 max:1000 unit:factor "
		     "set:no default.none:1 default.onyx:1 default.pss:1 default.psd:1 "
		     "default.reram:1 default.optane:1 default.iodrive:1\n"
		     "name:ecc_workqueue ") != NULL,
	      "params: its line, then ecc_workqueue's");
	check(!strcmp(strrchr(big, '\n'), "\nname:ecc_workqueue kind:flag unit:flag set:no"),
	      "params: ecc_workqueue's line, last: '%s'", strrchr(big, '\n'));
}

int main(void)
{
	RUN(test_defaults);
	RUN(test_table_sane);
	RUN(test_parse_u64);
	RUN(test_numeric_values);
	RUN(test_pow2);
	RUN(test_words);
	RUN(test_preset_order);
	RUN(test_round_trip);
	RUN(test_config_and_ima);
	RUN(test_emit_truncation);
	RUN(test_runtime_set);
	RUN(test_path_param);
	RUN(test_params_reply);
	RUN(test_ecc_words);
	RUN(test_ecc_workqueue);
	RUN(test_wear_words);
	RUN(test_timing_params);
	RUN(test_dilation_word);
	return tap_done();
}
