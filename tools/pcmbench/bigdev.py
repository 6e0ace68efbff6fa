# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench bigdev

dm-pcm over a 1 TiB sparse NVMe namespace (4 KiB rows) with 1, 64 and
1024 domains, and dm-linear: the time of creating it (format), the
kernel memory it took, and the time of 'move_gap 10'.  A plain TCG VM,
no icount (the NVMe is backed by a host file): wall-clock figures that
depend on the host.
"""
import os
from pcmlib.bench import pcm_length, status
from .common import sh, remove_devices, dm_timed, move_gap_timed, med, table
from .options import HOST, ROUNDS

NAME = 'bigdev'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ROUNDS)   # its options' groups (options.py)


BIGDEV_MIB = 1024 * 1024  # the sparse NVMe namespace: 1 TiB
BIGDEV_DOMAINS = (1, 64, 1024)
BIGDEV_MOVE_GAP = 10


def kernel_kib():
    """Unreclaimable kernel memory (KiB): slab, vmalloc and per-CPU."""
    info = dict(line.split(':') for line in open('/proc/meminfo'))
    return sum(int(info[k].split()[0]) for k in ('SUnreclaim', 'VmallocUsed', 'Percpu'))


def guest(args, runs):
    nvme = os.environ.get('PCM_NVME')
    if not nvme or not os.path.exists(nvme):
        raise RuntimeError('bigdev needs the NVMe namespace (tools/vm-run --nvme)')
    sectors = int(sh(f'blockdev --getsz {nvme}'))
    for rnd in range(args.rounds):
        for k in (0,) + BIGDEV_DOMAINS:  # 0: dm-linear, what any dm device costs
            name = 'bench-big'
            if k:
                words = f'preset:none gap_interval:0 domains:{k} format'
                length, target = pcm_length(nvme, words), 'pcm'
                params = f'{nvme} 0 {len(words.split())} {words}'
            else:
                length, target, params = sectors, 'linear', f'{nvme} 0'
            kib = kernel_kib()
            took = (dm_timed('create', name)
                    + dm_timed('load', name, length, target, params.encode())
                    + dm_timed('resume', name))
            r = {'device': 'dm-' + target, 'domains': k, 'round': rnd,
                 'create_s': took, 'kernel_kib': kernel_kib() - kib}
            if k:
                before = status(name)['gap_moves']
                r['move_gap_s'] = move_gap_timed(name, BIGDEV_MOVE_GAP)
                r['moves'] = status(name)['gap_moves'] - before
            runs.append(r)
            print(f'# round {rnd} domains {k:4}: {r}', flush=True)
            remove_devices()


def summarize(res):
    clock = 'icount guest clock' if res['icount'] else \
        'guest wall clock under TCG without icount: host speed, the host may be busy'
    lines = [f"kernel {res['kernel']}, {res['cpus']} vCPU, {res['rounds']} rounds, medians; "
             f"1 TiB sparse NVMe namespace (host file), row_size 4096, "
             f"preset:none gap_interval:0 domains:K format",
             f"times: time.monotonic() around the ioctls, no dmsetup ({clock}); create: "
             f"create, table load, resume; kernel KiB (coarse, +-100): SUnreclaim+"
             f"VmallocUsed+Percpu of /proc/meminfo after create minus before"]
    cells, summary = [], []
    for dev, k in [('dm-linear', 0)] + [('dm-pcm', k) for k in BIGDEV_DOMAINS]:
        rs = [r for r in res['runs'] if r['device'] == dev and r['domains'] == k]
        s = {'device': dev, 'domains': k, 'create_s': med(rs, 'create_s'),
             'kernel_kib': med(rs, 'kernel_kib')}
        row = [dev, k or '-', f"{s['create_s'] * 1000:.1f}ms", f"{s['kernel_kib']:.0f}"]
        if k:
            s.update(move_gap_s=med(rs, 'move_gap_s'), moves=med(rs, 'moves'))
            s['per_move_us'] = s['move_gap_s'] / s['moves'] * 1e6
            row += [f"{s['move_gap_s'] * 1000:.1f}ms", f"{s['moves']:.0f}",
                    f"{s['per_move_us']:.1f}us"]
        cells.append(row)
        summary.append(s)
    lines += table(['device', 'domains', 'create', 'kernel KiB', f'move_gap {BIGDEV_MOVE_GAP}',
                    'moves', 'per move'], cells)
    return '\n'.join(lines), summary
