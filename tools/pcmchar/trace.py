# SPDX-License-Identifier: GPL-2.0-only
"""blktrace around a run: on the device under test and on its backing
device, into a tmpfs (no other I/O while tracing), summarized with
blkparse and btt: Q2C (queued to completed) on top against Q2C and D2C
(issued to completed: a blk-mq backing device only) below, and the
remapped offsets: the 'A' events dm logs on the backing device, "sector
<- (major,minor) sector", where dm-pcm sent each piece of a bio."""
import os
import re
import signal
import subprocess
import time

# btt's rows: Q2C, or Q2Cdm for a device-mapper device
BTT_RE = re.compile(r'^(Q2C|D2C|Q2D)(?:dm)?\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+(\d+)', re.M)
# blkparse's default line of a remap: "... A W 4104 + 8 <- (253,0) 8"
REMAP_RE = re.compile(r'\sA\s+\S+\s+(\d+)\s+\+\s+(\d+)\s+<-\s+\((\d+),\s*(\d+)\)\s+(\d+)\s*$')


def kernel_name(dev):
    """The kernel's name of block device dev (dm-0 for /dev/mapper/NAME,
    which dmsetup makes a node of its own, not a link, where no udev runs)."""
    rdev = os.stat(dev).st_rdev
    link = f'/sys/dev/block/{os.major(rdev)}:{os.minor(rdev)}'
    return os.path.basename(os.readlink(link))


def start(devs, tdir):
    """blktrace of every device of devs into tdir (a fresh tmpfs); returns
    once it traces them all."""
    subprocess.run('mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug',
                   shell=True, check=True)
    subprocess.run(f'mkdir -p {tdir}; umount {tdir} 2>/dev/null; mount -t tmpfs none {tdir}',
                   shell=True, check=True)
    args = ['blktrace', '-D', tdir]
    for d in devs:
        args += ['-d', d]
    proc = subprocess.Popen(args, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    relays = [f'/sys/kernel/debug/block/{kernel_name(d)}/trace0' for d in devs]
    deadline = time.monotonic() + 60
    while not all(os.path.exists(r) for r in relays):
        if proc.poll() is not None:
            raise RuntimeError(f'blktrace failed: {proc.stdout.read()}')
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f'blktrace: no {" ".join(relays)} after 60 s')
        time.sleep(0.05)
    time.sleep(1)  # it creates the relay files, then starts
    return proc


def stop(proc):
    """Stop blktrace: the number of events it dropped."""
    proc.send_signal(signal.SIGINT)
    out = proc.communicate()[0]
    return sum(int(n) for n in re.findall(r'dropped (\d+)', out))


def parse_btt(text):
    """btt's 'All Devices' averages: {'Q2C': (min, avg, max, n) in us}."""
    out = {}
    for m in BTT_RE.finditer(text):
        if m[1] not in out:  # the first table is All Devices
            out[m[1]] = tuple(float(m[i]) * 1e6 for i in (2, 3, 4)) + (int(m[5]),)
    return out


def parse_remaps(text, start_sector=0):
    """blkparse's 'A' lines: how many pieces dm sent down, how many landed
    elsewhere than start_sector + their sector on the device above (the
    remap moved them: start-gap, the layout), and the first few."""
    n = moved = 0
    sample = []
    for line in text.splitlines():
        m = REMAP_RE.search(line)
        if not m:
            continue
        to, length, frm = int(m[1]), int(m[2]), int(m[5])
        n += 1
        moved += to != start_sector + frm
        if len(sample) < 8:
            sample.append((frm, to, length))
    return {'remaps': n, 'moved': moved, 'sample': sample}


def summarize(devs, tdir, outdir, name):
    """blkparse and btt on each traced device; the texts kept in outdir
    (NAME-DEV.btt, NAME-DEV.remaps); {dev: {'btt': ..., 'remaps': ...}}."""
    os.makedirs(outdir, exist_ok=True)
    out = {}
    for d in devs:
        base = kernel_name(d)
        dump = os.path.join(tdir, f'{base}.bin')
        subprocess.run(['blkparse', '-q', '-i', base, '-D', tdir, '-d', dump, '-o', '/dev/null'],
                       check=True, stdout=subprocess.DEVNULL)  # its "Input file" lines
        # in tdir: btt writes files of its own where it runs
        btt = subprocess.run(['btt', '-i', dump], text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, cwd=tdir).stdout
        events = subprocess.run(['blkparse', '-q', '-i', base, '-D', tdir], text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout
        remaps = ''.join(line + '\n' for line in events.splitlines() if REMAP_RE.search(line))
        for ext, text in (('btt', btt), ('remaps', remaps)):
            with open(os.path.join(outdir, f'{name}-{base}.{ext}'), 'w') as fh:
                fh.write(text)
        out[d] = {'btt': parse_btt(btt), 'remaps': parse_remaps(remaps)}
    return out
