# SPDX-License-Identifier: GPL-2.0-only
"""The characterization spec: a TOML file naming the devices and the axes
of the PSD paper's Tables I and II, expanded into points.

    name = "tiny"          # optional (default: the file's name)
    repetitions = 5        # measured runs per point (the paper: 5)
    runtime = 1.0          # s, each repetition
    warmup = 0.5           # s, one unmeasured run before them (0: none)
    ramdisk = "256m"       # the brd (or null_blk) under every device
    backing = "brd"        # brd, or null_blk (blk-mq: has I/O schedulers)
    baseline = true        # every point on dm-linear too, same boot
    bursty = { ios = 32, idle_us = 1000 }   # what pattern "bursty" means
    dilation = 8           # K: every dm-pcm device gets dilation:K (1 to 1000)
    calibrate = true       # measure overhead_ns per direction at the start
    overhead_ns = { read = 0, write = 0 }   # or set it as measured before

    [axes]                 # each a value or a list: the points are the product
    device = ["preset:pss"]
    rw = ["randread", "randwrite"]
    iodepth = [1, 16]

    [[sweep]]              # optional: more products, each overriding [axes]
    name = "mix"
    rw = "randrw"
    rwmixread = [0, 50, 100]

AXES below lists every axis, its default and what it may hold.  A bad
spec raises SpecError naming the field and the values it allows.  With
tables=True (load(), loads(): what pcm-bench characterize does on the
host before any VM boots) every device's words also go through the
module's own parser (libpcm, tools/pcmlib/libpcm.py), so a word the
module would refuse (preset:psss, bogus_key:1, read_ns:-5) is refused
here with the parser's message, naming the field.

dilation = K (dm-pcm.rst, "Time dilation"): every dm-pcm device is
created with dilation:K among its words (a device whose words give its
own dilation:K keeps it), and the report divides its measured latencies
by K and multiplies its rates by K (pcmchar/results.py: dilate()).
calibrate = true measures this host's completion overhead per direction
at the start of the run, at the run's dilation (pcmlib/calibrate.py:
calibrate()), and overhead_ns = { read = N, write = N } gives it as
measured before ('pcm-bench calibrate'); either way each point's device
gets the overhead of its direction (set overhead_ns; a mix: the read
share's mean), and the report says which; calibrate = false:
"uncalibrated".  pcm-bench characterize's --dilation, --calibrate,
--no-calibrate and --overhead-ns override these keys; where neither the
command line nor the spec names them, a run gets the defaults of
pcmlib/clock.py: dilation 8 in an icount VM (1 on a real host or
without icount) and calibrate = true.  (A spec loaded by itself, as the
unit tests do, has dilation 1 and no calibration.)
"""
import itertools
import os
import re
import tomllib

from pcmlib import words as pwords
from pcmlib.words import size_word  # bytes as fio writes them (fiojob, guest and figures import it from here)
RW = ('read', 'write', 'randread', 'randwrite', 'rw', 'randrw')
MIXED = ('rw', 'randrw')
RANDOM = ('randread', 'randwrite', 'randrw')
WORD_RE = re.compile(r'[a-z_]+:[A-Za-z0-9_.-]+|[a-z_]+')


class SpecError(ValueError):
    """A spec that cannot run: the field, what is wrong, what is allowed."""

    def __init__(self, field, msg, allowed=None):
        self.field = field
        text = f'{field}: {msg}'
        if allowed:
            text += f' (allowed: {allowed})'
        super().__init__(text)


def parse_size(field, v):
    """'4k', '1m', '512' or an integer of bytes: bytes, a multiple of 512."""
    try:
        return pwords.parse_size(v if isinstance(v, int) and not isinstance(v, bool) else str(v),
                                 multiple=512)
    except pwords.SizeError:
        raise SpecError(field, f'{v!r} is not a size',
                        'a multiple of 512 bytes: 512, 4k, 1m, 2g') from None


def check_words(field, v):
    if not isinstance(v, str) or not v.split() or \
            not all(WORD_RE.fullmatch(w) for w in v.split()):
        raise SpecError(field, f'{v!r} is not a dm-pcm table',
                        'words like "preset:pss gap_interval:64" (key:value or a flag)')
    if v.split()[0] == 'linear':
        raise SpecError(field, 'dm-linear is the baseline', 'baseline = true')
    return ' '.join(v.split())


def one_of(allowed):
    def check(field, v):
        if v not in allowed:
            raise SpecError(field, f'{v!r}', ', '.join(map(str, allowed)))
        return v
    return check


def int_range(lo, hi):
    def check(field, v):
        if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
            raise SpecError(field, f'{v!r}', f'an integer from {lo} to {hi}')
        return v
    return check


def boolean(field, v):
    if not isinstance(v, bool):
        raise SpecError(field, f'{v!r}', 'true, false')
    return v


# axis: (default, checker, what it is)
AXES = {
    'device': (None, check_words, 'dm-pcm table words'),
    'target': ('raw', one_of(('raw', 'ext3', 'ext4')), 'raw device or file system'),
    'scheduler': ('none', one_of(('none', 'mq-deadline')), 'I/O scheduler of the backing device'),
    'direct': (True, boolean, 'O_DIRECT (true) or buffered I/O'),
    'bs': ('4k', parse_size, 'block size'),
    'size': ('64m', parse_size, 'file (working-set) size per thread'),
    'iodepth': (1, int_range(1, 1024), 'I/O depth (libaio)'),
    'rw': ('randread', one_of(RW), "fio's rw"),
    'rwmixread': (50, int_range(0, 100), 'percent reads of rw and randrw'),
    'fullness': (0, int_range(0, 95), 'percent of the device or file system filled first'),
    'pattern': ('sustained', one_of(('sustained', 'bursty')), 'request arrivals'),
    'threads': (1, int_range(1, 64), 'fio jobs (numjobs), reported together'),
    'region': (100, int_range(1, 100), 'percent of the file that random I/O goes to'),
    'warmup_ios': (0, int_range(0, 10 ** 7), 'the warm-up runs this many I/Os, not warmup '
                   's (a state to reach: a full write cache)'),
    'ramp': (0.0, lambda f, v: number(f, v, 0, 3600), 's each repetition runs before it is '
             'measured (fio ramp_time: a state the pause between repetitions undoes)'),
}
TOP_KEYS = {'name', 'repetitions', 'runtime', 'warmup', 'ramdisk', 'backing', 'baseline',
            'bursty', 'axes', 'sweep', 'dilation', 'calibrate', 'overhead_ns'}
DILATION_MAX = 1000     # the module's limit (dm-pcm.rst, "Time dilation")
OVERHEAD_MAX = 10 ** 9  # overhead_ns's, in ns


def number(field, v, lo, hi):
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not lo <= v <= hi:
        raise SpecError(field, f'{v!r}', f'a number from {lo} to {hi}')
    return v


def overhead(field, v):
    """{ read = N, write = N } (ns, 0 to OVERHEAD_MAX; a side left out is
    0), or None."""
    if v is None:
        return None
    if not isinstance(v, dict):
        raise SpecError(field, f'{v!r}', '{ read = N, write = N } in ns')
    unknown(field + '.', v, ('read', 'write'))
    return {side: int_range(0, OVERHEAD_MAX)(f'{field}.{side}', v.get(side, 0))
            for side in ('read', 'write')}


def unknown(field, keys, allowed):
    bad = sorted(set(keys) - set(allowed))
    if bad:
        raise SpecError(f'{field}{bad[0]}', 'unknown key', ', '.join(sorted(allowed)))


def axis_values(field, name, v):
    vals = v if isinstance(v, list) else [v]
    if not vals:
        raise SpecError(field, 'an empty list', 'one value or a list of them')
    check = AXES[name][1]
    out = [check(f'{field}[{i}]' if isinstance(v, list) else field, x)
           for i, x in enumerate(vals)]
    return list(dict.fromkeys(out))  # in order, once each


def default(name):
    d, check = AXES[name][:2]
    return [None if d is None else check(name, d)]


class Clocked:
    """What a spec of dm-pcm devices on the run's clock has, whatever it
    runs on them (characterize's fio points, pcm-bench app's database):
    self.dilation and self.tables, set by the subclass."""

    def check_tables(self, field, v):
        """With tables: each device's words through the module's parser."""
        if not self.tables:
            return
        from pcmlib import libpcm
        for i, own in enumerate(v if isinstance(v, list) else [v]):
            words = self.table_words(own)    # with the run's dilation:K
            try:
                reason = libpcm.check_words(words)
            except libpcm.PcmError as e:     # no library: say so, do not guess
                raise SpecError(field, f'cannot check {words!r} with libpcm: {e}') from e
            if reason:
                raise SpecError(f'{field}[{i}]' if isinstance(v, list) else field,
                                f'{own!r}: the module refuses it: {reason}',
                                'the words of tools/pcmctl params, as in the .rst\'s '
                                '"Table line"')

    def dilation_of(self, dev):
        """K of device @dev (table words): its own dilation word, else the
        spec's; 1 for the baseline."""
        if dev in ('linear', 'dm-linear'):
            return 1
        own = pwords.word_value(dev, 'dilation')
        return int(own) if own and own.isdigit() else self.dilation

    def table_words(self, dev):
        """The words @dev is created with: its own, and dilation:K where
        the spec's K is not 1 and the device gives none."""
        if self.dilation == 1 or pwords.word_value(dev, 'dilation') is not None:
            return dev
        return f'{dev} dilation:{self.dilation}'


class Spec(Clocked):
    """The parsed spec: settings and the points, in the order they run."""

    def __init__(self, data, name, tables=False):
        self.tables = tables
        unknown('', data, TOP_KEYS)
        self.name = data.get('name', name)
        if not isinstance(self.name, str) or not re.fullmatch(r'[A-Za-z0-9_.-]+', self.name):
            raise SpecError('name', f'{self.name!r}', 'letters, digits, _ . -')
        self.repetitions = int_range(1, 100)('repetitions', data.get('repetitions', 5))
        self.runtime = number('runtime', data.get('runtime', 2.0), 0.1, 3600)
        self.warmup = number('warmup', data.get('warmup', 1.0), 0, 3600)
        self.ramdisk = parse_size('ramdisk', data.get('ramdisk', '256m'))
        if self.ramdisk % (1 << 20):
            raise SpecError('ramdisk', 'not whole MiB', 'sizes like 256m, 1g')
        self.backing = one_of(('brd', 'null_blk'))('backing', data.get('backing', 'brd'))
        self.baseline = boolean('baseline', data.get('baseline', True))
        bursty = data.get('bursty', {})
        if not isinstance(bursty, dict):
            raise SpecError('bursty', f'{bursty!r}', '{ ios = N, idle_us = N }')
        unknown('bursty.', bursty, ('ios', 'idle_us'))
        self.burst_ios = int_range(1, 1 << 20)('bursty.ios', bursty.get('ios', 32))
        self.burst_idle_us = int_range(1, 10 ** 7)('bursty.idle_us', bursty.get('idle_us', 1000))
        self.dilation = int_range(1, DILATION_MAX)('dilation', data.get('dilation', 1))
        self.calibrate = boolean('calibrate', data.get('calibrate', False))
        self.overhead_ns = overhead('overhead_ns', data.get('overhead_ns'))
        if self.calibrate and self.overhead_ns:
            raise SpecError('calibrate', 'true with overhead_ns given',
                            'one of them: measure it, or give it')
        axes = data.get('axes', {})
        if not isinstance(axes, dict):
            raise SpecError('axes', 'not a table', '[axes] with keys ' + ', '.join(AXES))
        sweeps = data.get('sweep', [{}])
        self.named_sweeps = 'sweep' in data
        if not isinstance(sweeps, list) or not all(isinstance(s, dict) for s in sweeps):
            raise SpecError('sweep', 'not an array of tables', '[[sweep]] tables')
        self.points = self.expand(axes, sweeps)

    def expand(self, axes, sweeps):
        unknown('axes.', axes, AXES)
        base = {k: axis_values(f'axes.{k}', k, v) for k, v in axes.items()}
        if 'device' in axes:
            self.check_tables('axes.device', axes['device'])
        points, seen = [], set()
        for i, sw in enumerate(sweeps):
            field = f'sweep[{i}].' if self.named_sweeps else 'axes.'
            unknown(field, sw, set(AXES) | {'name'})
            sweep_name = sw.get('name', f'sweep{i}')
            own = {k: axis_values(field + k, k, v) for k, v in sw.items() if k != 'name'}
            if 'device' in sw:
                self.check_tables(field + 'device', sw['device'])
            lists = {k: own.get(k, base.get(k)) or default(k) for k in AXES}
            if lists['device'] == [None]:
                raise SpecError('axes.device', f'missing (in [axes] or in {field}device)',
                                'dm-pcm table words, e.g. "preset:pss"')
            for combo in itertools.product(*lists.values()):
                p = dict(zip(lists, combo))
                self.check_point(field, p)
                key = tuple(p.values())
                if key not in seen:
                    seen.add(key)
                    points.append(Point(len(points) + 1, sweep_name, p))
        return points

    def check_point(self, field, p):
        if p['region'] < 100 and p['rw'] not in RANDOM:
            raise SpecError(field + 'region', f'{p["region"]} with rw {p["rw"]!r}: '
                            'sequential I/O covers the file', 'region 100 for read, write, rw')
        if p['scheduler'] != 'none' and self.backing != 'null_blk':
            raise SpecError(field + 'scheduler', f'{p["scheduler"]!r} over {self.backing}: '
                            'brd and dm devices are bio-based, without a scheduler',
                            'none; or backing = "null_blk"')
        if p['size'] % p['bs']:
            raise SpecError(field + 'size', f'{size_word(p["size"])} is not a multiple of '
                            f'bs {size_word(p["bs"])}', 'a multiple of every bs')
        if p['size'] * p['threads'] > self.ramdisk // 2:
            raise SpecError(field + 'size', f'{p["threads"]} x {size_word(p["size"])} '
                            f'over a ramdisk of {size_word(self.ramdisk)}',
                            'threads x size at most half the ramdisk')

    def devices(self):
        """Every device of the run: the baseline (dm-linear) last."""
        devs = list(dict.fromkeys(p.device for p in self.points))
        return devs + (['linear'] if self.baseline else [])

    def plan(self):
        """What runs, in order: [(device, (target, fullness, scheduler),
        points)], one device set up afresh per entry.  Each point runs on
        its own device; the baseline runs each workload once (points that
        differ only in their dm-pcm table are one workload on dm-linear)."""
        out, seen = [], set()
        for dev in self.devices():
            setups = {}
            for p in self.points:
                work = tuple(v for k, v in p.axes.items() if k != 'device')
                if dev == 'linear' and work not in seen:
                    seen.add(work)
                elif p.device != dev:
                    continue
                setups.setdefault((p.target, p.fullness, p.scheduler), []).append(p)
            out += [(dev, key, pts) for key, pts in setups.items()]
        return out

    def runs(self):
        """How many points times devices run."""
        return sum(len(pts) for _, _, pts in self.plan())

    def seconds(self):
        """The fio time of the whole run (no setup)."""
        return (self.warmup + self.repetitions * self.runtime) * self.runs()


class Point:
    """One combination of the axes: a fio job file's worth."""

    def __init__(self, index, sweep, axes):
        self.index, self.sweep, self.axes = index, sweep, axes
        self.__dict__.update(axes)

    @property
    def id(self):
        return f'p{self.index:03d}'

    def describe(self):
        a = self.axes
        mix = f' {a["rwmixread"]}% reads' if a['rw'] in MIXED else ''
        return (f'{a["target"]} {size_word(a["bs"])} {a["rw"]}{mix} QD{a["iodepth"]}'
                f'{" x" + str(a["threads"]) if a["threads"] > 1 else ""}'
                f'{"" if a["direct"] else " buffered"}'
                f'{" full " + str(a["fullness"]) + "%" if a["fullness"] else ""}'
                f'{" " + a["pattern"] if a["pattern"] != "sustained" else ""}'
                f'{" region " + str(a["region"]) + "%" if a["region"] < 100 else ""}'
                f'{" " + a["scheduler"] if a["scheduler"] != "none" else ""}'
                f'{" after " + str(a["warmup_ios"]) + " I/Os" if a["warmup_ios"] else ""}'
                f'{" ramp " + format(a["ramp"], "g") + " s" if a["ramp"] else ""}')

    def row(self):
        """The axes as CSV cells (sizes as fio writes them)."""
        r = dict(self.axes)
        r['bs'], r['size'] = size_word(r['bs']), size_word(r['size'])
        return r


OVERRIDES = ('dilation', 'calibrate', 'overhead_ns')


def override_text(text, dilation=None, calibrate=None, overhead_ns=None, defaults=()):
    """The spec @text with its top-level dilation, calibrate and overhead_ns
    set to those given (None: left as they are): the keys' own lines
    before the first table go, and the new ones lead the file, after a
    comment saying so (pcm-bench characterize --dilation, --calibrate,
    --no-calibrate, --overhead-ns, or, for the keys in @defaults, the
    run's defaults: pcmlib/clock.py; the run's spec.toml is this text)."""
    new = {'dilation': dilation, 'calibrate': calibrate, 'overhead_ns': overhead_ns}
    new = {k: v for k, v in new.items() if v is not None}
    if not new:
        return text
    drop = set(new)   # measuring and giving the overhead exclude each other
    drop |= {'overhead_ns'} if new.get('calibrate') else set()
    drop |= {'calibrate'} if 'overhead_ns' in new else set()
    out, top = [], True
    for line in text.splitlines():
        bare = line.strip()
        if bare.startswith('['):
            top = False
        if top and re.match(r'(%s)\s*=' % '|'.join(sorted(drop)), bare):
            out.append(f'# (set on the command line) {line}')
            continue
        out.append(line)

    def value(v):
        if isinstance(v, bool):
            return 'true' if v else 'false'
        if isinstance(v, dict):
            return '{ ' + ', '.join(f'{k} = {x}' for k, x in v.items()) + ' }'
        return str(v)
    head = ['# pcm-bench characterize: ' + ', '.join(
        f'{k} {"by default" if k in defaults else "from the command line"}' for k in new)]
    head += [f'{k} = {value(v)}' for k, v in new.items()]
    return '\n'.join(head + out) + '\n'


def loads(text, name='spec', tables=False):
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError('(file)', f'not TOML: {e}', 'TOML, see tools/pcmchar/spec.py') from e
    return Spec(data, name, tables)


def load(path, tables=False):
    """The spec at @path; @tables: check the devices' words with libpcm."""
    with open(path, encoding='utf-8') as fh:
        text = fh.read()
    return loads(text, os.path.splitext(os.path.basename(path))[0], tables)
