#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run the shell examples of a document and compare their output.

In reStructuredText, the literal blocks after "::"; in Markdown, the
```console blocks.  A line "# CMD" is a command run as root with bash; the
lines after it, up to the next command, are its exact expected output
(stdout and stderr together).  Prints one KTAP subtest per command.

--where host runs only the examples that need no kernel of ours (the
timing model, tools/pcmctl model, and files they write: the host's
make unit runs them, natively); --where vm the others (11-doc-examples,
in the VM, where each Python start is seconds of TCG); --where all
(the default) every one.  An example runs on the host when it touches
no device (no dmsetup, dd, mount, trace...; pcmctl only as "pcmctl
model") and reads no /tmp file that a VM example wrote.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))), 'tools'))
from pcmlib import tap  # noqa: E402 (sys.path set first)

# what only the VM may run: device-mapper, block devices, modules, tracing
VM_WORDS = re.compile(r'(^|[\s;|&(])(dmsetup|modprobe|rmmod|insmod|dd|mkfs[.\w]*|mount|umount|'
                      r'fsck[.\w]*|trace-cmd|blktrace|blkparse|dmesg|fio)\b|/dev/(mapper|ram|nvme)'
                      r'|tools/pcmctl (?!model\b)')
TMP_FILE = re.compile(r'/tmp/[\w.-]+')


def on_host(cmd, vm_files):
    """Whether @cmd runs on the host: no device touched, and no /tmp file
    read that a VM example (its files in @vm_files) wrote."""
    return not VM_WORDS.search(cmd) and not any(f in vm_files for f in TMP_FILE.findall(cmd))


def rst_blocks(lines):
    i = 0
    while i < len(lines):
        if lines[i].rstrip().endswith('::'):
            i += 1
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith('  ')):
                block.append(lines[i][2:].rstrip('\n'))
                i += 1
            yield [b for b in block if b.strip()]
        else:
            i += 1


def md_blocks(lines):
    block = None
    for line in lines:
        if block is None and line.strip() == '```console':
            block = []
        elif block is not None and line.strip() == '```':
            yield block
            block = None
        elif block is not None:
            block.append(line.rstrip('\n'))


def examples(path):
    with open(path) as fh:
        lines = fh.readlines()
    blocks = md_blocks(lines) if path.endswith('.md') else rst_blocks(lines)
    for block in blocks:
        cmd, want = None, []
        for line in block:
            if line.startswith('# '):
                if cmd is not None:
                    yield cmd, want
                cmd, want = line[2:], []
            elif cmd is not None:
                want.append(line)
        if cmd is not None:
            yield cmd, want


def main():
    args, where = sys.argv[1:], 'all'
    if args[:1] == ['--where']:
        where, args = args[1], args[2:]
    if where not in ('host', 'vm', 'all'):
        sys.exit(f'--where host|vm|all, not {where}')
    vm_files = set()
    for path in args:
        for cmd, want in examples(path):
            host = on_host(cmd, vm_files)
            if not host:
                vm_files.update(TMP_FILE.findall(cmd))
            if where != 'all' and (where == 'host') != host:
                continue
            # commands name tools/ relative to the top of the repository
            p = subprocess.run(['bash', '-c', cmd], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               cwd=os.environ.get('PCM_ROOT'))
            got = [line.rstrip() for line in p.stdout.splitlines()]
            if not tap.result(got == [w.rstrip() for w in want], f'{path}: {cmd}'):
                for w in want:
                    print(f'#   want: {w}')
                for g in got:
                    print(f'#   got:  {g}')
    return 1 if tap.done() or not tap.cases else 0


if __name__ == '__main__':
    sys.exit(main())
