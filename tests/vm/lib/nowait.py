#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""RWF_NOWAIT writes of one 4 KiB row, for tests/vm/34-durability.sh.

Writes version 1..N of row ROW of DEV with O_DIRECT and RWF_NOWAIT, a
random 0-3 ms apart (so that another process's queued request has taken
the tag a completion freed).  A write either completes or fails with
EAGAIN, and EAGAIN promises that nothing changed: after every EAGAIN,
and at the end, the row is read back (blocking) and must hold the last
version that completed (or what was there before the first).  Prints
"done:D eagain:E bad:B last:V" (B: reads that were not the last
completed version, or failed).

  nowait.py DEV ROW N
"""
import errno
import mmap
import os
import random
import sys
import time

BS = 4096


def body(row, version):
    return (f"nowait row {row} version {version} ".encode() * BS)[:BS]


def main():
    dev, row, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    wbuf, rbuf = mmap.mmap(-1, BS), mmap.mmap(-1, BS)
    fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
    os.preadv(fd, [rbuf], row * BS)
    expect = bytes(rbuf)
    done = eagain = bad = 0
    last = "none"
    rnd = random.Random(row)
    for v in range(1, n + 2):
        if v <= n:
            time.sleep(rnd.uniform(0, 0.003))
            wbuf[:] = body(row, v)
            try:
                os.pwritev(fd, [wbuf], row * BS, os.RWF_NOWAIT)
                done += 1
                expect = bytes(wbuf)
                last = str(v)
                continue
            except OSError as e:
                if e.errno != errno.EAGAIN:
                    raise
                eagain += 1
        try:
            os.preadv(fd, [rbuf], row * BS)
            bad += bytes(rbuf) != expect
        except OSError:
            bad += 1
    os.close(fd)
    print(f"done:{done} eagain:{eagain} bad:{bad} last:{last}")


if __name__ == "__main__":
    main()
