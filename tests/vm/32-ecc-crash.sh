#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Crash safety of ecc:bch parity (dm-pcm-wib.c).  A torn row (new data
# on the media, its old parity beside it) made by hand: with its bit
# clear a read of it fails (what the bitmap is for); with its bit set, as
# a crash between the bitmap write and the clear leaves it, the load
# resyncs the region and the row reads back; a read-only table reads it
# back too (its parity from its data), and the next writable load
# resyncs it.  Power cuts under a writer with ECC on (dm-flakey
# drop_writes, as 16-powercut): every cut loads, resyncs, and every
# sector reads back without an uncorrectable error, flushed data
# verified.  A sticky "inject" survives remove + create and
# "clear_injected" clears it durably.  An empty flush reaches the
# meta_device (dm-log-writes counts it).  Crash points: states of a
# dm-log-writes log, any entry a cut, load, resync and read back.
. "$(dirname "$0")/lib/lib.sh"

modprobe dm-flakey 2>/dev/null || skip_all "dm-flakey not available"
brd_load 4 3 || skip_all "brd not available"
here=$(dirname "$0")/lib	# the helpers (lib/*.py)
field() { status_field "$1" "$2"; }
sz=$(sectors /dev/ram0)
up="0 $sz linear /dev/ram0 0"
down="0 $sz flakey /dev/ram0 0 0 3600 1 drop_writes"
swap() {	# swap TABLE: replace the table under dm-pcm
	dmsetup suspend --nolockfs under && dmsetup load under --table "$1" &&
		dmsetup resume under
}
# one codeword of t = 8 per sector: a torn 4 KiB row fails all its sectors
words="ecc:bch ecc_codewords:1 ecc_t:8 meta_bytes:16 gap_interval:0"

dmsetup create under --table "$up"
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(pcm_table /dev/mapper/under $words)
head -c 65536 /dev/urandom > /tmp/wib.old
head -c 4096 /dev/urandom > /tmp/wib.new

# --- a torn row whose bit is clear: the failure the bitmap prevents ---
dmsetup create pc --table "$table"
dd if=/tmp/wib.old of=/dev/mapper/pc bs=64k oflag=direct status=none
dmsetup suspend pc && dmsetup resume pc		# postsuspend clears every bit
dmsetup remove pc
# row 0 (no gap move yet: backing row 0) gets new data, not its parity
dd if=/tmp/wib.new of=/dev/mapper/under bs=4k oflag=direct status=none
dmsetup create pc --table "$table"
expect_fail "torn row, bit clear: its read fails (false uncorrectable)" \
	dd if=/dev/mapper/pc of=/dev/null bs=4k count=1 iflag=direct status=none
expect_eq "nothing resynced" "$(field pc ecc_resynced_rows)" 0
dmsetup remove pc

# --- the same with its bit set, as a crash leaves it: resynced ---
dmsetup create pc --table "$table"
dd if=/tmp/wib.old of=/dev/mapper/pc bs=4k count=1 oflag=direct status=none
# the power goes before the lazy clear (5 s): the bit stays set on disk
swap "$down" || fail "swap to drop_writes"
dmsetup remove pc
swap "$up" || fail "power back on"
dd if=/tmp/wib.new of=/dev/mapper/under bs=4k oflag=direct status=none
dmsetup create pc --table "$table"
expect "torn row, bit set: resynced on load, the new data reads back" \
	cmp -n 4096 /tmp/wib.new /dev/mapper/pc
expect_eq "the region's 64 rows resynced" "$(field pc ecc_resynced_rows)" 64
expect "the rest reads back" cmp -i 4096 -n 61440 /tmp/wib.old /dev/mapper/pc
expect_eq "no uncorrectable sector" "$(field pc ecc_uncorrectable_sectors)" 0
dmsetup remove pc
dmsetup create pc --table "$table"
expect_eq "the bits were cleared after the resync: none next load" \
	"$(field pc ecc_resynced_rows)" 0

# --- the same torn row under a read-only table: parity from its data ---
dd if=/tmp/wib.old of=/dev/mapper/pc bs=4k count=1 oflag=direct status=none
swap "$down" || fail "swap to drop_writes"
dmsetup remove pc
swap "$up" || fail "power back on"
dd if=/tmp/wib.new of=/dev/mapper/under bs=4k oflag=direct status=none
dmsetup create --readonly pc --table "$table"
dd if=/dev/mapper/pc of=/tmp/wib.ro bs=4k count=1 iflag=direct status=none
expect "read-only, bit set: the torn row reads back its new data" \
	cmp /tmp/wib.new /tmp/wib.ro
dmsetup message pc 0 inject 2 8
dd if=/dev/mapper/pc of=/tmp/wib.ro bs=4k count=1 iflag=direct status=none
expect "read-only: 8 bits injected in it are corrected" cmp /tmp/wib.new /tmp/wib.ro
expect_eq "read-only: 8 bits corrected" "$(field pc ecc_corrected_bits)" 8
expect_eq "read-only: nothing resynced, no uncorrectable sector" \
	"$(field pc ecc_resynced_rows) $(field pc ecc_uncorrectable_sectors)" "0 0"
dmsetup remove pc
dmsetup create pc --table "$table"
expect_eq "the writable load after it resyncs the region" \
	"$(field pc ecc_resynced_rows)" 64

# --- a sticky injection survives remove + create ---
dmsetup message pc 0 inject 30 9 sticky
expect_fail "sticky: the read fails" \
	dd if=/dev/mapper/pc of=/dev/null bs=512 skip=30 count=1 iflag=direct status=none
dmsetup remove pc
dmsetup create pc --table "$table"
expect_fail "after remove + create it still fails" \
	dd if=/dev/mapper/pc of=/dev/null bs=512 skip=30 count=1 iflag=direct status=none
expect "and its neighbour reads" \
	dd if=/dev/mapper/pc of=/dev/null bs=512 skip=31 count=1 iflag=direct status=none
dmsetup message pc 0 clear_injected
dmsetup remove pc
dmsetup create pc --table "$table"
expect "clear_injected is durable: it reads after remove + create" \
	dd if=/dev/mapper/pc of=/dev/null bs=512 skip=30 count=1 iflag=direct status=none
dmsetup remove pc

# --- power cuts under a writer, ECC on, gap moves running ---
cwords="ecc:bch preset:pss gap_interval:2 domains:2"
# shellcheck disable=SC2086 # $cwords: table words, split on purpose
ctable=$(pcm_table /dev/mapper/under $cwords)
# zeroed storage for the new layout (the old rows' parity would not match)
dd if=/dev/zero of=/dev/mapper/under bs=1M count=$((sz / 2048)) oflag=direct status=none
dmsetup create pc --table "$ctable"
# shellcheck disable=SC2086 # $cwords: table words, split on purpose
blocks=$(( $(pcm_len /dev/mapper/under $cwords) / 8 ))
cuts=${PCM_POWER_CUTS:-$(scaled 10 3)}
seed=$((RANDOM * 32768 + RANDOM))
note "seed $seed, $blocks blocks, $cuts cuts"
survived=0 resynced=0
for ((i = 1; i <= cuts; i++)); do
	power_cut /dev/mapper/pc $((seed + i)) "$blocks" 2.0 swap "$down" ||
		{ fail "cut $i: zero the device, write, swap to drop_writes"; break; }
	# shellcheck disable=SC2015 # fail if either fails
	dmsetup remove pc && swap "$up" || { fail "cut $i: power back on"; break; }
	if ! dmsetup create pc --table "$ctable"; then
		fail "cut $i: dm-pcm loads after the cut"
		break
	fi
	r=$(field pc ecc_resynced_rows)
	resynced=$((resynced + r))
	if ! dd if=/dev/mapper/pc of=/dev/null bs=1M iflag=direct status=none; then
		fail "cut $i: every sector reads ($(field pc ecc_uncorrectable_sectors) uncorrectable)"
	elif python3 "$here/versioned.py" check /dev/mapper/pc $((seed + i)) "$durable" \
		--blocks "$blocks" --batch 8; then
		survived=$((survived + 1))
	else
		fail "cut $i (after $durable durable batches): flushed data verifies"
	fi
	note "cut $i: $durable durable batches, $r rows resynced"
done
expect_eq "power cuts: loaded, no uncorrectable sector, flushed data verified" "$survived" "$cuts"
expect "rows were resynced after the cuts" test "$resynced" -gt 0
dmsetup remove pc
dmsetup remove under

# --- an empty flush reaches the meta_device ---
if modprobe dm-log-writes 2>/dev/null; then
	dmsetup create lw --table "0 $(sectors /dev/ram1) log-writes /dev/ram1 /dev/ram2"
	wipe_meta /dev/ram0
	dmsetup create pc --table "$(pcm_table /dev/ram0 ecc:bch meta_device:/dev/mapper/lw)"
	dd if=/tmp/wib.new of=/dev/mapper/pc bs=4k oflag=direct status=none
	sync /dev/mapper/pc
	before=$(dmsetup status lw | awk '{print $4}')
	sync /dev/mapper/pc
	after=$(dmsetup status lw | awk '{print $4}')
	note "log-writes entries on the meta_device: $before, after an empty flush $after"
	expect "an empty flush is logged on the meta_device" test "$after" -gt "$before"
	dmsetup remove pc
	dmsetup remove lw
else
	skip "dm-log-writes not available: the meta_device flush"
fi

# --- crash points: every logged write a possible power cut ---
# A writer with ECC on over dm-log-writes; the log is replayed onto a
# ramdisk entry by entry, and at evenly spread entries (data writes,
# parity writes, bitmap writes, superblocks alike: not only flushes) a
# copy of that state is loaded read-write: it resyncs, every written
# block reads without an uncorrectable error and the batches marked
# before verify.  PCM_CRASH_POINTS: how many (60 full size, 15 in make check).
if modprobe dm-log-writes 2>/dev/null; then
	brd_load 4 4
	cwords="ecc:bch preset:pss gap_interval:1 domains:2"
	dmsetup create lw --table "0 $(sectors /dev/ram0) log-writes /dev/ram0 /dev/ram1"
	# shellcheck disable=SC2086 # $cwords: table words, split on purpose
	len=$(pcm_len /dev/mapper/lw $cwords)
	dmsetup create pc --table "0 $len pcm /dev/mapper/lw 0 4 $cwords"
	expect "writer: 3 batches of 4 blocks, fsync and a mark after each" \
		python3 "$here/versioned.py" write /dev/mapper/pc $seed /tmp/progress \
		--blocks 128 --batch 4 --max-batches 3 --mark lw
	dmsetup remove pc
	dmsetup remove lw
	expect "every crash point loads, resyncs, reads and verifies" python3 - "$here" \
		"0 $len pcm /dev/ram3 0 4 $cwords" $seed "${PCM_CRASH_POINTS:-$(scaled 60 8)}" <<'PY'
import argparse, re, subprocess, sys
sys.path.insert(0, sys.argv[1])
import logreplay, versioned
table, seed, want = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
log = logreplay.Log('/dev/ram1')
n = len(log.entries)
points = sorted({n * k // want for k in range(1, want)} | {n - 1})
marks = {e.index: int(m.group(1)) for e in log.entries
         if e.mark and (m := re.fullmatch(r'b(\d+)', str(e.mark)))}
bad = checked = refused = resynced = 0
def run(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True)
with logreplay.Replayer('/dev/ram1', '/dev/ram2') as rp:
    for p in points:
        rp.advance_to(p)
        durable = max([b for i, b in marks.items() if i <= p], default=0)
        run('dd', 'if=/dev/ram2', 'of=/dev/ram3', 'bs=1M', 'oflag=direct', 'status=none')
        if run('dmsetup', 'create', 'chk', '--table', table).returncode:
            refused += 1       # before the first superblock only
            if durable:
                bad += 1
                print(f'# entry {p}: dm-pcm refused to load', flush=True)
            continue
        st = run('dmsetup', 'status', 'chk').stdout
        resynced += int(re.search(r'ecc_resynced_rows:(\d+)', st).group(1))
        rd = run('dd', 'if=/dev/mapper/chk', 'of=/dev/null', 'bs=64k', 'count=8',
                 'iflag=direct', 'status=none')
        try:
            rc = versioned.check(argparse.Namespace(dev='/dev/mapper/chk', seed=seed,
                                                    batches=durable, blocks=128, batch=4))
        except OSError as e:
            rc = str(e)
        run('dmsetup', 'remove', 'chk')
        checked += 1
        if rd.returncode or rc:
            bad += 1
            print(f'# entry {p} (after batch {durable}): read {rd.returncode} '
                  f'{rd.stderr.strip()}, verify {rc}', flush=True)
print(f'# log entries {n}, states loaded {checked}, refused before the first '
      f'superblock {refused}, rows resynced {resynced}, bad {bad}')
sys.exit(1 if bad or checked < len(points) // 2 else 0)
PY
else
	skip "dm-log-writes not available: crash points"
fi
finish
