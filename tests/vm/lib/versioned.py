#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Versioned-block writer and checker for the crash tests.

The writer overwrites random blocks of a device; each block carries its
block number, a version (how many times that block has been written) and
a checksum over a body derived from (seed, block, version).  After every
batch it fsyncs and records the batch count in a progress file (and, with
--mark, sends "mark <batch>" to a dm-log-writes device).  Given the seed,
the sequence of writes is deterministic, so the checker recomputes, for
any number of durable batches, the oldest version every block may hold:
a block must be intact and at least that version (later, unflushed
versions may or may not have landed).

  versioned.py write DEV SEED PROGRESS [--blocks N] [--batch B] [--mark LW]
  versioned.py check DEV SEED BATCHES [--blocks N] [--batch B]
"""
import argparse
import hashlib
import os
import random
import struct
import subprocess
import sys

BS = 4096
MAGIC = b"PCMVBLK1"
HDR = struct.Struct("<8sQQ32s")        # magic, block, version, sha256(body)


def body(seed, block, version):
    h = hashlib.sha256(b"%d:%d:%d" % (seed, block, version)).digest()
    return (h * (BS // len(h)))[: BS - HDR.size]


def make_block(seed, block, version):
    b = body(seed, block, version)
    return HDR.pack(MAGIC, block, version, hashlib.sha256(b).digest()) + b


def schedule(seed, blocks, batch):
    """Yield the block numbers written, batch by batch, forever."""
    rng = random.Random(seed)
    while True:
        yield [rng.randrange(blocks) for _ in range(batch)]


def write(a):
    fd = os.open(a.dev, os.O_RDWR)
    versions = {}
    for n, batch in enumerate(schedule(a.seed, a.blocks, a.batch), 1):
        for blk in batch:
            versions[blk] = versions.get(blk, 0) + 1
            os.pwrite(fd, make_block(a.seed, blk, versions[blk]), blk * BS)
        os.fsync(fd)
        if a.mark:
            subprocess.run(["dmsetup", "message", a.mark, "0", "mark", "b%d" % n],
                           check=True)
        with open(a.progress + ".tmp", "w") as f:
            f.write("%d\n" % n)
        os.replace(a.progress + ".tmp", a.progress)
        if a.max_batches and n >= a.max_batches:
            return 0


def durable_versions(seed, blocks, batch, batches):
    versions = {}
    sched = schedule(seed, blocks, batch)
    for _ in range(batches):
        for blk in next(sched):
            versions[blk] = versions.get(blk, 0) + 1
    return versions


def check(a):
    want = durable_versions(a.seed, a.blocks, a.batch, a.batches)
    bad = []
    with open(a.dev, "rb", buffering=0) as f:
        for blk in range(a.blocks):
            data = f.read(BS)
            magic, num, ver, digest = HDR.unpack_from(data)
            if magic != MAGIC:
                if blk in want:
                    bad.append("block %d: lost (want version >= %d)" % (blk, want[blk]))
                elif data != bytes(BS):
                    bad.append("block %d: garbage where nothing was written" % blk)
                continue
            if num != blk or hashlib.sha256(data[HDR.size:]).digest() != digest \
                    or data[HDR.size:] != body(a.seed, blk, ver):
                bad.append("block %d: torn or misplaced (says block %d v%d)" % (blk, num, ver))
            elif ver < want.get(blk, 0):
                bad.append("block %d: version %d older than durable %d" % (blk, ver, want[blk]))
    for line in bad[:10]:
        print("#   " + line)
    print("# checked %d blocks after %d durable batches: %d bad"
          % (a.blocks, a.batches, len(bad)))
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("write", "check"):
        s = sub.add_parser(name)
        s.add_argument("dev")
        s.add_argument("seed", type=int)
        if name == "write":
            s.add_argument("progress")
            s.add_argument("--mark", help="dm-log-writes device to mark")
            s.add_argument("--max-batches", type=int, default=0)
        else:
            s.add_argument("batches", type=int)
        s.add_argument("--blocks", type=int, default=1024)
        s.add_argument("--batch", type=int, default=16)
    a = p.parse_args()
    return write(a) if a.cmd == "write" else check(a)


if __name__ == "__main__":
    sys.exit(main())
