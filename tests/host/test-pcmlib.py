#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of tools/pcmlib, the package the tools share: words (table
words, config replies, sizes: the one copy of each), libpcm's refusals
(the module's own parser), cli (every tool's entry survives a reader
that stops early: no traceback), and fio (the one reader of fio's JSON
report, from a real one: fixtures/fio/randrw-2jobs.json).  Prints TAP,
like tap.h."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(TOP, 'tools'))
from pcmlib import emufault, fio, libpcm, model, status, words  # noqa: E402 (sys.path set first)
from pcmlib import tap  # noqa: E402 (sys.path set first)
from pcmlib.tap import check  # noqa: E402 (sys.path set first)

TOOLS = os.path.join(TOP, 'tools')
# fio 3.33's report on a host, trimmed to the jobs' options, sides and
# CPU figures: fio --name=x --filename=/tmp/fiotest --size=4m --rw=randrw
# --rwmixread=70 --bs=4k --ioengine=psync --numjobs=2 --lat_percentiles=1
# --runtime=1 --time_based --output-format=json --output=FILE
FIO_REPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures', 'fio',
                          'randrw-2jobs.json')


def test_sizes():
    good = {'512': 512, '4k': 4096, '4K': 4096, '1m': 1 << 20, '1M': 1 << 20, '2g': 2 << 30,
            ' 64m ': 64 << 20, 4096: 4096, '0004k': 4096}
    for text, want in good.items():
        got = words.parse_size(text)
        check(got == want, f'parse_size({text!r}) = {got}, want {want}')
    for text in ('', '0', '-4k', '4kb', '1.5m', 'k', '4 k', 'x', '1t', True, None):
        try:
            words.parse_size(text)
            check(False, f'parse_size({text!r}) accepted')
        except words.SizeError as e:
            check('is not a size' in str(e) and '4k' in str(e), f'{text!r}: message {e}')
    check(words.parse_size('0', allow_zero=True) == 0, 'allow_zero')
    check(words.parse_size('4k', multiple=512) == 4096, 'multiple of 512')
    for bad in ('1000', '100'):
        try:
            words.parse_size(bad, multiple=512)
            check(False, f'{bad} accepted as a multiple of 512')
        except words.SizeError as e:
            check('multiple of 512' in str(e), f'{bad}: {e}')
    for n, w in ((512, '512'), (4096, '4k'), (1 << 20, '1m'), (3 << 30, '3g'), (1536, '1536'),
                 (6 << 10, '6k')):
        check(words.size_word(n) == w and words.parse_size(w) == n, f'size_word({n}) {w}')


def test_words():
    check(words.split_word('gap_interval:64') == ('gap_interval', '64'), 'split key:value')
    check(words.split_word('meta_device:/dev/a:b') == ('meta_device', '/dev/a:b'),
          'only the first colon splits')
    check(words.split_word('format') == ('format', None), 'a flag')
    check(words.word_value('preset:pss gap_interval:8 gap_interval:16', 'gap_interval') == '16',
          'the last word of a key wins, as in the module')
    check(words.word_value(['preset:pss'], 'domains') is None, 'missing key')
    cfg = words.parse_words('preset:none row_size:4096 format gap_interval:128')
    check(list(cfg) == ['preset', 'row_size', 'format', 'gap_interval'] and
          cfg['row_size'] == '4096' and cfg['format'] is None, f'parse_words {cfg}')
    check(words.merge_words('preset:none gap_interval:0', 'gap_interval:128 channels:2') ==
          'preset:none gap_interval:128 channels:2', 'merge replaces in place, adds after')
    check(words.merge_words('preset:none gap_interval:0', '') == 'preset:none gap_interval:0',
          'merge nothing')


def test_status_parser_shared():
    """pcmctl, pcm-bench, storm and soak parse status through one module."""
    st = status.parse('reads:1 metadata:ok start:0,5')
    check(st == {'reads': 1, 'metadata': 'ok', 'start': '0,5'}, f'parse {st}')
    for tool in ('pcmctl', 'pcm-bench', 'soak', 'demo', 'vm-run'):
        with open(os.path.join(TOOLS, tool)) as fh:
            text = fh.read()
        check('from pcmlib import' in text and "'lib')" not in text and
              "tests', 'vm'" not in text, f'{tool} imports from pcmlib only')


def test_libpcm_refusals():
    """The module's parser, through libpcm: what a spec or pcmctl checks
    on the host before any device or VM."""
    bad = {'preset:psss': 'preset:psss: unknown preset',
           'bogus_key:1': 'bogus_key:1: unknown parameter',
           'read_ns:-5': 'read_ns:-5', 'domains:0': 'out of range'}
    for w, reason in bad.items():
        msg = libpcm.check_words(w)
        check(msg is not None and reason in msg, f'{w}: {msg!r}')
    for w in ('preset:pss', 'preset:onyx gap_interval:64 completion:early', ['preset:none']):
        check(libpcm.check_words(w) is None, f'{w}: {libpcm.check_words(w)!r}')


def closed_pipe(argv):
    """Run argv with its stdout a pipe whose reader is already gone."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run(argv, stdout=w, stderr=subprocess.PIPE, text=True, cwd=TOP,
                              stdin=subprocess.DEVNULL, timeout=120)
    finally:
        os.close(w)


def test_entries_broken_pipe():
    """Every tool's entry: a reader gone before it writes ends it with
    SIGPIPE's status, or argparse's own quiet 0 for --help, never with a
    traceback or an 'Errno 32' line."""
    py = '/usr/bin/python3'
    runs = [([py, 'tools/pcmlib/status.py', '--keys'], (141,)),
            ([os.path.join(TOOLS, 'pcmctl'), 'params'], (141,))]
    for tool in ('pcmctl', 'pcm-bench', 'demo', 'soak', 'vm-run', 'check'):
        runs.append(([os.path.join(TOOLS, tool), '--help'], (0, 141)))
    runs.append(([py, 'tools/pcmlib/storm.py', '--help'], (0, 141)))
    for argv, codes in runs:
        res = closed_pipe(argv)
        check(res.returncode in codes and 'Traceback' not in res.stderr and
              'Errno 32' not in res.stderr and 'Broken pipe' not in res.stderr,
              f'{argv[1:]}: exit {res.returncode}, stderr {res.stderr[-300:]!r}')


def test_status_script():
    """status.py still runs as a script (tests/vm/lib/lib.sh calls --keys)."""
    res = subprocess.run(['/usr/bin/python3', os.path.join(TOOLS, 'pcmlib', 'status.py'),
                          '--keys'], capture_output=True, text=True)
    check(res.returncode == 0 and res.stdout.split() == list(status.FIELDS), f'--keys {res}')


RANKS_REPLY = """elapsed_ns:2000000 channels:2 ranks:1
front requests:10 busy_ns:100 util_ppm:50 wait_ns:7 wait_max_ns:3
tags waits:1 wait_ns:5 wait_max_ns:5
bus:0 requests:6 busy_ns:0 util_ppm:0 wait_ns:0 wait_max_ns:0
rank:0.0 requests:6 busy_ns:200000 util_ppm:100000 wait_ns:4 wait_max_ns:4
bus:1 requests:4 busy_ns:0 util_ppm:0 wait_ns:0 wait_max_ns:0
rank:1.0 requests:4 busy_ns:0 util_ppm:0 wait_ns:0 wait_max_ns:0
"""


def test_ranks_parser():
    """The "ranks" reply: its lines in order, every figure a number; a
    reply that breaks the format is refused, naming the line."""
    r = status.parse_ranks(RANKS_REPLY)
    check(r['elapsed_ns'] == 2000000 and r['channels'] == 2 and r['ranks'] == 1,
          f'head {r}')
    check(r['front']['wait_ns'] == 7 and r['tags'] == {'waits': 1, 'wait_ns': 5,
                                                       'wait_max_ns': 5}, f'front, tags {r}')
    check([b['channel'] for b in r['per_bus']] == [0, 1] and
          [(k['channel'], k['rank'], k['requests']) for k in r['per_rank']] ==
          [(0, 0, 6), (1, 0, 4)] and r['per_rank'][0]['util_ppm'] == 100000,
          f'per bus, per rank {r}')
    bad = {RANKS_REPLY.replace('rank:1.0', 'rank:1.1'): "want 'rank:1.0'",
           RANKS_REPLY.replace('channels:2', 'channels:3'): 'lines for 3 channels',
           RANKS_REPLY.replace('wait_ns:5', 'wait_ns:x'): 'not a number',
           RANKS_REPLY.replace(' util_ppm:50', ''): 'want requests busy_ns',
           '': 'first line'}
    for text, why in bad.items():
        try:
            status.parse_ranks(text)
            check(False, f'accepted {text!r}')
        except status.StatusError as e:
            check(why in str(e), f'{why!r} not in {e}')


FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')


def test_emufault():
    """The emulator's int3 (pcmlib/emufault.py) on real consoles: a 6.12
    guest under QEMU 7.2 TCG, 2 vCPUs, that died in the int3 loop of
    Documentation/testing/emulator-int3.md, and one that died of sysrq c after a test had written
    the same Oops into the kernel log.  Then every part of the signature
    taken away in turn: each must leave an ordinary failure."""
    with open(os.path.join(FIXTURES, 'int3-tcg-console.txt'), encoding='utf-8') as f:
        real = f.read().splitlines()
    got = emufault.stale_int3(real)
    check(got is not None and got['rip'] == 'pcm_timing_charge+0xf8/0x480 [dm_pcm]' and
          got['insn'] == 'e9 94 01 00 00' and got['what'].startswith('jmp rel32'),
          f'the real one: {got}')
    if got:
        check([l.split('] ', 1)[1].split(':')[0] for l in got['lines']] ==
              ['Oops', 'RIP', 'Code', 'Kernel panic - not syncing'], f"lines {got['lines']}")
        check('no longer holds' in got['why'] and 'stale translation' in got['why'],
              got['why'])
    with open(os.path.join(FIXTURES, 'int3-kmsg-then-sysrq-console.txt'),
              encoding='utf-8') as f:
        forged = f.read().splitlines()
    check(emufault.stale_int3(forged) is None,
          'the Oops written to the log, then a real panic (sysrq c)')

    def variant(old, new):
        return emufault.stale_int3([l.replace(old, new) for l in real])

    def inserted(before, line):
        at = next(i for i, l in enumerate(real) if before in l)
        return emufault.stale_int3(real[:at] + [line] + real[at:])

    # memory still holds an int3 there: a real int3 in kernel text
    check(variant('e9 <94>', 'cc <94>') is None, 'int3 still in memory')
    # the byte there starts no instruction text_poke_bp() writes
    check(variant('e9 <94>', '48 <94>') is None, 'not a patch site')
    # other deaths
    for header in ('Oops: invalid opcode: 0000 [#1] PREEMPT SMP NOPTI',
                   'Oops: general protection fault, probably for non-canonical address '
                   '0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI'):
        check(variant('Oops: int3: 0000 [#1] PREEMPT SMP NOPTI', header) is None, header)
    check(variant('Fatal exception in interrupt', 'Fatal exception') is None,
          'another panic')
    check(emufault.stale_int3([l for l in real if 'Kernel panic' not in l]) is None,
          'no panic: the guest did not die of it')
    check(inserted('Kernel panic', '[  190.3669] Oops: general protection fault: 0000 [#2] '
                   'PREEMPT SMP NOPTI') is None, 'a later Oops is the death')
    check(inserted('Oops: int3', '[  180.0] BUG: kernel NULL pointer dereference, address: '
                   '0000000000000008') is None, 'other trouble earlier in the boot')
    check(inserted('Kernel panic', '[  190.3669] WARNING: CPU: 1 PID: 319 at x.c:1 f+0x1/0x2')
          is None, 'other trouble inside the Oops')
    check(variant(next(l for l in real if '<94>' in l).split('] ', 1)[1],
                  'Code: Unable to access opcode bytes at 0xffffffffc0a8f8ce.') is None,
          'no Code bytes')
    check(variant('RIP: 0010:pcm_timing_charge', 'RIP: 0033:pcm_timing_charge') is None,
          'a user-mode RIP')
    check(emufault.stale_int3([]) is None, 'empty console')
    # both vCPUs ran the stale translation: two int3 Oopses, then the panic
    # (a 6.12 suite run, 2026-12-07, in 40-app-kv)
    with open(os.path.join(FIXTURES, 'int3-two-cpus-console.txt'), encoding='utf-8') as f:
        two = f.read().splitlines()
    got = emufault.stale_int3(two)
    check(got is not None and got['oopses'] == 2 and got['rip'] == '__schedule+0x339/0xbf0'
          and got['insn'] == '0f 1f 44 00 00' and len(got['lines']) == 7,
          f'two int3 Oopses at once: {got}')
    first = next(l for l in two if '[#1]' in l)
    check(emufault.stale_int3([l.replace(first.split('] ', 1)[1], 'Oops: invalid opcode: 0000 '
                                         '[#1] PREEMPT SMP NOPTI') for l in two]) is None,
          'the first of two Oopses not an int3')
    code = next(l for l in two if l.split('] ', 1)[1].startswith('Code: ') and '<1f>' in l)
    check(emufault.stale_int3([l if l is not code else l.replace('00 0f <1f>', '00 cc <1f>')
                               for l in two]) is None, 'the first still holds its int3')
    check(emufault.stale_int3(['[   12.3] sysrq: Trigger a crash',
                               '[   12.3] Kernel panic - not syncing: sysrq triggered crash'])
          is None, 'sysrq c')
    # the Oops's own RIP is the first after its header, nothing later
    cut = [l for l in real if not l.endswith('RIP: 0010:pcm_timing_charge+0xf8/0x480 [dm_pcm]')
           or '190.366638' in l]
    check(emufault.stale_int3(cut) is None, "a later RIP is not the Oops's")
    # 6.1's header, a NOP5 site (a tracepoint switched off), no timestamps
    plain = ['int3: 0000 [#1] PREEMPT SMP NOPTI',
             'CPU: 0 PID: 1 Comm: swapper/0 Not tainted 6.1.0-57-amd64 #1  Debian 6.1.158-1',
             'RIP: 0010:sched_clock_cpu+0x10/0x1e0',
             'Code: ' + ' '.join(['90'] * 41) + ' 0f <1f> 44 00 00 ' + ' '.join(['c3'] * 17),
             'RSP: 0000:ffffffff92803e58 EFLAGS: 00000046',
             'Kernel panic - not syncing: Fatal exception in interrupt']
    got = emufault.stale_int3(plain)
    check(got is not None and got['insn'] == '0f 1f 44 00 00' and 'NOP' in got['what'] and
          len(got['lines']) == 4, f'6.1, NOP5: {got}')


def fio_fixture():
    with open(FIO_REPORT, encoding='utf-8') as fh:
        return json.load(fh)


def test_fio_report():
    """pcmlib.fio reads a real report: its jobs, the side that moved data,
    fio's lat and clat apart (lat = slat + clat: lat's mean the larger),
    fio's percentiles by their number, pcm-bench's figures named for the
    latency they are (clat_* fio's clat, lat_* fio's lat)."""
    raw = fio_fixture()
    rep = fio.load(FIO_REPORT)
    jobs = fio.jobs(rep)
    check(rep == raw and len(jobs) == 2, f'{len(jobs)} jobs')
    job = jobs[0]
    side = fio.moved(job)
    check(side is job['read'] and side['io_bytes'] > 0, 'a mix: its reads')
    check(fio.moved({'read': {'io_bytes': 0}, 'write': {'io_bytes': 8}})['io_bytes'] == 8,
          'writes only: its writes')
    clat, lat = fio.lat(side, 'clat'), fio.lat(side, 'lat')
    check(clat is side['clat_ns'] and lat is side['lat_ns'] and lat['mean'] > clat['mean'],
          f"lat {lat['mean']} > clat {clat['mean']}")
    check(fio.percentile_ns(clat, 50) == clat['percentile']['50.000000'] and
          fio.percentile_ns(lat, 99.9) == lat['percentile']['99.900000'] and
          fio.percentile_ns(clat, 12.5) is None and fio.percentile_ns({}, 50) is None,
          'percentiles by number')
    check(fio.lat(side, 'nope') == {}, 'a latency fio did not report: {}')
    got = fio.figures(rep)
    check(got == {'iops': side['iops'], 'clat_mean_ns': clat['mean'],
                  'lat_mean_ns': lat['mean'],
                  'clat_median_ns': clat['percentile']['50.000000'],
                  'fio_cpu_pct': job['usr_cpu'] + job['sys_cpu']}, f'figures {got}')
    for bad, why in (('no json here', 'no JSON'), ('{"jobs": [', 'not JSON')):
        try:
            fio.loads(bad)
            check(False, f'{bad!r} read')
        except fio.FioError as e:
            check(why in str(e), str(e))
    check(fio.loads('fio: a notice first\n' + json.dumps(raw)) == raw, 'a notice before it')
    try:
        fio.jobs({'jobs': []})
        check(False, 'no job taken')
    except fio.FioError as e:
        check('no job' in str(e), str(e))


def fio_cli(*args):
    res = subprocess.run(['/usr/bin/python3', '-S', os.path.join(TOOLS, 'pcmlib', 'fio.py'),
                          *args], capture_output=True, text=True)
    return res.returncode, res.stdout.strip(), res.stderr


def test_fio_cli():
    """fio.py as the VM tests run it (python3 -S): a job's fields on one
    line, --sum over the jobs, exit 1 naming a missing one."""
    raw = fio_fixture()
    j0, j1 = raw['jobs']
    rc, out, err = fio_cli(FIO_REPORT, 'read.clat.min', 'read.clat.max', 'read.clat.p50',
                           'write.lat.p99.9', 'error', 'write.io_bytes')
    want = [j0['read']['clat_ns']['min'], j0['read']['clat_ns']['max'],
            j0['read']['clat_ns']['percentile']['50.000000'],
            j0['write']['lat_ns']['percentile']['99.900000'], j0['error'],
            j0['write']['io_bytes']]
    check(rc == 0 and out == ' '.join(str(v) for v in want), f'{rc} {out!r} {err!r}')
    rc, out, err = fio_cli(FIO_REPORT, '--sum', 'write.total_ios', 'read.io_bytes')
    check(rc == 0 and out == f"{j0['write']['total_ios'] + j1['write']['total_ios']} "
          f"{j0['read']['io_bytes'] + j1['read']['io_bytes']}", f'--sum: {rc} {out!r} {err!r}')
    rc, out, err = fio_cli(FIO_REPORT, 'read.clat.p12.5')
    check(rc == 1 and not out and 'read.clat.p12.5' in err, f'missing: {rc} {out!r} {err!r}')
    rc, out, err = fio_cli('/nonexistent.json', 'error')
    check(rc == 1 and 'nonexistent' in err, f'no file: {rc} {err!r}')


def test_fio_run():
    """fio.run(): fio's report through --output=FILE (an argv list or a
    shell line), never its stdout; FioError when fio fails."""
    if not shutil.which('fio'):
        check(True, 'no fio here')
        return
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, 'data')
        args = ['fio', '--name=t', f'--filename={data}', '--size=1m', '--rw=randread',
                '--bs=4k', '--number_ios=16', '--ioengine=psync', '--output-format=json']
        rep = fio.run(args)
        check(fio.jobs(rep)[0]['read']['total_ios'] == 16, 'argv: 16 reads')
        rep = fio.run(' '.join(args), cwd=d)
        check(fio.jobs(rep)[0]['jobname'] == 't', 'a shell line')
        saved = os.dup(2)   # fio's complaint (its stderr is the caller's): not in the TAP
        try:
            with open(os.devnull, 'w') as null:
                os.dup2(null.fileno(), 2)
            fio.run(['fio', '--name=t', f'--filename={data}', '--size=1m', '--rw=bogus',
                     '--output-format=json'])
            check(False, 'a failing fio returned')
        except fio.FioError as e:
            check('failed (exit' in str(e), str(e))
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def test_one_reader():
    """Nothing else under tools/ or tests/vm names fio's latencies in its
    JSON (clat_ns, lat_ns, slat_ns): pcmlib/fio.py reads them for every
    tool and VM test; and one nearest-rank percentile() (pcmlib/model.py)."""
    names = ('clat_ns', 'lat_ns', 'slat_ns')
    found, pct = [], []
    for rel, text in tap.text_files(TOP, ('tools', os.path.join('tests', 'vm'))):
        if rel == os.path.join('tools', 'pcmlib', 'fio.py') or rel.endswith('.c'):
            continue
        found += [rel for n in names if f"'{n}'" in text or f'"{n}"' in text]
        pct += [rel] if 'def percentile(' in text else []
    check(not found, f'fio JSON read outside pcmlib/fio.py: {sorted(set(found))}')
    check(pct == [os.path.join('tools', 'pcmlib', 'model.py')], f'percentile(): {pct}')
    vals = list(range(1, 11))
    check([model.percentile(vals, p) for p in (0, 10, 50, 55, 99, 100)] == [1, 1, 5, 6, 10, 10]
          and model.percentile([], 50) is None, 'nearest rank; None of nothing')


def main():
    return tap.run_all((test_sizes, test_words, test_status_parser_shared,
                           test_libpcm_refusals, test_entries_broken_pipe, test_status_script,
                           test_ranks_parser, test_emufault, test_fio_report, test_fio_cli,
                           test_fio_run, test_one_reader))


if __name__ == '__main__':
    sys.exit(main())
