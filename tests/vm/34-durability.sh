#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Durability over every kind of backing device (the .rst's "Crash safety").
#
#  - Without a volatile cache (dm-linear over brd: "write through"), no
#    flush ever reaches dm-pcm, so a write that completed must survive a
#    power cut as it is: a write to the row a gap move has just moved,
#    then the cut (an error table swapped under the dm-linear), then a new
#    dm-pcm over the same bytes reads it back.  Several rounds (6 at full
#    PCM_SCALE, 2 in make check); and again with ecc:bch and a meta_device
#    (the moved row's parity survives).
#  - ecc:bch with a meta_device that has a volatile cache (dm-log-writes)
#    over a data device without one: every crash point of gap moves,
#    replayed, loads and reads every row back with no ECC error (the
#    parity a move copies is durable before the superblock that points
#    at it).
#  - Without a volatile cache again, every state between two completions:
#    the writes under dm-pcm as dm-log-writes logged them (in the order
#    they completed), replayed to every write entry, with and without
#    ecc:bch; each step writes a row, then the row its gap move copies,
#    racing the move and again just after it (section 3b).
#  - A failed superblock write (over a device with a volatile cache, so
#    that flushes reach dm-pcm): writes, flushes and fsync fail with EIO
#    within a bound, suspend and remove complete, and a resume over a
#    metadata area that reads again recovers.
#  - REQ_NOWAIT writes under ecc:bch against a backing queue with no free
#    tag (null_blk, hw_queue_depth=1): each completes or fails with EAGAIN,
#    and the row reads back as the last completed write, with no ECC error.
#  - mmap rewrites on ext4 over ecc:bch (stable pages): no EIO and no ECC
#    error, across remove + create, fsck clean.
#  - A read of a 1 MiB row far past its endurance (over a million stuck
#    cells) fails in bounded time, with no soft lockup or RCU stall.
#  - On a debug kernel (failslab with a stack filter), ECC reads and
#    writes of the same rows with every dm-pcm allocation failing, so the
#    parity buffers come from the mempool's reserve: no deadlock of rows
#    against buffers, the data verifies after (section 8; a skip elsewhere).
#
# PCM_SECTIONS="3b 7 8" runs only those sections (e.g. on the debug
# kernel, where the whole test is ~5x slower).
#
# make check's compat tier (6.1; tests/vm/run --tier compat, PCM_TIER)
# runs what goes through code that differs between the kernels: the
# cache flags, the failed superblock write's flushes, NOWAIT, stable
# pages and the worn row's bound.  The cut rounds and the crash points
# (sections 1-3b, ~60 % of the test) are dm-pcm's own ordering of its
# writes over the pcm_io() path 16 and 17 run there; make check-full
# runs every section on both kernels (tests/vm/tiers).
. "$(dirname "$0")/lib/lib.sh"

here=$(dirname "$0")/lib	# the helpers (lib/*.py)
brd_load 16 5 || skip_all "brd not available"
RS=4096
# PCM_SECTIONS="3b 5": only those sections (the cache flags are always
# checked); unset, every one
sect() {
	[ -z "${PCM_SECTIONS:-}" ] && return 0
	[[ " $PCM_SECTIONS " == *" $1 "* ]] && return 0
	note "section $1 not selected (PCM_SECTIONS=$PCM_SECTIONS)"
	return 1
}

# pattern ROW VERSION: a file of one row's contents for that version.
pattern() {
	local f=/tmp/row-$1-v$2
	[ -f "$f" ] || yes "row $1 version $2" | head -c $RS > "$f"
	echo "$f"
}
img_set() {	# img_set ROW VERSION: the expected image (/tmp/img) has it
	dd if="$(pattern "$1" "$2")" of=/tmp/img bs=$RS seek="$1" count=1 conv=notrunc \
		status=none
}
# img_fill ROWS: every row version 1, pattern's bytes made in the shell:
# a dd and a yes|head per row took 35 of the test's 200 s on 6.1 (TCG)
img_fill() {
	local r s
	for ((r = 0; r < $1; r++)); do
		s="row $r version 1"$'\n'
		while ((${#s} < RS)); do s+=$s; done
		printf '%s' "${s:0:RS}"
	done > /tmp/img
}
put() {	# put DEV ROW VERSION: write it, O_DIRECT, no flush; the image follows
	dd if="$(pattern "$2" "$3")" of="$1" bs=$RS seek="$2" count=1 oflag=direct \
		conv=notrunc status=none && img_set "$2" "$3"
}
fill() {	# fill DEV: the whole image, one write
	dd if=/tmp/img of="$1" bs=64k oflag=direct conv=notrunc status=none
}
same() {	# same DEV: it reads back as the image, every row
	dd if="$1" bs=$RS count=$(($(stat -c %s /tmp/img) / RS)) iflag=direct status=none |
		cmp -s - /tmp/img
}
ecc_figs() {
	echo "$(status_field "$1" ecc_uncorrectable_sectors)/$(status_field "$1" ecc_corrected_bits)/$(status_field "$1" ecc_silent_sectors)"
}
line() {	# line DEV LEN WORD...: a table line with its count of words
	local dev=$1 len=$2
	shift 2
	echo "0 $len pcm $dev 0 $# $*"
}
swap() {	# swap NAME TABLE: replace the table under dm-pcm
	dmsetup suspend --nolockfs "$1" && printf '%s\n' "$2" | dmsetup load "$1" &&
		dmsetup resume "$1"
}
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2://p"; }
cache_of() { cat "/sys/block/$(dm_kname "$1")/queue/write_cache"; }
# next_moved NAME ROWS: the logical row the next gap move copies (one domain)
next_moved() {
	local regs gap src secs i
	regs=$(registers "$1")
	gap=${regs#*/}
	src=$(( gap ? gap - 1 : $2 ))	# the gap at 0: the last physical row wraps
	secs=$(for ((i = 0; i < $2; i++)); do echo $((i * 8)); done)
	# shellcheck disable=SC2086
	# pcmctl map prints: sector backing-device backing-sector row domain
	"$PCM_ROOT/tools/pcmctl" map "$1" $secs | awk -v want=$((src * 8)) \
		'{ if ($3 == want) { print int($1 / 8); exit } }'
}

# cut_round NAME TABLE ROWS UNDER...: fill, persist, let two writes move
# the gap, write the moved row, cut the power under every UNDER (an error
# table), recreate, and compare every row.
cut_round() {
	local name=$1 table=$2 rows=$3 r m a b u
	shift 3
	img_fill "$rows"
	dmsetup create "$name" --table "$table" && fill "/dev/mapper/$name" &&
		dmsetup message "$name" 0 persist || return 1
	m=$(next_moved "$name" "$rows")
	[ -n "$m" ] || return 1
	a=$(( (m + 1) % rows )) b=$(( (m + 2) % rows ))
	dmsetup message "$name" 0 set gap_interval 2 || return 1
	put "/dev/mapper/$name" "$a" 2 && put "/dev/mapper/$name" "$b" 2 || return 1
	for ((r = 0; r < 100 && $(status_field "$name" gap_moves) < 1; r++)); do sleep 0.05; done
	[ "$(status_field "$name" gap_moves)" = 1 ] || return 1
	put "/dev/mapper/$name" "$m" 3 || return 1
	for u in "$@"; do swap "$u" "0 $(sectors "/dev/mapper/$u") error" || return 1; done
	note "moved row $m written, then the cut"
	dmsetup remove "$name" || return 1
	for u in "$@"; do swap "$u" "$(cat "/tmp/up-$u")" || return 1; done
	dmsetup create "$name" --table "$table" || return 1
	same "/dev/mapper/$name"
	r=$?
	dmsetup remove "$name"
	return $r
}

# --- 1. no volatile cache: a completed write to a moved row survives ------
echo "0 $(sectors /dev/ram0) linear /dev/ram0 0" > /tmp/up-under
dmsetup create under --table "$(cat /tmp/up-under)"
words="preset:none gap_interval:0"
len=512	# 64 rows: the fill stays short
rows=$((len / 8))
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(line /dev/mapper/under $len $words)
# shellcheck disable=SC2086 # $words: table words, split on purpose
dmsetup create pc --table "$(line /dev/mapper/under $len $words format)"
expect_eq "the backing dm-linear over brd has no volatile cache" "$(cache_of under)" "write through"
expect_eq "so dm-pcm over it advertises none" "$(cache_of pc)" "write through"
dmsetup remove pc
# PCM_SCALE: 6 rounds at full size, 2 in make check
cuts=1
compat_skip "sections 1-3b: the cut rounds and the crash points" && cuts=0
if ((cuts)) && sect 1; then
	rounds=$(scaled 6 2)
	ok=0
	for ((i = 1; i <= rounds; i++)); do
		if cut_round pc "$table" $rows under; then
			ok=$((ok + 1))
		else
			note "round $i: not every row as written after the cut"
			dmsetup remove pc 2>/dev/null
			swap under "$(cat /tmp/up-under)"
		fi
	done
	expect_eq "rounds in which every completed write survived the cut" "$ok" "$rounds"
fi
dmsetup remove under

# --- 2. the same with ecc:bch on a meta_device, both without a cache ------
if ((cuts)) && sect 2; then
	echo "0 $(sectors /dev/ram0) linear /dev/ram0 0" > /tmp/up-under
	echo "0 $(sectors /dev/ram1) linear /dev/ram1 0" > /tmp/up-meta
	dmsetup create under --table "$(cat /tmp/up-under)"
	dmsetup create meta --table "$(cat /tmp/up-meta)"
	words="preset:none gap_interval:0 ecc:bch meta_device:/dev/mapper/meta"
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	table=$(line /dev/mapper/under $len $words)
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create pc --table "$(line /dev/mapper/under $len $words format)" && dmsetup remove pc
	expect "ecc:bch, meta_device: every completed write survived the cut" \
		cut_round pc "$table" $rows under meta
	dmsetup create pc --table "$table"
	same /dev/mapper/pc
	expect_eq "and no row read after the cut had an ECC error" "$(ecc_figs pc)" 0/0/0
	dmsetup remove pc
	dmsetup remove meta
	dmsetup remove under
fi

# --- 3. a meta_device with a volatile cache: every crash point of moves ----
# dm-log-writes logs a write once a flush covers it (or at once with FUA):
# its log replayed to a flush or FUA entry is what such a device holds
# after a power cut there.  The data device (brd) has no cache: each
# cycle makes one gap move, so its final state is the state at every
# crash point of that cycle (the move's destination is the gap before).
if ((!cuts)) || ! sect 3; then
	:	# (compat_skip's note above)
elif modprobe dm-log-writes 2>/dev/null; then
	blkdiscard -f -z 2>/dev/null /dev/ram1
	words="preset:none gap_interval:0 ecc:bch"
	img_fill $rows
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create pc --table "$(line /dev/ram0 $len $words meta_device:/dev/ram1 format)"
	fill /dev/mapper/pc
	dmsetup remove pc
	tried=0 bad=0 cycles=$(scaled 8 2)	# 2 in make check
	for ((cycle = 1; cycle <= cycles; cycle++)); do
		dd if=/dev/ram1 of=/dev/ram3 bs=1M oflag=direct status=none
		dmsetup create lwm --table "0 $(sectors /dev/ram1) log-writes /dev/ram1 /dev/ram2"
		[ $cycle = 1 ] && expect_eq "dm-log-writes advertises a volatile cache" \
			"$(cache_of lwm)" "write back"
		# shellcheck disable=SC2086 # $words: table words, split on purpose
		dmsetup create pc --table "$(line /dev/ram0 $len $words meta_device:/dev/mapper/lwm)"
		dmsetup message pc 0 move_gap 1 || bad=$((bad + 1))
		dmsetup remove pc
		dmsetup remove lwm
		for p in $(py "$here/logreplay.py" crashpoints /dev/ram2); do
			dd if=/dev/ram3 of=/dev/ram4 bs=1M oflag=direct status=none
			py "$here/logreplay.py" replay /dev/ram2 /dev/ram4 --upto "$p" >/dev/null ||
				{ bad=$((bad + 1)); continue; }
			tried=$((tried + 1))
			# shellcheck disable=SC2086 # $words: table words, split on purpose
			if ! dmsetup create --readonly pcr --table "$(line /dev/ram0 $len $words meta_device:/dev/ram4)"; then
				bad=$((bad + 1))
				continue
			fi
			if ! same /dev/mapper/pcr || [ "$(ecc_figs pcr)" != 0/0/0 ]; then
				note "cycle $cycle, crash point $p: ECC uncorrectable/corrected/silent $(ecc_figs pcr)"
				bad=$((bad + 1))
			fi
			dmsetup remove pcr
		done
	done
	note "FIGURE: meta_device with a volatile cache: $tried crash points of $cycles gap moves replayed, $bad bad"
	expect "crash points inside the moves replayed ($tried)" test "$tried" -ge $((cycles * 2))
	expect_eq "every one loads and reads every row back with no ECC error" "$bad" 0
else
	skip "dm-log-writes not available"
fi

# --- 3b. no volatile cache: every crash point between two completions -------
# dm-log-writes logs the writes under dm-pcm in the order they completed
# (cacheless.py): replayed to every write entry, not just to a flush, it
# is each state a device without a cache holds after a cut.  Each step
# writes pairs of a row and the row the next gap move copies, racing the
# move, until the move is made, then that row again, just moved.  Every row must hold exactly the
# last version that reached the device; with ecc:bch (parity on the data
# device) with no ECC error either.
if ((!cuts)) || ! sect 3b; then
	:
elif modprobe dm-log-writes 2>/dev/null; then
	clen=256	# 32 rows, one domain
	steps=$(scaled 8 2)	# 2 in make check
	for ecc in none bch; do
		blkdiscard -f -z 2>/dev/null /dev/ram0
		blkdiscard -f -z 2>/dev/null /dev/ram4
		words="preset:none gap_interval:3 ecc:$ecc"
		dmsetup create lw --table "0 $(sectors /dev/ram0) log-writes /dev/ram0 /dev/ram2"
		# shellcheck disable=SC2086 # $words: table words, split on purpose
		dmsetup create pc --table "$(line /dev/mapper/lw $clen $words format)"
		seed=$((RANDOM * 32768 + RANDOM))
		note "ecc:$ecc, seed $seed"
		expect "ecc:$ecc: $steps steps of writes racing a gap move, then one after it" \
			py "$here/cacheless.py" write /dev/mapper/pc "$steps" $seed
		note "gap moves: $(status_field pc gap_moves)"
		dmsetup remove pc
		dmsetup remove lw
		# shellcheck disable=SC2086 # $words: table words, split on purpose
		expect "ecc:$ecc: every state between two completions loads, every row its last completed write" \
			py "$here/cacheless.py" check /dev/ram2 /dev/ram4 \
			"$(line /dev/ram4 $clen $words)" $seed $((clen / 8))
	done
else
	skip "dm-log-writes not available"
fi

# --- 4. a failed superblock write: EIO within a bound, never a hang --------
if ! sect 4; then
	:
elif modprobe dm-log-writes 2>/dev/null; then
	blkdiscard -f -z 2>/dev/null /dev/ram0
	words="preset:none gap_interval:0"
	data_end=$(( (rows + 1) * 8 ))
	sz=$(sectors /dev/ram0)
	# dm-log-writes: a backing device with a volatile cache, so flushes reach dm-pcm
	dmsetup create lwc --table "0 $sz log-writes /dev/ram0 /dev/ram2"
	up="0 $sz linear /dev/mapper/lwc 0"
	down="0 $data_end linear /dev/mapper/lwc 0
$data_end $((sz - data_end)) error"
	dmsetup create under --table "$up"
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create pc --table "$(line /dev/mapper/under $len $words format)"
	expect_eq "over dm-log-writes dm-pcm advertises a volatile cache" "$(cache_of pc)" "write back"
	img_fill $rows
	put /dev/mapper/pc 0 1
	swap under "$down"
	expect_fail "move_gap: the copy succeeds, the superblock write fails" \
		timeout 60 dmsetup message pc 0 move_gap 1
	expect_eq "metadata failed" "$(status_field pc metadata)" failed
	expect_fail "a write fails" \
		timeout 30 dd if=/dev/zero of=/dev/mapper/pc bs=$RS count=1 oflag=direct status=none
	t0=$SECONDS
	timeout 60 python3 -S -c 'import os, sys; os.fsync(os.open(sys.argv[1], os.O_WRONLY))' \
		/dev/mapper/pc 2>/tmp/fsync.err
	rc=$?
	expect "fsync (a flush) fails with EIO within a bound, not a hang (exit $rc, $((SECONDS - t0)) s)" \
		grep -q "Errno 5" /tmp/fsync.err
	expect "a read still works" bash -c "dd if=/dev/mapper/pc bs=$RS count=1 iflag=direct status=none | cmp -s - $(pattern 0 1)"
	expect "suspend completes" timeout 60 dmsetup suspend pc
	swap under "$up"
	expect "resume over a readable metadata area completes" timeout 60 dmsetup resume pc
	expect_eq "and the metadata is usable again" "$(status_field pc metadata)" ok
	expect "writes work again" put /dev/mapper/pc 1 2
	expect "remove completes" timeout 60 dmsetup remove pc
	dmsetup remove under
	dmsetup remove lwc
else
	skip "dm-log-writes not available"
fi

# --- 5. REQ_NOWAIT under ecc:bch against a full backing queue --------------
cfs=/sys/kernel/config
modprobe configfs 2>/dev/null
mountpoint -q $cfs || mount -t configfs none $cfs 2>/dev/null
rmmod null_blk 2>/dev/null
if ! sect 5; then
	:
elif modprobe null_blk nr_devices=0 2>/dev/null && mkdir $cfs/nullb/nb 2>/dev/null; then
	nb=$cfs/nullb/nb
	# one queue of one tag, 2 ms a request, memory-backed: a queue that is
	# nearly always full (with a queue per CPU, the ECC worker's CPU often
	# had a free tag: the old module then never met EAGAIN and passed)
	echo 64 > $nb/size; echo 1 > $nb/memory_backed; echo 1 > $nb/hw_queue_depth
	echo 1 > $nb/submit_queues
	echo 2 > $nb/irqmode; echo 2000000 > $nb/completion_nsec
	echo 1 > $nb/power
	# the disk is named after the configfs item on 6.12, nullb<index> on 6.1
	nbname=nb
	[ -e /sys/block/$nbname ] || nbname=nullb$(cat $nb/index)
	nbdev=/dev/$nbname
	# no udev in the VM: the node by hand
	# shellcheck disable=SC2046 # MAJOR MINOR: mknod's two arguments
	[ -b "$nbdev" ] || mknod "$nbdev" b $(tr : ' ' < "/sys/block/$nbname/dev")
	blkdiscard -f -z 2>/dev/null /dev/ram1
	words="preset:none gap_interval:0 ecc:bch meta_device:/dev/ram1"
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	nlen=$(( $(pcm_len "$nbdev" $words) / 8 * 8 ))
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create pn --table "$(line "$nbdev" $nlen $words format)"
	# the one tag kept busy by reads straight from null_blk (through
	# dm-pcm they were bound by BCH decoding in TCG: the tag was mostly free)
	fio --name=busy --filename="$nbdev" --rw=randread --bs=4k --offset=1M \
		--size=4M --ioengine=libaio --iodepth=16 --direct=1 --time_based --runtime=120 \
		--output=/dev/null &
	fpid=$!
	# fio may take seconds to start in a loaded TCG guest: wait for its reads
	for ((i = 0; i < 300; i++)); do
		[ "$(awk '{ print $1 }' "/sys/block/$nbname/inflight")" -gt 0 ] && break
		sleep 0.1
	done
	# the control: the same writes straight to null_blk, in the gap row
	# (physical row nlen / 8, never read through dm-pcm), meet a full queue
	out0=$(py "$here/nowait.py" "$nbdev" $((nlen / 8)) "$(scaled 100 25)")
	out=$(py "$here/nowait.py" /dev/mapper/pn 0 "$(scaled 200 50)")
	kill $fpid 2>/dev/null
	wait $fpid 2>/dev/null
	note "FIGURE: RWF_NOWAIT writes straight to null_blk: $out0; through dm-pcm: $out"
	expect "the backing queue was full: NOWAIT writes straight to it met EAGAIN ($out0)" \
		test "$(kv "$out0" eagain)" -gt 0
	expect "some completed ($out)" test "$(kv "$out" "done")" -gt 0
	expect_eq "after each, the row read back as the last completed one" "$(kv "$out" bad)" 0
	expect_eq "no ECC error: no parity over data that was not written" "$(ecc_figs pn)" 0/0/0
	dmsetup remove pn
	echo 0 > $nb/power
	rmdir $nb
	rmmod null_blk 2>/dev/null
else
	skip "null_blk through configfs not available"
fi

# --- 6. mmap rewrites on ext4 over ecc:bch: stable pages --------------------
# The parity goes to a meta_device whose writes take 2 ms (dm-delay): a
# page that changed after its parity was computed would be written with
# data that parity does not describe.  Two mmap writers rewrite a file
# while a loop fsyncs it: a page they change while it is written back is
# dirty again and written at the next fsync, so such a row is on the
# device only until then.  The fsyncs stop a second before the writers
# do, and nothing writes the file back for that second and after (the
# flusher waits 30 s): the rows written last are read from under the
# file system, then again after umount, remove and create.
if sect 6; then
	blkdiscard -f -z 2>/dev/null /dev/ram0
	blkdiscard -f -z 2>/dev/null /dev/ram1
	modprobe dm-delay 2>/dev/null
	dmsetup create slowmeta --table "0 $(sectors /dev/ram1) delay /dev/ram1 0 0 /dev/ram1 0 2"
	words="preset:none gap_interval:64 ecc:bch meta_device:/dev/mapper/slowmeta"
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	ftable=$(line /dev/ram0 "$(pcm_len /dev/ram0 $words)" $words)
	dmsetup create pf --table "$ftable"
	mkfs.ext4 -q -F -b 4096 /dev/mapper/pf
	mkdir -p /tmp/pcm-mnt
	mount /dev/mapper/pf /tmp/pcm-mnt
	dd if=/dev/urandom of=/tmp/pcm-mnt/f bs=1M count=4 conv=fsync status=none
	rt=$(scaled 20 5)
	rm -f /tmp/mm-stop
	( while [ ! -e /tmp/mm-stop ]; do sync /tmp/pcm-mnt/f; done ) &
	spid=$!
	( sleep $((rt - 1)); touch /tmp/mm-stop ) &
	expect "fio: two mmap writers rewrite the same 4 MiB file for $rt s, a loop fsyncs it" \
		fio --name=mm --directory=/tmp/pcm-mnt --filename=f --size=4M --bs=4k \
		--rw=randwrite --ioengine=mmap --numjobs=2 --time_based --runtime="$rt" \
		--output=/dev/null
	touch /tmp/mm-stop
	wait $spid
	dd if=/dev/mapper/pf of=/dev/null bs=1M iflag=direct status=none
	e=$(ecc_figs pf)
	umount /tmp/pcm-mnt
	dmsetup remove pf
	dmsetup create pf --table "$ftable"
	expect "every row reads after umount, remove + create (no EIO)" \
		dd if=/dev/mapper/pf of=/dev/null bs=1M iflag=direct status=none
	expect_eq "no ECC error reading the rows as the writers left them" "$e" 0/0/0
	expect_eq "no ECC error reading it all back" "$(ecc_figs pf)" 0/0/0
	expect "fsck clean" fsck.ext4 -fn /dev/mapper/pf
	dmsetup remove pf
	dmsetup remove slowmeta
fi

# --- 7. a worn 1 MiB row: bounded stuck-cell walk ------------------------------
if sect 7; then
	words="preset:none gap_interval:0 ecc:bch row_size:1048576 wear:on endurance:1 seed:5"
	blkdiscard -f -z 2>/dev/null /dev/ram0
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	wlen=$(( $(pcm_len /dev/ram0 $words) / 2048 * 2048 ))
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create pw --table "$(line /dev/ram0 $wlen $words format)"
	for i in 1 2 3 4 5 6; do
		dd if=/dev/urandom of=/dev/mapper/pw bs=1M count=1 oflag=direct status=none
	done
	mark=$(dmesg_mark)
	t0=$SECONDS
	expect_fail "the row, written 6 times at endurance 1, fails to read (uncorrectable)" \
		timeout 300 dd if=/dev/mapper/pw of=/dev/null bs=1M count=1 iflag=direct status=none
	note "FIGURE: a 1 MiB row at 6x endurance read in $((SECONDS - t0)) s: $(status_field pw ecc_raw_bits) raw bits, $(status_field pw ecc_uncorrectable_sectors) sectors uncorrectable"
	expect "its sectors counted uncorrectable" test "$(status_field pw ecc_uncorrectable_sectors)" -ge 2000
	expect "no soft lockup or RCU stall" \
		bash -c "! dmesg | sed -n '/$mark/,\$p' | grep -Eq 'soft lockup|rcu.*stall|hung task'"
	dmsetup remove pw
fi

# --- 8. ECC reads and writes of the same rows with the parity pool dry ------
# Debug kernels (failslab with a stack filter): every slab allocation
# with dm-pcm's .text on the stack fails, so each parity buffer comes
# from the mempool's reserve of 4, and reads and writes of the same 8
# rows contend for it and for the rows' bits.  A write takes its buffer
# before its rows, as a read does: it must not deadlock (a hang: fio's
# timeout and the hung-task detector), no I/O may fail (a read that
# raced a write and read its rows again got ENOMEM from a kmalloc), and
# the data verifies after.
D=/sys/kernel/debug
mountpoint -q $D || mount -t debugfs none $D 2>/dev/null
fs=$D/failslab
if ! sect 8; then
	:
elif [ ! -e $fs/require-start ] || [ ! -e /sys/module/dm_pcm/sections/.text ]; then
	skip "section 8: no failslab with a stack filter (a debug kernel: tools/debug-kernel)"
else
	text=$(cat /sys/module/dm_pcm/sections/.text)
	tsize=$(readelf -SW "$PCM_KO" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") { print $(i + 4); exit } }')
	declare -A was
	for f in probability interval times space verbose task-filter require-start \
		require-end stacktrace-depth ignore-gfp-wait cache-filter; do
		was[$f]=$(cat $fs/$f)
	done
	blkdiscard -f -z 2>/dev/null /dev/ram0
	words="preset:none gap_interval:4 ecc:bch"
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create pe --table "$(line /dev/ram0 "$(pcm_len /dev/ram0 $words)" $words format)"
	echo 0 > $fs/probability
	echo 0 > $fs/verbose; echo N > $fs/task-filter; echo N > $fs/cache-filter
	echo N > $fs/ignore-gfp-wait; echo 0 > $fs/space; echo 1 > $fs/interval
	echo 32 > $fs/stacktrace-depth
	printf '0x%x\n' $((text)) > $fs/require-start
	printf '0x%x\n' $((text + 0x$tsize)) > $fs/require-end
	echo 100000000 > $fs/times
	echo 100 > $fs/probability
	rt=$(scaled 40 10)
	t0=$SECONDS
	timeout $((rt * 4 + 120)) fio --name=dry --filename=/dev/mapper/pe --size=32k \
		--bs=512 --rw=randrw --ioengine=libaio --iodepth=32 --numjobs=2 --direct=1 \
		--time_based --runtime="$rt" --continue_on_error=all --group_reporting \
		--output=/tmp/dry.out
	rc=$?
	echo 0 > $fs/probability
	injected=$((100000000 - $(cat $fs/times)))
	for f in "${!was[@]}"; do echo "${was[$f]}" > "$fs/$f" 2>/dev/null; done
	note "FIGURE: $rt s of 512 B reads and writes of 8 rows, QD32 x 2, the parity pool dry: $injected allocations failed, $(grep -o 'err=[^,]*' /tmp/dry.out | head -1), $(grep -Eo '(read|write): IOPS=[^,]*' /tmp/dry.out | tr '\n' ' ')"
	expect "fio ran its $rt s: no deadlock, and no I/O error (exit $rc, $((SECONDS - t0)) s)" test $rc -eq 0
	expect "failslab failed dm-pcm's allocations ($injected)" test $injected -gt 0
	expect "then the device verifies (a write and a read of every row)" \
		fio --name=after --filename=/dev/mapper/pe --size=1M --bs=4k --rw=randwrite \
		--ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c --output=/dev/null
	expect_eq "no ECC error in it all" "$(ecc_figs pe)" 0/0/0
	dmsetup remove pe
fi

finish
