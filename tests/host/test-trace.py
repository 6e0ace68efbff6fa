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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, 'tools'))
import taplib  # noqa: E402
from taplib import check  # noqa: E402
from pcmlib import libpcm, trace  # noqa: E402

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
    """blkparse's default output for @reqs: each request's Q, G, I, D, C
    lines, a flush and a remap among them, and the summary after."""
    out, seq = [], 0
    for ms, off, n, w in reqs:
        rw = 'WS' if w else 'R'
        t = f'{ms // 1000}.{ms % 1000:03d}000000'
        for act in ('A', 'Q', 'G', 'I', 'D', 'C'):
            seq += 1
            if act == 'A':
                out.append(f'253,0    1 {seq:8d} {t:>14} {4242:5d}  A {rw:>3} {off // 512} + '
                           f'{n // 512} <- (8,16) {off // 512 + 2048}')
            elif act == 'C':
                out.append(f'253,0    1 {seq:8d} {t:>14} {0:5d}  C {rw:>3} {off // 512} + '
                           f'{n // 512} [0]')
            else:
                out.append(f'253,0    1 {seq:8d} {t:>14} {4242:5d}  {act} {rw:>3} '
                           f'{off // 512} + {n // 512} [fio]')
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
    bad[7] = bad[7].replace(' + ', ' x ')
    rc, _, err = pcm('model', '--trace', '-', 'preset:pss', stdin='\n'.join(bad))
    check(rc == 1 and 'line 8:' in err, f'{bad[7]}: {err}')
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
    """pcmctl model --help's trace example runs as written."""
    rc, out, err = pcm('model', '--help')
    ex = [ln.strip() for ln in out.splitlines() if '/tmp/t.iolog' in ln]
    check(rc == 0 and len(ex) == 2 and ex[0].startswith('printf'), out)
    cmd = ' && '.join(ex).replace('/tmp/t.iolog', os.path.join(WORK, 't.iolog'))
    cmd = cmd.replace('pcmctl model', f'{PCMCTL} model')
    p = subprocess.run(['bash', '-c', cmd], text=True, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check(p.returncode == 0 and 'read: 1 ios' in p.stdout and 'write: 1 ios' in p.stdout,
          f'{cmd}: {p.stdout}')


def cleanup():
    import shutil
    shutil.rmtree(WORK, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(taplib.run_all([test_parsers_agree, test_open_loop_queueing,
                             test_closed_loop_matches_model, test_refusals, test_help_example],
                            cleanup))
