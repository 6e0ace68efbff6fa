# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench's options shared by several modes, in groups: small parsers
(add_help=False) that a mode's parser takes as parents.  A mode names
the groups it uses in its PARENTS and declares its own options in its
add_args(p); main.py builds its parser from them, so that 'pcm-bench
MODE --help' lists just MODE's options and argparse refuses any other
("unrecognized arguments").  An option two modes share belongs in a
group here, not in both modes' add_args."""
import argparse

from pcmlib import vm


def group():
    return argparse.ArgumentParser(add_help=False)


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


# every mode: where it runs (tools/demo's and tools/soak's options too),
# its VM's vCPUs, and --guest: the part that runs in the VM
HOST = group()
vm.tool_args(HOST, 'bench')
HOST.add_argument('--cpus', type=int, default=None,
                  help='vCPUs of the VM (default 1, scaling 2); passthrough runs numjobs=N')
HOST.add_argument('--guest', action='store_true', help=argparse.SUPPRESS)

# every mode but bigdev (whose NVMe namespace is a host file: no icount)
ICOUNT = group()
ICOUNT.add_argument('--no-icount', action='store_true',
                    help='a plain TCG VM (each vCPU its own host thread): real parallelism, '
                    'figures that depend on the host and how busy it is')

# the modes main.py's guest() and host() drive: rounds of each device;
# host() tells the guest where its JSON goes and whether it runs on icount
ROUNDS = group()
ROUNDS.add_argument('--rounds', type=int, default=3,
                    help='rounds, each device once per round; medians over them (default 3)')
ROUNDS.add_argument('--out', help=argparse.SUPPRESS)
ROUNDS.add_argument('--icount', action='store_true', help=argparse.SUPPRESS)

# the modes that run fio for a time
RUNTIME = group()
RUNTIME.add_argument('--runtime', type=float, default=2, help='s of fio per run (default 2)')

# passthrough, ecc, counters: their dm-pcm table's words
PCM_WORDS = group()
PCM_WORDS.add_argument('--pcm-words', default='',
                       help='passthrough: table words for dm-pcm beside preset:none '
                       'gap_interval:0 (replacing a word of the same key); ecc: words for '
                       'dm-pcm ecc:bch, and "+WORD" words for a second ecc:bch device; '
                       'counters: words for both dm-pcm tables')

# the modes whose devices run at a dilation (default: pcmlib/clock.py's)
DILATION = group()
DILATION.add_argument('--dilation', type=dilation_k, metavar='K',
                      help='every dm-pcm device with dilation:K (1 to 1000), fio\'s latencies '
                      'divided by K and its rates multiplied by K (dm-pcm.rst, "Time '
                      'dilation"; default: the spec\'s, else 8 in an icount VM, 1 with --native '
                      'or --no-icount: pcmlib/clock.py says why)')

# characterize and app: the host's completion overhead
CALIBRATION = group()
CALIBRATION.add_argument('--calibrate', action='store_const', const=True,
                         help='measure this host\'s completion overhead per direction at the '
                         'run\'s start (at its dilation) and set overhead_ns on every dm-pcm '
                         'device (the default, unless the spec says calibrate = false or gives '
                         'overhead_ns)')
CALIBRATION.add_argument('--no-calibrate', dest='calibrate', action='store_const', const=False,
                         help='no calibration, whatever the spec says ("uncalibrated")')
CALIBRATION.add_argument('--overhead-ns', type=overhead_pair, metavar='R[,W]',
                         help='overhead_ns for reads and writes (ns) as measured before '
                         '(pcm-bench calibrate, at the same dilation); one number for both')

# characterize and app: a spec, and the run's directory
SPEC = group()
SPEC.add_argument('spec', nargs='?', metavar='SPEC', help='the spec file (TOML)')
RUN_DIR = group()
RUN_DIR.add_argument('--run-dir', metavar='DIR',
                     help='characterize --redraw: the run directory to draw again (default: '
                     'the newest run of SPEC in the output directory)')

# every group of options (SPEC is a positional): what may come before MODE
OPTION_GROUPS = (HOST, ICOUNT, ROUNDS, RUNTIME, PCM_WORDS, DILATION, CALIBRATION, RUN_DIR)
