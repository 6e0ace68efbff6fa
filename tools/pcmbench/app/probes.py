# SPDX-License-Identifier: GPL-2.0-only
"""What the guest measures beside the program it runs: the block layer's
view of a device, the major page faults, the requests to the 9p root
(P9Trace), a process's /proc/PID/io, and resident(): the files kept in
the page cache for the run (a VM reads them over 9p)."""
import os
import subprocess

TRACEFS = '/sys/kernel/tracing'
P9_EVENT = 'events/9p/9p_client_req'


def disk_stat(dev):
    """/sys/block/dm-N/stat of @dev (/dev/mapper/NAME): the block layer's
    view, for dm-linear too: ios and ms per reads, writes, flushes."""
    kname = subprocess.run(['dmsetup', 'info', '-c', '--noheadings', '-o', 'blkdevname',
                            os.path.basename(dev)], check=True, text=True,
                           stdout=subprocess.PIPE).stdout.strip()
    with open(f'/sys/block/{kname}/stat', encoding='utf-8') as fh:
        f = [int(x) for x in fh.read().split()]
    f += [0] * (17 - len(f))
    return {'reads': f[0], 'read_sectors': f[2], 'read_ms': f[3], 'writes': f[4],
            'write_sectors': f[6], 'write_ms': f[7], 'busy_ms': f[9], 'flushes': f[14],
            'flush_ms': f[15]}


def resident(paths):
    """Every file of @paths mapped and each of its pages read, the maps
    returned (keep them: while a file is mapped its pages stay in the page
    cache).  A VM's root is 9p with no cache (virtme-ng mounts it without
    cache=): a read() there goes to the host every time and caches
    nothing, and a file nobody has open or mapped loses its pages, so a
    PostgreSQL server started again reads its code from the host page by
    page as it first runs it: in pgbench's measured run too, where each
    fault idles the icount guest and its clock jumps to the next timer
    (-icount sleep=off), pgbench's own deadline among them: a run of
    pgbench -T that completes no transaction."""
    import mmap
    maps = []
    for path in dict.fromkeys(os.path.realpath(p) for p in paths):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            size = os.fstat(fd).st_size
            if not size:
                continue
            m = mmap.mmap(fd, size, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        m.madvise(mmap.MADV_WILLNEED)
        sum(m[off] for off in range(0, size, mmap.PAGESIZE))   # each page read
        maps.append(m)
    return maps


def vmstat_faults():
    """The guest's major page faults so far (/proc/vmstat pgmajfault):
    a page read from a file, in a VM over 9p (its root), while the guest
    idles and its icount clock jumps."""
    with open('/proc/vmstat', encoding='utf-8') as fh:
        for line in fh:
            if line.startswith('pgmajfault '):
                return int(line.split()[1])
    return 0


class P9Trace:
    """Requests to 9p (the 9p_client_req tracepoint) while it is on, in a
    trace instance of its own (the global buffer left alone): in a VM,
    each is a round trip to the host, during which the icount guest idles
    and its clock jumps to its next timer.  Nothing where 9p is not
    loaded (a real host's root): counts() is None."""

    def __init__(self, name='pcm-app-9p'):
        self.dir = None
        if not os.path.isdir(os.path.join(TRACEFS, 'events')):
            subprocess.run(['mount', '-t', 'tracefs', 'nodev', TRACEFS],
                           stderr=subprocess.DEVNULL, check=False)
        if not os.path.isdir(os.path.join(TRACEFS, P9_EVENT)):
            return
        path = os.path.join(TRACEFS, 'instances', name)
        try:
            if not os.path.isdir(path):
                os.mkdir(path)
            self.dir = path
        except OSError:
            pass

    def _write(self, rel, text):
        with open(os.path.join(self.dir, rel), 'w', encoding='utf-8') as fh:
            fh.write(text)

    def start(self):
        if self.dir:
            self._write('trace', '')
            self._write(os.path.join(P9_EVENT, 'enable'), '1')

    def counts(self):
        """The requests since start(), by process name ({} none), the
        tracepoint off again; None where there is no 9p."""
        if not self.dir:
            return None
        self._write(os.path.join(P9_EVENT, 'enable'), '0')
        by = {}
        with open(os.path.join(self.dir, 'trace'), encoding='utf-8', errors='replace') as fh:
            for line in fh:
                if line.startswith('#') or '9p_client_req' not in line:
                    continue
                comm = line.split('[', 1)[0].strip().rsplit('-', 1)[0]
                by[comm] = by.get(comm, 0) + 1
        return by

    def close(self):
        if self.dir:
            try:
                self._write(os.path.join(P9_EVENT, 'enable'), '0')
                os.rmdir(self.dir)
            except OSError:
                pass
            self.dir = None


def proc_io(pid):
    """/proc/PID/io as a dict (rchar: the bytes its read()s returned, its
    threads' included; read_bytes: those the block layer fetched)."""
    try:
        with open(f'/proc/{pid}/io', encoding='utf-8') as fh:
            return {k: int(v) for k, v in (line.split(': ') for line in fh if ': ' in line)}
    except (OSError, ValueError):
        return None


def p9_text(by):
    """{process: requests} as a phrase."""
    if not by:
        return '0'
    return f'{sum(by.values())} (' + ', '.join(f'{c} {n}' for c, n in sorted(
        by.items(), key=lambda x: -x[1])) + ')'
