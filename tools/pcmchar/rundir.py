# SPDX-License-Identifier: GPL-2.0-only
"""Where a characterization's runs go: DIR/char/NAME-KERNEL for the
first, then NAME-KERNEL.2, .3, ...: a rerun of the same spec never
removes or overwrites an earlier run's results.  --redraw works on the
newest run (or on the one --run-dir names)."""
import os
import re


def runs(base):
    """The run directories of @base that exist, oldest first."""
    parent, name = os.path.split(base)
    found = []
    try:
        entries = os.listdir(parent)
    except FileNotFoundError:
        return []
    for e in entries:
        m = re.fullmatch(re.escape(name) + r'(?:\.([2-9]|[1-9][0-9]+))?', e)
        if m and os.path.isdir(os.path.join(parent, e)):
            found.append((int(m[1] or 1), os.path.join(parent, e)))
    return [d for _, d in sorted(found)]


def newest(base):
    """The newest run of @base, or None."""
    have = runs(base)
    return have[-1] if have else None


def new(base):
    """A fresh directory for a new run of @base, made here (never one that
    exists: two runs started at once get two directories)."""
    have = runs(base)
    n = 1
    if have:
        last = os.path.basename(have[-1])
        m = re.search(r'\.([0-9]+)$', last[len(os.path.basename(base)):])
        n = int(m[1]) if m else 1
    os.makedirs(os.path.dirname(base) or '.', exist_ok=True)
    while True:
        path = base if n == 1 else f'{base}.{n}'
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            n += 1
