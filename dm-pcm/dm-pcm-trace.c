// SPDX-License-Identifier: GPL-2.0-only
/*
 * dm-pcm's tracepoints (pcm_trace.h) are created here, in a file of their
 * own that calls nothing: the files that trace (the mover, the timing
 * model, ECC, the wear counters) depend on it, never on each other.
 */
#include "dm-pcm.h"

#define CREATE_TRACE_POINTS
#include "pcm_trace.h"
