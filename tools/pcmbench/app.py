# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench app SPEC: PostgreSQL's pgbench on ext4 over each device of SPEC.

How much of PCM's device-level advantage survives a database's I/O, its
write-ahead log and fsyncs included?  SPEC (TOML; tools/app/pgbench.toml)
names the dm-pcm devices and the workload:

    workload = "tpcb-like"   # pgbench's builtin: tpcb-like, simple-update,
                             # select-only
    memory = "64m"           # memory.max of the server's cgroup: its page
                             # cache and its own memory (absent: no cgroup,
                             # the guest's whole memory caches the database)
    data_ratio = 4           # with memory: the database at least this x
                             # memory (the scale chosen from it if not given)
    shared_buffers = "16m"   # PostgreSQL's cache (default: memory / 4 with a
                             # cgroup, else PostgreSQL's 128 MB)
    # scale = 4              # pgbench -i -s (15.68 MB on disk per unit):
                             # with memory, chosen from data_ratio if absent
    clients = 4              # pgbench -c
    threads = 1              # pgbench -j
    duration = 10            # s of pgbench -T per device (guest clock), measured
    warmup = 0               # s of pgbench -T before it on the same server, not
                             # measured (0: none)
    ramdisk = "1g"           # the brd under every device
    baseline = true          # dm-linear over the same ramdisk, same boot
    devices = ["preset:none", "preset:pss"]
    dilation = 16            # as characterize: every dm-pcm device dilation:K
    calibrate = true         # as characterize: overhead_ns measured first
    [short]                  # what --short runs instead (the VM suite):
    memory = "32m"           # scale, clients, threads, duration, warmup,
    shared_buffers = "4m"    # memory, data_ratio, shared_buffers
    data_ratio = 2
    clients = 2
    duration = 2
    warmup = 0

A database that fits in the guest's page cache is read from memory after
its first pass: the device then serves only writes, and its reads' speed
is not in the result.  With memory set, the server (pg_ctl and every
process it starts) runs in a memory cgroup (cgroup v2, /sys/fs/cgroup/
pcm-app, made afresh for each device, no swap) whose memory.max bounds
its page cache together with its own memory, while the ramdisk under the
device is not bounded; the database is data_ratio times larger.  Each
row then gives the device's reads and writes per transaction, the share
of its modeled time that was reads and writes, and the caches' hit ratio
(PostgreSQL's shared_buffers from pg_stat_database, the page cache's from
the blocks it read from the kernel against the bytes the device served);
## The cache gives the cgroup's limit, peak, page cache, the times it hit
its limit and the file pages read again.  A run in which the device
served fewer than READS_REACHED reads per transaction says in its
verdict that its reads did not reach the device.

In one boot, with the characterization's dilation and calibration
(characterize --help; pcmlib/clock.py's defaults, the command line's
--dilation, --calibrate, --no-calibrate, --overhead-ns over the spec's),
each device in turn (the dm-pcm devices, then dm-linear) gets a fresh
ext4 (4 KiB blocks), a copy of one cluster (initdb's, as user postgres,
made once per machine in /var/cache/dm-pcm by tools/install-deps or by
the host part before the VM boots: a minute of a TCG guest's CPU, two
seconds of the host's; a VM's guest, whose /var/cache is its own, gets
the host's copy beside the run's directory; else the guest makes it,
once per run), a server
started by pg_ctl -w (fsync on, its unix socket in a directory
of the run's, no TCP), pgbench -i, the page cache dropped, the warm-up (pgbench -T warmup,
not measured: the cache filled, the first checkpoints; its progress
kept), the device's counters reset, pgbench -T duration with a
per-transaction log (-l) and its progress each second (-P 1), the
server stopped (its log, with each
connection's, and the kernel's messages kept: logs/dK-server.log,
dK-dmesg.txt), the file system unmounted and checked (fsck -fn) and the
device removed.  PostgreSQL's programs and libraries stay mapped in the
guest for the whole run (resident(): a VM reads them over 9p, and a page
faulted in during the measured run jumps an icount guest's clock); the
major page faults of each measured run are counted (run.json), and so
are its requests to the 9p root, by process (the 9p_client_req
tracepoint, in a trace instance of its own, where 9p is loaded): the
socket, the per-transaction logs and the cluster's copy are in a tmpfs
mounted on /tmp/pcm-app for the run (a VM's /tmp is an overlay on the
host's, over 9p), and libpq's password file is a path there
(PGPASSFILE): without it, every connection looks up the user's home
(getpwuid, /etc/passwd) and ~/.pgpass over 9p, and an icount guest's
clock jumps while it waits (10.4 s of pgbench's second connection in
the run of 6479905).  The report gives each run's first and last half
TPS (pgbench -P 1): whether the rate was steady.
The run's directory (DIR/app/NAME-KERNEL, then .2, .3, ...:
pcmchar/rundir.py) gets run.json, pgbench's output and logs (logs/),
app-table.csv and .json, figures/app-tps.png with its CSV, and report.md:
the one table (device, TPS, latency, where the time went: the device's
modeled read and write time per transaction, from its status counters),
the latency percentiles from the per-transaction logs, the device's own
view (IOPS, the ranks' utilisation, wear, gap moves, ECC corrections),
a verdict per device (device-bound, or host-bound with its evidence;
failed where no transaction completed: that device's run failed, and
pcm-bench exits 1) and the commands.  Every figure is on the device's clock (TPS x K, latencies
/ K: the guest as a host K times faster) and says its clock, dilation
and calibration.  A bad spec (unknown workload, zero clients, no
devices, a device word the module refuses) is refused here, before any
VM boots.  --short runs the spec's [short] settings; --no-figures draws
no PNG (matplotlib under TCG takes minutes).

program = "db_bench" (RocksDB's: fillrandom with a synced WAL, then
readrandom and readwhilewriting on the filled database) or "bdb-swap"
(tools/app/bdb-swap.c, Onyx's Figure 5: tools/app/bdb.toml) runs another
program instead of pgbench (its keys: tools/pcmbench/appwork.py), in the
same per-device flow (run_work_device): the report gives ops/s per
device and benchmark.

How long a run takes on a 2-core host without KVM (the report's first
lines give its own wall time): tools/app/pgbench-select.toml, 3 devices
at scale 9 with 10 + 30 s of pgbench each, 1,785 s in an icount VM
beside one or two other VMs (Documentation/characterization/app-select);
the scale-2 pgbench run, 5 devices with 30 + 60 s each, 7,024 s beside
up to four (../app); --short of a one-device spec in the VM suite,
200 to 460 s (tests/vm/37-app.sh, 40-app-kv.sh).  pgbench.toml at scale
18 and db_bench.toml, bdb.toml at full size have not been run: their
loads (pgbench -i, fillrandom's synced puts) take tens of minutes per
device under icount.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

from pcmlib import clock, vm
from pcmlib.model import percentile
from pcmchar import spec as pspec
from .common import TOP, VM_TIMEOUT
from .options import HOST, ICOUNT, SPEC, RUN_DIR, DILATION, CALIBRATION

NAME = 'app'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, SPEC, RUN_DIR, DILATION, CALIBRATION)   # options.py's groups
ENTRY = os.path.join(TOP, 'tools', 'pcm-bench')


def add_args(p):
    """app's own options."""
    p.add_argument('--short', action='store_true',
                   help='the spec\'s [short] settings (scale, clients, threads, duration): the '
                   'VM suite\'s run')
    p.add_argument('--no-figures', dest='figures', action='store_false',
                   help='draw no PNG (matplotlib under TCG takes minutes)')

WORKLOADS = ('tpcb-like', 'simple-update', 'select-only')
SCALE_MIB = 16          # pgbench: one scale unit is 100,000 accounts, ~16 MB
# what pgbench -i -s 1 leaves on disk, tables and indexes: 15.68 MB a
# scale unit (pg_database_size() at scales 1 to 32, PostgreSQL 15): the
# database's size for data_ratio
SCALE_BYTES = 15_680_000
SHORT_KEYS = ('scale', 'clients', 'threads', 'duration', 'warmup', 'memory', 'data_ratio',
              'shared_buffers', 'wear_passes')
APP_KEYS = {'name', 'workload', 'scale', 'clients', 'threads', 'duration', 'warmup', 'ramdisk',
            'baseline', 'devices', 'dilation', 'calibrate', 'overhead_ns', 'short', 'memory',
            'data_ratio', 'shared_buffers', 'program', 'lifetime', 'wear_passes'}
PROGRAMS = ('pgbench', 'db_bench', 'bdb-swap')   # the spec's program (appwork.py: the others)
# the keys every program's spec has; a program's own are appwork.WORKS[program].keys
COMMON_KEYS = {'name', 'program', 'ramdisk', 'baseline', 'devices', 'dilation', 'calibrate',
               'overhead_ns', 'short', 'memory', 'data_ratio', 'lifetime', 'wear_passes'}
CGROUP = '/sys/fs/cgroup/pcm-app'   # the server's memory cgroup, one per device's run
# PostgreSQL's timers (setting: default, unit, PostgreSQL's maximum): they
# run on the guest's clock, which dilation:K does not slow, so on the
# device's clock they would fire K times as often as on the hardware;
# pg_timers() sets each to K x its default.  pgbench's -T and -P are the
# guest's clock too: the report divides their figures by K.
PG_TIMERS = (('wal_writer_delay', 200, 'ms', 10000), ('bgwriter_delay', 200, 'ms', 10000),
             ('checkpoint_timeout', 300, 's', 86400), ('autovacuum_naptime', 60, 's', 2147483))
PG_PAGE = 8192          # PostgreSQL's block: what blks_read and blks_hit count
# reads reach the device where it serves at least this many per transaction
READS_REACHED = 0.01
# the measured run's writes replayed this many times for its wear
# (pcmctl model --repeat): start-gap spreads a hot row only as its gap
# passes, so one pass of a minute's run shows nothing of it
WEAR_PASSES = 1000
PCTS = (50, 90, 99, 99.9)
LINEAR = 'dm-linear'
WORK = '/tmp/pcm-app'   # the socket's directory and the mount point (the guest's /tmp)
MOUNT = f'{WORK}/mnt'
SOCK = f'{WORK}/sock'
PGPASSFILE = f'{WORK}/pgpass'   # libpq's, absent: no home directory looked up
BT_DIR = f'{WORK}/bt'   # blktrace's tmpfs
TRACEFS = '/sys/kernel/tracing'
P9_EVENT = 'events/9p/9p_client_req'


class AppSpec(pspec.Clocked):
    """The app spec, checked: every error a pspec.SpecError naming the field
    and what it allows.  @short: the [short] table's settings over the
    others.  @tables: each device's words through libpcm (the host, before
    a VM boots)."""

    backing = 'brd'
    runtime = 1.0       # s of fio per direction when calibrating (pcmchar.guest)

    def __init__(self, data, name, tables=False, short=False):
        from . import appwork
        self.tables = tables
        self.program = pspec.one_of(PROGRAMS)('program', data.get('program', 'pgbench'))
        work = appwork.WORKS.get(self.program)
        keys, short_keys = ((APP_KEYS, SHORT_KEYS) if not work else
                            (COMMON_KEYS | set(work.keys),
                             ('memory', 'data_ratio', 'wear_passes') + work.short_keys))
        pspec.unknown('', data, keys)
        self.name = data.get('name', name)
        if not isinstance(self.name, str) or not re.fullmatch(r'[A-Za-z0-9_.-]+', self.name):
            raise pspec.SpecError('name', f'{self.name!r}', 'letters, digits, _ . -')
        if not work:
            self.workload = pspec.one_of(WORKLOADS)('workload',
                                                    data.get('workload', 'tpcb-like'))
        sh = data.get('short', {})
        if not isinstance(sh, dict):
            raise pspec.SpecError('short', 'not a table', '[short] with ' + ', '.join(short_keys))
        pspec.unknown('short.', sh, short_keys)
        self.short = short
        get = (lambda k, d: sh.get(k, data.get(k, d))) if short else data.get
        field = (lambda k: f'short.{k}' if short and k in sh else k)
        self.memory, self.data_ratio, self.shared_buffers = None, None, None
        if get('memory', None) is not None:
            self.memory = pspec.parse_size(field('memory'), get('memory', None))
            if self.memory < 16 << 20:
                raise pspec.SpecError(field('memory'), f'{self.memory >> 20} MiB',
                                      'at least 16m (the server\'s own memory is in it too)')
            self.data_ratio = pspec.number(field('data_ratio'), get('data_ratio', 4), 1, 1000)
        elif get('data_ratio', None) is not None:
            raise pspec.SpecError(field('data_ratio'), 'without memory',
                                  'memory = "128m" with it: the database data_ratio x memory')
        self.work = None
        # every measured run traced for its wear (lifetime()), unless lifetime = false
        self.lifetime = pspec.boolean('lifetime', data.get('lifetime', True))
        self.wear_passes = pspec.int_range(1, 100000)(field('wear_passes'),
                                                      get('wear_passes', WEAR_PASSES))
        if work:
            self.work = work(self, get, field)
            self.ramdisk = pspec.parse_size('ramdisk', data.get('ramdisk', '512m'))
            if self.ramdisk % (1 << 20):
                raise pspec.SpecError('ramdisk', 'not whole MiB', 'sizes like 512m, 1g')
            need = self.work.ramdisk_need()
            if self.ramdisk >> 20 < need:
                raise pspec.SpecError('ramdisk', f'{self.ramdisk >> 20} MiB for '
                                      f'{self.work.db_bytes() / 1e6:,.0f} MB of data',
                                      f'at least {need} MiB')
        else:
            self._pgbench(data, get, field)
        self.baseline = pspec.boolean('baseline', data.get('baseline', True))
        self.dilation = pspec.int_range(1, pspec.DILATION_MAX)('dilation',
                                                               data.get('dilation', 1))
        self.calibrate = pspec.boolean('calibrate', data.get('calibrate', False))
        self.overhead_ns = pspec.overhead('overhead_ns', data.get('overhead_ns'))
        if self.calibrate and self.overhead_ns:
            raise pspec.SpecError('calibrate', 'true with overhead_ns given',
                                  'one of them: measure it, or give it')
        devs = data.get('devices')
        if devs is None or devs == []:
            raise pspec.SpecError('devices', 'missing', 'a list of dm-pcm table words, e.g. '
                                  '["preset:none", "preset:pss"]')
        devs = devs if isinstance(devs, list) else [devs]
        self.pcm = list(dict.fromkeys(pspec.check_words(f'devices[{i}]', d)
                                      for i, d in enumerate(devs)))
        self.check_tables('devices', self.pcm)

    def _pgbench(self, data, get, field):
        """pgbench's keys (program = "pgbench", the default) but workload."""
        if get('shared_buffers', None) is not None:
            self.shared_buffers = pspec.parse_size(field('shared_buffers'),
                                                   get('shared_buffers', None))
            if self.shared_buffers < 1 << 20 or (self.memory and
                                                 self.shared_buffers * 2 > self.memory):
                raise pspec.SpecError(field('shared_buffers'), f'{self.shared_buffers >> 10} KiB',
                                      'from 1m to half of memory (the page cache is the rest)')
        elif self.memory:
            # PostgreSQL's own cache a quarter of the cgroup: its default
            # 128 MB would leave no page cache in a small one
            self.shared_buffers = max(1 << 20, (self.memory // 4) & ~((1 << 20) - 1))
        if self.memory and get('scale', None) is None:
            # the smallest database data_ratio x memory
            self.scale = max(1, -(-int(self.data_ratio * self.memory) // SCALE_BYTES))
            if self.scale > 1000:
                raise pspec.SpecError(field('data_ratio'), f'{self.data_ratio:g} x '
                                      f'{self.memory >> 20} MiB', 'a database of scale 1000 '
                                      'or less')
        else:
            self.scale = pspec.int_range(1, 1000)(field('scale'), get('scale', 1))
        if self.memory and self.scale * SCALE_BYTES < self.data_ratio * self.memory:
            least = -(-int(self.data_ratio * self.memory) // SCALE_BYTES)
            raise pspec.SpecError(field('scale'), f'{self.scale} ({self.scale * SCALE_BYTES / 1e6:.0f}'
                                  f' MB) with memory {self.memory >> 20} MiB',
                                  f'at least {least} (data_ratio {self.data_ratio:g} x memory), '
                                  'or no scale: chosen from them')
        self.clients = pspec.int_range(1, 64)(field('clients'), get('clients', 1))
        self.threads = pspec.int_range(1, 64)(field('threads'), get('threads', 1))
        if self.clients % self.threads:
            raise pspec.SpecError(field('threads'), f'{self.threads} with {self.clients} '
                                  'clients', 'a divisor of clients (pgbench -j)')
        self.duration = pspec.int_range(1, 3600)(field('duration'), get('duration', 10))
        self.warmup = pspec.int_range(0, 3600)(field('warmup'), get('warmup', 0))
        self.ramdisk = pspec.parse_size('ramdisk', data.get('ramdisk', '512m'))
        if self.ramdisk % (1 << 20):
            raise pspec.SpecError('ramdisk', 'not whole MiB', 'sizes like 512m, 1g')
        need = self.scale * SCALE_MIB * 2 + 128
        if self.ramdisk >> 20 < need:
            raise pspec.SpecError('ramdisk', f'{self.ramdisk >> 20} MiB for scale '
                                  f'{self.scale}', f'at least {need} MiB (twice the '
                                  f'{self.scale * SCALE_MIB} MB of tables, and WAL)')

    def devices(self):
        """Every device of the run, in order: the baseline last."""
        return self.pcm + ([LINEAR] if self.baseline else [])

    def seconds(self):
        if self.work:
            return self.work.seconds() * len(self.devices())
        return (self.warmup + self.duration) * len(self.devices())

    def describe(self):
        if self.work:
            return self.work.describe() + (' (--short)' if self.short else '')
        mem = (f', the server in a {self.memory >> 20} MiB memory cgroup (shared_buffers '
               f'{self.shared_buffers >> 20} MiB; the database {self.scale * SCALE_BYTES / 1e6:,.0f}'
               f' MB, {self.scale * SCALE_BYTES / self.memory:.1f}x it)' if self.memory else '')
        return (f'pgbench {self.workload}, scale {self.scale}{mem}, {self.clients} client'
                f'{"s" if self.clients > 1 else ""}, {self.threads} thread'
                f'{"s" if self.threads > 1 else ""}, {self.duration} s'
                f'{f" after a {self.warmup} s warm-up" if self.warmup else ""}'
                f'{" (--short)" if self.short else ""}')


def loads(text, name='app', tables=False, short=False):
    import tomllib
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise pspec.SpecError('(file)', f'not TOML: {e}', 'TOML, see tools/pcmbench/app.py') \
            from e
    return AppSpec(data, name, tables, short)


# --- the part where the module is loaded (the VM, or --native) -----------------

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


def model_qd1(words):
    """The device's own 4 KiB figures at QD1 (pcmctl model, its clock): mean
    read and write latency in us, (None, None) where the model cannot say."""
    out = []
    for rw in ('randread', 'randwrite'):
        try:
            res = subprocess.run([os.path.join(TOP, 'tools', 'pcmctl'), 'model', '--rw', rw,
                                  '--ios', '2000', '--json'] + words.split(),
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 timeout=120, check=True)
            d = json.loads(res.stdout)
            out.append((d['read'] or d['write'])['mean_us'])
        except (OSError, ValueError, KeyError, TypeError, subprocess.SubprocessError):
            out.append(None)
    return tuple(out)


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


def lifetime(r, run_dir, passes):
    """The device's lifetime at this run's rate: its blktrace (the
    measured run's requests, trace_stop()) replayed by pcmctl model
    --trace --repeat @passes, open loop at K times the trace's speed (its
    times are the guest's clock; the device's is K times faster), with
    and without start-gap: the time until the most-written row reaches
    the table's endurance (pcm_wear_life(), the module's), the same if
    every row wore alike, and the most-written row's writes.  {error}
    where the replay failed."""
    import lzma
    import tempfile
    t = r['trace']
    k = r.get('dilation') or 1
    src = os.path.join(run_dir, t['file'])
    with tempfile.NamedTemporaryFile('wb', suffix='.blkparse') as tmp:
        with lzma.open(src) as fh:
            tmp.write(fh.read())
        tmp.flush()
        cmd = [os.path.join(TOP, 'tools', 'pcmctl'), 'model', '--trace', tmp.name,
               '--trace-format', 'blkparse', '--open', '--speed', str(k), '--repeat',
               str(passes), '--size', str(t['sectors'] * 512), '--json'] + r['device'].split()
        if k > 1:
            cmd.append(f'dilation:{k}')
        res = subprocess.run(cmd, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    shown = ' '.join(os.path.relpath(c, TOP) if c.startswith(TOP) else c for c in cmd)
    shown = shown.replace(tmp.name, f'<(xz -dc {t["file"]})')
    if res.returncode:
        return {'error': res.stderr.strip()[-300:] or f'exit {res.returncode}', 'command': shown}
    w = json.loads(res.stdout)['wear']
    out = {'passes': passes, 'command': shown, 'speed': k}
    for key, x in (('start_gap', w['start_gap']), ('no_start_gap', w['no_start_gap'])):
        out[key] = {f: x.get(f) for f in ('lifetime_s', 'lifetime_level_s', 'max', 'mean',
                                          'endurance', 'gap_moves', 'writes')}
    return out


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


def disk_stat(dev):
    """/sys/block/dm-N/stat of @dev (/dev/mapper/NAME): the block layer's
    view, for dm-linear too: ios and ms per reads, writes, flushes."""
    kname = subprocess.run(['dmsetup', 'info', '-c', '--noheadings', '-o', 'blkdevname',
                            os.path.basename(dev)], check=True, text=True,
                           stdout=subprocess.PIPE).stdout.strip()
    with open(f'/sys/block/{kname}/stat', encoding='utf-8') as fh:
        f = [int(x) for x in fh.read().split()]
    f += [0] * (17 - len(f))
    return {'reads': f[0], 'read_sectors': f[2], 'read_ms': f[3], 'writes': f[4],
            'write_sectors': f[6], 'write_ms': f[7], 'busy_ms': f[9], 'flushes': f[14],
            'flush_ms': f[15]}


def resident(paths):
    """Every file of @paths mapped and each of its pages read, the maps
    returned (keep them: while a file is mapped its pages stay in the page
    cache).  A VM's root is 9p with no cache (virtme-ng mounts it without
    cache=): a read() there goes to the host every time and caches
    nothing, and a file nobody has open or mapped loses its pages, so a
    PostgreSQL server started again reads its code from the host page by
    page as it first runs it: in pgbench's measured run too, where each
    fault idles the icount guest and its clock jumps to the next timer
    (-icount sleep=off), pgbench's own deadline among them: a run of
    pgbench -T that completes no transaction."""
    import mmap
    maps = []
    for path in dict.fromkeys(os.path.realpath(p) for p in paths):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            if not size:
                continue
            m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        m.madvise(mmap.MADV_WILLNEED)
        sum(m[off] for off in range(0, size, mmap.PAGESIZE))   # each page read
        maps.append(m)
    return maps


def vmstat_faults():
    """The guest's major page faults so far (/proc/vmstat pgmajfault):
    a page read from a file, in a VM over 9p (its root), while the guest
    idles and its icount clock jumps."""
    with open('/proc/vmstat', encoding='utf-8') as fh:
        for line in fh:
            if line.startswith('pgmajfault '):
                return int(line.split()[1])
    return 0


class P9Trace:
    """Requests to 9p (the 9p_client_req tracepoint) while it is on, in a
    trace instance of its own (the global buffer left alone): in a VM,
    each is a round trip to the host, during which the icount guest idles
    and its clock jumps to its next timer.  Nothing where 9p is not
    loaded (a real host's root): counts() is None."""

    def __init__(self, name='pcm-app-9p'):
        self.dir = None
        if not os.path.isdir(os.path.join(TRACEFS, 'events')):
            subprocess.run(['mount', '-t', 'tracefs', 'nodev', TRACEFS],
                           stderr=subprocess.DEVNULL, check=False)
        if not os.path.isdir(os.path.join(TRACEFS, P9_EVENT)):
            return
        path = os.path.join(TRACEFS, 'instances', name)
        try:
            if not os.path.isdir(path):
                os.mkdir(path)
            self.dir = path
        except OSError:
            pass

    def _write(self, rel, text):
        with open(os.path.join(self.dir, rel), 'w', encoding='utf-8') as fh:
            fh.write(text)

    def start(self):
        if self.dir:
            self._write('trace', '')
            self._write(os.path.join(P9_EVENT, 'enable'), '1')

    def counts(self):
        """The requests since start(), by process name ({} none), the
        tracepoint off again; None where there is no 9p."""
        if not self.dir:
            return None
        self._write(os.path.join(P9_EVENT, 'enable'), '0')
        by = {}
        with open(os.path.join(self.dir, 'trace'), encoding='utf-8', errors='replace') as fh:
            for line in fh:
                if line.startswith('#') or '9p_client_req' not in line:
                    continue
                comm = line.split('[', 1)[0].strip().rsplit('-', 1)[0]
                by[comm] = by.get(comm, 0) + 1
        return by

    def close(self):
        if self.dir:
            try:
                self._write(os.path.join(P9_EVENT, 'enable'), '0')
                os.rmdir(self.dir)
            except OSError:
                pass
            self.dir = None


class AppGuest:
    """One run of an AppSpec: pcmchar.guest.Guest's ramdisk, calibration
    and devices (char-dut), PostgreSQL on each in turn."""

    def __init__(self, spec, run_dir, log=print):
        from pcmchar import guest as cguest
        self.spec, self.dir, self.log = spec, run_dir, log
        self.g = cguest.Guest(spec, run_dir, log)
        self.bin = pg_bin()

    def sh(self, cmd, record=True):
        return self.g.sh(cmd, record)

    def pg(self, prog, args, as_postgres=False, cgroup=False):
        """One PostgreSQL program (as user postgres: initdb, pg_ctl; in
        CGROUP: the server, which pg_ctl starts)."""
        run = 'runuser -u postgres -- ' if as_postgres else ''
        into = f'echo $$ > {CGROUP}/cgroup.procs && exec ' if cgroup else ''
        return self.sh(f'{into}{run}{self.bin}/{prog} {args}')

    def server(self, data, action, cgroup=False):
        spec = self.spec
        opts = (f'-k {SOCK} -c listen_addresses= -c fsync=on -c synchronous_commit=on '
                f'-c max_wal_size={max(64, (spec.ramdisk >> 20) // 4)}MB '
                + (f'-c shared_buffers={spec.shared_buffers >> 10}kB '
                   if spec.shared_buffers else '')
                + ''.join(f'-c {n}={v} ' for n, v in pg_timers(spec.dilation).items()) +
                "-c log_line_prefix='%m [%p] ' -c log_connections=on "
                '-c log_disconnections=on')
        if action == 'start':
            try:
                self.pg('pg_ctl', f'-w -t 600 -D {data} -l {SOCK}/server.log -o "{opts}" '
                        'start', as_postgres=True, cgroup=cgroup)
            except RuntimeError:
                if os.path.exists(f'{SOCK}/server.log'):
                    with open(f'{SOCK}/server.log', encoding='utf-8', errors='replace') as fh:
                        self.log('# the server\'s log: ' + ' | '.join(fh.read().splitlines()[-8:]))
                raise
        else:
            self.pg('pg_ctl', f'-w -t 600 -D {data} -m fast stop', as_postgres=True)

    def cgroup(self):
        """CGROUP made afresh (cgroup v2, the memory controller on), its
        memory.max the spec's memory, no swap: the server started in it
        (pg()) is charged for the page cache of the files it reads and
        writes, so its cache is bounded while the ramdisk under the device
        is not, and reads come from the device once the database is
        larger.  Made for the server that runs the warm-up and the
        measured run, so memory.peak is theirs: pgbench -i's server runs
        outside it (its COPY and index builds, maintenance_work_mem 64
        MB, not measured, would be OOM-killed in a small one)."""
        root = os.path.dirname(CGROUP)
        if not os.path.exists(f'{root}/cgroup.controllers'):   # a VM: none mounted
            self.sh(f'mount -t cgroup2 cgroup2 {root}')
        with open(f'{root}/cgroup.subtree_control', encoding='utf-8') as fh:
            on = fh.read().split()
        if 'memory' not in on:
            self.sh(f'echo +memory > {root}/cgroup.subtree_control')
        self.cgroup_remove()
        self.sh(f'mkdir {CGROUP} && echo {self.spec.memory} > {CGROUP}/memory.max')
        if os.path.exists(f'{CGROUP}/memory.swap.max'):
            self.sh(f'echo 0 > {CGROUP}/memory.swap.max')

    def cgroup_remove(self):
        if os.path.isdir(CGROUP):
            self.sh(f'rmdir {CGROUP}', record=False)

    def cgroup_figures(self):
        """CGROUP's memory now: its limit and peak, the page cache (file)
        and the server's own (anon, shmem: shared_buffers) in bytes, the
        times it reached memory.max (events max) and the file pages read
        again after the cache dropped them (workingset_refault_file)."""
        def kv(name):
            with open(f'{CGROUP}/{name}', encoding='utf-8') as fh:
                return {k: int(v) for k, v in (line.split() for line in fh)}

        def one(name):
            try:
                with open(f'{CGROUP}/{name}', encoding='utf-8') as fh:
                    v = fh.read().strip()
            except OSError:
                return None
            return None if v == 'max' else int(v)
        st, ev = kv('memory.stat'), kv('memory.events')
        return {'max': one('memory.max'), 'peak': one('memory.peak'),
                'current': one('memory.current'), 'file': st.get('file'),
                'anon': st.get('anon'), 'shmem': st.get('shmem'), 'events_max': ev.get('max'),
                'oom_kill': ev.get('oom_kill'),
                'refault_file': st.get('workingset_refault_file')}

    def pg_blocks(self):
        """The database's blocks found in shared_buffers and those read
        from the kernel (its page cache or the device): pg_stat_database's
        blks_hit and blks_read, once two readings agree (a backend adds
        its figures as it exits, just after pgbench has)."""
        q = ('SELECT blks_hit, blks_read FROM pg_stat_database WHERE datname = '
             "'postgres'")
        last = None
        for _ in range(10):
            out = self.sh(f'{self.bin}/psql -h {SOCK} -U postgres -Atc "{q}" postgres',
                          record=False)
            now = tuple(int(x) for x in out.split('|'))
            if now == last:
                break
            last = now
            time.sleep(0.2)
        return {'hit': last[0], 'read': last[1]}

    def trace_start(self, path):
        """blktrace of the device (pcmchar.trace) into a tmpfs of the
        guest's: its writes, replayed by the host (lifetime()), are the
        wear the run leaves."""
        from pcmchar import trace as ctrace
        self.g.commands.append(f'blktrace -D {BT_DIR} -d {path} &   # the measured run\'s '
                               'requests, for its wear')
        return ctrace.start([path], BT_DIR)

    def trace_stop(self, proc, path, dest):
        """blktrace stopped, its events as blkparse's text in @dest (xz);
        {file, dropped, sectors}."""
        from pcmchar import trace as ctrace
        dropped = ctrace.stop(proc)
        kname = ctrace.kernel_name(path)
        self.sh(f'blkparse -i {kname} -D {BT_DIR} 2>/dev/null | xz -c > {dest}', record=False)
        self.sh(f'umount {BT_DIR}', record=False)
        self.g.commands.append(f'blkparse -i {kname} -D {BT_DIR} | xz > '
                               f'logs/{os.path.basename(dest)}')
        return {'file': os.path.join('logs', os.path.basename(dest)), 'dropped': dropped,
                'sectors': int(self.sh(f'blockdev --getsz {path}', record=False))}

    def stop_everything(self):
        """After a failure: the server down (if up), nothing mounted."""
        data = f'{MOUNT}/pgdata'
        if os.path.exists(f'{data}/postmaster.pid'):
            self.sh(f'runuser -u postgres -- {self.bin}/pg_ctl -w -D {data} -m immediate stop '
                    '2>/dev/null; true', record=False)
        self.sh(f'rmdir {CGROUP} 2>/dev/null; umount {MOUNT} 2>/dev/null; true', record=False)

    def run_device(self, dev, k):
        from pcmchar import fiojob
        spec, pcm = self.spec, dev != LINEAR
        name, path = fiojob.DEVICE_NAME, fiojob.DEVICE
        info = self.g.create(dev)
        dmesg_n = int(self.sh('dmesg | wc -l', record=False))
        logs = os.path.join(self.dir, 'logs')
        os.makedirs(logs, exist_ok=True)
        oh = self.g.overhead['write'] if pcm and self.g.overhead else None
        if oh is not None:   # a commit waits for its WAL's write: the write side's
            self.sh(f'dmsetup message {name} 0 set overhead_ns {oh}')
        self.log('#   mkfs.ext4, the cluster copied, the server started')
        self.sh(f'mkfs.ext4 -q -F -b 4096 {path}')
        self.sh(f'mkdir -p {MOUNT} && mount {path} {MOUNT}')
        data = f'{MOUNT}/pgdata'
        t = time.monotonic()
        # the run's cluster (initdb's, run() made or found it), the same
        # on every device, copied: its I/O is not what is measured
        self.sh(f'cp -a {self.cluster} {data} && rm -f {data}/pcm-template.ok && '
                f'chown -R postgres: {data} && chmod 700 {data}')
        t_copy = time.monotonic() - t
        self.server(data, 'start')
        r = {'device': dev, 'k': k, 'dilation': spec.dilation_of(dev) if pcm else None,
             'overhead_ns': oh, 'table': info['table'], 'copy_s': t_copy,
             'duration': spec.duration, 'warmup_duration': spec.warmup}
        try:
            self.log(f'#   pgbench -i -s {spec.scale}')
            t = time.monotonic()
            self.pg('pgbench', f'-h {SOCK} -U postgres -i -q -s {spec.scale} postgres '
                    '>/dev/null 2>&1')
            r['init_s'] = time.monotonic() - t
            # the tables written back, the server stopped, the file system
            # mounted again (its page cache gone: the run starts cold and
            # every block it needs comes from the device; not drop_caches,
            # which would drop PostgreSQL's own programs too, and a VM
            # reads them again over 9p, its clock jumping while it waits)
            self.pg('psql', f'-h {SOCK} -U postgres -q -c CHECKPOINT postgres')
            self.server(data, 'stop')
            self.sh(f'umount {MOUNT} && mount {path} {MOUNT}')
            if spec.memory:
                self.cgroup()
            self.server(data, 'start', cgroup=bool(spec.memory))
            if spec.warmup:
                # not measured: the cache filled from the device, the first
                # checkpoints; the measured run follows on the same server
                self.log(f'#   pgbench -T {spec.warmup} (the warm-up)')
                t = time.monotonic()
                warm = self.pg('pgbench', f'-h {SOCK} -U postgres -b {spec.workload} '
                               f'-c {spec.clients} -j {spec.threads} -T {spec.warmup} -n '
                               '-P 1 postgres 2>&1')
                r['warmup_s'] = time.monotonic() - t
                with open(os.path.join(logs, f'd{k}-warmup.txt'), 'w', encoding='utf-8') as fh:
                    fh.write(warm + '\n')
                r['warmup'] = dict(parse_pgbench(warm), progress=parse_progress(warm))
            if pcm:
                self.sh(f'dmsetup message {name} 0 stats reset')
            before = disk_stat(path)
            cg = self.cgroup_figures() if spec.memory else None
            blocks = self.pg_blocks()
            # the per-transaction logs in the guest's memory while it runs
            # (the run's directory is the host's, over 9p, in a VM)
            prefix = f'{WORK}/d{k}'
            self.sh(f'rm -f {prefix}.*', record=False)
            self.log(f'#   pgbench -T {spec.duration}')
            bt = self.trace_start(path) if pcm and spec.lifetime else None
            faults = vmstat_faults()
            self.p9.start()
            t = time.monotonic()
            out = self.pg('pgbench', f'-h {SOCK} -U postgres -b {spec.workload} '
                          f'-c {spec.clients} -j {spec.threads} -T {spec.duration} -n -l -P 1 '
                          f'--log-prefix={prefix} postgres 2>&1')
            r['run_s'] = time.monotonic() - t
            r['p9_requests'] = self.p9.counts()
            r['major_faults'] = vmstat_faults() - faults
            if bt:
                r['trace'] = self.trace_stop(bt, path, os.path.join(logs, f'd{k}-blkparse.txt.xz'))
            after = disk_stat(path)
            r['blk'] = {key: after[key] - before[key] for key in after}
            now = self.pg_blocks()
            r['pg_blocks'] = {key: now[key] - blocks[key] for key in now}
            if cg:
                now = self.cgroup_figures()
                r['cgroup'] = dict(now, before=cg)
            if pcm:
                from pcmlib import status as pcmstatus
                r['status'] = pcmstatus.parse_dmsetup(
                    self.sh(f'dmsetup status {name}', record=False), name)
                r['ranks'] = json.loads(self.sh(f'tools/pcmctl ranks --json {name}',
                                                record=False))
                r['lateness'] = self.sh(f'dmsetup message {name} 0 lateness', record=False)
        finally:
            self.server(data, 'stop')
            self.cgroup_remove()
            self.sh(f'cp {SOCK}/server.log {logs}/d{k}-server.log; : > {SOCK}/server.log; '
                    f'dmesg | tail -n +{dmesg_n + 1} > {logs}/d{k}-dmesg.txt; true', record=False)
        with open(os.path.join(logs, f'd{k}-pgbench.txt'), 'w', encoding='utf-8') as fh:
            fh.write(out + '\n')
        r['pgbench'] = parse_pgbench(out)
        r['progress'] = parse_progress(out)
        r['latency'] = latency_figures(read_logs(prefix))
        self.sh(f'for f in {prefix}.*; do xz -c "$f" > {logs}/"${{f##*/}}".xz && rm "$f"; done',
                record=False)
        self.sh(f'umount {MOUNT}')
        fsck = subprocess.run(['fsck.ext4', '-fn', path], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        self.g.commands.append(f'fsck.ext4 -fn {path}')
        r['fsck_rc'], r['fsck'] = fsck.returncode, fsck.stdout.strip().splitlines()[-1:]
        self.g.cleanup()     # the device removed
        r['removed'] = not os.path.exists(path)
        return r

    def run(self):
        start = time.monotonic()
        os.makedirs(WORK, exist_ok=True)
        # WORK a tmpfs of its own: a VM's /tmp is an overlay on the host's
        # over 9p, and a lookup there (the socket's path, a log) can go to
        # the host while the icount guest idles and its clock jumps
        self.sh(f'umount {MOUNT} {WORK} 2>/dev/null; true', record=False)
        self.sh(f'mount -t tmpfs -o mode=755 pcm-app {WORK}')
        self.sh(f'mkdir -p {SOCK} {MOUNT} && chown postgres: {SOCK} && chmod 755 {WORK}')
        # libpq looks up the user's home (getpwuid: /etc/passwd, a VM's
        # over 9p) and its .pgpass at every connection unless PGPASSFILE
        # names one: a path in WORK, absent (trust: no password asked)
        os.environ['PGPASSFILE'] = PGPASSFILE
        self.g.commands.append(f'export PGPASSFILE={PGPASSFILE}')
        self.p9 = P9Trace()
        try:
            return self._run_work(start) if self.spec.work else self._run(start)
        finally:
            self.p9.close()
            self.sh(f'cd / && umount {MOUNT} 2>/dev/null; umount {WORK} || '
                    f'echo "# {WORK} left mounted" >&2; true', record=False)

    def _run(self, start):
        spec = self.spec
        runs = []
        # PostgreSQL's programs and libraries kept in the page cache for the
        # whole run (resident(): a VM's root is 9p without a cache, so a
        # server started again faults its code in from the host, during
        # the measured run too, and each fault idles the icount guest,
        # whose clock jumps to its next timer, pgbench's deadline among them)
        b = self.bin
        progs = [f'{b}/{p}' for p in ('postgres', 'pg_ctl', 'pgbench', 'psql')]
        libs = self.sh(f'ldd {" ".join(progs)} | awk \'$3 ~ /^\\// {{print $3}}\' | sort -u',
                       record=False).split()
        self.resident = resident(progs + libs + sorted(glob.glob(f'{b}/../lib/*.so')))
        self.log(f'# resident: {len(self.resident)} files of PostgreSQL\'s, '
                 f'{sum(len(m) for m in self.resident) >> 20} MiB, mapped for the run')
        made = template_path(self.bin)
        if not template_ok(made):     # a VM: the host's copy beside the run's directory
            made = shared_template(self.dir, made)
        self.cluster = f'{WORK}/cluster'
        self.sh(f'rm -rf {self.cluster}', record=False)
        copied = False
        if template_ok(made):
            # into the guest's memory once: a VM reads the host's files
            # over 9p, slowly, a file at a time
            try:
                self.sh(f'cp -a {made} {self.cluster}', record=False)
                self.g.commands.append(f'# {made}: ' + open(os.path.join(
                    made, 'pcm-template.ok'), encoding='utf-8').read().strip())
                self.g.commands.append(f'cp -a {made} {self.cluster}')
                self.log(f'# the cluster: {made} (initdb\'s, made once on this machine: '
                         'tools/install-deps)')
                copied = True
            except RuntimeError as e:
                self.log(f'# the cluster {made} not copied ({e}): initdb here')
                self.sh(f'rm -rf {self.cluster}', record=False)
        if not copied:
            self.sh(f'mkdir -m 700 {self.cluster} && chown postgres: {self.cluster}')
            t = time.monotonic()
            self.g.commands.append(initdb(self.cluster, self.bin))
            self.log(f'# initdb here: {time.monotonic() - t:.0f} s (tools/install-deps makes '
                     f'it once per machine in {CACHE} where it can)')
        try:
            self.g.make_backing()
            self.g.calibrate()
            for k, dev in enumerate(spec.devices()):
                self.log(f'# {k + 1}/{len(spec.devices())}: {dev}: {spec.describe()}')
                runs.append(self.run_device(dev, k))
                r = runs[-1]
                done = (f'{r["pgbench"]["tps"]} tps (guest clock)' if r['pgbench']['transactions']
                        else 'FAILED: no transaction completed')
                p9 = r.get('p9_requests')
                self.log(f'# {dev}: {done}, initial connection time '
                         f'{r["pgbench"].get("conn_ms")} ms, {r.get("major_faults")} major page '
                         f'faults and {p9_text(p9) if p9 is not None else "no count of"} '
                         f'requests to 9p in the run, fsck exit {r["fsck_rc"]}, removed '
                         f'{r["removed"]}')
        except BaseException:
            try:
                self.stop_everything()
                self.g.cleanup()
                if self.g.backing:
                    self.g.remove_backing()
            except RuntimeError as e:
                self.log(f'# cleanup after the failure: {e}')
            raise
        self.g.remove_backing()
        return {'kernel': os.uname().release, 'cpus': os.cpu_count(),
                'postgres': self.sh(f'{self.bin}/postgres --version', record=False),
                'pgbench': self.sh(f'{self.bin}/pgbench --version', record=False),
                'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                'backing': self.g.backing, 'ramdisk_mib': spec.ramdisk >> 20,
                'memory': spec.memory, 'shared_buffers': spec.shared_buffers,
                'pg_timers': pg_timers(spec.dilation),
                'scale': spec.scale,
                'workload': spec.describe(), 'runs': runs, 'commands': self.g.commands,
                'wall_s': time.monotonic() - start, 'dilation': spec.dilation,
                'calibration': self.g.calibration}


    # --- db_bench and bdb-swap (appwork.py): the generic per-device flow ---------

    def _run_work(self, start):
        spec, work = self.spec, self.spec.work
        progs = work.programs()
        libs = self.sh(f'ldd {" ".join(progs)} | awk \'$3 ~ /^\\// {{print $3}}\'| sort -u',
                       record=False).split()
        self.resident = resident(progs + libs)
        self.log(f'# resident: {len(self.resident)} files of {work.name}\'s, '
                 f'{sum(len(m) for m in self.resident) >> 20} MiB, mapped for the run')
        runs = []
        try:
            self.g.make_backing()
            self.g.calibrate()
            for k, dev in enumerate(spec.devices()):
                self.log(f'# {k + 1}/{len(spec.devices())}: {dev}: {spec.describe()}')
                r = self.run_work_device(dev, k)
                runs.append(r)
                done = '; '.join(f'{p["label"]}: {(p.get("result") or {}).get("ops_per_s")} '
                                 f'ops/s (exit {p["rc"]})' for p in r['phases'])
                self.log(f'# {dev}: {done or r.get("error")}; fsck exit {r["fsck_rc"]}, '
                         f'removed {r["removed"]}')
        except BaseException:
            try:
                self.sh(f'rmdir {CGROUP} 2>/dev/null; umount {MOUNT} 2>/dev/null; true',
                        record=False)
                self.g.cleanup()
                if self.g.backing:
                    self.g.remove_backing()
            except RuntimeError as e:
                self.log(f'# cleanup after the failure: {e}')
            raise
        self.g.remove_backing()
        ver = (self.sh('db_bench --version 2>&1 | head -1; true', record=False)
               if work.name == 'db_bench' else
               self.sh("grep -m1 DB_VERSION_STRING /usr/include/db.h | cut -d'\"' -f2; true",
                       record=False))
        return {'kernel': os.uname().release, 'cpus': os.cpu_count(), 'program': work.name,
                'version': ver, 'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                'backing': self.g.backing, 'ramdisk_mib': spec.ramdisk >> 20,
                'memory': spec.memory, 'workload': spec.describe(), 'runs': runs,
                'commands': self.g.commands, 'wall_s': time.monotonic() - start,
                'dilation': spec.dilation, 'calibration': self.g.calibration}

    def run_work_device(self, dev, k):
        """One device: created, mkfs.ext4, mounted; the program's load and
        measured phases (appwork's Work.run, through a WorkCtx); fsck -fn,
        the device removed.  The dict run.json keeps of it."""
        from pcmchar import fiojob
        spec, pcm = self.spec, dev != LINEAR
        name, path = fiojob.DEVICE_NAME, fiojob.DEVICE
        info = self.g.create(dev)
        dmesg_n = int(self.sh('dmesg | wc -l', record=False))
        logs = os.path.join(self.dir, 'logs')
        os.makedirs(logs, exist_ok=True)
        oh = self.g.overhead['write'] if pcm and self.g.overhead else None
        if oh is not None:   # a synced write waits for its write: the write side's
            self.sh(f'dmsetup message {name} 0 set overhead_ns {oh}')
        self.sh(f'mkfs.ext4 -q -F -b 4096 {path}')
        self.sh(f'mkdir -p {MOUNT} && mount {path} {MOUNT}')
        r = {'device': dev, 'k': k, 'dilation': spec.dilation_of(dev) if pcm else None,
             'overhead_ns': oh, 'table': info['table'], 'phases': []}
        ctx = WorkCtx(self, r, dev, k, logs)
        t = time.monotonic()
        try:
            spec.work.run(ctx)
        except RuntimeError as e:
            r['error'] = str(e)[:2000]
            self.log(f'#   failed: {r["error"][:400]}')
        finally:
            r['load_s'] = ctx.load_s if ctx.load_s is not None else time.monotonic() - t
            self.sh(f'cd /; rmdir {CGROUP} 2>/dev/null; '
                    f'dmesg | tail -n +{dmesg_n + 1} > {logs}/d{k}-dmesg.txt; true',
                    record=False)
        self.sh(f'umount {MOUNT}')
        fsck = subprocess.run(['fsck.ext4', '-fn', path], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        self.g.commands.append(f'fsck.ext4 -fn {path}')
        r['fsck_rc'], r['fsck'] = fsck.returncode, fsck.stdout.strip().splitlines()[-1:]
        self.g.cleanup()     # the device removed
        r['removed'] = not os.path.exists(path)
        return r


def proc_io(pid):
    """/proc/PID/io as a dict (rchar: the bytes its read()s returned, its
    threads' included; read_bytes: those the block layer fetched)."""
    try:
        with open(f'/proc/{pid}/io', encoding='utf-8') as fh:
            return {k: int(v) for k, v in (line.split(': ') for line in fh if ': ' in line)}
    except (OSError, ValueError):
        return None


class WorkCtx:
    """What a Work (appwork.py) runs on a device through: sh(), remount()
    (the page cache of the file system dropped), measure() (one measured
    phase in the memory cgroup); its results in @result (run.json's
    device entry)."""

    def __init__(self, guest, result, dev, k, logs):
        self.g, self.result, self.dev, self.k, self.logs = guest, result, dev, k, logs
        self.mount, self.pcm = MOUNT, dev != LINEAR
        self.cgroup_made, self.load_s, self.t0 = False, None, time.monotonic()

    def sh(self, cmd, record=True):
        return self.g.sh(cmd, record)

    def remount(self):
        from pcmchar import fiojob
        self.sh(f'umount {MOUNT} && mount {fiojob.DEVICE} {MOUNT}')

    def measure(self, label, cmd, extra=None):
        """@cmd in CGROUP (made at the first phase), the device's counters
        reset before it; its figures kept as a phase of @result."""
        from pcmchar import fiojob
        g, spec, name = self.g, self.g.spec, fiojob.DEVICE_NAME
        if self.load_s is None:
            self.load_s = time.monotonic() - self.t0
        if spec.memory and not self.cgroup_made:
            g.cgroup()
            self.cgroup_made = True
        n = len(self.result['phases'])
        g.log(f'#   {label}: {cmd}')
        if self.pcm:
            g.sh(f'dmsetup message {name} 0 stats reset')
        before = disk_stat(fiojob.DEVICE)
        cg = g.cgroup_figures() if spec.memory else None
        into = f'echo $$ > {CGROUP}/cgroup.procs && exec ' if spec.memory else 'exec '
        g.g.commands.append(f'{into}{cmd}')
        out_p, err_p = f'{WORK}/d{self.k}-{n}.out', f'{WORK}/d{self.k}-{n}.err'
        faults = vmstat_faults()
        # blktrace of the phase, for its wear (appwork.finish(): lifetime())
        bt = g.trace_start(fiojob.DEVICE) if self.pcm and spec.lifetime else None
        g.p9.start()
        t = time.monotonic()
        with open(out_p, 'w', encoding='utf-8') as out, open(err_p, 'w', encoding='utf-8') as err:
            p = subprocess.Popen(['sh', '-c', into + cmd], cwd=MOUNT, stdout=out, stderr=err)
            # the exited process's /proc/PID/io, read before it is reaped
            os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
            io = proc_io(p.pid)
            rc = p.wait()
        ph = {'label': label, 'cmd': cmd, 'rc': rc, 'run_s': time.monotonic() - t,
              'p9_requests': g.p9.counts(), 'major_faults': vmstat_faults() - faults,
              'proc_io': io}
        ph.update(extra or {})
        if bt:
            ph['trace'] = g.trace_stop(bt, fiojob.DEVICE, os.path.join(
                self.logs, f'd{self.k}-{n}-blkparse.txt.xz'))
        after = disk_stat(fiojob.DEVICE)
        ph['blk'] = {key: after[key] - before[key] for key in after}
        if cg:
            ph['cgroup'] = dict(g.cgroup_figures(), before=cg)
        if self.pcm:
            from pcmlib import status as pcmstatus
            ph['status'] = pcmstatus.parse_dmsetup(g.sh(f'dmsetup status {name}', record=False),
                                                   name)
        with open(out_p, encoding='utf-8', errors='replace') as fh:
            text = fh.read()
        g.sh(f'cp {out_p} {self.logs}/d{self.k}-{n}.txt; cp {err_p} {self.logs}/d{self.k}-{n}'
             f'.err; rm -f {out_p} {err_p}', record=False)
        ph['result'] = spec.work.parse(label, text)
        self.result['phases'].append(ph)
        g.log(f'#   {label}: {ph["result"].get("ops_per_s")} ops/s (guest clock), exit {rc}, '
              f'{ph["run_s"]:.1f} s, device reads {(ph.get("status") or ph["blk"])["reads"]}')
        return ph


# --- the figures of a run: on the device's clock --------------------------------

def device_time(r):
    """Where a device's time went, per transaction, us on the device's
    clock: the modeled read and write time (status: reads x the modeled
    read mean, writes x the write mean) and the block layer's (diskstats:
    the time reads, writes and flushes were in flight, dm-linear too)."""
    k = r.get('dilation') or 1
    n = (r['pgbench'].get('transactions') or 0)
    out = {}
    st = r.get('status')
    if st and n:
        out['model_read_us'] = st['reads'] * st['read_lat_mean_ns'] / 1000 / k / n
        out['model_write_us'] = st['writes'] * st['write_lat_mean_ns'] / 1000 / k / n
    b = r.get('blk')
    if b and n:
        for side in ('read', 'write', 'flush'):
            out[f'blk_{side}_us'] = b[f'{side}_ms'] * 1000 / k / n
    return out


def cache_figures(r):
    """Whether reads reached the device, per transaction: the device's
    reads and writes (dm-pcm's status counters, dm-linear's
    /sys/block/dm-N/stat), the share of its modeled time that was reads
    and writes, and the caches' hit ratios: shared_buffers' (PostgreSQL's
    blks_hit over blks_hit + blks_read), the page cache's (the blocks
    PostgreSQL read from the kernel that the device did not serve: 1 -
    device read bytes / (blks_read x 8 KiB), at least 0) and the two
    together (1 - device read bytes / every block PostgreSQL asked
    for).  Read-ahead can make the device read more than was asked:
    then 0.  The memory cgroup's figures where the spec had one."""
    n = r['pgbench'].get('transactions') or 0
    out = {}
    st, b = r.get('status'), r.get('blk') or {}
    if st:
        reads, writes, rbytes = st['reads'], st['writes'], st.get('read_bytes')
    else:
        reads, writes = b.get('reads'), b.get('writes')
        rbytes = b['read_sectors'] * 512 if b.get('read_sectors') is not None else None
    if n and reads is not None:
        out['dev_reads_per_txn'] = reads / n
        out['dev_writes_per_txn'] = writes / n
    t = device_time(r)
    if t.get('model_read_us') is not None:
        tot = t['model_read_us'] + t['model_write_us']
        out['read_share_pct'] = t['model_read_us'] / tot * 100 if tot else None
        out['write_share_pct'] = t['model_write_us'] / tot * 100 if tot else None
    pb = r.get('pg_blocks')
    if pb and rbytes is not None:
        asked = pb['hit'] + pb['read']
        if asked:
            out['buffer_hit_pct'] = pb['hit'] / asked * 100
            out['cache_hit_pct'] = max(0.0, 1 - rbytes / (asked * PG_PAGE)) * 100
        if pb['read']:
            out['pagecache_hit_pct'] = max(0.0, 1 - rbytes / (pb['read'] * PG_PAGE)) * 100
    cg = r.get('cgroup')
    if cg:
        out['memory_max'] = cg.get('max')
        out['cgroup_peak'] = cg.get('peak')
        out['cgroup_file'] = cg.get('file')
        before = cg.get('before') or {}
        if cg.get('events_max') is not None:
            out['cgroup_limit_hits'] = cg['events_max'] - (before.get('events_max') or 0)
        if cg.get('refault_file') is not None:
            out['refaults'] = cg['refault_file'] - (before.get('refault_file') or 0)
        out['oom_kills'] = cg.get('oom_kill')
    if 'dev_reads_per_txn' in out:
        out['reads_reached'] = out['dev_reads_per_txn'] >= READS_REACHED
    return out


def reads_note(row):
    """What a verdict says of a run whose reads did not reach the
    device, or whose cgroup killed a process; '' where neither."""
    oom = (f'; the memory cgroup killed {row["oom_kills"]} of the server\'s processes (out of '
           'memory: a smaller shared_buffers or a larger memory)' if row.get('oom_kills')
           else '')
    if row.get('reads_reached') is not False:
        return oom
    hit = row.get('cache_hit_pct')
    return (f'; reads did not reach the device ({row["dev_reads_per_txn"]:.3g} per '
            f'transaction{f", caches {hit:.1f} % hits" if hit is not None else ""}): its '
            'read latency is not in this result, only its writes' + oom)


FAILED = 'failed'          # no transaction completed: the device's run failed
NO_VERDICT = 'no verdict'  # dm-linear's run failed: nothing to compare it with


def verdict(r, lin):
    """device-bound or host-bound, with the evidence: the host (the guest's
    CPU, PostgreSQL itself) sets the TPS where dm-linear's is within
    verdict.LINEAR_NEAR of the device's, or the device completed more than
    verdict.LATE_SHARE of its timed requests late.  A run in which no
    transaction completed (pgbench's count 0, or none parsed) is FAILED,
    no verdict: nothing was measured; where dm-linear's run failed, the
    others get NO_VERDICT."""
    from pcmchar import verdict as V
    if not r.get('transactions'):
        return {'verdict': FAILED, 'reason': 'no transaction completed in the run: no '
                'figure, no verdict (logs/dK-pgbench.txt, -server.log, -dmesg.txt)'}
    if r['device'] == LINEAR:
        return {'verdict': 'baseline', 'reason': 'the ramdisk through dm-linear'}
    held, late = r.get('held') or 0, r.get('late') or 0
    if not held:
        return {'verdict': V.HOST_BOUND, 'reason': 'the device held no completion (it models '
                'no time)'}
    if late > V.LATE_SHARE * held:
        return {'verdict': V.HOST_BOUND, 'reason': f'{late} of {held} completions late'}
    tps, base = r['tps'], lin['tps'] if lin else None
    if base and tps and tps >= base * (1 - V.LINEAR_NEAR):
        return {'verdict': V.HOST_BOUND, 'reason': f'dm-linear\'s TPS within '
                f'{V.LINEAR_NEAR * 100:g} % of it or below ({base / tps:.2f}x)'}
    if lin and not base:
        return {'verdict': NO_VERDICT, 'reason': 'dm-linear\'s run failed: nothing to compare'}
    why = f'{base / tps:.2f}x dm-linear\'s time per transaction' if base and tps else \
        'no dm-linear to compare'
    return {'verdict': 'device-bound', 'reason': why}


def rows(run):
    """One dict per device: the figures on the device's clock (TPS x K,
    latencies / K; dm-linear at the run's K: the same host K times faster),
    the device's view, the verdict."""
    K = run.get('dilation') or 1
    out = []
    for r in run['runs']:
        pcm = r['device'] != LINEAR
        k = r.get('dilation') or K
        r = dict(r, dilation=k)
        pg, lat = r['pgbench'], r['latency']
        row = {'device': r['device'], 'dilation': k,
               'tps': pg['tps'] * k if pg.get('tps') else None,
               'transactions': pg.get('transactions'),
               'lat_mean_us': lat['mean_us'] / k if lat.get('mean_us') else None,
               'lat_max_us': lat['max_us'] / k if lat.get('max_us') else None,
               'fsck_rc': r['fsck_rc'], 'removed': r['removed'], 'overhead_ns': r['overhead_ns']}
        for p in PCTS:
            v = lat.get(f'p{p:g}_us')
            row[f'lat_p{p:g}_us'] = v / k if v is not None else None
        row.update(device_time(r))
        row.update(cache_figures(r))
        row.update(life_fields(r.get('lifetime')))
        prog = r.get('progress') or []
        first, last = halves(prog, r.get('duration') or (prog[-1][0] if prog else 0))
        row['tps_first_half'] = first * k if first is not None else None
        row['tps_last_half'] = last * k if last is not None else None
        row['last_vs_first'] = last / first if first and last is not None else None
        row['conn_ms'] = pg['conn_ms'] / k if pg.get('conn_ms') is not None else None
        qd1 = r.get('model_qd1') or (None, None)
        row['model_qd1_read_us'], row['model_qd1_write_us'] = qd1
        secs = r['run_s'] / k
        st = r.get('status')
        b = r['blk']
        if b.get('busy_ms') is not None and r['run_s']:
            row['busy_pct'] = b['busy_ms'] / 1000 / r['run_s'] * 100
        row['read_iops'], row['write_iops'] = b['reads'] / secs, b['writes'] / secs
        row['flushes_per_txn'] = b['flushes'] / row['transactions'] if row['transactions'] \
            else None
        if pcm and st:
            row['read_iops'], row['write_iops'] = st['reads'] / secs, st['writes'] / secs
            for key in ('gap_moves', 'ecc_corrected_bits', 'wear_max', 'wear_mean',
                        'write_bytes', 'read_bytes', 'held', 'late', 'flushes'):
                row[key] = st.get(key)
            rk = r.get('ranks') or {}
            ranks = rk.get('per_rank') or []
            if ranks:
                row['rank_util_max_pct'] = max(x['util_ppm'] for x in ranks) / 1e4
                row['rank_util_mean_pct'] = sum(x['util_ppm'] for x in ranks) / len(ranks) / 1e4
        out.append(row)
    lin = next((x for x in out if x['device'] == LINEAR), None)
    for row in out:
        row.update(verdict(row, lin))
        if row['verdict'] != FAILED:
            row['reason'] += reads_note(row)
        if lin and lin.get('tps') and row.get('tps'):
            row['tps_vs_linear'] = row['tps'] / lin['tps']
    return out


TABLE_FIELDS = ('device', 'tps', 'tps_vs_linear', 'tps_first_half', 'tps_last_half',
                'last_vs_first', 'model_qd1_read_us', 'model_qd1_write_us', 'busy_pct',
                'lat_mean_us', 'lat_p50_us', 'lat_p90_us',
                'lat_p99_us', 'lat_p99.9_us', 'lat_max_us', 'model_read_us', 'model_write_us',
                'blk_read_us', 'blk_write_us', 'blk_flush_us', 'read_iops', 'write_iops',
                'flushes_per_txn', 'dev_reads_per_txn', 'dev_writes_per_txn', 'read_share_pct',
                'write_share_pct', 'buffer_hit_pct', 'pagecache_hit_pct', 'cache_hit_pct',
                'reads_reached', 'memory_max', 'cgroup_peak', 'cgroup_file', 'cgroup_limit_hits',
                'refaults', 'oom_kills', 'life_start_gap_s', 'life_no_start_gap_s',
                'wear_max_start_gap', 'wear_max_no_start_gap', 'wear_passes', 'rank_util_max_pct', 'rank_util_mean_pct', 'gap_moves',
                'wear_max', 'wear_mean', 'ecc_corrected_bits', 'held', 'late', 'transactions',
                'verdict', 'reason', 'fsck_rc', 'dilation', 'overhead_ns', 'conn_ms')


def fmt(v, unit=''):
    if v is None:
        return '-'
    if isinstance(v, float):
        v = f'{v:.3g}' if abs(v) < 100 else f'{v:,.0f}'
    return f'{v}{unit}'


def time_cell(row):
    """Where the time went: the share of the run the device was busy (the
    block layer's io_ticks: at least one request in flight), and how its
    requests' time split between reads and writes: the modeled time
    (status: requests x modeled mean, which includes their queueing;
    requests overlap, so it is a split, not a sum of the run) per
    transaction; flushes as counted (brd below advertises no volatile
    cache, so an fsync is its writes and no flush reaches the device)."""
    out = []
    if row.get('busy_pct') is not None:
        out.append(f'busy {row["busy_pct"]:.0f} % of the run')
    if row.get('model_read_us') is not None:
        rd, wr = row['model_read_us'], row['model_write_us']
        if rd + wr:
            out.append(f'reads {rd / (rd + wr) * 100:.0f} %, writes {wr / (rd + wr) * 100:.0f} % '
                       f'of its modeled time ({rd:,.0f} + {wr:,.0f} us per transaction)')
        else:
            out.append('no modeled time')
    elif row.get('blk_write_us') is not None:
        rd, wr = row['blk_read_us'], row['blk_write_us']
        out.append(f'in flight: reads {rd:,.0f} + writes {wr:,.0f} us per transaction')
    if row.get('flushes_per_txn') is not None:
        out.append(f'flushes {row["flushes_per_txn"]:.2g} per transaction')
    return '; '.join(out) or '-'


def conditions(run, unit='TPS'):
    from pcmchar import report
    return (f'clock: {report.clock_of(run)}; dilation: {run.get("dilation") or 1} ({unit} x K, '
            f'latencies / K: the device\'s clock, the guest a host K times faster); '
            f'calibration: {report.calibration_text(run)}'
            + ('; the write side\'s overhead_ns on every dm-pcm device (a commit waits '
               'for its WAL write)' if run.get('calibration') else ''))


def qd1_cell(r):
    rd, wr = r.get('model_qd1_read_us'), r.get('model_qd1_write_us')
    return f'{fmt(rd)} / {fmt(wr)} us' if rd is not None or wr is not None else '-'


def io_cell(r):
    """The device's reads / writes per transaction."""
    if r.get('dev_reads_per_txn') is None:
        return '-'
    return f'{r["dev_reads_per_txn"]:.3g} / {r["dev_writes_per_txn"]:.3g}'


def hit_cell(r):
    """The caches' hit ratio: both, then shared_buffers' and the page
    cache's."""
    if r.get('cache_hit_pct') is None:
        return '-'
    pc = r.get('pagecache_hit_pct')
    return (f'{r["cache_hit_pct"]:.1f} % (buffers {r["buffer_hit_pct"]:.1f} %, page cache '
            f'{fmt(pc, " %") if pc is None else f"{pc:.1f} %"})')


def table_lines(rs):
    out = ['| device | device alone: 4 KiB QD1 read / write (model) | TPS | vs dm-linear | '
           'last half / first half | latency mean | p50 | p99 | p99.9 | '
           'device reads / writes per transaction | cache hits | '
           'where the time went (device clock, per transaction) | '
           'lifetime with / without start-gap | verdict |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rs:
        out.append(f'| `{r["device"]}` | {qd1_cell(r)} | {fmt(r["tps"])} | '
                   f'{fmt(r.get("tps_vs_linear"), "x")} | {fmt(r.get("last_vs_first"))} | '
                   f'{fmt(r["lat_mean_us"], " us")} | {fmt(r["lat_p50_us"], " us")} | '
                   f'{fmt(r["lat_p99_us"], " us")} | {fmt(r["lat_p99.9_us"], " us")} | '
                   f'{io_cell(r)} | {hit_cell(r)} | '
                   f'{time_cell(r)} | {life_cell(r)} | **{r["verdict"]}**: {r["reason"]} |')
    return out


def human_secs(secs):
    """A lifetime for a reader (pcmctl's words): s, days or years."""
    if secs is None:
        return 'unbounded'
    if secs >= 365.25 * 86400:
        return f'{secs / (365.25 * 86400):.3g} years'
    if secs >= 86400:
        return f'{secs / 86400:.3g} days'
    return f'{secs:.3g} s'


def life_fields(life):
    """A lifetime() result as a table row's columns: each lifetime and
    most-written row, with and without start-gap, the passes, the error."""
    life = life or {}
    row = {}
    for key in ('start_gap', 'no_start_gap'):
        if life.get(key):
            row[f'life_{key}_s'] = life[key]['lifetime_s']
            row[f'wear_max_{key}'] = life[key]['max']
    if life:
        row['wear_passes'] = life.get('passes')
        row['lifetime_error'] = life.get('error')
    return row


def life_cell(r):
    """The lifetime with / without start-gap."""
    if r.get('lifetime_error'):
        return 'replay failed'
    if 'life_start_gap_s' not in r:
        return '-'
    return f'{human_secs(r["life_start_gap_s"])} / {human_secs(r["life_no_start_gap_s"])}'


def life_lines(run):
    """## Lifetime: per dm-pcm device, the wear its measured run's writes
    leave, replayed, with and without start-gap."""
    out = ['The measured run\'s requests (blktrace of the device, logs/dK-blkparse.txt.xz) '
           'replayed by the timing model, its writes repeated (pcmctl model --trace --repeat '
           'N), open loop at K times the trace\'s speed (the device\'s clock), once with '
           'the device\'s start-gap and once without: the lifetime is the time until the '
           'most-written row reaches the table\'s endurance at this workload\'s rate (the '
           'module\'s own projection, pcm_wear_life()); "if level": were every row worn '
           'alike.  The tracing ran during the measured run (its CPU is in the guest\'s).', '',
           '| device | passes | with start-gap | its most-written row (writes), gap moves | '
           'without | its most-written row | if level | endurance | command |',
           '|---|---|---|---|---|---|---|---|---|']
    for r in run['runs']:
        life = r.get('lifetime')
        if not life:
            continue
        if life.get('error'):
            out.append(f'| `{r["device"]}` | - | replay failed: {life["error"]} | | | | | | '
                       f'`{life["command"]}` |')
            continue
        sg, no = life['start_gap'], life['no_start_gap']
        out.append(f'| `{r["device"]}` | {life["passes"]} | {human_secs(sg["lifetime_s"])} | '
                   f'{sg["max"]}, {sg["gap_moves"]} | {human_secs(no["lifetime_s"])} | '
                   f'{no["max"]} | {human_secs(sg["lifetime_level_s"])} | {sg["endurance"]:,} | '
                   f'`{life["command"]}` |')
    if len(out) == 4:
        out = ['No lifetime: no dm-pcm device\'s run was traced (lifetime = false, or '
               'dm-linear only).']
    return out


def mib(v):
    return '-' if v is None else f'{v / (1 << 20):,.1f} MiB'


def cache_lines(rs, spec_memory):
    """The memory cgroup's figures per device: what bounded the cache."""
    if not spec_memory:
        return ['No memory cgroup (the spec sets no memory): the server\'s cache was the '
                'guest\'s whole memory.  Where the device served under '
                f'{READS_REACHED:g} reads per transaction, the verdict says its reads did not '
                'reach it.']
    out = [f'The server ran in a memory cgroup (memory.max {mib(spec_memory)}, no swap): its '
           'page cache and its own memory (shared_buffers among it) together bounded by it, '
           'while the ramdisk under the device is not.  Peak: memory.peak since the cgroup '
           'was made (pgbench -i included); page cache: memory.stat\'s file at the run\'s '
           'end; limit reached: memory.events max during the run; refaults: file pages read '
           'again after the cache dropped them, during the run.', '',
           '| device | memory.max | peak | page cache at the end | limit reached | refaults | '
           'reads reached the device |', '|---|---|---|---|---|---|---|']
    for r in rs:
        if r.get('memory_max') is None and r.get('cgroup_peak') is None:
            continue
        reached = {True: 'yes', False: '**no**', None: '-'}[r.get('reads_reached')]
        out.append(f'| `{r["device"]}` | {mib(r.get("memory_max"))} | '
                   f'{mib(r.get("cgroup_peak"))} | {mib(r.get("cgroup_file"))} | '
                   f'{fmt(r.get("cgroup_limit_hits"))} | {fmt(r.get("refaults"))} | '
                   f'{reached} |')
    return out


def view_lines(rs):
    out = ['| device | read IOPS | write IOPS | flushes / txn | reads in flight us/txn | '
           'writes | flushes | rank util max / mean | gap moves | wear max / mean | '
           'ECC corrected bits | held / late |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rs:
        util = (f'{r["rank_util_max_pct"]:.1f} / {r["rank_util_mean_pct"]:.1f} %'
                if r.get('rank_util_max_pct') is not None else '-')
        wear = (f'{r["wear_max"]} / {r["wear_mean"]}' if r.get('wear_max') is not None
                else '-')
        held = f'{r["held"]} / {r["late"]}' if r.get('held') is not None else '-'
        out.append(f'| `{r["device"]}` | {fmt(r["read_iops"])} | {fmt(r["write_iops"])} | '
                   f'{fmt(r["flushes_per_txn"])} | {fmt(r.get("blk_read_us"))} | '
                   f'{fmt(r.get("blk_write_us"))} | {fmt(r.get("blk_flush_us"))} | {util} | '
                   f'{fmt(r.get("gap_moves"))} | {wear} | {fmt(r.get("ecc_corrected_bits"))} | '
                   f'{held} |')
    return out


def latency_lines(rs):
    out = ['| device | transactions | mean | p50 | p90 | p99 | p99.9 | max |',
           '|---|---|---|---|---|---|---|---|']
    for r in rs:
        out.append(f'| `{r["device"]}` | {fmt(r["transactions"])} | ' + ' | '.join(
            fmt(r[f'lat_{m}_us'], ' us') for m in ('mean', 'p50', 'p90', 'p99', 'p99.9',
                                                   'max')) + ' |')
    return out


def draw(rs, run, outdir):
    """figures/app-tps.png: TPS per device (dm-linear's line across), with
    its CSV; (png, csv)."""
    from pcmchar import figures, results as R
    os.makedirs(outdir, exist_ok=True)
    csv_path = os.path.join(outdir, 'app-tps.csv')
    R.write_csv(csv_path, ['device', 'tps', 'lat_mean_us', 'lat_p99_us'],
                [[r['device'], r['tps'], r['lat_mean_us'], r['lat_p99_us']] for r in rs])
    plt = figures.plt
    fig, ax = plt.subplots(figsize=(7, 4))
    names = [figures.device_name(r['device']).replace(', ', '\n') for r in rs]
    ax.bar(names, [r['tps'] or 0 for r in rs],
           color=['grey' if r['device'] == LINEAR else 'tab:blue' for r in rs])
    for i, r in enumerate(rs):
        ax.annotate(fmt(r['tps']), (i, r['tps'] or 0), ha='center', va='bottom', fontsize=8)
    ax.set_ylabel('transactions per second (TPS, device clock)')
    ax.set_xlabel('device')
    import textwrap
    cond = figures.conditions_line({'clock': clock.name(run.get('icount')),
                                    'dilation': run.get('dilation') or 1,
                                    'calibration': report_cal(run)})
    # each line wrapped to the figure's width: a longer one was cut off
    ax.set_title(textwrap.fill(f'pgbench on ext4 over each device: {run["workload"]}', 100) +
                 '\n' + textwrap.fill(cond, 100), fontsize=8)
    fig.tight_layout()
    png = os.path.join(outdir, 'app-tps.png')
    fig.savefig(png)
    plt.close(fig)
    return png, csv_path


def report_cal(run):
    from pcmchar import report
    return report.calibration_text(run)


def write_table(run_dir, rs):
    import csv
    path = os.path.join(run_dir, 'app-table.csv')
    with open(path, 'w', newline='', encoding='utf-8') as fh:
        w = csv.DictWriter(fh, fieldnames=TABLE_FIELDS, extrasaction='ignore')
        w.writeheader()
        for r in rs:
            w.writerow({k: '' if r.get(k) is None else r.get(k) for k in TABLE_FIELDS})
    with open(os.path.join(run_dir, 'app-table.json'), 'w', encoding='utf-8') as fh:
        json.dump({'fields': list(TABLE_FIELDS), 'rows': rs}, fh, indent=1)
        fh.write('\n')
    return path


SECTIONS = ('## The answer', '## Latency', '## The cache', '## Lifetime', '## The device\'s view',
            '## Figure', '## Devices', '## Commands', '## Spec')


def finish(spec, run_dir, draw_figs=True, **extra):
    """report.md, app-table.csv/.json and the figure from run.json (@extra
    added to it first); (report path, rows, run, png or None)."""
    from pcmchar import report
    if spec.work:
        from . import appwork
        return appwork.finish(spec, run_dir, draw_figs, **extra)
    run = report.update_run(run_dir, extra)
    for r in run['runs']:
        if r['device'] != LINEAR and 'model_qd1' not in r:
            r['model_qd1'] = model_qd1(r['device'])
        if r.get('trace') and 'lifetime' not in r:
            r['lifetime'] = lifetime(r, run_dir, spec.wear_passes)
    report.update_run(run_dir, {'runs': run['runs']})
    rs = rows(run)
    write_table(run_dir, rs)
    png = draw(rs, run, os.path.join(run_dir, 'figures')) if draw_figs else None
    with open(os.path.join(run_dir, 'spec.toml'), encoding='utf-8') as fh:
        spec_text = fh.read()
    rel = lambda p: os.path.relpath(p, run_dir)  # noqa: E731 (a one-line helper)
    L = [f'# dm-pcm under a database: {spec.name}', '',
         f'- date: {run["date"]}; kernel {run["kernel"]}; {run["postgres"]}; '
         f'{run["cpus"]} vCPU{"s" if run["cpus"] > 1 else ""}, '
         f'{"icount (guest time follows instructions)" if run.get("icount") else "no icount"}',
         f'- workload: {run["workload"]}; fsync on, synchronous_commit on; ext4 (4 KiB '
         f'blocks) over each device, a {run["ramdisk_mib"]} MiB {spec.backing} below; '
         'a copy of one initdb cluster, pgbench -i, CHECKPOINT and the file system\'s page '
         'cache emptied before each run'
         + (f', then {run["runs"][0]["warmup_duration"]} s of the same pgbench, not measured '
            '(the warm-up)' if run['runs'] and run['runs'][0].get('warmup_duration') else ''),
         f'- wall time: {run.get("host_wall_s", float("nan")):.0f} s on the host (guest clock '
         f'{run["wall_s"]:.0f} s)',
         f'- every figure below: {conditions(run)}',
         '- PostgreSQL\'s timers (the guest\'s clock, which dilation does not slow): '
         + (', '.join(f'{n} {v}' for n, v in run['pg_timers'].items()) + ' (K x their '
            'defaults, so that they fire as often on the device\'s clock as on the hardware)'
            if run.get('pg_timers') else 'their defaults' + (' (dilation 1)' if 'pg_timers' in run
                                                              else ' (a run before they were '
                                                              'scaled by K)')), '',
         '## The answer', '',
         'How much of a device\'s advantage survives a database: the device alone (its model\'s '
         'mean 4 KiB random read and write at one in flight, pcmctl model, no host in the '
         'way), then TPS and the latency of a '
         'transaction (pgbench\'s per-transaction log) on each device, against dm-linear over '
         'the same ramdisk; the device\'s reads and writes per transaction and the caches\' '
         'hit ratio (## The cache: a read PostgreSQL\'s shared_buffers or the kernel\'s page '
         'cache served never reached the device; a run whose reads did not reach it says so in '
         'its verdict: it measured the device\'s writes only); whether the rate was steady (the mean TPS of the run\'s last half '
         'over its first\'s, from pgbench -P 1); and where the time went: '
         'the share of the run the device was busy (the block layer\'s io_ticks) and how its '
         'requests\' modeled time (status counters: requests x modeled mean latency, queueing '
         'included; requests overlap) split between reads and writes, per transaction (an '
         'fsync is its writes: brd has no volatile cache, so no flush reaches the device).  '
         'Verdict: host-bound where the device models no time, over 1 % of its completions '
         'were late, or dm-linear\'s TPS is within 20 % of the device\'s or below it (the '
         'host: PostgreSQL\'s CPU, the guest\'s clock); else device-bound; failed where no '
         'transaction completed (the device\'s run failed: no figure, no verdict).  The same '
         'table with every column: '
         '[app-table.csv](app-table.csv), [app-table.json](app-table.json).', '']
    L += table_lines(rs)
    L += ['', '## Latency', '', 'Per transaction, from pgbench -l\'s logs (logs/dK.*), us on '
          'the device\'s clock; nearest-rank percentiles.', '']
    L += latency_lines(rs)
    L += ['', '## The cache', '']
    L += cache_lines(rs, run.get('memory'))
    L += ['', '## Lifetime', '']
    L += life_lines(run)
    L += ['', '## The device\'s view', '', 'IOPS: dm-pcm\'s status counters (dm-linear: '
          '/sys/block/dm-N/stat), per second of the device\'s clock.  In flight: the block '
          'layer\'s time with reads, writes and flushes outstanding, us per transaction.  Rank '
          'utilisation: the "ranks" message (pcmctl ranks --json) over the run.  Wear: '
          'writes per row of the most worn row and the mean (0 0 with wear:off).  Held / '
          'late: completions the device held to their modeled instant, and those late.', '']
    L += view_lines(rs)
    L += ['', '## Figure', '']
    L += ([f'![TPS per device]({rel(png[0])})', '', f'Data: [{rel(png[1])}]({rel(png[1])})']
          if png else ['(not drawn: --no-figures)'])
    L += ['', '## Devices', '']
    for r in run['runs']:
        kk = r.get('dilation') or run.get('dilation') or 1
        prog = ', '.join(f'{v * kk:,.0f}' for _, v in r.get('progress') or [])
        wprog = ', '.join(f'{v * kk:,.0f}' for _, v in (r.get('warmup') or {}).get('progress')
                          or [])
        first, last = halves(r.get('progress') or [], r.get('duration') or 0)
        if first is not None and last is not None:
            prog += (f' (first half {first * kk:,.0f}, last half {last * kk:,.0f}: '
                     f'{last / first if first else float("nan"):.3f})')
        L += [f'- `{r["device"]}`: `{r["table"]}`; the cluster copied {r["copy_s"]:.1f} s, '
              f'pgbench -i '
              f'{r.get("init_s", 0):.1f} s, run {r.get("run_s", 0):.1f} s (guest clock); '
              + (f'TPS over each guest second of the run (pgbench -P 1; x K, the '
                 f'device\'s clock): {prog}; ' if prog else '')
              + (f'warm-up {r["warmup_duration"]} s, not measured (TPS over each guest '
                 f'second: {wprog}); ' if wprog else '')
              + (f'initial connection time {r["pgbench"]["conn_ms"]:,.0f} ms (guest clock); '
                 if r['pgbench'].get('conn_ms') is not None else '')
              + (f'major page faults in the run: {r["major_faults"]}; '
                 if r.get('major_faults') is not None else '')
              + (f'requests to the 9p root during pgbench (its own start and exit included): '
                 f'{p9_text(r["p9_requests"])}; ' if r.get('p9_requests') is not None else '') +
              f'fsck -fn exit {r["fsck_rc"]} ({" ".join(r["fsck"])}); removed: '
              f'{"yes" if r["removed"] else "no"}']
    L += ['', '## Commands', '', 'As the guest ran them (each device in turn as `char-dut`):',
          '', '```'] + run['commands'] + ['```', '', '## Spec', '', '```toml',
                                         spec_text.rstrip(), '```', '']
    out = os.path.join(run_dir, 'report.md')
    with open(out, 'w', encoding='utf-8') as fh:
        fh.write('\n'.join(L))
    return out, rs, run, png


def p9_text(by):
    """{process: requests} as a phrase."""
    if not by:
        return '0'
    return f'{sum(by.values())} (' + ', '.join(f'{c} {n}' for c, n in sorted(
        by.items(), key=lambda x: -x[1])) + ')'


def headline(rs, run):
    """The table as plain text, for the console."""
    out = [conditions(run),
           f'{"device":18} {"TPS":>9} {"vs lin":>7} {"lat mean":>9} {"p99":>9} '
           f'{"rd/wr per txn":>13} {"cache hits":>10}  where the time went; verdict']
    for r in rs:
        hit = r.get('cache_hit_pct')
        out.append(f'{r["device"][:18]:18} {fmt(r["tps"]):>9} '
                   f'{fmt(r.get("tps_vs_linear"), "x"):>7} {fmt(r["lat_mean_us"]):>9} '
                   f'{fmt(r["lat_p99_us"]):>9} {io_cell(r):>13} '
                   f'{"-" if hit is None else f"{hit:.1f} %":>10}  '
                   f'{time_cell(r)}; {r["verdict"]}: {r["reason"]}')
    return '\n'.join(out)


# --- the command line -----------------------------------------------------------

def host_run(args, spec, text):
    from pcmchar import rundir
    kernel = os.uname().release if args.native else args.kernel
    base = os.path.join(os.path.abspath(args.outdir), 'app', f'{spec.name}-{kernel}')
    earlier = rundir.runs(base)
    run_dir = rundir.new(base)
    if earlier:
        print(f'pcm-bench: earlier runs kept: {", ".join(earlier)}', flush=True)
    os.environ.setdefault('MPLCONFIGDIR', os.path.join(os.path.dirname(run_dir), '.matplotlib'))
    spec_copy = os.path.join(run_dir, 'spec.toml')
    with open(spec_copy, 'w', encoding='utf-8') as fh:
        fh.write(text)
    cluster = template() if not spec.work else None
    if cluster and not args.native:
        # a VM's /var/cache is its own tmpfs (virtme-ng's init): the guest
        # finds the cluster beside the run's directory, over 9p
        seen = shared_template(run_dir, cluster)
        subprocess.run(['rm', '-rf', seen], check=True)
        subprocess.run(['cp', '-a', cluster, seen], check=True)
        cluster = seen
    if not spec.work:
        print(f'pcm-bench: the cluster: {cluster or "initdb in the guest"}', flush=True)
    icount = not args.no_icount
    # the ramdisk, and the guest's own 2 GiB beside it (the server's
    # cache is the cgroup's, where the spec sets memory)
    mem = max(2048, (spec.ramdisk >> 20) + 1024)
    vm_opts = ['--cpus', str(args.cpus), '--memory', f'{mem}M', '--timeout', str(VM_TIMEOUT)]
    vm_opts += ['--icount'] if icount else []
    inner = [ENTRY, '--guest', '--run-dir', run_dir, 'app', spec_copy]
    inner += ['--short'] if args.short else []
    print(f'pcm-bench: {spec.describe()} on {len(spec.devices())} devices '
          f'({", ".join(spec.devices())}); dilation {spec.dilation}; results in {run_dir}',
          flush=True)
    start = time.monotonic()
    rc = vm.call_with_progress(vm.tool_vm_run(args, os.path.dirname(run_dir), vm_opts) +
                               ['--'] + inner, start)
    if rc or not os.path.exists(os.path.join(run_dir, 'run.json')):
        print(f'pcm-bench: the app run failed (exit {rc}): no {run_dir}/run.json',
              file=sys.stderr)
        return 1
    path, rs, run, png = finish(spec, run_dir, draw_figs=args.figures,
                                icount=icount and not args.native,
                                host_wall_s=time.monotonic() - start)
    if spec.work:
        from . import appwork
        print(appwork.headline(rs, run))
    else:
        print(headline(rs, run))
    print(f'report: {path}')
    print(f'table: {os.path.join(run_dir, "app-table.csv")}, .json')
    if png:
        print(f'figure: {png[0]}')
    rc = 0
    bad = [r['device'] for r in rs if r['fsck_rc'] or not r['removed']]
    if bad:
        print(f'pcm-bench: fsck not clean or device left on: {", ".join(bad)}', file=sys.stderr)
        rc = 1
    failed = [r['device'] for r in rs if r['verdict'] == FAILED]
    if failed and spec.work:
        print(f'pcm-bench: {spec.work.name} failed or completed nothing on '
              f'{", ".join(dict.fromkeys(failed))} (logs/dK-N.txt, .err, dK-dmesg.txt)',
              file=sys.stderr)
        rc = 1
    elif failed:
        print(f'pcm-bench: no transaction completed on {", ".join(failed)}: their runs '
              f'failed (logs/dK-pgbench.txt, dK-server.log, dK-dmesg.txt)', file=sys.stderr)
        rc = 1
    return rc


def run(args, ap):
    """app SPEC: the spec checked on the host (libpcm too) before any VM
    boots; then the guest's part (--guest) or the host's."""
    from pcmbench import characterize
    if not args.spec:
        ap.error('app needs a SPEC file (e.g. tools/app/pgbench.toml)')
    name = os.path.splitext(os.path.basename(args.spec))[0]
    try:
        with open(args.spec, encoding='utf-8') as fh:
            text = fh.read()
        if not args.guest:
            text = pspec.override_text(text, **characterize.run_clock(args, text))
        spec = loads(text, name, tables=not args.guest, short=args.short)
    except OSError as e:
        ap.error(f'{args.spec}: {e.strerror}')
    except pspec.SpecError as e:
        ap.error(f'{args.spec}: {e}')
    if spec.program == 'bdb-swap' and not args.guest:
        # built (or found up to date) here, before the VM boots: the guest
        # sees the tree read-only
        subprocess.run(['make', '-s', '-C', os.path.join(TOP, 'tools'), 'bdb-swap'],
                       stdout=subprocess.DEVNULL, check=False)
    why = spec.work.missing() if spec.work else missing_postgres()
    if why:
        ap.error(why)
    if args.guest:
        info = AppGuest(spec, args.run_dir, log=lambda m: print(m, flush=True)).run()
        with open(os.path.join(args.run_dir, 'run.json'), 'w', encoding='utf-8') as fh:
            json.dump(info, fh, indent=1)
        return 0
    return host_run(args, spec, text)
