#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of 'pcmctl model --trace' (tools/pcmlib/trace.py and
libpcm_replay()): the parsers, open-loop queueing against known answers,
the closed loop against libpcm_model()'s synthetic workloads, refusals.
Prints TAP."""
import json
import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PCMCTL = os.path.join(TOP, 'tools', 'pcmctl')
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(TOP, 'tools'))
from pcmlib import tap  # noqa: E402 (sys.path set first)
from pcmlib.tap import check  # noqa: E402 (sys.path set first)
from pcmlib import libpcm, trace  # noqa: E402 (sys.path set first)

WORK = tempfile.mkdtemp(prefix='test-trace.')
# a 4 KiB read costs cmd_ns + read_ns + 4096 B at read_mbps: 0.5 + 1 + 1 us
FIXED = ['read_ns:1000', 'cmd_ns:500', 'read_mbps:4096']
SERVICE_NS = 2500

# (time ms, offset, bytes, write)
REQS = [(0, 0, 4096, False), (3, 8192, 8192, True), (3, 1 << 20, 512, False),
        (7, 4096, 4096, True), (12, 65536, 131072, False)]


def fio_iolog(version, reqs=REQS, dev='/dev/sdb'):
    t = (lambda ms: f'{ms} ') if version == 3 else (lambda ms: '')
    out = [f'fio version {version} iolog', f'{t(0)}{dev} add', f'{t(0)}{dev} open']
    for ms, off, n, w in reqs:
        out.append(f"{t(ms)}{dev} {'write' if w else 'read'} {off} {n}")
    out += [f'{t(reqs[-1][0])}{dev} sync 0 0', f'{t(reqs[-1][0])}{dev} close']
    return '\n'.join(out) + '\n'


def blkparse_text(reqs=REQS):
    """blkparse's default output for @reqs, a trace of a dm device
    (253,0) and of the device below it (8,16): each request's Q above,
    its remap (A, the i-th request's i + 1 us after its Q) and the Q, G,
    I, D, C of the bio sent down, its C above; a flush among them, and
    the summary after."""
    out, seq = [], 0
    for i, (ms, off, n, w) in enumerate(reqs):
        rw = 'WS' if w else 'R'
        t = f'{ms // 1000}.{ms % 1000:03d}000000'
        ta = f'{ms // 1000}.{ms % 1000:03d}{i + 1:03d}000'
        below = off // 512 + 2048
        for dev, act in (('253,0', 'Q'), ('8,16', 'A'), ('8,16', 'Q'), ('8,16', 'G'),
                         ('8,16', 'I'), ('8,16', 'D'), ('8,16', 'C'), ('253,0', 'C')):
            seq += 1
            when = t if dev == '253,0' and act == 'Q' else ta
            sector = off // 512 if dev == '253,0' else below
            if act == 'A':
                out.append(f'{dev:>5} 1 {seq:8d} {when:>14} {4242:5d}  A {rw:>3} {below} + '
                           f'{n // 512} <- (253,0) {off // 512}')
            elif act == 'C':
                out.append(f'{dev:>5} 1 {seq:8d} {when:>14} {0:5d}  C {rw:>3} {sector} + '
                           f'{n // 512} [0]')
            else:
                out.append(f'{dev:>5} 1 {seq:8d} {when:>14} {4242:5d}  {act} {rw:>3} '
                           f'{sector} + {n // 512} [fio]')
    out.append(f'253,0    1 {seq + 1:8d}    0.013000000  4242  Q FWS [fio]')
    out.append(f'253,0    1 {seq + 2:8d}    0.013000000  4242  Q  WS 0 + 0 [fio]')
    out += ['CPU1 (253,0):', ' Reads Queued:           3,      136KiB	 Writes Queued:  2, 12KiB',
            '', 'Total (253,0):', ' Reads Queued:           3,      136KiB']
    return '\n'.join(out) + '\n'


def pcm(*argv, stdin=None):
    p = subprocess.run([PCMCTL] + list(argv), text=True, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    return p.returncode, p.stdout, p.stderr


def write_file(name, text):
    path = os.path.join(WORK, name)
    with open(path, 'w') as fh:
        fh.write(text)
    return path


def test_parsers_agree():
    """fio's iolog v3 and blkparse's text give the same requests; v2 the
    same without times; the format is detected from the first line."""
    want = [trace.Request(ms * 10**6, off, n, w) for ms, off, n, w in REQS]
    v3, fmt3 = trace.parse(fio_iolog(3).splitlines())
    v2, fmt2 = trace.parse(fio_iolog(2).splitlines())
    bp, fmtb = trace.parse(blkparse_text().splitlines())
    check((fmt3, fmt2, fmtb) == ('fio3', 'fio2', 'blkparse'), f'{fmt3} {fmt2} {fmtb}')
    check(v3 == want, f'fio v3: {v3}')
    check(bp == want, f'blkparse: {bp}')
    check(v2 == [r._replace(time_ns=0) for r in want], f'fio v2: {v2}')
    given, fmt = trace.parse(blkparse_text().splitlines(), 'blkparse')
    check(given == want and fmt == 'blkparse', 'blkparse given')
    # times relative to the first request
    late = [(ms + 5000, off, n, w) for ms, off, n, w in REQS]
    check(trace.parse(fio_iolog(3, late).splitlines())[0] == want, 'fio v3 times from 0')
    check(trace.parse(blkparse_text(late).splitlines())[0] == want, 'blkparse times from 0')
    # at the remaps: the i-th request i us later; the device below alone:
    # its remaps are the requests, at the offsets above
    at_a = [r._replace(time_ns=r.time_ns + i * 1000) for i, r in enumerate(want)]
    info = {}
    check(trace.parse(blkparse_text().splitlines(), None, 'A', info)[0] == at_a, 'arrival A')
    check(info['arrival'] == 'A' and not info['arrival_auto'] and info['remapped'] == 5 and
          info['q_to_a_ns'] == {'n': 5, 'min': 1000, 'median': 3000, 'max': 5000}, f'{info}')
    below = '\n'.join(ln for ln in blkparse_text().splitlines() if not ln.startswith('253,0'))
    info = {}
    check(trace.parse(below.splitlines(), None, None, info)[0] == at_a and
          info['arrival'] == 'A' and info['arrival_auto'], f'the device below alone: {info}')
    # a request the target split: its pieces, each at its own remap
    split = ['253,0 0 1 0.000000000 1 Q R 8 + 16 [fio]',
             '8,16 0 1 0.000002000 1 A R 100 + 8 <- (253,0) 8',
             '8,16 0 2 0.000002100 1 Q R 100 + 8 [fio]',
             '8,16 0 3 0.000005000 1 A R 300 + 8 <- (253,0) 16',
             '8,16 0 4 0.000005100 1 Q R 300 + 8 [fio]']
    check(trace.parse(split)[0] == [trace.Request(0, 4096, 8192, False)] and
          trace.parse(split, None, 'A')[0] == [trace.Request(0, 4096, 4096, False),
                                               trace.Request(3000, 8192, 4096, False)],
          'a split request')
    check(pcm('model', '--trace', write_file('e.log', fio_iolog(3)), '--arrival', 'A',
              'preset:pss')[0] == 1, '--arrival on an iolog: refused')
    rc, _, err = pcm('model', '--trace', '-', '--arrival', 'A', 'preset:pss',
                     stdin='\n'.join(split[:1]) + '\n')
    check(rc == 1 and 'no remap' in err, err)
    # the same figures through pcmctl from either file
    a = json.loads(pcm('model', '--json', '--trace', write_file('a.log', fio_iolog(3)),
                       'preset:pss')[1])
    b = json.loads(pcm('model', '--json', '--trace', '-', 'preset:pss',
                       stdin=blkparse_text())[1])
    check(a['read'] == b['read'] and a['write'] == b['write'] and a['clock'] == 'model',
          f'{a} {b}')
    check(a['format'] == 'fio3' and b['format'] == 'blkparse', 'formats in the JSON')


def stream(n, gap_ms, off=0, write=False):
    return fio_iolog(3, [(i * gap_ms, off, 4096, write) for i in range(n)])


def test_open_loop_queueing():
    """A fixed-rate stream on one row: below saturation every request
    takes the service time; above, each waits for the ones before it."""
    path = write_file('slow.log', stream(200, 10))
    # 10 ms apart at --speed 1000: one request each 10 us, the rank busy 10 %
    rc, out, err = pcm('model', '--json', '--trace', path, '--open', '--speed', '1000', *FIXED)
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0, err)
    rd = r.get('read') or {}
    check(rd.get('ios') == 200 and rd.get('min_us') == rd.get('max_us') == SERVICE_NS / 1e3,
          f'below saturation: {rd}')
    check(r.get('mode') == 'open' and r.get('clock') == 'model', 'mode, clock')
    csv = os.path.join(WORK, 'slow.csv')
    rc, _, err = pcm('model', '--trace', path, '--open', '--speed', '1000', '--csv', csv, *FIXED)
    with open(csv) as fh:
        rows = [ln.rstrip('\n').split(',') for ln in fh]
    check(rc == 0 and rows[0] == trace.CSV_HEADER.split(',') and len(rows) == 201, err)
    check(rows[1:3] == [['0', '0', '4096', 'read', '0', '2500', '2500'],
                        ['1', '0', '4096', 'read', '10000', '12500', '2500']], f'{rows[:3]}')
    # the same stream 1 ns apart (--speed 1e6): a queue that grows along it
    reqs, _ = trace.parse(stream(200, 1).splitlines())
    res, _, start, done = trace.replay(FIXED, reqs, open_loop=True, speed=1e6)
    lat = [d - s for s, d in zip(start, done)]
    check(lat[0] == SERVICE_NS, f'first {lat[0]}')
    check(all(b > a for a, b in zip(lat, lat[1:])), 'latencies grow along the trace')
    # the rank holds each read for read_ns (the command and the transfer
    # overlap the next read): the i-th done at the service time + i x read_ns
    check(all(d == SERVICE_NS + i * 1000 for i, d in enumerate(done)), f'{done[:5]}')
    check(res['read']['max_us'] == lat[-1] / 1e3, 'max')
    # the rate over time: per-second buckets of the model's clock
    slow, _ = trace.parse(stream(30, 100).splitlines())
    res, *_ = trace.replay(FIXED, slow, open_loop=True, interval_ns=10**9)
    ot = res['over_time']
    check(ot['read']['ios'] == [10, 10, 10] and ot['read']['iops'] == [10, 10, 10] and
          ot['read']['mbps'] == [10 * 4096 / 1e6] * 3 and ot['write']['ios'] == [0, 0, 0],
          f'{ot}')


def xorshift(s):
    s ^= (s << 13) & (2**64 - 1)
    s ^= s >> 7
    s ^= (s << 17) & (2**64 - 1)
    return s


def synthetic(wl, bs, rows, row_size):
    """libpcm_model()'s requests for one job, as libpcm.c draws them."""
    seed, span, pos, reqs = wl['seed'] | 1, rows * row_size, 0, []
    for _ in range(wl['ios']):
        seed = xorshift(seed)
        w = seed % 100 >= wl['read_pct']
        if wl['random']:
            seed = xorshift(seed)
            at = seed % (span // bs) * bs
        else:
            at, pos = pos, (0 if pos + 2 * bs > span else pos + bs)
        reqs.append(trace.Request(0, at, bs, w))
    return reqs


def test_closed_loop_matches_model():
    """The closed loop at depth N gives, request by request, the latencies
    libpcm_model() gives for the same requests at one job of depth N."""
    lib = libpcm.Lib()
    for words, rw_pct, rand, depth, bs in ((['preset:pss'], 100, True, 1, 4096),
                                           (['preset:pss'], 70, True, 1, 4096),
                                           (['preset:pss'], 70, True, 8, 4096),
                                           (['preset:onyx'], 0, False, 4, 8192),
                                           (['preset:pss', 'gap_interval:16'], 0, True, 1, 4096),
                                           (FIXED, 100, False, 1, 4096)):
        p = lib.parse(words)
        rows = (64 << 20) // p['row_size']
        wl = {'rows': rows, 'read_pct': rw_pct, 'bs': bs, 'depth': depth, 'jobs': 1,
              'random': rand, 'ios': 3000, 'seed': 7}
        lat, wr, tot = lib.model(words, wl)
        reqs = synthetic(wl, bs, rows, p['row_size'])
        check([int(r.write) for r in reqs] == wr, f'{words}: the same mix')
        res, _, start, done = trace.replay(words, reqs, size=rows * p['row_size'],
                                           iodepth=depth)
        got = [d - s for s, d in zip(start, done)]
        check(got == lat, f'{words} depth {depth}: {got[:4]} vs {lat[:4]}')
        check(res['elapsed_ns'] == tot['elapsed_ns'] and res['gap_moves'] == tot['gap_moves'],
              f'{words}: totals {res} {tot}')
    # dilation: the device's figures, the same as undilated
    reqs, _ = trace.parse(stream(100, 1).splitlines())
    a, *_ = trace.replay(['preset:onyx'], reqs, open_loop=True, speed=1000)
    b, *_ = trace.replay(['preset:onyx', 'dilation:8'], reqs, open_loop=True, speed=1000)
    check(a['read'] == b['read'] and b['dilation'] == 8, f"{a['read']} {b['read']}")


def test_refusals():
    """A malformed line is refused with its number; so are options that
    do not fit the trace."""
    bad = fio_iolog(3).splitlines()
    bad[3] = '0 /dev/sdb read 12x 4096'
    rc, _, err = pcm('model', '--trace', write_file('bad.log', '\n'.join(bad)), 'preset:pss')
    check(rc == 1 and 'line 4:' in err and '12x' in err, err)
    bad[3] = '0 /dev/sdb frobnicate 0 4096'
    rc, _, err = pcm('model', '--trace', write_file('bad.log', '\n'.join(bad)), 'preset:pss')
    check(rc == 1 and 'line 4:' in err, err)
    bad = blkparse_text().splitlines()
    bad[8] = bad[8].replace(' + ', ' x ')
    rc, _, err = pcm('model', '--trace', '-', 'preset:pss', stdin='\n'.join(bad))
    check(rc == 1 and 'line 9:' in err, f'{bad[8]}: {err}')
    rc, _, err = pcm('model', '--trace', '-', 'preset:pss', stdin='hello world\n')
    check(rc == 1 and 'line 1:' in err, err)
    rc, _, err = pcm('model', '--trace', '-', 'preset:pss', stdin='\n\n')
    check(rc == 1 and 'empty' in err, err)
    rc, _, err = pcm('model', '--trace', write_file('v2.log', fio_iolog(2)), '--open',
                     'preset:pss')
    check(rc == 1 and 'no times' in err, err)
    rc, _, err = pcm('model', '--open', 'preset:pss')
    check(rc == 1 and 'need --trace' in err, err)
    rc, _, err = pcm('model', '--trace', write_file('b.log', fio_iolog(3)),
                     '--trace-format', 'fio2', 'preset:pss')
    check(rc == 1 and 'line 1:' in err, err)
    rc, _, err = pcm('model', '--trace', write_file('c.log', fio_iolog(3)), '--size', '64k',
                     'preset:pss')
    check(rc == 1 and 'past the device' in err, err)
    rc, _, err = pcm('model', '--trace', os.path.join(WORK, 'none'), 'preset:pss')
    check(rc == 1 and 'No such file' in err, err)
    rc, out, err = pcm('model', '--trace', write_file('d.log', fio_iolog(3)), 'preset:pss')
    check(rc == 0 and 'model clock' in out and 'write: 2 ios' in out, out + err)


def test_help_example():
    """pcmctl --help's and pcmctl model --help's trace example runs as
    written."""
    for argv in (['--help'], ['model', '--help']):
        rc, out, err = pcm(*argv)
        ex = [ln.strip() for ln in out.splitlines() if '/tmp/t.iolog' in ln]
        check(rc == 0 and len(ex) == 2 and ex[0].startswith('printf'), out)
        cmd = ' && '.join(ex).replace('/tmp/t.iolog', os.path.join(WORK, 't.iolog'))
        cmd = cmd.replace('pcmctl model', f'{PCMCTL} model')
        p = subprocess.run(['bash', '-c', cmd], text=True, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        check(p.returncode == 0 and 'read: 1 ios' in p.stdout and 'write: 1 ios' in p.stdout,
              f'{argv}: {cmd}: {p.stdout}')


def use_of(res, kind, **where):
    """One resource's figures of a replay's account."""
    r = res['resources']
    if kind in ('front', 'tags'):
        return r[kind]
    return next(x for x in r[kind] if all(x[k] == v for k, v in where.items()))


def test_resources_known():
    """The account of each rank, bus and the front end against known
    loads: below saturation every stage is busy its own time and waits for
    nothing; above it the rank queues, by exactly the sum of the gaps; at
    QD1 a rank's utilisation is its service time x IOPS; an idle rank 0."""
    n = 200
    reqs, _ = trace.parse(stream(n, 10).splitlines())
    res, _, start, done = trace.replay(FIXED, reqs, open_loop=True, speed=1000)
    rank, bus, front = use_of(res, 'ranks', channel=0, rank=0), \
        use_of(res, 'buses', channel=0), use_of(res, 'front')
    check(rank['reqs'] == n and rank['busy_ns'] == n * 1000 and rank['wait_ns'] == 0,
          f'rank below saturation: {rank}')
    check(bus['reqs'] == n and bus['busy_ns'] == n * 1000 and bus['wait_ns'] == 0, f'{bus}')
    check(front['reqs'] == n and front['busy_ns'] == n * 500 and front['wait_ns'] == 0,
          f'{front}')
    window = res['resources']['window_ns']
    check(window == done[-1] and rank['util'] == n * 1000 / window, f'window {window}')
    # 1 ns apart: request i reaches the rank at i ns, starts at i x 1000
    reqs, _ = trace.parse(stream(n, 1).splitlines())
    res, *_ = trace.replay(FIXED, reqs, open_loop=True, speed=1e6)
    rank = use_of(res, 'ranks', channel=0, rank=0)
    check(rank['wait_ns'] == 999 * n * (n - 1) // 2 and rank['wait_max_ns'] == 999 * (n - 1),
          f'rank above saturation: {rank}')
    check(abs(rank['queue'] - rank['wait_ns'] / res['resources']['window_ns']) < 1e-12,
          'queue: Little\'s law')
    # QD1 on pss (fixed read time): utilisation = read_ns x IOPS, both ranks
    libpcm.Lib()
    rows = (64 << 20) // 4096
    wl = {'rows': rows, 'read_pct': 100, 'bs': 4096, 'depth': 1, 'jobs': 1, 'random': True,
          'ios': 2000, 'seed': 3}
    res, *_ = trace.replay(['preset:pss'], synthetic(wl, 4096, rows, 4096), size=rows * 4096)
    for r in res['resources']['ranks']:
        want = 15000 * r['reqs'] / (res['resources']['window_ns'] / 1e9) / 1e9
        check(r['reqs'] > 0 and abs(r['util'] - want) < 1e-12, f'pss QD1 rank {r} vs {want}')
    # one row of Onyx's 128 ranks: that rank works, every other is idle
    reqs, _ = trace.parse(stream(50, 1).splitlines())
    res, *_ = trace.replay(['preset:onyx'], reqs, open_loop=True, speed=1000)
    busy = [(x['channel'], x['rank']) for x in res['resources']['ranks'] if x['reqs']]
    idle = [x for x in res['resources']['ranks'] if not x['reqs']]
    check(busy == [(0, 0)] and len(idle) == 127 and all(x['util'] == 0 for x in idle),
          f'onyx: busy {busy}')
    # tags: 2 in flight, a burst of 20 waits for them
    reqs, _ = trace.parse(stream(20, 0).splitlines())
    res, _, start, done = trace.replay(FIXED + ['tags:2'], reqs, open_loop=True)
    tags = use_of(res, 'tags')
    check(tags['reqs'] == 20 and tags['wait_ns'] > 0 and res['tag_waits'] == 18, f'{tags}')
    # the text report names each rank of a small geometry
    rc, out, err = pcm('model', '--trace', write_file('r.log', stream(20, 1)),
                       '--open', 'channels:2', 'ranks:2', 'read_ns:1000')
    check(rc == 0 and all(f'rank {c}.{r}: util' in out for c in (0, 1) for r in (0, 1)),
          out + err)


def test_host_and_rate():
    """--host-ns: in a closed loop each slot's next request arrives that
    long after its completion, so QD1 IOPS is 1 / (service + host) and
    the replay and the synthetic model agree request by request; --rate:
    a fixed-rate open loop below saturation gives the service time, above
    it a queue that grows."""
    lib = libpcm.Lib()
    host = 7500
    reqs, _ = trace.parse(stream(100, 0).splitlines())
    res, _, start, done = trace.replay(FIXED, reqs, iodepth=1, host_ns=host)
    check(all(s == d + host for d, s in zip(done, start[1:])), f'{start[:3]} {done[:3]}')
    check(all(d - s == SERVICE_NS for s, d in zip(start, done)), 'latency without the host')
    check(res['host_ns'] == host and res['read']['iops'] == 100 / (done[-1] / 1e9), f'{res}')
    rows = (64 << 20) // 4096
    for words, depth in ((['preset:pss'], 1), (['preset:pss'], 4), (['preset:onyx'], 8)):
        wl = {'rows': rows, 'read_pct': 70, 'bs': 4096, 'depth': depth, 'jobs': 1,
              'random': True, 'ios': 2000, 'seed': 5, 'host_ns': host}
        lat, wr, tot = lib.model(words, wl)
        _, _, s2, d2 = trace.replay(words, synthetic(wl, 4096, rows, 4096), size=rows * 4096,
                                    iodepth=depth, host_ns=host)
        check([d - s for s, d in zip(s2, d2)] == lat, f'{words} QD{depth} host: model = replay')
    # pcmctl model --host-ns: QD1 IOPS = 1 / (service + host) exactly
    rc, out, err = pcm('model', '--json', '--ios', '1000', '--host-ns', '7.5us', *FIXED)
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0 and r['read']['mean_us'] == SERVICE_NS / 1e3 and
          abs(r['read']['iops'] - 1e9 / (SERVICE_NS + host) * 1000 / 1000) < 1e9 / 1e6, out + err)
    # --rate below saturation (the rank's 1M/s): every request its service time
    rc, out, err = pcm('model', '--json', '--ios', '5000', '--rate', '200000', *FIXED)
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0 and r['read']['min_us'] == r['read']['max_us'] == SERVICE_NS / 1e3,
          out + err)
    # above it (2M/s): the queue grows, the rate is the rank's
    lat, _, tot = lib.model(FIXED, {'rows': rows, 'read_pct': 100, 'bs': 4096, 'depth': 1,
                                    'jobs': 1, 'random': True, 'ios': 5000, 'seed': 1,
                                    'rate_ns': 500})
    check(all(b > a for a, b in zip(lat, lat[1:])), 'latencies grow above saturation')
    check(lat[-1] == SERVICE_NS + 4999 * 500, f'last {lat[-1]}')
    check(abs(5000 / (tot['elapsed_ns'] / 1e9) - 1e6) / 1e6 < 0.01, f'{tot}')
    # the trace at --rate: its order, one request each 1/rate s
    reqs, _ = trace.parse(fio_iolog(2, [(0, i * 4096, 4096, False) for i in range(50)])
                          .splitlines())
    res, _, start, done = trace.replay(FIXED, reqs, open_loop=True, rate=1e5)
    check(start == [i * 10000 for i in range(50)] and res['rate'] == 1e5, f'{start[:3]}')
    rc, out, err = pcm('model', '--trace', write_file('v2r.log', fio_iolog(2)), '--rate', '1000',
                       'preset:pss')
    check(rc == 0 and 'open loop at 1000 requests/s' in out, out + err)
    # --thinktime: a pause after each request, outside its latency
    lat, _, tot = lib.model(FIXED, {'rows': rows, 'read_pct': 100, 'bs': 4096, 'depth': 1,
                                    'jobs': 1, 'random': True, 'ios': 100, 'seed': 1,
                                    'think_ns': 1000, 'think_blocks': 2})
    check(set(lat) == {SERVICE_NS} and tot['elapsed_ns'] == 100 * SERVICE_NS + 49 * 1000,
          f'thinktime: {tot}')


def test_small_requests():
    """Requests below a sector exist in the model: a 256 B read is the
    rank's read, its 256 B over the bus, the command."""
    xfer = -(-256 * 1000 // 4096)
    rc, out, err = pcm('model', '--json', '--bs', '256', '--ios', '100', *FIXED)
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0 and r['read']['min_us'] == r['read']['max_us'] == (1500 + xfer) / 1e3,
          out + err)
    reqs, _ = trace.parse(fio_iolog(3, [(0, 256, 256, False), (1, 4096 + 100, 200, True)])
                          .splitlines())
    res, _, start, done = trace.replay(FIXED, reqs, open_loop=True)
    check(done[0] - start[0] == 1500 + xfer and res['write']['ios'] == 1, f'{done}')
    rc, _, err = pcm('model', '--bs', '0', *FIXED)
    check(rc != 0 and 'bs' in err, err)


def test_wear():
    """The wear N passes leave: without start-gap a row written k times a
    pass holds N x k; start-gap adds one copy per gap_interval writes and
    levels a hot row over the device; the lifetime is the module's
    remaining row writes over the trace's rate of row writes."""
    one = [(i, 4096, 4096, True) for i in range(10)]          # row 1, 10 times
    reqs, _ = trace.parse(fio_iolog(3, one + [(10, 0, 3 * 4096, True), (11, 0, 4096, False)])
                          .splitlines())
    words = FIXED + ['gap_interval:4', 'endurance:100000']
    res, *_ = trace.replay(words, reqs, size=16 * 4096, repeat=50)
    w = res['wear']
    off, on = w['no_start_gap'], w['start_gap']
    check(w['repeat'] == 50 and off['rows'] == 17 and on['rows'] == 17, f'{w}')
    check(off['writes'] == 50 * 13 and off['gap_moves'] == 0 and off['max'] == 50 * 11,
          f'without: {off}')
    check(on['gap_moves'] == 50 * 13 // 4 and on['writes'] == 50 * 13 + on['gap_moves'],
          f'with: {on}')
    check(on['max'] < off['max'] / 3, f"start-gap levels a hot row: {on['max']} vs {off['max']}")
    check(off['mean'] == off['writes'] * 1000 // 17 / 1000 and
          off['max_mean'] == off['max'] / off['mean'],
          f'mean {off}')
    secs = 50 * res['elapsed_ns'] / 1e9
    for x in (on, off):
        rem = (100000 - x['max']) * x['writes'] // x['max']
        check(x['remaining'] == rem and x['lifetime_s'] == rem / (x['writes'] / secs) and
              x['remaining_level'] == 100000 * 17 - x['writes'], f'lifetime {x}')
    # reads only: no wear, an unbounded lifetime
    reqs, _ = trace.parse(stream(10, 1).splitlines())
    res, *_ = trace.replay(FIXED, reqs, repeat=3)
    check(res['wear']['start_gap']['writes'] == 0 and
          res['wear']['start_gap']['lifetime_s'] is None, f"{res['wear']}")
    rc, out, err = pcm('model', '--trace', write_file('w.log', fio_iolog(3, one)),
                       '--repeat', '1000', '--size', '64k', *words)
    check(rc == 0 and 'wear after 1000 passes' in out and 'without start-gap: max 10000' in out,
          out + err)
    rc, _, err = pcm('model', '--trace', write_file('w.log', fio_iolog(3, one)),
                     '--repeat', '0', *words)
    check(rc != 0 and 'repeat' in err, err)
    rc, _, err = pcm('model', '--trace', write_file('w.log', fio_iolog(3, one)),
                     '--repeat', '300000000', *words)
    check(rc == 1 and 'overflow' in err, err)


def blktrace_binary(reqs):
    """blktrace's binary events (struct blk_io_trace) for @reqs: a queue
    and a completion each, as 'blktrace -o -' writes them."""
    import struct
    out, seq = b'', 0
    for ms, off, n, w in reqs:
        cat = ((1 << 1) if w else (1 << 0)) | (1 << 4)     # BLK_TC_WRITE/READ | QUEUE
        for act, t in ((1, ms * 10**6), (8, ms * 10**6 + 1000)):   # __BLK_TA_QUEUE, COMPLETE
            seq += 1
            out += struct.pack('<IIQQIIIIIHH', 0x65617407, seq, t, off // 512, n,
                               (cat << 16) | act, 42, 253 << 20, 0, 0, 0)
    return out


def test_blktrace_binary():
    """blktrace's binary output goes through blkparse: a file, or the
    NAME of NAME.blktrace.N; the same requests as blkparse's text."""
    import shutil
    if not shutil.which('blkparse'):
        check(True, 'skip: no blkparse')
        return
    path = os.path.join(WORK, 'dm-0.bin')
    with open(path, 'wb') as fh:
        fh.write(blktrace_binary(REQS))
    with open(os.path.join(WORK, 'dm-0.blktrace.0'), 'wb') as fh:
        fh.write(blktrace_binary(REQS))
    want = json.loads(pcm('model', '--json', '--trace', '-', 'preset:pss',
                          stdin=blkparse_text())[1])
    for arg in (path, os.path.join(WORK, 'dm-0')):
        rc, out, err = pcm('model', '--json', '--trace', arg, 'preset:pss')
        r = json.loads(out) if rc == 0 else {}
        check(rc == 0 and r['format'] == 'blkparse' and r['read'] == want['read'] and
              r['write'] == want['write'], f'{arg}: {err}')


def test_outputs():
    """--csv writes the requests, the rates and the resources beside;
    --png a PNG; the JSON carries every section."""
    path = write_file('o.log', stream(300, 1))
    csv, png = os.path.join(WORK, 'o.csv'), os.path.join(WORK, 'o.png')
    rc, out, err = pcm('model', '--json', '--trace', path, '--open', '--interval', '50us',
                       '--csv', csv, '--png', png, 'channels:2', 'ranks:2', 'read_ns:1000',
                       'write_ns:4000')
    r = json.loads(out) if rc == 0 else {}
    check(rc == 0 and all(k in r for k in ('read', 'over_time', 'resources', 'wear')), err)
    rates, rsrc = trace.csv_paths(csv)
    with open(rates) as fh:
        lines = fh.read().splitlines()
    check(lines[0] == trace.RATES_HEADER and len(lines) == 1 + len(r['over_time']['start_ns']),
          f'{lines[:2]}')
    check(r['over_time']['interval_ns'] == 50000 and
          sum(int(ln.split(',')[1]) for ln in lines[1:]) == 300, 'rates sum to the requests')
    with open(rsrc) as fh:
        lines = fh.read().splitlines()
    check(lines[0] == trace.RESOURCES_HEADER and len(lines) == 1 + 4 + 2 + 2, f'{lines}')
    with open(png, 'rb') as fh:
        check(fh.read(8) == b'\x89PNG\r\n\x1a\n', 'a PNG')
    for argv, what in ((['--interval', '5 parsecs'], 'duration'),
                       (['--thinktime', '1us'], 'thinktime'),
                       (['--host-ns', '1us', '--open'], 'host-ns'),
                       (['--rate', '-5'], 'rate')):
        rc, _, err = pcm('model', '--trace', path, *argv, 'preset:pss')
        check(rc != 0 and what in err, f'{argv}: {err}')
    rc, _, err = pcm('model', '--png', png, 'preset:pss')
    check(rc == 1 and 'need --trace' in err, err)


CHAR_JOB = """; as tools/pcmchar/fiojob.py writes them
[global]
ioengine=libaio
direct=1
rw=randrw
bs=4k
iodepth=4
numjobs=2
group_reporting=1
lat_percentiles=1
time_based=1
size=16m
randrepeat=0
rwmixread=70
norandommap=1
filename=/dev/mapper/char-dut
offset_increment=16m

[warmup]
time_based=0
number_ios=3000

[rep1]
stonewall
new_group
runtime=20ms
"""


def test_job_files():
    """A characterization's job file runs through the model: a job of
    number_ios gives what the same workload on the command line gives; a
    runtime ends it on the model's clock; what the model cannot honour is
    refused by name."""
    from pcmlib import fiojob, model
    jobs = fiojob.parse(CHAR_JOB)
    check([j.name for j in jobs] == ['warmup', 'rep1'], f'{jobs}')
    w = jobs[0].workload
    check(w == {'rw': 'randrw', 'bs': 4096, 'iodepth': 4, 'numjobs': 2, 'size': 32 << 20,
                'rwmixread': 70, 'runtime_ns': 20 * 10**6, 'ios': 3000} or
          w == {'rw': 'randrw', 'bs': 4096, 'iodepth': 4, 'numjobs': 2, 'size': 32 << 20,
                'rwmixread': 70, 'ios': 3000}, f'{w}')
    rc, out, err = pcm('model', '--json', '--job', write_file('j.fio', CHAR_JOB), 'preset:pss')
    r = json.loads(out) if rc == 0 else {'jobs': [{}, {}]}
    check(rc == 0 and len(r['jobs']) == 2, err)
    want = model.predict(['preset:pss'], rw='randrw', bs=4096, iodepth=4, numjobs=2,
                         rwmixread=70, size=32 << 20, ios=3000)
    got = r['jobs'][0]
    check(got.get('read') == want['read'] and got.get('write') == want['write'], f'{got}')
    rep = r['jobs'][1]
    check(rep.get('elapsed_ns', 0) >= 20 * 10**6 and 0 < rep.get('ios', 0) < 100000, f'{rep}')
    rc, out, err = pcm('model', '--job', write_file('j.fio', CHAR_JOB), 'preset:pss')
    check(rc == 0 and '[warmup] rw=randrw bs=4096 iodepth=4 numjobs=2' in out, out + err)
    # ramp_time: its requests run uncounted; the figures start after it
    lib = libpcm.Lib()
    lat, _, tot = lib.model(FIXED, {'rows': 1024, 'read_pct': 100, 'bs': 4096, 'depth': 1,
                                    'jobs': 1, 'random': True, 'ios': 10**6, 'seed': 1,
                                    'ramp_ns': 10**6, 'runtime_ns': 10**6})
    check(tot['ios'] == 400 and len(lat) == 400 and tot['elapsed_ns'] == 10**6,
          f'ramp 1 ms, runtime 1 ms of 2.5 us reads: {tot}')
    w = fiojob.parse('[a]\nsize=4m\nramp_time=1ms\nruntime=1ms\n')[0].workload
    check(w.get('ramp_ns') == 10**6 and w.get('runtime_ns') == 10**6, f'{w}')
    for bad, what in (('rate_iops=100', 'rate_iops'), ('rw=trim', 'rw=trim'),
                      ('bs=4k,8k', 'bs='), ('random_distribution=zipf:1.2', 'uniformly')):
        rc, _, err = pcm('model', '--job', write_file('b.fio', CHAR_JOB + bad + '\n'),
                         'preset:pss')
        check(rc == 1 and what in err and '[rep1]' in err, f'{bad}: {err}')
    rc, _, err = pcm('model', '--job', write_file('b.fio', '[a]\nrw=read\nruntime=1s\n'),
                     'preset:pss')
    check(rc == 1 and 'size' in err, err)
    rc, _, err = pcm('model', '--job', os.path.join(WORK, 'none.fio'), 'preset:pss')
    check(rc == 1 and 'No such file' in err, err)


def cleanup():
    import shutil
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(tap.run_all([test_parsers_agree, test_open_loop_queueing,
                             test_closed_loop_matches_model, test_refusals, test_help_example,
                             test_resources_known, test_host_and_rate, test_small_requests,
                             test_wear, test_blktrace_binary, test_outputs, test_job_files],
                            cleanup))
