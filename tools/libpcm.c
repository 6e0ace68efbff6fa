// SPDX-License-Identifier: GPL-2.0-only
/*
 * libpcm: the module's pure-logic files (parameters, layout, start-gap,
 * the timing model) behind a flat C interface for tools/pcmctl, so that
 * the length pcmctl prints, the rows it predicts and the latencies its
 * model prints come from the code the kernel runs.
 * Only integers, u64 arrays and char buffers cross the interface.
 * Built on the host against tools/shim: make -C tools libpcm (tools/Makefile).
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/math64.h>

#include "pcm-errmodel.h"
#include "pcm-layout.h"
#include "pcm-params.h"
#include "pcm-startgap.h"
#include "pcm-timing.h"

/* libpcm_parse()'s out[] */
enum {
	LIBPCM_ROW_SIZE,
	LIBPCM_DOMAINS,
	LIBPCM_RANDOMIZE,	/* the seed, 0 = off */
	LIBPCM_META_GIVEN,	/* 1 when meta_device was given */
	LIBPCM_ROW_META,	/* metadata bytes per row, 0 without ECC */
	LIBPCM_WEAR,		/* rows per wear counter, 0 = wear:off */
	LIBPCM_CHANNELS,
	LIBPCM_RANKS,		/* per channel */
	LIBPCM_GAP_INTERVAL,
	LIBPCM_ENDURANCE,
	LIBPCM_NR_PARSE_OUT
};

/* libpcm_length()'s out[] */
enum {
	LIBPCM_MAX_LENGTH,
	LIBPCM_MAX_ROWS,
	LIBPCM_META_START,
	LIBPCM_SB_SECTORS,
	LIBPCM_BLOCK_SECTORS,		/* a table's length is a multiple of it */
	LIBPCM_ROW_META_SECTORS,	/* a physical row's ECC metadata, 0: none */
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

/* The table words of a call into @cfg; the parser's reason in @text if not. */
static int parse_words(struct pcm_config *cfg, int argc, char **argv, char *text, size_t len)
{
	struct pcm_err e;

	if (pcm_config_parse(cfg, argc, argv, &e)) {
		scnprintf(text, len, "%s: %s", e.what, e.detail);
		return -EINVAL;
	}
	return 0;
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
	size_t n;

	if (argc < 0 || !len)
		return -EINVAL;
	if (parse_words(&cfg, argc, argv, text, len))
		return -EINVAL;
	out[LIBPCM_ROW_SIZE] = cfg.val[PCM_ROW_SIZE];
	out[LIBPCM_DOMAINS] = cfg.val[PCM_DOMAINS];
	out[LIBPCM_RANDOMIZE] = cfg.val[PCM_RANDOMIZE];
	out[LIBPCM_META_GIVEN] = !!(cfg.given & BIT_ULL(PCM_META_DEVICE));
	out[LIBPCM_WEAR] = cfg.val[PCM_WEAR];
	out[LIBPCM_CHANNELS] = cfg.val[PCM_CHANNELS];
	out[LIBPCM_RANKS] = cfg.val[PCM_RANKS];
	out[LIBPCM_GAP_INTERVAL] = cfg.val[PCM_GAP_INTERVAL];
	out[LIBPCM_ENDURANCE] = cfg.val[PCM_ENDURANCE];
	out[LIBPCM_ROW_META] = cfg.val[PCM_ECC] == PCM_ECC_NONE ? 0 :
			       cfg.val[PCM_ROW_SIZE] / 512 * cfg.val[PCM_META_BYTES];
	/* every word comes with a leading blank: drop the first */
	n = pcm_config_emit(&cfg, PCM_EMIT_ALL, text, len);
	if (n && text[0] == ' ')
		memmove(text, text + 1, n);
	return 0;
}

/* The "params" reply, as the module gives it. */
int libpcm_params(char *text, size_t len)
{
	pcm_params_emit(text, len);
	return 0;
}

/*
 * The largest legal table length for a data device of @dev_sectors, with
 * logical blocks of @data_block bytes (0: 512), used from @offset, with
 * metadata at its end or (@meta_given) on a meta_device of
 * @meta_dev_sectors, and @row_meta bytes of ECC metadata per row (0: none)
 * and a wear counter per @wear_group rows (0: none).  @meta_block is the
 * logical block size of the device that holds the metadata (the data
 * device's without a meta_device), as the kernel takes them.  Returns 0
 * with LIBPCM_NR_LENGTH_OUT values in @out, or -EINVAL with the reason in
 * @err.
 */
int libpcm_length(u64 dev_sectors, u32 data_block, u64 offset, u32 meta_given,
		  u64 meta_dev_sectors, u32 meta_block, u32 row_size, u32 domains, u32 row_meta,
		  u32 wear_group, u64 *out, char *err, size_t len)
{
	struct pcm_layout l = {
		.dev_sectors = dev_sectors,
		.offset = offset,
		.meta_dev = meta_given,
		.meta_dev_sectors = meta_dev_sectors,
		.data_block = data_block,
		.meta_block = meta_block,
		.row_size = row_size,
		.domains = domains,
		.row_meta = row_meta,
		.wear_group = wear_group,
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
	out[LIBPCM_BLOCK_SECTORS] = l.block_sectors;
	out[LIBPCM_ROW_META_SECTORS] = l.row_meta_sectors;
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

/* libpcm_model()'s workload, in[] */
enum {
	LIBPCM_WL_ROWS,		/* logical rows of the emulated device */
	LIBPCM_WL_READ_PCT,	/* reads in the mix, 0 to 100 */
	LIBPCM_WL_BS,		/* bytes per request, a multiple of 512 */
	LIBPCM_WL_DEPTH,	/* requests in flight per job */
	LIBPCM_WL_JOBS,
	LIBPCM_WL_RANDOM,	/* 1: uniform random offsets; 0: sequential per job */
	LIBPCM_WL_IOS,		/* requests to run */
	LIBPCM_WL_SEED,
	LIBPCM_WL_HOST_NS,	/* closed loop: from a completion to the next arrival */
	LIBPCM_WL_RATE_NS,	/* open loop: one arrival each RATE_NS; 0: closed loop */
	LIBPCM_WL_THINK_NS,	/* closed loop: a job pauses THINK_NS ... */
	LIBPCM_WL_THINK_BLOCKS,	/* ... after every THINK_BLOCKS requests (0: 1) */
	LIBPCM_WL_RUNTIME_NS,	/* no arrival from RAMP_NS + RUNTIME_NS on (0: IOS decides) */
	LIBPCM_WL_RAMP_NS,	/* requests arriving before RAMP_NS run, uncounted */
	LIBPCM_NR_WL
};

/* libpcm_model()'s out[] */
enum {
	LIBPCM_M_ELAPSED,	/* ns from the first arrival to the last completion */
	LIBPCM_M_MOVES,		/* gap moves the writes made */
	LIBPCM_M_TAG_WAITS,
	LIBPCM_M_CACHE_WAITS,
	LIBPCM_M_DILATION,	/* the words' dilation: the figures are the device's */
	LIBPCM_M_IOS,		/* requests run (fewer than IOS when RUNTIME_NS ended it) */
	LIBPCM_NR_MODEL_OUT
};

int libpcm_nr_wl(void)
{
	return LIBPCM_NR_WL;
}

int libpcm_nr_model_out(void)
{
	return LIBPCM_NR_MODEL_OUT;
}

/* The emulated device a model run drives: start-gap and the timing model. */
struct model {
	struct pcm_tm tm;
	struct pcm_sg_domain *regs;
	struct pcm_feistel *feistel;
	u64 *rows, *writes;	/* per domain */
	u64 logical_rows, gap_interval, row_bytes;
	u32 domains;
	bool randomize;
	bool timed;		/* false: start-gap and wear only, no timing */
	u64 moves, tag_waits, cache_waits;
	u32 *wear;		/* writes per backing row, or NULL */
	u64 nr_wear;
	/*
	 * The front end's and the tags' figures, added up from each charge's
	 * result (the ranks and buses count their own, in the model: read by
	 * pcm_tm_usage(), as the module's "ranks" message reads them); on the
	 * caller's clock, as the results are.
	 */
	bool tagged;
	struct pcm_tm_use front, tags;
};

static u64 xorshift(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static u64 model_backing_row(struct model *m, u64 row, u32 *d)
{
	u64 l = div_u64_rem(row, m->domains, d);

	if (m->randomize)
		l = pcm_feistel_permute(&m->feistel[*d], m->rows[*d], l);
	return pcm_sg_backing_row(m->domains, *d, pcm_sg_map(&m->regs[*d], m->rows[*d], l));
}

/* A row of domain @d was written at @t: every gap_interval, a gap move. */
static void model_row_written(struct model *m, u32 d, u64 t)
{
	struct pcm_sg_move mv;

	if (!m->gap_interval || ++m->writes[d] < m->gap_interval)
		return;
	m->writes[d] = 0;
	mv = pcm_sg_next_move(&m->regs[d], m->rows[d]);
	if (m->timed)
		pcm_tm_move(&m->tm, t, pcm_sg_backing_row(m->domains, d, mv.src),
			    pcm_sg_backing_row(m->domains, d, mv.dst), m->row_bytes, 0);
	if (m->wear)	/* the copy programs the gap's row: it wears */
		m->wear[pcm_sg_backing_row(m->domains, d, mv.dst)]++;
	pcm_sg_apply_move(&m->regs[d], m->rows[d]);
	m->moves++;
}

/* One more stage of @busy ns that waited @wait ns, on @u. */
static void use_add(struct pcm_tm_use *u, u64 busy, u64 wait)
{
	u->requests++;
	u->busy_ns += busy;
	u->wait_ns += wait;
	u->wait_max_ns = max(u->wait_max_ns, wait);
}

static u64 model_charge(struct model *m, u64 t, bool write, u64 row, u32 offset, u64 bytes)
{
	struct pcm_tm_req rq = {
		.arrival = t, .write = write, .row = row, .offset = offset,
		.row_bytes = m->row_bytes, .bytes = bytes,
	};
	struct pcm_tm_result res;

	pcm_tm_submit(&m->tm, &rq, &res);
	m->tag_waits += res.tag_waited;
	m->cache_waits += res.cache_waited;
	if (res.front_ns)
		use_add(&m->front, res.front_ns, res.front_wait);
	if (m->tagged)
		use_add(&m->tags, 0, res.tag_wait);
	return res.done;
}

/*
 * A request of @bytes at byte @pos arriving at @t, cut as the map path
 * cuts it (where backing rows stop being back to back, every 256 rows),
 * each piece charged as the bio the target sees.  Returns its completion.
 */
static u32 domain_of_row(struct model *m, u64 row)
{
	u32 d;

	div_u64_rem(row, m->domains, &d);
	return d;
}

static u64 model_request(struct model *m, u64 t, bool write, u64 pos, u64 bytes)
{
	u64 done = t, run_row = 0, run_bytes = 0, prev = 0, row;
	u64 first = div64_u64(pos, m->row_bytes), last = div64_u64(pos + bytes - 1, m->row_bytes);
	u32 run_off = 0, run_rows = 0, d;

	while (bytes) {
		u64 back, b;
		u32 off;

		row = div64_u64(pos, m->row_bytes);
		off = pos - row * m->row_bytes;
		back = model_backing_row(m, row, &d);
		b = min_t(u64, bytes, m->row_bytes - off);
		if (write && m->wear)
			m->wear[back]++;
		if (!m->timed)
			goto next;
		if (run_rows && (back != prev + 1 || run_rows == 256)) {
			done = max(done, model_charge(m, t, write, run_row, run_off, run_bytes));
			run_rows = 0;
		}
		if (!run_rows) {
			run_row = back;
			run_off = off;
			run_bytes = 0;
		}
		run_rows++;
		run_bytes += b;
		prev = back;
next:
		pos += b;
		bytes -= b;
	}
	if (run_rows)
		done = max(done, model_charge(m, t, write, run_row, run_off, run_bytes));
	/* as in the target: the rows are mapped, then the moves they made due */
	for (row = first; write && row <= last; row++)
		model_row_written(m, domain_of_row(m, row), t);
	return done;
}

static void model_free(struct model *m)
{
	free(m->tm.chans);
	free(m->tm.tag_free);
	free(m->regs);
	free(m->feistel);
	free(m->rows);
	free(m->writes);
	free(m->wear);
}

/* model_init()'s @flags */
#define MODEL_UNTIMED	1	/* start-gap only: no timing model */
#define MODEL_WEAR	2	/* count writes per backing row */

static int model_init(struct model *m, const struct pcm_config *cfg, u64 logical_rows,
		      unsigned int flags)
{
	struct pcm_tm_params p;
	u32 d;

	memset(m, 0, sizeof(*m));
	m->timed = !(flags & MODEL_UNTIMED);
	pcm_config_timing(cfg, &p);
	m->domains = cfg->val[PCM_DOMAINS];
	m->logical_rows = logical_rows;
	m->gap_interval = cfg->val[PCM_GAP_INTERVAL];
	m->row_bytes = cfg->val[PCM_ROW_SIZE];
	m->randomize = cfg->val[PCM_RANDOMIZE] != 0;
	m->regs = calloc(m->domains, sizeof(*m->regs));
	m->feistel = calloc(m->domains, sizeof(*m->feistel));
	m->rows = calloc(m->domains, sizeof(u64));
	m->writes = calloc(m->domains, sizeof(u64));
	m->tm.chans = calloc(1, pcm_tm_chans_bytes(&p));
	m->tm.tag_free = calloc(PCM_TM_MAX_TAGS, sizeof(u64));
	if (!m->regs || !m->feistel || !m->rows || !m->writes || !m->tm.chans ||
	    !m->tm.tag_free)
		return -ENOMEM;
	pcm_tm_init(&m->tm, &p, m->tm.chans, m->tm.tag_free);
	if (flags & MODEL_WEAR) {
		m->nr_wear = pcm_sg_physical_rows(logical_rows, m->domains);
		m->wear = calloc(m->nr_wear, sizeof(u32));
		if (!m->wear)
			return -ENOMEM;
	}
	m->tagged = p.tags != 0;
	for (d = 0; d < m->domains; d++) {
		m->rows[d] = pcm_sg_domain_rows(logical_rows, m->domains, d);
		pcm_sg_init(&m->regs[d], m->rows[d]);
		pcm_feistel_init(&m->feistel[d], cfg->val[PCM_RANDOMIZE], m->rows[d]);
	}
	return 0;
}

/*
 * The totals libpcm_model() and libpcm_replay() both return, in the order
 * of their out[] (LIBPCM_M_* and LIBPCM_R_*, kept the same): elapsed time
 * on the device's clock (the model's divided by the dilation), gap moves,
 * tag and cache waits, the dilation.
 */
static void model_totals(const struct model *m, u64 end, u64 dil, u64 ios, u64 *out)
{
	out[0] = div64_u64(end, dil);
	out[1] = m->moves;
	out[2] = m->tag_waits;
	out[3] = m->cache_waits;
	out[4] = dil;
	out[5] = ios;
}

/*
 * Run a workload (@wl, LIBPCM_NR_WL values) through the model of the
 * device the table words @argv describe.  Closed loop (RATE_NS 0):
 * JOBS x DEPTH requests in flight, each replaced by the next HOST_NS
 * after it completes (the host's own time per request), plus THINK_NS
 * after every THINK_BLOCKS requests of its job, as fio's thinktime.  Open
 * loop: request i arrives at i x RATE_NS, whatever is in flight.  As
 * fio's ramp_time, the requests arriving before RAMP_NS run but are not
 * counted, and the elapsed time starts at RAMP_NS.  Stops after IOS
 * counted requests, or at the first arrival from RAMP_NS + RUNTIME_NS on.
 * Fills @lat (ns) and @is_write for each request counted (IOS entries at
 * most), and @out (LIBPCM_NR_MODEL_OUT values; the gap moves and waits
 * of the whole run).  BS may be any byte count: requests
 * below a sector exist only in the model.  With dilation:K the model runs
 * K times slower, as in the module; the latencies and the elapsed time
 * are given back in the device's time (divided by K), so that they are
 * the figures of the undilated device; HOST_NS, THINK_NS, RATE_NS and
 * RUNTIME_NS are device time too.  Returns 0, or -EINVAL/-ENOMEM with the
 * reason in @text.
 */
int libpcm_model(int argc, char **argv, const u64 *wl, u64 *lat, u8 *is_write,
		 u64 *out, char *text, size_t len)
{
	u64 slots = wl[LIBPCM_WL_DEPTH] * wl[LIBPCM_WL_JOBS], bs = wl[LIBPCM_WL_BS];
	u64 span, *next, *pos, *issued, seed = wl[LIBPCM_WL_SEED] | 1, end = 0, k, dil;
	u64 rate = wl[LIBPCM_WL_RATE_NS], runtime = wl[LIBPCM_WL_RUNTIME_NS];
	u64 ramp = wl[LIBPCM_WL_RAMP_NS], got = 0, n;
	u64 blocks = wl[LIBPCM_WL_THINK_BLOCKS] ? wl[LIBPCM_WL_THINK_BLOCKS] : 1;
	struct pcm_config cfg;
	struct model m;
	int r;

	if (parse_words(&cfg, argc, argv, text, len))
		return -EINVAL;
	dil = cfg.val[PCM_DILATION];
	span = wl[LIBPCM_WL_ROWS] * cfg.val[PCM_ROW_SIZE];
	if (!slots || slots > 65536 || !bs || bs > span ||
	    wl[LIBPCM_WL_ROWS] < cfg.val[PCM_DOMAINS] || wl[LIBPCM_WL_READ_PCT] > 100 ||
	    wl[LIBPCM_WL_HOST_NS] > PCM_TM_MAX_NS || wl[LIBPCM_WL_THINK_NS] > PCM_TM_MAX_NS ||
	    rate > PCM_TM_MAX_NS || ramp > 1000 * PCM_TM_MAX_NS ||
	    runtime > 1000 * PCM_TM_MAX_NS) {
		scnprintf(text, len, "workload out of range");
		return -EINVAL;
	}
	next = calloc(slots, sizeof(u64));
	pos = calloc(wl[LIBPCM_WL_JOBS], sizeof(u64));
	issued = calloc(wl[LIBPCM_WL_JOBS], sizeof(u64));
	r = model_init(&m, &cfg, wl[LIBPCM_WL_ROWS], 0);
	if (r || !next || !pos || !issued) {
		scnprintf(text, len, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	for (k = 0; k < wl[LIBPCM_WL_JOBS]; k++)
		pos[k] = div64_u64(span / wl[LIBPCM_WL_JOBS], bs) * bs * k;
	for (n = 0; got < wl[LIBPCM_WL_IOS]; n++) {
		u64 s = 0, job, at, t, done;
		bool w;

		if (rate) {
			t = n * rate;
			job = n % wl[LIBPCM_WL_JOBS];
		} else {
			for (k = 1; k < slots; k++)
				if (next[k] < next[s])
					s = k;
			t = next[s];
			job = s / wl[LIBPCM_WL_DEPTH];
		}
		if (runtime && t >= ramp + runtime)
			break;
		w = xorshift(&seed) % 100 >= wl[LIBPCM_WL_READ_PCT];
		if (wl[LIBPCM_WL_RANDOM]) {
			at = xorshift(&seed) % div64_u64(span, bs) * bs;
		} else {
			at = pos[job];
			pos[job] = at + 2 * bs > span ? 0 : at + bs;
		}
		done = model_request(&m, t * dil, w, at, bs);
		if (t >= ramp) {
			lat[got] = div64_u64(done, dil) - t;
			is_write[got++] = w;
			end = max(end, done);
		}
		if (rate)
			continue;
		next[s] = div64_u64(done, dil) + wl[LIBPCM_WL_HOST_NS];
		if (++issued[job] % blocks == 0)
			next[s] += wl[LIBPCM_WL_THINK_NS];
	}
	model_totals(&m, end, dil, got, out);
	/* the elapsed time of the counted requests: from the ramp's end */
	out[LIBPCM_M_ELAPSED] = end ? out[LIBPCM_M_ELAPSED] - ramp : 0;
out:
	model_free(&m);
	free(next);
	free(pos);
	free(issued);
	return r;
}

/*
 * When the model's last resource frees, from @end on (model time): a
 * write cache or early completion lets writes complete before their
 * programs end.
 */
static u64 model_idle(struct model *m, u64 end)
{
	const struct pcm_tm_params *p = &m->tm.p;
	u64 idle = max_t(u64, end, atomic64_read(&m->tm.front_busy) * max(p->dilation, 1U));
	u32 c, r;

	for (c = 0; c < p->channels; c++) {
		struct pcm_tm_chan *ch = pcm_tm_chan(&m->tm, c);

		idle = max(idle, ch->bus_busy * max(p->dilation, 1U));
		for (r = 0; r < p->ranks; r++)
			idle = max(idle, ch->rank_busy[r] * max(p->dilation, 1U));
	}
	return idle;
}

/* libpcm_replay()'s out[] */
enum {
	LIBPCM_R_ELAPSED,	/* ns from the first arrival to the last completion */
	LIBPCM_R_MOVES,
	LIBPCM_R_TAG_WAITS,
	LIBPCM_R_CACHE_WAITS,
	LIBPCM_R_DILATION,
	LIBPCM_R_IOS,
	LIBPCM_R_IDLE,		/* the last instant any resource was busy (>= ELAPSED) */
	LIBPCM_NR_REPLAY_OUT
};
_Static_assert((int)LIBPCM_R_ELAPSED == (int)LIBPCM_M_ELAPSED &&
	       (int)LIBPCM_R_MOVES == (int)LIBPCM_M_MOVES &&
	       (int)LIBPCM_R_TAG_WAITS == (int)LIBPCM_M_TAG_WAITS &&
	       (int)LIBPCM_R_CACHE_WAITS == (int)LIBPCM_M_CACHE_WAITS &&
	       (int)LIBPCM_R_DILATION == (int)LIBPCM_M_DILATION &&
	       (int)LIBPCM_R_IOS == (int)LIBPCM_M_IOS, "model_totals() fills both alike");

/* libpcm_replay()'s @opt[] */
enum {
	LIBPCM_RP_ROWS,		/* logical rows of the emulated device */
	LIBPCM_RP_DEPTH,	/* closed loop: requests in flight */
	LIBPCM_RP_OPEN,		/* 1: open loop, at the arrivals given */
	LIBPCM_RP_HOST_NS,	/* closed loop: from a completion to the next arrival */
	LIBPCM_NR_RP
};

/* struct pcm_tm_use as libpcm_replay()'s @use[] gives it: 4 u64 each */
#define LIBPCM_USE_WORDS 4

int libpcm_nr_replay_out(void)
{
	return LIBPCM_NR_REPLAY_OUT;
}

int libpcm_nr_rp(void)
{
	return LIBPCM_NR_RP;
}

/* @u's figures on the device's clock (the caller's divided by @dil) */
static u64 *put_use(u64 *o, const struct pcm_tm_use *u, u64 dil)
{
	*o++ = u->requests;
	*o++ = div64_u64(u->busy_ns, dil);
	*o++ = div64_u64(u->wait_ns, dil);
	*o++ = div64_u64(u->wait_max_ns, dil);
	return o;
}

/*
 * Replay @n requests of a trace (byte offset @pos[i], @bytes[i], @write[i])
 * through the model of the device the table words @argv describe, of
 * @opt[LIBPCM_RP_ROWS] logical rows, with the same model_request() as
 * libpcm_model().  Open loop: request i arrives at @arrival[i] ns (device
 * time, non-decreasing), whatever is in flight.  Closed loop: DEPTH
 * requests in flight, in the trace's order, each replaced by the next
 * HOST_NS after it completes (@arrival is not read).  Any byte count is a
 * request: one below a sector exists only in the model.  Fills @start[i]
 * (its arrival) and @done[i] (its completion), ns of the device's time
 * (the model's divided by dilation:K, as libpcm_model()), and @out
 * (LIBPCM_NR_REPLAY_OUT values); and unless @use is NULL, the model's
 * figures of each resource (struct pcm_tm_use, LIBPCM_USE_WORDS each:
 * requests, busy, total and longest wait; device ns): channel c's rank r
 * at (c * ranks + r), then each channel's bus (the model's own counters,
 * which the module's "ranks" message reads), then the front end (the
 * requests that used it) and the tags (every request, if there are tags),
 * added up from each request's result.  Returns 0, or -EINVAL/-ENOMEM with the reason in @text.
 */
/* libpcm_replay()'s @use[]: every rank, every bus, the front end, the tags */
static void put_usage(struct model *m, const struct pcm_config *cfg, u64 *use, u64 dil)
{
	u32 c, r, channels = cfg->val[PCM_CHANNELS], ranks = cfg->val[PCM_RANKS];
	struct pcm_tm_use bus, *rank = calloc(ranks, sizeof(*rank));

	for (c = 0; c < channels && rank; c++) {
		pcm_tm_usage(&m->tm, c, &bus, rank, 0, ranks);
		for (r = 0; r < ranks; r++)
			put_use(use + (c * ranks + r) * LIBPCM_USE_WORDS, &rank[r], dil);
		put_use(use + (channels * ranks + c) * LIBPCM_USE_WORDS, &bus, dil);
	}
	use += (channels * ranks + channels) * LIBPCM_USE_WORDS;
	use = put_use(use, &m->front, dil);
	put_use(use, &m->tags, dil);
	free(rank);
}

int libpcm_replay(int argc, char **argv, const u64 *opt, u64 n, const u64 *arrival,
		  const u64 *pos, const u64 *bytes, const u8 *write,
		  u64 *start, u64 *done, u64 *out, u64 *use, char *text, size_t len)
{
	u64 rows = opt[LIBPCM_RP_ROWS], depth = opt[LIBPCM_RP_DEPTH];
	u64 host = opt[LIBPCM_RP_HOST_NS], *next = NULL, end = 0, i, k, dil, span, prev = 0;
	bool open = opt[LIBPCM_RP_OPEN];
	struct pcm_config cfg;
	struct model m;
	int r;

	if (parse_words(&cfg, argc, argv, text, len))
		return -EINVAL;
	dil = cfg.val[PCM_DILATION];
	span = rows * cfg.val[PCM_ROW_SIZE];
	if (rows < cfg.val[PCM_DOMAINS] || (!open && (!depth || depth > 65536)) ||
	    host > PCM_TM_MAX_NS) {
		scnprintf(text, len, "replay out of range");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!bytes[i] || pos[i] >= span || bytes[i] > span - pos[i]) {
			scnprintf(text, len, "request %llu out of range",
				  (unsigned long long)i);
			return -EINVAL;
		}
		if (open && arrival[i] < prev) {
			scnprintf(text, len, "request %llu arrives before the one before it",
				  (unsigned long long)i);
			return -EINVAL;
		}
		if (open)
			prev = arrival[i];
	}
	if (!open)
		next = calloc(depth, sizeof(u64));
	r = model_init(&m, &cfg, rows, 0);
	if (r || (!open && !next)) {
		scnprintf(text, len, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		u64 s = 0, at, d;

		if (open) {
			at = arrival[i];
		} else {
			for (k = 1; k < depth; k++)
				if (next[k] < next[s])
					s = k;
			at = next[s];
		}
		d = model_request(&m, at * dil, write[i], pos[i], bytes[i]);
		start[i] = at;
		done[i] = div64_u64(d, dil);
		if (!open)
			next[s] = done[i] + host;
		end = max(end, d);
	}
	model_totals(&m, end, dil, n, out);
	out[LIBPCM_R_IDLE] = div64_u64(model_idle(&m, end), dil);
	if (use)
		put_usage(&m, &cfg, use, dil);
out:
	model_free(&m);
	free(next);
	return r;
}

/* libpcm_wear()'s out[] */
enum {
	LIBPCM_W_ROWS,		/* backing rows counted (the gaps' too) */
	LIBPCM_W_WRITES,	/* row writes, the gap moves' copies included */
	LIBPCM_W_MOVES,
	LIBPCM_W_MAX,		/* writes of the most worn row */
	LIBPCM_W_MIN,
	LIBPCM_W_MEAN_MILLI,	/* writes per row x 1000 */
	LIBPCM_W_USED_PERMILLE,	/* max / endurance */
	LIBPCM_W_REMAINING,	/* row writes left at this spread (U64_MAX: unbounded) */
	LIBPCM_W_REMAINING_LEVEL, /* the same if wear were even */
	LIBPCM_W_ENDURANCE,
	LIBPCM_NR_WEAR_OUT
};

int libpcm_nr_wear_out(void)
{
	return LIBPCM_NR_WEAR_OUT;
}

/*
 * The wear @repeat passes of a trace's writes leave (@n requests at byte
 * @pos[i], @bytes[i], @write[i]; reads are skipped) on a fresh device of
 * the words @argv with @rows logical rows: each row a write touches, and
 * each gap move's destination, is one write of its backing row, as the
 * module's wear counters count them; with @gap 0 start-gap is off
 * (gap_interval:0, the rows stay where they are), else at the words'
 * gap_interval.  The summary and the projected lifetime are the module's
 * (pcm_wear_summary_add(), pcm_wear_life(), one counter per row) in @out
 * (LIBPCM_NR_WEAR_OUT values); each row's count in @per_row
 * (LIBPCM_W_ROWS of them) unless it is NULL.  Returns 0, or -EINVAL /
 * -ENOMEM / -EOVERFLOW with the reason in @text.
 */
int libpcm_wear(int argc, char **argv, u64 rows, u64 n, const u64 *pos, const u64 *bytes,
		const u8 *write, u64 repeat, u32 gap, u64 *out, u32 *per_row, u64 nr_per_row,
		char *text, size_t len)
{
	struct pcm_wear_summary sum;
	struct pcm_wear_life life;
	struct pcm_config cfg;
	struct model m;
	u64 i, k, row_writes = 0, rs;
	int r;

	if (parse_words(&cfg, argc, argv, text, len))
		return -EINVAL;
	if (!gap)
		cfg.val[PCM_GAP_INTERVAL] = 0;
	rs = cfg.val[PCM_ROW_SIZE];
	if (rows < cfg.val[PCM_DOMAINS] || !repeat) {
		scnprintf(text, len, "wear run out of range");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!bytes[i] || pos[i] >= rows * rs || bytes[i] > rows * rs - pos[i]) {
			scnprintf(text, len, "request %llu out of range",
				  (unsigned long long)i);
			return -EINVAL;
		}
		if (write[i])
			row_writes += div64_u64(pos[i] + bytes[i] - 1, rs) - div64_u64(pos[i], rs) + 1;
	}
	/*
	 * The counters are the module's 32 bits: a row takes at most every
	 * write of a pass and as many gap moves' copies (gap_interval:1)
	 */
	if (row_writes && repeat > div64_u64(U32_MAX, 2 * row_writes)) {
		scnprintf(text, len, "%llu passes of %llu row writes could overflow a row's "
			  "32-bit counter: at most %llu", (unsigned long long)repeat,
			  (unsigned long long)row_writes,
			  (unsigned long long)div64_u64(U32_MAX, 2 * row_writes));
		return -EOVERFLOW;
	}
	r = model_init(&m, &cfg, rows, MODEL_UNTIMED | MODEL_WEAR);
	if (r) {
		scnprintf(text, len, "out of memory");
		goto out;
	}
	if (per_row && nr_per_row != m.nr_wear) {
		scnprintf(text, len, "%llu rows asked for, the device has %llu",
			  (unsigned long long)nr_per_row, (unsigned long long)m.nr_wear);
		r = -EINVAL;
		goto out;
	}
	for (k = 0; k < repeat; k++)
		for (i = 0; i < n; i++)
			if (write[i])
				model_request(&m, 0, true, pos[i], bytes[i]);
	pcm_wear_summary_init(&sum);
	pcm_wear_summary_add(&sum, m.wear, m.nr_wear);
	pcm_wear_life(&sum, 1, cfg.val[PCM_ENDURANCE], &life);
	out[LIBPCM_W_ROWS] = m.nr_wear;
	out[LIBPCM_W_WRITES] = sum.sum;
	out[LIBPCM_W_MOVES] = m.moves;
	out[LIBPCM_W_MAX] = life.max;
	out[LIBPCM_W_MIN] = sum.min;
	out[LIBPCM_W_MEAN_MILLI] = life.mean_milli;
	out[LIBPCM_W_USED_PERMILLE] = life.used_permille;
	out[LIBPCM_W_REMAINING] = life.remaining;
	out[LIBPCM_W_REMAINING_LEVEL] = life.remaining_ideal;
	out[LIBPCM_W_ENDURANCE] = cfg.val[PCM_ENDURANCE];
	if (per_row)
		memcpy(per_row, m.wear, m.nr_wear * sizeof(u32));
out:
	model_free(&m);
	return r;
}
