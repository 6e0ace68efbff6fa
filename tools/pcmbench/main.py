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
options.py (their groups of options), common.py and, with the
characterization, tools/pcmlib/bench.py (dm devices, fio), calibrate.py
and fio.py (fio run and its JSON read).
"""
import argparse
import json
import os
import subprocess
import sys
import time

from pcmlib import clock, vm, words as pwords
from . import (app, barriers, bigdev, calibrate, characterize, counters, ecc, options,
               passthrough, scaling, startgap, timing, trace)
from .common import RAM_MIB, TOP, VM_TIMEOUT, pcm_words, sh

# the modes measured in a VM, in the order --help lists them
MODES = {m.NAME: m for m in (passthrough, scaling, ecc, startgap, barriers, timing, calibrate,
                             bigdev, counters, trace)}
ENTRY = os.path.join(TOP, 'tools', 'pcm-bench')
# the modes whose devices run at a dilation (default: pcmlib/clock.py's)
DILATED = tuple(name for name, m in MODES.items() if options.DILATION in m.PARENTS)
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


# the options whose values the host passes on to the guest, where MODE takes them
GUEST_OPTS = (('runtime', '--runtime'), ('rounds', '--rounds'), ('cpus', '--cpus'),
              ('bs', '--bs'), ('pcm_words', '--pcm-words'), ('dilation', '--dilation'))


def guest_line(args, mp, out):
    """The command line of the guest's part: --guest, where its JSON goes
    (@out), MODE and the values here of MODE's options in GUEST_OPTS (@mp:
    MODE's parser)."""
    takes = vars(mp.parse_args([]))     # MODE's options, at their defaults
    line = [ENTRY, '--guest', '--out', out, args.mode]
    for dest, flag in GUEST_OPTS:
        if dest in takes and getattr(args, dest) is not None:
            line += [flag, str(getattr(args, dest))]
    return line


def host(args, mp):
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
    inner = guest_line(args, mp, tmp)
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

class Parser(argparse.ArgumentParser):
    """pcm-bench's parser: MODE's options may come before MODE too
    (pcm-bench --rounds 2 timing; make bench puts --native there): they
    are moved after it, where MODE's parser takes them or refuses those
    MODE does not take.  MODE is found by argparse itself, with every
    mode's options known (@every), so that a value (--outdir trace) is
    not taken for it.  @modes: each mode's parser."""

    def __init__(self, every, modes, **kw):
        super().__init__(**kw)
        self.modes = modes
        self.locate = argparse.ArgumentParser(prog=self.prog, usage=self.usage, add_help=False,
                                              parents=[every])
        self.locate.add_argument('mode', metavar='MODE')
        self.locate.add_argument('options', nargs=argparse.REMAINDER)

    def parse_known_args(self, args=None, namespace=None):
        args = sys.argv[1:] if args is None else list(args)
        if any(a in self.modes for a in args):   # else argparse says MODE is missing
            found = self.locate.parse_known_args(args)[0]
            if found.mode in self.modes:          # else argparse names the bad MODE
                i = len(args) - len(found.options) - 1    # MODE's index
                args = args[i:i + 1] + args[:i] + found.options
        return super().parse_known_args(args, namespace)

    def parse_args(self, args=None, namespace=None):
        """As argparse's, but an option MODE does not take is refused by
        MODE's parser (its usage, not the main one's)."""
        args, extra = self.parse_known_args(args, namespace)
        if extra:
            self.modes[args.mode].error(f'unrecognized arguments: {" ".join(extra)}')
        return args


def mode_parser(sub, mod):
    """MODE's parser: its groups of options (mod.PARENTS) and its own
    (mod.add_args), its --help what it measures."""
    p = sub.add_parser(mod.NAME, help=SHORT[mod.NAME], prog=f'pcm-bench {mod.NAME}',
                       description=f'pcm-bench {mod.NAME}: {mod.HELP}', parents=mod.PARENTS,
                       formatter_class=argparse.RawDescriptionHelpFormatter
                       if mod is app else argparse.HelpFormatter)
    if hasattr(mod, 'add_args'):
        mod.add_args(p)
    return p


def build_parser():
    """The main parser and {mode: its parser}."""
    mods = list(MODES.values()) + [characterize, app]
    # every option of every mode, to find MODE among them (Parser) and to
    # default the attributes of the options MODE does not take: guest()
    # and host() read them whatever the mode (two modes' add_args with one
    # flag are refused here: a shared option belongs in options.py)
    every = argparse.ArgumentParser(add_help=False, parents=options.OPTION_GROUPS)
    for mod in mods:
        if hasattr(mod, 'add_args'):
            mod.add_args(every)
    parsers = {}
    # its --help lists the options every mode takes (HOST) beside the modes
    ap = Parser(every, parsers, prog='pcm-bench', usage=USAGE, description=__doc__,
                parents=[options.HOST], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.set_defaults(**vars(every.parse_args([])))
    sub = ap.add_subparsers(dest='mode', required=True, metavar='MODE',
                            parser_class=argparse.ArgumentParser,   # not a Parser
                            title='modes (pcm-bench MODE --help lists its options)')
    for mod in mods:
        parsers[mod.NAME] = mode_parser(sub, mod)
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
    if args.guest:
        guest(args)
        return 0
    return host(args, mp)
