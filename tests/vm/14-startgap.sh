#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Start-gap: where data really lands and that it stays right while rows
# move.  The oracle reads the backing device at the row that the
# registers predict (pcmctl map, the module's own arithmetic) and compares
# it with what was written; gap_interval:1 rotates the device until start
# has wrapped at least twice, with fio verify after every rotation.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load 16 || skip_all "brd not available"
here=$(dirname "$0")/lib	# the helpers (lib/*.py)

# oracle NAME SAMPLES: random sectors of NAME, read through dm-pcm and at
# the backing sector the registers predict, must agree.
oracle() { py "$here/oracle.py" "$@"; }

# rotate NAME WORDS: write with gap_interval:1 until every domain's start
# wrapped $want_wraps times (twice at full PCM_SCALE, once in make check)
want_wraps=$(scaled 2 1)
rotate() {
	local name=$1 size wraps=0 round=0
	size=$(( $(sectors "/dev/mapper/$name") * 512 ))
	while [ "$wraps" -lt "$want_wraps" ] && [ "$round" -lt 12 ]; do
		round=$((round + 1))
		run_fio --name=rot --filename="/dev/mapper/$name" --rw=randwrite --bs=4k \
			--iodepth=8 --verify=crc32c --do_verify=1 --verify_fatal=1 \
			--size="$size" --randseed="$round" || return 1
		dmsetup message "$name" 0 move_gap 1 || return 1
		run_fio --name=rot --filename="/dev/mapper/$name" --rw=randwrite --bs=4k \
			--iodepth=8 --verify=crc32c --verify_only=1 --size="$size" \
			--randseed="$round" || return 1
		oracle "$name" 16 || return 1
		# every domain's start register counts its own wraps
		wraps=$(registers "$name" | tr ' ' '\n' | cut -d/ -f1 | sort -n | head -1)
	done
	note "$name: $round rotations, $(status_field "$name" gap_moves) moves, start:$(status_field "$name" start) wraps:$wraps"
	[ "$wraps" -ge "$want_wraps" ]
}

# 1. the oracle with no moves, then with forced moves, over several layouts
for words in "gap_interval:0" "domains:4 gap_interval:0" \
	     "domains:3 randomize:99 row_size:8192" "domains:5 randomize:7 row_size:512"; do
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create sg --table "$(pcm_table /dev/ram0 $words format)"
	head -c $(( $(sectors /dev/mapper/sg) * 512 )) /dev/urandom |
		dd of=/dev/mapper/sg bs=1M oflag=direct status=none
	expect "$words: data where the registers say (fresh)" oracle sg 64
	dmsetup message sg 0 move_gap 1		# also waits for the moves writes owe
	r0=$(registers sg)
	dmsetup message sg 0 move_gap 37
	expect "$words: after 37 moves per domain" oracle sg 64
	expect "$words: every gap register moved by 37" py -c "
a, b = '$r0'.split(), '$(registers sg)'.split()
assert len(a) == len(b) and all(int(x.split('/')[1]) - int(y.split('/')[1]) == 37 for x, y in zip(a, b))"
	dmsetup remove sg
done

# 2. rotations with fio verify: a small device so that start wraps quickly
small() { echo "0 1024 pcm /dev/ram0 0 $# $*"; }	# 128 rows of 4 KiB
for words in "gap_interval:1" "gap_interval:1 domains:4 randomize:31337"; do
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create rot --table "$(small $words format)"
	expect "$words: start wraps $want_wraps time(s), fio verify after each rotation" rotate rot
	dmsetup remove rot
done

# 3. a row written while it moves: moves and I/O race, nothing is lost
# (300 moves and 20 fio loops at full PCM_SCALE)
dmsetup create race --table "$(small gap_interval:1 domains:2 format)"
(for i in $(seq 1 "$(scaled 300 60)"); do dmsetup message race 0 move_gap 1 || exit 1; done) &
mover=$!
# bios of 1 to 16 rows: a bio over rows back to back is one bio below
expect "fio verify while move_gap runs beside it" run_fio --name=race \
	--filename=/dev/mapper/race --rw=randrw --bssplit=4k/50:16k/25:64k/25 \
	--iodepth=16 --numjobs=2 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --size=256k --offset_increment=256k \
	--loops="$(scaled 20 5)"
expect "move_gap messages all succeeded" wait $mover
expect "no move failed" test "$(status_field race move_errors)" -eq 0
dmsetup remove race

# 5. a round over many domains: its row copies go out in batches of
# concurrent bios (128 rows of 4 KiB a batch, dm-pcm-move.c), so 300
# domains are three batches, the last one short.  Every domain's gap
# moves, the data reads back the same live and after remove + create,
# and with ecc:bch each row's parity moved with it (no bit corrected).
# Not on the compat tier: the batching and the parity's moves are
# dm-pcm's own code; the copies' bios (submit_bio of a round's reads,
# then its writes) run on 6.1 in sections 1-3, rounds of 1 to 5 domains.
compat_skip "5 (a round over 300 domains)" ||
for words in "gap_interval:0 domains:300 randomize:11" \
	     "gap_interval:0 domains:300 randomize:11 ecc:bch"; do
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create mr --table "$(pcm_table /dev/ram0 $words format)"
	head -c $(( $(sectors /dev/mapper/mr) * 512 )) /dev/urandom > /tmp/mr.img
	dd if=/tmp/mr.img of=/dev/mapper/mr bs=1M oflag=direct status=none
	r0=$(registers mr)
	moves=$(status_field mr gap_moves)
	expect "$words: move_gap 5" dmsetup message mr 0 move_gap 5
	expect_eq "$words: 5 moves in each domain" "$(status_field mr gap_moves move_errors)" \
		"$((moves + 1500)) 0"
	expect "$words: every gap register moved by 5" py -c "
a, b = '$r0'.split(), '$(registers mr)'.split()
assert len(a) == len(b) == 300
assert all(int(x.split('/')[1]) - int(y.split('/')[1]) == 5 for x, y in zip(a, b))"
	expect "$words: data intact after the rounds" \
		cmp <(dd if=/dev/mapper/mr bs=1M iflag=direct status=none) /tmp/mr.img
	expect "$words: data where the registers say" oracle mr 64
	case $words in *ecc:bch*)
		expect_eq "$words: parity moved with its rows: nothing corrected" \
			"$(status_field mr ecc_corrected_bits ecc_uncorrectable_sectors)" "0 0"
	esac
	regs=$(registers mr)
	dmsetup remove mr
	# shellcheck disable=SC2086 # $words: table words, split on purpose
	dmsetup create mr --table "$(pcm_table /dev/ram0 $words)"
	expect_eq "$words: registers survive remove + create" "$(registers mr)" "$regs"
	expect "$words: data intact after remove + create" \
		cmp <(dd if=/dev/mapper/mr bs=1M iflag=direct status=none) /tmp/mr.img
	case $words in *ecc:bch*)
		expect_eq "$words: ... and after remove + create" \
			"$(status_field mr ecc_corrected_bits ecc_uncorrectable_sectors)" "0 0"
	esac
	dmsetup remove mr
done

# 4. the tracepoint reports moves
tr=/sys/kernel/tracing
[ -d $tr/events ] || tr=/sys/kernel/debug/tracing
if [ -d $tr/events/pcm/pcm_gap_move ]; then
	dmsetup create tp --table "$(small gap_interval:0 format)"
	echo 1 > $tr/events/pcm/pcm_gap_move/enable
	echo > $tr/trace
	dmsetup message tp 0 move_gap 3
	echo 0 > $tr/events/pcm/pcm_gap_move/enable
	expect_eq "pcm_gap_move fired once per move" "$(grep -c 'pcm_gap_move:' $tr/trace)" 3
	expect "it names rows and registers" grep -q 'row 127 -> 128 start 0 gap 127' $tr/trace
	dmsetup remove tp
else
	skip "no tracefs with pcm events"
fi
finish
