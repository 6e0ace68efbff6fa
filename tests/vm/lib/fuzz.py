#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Seeded fuzzer of dm-pcm table lines and messages, with an oracle.

  fuzz.py DEV TABLE_CASES MESSAGE_CASES [SEED]

Each generated table line or message is valid-looking or hostile (huge
numbers, empty values, repeated keys, 4 KiB words, non-UTF-8 bytes).  A
model of the documented rules predicts whether the kernel must accept it;
a case fails when the kernel disagrees, when an accepted device does not
work (I/O, table round trip), when a refused one leaves a device behind,
or when a refused message changes the status.  Prints KTAP; the seed is
printed first so that a failure can be replayed.
"""
import json
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), 'tools'))
from pcmlib import dmioctl, tap  # noqa: E402 (sys.path set first)

U64 = 2 ** 64
# the words that decide the ECC layout (and so the row metadata's size)
ECC_KEYS = ('ecc', 'ecc_codewords', 'ecc_t', 'meta_bytes')


def module_params():
    """The parameters as the module describes them (pcm-params.c's "params"
    reply, through pcmctl): (min, max, power of two) of the numeric ones,
    the values of the enumerated ones, the names "set" may change, and
    each preset's defaults of row_size and domains (the geometry the
    oracle needs)."""
    root = os.environ.get('PCM_ROOT') or os.path.join(os.path.dirname(__file__), '..', '..', '..')
    out = subprocess.run([os.path.join(root, 'tools', 'pcmctl'), 'params', '--json'],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    params, choices, runtime, presets = {}, {}, set(), {}
    for p in json.loads(out):
        for k, v in p.items():
            if k.startswith('default.') and p['name'] in ('row_size', 'domains') + ECC_KEYS:
                presets.setdefault(k[8:], {})[p['name']] = int(v) if v.isdigit() else v
        if p['kind'] in ('u64', 'pow2'):
            params[p['name']] = (int(p['min']), int(p['max']), p['kind'] == 'pow2')
        elif p['kind'] == 'enum':
            choices[p['name']] = tuple(p['values'].split('|'))
        if p['set'] == 'yes':
            runtime.add(p['name'])
    return params, choices, runtime, presets


PARAMS, CHOICES, RUNTIME, PRESETS = module_params()
MAX_OPT = len(PARAMS) + len(CHOICES) + 5        # + meta_device, format, rber, wear, preset


def ecc_parity(codewords, t):
    """The documented ECC rule: the smallest m of 5..15 with m * t < 2^m - 1
    holding the longest codeword's bits and its m * t parity bits; the
    parity bytes per sector, or None when no field holds it."""
    bits = 8 * -(-512 // codewords)
    for m in range(5, 16):
        if m * t < 2 ** m - 1 and bits + m * t <= 2 ** m - 1:
            return codewords * -(-m * t // 8)
    return None


def row_meta(cfg):
    """ECC metadata bytes per row; None for a layout that is refused."""
    if cfg['ecc'] != 'bch':
        return 0
    need = ecc_parity(cfg['ecc_codewords'], cfg['ecc_t'])
    if need is None or need > cfg['meta_bytes']:
        return None
    return cfg['row_size'] // 512 * cfg['meta_bytes']


def capacity(dev_sectors, offset, row, domains, meta_bytes=0):
    """The documented layout: two superblock copies of 64 + 16 * domains
    bytes in 4 KiB blocks at the end (aligned down to 4 KiB); of the rows
    before them, one per domain is a gap; with ECC (@meta_bytes per row)
    the superblock has 8 more bytes and each row whole sectors of metadata
    after the rows, then the WIB region: an 8-sector sticky-inject table
    and a bitmap of a bit per 64 rows in whole sectors, sized for the rows
    there would be without it.  Returns the largest legal length in
    sectors, or None when not even two rows per domain fit."""
    sb = -(-(64 + 16 * domains + (8 if meta_bytes else 0)) // 4096) * 8
    meta = dev_sectors // 8 * 8 - 2 * sb
    if meta <= offset:
        return None
    per_row = row + -(-meta_bytes // 512)
    rows = (meta - offset) // per_row
    if meta_bytes:
        wib = 8 + -(-(-(-rows // 64)) // 4096)
        if offset + wib >= meta:
            return None
        rows = (meta - offset - wib) // per_row
    return (rows - domains) * row if rows >= 2 * domains else None


def run(args):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def strict_u64(s):
    """The module's pcm_parse_u64(): digits only, no overflow."""
    if not re.fullmatch(rb'[0-9]+', s):
        return None
    v = int(s)
    return v if v < U64 else None


# Bytes for hostile words: no blank, no backslash (the kernel's argument
# splitter unescapes it) and no 0xa0 (the kernel's isspace() takes it).
WORD_BYTES = bytes(c for c in range(0x21, 0x100) if c not in (0x5c, 0x7f, 0xa0))


class Gen:
    """Half the lines are valid; the rest change one or two parts."""

    def __init__(self, rnd, dev_sectors):
        self.r = rnd
        self.size = dev_sectors

    def hostile_number(self, good):
        r = self.r
        good = int(good) if str(good).isdigit() else 0
        return r.choice([
            '-1', str(2 ** 32), str(2 ** 64), str(2 ** 64 - 1), '', '0x10', '1e3',
            '+8', f'{good}x', '9' * r.choice([20, 100, 4096]), str(good + 1),
            '0' * 30 + str(good), str(r.randrange(0, 2 ** 22)), '0',
        ])

    def valid_word(self, key):
        if key == 'preset':
            return 'preset:' + self.r.choice(sorted(PRESETS))
        if key in CHOICES:
            return f'{key}:{self.r.choice(CHOICES[key])}'
        lo, hi, pow2 = PARAMS[key]
        if key.endswith('_ns'):
            # the slow path does I/O: modeled times up to 50 us, not 1 s
            v = self.r.choice([lo, lo + 1, 128, 50000])
        elif pow2:
            v = 1 << self.r.randrange(lo.bit_length() - 1, hi.bit_length())
        elif key == 'domains':
            v = self.r.choice([1, 2, 3, 4, 7, 16, 100, 1024])
        else:
            v = self.r.choice([lo, lo + 1, 128, hi, self.r.randrange(lo, hi)])
        return f'{key}:{v}'

    def hostile_word(self):
        r = self.r
        key = r.choice(list(PARAMS) + list(CHOICES) + ['preset', 'bogus', 'ROW_SIZE', '',
                                                       'row'])
        val = r.choice(['', 'bogus', 'NONE', '3000', '256', str(2 ** 21),
                        self.hostile_number(4096)])
        return r.choice([
            key, f'{key}:{val}', f'{key}:{val}:{val}', 'k' * 4096,
            bytes(r.choice(WORD_BYTES) for _ in range(r.randrange(1, 12))),
        ])

    def table(self, dev):
        r = self.r
        keys = r.sample(list(PARAMS) + list(CHOICES) + ['preset'],
                        r.randrange(0, len(PARAMS) + len(CHOICES) + 2))
        words = [self.valid_word(k) for k in keys]
        offset = r.choice([0, 0, 8, 2048])
        given = dict(w.split(':') for w in words)
        row = int(given.get('row_size', 4096)) // 512
        cap = capacity(self.size, offset, row, int(given.get('domains', 1))) or row
        length = r.choice([cap, cap, cap // 2 // row * row or row, row])
        count = str(len(words))
        for _ in range(r.choice([0, 0, 0, 1, 1, 2])):
            what = r.randrange(9)
            if what == 0:
                offset = self.hostile_number(offset)
            elif what == 1:
                count = self.hostile_number(len(words))
            elif what == 2:
                length = r.choice([cap + row, self.size + 8, 0])
            elif what in (3, 4, 5) or not words:
                words.insert(r.randrange(len(words) + 1), self.hostile_word())
            elif what == 6:
                words.append(words[0])
            elif what == 7:
                words.pop(r.randrange(len(words)))
            else:
                return r.choice([f'0 {length} pcm'.encode(),
                                 f'0 {length} pcm {dev}'.encode(),
                                 f'0 {length} pcm /dev/null-pcm 0'.encode(),
                                 f'0 {length} pcm /tmp 0'.encode()])
        parts = [f'0 {length} pcm {dev} {offset}'.encode()]
        if words or r.random() < 0.3:
            parts.append(count.encode())
            parts += [w if isinstance(w, bytes) else w.encode() for w in words]
        return b' '.join(parts)


def predict_table(line, dev, dev_sectors):
    """True when the documented rules accept the line."""
    toks = line.split()
    if len(toks) < 5 or toks[3] != dev.encode():
        return False
    length = strict_u64(toks[1])
    offset = strict_u64(toks[4])
    if length is None or length == 0 or offset is None:
        return False
    args = toks[5:]
    cfg = dict(PRESETS['none'])
    if args:
        count = strict_u64(args[0])
        if count is None or count > MAX_OPT or count != len(args) - 1:
            return False
        seen = set()
        for w in args[1:]:
            key, colon, val = w.partition(b':')
            key = key.decode('latin-1')
            if key == 'preset':
                if not colon or val.decode('latin-1') not in PRESETS or key in seen:
                    return False
                # a preset sets defaults first, wherever it stands
                given = {k: v for k, v in cfg.items() if k in seen}
                cfg = dict(PRESETS[val.decode('latin-1')], **given)
            elif key in CHOICES:
                if not colon or key in seen or val.decode('latin-1') not in CHOICES[key]:
                    return False
                cfg[key] = val.decode('latin-1')
            elif key in PARAMS:
                if not colon or key in seen:
                    return False
                v = strict_u64(val)
                lo, hi, pow2 = PARAMS[key]
                if v is None or v < lo or v > hi or (pow2 and v & (v - 1)):
                    return False
                cfg[key] = v
            else:
                return False
            seen.add(key)
    row = cfg['row_size'] // 512
    meta = row_meta(cfg)
    if meta is None:
        return False
    cap = capacity(dev_sectors, offset, row, cfg['domains'], meta)
    return cap is not None and length <= cap and -(-length // row) >= cfg['domains']


def wipe_meta(dev):
    """Zero the whole device: the superblocks that creating a device wrote,
    so that the next table may have another geometry, and the rows the
    slow path wrote (dm-pcm formats only a data area that holds nothing)."""
    zeros = bytes(1 << 20)
    with open(dev, 'r+b') as f:
        end = f.seek(0, os.SEEK_END)
        f.seek(0)
        for off in range(0, end, len(zeros)):
            f.write(zeros[:min(len(zeros), end - off)])
        os.fsync(f.fileno())


def works(line):
    """Slow path for a sample of accepted lines: create the device with
    dmsetup, do I/O, and recreate it from its printed table."""
    p = run([b'dmsetup', b'create', b'fzs', b'--table', line])
    if p.returncode:
        return False
    node = '/dev/mapper/fzs'
    w = run(['dd', 'if=/dev/urandom', f'of={node}', 'bs=512', 'count=1',
             'oflag=direct', 'status=none'])
    rd = run(['dd', f'if={node}', 'of=/dev/null', 'bs=512', 'count=1',
              'iflag=direct', 'status=none'])
    table = run(['dmsetup', 'table', 'fzs']).stdout.decode().strip()
    again = run(['dmsetup', 'create', 'fzs-rt', '--table', table])
    same = again.returncode == 0 and \
        run(['dmsetup', 'table', 'fzs-rt']).stdout.decode().strip() == table
    run(['dmsetup', 'remove', 'fzs-rt'])
    run(['dmsetup', 'remove', 'fzs'])
    wipe_meta(line.split()[3].decode())
    return w.returncode == 0 and rd.returncode == 0 and same


def predict_message(words):
    words = b' '.join(words).split()    # as the kernel splits the message
    verb = words[0].decode('latin-1').lower() if words else ''
    if verb == 'stats':
        return len(words) == 2 and words[1].lower() == b'reset'
    if verb in ('config', 'persist', 'registers', 'lateness', 'params'):
        return len(words) == 1
    if verb == 'set':
        key = words[1].decode('latin-1') if len(words) == 3 else ''
        if key not in RUNTIME:
            return False
        if key in CHOICES:
            return words[2].decode('latin-1') in CHOICES[key]
        v = strict_u64(words[2])
        return v is not None and PARAMS[key][0] <= v <= PARAMS[key][1]
    return False


def message_words(r):
    verb = r.choice([b'stats', b'STATS', b'config', b'Config', b'set', b'bogus',
                     b'persist', b'registers', b'Registers', b'lateness', b'params',
                     b'x' * 4096, bytes([0xff, 0xfe])])
    pool = [b'reset', b'RESET', b'row_size', b'4096', b'bogus', b'', b'9' * 30,
            b'gap_interval', b'gap_interval', b'0', b'1000000001', b'domains',
            b'read_ns', b'tags', b'1025', b'channels', b'completion', b'early', b'later',
            b'k' * 4096, bytes([0xc3, 0x28])]
    return [verb] + [r.choice(pool) for _ in range(r.choice([0, 0, 1, 1, 2, 3]))]


def main():
    dev, ntab, nmsg = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else int.from_bytes(os.urandom(4), 'little')
    print(f'# fuzz seed {seed} (replay: fuzz.py {dev} {ntab} {nmsg} {seed})')
    rnd = random.Random(seed)
    size = int(run(['blockdev', '--getsz', dev]).stdout)
    gen = Gen(rnd, size)
    dm = dmioctl.DM()
    acc = ref = slow = 0

    # table lines: loaded into the inactive slot of one device, then cleared
    dm.create('fz')
    for i in range(ntab):
        line = gen.table(dev)
        want = predict_table(line, dev, size)
        toks = line.split(b' ', 3)
        if len(toks) < 3 or toks[2] != b'pcm':
            raise SystemExit(f'generator bug: {line[:80]}')
        params = toks[3] if len(toks) > 3 else b''
        got = dm.load('fz', int(toks[1]), 'pcm', params) == 0
        shown = line[:160].decode('latin-1').encode('unicode_escape').decode()
        ok = got == want
        if got:
            acc += 1
            ok = ok and dm.clear('fz') == 0
            if acc % 25 == 1:           # a sample goes through the slow path
                slow += 1
                ok = ok and works(line)
        else:
            ref += 1
        tap.check(ok, f'table case {i}: predicted {"accept" if want else "refuse"}, '
                      f'kernel {"accepted" if got else "refused"}: {shown}')
    dm.remove('fz')

    # messages to a live device: refused ones must not change its status
    dm.create('fzm')
    dm.load('fzm', capacity(size, 0, 8, 1), 'pcm', f'{dev} 0'.encode())
    dm.resume('fzm')
    table0 = dm.status('fzm', table=True)
    for i in range(nmsg):
        words = message_words(rnd)
        before = dm.status('fzm')
        want = predict_message(words)
        err, flags, out = dm.message('fzm', words)
        got = err == 0
        after = dm.status('fzm')
        acc += got
        ref += not got
        shown = b' '.join(words)[:120].decode('latin-1').encode('unicode_escape').decode()
        ok = got == want and (got or before == after) and dm.status('fzm', True) == table0
        tap.check(ok, f'message case {i}: predicted {"accept" if want else "refuse"}, '
                      f'kernel {"accepted" if got else "refused"}'
                      f'{"" if before == after else " and status changed"}: {shown}')
    dm.remove('fzm')
    dm.close()
    # each case a check (a failed one printed), the run one TAP line
    n, bad = tap.checks, tap.case_failures
    print(f'# fuzz cases tried {n}: accepted {acc}, refused {ref}, failed {bad}; '
          f'{slow} accepted tables also created, used and recreated')
    tap.result(not bad, f'fuzz seed {seed}: {n} cases, {bad} failed')
    return tap.done()


if __name__ == '__main__':
    sys.exit(main())
