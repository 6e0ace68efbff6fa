# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench: benchmarks of dm-pcm against baselines from the same boot.

Options go before or after MODE; 'pcm-bench MODE --help' says what MODE
measures and lists the options it uses.  Creations and messages that are
timed go straight through the ioctls (tools/pcmlib/dmioctl.py), not
dmsetup, whose exec would be in the interval.

The host side boots an icount VM (-icount shift=0,sleep=off: guest time
follows instructions, so figures depend on the code, not on how busy the
host is; 1 vCPU unless --cpus, more run round-robin on one host thread,
on the one instruction clock), runs tools/pcm-bench inside with --guest,
and prints a table of medians over the rounds with ratios to dm-linear.
characterize, timing, calibrate and trace run their dm-pcm devices at
dilation:8 under icount (1 with --native or --no-icount; --dilation K)
and put fio's figures on the device's clock (latencies / K, rates x K):
a 1-vCPU icount guest is a slow host, and dilation makes it one 8 times
faster (dm-pcm.rst, "Time dilation"); characterize also calibrates by
default: it measures this host's completion overhead per direction at
its start and sets it as overhead_ns (--no-calibrate: not).
Results, with the kernel version and the exact fio command lines, go to
build/bench/<mode>-<kernel>.json (--outdir).  Never a pass/fail test: a
benchmark.  One module per mode in tools/pcmbench/; what they share is
common.py and, with the characterization, tools/pcmlib/bench.py (dm
devices, fio), calibrate.py and fio.py (fio run and its JSON read).
"""
import argparse
import json
import os
import subprocess
import sys
import time

from pcmlib import clock, vm, words as pwords
from . import (app, barriers, bigdev, calibrate, characterize, counters, ecc, passthrough,
               scaling, startgap, timing, trace)
from .common import RAM_MIB, TOP, VM_TIMEOUT, pcm_words, sh

# the modes measured in a VM, in the order --help lists them
MODES = {m.NAME: m for m in (passthrough, scaling, ecc, startgap, barriers, timing, calibrate,
                             bigdev, counters, trace)}
ENTRY = os.path.join(TOP, 'tools', 'pcm-bench')
# the options each mode uses (the others are accepted, as they always
# were, and left out of its --help)
USES = {'passthrough': {'runtime', 'rounds', 'cpus', 'pcm_words', 'bs', 'no_icount'},
        'scaling': {'runtime', 'rounds', 'cpus', 'no_icount'},
        'ecc': {'runtime', 'rounds', 'cpus', 'pcm_words', 'no_icount'},
        'startgap': {'runtime', 'rounds', 'cpus', 'no_icount'},
        'barriers': {'rounds', 'cpus', 'no_icount'},
        'timing': {'runtime', 'rounds', 'cpus', 'no_icount', 'dilation'},
        'calibrate': {'runtime', 'rounds', 'cpus', 'no_icount', 'dilation'},
        'bigdev': {'rounds', 'cpus'},
        'counters': {'runtime', 'rounds', 'cpus', 'pcm_words', 'no_icount'},
        'trace': {'rounds', 'cpus', 'no_icount', 'dilation'},
        'characterize': {'cpus', 'no_icount', 'trace', 'redraw', 'run_dir', 'dilation',
                         'calibrate', 'overhead_ns', 'backing_dev', 'destroy_data'},
        'app': {'cpus', 'no_icount', 'run_dir', 'dilation', 'calibrate', 'overhead_ns', 'short',
                'figures'}}
HOST_OPTS = {'native', 'kernel', 'outdir', 'no_build'}  # vm.tool_args': every mode's
# the modes whose devices run at a dilation (default: pcmlib/clock.py's)
DILATED = ('timing', 'calibrate', 'trace')
SHORT = {'passthrough': 'random IOPS at QD1 and QD32 on brd, dm-linear and dm-pcm, no delays',
         'scaling': 'whether the timing model lets two CPUs work apart',
         'ecc': 'what ECC costs: dm-linear, dm-integrity, dm-pcm without and with ecc:bch',
         'startgap': 'random write IOPS and latency against the gap interval, no model',
         'barriers': 'what gap moves cost the backing device: bios, flushes, FUA',
         'timing': 'how close completions come to the model; calibration; presets at QD1',
         'calibrate': 'this host\'s completion overhead per direction (overhead_ns), saved',
         'bigdev': 'dm-pcm over a 1 TiB NVMe namespace: create time, memory, move_gap',
         'counters': 'what the counters and tracepoints (disabled) cost: dm-pcm against '
                     'the same module without them, same boot',
         'trace': 'pcmctl model --trace against the kernel\'s modeled latencies, request by '
                  'request, at QD1 and QD32 on pss',
         'characterize': 'a spec\'s study (PSD, Onyx, PSS figures): points, figures, report',
         'app': 'PostgreSQL\'s pgbench on ext4 over each device: TPS, latency, where the time '
                'went'}
USAGE = ('pcm-bench [OPTIONS] MODE [OPTIONS]\n'
         '       pcm-bench [OPTIONS] characterize SPEC [--trace] [--redraw [--run-dir DIR]]\n'
         '                 [--dilation K] [--calibrate | --no-calibrate | --overhead-ns R[,W]]\n'
         '       pcm-bench [OPTIONS] app SPEC [--short] [--no-figures] [--dilation K]\n'
         '                 [--calibrate | --no-calibrate | --overhead-ns R[,W]]\n'
         '       pcm-bench MODE --help')


def guest(args):
    runs = []
    MODES[args.mode].guest(args, runs)
    res = {'kernel': os.uname().release,
           'fio': sh('fio --version').strip(),
           'icount': 'icount' in open('/proc/cmdline').read() or args.icount,
           'cpus': os.cpu_count(),
           'date': time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
           'runtime_s': args.runtime, 'rounds': args.rounds, 'runs': runs,
           'pcm_words': (ecc.ecc_words(args) if args.mode == 'ecc'
                         else trace.words(args.dilation or 1) if args.mode == 'trace'
                         else pcm_words(args.pcm_words))}
    with open(args.out, 'w') as fh:
        json.dump(res, fh, indent=1)


def host(args):
    outdir = os.path.abspath(args.outdir)
    os.makedirs(outdir, exist_ok=True)
    tmp = os.path.join(outdir, f'{args.mode}-raw.json')
    if os.path.exists(tmp):
        os.unlink(tmp)
    icount = args.mode != 'bigdev' and not args.no_icount
    if args.mode in DILATED and args.dilation is None:
        args.dilation = clock.default_dilation(args.native, icount)
        print(f'pcm-bench: dilation {args.dilation} ({clock.name(icount and not args.native)}'
              f'; --dilation K to choose another)', flush=True)
    inner = [ENTRY, '--guest', '--out', tmp,
             '--runtime', str(args.runtime), '--rounds', str(args.rounds),
             '--cpus', str(args.cpus), '--bs', args.bs, '--pcm-words', args.pcm_words]
    inner.append(args.mode)
    inner += ['--dilation', str(args.dilation)] if args.dilation else []
    vm_opts = ['--cpus', str(args.cpus), '--memory', '2G', '--timeout', str(VM_TIMEOUT)]
    if args.mode == 'bigdev':
        vm_opts += ['--nvme', str(bigdev.BIGDEV_MIB)]  # and no icount: a host file behind
    elif icount:
        vm_opts.append('--icount')
    cmd = vm.tool_vm_run(args, outdir, vm_opts)
    if hasattr(MODES[args.mode], 'host_prepare') and not args.no_build:
        MODES[args.mode].host_prepare(args, os.uname().release if args.native
                                      else vm.resolve_kernel(args.kernel))
    if not args.native and icount:
        inner.insert(2, '--icount')
    rc = subprocess.call(cmd + ['--'] + inner, stdin=subprocess.DEVNULL)
    if rc or not os.path.exists(tmp):
        print(f'pcm-bench: the benchmark run failed (exit {rc})', file=sys.stderr)
        return 1
    with open(tmp) as fh:
        res = json.load(fh)
    table, summary = MODES[args.mode].summarize(res)
    res['summary'] = summary
    # every printed figure says what it is measured on
    res['conditions'] = clock.label(bool(res.get('icount')), args.dilation or 1, {
        'timing': 'raw and calibrated, as its columns say',
        'calibrate': 'the calibration itself'}.get(args.mode, 'uncalibrated'))
    table = res['conditions'] + '\n' + table
    variant = f'-{args.cpus}cpu' if args.cpus > 1 else ''
    variant += '-no-icount' if args.no_icount else ''
    variant += f'-dilation{args.dilation}' if args.dilation and args.dilation != 1 else ''
    final = os.path.join(outdir, f"{args.mode}{variant}-{res['kernel']}.json")
    with open(final, 'w') as fh:
        json.dump(res, fh, indent=1)
    os.unlink(tmp)
    print(table)
    print(f'results: {final}')
    return 0


# --- the command line ---------------------------------------------------------

def dilation_k(text):
    """argparse type of --dilation: an integer from 1 to 1000."""
    if not text.isdigit() or not 1 <= int(text) <= 1000:
        raise argparse.ArgumentTypeError(f'{text!r}: an integer from 1 to 1000')
    return int(text)


def overhead_pair(text):
    """argparse type of --overhead-ns: READ[,WRITE] in ns, 0 to 10^9."""
    parts = text.split(',')
    if len(parts) not in (1, 2) or not all(p.isdigit() and int(p) <= 10 ** 9 for p in parts):
        raise argparse.ArgumentTypeError(f'{text!r}: READ[,WRITE], ns from 0 to 1000000000')
    return {'read': int(parts[0]), 'write': int(parts[-1])}


def add_options(p, shown=None):
    """Every option of pcm-bench on @p.  @shown: the options @p's --help
    lists (None: all of them); with @shown given, @p is a mode's parser,
    and an option left out of the command line leaves the value the main
    parser set (an option may come before or after MODE)."""
    def arg(dest, *flags, help=None, **kw):
        hide = shown is not None and dest not in shown and dest not in HOST_OPTS
        p.add_argument(*flags, dest=dest, help=argparse.SUPPRESS if hide else help, **kw)
    arg('run_dir', '--run-dir', metavar='DIR',
        help='characterize --redraw: the run directory to draw again (default: the newest '
        'run of SPEC in the output directory)')
    arg('redraw', '--redraw', action='store_true',
        help='characterize: only the figures and report again, from the newest run of SPEC '
        'in the output directory (or --run-dir\'s); a run without --redraw never '
        'overwrites an earlier one: it gets NAME-KERNEL.2, .3, ...')
    arg('dilation', '--dilation', type=dilation_k, metavar='K',
        help='characterize, timing, calibrate, trace: every dm-pcm device with dilation:K (1 to '
        '1000), fio\'s latencies divided by K and its rates multiplied by K (dm-pcm.rst, "Time '
        'dilation"; default: the spec\'s, else 8 in an icount VM, 1 with --native or '
        '--no-icount: pcmlib/clock.py says why)')
    arg('calibrate', '--calibrate', action='store_const', const=True,
        help='characterize: measure this host\'s completion overhead per direction at the '
        'run\'s start (at its dilation) and set overhead_ns on every point\'s device (the '
        'default, unless the spec says calibrate = false or gives overhead_ns)')
    arg('calibrate', '--no-calibrate', action='store_const', const=False,
        help='characterize: no calibration, whatever the spec says ("uncalibrated")')
    arg('overhead_ns', '--overhead-ns', type=overhead_pair, metavar='R[,W]',
        help='characterize: overhead_ns for reads and writes (ns) as measured before '
        '(pcm-bench calibrate, at the same dilation); one number for both')
    arg('backing_dev', '--backing-dev', metavar='DEV',
        help='characterize --native: every point over block device DEV (an NVMe namespace, '
        'a loop device) instead of a ramdisk; its data is destroyed, so --destroy-data must '
        'say so; refused unless 4 KiB QD1 I/O through dm-linear over it is faster than '
        'every device of the spec models it')
    arg('destroy_data', '--destroy-data', action='store_true',
        help='characterize --backing-dev: yes, overwrite DEV')
    arg('short', '--short', action='store_true',
        help='app: the spec\'s [short] settings (scale, clients, threads, duration): the VM '
        'suite\'s run')
    arg('figures', '--no-figures', action='store_false', default=True,
        help='app: draw no PNG (matplotlib under TCG takes minutes)')
    arg('trace', '--trace', action='store_true',
        help='characterize: blktrace on the device and its backing device around every run '
        '(btt: Q2C above, Q2C and D2C below; the remapped offsets)')
    vm.tool_args(p, 'bench')
    arg('runtime', '--runtime', type=float, default=2, help='s of fio per run (default 2)')
    arg('rounds', '--rounds', type=int, default=3,
        help='rounds, each device once per round; medians over them (default 3)')
    arg('cpus', '--cpus', type=int, default=None,
        help='vCPUs of the VM (default 1, scaling 2); passthrough runs numjobs=N')
    arg('pcm_words', '--pcm-words', default='',
        help='passthrough: table words for dm-pcm beside preset:none gap_interval:0 '
        '(replacing a word of the same key); ecc: words for dm-pcm ecc:bch, and "+WORD" '
        'words for a second ecc:bch device')
    arg('bs', '--bs', default='4k',
        help='passthrough: block sizes, comma-separated (default 4k; e.g. 4k,1m)')
    arg('no_icount', '--no-icount', action='store_true',
        help='a plain TCG VM (each vCPU its own host thread): real parallelism, figures '
        'that depend on the host and how busy it is')
    for dest, flag in (('guest', '--guest'), ('icount', '--icount')):
        p.add_argument(flag, dest=dest, action='store_true', help=argparse.SUPPRESS)
    p.add_argument('--out', help=argparse.SUPPRESS)
    if shown is not None:
        # a mode's parser sets no defaults of its own: the main parser's
        # stand unless the option comes after MODE (argparse copies every
        # attribute a subparser sets over the main parser's; set_defaults()
        # cannot say SUPPRESS for an option with a type)
        for action in p._actions:
            if action.dest not in ('help', 'spec'):
                action.default = argparse.SUPPRESS


def build_parser():
    ap = argparse.ArgumentParser(prog='pcm-bench', usage=USAGE, description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(ap)
    sub = ap.add_subparsers(dest='mode', required=True, metavar='MODE',
                            title='modes (pcm-bench MODE --help says more)')
    parsers = {}
    for mod in list(MODES.values()) + [characterize, app]:
        p = sub.add_parser(mod.NAME, help=SHORT[mod.NAME], prog=f'pcm-bench {mod.NAME}',
                           description=f'pcm-bench {mod.NAME}: {mod.HELP}',
                           formatter_class=argparse.RawDescriptionHelpFormatter
                           if mod is app else argparse.HelpFormatter)
        if mod in (characterize, app):
            p.add_argument('spec', nargs='?', metavar='SPEC', help='the spec file (TOML)')
        add_options(p, USES[mod.NAME])
        parsers[mod.NAME] = p
    return ap, parsers


def main(argv=None):
    ap, parsers = build_parser()
    args = ap.parse_args(argv)
    mp = parsers[args.mode]
    if args.cpus is None:
        args.cpus = 2 if args.mode == 'scaling' else 1
    if args.mode == 'scaling' and args.cpus < 2:
        mp.error('scaling needs --cpus 2 or more')
    if args.runtime < 0.1 or args.rounds < 1 or args.cpus < 1:
        mp.error('--runtime must be >= 0.1 (seconds), --rounds and --cpus >= 1')
    for bs in args.bs.split(','):
        try:
            size = pwords.parse_size(bs, multiple=512)
        except pwords.SizeError:
            size = None
        if not size or ((RAM_MIB - 1) << 20) % size:
            mp.error(f'--bs {bs}: want sizes like 4k or 1m, multiples of 512 that '
                     f'divide the {RAM_MIB - 1} MiB fio covers')
    if args.mode == 'characterize':
        return characterize.run(args, mp)
    if args.mode == 'app':
        return app.run(args, mp)
    if args.trace or args.redraw or args.backing_dev:
        mp.error(f'{args.mode} takes no SPEC, --trace nor --backing-dev (characterize does)')
    if (args.dilation is not None and args.mode not in DILATED) or \
            args.calibrate is not None or args.overhead_ns is not None:
        mp.error(f'{args.mode} takes no --dilation, --calibrate, --no-calibrate nor '
                 '--overhead-ns (characterize does; timing, calibrate and trace take --dilation)')
    if args.guest:
        guest(args)
        return 0
    return host(args)
