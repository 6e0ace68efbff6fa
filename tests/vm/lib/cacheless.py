#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Crash points of a backing device without a volatile cache (34-durability).

Over such a device no flush ever reaches dm-pcm, and every write that
completed must survive a power cut at any instant.  dm-log-writes under
dm-pcm records the backing device's writes in the order they completed
(a flush logs what completed before it; the rest is logged at removal):
the log replayed to *every* write entry, not only to flushes and FUA
writes, is each state a device without a cache holds after a cut between
two completions.

  cacheless.py write DEV STEPS SEED
      One domain, gap_interval:3.  Each step reads the registers, then
      writes a random other row and at once the row the next move copies
      (so that one of them makes the move due and the other races it: it
      waits in the round, or goes just before or after it) until status
      counts the move, then that row again, just moved: a write that 2
      times in 3 makes no move due, so nothing persists the registers
      for it but dm-pcm itself.  Each write O_DIRECT, no flush.  Rows are
      versioned blocks (versioned.py's format).
  cacheless.py check LOGDEV REPLAYDEV TABLE SEED ROWS
      Replays the log entry by entry.  After every entry that wrote
      something, dm-pcm is created read-only over the replay and every
      row must hold exactly the newest version whose first write to the
      device (the user's write; a move's copy comes after it) is in the
      replayed prefix: nothing older (a completed write lost), nothing
      torn.  Before the first superblock dm-pcm may refuse to load, but
      only while no user write is in the prefix.
"""
import mmap
import os
import random
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import logreplay  # noqa: E402 (sys.path set first)
import versioned  # noqa: E402 (sys.path set first)

BS = versioned.BS


def registers(name):
    out = subprocess.run(["dmsetup", "message", name, "0", "registers"],
                         capture_output=True, text=True, check=True).stdout
    start, gap = (int(x) for x in out.split()[0].split("/"))
    return start, gap


def gap_moves(name):
    out = subprocess.run(["dmsetup", "status", name], capture_output=True,
                         text=True, check=True).stdout
    return int(re.search(r" gap_moves:(\d+)", out).group(1))


def next_moved(start, gap, rows):
    """The domain row the next gap move copies (pcm_sg_next_move, pcm_sg_row_at)."""
    src = rows if gap == 0 else gap - 1
    p = src - 1 if src > gap else src
    return p - start if p >= start else p + rows - start


def write(dev, steps, seed):
    name = os.path.basename(dev)
    fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
    rows = os.lseek(fd, 0, os.SEEK_END) // BS
    buf = mmap.mmap(-1, BS)
    rng = random.Random(seed)
    versions = {}

    def put(row):
        versions[row] = versions.get(row, 0) + 1
        buf[:] = versioned.make_block(seed, row, versions[row])
        if os.pwrite(fd, buf, row * BS) != BS:
            raise OSError("short write")

    writes = 0
    for _ in range(steps):
        m = next_moved(*registers(name), rows)
        moves = gap_moves(name)
        for _ in range(20):
            put(rng.choice([r for r in range(rows) if r != m]))
            put(m)      # while the move of m is due or under way
            writes += 2
            t = time.monotonic() + 0.2
            while gap_moves(name) == moves and time.monotonic() < t:
                time.sleep(0.01)
            if gap_moves(name) > moves:
                break
        else:
            raise RuntimeError("no gap move after 40 writes")
        put(m)          # m has just moved (and owes no move 2 times in 3)
        writes += 1
    os.close(fd)
    print("# %d steps: %d writes, %d of them after the row's move"
          % (steps, writes, steps))
    return 0


def user_writes(log, seed, rows):
    """{entry index: [(row, version)]} of the entries that first wrote a version."""
    seen, first = set(), {}
    bs = log.sectorsize
    for e in log.entries:
        if not e.has_data():
            continue
        length = e.nr_sectors * bs
        for off in range(0, length - BS + 1, 512):
            hdr = log.data(e, off, versioned.HDR.size)
            magic, blk, ver, _ = versioned.HDR.unpack(hdr)
            if magic != versioned.MAGIC or blk >= rows or (blk, ver) in seen:
                continue
            if log.data(e, off, BS) != versioned.make_block(seed, blk, ver):
                continue
            seen.add((blk, ver))
            first.setdefault(e.index, []).append((blk, ver))
    return first


def read_rows(dev, rows):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, BS)
    out = []
    try:
        for r in range(rows):
            try:
                n = os.preadv(fd, [buf], r * BS)
            except OSError as e:        # EIO: an uncorrectable row
                out.append(e.strerror)
                continue
            out.append(bytes(buf) if n == BS else "short read")
    finally:
        os.close(fd)
    return out


def check(logdev, replaydev, table, seed, rows):
    log = logreplay.Log(logdev)
    first = user_writes(log, seed, rows)
    log.close()
    want = {}
    points = loaded = refused = bad = 0
    with logreplay.Replayer(logdev, replaydev) as rp:
        for e in rp.log.entries:
            rp.advance_to(e.index)
            for blk, ver in first.get(e.index, ()):
                want[blk] = max(want.get(blk, 0), ver)
            if not e.has_data():
                continue        # an empty flush or a mark: the state before
            points += 1
            c = subprocess.run(["dmsetup", "create", "--readonly", "chk",
                                "--table", table], capture_output=True, text=True)
            if c.returncode:
                refused += 1
                if want:
                    bad += 1
                    print("# entry %d: dm-pcm refused to load after %d rows written: %s"
                          % (e.index, len(want), c.stderr.strip()), flush=True)
                continue
            try:
                data = read_rows("/dev/mapper/chk", rows)
            finally:
                subprocess.run(["dmsetup", "remove", "chk"], check=True)
            loaded += 1
            wrong = []
            for blk in range(rows):
                v = want.get(blk, 0)
                exp = versioned.make_block(seed, blk, v) if v else bytes(BS)
                if isinstance(data[blk], str):
                    wrong.append("row %d: %s, want v%d" % (blk, data[blk], v))
                elif data[blk] != exp:
                    magic, _, got, _ = versioned.HDR.unpack_from(data[blk])
                    wrong.append("row %d: v%s, want v%d" % (
                        blk, got if magic == versioned.MAGIC else "?", v))
            if wrong:
                bad += 1
                print("# entry %d (%s): %s" % (e.index, "|".join(e.flag_names()) or "write",
                                               ", ".join(wrong[:4])), flush=True)
    writes = sum(len(v) for v in first.values())
    print("# log entries %d, user writes found %d; crash points %d: %d loaded and "
          "checked, %d refused before the first write, %d bad"
          % (len(log.entries), writes, points, loaded, refused, bad))
    return 1 if bad or not writes or loaded < points // 2 else 0


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "write":
        return write(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    if len(sys.argv) == 7 and sys.argv[1] == "check":
        return check(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]),
                     int(sys.argv[6]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
