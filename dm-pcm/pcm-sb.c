// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm superblock codec; see pcm-sb.h.  The decoder trusts nothing: a
 * copy is valid only when its magic, version, size, CRC32 and every field
 * (including each domain's start and gap) are in range.
 */
#include <linux/crc32.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/string.h>
#include <asm/byteorder.h>

#include "pcm-sb.h"

struct pcm_sb_disk_domain {
	__le64 start;
	__le64 gap;
} __packed;

struct pcm_sb_disk {
	__le32 magic;
	__le32 version;
	__le32 csum;		/* CRC32 of the first @size bytes, this field zero */
	__le32 size;		/* bytes covered: whole PCM_SB_BLOCKs */
	__le64 seq;		/* higher wins between the two copies */
	__le64 logical_rows;
	__le32 row_size;
	__le32 domains;
	__le64 randomize_seed;
	__le32 randomize;
	__le32 features;	/* version 2; zero in version 1 */
	__le64 data_offset;
	struct pcm_sb_disk_domain dom[];
	/* then, with PCM_SB_FEAT_ECC: __le64 ecc, the ECC geometry */
	/* then, with PCM_SB_FEAT_WEAR: __le64 wear, rows per wear counter */
} __packed;

/* Bytes the fields take: the header, the domains, the feature words. */
static size_t pcm_sb_used(u32 domains, u32 features)
{
	return sizeof(struct pcm_sb_disk) +
	       (size_t)domains * sizeof(struct pcm_sb_disk_domain) +
	       (features & PCM_SB_FEAT_ECC ? sizeof(__le64) : 0) +
	       (features & PCM_SB_FEAT_WEAR ? sizeof(__le64) : 0);
}

size_t pcm_sb_size(u32 domains, u32 features)
{
	size_t bytes = pcm_sb_used(domains, features);

	return (bytes + PCM_SB_BLOCK - 1) / PCM_SB_BLOCK * PCM_SB_BLOCK;
}

/*
 * CRC32 of the first @size bytes of @buf with the csum field taken as
 * zero, when bytes @used onwards are known to be zero (the encoder's
 * padding): crc32_le_shift() appends them in a few steps, where a table
 * walk over the rest of a 4 KiB block would cost a gap move more than
 * its own I/O.
 */
static u32 pcm_sb_csum(const void *buf, size_t used, size_t size)
{
	static const u8 zero[4];
	const u8 *p = buf;
	size_t at = offsetof(struct pcm_sb_disk, csum);
	u32 crc;

	crc = crc32_le(~0U, p, at);
	crc = crc32_le(crc, zero, sizeof(zero));
	crc = crc32_le(crc, p + at + 4, used - at - 4);
	return ~crc32_le_shift(crc, size - used);
}

/* @len must be at least pcm_sb_size(sb->geo.domains, sb->geo.features). */
void pcm_sb_encode(const struct pcm_sb *sb, void *buf, size_t len)
{
	struct pcm_sb_disk *d = buf;
	size_t size = pcm_sb_size(sb->geo.domains, sb->geo.features);
	__le64 ecc = cpu_to_le64(sb->geo.ecc), wear = cpu_to_le64(sb->geo.wear);
	u8 *extra;
	u32 i;

	memset(buf, 0, len);
	d->magic = cpu_to_le32(PCM_SB_MAGIC);
	d->version = cpu_to_le32(sb->geo.features ? 2 : 1);
	d->size = cpu_to_le32(size);
	d->seq = cpu_to_le64(sb->seq);
	d->logical_rows = cpu_to_le64(sb->geo.logical_rows);
	d->row_size = cpu_to_le32(sb->geo.row_size);
	d->domains = cpu_to_le32(sb->geo.domains);
	d->randomize_seed = cpu_to_le64(sb->geo.randomize_seed);
	d->randomize = cpu_to_le32(sb->geo.randomize);
	d->features = cpu_to_le32(sb->geo.features);
	d->data_offset = cpu_to_le64(sb->geo.data_offset);
	for (i = 0; i < sb->geo.domains; i++) {
		d->dom[i].start = cpu_to_le64(sb->dom[i].start);
		d->dom[i].gap = cpu_to_le64(sb->dom[i].gap);
	}
	extra = (u8 *)&d->dom[sb->geo.domains];
	if (sb->geo.features & PCM_SB_FEAT_ECC) {
		memcpy(extra, &ecc, sizeof(ecc));
		extra += sizeof(ecc);
	}
	if (sb->geo.features & PCM_SB_FEAT_WEAR)
		memcpy(extra, &wear, sizeof(wear));
	d->csum = cpu_to_le32(pcm_sb_csum(buf, pcm_sb_used(sb->geo.domains,
							   sb->geo.features), size));
}

static bool geometry_sane(const struct pcm_sb_geometry *g, u32 max_domains)
{
	return g->row_size >= 512 && g->row_size <= 1048576 &&
	       is_power_of_2(g->row_size) && g->domains >= 1 &&
	       g->domains <= max_domains && g->logical_rows >= g->domains &&
	       g->randomize <= 1;
}

/* Decode one copy into @sb, whose dom[] holds @max_domains entries. */
enum pcm_sb_status pcm_sb_decode(struct pcm_sb *sb, u32 max_domains,
				 const void *buf, size_t len)
{
	const struct pcm_sb_disk *d = buf;
	struct pcm_sb_geometry g = {};
	const u8 *extra;
	u32 i, size, version;
	u64 n;

	if (len < PCM_SB_BLOCK)
		return PCM_SB_CORRUPT;
	if (!memchr_inv(buf, 0, PCM_SB_BLOCK))
		return PCM_SB_ZERO;
	if (le32_to_cpu(d->magic) != PCM_SB_MAGIC)
		return PCM_SB_FOREIGN;
	version = le32_to_cpu(d->version);
	g.features = le32_to_cpu(d->features);
	if (version > PCM_SB_VERSION ||
	    (version == 2 && (g.features & ~PCM_SB_FEATURES_KNOWN)))
		return PCM_SB_NEWER;
	size = le32_to_cpu(d->size);
	g.domains = le32_to_cpu(d->domains);
	if (!version || (version == 1 && g.features) || g.domains > max_domains ||
	    size != pcm_sb_size(g.domains, g.features) || size > len ||
	    le32_to_cpu(d->csum) != pcm_sb_csum(buf, size, size))
		return PCM_SB_CORRUPT;
	g.logical_rows = le64_to_cpu(d->logical_rows);
	g.row_size = le32_to_cpu(d->row_size);
	g.randomize_seed = le64_to_cpu(d->randomize_seed);
	g.randomize = le32_to_cpu(d->randomize);
	g.data_offset = le64_to_cpu(d->data_offset);
	extra = (const u8 *)&d->dom[g.domains];
	if (g.features & PCM_SB_FEAT_ECC) {
		__le64 ecc;

		memcpy(&ecc, extra, sizeof(ecc));
		extra += sizeof(ecc);
		g.ecc = le64_to_cpu(ecc);
		if (!g.ecc)
			return PCM_SB_CORRUPT;
	}
	if (g.features & PCM_SB_FEAT_WEAR) {
		__le64 wear;

		memcpy(&wear, extra, sizeof(wear));
		g.wear = le64_to_cpu(wear);
		if (!g.wear || g.wear > PCM_SB_MAX_WEAR_GROUP || !is_power_of_2(g.wear))
			return PCM_SB_CORRUPT;
	}
	if (!geometry_sane(&g, max_domains))
		return PCM_SB_CORRUPT;
	for (i = 0; i < g.domains; i++) {
		n = pcm_sg_domain_rows(g.logical_rows, g.domains, i);
		sb->dom[i].start = le64_to_cpu(d->dom[i].start);
		sb->dom[i].gap = le64_to_cpu(d->dom[i].gap);
		if (sb->dom[i].start >= n || sb->dom[i].gap > n)
			return PCM_SB_CORRUPT;
	}
	sb->geo = g;
	sb->seq = le64_to_cpu(d->seq);
	return PCM_SB_VALID;
}

/* Which copy to load: 0 or 1, or -1 when neither is valid. */
int pcm_sb_pick(enum pcm_sb_status a, const struct pcm_sb *sa,
		enum pcm_sb_status b, const struct pcm_sb *sb)
{
	if (a == PCM_SB_VALID && b == PCM_SB_VALID)
		return sb->seq > sa->seq ? 1 : 0;
	if (a == PCM_SB_VALID)
		return 0;
	return b == PCM_SB_VALID ? 1 : -1;
}

/*
 * The first field in which the device's geometry differs from the table
 * line's, or NULL: refuse to load, never silently reformat.
 */
const char *pcm_sb_geometry_diff(const struct pcm_sb_geometry *disk,
				 const struct pcm_sb_geometry *table,
				 u64 *disk_val, u64 *table_val)
{
	const struct {
		const char *name;
		u64 disk, table;
	} f[] = {
		{ "offset", disk->data_offset, table->data_offset },
		{ "row_size", disk->row_size, table->row_size },
		{ "domains", disk->domains, table->domains },
		{ "randomize", disk->randomize, table->randomize },
		{ "randomize_seed", disk->randomize_seed, table->randomize_seed },
		{ "logical_rows", disk->logical_rows, table->logical_rows },
		{ "features", disk->features, table->features },
		{ "ecc", disk->ecc, table->ecc },
		{ "wear", disk->wear, table->wear },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (f[i].disk != f[i].table) {
			*disk_val = f[i].disk;
			*table_val = f[i].table;
			return f[i].name;
		}
	}
	return NULL;
}
