# SPDX-License-Identifier: GPL-2.0-only
"""What dm-pcm's timing model (pcmctl model, on the host) says of an app
run: each device alone at QD1 (model_qd1) and the lifetime the measured
run's writes leave (lifetime: its blktrace replayed)."""
import json
import os
import subprocess

from ..common import TOP


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
