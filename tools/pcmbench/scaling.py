# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench scaling

whether the timing model lets two CPUs work apart: 4 KiB random read and
write IOPS at QD1 and QD32 with one fio job and with two (pinned to one
vCPU each, each on its own half of the device) on dm-linear and on dm-
pcm with the model on and nothing to delay (channels:2, stripe: half the
rows, so each half is one channel; read_ns, write_ns, cmd_ns 1 ns), and
the same with tags:1024 (every request then holds the model's lock).
Scaling is IOPS with two jobs over IOPS with one; dm-pcm's is compared
with dm-linear's.  --cpus 2 (the default here).  Under icount the vCPUs
take turns on one instruction clock: two jobs cannot beat one, and what
scaling measures is the instructions each I/O costs with two CPUs
contending, spinning on locks included; --no-icount gives each vCPU a
host thread, for real parallelism (wall-clock figures that depend on the
host).
"""
from pcmlib.bench import pcm_create, fio_cmd, run_fio
from .common import RAM_MIB, sh, remove_devices, fresh_ramdisk, pcm_words, med, table
from .options import HOST, ICOUNT, ROUNDS, RUNTIME

NAME = 'scaling'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS, RUNTIME)   # its options' groups (options.py)


SCALING_JOB_MIB = 128  # each job's half of the ramdisk (fio covers 127 MiB of it)
SCALING_WORDS = {
    'dm-pcm': f'channels:2 stripe:{SCALING_JOB_MIB * 256} read_ns:1 write_ns:1 cmd_ns:1',
    'dm-pcm+tags': f'channels:2 stripe:{SCALING_JOB_MIB * 256} read_ns:1 write_ns:1 '
                   'cmd_ns:1 tags:1024',
}


def guest(args, runs):
    """One device at a time over the same ramdisk: 1 and 2 jobs, each job
    on its own 128 MiB (one channel of dm-pcm's two) and its own vCPU."""
    fresh_ramdisk()
    for rnd in range(args.rounds):
        for name in ('dm-linear', *SCALING_WORDS):
            if name == 'dm-linear':
                sh(f'dmsetup create bench-linear --table "0 {RAM_MIB * 2048} linear /dev/ram0 0"')
                dev = '/dev/mapper/bench-linear'
            else:
                dev = pcm_create('bench-pcm', pcm_words(SCALING_WORDS[name]))
            for rw in ('randread', 'randwrite'):
                for qd in (1, 32):
                    for jobs in (1, 2):
                        cmd = fio_cmd(dev, rw, qd, args.runtime)
                        cmd = [a for a in cmd if not a.startswith('--size=')] + [
                            f'--size={SCALING_JOB_MIB - 1}m', f'--numjobs={jobs}',
                            f'--offset_increment={SCALING_JOB_MIB}m', '--group_reporting',
                            '--cpus_allowed=0-1', '--cpus_allowed_policy=split']
                        r = run_fio(cmd)
                        r.update(device=name, rw=rw, qd=qd, jobs=jobs, round=rnd,
                                 cmd=' '.join(cmd),
                                 words=pcm_words(SCALING_WORDS.get(name, '')))
                        runs.append(r)
                        print(f'# round {rnd} {name:11} {rw:9} QD{qd:<2} {jobs} job(s) '
                              f'{r["iops"]:10.0f} IOPS', flush=True)
            remove_devices()


def summarize(res):
    rows = {}
    for r in res['runs']:
        rows.setdefault((r['rw'], r['qd'], r['device'], r['jobs']), []).append(r)
    lines = [f"kernel {res['kernel']}, {res['fio']}, {res['cpus']} vCPUs, {res['rounds']} "
             f"rounds of {res['runtime_s']} s, medians; each job on its own half "
             f"(dm-pcm: its own channel) and vCPU"]
    cells, summary = [], []
    for rw in ('randread', 'randwrite'):
        for qd in (1, 32):
            lin = {j: med(rows[(rw, qd, 'dm-linear', j)], 'iops') for j in (1, 2)}
            for dev in ('dm-linear', *SCALING_WORDS):
                iops = {j: med(rows[(rw, qd, dev, j)], 'iops') for j in (1, 2)}
                scale = iops[2] / iops[1]
                rel = scale / (lin[2] / lin[1])
                cells.append([f'{rw} QD{qd}', dev, f'{iops[1]:.0f}', f'{iops[2]:.0f}',
                              f'{scale:.3f}x', f'{rel:.3f}x', f'{iops[2] / lin[2]:.3f}x'])
                summary.append({'rw': rw, 'qd': qd, 'device': dev, 'iops_1job': iops[1],
                                'iops_2jobs': iops[2], 'scaling': scale,
                                'scaling_vs_dm_linear': rel,
                                'ratio_2jobs_to_dm_linear': iops[2] / lin[2]})
    lines += table(['workload', 'device', '1 job', '2 jobs', 'scaling', 'vs dm-linear',
                    '2 jobs vs dm-linear'], cells, '<<>>>>>')
    return '\n'.join(lines), summary
