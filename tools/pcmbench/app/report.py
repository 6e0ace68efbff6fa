# SPDX-License-Identifier: GPL-2.0-only
"""An app run's report: finish() (report.md, app-table.csv and .json, the
figure, from run.json) and headline(), the table printed on the
console; SECTIONS, report.md's."""
import os

from .figures import draw
from .model import lifetime, model_qd1
from .postgres import halves
from .probes import p9_text
from .results import rows, write_table
from .spec import LINEAR
from .tables import (cache_lines, fmt, io_cell, latency_lines, life_lines, table_lines,
                     time_cell, view_lines)


def conditions(run, unit='TPS'):
    from pcmchar import report
    return (f'clock: {report.clock_of(run)}; dilation: {run.get("dilation") or 1} ({unit} x K, '
            f'latencies / K: the device\'s clock, the guest a host K times faster); '
            f'calibration: {report.calibration_text(run)}'
            + ('; the write side\'s overhead_ns on every dm-pcm device (a commit waits '
               'for its WAL write)' if run.get('calibration') else ''))


SECTIONS = ('## The answer', '## Latency', '## The cache', '## Lifetime', '## The device\'s view',
            '## Figure', '## Devices', '## Commands', '## Spec')


def finish(spec, run_dir, draw_figs=True, **extra):
    """report.md, app-table.csv/.json and the figure from run.json (@extra
    added to it first); (report path, rows, run, png or None)."""
    from pcmchar import report
    if spec.work:
        from .. import appwork
        return appwork.finish(spec, run_dir, draw_figs, **extra)
    run = report.update_run(run_dir, extra)
    for r in run['runs']:
        if r['device'] != LINEAR and 'model_qd1' not in r:
            r['model_qd1'] = model_qd1(r['device'])
        if r.get('trace') and 'lifetime' not in r:
            r['lifetime'] = lifetime(r, run_dir, spec.wear_passes)
    report.update_run(run_dir, {'runs': run['runs']})
    rs = rows(run)
    write_table(run_dir, rs)
    png = draw(rs, run, os.path.join(run_dir, 'figures')) if draw_figs else None
    with open(os.path.join(run_dir, 'spec.toml'), encoding='utf-8') as fh:
        spec_text = fh.read()
    rel = lambda p: os.path.relpath(p, run_dir)  # noqa: E731 (a one-line helper)
    L = [f'# dm-pcm under a database: {spec.name}', '',
         f'- date: {run["date"]}; kernel {run["kernel"]}; {run["postgres"]}; '
         f'{run["cpus"]} vCPU{"s" if run["cpus"] > 1 else ""}, '
         f'{"icount (guest time follows instructions)" if run.get("icount") else "no icount"}',
         f'- workload: {run["workload"]}; fsync on, synchronous_commit on; ext4 (4 KiB '
         f'blocks) over each device, a {run["ramdisk_mib"]} MiB {spec.backing} below; '
         'a copy of one initdb cluster, pgbench -i, CHECKPOINT and the file system\'s page '
         'cache emptied before each run'
         + (f', then {run["runs"][0]["warmup_duration"]} s of the same pgbench, not measured '
            '(the warm-up)' if run['runs'] and run['runs'][0].get('warmup_duration') else ''),
         f'- wall time: {run.get("host_wall_s", float("nan")):.0f} s on the host (guest clock '
         f'{run["wall_s"]:.0f} s)',
         f'- every figure below: {conditions(run)}',
         '- PostgreSQL\'s timers (the guest\'s clock, which dilation does not slow): '
         + (', '.join(f'{n} {v}' for n, v in run['pg_timers'].items()) + ' (K x their '
            'defaults, so that they fire as often on the device\'s clock as on the hardware)'
            if run.get('pg_timers') else 'their defaults' + (' (dilation 1)' if 'pg_timers' in run
                                                              else ' (a run before they were '
                                                              'scaled by K)')), '',
         '## The answer', '',
         'How much of a device\'s advantage survives a database: the device alone (its model\'s '
         'mean 4 KiB random read and write at one in flight, pcmctl model, no host in the '
         'way), then TPS and the latency of a '
         'transaction (pgbench\'s per-transaction log) on each device, against dm-linear over '
         'the same ramdisk; the device\'s reads and writes per transaction and the caches\' '
         'hit ratio (## The cache: a read PostgreSQL\'s shared_buffers or the kernel\'s page '
         'cache served never reached the device; a run whose reads did not reach it says so in '
         'its verdict: it measured the device\'s writes only); whether the rate was steady (the mean TPS of the run\'s last half '
         'over its first\'s, from pgbench -P 1); and where the time went: '
         'the share of the run the device was busy (the block layer\'s io_ticks) and how its '
         'requests\' modeled time (status counters: requests x modeled mean latency, queueing '
         'included; requests overlap) split between reads and writes, per transaction (an '
         'fsync is its writes: brd has no volatile cache, so no flush reaches the device).  '
         'Verdict: host-bound where the device models no time, over 1 % of its completions '
         'were late, or dm-linear\'s TPS is within 20 % of the device\'s or below it (the '
         'host: PostgreSQL\'s CPU, the guest\'s clock); else device-bound; failed where no '
         'transaction completed (the device\'s run failed: no figure, no verdict).  The same '
         'table with every column: '
         '[app-table.csv](app-table.csv), [app-table.json](app-table.json).', '']
    L += table_lines(rs)
    L += ['', '## Latency', '', 'Per transaction, from pgbench -l\'s logs (logs/dK.*), us on '
          'the device\'s clock; nearest-rank percentiles.', '']
    L += latency_lines(rs)
    L += ['', '## The cache', '']
    L += cache_lines(rs, run.get('memory'))
    L += ['', '## Lifetime', '']
    L += life_lines(run)
    L += ['', '## The device\'s view', '', 'IOPS: dm-pcm\'s status counters (dm-linear: '
          '/sys/block/dm-N/stat), per second of the device\'s clock.  In flight: the block '
          'layer\'s time with reads, writes and flushes outstanding, us per transaction.  Rank '
          'utilisation: the "ranks" message (pcmctl ranks --json) over the run.  Wear: '
          'writes per row of the most worn row and the mean (0 0 with wear:off).  Held / '
          'late: completions the device held to their modeled instant, and those late.', '']
    L += view_lines(rs)
    L += ['', '## Figure', '']
    L += ([f'![TPS per device]({rel(png[0])})', '', f'Data: [{rel(png[1])}]({rel(png[1])})']
          if png else ['(not drawn: --no-figures)'])
    L += ['', '## Devices', '']
    for r in run['runs']:
        kk = r.get('dilation') or run.get('dilation') or 1
        prog = ', '.join(f'{v * kk:,.0f}' for _, v in r.get('progress') or [])
        wprog = ', '.join(f'{v * kk:,.0f}' for _, v in (r.get('warmup') or {}).get('progress')
                          or [])
        first, last = halves(r.get('progress') or [], r.get('duration') or 0)
        if first is not None and last is not None:
            prog += (f' (first half {first * kk:,.0f}, last half {last * kk:,.0f}: '
                     f'{last / first if first else float("nan"):.3f})')
        L += [f'- `{r["device"]}`: `{r["table"]}`; the cluster copied {r["copy_s"]:.1f} s, '
              f'pgbench -i '
              f'{r.get("init_s", 0):.1f} s, run {r.get("run_s", 0):.1f} s (guest clock); '
              + (f'TPS over each guest second of the run (pgbench -P 1; x K, the '
                 f'device\'s clock): {prog}; ' if prog else '')
              + (f'warm-up {r["warmup_duration"]} s, not measured (TPS over each guest '
                 f'second: {wprog}); ' if wprog else '')
              + (f'initial connection time {r["pgbench"]["conn_ms"]:,.0f} ms (guest clock); '
                 if r['pgbench'].get('conn_ms') is not None else '')
              + (f'major page faults in the run: {r["major_faults"]}; '
                 if r.get('major_faults') is not None else '')
              + (f'requests to the 9p root during pgbench (its own start and exit included): '
                 f'{p9_text(r["p9_requests"])}; ' if r.get('p9_requests') is not None else '') +
              f'fsck -fn exit {r["fsck_rc"]} ({" ".join(r["fsck"])}); removed: '
              f'{"yes" if r["removed"] else "no"}']
    L += ['', '## Commands', '', 'As the guest ran them (each device in turn as `char-dut`):',
          '', '```'] + run['commands'] + ['```', '', '## Spec', '', '```toml',
                                         spec_text.rstrip(), '```', '']
    out = os.path.join(run_dir, 'report.md')
    with open(out, 'w', encoding='utf-8') as fh:
        fh.write('\n'.join(L))
    return out, rs, run, png


def headline(rs, run):
    """The table as plain text, for the console."""
    out = [conditions(run),
           f'{"device":18} {"TPS":>9} {"vs lin":>7} {"lat mean":>9} {"p99":>9} '
           f'{"rd/wr per txn":>13} {"cache hits":>10}  where the time went; verdict']
    for r in rs:
        hit = r.get('cache_hit_pct')
        out.append(f'{r["device"][:18]:18} {fmt(r["tps"]):>9} '
                   f'{fmt(r.get("tps_vs_linear"), "x"):>7} {fmt(r["lat_mean_us"]):>9} '
                   f'{fmt(r["lat_p99_us"]):>9} {io_cell(r):>13} '
                   f'{"-" if hit is None else f"{hit:.1f} %":>10}  '
                   f'{time_cell(r)}; {r["verdict"]}: {r["reason"]}')
    return '\n'.join(out)
