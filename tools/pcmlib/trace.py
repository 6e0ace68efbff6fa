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


def parse_blkparse(lines):
    reqs = []
    for lineno, line in lines:
        f = line.split()
        if f[0].startswith(('CPU', 'Total')):
            break       # the summary after the events
        if len(f) < 6 or ',' not in f[0]:
            raise TraceError(f'line {lineno}: not a blkparse event line: {line.strip()!r}')
        if f[5] != 'Q':
            continue
        if len(f) < 9 and len(f) > 6 and 'F' in f[6]:
            continue    # a flush without data: "Q FWS [fio]"
        if len(f) < 10 or f[8] != '+':
            raise TraceError(f'line {lineno}: a Q event without "SECTOR + N": {line.strip()!r}')
        rwbs = f[6]
        if 'D' in rwbs or not ('R' in rwbs or 'W' in rwbs):
            continue
        t = _seconds_ns(f[3], lineno)
        sector, n = _uint(f[7], lineno, 'sector'), _uint(f[9], lineno, 'sectors')
        if not n:
            continue    # a flush
        reqs.append(Request(t, sector * 512, n * 512, 'W' in rwbs))
    return reqs


def parse(lines, fmt=None):
    """The read and write requests of trace @lines (an iterable of text
    lines) in the trace's order, times relative to its first request;
    and the format, given (@fmt) or detected."""
    numbered = [(i, ln) for i, ln in enumerate(lines, 1) if ln.strip()]
    if not numbered:
        raise TraceError('empty trace')
    found = detect(numbered[0][1])
    fmt = fmt or found
    if fmt not in FORMATS:
        raise TraceError(f'unknown trace format {fmt!r} (one of {", ".join(FORMATS)})')
    if fmt.startswith('fio'):
        if found != fmt:
            raise TraceError(f'line {numbered[0][0]}: not a "fio version {fmt[3]} iolog" header')
        reqs = parse_fio(numbered[1:], int(fmt[3]))
    else:
        reqs = parse_blkparse(numbered)
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


def replay(words, reqs, size=0, iodepth=1, open_loop=False, speed=1.0, lib=None):
    """Replay @reqs through the model of table @words on a device of
    @size bytes (at least the trace's extent); the summary, and the
    per-request start and done instants (ns, the model's clock)."""
    from pcmlib import libpcm
    lib = lib or libpcm.Lib()
    words = list(words)
    p = lib.parse(words)
    rs = p['row_size']
    extent = max(r.offset + r.bytes for r in reqs)
    if size and extent > size:
        raise libpcm.PcmError(f'the trace reaches byte {extent}, past the device\'s {size}')
    rows = max(-(-max(size, extent) // rs), p['domains'])
    if open_loop:
        if speed <= 0:
            raise libpcm.PcmError(f'--speed {speed}: must be above 0')
        order = sorted(range(len(reqs)), key=lambda i: reqs[i].time_ns)
        reqs = [reqs[i] for i in order]
        arrivals = [int(r.time_ns / speed) for r in reqs]
    else:
        arrivals = [0] * len(reqs)
    start, done, tot = lib.replay(words, rows,
                                  [(a, r.offset, r.bytes, r.write) for a, r in zip(arrivals, reqs)],
                                  iodepth, open_loop)
    lat = [d - s for s, d in zip(start, done)]
    res = {'clock': 'model', 'config': p['config'], 'requests': len(reqs),
           'mode': 'open' if open_loop else 'closed',
           **({'speed': speed} if open_loop else {'iodepth': iodepth}),
           'rows': rows, 'row_size': rs, **tot}
    for name, want in (('read', False), ('write', True)):
        sel = [i for i, r in enumerate(reqs) if r.write == want]
        res[name] = side([lat[i] for i in sel], sum(reqs[i].bytes for i in sel),
                         tot['elapsed_ns'])
    # completions per second of the model's clock, per direction
    secs = tot['elapsed_ns'] // 10**9 + 1
    buckets = {'read': [0] * secs, 'write': [0] * secs}
    for r, d in zip(reqs, done):
        buckets['write' if r.write else 'read'][min(d // 10**9, secs - 1)] += 1
    res['iops_per_second'] = buckets
    return res, reqs, start, done


CSV_HEADER = 'index,offset,bytes,rw,start_ns,done_ns,lat_ns'


def write_csv(path, reqs, start, done):
    """One line per request, in the replay's order: its start and done
    instants and latency, ns of the model's clock."""
    with open(path, 'w') as fh:
        fh.write(CSV_HEADER + '\n')
        for i, (r, s, d) in enumerate(zip(reqs, start, done)):
            fh.write(f"{i},{r.offset},{r.bytes},{'write' if r.write else 'read'},{s},{d},{d - s}\n")
