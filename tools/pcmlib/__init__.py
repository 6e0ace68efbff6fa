# SPDX-License-Identifier: GPL-2.0-only
"""pcmlib: what dm-pcm's tools share (the tools' house).

  status    the one parser of dm-pcm's status line (runnable:
            python3 tools/pcmlib/status.py --keys | NAME KEY | --check NAME)
  words     table words, config replies and sizes: key:value splitting,
            "4k"/"1m" sizes, the one copy of each
  libpcm    ctypes front end of libpcm.so (tools/libpcm.c: the module's
            own parameter parser, layout, start-gap and timing model),
            built by tools/Makefile into build/host/libpcm.so
  model     the timing model's prediction for a workload (pcmctl model,
            the characterization's "model" column)
  cli       every tool's entry: a closed stdout pipe (pcmctl params | head)
            ends the tool quietly, not in a traceback
  dmioctl   a minimal client of the device-mapper ioctls (no fork, no exec)
  vm        the VM runner behind tools/vm-run (virtme-ng)
  tracecmp  the kernel's modeled latencies (pcm:pcm_charge) against
            pcmctl model --trace's replay, request by request and rank by
            rank (tests/vm/35-trace.sh, pcm-bench trace)
  storm     the message storm of tools/soak and tests/vm/22-message-storm
            (runnable: python3 tools/pcmlib/storm.py --help)
  fio       the one place that runs fio for its JSON report (--output=FILE)
            and reads one: jobs, sides, lat/clat/slat, percentiles
            (runnable: python3 tools/pcmlib/fio.py REPORT FIELD...)
  bench     fio on dm devices over the ramdisk, as pcm-bench measures
  calibrate this host's completion overhead (overhead_ns): pcm-bench
            calibrate and timing, and a characterization at its start
  tap       TAP, the one Python printer of it: every Python test's (tests/host,
            tests/vm), as tap.h is the C tests' and tests/vm/lib/lib.sh the shell's

A tool in tools/ puts its own directory first in sys.path and imports
"from pcmlib import ...".  Only the standard library.
"""
