#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""pcmlib.status: the one parser of dm-pcm's status line (stdlib only).

The line is what "dmsetup status" prints after "START LENGTH pcm": one
key:value word per field, in the order of FIELDS
(Documentation/admin-guide/device-mapper/dm-pcm.rst, "Status";
pcm_status_info() in dm-pcm/dm-pcm-target.c).  tools/pcmctl, tools/soak,
tools/pcm-bench, tools/pcmlib/storm.py and tests/vm/lib/lib.sh (status_field,
through --keys) take the field list and the parsing from here.

  parse(words)          the words, as an ordered dict (lenient: any
                        key:value words, digits become int)
  parse_dmsetup(text)   the same from a whole "dmsetup status" reply of a
                        one-target pcm device
  validate(words, ...)  strict: every field, in order, nothing else,
                        well-formed values; the dict, or StatusError
  parse_ranks(text)     the "ranks" message's reply, as a dict

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
# The timing model's resources (dm-pcm-timing.c, the "ranks" message's
# summary): the busiest rank's and the mean rank's utilisation in ppm of
# the time since the figures were reset, then queue waits in ns: every
# rank's added up and the largest one, the channels' buses', the front
# end's and the tags' (all zero with timing:off; "stats reset" zeroes them).
RANKS = ('rank_util_max_ppm', 'rank_util_mean_ppm', 'rank_wait_ns', 'rank_wait_max_ns',
         'bus_wait_ns', 'front_wait_ns', 'tag_wait_ns')
# Every field, in the order the module prints them (new ones are appended).
FIELDS = (COUNTERS + ('metadata', 'domains', 'start', 'gap') + MOVER + ('timing',) + TIMING +
          ECC + WEAR + RANKS)
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
    for key in COUNTERS + MOVER + TIMING + RANKS:
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


# The "ranks" message's reply (dm-pcm.rst, "Messages"): a first line of
# elapsed_ns, channels and ranks; a line each for the front end and the
# tags; then per channel "bus:C" and its ranks "rank:C.R", each with
# RESOURCE figures.
RESOURCE = ('requests', 'busy_ns', 'util_ppm', 'wait_ns', 'wait_max_ns')
TAGS = ('waits', 'wait_ns', 'wait_max_ns')


def _figures(line, what, keys):
    st = parse(line)
    if list(st) != list(keys):
        raise StatusError(f'ranks: {what}: fields {" ".join(st)}, want {" ".join(keys)}')
    for k, v in st.items():
        if not isinstance(v, int):
            raise StatusError(f'ranks: {what}: {k}:{v} is not a number')
    return st


def parse_ranks(text):
    """The "ranks" reply as a dict: elapsed_ns, channels, ranks, front,
    tags, per_bus (a list, by channel) and per_rank (a list of dicts with
    channel and rank, channel by channel); StatusError if it is not one."""
    lines = text.strip('\n').split('\n')
    head = _figures(lines[0] if lines else '', 'first line', ('elapsed_ns', 'channels', 'ranks'))
    nch, nrk = head['channels'], head['ranks']
    if len(lines) != 3 + nch * (1 + nrk):
        raise StatusError(f'ranks: {len(lines)} lines for {nch} channels x {nrk} ranks')
    out = dict(head)
    for i, (name, keys) in enumerate((('front', RESOURCE), ('tags', TAGS)), 1):
        word, _, rest = lines[i].partition(' ')
        if word != name:
            raise StatusError(f'ranks: line {i + 1} is {word!r}, want {name!r}')
        out[name] = _figures(rest, name, keys)
    out['per_bus'], out['per_rank'] = [], []
    i = 3
    for c in range(nch):
        for r in range(-1, nrk):
            want = f'bus:{c}' if r < 0 else f'rank:{c}.{r}'
            word, _, rest = lines[i].partition(' ')
            if word != want:
                raise StatusError(f'ranks: line {i + 1} is {word!r}, want {want!r}')
            fig = _figures(rest, want, RESOURCE)
            if r < 0:
                out['per_bus'].append(dict(channel=c, **fig))
            else:
                out['per_rank'].append(dict(channel=c, rank=r, **fig))
            i += 1
    return out


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
    # run as a script (tests/vm/lib/lib.sh, 22-message-storm): tools/ holds the package
    import os
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from pcmlib import cli
    cli.run(main)
