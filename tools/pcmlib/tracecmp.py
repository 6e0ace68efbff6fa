# SPDX-License-Identifier: GPL-2.0-only
"""The per-request comparison of the kernel's modeled latencies with
pcmctl model --trace's replay of the same run: tests/vm/35-trace.sh's
and pcm-bench trace's (tools/pcmbench/trace.py).

usage: python3 -m pcmlib.tracecmp K SIZE CHARGE QTEXT CSV RESJSON RANKS WORDS...

  K       the device's dilation (the kernel's instants are K times the
          device's; the replays print the device's)
  SIZE    the device's bytes
  CHARGE  the tracefs lines of the run's pcm:pcm_charge events (each
          request's arrival and modeled completion, host clock)
  QTEXT   blkparse's text of the run's blktrace (the dm device's Q
          events, the ramdisk's remaps A)
  CSV     pcmctl model --trace QTEXT --open --speed K --csv's requests
  RESJSON that replay's --json (its resources)
  RANKS   the device's "ranks" reply after the run
  WORDS   the table's words (preset:pss dilation:K)

Prints KEY VALUE lines: for the replay of blktrace's arrivals (q_*: its
Q events, pcmctl's default; a_*: the remaps, --arrival A) and for a
replay of the kernel's own arrivals (k_*, the same requests at the
instants dm-pcm read them: the model alone, no arrival moved), the share
of requests whose latency is within 1 % of the kernel's, the worst and
mean relative difference; the spread of the gap between blktrace's and
dm-pcm's arrival over the run (gap_spread_ns, device clock) and how many
of the replay's latencies differ from the kernel's by more than it
(q_beyond_spread: none can, see below); where dm-pcm read each arrival
against Q and A (charge_after_q_ns, charge_before_a_ns: host ns); the
bound the trace alone gives (q_to_a_max_ns: the longest Q to A, device
clock; the kernel read each arrival between the two) and the reads
beyond it (q_beyond_window, a_beyond_window); then per rank the kernel's and
the replay's busy time and utilisation over the run's window (first
arrival to last completion), and how far the gap's spread can move the
utilisation (window_ns ... util_bound_pct)."""
import json
import re
import sys

from . import status, trace as ptrace


def compare(kern, lat):
    """Share of @lat within 1 % of @kern (device ns), the worst and mean
    relative difference (replay - kernel) / kernel, and its index."""
    rel = [(r - k) / k for k, r in zip(kern, lat)]
    worst = max(range(len(rel)), key=lambda i: abs(rel[i]))
    within = sum(abs(x) <= 0.01 for x in rel)
    return within / len(rel), rel[worst], sum(rel) / len(rel), worst


def run(k, size, charge, qtext, csv, resjson, ranks, words):
    """The KEY VALUE lines (the module's docstring) for one run: @k the
    dilation, @size the device's bytes, the others the files (paths) as
    the command line names them, @words the table's words (a list)."""
    out = []
    k, size = int(k), int(size)

    def say(*args):
        out.append(' '.join(str(a) for a in args))

    ev = []
    for line in open(charge):
        m = re.search(r' pcm_charge: .* (read|write) bytes (\d+) arrival (\d+) modeled (\d+)', line)
        if m:
            ev.append((int(m[3]), int(m[4]), int(m[2]), m[1] == 'write'))
    ev.sort()
    kern = [(mod - arr) / k for arr, mod, _, _ in ev]
    rows = [ln.split(',') for ln in open(csv).read().split('\n')[1:] if ln]
    q_lat = [int(r[6]) for r in rows]
    info = {}
    text = open(qtext).read().splitlines()
    reqs, _ = ptrace.parse(text, 'blkparse', 'Q', info)
    areqs, _ = ptrace.parse(text, 'blkparse', 'A')
    say('kernel_requests', len(ev))
    say('replay_requests', len(rows))
    if len(ev) != len(rows) or not ev:
        return out
    # matched in arrival order (one fio thread: Q and map in the same call)
    same = all(int(r[2]) == e[2] and (r[3] == 'write') == e[3] for r, e in zip(rows, ev))
    say('matched', int(same))
    share, worst, mean, wi = compare(kern, q_lat)
    say('q_within_1pct', f'{100 * share:.2f}')
    say('q_worst_pct', f'{100 * worst:+.3f}', 'at', wi, 'kernel', round(kern[wi]),
          'replay', q_lat[wi])
    say('q_mean_pct', f'{100 * mean:+.4f}')
    # where the clocks read the arrival: blktrace's Q, dm-pcm's map.  The
    # gap between them (unknown as a whole: the two clocks' origins) moves
    # by delta_i from one read to the next; the model is made of max() and
    # + over the arrivals, in a fixed order, so it is monotone in each and
    # shifting them all by c shifts every completion by c: with arrivals
    # moved by between c and c + R, every latency moves by at most R, the
    # spread of delta (device ns; + 2 ns for rounding each arrival to the
    # device's ns, one way in the kernel, the other in the replay)
    reqs = sorted(reqs, key=lambda r: r.time_ns)
    areqs = sorted(areqs, key=lambda r: r.time_ns)
    t0 = ev[0][0]
    delta = [(e[0] - t0) - r.time_ns for e, r in zip(ev, reqs)]
    spread = (max(delta) - min(delta)) / k
    say('gap_spread_ns', f'{spread:.0f}', 'host_us_min', f'{min(delta) / 1000:.1f}',
          'max', f'{max(delta) / 1000:.1f}')
    over = [i for i, (kl, ql) in enumerate(zip(kern, q_lat)) if abs(ql - kl) > spread + 2]
    say('q_beyond_spread', len(over))
    # how the kernel's arrival moved against Q and against A from read to
    # read (host ns, over each one's least: the clocks' origins differ)
    after_q = sorted(d - min(delta) for d in delta)
    before_a = [(a.time_ns - q.time_ns) - d for q, a, d in zip(reqs, areqs, delta)]
    before_a = sorted(x - min(before_a) for x in before_a)
    pct = lambda v: ' '.join(str(v[int(p * (len(v) - 1))]) for p in (0, .1, .5, .9, .99, 1))  # noqa: E731 (a one-line helper)
    say('charge_after_q_ns_rel', 'min p10 p50 p90 p99 max', pct(after_q))
    say('charge_before_a_ns_rel', 'min p10 p50 p90 p99 max', pct(before_a))
    window = info['q_to_a_ns']['max'] / k
    say('q_to_a_max_ns', f'{window:.0f}', 'median_host_us', f"{info['q_to_a_ns']['median'] / 1e3:.1f}")
    say('q_beyond_window', sum(abs(ql - kl) > window + 2 for kl, ql in zip(kern, q_lat)))
    res, _, start, done = ptrace.replay(words, [r._replace(time_ns=r.time_ns - areqs[0].time_ns)
                                                for r in areqs], size=size, open_loop=True, speed=k)
    a_lat = [d - s for s, d in zip(start, done)]
    share, worst, mean, wi = compare(kern, a_lat)
    say('a_within_1pct', f'{100 * share:.2f}')
    say('a_worst_pct', f'{100 * worst:+.3f}', 'at', wi, 'kernel', round(kern[wi]),
          'replay', a_lat[wi])
    say('a_mean_pct', f'{100 * mean:+.4f}')
    say('a_beyond_window', sum(abs(al - kl) > window + 2 for kl, al in zip(kern, a_lat)))
    # the kernel's own arrivals, in its order, through the same replay
    kreqs = [r._replace(time_ns=e[0] - t0) for r, e in zip(reqs, ev)]
    res, _, start, done = ptrace.replay(words, kreqs, size=size, open_loop=True, speed=k)
    share, worst, mean, wi = compare(kern, [d - s for s, d in zip(start, done)])
    say('k_within_1pct', f'{100 * share:.2f}')
    say('k_worst_pct', f'{100 * worst:+.4f}')
    # each rank: the kernel's busy time and utilisation over its run's
    # window, the replay's over its own
    rk = status.parse_ranks(open(ranks).read())
    window = (max(e[1] for e in ev) - t0) / k
    rp = json.load(open(resjson))['resources']
    # the replay's window starts at its first arrival and ends as its last
    # resource idles: each end moves with the gap as a latency does (by
    # at most its spread), so with the same busy time the utilisation
    # differs by up to that share of the window (2 % is the goal; a first
    # read whose gap was long, the host having preempted the vCPU
    # between its Q and dm-pcm's map, takes more)
    say('window_ns', 'kernel', f'{window:.0f}', 'replay', rp['window_ns'],
          'util_bound_pct', f"{100 * spread / rp['window_ns']:.3f}")
    for x, y in zip(rk['per_rank'], rp['ranks']):
        name = f"{x['channel']}.{x['rank']}"
        ku, ru = x['busy_ns'] / k / window, y['util']
        say(f'rank_{name}', 'kernel_reqs', x['requests'], 'replay_reqs', y['reqs'],
              'kernel_busy_ns', x['busy_ns'] // k, 'replay_busy_ns', y['busy_ns'],
              'kernel_util', f'{ku:.5f}', 'replay_util', f'{ru:.5f}',
              'util_diff_pct', f'{100 * (ru - ku) / ku if ku else 0:+.3f}')
    return out


def parse(lines):
    """{KEY: [VALUE...]} of run()'s lines."""
    return {ln.split()[0]: ln.split()[1:] for ln in lines if ln.split()}


if __name__ == '__main__':
    sys.stdout.write(''.join(ln + '\n' for ln in run(*sys.argv[1:8], sys.argv[8:])))
