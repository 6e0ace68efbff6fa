# SPDX-License-Identifier: GPL-2.0-only
"""One fio job file per point: a warm-up job, then one job per repetition,
each its own reporting group behind a stonewall, so that one 'fio FILE'
runs the whole point and its JSON holds every repetition apart.  The file
is written under the run's directory (jobs/pNNN.fio) and can be rerun by
hand on the device the report's setup commands make."""
import os

from .spec import MIXED, RANDOM, size_word

DEVICE_NAME = 'char-dut'  # the device under test: dm-pcm or the dm-linear baseline
DEVICE = f'/dev/mapper/{DEVICE_NAME}'
MOUNT = '/tmp/pcm-char'
FIO_ARGS = ['--output-format=json+']  # json+: the latency histogram (bins) too


def job_text(spec, p):
    """The job file of point p, as text."""
    a = p.axes
    lines = [f'; dm-pcm characterization "{spec.name}", point {p.id}: {p.describe()}',
             f'; device: {DEVICE} (the dm-pcm device, or the dm-linear baseline), '
             f'{"raw" if a["target"] == "raw" else a["target"] + " mounted on " + MOUNT}',
             f'; run: fio {" ".join(FIO_ARGS)} {p.id}.fio',
             '[global]',
             'ioengine=libaio',
             f'direct={int(a["direct"])}',
             f'rw={a["rw"]}',
             f'bs={size_word(a["bs"])}',
             f'iodepth={a["iodepth"]}',
             f'numjobs={a["threads"]}',
             'group_reporting=1',
             # the request's whole latency, its submission too (results.latency())
             'lat_percentiles=1',
             'time_based=1',
             f'size={size_word(a["size"])}',
             'randrepeat=0']
    if a['rw'] in MIXED:
        lines.append(f'rwmixread={a["rwmixread"]}')
    if a['rw'] in RANDOM:
        lines.append('norandommap=1')
        if a['region'] < 100:
            # every random I/O to the file's first region percent
            lines.append(f'random_distribution=zoned:100/{a["region"]}')
    if a['target'] == 'raw':
        lines.append(f'filename={DEVICE}')
        if a['threads'] > 1:
            lines.append(f'offset_increment={size_word(a["size"])}')  # a region each
    else:
        lines += [f'directory={MOUNT}', 'filename_format=char.$jobnum']  # a file each
    if a['pattern'] == 'bursty':
        # bursts of spec.burst_ios requests, spec.burst_idle_us apart
        lines += [f'thinktime={spec.burst_idle_us}', f'thinktime_blocks={spec.burst_ios}']
    if a['warmup_ios']:
        # a count, not a time: the state it brings the device to (PSS's
        # full write cache) takes as many I/Os at any dilation
        lines += ['', '[warmup]', 'time_based=0', f'number_ios={a["warmup_ios"]}']
    elif spec.warmup:
        lines += ['', '[warmup]', f'runtime={round(spec.warmup * 1000)}ms']
    for r in range(1, spec.repetitions + 1):
        lines += ['', f'[rep{r}]', 'stonewall', 'new_group',
                  f'runtime={round(spec.runtime * 1000)}ms']
        if a['ramp']:
            # fio's pause between two jobs lets PSS's write cache drain:
            # each repetition refills it before it counts
            lines.append(f'ramp_time={round(a["ramp"] * 1000)}ms')
    return '\n'.join(lines) + '\n'


def write_jobs(spec, jobdir):
    """Every point's job file under jobdir: {point id: path}."""
    os.makedirs(jobdir, exist_ok=True)
    paths = {}
    for p in spec.points:
        path = os.path.join(jobdir, f'{p.id}.fio')
        with open(path, 'w', encoding='utf-8') as fh:
            fh.write(job_text(spec, p))
        paths[p.id] = path
    return paths
