# SPDX-License-Identifier: GPL-2.0-only
"""What the modes share beside pcmlib/bench.py's (dm devices, fio,
status): the ramdisk, device-mapper calls timed, table words, medians
and the printer of summarize()'s tables."""
import os
import statistics
import time

from pcmlib import dmioctl, fio, words as pwords
from pcmlib.bench import RAM_MIB, sh

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VM_TIMEOUT = 4 * 3600  # s: a long run under TCG


def remove_devices():
    sh('for d in $(dmsetup ls | awk \'$1 ~ /^bench-/ {print $1}\' | tac); do dmsetup remove $d; done; true')


def fresh_ramdisk():
    """brd filled: a fresh ramdisk allocates pages on first write."""
    fio.prefetch()
    remove_devices()
    sh('rmmod brd 2>/dev/null; true')
    sh(f'modprobe brd rd_nr=1 rd_size={RAM_MIB * 1024} max_part=0')
    sh(f'dd if=/dev/zero of=/dev/ram0 bs=1M count={RAM_MIB} oflag=direct status=none')


def dm_timed(call, name, *args):
    """One device-mapper ioctl (dmioctl.DM's call: create, load, resume,
    message), timed with time.monotonic (s).  Not dmsetup: its exec reads
    files over 9p, and an icount guest idle while the host answers has its
    clock jump to its next timer, any number of times."""
    dm = dmioctl.DM()
    try:
        start = time.monotonic()
        err = getattr(dm, call)(name, *args)
        took = time.monotonic() - start
    finally:
        dm.close()
    err = err[0] if isinstance(err, tuple) else err
    if err:
        raise RuntimeError(f'{call} {name} {args}: {os.strerror(err)}')
    return took


def move_gap_timed(name, n):
    return dm_timed('message', name, [b'move_gap', str(n).encode()])


def pcm_words(extra):
    """preset:none gap_interval:0, with the words of extra added or
    replacing those of the same key."""
    return pwords.merge_words('preset:none gap_interval:0', extra)


def med(rs, key):
    return statistics.median(r[key] for r in rs)


def table(head, rows, align=None):
    """@rows (lists of cells) under @head (the columns' names) as lines of
    text, every mode's summarize() table: each column as wide as its
    widest cell, one space between columns.  @align: a character per
    column, '<' left or '>' right (default: the first left, the others
    right, as numbers are); a row may end early (its other cells blank)."""
    align = align or '<' + '>' * (len(head) - 1)
    rows = [[str(c) for c in r] + [''] * (len(head) - len(r)) for r in [head, *rows]]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return [' '.join(f'{c:{a}{w}}' for c, a, w in zip(r, align, widths)).rstrip()
            for r in rows]
