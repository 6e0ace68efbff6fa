# SPDX-License-Identifier: GPL-2.0-only
"""The figures of an app run, one row per device, on the device's clock
(TPS x K, latencies / K): where its time went, whether reads reached
it, the caches' hit ratios, its lifetime, its verdict; app-table.csv
and .json (TABLE_FIELDS, their columns)."""
import json
import os

from .postgres import PCTS, PG_PAGE, halves
from .spec import LINEAR
from .verdict import FAILED, reads_note, verdict

# reads reach the device where it serves at least this many per transaction
READS_REACHED = 0.01


def device_time(r):
    """Where a device's time went, per transaction, us on the device's
    clock: the modeled read and write time (status: reads x the modeled
    read mean, writes x the write mean) and the block layer's (diskstats:
    the time reads, writes and flushes were in flight, dm-linear too)."""
    k = r.get('dilation') or 1
    n = (r['pgbench'].get('transactions') or 0)
    out = {}
    st = r.get('status')
    if st and n:
        out['model_read_us'] = st['reads'] * st['read_lat_mean_ns'] / 1000 / k / n
        out['model_write_us'] = st['writes'] * st['write_lat_mean_ns'] / 1000 / k / n
    b = r.get('blk')
    if b and n:
        for side in ('read', 'write', 'flush'):
            out[f'blk_{side}_us'] = b[f'{side}_ms'] * 1000 / k / n
    return out


def cache_figures(r):
    """Whether reads reached the device, per transaction: the device's
    reads and writes (dm-pcm's status counters, dm-linear's
    /sys/block/dm-N/stat), the share of its modeled time that was reads
    and writes, and the caches' hit ratios: shared_buffers' (PostgreSQL's
    blks_hit over blks_hit + blks_read), the page cache's (the blocks
    PostgreSQL read from the kernel that the device did not serve: 1 -
    device read bytes / (blks_read x 8 KiB), at least 0) and the two
    together (1 - device read bytes / every block PostgreSQL asked
    for).  Read-ahead can make the device read more than was asked:
    then 0.  The memory cgroup's figures where the spec had one."""
    n = r['pgbench'].get('transactions') or 0
    out = {}
    st, b = r.get('status'), r.get('blk') or {}
    if st:
        reads, writes, rbytes = st['reads'], st['writes'], st.get('read_bytes')
    else:
        reads, writes = b.get('reads'), b.get('writes')
        rbytes = b['read_sectors'] * 512 if b.get('read_sectors') is not None else None
    if n and reads is not None:
        out['dev_reads_per_txn'] = reads / n
        out['dev_writes_per_txn'] = writes / n
    t = device_time(r)
    if t.get('model_read_us') is not None:
        tot = t['model_read_us'] + t['model_write_us']
        out['read_share_pct'] = t['model_read_us'] / tot * 100 if tot else None
        out['write_share_pct'] = t['model_write_us'] / tot * 100 if tot else None
    pb = r.get('pg_blocks')
    if pb and rbytes is not None:
        asked = pb['hit'] + pb['read']
        if asked:
            out['buffer_hit_pct'] = pb['hit'] / asked * 100
            out['cache_hit_pct'] = max(0.0, 1 - rbytes / (asked * PG_PAGE)) * 100
        if pb['read']:
            out['pagecache_hit_pct'] = max(0.0, 1 - rbytes / (pb['read'] * PG_PAGE)) * 100
    cg = r.get('cgroup')
    if cg:
        out['memory_max'] = cg.get('max')
        out['cgroup_peak'] = cg.get('peak')
        out['cgroup_file'] = cg.get('file')
        before = cg.get('before') or {}
        if cg.get('events_max') is not None:
            out['cgroup_limit_hits'] = cg['events_max'] - (before.get('events_max') or 0)
        if cg.get('refault_file') is not None:
            out['refaults'] = cg['refault_file'] - (before.get('refault_file') or 0)
        out['oom_kills'] = cg.get('oom_kill')
    if 'dev_reads_per_txn' in out:
        out['reads_reached'] = out['dev_reads_per_txn'] >= READS_REACHED
    return out


def rows(run):
    """One dict per device: the figures on the device's clock (TPS x K,
    latencies / K; dm-linear at the run's K: the same host K times faster),
    the device's view, the verdict."""
    K = run.get('dilation') or 1
    out = []
    for r in run['runs']:
        pcm = r['device'] != LINEAR
        k = r.get('dilation') or K
        r = dict(r, dilation=k)
        pg, lat = r['pgbench'], r['latency']
        row = {'device': r['device'], 'dilation': k,
               'tps': pg['tps'] * k if pg.get('tps') else None,
               'transactions': pg.get('transactions'),
               'lat_mean_us': lat['mean_us'] / k if lat.get('mean_us') else None,
               'lat_max_us': lat['max_us'] / k if lat.get('max_us') else None,
               'fsck_rc': r['fsck_rc'], 'removed': r['removed'], 'overhead_ns': r['overhead_ns']}
        for p in PCTS:
            v = lat.get(f'p{p:g}_us')
            row[f'lat_p{p:g}_us'] = v / k if v is not None else None
        row.update(device_time(r))
        row.update(cache_figures(r))
        row.update(life_fields(r.get('lifetime')))
        prog = r.get('progress') or []
        first, last = halves(prog, r.get('duration') or (prog[-1][0] if prog else 0))
        row['tps_first_half'] = first * k if first is not None else None
        row['tps_last_half'] = last * k if last is not None else None
        row['last_vs_first'] = last / first if first and last is not None else None
        row['conn_ms'] = pg['conn_ms'] / k if pg.get('conn_ms') is not None else None
        qd1 = r.get('model_qd1') or (None, None)
        row['model_qd1_read_us'], row['model_qd1_write_us'] = qd1
        secs = r['run_s'] / k
        st = r.get('status')
        b = r['blk']
        if b.get('busy_ms') is not None and r['run_s']:
            row['busy_pct'] = b['busy_ms'] / 1000 / r['run_s'] * 100
        row['read_iops'], row['write_iops'] = b['reads'] / secs, b['writes'] / secs
        row['flushes_per_txn'] = b['flushes'] / row['transactions'] if row['transactions'] \
            else None
        if pcm and st:
            row['read_iops'], row['write_iops'] = st['reads'] / secs, st['writes'] / secs
            for key in ('gap_moves', 'ecc_corrected_bits', 'wear_max', 'wear_mean',
                        'write_bytes', 'read_bytes', 'held', 'late', 'flushes'):
                row[key] = st.get(key)
            rk = r.get('ranks') or {}
            ranks = rk.get('per_rank') or []
            if ranks:
                row['rank_util_max_pct'] = max(x['util_ppm'] for x in ranks) / 1e4
                row['rank_util_mean_pct'] = sum(x['util_ppm'] for x in ranks) / len(ranks) / 1e4
        out.append(row)
    lin = next((x for x in out if x['device'] == LINEAR), None)
    for row in out:
        row.update(verdict(row, lin))
        if row['verdict'] != FAILED:
            row['reason'] += reads_note(row)
        if lin and lin.get('tps') and row.get('tps'):
            row['tps_vs_linear'] = row['tps'] / lin['tps']
    return out


TABLE_FIELDS = ('device', 'tps', 'tps_vs_linear', 'tps_first_half', 'tps_last_half',
                'last_vs_first', 'model_qd1_read_us', 'model_qd1_write_us', 'busy_pct',
                'lat_mean_us', 'lat_p50_us', 'lat_p90_us',
                'lat_p99_us', 'lat_p99.9_us', 'lat_max_us', 'model_read_us', 'model_write_us',
                'blk_read_us', 'blk_write_us', 'blk_flush_us', 'read_iops', 'write_iops',
                'flushes_per_txn', 'dev_reads_per_txn', 'dev_writes_per_txn', 'read_share_pct',
                'write_share_pct', 'buffer_hit_pct', 'pagecache_hit_pct', 'cache_hit_pct',
                'reads_reached', 'memory_max', 'cgroup_peak', 'cgroup_file', 'cgroup_limit_hits',
                'refaults', 'oom_kills', 'life_start_gap_s', 'life_no_start_gap_s',
                'wear_max_start_gap', 'wear_max_no_start_gap', 'wear_passes', 'rank_util_max_pct', 'rank_util_mean_pct', 'gap_moves',
                'wear_max', 'wear_mean', 'ecc_corrected_bits', 'held', 'late', 'transactions',
                'verdict', 'reason', 'fsck_rc', 'dilation', 'overhead_ns', 'conn_ms')


def life_fields(life):
    """A lifetime() result as a table row's columns: each lifetime and
    most-written row, with and without start-gap, the passes, the error."""
    life = life or {}
    row = {}
    for key in ('start_gap', 'no_start_gap'):
        if life.get(key):
            row[f'life_{key}_s'] = life[key]['lifetime_s']
            row[f'wear_max_{key}'] = life[key]['max']
    if life:
        row['wear_passes'] = life.get('passes')
        row['lifetime_error'] = life.get('error')
    return row


def write_table(run_dir, rs):
    import csv
    path = os.path.join(run_dir, 'app-table.csv')
    with open(path, 'w', newline='', encoding='utf-8') as fh:
        w = csv.DictWriter(fh, fieldnames=TABLE_FIELDS, extrasaction='ignore')
        w.writeheader()
        for r in rs:
            w.writerow({k: '' if r.get(k) is None else r.get(k) for k in TABLE_FIELDS})
    with open(os.path.join(run_dir, 'app-table.json'), 'w', encoding='utf-8') as fh:
        json.dump({'fields': list(TABLE_FIELDS), 'rows': rs}, fh, indent=1)
        fh.write('\n')
    return path
