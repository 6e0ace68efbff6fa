#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The error-path matrix (the .rst's "Errors reach the caller"): for every
# way a read or a write can fail, with and without a timing hold, with
# and without ECC, over a ramdisk and over the emulated NVMe (hard-IRQ
# completions), the caller gets an error, and a later read returns what
# was last written, or the old data of a write that failed, or an error:
# never other data with success.
#
# dm-pcm sits on "lower" (dm-linear over the backing device: swapped to
# "error" for data faults) and keeps its superblocks, and with ecc:bch its
# parity, on "mlower" (dm-linear over a ramdisk: swapped to "error" for
# parity and metadata faults).  A hold is read_ns/write_ns of 2 ms: every
# completion is held on its timer (status's held counts them), which is
# where an error end_io had made was once lost (an uncorrectable sector
# came back as zeros with success).
#
#   uncorrectable  ecc:bch, "inject" of t + 1 bits: 512 B and 4 KiB reads
#   parity read    ecc:bch, mlower fails: 512 B and 4 KiB reads
#   parity write   ecc:bch, mlower fails: a whole row (inline parity) and
#                  a 512 B write (the worker's)
#   data read      lower fails: 512 B and 4 KiB reads
#   data write     lower fails: a 4 KiB write
#   metadata       mlower fails under gap moves (metadata:failed): writes
#                  refused once it is back, reads of earlier data intact
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

brd_load 16 2 || skip_all "brd not available"
T=30			# bound on every command that may block
GEOM="ecc_codewords:1 ecc_t:8 meta_bytes:16"	# inject 9 bits: uncorrectable
HOLD="read_ns:2000000 write_ns:2000000"
rm -f /tmp/ep.*
for b in A B C; do
	head -c 4096 /dev/urandom > /tmp/ep.$b
done

# swap NAME TABLE: replace NAME's table under dm-pcm
swap() {
	timeout $T dmsetup suspend --nolockfs "$1" &&
		timeout $T dmsetup load "$1" --table "$2" &&
		timeout $T dmsetup resume "$1"
}
lower_ok() { swap lower "0 $lsz linear $backing 0"; }
mlower_ok() { swap mlower "0 $msz linear /dev/ram1 0"; }
lower_bad() { swap lower "0 $lsz error"; }
# only the superblocks fail (two copies of 8 sectors at the start): the
# parity after them is still read and written
sb_bad() { swap mlower "0 16 error
16 $((msz - 16)) linear /dev/ram1 16"; }
mlower_bad() { swap mlower "0 $msz error"; }
metadata() { dmsetup status pe | grep -o 'metadata:[a-z-]*'; }
# a resume clears metadata:failed once the devices are back
refresh() { timeout $T dmsetup suspend pe && timeout $T dmsetup resume pe; }

# wr BLOCK FILE [BS]: write FILE's first BS bytes (default 4096) at 4 KiB block BLOCK
wr() {
	local bs=${3:-4096}
	timeout $T dd if="$2" of=/dev/mapper/pe bs="$bs" count=1 \
		seek=$(($1 * 4096 / bs)) oflag=direct conv=notrunc status=none 2>/dev/null
}

# rd BLOCK SECTOR_IN_BLOCK BS: read BS bytes there into /tmp/ep.got; its status
rd() {
	timeout $T dd if=/dev/mapper/pe of=/tmp/ep.got bs="$3" count=1 \
		skip=$((($1 * 4096 + $2 * 512) / $3)) iflag=direct status=none 2>/dev/null
}

# what BLOCK SECTOR BS FILE...: "error" if the read fails, else the name of
# the first FILE whose bytes there it returned, else "WRONG"
what() {
	local blk=$1 sec=$2 bs=$3 f
	shift 3
	rd "$blk" "$sec" "$bs" || { echo error; return; }
	for f in "$@"; do
		# (each slice cut once: a process less per compare under TCG)
		[ -e "$f.$sec.$bs" ] ||
			dd if="$f" of="$f.$sec.$bs" bs=512 skip="$sec" count=$((bs / 512)) status=none
		if cmp -s /tmp/ep.got "$f.$sec.$bs"; then
			echo "${f##*.}"
			return
		fi
	done
	echo WRONG
}

# either GOT WORD...: GOT is one of the WORDs
either() {
	local g=$1 w
	shift
	for w in "$@"; do [ "$g" = "$w" ] && return 0; done
	return 1
}

# matrix NAME ECC HOLD: every case on one device
matrix() {
	local tag=$1 ecc=$2 hold=$3 words="gap_interval:0" g
	[ "$ecc" = bch ] && words+=" ecc:bch $GEOM"
	[ "$hold" = 1 ] && words+=" $HOLD"
	wipe_meta /dev/mapper/lower
	wipe_meta /dev/mapper/mlower
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	if ! dmsetup create pe --table "$(pcm_table /dev/mapper/lower $words \
		meta_device:/dev/mapper/mlower)"; then
		fail "$tag: create ($words)"
		return
	fi
	note "$tag: $(dmsetup table pe | cut -d' ' -f5-)"

	if [ "$ecc" = bch ]; then
		# uncorrectable: t + 1 bits in one sector
		wr 1 /tmp/ep.A
		dmsetup message pe 0 inject 10 9
		expect_eq "$tag: uncorrectable, 512 B read: an error" "$(what 1 2 512 /tmp/ep.A)" error
		dmsetup message pe 0 inject 10 9
		expect_eq "$tag: uncorrectable, 4 KiB read: an error" "$(what 1 0 4096 /tmp/ep.A)" error
		expect_eq "$tag: the sector beside it reads back" "$(what 1 1 512 /tmp/ep.A)" A
		expect_eq "$tag: the injection used up, the row reads back" "$(what 1 0 4096 /tmp/ep.A)" A

		# parity read fails
		wr 2 /tmp/ep.A
		mlower_bad
		expect_eq "$tag: parity read error, 512 B read: an error" "$(what 2 3 512 /tmp/ep.A)" error
		expect_eq "$tag: parity read error, 4 KiB read: an error" "$(what 2 0 4096 /tmp/ep.A)" error
		mlower_ok
		expect_eq "$tag: parity back, the row reads back" "$(what 2 0 4096 /tmp/ep.A)" A

		# parity write fails: a whole row (its bit durable: inline), a sector
		wr 3 /tmp/ep.A
		wr 4 /tmp/ep.A
		mlower_bad
		expect_fail "$tag: parity write error, whole-row write: an error" wr 3 /tmp/ep.B
		expect_fail "$tag: parity write error, 512 B write: an error" wr 4 /tmp/ep.B 512
		mlower_ok
		refresh
		g=$(what 3 0 4096 /tmp/ep.A /tmp/ep.B)
		expect "$tag: the row of the failed whole-row write: old, new or an error ($g)" \
			either "$g" A B error
		g=$(what 4 0 512 /tmp/ep.A /tmp/ep.B)
		expect "$tag: the sector of the failed 512 B write: old, new or an error ($g)" \
			either "$g" A B error
	fi

	# data read fails
	wr 5 /tmp/ep.A
	lower_bad
	expect_eq "$tag: data read error, 512 B read: an error" "$(what 5 1 512 /tmp/ep.A)" error
	expect_eq "$tag: data read error, 4 KiB read: an error" "$(what 5 0 4096 /tmp/ep.A)" error
	# data write fails
	expect_fail "$tag: data write error, 4 KiB write: an error" wr 5 /tmp/ep.B
	lower_ok
	refresh
	g=$(what 5 0 4096 /tmp/ep.A /tmp/ep.B)
	expect "$tag: the row of the failed write: old, new or an error ($g)" either "$g" A B error

	# metadata fails: gap moves on every write persist to the failed mlower
	wr 6 /tmp/ep.C
	dmsetup message pe 0 set gap_interval 1
	sb_bad
	# (the mover persists in the background: write until it has failed)
	for ((g = 0; g < 200; g++)); do
		wr $((7 + g % 8)) /tmp/ep.B
		[ "$(metadata)" = metadata:failed ] && break
	done
	expect_eq "$tag: a superblock write failed: metadata:failed" "$(metadata)" metadata:failed
	mlower_ok
	expect_fail "$tag: metadata failed: a 4 KiB write is refused" wr 6 /tmp/ep.A
	expect_fail "$tag: metadata failed: a 512 B write is refused" wr 6 /tmp/ep.A 512
	expect_eq "$tag: metadata failed: the row written before reads back" \
		"$(what 6 0 4096 /tmp/ep.C)" C
	refresh
	dmsetup message pe 0 set gap_interval 0
	expect "$tag: resumed, writes go again" wr 6 /tmp/ep.A
	expect_eq "$tag: and read back" "$(what 6 0 4096 /tmp/ep.A)" A
	if [ "$hold" = 1 ]; then
		g=$(status_field pe held)
		expect "$tag: completions were held ($g)" test "${g:-0}" -gt 0
	fi
	dmsetup remove pe
}

# setup BACKING: lower over BACKING's first 16 MiB, mlower over ram1
setup() {
	backing=$1
	lsz=$((16 * 2048))
	msz=$(sectors /dev/ram1)
	dmsetup create lower --table "0 $lsz linear $backing 0" &&
		dmsetup create mlower --table "0 $msz linear /dev/ram1 0"
}
teardown() { dmsetup remove mlower; dmsetup remove lower; }

modprobe dm-mod 2>/dev/null
setup /dev/ram0 || skip_all "dm-linear not available"
for ecc in bch none; do
	for hold in 0 1; do
		[ $hold = 0 ] && compat_skip "ram ecc:$ecc without a hold" && continue
		matrix "ram ecc:$ecc hold:$hold" $ecc $hold
	done
done

# --- writes that a metadata failure fails wear nothing ---
# Sixteen writers race a gap move whose superblock write fails: the
# writes parked behind the move are failed when it gives up, and must
# not count as row writes (they once did: wear over-counted, and each
# could make another move due).  Every row write the wear counters hold
# is a write that succeeded or a move's copy (at most one per move tried).
wipe_meta /dev/mapper/lower
wipe_meta /dev/mapper/mlower
dmsetup create pe --table "$(pcm_table /dev/mapper/lower wear:on gap_interval:0 \
	meta_device:/dev/mapper/mlower)"
wr 0 /tmp/ep.A
sb_bad
dmsetup message pe 0 set gap_interval 1
ok=$(PYTHONPATH=$PCM_ROOT/tools py - <<'PY'
import mmap, os, threading
fd = os.open('/dev/mapper/pe', os.O_WRONLY | os.O_DIRECT)
ok = [0] * 16
def writer(i):
    buf = mmap.mmap(-1, 4096)
    for _ in range(16):
        try:
            os.pwritev(fd, [buf], (1 + i) * 4096)
            ok[i] += 1
        except OSError:
            pass
ts = [threading.Thread(target=writer, args=(i,)) for i in range(16)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sum(ok))
PY
)
read -r moves merr <<<"$(status_field pe gap_moves move_errors)"
worn=$(dmsetup message pe 0 wear | tr ' ' '\n' | sed -n 's/^writes://p')
note "16 writers x 16 writes: $ok succeeded; wear counts $worn row writes (the first write included); $moves moves, $merr failed"
expect_eq "their superblock write failed: metadata:failed" "$(metadata)" metadata:failed
expect "wear counts the writes that succeeded, and moves' copies at most ($worn <= 1 + $ok + $moves + $merr)" \
	test "${worn:-999999}" -le $((1 + ok + moves + merr))
expect "and every write that succeeded ($worn >= 1 + $ok)" test "${worn:-0}" -ge $((1 + ok))
dmsetup remove pe
teardown

nvme=${PCM_NVME:-}
if [ -n "$nvme" ] && [ -b "$nvme" ]; then
	nvme=$(readlink -f "$nvme")
	setup "$nvme"
	for hold in 0 1; do
		[ $hold = 0 ] && compat_skip "nvme ecc:bch without a hold" && continue
		matrix "nvme ecc:bch hold:$hold" bch $hold
	done
	teardown
else
	skip "the emulated NVMe's rows: no NVMe device (tools/vm-run --nvme)"
fi
finish
