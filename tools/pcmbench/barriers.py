# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench barriers

what gap moves cost the backing device: dm-pcm (preset:none
gap_interval:0 format) with 1 and 1024 domains makes about 1,000 moves
(one 'move_gap ceil(1000/K)'), and blktrace counts the bios queued ('Q'
events) on the backing device: flushes, FUA writes, writes, reads and
sectors, per 1,000 moves, and the guest time of the move_gap message.
The backing device is a memory-backed null_blk with a write cache
(cache_size): brd has none, so the block layer drops flush and FUA flags
before blktrace sees them.
"""
import os
import statistics
import subprocess
from pcmchar import trace
from pcmlib.bench import pcm_create, status
from .common import sh, remove_devices, move_gap_timed, med, table
from .options import HOST, ICOUNT, ROUNDS

NAME = 'barriers'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS)   # its options' groups (options.py)


BARRIER_DOMAINS = (1, 1024)
BARRIER_MOVES = 1000  # about this many moves: move_gap ceil(1000/K)
BARRIER_COLUMNS = ('flushes', 'empty_flushes', 'fua_writes', 'writes', 'reads',
                   'write_sectors', 'read_sectors')
NULLB_CACHE_MIB = 16  # null_blk's write cache: flush and FUA reach it


def fresh_nullblk():
    """A memory-backed null_blk with a volatile write cache, so that flush
    and FUA reach it (brd has no cache: the block layer strips them before
    blktrace sees them); 1 GiB, room for 1024 domains."""
    remove_devices()
    sh('rmmod null_blk 2>/dev/null; true')
    sh(f'modprobe null_blk nr_devices=1 gb=1 memory_backed=1 cache_size={NULLB_CACHE_MIB}')
    return '/dev/nullb0'


def blktrace_stop(proc, backing, tdir):
    """Stop blktrace (pcmchar.trace.start on backing, into tdir): its 'Q'
    events as (RWBS, sectors) and the number of events it dropped."""
    dropped = trace.stop(proc)
    text = sh(f"blkparse -q -i {os.path.basename(backing)} -D {tdir} -f '%a %d %n\\n'",
              stderr=subprocess.DEVNULL)
    return [(f[1], int(f[2])) for f in map(str.split, text.splitlines())
            if len(f) == 3 and f[0] == 'Q'], dropped


def count_bios(queued):
    """blkparse's RWBS: a leading F is a preflush (alone, 0 sectors: an
    empty flush), then the operation (R, W, D, N), then F for FUA."""
    c = dict.fromkeys(BARRIER_COLUMNS, 0)
    for rwbs, sectors in queued:
        preflush = rwbs.startswith('F')
        op, fua = rwbs[preflush:preflush + 1], rwbs[preflush + 1:preflush + 2] == 'F'
        c['flushes'] += preflush
        c['empty_flushes'] += preflush and not sectors
        c['fua_writes'] += op == 'W' and fua
        if op == 'W' and sectors:
            c['writes'] += 1
            c['write_sectors'] += sectors
        if op == 'R':
            c['reads'] += 1
            c['read_sectors'] += sectors
    return c


def guest(args, runs):
    backing = fresh_nullblk()
    for rnd in range(args.rounds):
        for k in BARRIER_DOMAINS:
            dev = pcm_create('bench-bar', f'preset:none gap_interval:0 domains:{k} format',
                             backing)
            n = -(-BARRIER_MOVES // k)
            before = status(dev)['gap_moves']
            proc = trace.start([backing], '/tmp/bench-bt')
            took = move_gap_timed('bench-bar', n)
            queued, dropped = blktrace_stop(proc, backing, '/tmp/bench-bt')
            moves = status(dev)['gap_moves'] - before
            runs.append({'domains': k, 'move_gap': n, 'moves': moves, 'round': rnd,
                         'move_gap_s': took, 'dropped': dropped, **count_bios(queued)})
            print(f'# round {rnd} domains {k:4} {moves} moves in {took:.3f} s: '
                  f'{runs[-1]}', flush=True)
            remove_devices()


def summarize(res):
    clock = 'icount guest clock' if res['icount'] else 'guest clock (no icount)'
    lines = [f"kernel {res['kernel']}, {res['cpus']} vCPU, {res['rounds']} rounds, medians; "
             f"dm-pcm preset:none gap_interval:0 over null_blk (memory-backed, "
             f"{NULLB_CACHE_MIB} MiB write cache)",
             "bios counted on the backing device from blktrace 'Q' (queued) events only, "
             "per 1,000 gap moves; flushes: RWBS with a leading F (preflush, of which "
             "empty: 0 sectors); FUA: an F after the W; writes: W with data",
             f"move_gap: time.monotonic() around its ioctl, no dmsetup ({clock})"]
    cells, summary = [], []
    for k in BARRIER_DOMAINS:
        rs = [r for r in res['runs'] if r['domains'] == k]
        per = {c: statistics.median(1000 * r[c] / r['moves'] for r in rs)
               for c in BARRIER_COLUMNS}
        took, moves = med(rs, 'move_gap_s'), med(rs, 'moves')
        dropped = sum(r['dropped'] for r in rs)
        cells.append([k, rs[0]['move_gap'], f'{moves:.0f}',
                      *(f'{per[c]:.0f}' for c in BARRIER_COLUMNS),
                      f'{took * 1000:.1f}ms', f'{took / moves * 1e6:.1f}us',
                      f'(blktrace dropped {dropped} events)' if dropped else ''])
        summary.append({'domains': k, 'moves': moves, 'per_1000_moves': per,
                        'move_gap_s': took, 'per_move_us': took / moves * 1e6,
                        'dropped': dropped})
    # BARRIER_COLUMNS' headings, then blktrace's losses, if any
    lines += table(['domains', 'move_gap', 'moves', 'flushes', 'empty', 'FUA', 'writes', 'reads',
                    'wr sect', 'rd sect', 'move_gap', 'per move', ''], cells, '>' * 12 + '<')
    return '\n'.join(lines), summary
