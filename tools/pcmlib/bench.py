# SPDX-License-Identifier: GPL-2.0-only
"""fio on dm devices over the ramdisk, as pcm-bench measures: what its
modes (tools/pcmbench) share with a characterization's calibration
(pcmlib/calibrate.py, which pcmchar runs; pcmchar imports nothing of
pcmbench, the tool that runs it)."""
import os
import subprocess

from pcmlib import fio, status as pcmstatus

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RAM_MIB = 256
RAMP_S = 0.5  # fio's ramp before each measured run


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, text=True,
                          stdout=subprocess.PIPE, **kw).stdout


def pcm_length(backing, words):
    """The length pcmctl says is legal."""
    return int(sh(f'{TOP}/tools/pcmctl length {backing} {words}'))


def pcm_create(name, words, backing='/dev/ram0'):
    """dm-pcm over backing, as long as pcmctl says is legal."""
    sh(f'dmsetup create {name} --table "0 {pcm_length(backing, words)} pcm {backing} 0 '
       f'{len(words.split())} {words}"')
    return f'/dev/mapper/{name}'


def status(dev):
    name = os.path.basename(dev)
    return pcmstatus.parse_dmsetup(sh(f'dmsetup status {name}'), name)


def fio_cmd(dev, rw, qd, runtime, bs='4k', cpus=1, size_mib=RAM_MIB - 1, engine=None):
    """@engine: psync at QD1 and libaio deeper unless given."""
    engine = engine or ('psync' if qd == 1 else 'libaio')
    jobs = [f'--numjobs={cpus}', '--group_reporting'] if cpus > 1 else []
    return ['fio', '--name=bench', f'--filename={dev}', f'--rw={rw}', f'--bs={bs}',
            '--direct=1', f'--ioengine={engine}', f'--iodepth={qd}', *jobs,
            # in ms: fio reads a time without a unit as whole seconds, so
            # "0.5" was 0 (no ramp; and a runtime under 1 s is no runtime)
            '--time_based', f'--runtime={round(runtime * 1000)}ms',
            f'--ramp_time={round(RAMP_S * 1000)}ms',
            '--norandommap', '--randrepeat=0', f'--size={size_mib}m',
            '--output-format=json']


def run_fio(cmd):
    """fio.figures() of fio command @cmd (fio_cmd()'s)."""
    return fio.figures(fio.run(cmd))


def measure(runs, rnd, name, dev, rw, qd, args, extra=None, bs='4k', size_mib=None,
            engine=None):
    cmd = fio_cmd(dev, rw, qd, args.runtime, bs, args.cpus,
                  RAM_MIB - 1 if size_mib is None else size_mib, engine)
    r = run_fio(cmd)
    r.update(device=name, rw=rw, qd=qd, bs=bs, cpus=args.cpus, round=rnd,
             cmd=' '.join(cmd), **(extra or {}))
    runs.append(r)
    print(f'# round {rnd} {name:9} {bs:>4} {rw:9} QD{qd:<2} {r["iops"]:10.0f} IOPS',
          flush=True)
