# SPDX-License-Identifier: GPL-2.0-only
"""An app run's verdict per device: device-bound, host-bound (with the
evidence), baseline, failed (no transaction completed) or no verdict
(dm-linear's run failed); what it adds where reads did not reach the
device."""
from .spec import LINEAR


def reads_note(row):
    """What a verdict says of a run whose reads did not reach the
    device, or whose cgroup killed a process; '' where neither."""
    oom = (f'; the memory cgroup killed {row["oom_kills"]} of the server\'s processes (out of '
           'memory: a smaller shared_buffers or a larger memory)' if row.get('oom_kills')
           else '')
    if row.get('reads_reached') is not False:
        return oom
    hit = row.get('cache_hit_pct')
    return (f'; reads did not reach the device ({row["dev_reads_per_txn"]:.3g} per '
            f'transaction{f", caches {hit:.1f} % hits" if hit is not None else ""}): its '
            'read latency is not in this result, only its writes' + oom)


FAILED = 'failed'          # no transaction completed: the device's run failed
NO_VERDICT = 'no verdict'  # dm-linear's run failed: nothing to compare it with


def verdict(r, lin):
    """device-bound or host-bound, with the evidence: the host (the guest's
    CPU, PostgreSQL itself) sets the TPS where dm-linear's is within
    verdict.LINEAR_NEAR of the device's, or the device completed more than
    verdict.LATE_SHARE of its timed requests late.  A run in which no
    transaction completed (pgbench's count 0, or none parsed) is FAILED,
    no verdict: nothing was measured; where dm-linear's run failed, the
    others get NO_VERDICT."""
    from pcmchar import verdict as V
    if not r.get('transactions'):
        return {'verdict': FAILED, 'reason': 'no transaction completed in the run: no '
                'figure, no verdict (logs/dK-pgbench.txt, -server.log, -dmesg.txt)'}
    if r['device'] == LINEAR:
        return {'verdict': 'baseline', 'reason': 'the ramdisk through dm-linear'}
    held, late = r.get('held') or 0, r.get('late') or 0
    if not held:
        return {'verdict': V.HOST_BOUND, 'reason': 'the device held no completion (it models '
                'no time)'}
    if late > V.LATE_SHARE * held:
        return {'verdict': V.HOST_BOUND, 'reason': f'{late} of {held} completions late'}
    tps, base = r['tps'], lin['tps'] if lin else None
    if base and tps and tps >= base * (1 - V.LINEAR_NEAR):
        return {'verdict': V.HOST_BOUND, 'reason': f'dm-linear\'s TPS within '
                f'{V.LINEAR_NEAR * 100:g} % of it or below ({base / tps:.2f}x)'}
    if lin and not base:
        return {'verdict': NO_VERDICT, 'reason': 'dm-linear\'s run failed: nothing to compare'}
    why = f'{base / tps:.2f}x dm-linear\'s time per transaction' if base and tps else \
        'no dm-linear to compare'
    return {'verdict': 'device-bound', 'reason': why}
