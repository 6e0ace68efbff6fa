# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench app's programs other than pgbench: RocksDB's db_bench and
BerkeleyDB's bdb-swap (tools/app/bdb-swap.c), chosen by the spec's
program key.  Each is a Work: its spec keys (spec()), what it runs on a
device (run(): a load, the file system mounted again, the measured
phases through the Ctx app/guest.py's AppGuest gives it), the parsing of
its output and its figures (figures(): one per phase; rows(): the
report's rows).  AppGuest's generic per-device flow (run_work_device)
calls them;
pgbench keeps its own flow (AppGuest.run_device).

A measured phase (Ctx.measure) runs one command in the memory cgroup
(its page cache bounded), the device's counters reset before it, and
keeps the device's reads and writes, the block layer's, the cgroup's and
the process's own read bytes (/proc/PID/io rchar, read before it is
reaped): the page cache's hit ratio is 1 - device read bytes / rchar.

db_bench (Debian's rocksdb-tools): fillrandom with a synced WAL (--sync=1,
no compression: the database num x (16 + value_size) bytes, num chosen
so that it is data_ratio x memory), then readrandom and readwhilewriting
on it (--use_existing_db=1, --duration s each), a small block cache
(--cache_size) and memtable (--write_buffer_size: memory / 8, so the data
is in SST files, read through the page cache); --histogram=1's
percentiles per benchmark.  Spec keys: benchmarks, value_size, threads,
duration, cache_size.

bdb-swap (Onyx's Figure 5, tools/app/bdb.toml): per access method a load
(not measured, outside the cgroup), then each thread count of the sweep
measured (--warmup, --seconds, --checkpoint-txns), and --verify after
them; each device's best thread count per method is its figure.  Spec
keys: access, keys, value_bytes, cache_mb, threads, checkpoint_txns,
warmup, duration.
"""
import json
import math
import os
import re

from pcmchar import spec as pspec
from .app.model import lifetime
from .app.report import conditions
from .app.results import life_fields
from .app.tables import fmt, human_secs, life_cell, life_lines as pgbench_life_lines
from .app.verdict import FAILED, verdict as pgbench_verdict
from .common import TOP

LINEAR = 'dm-linear'
PCTS = (50, 99, 99.9)


def int_list(field, v, lo, hi):
    vals = v if isinstance(v, list) else [v]
    if not vals:
        raise pspec.SpecError(field, 'an empty list', 'one value or a list of them')
    return [pspec.int_range(lo, hi)(f'{field}[{i}]' if isinstance(v, list) else field, x)
            for i, x in enumerate(vals)]


def str_list(field, v, allowed):
    vals = v if isinstance(v, list) else [v]
    if not vals:
        raise pspec.SpecError(field, 'an empty list', ', '.join(allowed))
    out = [pspec.one_of(allowed)(f'{field}[{i}]' if isinstance(v, list) else field, x)
           for i, x in enumerate(vals)]
    if len(set(out)) != len(out):
        raise pspec.SpecError(field, f'{vals!r}', 'each at most once')
    return out


class Work:
    """A program pcm-bench app runs on each device.  @keys: its spec keys,
    @short_keys: those [short] may set."""

    name = ''
    keys = ()
    short_keys = ()
    unit = 'ops/s'

    def __init__(self, spec, get, field):
        self.spec = spec

    def programs(self):
        """The paths kept mapped for the run (app/probes.py: resident())."""
        return []

    def missing(self):
        """Why it cannot run here (a sentence), or None."""
        return None

    def describe(self):
        return self.name

    def seconds(self):
        return 0

    def run(self, ctx):
        """The load and the measured phases on the mounted file system."""
        raise NotImplementedError

    def parse(self, label, out):
        """A phase's output: {'ops', 'ops_per_s', 'p50_us', 'p99_us',
        'p99.9_us', ...} (guest clock), None values where not found."""
        raise NotImplementedError


# --- RocksDB's db_bench -----------------------------------------------------------

DB_BENCHES = ('fillrandom', 'readrandom', 'readwhilewriting')
DB_KEY_BYTES = 16        # db_bench's default key size
DISTINCT = 1 - math.exp(-1)   # the share of distinct keys among num drawn of num


class DbBench(Work):
    name = 'db_bench'
    keys = ('benchmarks', 'value_size', 'threads', 'duration', 'cache_size')
    short_keys = ('value_size', 'threads', 'duration', 'benchmarks')

    def __init__(self, spec, get, field):
        super().__init__(spec, get, field)
        self.benchmarks = str_list(field('benchmarks'), get('benchmarks', list(DB_BENCHES)),
                                   DB_BENCHES)
        if self.benchmarks[0] != 'fillrandom' or self.benchmarks != sorted(
                self.benchmarks, key=DB_BENCHES.index):
            raise pspec.SpecError(field('benchmarks'), f'{self.benchmarks!r}',
                                  'fillrandom first (it fills the database the others read), '
                                  'then readrandom, readwhilewriting, in that order')
        self.value_size = pspec.int_range(16, 1 << 20)(field('value_size'),
                                                       get('value_size', 1000))
        self.threads = pspec.int_range(1, 64)(field('threads'), get('threads', 1))
        self.duration = pspec.int_range(1, 3600)(field('duration'), get('duration', 10))
        self.cache_size = pspec.parse_size(field('cache_size'), get('cache_size', '1m'))
        if not spec.memory:
            raise pspec.SpecError('memory', 'missing', 'memory = "64m": db_bench runs in a '
                                  'memory cgroup, the database data_ratio x memory')
        if self.cache_size < 64 << 10 or self.cache_size * 4 > spec.memory:
            raise pspec.SpecError(field('cache_size'), f'{self.cache_size >> 10} KiB',
                                  'from 64k to a quarter of memory (the page cache is the rest)')
        self.write_buffer = max(1 << 20, spec.memory // 8)
        # the smallest database data_ratio x memory (no compression): num
        # random keys drawn with replacement are 1 - 1/e = 63.2 % distinct
        self.num = math.ceil(spec.data_ratio * spec.memory / (self.value_size + DB_KEY_BYTES)
                             / DISTINCT)

    def db_bytes(self):
        """The database's size once compacted: its distinct keys."""
        return math.ceil(self.num * DISTINCT * (self.value_size + DB_KEY_BYTES))

    def ramdisk_need(self):
        """MiB: the database three times over (compactions write the new
        files before the old go, and readwhilewriting grows it), and ext4."""
        return 3 * (self.db_bytes() >> 20) + 128

    def programs(self):
        return ['/usr/bin/db_bench']

    def missing(self):
        if not os.access('/usr/bin/db_bench', os.X_OK):
            return 'db_bench is not installed (tools/install-deps installs rocksdb-tools)'
        return None

    def describe(self):
        return (f'db_bench {", ".join(self.benchmarks)}: {self.num:,} keys of {self.value_size} B '
                f'({self.db_bytes() / 1e6:,.0f} MB, {self.db_bytes() / self.spec.memory:.1f}x the '
                f'{self.spec.memory >> 20} MiB memory cgroup), a synced WAL, '
                f'{self.cache_size >> 10} KiB block cache, {self.threads} '
                f'thread{"s" if self.threads > 1 else ""}, '
                f'{self.duration} s per read benchmark')

    def seconds(self):
        return self.duration * (len(self.benchmarks) - 1)

    def command(self, bench, db):
        common = (f'--db={db} --num={self.num} --value_size={self.value_size} '
                  f'--compression_type=none --cache_size={self.cache_size} '
                  f'--write_buffer_size={self.write_buffer} --histogram=1 --sync=1 '
                  f'--threads={self.threads} --seed=1 --stats_interval_seconds=0')
        if bench == 'fillrandom':
            return f'db_bench --benchmarks=fillrandom --use_existing_db=0 {common}'
        # the duration checked at every operation (db_bench's default: every
        # 1,000, which at a few hundred ops/s under TCG overran 2 s by 4)
        return (f'db_bench --benchmarks={bench} --use_existing_db=1 --duration={self.duration} '
                f'--ops_between_duration_checks=1 {common}')

    def run(self, ctx):
        db = f'{ctx.mount}/rocksdb'
        for bench in self.benchmarks:
            ctx.measure(bench, self.command(bench, db))
            if bench == 'fillrandom':
                # the reads start cold: the file system mounted again
                ctx.remount()
        ctx.result['db_du'] = ctx.sh(f'du -sb {db} | cut -f1', record=False)

    def parse(self, label, out):
        return parse_db_bench(out, label)


def parse_db_bench(out, bench=None):
    """db_bench's report of @bench (the first if None): ops/s, operations,
    micros/op and its histogram's percentiles (--histogram=1), us."""
    res = {'ops': None, 'ops_per_s': None, 'us_per_op': None, 'p50_us': None, 'p99_us': None,
           'p99.9_us': None, 'mean_us': None}
    pat = (re.escape(bench) if bench else r'\w+') + \
        r' +: +([0-9.]+) micros/op (\d+) ops/sec(?: ([0-9.]+) seconds (\d+) operations;)?'
    m = re.search(r'^' + pat, out, re.M)
    if not m:
        return res
    res['us_per_op'], res['ops_per_s'] = float(m.group(1)), float(m.group(2))
    if m.group(4):
        res['ops'], res['seconds'] = int(m.group(4)), float(m.group(3))
    rest = out[m.end():]
    nxt = re.search(r'^\w+ +: +[0-9.]+ micros/op', rest, re.M)
    rest = rest[:nxt.start()] if nxt else rest
    p = re.search(r'^Percentiles: P50: ([0-9.]+) P75: [0-9.]+ P99: ([0-9.]+) P99\.9: ([0-9.]+)',
                  rest, re.M)
    if p:
        res['p50_us'], res['p99_us'], res['p99.9_us'] = (float(x) for x in p.groups())
    a = re.search(r'^Count: (\d+) Average: ([0-9.]+)', rest, re.M)
    if a:
        res['mean_us'] = float(a.group(2))
        res['ops'] = res['ops'] or int(a.group(1))
    found = re.search(r'\((\d+) of (\d+) found\)', out[m.start():m.end() + 200])
    if found:
        res['found'] = int(found.group(1))
    return res


# --- BerkeleyDB's swaps (tools/app/bdb-swap.c) -----------------------------------

BDB = os.path.join(TOP, 'build', 'host', 'bdb-swap')
ACCESS = ('hash', 'btree')
# bytes per key on disk with 100 B values (Documentation/benchmarks/log.md:
# 20 MB hash, 12 MB B-tree for 100,000 keys), and the value's share of it
BDB_KEY_BYTES = {'hash': 200, 'btree': 120}


def bdb_bytes(access, keys, value_bytes):
    """The database's size on disk, estimated (B)."""
    return keys * (BDB_KEY_BYTES[access] + value_bytes - 100)


class BdbSwap(Work):
    name = 'bdb-swap'
    keys = ('access', 'keys', 'value_bytes', 'cache_mb', 'threads', 'checkpoint_txns', 'warmup',
            'duration')
    short_keys = ('access', 'keys', 'value_bytes', 'threads', 'warmup', 'duration', 'cache_mb')

    def __init__(self, spec, get, field):
        super().__init__(spec, get, field)
        self.access = str_list(field('access'), get('access', list(ACCESS)), ACCESS)
        self.value_bytes = pspec.int_range(4, 65536)(field('value_bytes'),
                                                     get('value_bytes', 100))
        self.cache_mb = pspec.int_range(1, 4096)(field('cache_mb'), get('cache_mb', 4))
        self.threads = int_list(field('threads'), get('threads', [1]), 1, 64)
        self.checkpoint_txns = pspec.int_range(1, 10 ** 9)(field('checkpoint_txns'),
                                                           get('checkpoint_txns', 20000))
        self.warmup = pspec.int_range(0, 3600)(field('warmup'), get('warmup', 0))
        self.duration = pspec.int_range(1, 3600)(field('duration'), get('duration', 10))
        small = min(self.access, key=lambda a: BDB_KEY_BYTES[a])
        if spec.memory:
            if (self.cache_mb << 20) * 2 > spec.memory:
                raise pspec.SpecError(field('cache_mb'), f'{self.cache_mb}',
                                      'at most half of memory (the page cache is the rest)')
            least = -(-int(spec.data_ratio * spec.memory) //
                      (BDB_KEY_BYTES[small] + self.value_bytes - 100))
        if get('keys', None) is None:
            if not spec.memory:
                raise pspec.SpecError(field('keys'), 'missing', 'a number of keys, or memory '
                                      '(then chosen from data_ratio)')
            self.keys = least
        else:
            self.keys = pspec.int_range(2, 10 ** 8)(field('keys'), get('keys', None))
            if spec.memory and self.keys < least:
                raise pspec.SpecError(field('keys'), f'{self.keys} with memory '
                                      f'{spec.memory >> 20} MiB', f'at least {least} (data_ratio '
                                      f'{spec.data_ratio:g} x memory, {small}), or no keys: '
                                      'chosen from them')

    def db_bytes(self, access=None):
        return max(bdb_bytes(a, self.keys, self.value_bytes) for a in
                   ([access] if access else self.access))

    def ramdisk_need(self):
        """MiB: the database, its log (20,000 commits of ~580 B a file of
        10 MB, two or three kept) and ext4."""
        return 2 * (self.db_bytes() >> 20) + 64 + 128

    def programs(self):
        return [BDB]

    def missing(self):
        if not os.access(BDB, os.X_OK):
            return f'{BDB} is not built (make -C tools bdb-swap, libdb5.3-dev: tools/install-deps)'
        return None

    def describe(self):
        mem = (f', {self.db_bytes() / self.spec.memory:.1f}x the {self.spec.memory >> 20} MiB '
               'memory cgroup' if self.spec.memory else '')
        return (f'bdb-swap {"/".join(self.access)}: {self.keys:,} keys of {self.value_bytes} B '
                f'(~{self.db_bytes() / 1e6:,.0f} MB{mem}), {self.cache_mb} MB cache, threads '
                f'{", ".join(map(str, self.threads))}, {self.duration} s each'
                f'{f" after {self.warmup} s of warm-up" if self.warmup else ""}, a checkpoint '
                f'every {self.checkpoint_txns:,} commits')

    def seconds(self):
        return (self.warmup + self.duration) * len(self.threads) * len(self.access)

    def run(self, ctx):
        for access in self.access:
            home = f'{ctx.mount}/bdb-{access}'
            ctx.sh(f'mkdir -p {home}')
            # the load: not measured, outside the cgroup
            ctx.sh(f'{BDB} --dir {home} --load --access {access} --keys {self.keys} '
                   f'--value-bytes {self.value_bytes} > /dev/null')
            ctx.remount()
            for t in self.threads:
                ctx.measure(f'{access} x{t}', f'{BDB} --dir {home} --threads {t} '
                            f'--cache-mb {self.cache_mb} --warmup {self.warmup} --seconds '
                            f'{self.duration} --checkpoint-txns {self.checkpoint_txns} '
                            '--progress', extra={'access': access, 'threads': t})
            out = ctx.sh(f'{BDB} --dir {home} --verify --cache-mb {self.cache_mb}; true')
            ctx.result.setdefault('verify', {})[access] = parse_json(out)

    def parse(self, label, out):
        return parse_bdb_swap(out)


def parse_json(out):
    """The one JSON object of bdb-swap's stdout, or {}."""
    try:
        start = out.index('{')
        return json.loads(out[start:out.rindex('}') + 1])
    except ValueError:
        return {}


def parse_bdb_swap(out):
    d = parse_json(out)
    lat = d.get('latency_us') or {}
    res = {'ops': d.get('committed'), 'ops_per_s': d.get('ops_per_s'),
           'mean_us': lat.get('mean'), 'p50_us': lat.get('p50'), 'p99_us': lat.get('p99'),
           'p99.9_us': lat.get('p99.9')}
    if d:
        bdb = d.get('bdb') or {}
        res.update(deadlocks=d.get('deadlocks'), checkpoints=(d.get('checkpoint') or {}).get(
            'count'), pages_read=bdb.get('pages_read'), log_syncs=bdb.get('log_syncs'),
            cache_hits=bdb.get('cache_hits'), cache_misses=bdb.get('cache_misses'))
    return res


WORKS = {'db_bench': DbBench, 'bdb-swap': BdbSwap}


# --- the figures and the report ----------------------------------------------------

def phase_figures(ph, k):
    """One measured phase's figures on the device's clock (ops/s x K,
    latencies / K): per operation the device's reads and writes, the
    read and write shares of its modeled time, the page cache's hit
    ratio."""
    res = ph.get('result') or {}
    ops = res.get('ops') or 0
    row = {'ops': ops, 'ops_per_s': res['ops_per_s'] * k if res.get('ops_per_s') else None}
    for p in PCTS:
        v = res.get(f'p{p:g}_us')
        row[f'lat_p{p:g}_us'] = v / k if v is not None else None
    row['lat_mean_us'] = res['mean_us'] / k if res.get('mean_us') is not None else None
    st, b = ph.get('status'), ph.get('blk') or {}
    if st:
        reads, writes, rbytes = st['reads'], st['writes'], st.get('read_bytes')
    else:
        reads, writes = b.get('reads'), b.get('writes')
        rbytes = b['read_sectors'] * 512 if b.get('read_sectors') is not None else None
    if ops and reads is not None:
        row['dev_reads_per_op'], row['dev_writes_per_op'] = reads / ops, writes / ops
    if st and ops:
        rd = st['reads'] * st['read_lat_mean_ns'] / 1000 / k / ops
        wr = st['writes'] * st['write_lat_mean_ns'] / 1000 / k / ops
        row['model_read_us'], row['model_write_us'] = rd, wr
        if rd + wr:
            row['read_share_pct'], row['write_share_pct'] = (rd / (rd + wr) * 100,
                                                             wr / (rd + wr) * 100)
    io = ph.get('proc_io') or {}
    if io.get('rchar') and rbytes is not None:
        row['rchar'] = io['rchar']
        row['pagecache_hit_pct'] = max(0.0, 1 - rbytes / io['rchar']) * 100
    cg = ph.get('cgroup') or {}
    if cg:
        before = cg.get('before') or {}
        row['cgroup_peak'] = cg.get('peak')
        row['memory_max'] = cg.get('max')
        row['cgroup_file'] = cg.get('file')
        if cg.get('events_max') is not None:
            row['cgroup_limit_hits'] = cg['events_max'] - (before.get('events_max') or 0)
        if cg.get('refault_file') is not None:
            row['refaults'] = cg['refault_file'] - (before.get('refault_file') or 0)
        row['oom_kills'] = (cg.get('oom_kill') or 0) - (before.get('oom_kill') or 0)
    if st:
        row['held'], row['late'] = st.get('held'), st.get('late')
    row['rc'] = ph.get('rc')
    for key in ('deadlocks', 'checkpoints', 'log_syncs', 'found', 'threads', 'access'):
        if res.get(key) is not None or ph.get(key) is not None:
            row[key] = res.get(key) if res.get(key) is not None else ph.get(key)
    if row.get('log_syncs') is not None and ops:
        row['log_syncs_per_op'] = row['log_syncs'] / ops
    return row


def verdict(row, lin):
    """app/verdict.py's rule on ops/s: host-bound where the device models no
    time, over 1 % of its completions were late or dm-linear's rate is
    within 20 % of it; failed where no operation completed or the program
    failed."""
    if row.get('rc'):
        return {'verdict': FAILED, 'reason': f'the program exited {row["rc"]} '
                '(logs/dK-*.txt)'}
    v = pgbench_verdict(dict(row, tps=row.get('ops_per_s'), transactions=row.get('ops')),
                        dict(lin, tps=lin.get('ops_per_s')) if lin else None)
    v['reason'] = (v['reason'].replace('no transaction completed', 'no operation completed')
                   .replace("dm-linear's TPS", "dm-linear's ops/s")
                   .replace('time per transaction', 'time per operation')
                   .replace('dK-pgbench.txt, -server.log, -dmesg.txt', 'dK-*.txt, dK-dmesg.txt'))
    return v


def rows(run):
    """One dict per device and benchmark (db_bench: each benchmark; bdb-swap:
    each access method at the device's best thread count, the sweep
    kept in 'sweep')."""
    K = run.get('dilation') or 1
    out = []
    for ri, r in enumerate(run['runs']):
        k = r.get('dilation') or K
        per = []
        for pi, ph in enumerate(r.get('phases') or []):
            row = dict(phase_figures(ph, k), device=r['device'], bench=ph['label'], dilation=k,
                       fsck_rc=r['fsck_rc'], removed=r['removed'], run_i=ri, phase_i=pi)
            row.update(life_fields(ph.get('lifetime')))
            per.append(row)
        if run.get('program') == 'bdb-swap':
            best = {}
            for row in per:
                a = row.get('access') or row['bench'].split()[0]
                sweep = best.setdefault(a, [])
                sweep.append(row)
            for a, sweep in best.items():
                top = max(sweep, key=lambda x: x.get('ops_per_s') or -1)
                out.append(dict(top, bench=a, sweep=[(x.get('threads'), x.get('ops_per_s'))
                                                     for x in sweep]))
        else:
            out += per
        if not per:
            out.append({'device': r['device'], 'bench': '-', 'ops': 0, 'ops_per_s': None,
                        'rc': r.get('error') and 1, 'fsck_rc': r['fsck_rc'],
                        'removed': r['removed'], 'dilation': k})
    lins = {x['bench']: x for x in out if x['device'] == LINEAR}
    for row in out:
        lin = lins.get(row['bench'])
        row.update(verdict(row, lin))
        if lin and lin.get('ops_per_s') and row.get('ops_per_s'):
            row['ops_vs_linear'] = row['ops_per_s'] / lin['ops_per_s']
        if row.get('oom_kills'):
            row['reason'] += (f'; the memory cgroup killed {row["oom_kills"]} process(es) (out '
                              'of memory: a larger memory)')
        reads = row.get('dev_reads_per_op')
        if reads is not None and reads < READS_REACHED and row['verdict'] != 'failed':
            row['reason'] += (f'; reads did not reach the device ({reads:.3g} per operation): '
                              'its read latency is not in this result')
    return out


READS_REACHED = 0.01


TABLE_FIELDS = ('device', 'bench', 'threads', 'ops_per_s', 'ops_vs_linear', 'lat_mean_us',
                'lat_p50_us', 'lat_p99_us', 'lat_p99.9_us', 'dev_reads_per_op',
                'dev_writes_per_op', 'model_read_us', 'model_write_us', 'read_share_pct',
                'write_share_pct', 'rchar', 'pagecache_hit_pct', 'memory_max', 'cgroup_peak',
                'cgroup_file', 'cgroup_limit_hits', 'refaults', 'oom_kills', 'deadlocks',
                'checkpoints', 'log_syncs_per_op', 'found', 'held', 'late', 'ops',
                'life_start_gap_s', 'life_no_start_gap_s', 'wear_max_start_gap',
                'wear_max_no_start_gap', 'wear_passes', 'lifetime_error', 'verdict',
                'reason', 'rc', 'fsck_rc', 'dilation')
SECTIONS = ('## The answer', '## The cache', '## Lifetime', '## Runs', '## Devices',
            '## Commands', '## Spec')


def table_lines(rs, program):
    best = ' (the best thread count)' if program == 'bdb-swap' else ''
    out = [f'| device | benchmark{best} | ops/s | vs dm-linear | p50 | p99 | p99.9 | '
           'device reads / writes per op | modeled time: reads / writes | page cache hits | '
           'lifetime with / without start-gap | verdict |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rs:
        bench = r['bench'] + (f' x{r["threads"]}' if best and r.get('threads') else '')
        io = (f'{r["dev_reads_per_op"]:.3g} / {r["dev_writes_per_op"]:.3g}'
              if r.get('dev_reads_per_op') is not None else '-')
        share = (f'{r["read_share_pct"]:.0f} % / {r["write_share_pct"]:.0f} %'
                 if r.get('read_share_pct') is not None else '-')
        out.append(f'| `{r["device"]}` | {bench} | {fmt(r.get("ops_per_s"))} | '
                   f'{fmt(r.get("ops_vs_linear"), "x")} | {fmt(r.get("lat_p50_us"), " us")} | '
                   f'{fmt(r.get("lat_p99_us"), " us")} | {fmt(r.get("lat_p99.9_us"), " us")} | '
                   f'{io} | {share} | {fmt(r.get("pagecache_hit_pct"), " %")} | '
                   f'{life_cell(r)} | **{r["verdict"]}**: {r["reason"]} |')
    return out


def lifetimes(spec, run, run_dir, rs):
    """The wear of each row's phase on a dm-pcm device (its blktrace,
    app/model.py's lifetime()), into run.json's phase: only the phases
    the rows show (bdb-swap: each access method's best thread count),
    each replay being seconds to minutes of the host's CPU.  True where
    one was added."""
    added = False
    for row in rs:
        if row['device'] == LINEAR or row.get('phase_i') is None:
            continue
        r = run['runs'][row['run_i']]
        ph = r['phases'][row['phase_i']]
        if ph.get('trace') and 'lifetime' not in ph:
            ph['lifetime'] = lifetime(dict(trace=ph['trace'], device=r['device'],
                                           dilation=row['dilation']),
                                      run_dir, spec.wear_passes)
            added = True
    return added


def life_lines(rs):
    """## Lifetime: app/tables.py's life_lines() table per device and
    benchmark."""
    head = pgbench_life_lines({'runs': []})
    out = ['Each row\'s measured phase (blktrace of the device, logs/dK-N-blkparse.txt.xz) '
           'replayed by the timing model, its writes repeated (pcmctl model --trace --repeat '
           'N), open loop at K times the trace\'s speed (the device\'s clock), with and '
           'without the device\'s start-gap: the time until the most-written row reaches the '
           'table\'s endurance at this workload\'s rate (the module\'s pcm_wear_life()); "if '
           'level": were every row worn alike.  The tracing ran during the phase (its CPU is '
           'in the guest\'s).', '',
           '| device | benchmark | passes | with start-gap | its most-written row (writes), '
           'gap moves | without | its most-written row | if level | endurance |',
           '|---|---|---|---|---|---|---|---|---|']
    n = len(out)
    for r in rs:
        life = r.get('_life')
        if not life:
            continue
        if life.get('error'):
            out.append(f'| `{r["device"]}` | {r["bench"]} | - | replay failed: {life["error"]} '
                       '| | | | | |')
            continue
        sg, no = life['start_gap'], life['no_start_gap']
        out.append(f'| `{r["device"]}` | {r["bench"]} | {life["passes"]} | '
                   f'{human_secs(sg["lifetime_s"])} | {sg["max"]}, {sg["gap_moves"]} | '
                   f'{human_secs(no["lifetime_s"])} | {no["max"]} | '
                   f'{human_secs(sg["lifetime_level_s"])} | {sg["endurance"]:,} |')
    if len(out) == n:
        return head
    out += ['', 'Their commands, as run on the host (the trace\'s file in place of '
            '<(xz -dc ...)):', '']
    out += [f'- `{r["device"]}` {r["bench"]}: `{r["_life"]["command"]}`' for r in rs
            if r.get('_life')]
    return out


def mib(v):
    return '-' if v is None else f'{v / (1 << 20):,.1f} MiB'


def cache_lines(rs, memory):
    if not memory:
        return ['No memory cgroup (the spec sets no memory): the program\'s cache was the '
                'guest\'s whole memory.']
    out = [f'The program ran in a memory cgroup (memory.max {mib(memory)}, no swap): its page '
           'cache and its own memory bounded together.  Page cache hits: 1 - the bytes the '
           'device read / the bytes the program read (/proc/PID/io rchar: every read(), '
           'pread() of the process, its threads and its compactions; read-ahead can make the '
           'device read more than was asked: then 0).  Peak: memory.peak '
           'since the cgroup was made; limit reached and refaults: during the phase.', '',
           '| device | benchmark | program read | page cache hits | peak | page cache at the '
           'end | limit reached | refaults | OOM kills |',
           '|---|---|---|---|---|---|---|---|---|']
    for r in rs:
        out.append(f'| `{r["device"]}` | {r["bench"]} | {mib(r.get("rchar"))} | '
                   f'{fmt(r.get("pagecache_hit_pct"), " %")} | {mib(r.get("cgroup_peak"))} | '
                   f'{mib(r.get("cgroup_file"))} | {fmt(r.get("cgroup_limit_hits"))} | '
                   f'{fmt(r.get("refaults"))} | {fmt(r.get("oom_kills"))} |')
    return out


def run_lines(run):
    """Every measured phase: bdb-swap's whole sweep."""
    K = run.get('dilation') or 1
    out = ['Every measured phase, ops/s x K (the device\'s clock); its output in '
           'logs/dK-N.txt.', '', '| device | phase | ops | ops/s | mean | p99 | '
           'device reads / writes | exit |', '|---|---|---|---|---|---|---|---|']
    for r in run['runs']:
        k = r.get('dilation') or K
        for ph in r.get('phases') or []:
            f = phase_figures(ph, k)
            st = ph.get('status') or ph.get('blk') or {}
            out.append(f'| `{r["device"]}` | {ph["label"]} | {fmt(f.get("ops"))} | '
                       f'{fmt(f.get("ops_per_s"))} | {fmt(f.get("lat_mean_us"), " us")} | '
                       f'{fmt(f.get("lat_p99_us"), " us")} | {fmt(st.get("reads"))} / '
                       f'{fmt(st.get("writes"))} | {ph.get("rc")} |')
    return out


PAPER_FIGS = ('iodrive.bdb.hash', 'iodrive.bdb.btree')   # Onyx's Figure 5


def paper_rows(rs):
    """Onyx's Figure 5 from a bdb-swap run's rows: per access method, Onyx's
    best ops/s (its best thread count) over the ioDrive's, judged against
    the paper's ratio (pcmchar.verdict.judge, a rate's 5 %; both devices'
    late completions as the host-bound evidence).  One dict per figure
    whose two devices the run has."""
    from pcmchar import papers, report, verdict as V
    out = []
    for key in PAPER_FIGS:
        fig = papers.BY_KEY[key]
        access = key.rsplit('.', 1)[1]
        mine = [r for r in rs if r['bench'] == access]
        dev = next((r for r in mine if report.has_words(r['device'], fig)), None)
        onyx = next((r for r in mine if report.same_words(r['device'], fig.versus)), None)
        if not dev or not onyx:
            continue
        ratio = (onyx['ops_per_s'] / dev['ops_per_s']
                 if onyx.get('ops_per_s') and dev.get('ops_per_s') else None)
        late = [r.get('late') for r in (dev, onyx)]
        held = [r.get('held') for r in (dev, onyx)]
        timed = None if None in late + held else sum(late) + sum(held)
        v = V.judge('ops', fig.paper(), ratio, fig.kind, late=None if timed is None else
                    sum(late), timed=timed, missing='a device ran no operation')
        out.append({'key': key, 'what': fig.what, 'paper': fig.value, 'measured': ratio,
                    'access': access, 'onyx': onyx['device'], 'onyx_ops': onyx.get('ops_per_s'),
                    'onyx_threads': onyx.get('threads'), 'device': dev['device'],
                    'device_ops': dev.get('ops_per_s'), 'device_threads': dev.get('threads'),
                    'error_paper_pct': v['error_paper_pct'], 'verdict': v['verdict'],
                    'reason': v['reason']})
    return out


def paper_lines(prs):
    if not prs:
        return []
    out = ['', '## The paper', '',
           "Onyx's Figure 5 (Akel et al., HotStorage 2011): BerkeleyDB's operations per "
           'second on Onyx over the ioDrive, each device at the thread count that maximizes '
           'its throughput (the paper: four for Onyx, one for the ioDrive; here the best of '
           'the sweep).  Verdict as every paper row\'s (pcmchar/verdict.py): reproduced within '
           "5 % of the paper's ratio, host-bound with the evidence, else not reproduced.", '',
           '| figure | paper | measured | Onyx: ops/s (threads) | ioDrive: ops/s (threads) | '
           'error | verdict |', '|---|---|---|---|---|---|---|']
    for p in prs:
        err = p['error_paper_pct']
        out.append(f'| {p["what"]} | {p["paper"]:.3g}x | {fmt(p["measured"], "x")} | '
                   f'{fmt(p["onyx_ops"])} ({p["onyx_threads"]}) | {fmt(p["device_ops"])} '
                   f'({p["device_threads"]}) | {"-" if err is None else f"{err:+.1f} %"} | '
                   f'**{p["verdict"]}**: {p["reason"]} |')
    return out


def finish(spec, run_dir, draw_figs=True, **extra):
    """report.md and app-table.csv/.json of a db_bench or bdb-swap run;
    (report path, rows, run, None): no figure drawn."""
    import csv
    from pcmchar import report
    run = report.update_run(run_dir, extra)
    rs = rows(run)
    if lifetimes(spec, run, run_dir, rs):
        report.update_run(run_dir, {'runs': run['runs']})
        rs = rows(run)
    for r in rs:    # the section's, not the table's
        if r['device'] != LINEAR and r.get('phase_i') is not None:
            r['_life'] = run['runs'][r['run_i']]['phases'][r['phase_i']].get('lifetime')
    with open(os.path.join(run_dir, 'app-table.csv'), 'w', newline='', encoding='utf-8') as fh:
        w = csv.DictWriter(fh, fieldnames=TABLE_FIELDS, extrasaction='ignore')
        w.writeheader()
        for r in rs:
            w.writerow({k: '' if r.get(k) is None else r.get(k) for k in TABLE_FIELDS})
    with open(os.path.join(run_dir, 'app-table.json'), 'w', encoding='utf-8') as fh:
        json.dump({'fields': list(TABLE_FIELDS), 'rows': [
            {k: v for k, v in r.items() if not k.startswith('_')} for r in rs]}, fh, indent=1)
        fh.write('\n')
    with open(os.path.join(run_dir, 'spec.toml'), encoding='utf-8') as fh:
        spec_text = fh.read()
    L = [f'# dm-pcm under {run["program"]}: {spec.name}', '',
         f'- date: {run["date"]}; kernel {run["kernel"]}; {run.get("version") or "-"}; '
         f'{run["cpus"]} vCPU{"s" if run["cpus"] > 1 else ""}, '
         f'{"icount (guest time follows instructions)" if run.get("icount") else "no icount"}',
         f'- workload: {run["workload"]}; ext4 (4 KiB blocks) over each device, a '
         f'{run["ramdisk_mib"]} MiB {spec.backing} below',
         f'- wall time: {run.get("host_wall_s", float("nan")):.0f} s on the host (guest clock '
         f'{run["wall_s"]:.0f} s)', f'- every figure below: {conditions(run, "ops/s")}', '',
         '## The answer', '',
         'Per device and benchmark: ops/s (x K) and its ratio to dm-linear\'s, the latency '
         'percentiles (db_bench --histogram=1, bdb-swap\'s per transaction; / K), the device\'s '
         'reads and writes per operation (dm-pcm\'s status, dm-linear\'s /sys/block/dm-N/stat), '
         'the read and write shares of its modeled time (requests x modeled mean), the page '
         'cache\'s hit ratio (## The cache) and a verdict (as pgbench\'s: host-bound where '
         'dm-linear is within 20 % or over 1 % of completions came late).  Every column: '
         '[app-table.csv](app-table.csv), [app-table.json](app-table.json).', '']
    L += table_lines(rs, run['program'])
    if run['program'] == 'bdb-swap':
        L += ['', 'The thread sweep (ops/s x K per thread count; each row above is its best): '
              + '; '.join(f'`{r["device"]}` {r["bench"]}: ' + ', '.join(
                  f'{t}: {fmt(v)}' for t, v in r.get('sweep') or []) for r in rs)]
    if run['program'] == 'bdb-swap':
        prs = paper_rows(rs)
        L += paper_lines(prs)
        with open(os.path.join(run_dir, 'paper-table.json'), 'w', encoding='utf-8') as fh:
            json.dump(prs, fh, indent=1)
            fh.write('\n')
    L += ['', '## The cache', ''] + cache_lines(rs, run.get('memory'))
    L += ['', '## Lifetime', ''] + life_lines(rs)
    L += ['', '## Runs', ''] + run_lines(run)
    L += ['', '## Devices', '']
    for r in run['runs']:
        L.append(f'- `{r["device"]}`: `{r["table"]}`; load {r.get("load_s", 0):.1f} s (guest '
                 f'clock){"; " + r["error"] if r.get("error") else ""}; '
                 + (f'verify: {r["verify"]}; ' if r.get('verify') else '')
                 + f'fsck -fn exit {r["fsck_rc"]} ({" ".join(r["fsck"])}); removed: '
                 f'{"yes" if r["removed"] else "no"}')
    L += ['', '## Commands', '', 'As the guest ran them (each device in turn as `char-dut`):',
          '', '```'] + run['commands'] + ['```', '', '## Spec', '', '```toml',
                                         spec_text.rstrip(), '```', '']
    out = os.path.join(run_dir, 'report.md')
    with open(out, 'w', encoding='utf-8') as fh:
        fh.write('\n'.join(L))
    return out, rs, run, None


def headline(rs, run):
    out = [conditions(run, 'ops/s'),
           f'{"device":18} {"benchmark":18} {"ops/s":>9} {"vs lin":>7} {"p50":>9} {"p99":>9} '
           f'{"rd/wr per op":>13} {"pc hits":>8}  verdict']
    for r in rs:
        io = (f'{r["dev_reads_per_op"]:.3g}/{r["dev_writes_per_op"]:.3g}'
              if r.get('dev_reads_per_op') is not None else '-')
        bench = r['bench'] + (f' x{r["threads"]}' if r.get('threads') else '')
        out.append(f'{r["device"][:18]:18} {bench[:18]:18} {fmt(r.get("ops_per_s")):>9} '
                   f'{fmt(r.get("ops_vs_linear"), "x"):>7} {fmt(r.get("lat_p50_us")):>9} '
                   f'{fmt(r.get("lat_p99_us")):>9} {io:>13} '
                   f'{fmt(r.get("pagecache_hit_pct"), "%"):>8}  {r["verdict"]}: {r["reason"]}')
    if run.get('program') == 'bdb-swap':
        for p in paper_rows(rs):
            out.append(f'{p["what"]}: paper {p["paper"]:.3g}x, measured '
                       f'{fmt(p["measured"], "x")} (Onyx x{p["onyx_threads"]}, the ioDrive '
                       f'x{p["device_threads"]}): {p["verdict"]}: {p["reason"]}')
    return '\n'.join(out)
