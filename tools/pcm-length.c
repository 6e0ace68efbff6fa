// SPDX-License-Identifier: GPL-2.0-only
/*
 * pcm-length DEV [WORD...]: what "pcmctl length DEV WORD..." prints (the
 * largest legal length of a table over all of DEV, offset 0, with those
 * optional words), from the same libpcm calls, as one small process: the
 * VM tests' pcm_len (tests/vm/lib/lib.sh) calls it before every table they
 * create, and under TCG a python3 start with pcmctl's imports costs
 * seconds.  pcmctl stays the tool for people; tests/host/test-pcmctl.py
 * checks that the two agree.  Built with libpcm: make tools.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

/* tools/libpcm.c's (its u64 and u32 are these) */
typedef unsigned long long u64;
typedef uint32_t u32;
int libpcm_nr_parse_out(void);
int libpcm_nr_length_out(void);
int libpcm_parse(int argc, char **argv, u64 *out, char *text, size_t len);
int libpcm_length(u64 dev_sectors, u32 data_block, u64 offset, u32 meta_given,
		  u64 meta_dev_sectors, u32 meta_block, u32 row_size, u32 domains, u32 row_meta,
		  u32 wear_group, u64 *out, char *err, size_t len);

#define TEXT_MAX 4096
/* libpcm_parse()'s and libpcm_length()'s out[], as tools/libpcm.c has them */
enum { P_ROW_SIZE, P_DOMAINS, P_RANDOMIZE, P_META_GIVEN, P_ROW_META, P_WEAR, P_CHANNELS, P_RANKS,
       P_GAP_INTERVAL, P_ENDURANCE, P_NR };
enum { L_MAX_LENGTH, L_NR = 6 };

/* Size of @path in sectors and its logical block size (*@block), as
 * pcmctl's dev_geometry(): a block device's end by lseek and BLKSSZGET,
 * else the file's size / 512 and 512.  -1 with a message if none. */
static long long dev_sectors(const char *path, unsigned int *block)
{
	struct stat st;
	off_t end;
	int fd, bs = 0;

	*block = 512;
	if (stat(path, &st)) {
		fprintf(stderr, "pcm-length: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISBLK(st.st_mode))
		return st.st_size / 512;
	fd = open(path, O_RDONLY);
	if (fd < 0 || ioctl(fd, BLKSSZGET, &bs)) {
		fprintf(stderr, "pcm-length: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*block = bs;
	end = lseek(fd, 0, SEEK_END);
	close(fd);
	return end < 0 ? -1 : end / 512;
}

int main(int argc, char **argv)
{
	static char text[TEXT_MAX];
	u64 p[P_NR], l[L_NR];
	const char *meta = NULL;
	long long size, meta_size = 0;
	unsigned int block, meta_block;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: pcm-length DEV [WORD...]\n");
		return 2;
	}
	if (libpcm_nr_parse_out() != P_NR || libpcm_nr_length_out() != L_NR) {
		fprintf(stderr, "pcm-length: built against another libpcm.c\n");
		return 2;
	}
	for (i = 2; i < argc; i++) {
		const char *w = argv[i];

		if (!*w || strpbrk(w, " \t\n\v\f\r")) {
			fprintf(stderr, "pcm-length: '%s': a table word cannot be empty or hold blanks\n", w);
			return 1;
		}
		/* the last meta_device word, as pcmctl's word_value() */
		if (!strncmp(w, "meta_device:", 12))
			meta = w + 12;
	}
	if (libpcm_parse(argc - 2, argv + 2, p, text, sizeof(text))) {
		fprintf(stderr, "pcm-length: %s\n", text);
		return 1;
	}
	size = dev_sectors(argv[1], &block);
	if (size < 0)
		return 1;
	meta_block = block;
	if (p[P_META_GIVEN]) {
		meta_size = meta ? dev_sectors(meta, &meta_block) : -1;
		if (meta_size < 0)
			return 1;
	}
	if (libpcm_length(size, block, 0, p[P_META_GIVEN], meta_size, meta_block, p[P_ROW_SIZE],
			  p[P_DOMAINS], p[P_ROW_META], p[P_WEAR], l, text, sizeof(text))) {
		fprintf(stderr, "pcm-length: %s (%lld sectors): %s (offset 0, row_size %llu, domains %llu)\n",
			argv[1], size, text, (unsigned long long)p[P_ROW_SIZE],
			(unsigned long long)p[P_DOMAINS]);
		return 1;
	}
	printf("%llu\n", (unsigned long long)l[L_MAX_LENGTH]);
	return 0;
}
