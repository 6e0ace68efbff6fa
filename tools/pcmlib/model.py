# SPDX-License-Identifier: GPL-2.0-only
"""The timing model's prediction for a workload, without a device: the
one copy behind 'pcmctl model' and the characterization's "model"
column (libpcm.so: the module's own timing model).

  summary(lat, is_write, elapsed_ns, want_write)
                        IOPS, mean, min, max and percentiles (us) of one
                        direction of a model run
  predict(words, rw=..., bs=..., iodepth=..., numjobs=..., rwmixread=...,
          size=..., ios=..., seed=...)
                        {'read': summary or None, 'write': ..., 'config',
                        totals}: what 'pcmctl model --json' prints
  metric(pred, side, name)
                        one figure of a prediction by the name
                        pcmchar.results uses (lat_mean_us, iops, mbps,
                        lat_p999_us, ...); None if the side moved nothing

With dilation:K among the words the figures are the device's (libpcm
divides the model's times by K), the same as at K = 1.
"""

MODEL_PCTS = (1, 50, 99, 99.9, 99.99)
READ_PCT = {'read': 100, 'randread': 100, 'write': 0, 'randwrite': 0}
# pcmchar.results' metric names: the key of summary() they read
METRIC_KEYS = {'lat_mean_us': 'mean_us', 'lat_min_us': 'min_us', 'lat_max_us': 'max_us',
               'lat_p50_us': '50', 'lat_p99_us': '99', 'lat_p999_us': '99.9',
               'lat_p9999_us': '99.99'}


def percentile(sorted_vals, pct):
    """The nearest-rank @pct-th percentile of @sorted_vals (None if there
    are none), fio's way: the smallest value that at least @pct percent
    of the samples do not exceed.  The one copy: the model's figures and
    pcm-bench app's per-transaction latencies."""
    if not sorted_vals:
        return None
    i = max(0, min(len(sorted_vals) - 1, -(-len(sorted_vals) * pct // 100) - 1))
    return sorted_vals[int(i)]


def summary(lat, is_write, elapsed_ns, want_write):
    """IOPS, bandwidth and latency figures of one direction."""
    ns = sorted(v for v, w in zip(lat, is_write) if bool(w) == want_write)
    if not ns:
        return None
    secs = elapsed_ns / 1e9 if elapsed_ns else 1e-9
    return {'ios': len(ns), 'iops': len(ns) / secs,
            'mean_us': sum(ns) / len(ns) / 1e3, 'min_us': ns[0] / 1e3, 'max_us': ns[-1] / 1e3,
            'pct_us': {str(p): percentile(ns, p) / 1e3 for p in MODEL_PCTS}}


def predict(words, rw='randread', bs=4096, iodepth=1, numjobs=1, rwmixread=50,
            size=1 << 30, ios=100000, seed=1, host_ns=0, think_ns=0, think_blocks=1,
            rate_ns=0, runtime_ns=0, ramp_ns=0, lib=None):
    """The model of table @words (a string or a list) on a fio-like closed
    loop (@host_ns from a completion to its slot's next request, @think_ns
    after every @think_blocks of a job's), or open at one request each
    @rate_ns; @ios requests, fewer if @runtime_ns ends the run first; the
    requests arriving in the first @ramp_ns run but are not counted.
    PcmError (pcmlib.libpcm) if the words are refused or the workload does
    not fit.  @bs may be any byte count (below 512: the model only)."""
    from pcmlib import libpcm
    lib = lib or libpcm.Lib()
    words = words.split() if isinstance(words, str) else list(words)
    p = lib.parse(words)
    read_pct = READ_PCT.get(rw, rwmixread)
    if not 0 < bs <= size:
        raise libpcm.PcmError(f'--bs {bs}: 1 byte up to --size')
    wl = {'rows': size // p['row_size'], 'read_pct': read_pct, 'bs': bs,
          'depth': iodepth, 'jobs': numjobs, 'random': rw.startswith('rand'),
          'ios': ios, 'seed': seed, 'host_ns': host_ns, 'think_ns': think_ns,
          'think_blocks': think_blocks, 'rate_ns': rate_ns, 'runtime_ns': runtime_ns,
          'ramp_ns': ramp_ns}
    lat, wr, tot = lib.model(words, wl)
    out = {'config': p['config'], 'read_pct': read_pct, **tot}
    for name, want in (('read', False), ('write', True)):
        s = summary(lat, wr, tot['elapsed_ns'], want)
        if s:
            s['mbps'] = s['iops'] * bs / 1e6
        out[name] = s
    return out


def metric(pred, side, name):
    """@name (pcmchar.results.METRICS) of @side of a prediction, or None."""
    s = pred.get(side) if pred else None
    if not s:
        return None
    if name in ('iops', 'mbps'):
        return s[name]
    key = METRIC_KEYS[name]
    return s['pct_us'][key] if key in s['pct_us'] else s[key]
