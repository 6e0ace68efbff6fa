#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run the shell examples of a document and compare their output.

In reStructuredText, the literal blocks after "::"; in Markdown, the
```console blocks.  A line "# CMD" is a command run as root with bash; the
lines after it, up to the next command, are its exact expected output
(stdout and stderr together).  Prints one KTAP subtest per command.
"""
import os
import subprocess
import sys


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
        cmd = None
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
    n = failed = 0
    for path in sys.argv[1:]:
        for cmd, want in examples(path):
            n += 1
            # commands name tools/ relative to the top of the repository
            p = subprocess.run(['bash', '-c', cmd], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True,
                               cwd=os.environ.get('PCM_ROOT'))
            got = [line.rstrip() for line in p.stdout.splitlines()]
            if got == [w.rstrip() for w in want]:
                print(f'ok {n} {path}: {cmd}')
            else:
                failed += 1
                print(f'not ok {n} {path}: {cmd}')
                for w in want:
                    print(f'#   want: {w}')
                for g in got:
                    print(f'#   got:  {g}')
    print(f'1..{n}')
    return 1 if failed or not n else 0


if __name__ == '__main__':
    sys.exit(main())
