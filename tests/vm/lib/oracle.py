#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where-the-data-lands oracle for start-gap: N random sectors of the
dm-pcm device NAME, read through it and at the backing sector that
"pcmctl map" (the module's own arithmetic) predicts from the registers,
must hold the same bytes.  Both reads are O_DIRECT, so neither page cache
can answer.  One process for all samples: under TCG a dd per sample costs
more than the reads.  Exit 0 when all agree; prints the ones that do not.

  oracle.py NAME N
"""
import mmap
import os
import random
import subprocess
import sys

SECTOR = 512


def read_sector(path, sector, buf):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        # exactly one sector: preadv fills as much of the buffer as it can
        if os.preadv(fd, [memoryview(buf)[:SECTOR]], sector * SECTOR) != SECTOR:
            raise OSError(f'{path}: short read at sector {sector}')
    finally:
        os.close(fd)
    return bytes(buf[:SECTOR])


def main():
    name, n = sys.argv[1], int(sys.argv[2])
    dev = f'/dev/mapper/{name}'
    length = int(subprocess.check_output(['blockdev', '--getsz', dev]))
    rnd = random.Random(length)     # the same samples on every run
    secs = [str(rnd.randrange(length)) for _ in range(n)]
    root = os.environ.get('PCM_ROOT') or os.path.join(os.path.dirname(__file__), '..', '..', '..')
    pcmctl = os.path.join(root, 'tools', 'pcmctl')
    out = subprocess.check_output([pcmctl, 'map', name] + secs, text=True)
    buf = mmap.mmap(-1, mmap.PAGESIZE)  # page-aligned, as O_DIRECT needs
    bad = 0
    for line in out.splitlines():
        s, back, bs = line.split()[:3]
        if read_sector(dev, int(s), buf) != read_sector(back, int(bs), buf):
            print(f'# sector {s}: not at {back} sector {bs}')
            bad += 1
    if bad:
        print(f'# {bad} of {n} sectors not where the registers say')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
