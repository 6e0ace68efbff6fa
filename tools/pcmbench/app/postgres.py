# SPDX-License-Identifier: GPL-2.0-only
"""PostgreSQL and pgbench for pcm-bench app: the programs, the cluster
initdb makes once per machine (template()), the server's timers at a
dilation, and pgbench's output read: its summary, its progress lines,
its per-transaction logs and their latency figures."""
import glob
import os
import re
import statistics
import subprocess

from pcmlib.model import percentile

# PostgreSQL's timers (setting: default, unit, PostgreSQL's maximum): they
# run on the guest's clock, which dilation:K does not slow, so on the
# device's clock they would fire K times as often as on the hardware;
# pg_timers() sets each to K x its default.  pgbench's -T and -P are the
# guest's clock too: the report divides their figures by K.
PG_TIMERS = (('wal_writer_delay', 200, 'ms', 10000), ('bgwriter_delay', 200, 'ms', 10000),
             ('checkpoint_timeout', 300, 's', 86400), ('autovacuum_naptime', 60, 's', 2147483))
PG_PAGE = 8192          # PostgreSQL's block: what blks_read and blks_hit count
PCTS = (50, 90, 99, 99.9)   # the latency percentiles the report gives


def pg_bin():
    """The directory of Debian's PostgreSQL programs (the newest), or None."""
    have = sorted(glob.glob('/usr/lib/postgresql/*/bin/pg_ctl'),
                  key=lambda p: [int(x) for x in re.findall(r'\d+', p)])
    return os.path.dirname(have[-1]) if have else None


CACHE = '/var/cache/dm-pcm'   # tools/linux-source's too


def template_path(b=None):
    """Where the cluster initdb makes once per machine is kept: one per
    PostgreSQL major version (the directory above bin/)."""
    b = b or pg_bin()
    return os.path.join(CACHE, f'pgdata-{os.path.basename(os.path.dirname(b))}')


def shared_template(run_dir, path=None):
    """Where the host puts a copy of the cluster for a VM's guest, which
    does not see the host's CACHE (its /var/cache is a tmpfs): beside
    @run_dir, in the results' directory it shares over 9p."""
    return os.path.join(os.path.dirname(run_dir), '.' + os.path.basename(
        path or template_path()))


def template_ok(path):
    return os.path.exists(os.path.join(path, 'pcm-template.ok'))


def initdb(data, b=None, log=None):
    """initdb of an empty directory @data, as user postgres (root runs it
    through runuser; initdb refuses root), trust authentication, the C
    locale; its command line."""
    b = b or pg_bin()
    cmd = (f'{"runuser -u postgres -- " if os.geteuid() == 0 else ""}{b}/initdb -D {data} '
           '-A trust -U postgres -E UTF8 --locale=C')
    subprocess.run(cmd + ' >/dev/null', shell=True, check=True)
    return cmd


def template():
    """The cluster pcm-bench app copies onto each device, made here once
    per machine (tools/install-deps calls this on the host: initdb takes
    a minute of a TCG guest's CPU, two seconds of the host's), as user
    postgres, in CACHE; its path, or None where it cannot be made (not
    root, no PostgreSQL, a read-only CACHE: the guest runs initdb then)."""
    b = pg_bin()
    if not b:
        return None
    path = template_path(b)
    if template_ok(path):
        return path
    if os.geteuid() != 0:
        return None
    tmp = path + '.tmp'
    try:
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run(['rm', '-rf', tmp], check=True)
        os.mkdir(tmp, 0o700)
        subprocess.run(['chown', 'postgres:', tmp], check=True)
        cmd = initdb(tmp, b)
        with open(os.path.join(tmp, 'pcm-template.ok'), 'w', encoding='utf-8') as fh:
            fh.write(cmd.replace(tmp, path) + '\n')
        subprocess.run(['rm', '-rf', path], check=True)
        os.rename(tmp, path)
    except (OSError, subprocess.CalledProcessError):
        return None
    return path


def missing_postgres():
    """Why pgbench cannot run here (a sentence), or None."""
    b = pg_bin()
    if not b:
        return 'PostgreSQL is not installed (tools/install-deps installs postgresql)'
    for prog in ('initdb', 'postgres', 'pgbench'):
        if not os.access(os.path.join(b, prog), os.X_OK):
            return f'{b}/{prog} is missing (tools/install-deps installs postgresql)'
    return None


def parse_pgbench(out):
    """pgbench's summary: tps, latency average (ms), transactions."""
    def num(pat):
        m = re.search(pat, out, re.M)
        return float(m.group(1)) if m else None
    return {'tps': num(r'^tps = ([0-9.]+)'),
            'latency_avg_ms': num(r'^latency average = ([0-9.]+) ms'),
            'transactions': num(r'^number of transactions actually processed: (\d+)'),
            'failed': num(r'^number of failed transactions: (\d+)'),
            'conn_ms': num(r'^initial connection time = ([0-9.]+) ms')}


def parse_progress(out):
    """pgbench -P's lines: [(s since the start, tps over that interval)],
    the guest's clock."""
    return [(float(t), float(v)) for t, v in
            re.findall(r'^progress: ([0-9.]+) s, ([0-9.]+) tps', out, re.M)]


def halves(progress, duration):
    """The mean TPS of a run's first and last half (guest clock): pgbench
    -P 1's intervals, each weighted by its overlap with the half; (first,
    last), None where a half has no interval."""
    h, acc, prev = duration / 2, [[0.0, 0.0], [0.0, 0.0]], 0.0
    for t, v in progress:
        for i, (lo, hi) in enumerate(((0.0, h), (h, float(duration)))):
            ov = max(0.0, min(t, hi) - max(prev, lo))
            acc[i][0] += v * ov
            acc[i][1] += ov
        prev = t
    return tuple(a / b if b else None for a, b in acc)


def read_logs(prefix):
    """The latencies (us) of every transaction in pgbench's per-transaction
    logs PREFIX.PID[.N]: client_id transaction_no time script_no epoch us."""
    lat = []
    for path in glob.glob(prefix + '.*'):
        with open(path, encoding='utf-8') as fh:
            for line in fh:
                f = line.split()
                if len(f) >= 6 and f[2].isdigit():
                    lat.append(int(f[2]))
    return lat


def pg_timers(k):
    """PostgreSQL's timers at K x their defaults (PG_TIMERS), each capped
    at PostgreSQL's maximum: {setting: 'value unit'}; {} at K 1."""
    if k <= 1:
        return {}
    return {name: f'{min(dflt * k, top)}{unit}' for name, dflt, unit, top in PG_TIMERS}


def latency_figures(lat_us):
    """Mean, percentiles and max of per-transaction latencies (us, the
    guest's clock)."""
    s = sorted(lat_us)
    out = {'n': len(s), 'mean_us': statistics.fmean(s) if s else None,
           'max_us': s[-1] if s else None}
    for p in PCTS:
        out[f'p{p:g}_us'] = percentile(s, p)
    return out
