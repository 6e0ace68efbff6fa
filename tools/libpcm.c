// SPDX-License-Identifier: GPL-2.0-only
/*
 * libpcm: the module's pure-logic files (parameters, layout, start-gap)
 * behind a flat C interface for tools/pcmctl, so that the length pcmctl
 * prints and the rows it predicts come from the code the kernel runs.
 * Built on the host against tests/host/shim: make -C tests/host libpcm.
 */
#include <linux/errno.h>
#include <linux/kernel.h>

#include "pcm-layout.h"
#include "pcm-params.h"
#include "pcm-startgap.h"

/*
 * Parse a table line's optional words.  0: @vals gets every effective
 * value (in enum pcm_param order, @nvals entries at most); else -EINVAL
 * with the reason in @err.
 */
int libpcm_parse(int argc, char **argv, u64 *vals, int nvals, char *err,
		 size_t errlen)
{
	struct pcm_config cfg;
	struct pcm_err e;
	int i;

	if (pcm_config_parse(&cfg, argc, argv, &e)) {
		scnprintf(err, errlen, "%s: %s", e.what, e.detail);
		return -EINVAL;
	}
	for (i = 0; i < nvals && i < PCM_NR_PARAMS; i++)
		vals[i] = cfg.val[i];
	return 0;
}

int libpcm_param_index(const char *name)
{
	return pcm_param_lookup(name);
}

/*
 * Largest legal table length; out[] = max_length, max_rows, meta_start,
 * sb_sectors.  Returns 0, or -EINVAL with the reason in @err.
 */
int libpcm_length(u64 dev_sectors, u64 offset, u64 meta_dev_sectors,
		  u32 row_size, u32 domains, u64 *out, char *err, size_t errlen)
{
	struct pcm_layout l = {
		.dev_sectors = dev_sectors, .offset = offset,
		.meta_dev_sectors = meta_dev_sectors,
		.row_size = row_size, .domains = domains,
	};
	enum pcm_layout_err e = pcm_layout_compute(&l);

	if (e != PCM_LAYOUT_OK) {
		scnprintf(err, errlen, "%s", pcm_layout_error(e));
		return -EINVAL;
	}
	out[0] = l.max_length;
	out[1] = l.max_rows;
	out[2] = l.meta_start;
	out[3] = l.sb_sectors;
	return 0;
}

/*
 * The backing row of logical row @row: the domain, the Feistel permutation
 * (seed 0: none) and the domain's registers start[d], gap[d].
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
