/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * dm-pcm tracepoints: "pcm:pcm_gap_move" fires when a gap move is durable,
 * so ftrace and trace-cmd users see the row copy beside blktrace's view of
 * the backing device.  Rows are backing rows (sector = offset + row *
 * row_size / 512).
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

#endif

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pcm_trace
#include <trace/define_trace.h>
