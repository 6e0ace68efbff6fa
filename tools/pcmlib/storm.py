#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""storm: the dm-pcm message storm, one implementation for
tests/vm/22-message-storm.sh (through the command line below) and
tools/soak (through the Storm class).

Per device, five threads race each other and whatever I/O the caller runs:

  ctl      the only loop that suspends, reloads and resets the counters.
           Each round: "move_gap N" with gap_moves read around it (it must
           have grown by N per domain at least), "persist", every
           RESET_EVERY-th round "stats reset", "inject SECTOR 1" if asked;
           when a suspend is due a suspend/resume, every RELOAD_EVERY-th one
           after a reload of the same table.  The counters read just before
           a reset or a reload are added up (what moves between that read
           and the reset is lost: the totals are "at least").  Nothing
           suspends while this loop sends move_gap and persist, so they must
           never fail.
  set      "set gap_interval V" over the device's list of values, then
           "config" must show V, unless a reload came in between: the new
           table has the table line's gap_interval (a "set" is lost with its
           table).  Only this loop sets it.
  race     "move_gap 1" and "persist" racing the suspends on purpose: a
           refusal is accepted only as EINVAL or EAGAIN (the module logs
           "device is suspend..."), counted as race_refused.
  dmsetup  through dmsetup, one process a step: config, registers, status
           and a bad message, in turn.
  ioctl    the same straight through the ioctl (tools/pcmlib/dmioctl.py, no
           process): config, registers and status every step, a bad
           message every 8th.

Every valid message must succeed, every bad one fail with EINVAL; every
status line must pass pcmstatus.validate() with metadata:ok and the
device's domains, after "0 LENGTH pcm"; config and registers replies must
parse.  ctl, set and race send one step in DMSETUP_EVERY through dmsetup
(messages, status, suspend, resume, reload), the rest through the ioctl:
the dmsetup path stays covered with few processes (under TCG each costs up
to a second of guest CPU).  Device.c holds the counters (COUNTERS).

Command line, for the shell (one device, runs while STOP_FILE exists):

  storm.py --name NAME --table TABLE --stop-file PATH --counts FILE
           [--failures FILE] [--seed N] [--min-cycles N] [--max-wait S]

Once STOP_FILE is gone it goes on until NAME has had --min-cycles
suspend/resume cycles (at most --max-wait more seconds), then writes
"key value" lines to FILE: the counters, then moves_total, wraps_total and
move_errors_total (counters summed over resets and reloads, with the final
status), and worker_errors.  Failures are appended to --failures.
"""
import argparse
import errno
import os
import random
import re
import subprocess
import sys
import threading
import time

# run as a script (tests/vm/22-message-storm.sh): tools/ holds the package
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pcmlib import cli, dmioctl, status as pcmstatus, words as pwords  # noqa: E402 (sys.path set first)

EINVAL, EAGAIN = errno.EINVAL, errno.EAGAIN
DM_SUSPEND_FLAG = 1 << 1                # linux/dm-ioctl.h
# dmsetup gives the errno as its text: the longest match wins
STRERRORS = sorted(((os.strerror(e), e) for e in errno.errorcode), key=lambda x: -len(x[0]))

BAD_MESSAGES = (
    'bogus', 'move_gap 0', 'move_gap 1000001', 'move_gap 1 2', 'move_gap x',
    'set row_size 8192', 'set gap_interval -1', 'set gap_interval 1000000001',
    'set gap_interval', 'set gap_interval 1e3', 'set domains 2', 'set randomize 1',
    'stats', 'stats reset now', 'stats reset 1', 'STATS', 'STATS RESET NOW',
    'config extra', 'config 1', 'registers extra', 'registers 1',
    'persist now', 'persist 1', 'x' * 4000)

COUNTERS = (
    # every message by outcome; bad ones refused with EINVAL are "refused"
    'msgs_ok', 'msgs_failed', 'msgs_refused', 'via_dmsetup', 'status_reads',
    # reasons to fail, summed over the loops
    'valid_failed', 'bad_accepted', 'parse_failures',
    # ctl
    'rounds', 'suspends', 'reloads', 'move_gap_msgs', 'moves_asked', 'moves_grown',
    'moves_short', 'persists', 'stats_resets', 'injected',
    'moves_before_resets', 'wraps_before_resets', 'move_errors_before_resets',
    # set
    'sets', 'sets_lost', 'config_mismatch',
    # race
    'race_ok', 'race_refused', 'race_failed',
) + tuple(f'{loop}_{what}' for loop in ('ctl', 'set', 'dmsetup', 'ioctl')
          for what in ('ok', 'failed')
) + tuple(f'{loop}_parse_failures' for loop in ('ctl', 'dmsetup', 'ioctl')
) + tuple(f'{loop}_{what}' for loop in ('dmsetup', 'ioctl')
          for what in ('bad_tried', 'bad_accepted'))


def errtext(err):
    return f'errno {err} ({errno.errorcode.get(err, "?")})' if err > 0 else 'an unknown error'


# --- transports -----------------------------------------------------------------

class Ioctl:
    """Messages, status, suspend, resume and reload through the dm ioctl."""
    via = 'ioctl'

    def __init__(self):
        self.dm = dmioctl.DM()

    def close(self):
        self.dm.close()

    def message(self, name, words):
        err, _, out = self.dm.message(name, words.encode().split())
        return err, out.split(b'\0', 1)[0].decode(errors='replace').strip()

    def status(self, name):
        """(errno, the line as dmsetup prints it: "START LENGTH TYPE WORDS")."""
        err, _, data = self.dm.call(dmioctl.TABLE_STATUS, name)
        if err or len(data) < dmioctl._SPEC.size:
            return err, ''
        start, length, _, _, ttype = dmioctl._SPEC.unpack_from(data)
        words = data[dmioctl._SPEC.size:].split(b'\0', 1)[0].decode(errors='replace')
        ttype = ttype.split(b'\0', 1)[0].decode(errors='replace')
        return 0, f'{start} {length} {ttype} {words}'

    def suspend(self, name):
        return self.dm.call(dmioctl.DEV_SUSPEND, name, flags=DM_SUSPEND_FLAG)[0]

    def resume(self, name):
        return self.dm.resume(name)

    def reload(self, name, table):
        f = table.split(maxsplit=3)
        return self.dm.load(name, int(f[1]), f[2], f[3].encode())


class Dmsetup:
    """The same through dmsetup, one process each."""
    via = 'dmsetup'

    def close(self):
        pass

    @staticmethod
    def run(*args):
        r = subprocess.run(['dmsetup', *args], text=True, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode == 0:
            return 0, r.stdout.strip()
        return next((e for s, e in STRERRORS if s in r.stderr), -1), r.stderr.strip()

    def message(self, name, words):
        # "--": a word such as "-1" is the message's, not an option of dmsetup's
        # (which would refuse the command line without sending anything)
        return self.run('message', '--', name, '0', *words.split())

    def status(self, name):
        return self.run('status', name)

    def suspend(self, name):
        return self.run('suspend', name)[0]

    def resume(self, name):
        return self.run('resume', name)[0]

    def reload(self, name, table):
        return self.run('reload', name, '--table', table)[0]


# --- devices --------------------------------------------------------------------

class Device:
    """One pcm device under the storm, its counters and failures.
    @set_values: what the set loop cycles through for gap_interval."""

    def __init__(self, name, table, set_values=(0, 1, 2, 3, 5, 8, 1, 0, 16, 1, 4, 1, 1000, 1)):
        f = table.split()
        if len(f) < 5 or f[0] != '0' or f[2] != 'pcm':
            raise ValueError(f'{name}: not a one-target pcm table: {table!r}')
        self.name, self.table, self.length = name, table, int(f[1])
        self.set_values = tuple(set_values)
        opt = pwords.parse_words(f[6:])
        self.domains = int(opt['domains']) if 'domains' in opt else None
        self.table_gap_interval = opt.get('gap_interval')
        self.lock = threading.Lock()
        self.c = dict.fromkeys(COUNTERS, 0)
        self.failures = []
        self.reloads_done = 0
        self.reloading = False

    def count(self, *keys, n=1):
        with self.lock:
            for k in keys:
                self.c[k] += n

    def fail(self, what, *keys):
        with self.lock:
            for k in keys:
                self.c[k] += 1
            if len(self.failures) < 50:
                self.failures.append(f'{self.name}: {what}')

    def reload_mark(self):
        """How many reloads are done, None while one is under way."""
        with self.lock:
            return None if self.reloading else self.reloads_done

    def learn(self, tr):
        """domains and the table's gap_interval, when the table line has
        not given them, from config (before any set)."""
        err, cfg = tr.message(self.name, 'config')
        if err:
            raise RuntimeError(f'{self.name}: config: {errtext(err)}')
        opt = pwords.parse_words(cfg)
        if self.domains is None:
            self.domains = int(opt['domains'])
        if self.table_gap_interval is None:
            self.table_gap_interval = opt['gap_interval']


# --- the storm ------------------------------------------------------------------

class Storm:
    """The loops on @devs (Device), until @stop (a threading.Event) is set.
    Worker crashes go to @errors (and set @stop).  The defaults are
    22-message-storm's; tools/soak passes its own."""

    def __init__(self, devs, seed=1, stop=None, errors=None, *,
                 round_pause=(0.2, 0.5), suspend_interval=(0, 0), suspended_for=0.1,
                 reset_every=3, reload_every=5, max_move=5, big_move_p=0.0,
                 big_move=(500, 4000), set_pause=0.2, race_pause=0.1,
                 dmsetup_pause=1.0, ioctl_pause=0.01, dmsetup_every=4, inject=False):
        self.devs, self.seed = devs, seed
        self.stop = stop or threading.Event()
        self.errors = [] if errors is None else errors
        self.round_pause, self.suspend_interval = round_pause, suspend_interval
        self.suspended_for, self.reset_every = suspended_for, reset_every
        self.reload_every, self.max_move = reload_every, max_move
        self.big_move_p, self.big_move = big_move_p, big_move
        self.set_pause, self.race_pause = set_pause, race_pause
        self.dmsetup_pause, self.ioctl_pause = dmsetup_pause, ioctl_pause
        self.dmsetup_every, self.inject = dmsetup_every, inject
        self.threads = []

    # ------------------------------------------------------------ plumbing
    def start(self):
        tr = Ioctl()
        try:
            for d in self.devs:
                d.learn(tr)
        finally:
            tr.close()
        for d in self.devs:
            for fn in (self.ctl, self.setter, self.racer, self.dmsetup_loop, self.ioctl_loop):
                t = threading.Thread(target=self.guard, args=(fn, d),
                                     name=f'{fn.__name__}-{d.name}')
                t.start()
                self.threads.append(t)

    def guard(self, fn, dev):
        """A loop whose crash fails the run instead of vanishing."""
        io, dms = Ioctl(), Dmsetup()
        try:
            fn(dev, io, dms, random.Random(f'{self.seed}-{dev.name}-{fn.__name__}'))
        except Exception as e:  # noqa: BLE001 -- any crash is a failure
            self.errors.append(f'{fn.__name__} on {dev.name}: {type(e).__name__}: {e}')
            self.stop.set()
        finally:
            io.close()

    def finish(self, min_cycles=0, max_wait=300):
        """Stop once every device has had @min_cycles suspend/resume cycles
        (or after @max_wait seconds), and wait for the loops."""
        end = time.monotonic() + max_wait
        while (not self.stop.is_set() and time.monotonic() < end and
               any(d.c['suspends'] < min_cycles for d in self.devs)):
            time.sleep(0.5)
        self.stop.set()
        for t in self.threads:
            t.join()

    def via(self, i, io, dms):
        return dms if self.dmsetup_every and i % self.dmsetup_every == 0 else io

    # ------------------------------------------------------------ checks
    def send(self, dev, tr, words, loop, bad=False):
        """One message; a valid one must succeed, a bad one fail with EINVAL."""
        err, out = tr.message(dev.name, words)
        if tr.via == 'dmsetup':
            dev.count('via_dmsetup')
        if err == 0:
            dev.count('msgs_ok', *([] if bad else [f'{loop}_ok']))
        elif not bad:
            dev.fail(f'"{words}" ({tr.via}) failed: {errtext(err)}',
                     'msgs_failed', 'valid_failed', f'{loop}_failed')
        else:
            dev.count('msgs_refused')
        if bad:
            dev.count(f'{loop}_bad_tried')
            if err != EINVAL:
                dev.fail(f'bad message "{words[:40]}" ({tr.via}) gave '
                         f'{errtext(err) if err else "success"}',
                         'bad_accepted', f'{loop}_bad_accepted')
        return err, out

    def parse_failure(self, dev, loop, what):
        dev.fail(what, 'parse_failures', f'{loop}_parse_failures')

    def status(self, dev, tr, loop):
        """The status line through @tr, checked strictly: its dict, or None."""
        err, line = tr.status(dev.name)
        dev.count('status_reads', *(['via_dmsetup'] if tr.via == 'dmsetup' else []))
        if err:
            dev.fail(f'status ({tr.via}) failed: {errtext(err)}', 'valid_failed', f'{loop}_failed')
            return None
        try:
            f = line.split(maxsplit=3)
            if '\n' in line or f[:3] != ['0', str(dev.length), 'pcm']:
                raise pcmstatus.StatusError(f'not "0 {dev.length} pcm ..."')
            return pcmstatus.validate(f[3] if len(f) > 3 else '', dev.domains, 'ok')
        except pcmstatus.StatusError as e:
            self.parse_failure(dev, loop, f'status ({tr.via}): {e}: {line!r}')
            return None

    def info(self, dev, tr, verb, loop):
        """config or registers, the reply checked."""
        err, out = self.send(dev, tr, verb, loop)
        if err:
            return
        if verb == 'registers':
            ok = re.fullmatch(r'\d+/\d+( \d+/\d+){%d}' % (dev.domains - 1), out)
        else:
            words = out.split()
            ok = (words and words[0].startswith('preset:') and all(':' in w for w in words)
                  and f'domains:{dev.domains}' in words
                  and any(re.fullmatch(r'gap_interval:\d+', w) for w in words))
        if not ok:
            self.parse_failure(dev, loop, f'{verb} ({tr.via}) replied {out!r}')

    def add_counters(self, dev, st):
        """Counters about to start again from zero (stats reset, reload)."""
        dev.count('moves_before_resets', n=st['gap_moves'])
        dev.count('wraps_before_resets', n=st['start_wraps'])
        dev.count('move_errors_before_resets', n=st['move_errors'])

    def totals(self, dev):
        """The move counters summed over resets and reloads, with the final
        status (read now, through the ioctl)."""
        tr = Ioctl()
        try:
            err, line = tr.status(dev.name)
        finally:
            tr.close()
        if err:
            raise RuntimeError(f'{dev.name}: status: {errtext(err)}')
        st = pcmstatus.parse(line.split()[3:])
        return {'status': st,
                'gap_moves': dev.c['moves_before_resets'] + st['gap_moves'],
                'start_wraps': dev.c['wraps_before_resets'] + st['start_wraps'],
                'move_errors': dev.c['move_errors_before_resets'] + st['move_errors']}

    # ------------------------------------------------------------ the loops
    def ctl(self, dev, io, dms, rng):
        next_susp = time.monotonic() + rng.uniform(*self.suspend_interval)
        i = cycle = 0
        while not self.stop.is_set():
            i += 1
            tr = self.via(i, io, dms)
            dev.count('rounds')
            big = rng.random() < self.big_move_p
            n = rng.randint(*self.big_move) if big else rng.randint(1, self.max_move)
            st1 = self.status(dev, tr, 'ctl')
            if not self.send(dev, tr, f'move_gap {n}', 'ctl')[0]:
                st2 = self.status(dev, tr, 'ctl')
                dev.count('move_gap_msgs')
                dev.count('moves_asked', n=n * dev.domains)
                if st1 and st2:
                    grown = st2['gap_moves'] - st1['gap_moves']
                    dev.count('moves_grown', n=grown)
                    if grown < n * dev.domains:
                        dev.fail(f'move_gap {n}: gap_moves {st1["gap_moves"]} -> '
                                 f'{st2["gap_moves"]}', 'moves_short')
            if not self.send(dev, tr, 'persist', 'ctl')[0]:
                dev.count('persists')
            if i % self.reset_every == 0:
                st = self.status(dev, tr, 'ctl')
                if not self.send(dev, tr, 'stats reset', 'ctl')[0]:
                    dev.count('stats_resets')
                    if st:
                        self.add_counters(dev, st)
            if self.inject and not self.send(dev, tr, f'inject {rng.randrange(dev.length)} 1',
                                             'ctl')[0]:
                dev.count('injected')
            if time.monotonic() >= next_susp:
                cycle += 1
                self.suspend_cycle(dev, self.via(cycle, io, dms),
                                   reload=cycle % self.reload_every == 0)
                next_susp = time.monotonic() + rng.uniform(*self.suspend_interval)
            self.stop.wait(rng.uniform(*self.round_pause))

    def suspend_cycle(self, dev, tr, reload):
        """suspend and resume, after a reload of the same table if asked: the
        new table counts from zero, so the old one's counters are added up."""
        def step(what, err):
            if err:
                dev.fail(f'{what} ({tr.via}) failed: {errtext(err)}', 'valid_failed', 'ctl_failed')
            return not err

        st = None
        if reload:
            st = self.status(dev, tr, 'ctl')
            with dev.lock:
                dev.reloading = True
            reload = step('reload', tr.reload(dev.name, dev.table))
        if tr.via == 'dmsetup':
            dev.count('via_dmsetup', n=2 + reload)
        ok = step('suspend', tr.suspend(dev.name))
        time.sleep(self.suspended_for)
        err = tr.resume(dev.name)
        if err:     # once more: a device left suspended would hang the I/O
            Dmsetup.run('resume', dev.name)
        ok = step('resume', err) and ok
        with dev.lock:
            if reload and ok:
                dev.reloads_done += 1
            dev.reloading = False
        if ok:
            dev.count('suspends')
            if reload:
                dev.count('reloads')
                if st:
                    self.add_counters(dev, st)

    def setter(self, dev, io, dms, rng):
        i = 0
        while not self.stop.is_set():
            v = dev.set_values[i % len(dev.set_values)]
            i += 1
            tr = self.via(i, io, dms)
            r1 = dev.reload_mark()
            if not self.send(dev, tr, f'set gap_interval {v}', 'set')[0]:
                dev.count('sets')
                err, cfg = self.send(dev, tr, 'config', 'set')
                words = cfg.split()
                if err or f'gap_interval:{v}' in words:
                    pass
                elif (r1 is None or r1 != dev.reload_mark()) and \
                        f'gap_interval:{dev.table_gap_interval}' in words:
                    dev.count('sets_lost')
                else:
                    dev.fail(f'set gap_interval {v} ({tr.via}), then config: {cfg}',
                             'config_mismatch')
            self.stop.wait(self.set_pause)

    def racer(self, dev, io, dms, rng):
        i = 0
        while not self.stop.is_set():
            i += 1
            words = 'move_gap 1' if i % 2 == 0 else 'persist'
            tr = self.via(i, io, dms)
            err, _ = tr.message(dev.name, words)
            if tr.via == 'dmsetup':
                dev.count('via_dmsetup')
            if err == 0:
                dev.count('race_ok', 'msgs_ok')
            elif err in (EINVAL, EAGAIN):
                dev.count('race_refused')
            else:
                dev.fail(f'"{words}" racing suspend ({tr.via}) gave {errtext(err)}',
                         'race_failed')
            self.stop.wait(self.race_pause)

    def dmsetup_loop(self, dev, io, dms, rng):
        i = 0
        while not self.stop.is_set():
            i += 1
            step = i % 4
            if step in (1, 2):
                self.info(dev, dms, ('config', 'registers')[step - 1], 'dmsetup')
            elif step == 3:
                self.status(dev, dms, 'dmsetup')
            else:
                self.send(dev, dms, rng.choice(BAD_MESSAGES), 'dmsetup', bad=True)
            self.stop.wait(self.dmsetup_pause)

    def ioctl_loop(self, dev, io, dms, rng):
        i = 0
        while not self.stop.is_set():
            i += 1
            self.info(dev, io, 'config', 'ioctl')
            self.info(dev, io, 'registers', 'ioctl')
            self.status(dev, io, 'ioctl')
            if i % 8 == 0:
                self.send(dev, io, rng.choice(BAD_MESSAGES), 'ioctl', bad=True)
            self.stop.wait(self.ioctl_pause)


# --- command line ---------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(prog='storm.py', description=__doc__.split('\n')[0],
                                 epilog=__doc__.split('\n\n', 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--name', required=True, help='the pcm device')
    ap.add_argument('--table', required=True, help='its table line (reloaded as it is)')
    ap.add_argument('--stop-file', required=True, help='the storm runs while this exists')
    ap.add_argument('--counts', required=True, help='"key value" lines go here at the end')
    ap.add_argument('--failures', help='append the failures here, one a line')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--min-cycles', type=int, default=0,
                    help='after the stop file is gone, go on until this many '
                    'suspend/resume cycles')
    ap.add_argument('--max-wait', type=float, default=300,
                    help='but not for more than this many seconds')
    a = ap.parse_args(argv)
    dev = Device(a.name, a.table)
    storm = Storm([dev], seed=a.seed)
    storm.start()
    parent = os.getppid()
    while os.path.exists(a.stop_file) and not storm.stop.is_set() and os.getppid() == parent:
        time.sleep(0.5)
    storm.finish(a.min_cycles, a.max_wait)
    tot = storm.totals(dev)
    with open(a.counts, 'w') as fh:
        for k, v in dev.c.items():
            print(k, v, file=fh)
        print('moves_total', tot['gap_moves'], file=fh)
        print('wraps_total', tot['start_wraps'], file=fh)
        print('move_errors_total', tot['move_errors'], file=fh)
        print('worker_errors', len(storm.errors), file=fh)
    if a.failures and (dev.failures or storm.errors):
        with open(a.failures, 'a') as fh:
            for line in storm.errors + dev.failures:
                print(line, file=fh)
    for e in storm.errors:
        print(f'storm: {e}', file=sys.stderr)
    return 1 if storm.errors else 0


if __name__ == '__main__':
    cli.run(main)
