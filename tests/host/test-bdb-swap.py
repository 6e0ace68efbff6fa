#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""tools/app/bdb-swap (the BerkeleyDB workload of tools/app/bdb.toml) on
the host: make -C tools bdb-swap builds it (-Wall -Wextra -Werror, against
libdb5.3-dev, which tools/install-deps installs); its usage errors exit
2; for hash and B-tree side by side, 2,000 keys loaded in a temporary
directory, 2 threads swap for 2 s with checkpoints every 0.5 s, the JSON
report has every field and they agree with each other, --progress
prints a JSON line a second, --verify passes; after a run killed
(SIGKILL) mid-transaction, the next open's recovery leaves every value
once again (a process crash: the page cache survives it, a power cut is
the VM's business); and a value copied over another (--clobber) fails
--verify, which is exact.  About 7 s (a 2-core host shared with
other VMs; the two runs side by side).  Prints TAP, like tap.h."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'tools'))
from pcmlib import tap  # noqa: E402 (sys.path set first)
from pcmlib.tap import check  # noqa: E402 (sys.path set first)

OUT = os.path.join(TOP, 'build', 'host')
EXE = os.path.join(OUT, 'bdb-swap')
KEYS = 2000
METHODS = ('hash', 'btree')
WORK = tempfile.mkdtemp(prefix='test-bdb-swap.')


def home(method):
    return os.path.join(WORK, method)


def bdb(*args):
    """bdb-swap ARGS: (exit code, stdout, stderr)"""
    res = subprocess.run([EXE] + list(args), capture_output=True, text=True, timeout=60)
    return res.returncode, res.stdout, res.stderr


def report(out):
    try:
        return json.loads(out)
    except ValueError:
        return {}


def test_build():
    res = subprocess.run(['make', '-s', '-C', os.path.join(TOP, 'tools'), 'bdb-swap',
                          f'OUT={OUT}'], capture_output=True, text=True)
    missing = 'db.h' in res.stderr and 'No such file' in res.stderr
    check(res.returncode == 0 and os.access(EXE, os.X_OK),
          f'make -C tools bdb-swap: {res.stderr[-800:]}'
          + (' (libdb5.3-dev: run tools/install-deps)' if missing else ''))


def test_usage():
    for args, why in ((['--load'], '--dir is required'),
                      (['--dir', WORK, '--access', 'queue'], 'hash or btree'),
                      (['--dir', WORK, '--threads', '0'], 'bad --threads'),
                      (['--dir', WORK, '--keys', '1'], 'bad --keys'),
                      (['--dir', WORK, '--value-bytes', '3'], 'bad --value-bytes'),
                      (['--dir', WORK, '--page-bytes', '1000'], 'power of two'),
                      (['--dir', WORK, '--seconds', '0'], 'more than 0'),
                      (['--dir', WORK, 'extra'], "unexpected argument 'extra'")):
        rc, _, err = bdb(*args)
        check(rc == 2 and why in err, f'{args}: want exit 2 and {why!r}, got {rc} {err!r}')
    rc, out, _ = bdb('--help')
    check(rc == 0 and '--checkpoint-s' in out, f'--help: {rc}')
    rc, _, err = bdb('--dir', os.path.join(WORK, 'empty'), '--seconds', '1')
    check(rc == 1 and 'run --load first' in err, f'a run before --load: {rc} {err!r}')


def test_load():
    for m in METHODS:
        rc, out, err = bdb('--dir', home(m), '--load', '--access', m, '--keys', str(KEYS))
        r = report(out)
        check(rc == 0 and r.get('mode') == 'load' and r.get('access') == m and
              r.get('keys') == KEYS and r.get('value_bytes') == 100, f'{m} load: {rc} {out} {err}')
        rc, _, err = bdb('--dir', home(m), '--load', '--access', m, '--keys', str(KEYS))
        check(rc == 1 and 'exists' in err, f'{m}: a second --load refused: {rc} {err!r}')
        rc, _, err = bdb('--dir', home(m), '--keys', '10', '--seconds', '1')
        check(rc == 2 and 'other --access, --keys' in err, f'{m}: --keys 10 refused: {err!r}')


def both(*args):
    """bdb-swap ARGS on both methods' homes at once: {method: Popen}"""
    return {m: subprocess.Popen([EXE, '--dir', home(m)] + list(args), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for m in METHODS}


def verify_both(when):
    for m in METHODS:
        rc, out, err = bdb('--dir', home(m), '--verify')
        r = report(out)
        check(rc == 0 and r.get('ok') is True and r.get('records') == KEYS,
              f'{m} --verify {when}: {rc} {out} {err}')


def test_run():
    procs = both('--threads', '2', '--seconds', '2', '--checkpoint-s', '0.5', '--progress')
    for m, p in procs.items():
        out, err = p.communicate(timeout=60)
        r = report(out)
        check(p.returncode == 0 and r.get('mode') == 'run', f'{m}: {p.returncode} {out} {err}')
        if not r:
            continue
        check((r['access'], r['keys'], r['threads'], r['value_bytes'], r['seconds']) ==
              (m, KEYS, 2, 100, 2), f'{m}: what ran {r}')
        check(1.9 < r['elapsed_s'] < 2.5, f'{m}: elapsed {r["elapsed_s"]}')
        check(r['committed'] > 0 and
              abs(r['ops_per_s'] - r['committed'] / r['elapsed_s']) <= 0.01 * r['ops_per_s'] + 1,
              f'{m}: ops/s {r["ops_per_s"]} of {r["committed"]} in {r["elapsed_s"]} s')
        check(r['aborted'] >= r['deadlocks'] >= 0 and r['cpu_s'] > 0, f'{m}: aborts, CPU {r}')
        lat = r['latency_us']
        check(0 < lat['p50'] <= lat['p99'] <= lat['p99.9'] <= lat['max'] * 1.004 and
              lat['mean'] <= lat['max'], f'{m}: latency {lat}')
        check(len(r['halves_ops_per_s']) == 2 and min(r['halves_ops_per_s']) > 0,
              f'{m}: halves {r["halves_ops_per_s"]}')
        ck = r['checkpoint']
        check(ck['timer'] == 'CLOCK_MONOTONIC' and ck['every_s'] == 0.5 and
              2 <= ck['count'] <= 4 and len(ck['at_s']) == ck['count'] and
              all(0 <= at <= r['elapsed_s'] + 0.01 for at, _ in ck['at_s']), f'{m}: checkpoints {ck}')
        s = r['bdb']
        check(0 < s['log_syncs'] <= s['log_writes'] and
              s['log_bytes'] > r['committed'] * 2 * 100, f'{m}: the log {s}')
        lines = [report(line) for line in err.splitlines()]
        check(len(lines) in (1, 2) and all(x.get('phase') == 'run' and x.get('ops_per_s', 0) > 0
                                           for x in lines), f'{m}: --progress {err!r}')
    verify_both('after 2 s of swaps')


def test_crash():
    procs = both('--threads', '2', '--seconds', '60', '--progress')
    for m, p in procs.items():
        first = p.stderr.readline()  # a second of swaps made
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        check(report(first).get('ops_per_s', 0) > 0 and p.returncode == -signal.SIGKILL,
              f'{m}: killed while swapping: {first!r}, {p.returncode}')
    verify_both('after SIGKILL and recovery')


def test_verify_is_exact():
    for m in METHODS:
        rc, out, err = bdb('--dir', home(m), '--clobber')
        check(rc == 0, f'{m} --clobber: {rc} {err}')
        rc, out, err = bdb('--dir', home(m), '--verify')
        r = report(out)
        check(rc == 1 and r.get('ok') is False and r.get('missing_values') == 1 and
              r.get('duplicate_values') == 1 and r.get('records') == KEYS,
              f'{m}: --verify after --clobber: {rc} {out}')


def main():
    return tap.run_all((test_build, test_usage, test_load, test_run, test_crash,
                           test_verify_is_exact),
                          cleanup=lambda: shutil.rmtree(WORK, ignore_errors=True))


if __name__ == '__main__':
    sys.exit(main())
