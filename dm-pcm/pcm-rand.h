/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm's randomness: one table word, seed:N, seeds every random stream
 * the target has (dm-pcm.rst, "seed": all randomness reproducible).  Each
 * stream is the kernel's prandom_u32_state() generator seeded from the pair
 * (seed, stream number) through SplitMix64's finalizer, so that streams
 * are independent of one another and a stream's draws depend only on the
 * seed and on the calls made on that stream: a user of randomness takes a
 * stream of its own (under the lock that already orders its calls) rather
 * than sharing one.  The timing model's channels take streams
 * PCM_RAND_TIMING + channel.  (The error model, pcm-errmodel.h, keys
 * splitmix64 streams of its own by the same seed.)
 */
#ifndef PCM_RAND_H
#define PCM_RAND_H

#include <linux/prandom.h>
#include <linux/types.h>

/* stream numbers: a base per user, plus the user's own index */
#define PCM_RAND_TIMING		0ULL		/* + channel */

/* Seed @s as stream @stream of the device's @seed. */
static inline void pcm_rand_stream(struct rnd_state *s, u64 seed, u64 stream)
{
	u64 z = seed + (stream + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	prandom_seed_state(s, z ^ (z >> 31));
}

/* Uniform in [0, @n]: the draw scaled, without a division. */
static inline u64 pcm_rand_upto(struct rnd_state *s, u64 n)
{
	return ((u64)prandom_u32_state(s) * (n + 1)) >> 32;
}

/* True with probability @ppm per million. */
static inline bool pcm_rand_ppm(struct rnd_state *s, u32 ppm)
{
	return (u64)prandom_u32_state(s) * 1000000 < (u64)ppm << 32;
}

#endif
