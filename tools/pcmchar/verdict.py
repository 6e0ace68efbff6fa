# SPDX-License-Identifier: GPL-2.0-only
"""A verdict on every paper figure (dm-pcm.rst's "Presets"; issue 33):
no bare error percentage.  judge() is the one place that decides, a pure
function of numbers (tests/host/test-char.py holds it to each verdict):

  reproduced        within TOLERANCE of the paper (a latency 2 %, a rate
                    5 %; a bound: at most the bound plus as much, or at
                    least it less as much; a range: within it, its ends
                    widened as much), or,
                    where dm-pcm.rst says the model differs from the
                    paper, within it of the model, with the .rst's reason
  host-bound        not reproduced, and the host is the bound, with the
                    evidence: more than LATE_SHARE of the device's timed
                    completions late (its status counters held and late),
                    or dm-linear on the same point within LINEAR_NEAR of
                    the measurement, or, for a figure of the latency
                    distribution (min, a tail percentile, max), dm-linear's
                    own spread there from its mean at least as large as
                    the measurement's from the model (the host's spread:
                    the calibration takes off the host's mean cost, not
                    its spread), or, for a tail figure over the model,
                    the device's own lateness histogram: every I/O left
                    dm-pcm closer to its modeled instant than the excess,
                    which came after, on the host's completion path
  model-differs-from-paper
                    not reproduced, not host-bound, and the .rst says the
                    model does not reach the paper's figure (its reason)
  not reproduced    anything else

Every figure here is on the device's clock: a dilated run's latencies
divided by K and its rates multiplied by K before they come here
(dm-linear's too, on the same K), so the comparisons hold at any K.
"""

REPRODUCED = 'reproduced'
HOST_BOUND = 'host-bound'
MODEL_DIFFERS = 'model-differs-from-paper'
NOT_REPRODUCED = 'not reproduced'
VERDICTS = (REPRODUCED, HOST_BOUND, MODEL_DIFFERS, NOT_REPRODUCED)

RATES = ('iops', 'mbps', 'ops')   # ops: an application's operations per second
TOLERANCE = {'latency': 0.02, 'rate': 0.05}
LATE_SHARE = 0.01     # late completions over 1 % of the timed ones: host-bound
LINEAR_NEAR = 0.20    # dm-linear within 20 % of the measurement: host-bound
SPREAD = ('lat_min_us', 'lat_p99_us', 'lat_p999_us', 'lat_p9999_us', 'lat_max_us')
TAIL = SPREAD[1:]


def tolerance(metric):
    """The verdict's tolerance of @metric (pcmchar.results.METRICS, or ops,
    an application's): a rate (iops, mbps, ops) 5 %, a latency (every
    lat_*, and a ratio of latencies) 2 %."""
    return TOLERANCE['rate' if metric in RATES else 'latency']


def error(got, ref):
    """(got - ref) / ref in percent; None without both (or ref 0)."""
    if got is None or not ref:
        return None
    return (got - ref) / ref * 100


def judge(metric, paper, measured, kind='near', model=None, differs=None, reached=True,
          late=None, timed=None, linear=None, linear_spread=None, lateness_top=None,
          missing=None):
    """The verdict on one figure: a dict of

      verdict          one of VERDICTS
      against          'paper' or 'model' (what a reproduced figure is
                       within the tolerance of), else None
      reason           why, in words: the tolerance met, the evidence, the
                       .rst's reason
      evidence         the host-bound evidence found (a list of words; also
                       beside another verdict), empty if none
      error_paper_pct  the measurement against the paper (None for a bound)
      error_model_pct  the measurement against the model (None without it)
      tolerance_pct    the tolerance that applied

    @metric: pcmchar.results' metric name (its tolerance: tolerance());
    @paper, @measured, @model: the figure (the model's prediction of the
    same point, None without one); @kind: 'near', 'at_most' or 'at_least'
    (the paper gives a bound), 'between' (it gives a range: @paper is the
    pair of its ends); @differs: the reason dm-pcm.rst gives where the model
    is not within the tolerance of the paper (None: it is); @reached:
    False where the .rst says the model does not reproduce the figure at
    all; @late, @timed: the device's late and timed (held + late)
    completions over the point (None: not recorded); @linear: dm-linear's
    figure on the same point and clock (None: none); @linear_spread: for a
    metric of SPREAD, dm-linear's figure minus its mean latency on the
    same point and clock (None: none); @lateness_top: the top of the
    device's lateness histogram over the point, on the device's clock
    (us; None: not recorded); @missing: why nothing was measured, where
    @measured is None (what run the figure waits for)."""
    tol = tolerance(metric)
    bound = kind in ('at_most', 'at_least', 'between')
    lo, hi = paper if kind == 'between' else (paper, paper)
    if kind == 'between':
        paper = None
    out = {'verdict': None, 'against': None, 'reason': '', 'evidence': [],
           'error_paper_pct': None if bound else error(measured, paper),
           'error_model_pct': error(measured, model), 'tolerance_pct': tol * 100}
    if late is not None and timed:
        share = late / timed
        if share > LATE_SHARE:
            out['evidence'].append(f'{late} of {timed} completions late ({share * 100:.1f} % > '
                                   f'{LATE_SHARE * 100:g} %)')
    if linear is not None and measured:
        off = error(linear, measured)
        if abs(off) <= LINEAR_NEAR * 100:
            out['evidence'].append(f'dm-linear {linear:.4g} on the same point, {off:+.1f} % of '
                                   f'the measurement (within {LINEAR_NEAR * 100:g} %)')
    ref = model if model is not None else paper
    if kind == 'between':
        ref = model
    if metric in SPREAD and linear_spread and measured is not None and ref:
        off = measured - ref
        if off * linear_spread > 0 and abs(off) <= abs(linear_spread) * (1 + LINEAR_NEAR):
            stat = metric.split('_')[1]   # lat_p999_us: p999
            out['evidence'].append(
                f"dm-linear's own {stat} is {linear_spread:+.3g} us from its mean on "
                f"the same point, the measurement {off:+.3g} from the "
                f"{'model' if model is not None else 'paper'} (the host's spread)")
    if metric in TAIL and lateness_top is not None and measured is not None and ref and \
            measured - ref > lateness_top:
        out['evidence'].append(
            f'dm-pcm completed every I/O within {lateness_top:.3g} us of its modeled instant '
            f'(its lateness histogram): the {measured - ref:.3g} us over the '
            f"{'model' if model is not None else 'paper'} came after, on the host's "
            'completion path')
    within = f'within {tol * 100:g} %'
    meets = {'at_most': lambda m: m <= hi * (1 + tol),
             'at_least': lambda m: m >= lo * (1 - tol),
             'between': lambda m: lo * (1 - tol) <= m <= hi * (1 + tol)}.get(
                 kind, lambda m: abs(m - paper) <= tol * abs(paper))
    met = {'at_most': f'at most the bound (+{tol * 100:g} %)',
           'at_least': f'at least the bound (-{tol * 100:g} %)',
           'between': f'within the range (its ends {tol * 100:g} % wider)'}.get(
               kind, f'{within} of the paper')
    if measured is None:
        out.update(verdict=NOT_REPRODUCED,
                   reason=f'not measured: {missing}' if missing else 'not measured')
    elif reached and meets(measured):
        out.update(verdict=REPRODUCED, against='paper', reason=met)
    elif differs and model is not None and abs(measured - model) <= tol * abs(model):
        out.update(verdict=REPRODUCED, against='model',
                   reason=f'{within} of the model, which differs from the paper: {differs}')
    elif out['evidence']:
        out.update(verdict=HOST_BOUND, reason='; '.join(out['evidence']))
    elif differs and not reached:
        out.update(verdict=MODEL_DIFFERS, reason=differs)
    else:
        ref = 'model' if differs and model is not None else 'paper'
        err = out['error_model_pct'] if ref == 'model' else out['error_paper_pct']
        if err is not None:
            what = f'{err:+.1f} % from the {ref}'
        elif measured > hi:
            what = f'over the bound by {error(measured, hi):.1f} %'
        else:
            what = f'under the bound by {-error(measured, lo):.1f} %'
        out.update(verdict=NOT_REPRODUCED,
                   reason=f'{what}, not {within}; no evidence that the host is the bound' +
                   (f' (the model differs from the paper: {differs})' if differs else ''))
    return out
