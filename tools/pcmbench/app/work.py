# SPDX-License-Identifier: GPL-2.0-only
"""WorkCtx: what a program of appwork.py (db_bench, bdb-swap) runs on a
device through, in AppGuest.run_work_device: sh(), remount(), and
measure(), one measured phase with the device's, the block layer's, the
memory cgroup's and the process's own figures."""
import os
import subprocess
import time

from .guest import CGROUP, MOUNT, WORK
from .probes import disk_stat, proc_io, vmstat_faults
from .spec import LINEAR


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
