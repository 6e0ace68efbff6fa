/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm tracepoints (dm-pcm.rst, "Tracepoints"), for ftrace, trace-cmd
 * and perf:
 *
 *   pcm_gap_move	a gap move is durable
 *   pcm_charge		a request charged to the timing model: arrival, modeled completion
 *   pcm_held		a completion held until its modeled instant is released
 *   pcm_late		a completion came after its modeled instant (not held)
 *   pcm_ecc		a read sector the decoder corrected, refused or miscorrected
 *   pcm_endurance	a row's writes reached its endurance
 *
 * Rows are backing rows (sector = offset + row * row_size / 512); instants
 * are the kernel's monotonic clock (ktime_get_ns()), in ns.  Disabled,
 * each costs its caller a static branch.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pcm

#if !defined(DM_PCM_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define DM_PCM_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(pcm_gap_move,
	    TP_PROTO(dev_t dev, u32 domain, u64 src, u64 dst, u64 start, u64 gap,
		     bool wraps),
	    TP_ARGS(dev, domain, src, dst, start, gap, wraps),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(u32, domain)
			     __field(u64, src)
			     __field(u64, dst)
			     __field(u64, start)
			     __field(u64, gap)
			     __field(bool, wraps)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->domain = domain;
			   __entry->src = src;
			   __entry->dst = dst;
			   __entry->start = start;
			   __entry->gap = gap;
			   __entry->wraps = wraps;),
	    TP_printk("dev %d:%d domain %u row %llu -> %llu start %llu gap %llu%s",
		      MAJOR(__entry->dev), MINOR(__entry->dev), __entry->domain,
		      __entry->src, __entry->dst, __entry->start, __entry->gap,
		      __entry->wraps ? " wraps" : "")
);

/*
 * A request charged to the timing model as it is remapped: @arrival is
 * when it arrived (the model's input), @modeled its modeled completion
 * (the model's output, before overhead_ns comes off the hold), @bytes
 * what it moves; @channel and @rank are its first row's.  modeled -
 * arrival is its modeled latency, as status's means add them up.
 */
TRACE_EVENT(pcm_charge,
	    TP_PROTO(dev_t dev, bool write, u64 bytes, u64 arrival, u64 modeled, u32 channel,
		     u32 rank),
	    TP_ARGS(dev, write, bytes, arrival, modeled, channel, rank),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(bool, write)
			     __field(u64, bytes)
			     __field(u64, arrival)
			     __field(u64, modeled)
			     __field(u32, channel)
			     __field(u32, rank)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->write = write;
			   __entry->bytes = bytes;
			   __entry->arrival = arrival;
			   __entry->modeled = modeled;
			   __entry->channel = channel;
			   __entry->rank = rank;),
	    TP_printk("dev %d:%d %s bytes %llu arrival %llu modeled %llu lat %llu channel %u rank %u",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      __entry->write ? "write" : "read", __entry->bytes, __entry->arrival,
		      __entry->modeled, __entry->modeled - __entry->arrival, __entry->channel,
		      __entry->rank)
);

/*
 * A timed completion: @modeled is the instant it was held to (the modeled
 * completion less overhead_ns), @actual when it completed; @channel and
 * @rank are its first row's.
 */
DECLARE_EVENT_CLASS(pcm_completion,
		    TP_PROTO(dev_t dev, bool write, u64 modeled, u64 actual, u32 channel,
			     u32 rank),
		    TP_ARGS(dev, write, modeled, actual, channel, rank),
		    TP_STRUCT__entry(__field(dev_t, dev)
				     __field(bool, write)
				     __field(u64, modeled)
				     __field(u64, actual)
				     __field(u64, late)
				     __field(u32, channel)
				     __field(u32, rank)),
		    TP_fast_assign(__entry->dev = dev;
				   __entry->write = write;
				   __entry->modeled = modeled;
				   __entry->actual = actual;
				   __entry->late = actual > modeled ? actual - modeled : 0;
				   __entry->channel = channel;
				   __entry->rank = rank;),
		    TP_printk("dev %d:%d %s modeled %llu actual %llu late %llu channel %u rank %u",
			      MAJOR(__entry->dev), MINOR(__entry->dev),
			      __entry->write ? "write" : "read", __entry->modeled,
			      __entry->actual, __entry->late, __entry->channel, __entry->rank)
);

/* A hold ended: its hrtimer fired, the completion goes on. */
DEFINE_EVENT(pcm_completion, pcm_held,
	     TP_PROTO(dev_t dev, bool write, u64 modeled, u64 actual, u32 channel, u32 rank),
	     TP_ARGS(dev, write, modeled, actual, channel, rank));

/* The backing I/O ended after the modeled instant: nothing to hold. */
DEFINE_EVENT(pcm_completion, pcm_late,
	     TP_PROTO(dev_t dev, bool write, u64 modeled, u64 actual, u32 channel, u32 rank),
	     TP_ARGS(dev, write, modeled, actual, channel, rank));

/*
 * A sector read with ecc:bch that the decoder did not return untouched:
 * @outcome 1 corrected (@bits corrected), 2 uncorrectable (the read
 * fails), 3 silent (miscorrected: @bits is what the decoder "corrected");
 * @flips: the bits flipped before decoding (rber, injected, stuck).
 */
TRACE_EVENT(pcm_ecc,
	    TP_PROTO(dev_t dev, u64 sector, u64 psector, int outcome, u32 bits, u32 flips),
	    TP_ARGS(dev, sector, psector, outcome, bits, flips),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(u64, sector)
			     __field(u64, psector)
			     __field(int, outcome)
			     __field(u32, bits)
			     __field(u32, flips)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->sector = sector;
			   __entry->psector = psector;
			   __entry->outcome = outcome;
			   __entry->bits = bits;
			   __entry->flips = flips;),
	    TP_printk("dev %d:%d sector %llu psector %llu %s bits %u flips %u",
		      MAJOR(__entry->dev), MINOR(__entry->dev), __entry->sector,
		      __entry->psector,
		      __print_symbolic(__entry->outcome, { 1, "corrected" },
				       { 2, "uncorrectable" }, { 3, "silent" }),
		      __entry->bits, __entry->flips)
);

/*
 * Backing row @row's writes reached @endurance (with wear:<rows>, the
 * mean of its counter's @rows rows did): past it, its reads see stuck
 * cells (ecc:bch).  Once per counter, when it gets there.
 */
TRACE_EVENT(pcm_endurance,
	    TP_PROTO(dev_t dev, u64 row, u32 rows, u64 endurance),
	    TP_ARGS(dev, row, rows, endurance),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(u64, row)
			     __field(u32, rows)
			     __field(u64, endurance)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->row = row;
			   __entry->rows = rows;
			   __entry->endurance = endurance;),
	    TP_printk("dev %d:%d row %llu rows %u endurance %llu",
		      MAJOR(__entry->dev), MINOR(__entry->dev), __entry->row,
		      __entry->rows, __entry->endurance)
);

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pcm_trace
#include <trace/define_trace.h>
