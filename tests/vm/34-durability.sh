#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Durability over every kind of backing device (the .rst's "Crash safety").
#
#  - Without a volatile cache (dm-linear over brd: "write through"), no
#    flush ever reaches dm-pcm, so a write that completed must survive a
#    power cut as it is: a write to the row a gap move has just moved,
#    then the cut (an error table swapped under the dm-linear), then a new
#    dm-pcm over the same bytes reads it back.  Three rounds; and again
#    with ecc:bch and a meta_device (the moved row's parity survives).
#  - ecc:bch with a meta_device that has a volatile cache (dm-log-writes):
#    every crash point of a series of gap moves, replayed, loads and reads
#    every row back with no ECC error (the parity a move copies is durable
#    before the superblock that points at it).
#  - A failed superblock write: writes, flushes and fsync fail with EIO
#    within a bound, and suspend and remove complete.
#  - REQ_NOWAIT writes under ecc:bch against a backing queue with no free
#    tag (null_blk, hw_queue_depth=1): each completes or fails with EAGAIN,
#    and the row reads back as the last completed write, with no ECC error.
#  - mmap rewrites on ext4 over ecc:bch (stable pages): no EIO and no ECC
#    error, across remove + create, fsck clean.
#  - A read of a 1 MiB row far past its endurance (over a million stuck
#    cells) fails in bounded time, with no soft lockup or RCU stall.
. "$(dirname "$0")/lib.sh"

here=$(dirname "$0")
brd_load 16 3 || skip_all "brd not available"
RS=4096

# pattern ROW VERSION: a file of one row's contents for that version.
pattern() {
	local f=/tmp/row-$1-v$2
	[ -f "$f" ] || yes "row $1 version $2" | head -c $RS > "$f"
	echo "$f"
}
put() {	# put DEV ROW VERSION: write it, O_DIRECT, no flush
	dd if="$(pattern "$2" "$3")" of="$1" bs=$RS seek="$2" count=1 oflag=direct \
		conv=notrunc status=none
}
holds() {	# holds DEV ROW VERSION
	dd if="$1" bs=$RS skip="$2" count=1 iflag=direct status=none |
		cmp -s - "$(pattern "$2" "$3")"
}
swap() {	# swap NAME TABLE: replace the table under dm-pcm
	dmsetup suspend --nolockfs "$1" && dmsetup load "$1" --table "$2" &&
		dmsetup resume "$1"
}
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2://p"; }
cache_of() { cat "/sys/block/$(dm_kname "$1")/queue/write_cache"; }
# the logical row the next gap move of pcm device NAME copies (one domain)
next_moved() {
	local regs gap src secs i
	regs=$(registers "$1")
	gap=${regs#*/}
	src=$(( gap ? gap - 1 : $2 ))	# the gap at 0: the last physical row wraps
	secs=$(for ((i = 0; i < $2; i++)); do echo $((i * 8)); done)
	# shellcheck disable=SC2086
	"$PCM_ROOT/tools/pcmctl" map "$1" $secs | awk -v want=$((src * 8)) \
		'{ if ($NF == want) { print int($1 / 8); exit } }'
}

# cut_round NAME TABLE ROWS UNDER...: fill, persist, let writes move the
# gap, write the moved row, cut the power under every UNDER, recreate,
# check.  Sets $lost (rows not as written).
cut_round() {
	local name=$1 table=$2 rows=$3 r m a b u
	shift 3
	lost=0
	dmsetup create "$name" --table "$table" || return 1
	for ((r = 0; r < rows; r++)); do put /dev/mapper/$name $r 1 || return 1; done
	dmsetup message "$name" 0 persist || return 1
	m=$(next_moved "$name" "$rows")
	[ -n "$m" ] || return 1
	a=$(( (m + 1) % rows )) b=$(( (m + 2) % rows ))
	dmsetup message "$name" 0 set gap_interval 2 || return 1
	put /dev/mapper/$name $a 2 && put /dev/mapper/$name $b 2 || return 1
	for ((r = 0; r < 100 && $(status_field "$name" gap_moves) < 1; r++)); do sleep 0.05; done
	[ "$(status_field "$name" gap_moves)" = 1 ] || return 1
	put /dev/mapper/$name "$m" 3 || return 1
	for u in "$@"; do swap "$u" "0 $(sectors /dev/mapper/$u) error" || return 1; done
	note "moved row $m written, then the cut ($(status_field "$name" sb_writes) superblock writes)"
	dmsetup remove "$name" || return 1
	for u in "$@"; do swap "$u" "$(cat /tmp/up-$u)" || return 1; done
	dmsetup create "$name" --table "$table" || return 1
	for ((r = 0; r < rows; r++)); do
		if [ "$r" = "$m" ]; then holds /dev/mapper/$name $r 3 || lost=$((lost + 1))
		elif [ "$r" = "$a" ] || [ "$r" = "$b" ]; then holds /dev/mapper/$name $r 2 || lost=$((lost + 1))
		else holds /dev/mapper/$name $r 1 || lost=$((lost + 1))
		fi
	done
	dmsetup remove "$name"
}

# --- 1. no volatile cache: a completed write to a moved row survives ------
echo "0 $(sectors /dev/ram0) linear /dev/ram0 0" > /tmp/up-under
dmsetup create under --table "$(cat /tmp/up-under)"
words="preset:none gap_interval:0"
len=$(( $(pcm_len /dev/mapper/under $words) / 64 * 64 ))
len=$(( len > 2048 ? 2048 : len ))	# 256 rows: the fill stays short
table="0 $len pcm /dev/mapper/under 0 2 $words"
dmsetup create pc --table "$table format"
expect_eq "the backing dm-linear over brd has no volatile cache" "$(cache_of under)" "write through"
expect_eq "so dm-pcm over it advertises none" "$(cache_of pc)" "write through"
dmsetup remove pc
ok=0
for i in 1 2 3; do
	if cut_round pc "$table" $((len / 8)) under && [ "$lost" = 0 ]; then
		ok=$((ok + 1))
	else
		fail "round $i: $lost rows not as written after the cut"
		cleanup_all >/dev/null 2>&1
		brd_load 16 3
		dmsetup create under --table "$(cat /tmp/up-under)"
	fi
done
expect_eq "rounds in which every completed write survived the cut" "$ok" 3
dmsetup remove under

# --- 2. the same with ecc:bch on a meta_device, both without a cache ------
echo "0 $(sectors /dev/ram0) linear /dev/ram0 0" > /tmp/up-under
echo "0 $(sectors /dev/ram1) linear /dev/ram1 0" > /tmp/up-meta
dmsetup create under --table "$(cat /tmp/up-under)"
dmsetup create meta --table "$(cat /tmp/up-meta)"
words="preset:none gap_interval:0 ecc:bch meta_device:/dev/mapper/meta"
table="0 $len pcm /dev/mapper/under 0 4 $words"
dmsetup create pc --table "$table format" && dmsetup remove pc
if cut_round pc "$table" $((len / 8)) under meta && [ "$lost" = 0 ]; then
	pass "ecc:bch, meta_device: every completed write survived the cut"
else
	fail "ecc:bch, meta_device: $lost rows not as written after the cut"
fi
dmsetup create pc --table "$table"
dd if=/dev/mapper/pc of=/dev/null bs=1M iflag=direct status=none
expect_eq "and no row read after the cut had an ECC error" \
	"$(status_field pc ecc_uncorrectable_sectors)/$(status_field pc ecc_corrected_bits)" 0/0
dmsetup remove pc
dmsetup remove meta
dmsetup remove under

# --- 3. a meta_device with a volatile cache: every crash point of moves ----
# dm-log-writes logs a write once a flush covers it (or at once with FUA):
# replaying its log to a flush or FUA entry gives what such a device holds
# after a power cut there.
if modprobe dm-log-writes 2>/dev/null; then
	blkdiscard -z /dev/ram1
	dmsetup create lwm --table "0 $(sectors /dev/ram1) log-writes /dev/ram1 /dev/ram2"
	words="preset:none gap_interval:0 ecc:bch meta_device:/dev/mapper/lwm"
	rows=$((len / 8))
	dmsetup create pc --table "0 $len pcm /dev/ram0 0 5 $words format"
	expect_eq "dm-log-writes advertises a volatile cache" "$(cache_of lwm)" "write back"
	for ((r = 0; r < rows; r++)); do put /dev/mapper/pc $r 1; done
	dmsetup message pc 0 persist
	dmsetup message lwm 0 mark filled
	expect "4 rounds of gap moves" dmsetup message pc 0 move_gap 4
	dmsetup remove pc
	dmsetup remove lwm
	mapfile -t points < <(python3 "$here/logreplay.py" crashpoints /dev/ram2)
	filled=$(python3 "$here/logreplay.py" list /dev/ram2 | awk '/MARK.*filled/ {print $1; exit}')
	tried=0 bad=0
	for p in "${points[@]}"; do
		[ -n "$filled" ] && [ "$p" -gt "$filled" ] || continue
		blkdiscard -z /dev/ram1
		python3 "$here/logreplay.py" replay /dev/ram2 /dev/ram1 --upto "$p" >/dev/null || { bad=$((bad + 1)); continue; }
		tried=$((tried + 1))
		if ! dmsetup create --readonly pcr --table "0 $len pcm /dev/ram0 0 3 preset:none ecc:bch meta_device:/dev/ram1"; then
			bad=$((bad + 1))
			continue
		fi
		for ((r = 0; r < rows; r++)); do holds /dev/mapper/pcr $r 1 || { bad=$((bad + 1)); break; }; done
		e=$(status_field pcr ecc_uncorrectable_sectors)/$(status_field pcr ecc_corrected_bits)/$(status_field pcr ecc_silent_sectors)
		[ "$e" = 0/0/0 ] || { note "crash point $p: ECC uncorrectable/corrected/silent $e"; bad=$((bad + 1)); }
		dmsetup remove pcr
	done
	note "FIGURE: meta_device with a volatile cache: $tried crash points after the fill replayed, $bad bad"
	expect "crash points inside the moves replayed ($tried)" test "$tried" -ge 4
	expect_eq "every one loads and reads every row back with no ECC error" "$bad" 0
else
	skip "dm-log-writes not available"
fi

# --- 4. a failed superblock write: EIO within a bound, never a hang --------
modprobe dm-flakey 2>/dev/null
blkdiscard -z /dev/ram0
words="preset:none gap_interval:0"
rows=$((len / 8))
data_end=$(( (rows + 1) * 8 ))
sz=$(sectors /dev/ram0)
# dm-flakey never down: a backing device with a volatile cache, so flushes reach dm-pcm
up="0 $sz flakey /dev/ram0 0 3600 0"
down="0 $data_end flakey /dev/ram0 0 3600 0
$data_end $((sz - data_end)) error"
dmsetup create under --table "$up"
dmsetup create pc --table "0 $len pcm /dev/mapper/under 0 3 $words format"
expect_eq "over dm-flakey dm-pcm advertises a volatile cache" "$(cache_of pc)" "write back"
put /dev/mapper/pc 0 1
printf '%s\n' "$down" | { dmsetup suspend --nolockfs under && dmsetup load under &&
	dmsetup resume under; }
expect_fail "move_gap: the copy succeeds, the superblock write fails" \
	timeout 60 dmsetup message pc 0 move_gap 1
expect_eq "metadata failed" "$(status_field pc metadata)" failed
expect_fail "a write fails" timeout 30 dd if=/dev/zero of=/dev/mapper/pc bs=$RS count=1 oflag=direct status=none
t0=$SECONDS
timeout 60 python3 -c 'import os,sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)' /dev/mapper/pc 2>/tmp/fsync.err
rc=$?
expect "fsync (a flush) fails with EIO, not a hang (rc $rc, $((SECONDS - t0)) s)" \
	grep -q "Errno 5" /tmp/fsync.err
expect "a read still works" holds /dev/mapper/pc 0 1
expect "suspend completes" timeout 60 dmsetup suspend pc
expect "resume completes" timeout 60 dmsetup resume pc
expect "remove completes" timeout 60 dmsetup remove pc
dmsetup remove under

# --- 5. REQ_NOWAIT under ecc:bch against a full backing queue --------------
rmmod null_blk 2>/dev/null
if [ -d /sys/kernel/config ] && { mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config; } &&
	modprobe null_blk nr_devices=0 2>/dev/null && mkdir /sys/kernel/config/nullb/nb 2>/dev/null; then
	nb=/sys/kernel/config/nullb/nb
	echo 64 > $nb/size; echo 1 > $nb/memory_backed; echo 1 > $nb/hw_queue_depth
	echo 2 > $nb/irqmode; echo 100000 > $nb/completion_nsec; echo 2 > $nb/queue_mode
	echo 1 > $nb/power
	nbdev=/dev/$(cat $nb/index 2>/dev/null | sed 's/^/nullb/')
	[ -b "$nbdev" ] || nbdev=/dev/nullb0
	words="preset:none gap_interval:0 ecc:bch meta_device:/dev/ram1"
	nlen=$(( $(pcm_len "$nbdev" $words) / 8 * 8 ))
	blkdiscard -z /dev/ram1
	dmsetup create pn --table "0 $nlen pcm $nbdev 0 4 $words format"
	# keep the single tag busy with reads of other rows
	fio --name=busy --filename=/dev/mapper/pn --rw=randread --bs=4k --offset=1M \
		--size=4M --ioengine=libaio --iodepth=8 --direct=1 --time_based --runtime=30 \
		--output=/dev/null &
	fpid=$!
	sleep 2
	out=$(python3 "$here/nowait.py" /dev/mapper/pn 0 200)
	kill $fpid 2>/dev/null
	wait $fpid 2>/dev/null
	note "FIGURE: RWF_NOWAIT writes of one row over a full queue: $out"
	expect "some completed ($out)" test "$(kv "$out" done)" -gt 0
	expect_eq "after each, the row read back as the last completed one" "$(kv "$out" bad)" 0
	expect_eq "no ECC error: no parity written over data that was not" \
		"$(status_field pn ecc_uncorrectable_sectors)/$(status_field pn ecc_corrected_bits)/$(status_field pn ecc_silent_sectors)" 0/0/0
	dmsetup remove pn
	echo 0 > $nb/power
	rmdir $nb
	rmmod null_blk 2>/dev/null
else
	skip "null_blk with configfs not available"
fi

# --- 6. mmap rewrites on ext4 over ecc:bch: stable pages --------------------
words="preset:none gap_interval:64 ecc:bch"
blkdiscard -z /dev/ram0
flen=$(pcm_len /dev/ram0 $words)
ftable="0 $flen pcm /dev/ram0 0 3 $words"
dmsetup create pf --table "$ftable"
mkfs.ext4 -q -F /dev/mapper/pf
mkdir -p /tmp/pcm-mnt
mount /dev/mapper/pf /tmp/pcm-mnt
expect "fio: two mmap writers rewrite the same 4 MiB file, msync every 4 writes" \
	fio --name=mm --directory=/tmp/pcm-mnt --filename=f --size=4M --bs=4k \
	--rw=randwrite --ioengine=mmap --numjobs=2 --fsync=4 --time_based --runtime=8 \
	--output=/dev/null
umount /tmp/pcm-mnt
e=$(status_field pf ecc_uncorrectable_sectors)/$(status_field pf ecc_corrected_bits)/$(status_field pf ecc_silent_sectors)
dmsetup remove pf
dmsetup create pf --table "$ftable"
expect "every row reads after remove + create (no EIO)" \
	dd if=/dev/mapper/pf of=/dev/null bs=1M iflag=direct status=none
e2=$(status_field pf ecc_uncorrectable_sectors)/$(status_field pf ecc_corrected_bits)/$(status_field pf ecc_silent_sectors)
expect_eq "no ECC error while the pages were rewritten" "$e" 0/0/0
expect_eq "no ECC error reading it all back" "$e2" 0/0/0
expect "fsck clean" fsck.ext4 -fn /dev/mapper/pf
dmsetup remove pf

# --- 7. a worn 1 MiB row: bounded stuck-cell walk ------------------------------
words="preset:none gap_interval:0 ecc:bch row_size:1048576 wear:on endurance:1 seed:5"
blkdiscard -z /dev/ram0
wlen=$(( $(pcm_len /dev/ram0 $words) / 2048 * 2048 ))
dmsetup create pw --table "0 $wlen pcm /dev/ram0 0 7 $words format"
for i in 1 2 3 4 5 6; do
	dd if=/dev/urandom of=/dev/mapper/pw bs=1M count=1 oflag=direct status=none
done
mark=$(dmesg_mark)
t0=$SECONDS
expect_fail "the row read 6 times past endurance 1 fails (uncorrectable)" \
	timeout 300 dd if=/dev/mapper/pw of=/dev/null bs=1M count=1 iflag=direct status=none
note "FIGURE: a 1 MiB row at 6x endurance read in $((SECONDS - t0)) s: $(status_field pw ecc_raw_bits) raw bits, $(status_field pw ecc_uncorrectable_sectors) sectors uncorrectable"
expect "its 2048 sectors counted uncorrectable" test "$(status_field pw ecc_uncorrectable_sectors)" -ge 2000
expect "no soft lockup or RCU stall" \
	bash -c "! dmesg | sed -n '/$mark/,\$p' | grep -Eq 'soft lockup|rcu.*stall|hung task'"
dmsetup remove pw

finish
