# SPDX-License-Identifier: GPL-2.0-only
"""What runs in the VM (or with --native) for pcm-bench app: AppGuest,
one run of an AppSpec: pcmchar.guest.Guest's ramdisk, calibration and
devices, and on each device in turn ext4, then PostgreSQL and pgbench
(run_device) or a program of appwork.py through a WorkCtx
(run_work_device); run.json's figures."""
import glob
import json
import os
import subprocess
import time

from .postgres import (CACHE, initdb, latency_figures, parse_pgbench, parse_progress, pg_bin,
                       pg_timers, read_logs, shared_template, template_ok, template_path)
from .probes import P9Trace, disk_stat, p9_text, resident, vmstat_faults
from .spec import LINEAR

CGROUP = '/sys/fs/cgroup/pcm-app'   # the server's memory cgroup, one per device's run
WORK = '/tmp/pcm-app'   # the socket's directory and the mount point (the guest's /tmp)
MOUNT = f'{WORK}/mnt'
SOCK = f'{WORK}/sock'
PGPASSFILE = f'{WORK}/pgpass'   # libpq's, absent: no home directory looked up
BT_DIR = f'{WORK}/bt'   # blktrace's tmpfs


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
        return self.unmount(path, r)

    def unmount(self, path, r):
        """The file system off @path, checked (fsck.ext4 -fn), the device
        removed; what they gave goes into @r, which is returned."""
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
        from .work import WorkCtx   # (work.py imports this module's paths)
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
        return self.unmount(path, r)
