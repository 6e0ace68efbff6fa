# SPDX-License-Identifier: GPL-2.0-only
"""'pcmctl model --trace --png': one figure of a replay (pcmlib.trace),
four panels: each direction's latency distribution, the rates over time,
each rank's utilisation (channels x ranks), and the wear per backing row
with and without start-gap.  Drawn with Debian's matplotlib
(python3-matplotlib), which pcmctl's -S interpreter finds through site."""


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        import site
        site.main()     # pcmctl runs with -S: add the distribution's packages
        try:
            import matplotlib
        except ImportError:
            from pcmlib.libpcm import PcmError
            raise PcmError('--png needs matplotlib (apt-get install python3-matplotlib)') \
                from None
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def _downsample(ys, n=4000):
    """At most @n points of a long curve, keeping its ends."""
    if len(ys) <= n:
        return list(range(len(ys))), ys
    step = len(ys) / n
    xs = [int(i * step) for i in range(n)] + [len(ys) - 1]
    return xs, [ys[x] for x in xs]


def draw(path, res, reqs, start, done, title=''):
    """The replay @res (trace.replay()) as a PNG at @path."""
    plt = _matplotlib()
    fig, ax = plt.subplots(2, 2, figsize=(13, 9))
    (lat_ax, rate_ax), (rank_ax, wear_ax) = ax
    # latency distributions: the share of requests at or below each latency
    for name, want, colour in (('read', False, 'tab:blue'), ('write', True, 'tab:red')):
        lat = sorted((d - s) / 1e3 for r, s, d in zip(reqs, start, done) if r.write == want)
        if lat:
            xs, ys = _downsample(lat)
            lat_ax.plot(ys, [(x + 1) / len(lat) for x in xs], color=colour,
                        label=f"{name}: {len(lat)} I/Os, mean {res[name]['mean_us']:.1f} µs")
    lat_ax.set_xscale('log')
    lat_ax.set_xlabel('latency (µs, model clock)')
    lat_ax.set_ylabel('fraction of requests at or below (CDF)')
    lat_ax.set_title('latency')
    lat_ax.grid(True, alpha=0.3)
    lat_ax.legend(loc='lower right', fontsize=8)
    # rates over time
    ot = res['over_time']
    t = [x / 1e9 for x in ot['start_ns']]
    for name, colour in (('read', 'tab:blue'), ('write', 'tab:red')):
        if res[name]:
            rate_ax.step(t, ot[name]['iops'], where='post', color=colour, label=f'{name} IOPS')
    rate_ax.set_xlabel('time (s, model clock)')
    rate_ax.set_ylabel('I/O rate (IOPS)')
    rate_ax.set_title(f"rates per {ot['interval_ns'] / 1e6:g} ms")
    bw = rate_ax.twinx()
    for name, colour in (('read', 'tab:cyan'), ('write', 'tab:orange')):
        if res[name]:
            bw.step(t, ot[name]['mbps'], where='post', color=colour, linestyle=':',
                    label=f'{name} MB/s')
    bw.set_ylabel('bandwidth (MB/s)')
    h1, l1 = rate_ax.get_legend_handles_labels()
    h2, l2 = bw.get_legend_handles_labels()
    rate_ax.legend(h1 + h2, l1 + l2, loc='upper right', fontsize=8)
    # ranks: utilisation, channel by rank
    r = res['resources']
    nch = 1 + max(x['channel'] for x in r['ranks'])
    nrk = 1 + max(x['rank'] for x in r['ranks'])
    grid = [[0.0] * nrk for _ in range(nch)]
    for x in r['ranks']:
        grid[x['channel']][x['rank']] = 100 * x['util']
    im = rank_ax.imshow(grid, aspect='auto', cmap='viridis', vmin=0, vmax=100,
                        interpolation='nearest')
    fig.colorbar(im, ax=rank_ax, label='utilisation (%)')
    if nch * nrk <= 64:
        for x in r['ranks']:
            rank_ax.text(x['rank'], x['channel'], f"{100 * x['util']:.0f}%\nq {x['queue']:.1f}",
                         ha='center', va='center', fontsize=7,
                         color='black' if x['util'] > 0.6 else 'white')
    rank_ax.set_xticks(range(nrk))
    rank_ax.set_yticks(range(nch))
    rank_ax.set_xlabel('rank')
    rank_ax.set_ylabel('channel')
    rank_ax.set_title(f"ranks over {r['window_ns'] / 1e9:.4g} s (q: mean queue)")
    # wear per backing row, most worn first
    w = res['wear']
    for key, label, colour in (('no_start_gap', 'without start-gap', 'tab:gray'),
                               ('start_gap', 'start-gap', 'tab:green')):
        x = w[key]
        per = sorted(x.get('per_row') or [], reverse=True)
        if per:
            xs, ys = _downsample(per)
            wear_ax.plot(xs, ys, color=colour,
                         label=f"{label}: max {x['max']}, mean {x['mean']:.2f}")
    wear_ax.set_xlabel('backing rows, most worn first')
    wear_ax.set_ylabel('writes per backing row')
    wear_ax.set_title(f"wear after {w['repeat']} pass(es) of the trace")
    wear_ax.grid(True, alpha=0.3)
    if w['start_gap']['writes']:
        wear_ax.legend(loc='upper right', fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
