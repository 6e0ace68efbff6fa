# SPDX-License-Identifier: GPL-2.0-only
"""fio job files as workloads of the timing model ('pcmctl model --job').

  parse(text)       [Job(name, workload)], each job section with the
                    [global] sections before it applied; JobError with
                    the line number and why for what the model cannot run
  parse_file(path)  the same, from a file
  describe(wl)      a workload in fio's words, one line

The subset is what 'pcm-bench characterize' writes (tools/pcmchar/fiojob.py)
and what the model can honour:

  rw (readwrite): read write randread randwrite rw readwrite randrw;
  bs (blocksize); iodepth; numjobs; size; rwmixread, rwmixwrite;
  runtime (a run ends at its first arrival from then on, on the model's
  clock; fio's unit is seconds, 500ms and 2s are taken), time_based;
  number_ios; thinktime (fio's unit, us, or with a unit), thinktime_blocks;
  offset_increment (a region per job: the device spans numjobs x size);
  ramp_time (its requests run, uncounted: the figures start after it).

Words that do not change what the model computes are accepted and left
alone: ioengine direct group_reporting lat_percentiles randrepeat
norandommap filename directory filename_format stonewall new_group name
description wait_for_previous.  Anything else (rate_iops, verify,
random_distribution other than an even one, ...) is refused by name.

Each job runs on a fresh model (no state carries from one job to the
next), closed loop, for number_ios requests, or until runtime, or the
caller's cap.
"""
import collections

Job = collections.namedtuple('Job', 'name workload')

RW = {'read': 'read', 'write': 'write', 'randread': 'randread', 'randwrite': 'randwrite',
      'rw': 'rw', 'readwrite': 'rw', 'randrw': 'randrw'}
IGNORED = ('ioengine', 'direct', 'group_reporting', 'lat_percentiles', 'randrepeat',
           'norandommap', 'filename', 'directory', 'filename_format', 'stonewall',
           'new_group', 'name', 'description', 'wait_for_previous')
KNOWN = ('rw', 'readwrite', 'bs', 'blocksize', 'iodepth', 'numjobs', 'size', 'rwmixread',
         'rwmixwrite', 'runtime', 'time_based', 'number_ios', 'thinktime',
         'thinktime_blocks', 'offset_increment', 'random_distribution', 'ramp_time')
SIZE_UNITS = {'': 1, 'k': 1 << 10, 'kb': 1 << 10, 'kib': 1 << 10, 'm': 1 << 20, 'mb': 1 << 20,
              'mib': 1 << 20, 'g': 1 << 30, 'gb': 1 << 30, 'gib': 1 << 30,
              't': 1 << 40, 'tb': 1 << 40, 'tib': 1 << 40}
TIME_UNITS = {'ns': 1, 'us': 10**3, 'usec': 10**3, 'ms': 10**6, 'msec': 10**6,
              's': 10**9, 'sec': 10**9, 'm': 60 * 10**9, 'h': 3600 * 10**9}


class JobError(Exception):
    """A job file the model cannot run: the line and why."""


def _split_num(text):
    i = len(text)
    while i and not text[i - 1].isdigit():
        i -= 1
    return text[:i], text[i:].lower()


def size_bytes(text, lineno, key):
    num, unit = _split_num(text.strip())
    if not num.isdigit() or unit not in SIZE_UNITS:
        raise JobError(f'line {lineno}: {key}={text}: not a size (bytes, or with k, m, g)')
    return int(num) * SIZE_UNITS[unit]


def time_ns(text, lineno, key, default_unit):
    num, unit = _split_num(text.strip())
    if not num.isdigit() or (unit and unit not in TIME_UNITS):
        raise JobError(f'line {lineno}: {key}={text}: not a time (a number, or with us, ms, s)')
    return int(num) * TIME_UNITS[unit or default_unit]


def count(text, lineno, key, lo=0, hi=None):
    t = text.strip()
    if not t.isdigit() or int(t) < lo or (hi is not None and int(t) > hi):
        rng = f'{lo}..{hi}' if hi is not None else f'>= {lo}'
        raise JobError(f'line {lineno}: {key}={text}: not an integer {rng}')
    return int(t)


def workload(opts):
    """The model's workload (pcmlib.model.predict()'s arguments) of a
    job's options {key: (value, lineno)}."""
    def get(k, default, alias=None):
        """(value, line) of @k (or its @alias), fio's @default if neither."""
        if k in opts:
            return opts[k]
        return opts[alias] if alias in opts else (default, 0)
    rwv, ln = get('rw', 'read', 'readwrite')
    if rwv not in RW:
        raise JobError(f'line {ln}: rw={rwv}: the model runs {", ".join(RW)}')
    bsv, ln = get('bs', '4k', 'blocksize')
    bs = size_bytes(bsv, ln, 'bs')
    if ',' in bsv or not bs:
        raise JobError(f'line {ln}: bs={bsv}: one size above 0')
    wl = {'rw': RW[rwv], 'bs': bs,
          'iodepth': count(*get('iodepth', '1'), 'iodepth', 1, 65536),
          'numjobs': count(*get('numjobs', '1'), 'numjobs', 1, 65536)}
    if wl['iodepth'] * wl['numjobs'] > 65536:
        raise JobError(f"iodepth {wl['iodepth']} x numjobs {wl['numjobs']}: at most 65536 "
                       'in flight')
    if 'size' not in opts:
        raise JobError('no size=: the model needs the region the job covers')
    size = size_bytes(*opts['size'], 'size')
    if 'offset_increment' in opts:
        inc = size_bytes(*opts['offset_increment'], 'offset_increment')
        if inc != size:
            raise JobError(f"line {opts['offset_increment'][1]}: offset_increment must equal "
                           'size (a region per job) for the model')
        size *= wl['numjobs']
    wl['size'] = size
    if 'rwmixread' in opts:
        wl['rwmixread'] = count(*opts['rwmixread'], 'rwmixread', 0, 100)
    elif 'rwmixwrite' in opts:
        wl['rwmixread'] = 100 - count(*opts['rwmixwrite'], 'rwmixwrite', 0, 100)
    if 'random_distribution' in opts:
        v, ln = opts['random_distribution']
        if v not in ('random', 'zoned:100/100'):
            raise JobError(f'line {ln}: random_distribution={v}: the model draws offsets '
                           'uniformly over size')
    based = count(*get('time_based', '0'), 'time_based', 0, 1)
    if 'runtime' in opts:
        wl['runtime_ns'] = time_ns(*opts['runtime'], 'runtime', 's')
    elif based:
        raise JobError('time_based=1 without runtime=')
    if 'number_ios' in opts:
        wl['ios'] = count(*opts['number_ios'], 'number_ios', 1)
    elif not wl.get('runtime_ns'):
        raise JobError('neither runtime= nor number_ios=: the model needs an end')
    if 'ramp_time' in opts:
        wl['ramp_ns'] = time_ns(*opts['ramp_time'], 'ramp_time', 's')
    if 'thinktime' in opts:
        wl['think_ns'] = time_ns(*opts['thinktime'], 'thinktime', 'us')
        wl['think_blocks'] = count(*get('thinktime_blocks', '1'), 'thinktime_blocks', 1)
    return wl


def parse(text):
    """The jobs of job file @text (a string), in order."""
    glob, jobs, cur, name = {}, [], None, None
    sections = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in ';#':
            continue
        if line.startswith('['):
            if not line.endswith(']') or len(line) < 3:
                raise JobError(f'line {lineno}: not a section header: {line!r}')
            if name is not None and name != 'global':
                sections.append((name, cur))
            name = line[1:-1].strip()
            cur = glob if name == 'global' else dict(glob)
            continue
        if name is None:
            raise JobError(f'line {lineno}: {line!r} before any [section]')
        key, eq, val = line.partition('=')
        key, val = key.strip(), val.strip()
        if key in IGNORED:
            continue
        if key not in KNOWN:
            raise JobError(f'[{name}]: line {lineno}: {key}: not in what the model runs '
                           "(see 'pcmctl model --help')")
        if not eq and key not in ('time_based',):
            raise JobError(f'[{name}]: line {lineno}: {key} without a value')
        cur[key] = (val or '1', lineno)
    if name is not None and name != 'global':
        sections.append((name, cur))
    for n, opts in sections:
        try:
            jobs.append(Job(n, workload(opts)))
        except JobError as e:
            raise JobError(f'[{n}]: {e}') from None
    if not jobs:
        raise JobError('no job section')
    return jobs


def parse_file(path):
    try:
        with open(path, encoding='utf-8') as fh:
            return parse(fh.read())
    except OSError as e:
        raise JobError(e.strerror) from None


def describe(wl):
    """The workload in fio's words."""
    out = [f"rw={wl['rw']}", f"bs={wl['bs']}", f"iodepth={wl['iodepth']}",
           f"numjobs={wl['numjobs']}", f"size={wl['size']}"]
    if 'rwmixread' in wl and wl['rw'] in ('rw', 'randrw'):
        out.append(f"rwmixread={wl['rwmixread']}")
    if wl.get('ramp_ns'):
        out.append(f"ramp_time={wl['ramp_ns'] / 1e6:g}ms")
    if wl.get('runtime_ns'):
        out.append(f"runtime={wl['runtime_ns'] / 1e6:g}ms")
    if wl.get('ios'):
        out.append(f"number_ios={wl['ios']}")
    if wl.get('think_ns'):
        out.append(f"thinktime={wl['think_ns'] / 1e3:g}us/{wl.get('think_blocks', 1)}")
    return ' '.join(out)
