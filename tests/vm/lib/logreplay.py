#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Replay the log of the kernel's dm-log-writes target, for crash-point tests.

Written from Documentation/admin-guide/device-mapper/log-writes.rst and
drivers/md/dm-log-writes.c.  The log device holds, each block being
`sectorsize` bytes (the logical block size of the logged device):

  block 0          super: le64 magic, le64 version, le64 nr_entries,
                   le32 sectorsize, zero padding
  then nr_entries times:
  1 block          entry: le64 sector, le64 nr_sectors, le64 flags,
                   le64 data_len; a MARK's name (data_len bytes) follows
                   in the same block
  nr_sectors blks  the data written, unless the entry is a DISCARD or MARK

sector and nr_sectors count `sectorsize` blocks, not 512-byte sectors.
The kernel logs a write only when a later flush has made it durable (or at
once if it is FUA), so replaying entries 0..N with N a FLUSH or FUA entry
gives a state the disk really could have been in after a power cut.

  logreplay.py info LOGDEV
  logreplay.py list LOGDEV
  logreplay.py crashpoints LOGDEV
  logreplay.py replay LOGDEV REPLAYDEV [--upto N] [--discard zero|skip] [--fsync]

As a module: Log(path).entries, crash_points(log), and Replayer, which
replays forward incrementally (advance_to) so that a test can check every
crash point without starting from zero each time.  Errors in the log or
the arguments raise LogError; the CLI prints it and exits 2.
"""

import argparse
import os
import struct
import sys

MAGIC = 0x6a736677736872        # "rhswfsj" little-endian
VERSION = 1
FLUSH, FUA, DISCARD, MARK, METADATA = 1, 2, 4, 8, 16
FLAG_NAMES = ((FLUSH, "FLUSH"), (FUA, "FUA"), (DISCARD, "DISCARD"),
              (MARK, "MARK"), (METADATA, "META"))
KNOWN_FLAGS = FLUSH | FUA | DISCARD | MARK | METADATA
SUPER = struct.Struct("<QQQI")
ENTRY = struct.Struct("<QQQQ")
CHUNK = 1 << 20                 # copy and zero in 1 MiB pieces


class LogError(Exception):
    """The log or the request is invalid; the CLI exits 2 on it."""


class Entry:
    """One log entry; offset is the byte offset of its data in the log."""

    __slots__ = ("index", "sector", "nr_sectors", "flags", "mark", "offset")

    def __init__(self, index, sector, nr_sectors, flags, mark, offset):
        self.index, self.sector, self.nr_sectors = index, sector, nr_sectors
        self.flags, self.mark, self.offset = flags, mark, offset

    def has_data(self):
        return self.nr_sectors > 0 and not self.flags & (DISCARD | MARK)

    def flag_names(self):
        return [n for f, n in FLAG_NAMES if self.flags & f]


def dev_size(fd):
    # works for block devices and regular files alike
    return os.lseek(fd, 0, os.SEEK_END)


def pread_full(fd, size, offset, what):
    buf = os.pread(fd, size, offset)
    if len(buf) != size:
        raise LogError(f"truncated log: {what} needs {size} bytes at byte "
                       f"{offset}, got {len(buf)}")
    return buf


class Log:
    """A parsed log.  Every entry header is read and checked up front, so a
    bad log is refused before anything is written to a replay device."""

    def __init__(self, path):
        self.path = path
        self.fd = os.open(path, os.O_RDONLY)
        try:
            # The log was written by the kernel with bios that bypass the page
            # cache; drop anything cached from before so we read the device.
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_DONTNEED)
            self._parse()
        except BaseException:
            os.close(self.fd)
            raise

    def _parse(self):
        size = dev_size(self.fd)
        magic, version, nr, bs = SUPER.unpack(
            pread_full(self.fd, SUPER.size, 0, "super block"))
        if magic != MAGIC:
            raise LogError(f"{self.path}: bad magic {magic:#x}, want {MAGIC:#x}"
                           " (not a dm-log-writes log?)")
        if version != VERSION:
            raise LogError(f"{self.path}: unsupported log version {version}")
        if bs < 512 or bs & (bs - 1):
            raise LogError(f"{self.path}: bad sectorsize {bs}")
        self.magic, self.version, self.nr_entries, self.sectorsize = \
            magic, version, nr, bs
        self.entries = []
        pos = bs                                # entries start after the super
        for i in range(nr):
            if pos + bs > size:
                raise LogError(f"truncated log: entry {i} of {nr} at byte {pos}"
                               f" is past the end of the log ({size} bytes)")
            hdr = pread_full(self.fd, bs, pos, f"entry {i}")
            sector, nsec, flags, dlen = ENTRY.unpack_from(hdr)
            if flags & ~KNOWN_FLAGS:
                raise LogError(f"entry {i}: unknown flags {flags:#x}")
            mark = None
            if flags & MARK:
                if dlen > bs - ENTRY.size:
                    raise LogError(f"entry {i}: mark length {dlen} does not "
                                   f"fit in a {bs}-byte entry")
                mark = hdr[ENTRY.size:ENTRY.size + dlen].decode(
                    "utf-8", "replace")
            e = Entry(i, sector, nsec, flags, mark, pos + bs)
            # Discards and marks carry no data in the log, only a range.
            pos += bs + (nsec * bs if e.has_data() else 0)
            if pos > size:
                raise LogError(f"truncated log: data of entry {i} "
                               f"({nsec} x {bs} bytes) ends past the end of "
                               f"the log ({size} bytes)")
            self.entries.append(e)
        self.end = pos

    def data(self, entry, off, length):
        """length bytes of entry's data from byte off of that data."""
        return pread_full(self.fd, length, entry.offset + off,
                          f"data of entry {entry.index}")

    def close(self):
        os.close(self.fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def crash_points(log):
    """Indices of the entries after which the disk state is durable."""
    return [e.index for e in log.entries if e.flags & (FLUSH | FUA)]


class Replayer:
    """Apply a log forward onto a replay device, entry by entry.

    applied is the index of the last entry applied (-1: none).  The replay
    device must hold what the logged device held when logging started
    (for a fresh log: zeroes).  Writes are buffered and fsynced at the end
    of each advance_to, so other processes see the result through the
    device's page cache and on the device itself.
    """

    def __init__(self, logpath, replaypath, discard="zero"):
        if discard not in ("zero", "skip"):
            raise LogError(f"bad discard mode {discard!r}: zero or skip")
        self.discard = discard
        self.log = Log(logpath)
        try:
            self.fd = os.open(replaypath, os.O_RDWR)
            self.size = dev_size(self.fd)
        except BaseException:
            self.log.close()
            raise
        self.applied = -1

    def advance_to(self, n, fsync=True):
        """Apply entries applied+1 .. n inclusive.  Replay only goes
        forward: to go back, zero the device and use a new Replayer."""
        entries = self.log.entries
        if not -1 <= n < len(entries):
            raise LogError(f"entry {n} out of range: the log has "
                           f"{len(entries)} entries (0..{len(entries) - 1})")
        if n < self.applied:
            raise LogError(f"cannot go back from entry {self.applied} to {n}")
        todo = entries[self.applied + 1:n + 1]
        bs = self.log.sectorsize
        # check every range first, so a bad entry leaves the device untouched
        for e in todo:
            if e.flags & MARK:
                continue
            if (e.sector + e.nr_sectors) * bs > self.size:
                raise LogError(f"entry {e.index}: sectors {e.sector}+"
                               f"{e.nr_sectors} (x{bs} bytes) end past the "
                               f"replay device ({self.size} bytes)")
        for e in todo:
            self._apply(e, bs)
            self.applied = e.index
        if fsync and todo:
            os.fsync(self.fd)

    def _apply(self, e, bs):
        if e.flags & MARK or e.nr_sectors == 0:
            return                              # empty flush, mark
        if e.flags & DISCARD and self.discard == "skip":
            return
        dst, length = e.sector * bs, e.nr_sectors * bs
        for off in range(0, length, CHUNK):
            n = min(CHUNK, length - off)
            # what a discard leaves is undefined; zero is the safe choice
            buf = bytes(n) if e.flags & DISCARD else self.log.data(e, off, n)
            if os.pwrite(self.fd, buf, dst + off) != n:
                raise OSError(f"short write to the replay device at byte "
                              f"{dst + off}")

    def close(self):
        os.close(self.fd)
        self.log.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# --- command line ----------------------------------------------------------

def cmd_info(a):
    with Log(a.logdev) as log:
        es = log.entries
        marks = [e.mark for e in es if e.flags & MARK]
        print(f"magic       {log.magic:#x}")
        print(f"version     {log.version}")
        print(f"nr_entries  {log.nr_entries}")
        print(f"sectorsize  {log.sectorsize}")
        print(f"log_bytes   {log.end}")
        print(f"writes      {sum(e.has_data() for e in es)}")
        print(f"flush       {sum(bool(e.flags & FLUSH) for e in es)}")
        print(f"fua         {sum(bool(e.flags & FUA) for e in es)}")
        print(f"discard     {sum(bool(e.flags & DISCARD) for e in es)}")
        print(f"marks       {len(marks)}" +
              (f" ({', '.join(marks)})" if marks else ""))
        print(f"metadata    {sum(bool(e.flags & METADATA) for e in es)}")
        print(f"crashpoints {len(crash_points(log))}")


def cmd_list(a):
    with Log(a.logdev) as log:
        for e in log.entries:
            flags = "|".join(e.flag_names()) or "-"
            mark = f" {e.mark}" if e.mark is not None else ""
            print(f"{e.index} {e.sector} {e.nr_sectors} {flags}{mark}")


def cmd_crashpoints(a):
    with Log(a.logdev) as log:
        for i in crash_points(log):
            print(i)


def cmd_replay(a):
    with Replayer(a.logdev, a.replaydev, a.discard) as r:
        upto = len(r.log.entries) - 1 if a.upto is None else a.upto
        # fsync only when asked; close() alone leaves the data in the cache
        r.advance_to(upto, fsync=a.fsync)
        print(f"replayed entries 0..{upto} of {len(r.log.entries)}")


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Replay a dm-log-writes log (crash-point testing).")
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, fn, helptext in (
            ("info", cmd_info, "super block and counts of entries by kind"),
            ("list", cmd_list, "one line per entry: index sector nr_sectors "
                               "flags [mark] (sectors in sectorsize units)"),
            ("crashpoints", cmd_crashpoints,
             "indices of the FLUSH and FUA entries")):
        s = sub.add_parser(name, help=helptext)
        s.add_argument("logdev")
        s.set_defaults(fn=fn)
    s = sub.add_parser("replay", help="apply entries 0..N to REPLAYDEV")
    s.add_argument("logdev")
    s.add_argument("replaydev")
    s.add_argument("--upto", type=int, metavar="N",
                   help="last entry to apply, inclusive (default: all)")
    s.add_argument("--discard", choices=("zero", "skip"), default="zero",
                   help="write zeroes over discarded ranges (default) or "
                        "leave them")
    s.add_argument("--fsync", action="store_true",
                   help="fsync the replay device at the end")
    s.set_defaults(fn=cmd_replay)
    a = p.parse_args(argv)
    try:
        a.fn(a)
    except (LogError, OSError) as e:
        print(f"logreplay: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
