#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Self-test of tests/vm/lib/logreplay.py in the VM (not an NN-*.sh suite test):
#   1. writes with known flush points through dm-log-writes, replayed to
#      every crash point and compared with a model of what was durable;
#   2. the CLI on bad input: bad magic, truncated log, past the end (exit 2);
#   3. a 4096-byte-sector device (entry sectors count sectorsize blocks);
#   4. ext4 (mkfs, files, fsync, sync, umount) replayed to every crash point
#      after the mkfs mark, fsck clean at each.
# Run: tools/vm-run --no-build --no-insmod -- bash tests/vm/lib/logreplay-selftest.sh
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
lr() { python3 "$here/logreplay.py" "$@"; }
export PYTHONPATH=$here PYTHONDONTWRITEBYTECODE=1
W=$(mktemp -d /tmp/logreplay.XXXXXX)
MIB=64
loopdev=""

cleanup() {
	mountpoint -q "$W/mnt" && umount "$W/mnt"
	dmsetup remove lw 2>/dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev"
	rmmod brd 2>/dev/null
	rm -rf "$W"
}
trap cleanup EXIT

modprobe dm-log-writes 2>/dev/null || skip_all "no dm-log-writes"
rmmod brd 2>/dev/null
modprobe brd rd_nr=3 rd_size=$((MIB * 1024)) max_part=0 || skip_all "no brd"

zero() { dd if=/dev/zero of="$1" bs=1M count=$MIB oflag=direct status=none; }
lw_create() {
	dmsetup create lw --table "0 $(blockdev --getsz "$1") log-writes $1 $2"
}
# lw_remove: the log must not have run out of space (status says so)
lw_remove() {
	local st
	st=$(dmsetup status lw)
	note "log-writes status: $st"
	dmsetup remove lw || return 1
	case $st in *logging_disabled*) return 1 ;; esac
}

# --- 1. known patterns, every crash point checked against a model ---------

# Each step is some writes (w OFF_KIB SIZE_KIB [dsync]) or discards
# (d OFF_KIB SIZE_KIB), then one flush or FUA, then the mark stepN.  The ops
# file tells the checker what each step wrote.
step=1
w() {
	local f="$W/p$step.$1"
	head -c $(($2 * 1024)) /dev/urandom > "$f"
	echo "$step w $(($1 * 1024)) $f" >> "$W/ops"
	dd if="$f" of=/dev/mapper/lw bs=$(($2 * 1024)) seek=$(($1 * 1024)) \
		oflag=direct${3:+,$3},seek_bytes status=none
}
d() {
	echo "$step d $(($1 * 1024)) $(($2 * 1024))" >> "$W/ops"
	blkdiscard -o $(($1 * 1024)) -l $(($2 * 1024)) /dev/mapper/lw
}
flush() { sync /dev/mapper/lw; }	# fsync on the bdev: one empty PREFLUSH
endstep() { dmsetup message lw 0 mark "step$step" && step=$((step + 1)); }

: > "$W/ops"
lw_create /dev/ram0 /dev/ram1
ok=1
{
	w 1024 64 && flush && endstep &&			# step1: FLUSH
	w 2048 4 dsync && endstep &&				# step2: FUA write
	w 3072 128 && w 1032 4 && flush && endstep &&		# step3: overwrite in p1
	d 2048 64 && flush && endstep &&			# step4: discard p2
	w 8192 1024 && flush && endstep &&			# step5: 1 MiB, maybe split
	w 4096 4 dsync && endstep &&				# step6: FUA write
	w 5120 8						# never flushed
} || ok=0
expect "pattern workload through log-writes" [ $ok = 1 ]
expect "remove lw, log not full" lw_remove
lr info /dev/ram1 | sed 's/^/# /'
lr list /dev/ram1 > "$W/list"
sed 's/^/# list: /' "$W/list"
ncp=$(lr crashpoints /dev/ram1 | wc -l)
expect "crashpoints: at least one per step ($ncp)" [ "$ncp" -ge 6 ]
expect_eq "last entry is the end mark" "$(tail -1 "$W/list" | cut -d' ' -f4-)" \
	"MARK dm-log-writes-end"

cat > "$W/check.py" <<'EOF'
# Replay /dev/ram1 onto /dev/ram2 incrementally; at each crash point, the
# device (read with O_DIRECT, so from brd, not the page cache) must equal a
# model built from the ops file: exactly the steps made durable so far.
import mmap, os, subprocess, sys
import logreplay as lr

SIZE = 64 << 20
ops = [l.split() for l in open(sys.argv[1])]

def model(nsteps):
    img = bytearray(SIZE)
    for st, kind, off, arg in ops:
        if int(st) > nsteps:
            continue
        off = int(off)
        data = open(arg, "rb").read() if kind == "w" else bytes(int(arg))
        img[off:off + len(data)] = data
    return img

def device(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, SIZE)
    assert os.preadv(fd, [buf], 0) == SIZE
    os.close(fd)
    return bytes(buf)

log = lr.Log("/dev/ram1")
marks = {e.mark: e.index for e in log.entries if e.mark}
cps = lr.crash_points(log)
bad = 0
# A step's crash points lie between the marks of the previous step and its
# own (a dsync write gives two: the FUA write, then the fsync's flush).  At
# each, the step's writes are all durable: they were issued before it.
nsteps = max(int(o[0]) for o in ops) - 1       # the last step is never flushed
for n in range(1, nsteps + 1):
    lo, hi = marks.get(f"step{n - 1}", -1), marks[f"step{n}"]
    if not any(lo < cp < hi for cp in cps):
        print(f"# no crash point between marks step{n - 1} and step{n}")
        bad += 1
with lr.Replayer("/dev/ram1", "/dev/ram2") as r:
    for cp in cps:
        n = 1 + sum(marks[f"step{k}"] < cp for k in range(1, nsteps + 1))
        r.advance_to(cp)
        if device("/dev/ram2") != model(n):
            print(f"# crash point {cp} (step {n}): device differs from model")
            bad += 1
    print(f"# pattern: {len(log.entries)} entries, {len(cps)} crash points replayed")
    # the end: the never-flushed write is in the log after the last flush
    r.advance_to(len(log.entries) - 1)
    if device("/dev/ram2") != model(99):
        print("# full replay differs from the model")
        bad += 1
# the CLI from zero to step 3's flush; with --discard=skip to step 4's
last_cp = lambda mark: max(c for c in cps if c < marks[mark])
for upto, n, opts in ((last_cp("step3"), 3, []),
                      (last_cp("step4"), 4, ["--discard=skip"])):
    subprocess.run(["dd", "if=/dev/zero", "of=/dev/ram2", "bs=1M", "count=64",
                    "oflag=direct", "status=none"], check=True)
    subprocess.run([sys.executable, "-m", "logreplay", "replay", "/dev/ram1",
                    "/dev/ram2", "--upto", str(upto), "--fsync"] + opts,
                   check=True, stdout=subprocess.DEVNULL)
    # skip: step 4 only discarded, so its state is step 3's
    want = model(n - 1 if opts else n)
    if device("/dev/ram2") != want:
        print(f"# CLI replay --upto {upto} {opts} differs from the model")
        bad += 1
sys.exit(1 if bad else 0)
EOF
expect "pattern: every crash point, full replay and CLI match the model" \
	python3 "$W/check.py" "$W/ops"

# --- 2. bad input: a clear error and exit 2 --------------------------------

# expect_rc2 DESC WANT_IN_MESSAGE CMD...
expect_rc2() {
	local desc=$1 want=$2 rc
	shift 2
	"$@" > /dev/null 2> "$W/err"
	rc=$?
	note "  $(cat "$W/err")"
	grep -q "$want" "$W/err" || rc="$rc, message without '$want'"
	expect_eq "$desc: exit 2" "$rc" 2
}
zero /dev/ram2
expect_rc2 "bad magic" "bad magic" lr info /dev/ram2
# cut the log inside the data of the 1 MiB write (step 5)
dd if=/dev/ram1 of="$W/trunc" bs=512 count=1500 status=none
expect_rc2 "truncated log" "truncated" lr list "$W/trunc"
truncate -s 1M "$W/small"
expect_rc2 "entry past the end of the replay device" "past the replay device" \
	lr replay /dev/ram1 "$W/small"
expect_eq "nothing written to it" "$(tr -d '\0' < "$W/small" | wc -c)" 0
expect_rc2 "--upto past the last entry" "out of range" \
	lr replay /dev/ram1 /dev/ram2 --upto 100000

# --- 3. 4096-byte logical sectors: sector and nr_sectors count 4 KiB -------

modprobe loop 2>/dev/null
truncate -s 16M "$W/d4k.img"
if loopdev=$(losetup -b 4096 -f --show "$W/d4k.img") && lw_create "$loopdev" /dev/ram1; then
	head -c 8192 /dev/urandom > "$W/p4k"
	dd if="$W/p4k" of=/dev/mapper/lw bs=8192 seek=5 oflag=direct status=none
	sync /dev/mapper/lw
	lw_remove
	expect_eq "4k: sectorsize" "$(lr info /dev/ram1 | awk '$1 == "sectorsize" {print $2}')" 4096
	expect_eq "4k: the write is at sector 10, 2 sectors" \
		"$(lr list /dev/ram1 | head -1)" "0 10 2 -"
	zero /dev/ram2
	lr replay /dev/ram1 /dev/ram2 --fsync > /dev/null
	expect "4k: data replayed at byte 40960" \
		cmp -n 8192 "$W/p4k" <(dd if=/dev/ram2 bs=8192 skip=5 count=1 iflag=direct status=none)
	losetup -d "$loopdev" && loopdev=""
else
	skip "4k: no loop device with 4096-byte sectors"
fi

# --- 4. ext4: fsck clean at every crash point after mkfs -------------------

zero /dev/ram0
zero /dev/ram2
lw_create /dev/ram0 /dev/ram1
mkdir -p "$W/mnt"
ok=1
{
	mkfs.ext4 -q -F /dev/mapper/lw && dmsetup message lw 0 mark mkfs &&
	mount /dev/mapper/lw "$W/mnt" &&
	cp -r /usr/include/linux "$W/mnt/a" && sync &&
	fio --name=fs --directory="$W/mnt" --rw=randwrite --bs=4k --size=1m \
		--nrfiles=4 --fsync=16 --ioengine=psync --minimal > /dev/null &&
	mv "$W/mnt/a" "$W/mnt/b" && cp -r "$W/mnt/b/netfilter" "$W/mnt/c" &&
	rm -rf "$W/mnt/b/sched" && sync &&
	umount "$W/mnt"
} || ok=0
expect "ext4 workload through log-writes" [ $ok = 1 ]
expect "remove lw, log not full" lw_remove
lr info /dev/ram1 | sed 's/^/# /'

cat > "$W/fsck.py" <<'EOF'
# Replay to every crash point after the mkfs mark; at each, fsck.ext4 -fn on
# the replay device.  -n does not replay the journal, so where it is not
# clean, recover the journal on a copy (as a mount would) and fsck that.
import shutil, subprocess, sys
import logreplay as lr

def fsck(dev):
    return subprocess.run(["fsck.ext4", "-fn", dev], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)

log = lr.Log("/dev/ram1")
mkfs = next(e.index for e in log.entries if e.mark == "mkfs")
cps = [c for c in lr.crash_points(log) if c > mkfs]
raw_clean = recovered = bad = 0
sample = None
with lr.Replayer("/dev/ram1", "/dev/ram2") as r:
    for cp in cps:
        r.advance_to(cp)
        p = fsck("/dev/ram2")
        if p.returncode == 0:
            raw_clean += 1
            continue
        sample = sample or (cp, p.stdout.splitlines()[:10])
        shutil.copyfile("/dev/ram2", sys.argv[1])
        subprocess.run(["e2fsck", "-E", "journal_only", "-y", sys.argv[1]],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        q = fsck(sys.argv[1])
        if q.returncode == 0:
            recovered += 1
        else:
            bad += 1
            print(f"# crash point {cp}: fsck exit {q.returncode}")
            print("\n".join("#   " + l for l in q.stdout.splitlines()[:15]))
print(f"# ext4: {len(log.entries)} entries, mkfs mark at {mkfs}, "
      f"{len(cps)} crash points replayed: {raw_clean} clean as replayed, "
      f"{recovered} clean after journal recovery, {bad} not clean")
if sample:
    print(f"# first crash point not clean as replayed ({sample[0]}), fsck -fn said:")
    print("\n".join("#   " + l for l in sample[1]))
sys.exit(1 if bad or not cps else 0)
EOF
expect "ext4: fsck clean at every crash point" python3 "$W/fsck.py" "$W/ck.img"
expect "no kernel warnings" bash -c \
	"! dmesg | grep -E 'WARNING:|BUG:|Oops|KASAN|UBSAN|hung task'"
finish
