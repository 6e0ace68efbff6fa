# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench app's spec: AppSpec, every key checked (each error a
pspec.SpecError naming the field and what it allows), and loads(); the
keys are documented in the package's docstring (pcm-bench app --help),
a program's own in appwork.py."""
import re

from pcmchar import spec as pspec

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
# the measured run's writes replayed this many times for its wear
# (pcmctl model --repeat): start-gap spreads a hot row only as its gap
# passes, so one pass of a minute's run shows nothing of it
WEAR_PASSES = 1000
LINEAR = 'dm-linear'     # the baseline: the same ramdisk through dm-linear


class AppSpec(pspec.Clocked):
    """The app spec, checked: every error a pspec.SpecError naming the field
    and what it allows.  @short: the [short] table's settings over the
    others.  @tables: each device's words through libpcm (the host, before
    a VM boots)."""

    backing = 'brd'
    runtime = 1.0       # s of fio per direction when calibrating (pcmchar.guest)

    def __init__(self, data, name, tables=False, short=False):
        from .. import appwork
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
        raise pspec.SpecError('(file)', f'not TOML: {e}',
                              'TOML, see tools/pcmbench/app/__init__.py') from e
    return AppSpec(data, name, tables, short)
