# SPDX-License-Identifier: GPL-2.0-only
"""fio, run and read: the one place that runs fio for its JSON report
(run(): --output=FILE, never stdout) and the one that reads a report
(loads(), load() and the accessors below), for pcm-bench, pcmchar,
tools/demo, tools/soak, tools/ecc-profile and, through the command line
below, the VM tests.

fio's latencies of one side (read, write) of a job, as it names them:
  slat_ns  submission: from fio's issue to the submit call's return
  clat_ns  completion: from the submit call's return to the completion
  lat_ns   the whole request: from fio's issue to the completion
each with min, max, mean, and 'percentile' (fio's N-th percentile keyed
'N.000000') where fio recorded them: clat's by default, lat's with
lat_percentiles=1; json+ adds 'bins'.  A figure this project names
clat_* is fio's clat, lat_* fio's lat (libaio's io_submit() is in lat,
not in clat: Documentation/characterization/RESULTS.md).

  python3 tools/pcmlib/fio.py REPORT [--sum] FIELD...
        FIELD of the report's first job (--sum: summed over its jobs),
        space-separated on one line; exit 1 if one is missing.  FIELD:
        KEY (error), SIDE.KEY (write.io_bytes) or SIDE.LAT.STAT
        (read.clat.min, read.lat.mean, read.clat.p50, write.clat.p99.9).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile

SIDES = ('read', 'write')


class FioError(RuntimeError):
    """fio failed, or its report is not the JSON expected."""


def loads(text):
    """The report in @text, what fio wrote to --output: fio writes its
    notices (log_info(), "fio: ...") to that file too, before the JSON,
    so the report starts at the first '{'."""
    start = text.find('{')
    if start < 0:
        raise FioError('no JSON in fio output')
    try:
        return json.loads(text[start:])
    except json.JSONDecodeError as e:
        raise FioError(f'fio output is not JSON: {e}') from e


def load(path):
    """The report fio wrote to the file @path (loads())."""
    with open(path, encoding='utf-8') as fh:
        return loads(fh.read())


def run(cmd, cwd=None):
    """Run the fio command @cmd (an argv list, or a shell command line;
    without --output) with its report sent to a file of its own, where
    nothing else fio or the job prints lands in it; the report.
    FioError if fio fails; its stderr is the caller's."""
    with tempfile.TemporaryDirectory(prefix='pcm-fio-') as tmp:
        out = os.path.join(tmp, 'report.json')
        shell = isinstance(cmd, str)
        argv = f'{cmd} --output={shlex.quote(out)}' if shell else [*cmd, f'--output={out}']
        res = subprocess.run(argv, shell=shell, cwd=cwd, stdout=subprocess.DEVNULL)
        if res.returncode:
            shown = cmd if shell else shlex.join(cmd)
            raise FioError(f'"{shown}" failed (exit {res.returncode})')
        return load(out)


def prefetch():
    """fio and the shared libraries it loads (libaio among them), read
    once into the guest's page cache.  Read over 9p while a job starts,
    they would idle an icount guest, whose clock then jumps to its next
    timer, again and again while the loaded host answers, and fio gives
    up on a job whose start took its timeout ("job startup hung?")."""
    subprocess.run('f=$(command -v fio) && cat "$f" $(ldd "$f" | awk \'$3 ~ /^\\// '
                   '{print $3}\') > /dev/null', shell=True, check=True)


def jobs(report):
    """The report's jobs (one per reporting group with group_reporting)."""
    found = report.get('jobs')
    if not found:
        raise FioError('no job in the fio report')
    return found


def moved(job):
    """The side of @job that moved data: its reads if it read any, else
    its writes (a job of one direction)."""
    return job['read'] if job['read']['io_bytes'] else job['write']


def lat(side, kind):
    """fio's @kind latency ('slat', 'clat' or 'lat') of @side, ns: min,
    max, mean, 'percentile' and 'bins' where fio recorded them; {} if
    fio reported none."""
    return side.get(f'{kind}_ns') or {}


def percentile_ns(stats, pct):
    """fio's @pct-th percentile (ns) of a latency (lat()), None where fio
    recorded none."""
    return stats.get('percentile', {}).get(f'{pct:f}')


def figures(report):
    """pcm-bench's figures of one run (its jobs one group: group_reporting)
    from the side that moved data: IOPS, fio's clat mean and median and
    fio's lat mean (ns), and fio's CPU share."""
    job = jobs(report)[0]
    side = moved(job)
    clat = lat(side, 'clat')
    return {'iops': side['iops'], 'clat_mean_ns': clat['mean'],
            'lat_mean_ns': lat(side, 'lat')['mean'],
            'clat_median_ns': percentile_ns(clat, 50),
            'fio_cpu_pct': job['usr_cpu'] + job['sys_cpu']}


def field(job, path):
    """@path of @job (the command line's FIELD); KeyError if missing."""
    parts = path.split('.', 2)
    if len(parts) < 3:
        value = job
        for key in parts:
            value = value[key]
        return value
    side, kind, stat = parts
    stats = lat(job[side], kind)
    value = percentile_ns(stats, float(stat[1:])) if stat.startswith('p') else stats.get(stat)
    if value is None:
        raise KeyError(path)
    return value


def main(argv=None):
    ap = argparse.ArgumentParser(description='FIELDs of a fio JSON report (its first job)')
    ap.add_argument('report', help="the file fio wrote (--output-format=json --output=FILE)")
    ap.add_argument('--sum', action='store_true', help='each FIELD summed over the jobs')
    ap.add_argument('fields', nargs='+', metavar='FIELD')
    a = ap.parse_args(argv)
    try:
        found = jobs(load(a.report))
        vals = [sum(field(j, f) for j in found) if a.sum else field(found[0], f)
                for f in a.fields]
    except (OSError, KeyError, ValueError, TypeError, FioError) as e:
        print(f'fio.py: {a.report}: {type(e).__name__}: {e}', file=sys.stderr)
        return 1
    print(' '.join(str(v) for v in vals))
    return 0


if __name__ == '__main__':
    sys.exit(main())
