#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# ecc:bch on the data path: a fresh device reads zeros without errors,
# data written reads back through the decoder, "inject" of t bits is
# corrected and counted, more than the code corrects fails the read
# with EIO (its neighbours unharmed), parity moves with its row, rber
# errors are corrected under fio verify, past t what each read returns
# (refused, miscorrected, right) is what status counts, ext4 over it is
# clean, bad layouts are refused with what would fit, and a failed data
# or parity read fails the read with EIO.  Errors are exactly
# reproducible (remove + create, QD32 1 MiB reads and QD1 64 KiB reads,
# inline and with ecc_workqueue, give the same counts), and on ecc:none
# rber's errors reach the reader.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

brd_load 32 || skip_all "brd not available"
rm -f /dev/mapper/ecc	# not a device: a file a failed run left

field() { status_field "$1" "$2"; }

# one codeword per sector, t = 8 (m = 13: 13 parity bytes): t + 1 errors
# in a sector are in one codeword, which the decoder then refuses
one="ecc:bch ecc_codewords:1 ecc_t:8 meta_bytes:16 seed:7 gap_interval:0"

# --- a fresh device: zeros, no errors ---
# shellcheck disable=SC2086 # $one: table words, split on purpose
pcm_create ecc /dev/ram0 $one
expect_eq "a fresh device reads back zeros" \
	"$(dd if=/dev/mapper/ecc bs=1M count=1 iflag=direct status=none | tr -d '\0' | wc -c)" 0
expect_eq "without a corrected bit" "$(field ecc ecc_corrected_bits)" 0
expect_eq "nor a failed sector" "$(field ecc ecc_uncorrectable_sectors)" 0

# --- written data reads back, t injected bits corrected ---
head -c 1048576 /dev/urandom > /tmp/ecc.data
dd if=/tmp/ecc.data of=/dev/mapper/ecc bs=64k oflag=direct status=none
expect "data reads back" cmp -n 1048576 /tmp/ecc.data /dev/mapper/ecc
dmsetup message ecc 0 inject 2 8
expect "8 bits injected in sector 2: still the data" \
	bash -c 'dd if=/dev/mapper/ecc bs=4k count=1 iflag=direct status=none | cmp - <(head -c 4096 /tmp/ecc.data)'
expect_eq "8 bits corrected" "$(field ecc ecc_corrected_bits)" 8
expect_eq "in one sector" "$(field ecc ecc_corrected_sectors)" 1
expect_eq "8 bits injected" "$(field ecc ecc_injected_bits)" 8
expect "a one-shot injection is used up" \
	bash -c 'dd if=/dev/mapper/ecc bs=4k count=1 iflag=direct status=none | cmp - <(head -c 4096 /tmp/ecc.data)'
expect_eq "nothing more to correct" "$(field ecc ecc_corrected_bits)" 8

# --- t + 1 bits: EIO, neighbours intact ---
dmsetup message ecc 0 inject 20 9
expect_fail "9 bits in sector 20: the read fails" \
	dd if=/dev/mapper/ecc of=/dev/null bs=512 skip=20 count=1 iflag=direct status=none
expect_eq "one sector uncorrectable" "$(field ecc ecc_uncorrectable_sectors)" 1
# shellcheck disable=SC2016 # $ in single quotes is bash -c's
expect "sectors 19 and 21 read back" \
	bash -c 'dd if=/dev/mapper/ecc bs=512 skip=19 count=1 iflag=direct status=none | cmp - <(tail -c +$((19 * 512 + 1)) /tmp/ecc.data | head -c 512) &&
		 dd if=/dev/mapper/ecc bs=512 skip=21 count=1 iflag=direct status=none | cmp - <(tail -c +$((21 * 512 + 1)) /tmp/ecc.data | head -c 512)'
dmsetup message ecc 0 inject 30 9 sticky
expect_fail "a sticky error fails every read" \
	dd if=/dev/mapper/ecc of=/dev/null bs=512 skip=30 count=1 iflag=direct status=none
expect_fail "again" dd if=/dev/mapper/ecc of=/dev/null bs=512 skip=30 count=1 iflag=direct status=none
dmsetup message ecc 0 clear_injected
expect "clear_injected: it reads again" \
	dd if=/dev/mapper/ecc of=/dev/null bs=512 skip=30 count=1 iflag=direct status=none

# --- partial-row writes keep the rest of the row's parity ---
head -c 512 /dev/urandom > /tmp/ecc.sec
dd if=/tmp/ecc.sec of=/dev/mapper/ecc bs=512 seek=3 oflag=direct status=none
dd if=/tmp/ecc.sec of=/tmp/ecc.data bs=512 seek=3 conv=notrunc status=none
expect "one sector rewritten: the row reads back" cmp -n 1048576 /tmp/ecc.data /dev/mapper/ecc
expect_eq "no error on the way (3: the reads of 20 and 30 above)" \
	"$(field ecc ecc_uncorrectable_sectors)" 3

# --- parity moves with its row ---
dmsetup message ecc 0 move_gap 300
note "after 300 moves: $(registers ecc)"
expect "data reads back after gap moves" cmp -n 1048576 /tmp/ecc.data /dev/mapper/ecc
dmsetup message ecc 0 inject 2000 8
expect "8 bits injected after the moves: corrected" cmp -n 1048576 /tmp/ecc.data /dev/mapper/ecc
expect_eq "counted" "$(field ecc ecc_corrected_sectors)" 2
dmsetup remove ecc

# --- rber under fio verify: errors in most reads, none uncorrectable ---
wipe_meta /dev/ram0
expect "ecc:bch preset:pss rber:1e-4" pcm_create ecc /dev/ram0 ecc:bch preset:pss seed:3 rber:1e-4 gap_interval:16
expect "fio verify with rber:1e-4" run_fio --name=v --filename=/dev/mapper/ecc --rw=randwrite \
	--bs=4k --size=4M --iodepth=8 --verify=crc32c --do_verify=1
raw=$(field ecc ecc_raw_bits)
note "raw bit errors $raw, corrected bits $(field ecc ecc_corrected_bits), sectors $(field ecc ecc_corrected_sectors), silent $(field ecc ecc_silent_sectors)"
expect "raw errors drawn: more than one per 4 KiB read on average" test "$raw" -gt 1024
expect_eq "all corrected" "$(field ecc ecc_raw_bits)" "$(field ecc ecc_corrected_bits)"
expect_eq "none uncorrectable" "$(field ecc ecc_uncorrectable_sectors)" 0
dmsetup message ecc 0 set rber 0
dmsetup message ecc 0 stats reset
dd if=/dev/mapper/ecc of=/dev/null bs=1M count=4 iflag=direct status=none
expect_eq "set rber 0: no more errors" "$(field ecc ecc_raw_bits)" 0
dmsetup remove ecc

# --- the parity engine: where pss's parity fits clmul and the CPU has
# it, the constructor times clmul and the tables over a row and keeps the
# faster; the log says which, once per engine while the module is
# loaded (so it is loaded afresh here), with both times ---
if grep -qw pclmulqdq /proc/cpuinfo && rmmod dm_pcm && pcm_module_loaded; then
	wipe_meta /dev/ram0
	pcm_create ecc /dev/ram0 ecc:bch preset:pss gap_interval:0
	dmsetup remove ecc
	line=$(dmesg | grep 'ecc:bch parity engine: .*(a 4 KiB row' | tail -n 1)
	note "${line#*] }"
	if [[ $line =~ engine:\ ([a-z]+).*clmul\ ([0-9]+)\ ns,\ tables\ ([0-9]+)\ ns ]]; then
		want=tables
		((BASH_REMATCH[2] <= BASH_REMATCH[3])) && want=clmul
		expect_eq "the engine kept is the faster" "${BASH_REMATCH[1]}" "$want"
	else
		fail "no timed engine choice in the log after a pss device"
	fi
fi

# --- past t, sector by sector: what each read returns is what status
# counts.  5 bits in each of 64 sectors of a weak code (one codeword,
# t = 2): the decoder refuses most (EIO, counted uncorrectable) and
# miscorrects some (their data comes back wrong, counted silent); a read
# that returns the written data is a corrected one.  The decoder works on
# a copy and the bio's page is the truth, then takes the result ---
wipe_meta /dev/ram0
pcm_create ecc /dev/ram0 ecc:bch ecc_codewords:1 ecc_t:2 meta_bytes:16 seed:5 gap_interval:0
head -c 32768 /dev/urandom > /tmp/ecc.d32
dd if=/tmp/ecc.d32 of=/dev/mapper/ecc bs=32k oflag=direct status=none
for s in $(seq 0 63); do dmsetup message ecc 0 inject "$s" 5; done
failed=0 wrong=0 right=0
for s in $(seq 0 63); do
	if ! dd if=/dev/mapper/ecc of=/tmp/ecc.s bs=512 skip="$s" count=1 iflag=direct status=none 2>/dev/null; then
		failed=$((failed + 1))
	elif cmp -s /tmp/ecc.s <(dd if=/tmp/ecc.d32 bs=512 skip="$s" count=1 status=none); then
		right=$((right + 1))
	else
		wrong=$((wrong + 1))
	fi
done
note "64 sectors with 5 bits each, t = 2: $failed refused, $wrong miscorrected, $right right"
expect "both refusals and miscorrections seen" test "$failed" -gt 0 -a "$wrong" -gt 0
expect_eq "reads that failed: uncorrectable" "$(field ecc ecc_uncorrectable_sectors)" "$failed"
expect_eq "reads that returned other data: silent" "$(field ecc ecc_silent_sectors)" "$wrong"
expect_eq "reads that returned the data: corrected" "$(field ecc ecc_corrected_sectors)" "$right"
dmsetup remove ecc

# --- errors exactly reproducible: a read's raw errors are drawn from
# (seed, physical sector, its row's read number), so the same seed and
# the same reads give the same bits whatever the queue depth, bio size or
# order in which workers decode.  preset:pss seed:4242 rber:1e-4, passes
# over 8 MiB in 1 MiB reads at QD32 (four at full size, two in make
# check), remove, create again, the same; then in 64 KiB reads at QD1
# (whole rows: the same read numbers).  (Before, four passes: 28,379 and
# then 28,392 corrected bits at QD32, 28,426 at QD1 in 64 KiB reads;
# now 28,457 each time.) ---
brd_load 32
rep_mib=8 rep_passes=$(scaled 4 2)
rep_run() {	# rep_run fio|dd [WORDS]: "corrected raw uncorrectable" after the passes
	# shellcheck disable=SC2086 # the optional WORDS, split on purpose (none when absent)
	pcm_create rep /dev/ram0 ecc:bch preset:pss seed:4242 gap_interval:0 ${2:-} || return 1
	dmsetup message rep 0 set rber 1e-4
	if [ "$1" = fio ]; then
		run_fio --name=r --filename=/dev/mapper/rep --rw=read --bs=1M --size="${rep_mib}M" \
			--iodepth=32 --loops="$rep_passes" || echo "fio failed"
	else
		for _ in $(seq "$rep_passes"); do
			dd if=/dev/mapper/rep of=/dev/null bs=64k count=$((rep_mib * 16)) iflag=direct status=none
		done
	fi
	echo "$(field rep ecc_corrected_bits) $(field rep ecc_raw_bits) $(field rep ecc_uncorrectable_sectors)"
	dmsetup remove rep
}
rep1=$(rep_run fio)
rep2=$(rep_run fio)
rep3=$(rep_run dd)
rep4=$(rep_run fio ecc_workqueue)
note "corrected, raw, uncorrectable over $rep_passes x ${rep_mib} MiB: QD32 1 MiB: $rep1; again: $rep2; QD1 64 KiB: $rep3; QD32 1 MiB, ecc_workqueue: $rep4"
# shellcheck disable=SC2017 # the bound as written, rounded at each step
expect "errors drawn: about 4336 x 1e-4 a sector read" \
	test "${rep1%% *}" -gt $((rep_mib * 2048 * rep_passes * 4336 / 10000 * 9 / 10))
expect_eq "remove, create again, same reads: the same counts" "$rep2" "$rep1"
expect_eq "64 KiB reads at QD1: the same counts" "$rep3" "$rep1"
# decoded inline (brd completes in the submitter's context) and by the
# worker (ecc_workqueue): the same errors, corrections and data
expect_eq "ecc_workqueue (every read decoded by the worker): the same counts" "$rep4" "$rep1"

# --- ecc:none: rber's raw errors reach the reader, counted as raw bits
# and silent sectors, the same again after remove + create; inject, which
# needs a code, is refused naming ecc:bch ---
wipe_meta /dev/ram0
raw_read() {	# raw_read: 1 MiB read at rber 1e-3, "bits sectors md5 raw_bits silent"
	pcm_create raw /dev/ram0 seed:4242 gap_interval:0 || return 1
	dmsetup message raw 0 set rber 1e-3
	dd if=/dev/mapper/raw of=/tmp/ecc.raw bs=256k count=4 iflag=direct status=none
	python3 -c '
d, z = open("/tmp/ecc.raw", "rb").read(), bytes(512)
print(int.from_bytes(d, "little").bit_count(), sum(d[i:i + 512] != z for i in range(0, len(d), 512)), end=" ")'
	echo "$(md5sum < /tmp/ecc.raw | cut -c1-12) $(field raw ecc_raw_bits) $(field raw ecc_silent_sectors)"
}
read -r bits secs md5a rawb silent <<<"$(raw_read)"
note "ecc:none rber:1e-3 over 1 MiB of zeros: $bits bits set in $secs sectors; status: $rawb raw bits, $silent silent sectors"
expect "raw errors reach the reader (about 8.4K bits)" test "${bits:-0}" -gt 7500 -a "${bits:-0}" -lt 9300
expect_eq "each counted in ecc_raw_bits" "$rawb" "$bits"
expect_eq "each sector they reached counted silent" "$silent" "$secs"
dmsetup message raw 0 set rber 0
expect_eq "set rber 0: zeros again" \
	"$(dd if=/dev/mapper/raw bs=256k count=4 iflag=direct status=none | tr -d '\0' | wc -c)" 0
mark=$(dmesg_mark)
expect_fail "inject on ecc:none refused" dmsetup message raw 0 inject 0 1
expect "naming ecc:bch" grep -q 'inject: needs ecc:bch' <<<"$(dmesg_since "$mark")"
dmsetup remove raw
read -r _ _ md5b _ _ <<<"$(raw_read)"
expect_eq "remove, create again: the same bits" "$md5b" "$md5a"
dmsetup remove raw

# --- ext4 over ecc:bch, on a zeroed device (the rows' old data does not
# match a new layout's parity: reads of what was not written would fail) ---
brd_load 32
expect "ecc:bch preset:onyx" pcm_create ecc /dev/ram0 ecc:bch preset:onyx
expect "mkfs.ext4" quiet mkfs.ext4 -q -F /dev/mapper/ecc
expect "fsck -fn clean" quiet fsck.ext4 -fn /dev/mapper/ecc
dmsetup remove ecc

# --- the superblock keeps the ECC layout ---
expect_fail "another ECC layout on the same device is refused" \
	dmsetup create ecc --table "$(pcm_table /dev/ram0 ecc:bch preset:pss)"
expect_fail "and so is ecc:none" dmsetup create ecc --table "$(pcm_table /dev/ram0)"

# --- refusals ---
wipe_meta /dev/ram0
mark=$(dmesg_mark)
expect_fail "parity larger than meta_bytes refused" \
	dmsetup create ecc --table "$(pcm_table /dev/ram0 ecc:bch ecc_codewords:6 ecc_t:4 meta_bytes:16)"
why=$(dmesg_since "$mark")
note "$why"
expect "the error says what fits" grep -q 'ecc_t:1 fits, or meta_bytes:30' <<<"$why"
expect_fail "ecc_t:65 refused" dmsetup create ecc --table "$(pcm_table /dev/ram0 ecc:bch ecc_t:65 2>/dev/null || echo "0 8 pcm /dev/ram0 0 2 ecc:bch ecc_t:65")"
expect_fail "ecc_workqueue without ecc:bch refused" dmsetup create ecc --table "0 8 pcm /dev/ram0 0 1 ecc_workqueue"
pcm_create ecc /dev/ram0
expect_fail "inject without ECC refused" dmsetup message ecc 0 inject 0 1
dmsetup remove ecc
wipe_meta /dev/ram0
expect "ecc:bch" pcm_create ecc /dev/ram0 ecc:bch
expect_fail "inject past the end refused" dmsetup message ecc 0 inject 999999999 1
expect_fail "inject of 0 bits refused" dmsetup message ecc 0 inject 0 0
expect_fail "inject with a bad flag refused" dmsetup message ecc 0 inject 0 1 often
expect_fail "set rber 0.6 refused" dmsetup message ecc 0 set rber 0.6
expect_eq "nothing was injected" "$(field ecc ecc_injected_bits)" 0
dmsetup remove ecc

# --- backing read errors: a row's data read failing (its parity, read
# beside it, does not) and its parity read failing both fail the read
# with EIO, nothing hangs or is counted uncorrectable, the rows around
# read back, and all of it once the device is back ---
wipe_meta /dev/ram0
sz=$(sectors /dev/ram0)
dmsetup create under --table "0 $sz linear /dev/ram0 0"
# shellcheck disable=SC2086 # $one: table words, split on purpose
pcm_create ecc /dev/mapper/under $one
head -c 65536 /dev/urandom > /tmp/ecc.io
dd if=/tmp/ecc.io of=/dev/mapper/ecc bs=64k oflag=direct status=none
len=$(sectors /dev/mapper/ecc)
backing() { "$PCM_ROOT/tools/pcmctl" map ecc "$1" | awk '{print $3}'; }
d1=$(backing 8)				# row 1's data
meta=$(( $(backing $((len - 1))) + 1 + 8 ))	# after the last row and the gap row
under() {	# the lower device's table, a target a line, on stdin
	dmsetup suspend --nolockfs under && dmsetup load under && dmsetup resume under
}
row() {	# row N read alone, compared with what was written
	dd if=/dev/mapper/ecc bs=4k skip="$1" count=1 iflag=direct status=none |
		cmp - <(tail -c +$(($1 * 4096 + 1)) /tmp/ecc.io | head -c 4096)
}
printf '0 %s linear /dev/ram0 0\n%s 8 error\n%s %s linear /dev/ram0 %s\n' \
	"$d1" "$d1" $((d1 + 8)) $((sz - d1 - 8)) $((d1 + 8)) | under
expect_fail "row 1's data read fails: EIO" \
	timeout 30 dd if=/dev/mapper/ecc of=/dev/null bs=4k skip=1 count=1 iflag=direct status=none
expect "rows 0 and 2 read back" bash -c "$(declare -f row); row 0 && row 2"
printf '0 %s linear /dev/ram0 0\n%s %s error\n' "$meta" "$meta" $((sz - meta)) | under
expect_fail "row 3's parity read fails: EIO" \
	timeout 30 dd if=/dev/mapper/ecc of=/dev/null bs=4k skip=3 count=1 iflag=direct status=none
echo "0 $sz linear /dev/ram0 0" | under
expect "the device back: every row reads back" \
	bash -c 'dd if=/dev/mapper/ecc bs=64k count=1 iflag=direct status=none | cmp - /tmp/ecc.io'
expect_eq "no sector counted uncorrectable" "$(field ecc ecc_uncorrectable_sectors)" 0
dmsetup remove ecc
dmsetup remove under

finish
