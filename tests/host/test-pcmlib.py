#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of tools/pcmlib, the package the tools share: words (table
words, config replies, sizes: the one copy of each), libpcm's refusals
(the module's own parser), and cli (every tool's entry survives a reader
that stops early: no traceback).  Prints TAP, like tap.h."""
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(TOP, 'tools'))
from pcmlib import libpcm, status, words  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import taplib  # noqa: E402
from taplib import check  # noqa: E402

TOOLS = os.path.join(TOP, 'tools')


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
    """status.py still runs as a script (tests/vm/lib.sh calls --keys)."""
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


def main():
    return taplib.run_all((test_sizes, test_words, test_status_parser_shared,
                           test_libpcm_refusals, test_entries_broken_pipe, test_status_script,
                           test_ranks_parser))


if __name__ == '__main__':
    sys.exit(main())
