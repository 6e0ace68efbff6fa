# SPDX-License-Identifier: GPL-2.0-only
"""The tables of an app run's report.md, and their cells: the answer,
latency, the cache, lifetime and the device's view; fmt() the figures'
one format."""
from .results import READS_REACHED


def fmt(v, unit=''):
    if v is None:
        return '-'
    if isinstance(v, float):
        v = f'{v:.3g}' if abs(v) < 100 else f'{v:,.0f}'
    return f'{v}{unit}'


def time_cell(row):
    """Where the time went: the share of the run the device was busy (the
    block layer's io_ticks: at least one request in flight), and how its
    requests' time split between reads and writes: the modeled time
    (status: requests x modeled mean, which includes their queueing;
    requests overlap, so it is a split, not a sum of the run) per
    transaction; flushes as counted (brd below advertises no volatile
    cache, so an fsync is its writes and no flush reaches the device)."""
    out = []
    if row.get('busy_pct') is not None:
        out.append(f'busy {row["busy_pct"]:.0f} % of the run')
    if row.get('model_read_us') is not None:
        rd, wr = row['model_read_us'], row['model_write_us']
        if rd + wr:
            out.append(f'reads {rd / (rd + wr) * 100:.0f} %, writes {wr / (rd + wr) * 100:.0f} % '
                       f'of its modeled time ({rd:,.0f} + {wr:,.0f} us per transaction)')
        else:
            out.append('no modeled time')
    elif row.get('blk_write_us') is not None:
        rd, wr = row['blk_read_us'], row['blk_write_us']
        out.append(f'in flight: reads {rd:,.0f} + writes {wr:,.0f} us per transaction')
    if row.get('flushes_per_txn') is not None:
        out.append(f'flushes {row["flushes_per_txn"]:.2g} per transaction')
    return '; '.join(out) or '-'


def qd1_cell(r):
    rd, wr = r.get('model_qd1_read_us'), r.get('model_qd1_write_us')
    return f'{fmt(rd)} / {fmt(wr)} us' if rd is not None or wr is not None else '-'


def io_cell(r):
    """The device's reads / writes per transaction."""
    if r.get('dev_reads_per_txn') is None:
        return '-'
    return f'{r["dev_reads_per_txn"]:.3g} / {r["dev_writes_per_txn"]:.3g}'


def hit_cell(r):
    """The caches' hit ratio: both, then shared_buffers' and the page
    cache's."""
    if r.get('cache_hit_pct') is None:
        return '-'
    pc = r.get('pagecache_hit_pct')
    return (f'{r["cache_hit_pct"]:.1f} % (buffers {r["buffer_hit_pct"]:.1f} %, page cache '
            f'{fmt(pc, " %") if pc is None else f"{pc:.1f} %"})')


def table_lines(rs):
    out = ['| device | device alone: 4 KiB QD1 read / write (model) | TPS | vs dm-linear | '
           'last half / first half | latency mean | p50 | p99 | p99.9 | '
           'device reads / writes per transaction | cache hits | '
           'where the time went (device clock, per transaction) | '
           'lifetime with / without start-gap | verdict |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rs:
        out.append(f'| `{r["device"]}` | {qd1_cell(r)} | {fmt(r["tps"])} | '
                   f'{fmt(r.get("tps_vs_linear"), "x")} | {fmt(r.get("last_vs_first"))} | '
                   f'{fmt(r["lat_mean_us"], " us")} | {fmt(r["lat_p50_us"], " us")} | '
                   f'{fmt(r["lat_p99_us"], " us")} | {fmt(r["lat_p99.9_us"], " us")} | '
                   f'{io_cell(r)} | {hit_cell(r)} | '
                   f'{time_cell(r)} | {life_cell(r)} | **{r["verdict"]}**: {r["reason"]} |')
    return out


def human_secs(secs):
    """A lifetime for a reader (pcmctl's words): s, days or years."""
    if secs is None:
        return 'unbounded'
    if secs >= 365.25 * 86400:
        return f'{secs / (365.25 * 86400):.3g} years'
    if secs >= 86400:
        return f'{secs / 86400:.3g} days'
    return f'{secs:.3g} s'


def life_cell(r):
    """The lifetime with / without start-gap."""
    if r.get('lifetime_error'):
        return 'replay failed'
    if 'life_start_gap_s' not in r:
        return '-'
    return f'{human_secs(r["life_start_gap_s"])} / {human_secs(r["life_no_start_gap_s"])}'


def life_lines(run):
    """## Lifetime: per dm-pcm device, the wear its measured run's writes
    leave, replayed, with and without start-gap."""
    out = ['The measured run\'s requests (blktrace of the device, logs/dK-blkparse.txt.xz) '
           'replayed by the timing model, its writes repeated (pcmctl model --trace --repeat '
           'N), open loop at K times the trace\'s speed (the device\'s clock), once with '
           'the device\'s start-gap and once without: the lifetime is the time until the '
           'most-written row reaches the table\'s endurance at this workload\'s rate (the '
           'module\'s own projection, pcm_wear_life()); "if level": were every row worn '
           'alike.  The tracing ran during the measured run (its CPU is in the guest\'s).', '',
           '| device | passes | with start-gap | its most-written row (writes), gap moves | '
           'without | its most-written row | if level | endurance | command |',
           '|---|---|---|---|---|---|---|---|---|']
    for r in run['runs']:
        life = r.get('lifetime')
        if not life:
            continue
        if life.get('error'):
            out.append(f'| `{r["device"]}` | - | replay failed: {life["error"]} | | | | | | '
                       f'`{life["command"]}` |')
            continue
        sg, no = life['start_gap'], life['no_start_gap']
        out.append(f'| `{r["device"]}` | {life["passes"]} | {human_secs(sg["lifetime_s"])} | '
                   f'{sg["max"]}, {sg["gap_moves"]} | {human_secs(no["lifetime_s"])} | '
                   f'{no["max"]} | {human_secs(sg["lifetime_level_s"])} | {sg["endurance"]:,} | '
                   f'`{life["command"]}` |')
    if len(out) == 4:
        out = ['No lifetime: no dm-pcm device\'s run was traced (lifetime = false, or '
               'dm-linear only).']
    return out


def mib(v):
    return '-' if v is None else f'{v / (1 << 20):,.1f} MiB'


def cache_lines(rs, spec_memory):
    """The memory cgroup's figures per device: what bounded the cache."""
    if not spec_memory:
        return ['No memory cgroup (the spec sets no memory): the server\'s cache was the '
                'guest\'s whole memory.  Where the device served under '
                f'{READS_REACHED:g} reads per transaction, the verdict says its reads did not '
                'reach it.']
    out = [f'The server ran in a memory cgroup (memory.max {mib(spec_memory)}, no swap): its '
           'page cache and its own memory (shared_buffers among it) together bounded by it, '
           'while the ramdisk under the device is not.  Peak: memory.peak since the cgroup '
           'was made (pgbench -i included); page cache: memory.stat\'s file at the run\'s '
           'end; limit reached: memory.events max during the run; refaults: file pages read '
           'again after the cache dropped them, during the run.', '',
           '| device | memory.max | peak | page cache at the end | limit reached | refaults | '
           'reads reached the device |', '|---|---|---|---|---|---|---|']
    for r in rs:
        if r.get('memory_max') is None and r.get('cgroup_peak') is None:
            continue
        reached = {True: 'yes', False: '**no**', None: '-'}[r.get('reads_reached')]
        out.append(f'| `{r["device"]}` | {mib(r.get("memory_max"))} | '
                   f'{mib(r.get("cgroup_peak"))} | {mib(r.get("cgroup_file"))} | '
                   f'{fmt(r.get("cgroup_limit_hits"))} | {fmt(r.get("refaults"))} | '
                   f'{reached} |')
    return out


def view_lines(rs):
    out = ['| device | read IOPS | write IOPS | flushes / txn | reads in flight us/txn | '
           'writes | flushes | rank util max / mean | gap moves | wear max / mean | '
           'ECC corrected bits | held / late |',
           '|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in rs:
        util = (f'{r["rank_util_max_pct"]:.1f} / {r["rank_util_mean_pct"]:.1f} %'
                if r.get('rank_util_max_pct') is not None else '-')
        wear = (f'{r["wear_max"]} / {r["wear_mean"]}' if r.get('wear_max') is not None
                else '-')
        held = f'{r["held"]} / {r["late"]}' if r.get('held') is not None else '-'
        out.append(f'| `{r["device"]}` | {fmt(r["read_iops"])} | {fmt(r["write_iops"])} | '
                   f'{fmt(r["flushes_per_txn"])} | {fmt(r.get("blk_read_us"))} | '
                   f'{fmt(r.get("blk_write_us"))} | {fmt(r.get("blk_flush_us"))} | {util} | '
                   f'{fmt(r.get("gap_moves"))} | {wear} | {fmt(r.get("ecc_corrected_bits"))} | '
                   f'{held} |')
    return out


def latency_lines(rs):
    out = ['| device | transactions | mean | p50 | p90 | p99 | p99.9 | max |',
           '|---|---|---|---|---|---|---|---|']
    for r in rs:
        out.append(f'| `{r["device"]}` | {fmt(r["transactions"])} | ' + ' | '.join(
            fmt(r[f'lat_{m}_us'], ' us') for m in ('mean', 'p50', 'p90', 'p99', 'p99.9',
                                                   'max')) + ' |')
    return out
