/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm compatibility shims between the kernels dm-pcm is tested on
 * (Debian's 6.1 and 6.12).  Every shim lives here and nowhere else; this
 * header goes away when dm-pcm moves into drivers/md.
 */
#ifndef DM_PCM_COMPAT_H
#define DM_PCM_COMPAT_H

#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/version.h>
#include <linux/workqueue.h>

/* module_dm() arrived in 6.3. */
#ifndef module_dm
#define module_dm(name)							\
static int __init dm_##name##_init(void)				\
{									\
	return dm_register_target(&(name##_target));			\
}									\
module_init(dm_##name##_init);						\
static void __exit dm_##name##_exit(void)				\
{									\
	dm_unregister_target(&(name##_target));				\
}									\
module_exit(dm_##name##_exit)
#endif

/* 6.5 replaced fmode_t open modes with blk_mode_t. */
#ifdef BLK_OPEN_WRITE
#define PCM_MODE_WRITE	BLK_OPEN_WRITE
#else
#define PCM_MODE_WRITE	FMODE_WRITE
#endif

/*
 * 6.11 moved "needs stable pages during writeback" from the target's
 * needs_stable_writes to the queue limits' BLK_FEAT_STABLE_WRITES.
 */
#ifdef BLK_FEAT_STABLE_WRITES
static inline void pcm_stable_writes(struct dm_target *ti, struct queue_limits *limits)
{
	limits->features |= BLK_FEAT_STABLE_WRITES;
}
#else
static inline void pcm_stable_writes(struct dm_target *ti, struct queue_limits *limits)
{
	ti->needs_stable_writes = true;
}
#endif

/*
 * 6.9 added BH workqueues (work run in softirq context; WORK_OFFQ_BH
 * came with them): a read that completed in hard-IRQ context decodes
 * on system_bh_wq.  Before, on @fallback (the ECC worker, a kworker).
 */
#ifdef WORK_OFFQ_BH
static inline struct workqueue_struct *pcm_bh_wq(struct workqueue_struct *fallback)
{
	return system_bh_wq;
}
#else
static inline struct workqueue_struct *pcm_bh_wq(struct workqueue_struct *fallback)
{
	return fallback;
}
#endif

/* 6.13 replaced hrtimer_init() and setting ->function with hrtimer_setup(). */
static inline void pcm_hrtimer_init(struct hrtimer *timer,
				    enum hrtimer_restart (*fn)(struct hrtimer *))
{
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 13, 0)
	hrtimer_setup(timer, fn, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
#else
	hrtimer_init(timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	timer->function = fn;
#endif
}

#endif
