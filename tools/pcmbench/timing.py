# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench timing

how close completions come to the timing model: 4 KiB random reads and
writes at QD1 on dm-pcm over brd with read_ns = write_ns = X for X of 1,
10, 38, 179, 1000 and 2000 us (nothing else modeled), beside null_blk
with irqmode=2 completion_nsec=X (the kernel's own timed completion);
the lateness the device measured itself (its "lateness" histogram:
median and 99th percentile) and fio's median clat minus X for both.  A
calibration point (X = 500 us) measures this host's completion overhead
(mean lat - X) each round, and every figure is measured again with the
device's overhead_ns set to it (calibrated); then the presets' QD1
figures (onyx 4 KiB read and write, pss 4 KiB read, reram 512 B read)
against pcmctl model's prediction, raw and calibrated; and (calibrated)
4 KiB random read and write IOPS at depths 1, 4, 16 and 64 on pss and
psd against the model's, with fio's CPU share (where it nears 100 %, the
guest is the bound).  At --dilation K (default: 8 under icount, 1 on a
real host or without icount; pcmlib/clock.py) every dm-pcm device has
dilation:K and null_blk completes after X x K; their latencies are
divided by K and their rates multiplied by K (the device's clock), and
overhead_ns, measured at K, is on the host's clock as the module takes
it; dm-linear is the host's own, undilated.
"""
import json
import statistics

from pcmlib import clock
from pcmlib.bench import TOP, sh, pcm_create, measure
from pcmlib.calibrate import TIMING_CAL_US, calibrate, measure_pcm, overhead_of
from .common import RAM_MIB, remove_devices, fresh_ramdisk, med, table
from .options import HOST, ICOUNT, ROUNDS, RUNTIME, DILATION

NAME = 'timing'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS, RUNTIME, DILATION)   # its options' groups (options.py)


TIMING_US = (1, 10, 38, 179, 1000, 2000)  # modeled QD1 latencies
TIMING_PRESETS = (('onyx', 'randread', '4k'), ('onyx', 'randwrite', '4k'),
                  ('pss', 'randread', '4k'), ('reram', 'randread', '512'))
TIMING_QD_PRESETS = ('pss', 'psd')
TIMING_QDS = (1, 4, 16, 64)


def timer_nullblk(us, dilation=1):
    """null_blk completing every request us x dilation after it arrived,
    from an hrtimer (irqmode=2): the kernel's own timed completion."""
    sh('rmmod null_blk 2>/dev/null; true')
    sh(f'modprobe null_blk nr_devices=1 gb=1 irqmode=2 '
       f'completion_nsec={us * 1000 * dilation}')
    return '/dev/nullb0'


def model(words, rw, bs, qd=1):
    """pcmctl model's figures for rw at depth qd: what dm-pcm is held to."""
    out = json.loads(sh(f'{TOP}/tools/pcmctl model --json --ios 20000 --rw {rw} '
                        f'--bs {bs} --iodepth {qd} {words}'))
    return out['read' if rw.endswith('read') else 'write']


def timing_device(words, dilation=1):
    """A fresh dm-pcm over the ramdisk with its own geometry (format), at
    @dilation."""
    pcm_create('bench-tm', words + (f' dilation:{dilation}' if dilation != 1 else '') +
               ' format')
    return 'bench-tm'


def hist_pct(hist, pct):
    """The top of the bucket holding the pct-th percentile (an upper bound, ns)."""
    total, seen = sum(n for _, _, n in hist), 0
    for _, hi, n in hist:
        seen += n
        if seen * 100 >= pct * total:
            return hi
    return None


def merge_hists(rs):
    counts = {}
    for r in rs:
        for lo, hi, n in r['lateness']:
            counts[(lo, hi)] = counts.get((lo, hi), 0) + n
    return [(lo, hi, n) for (lo, hi), n in sorted(counts.items())]


def guest(args, runs):
    k = args.dilation or 1
    fresh_ramdisk()
    sh('dmsetup create bench-linear --table "0 %d linear /dev/ram0 0"' % (RAM_MIB * 2048))
    for rnd in range(args.rounds):
        for rw in ('randread', 'randwrite'):
            measure(runs, rnd, 'dm-linear', '/dev/mapper/bench-linear', rw, 1, args,
                    {'set_us': 0})
        # the calibration: this host's cost of completing a held bio, this round
        overhead = calibrate(args, runs, rnd, dilation=k)
        for us in TIMING_US:
            nullb = timer_nullblk(us, k)
            name = timing_device(f'preset:none gap_interval:0 read_ns:{us * 1000} '
                                 f'write_ns:{us * 1000}', k)
            for rw in ('randread', 'randwrite'):
                measure(runs, rnd, 'null_blk', nullb, rw, 1, args, {'set_us': us, 'dilation': k})
                for cal in (None, overhead):
                    measure_pcm(runs, rnd, name, rw, '4k', args,
                                {'set_us': us, 'model_us': us, 'dilation': k}, overhead=cal)
            sh(f'dmsetup remove {name}')
        for preset, rw, bs in TIMING_PRESETS:
            name = timing_device(f'preset:{preset}', k)
            want = model(f'preset:{preset}', rw, bs)['mean_us']
            for cal in (None, overhead):
                measure_pcm(runs, rnd, name, rw, bs, args,
                            {'preset': preset, 'model_us': want, 'dilation': k}, overhead=cal)
            sh(f'dmsetup remove {name}')
        for preset in TIMING_QD_PRESETS:
            name = timing_device(f'preset:{preset}', k)
            for rw in ('randread', 'randwrite'):
                for qd in TIMING_QDS:
                    measure_pcm(runs, rnd, name, rw, '4k', args,
                                {'qd_preset': preset, 'dilation': k,
                                 'model_iops': model(f'preset:{preset}', rw, '4k', qd)['iops']},
                                qd, overhead)
            sh(f'dmsetup remove {name}')
    remove_devices()
    sh('rmmod null_blk 2>/dev/null; true')


def summarize(res):
    """Per modeled latency: fio's median clat minus the model on dm-pcm
    (raw, overhead_ns 0) and on null_blk, the device's own lateness, and
    dm-pcm's error with overhead_ns set to this host's completion overhead
    (measured each round at TIMING_CAL_US); then the presets' QD1 figures
    and the depth sweep, calibrated."""
    def pick(**kw):
        return [r for r in res['runs'] if all(r.get(k) == v for k, v in kw.items())]

    def p50(rs):
        """fio's median clat (us) on the device's clock: / K."""
        return statistics.median(r['clat_median_ns'] / r.get('dilation', 1) for r in rs) / 1000

    def iops(rs):
        """fio's IOPS on the device's clock: x K."""
        return statistics.median(r['iops'] * r.get('dilation', 1) for r in rs)
    k = max([r.get('dilation', 1) for r in res['runs']] or [1])

    lines = [f"kernel {res['kernel']}, {res['fio']}, {res['cpus']} vCPU, {res['rounds']} "
             f"rounds of {res['runtime_s']} s, medians of fio's median clat; 4 KiB QD1 "
             f"(psync), dm-pcm over brd with read_ns = write_ns = X; null_blk irqmode=2 "
             f"completion_nsec=X; lateness: dm-pcm's own histogram (bucket tops, ns); "
             f"calibrated: overhead_ns = mean lat - X at X = {TIMING_CAL_US} us (host), "
             f"per round; "
             f"{clock.label(res.get('icount'), k)} (raw), calibrated as the columns say; "
             f"latencies / K and rates x K on dm-pcm and null_blk: the device's clock"]
    summary = []
    for rw in ('randread', 'randwrite'):
        base = p50(pick(device='dm-linear', rw=rw))
        cal = pick(device='dm-pcm', rw=rw, set_us=TIMING_CAL_US)
        got = [overhead_of(r['lat_mean_ns'], r.get('dilation', 1)) for r in cal]
        lines.append(f"{rw}: dm-linear over brd {base:.1f} us; overhead_ns "
                     f"{statistics.median(got):.0f} on the host's clock (rounds: "
                     f"{', '.join(str(round(o)) for o in got)})")
        cells = []
        for us in TIMING_US:
            raw = pick(device='dm-pcm', rw=rw, set_us=us, calibrated=False)
            fit = pick(device='dm-pcm', rw=rw, set_us=us, calibrated=True)
            pcm, null, got = p50(raw), p50(pick(device='null_blk', rw=rw, set_us=us)), p50(fit)
            hist = merge_hists(raw)
            s = {'rw': rw, 'model_us': us, 'pcm_us': pcm, 'null_blk_us': null,
                 'pcm_err_us': pcm - us, 'null_blk_err_us': null - us,
                 'lateness_p50_ns': hist_pct(hist, 50), 'lateness_p99_ns': hist_pct(hist, 99),
                 'late': sum(r['late'] for r in raw), 'calibrated_us': got,
                 'calibrated_err_pct': (got - us) / us * 100}
            summary.append(s)
            cells.append([us, f'{pcm:.2f}', f'{pcm - us:.2f}', f'{null:.2f}', f'{null - us:.2f}',
                          s['lateness_p50_ns'], s['lateness_p99_ns'], s['late'], f'{got:.2f}',
                          f"{s['calibrated_err_pct']:+.2f}%"])
        lines += table(['X us', 'dm-pcm', '- X', 'null_blk', '- X', 'late p50', 'late p99',
                        'late', 'calibrated', 'error'], cells, '>' * 10)
    cells = []
    for preset, rw, bs in TIMING_PRESETS:
        raw = pick(device='dm-pcm', rw=rw, preset=preset, calibrated=False)
        fit = pick(device='dm-pcm', rw=rw, preset=preset, calibrated=True)
        want, got, cal = raw[0]['model_us'], p50(raw), p50(fit)
        s = {'preset': preset, 'rw': rw, 'bs': bs, 'model_us': want, 'pcm_us': got,
             'raw_err_pct': (got - want) / want * 100, 'calibrated_us': cal,
             'calibrated_err_pct': (cal - want) / want * 100,
             'lateness_p99_ns': hist_pct(merge_hists(raw), 99)}
        summary.append(s)
        cells.append([preset, f'{bs} {rw}', f'{want:.2f}', f'{got:.2f}',
                      f"{s['raw_err_pct']:+.2f}%", f'{cal:.2f}', f"{s['calibrated_err_pct']:+.2f}%",
                      s['lateness_p99_ns']])
    lines += table(['preset', 'workload', 'model us', 'raw us', 'error', 'calibrated', 'error',
                    'late p99'], cells, '><>>>>>>')
    cells = []
    for preset in TIMING_QD_PRESETS:
        for rw in ('randread', 'randwrite'):
            for qd in TIMING_QDS:
                rs = pick(device='dm-pcm', rw=rw, qd=qd, qd_preset=preset)
                want, got = rs[0]['model_iops'], iops(rs)
                s = {'preset': preset, 'rw': rw, 'qd': qd, 'model_iops': want,
                     'iops': got, 'err_pct': (got - want) / want * 100,
                     'fio_cpu_pct': med(rs, 'fio_cpu_pct')}
                summary.append(s)
                cells.append([preset, f'{rw} QD{qd}', f'{want:.0f}', f'{got:.0f}',
                              f"{s['err_pct']:+.2f}%", f"{s['fio_cpu_pct']:.0f}%"])
    # the last heading says what the CPU column means (no cells under it)
    lines += table(['preset', 'workload', 'model IOPS', 'fio IOPS', 'error', 'fio CPU',
                    "(calibrated; fio's usr + sys: where it nears 100 %, the guest is the bound)"],
                   cells, '><>>>><')
    return '\n'.join(lines), summary
