# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench app SPEC: PostgreSQL's pgbench on ext4 over each device of SPEC.

How much of PCM's device-level advantage survives a database's I/O, its
write-ahead log and fsyncs included?  SPEC (TOML; tools/app/pgbench.toml)
names the dm-pcm devices and the workload:

    workload = "tpcb-like"   # pgbench's builtin: tpcb-like, simple-update,
                             # select-only
    memory = "64m"           # memory.max of the server's cgroup: its page
                             # cache and its own memory (absent: no cgroup,
                             # the guest's whole memory caches the database)
    data_ratio = 4           # with memory: the database at least this x
                             # memory (the scale chosen from it if not given)
    shared_buffers = "16m"   # PostgreSQL's cache (default: memory / 4 with a
                             # cgroup, else PostgreSQL's 128 MB)
    # scale = 4              # pgbench -i -s (15.68 MB on disk per unit):
                             # with memory, chosen from data_ratio if absent
    clients = 4              # pgbench -c
    threads = 1              # pgbench -j
    duration = 10            # s of pgbench -T per device (guest clock), measured
    warmup = 0               # s of pgbench -T before it on the same server, not
                             # measured (0: none)
    ramdisk = "1g"           # the brd under every device
    baseline = true          # dm-linear over the same ramdisk, same boot
    devices = ["preset:none", "preset:pss"]
    dilation = 16            # as characterize: every dm-pcm device dilation:K
    calibrate = true         # as characterize: overhead_ns measured first
    [short]                  # what --short runs instead (the VM suite):
    memory = "32m"           # scale, clients, threads, duration, warmup,
    shared_buffers = "4m"    # memory, data_ratio, shared_buffers
    data_ratio = 2
    clients = 2
    duration = 2
    warmup = 0

A database that fits in the guest's page cache is read from memory after
its first pass: the device then serves only writes, and its reads' speed
is not in the result.  With memory set, the server (pg_ctl and every
process it starts) runs in a memory cgroup (cgroup v2, /sys/fs/cgroup/
pcm-app, made afresh for each device, no swap) whose memory.max bounds
its page cache together with its own memory, while the ramdisk under the
device is not bounded; the database is data_ratio times larger.  Each
row then gives the device's reads and writes per transaction, the share
of its modeled time that was reads and writes, and the caches' hit ratio
(PostgreSQL's shared_buffers from pg_stat_database, the page cache's from
the blocks it read from the kernel against the bytes the device served);
## The cache gives the cgroup's limit, peak, page cache, the times it hit
its limit and the file pages read again.  A run in which the device
served fewer than READS_REACHED reads per transaction says in its
verdict that its reads did not reach the device.

In one boot, with the characterization's dilation and calibration
(characterize --help; pcmlib/clock.py's defaults, the command line's
--dilation, --calibrate, --no-calibrate, --overhead-ns over the spec's),
each device in turn (the dm-pcm devices, then dm-linear) gets a fresh
ext4 (4 KiB blocks), a copy of one cluster (initdb's, as user postgres,
made once per machine in /var/cache/dm-pcm by tools/install-deps or by
the host part before the VM boots: a minute of a TCG guest's CPU, two
seconds of the host's; a VM's guest, whose /var/cache is its own, gets
the host's copy beside the run's directory; else the guest makes it,
once per run), a server
started by pg_ctl -w (fsync on, its unix socket in a directory
of the run's, no TCP), pgbench -i, the page cache dropped, the warm-up (pgbench -T warmup,
not measured: the cache filled, the first checkpoints; its progress
kept), the device's counters reset, pgbench -T duration with a
per-transaction log (-l) and its progress each second (-P 1), the
server stopped (its log, with each
connection's, and the kernel's messages kept: logs/dK-server.log,
dK-dmesg.txt), the file system unmounted and checked (fsck -fn) and the
device removed.  PostgreSQL's programs and libraries stay mapped in the
guest for the whole run (resident(): a VM reads them over 9p, and a page
faulted in during the measured run jumps an icount guest's clock); the
major page faults of each measured run are counted (run.json), and so
are its requests to the 9p root, by process (the 9p_client_req
tracepoint, in a trace instance of its own, where 9p is loaded): the
socket, the per-transaction logs and the cluster's copy are in a tmpfs
mounted on /tmp/pcm-app for the run (a VM's /tmp is an overlay on the
host's, over 9p), and libpq's password file is a path there
(PGPASSFILE): without it, every connection looks up the user's home
(getpwuid, /etc/passwd) and ~/.pgpass over 9p, and an icount guest's
clock jumps while it waits (10.4 s of pgbench's second connection in
the run of 6479905).  The report gives each run's first and last half
TPS (pgbench -P 1): whether the rate was steady.
The run's directory (DIR/app/NAME-KERNEL, then .2, .3, ...:
pcmchar/rundir.py) gets run.json, pgbench's output and logs (logs/),
app-table.csv and .json, figures/app-tps.png with its CSV, and report.md:
the one table (device, TPS, latency, where the time went: the device's
modeled read and write time per transaction, from its status counters),
the latency percentiles from the per-transaction logs, the device's own
view (IOPS, the ranks' utilisation, wear, gap moves, ECC corrections),
a verdict per device (device-bound, or host-bound with its evidence;
failed where no transaction completed: that device's run failed, and
pcm-bench exits 1) and the commands.  Every figure is on the device's clock (TPS x K, latencies
/ K: the guest as a host K times faster) and says its clock, dilation
and calibration.  A bad spec (unknown workload, zero clients, no
devices, a device word the module refuses) is refused here, before any
VM boots.  --short runs the spec's [short] settings; --no-figures draws
no PNG (matplotlib under TCG takes minutes).

program = "db_bench" (RocksDB's: fillrandom with a synced WAL, then
readrandom and readwhilewriting on the filled database) or "bdb-swap"
(tools/app/bdb-swap.c, Onyx's Figure 5: tools/app/bdb.toml) runs another
program instead of pgbench (its keys: tools/pcmbench/appwork.py), in the
same per-device flow (run_work_device): the report gives ops/s per
device and benchmark.

How long a run takes on a 2-core host without KVM (the report's first
lines give its own wall time): tools/app/pgbench-select.toml, 3 devices
at scale 9 with 10 + 30 s of pgbench each, 1,785 s in an icount VM
beside one or two other VMs (Documentation/characterization/app-select);
the scale-2 pgbench run, 5 devices with 30 + 60 s each, 7,024 s beside
up to four (../app); --short of a one-device spec in the VM suite,
200 to 460 s (tests/vm/37-app.sh, 40-app-kv.sh).  pgbench.toml at scale
18 and db_bench.toml, bdb.toml at full size have not been run: their
loads (pgbench -i, fillrandom's synced puts) take tens of minutes per
device under icount.
"""
# The package, along tools/pcmchar's seams (its docstring above is
# 'pcm-bench app --help'):
#   spec.py      the spec: AppSpec, loads()
#   postgres.py  PostgreSQL and pgbench: the programs, the cluster, their output read
#   guest.py     what runs in the VM: AppGuest (work.py: WorkCtx, appwork.py's programs'
#                way in; probes.py: diskstats, page faults, 9p requests, resident files)
#   model.py     pcmctl model on the host: each device at QD1, the run's wear replayed
#   results.py   the figures, a row per device (verdict.py: its verdict)
#   tables.py    report.md's tables; report.py: finish() and headline(); figures.py
#   host.py      run(): the spec checked, then the guest's part or the host's
from ..options import HOST, ICOUNT, SPEC, RUN_DIR, DILATION, CALIBRATION
from .host import run

__all__ = ['NAME', 'HELP', 'PARENTS', 'add_args', 'run']   # main.py's

NAME = 'app'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, SPEC, RUN_DIR, DILATION, CALIBRATION)   # options.py's groups


def add_args(p):
    """app's own options."""
    p.add_argument('--short', action='store_true',
                   help='the spec\'s [short] settings (scale, clients, threads, duration): the '
                   'VM suite\'s run')
    p.add_argument('--no-figures', dest='figures', action='store_false',
                   help='draw no PNG (matplotlib under TCG takes minutes)')
