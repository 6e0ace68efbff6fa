// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm in-flight epochs: which bios mapped to rows are still over
 * them, and the wait for those mapped before a given instant.
 *
 * The wait is an SRCU-style grace period over per-CPU counters.  A mapped
 * bio enters the current epoch's counter (pcm_enter_epoch(), dm-pcm-epoch.h),
 * then looks at its domain's gate; the mover sets the gates of the rows
 * it holds, then waits until the bios of both epochs that entered before
 * it are over.  Either a bio sees the gate, or the mover sees the bio
 * enter and waits for it (the two full barriers of pcm_enter_epoch() and
 * pcm_grace() pair).  The gap mover and the write-intent bitmap's clear
 * pass wait here; the map path and end_io count.
 */
#include <linux/percpu.h>
#include <linux/wait.h>

#include "dm-pcm.h"
#include "dm-pcm-epoch.h"

noinline void pcm_wake_drain(struct pcm_c *pc)
{
	wake_up(&pc->drain_wq);
}

static unsigned long inflight_sum(struct pcm_c *pc, bool exits, unsigned int idx)
{
	unsigned long sum = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct pcm_inflight *f = per_cpu_ptr(pc->inflight, cpu);
		unsigned long *n = exits ? &f->exit[idx] : &f->enter[idx];

		sum += READ_ONCE(*n);
	}
	return sum;
}

/* No bio of epoch @idx in flight; an exit counted has its enter counted. */
static bool drained(struct pcm_c *pc, unsigned int idx)
{
	unsigned long exits = inflight_sum(pc, true, idx);

	smp_mb(); /* see srcu_readers_active_idx_check() */
	return inflight_sum(pc, false, idx) == exits;
}

void pcm_grace(struct pcm_c *pc)
{
	unsigned long e = pc->epoch;

	lockdep_assert_held(&pc->meta_lock);
	WRITE_ONCE(pc->draining, true);
	smp_mb(); /* pairs with pcm_enter_epoch() and pcm_exit_epoch() */
	wait_event(pc->drain_wq, drained(pc, (e + 1) & 1));
	WRITE_ONCE(pc->epoch, e + 1);
	smp_mb(); /* bios that read the new epoch enter its counter */
	wait_event(pc->drain_wq, drained(pc, e & 1));
	WRITE_ONCE(pc->draining, false);
}

int pcm_epoch_init(struct pcm_c *pc)
{
	pc->inflight = alloc_percpu(struct pcm_inflight);
	if (!pc->inflight)
		return -ENOMEM;
	init_waitqueue_head(&pc->drain_wq);
	return 0;
}

void pcm_epoch_exit(struct pcm_c *pc)
{
	free_percpu(pc->inflight);
}
