// SPDX-License-Identifier: GPL-2.0-only
/*
 * libpcm: the module's pure-logic files (parameters, layout, start-gap)
 * behind a flat C interface for tools/pcmctl, so that the length pcmctl
 * prints and the rows it predicts come from the code the kernel runs.
 * Only integers, u64 arrays and char buffers cross the interface.
 * Built on the host against tests/host/shim: make -C tests/host libpcm.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math64.h>

#include "pcm-layout.h"
#include "pcm-params.h"
#include "pcm-startgap.h"

/* libpcm_parse()'s out[] */
enum {
	LIBPCM_ROW_SIZE,
	LIBPCM_DOMAINS,
	LIBPCM_RANDOMIZE,	/* the seed, 0 = off */
	LIBPCM_META_GIVEN,	/* 1 when meta_device was given */
	LIBPCM_NR_PARSE_OUT
};

/* libpcm_length()'s out[] */
enum {
	LIBPCM_MAX_LENGTH,
	LIBPCM_MAX_ROWS,
	LIBPCM_META_START,
	LIBPCM_SB_SECTORS,
	LIBPCM_NR_LENGTH_OUT
};

int libpcm_nr_parse_out(void)
{
	return LIBPCM_NR_PARSE_OUT;
}

int libpcm_nr_length_out(void)
{
	return LIBPCM_NR_LENGTH_OUT;
}

/*
 * Parse a table line's optional words.  Returns 0 with the effective
 * values in @out (LIBPCM_NR_PARSE_OUT entries) and every effective
 * parameter in @text, as the "config" message prints them; or -EINVAL
 * with the reason in @text.
 */
int libpcm_parse(int argc, char **argv, u64 *out, char *text, size_t len)
{
	struct pcm_config cfg;
	struct pcm_err e;
	size_t n;

	if (argc < 0 || !len)
		return -EINVAL;
	if (pcm_config_parse(&cfg, argc, argv, &e)) {
		scnprintf(text, len, "%s: %s", e.what, e.detail);
		return -EINVAL;
	}
	out[LIBPCM_ROW_SIZE] = cfg.val[PCM_ROW_SIZE];
	out[LIBPCM_DOMAINS] = cfg.val[PCM_DOMAINS];
	out[LIBPCM_RANDOMIZE] = cfg.val[PCM_RANDOMIZE];
	out[LIBPCM_META_GIVEN] = !!(cfg.given & BIT_ULL(PCM_META_DEVICE));
	/* every word comes with a leading blank: drop the first */
	n = pcm_config_emit(&cfg, PCM_EMIT_ALL, text, len);
	if (n && text[0] == ' ')
		memmove(text, text + 1, n);
	return 0;
}

/*
 * The largest legal table length for a data device of @dev_sectors used
 * from @offset, with metadata at its end or (@meta_given) on a meta_device
 * of @meta_dev_sectors.  Returns 0 with LIBPCM_NR_LENGTH_OUT values
 * in @out, or -EINVAL with the reason in @err.
 */
int libpcm_length(u64 dev_sectors, u64 offset, u32 meta_given, u64 meta_dev_sectors,
		  u32 row_size, u32 domains, u64 *out, char *err, size_t len)
{
	struct pcm_layout l = {
		.dev_sectors = dev_sectors,
		.offset = offset,
		.meta_dev = meta_given,
		.meta_dev_sectors = meta_dev_sectors,
		.row_size = row_size,
		.domains = domains,
	};
	enum pcm_layout_err e;

	if (row_size < 512 || !domains) {
		scnprintf(err, len, "row_size %u or domains %u out of range",
			  row_size, domains);
		return -EINVAL;
	}
	e = pcm_layout_compute(&l);
	if (e != PCM_LAYOUT_OK) {
		scnprintf(err, len, "%s", pcm_layout_error(e));
		return -EINVAL;
	}
	out[LIBPCM_MAX_LENGTH] = l.max_length;
	out[LIBPCM_MAX_ROWS] = l.max_rows;
	out[LIBPCM_META_START] = l.meta_start;
	out[LIBPCM_SB_SECTORS] = l.sb_sectors;
	return 0;
}

/*
 * The backing row of logical row @row of a device of @logical_rows rows
 * in @domains domains: its domain d, the Feistel permutation of its
 * domain row (@seed 0: none), placed by the registers @start[d], @gap[d].
 * The caller keeps @row below @logical_rows and @domains above 0.
 */
u64 libpcm_map(u64 logical_rows, u32 domains, u64 seed, const u64 *start,
	       const u64 *gap, u64 row)
{
	struct pcm_sg_domain dom;
	struct pcm_feistel f;
	u32 d;
	u64 l = div_u64_rem(row, domains, &d);
	u64 n = pcm_sg_domain_rows(logical_rows, domains, d);

	if (seed) {
		pcm_feistel_init(&f, seed, n);
		l = pcm_feistel_permute(&f, n, l);
	}
	dom.start = start[d];
	dom.gap = gap[d];
	return pcm_sg_backing_row(domains, d, pcm_sg_map(&dom, n, l));
}
