# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench characterize

the PSD paper's study, Onyx's and PSS's figures, on any spec: SPEC (TOML;
tools/pcmchar/spec.py documents it, and tools/char/*.toml are examples)
names dm-pcm tables and the axes (block size, file size, I/O depth,
read/write mix, fullness, bursty or sustained, threads, access region,
raw or ext3 or ext4, scheduler, direct or buffered); the devices' words
go through the module's own parser (libpcm) before any VM boots, and a
word it refuses is named with its message.  Every point runs a warm-up
and N repetitions on each dm-pcm device and on a dm-linear baseline over
the same ramdisk, in the same boot.  The run's directory
(DIR/char/NAME-KERNEL; a rerun gets NAME-KERNEL.2, .3, ...: an earlier
run is never removed) gets the fio job files (jobs/), fio's JSON (raw/),
points.csv, the figures (figures/*.png, each with its CSV) and report.md
with the paper-vs-dm-pcm table, also as paper-table.csv and
paper-table.json; the table is printed too.  --trace records blktrace on
the device and on the ramdisk below around every run and summarizes it
(btt's Q2C above against Q2C and D2C below, blkparse's remaps: where dm
sent each piece) in the report and trace/.  --redraw draws the figures
and writes the report again from the newest run there (--run-dir DIR:
from that one).  Each paper figure gets the model's figure for the same
point (libpcm), the errors against the paper and the model, and a
verdict (reproduced, host-bound, model-differs-from-paper, not
reproduced) with its reason.  --dilation K creates every dm-pcm device
with dilation:K and puts what fio measured on the device's clock
(latencies / K, rates x K); --calibrate measures this host's completion
overhead per direction at the run's start (at K) and sets overhead_ns
on each point's device, --overhead-ns READ[,WRITE] sets one measured
before (pcm-bench timing), --no-calibrate neither (else the spec's
dilation, calibrate and overhead_ns).  Every figure says its clock
(icount or real time), dilation and calibration ("uncalibrated").
Dilation 8 and calibration are the defaults in the icount VM, dilation
1 with --native or --no-icount (pcmlib/clock.py).  On a real host,
--native --backing-dev DEV --destroy-data runs every point over block
device DEV (an NVMe namespace, a loop device) instead of a ramdisk,
after a dm-linear probe shows it is faster than every device the spec
models (else it refuses, saying by how much).
"""
import os
import shutil
import stat
import sys
import time

from pcmlib import clock, vm
from .common import TOP, VM_TIMEOUT
from .options import HOST, ICOUNT, SPEC, RUN_DIR, DILATION, CALIBRATION

NAME = 'characterize'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, SPEC, RUN_DIR, DILATION, CALIBRATION)   # options.py's groups
ENTRY = os.path.join(TOP, 'tools', 'pcm-bench')


def add_args(p):
    """characterize's own options."""
    p.add_argument('--redraw', action='store_true',
                   help='only the figures and report again, from the newest run of SPEC in the '
                   'output directory (or --run-dir\'s); a run without --redraw never '
                   'overwrites an earlier one: it gets NAME-KERNEL.2, .3, ...')
    p.add_argument('--backing-dev', metavar='DEV',
                   help='with --native: every point over block device DEV (an NVMe namespace, '
                   'a loop device) instead of a ramdisk; its data is destroyed, so '
                   '--destroy-data must say so; refused unless 4 KiB QD1 I/O through dm-linear '
                   'over it is faster than every device of the spec models it')
    p.add_argument('--destroy-data', action='store_true',
                   help='with --backing-dev: yes, overwrite DEV')
    p.add_argument('--trace', action='store_true',
                   help='blktrace on the device and its backing device around every run '
                   '(btt: Q2C above, Q2C and D2C below; the remapped offsets)')


def char_run_base(args, spec):
    """DIR/char/NAME-KERNEL: the first run's directory; later runs of the
    same spec get NAME-KERNEL.2, .3, ... (pcmchar/rundir.py)."""
    kernel = os.uname().release if args.native else args.kernel
    return os.path.join(os.path.abspath(args.outdir), 'char', f'{spec.name}-{kernel}')


def host_characterize(args, spec, spec_text):
    """The guest runs the points; here the statistics, figures and report
    (--redraw: only these, from the newest run there, or --run-dir's).
    A new run never touches an earlier one: it gets a directory of its own."""
    from pcmchar import report, rundir
    base = char_run_base(args, spec)
    if args.redraw:
        run_dir = os.path.abspath(args.run_dir) if args.run_dir else rundir.newest(base)
        if run_dir is None:
            print(f'pcm-bench: --redraw: no run of {spec.name} in {os.path.dirname(base)}',
                  file=sys.stderr)
            return 1
    else:
        earlier = rundir.runs(base)
        run_dir = rundir.new(base)
        if earlier:
            print(f'pcm-bench: earlier runs kept: {", ".join(earlier)}', flush=True)
    # matplotlib's font cache, kept between runs (its default, ~/.config,
    # is read-only in the VM suite)
    os.environ.setdefault('MPLCONFIGDIR', os.path.join(os.path.dirname(run_dir), '.matplotlib'))
    extra, rc = {}, 0
    if not args.redraw:
        spec_copy = os.path.join(run_dir, 'spec.toml')
        with open(spec_copy, 'w', encoding='utf-8') as fh:
            fh.write(spec_text)   # with the command line's dilation and calibration
        icount = not args.no_icount
        vm_opts = ['--cpus', str(args.cpus), '--memory', '2G', '--timeout', str(VM_TIMEOUT)]
        vm_opts += ['--icount'] if icount else []
        inner = [ENTRY, '--guest', '--run-dir', run_dir, 'characterize',
                 spec_copy] + (['--trace'] if args.trace else [])
        inner += ['--backing-dev', args.backing_dev, '--destroy-data'] if args.backing_dev else []
        cal = ('calibrated at the start' if spec.calibrate else
               f'overhead_ns read {spec.overhead_ns["read"]}, write {spec.overhead_ns["write"]}'
               if spec.overhead_ns else 'uncalibrated')
        print(f'pcm-bench: {len(spec.points)} points, {spec.runs()} runs with the baseline\'s, '
              f'about {spec.seconds():.0f} s of fio (guest time); dilation {spec.dilation}, '
              f'{cal}; results in {run_dir}', flush=True)
        start = time.monotonic()
        rc = vm.call_with_progress(vm.tool_vm_run(args, os.path.dirname(run_dir), vm_opts) +
                                   ['--'] + inner, start)
        extra = {'icount': icount and not args.native, 'host_wall_s': time.monotonic() - start}
    if rc or not os.path.exists(os.path.join(run_dir, 'run.json')):
        print(f'pcm-bench: the characterization failed (exit {rc}) or, with --redraw, has '
              f'not run: no {run_dir}/run.json', file=sys.stderr)
        return 1
    path, figs, rows, run = report.finish(spec, run_dir, **extra)
    print(report.headline_text(rows, run) if rows else 'no point measures a paper figure')
    print(f"wall time {run.get('host_wall_s', float('nan')):.0f} s "
          f"(guest clock {run['wall_s']:.0f} s, "
          f"fio {run['fio_s']:.0f} s)")
    print(f'report: {path}')
    print(f"paper table: {os.path.join(run_dir, 'paper-table.csv')}, .json")
    for png, _ in figs.values():
        print(f'figure: {png}')
    return 0


def run_clock(args, text):
    """The dilation and calibration of a run: the command line's, else the
    spec's, else the defaults (pcmlib/clock.py: dilation 8 in an icount
    VM, 1 on a real host or without icount; calibrated).  A dict for
    override_text(), with 'defaults': the keys that took the default."""
    import tomllib
    try:
        keys = set(tomllib.loads(text))
    except tomllib.TOMLDecodeError:
        keys = set()    # loads() says what is wrong with it
    out = {'dilation': args.dilation, 'calibrate': args.calibrate,
           'overhead_ns': args.overhead_ns, 'defaults': set()}
    if args.dilation is None and 'dilation' not in keys:
        out['dilation'] = clock.default_dilation(args.native, not args.no_icount)
        out['defaults'].add('dilation')
    if args.calibrate is None and args.overhead_ns is None and \
            not keys & {'calibrate', 'overhead_ns'}:
        out['calibrate'] = True
        out['defaults'].add('calibrate')
    return out


def backing_refusal(args, mounts='/proc/mounts'):
    """Why --backing-dev DEV is refused before anything runs, or None: it
    needs --native (a VM has no such device), --destroy-data (every point
    writes over it), a block device, and none of it mounted."""
    dev = args.backing_dev
    if not args.native:
        return f'--backing-dev {dev}: on a real host only (--native); a VM runs over a ramdisk'
    if not args.destroy_data:
        return (f'--backing-dev {dev}: its data will be destroyed (every point writes over '
                f'it); add --destroy-data to say so')
    try:
        if not stat.S_ISBLK(os.stat(dev).st_mode):
            return f'--backing-dev {dev}: not a block device'
    except OSError as e:
        return f'--backing-dev {dev}: {e.strerror}'
    real = os.path.realpath(dev)
    base = os.path.basename(real)
    try:
        with open(mounts, encoding='utf-8') as fh:
            for line in fh:
                src = os.path.realpath(line.split()[0]) if line.startswith('/') else ''
                if src == real or (src and os.path.basename(src).startswith(base)):
                    return f'--backing-dev {dev}: {src} is mounted on {line.split()[1]}'
    except OSError:
        pass
    return None


def run(args, ap):
    """characterize SPEC: the spec checked (on the host with libpcm too),
    then the guest's part (--guest) or the host's."""
    from pcmchar import spec as pspec
    if not args.spec:
        ap.error('characterize needs a SPEC file (e.g. tools/char/tiny.toml)')
    if not args.guest:
        from pcmlib import libpcm
        if libpcm.lib_stale() and not shutil.which(os.environ.get('CC', 'cc')):
            # a fresh machine: the compiler libpcm.so needs comes with the
            # packages the VM runner would install next anyway
            try:
                vm.install_deps(args.native)
            except vm.VmError as e:
                print(f'pcm-bench: {e}', file=sys.stderr)
                return 1
    try:
        # on the host, the devices' words through the module's own parser
        # (libpcm) before any VM boots; in the guest they were
        with open(args.spec, encoding='utf-8') as fh:
            text = fh.read()
        if not args.guest:
            text = pspec.override_text(text, **run_clock(args, text))
        spec = pspec.loads(text, os.path.splitext(os.path.basename(args.spec))[0],
                           tables=not args.guest)
    except OSError as e:
        ap.error(f'{args.spec}: {e.strerror}')
    except pspec.SpecError as e:
        ap.error(f'{args.spec}: {e}')
    if args.backing_dev:
        why = backing_refusal(args)
        if why:
            ap.error(why)
    if args.guest:
        from pcmchar import guest
        guest.run(spec, args.run_dir, log=lambda m: print(m, flush=True), tracing=args.trace,
                  backing_dev=args.backing_dev)
        return 0
    return host_characterize(args, spec, text)
