# SPDX-License-Identifier: GPL-2.0-only
"""A real I/O trace replayed through the timing model ('pcmctl model
--trace'): the parsers and the replay's summary.

  parse(lines, fmt=None)  [Request], the format ('fio2', 'fio3' or
                          'blkparse'); TraceError with the line number of
                          a line it cannot read
  replay(words, reqs, ...)
                          what 'pcmctl model --trace --json' prints
  write_csv(path, reqs, start, done)
                          one line per request ('pcmctl model --csv')

Formats:
  fio's iolog (fio --write_iolog): "fio version 2 iolog" then
      "FILE ACTION [OFFSET LENGTH]" lines; "fio version 3 iolog" then
      "TIME_MS FILE ACTION [OFFSET LENGTH]".  Actions read and write are
      replayed; add, open, close, sync, datasync and trim are skipped.
  blkparse's default text output: its 'Q' (queued) events whose RWBS
      holds R or W, "SECTOR + NSECTORS"; other events, flushes (no
      sector, or 0 sectors) and discards are skipped; the summary after the events
      ("CPU0 (8,0):", "Total (8,0):") ends the trace.  Q, not D: a
      bio-based device (device-mapper's, dm-pcm's) logs Q and C only.
      A trace of a dm device and of the device below it (blktrace -d
      twice) holds each bio twice: a request is a Q event that no remap
      ('A' event, "SECTOR + N <- (MAJ,MIN) FROM") sent there; the Q below
      that follows a remap is the same bio, sent down, and is not counted
      again.  The remap is logged by dm core as the target's map function
      returns: with arrival='A' a request arrives at its first remap (its
      pieces, if the target split it, each at its own) instead of its Q.
      A trace of the device below only: its remaps from an untraced
      device are the requests (offsets: the remap's FROM sector).

Every time is the model's (the emulated device's clock): arrivals come
from the trace's timestamps (open loop) or from the model's completions
(closed loop), never from the host's clock.
"""
import collections

from pcmlib.model import MODEL_PCTS, percentile

Request = collections.namedtuple('Request', 'time_ns offset bytes write')
FORMATS = ('fio2', 'fio3', 'blkparse')
FIO_SKIP = ('add', 'open', 'close', 'sync', 'datasync', 'trim')


class TraceError(Exception):
    """A trace that cannot be read: its line number and why."""


def _uint(text, lineno, what):
    if not text.isdigit():
        raise TraceError(f'line {lineno}: {what} {text!r} is not a non-negative integer')
    return int(text)


def _seconds_ns(text, lineno):
    """blkparse's "S.NNNNNNNNN" as integer ns, without float rounding."""
    s, _, frac = text.partition('.')
    if not s.isdigit() or (frac and not frac.isdigit()):
        raise TraceError(f'line {lineno}: time {text!r} is not seconds')
    return int(s) * 10**9 + int((frac + '000000000')[:9] or 0)


def detect(first):
    """The format of a trace whose first non-blank line is @first."""
    f = first.split()
    if f[:2] == ['fio', 'version'] and f[3:] == ['iolog'] and f[2] in ('2', '3'):
        return 'fio' + f[2]
    return 'blkparse'


def parse_fio(lines, version):
    reqs = []
    for lineno, line in lines:
        f = line.split()
        if version == 3:
            if not f:
                continue
            t = _uint(f[0], lineno, 'time')
            f = f[1:]
        else:
            t = 0
        if len(f) >= 2 and f[1] in FIO_SKIP:
            continue
        if len(f) != 4 or f[1] not in ('read', 'write'):
            raise TraceError(f'line {lineno}: not a fio v{version} iolog line: {line.strip()!r}')
        off, n = _uint(f[2], lineno, 'offset'), _uint(f[3], lineno, 'length')
        if not n:
            raise TraceError(f'line {lineno}: length 0')
        reqs.append(Request(t * 10**6, off, n, f[1] == 'write'))
    return reqs


ARRIVALS = ('Q', 'A')


def blkparse_events(lines):
    """blkparse's Q and A events of reads and writes: (time ns, device,
    action, sector, sectors, write, remap source (device, sector) or
    None), in the trace's order."""
    out = []
    for lineno, line in lines:
        f = line.split()
        if f[0].startswith(('CPU', 'Total')):
            break       # the summary after the events
        if len(f) < 6 or ',' not in f[0]:
            raise TraceError(f'line {lineno}: not a blkparse event line: {line.strip()!r}')
        if f[5] not in ('Q', 'A'):
            continue
        if f[5] == 'Q' and len(f) < 9 and len(f) > 6 and 'F' in f[6]:
            continue    # a flush without data: "Q FWS [fio]"
        if len(f) < 10 or f[8] != '+':
            raise TraceError(f'line {lineno}: a {f[5]} event without "SECTOR + N": '
                             f'{line.strip()!r}')
        src = None
        if f[5] == 'A':
            if len(f) < 13 or f[10] != '<-' or not f[11].startswith('('):
                raise TraceError(f'line {lineno}: a remap without "<- (MAJ,MIN) SECTOR": '
                                 f'{line.strip()!r}')
            src = (f[11].strip('()'), _uint(f[12], lineno, 'sector'))
        rwbs = f[6]
        if 'D' in rwbs or not ('R' in rwbs or 'W' in rwbs):
            continue
        n = _uint(f[9], lineno, 'sectors')
        if not n:
            continue    # a flush
        out.append((_seconds_ns(f[3], lineno), f[0], f[5], _uint(f[7], lineno, 'sector'), n,
                    'W' in rwbs, src))
    return out


def parse_blkparse(lines, arrival=None, info=None):
    """The requests of blkparse's text (see the module's docstring), each
    arriving at its Q event, or with @arrival 'A' at its remaps; @info
    (a dict) gets what was chosen and the Q-to-remap spans."""
    ev = blkparse_events(lines)
    order = sorted(range(len(ev)), key=lambda i: ev[i][0])
    traced = {e[1] for e in ev}
    sent = collections.Counter()    # remaps not yet followed by their Q below
    waiting = {}                    # (device, sector) -> [request] its remap will name
    reqs, pieces, spans, queued = [], {}, {}, 0
    for i in order:
        t, dev, act, sector, n, write, src = ev[i]
        if act == 'Q':
            if sent[(dev, sector, n)]:
                sent[(dev, sector, n)] -= 1     # a remapped bio, below: counted above
                continue
            waiting.setdefault((dev, sector), []).append((len(reqs), n))
            queued += 1
            reqs.append(Request(t, sector * 512, n * 512, write))
            continue
        sent[(dev, sector, n)] += 1
        if src[0] not in traced:
            # the device above was not traced: the remap is the request
            reqs.append(Request(t, src[1] * 512, n * 512, write))
            pieces[len(reqs) - 1] = [reqs[-1]]
            continue
        q = waiting.get(src)
        if not q:
            continue    # the remap of a bio sent down from above, or of one before the trace
        k, left = q.pop(0)
        if not q:
            del waiting[src]
        if k not in pieces:
            spans[k] = t - reqs[k].time_ns
        pieces.setdefault(k, []).append(Request(t, src[1] * 512, n * 512, write))
        if left > n:    # the target took part of it: its next piece's remap
            waiting.setdefault((src[0], src[1] + n), []).insert(0, (k, left - n))
    auto = arrival is None
    if auto:
        arrival = 'Q' if queued or not reqs else 'A'
    if arrival == 'A' and not pieces:
        raise TraceError('--arrival A: the trace has no remap (A) event of its requests: '
                         'trace the device below too (blktrace -d DEV -d BELOW)')
    if arrival == 'A':
        out = []
        for k, r in enumerate(reqs):
            out += pieces.get(k, [r])
    else:
        out = reqs
    if info is not None:
        sp = sorted(spans.values())
        info.update(arrival=arrival, arrival_auto=auto, requests=len(out),
                    remapped=len(pieces),
                    without_remap=len(reqs) - len(pieces) if arrival == 'A' else None,
                    q_to_a_ns={'n': len(sp), 'min': sp[0], 'median': sp[len(sp) // 2],
                               'max': sp[-1]} if sp else None)
    return out


def parse(lines, fmt=None, arrival=None, info=None):
    """The read and write requests of trace @lines (an iterable of text
    lines) in the trace's order, times relative to its first request;
    and the format, given (@fmt) or detected.  blkparse's: each at its
    @arrival event ('Q' or 'A'; None: Q, or A if the trace has no Q of
    its requests), what was chosen in dict @info (parse_blkparse())."""
    numbered = [(i, ln) for i, ln in enumerate(lines, 1) if ln.strip()]
    if not numbered:
        raise TraceError('empty trace')
    found = detect(numbered[0][1])
    fmt = fmt or found
    if fmt not in FORMATS:
        raise TraceError(f'unknown trace format {fmt!r} (one of {", ".join(FORMATS)})')
    if arrival not in (None, *ARRIVALS):
        raise TraceError(f'--arrival {arrival}: one of {", ".join(ARRIVALS)}')
    if fmt.startswith('fio'):
        if arrival:
            raise TraceError(f'--arrival {arrival}: a fio iolog has one time per request '
                             '(blkparse\'s text has Q and A events)')
        if found != fmt:
            raise TraceError(f'line {numbered[0][0]}: not a "fio version {fmt[3]} iolog" header')
        reqs = parse_fio(numbered[1:], int(fmt[3]))
    else:
        reqs = parse_blkparse(numbered, arrival, info)
    if not reqs:
        raise TraceError('no read or write request in the trace')
    t0 = min(r.time_ns for r in reqs)
    return [r._replace(time_ns=r.time_ns - t0) for r in reqs], fmt


def side(lat, nbytes, elapsed_ns):
    """IOPS, bandwidth and latency figures of one direction."""
    if not lat:
        return None
    ns = sorted(lat)
    secs = elapsed_ns / 1e9 if elapsed_ns else 1e-9
    return {'ios': len(ns), 'iops': len(ns) / secs, 'mbps': nbytes / secs / 1e6,
            'mean_us': sum(ns) / len(ns) / 1e3, 'min_us': ns[0] / 1e3, 'max_us': ns[-1] / 1e3,
            'pct_us': {str(p): percentile(ns, p) / 1e3 for p in MODEL_PCTS}}


def nice_interval(span_ns, buckets=50):
    """A round bucket width (1, 2 or 5 x 10^k ns) that cuts @span_ns into
    at most @buckets intervals."""
    w = 1
    while True:
        for m in (1, 2, 5):
            if span_ns <= m * w * buckets:
                return m * w
        w *= 10


def over_time(reqs, done, interval_ns, span_ns):
    """IOPS and MB/s per direction in each interval of the model's clock,
    by completion instant."""
    n = max(1, -(-span_ns // interval_ns))
    out = {'interval_ns': interval_ns, 'start_ns': [i * interval_ns for i in range(n)]}
    secs = interval_ns / 1e9
    for name, want in (('read', False), ('write', True)):
        ios, nbytes = [0] * n, [0] * n
        for r, d in zip(reqs, done):
            if r.write == want:
                i = min(d // interval_ns, n - 1)
                ios[i] += 1
                nbytes[i] += r.bytes
        out[name] = {'ios': ios, 'iops': [x / secs for x in ios],
                     'mbps': [b / secs / 1e6 for b in nbytes]}
    return out


def resources(use, window_ns):
    """Each rank's, bus's, the front end's and the tags' account
    (libpcm_replay()) with their utilisation (busy / window) and mean
    queue (waiting requests on average: total wait / window, Little's law)."""
    w = window_ns or 1

    def fig(u, **where):
        return {**where, 'reqs': u['reqs'], 'busy_ns': u['busy_ns'],
                'util': u['busy_ns'] / w, 'wait_ns': u['wait_ns'],
                'wait_mean_ns': u['wait_ns'] / u['reqs'] if u['reqs'] else 0,
                'wait_max_ns': u['wait_max_ns'], 'queue': u['wait_ns'] / w}
    ranks = [fig(u, channel=c, rank=r) for c, ch in enumerate(use['rank'])
             for r, u in enumerate(ch)]
    return {'window_ns': window_ns, 'ranks': ranks,
            'buses': [fig(u, channel=c) for c, u in enumerate(use['bus'])],
            'front': fig(use['front']), 'tags': fig(use['tags'])}


def wear(lib, words, rows, reqs, repeat, elapsed_ns, per_row=False):
    """The wear @repeat passes of the trace leave, with start-gap at the
    words' gap_interval and without (libpcm_wear(): the module's start-gap
    and wear summary), and the lifetime projected at the trace's rate:
    the row writes left before the most worn row reaches endurance, at the
    rate the trace wrote them (its row writes over repeat x elapsed)."""
    out = {'repeat': repeat}
    w = [(r.offset, r.bytes, r.write) for r in reqs]
    for key, sg in (('start_gap', True), ('no_start_gap', False)):
        x = lib.wear(words, rows, w, repeat=repeat, start_gap=sg, per_row=per_row)
        x['mean'] = x.pop('mean_milli') / 1000
        x['max_mean'] = x['max'] / x['mean'] if x['mean'] else None
        x.pop('used_permille')     # the module's, in 1/1000: a finer figure here
        x['used_pct'] = 100 * x['max'] / x['endurance'] if x['endurance'] else None
        secs = repeat * elapsed_ns / 1e9
        rate = x['writes'] / secs if secs else 0
        for k in ('remaining', 'remaining_level'):
            life = None if x[k] is None or not rate else x[k] / rate
            x[k.replace('remaining', 'lifetime') + '_s'] = life
        out[key] = x
    return out


def replay(words, reqs, size=0, iodepth=1, open_loop=False, speed=1.0, rate=0.0, host_ns=0,
           interval_ns=0, repeat=1, per_row=False, lib=None):
    """Replay @reqs through the model of table @words on a device of
    @size bytes (at least the trace's extent); the summary, and the
    per-request start and done instants (ns, the model's clock).  Open
    loop: at the trace's times / @speed, or with @rate at one request
    every 1/rate s in the trace's order; closed loop at @iodepth with
    @host_ns from each completion to the next arrival."""
    from pcmlib import libpcm
    lib = lib or libpcm.Lib()
    words = list(words)
    p = lib.parse(words)
    rs = p['row_size']
    extent = max(r.offset + r.bytes for r in reqs)
    if size and extent > size:
        raise libpcm.PcmError(f'the trace reaches byte {extent}, past the device\'s {size}')
    rows = max(-(-max(size, extent) // rs), p['domains'])
    if repeat < 1:
        raise libpcm.PcmError(f'--repeat {repeat}: must be at least 1')
    if open_loop and rate:
        if rate <= 0:
            raise libpcm.PcmError(f'--rate {rate}: must be above 0')
        arrivals = [int(i * 1e9 / rate) for i in range(len(reqs))]
    elif open_loop:
        if speed <= 0:
            raise libpcm.PcmError(f'--speed {speed}: must be above 0')
        order = sorted(range(len(reqs)), key=lambda i: reqs[i].time_ns)
        reqs = [reqs[i] for i in order]
        arrivals = [int(r.time_ns / speed) for r in reqs]
    else:
        arrivals = [0] * len(reqs)
    start, done, tot = lib.replay(words, rows,
                                  [(a, r.offset, r.bytes, r.write) for a, r in zip(arrivals, reqs)],
                                  iodepth, open_loop, host_ns=host_ns, use=True)
    lat = [d - s for s, d in zip(start, done)]
    use = tot.pop('use')
    res = {'clock': 'model', 'config': p['config'], 'requests': len(reqs),
           'mode': 'open' if open_loop else 'closed',
           **(({'rate': rate} if rate else {'speed': speed}) if open_loop
              else {'iodepth': iodepth, 'host_ns': host_ns}),
           'rows': rows, 'row_size': rs, **tot}
    for name, want in (('read', False), ('write', True)):
        sel = [i for i, r in enumerate(reqs) if r.write == want]
        res[name] = side([lat[i] for i in sel], sum(reqs[i].bytes for i in sel),
                         tot['elapsed_ns'])
    span = max(tot['elapsed_ns'], 1)
    res['over_time'] = over_time(reqs, done, interval_ns or nice_interval(span), span)
    res['resources'] = resources(use, tot['idle_ns'])
    res['wear'] = wear(lib, words, rows, reqs, repeat, tot['elapsed_ns'], per_row)
    return res, reqs, start, done


CSV_HEADER = 'index,offset,bytes,rw,start_ns,done_ns,lat_ns'
RATES_HEADER = 'start_ns,read_ios,read_iops,read_mbps,write_ios,write_iops,write_mbps'
RESOURCES_HEADER = ('resource,channel,rank,reqs,busy_ns,util,wait_ns,wait_mean_ns,'
                    'wait_max_ns,queue')


def write_csv(path, reqs, start, done):
    """One line per request, in the replay's order: its start and done
    instants and latency, ns of the model's clock."""
    with open(path, 'w') as fh:
        fh.write(CSV_HEADER + '\n')
        for i, (r, s, d) in enumerate(zip(reqs, start, done)):
            fh.write(f"{i},{r.offset},{r.bytes},{'write' if r.write else 'read'},{s},{d},{d - s}\n")


def csv_paths(path):
    """The rates' and resources' CSV files beside the requests' @path:
    lat.csv -> lat.rates.csv, lat.resources.csv."""
    stem = path[:-4] if path.endswith('.csv') else path
    return stem + '.rates.csv', stem + '.resources.csv'


def write_csv_all(path, res, reqs, start, done):
    """@path (write_csv()), and the rates over time and the resources'
    account beside it (csv_paths())."""
    write_csv(path, reqs, start, done)
    rates, rsrc = csv_paths(path)
    ot = res['over_time']
    with open(rates, 'w') as fh:
        fh.write(RATES_HEADER + '\n')
        for i, t in enumerate(ot['start_ns']):
            fh.write(f"{t},{ot['read']['ios'][i]},{ot['read']['iops'][i]:.1f},"
                     f"{ot['read']['mbps'][i]:.3f},{ot['write']['ios'][i]},"
                     f"{ot['write']['iops'][i]:.1f},{ot['write']['mbps'][i]:.3f}\n")
    r = res['resources']
    rows = ([('rank', x) for x in r['ranks']] + [('bus', x) for x in r['buses']] +
            [('front', r['front']), ('tags', r['tags'])])
    with open(rsrc, 'w') as fh:
        fh.write(RESOURCES_HEADER + '\n')
        for kind, x in rows:
            fh.write(f"{kind},{x.get('channel', '')},{x.get('rank', '')},{x['reqs']},"
                     f"{x['busy_ns']},{x['util']:.6f},{x['wait_ns']},{x['wait_mean_ns']:.1f},"
                     f"{x['wait_max_ns']},{x['queue']:.6f}\n")
