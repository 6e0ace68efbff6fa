// SPDX-License-Identifier: GPL-2.0-only
/*
 * bdb-swap: the BerkeleyDB benchmark of the Onyx paper (Akel et al.,
 * HotStorage '11, Section 3, Figure 5): full transactions, synchronous
 * I/O, and a workload that transactionally swaps the values of two keys,
 * over a hash table or a B-tree.
 *
 *   bdb-swap --dir DIR --load [--access hash|btree] [--keys N] [--value-bytes B]
 *   bdb-swap --dir DIR [--threads T] [--warmup S] [--seconds S] [--progress] ...
 *   bdb-swap --dir DIR --verify
 *
 * DIR is the environment's home, on the file system under test: the
 * database (swap.db), a tiny table of what was loaded (meta.db) and the
 * log (log.*).  The environment's regions are the process's own memory
 * (DB_PRIVATE): nothing but the database files and the log goes to DIR,
 * and BerkeleyDB's cache (--cache-mb) is malloc'ed, so the working set
 * can exceed it and the misses read swap.db through the kernel.
 *
 * Every open runs recovery (DB_RECOVER), so a run or a verify after a
 * crash starts from the last committed state.  No DB_TXN_NOSYNC and no
 * DB_TXN_WRITE_NOSYNC: every commit writes and flushes the log
 * (BerkeleyDB's fdatasync) before it returns, and commits from several
 * threads may share one flush (its group commit: the log's syncs are
 * reported beside the commits).  Lock conflicts run the deadlock detector
 * (DB_LOCK_DEFAULT); a transaction it picks gets DB_LOCK_DEADLOCK, is
 * aborted and tried again with the same keys, and counted.
 *
 * A transaction: two distinct keys drawn uniformly at random, both read
 * with DB_RMW (write locks at once), each value put under the other key,
 * commit.  Its latency runs from the first begin to the commit's return,
 * retries included (CLOCK_MONOTONIC).
 *
 * Checkpoints (DB_ENV->txn_checkpoint: the cache's dirty pages written to
 * swap.db and synced; log files no longer needed removed) come from a
 * thread of their own: every --checkpoint-s seconds of CLOCK_MONOTONIC,
 * or every --checkpoint-txns commits (no clock at all).  In a VM whose
 * devices are dilated by K, CLOCK_MONOTONIC is the guest's clock, which
 * the dilation does not stretch: a host K times faster would make K
 * times more commits between two checkpoints of the same period, so
 * scale the period by K, or count commits.  BerkeleyDB sleeps on that
 * clock too, whole seconds: a checkpoint that finds a dirty page pinned
 * by a transaction sleeps 1 s before it tries again (mp_sync.c), and so
 * does a transaction that finds no buffer to evict (mp_alloc.c); those
 * sleeps are not stretched either.  The report lists each checkpoint of
 * the measured window (its start and its length).
 *
 * Output: one JSON object on stdout at the end; with --progress, one JSON
 * line a second on stderr ({"t": s since start, "phase", "ops_per_s",
 * "aborted"}).  --verify checks that the values are exactly the loaded
 * ones, each under some key (each value holds its key's number at load
 * and a pattern made from it, so the check is exact): any number of
 * atomic swaps keeps that multiset; a torn or lost swap does not.  Exit
 * 0, 1 on an error or a failed verify, 2 on a usage error.
 *
 * Built by tools/Makefile (make -C tools bdb-swap) against libdb5.3-dev;
 * tests/host/test-bdb-swap.py tests it; tools/app/bdb.toml is its spec.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <db.h>

#define DB_FILE "swap.db"
#define META_FILE "meta.db"
#define LOAD_BATCH 1000		/* keys per transaction of --load */
#define MAX_THREADS 256

/* ---- options ----------------------------------------------------------- */

enum mode { RUN, LOAD, VERIFY, CLOBBER };

static struct {
	const char *dir;
	enum mode mode;
	DBTYPE access;		/* DB_UNKNOWN: not given */
	uint32_t keys;		/* 0: not given */
	uint32_t value_bytes;	/* 0: not given */
	uint32_t page_bytes;
	double cache_mb;
	unsigned threads;
	double seconds, warmup;
	uint64_t seed;
	double checkpoint_s;	/* 0: no timed checkpoints */
	uint64_t checkpoint_txns;	/* 0: none counted */
	bool progress;
} opt = {
	.access = DB_UNKNOWN, .page_bytes = 4096, .cache_mb = 4, .threads = 1,
	.seconds = 10, .seed = 1, .checkpoint_s = 10,
};

static const char usage[] =
"usage: bdb-swap --dir DIR [--load | --verify] [options]\n"
"  --dir DIR            the environment's home (on the file system under test)\n"
"  --load               create and fill the database, then exit (DIR's swap.db must not exist)\n"
"  --verify             check that the values are the loaded ones, each once; exit 1 if not\n"
"  (neither)            run the swap transactions\n"
"  --access hash|btree  access method (--load; default hash)\n"
"  --keys N             keys (--load; default 100000)\n"
"  --value-bytes B      bytes of each value, >= 4 (--load; default 100)\n"
"  --page-bytes B       database page size (--load; default 4096)\n"
"  --cache-mb M         BerkeleyDB's own cache (default 4)\n"
"  --threads T          threads running transactions (default 1)\n"
"  --warmup S           seconds run before the measured ones, not counted (default 0)\n"
"  --seconds S          measured seconds (default 10)\n"
"  --seed N             the threads' random keys (default 1)\n"
"  --checkpoint-s S     a checkpoint every S s of CLOCK_MONOTONIC (default 10; 0: none)\n"
"  --checkpoint-txns N  a checkpoint every N commits instead (no clock)\n"
"  --progress           a JSON line a second on stderr\n"
"  --clobber            (tests) copy key 0's value over key 1's: --verify must then fail\n";

static void __attribute__((format(printf, 1, 2))) die_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bdb-swap: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage);
	exit(2);
}

static uint64_t parse_u64(const char *name, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max)
		die_usage("bad %s", name);
	return v;
}

static double parse_seconds(const char *name, const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= 0 && v < 1e7))
		die_usage("bad %s", name);
	return v;
}

static void parse_options(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "load", no_argument, NULL, 'L' },
		{ "verify", no_argument, NULL, 'V' },
		{ "clobber", no_argument, NULL, 'C' },
		{ "access", required_argument, NULL, 'a' },
		{ "keys", required_argument, NULL, 'k' },
		{ "value-bytes", required_argument, NULL, 'v' },
		{ "page-bytes", required_argument, NULL, 'p' },
		{ "cache-mb", required_argument, NULL, 'c' },
		{ "threads", required_argument, NULL, 't' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "seconds", required_argument, NULL, 's' },
		{ "seed", required_argument, NULL, 'S' },
		{ "checkpoint-s", required_argument, NULL, 'K' },
		{ "checkpoint-txns", required_argument, NULL, 'N' },
		{ "progress", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': opt.dir = optarg; break;
		case 'L': opt.mode = LOAD; break;
		case 'V': opt.mode = VERIFY; break;
		case 'C': opt.mode = CLOBBER; break;
		case 'a':
			if (!strcmp(optarg, "hash"))
				opt.access = DB_HASH;
			else if (!strcmp(optarg, "btree"))
				opt.access = DB_BTREE;
			else
				die_usage("--access is hash or btree, not '%s'", optarg);
			break;
		case 'k': opt.keys = parse_u64("--keys", optarg, 2, UINT32_MAX - 1); break;
		case 'v': opt.value_bytes = parse_u64("--value-bytes", optarg, 4, 65536); break;
		case 'p':
			opt.page_bytes = parse_u64("--page-bytes", optarg, 512, 65536);
			if (opt.page_bytes & (opt.page_bytes - 1))
				die_usage("--page-bytes is a power of two, not %s", optarg);
			break;
		case 'c':
			opt.cache_mb = strtod(optarg, &end);
			if (end == optarg || *end || !(opt.cache_mb >= 0.03 && opt.cache_mb <= 4000))
				die_usage("bad --cache-mb (0.03 to 4000)");
			break;
		case 't': opt.threads = parse_u64("--threads", optarg, 1, MAX_THREADS); break;
		case 'w': opt.warmup = parse_seconds("--warmup", optarg); break;
		case 's': opt.seconds = parse_seconds("--seconds", optarg); break;
		case 'S': opt.seed = parse_u64("--seed", optarg, 0, UINT64_MAX); break;
		case 'K': opt.checkpoint_s = parse_seconds("--checkpoint-s", optarg); break;
		case 'N':
			opt.checkpoint_txns = parse_u64("--checkpoint-txns", optarg, 1, UINT64_MAX);
			opt.checkpoint_s = 0;
			break;
		case 'P': opt.progress = true; break;
		case 'h': fputs(usage, stdout); exit(0);
		default: die_usage("unknown option");
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	if (!opt.dir)
		die_usage("--dir is required");
	if (opt.mode == RUN && opt.seconds <= 0)
		die_usage("--seconds must be more than 0");
}

/* ---- time, random keys, values ----------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec ns_to_ts(uint64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
}

static void sleep_until(uint64_t ns)
{
	struct timespec ts = ns_to_ts(ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* splitmix64: a thread's stream of random numbers from its seed */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A key is its number, big-endian, so that a B-tree keeps them in order. */
static void key_bytes(uint32_t n, unsigned char out[4])
{
	out[0] = n >> 24;
	out[1] = n >> 16;
	out[2] = n >> 8;
	out[3] = n;
}

static uint32_t key_number(const unsigned char in[4])
{
	return (uint32_t)in[0] << 24 | (uint32_t)in[1] << 16 | (uint32_t)in[2] << 8 | in[3];
}

/* The value loaded under key @n: @n (4 bytes, as a key), then a pattern
 * made from @n, so that a value cut or mixed with another one shows. */
static void fill_value(uint32_t n, unsigned char *out, uint32_t len)
{
	key_bytes(n, out);
	for (uint32_t i = 4; i < len; i++)
		out[i] = (unsigned char)(n * 131 + i * 7);
}

/* ---- the environment --------------------------------------------------- */

static DB_ENV *env;

static void fail(const char *what, int ret)
{
	fprintf(stderr, "bdb-swap: %s: %s\n", what, db_strerror(ret));
	exit(1);
}

static void open_env(void)
{
	uint64_t cache = (uint64_t)(opt.cache_mb * 1048576);
	int ret;

	if (mkdir(opt.dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "bdb-swap: %s: %s\n", opt.dir, strerror(errno));
		exit(1);
	}
	if ((ret = db_env_create(&env, 0)))
		fail("db_env_create", ret);
	env->set_errfile(env, stderr);
	env->set_errpfx(env, "bdb-swap");
	if ((ret = env->set_cachesize(env, cache >> 30, cache & ((1u << 30) - 1), 1)))
		fail("set_cachesize", ret);
	/* a lock per page a transaction touches: room for --load's batches
	 * of 1,000 keys and the B-tree's splits (the default is 1,000).  What
	 * is resident is what is used: the process's anonymous memory, 4
	 * threads, was 1.7 MB with --cache-mb 0.25 and 10.5 MB with 4 */
	env->set_lk_max_locks(env, 10000);
	env->set_lk_max_objects(env, 10000);
	env->set_lk_max_lockers(env, 4 * MAX_THREADS);
	if ((ret = env->set_lk_detect(env, DB_LOCK_DEFAULT)))
		fail("set_lk_detect", ret);
	/* log files the last checkpoint made useless go: the log stays small */
	if ((ret = env->log_set_config(env, DB_LOG_AUTO_REMOVE, 1)))
		fail("log_set_config", ret);
	ret = env->open(env, opt.dir, DB_CREATE | DB_RECOVER | DB_PRIVATE | DB_THREAD |
			DB_INIT_TXN | DB_INIT_LOCK | DB_INIT_LOG | DB_INIT_MPOOL, 0);
	if (ret)
		fail(opt.dir, ret);
}

static uint64_t cache_bytes(void)
{
	u_int32_t gb = 0, b = 0;
	int n;

	env->get_cachesize(env, &gb, &b, &n);
	return (uint64_t)gb << 30 | b;
}

/* meta.db: what --load made, so that the other modes need not be told. */
static const char *const meta_names[] = { "access", "keys", "value_bytes" };

static void meta_put(DB *meta, DB_TXN *txn, const char *name, uint32_t v)
{
	DBT k = { .data = (void *)name, .size = strlen(name) };
	DBT d = { .data = &v, .size = sizeof(v) };
	int ret = meta->put(meta, txn, &k, &d, 0);

	if (ret)
		fail("meta.db put", ret);
}

static void meta_read(void)
{
	uint32_t vals[3];
	DB *meta;
	int ret;

	if ((ret = db_create(&meta, env, 0)))
		fail("db_create", ret);
	ret = meta->open(meta, NULL, META_FILE, NULL, DB_BTREE, DB_THREAD | DB_AUTO_COMMIT, 0);
	if (ret) {
		fprintf(stderr, "bdb-swap: %s/%s: %s (not loaded: run --load first)\n",
			opt.dir, META_FILE, db_strerror(ret));
		exit(1);
	}
	for (int i = 0; i < 3; i++) {
		DBT k = { .data = (void *)meta_names[i], .size = strlen(meta_names[i]) };
		DBT d = { .data = &vals[i], .ulen = sizeof(vals[i]), .flags = DB_DBT_USERMEM };

		if ((ret = meta->get(meta, NULL, &k, &d, 0)))
			fail("meta.db get", ret);
	}
	meta->close(meta, 0);
	if ((opt.access != DB_UNKNOWN && opt.access != (DBTYPE)vals[0]) ||
	    (opt.keys && opt.keys != vals[1]) || (opt.value_bytes && opt.value_bytes != vals[2])) {
		fprintf(stderr, "bdb-swap: %s was loaded with other --access, --keys or --value-bytes\n",
			opt.dir);
		exit(2);
	}
	opt.access = vals[0];
	opt.keys = vals[1];
	opt.value_bytes = vals[2];
}

static DB *open_db(u_int32_t flags)
{
	DB *db;
	int ret;

	if ((ret = db_create(&db, env, 0)))
		fail("db_create", ret);
	if (flags & DB_CREATE) {
		db->set_pagesize(db, opt.page_bytes);
		if (opt.access == DB_HASH)
			db->set_h_nelem(db, opt.keys);
	}
	ret = db->open(db, NULL, DB_FILE, NULL, opt.access, flags | DB_THREAD | DB_AUTO_COMMIT, 0644);
	if (ret)
		fail(DB_FILE, ret);
	db->get_pagesize(db, &opt.page_bytes);
	return db;
}

static const char *access_name(void)
{
	return opt.access == DB_HASH ? "hash" : "btree";
}

/* ---- --load ------------------------------------------------------------ */

/* --load's defaults: a hash table of 100,000 keys, 100 B values */
static void load_defaults(void)
{
	if (opt.access == DB_UNKNOWN)
		opt.access = DB_HASH;
	if (!opt.keys)
		opt.keys = 100000;
	if (!opt.value_bytes)
		opt.value_bytes = 100;
}

static int load(void)
{
	unsigned char kb[4], *vb = malloc(opt.value_bytes);
	DBT k = { .data = kb, .size = 4 };
	DBT d = { .data = vb, .size = opt.value_bytes };
	uint64_t t0 = now_ns();
	DB_TXN *txn = NULL;
	DB *db, *meta;
	int ret;

	if (!vb)
		fail("load", ENOMEM);
	db = open_db(DB_CREATE | DB_EXCL);
	if ((ret = db_create(&meta, env, 0)))
		fail("db_create", ret);
	if ((ret = meta->open(meta, NULL, META_FILE, NULL, DB_BTREE,
			      DB_CREATE | DB_EXCL | DB_THREAD | DB_AUTO_COMMIT, 0644)))
		fail(META_FILE, ret);
	for (uint32_t n = 0; n < opt.keys; n++) {
		if (!txn && (ret = env->txn_begin(env, NULL, &txn, 0)))
			fail("txn_begin", ret);
		key_bytes(n, kb);
		fill_value(n, vb, opt.value_bytes);
		if ((ret = db->put(db, txn, &k, &d, DB_NOOVERWRITE)))
			fail("load put", ret);
		if (n % LOAD_BATCH == LOAD_BATCH - 1 && n != opt.keys - 1) {
			if ((ret = txn->commit(txn, 0)))
				fail("load commit", ret);
			txn = NULL;
		}
	}
	/* what was loaded is recorded with the last keys: no meta.db, no load */
	meta_put(meta, txn, "access", opt.access);
	meta_put(meta, txn, "keys", opt.keys);
	meta_put(meta, txn, "value_bytes", opt.value_bytes);
	if ((ret = txn->commit(txn, 0)))
		fail("load commit", ret);
	if ((ret = env->txn_checkpoint(env, 0, 0, DB_FORCE)))
		fail("txn_checkpoint", ret);
	meta->close(meta, 0);
	db->close(db, 0);
	printf("{\"mode\": \"load\", \"access\": \"%s\", \"keys\": %" PRIu32
	       ", \"value_bytes\": %" PRIu32 ", \"page_bytes\": %" PRIu32
	       ", \"cache_bytes\": %" PRIu64 ", \"elapsed_s\": %.3f}\n",
	       access_name(), opt.keys, opt.value_bytes, opt.page_bytes, cache_bytes(),
	       (now_ns() - t0) / 1e9);
	free(vb);
	return 0;
}

/* ---- --verify and --clobber -------------------------------------------- */

static int verify(DB *db)
{
	unsigned char kb[4], *vb = malloc(opt.value_bytes), *want = malloc(opt.value_bytes);
	DBT k = { .data = kb, .ulen = 4, .flags = DB_DBT_USERMEM };
	DBT d = { .data = vb, .ulen = opt.value_bytes, .flags = DB_DBT_USERMEM };
	uint8_t *key_seen = calloc(opt.keys, 1), *value_seen = calloc(opt.keys, 1);
	uint64_t records = 0, bad_keys = 0, bad_values = 0, dup_keys = 0, dup_values = 0;
	uint64_t missing_keys = 0, missing_values = 0, t0 = now_ns();
	DB_TXN *txn;
	DBC *cur;
	int ret;

	if (!vb || !want || !key_seen || !value_seen)
		fail("verify", ENOMEM);
	if ((ret = env->txn_begin(env, NULL, &txn, 0)))
		fail("txn_begin", ret);
	/* read locks released as the cursor moves on: a lock a page held to
	 * the end would need as many locks as the database has pages */
	if ((ret = db->cursor(db, txn, &cur, DB_READ_COMMITTED)))
		fail("cursor", ret);
	while ((ret = cur->get(cur, &k, &d, DB_NEXT)) == 0) {
		uint32_t kn = key_number(kb), vn = key_number(vb);

		records++;
		if (k.size != 4 || kn >= opt.keys)
			bad_keys++;
		else if (key_seen[kn]++)
			dup_keys++;
		if (d.size == opt.value_bytes && vn < opt.keys)
			fill_value(vn, want, opt.value_bytes);
		if (d.size != opt.value_bytes || vn >= opt.keys || memcmp(vb, want, d.size))
			bad_values++;
		else if (value_seen[vn]++)
			dup_values++;
	}
	if (ret != DB_NOTFOUND)
		fail("cursor get", ret);
	cur->close(cur);
	txn->commit(txn, 0);
	for (uint32_t n = 0; n < opt.keys; n++) {
		missing_keys += !key_seen[n];
		missing_values += !value_seen[n];
	}
	bool ok = records == opt.keys && !bad_keys && !bad_values && !dup_keys && !dup_values &&
		  !missing_keys && !missing_values;
	printf("{\"mode\": \"verify\", \"ok\": %s, \"access\": \"%s\", \"keys\": %" PRIu32
	       ", \"records\": %" PRIu64 ", \"missing_keys\": %" PRIu64
	       ", \"duplicate_keys\": %" PRIu64 ", \"bad_keys\": %" PRIu64
	       ", \"missing_values\": %" PRIu64 ", \"duplicate_values\": %" PRIu64
	       ", \"bad_values\": %" PRIu64 ", \"elapsed_s\": %.3f}\n",
	       ok ? "true" : "false", access_name(), opt.keys, records, missing_keys, dup_keys,
	       bad_keys, missing_values, dup_values, bad_values, (now_ns() - t0) / 1e9);
	free(vb);
	free(want);
	free(key_seen);
	free(value_seen);
	return ok ? 0 : 1;
}

/* For the tests: a lost swap's result, key 0's value under key 1 too. */
static int clobber(DB *db)
{
	unsigned char kb[4], *vb = malloc(opt.value_bytes);
	DBT k = { .data = kb, .size = 4 };
	DBT d = { .data = vb, .ulen = opt.value_bytes, .flags = DB_DBT_USERMEM };
	int ret;

	key_bytes(0, kb);
	if ((ret = db->get(db, NULL, &k, &d, 0)))
		fail("clobber get", ret);
	key_bytes(1, kb);
	if ((ret = db->put(db, NULL, &k, &d, 0)))	/* its own transaction */
		fail("clobber put", ret);
	free(vb);
	return 0;
}

/* ---- latency histogram ------------------------------------------------- */

/*
 * Nanoseconds in buckets exact below 256 ns, then 128 a power of two:
 * a bucket's middle is within 0.4 % of any value in it.  A thread's own
 * histogram (60 KiB) needs no lock and no memory that grows with the run.
 */
#define SUB_BITS 7
#define SUB (1u << SUB_BITS)
#define HIST_BUCKETS (58 * SUB)

static unsigned bucket_of(uint64_t ns)
{
	unsigned shift;

	if (ns < 2 * SUB)
		return ns;
	shift = 63 - __builtin_clzll(ns) - SUB_BITS;
	return shift * SUB + (ns >> shift);
}

static double bucket_middle(unsigned b)
{
	unsigned shift;

	if (b < 2 * SUB)
		return b;
	shift = b / SUB - 1;
	return (double)((uint64_t)(b - shift * SUB) << shift) + ((1ULL << shift) - 1) / 2.0;
}

/* ---- the swap threads ---------------------------------------------------- */

enum phase { WARMUP, MEASURE, STOP };

struct counts {
	_Atomic uint64_t committed, aborted, deadlocks;
};

struct worker {
	pthread_t thread;
	DB *db;
	uint64_t random;
	/* by the phase in which each transaction ended (WARMUP, MEASURE);
	 * atomic: the main thread reads them for --progress */
	struct counts counts[2];
	/* MEASURE's commits only; read once the thread is joined */
	uint64_t lat_sum, lat_max, hist[HIST_BUCKETS];
};

static _Atomic enum phase phase;

#define CK_LISTED 4096

/* the checkpoint thread's: woken by the timer, by commits or to stop */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	_Atomic uint64_t commits;	/* all threads', every phase */
	uint64_t due;			/* --checkpoint-txns: checkpoints owed */
	uint64_t measure_ns, end_ns;	/* the measured window, when known */
	unsigned count;			/* in the measured window */
	uint64_t total_ns, max_ns;
	double at_s[CK_LISTED], took_s[CK_LISTED];	/* the first ones */
} ck = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool retry(int ret)
{
	return ret == DB_LOCK_DEADLOCK || ret == DB_LOCK_NOTGRANTED;
}

/* One swap, retried until it commits; its latency in ns. */
static uint64_t swap_once(struct worker *w, unsigned char *v1, unsigned char *v2)
{
	uint32_t n1 = next_random(&w->random) % opt.keys;
	uint32_t n2 = next_random(&w->random) % (opt.keys - 1);
	unsigned char kb1[4], kb2[4];
	DBT k1 = { .data = kb1, .size = 4 }, k2 = { .data = kb2, .size = 4 };
	DBT d1 = { .data = v1, .ulen = opt.value_bytes, .flags = DB_DBT_USERMEM };
	DBT d2 = { .data = v2, .ulen = opt.value_bytes, .flags = DB_DBT_USERMEM };
	uint64_t start = now_ns();
	DB *db = w->db;
	DB_TXN *txn;
	int ret;

	n2 += n2 >= n1;		/* distinct from n1, and uniform */
	key_bytes(n1, kb1);
	key_bytes(n2, kb2);
	for (;;) {
		if ((ret = env->txn_begin(env, NULL, &txn, 0)))
			fail("txn_begin", ret);
		if (!(ret = db->get(db, txn, &k1, &d1, DB_RMW)) &&
		    !(ret = db->get(db, txn, &k2, &d2, DB_RMW)) &&
		    !(ret = db->put(db, txn, &k1, &d2, 0)) &&
		    !(ret = db->put(db, txn, &k2, &d1, 0))) {
			if ((ret = txn->commit(txn, 0)))
				fail("commit", ret);
			return now_ns() - start;
		}
		txn->abort(txn);
		if (!retry(ret))
			fail("swap", ret);
		enum phase p = atomic_load(&phase);
		if (p == STOP)
			return 0;
		w->counts[p].aborted++;
		w->counts[p].deadlocks += ret == DB_LOCK_DEADLOCK;
	}
}

static void *swap_thread(void *arg)
{
	struct worker *w = arg;
	unsigned char *v1 = malloc(opt.value_bytes), *v2 = malloc(opt.value_bytes);

	if (!v1 || !v2)
		fail("swap thread", ENOMEM);
	while (atomic_load(&phase) != STOP) {
		uint64_t ns = swap_once(w, v1, v2);
		enum phase p = atomic_load(&phase);

		if (!ns || p == STOP)
			break;
		w->counts[p].committed++;
		if (p == MEASURE) {
			w->lat_sum += ns;
			if (ns > w->lat_max)
				w->lat_max = ns;
			w->hist[bucket_of(ns)]++;
		}
		uint64_t all = atomic_fetch_add(&ck.commits, 1) + 1;
		if (opt.checkpoint_txns && all % opt.checkpoint_txns == 0) {
			pthread_mutex_lock(&ck.lock);
			ck.due++;
			pthread_cond_signal(&ck.wake);
			pthread_mutex_unlock(&ck.lock);
		}
	}
	free(v1);
	free(v2);
	return NULL;
}

static void *checkpoint_thread(void *arg)
{
	uint64_t next = *(uint64_t *)arg;

	pthread_mutex_lock(&ck.lock);
	while (atomic_load(&phase) != STOP) {
		if (opt.checkpoint_s) {
			struct timespec ts = ns_to_ts(next);

			if (pthread_cond_timedwait(&ck.wake, &ck.lock, &ts) != ETIMEDOUT)
				continue;
			/* the next period's start; those a long checkpoint
			 * overran are skipped, not made up */
			while (next <= now_ns())
				next += opt.checkpoint_s * 1e9;
		} else if (!ck.due) {
			pthread_cond_wait(&ck.wake, &ck.lock);
			continue;
		} else {
			ck.due = 0;	/* those owed meanwhile: this one */
		}
		pthread_mutex_unlock(&ck.lock);
		uint64_t t0 = now_ns();
		int ret = env->txn_checkpoint(env, 0, 0, 0);
		uint64_t t1 = now_ns();
		pthread_mutex_lock(&ck.lock);
		if (ret)
			fail("txn_checkpoint", ret);
		if (ck.measure_ns && t0 >= ck.measure_ns && (!ck.end_ns || t0 < ck.end_ns)) {
			if (ck.count < CK_LISTED) {
				ck.at_s[ck.count] = (t0 - ck.measure_ns) / 1e9;
				ck.took_s[ck.count] = (t1 - t0) / 1e9;
			}
			ck.count++;
			ck.total_ns += t1 - t0;
			if (t1 - t0 > ck.max_ns)
				ck.max_ns = t1 - t0;
		}
	}
	pthread_mutex_unlock(&ck.lock);
	return NULL;
}

/* ---- the run ------------------------------------------------------------- */

/* Every thread's counts of transactions that ended in @phases (a mask
 * of 1 << WARMUP, 1 << MEASURE). */
struct totals {
	uint64_t committed, aborted, deadlocks;
};

static struct totals totals(const struct worker *ws, unsigned phases)
{
	struct totals t = { 0 };

	for (unsigned i = 0; i < opt.threads; i++) {
		for (int p = WARMUP; p <= MEASURE; p++) {
			if (!(phases & 1u << p))
				continue;
			t.committed += atomic_load(&ws[i].counts[p].committed);
			t.aborted += atomic_load(&ws[i].counts[p].aborted);
			t.deadlocks += atomic_load(&ws[i].counts[p].deadlocks);
		}
	}
	return t;
}

/* What BerkeleyDB's own counters say of the measured window (cleared at
 * its start): pages read and written by its cache, log writes and syncs. */
static void print_bdb_stats(void)
{
	DB_MPOOL_STAT *mp;
	DB_LOG_STAT *lg;
	DB_LOCK_STAT *lk;

	if (env->memp_stat(env, &mp, NULL, 0) || env->log_stat(env, &lg, 0) ||
	    env->lock_stat(env, &lk, 0))
		fail("stat", EINVAL);
	printf(",\n  \"bdb\": {\"cache_hits\": %ju, \"cache_misses\": %ju, \"pages_read\": %ju"
	       ", \"pages_written\": %ju, \"clean_evictions\": %ju, \"dirty_evictions\": %ju"
	       ", \"log_writes\": %ju, \"log_syncs\": %ju, \"log_bytes\": %ju"
	       ", \"deadlocks_detected\": %ju}",
	       mp->st_cache_hit, mp->st_cache_miss, mp->st_page_in, mp->st_page_out,
	       mp->st_ro_evict, mp->st_rw_evict, lg->st_wcount, lg->st_scount,
	       (uintmax_t)lg->st_w_mbytes * 1048576 + lg->st_w_bytes, lk->st_ndeadlocks);
	free(mp);
	free(lg);
	free(lk);
}

static void clear_bdb_stats(void)
{
	DB_MPOOL_STAT *mp;
	DB_LOG_STAT *lg;
	DB_LOCK_STAT *lk;

	if (env->memp_stat(env, &mp, NULL, DB_STAT_CLEAR) ||
	    env->log_stat(env, &lg, DB_STAT_CLEAR) || env->lock_stat(env, &lk, DB_STAT_CLEAR))
		fail("stat", EINVAL);
	free(mp);
	free(lg);
	free(lk);
}

/* --progress: the last second's commits and aborts, whatever the phase */
static void progress(const struct worker *ws, double t, struct totals *last)
{
	struct totals now = totals(ws, 1u << WARMUP | 1u << MEASURE);

	fprintf(stderr, "{\"t\": %.1f, \"phase\": \"%s\", \"ops_per_s\": %" PRIu64
		", \"aborted\": %" PRIu64 "}\n",
		t, atomic_load(&phase) == WARMUP ? "warmup" : "run",
		now.committed - last->committed, now.aborted - last->aborted);
	*last = now;
}

/* The nearest-rank @pct percentile of @n latencies, in microseconds */
static double percentile_us(const uint64_t *hist, uint64_t n, double pct)
{
	uint64_t rank = pct / 100 * n, seen = 0;

	if (rank < pct / 100 * n || !rank)
		rank++;
	for (unsigned b = 0; b < HIST_BUCKETS && n; b++) {
		seen += hist[b];
		if (seen >= rank)
			return bucket_middle(b) / 1000;
	}
	return 0;
}

/* The checkpoint thread's account of the measured window, under its lock */
static void checkpoint_window(uint64_t start_ns, uint64_t end_ns)
{
	pthread_mutex_lock(&ck.lock);
	if (start_ns)
		ck.measure_ns = start_ns;
	if (end_ns) {
		ck.end_ns = end_ns;
		pthread_cond_broadcast(&ck.wake);
	}
	pthread_mutex_unlock(&ck.lock);
}

/* The measured window: its start, middle and end (ns), the commits made
 * by its middle, and the process's CPU time (s) at its start and end */
struct window {
	uint64_t start, mid, stop, mid_committed;
	double cpu_start, cpu_stop;
};

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static void print_run(const struct worker *ws, const struct window *w)
{
	struct totals t = totals(ws, 1u << MEASURE);
	double elapsed = (w->stop - w->start) / 1e9;
	uint64_t *hist = calloc(HIST_BUCKETS, sizeof(*hist)), lat_sum = 0, lat_max = 0, n = 0;

	if (!hist)
		fail("report", ENOMEM);
	for (unsigned i = 0; i < opt.threads; i++) {
		lat_sum += ws[i].lat_sum;
		if (ws[i].lat_max > lat_max)
			lat_max = ws[i].lat_max;
		for (unsigned b = 0; b < HIST_BUCKETS; b++) {
			hist[b] += ws[i].hist[b];
			n += ws[i].hist[b];
		}
	}
	printf("{\"mode\": \"run\", \"program\": \"bdb-swap\", \"bdb_version\": \"%s\",\n"
	       "  \"access\": \"%s\", \"keys\": %" PRIu32 ", \"value_bytes\": %" PRIu32
	       ", \"page_bytes\": %" PRIu32 ", \"cache_bytes\": %" PRIu64 ",\n"
	       "  \"threads\": %u, \"seed\": %" PRIu64 ", \"warmup_s\": %g, \"seconds\": %g"
	       ", \"elapsed_s\": %.3f, \"clock\": \"CLOCK_MONOTONIC\",\n"
	       "  \"sync\": \"every commit flushes the log (no DB_TXN_NOSYNC)\",\n"
	       "  \"ops_per_s\": %.1f, \"committed\": %" PRIu64 ", \"aborted\": %" PRIu64
	       ", \"deadlocks\": %" PRIu64 ", \"cpu_s\": %.3f,\n"
	       "  \"halves_ops_per_s\": [%.1f, %.1f],\n"
	       "  \"latency_us\": {\"mean\": %.1f, \"p50\": %.1f, \"p99\": %.1f"
	       ", \"p99.9\": %.1f, \"max\": %.1f}",
	       DB_VERSION_STRING, access_name(), opt.keys, opt.value_bytes, opt.page_bytes,
	       cache_bytes(), opt.threads, opt.seed, opt.warmup, opt.seconds, elapsed,
	       t.committed / elapsed, t.committed, t.aborted, t.deadlocks,
	       w->cpu_stop - w->cpu_start, w->mid_committed / ((w->mid - w->start) / 1e9),
	       (t.committed - w->mid_committed) / ((w->stop - w->mid) / 1e9),
	       n ? lat_sum / 1e3 / n : 0.0, percentile_us(hist, n, 50),
	       percentile_us(hist, n, 99), percentile_us(hist, n, 99.9), lat_max / 1e3);
	printf(",\n  \"checkpoint\": {\"timer\": \"%s\", \"every_s\": %g, \"every_txns\": %" PRIu64
	       ", \"count\": %u, \"total_s\": %.3f, \"max_s\": %.3f, \"at_s\": [",
	       opt.checkpoint_s ? "CLOCK_MONOTONIC" : opt.checkpoint_txns ? "commits" : "none",
	       opt.checkpoint_s, opt.checkpoint_txns, ck.count, ck.total_ns / 1e9, ck.max_ns / 1e9);
	for (unsigned i = 0; i < ck.count && i < CK_LISTED; i++)
		printf("%s[%.3f, %.3f]", i ? ", " : "", ck.at_s[i], ck.took_s[i]);
	printf("]}");
	print_bdb_stats();
	printf("}\n");
	free(hist);
}

static int run(DB *db)
{
	struct worker *ws = calloc(opt.threads, sizeof(*ws));
	bool checkpoints = opt.checkpoint_s || opt.checkpoint_txns;
	uint64_t start, t1, ck_first;
	struct totals last = { 0 };
	struct window w = { 0 };
	pthread_condattr_t ca;
	pthread_t ckthread;
	int ret;

	if (!ws)
		fail("run", ENOMEM);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ck.wake, &ca);

	clear_bdb_stats();
	start = now_ns();
	w.start = start + opt.warmup * 1e9;
	t1 = w.start + opt.seconds * 1e9;	/* the planned end */
	if (opt.warmup > 0) {
		atomic_store(&phase, WARMUP);
	} else {
		w.cpu_start = cpu_seconds();
		atomic_store(&phase, MEASURE);
		checkpoint_window(start, 0);
	}
	for (unsigned i = 0; i < opt.threads; i++) {
		ws[i].db = db;
		ws[i].random = opt.seed * 0x100000001b3ULL + i;
		if ((ret = pthread_create(&ws[i].thread, NULL, swap_thread, &ws[i])))
			fail("pthread_create", ret);
	}
	ck_first = start + opt.checkpoint_s * 1e9;
	if (checkpoints && (ret = pthread_create(&ckthread, NULL, checkpoint_thread, &ck_first)))
		fail("pthread_create", ret);

	/* wake at the measured window's start, its middle (each half's rate:
	 * was it steady?), its end, and each second for --progress */
	for (uint64_t tick = start + 1000000000;;) {
		uint64_t mid = w.start + (t1 - w.start) / 2, next = t1;

		if (opt.progress && tick < next)
			next = tick;
		if (atomic_load(&phase) == WARMUP && w.start < next)
			next = w.start;
		if (!w.mid && mid < next)
			next = mid;
		sleep_until(next);
		if (atomic_load(&phase) == WARMUP && next >= w.start) {
			clear_bdb_stats();
			w.cpu_start = cpu_seconds();
			w.start = now_ns();
			t1 = w.start + opt.seconds * 1e9;
			checkpoint_window(w.start, 0);
			atomic_store(&phase, MEASURE);
		}
		if (!w.mid && next >= mid) {
			w.mid_committed = totals(ws, 1u << MEASURE).committed;
			w.mid = now_ns();
		}
		if (next >= t1) {
			w.stop = now_ns();
			w.cpu_stop = cpu_seconds();
			atomic_store(&phase, STOP);
			checkpoint_window(0, w.stop);
			break;
		}
		if (opt.progress && next >= tick) {
			progress(ws, (tick - start) / 1e9, &last);
			tick += 1000000000;
		}
	}
	for (unsigned i = 0; i < opt.threads; i++)
		pthread_join(ws[i].thread, NULL);
	if (checkpoints)
		pthread_join(ckthread, NULL);

	print_run(ws, &w);
	ret = totals(ws, 1u << MEASURE).committed ? 0 : 1;
	free(ws);
	return ret;
}

int main(int argc, char **argv)
{
	int rc;
	DB *db;

	parse_options(argc, argv);
	open_env();
	if (opt.mode == LOAD) {
		load_defaults();
		rc = load();
	} else {
		meta_read();
		db = open_db(0);
		rc = opt.mode == VERIFY ? verify(db) : opt.mode == CLOBBER ? clobber(db) : run(db);
		db->close(db, 0);
	}
	env->close(env, 0);
	return rc;
}
