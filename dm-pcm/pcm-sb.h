/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm superblock codec: geometry and start-gap registers, encoded
 * little-endian with a CRC32 so that a torn or corrupted copy is never
 * taken for a valid one.  Two copies are kept; the valid one with the
 * higher sequence number wins.  Pure logic, shared with the host tests.
 */
#ifndef PCM_SB_H
#define PCM_SB_H

#include <linux/types.h>

#include "pcm-startgap.h"

#define PCM_SB_MAGIC		0x6d43506dU	/* "mPCm" on disk */

/*
 * Format versions.  Version 1 is the base format; version 2 adds the
 * features word (version 1's reserved field, always zero there): each bit
 * is a feature that changes how the device is laid out or read (ECC
 * parity, wear counters), so code that does not know a bit must refuse
 * the device.  A superblock without features is written as version 1, so
 * older modules still load it.
 */
#define PCM_SB_VERSION		2
#define PCM_SB_FEAT_ECC		1U	/* per-row parity; geometry ecc word */
#define PCM_SB_FEAT_WEAR	2U	/* wear counters; geometry wear word */
#define PCM_SB_FEAT_WIB		4U	/* WIB region: write-intent bitmap, sticky injects */
#define PCM_SB_FEATURES_KNOWN	(PCM_SB_FEAT_ECC | PCM_SB_FEAT_WEAR | PCM_SB_FEAT_WIB)
#define PCM_SB_BLOCK		4096		/* unit of the on-disk size */
#define PCM_SB_MAX_DOMAINS	65536
#define PCM_SB_MAX_WEAR_GROUP	65536	/* rows per wear counter */

/* What the table line fixes and the device must agree with. */
struct pcm_sb_geometry {
	u64 data_offset;	/* sectors: keeps two tables off one metadata area */
	u64 logical_rows;
	u32 row_size;
	u32 domains;
	u64 randomize_seed;
	u32 randomize;		/* 0: off, 1: Feistel with randomize_seed */
	u32 features;		/* PCM_SB_FEATURES_KNOWN bits */
	u64 ecc;		/* PCM_SB_FEAT_ECC: pcm_ecc_geom_pack(), else 0 */
	u64 wear;		/* PCM_SB_FEAT_WEAR: rows per counter, else 0 */
};

struct pcm_sb {
	u64 seq;
	struct pcm_sb_geometry geo;
	struct pcm_sg_domain *dom;	/* geo.domains entries */
};

enum pcm_sb_status {
	PCM_SB_VALID,
	PCM_SB_ZERO,		/* never written: may be formatted */
	PCM_SB_FOREIGN,		/* not a dm-pcm superblock */
	PCM_SB_CORRUPT,		/* dm-pcm's, but the checksum or a field is bad */
	PCM_SB_NEWER,		/* a version or feature this code does not know */
};

size_t pcm_sb_size(u32 domains, u32 features);
void pcm_sb_encode(const struct pcm_sb *sb, void *buf, size_t len);
enum pcm_sb_status pcm_sb_decode(struct pcm_sb *sb, u32 max_domains,
				 const void *buf, size_t len);
int pcm_sb_pick(enum pcm_sb_status a, const struct pcm_sb *sa,
		enum pcm_sb_status b, const struct pcm_sb *sb);
const char *pcm_sb_geometry_diff(const struct pcm_sb_geometry *disk,
				 const struct pcm_sb_geometry *table,
				 u64 *disk_val, u64 *table_val);

#endif
