#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every make command the READMEs show a user, in its dry form.

The VM suite runs the README's console example (11-doc-examples), make
demo (23-demo) and make bench / make soak in short form (24-readme-make);
make check is this run.  Here every `make ...` the README shows (its code
lines and its tables) must be a target the Makefile has and expand
(make -n) to a command (README.md's, and tests/README.md's and tools/README.md's,
where the details went); the variables it documents must reach that
command (DEBUG=1, DEBUG=0, RESUME=1, DEBUG_TESTS, NATIVE=1, SOAK_MINUTES...); and
tests/vm/tiers must name every VM test, and only those.  Prints TAP.
"""
import importlib.machinery
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import types

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'tools'))
from pcmlib.tap import done, result, text_files  # noqa: E402 (sys.path set first)


READMES = ('README.md', 'tests/README.md', 'tools/README.md')


def readme_make_commands(name='README.md'):
    """The make commands of a README: indented code lines, `...` spans."""
    cmds = []
    with open(os.path.join(TOP, name)) as fh:
        for line in fh:
            m = re.match(r'^ {4}(make(?: [^#]*)?)', line)
            if m:
                cmds.append(m.group(1).strip())
            cmds += [c.strip() for c in re.findall(r'`(make(?: [^`]*)?)`', line)]
    return list(dict.fromkeys(cmds))


def dry(cmd):
    """make -n for cmd (a README line, up to a "&&"; a <release>
    placeholder becomes an installed kernel's); (rc, output).  make and
    make module run for real, make install under a scratch DESTDIR."""
    rel = subprocess.run([os.path.join(TOP, 'tools', 'kernels'), '6.12'], text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.strip()
    argv = shlex.split(cmd.split('&&')[0].replace('<release>', rel or 'no-kernel-installed'))
    # the build itself runs for real: make -n would still descend into the
    # kernel's kbuild, which fails on an output directory -n did not make
    targets = [a for a in argv[1:] if '=' not in a and not a.startswith('-')]
    real = targets in ([], ['module'], ['module-bare'])
    # make install runs for real too, under a scratch DESTDIR (make -n
    # would run kbuild's modules_install, which makes directories)
    stage = None
    if 'install' in targets:
        stage = tempfile.mkdtemp(prefix='readme-install-')
        argv = [a for a in argv if not a.startswith('DESTDIR=')] + [f'DESTDIR={stage}']
        real = True
    res = subprocess.run(['make', '-s' if real else '-n', '-C', TOP] + argv[1:],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         stdin=subprocess.DEVNULL)
    if stage:
        shutil.rmtree(stage)
    return res.returncode, res.stdout


def main():
    cmds = readme_make_commands()
    result(len(cmds) >= 8, f'the README shows {len(cmds)} make commands',
           'fewer than the two commands and the targets table: did the parser break?')
    for name in READMES[1:]:
        more = readme_make_commands(name)
        result(len(more) >= 3, f'{name} shows {len(more)} make commands', 'did the parser break?')
        cmds += [c for c in more if c not in cmds]
    for cmd in cmds:
        rc, out = dry(cmd)
        lines = [l for l in out.splitlines() if not l.startswith('make[')]
        result(rc == 0 and lines, f'{cmd}: make -n expands to a command', out)
    # the documented variables reach the command
    expect = [
        ('make check', [r'tools/check '], [r'--build-debug', r'debug']),
        ('make check DEBUG=1', [r'tools/check .*--build-debug', r'--only unit,lint,vm,debug'], []),
        ('make check NATIVE=1', [r'tools/check --native'], [r'--build-debug']),
        ('make check-full', [r'tools/check --full .*--build-debug', r'--only unit,lint,vm,debug'], []),
        ('make check-full DEBUG=0', [r'tools/check --full'], [r'--build-debug', r'debug']),
        ('make check-debug DEBUG_TESTS="01 14"', [r'--debug-tests "01 14"'], []),
        ('make check-debug RESUME=1', [r'--debug-resume'], []),
        ('make check-rt', [r'tools/debug-kernel --rt', r'vm-run --kernel "\$rel" --icount --cpus 1 ',
                           r'tests/vm/run 30-ecc 38-error-paths'], []),
        ('make demo NATIVE=1', [r'tools/demo --native'], []),
        ('make soak SOAK_MINUTES=3', [r'tools/soak .*--minutes 3'], []),
        ('make bench BENCH_ARGS=startgap', [r'tools/pcm-bench +startgap'], []),
        ('make bench BENCH_ARGS=trace', [r'tools/pcm-bench +trace'], []),
        ('make dkms-install', [r'dkms add dm-pcm/', r'dkms build dm-pcm/.* -k ', r'dkms install dm-pcm/'], []),
        ('make dkms-remove', [r'dkms remove dm-pcm/\$v --all'], []),
        ('make kernel-patch KSRC=/usr/src/linux', [r'tools/kernel-patch "/usr/src/linux" "build/dm-pcm-'], []),
        ('make uninstall DESTDIR=/x PREFIX=/usr', [r'rm -f "/x/lib/modules/.*/updates"/dm-pcm\.ko',
                                                 r'rm -f "/x/usr/bin/pcmctl"'], [r'depmod']),
    ]
    for cmd, want, never in expect:
        rc, out = dry(cmd)
        ok = rc == 0 and all(re.search(w, out) for w in want) and \
            not any(re.search(n, out) for n in never)
        result(ok, f'{cmd} runs {" ".join(want)}' + (f', without {" ".join(never)}' if never else ''),
               out)
    # the documents cite nothing outside the repository (the design notes
    # and papers live elsewhere): the .rst section that holds the contract
    outside = re.compile(r'DESIGN\.md|shared/papers|shared/design')
    cites = []
    for rel, text in text_files(TOP, ('tools', 'tests', 'Documentation')):
        if os.path.join(TOP, rel) == os.path.abspath(__file__) or '__pycache__' in rel:
            continue
        cites += [f'{rel}:{i}' for i, ln in enumerate(text.splitlines(), 1)
                  if outside.search(ln)]
    for name in READMES:
        with open(os.path.join(TOP, name)) as fh:
            cites += [f'{name}:{i}' for i, ln in enumerate(fh, 1) if outside.search(ln)]
    result(not cites, 'tools, tests, Documentation and the READMEs cite no file outside the '
           'repository (DESIGN.md, shared/)', '\n'.join(cites))
    # the .rst's stale lines (issue 33)
    with open(os.path.join(TOP, 'Documentation', 'admin-guide', 'device-mapper',
                           'dm-pcm.rst')) as fh:
        rst = ' '.join(fh.read().split())
    result('not in this version' not in rst, 'the .rst does not call BCH and wear "not in this '
           'version"')
    # README for users: short; the suite's budget lives in tests/README.md
    with open(os.path.join(TOP, 'README.md')) as fh:
        readme = fh.read()
    result(len(readme.splitlines()) <= 300 and 'Test budget' not in readme and
           'insmod' not in readme.replace('modprobe -a dm-mod dm-bufio bch && insmod', ''),
           f'README.md: {len(readme.splitlines())} lines (at most 300), no test budget, its '
           'insmod only after modprobe of dm-mod, dm-bufio and bch')

    # the tier file and the tests agree
    vm = os.path.join(TOP, 'tests', 'vm')
    tests = sorted(f[:-3] for f in os.listdir(vm) if re.match(r'\d\d-.*\.sh$', f))
    with open(os.path.join(vm, 'tiers')) as fh:
        tiers = {l.split()[0]: l.split()[1:] for l in fh if l.strip() and not l.startswith('#')}
    result(sorted(tiers) == tests, 'tests/vm/tiers names every VM test, and only those',
           f'missing: {sorted(set(tests) - set(tiers))}, stale: {sorted(set(tiers) - set(tests))}')
    result(all(len(v) >= 2 and v[0] in ('compat', '6.12', 'compat,smp', '6.12,smp')
               for v in tiers.values()),
           'every tiers line says compat or 6.12 (",smp": a 2-vCPU VM), and why')

    def listed(*args):
        res = subprocess.run([os.path.join(vm, 'run'), '--list'] + list(args),
                             stdout=subprocess.PIPE, text=True)
        return res.stdout.split() if res.returncode == 0 else None
    compat = [t for t in tests if tiers[t][0].split(',')[0] == 'compat']
    smp = [t for t in tests if tiers[t][0].endswith(',smp')]
    result(listed('--tier', 'compat') == compat,
           'tests/vm/run --tier compat --list selects the compat lines', str(listed('--tier', 'compat')))
    result(listed('--smp', 'yes') == smp and listed('--smp', 'no') == [t for t in tests if t not in smp]
           and listed('--tier', 'compat', '--smp', 'yes') == [t for t in compat if t in smp],
           'tests/vm/run --smp yes|no selects the ",smp" lines or the others', str(smp))
    result(listed('--smp', 'no', '--reverse') == [t for t in reversed(tests) if t not in smp],
           'tests/vm/run --reverse lists the selection last first')

    # CI keeps only the tail of make check's output: the summary's line of
    # a failed test names its failed subtests and the kernel report's head
    loader = importlib.machinery.SourceFileLoader('check', os.path.join(TOP, 'tools', 'check'))
    check = types.ModuleType('check')
    check.__file__ = loader.path
    loader.exec_module(check)
    tap = ['ok 1 01-a (3s)', '    ok 1 loads', '    not ok 2 data reads back', '    # got 0/1',
           '    # dmesg: [484.7] INFO: task kworker/0:22:1337 blocked for more than 120 seconds.',
           '    # dmesg:  __schedule+0x2eb/0x8d0', '    1..2',
           'not ok 2 39-b (394s) # kernel log: [484.7] INFO: task kworker/0:22:1337 blocked']
    counts = check.count_tap(tap, '6.1')
    line = check.FAILED[-1] if check.FAILED else ''
    result(counts == (1, 1, 0) and line.startswith('6.1: not ok 2 39-b') and
           'not ok 2 data reads back' in line and '# got 0/1' in line and
           '__schedule+0x2eb' in line and 'loads' not in line,
           "tools/check's summary line of a failed test names its failed subtests and the "
           "kernel report's first lines", line)
    return done()


if __name__ == '__main__':
    sys.exit(main())
