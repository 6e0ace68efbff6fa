/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm-timing.c: the timing model on the data path, its state and what
 * status shows of it.
 */
#ifndef DM_PCM_TIMING_H
#define DM_PCM_TIMING_H

#include "dm-pcm.h"

#define PCM_LATE_BUCKETS	64

/*
 * What one CPU counted; status adds the CPUs up.  Every bio updates these,
 * so they are per CPU: the map path and end_io write no shared line.
 */
struct pcm_timing_figs {
	u64 lat_sum[2], lat_n[2], lat_max[2];	/* modeled, read and write */
	u64 tag_waits, cache_waits;
	u64 held, late, late_max;
	/* the front end's and the tags' share ("ranks"); the ranks' are the model's */
	u64 front_busy, front_wait, front_wait_max;
	u64 tag_wait, tag_wait_max;
};

struct pcm_timing_stats {
	struct pcm_timing_figs f;
	u64 late_hist[PCM_LATE_BUCKETS];
};

struct pcm_timing {
	struct pcm_tm tm;		/* locks itself, per channel */
	void *chans;
	u64 *tag_free;
	u64 overhead;			/* overhead_ns: holds end this much early */
	u64 since;			/* figures count from: init, "stats reset" */
	/*
	 * The figures being counted, and a zeroed set "stats reset" swaps
	 * in (pcm_timing_reset()); updaters and readers use one under RCU.
	 */
	struct pcm_timing_stats __percpu *stats;
	struct pcm_timing_stats __percpu *spare;
	struct mutex reset_lock;	/* "stats reset"s, one at a time */
};

/**
 * pcm_timing_init() - Set up the timing model.
 * @pc: the target, being constructed
 *
 * Return: 0, or a negative errno.
 */
int pcm_timing_init(struct pcm_c *pc);

/**
 * pcm_timing_exit() - Free the timing model.
 * @pc: the target, no bio in flight
 */
void pcm_timing_exit(struct pcm_c *pc);

/**
 * pcm_timing_update() - "set" changed a parameter: new requests see it.
 * @pc: the target
 */
void pcm_timing_update(struct pcm_c *pc);

/**
 * pcm_timing_charge() - Charge a remapped bio, arriving now, to the model.
 * @pc: the target
 * @bio: the bio
 * @io: its per-bio data; io->deadline gets its modeled completion
 *
 * end_io holds the bio until io->deadline.
 *
 * Context: the map path.
 */
void pcm_timing_charge(struct pcm_c *pc, struct bio *bio, struct pcm_io *io);

/**
 * pcm_timing_move() - Charge a gap move's row copy.
 * @pc: the target
 * @src: the backing row copied
 * @dst: the backing row it was copied into
 * @dst_slot: @dst's first data sector
 *
 * The copy holds both rows' ranks, and programs at @dst's wear.
 *
 * Context: the mover.
 */
void pcm_timing_move(struct pcm_c *pc, u64 src, u64 dst, sector_t dst_slot);

/**
 * pcm_timing_end_io() - Hold a charged bio until its modeled instant.
 * @pc: the target
 * @bio: the bio, its backing I/O over
 * @io: its per-bio data
 * @error: its status
 *
 * A held bio keeps its status in bi_status: the dm core forgets *@error
 * when end_io returns DM_ENDIO_INCOMPLETE, and reads bi_status when the
 * timer ends the bio again (an error end_io made, e.g. an uncorrectable
 * sector, would otherwise come back as success).
 *
 * Context: bio completion.
 * Return: DM_ENDIO_INCOMPLETE (held) or DM_ENDIO_DONE.
 */
int pcm_timing_end_io(struct pcm_c *pc, struct bio *bio, struct pcm_io *io,
		      blk_status_t *error);

/**
 * pcm_timing_status() - Emit the model's figures into a status line.
 * @pc: the target
 * @result: the status buffer
 * @maxlen: its size
 * @szp: where the line ends in it, moved on past what is emitted
 */
void pcm_timing_status(struct pcm_c *pc, char *result, unsigned int maxlen,
		       unsigned int *szp);

/**
 * pcm_timing_reset() - "stats reset": count the figures from zero.
 * @pc: the target
 *
 * The spare set, zeroed, becomes the one counted, and the old one the
 * spare once no updater can still be in it.  Zeroing the figures in
 * place would race other CPUs' this_cpu_add()s: an add that straddles
 * the memset writes its old sum back while its count is gone.
 *
 * Context: process; sleeps (synchronize_rcu_expedited()).
 */
void pcm_timing_reset(struct pcm_c *pc);

/**
 * pcm_timing_lateness() - "lateness": how late completions were.
 * @pc: the target
 * @result: the message's result buffer
 * @maxlen: its size
 *
 * How long after their modeled instants completions happened, one
 * "from_ns-to_ns:count" word per bucket that has any.
 *
 * Return: 1 (a result).
 */
int pcm_timing_lateness(struct pcm_c *pc, char *result, unsigned int maxlen);

/**
 * pcm_timing_ranks() - "ranks": the model's resources, one line each.
 * @pc: the target
 * @result: the message's result buffer
 * @maxlen: its size
 *
 * Since the table was loaded or "stats reset": the time elapsed and the
 * geometry; the front end; the tags; then per channel its bus and its
 * ranks.  Busy and wait times are on this host's clock, as status's.
 *
 * Return: 1 (a result).
 */
int pcm_timing_ranks(struct pcm_c *pc, char *result, unsigned int maxlen);

/**
 * pcm_timing_status_ranks() - Emit status's summary of "ranks".
 * @pc: the target
 * @result: the status buffer
 * @maxlen: its size
 * @szp: where the line ends in it, moved on past what is emitted
 *
 * The busiest rank's and the mean rank's utilisation, in ppm of the time
 * since the figures were reset, then the queue waits, in ns: every rank's
 * added up and the largest, the buses' added up, the front end's and the
 * tags'.
 */
void pcm_timing_status_ranks(struct pcm_c *pc, char *result, unsigned int maxlen,
			     unsigned int *szp);

#endif
