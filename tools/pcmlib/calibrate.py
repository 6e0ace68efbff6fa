# SPDX-License-Identifier: GPL-2.0-only
"""This host's completion overhead, what a dm-pcm device's overhead_ns
takes off every hold: measured by 'pcm-bench calibrate', by 'pcm-bench
timing' each round, and by a characterization (calibrate = true) at its
start, which is why it is here and not in pcmbench (pcmchar must not
import pcm-bench, the tool that runs it)."""
from pcmlib import words as pwords
from pcmlib.bench import measure, pcm_create, sh, status

# The calibration's hold, on the host's clock at any dilation (the device
# holds it / K): short beside the guest's 4 ms timer tick, so that few of
# its I/Os wait through a tick, whose cost is no completion's; and not
# one of pcm-bench timing's modeled latencies (pcmbench/timing.py)
TIMING_CAL_US = 100


def lateness(name):
    """The device's lateness histogram: [(from_ns, to_ns, count)]."""
    hist = []
    for w in sh(f'dmsetup message {name} 0 lateness').split():
        rng, n = pwords.split_word(w)
        if rng != 'completions':
            lo, hi = rng.split('-')
            hist.append((int(lo), int(hi), int(n)))
    return hist


def measure_pcm(runs, rnd, name, rw, bs, args, extra, qd=1, overhead=None, size_mib=None,
                engine=None):
    """measure() on dm-pcm NAME, with overhead_ns set to overhead[rw] (ns;
    None: 0), and the lateness and late completions of that run alone."""
    ns = round(overhead[rw]) if overhead else 0
    sh(f'dmsetup message {name} 0 set overhead_ns {ns}')
    sh(f'dmsetup message {name} 0 stats reset')
    measure(runs, rnd, 'dm-pcm', f'/dev/mapper/{name}', rw, qd, args,
            dict(extra, overhead_ns=ns, calibrated=overhead is not None), bs, size_mib, engine)
    runs[-1].update(lateness=lateness(name), late=status(name)['late'])


def cal_device_ns(dilation=1):
    """The calibration device's read_ns and write_ns: TIMING_CAL_US on the
    host's clock at @dilation (the device's nanoseconds, rounded down)."""
    return TIMING_CAL_US * 1000 // dilation


def calibration_words(dilation=1):
    """The calibration device: reads and writes held TIMING_CAL_US on the
    host's clock, nothing else modeled; at the run's dilation (overhead_ns
    is not dilated: it is measured where it is used)."""
    ns = cal_device_ns(dilation)
    words = f'preset:none gap_interval:0 read_ns:{ns} write_ns:{ns}'
    return words + (f' dilation:{dilation}' if dilation != 1 else '')


def overhead_of(lat_mean_ns, dilation=1):
    """This host's completion overhead (ns, not below 0) from fio's mean
    latency (lat: from submission to completion) on the calibration
    device, less its hold (cal_device_ns() x K on the host's clock).  The
    mean, as the figures it calibrates are means, and exact: fio's
    percentiles are bucketed, 1/64 of a power of two wide (8 us at 500 us,
    64 us at 4 ms)."""
    return max(0, round(lat_mean_ns) - cal_device_ns(dilation) * dilation)


def calibrate(args, runs, rnd=0, dilation=1, backing='/dev/ram0', size_mib=None,
              name='bench-tm', engine='psync'):
    """This host's completion overhead per direction, {'randread': ns,
    'randwrite': ns}: 4 KiB QD1 reads and writes (fio, args.runtime s
    each, over @size_mib MiB of @backing) on a dm-pcm device holding each
    TIMING_CAL_US on the host's clock (at @dilation), fio's mean latency
    minus the hold, with the fio @engine the figures it calibrates use
    (characterize: libaio, as its job files; timing: psync).  The
    runs are appended to @runs (device dm-pcm, set_us TIMING_CAL_US).
    'pcm-bench timing' calls it each round; 'pcm-bench characterize'
    (calibrate = true, --calibrate) at the start of the run."""
    pcm_create(name, calibration_words(dilation) + ' format', backing)
    extra = {'set_us': TIMING_CAL_US}
    if dilation != 1:
        extra['dilation'] = dilation
    overhead = {}
    try:
        for rw in ('randread', 'randwrite'):
            measure_pcm(runs, rnd, name, rw, '4k', args, extra, size_mib=size_mib,
                        engine=engine)
            overhead[rw] = overhead_of(runs[-1]['lat_mean_ns'], dilation)
    finally:
        sh(f'dmsetup remove {name}')
    return overhead
