#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""pcmlib.status: the one parser of dm-pcm's status line (stdlib only).

The line is what "dmsetup status" prints after "START LENGTH pcm": one
key:value word per field, in the order of FIELDS
(Documentation/admin-guide/device-mapper/dm-pcm.rst, "Status";
pcm_status_info() in dm-pcm/dm-pcm-target.c).  tools/pcmctl, tools/soak,
tools/pcm-bench, tools/pcmlib/storm.py and tests/vm/lib.sh (status_field,
through --keys) take the field list and the parsing from here.

  parse(words)          the words, as an ordered dict (lenient: any
                        key:value words, digits become int)
  parse_dmsetup(text)   the same from a whole "dmsetup status" reply of a
                        one-target pcm device
  validate(words, ...)  strict: every field, in order, nothing else,
                        well-formed values; the dict, or StatusError

Command line (for shell scripts):

  status.py NAME KEY        print one field of NAME's status
  status.py --keys          print the field names, in order, on one line
  status.py --check NAME [--domains N] [--metadata STATE] [--length N]
                               validate NAME's status strictly; the reason
                               on stderr and exit 1 if it fails
"""
import argparse
import re
import subprocess
import sys

# The counters, 1-13 of the documented list: "stats reset" zeroes them.
COUNTERS = ('reads', 'writes', 'read_bytes', 'write_bytes', 'flushes', 'fua_writes',
            'discards', 'discard_bytes', 'write_zeroes', 'write_zeroes_bytes',
            'gap_moves', 'start_wraps', 'move_errors')
# The mover's figures after the registers: moves owed now, then counters
# that "stats reset" zeroes too.
MOVER = ('moves_owed', 'parked_writes', 'wouldblock', 'sb_writes', 'meta_flushes')
# The timing model's figures (dm-pcm-timing.c): on or off, then numbers
# that "stats reset" zeroes.  Latencies are modeled, in ns; held and late
# count completions held until their modeled instant and those whose
# backing I/O ended after it.
TIMING = ('read_lat_mean_ns', 'read_lat_max_ns', 'write_lat_mean_ns', 'write_lat_max_ns',
          'tag_waits', 'cache_waits', 'held', 'late', 'late_max_ns')
TIMING_STATES = ('on', 'off')
# ECC's figures (dm-pcm-ecc.c): bits corrected, sectors corrected, sectors
# the decoder refused (the read failed), sectors it miscorrected (wrong data
# returned as good), bits "inject" flipped, raw bit errors rber drew, rows
# whose parity a load recomputed from their data (the write-intent bitmap's
# resync, dm-pcm-wib.c; "stats reset" leaves it).  With ecc:none only raw
# bits (flipped in what readers got) and silent sectors (the sectors they
# were in) can be above zero (dm-pcm-errs.c).
ECC = ('ecc_corrected_bits', 'ecc_corrected_sectors', 'ecc_uncorrectable_sectors',
       'ecc_silent_sectors', 'ecc_injected_bits', 'ecc_raw_bits', 'ecc_resynced_rows')
# Wear counters (wear:on|ROWS): writes per row of the most worn counter's
# rows, and the mean over all rows (0 0 with wear:off).
WEAR = ('wear_max', 'wear_mean')
# Every field, in the order the module prints them (new ones are appended).
FIELDS = COUNTERS + ('metadata', 'domains', 'start', 'gap') + MOVER + ('timing',) + TIMING + ECC + WEAR
METADATA_STATES = ('ok', 'failed', 'read-only')
# PCM_STATUS_LIST: up to this many domains, start and gap list every
# domain's register (comma-separated); above it, "min..max".
LIST_MAX = 16
U64_MAX = (1 << 64) - 1

_NUM = re.compile(r'(0|[1-9][0-9]*)\Z')


class StatusError(ValueError):
    """A status line that does not parse, or breaks the strict rules."""


def _words(words):
    return words.split() if isinstance(words, str) else list(words)


def parse(words):
    """The status words (the text after "START LENGTH pcm", or its words) as
    an ordered dict; a value of digits becomes an int.  Lenient about which
    fields are there (validate() is not): every word must be key:value with
    a key, and no key may come twice."""
    st = {}
    for w in _words(words):
        key, sep, val = w.partition(':')
        if not sep or not key:
            raise StatusError(f'status word {w!r} is not key:value')
        if key in st:
            raise StatusError(f'status word {w!r}: {key} given twice')
        st[key] = int(val) if val.isdigit() else val
    return st


def parse_dmsetup(text, name='device'):
    """A whole "dmsetup status NAME" reply of a one-target pcm device."""
    lines = text.splitlines()
    f = lines[0].split() if len(lines) == 1 else []
    if len(f) < 3 or f[2] != 'pcm':
        raise StatusError(f'{name}: not a single-target pcm device: {text.strip()!r}')
    try:
        return parse(f[3:])
    except StatusError as e:
        raise StatusError(f'{name}: {e}') from None


def _number(key, val):
    if not _NUM.match(val) or int(val) > U64_MAX:
        raise StatusError(f'{key}:{val}: not a 64-bit unsigned integer')
    return int(val)


def _registers(key, val, domains):
    """start or gap: one number per domain, or min..max above LIST_MAX."""
    if domains > LIST_MAX:
        lo, sep, hi = val.partition('..')
        if not sep:
            raise StatusError(f'{key}:{val}: {domains} domains want min..max')
        lo, hi = _number(key, lo), _number(key, hi)
        if lo > hi:
            raise StatusError(f'{key}:{val}: min above max')
        return
    regs = val.split(',')
    if len(regs) != domains:
        raise StatusError(f'{key}:{val}: {len(regs)} values for {domains} domain(s)')
    for r in regs:
        _number(key, r)


def validate(words, domains=None, metadata=None):
    """Check the status words strictly: the fields of FIELDS, each once, in
    that order and nothing else; counters and domains (>= 1) integers;
    metadata one of METADATA_STATES; start and gap a comma list of one
    number per domain, or min..max with more than LIST_MAX domains.  With
    @domains or @metadata, those must match too.  Returns parse()'s dict;
    raises StatusError naming the first problem."""
    ws = _words(words)
    st = parse(ws)
    keys = list(st)
    if keys != list(FIELDS):
        for i, key in enumerate(FIELDS):
            if i >= len(keys):
                raise StatusError(f'{key} missing (the line ends after {len(keys)} fields)')
            if keys[i] != key:
                raise StatusError(f'field {i + 1} is {keys[i]!r}, want {key!r}')
        raise StatusError(f'unexpected field(s) after {FIELDS[-1]}: '
                          f'{" ".join(ws[len(FIELDS):])}')
    raw = dict(w.split(':', 1) for w in ws)
    for key in COUNTERS + MOVER + TIMING:
        _number(key, raw[key])
    if raw['timing'] not in TIMING_STATES:
        raise StatusError(f'timing:{raw["timing"]}: not one of {"/".join(TIMING_STATES)}')
    if raw['metadata'] not in METADATA_STATES:
        raise StatusError(f'metadata:{raw["metadata"]}: not one of {"/".join(METADATA_STATES)}')
    if metadata is not None and raw['metadata'] != metadata:
        raise StatusError(f'metadata:{raw["metadata"]}, want {metadata}')
    ndom = _number('domains', raw['domains'])
    if ndom < 1:
        raise StatusError('domains:0')
    if domains is not None and ndom != domains:
        raise StatusError(f'domains:{ndom}, want {domains}')
    for key in ('start', 'gap'):
        _registers(key, raw[key], ndom)
    return st


def dmsetup_status(name):
    """dmsetup status NAME; StatusError if dmsetup fails."""
    r = subprocess.run(['dmsetup', 'status', name], text=True, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode:
        raise StatusError(f'dmsetup status {name}: {r.stderr.strip() or r.returncode}')
    return r.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(prog='status.py', description=__doc__.split('\n')[0])
    ap.add_argument('--keys', action='store_true', help='print the field names and exit')
    ap.add_argument('--check', action='store_true', help='validate NAME\'s status strictly')
    ap.add_argument('--domains', type=int, help='with --check: this many domains')
    ap.add_argument('--metadata', choices=METADATA_STATES, help='with --check: this state')
    ap.add_argument('--length', type=int, help='with --check: the target is this long')
    ap.add_argument('name', nargs='?', metavar='NAME')
    ap.add_argument('key', nargs='?', metavar='KEY')
    a = ap.parse_args(argv)
    if a.keys:
        print(' '.join(FIELDS))
        return 0
    if not a.name or (a.check and a.key) or (not a.check and not a.key):
        ap.error('want NAME KEY, --check NAME or --keys')
    try:
        text = dmsetup_status(a.name)
        if a.check:
            f = text.split(maxsplit=3)
            if len(text.splitlines()) != 1 or len(f) < 3 or f[0] != '0' or f[2] != 'pcm':
                raise StatusError(f'not a single-target pcm device: {text.strip()!r}')
            if a.length is not None and f[1] != str(a.length):
                raise StatusError(f'length {f[1]}, want {a.length}')
            validate(f[3] if len(f) > 3 else '', a.domains, a.metadata)
            return 0
        st = parse_dmsetup(text, a.name)
        if a.key not in st:
            raise StatusError(f'{a.name}: no field {a.key!r} (fields: {" ".join(st)})')
        print(st[a.key])
    except StatusError as e:
        print(f'pcmstatus: {a.name}: {e}' if a.check else f'pcmstatus: {e}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    # run as a script (tests/vm/lib.sh, 22-message-storm): tools/ holds the package
    import os
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from pcmlib import cli
    cli.run(main)
