/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * include/linux/prandom.h and lib/random32.c's prandom_u32_state(): the
 * kernel's Tausworthe generator (L'Ecuyer's LFSR113), bit for bit, so that
 * a seed gives the host the draws it gives the module.
 */
#ifndef PCM_SHIM_PRANDOM_H
#define PCM_SHIM_PRANDOM_H

#include "../kernel-shim.h"

struct rnd_state {
	u32 s1, s2, s3, s4;
};

static inline u32 __seed(u32 x, u32 m)
{
	return (x < m) ? x + m : x;
}

static inline void prandom_seed_state(struct rnd_state *state, u64 seed)
{
	u32 i = ((seed >> 32) ^ (seed << 10) ^ seed) & 0xffffffffUL;

	state->s1 = __seed(i, 2U);
	state->s2 = __seed(i, 8U);
	state->s3 = __seed(i, 16U);
	state->s4 = __seed(i, 128U);
}

static inline u32 prandom_u32_state(struct rnd_state *state)
{
#define TAUSWORTHE(s, a, b, c, d) ((s & c) << d) ^ (((s << a) ^ s) >> b)
	state->s1 = TAUSWORTHE(state->s1, 6U, 13U, 4294967294U, 18U);
	state->s2 = TAUSWORTHE(state->s2, 2U, 27U, 4294967288U, 2U);
	state->s3 = TAUSWORTHE(state->s3, 13U, 21U, 4294967280U, 7U);
	state->s4 = TAUSWORTHE(state->s4, 3U, 12U, 4294967168U, 13U);
#undef TAUSWORTHE
	return state->s1 ^ state->s2 ^ state->s3 ^ state->s4;
}

#endif
