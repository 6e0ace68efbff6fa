#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Crash points: dm-pcm (gap_interval:1, so gap moves are everywhere in the
# log) over dm-log-writes.  A writer overwrites versioned blocks, fsyncs
# after each batch and marks the log.  The log is then replayed onto a
# fresh ramdisk up to every flush and FUA entry in turn (logreplay.py,
# written from the kernel's log-writes.rst); at each crash point dm-pcm
# must load read-only and every batch marked before that point verifies.
. "$(dirname "$0")/lib/lib.sh"

modprobe dm-log-writes 2>/dev/null || skip_all "dm-log-writes not available"
brd_load 16 3 || skip_all "brd not available"
here=$(dirname "$0")/lib	# the helpers (lib/*.py)
words="gap_interval:1 domains:2"
# PCM_CRASH_BATCHES: batches written (10 at full PCM_SCALE, ~133 crash
# points; 3 in make check)
blocks=256 batches=${PCM_CRASH_BATCHES:-$(scaled 10 3)}

dmsetup create lw --table "0 $(sectors /dev/ram0) log-writes /dev/ram0 /dev/ram1"
# shellcheck disable=SC2086 # $words: table words, split on purpose
len=$(pcm_len /dev/mapper/lw $words)
dmsetup create pc --table "0 $len pcm /dev/mapper/lw 0 2 $words"
seed=$((RANDOM * 32768 + RANDOM))
note "seed $seed"
expect "writer: $batches batches of 4 blocks, fsync and a mark after each" \
	py "$here/versioned.py" write /dev/mapper/pc $seed /tmp/progress \
	--blocks $blocks --batch 4 --max-batches "$batches" --mark lw
note "gap moves logged: $(status_field pc gap_moves)"
dmsetup remove pc
dmsetup remove lw

# replay to every crash point; the last mark before it says which batches
# were durable there
expect "every crash point loads and verifies" py - "$here" /dev/ram1 /dev/ram2 \
	"0 $len pcm /dev/ram2 0 2 $words" $seed $blocks <<'PY'
import argparse, re, subprocess, sys
sys.path.insert(0, sys.argv[1])
import logreplay, versioned
log_dev, replay_dev, table, seed, blocks = sys.argv[2:7]
log = logreplay.Log(log_dev)
points = logreplay.crash_points(log)
durable, bad, refused, checked = 0, 0, 0, 0
# the writer's marks are b<batch>; dm-log-writes adds its own at removal
marks = {e.index: int(m.group(1)) for e in log.entries
         if e.mark and (m := re.fullmatch(r'b(\d+)', str(e.mark)))}
first_sb = None
with logreplay.Replayer(log_dev, replay_dev) as rp:
    for p in points:
        rp.advance_to(p)
        durable = max([b for i, b in marks.items() if i <= p], default=0)
        c = subprocess.run(['dmsetup', 'create', '--readonly', 'chk', '--table', table],
                           capture_output=True)
        if c.returncode:
            # only before the first superblock is complete may it refuse
            refused += 1
            if first_sb is not None or durable:
                bad += 1
                print(f'# crash point {p}: dm-pcm refused to load', flush=True)
            continue
        first_sb = first_sb if first_sb is not None else p
        # in-process: a python start per crash point costs seconds under TCG
        rc = versioned.check(argparse.Namespace(dev='/dev/mapper/chk', seed=int(seed),
                                                batches=durable, blocks=int(blocks),
                                                batch=4))
        subprocess.run(['dmsetup', 'remove', 'chk'], check=True)
        checked += 1
        if rc:
            bad += 1
            print(f'# crash point {p} (after batch {durable}) failed', flush=True)
print(f'# log entries {len(log.entries)}, crash points replayed {len(points)}: '
      f'{checked} loaded and verified, {refused} before the first superblock, {bad} bad')
sys.exit(1 if bad or checked < len(points) // 2 else 0)
PY
finish
