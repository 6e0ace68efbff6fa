#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of tools/pcmctl and libpcm.so, without root or devices.

Lengths on regular files against an independent layout arithmetic,
parameter errors, map against a simulation that really moves rows, and
create/remove/status/message through a fake dmsetup first in PATH.
Prints TAP, like tap.h.
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PCMCTL = os.path.join(TOP, 'tools', 'pcmctl')
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(TOP, 'tools'))
from pcmlib import tap  # noqa: E402 (sys.path set first)
from pcmlib.tap import check  # noqa: E402 (sys.path set first)

FAKE_DMSETUP = r'''#!/bin/sh
# fake dmsetup: answers from files in $FAKE_DM, logs every call; what the
# kernel would log goes to its log files (kmsg's records, dmesg's lines)
echo "$*" >> "$FAKE_DM/log"
if [ -e "$FAKE_DM/kmsg-add" ]; then cat "$FAKE_DM/kmsg-add" >> "$FAKE_DM/kmsg"; fi
if [ -e "$FAKE_DM/dmesg-add" ]; then cat "$FAKE_DM/dmesg-add" >> "$FAKE_DM/dmesg"; fi
if [ -e "$FAKE_DM/fail" ]; then cat "$FAKE_DM/fail" >&2; exit 1; fi
case "$1" in
table|status) cat "$FAKE_DM/$1" ;;
message) if [ "$4" = registers ]; then cat "$FAKE_DM/registers"; else cat "$FAKE_DM/reply"; fi ;;
create|remove) ;;
*) echo "fake dmsetup: $1?" >&2; exit 1 ;;
esac
'''


# ---------------------------------------------------------------------------
# pcmctl in this process, and a scratch directory with a fake dmsetup


def load_pcmctl():
    sys.dont_write_bytecode = True
    loader = importlib.machinery.SourceFileLoader('pcmctl', PCMCTL)
    mod = importlib.util.module_from_spec(importlib.util.spec_from_loader('pcmctl', loader))
    loader.exec_module(mod)
    return mod


pcmctl = load_pcmctl()
WORK = tempfile.mkdtemp(prefix='test-pcmctl.')
FAKE = os.path.join(WORK, 'dm')


def pcm(*argv):
    """Run pcmctl's main() on @argv: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = pcmctl.main([str(a) for a in argv])
        except SystemExit as e:     # argparse
            rc = e.code
    return rc, out.getvalue(), err.getvalue()


def scratch_file(name, size):
    path = os.path.join(WORK, name)
    with open(path, 'wb') as fh:
        fh.truncate(size)
    return path


def fake_dm(**files):
    """Fresh fake dmsetup state: @files are table, status, registers, reply, fail."""
    shutil.rmtree(FAKE, ignore_errors=True)
    os.makedirs(FAKE)
    for name, text in files.items():
        with open(os.path.join(FAKE, name), 'w') as fh:
            fh.write(text + '\n')


def fake_log():
    try:
        with open(os.path.join(FAKE, 'log')) as fh:
            return fh.read().splitlines()
    except FileNotFoundError:
        return []


FAKE_DMESG = r'''#!/bin/sh
# fake dmesg: the lines of $FAKE_DM/dmesg, or a refusal as for a user
if [ -e "$FAKE_DM/dmesg-denied" ]; then echo "dmesg: read kernel buffer failed: Operation not permitted" >&2; exit 1; fi
cat "$FAKE_DM/dmesg" 2>/dev/null
'''


def install_fake_dmsetup():
    bindir = os.path.join(WORK, 'bin')
    os.makedirs(bindir)
    for name, text in (('dmsetup', FAKE_DMSETUP), ('dmesg', FAKE_DMESG)):
        path = os.path.join(bindir, name)
        with open(path, 'w') as fh:
            fh.write(text)
        os.chmod(path, 0o755)
    os.environ['PATH'] = bindir + os.pathsep + os.environ['PATH']
    os.environ['FAKE_DM'] = FAKE
    # never the host's own kernel log
    pcmctl.KMSG = os.path.join(FAKE, 'kmsg')


# ---------------------------------------------------------------------------
# independent models: the layout and start-gap as the design states them


def sb_sectors(domains):
    """One superblock copy: 64 bytes + 16 per domain, in 4 KiB blocks."""
    return (64 + 16 * domains + 4095) // 4096 * 8


def model_length(size, offset, row_size, domains, meta=0):
    """Largest legal length in sectors, or None where none is legal."""
    sb, rs = sb_sectors(domains), row_size // 512
    if meta:
        if meta < 2 * sb:
            return None
        end = size
    else:
        end = size - size % 8 - 2 * sb
    if end < 0 or offset >= end:
        return None
    rows = (end - offset) // rs
    return (rows - domains) * rs if rows >= 2 * domains else None


def model_ecc_length(size, row_size, domains, row_meta, block=512, meta=0, meta_block=None):
    """Largest legal length with ECC (@row_meta bytes a row), offset 0, no
    wear, on a device of @block-byte logical blocks, the metadata on it or
    on a meta_device of @meta sectors and @meta_block-byte blocks: the
    parity, the inject table and the bitmap in whole blocks of the device
    that holds them (the .rst's layout), or None where none is legal."""
    if row_size < block:
        return None
    blk = (block if meta_block is None else meta_block) // 512
    sb, rs = sb_sectors(domains) + 0, row_size // 512
    rm = -(-row_meta // (512 * blk)) * blk
    inj = -(-8 // blk) * blk

    def extra(rows):
        bitmap = -(-(-(-rows // 64)) // 4096)
        return inj + -(-bitmap // blk) * blk

    if meta:
        avail = meta - 2 * sb
        rows = min(size // rs, avail // rm)
        if avail < extra(rows):
            return None
        rows = min(rows, (avail - extra(rows)) // rm)
    else:
        end = size - size % 8 - 2 * sb
        rows = end // (rs + rm)
        rows = (end - extra(rows)) // (rs + rm)
    return (rows - domains) * rs if rows >= 2 * domains else None


@contextlib.contextmanager
def block_sizes(blocks):
    """pcmctl sees the files of @blocks ({path: bytes}) as block devices
    of those logical block sizes (a host test has no block device)."""
    real = pcmctl.dev_geometry

    def fake(path):
        size, block = real(path)
        return size, blocks.get(path, block)
    pcmctl.dev_geometry = fake
    try:
        yield
    finally:
        pcmctl.dev_geometry = real


class Domain:
    """A start-gap domain of n rows on n + 1 physical rows, moved for real."""

    def __init__(self, n):
        self.n, self.start, self.gap = n, 0, n
        self.phys = list(range(n)) + [None]

    def move(self):
        if self.gap == 0:
            self.phys[0], self.phys[self.n] = self.phys[self.n], None
            self.gap, self.start = self.n, (self.start + 1) % self.n
        else:
            self.phys[self.gap], self.phys[self.gap - 1] = self.phys[self.gap - 1], None
            self.gap -= 1

    def where(self, row):
        return self.phys.index(row)


# ---------------------------------------------------------------------------
# length and parameters


def test_length_matches_model():
    sizes = [64 << 10, 1 << 20, (1 << 20) + 512, (7 << 20) + 3 * 512, 128 << 20]
    rng = random.Random(1)
    for size in sizes:
        dev = scratch_file(f'dev-{size}', size)
        for offset in (0, 8, 1000):
            for row_size in (512, 4096, 65536):
                for k in (1, 4, 252, 253):
                    want = model_length(size // 512, offset, row_size, k)
                    words = [f'row_size:{row_size}', f'domains:{k}']
                    rng.shuffle(words)
                    rc, out, err = pcm('length', dev, '--offset', offset, *words)
                    got = int(out) if rc == 0 else None
                    check(got == want and (rc == 0) == bool(out) and (rc != 0) == bool(err),
                          f'{size} B, offset {offset}, {words}: want {want}, '
                          f'got rc {rc} {out!r} {err!r}')


def test_length_readme_example():
    dev = scratch_file('ram0', 128 << 20)
    rc, out, _ = pcm('length', dev, 'preset:none', 'row_size:4096')
    check(rc == 0 and out == '262120\n', f'README says 262120, got {out!r}')
    rc, out, _ = pcm('length', dev, '--json', 'domains:4', '--offset', '8')
    res = json.loads(out)
    check(rc == 0 and res['length'] == model_length(262144, 8, 4096, 4), f'{res}')
    check(res['rows'] * 8 == res['length'] and res['sb_sectors'] == 8 and
          res['meta_start'] == 262144 - 16, f'{res}')
    check(res['config'] == 'preset:none row_size:4096 gap_interval:128 domains:4 '
          'randomize:0 channels:1 ranks:1 stripe:1 read_ns:0 write_ns:0 zero_write_ns:0 cmd_ns:0 read_mbps:0 write_mbps:0 host_mbps:0 tags:0 completion:late write_cache:0 ctrl_slots:0 xfer_slots:0 read_jitter_ns:0 read_retry_ns:0 read_retry_ppm:0 read_retries:0 write_jitter_ns:0 write_retry_ns:0 write_retry_ppm:0 write_retries:0 seed:0 overhead_ns:0 ecc:none ecc_codewords:6 ecc_t:4 meta_bytes:64 rber:0 wear:off endurance:100000000 dilation:1', f"config {res['config']!r}")


def test_length_meta_device():
    dev = scratch_file('data', 1 << 20)
    for meta_size, k in ((8192, 1), (8192, 4), (8191, 1), (4096, 1), (8192, 253),
                         (16384, 253)):
        meta = scratch_file(f'meta-{meta_size}', meta_size)
        want = model_length(2048, 0, 4096, k, meta_size // 512)
        for how in (['--meta-device', meta], [f'meta_device:{meta}']):
            rc, out, err = pcm('length', dev, f'domains:{k}', *how)
            got = int(out) if rc == 0 else None
            check(got == want, f'meta {meta_size} B, domains {k}, {how}: want {want}, '
                  f'got {rc} {out!r} {err!r}')
    rc, _, err = pcm('length', dev, '--meta-device', meta, f'meta_device:{meta}')
    check(rc == 1 and 'meta_device given twice' in err, f'both: {rc} {err!r}')


def test_length_errors():
    dev = scratch_file('small', 1 << 20)
    bad = {
        ('domains:0',): 'domains:0: out of range, allowed 1..1024',
        ('row_size:1000',): 'row_size:1000: not a power of two',
        ('row_size:256',): 'row_size:256: out of range',
        ('bogus:1',): 'bogus:1: unknown parameter',
        ('preset:nope',): 'preset:nope: unknown preset',
        ('domains:2', 'domains:3'): 'domains given twice',
        ('format:1',): 'format is a flag',
        ('domains:x',): 'not a decimal number',
        ('domains:200',): 'fewer than two physical rows per domain',
        ('--offset', '2032'): 'offset leaves no room',
        ('--offset', '2020'): 'fewer than two physical rows per domain',
        ('--meta-device', os.path.join(WORK, 'missing')): 'No such file',
    }
    for words, reason in bad.items():
        rc, out, err = pcm('length', dev, *words)
        check(rc == 1 and not out and err.startswith('pcmctl: ') and reason in err,
              f'{words}: want exit 1 and {reason!r}, got {rc} {out!r} {err!r}')
    rc, _, err = pcm('length', os.path.join(WORK, 'nodev'))
    check(rc == 1 and 'No such file' in err, f'missing device: {err!r}')
    rc, _, err = pcm('length', dev, '--offset', '-8')
    check(rc == 2 and 'not a non-negative integer' in err, f'negative offset: {err!r}')


def test_length_block_sizes():
    """A device's logical block size, as the kernel takes it: the parity,
    inject table and bitmap in whole blocks of the device that holds them;
    rows no smaller than the data device's blocks, offsets and lengths on
    them."""
    dev = scratch_file('lb-data', 64 << 20)
    meta = scratch_file('lb-meta', 4 << 20)
    size = (64 << 20) // 512
    for block in (512, 1024, 4096):
        with block_sizes({dev: block}):
            rc, out, err = pcm('length', dev, 'preset:none')
            check(rc == 0 and int(out) == model_length(size, 0, 4096, 1),
                  f'{block} B blocks, no ECC: the same length, got {rc} {out!r} {err!r}')
            for words, rm in ((['ecc:bch'], 512), (['ecc:bch', 'row_size:32768'], 4096),
                              (['ecc:bch', 'meta_bytes:16', 'ecc_t:1', 'domains:3'], 128)):
                p = pcmctl.Lib().parse(words)
                want = model_ecc_length(size, p['row_size'], p['domains'], rm, block)
                rc, out, err = pcm('length', dev, *words)
                check(rc == 0 and int(out) == want,
                      f'{block} B blocks, {words}: want {want}, got {rc} {out!r} {err!r}')
            rc, out, _ = pcm('length', dev, '--json', 'ecc:bch')
            res = json.loads(out)
            check(res['block_size'] == block and res['block_sectors'] == block // 512 and
                  res['row_meta_sectors'] == max(1, block // 512), f'{block}: {res}')
    with block_sizes({dev: 4096}):
        ecc = int(pcm('length', dev, 'ecc:bch')[1])
        check(ecc < int(pcm('length', dev, 'preset:none')[1]) // 2 + 8,
              f'4 KiB blocks: a 4 KiB row takes a block of parity ({ecc})')
        for args, reason in (
                (['row_size:2048'], "row_size is smaller than the device's logical block size"),
                (['--offset', '4'], "offset is not a multiple of the device's logical block size")):
            rc, out, err = pcm('length', dev, *args)
            check(rc == 1 and not out and reason in err, f'{args}: {rc} {out!r} {err!r}')
        fake_dm()
        rc, out, err = pcm('create', 'lb', dev, '--dry-run', '--length', ecc - 4, 'ecc:bch')
        check(rc == 1 and 'not a multiple of 8 sectors, the 4096-byte logical blocks' in err,
              f'a length off a block: {rc} {out!r} {err!r}')
        rc, out, err = pcm('create', 'lb', dev, '--dry-run', '--length', ecc - 8, 'ecc:bch')
        check(rc == 0 and out == f'0 {ecc - 8} pcm {dev} 0 1 ecc:bch\n', f'{rc} {out!r} {err!r}')
    # the blocks of the device that holds the metadata
    with block_sizes({dev: 512, meta: 4096}):
        want = model_ecc_length(size, 4096, 1, 512, 512, meta=(4 << 20) // 512, meta_block=4096)
        rc, out, err = pcm('length', dev, 'ecc:bch', f'meta_device:{meta}')
        check(rc == 0 and int(out) == want, f'meta_device of 4 KiB blocks: want {want}, '
              f'got {rc} {out!r} {err!r}')
    with block_sizes({dev: 4096, meta: 512}):
        want = model_ecc_length(size, 4096, 1, 512, 4096, meta=(4 << 20) // 512, meta_block=512)
        rc, out, err = pcm('length', dev, 'ecc:bch', f'meta_device:{meta}')
        check(rc == 0 and int(out) == want, f'data of 4 KiB blocks, meta_device of 512: '
              f'want {want}, got {rc} {out!r} {err!r}')


def test_pcm_length_agrees():
    """build/host/pcm-length (the VM tests' pcm_len) prints what pcmctl
    length prints, and refuses what it refuses, with the same reason."""
    out = os.path.join(TOP, 'build', 'host')
    exe = os.path.join(out, 'pcm-length')
    res = subprocess.run(['make', '-s', '-C', os.path.join(TOP, 'tools'), 'libpcm', f'OUT={out}'],
                         stdout=subprocess.DEVNULL)
    check(res.returncode == 0 and os.access(exe, os.X_OK), f'make builds {exe}')
    dev = scratch_file('pl-data', 64 << 20)
    meta = scratch_file('pl-meta', 1 << 20)
    cases = [[], ['gap_interval:1'], ['ecc:bch'], [f'meta_device:{meta}'],
             ['ecc:bch', f'meta_device:{meta}'], ['row_size:8192', 'domains:3', 'randomize:7'],
             ['row_size:1048576', 'wear:on', 'endurance:1', 'ecc:bch'], ['preset:onyx'],
             ['wear:on', 'domains:5'], ['bogus:1'], ['domains:0'], ['row_size:1000'],
             ['a b'], [''], ['meta_device:' + os.path.join(WORK, 'missing')],
             [f'meta_device:{meta}', f'meta_device:{dev}'], ['domains:1024']]
    for words in cases:
        rc, out, err = pcm('length', dev, *words)
        got = subprocess.run([exe, dev] + words, capture_output=True, text=True)
        check((got.returncode, got.stdout, got.stderr.replace('pcm-length: ', '', 1)) ==
              (rc, out, err.replace('pcmctl: ', '', 1)),
              f'{words}: pcmctl {rc} {out!r} {err!r}, pcm-length {got.returncode} '
              f'{got.stdout!r} {got.stderr!r}')
    tiny = scratch_file('pl-tiny', 4096)
    rc, out, err = pcm('length', tiny)
    got = subprocess.run([exe, tiny], capture_output=True, text=True)
    check(got.returncode == rc == 1 and got.stderr.replace('pcm-length: ', '', 1) ==
          err.replace('pcmctl: ', '', 1), f'no room: {err!r} {got.stderr!r}')


# ---------------------------------------------------------------------------
# create, remove, message, status through the fake dmsetup


def test_create_dry_run():
    dev = scratch_file('cdev', 1 << 20)
    meta = scratch_file('cmeta', 8192)
    want = model_length(2048, 0, 4096, 1)
    runs = [
        ((), f'0 {want} pcm {dev} 0'),
        (('preset:none', '--offset', '8', 'domains:2'),
         f'0 {model_length(2048, 8, 4096, 2)} pcm {dev} 8 2 preset:none domains:2'),
        (('--length', '800', 'row_size:512'), f'0 800 pcm {dev} 0 1 row_size:512'),
        (('--meta-device', meta, 'format'),
         f'0 {model_length(2048, 0, 4096, 1, 16)} pcm {dev} 0 2 format meta_device:{meta}'),
    ]
    fake_dm()
    for args, line in runs:
        rc, out, err = pcm('create', 'pcm0', dev, '--dry-run', *args)
        check(rc == 0 and out == line + '\n', f'{args}: want {line!r}, got {out!r} {err!r}')
    check(fake_log() == [], f'dry run ran dmsetup: {fake_log()}')
    rc, _, err = pcm('create', 'pcm0', dev, '--dry-run', '--length', want + 1)
    check(rc == 1 and f'allowed 1..{want}' in err, f'too long: {err!r}')
    rc, _, err = pcm('create', 'pcm0', dev, '--dry-run', 'meta_device:a b')
    check(rc == 1 and 'blanks' in err, f'blank in a word: {err!r}')


def test_create_remove():
    dev = scratch_file('rdev', 1 << 20)
    fake_dm()
    rc, out, _ = pcm('create', 'pcm1', dev, 'domains:2', '--json')
    line = f'0 {model_length(2048, 0, 4096, 2)} pcm {dev} 0 1 domains:2'
    check(rc == 0 and json.loads(out) == {'name': 'pcm1', 'table': line, 'created': True},
          f'create --json: {out!r}')
    check(fake_log() == [f'create pcm1 --table {line}'], f'log {fake_log()}')
    rc, out, _ = pcm('remove', 'pcm1')
    check(rc == 0 and out == '' and fake_log()[-1] == 'remove pcm1', f'remove {out!r}')
    fake_dm(fail='device-mapper: create ioctl on pcm1 failed: Invalid argument')
    rc, _, err = pcm('create', 'pcm1', dev)
    check(rc == 1 and 'Invalid argument' in err, f'dmsetup failure: {err!r}')


DM_FAIL = ('device-mapper: reload ioctl on pcm1  failed: Invalid argument\n'
           'Command failed.')


def test_create_kernel_reason():
    """A table the kernel refuses: pcmctl says why, from the kernel log
    lines the create made (not an older one), beside dmsetup's message."""
    dev = scratch_file('kdev', 1 << 20)
    old = "6,900,100,-;device-mapper: table: 254:0: pcm: an old reason (-EINVAL)"
    new = ("6,901,200,-;device-mapper: table: 254:1: pcm: superblock: 4 domains, the table "
           "says 1 (-EINVAL)\n SUBSYSTEM=block\n"
           "3,902,201,-;device-mapper: ioctl: error adding target to table")
    fake_dm(fail=DM_FAIL, kmsg=old, **{'kmsg-add': new})
    rc, out, err = pcm('create', 'pcm1', dev)
    want = 'pcmctl: pcm1: the kernel refused the table: superblock: 4 domains, the table says 1'
    check(rc == 1 and not out and err.startswith(want), f'kmsg: {rc} {err!r}')
    check('an old reason' not in err and 'reload ioctl on pcm1 failed: Invalid argument' in err
          and 'SUBSYSTEM' not in err and err.count('\n') == 1, f'kmsg: {err!r}')
    # another target's refusal is not dm-pcm's reason: dmsetup's message alone
    fake_dm(fail=DM_FAIL, kmsg='', **{'kmsg-add': '3,5,6,-;device-mapper: table: 254:2: '
                                      'linear: Device lookup failed (-ENODEV)'})
    rc, _, err = pcm('create', 'pcm1', dev)
    check(rc == 1 and 'refused' not in err and 'Invalid argument' in err, f'other: {err!r}')
    # no /dev/kmsg (another kernel, a container): dmesg's new lines
    saved, pcmctl.KMSG = pcmctl.KMSG, os.path.join(FAKE, 'no-kmsg')
    try:
        fake_dm(fail=DM_FAIL, dmesg='[  1.0] device-mapper: table: 254:0: pcm: stale (-EINVAL)',
                **{'dmesg-add': '[  2.5] device-mapper: table: 254:0: pcm: meta_device: '
                                'too small (-EINVAL)'})
        rc, _, err = pcm('create', 'pcm1', dev)
        check(rc == 1 and 'the kernel refused the table: meta_device: too small (-EINVAL)' in err
              and 'stale' not in err, f'dmesg: {err!r}')
        # no kernel log at all: dmsetup's message, as before
        fake_dm(fail=DM_FAIL, **{'dmesg-denied': ''})
        rc, _, err = pcm('create', 'pcm1', dev)
        check(rc == 1 and 'Invalid argument' in err and 'refused' not in err, f'none: {err!r}')
    finally:
        pcmctl.KMSG = saved
    # a create that works reads nothing into its output
    fake_dm(kmsg='', **{'kmsg-add': '6,7,8,-;device-mapper: table: 254:0: pcm: x (-EINVAL)'})
    rc, out, err = pcm('create', 'pcm1', dev)
    check(rc == 0 and out.startswith('0 ') and not err, f'success: {rc} {out!r} {err!r}')


def test_message():
    fake_dm(reply='preset:none row_size:4096 gap_interval:128 domains:1 randomize:0')
    rc, out, _ = pcm('message', 'pcm0', 'config')
    check(rc == 0 and out.startswith('preset:none row_size:4096'), f'config: {out!r}')
    rc, out, _ = pcm('message', 'pcm0', 'move_gap', '10', '--json')
    check(rc == 0 and json.loads(out)['reply'].startswith('preset:none'), f'json {out!r}')
    # "--" before the device: a message word like "-1" must reach dm-pcm
    # (which refuses it with EINVAL), not be taken for a dmsetup option
    rc, out, _ = pcm('message', 'pcm0', 'set', 'gap_interval', '-1')
    check(fake_log() == ['message -- pcm0 0 config', 'message -- pcm0 0 move_gap 10',
                         'message -- pcm0 0 set gap_interval -1'], f'log {fake_log()}')
    fake_dm(fail='device-mapper: message ioctl on pcm0 failed: Invalid argument')
    rc, _, err = pcm('message', 'pcm0', 'bogus')
    check(rc == 1 and 'message -- pcm0 0 bogus' in err, f'failure: {err!r}')


def test_status():
    words = ('reads:0 writes:256 read_bytes:0 write_bytes:1048576 gap_moves:2 '
             'start_wraps:0 move_errors:0 metadata:ok domains:3 start:0,5,9 gap:7,3,2')
    fake_dm(status=f'0 262120 pcm {words}')
    rc, out, _ = pcm('status', 'pcm0', '--json')
    st = json.loads(out)
    check(rc == 0 and list(st) == [w.split(':')[0] for w in words.split()], f'keys {st}')
    check(st['writes'] == 256 and st['write_bytes'] == 1048576 and st['domains'] == 3,
          f'numbers {st}')
    check(st['start'] == '0,5,9' and st['gap'] == '7,3,2' and st['metadata'] == 'ok',
          f'strings {st}')
    rc, out, _ = pcm('status', 'pcm0')
    lines = out.splitlines()
    col = {len(ln) - len(ln.split()[-1]) for ln in lines}
    check(rc == 0 and len(lines) == 11 and len(col) == 1, f'aligned? {out!r}')
    check(lines[-1].split() == ['gap', '7,3,2'], f'last line {lines[-1]!r}')
    for bad in ('0 8 linear 7:0 0', '0 8 pcm reads:0 bogus', ''):
        fake_dm(status=bad)
        rc, _, err = pcm('status', 'pcm0')
        check(rc == 1 and 'pcm0' in err, f'{bad!r}: {rc} {err!r}')


# ---------------------------------------------------------------------------
# map against the start-gap simulation


def domain_rows(rows, k, d):
    return rows // k + (d < rows % k)


def map_all(length, offset, words, regs, sectors, dev='/dev/fake'):
    """pcmctl map --json over the fake table and registers."""
    table = f'0 {length} pcm {dev} {offset}' + (f' {len(words)} ' + ' '.join(words)
                                               if words else '')
    fake_dm(table=table, registers=' '.join(f'{s}/{g}' for s, g in regs))
    rc, out, err = pcm('map', 'pcm0', '--json', *sectors)
    if not check(rc == 0, f'map {table}: {err!r}'):
        return []
    return [json.loads(line) for line in out.splitlines()]


def check_map_state(rows, k, rs, offset, seed, rng):
    """Move every domain a different number of times, then map every row."""
    words = [f'domains:{k}', f'row_size:{rs * 512}'] + ([f'randomize:{seed}'] if seed else [])
    length = rows * rs - (rs // 2)      # a partial last row still counts
    doms = [Domain(domain_rows(rows, k, d)) for d in range(k)]
    # the permutation: where each row lies before any move (map is identity then)
    sectors = [row * rs for row in range(rows)]
    fresh = map_all(length, offset, words, [(0, dm.n) for dm in doms], sectors)
    perm = [r['row'] // k for r in fresh]
    for dm in doms:
        for _ in range(rng.randrange(3 * (dm.n + 1))):
            dm.move()
    sectors = [row * rs + rng.randrange(min(rs, length - row * rs)) for row in range(rows)]
    got = map_all(length, offset, words, [(dm.start, dm.gap) for dm in doms], sectors)
    bad = 0
    for s, r in zip(sectors, got):
        row, d = s // rs, (s // rs) % k
        want_row = doms[d].where(perm[row] if seed else row // k) * k + d
        want = {'logical_sector': s, 'dev': '/dev/fake', 'row': want_row, 'domain': d,
                'sector': offset + want_row * rs + s % rs}
        bad += r != want
    check(len(got) == rows and bad == 0,
          f'{rows} rows, {words}: {bad} of {len(got)} sectors misplaced')
    return perm


def test_map_simulation():
    rng = random.Random(7)
    for rows, k, rs, offset in ((1, 1, 8, 0), (10, 1, 8, 0), (37, 3, 8, 16),
                                (64, 4, 1, 0), (50, 5, 16, 1000), (200, 7, 2, 8)):
        check_map_state(rows, k, rs, offset, 0, rng)


def test_map_randomized():
    rng = random.Random(11)
    for rows, k, seed in ((40, 1, 99), (77, 3, 7), (200, 5, 31337), (1000, 2, 1)):
        perm = check_map_state(rows, k, 8, 0, seed, rng)
        for d in range(k):
            mine = [perm[row] for row in range(d, rows, k)]
            n = domain_rows(rows, k, d)
            check(sorted(mine) == list(range(n)), f'seed {seed}: not a permutation')
            check(mine != list(range(n)), f'seed {seed}, domain {d}: identity')


def test_map_text_and_errors():
    fake_dm(table='0 80 pcm 4095:1048575 8 1 row_size:4096', registers='0/10')
    rc, out, _ = pcm('map', 'pcm0', '0', '9', '79')
    check(rc == 0 and out.splitlines() == [
        '0 /dev/block/4095:1048575 8 0 0', '9 /dev/block/4095:1048575 17 1 0',
        '79 /dev/block/4095:1048575 87 9 0'], f'text: {out!r}')
    fake_dm(table='0 80 pcm 4095:1048575 8 1 row_size:4096', registers='3/2')
    rc, out, _ = pcm('map', 'pcm0', '0', '--json')
    check(rc == 0 and json.loads(out) == {'logical_sector': 0, 'dev': '/dev/block/4095:1048575',
                                          'sector': 8 + 8 * 4, 'row': 4, 'domain': 0},
          f'json: {out!r}')
    rc, _, err = pcm('map', 'pcm0', '80')
    check(rc == 1 and 'past the end' in err, f'past the end: {err!r}')
    errors = {
        ('0 80 pcm /dev/x 0 1 domains:2', '0/5'): '1 registers for 2 domains',
        ('0 80 pcm /dev/x 0 1 domains:2', '0/5 x'): 'bad registers word',
        ('0 80 linear /dev/x 0', '0/5'): 'not a one-target pcm table',
        ('0 80 pcm /dev/x 0 2 domains:2', '0/5 0/5'): 'not a one-target pcm table',
        ('0 80 pcm /dev/x 0\n80 8 pcm /dev/y 0', '0/5'): 'not a one-target pcm table',
        ('0 80 pcm /dev/x 0 1 bogus:2', '0/5'): 'bogus:2: unknown parameter',
    }
    for (table, regs), reason in errors.items():
        fake_dm(table=table, registers=regs)
        rc, _, err = pcm('map', 'pcm0', '0')
        check(rc == 1 and reason in err, f'{table!r} {regs!r}: want {reason!r}, got {err!r}')


# ---------------------------------------------------------------------------
# the command itself, as a program


def test_cli():
    dev = scratch_file('cli', 128 << 20)
    res = subprocess.run([PCMCTL, 'length', dev, 'preset:none'], text=True,
                         capture_output=True)
    check(res.returncode == 0 and res.stdout == '262120\n', f'length: {res}')
    res = subprocess.run([PCMCTL, 'length', dev, 'domains:0'], text=True,
                         capture_output=True)
    check(res.returncode == 1 and not res.stdout and 'domains:0' in res.stderr,
          f'error: {res}')
    res = subprocess.run([PCMCTL, '-h'], text=True, capture_output=True)
    check(res.returncode == 0 and all(c in res.stdout for c in pcmctl.SUBCOMMANDS),
          f'-h: {res}')


def test_broken_pipe():
    """A reader that stops early (pcmctl params | head): no traceback, no
    'Broken pipe' error, the exit status a shell gives a process SIGPIPE
    ended (141); the lines before the reader stopped went out."""
    for argv in (['params'], ['params', '--json'], ['model', '--ios', '100', 'preset:onyx']):
        r, w = os.pipe()
        os.close(r)     # the reader is gone before pcmctl writes
        try:
            res = subprocess.run([PCMCTL] + argv, stdout=w, stderr=subprocess.PIPE, text=True)
        finally:
            os.close(w)
        check(res.returncode == 141 and res.stderr == '', f'{argv}: {res}')
    res = subprocess.run(['sh', '-c', f'{PCMCTL} params | head -n 2; echo "rc=${{?}}"'],
                         capture_output=True, text=True)
    lines = res.stdout.splitlines()
    check(len(lines) == 3 and lines[0].startswith('name:row_size ') and
          'Traceback' not in res.stderr and 'Broken pipe' not in res.stderr,
          f'params | head: {res}')


def test_fresh_tree_builds_lib():
    """pcmctl in a tree without build/ makes libpcm.so itself."""
    tree = os.path.join(WORK, 'tree')
    # (no tests/host: the library is the tools' own build)
    for part in ('tools/pcmctl', 'tools/pcmlib', 'tools/libpcm.c', 'tools/Makefile', 'tools/shim',
                 'dm-pcm'):
        src, dst = os.path.join(TOP, part), os.path.join(tree, part)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, dst)
    dev = scratch_file('fresh', 1 << 20)
    res = subprocess.run([os.path.join(tree, 'tools', 'pcmctl'), 'length', dev],
                         text=True, capture_output=True)
    check(res.returncode == 0 and int(res.stdout) == model_length(2048, 0, 4096, 1),
          f'fresh tree: {res}')
    check(os.path.exists(os.path.join(tree, 'build', 'host', 'libpcm.so')), 'no library')


def model(*argv):
    rc, out, err = pcm('model', '--json', *argv)
    check(rc == 0, f'model {argv}: {err!r}')
    return json.loads(out) if rc == 0 else {}


def test_model():
    """pcmctl model runs the module's timing and start-gap code: the
    figures follow from the parameters (pcm-timing.c's unit tests check
    the arithmetic; these check that pcmctl feeds it and reads it back)."""
    r = model('--ios', '2000', 'read_ns:1000', 'cmd_ns:500', 'read_mbps:4096')
    check(abs(r['read']['mean_us'] - 2.5) < 1e-9 and r['read']['max_us'] == r['read']['min_us'],
          f"QD1 read = cmd + read + 4 KiB at 4096 MB/s: {r.get('read')}")
    check(abs(r['read']['iops'] - 400000) < 1, f"QD1 IOPS = 1 / 2.5 us: {r['read']['iops']}")
    check(r['write'] is None, 'no writes in randread')
    # a closed loop of 16 over 8 ranks, 100 us programs: 8 / 100 us
    r = model('--rw', 'write', '--iodepth', '16', '--ios', '8000', 'channels:8',
              'write_ns:100000', 'gap_interval:0')
    check(abs(r['write']['iops'] - 80000) / 80000 < 0.01, f"8 ranks: {r['write']['iops']}")
    r = model('--rw', 'write', '--iodepth', '16', '--ios', '8000', 'channels:8',
              'write_ns:100000', 'gap_interval:0', 'tags:4')
    check(abs(r['write']['iops'] - 40000) / 40000 < 0.01 and r['tag_waits'] > 0,
          f"4 tags: {r['write']['iops']}, waits {r['tag_waits']}")
    # Onyx Figure 6's effect: a smaller gap interval costs write bandwidth
    bw = [model('--rw', 'randwrite', '--iodepth', '16', '--ios', '20000', 'channels:8',
                'write_ns:100000', 'read_ns:1000', f'gap_interval:{g}')['write']['iops']
          for g in (1, 4, 128)]
    check(bw[0] < bw[1] < bw[2], f'write IOPS at gap_interval 1, 4, 128: {bw}')
    r = model('--rw', 'randwrite', '--ios', '1280', 'gap_interval:128')
    check(r['gap_moves'] == 10, f"1280 row writes, interval 128: {r['gap_moves']} moves")
    r = model('--rw', 'randrw', '--rwmixread', '70', '--ios', '10000', 'read_ns:1000',
              'write_ns:10000')
    n = r['read']['ios'] + r['write']['ios']
    check(n == 10000 and 0.67 < r['read']['ios'] / n < 0.73, f'70 % reads: {r["read"]["ios"]}')
    r = model('--ios', '100', '--bs', '16k', 'channels:4', 'read_ns:1000', 'read_mbps:400',
              'gap_interval:0')
    check(abs(r['read']['mean_us'] - (1.0 + 10.24)) < 1e-6,
          f"16 KiB over 4 channels: rows in parallel: {r['read']['mean_us']}")
    rc, out, err = pcm('model', '--text-only')
    check(rc == 2, f'unknown option: {rc}')
    rc, out, err = pcm('model', 'read_ns:1000000001')
    check(rc == 1 and 'read_ns' in err and '0..1000000000' in err, f'bad word: {err!r}')
    # any byte count is a request of the model (issue 35: the ReRAM paper's
    # 256 B reads); none is not
    rc, out, err = pcm('model', '--bs', '1000', '--ios', '10')
    check(rc == 0 and 'bs=1000' in out, f'bs 1000: {err!r}')
    rc, out, err = pcm('model', '--bs', '0')
    check(rc == 2 and "--bs: '0' is not a size" in err, f'bad bs: {err!r}')
    rc, out, _ = pcm('model', '--ios', '10', 'read_ns:1000')
    check(rc == 0 and out.splitlines()[-1].startswith('read: IOPS 1000000,'), f'text: {out!r}')


def test_params():
    rc, out, _ = pcm('params', '--json')
    ps = json.loads(out) if rc == 0 else []
    names = [p['name'] for p in ps]
    check(names[:4] == ['row_size', 'gap_interval', 'domains', 'randomize'] and
          'completion' in names and len(names) == len(set(names)), f'names {names}')
    rs = ps[0] if ps else {}
    check(rs == {'name': 'row_size', 'kind': 'pow2', 'min': '512', 'max': '1048576',
                 'unit': 'bytes', 'set': 'no', 'default.none': '4096', 'default.onyx': '4096',
                 'default.pss': '4096', 'default.psd': '4096', 'default.reram': '4096',
                 'default.optane': '4096', 'default.iodrive': '4096'},
          f'row_size {rs}')
    rc, text, _ = pcm('params')
    check(rc == 0 and text.splitlines()[1].startswith('name:gap_interval kind:u64 min:0 '),
          f'text {text[:200]!r}')
    # the .rst's count of optional words: one per parameter, and preset
    import re
    with open(os.path.join(TOP, 'Documentation', 'admin-guide', 'device-mapper',
                           'dm-pcm.rst')) as fh:
        rst = ' '.join(fh.read().split())
    m = re.search(r'<#opt_params>: The number of optional words that follow: 0 to (\d+)', rst)
    check(m and int(m[1]) == len(ps) + 1,
          f'the .rst says 0 to {m and m[1]} optional words; the parser takes {len(ps) + 1} '
          f'({len(ps)} parameters and preset)')


def main():
    pcmctl.build_lib()      # before stdout is captured
    install_fake_dmsetup()
    cases = (
        test_length_matches_model, test_length_readme_example, test_length_meta_device,
        test_length_errors, test_length_block_sizes, test_pcm_length_agrees, test_create_dry_run, test_create_remove, test_message, test_status,
        test_create_kernel_reason, test_map_simulation, test_map_randomized,
        test_map_text_and_errors, test_cli, test_broken_pipe, test_model, test_params,
        test_fresh_tree_builds_lib)
    return tap.run_all(cases, cleanup=lambda: shutil.rmtree(WORK, ignore_errors=True))


if __name__ == '__main__':
    sys.exit(main())
