#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The data path around gap moves: a suspend that is interrupted leaves
# moves running; the writes of a freeze are throttled like any others, so
# no moves pile up across a suspend; REQ_NOWAIT bios that would wait for
# the mover fail with EAGAIN; parked writes go in arrival order; reads of
# the row being copied do not wait; a bio over rows that lie back to back
# goes down as one bio; an empty meta_device is refused.
# Slow moves come from dm-delay under the data or the metadata.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
modprobe dm-delay 2>/dev/null || skip_all "dm-delay not available"
brd_load 64 3 || skip_all "brd not available"

# delay_table DEV READ_MS WRITE_MS: dm-delay over all of DEV
delay_table() {
	echo "0 $(sectors "$1") delay $1 0 $2 $1 0 $3"
}

# set_delay NAME DEV READ_MS WRITE_MS: reload; the suspend flushes what it delays
set_delay() {
	dmsetup suspend "$1" && dmsetup reload "$1" --table "$(delay_table "$2" "$3" "$4")" &&
		dmsetup resume "$1"
}

# wait_for SECONDS CMD...: poll until CMD succeeds
wait_for() {
	local t=$(($1 * 10))
	shift
	while ! "$@"; do
		((--t > 0)) || return 1
		sleep 0.1
	done
}

# writes a dm-delay device holds now (its status: reads writes flushes)
delayed_writes() { dmsetup status "$1" | awk '{print $5}'; }
writing() { [ "$(delayed_writes "$1")" -ge 1 ]; }
parked_at_least() { [ "$(status_field "$1" parked_writes)" -ge "$2" ]; }

moves_at_least() { [ "$(status_field "$1" gap_moves)" -ge "$2" ]; }

# row writes (the counters count a bio per row) per gap_interval
moves_due() {
	local w z
	w=$(status_field "$1" writes)
	z=$(status_field "$1" write_zeroes)
	echo $(((w + z) / $2))
}

# --- an interrupted suspend: dm calls presuspend, then presuspend_undo ------
dmsetup create slow --table "$(delay_table /dev/ram0 0 0)"
pcm_create pc /dev/mapper/slow gap_interval:4
set_delay slow /dev/ram0 0 10000
dd if=/dev/zero of=/dev/mapper/pc bs=4k count=1 oflag=direct status=none &
writer=$!
wait_for 5 writing slow
dmsetup suspend --nolockfs pc &
susp=$!
sleep 2			# presuspend has run; the suspend waits for the write
kill -KILL $susp
wait $susp
expect "the suspend was interrupted" test $? -ne 0
set_delay slow /dev/ram0 0 0
wait $writer
expect "the device is active again" sh -c 'dmsetup info pc | grep -q "State: *ACTIVE"'
expect "move_gap works after it" dmsetup message pc 0 move_gap
before=$(status_field pc gap_moves)
dd if=/dev/urandom of=/dev/mapper/pc bs=4k count=16 oflag=direct status=none
expect "writes still make gap moves" wait_for 20 moves_at_least pc $((before + 4))
dmsetup remove pc
dmsetup remove slow

# --- a freeze's writeback: moves keep pace; nothing is owed across ---------
pcm_create pc /dev/ram1 gap_interval:4
mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 /dev/mapper/pc
mkdir -p /tmp/pcm-mnt
mount /dev/mapper/pc /tmp/pcm-mnt
# dirty page cache only: the freeze of "dmsetup suspend" writes it back
dd if=/dev/urandom of=/tmp/pcm-mnt/f bs=1M count="$(scaled 32 16)" status=none
dmsetup suspend pc
due=$(moves_due pc 4)
moves=$(status_field pc gap_moves)
note "suspended: $(status_field pc writes) row writes, $moves gap moves, $due due"
expect_eq "every move due was made before the suspend ended" "$moves" "$due"
expect_eq "no move is owed across the suspend" "$(status_field pc moves_owed)" 0
dmsetup resume pc
umount /tmp/pcm-mnt
expect "ext4 checks clean" fsck.ext4 -fn /dev/mapper/pc
dmsetup remove pc

# --- REQ_NOWAIT: refused with EAGAIN instead of parking ---------------------
# metadata on a slow device: every move persists first, for 2 s
dd if=/dev/zero of=/dev/ram2 bs=1M count=1 oflag=direct status=none
dmsetup create slowmeta --table "$(delay_table /dev/ram2 0 0)"
wipe_meta /dev/ram1
pcm_create pc /dev/ram1 gap_interval:1 meta_device:/dev/mapper/slowmeta format
nowait_write() {
	python3 - "$1" "$2" <<'PY'
import errno, mmap, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
try:
    os.pwritev(fd, [mmap.mmap(-1, 4096)], int(sys.argv[2]) * 4096, os.RWF_NOWAIT)
    print('ok')
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
PY
}
got=$(nowait_write /dev/mapper/pc 100)
if [ "$got" != ok ]; then
	skip "REQ_NOWAIT: the stack does not take it here ($got)"
else
	set_delay slowmeta /dev/ram2 0 2000
	for i in 1 2 3 4; do
		dd if=/dev/zero of=/dev/mapper/pc bs=4k seek=$i count=1 oflag=direct status=none &
	done
	wait_for 10 parked_at_least pc 1
	expect_eq "a NOWAIT write that would park gets EAGAIN" "$(nowait_write /dev/mapper/pc 200)" EAGAIN
	expect "and is counted" test "$(status_field pc wouldblock)" -ge 1
	set_delay slowmeta /dev/ram2 0 0
	wait
fi

# --- parked writes go in arrival order --------------------------------------
set_delay slowmeta /dev/ram2 0 20
rm -f /tmp/fair_*
parked=$(status_field pc parked_writes)
run_fio --name=fair --filename=/dev/mapper/pc --rw=write --bs=4k --size=256k \
	--iodepth=16 --iodepth_batch_submit=1 --write_lat_log=/tmp/fair --log_offset=1
expect "fio wrote through the throttle" test "$(status_field pc parked_writes)" -ge $((parked + 16))
# the completion log lists offsets (5th column) in completion order
# shellcheck disable=SC2016 # $ in single quotes is awk's
expect "writes completed in the order they were submitted" \
	awk -F', *' '$5 < last {bad = 1} {last = $5; n++} END {exit bad || n != 64}' /tmp/fair_clat.1.log
set_delay slowmeta /dev/ram2 0 0
dmsetup remove pc
dmsetup remove slowmeta

# --- reads of the row being copied go on -------------------------------------
dmsetup create slow --table "$(delay_table /dev/ram0 0 0)"
pcm_create pc /dev/mapper/slow gap_interval:0 format
rows=$(( $(sectors /dev/mapper/pc) / 8 ))
# the first move copies the last logical row into the gap
dd if=/dev/urandom of=/tmp/row bs=4k count=1 status=none
dd if=/tmp/row of=/dev/mapper/pc bs=4k seek=$((rows - 1)) oflag=direct status=none
set_delay slow /dev/ram0 0 3000
dmsetup message pc 0 move_gap &
mover=$!
wait_for 10 writing slow
dd if=/dev/mapper/pc of=/tmp/row.read bs=4k skip=$((rows - 1)) count=1 iflag=direct status=none
moves=$(status_field pc gap_moves)
copying=$(delayed_writes slow)
expect_eq "a read of the moving row returned during the copy" "$moves/$copying" "0/1"
expect "and read the row's data" cmp -s /tmp/row /tmp/row.read
wait $mover
expect "the move completed" moves_at_least pc 1
set_delay slow /dev/ram0 0 0
dd if=/dev/mapper/pc of=/tmp/row.read bs=4k skip=$((rows - 1)) count=1 iflag=direct status=none
expect "the row reads the same from its new place" cmp -s /tmp/row /tmp/row.read
dmsetup remove pc
dmsetup remove slow

# --- a bio over rows that lie back to back is one bio below ------------------
# a dm-linear between dm-pcm and the ramdisk counts the bios it receives
dmsetup create lin --table "0 $(sectors /dev/ram0) linear /dev/ram0 0"
wipe_meta /dev/mapper/lin
pcm_create pc /dev/mapper/lin gap_interval:0 format
rows=$(( $(sectors /dev/mapper/pc) / 8 ))
lin_reads() { awk '{print $1}' "/sys/block/$(dm_kname lin)/stat"; }
# read_1m ROW: one 1 MiB O_DIRECT read from logical row ROW on
read_1m() {
	dd if=/dev/mapper/pc of=/dev/null bs=1M count=1 skip=$(($1 * 4096)) \
		iflag=direct,skip_bytes status=none
}
dmsetup message pc 0 stats reset
n=$(lin_reads)
read_1m 0
expect_eq "256 rows back to back: one bio below" $(($(lin_reads) - n)) 1
expect_eq "status counts them as 256 row pieces" "$(status_field pc reads)" 256
# 200 moves: the gap lies before logical row rows - 200 (the first move
# copies the last row), so the rows around it are not back to back there
dmsetup message pc 0 move_gap 200
n=$(lin_reads)
read_1m $((rows - 328))
expect_eq "256 rows with the gap among them: two bios below" $(($(lin_reads) - n)) 2
dd if=/dev/urandom of=/tmp/big bs=1M count=1 status=none
dd if=/tmp/big of=/dev/mapper/pc bs=1M seek=$(((rows - 328) * 4096)) \
	oflag=direct,seek_bytes status=none
dd if=/dev/mapper/pc of=/tmp/big.read bs=1M count=1 skip=$(((rows - 328) * 4096)) \
	iflag=direct,skip_bytes status=none
expect "a 1 MiB write across the gap reads back" cmp -s /tmp/big /tmp/big.read
dmsetup message pc 0 move_gap 300
dd if=/dev/mapper/pc of=/tmp/big.read bs=1M count=1 skip=$(((rows - 328) * 4096)) \
	iflag=direct,skip_bytes status=none
expect "... and after 300 more moves" cmp -s /tmp/big /tmp/big.read
dmsetup remove pc
dmsetup remove lin

# --- a meta_device of 0 sectors is an empty device, not "none" ---------------
# (a loop device over an empty file; a dm device without a table cannot
# even be opened)
modprobe loop 2>/dev/null
: > /tmp/empty
empty=$(losetup -f --show /tmp/empty 2>/dev/null)
m=$(dmesg_mark)
expect_fail "an empty meta_device is refused" dmsetup create pc --table \
	"0 8192 pcm /dev/ram1 0 2 meta_device:$empty format"
if dmesg_since "$m" | grep -q 'Device lookup failed'; then
	skip "the kernel does not open a device of 0 sectors"
else
	expect "with a message naming it" sh -c "dmesg | sed -n '/$m/,\$p' | grep -q 'meta_device has no sectors'"
fi
losetup -d "$empty"

finish
