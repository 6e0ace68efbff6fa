#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The timing model on the data path: completions held until their modeled
# instant and never earlier, "set" changing it live, one rank serializing
# while channels overlap, tags, early completion and a read behind it, a
# gap move holding its rank, seeded variability, data intact with the
# model on, two CPUs racing "set", time dilation, and refusals that change
# nothing.  Behaviour, not speed:
# fio's latencies are checked against lower bounds only, the rest against
# the model's own figures in status, which do not depend on how fast this
# machine is.
. "$(dirname "$0")/lib/lib.sh"

brd_load 64 || skip_all "brd not available"

# clat DEV RW N [FIO ARGS...]: fio's min, max and median completion latency
# (clat, ns) of N 4 KiB direct I/Os at depth 1 (tools/pcmlib/fio.py reads
# fio's report)
clat() {
	local dev=$1 rw=$2 n=$3 side=read out=/tmp/timing-clat.json
	shift 3
	[[ $rw == *write* ]] && side='write'
	rm -f "$out"
	fio --name=t --filename="$dev" --rw="$rw" --bs=4k --iodepth=1 --direct=1 \
	    --ioengine=psync --size=1M --number_ios="$n" --output-format=json --output="$out" \
	    "$@" 2>/dev/null
	py "$PCM_ROOT/tools/pcmlib/fio.py" "$out" "$side.clat.min" "$side.clat.max" \
		"$side.clat.p50"
}

field() { status_field "$1" "$2"; }

# back_to_back DEV [MESSAGE...]: in one process, so that nothing slow comes
# between them: send MESSAGE (if any) to DEV, write 4 KiB at 0 (unless a
# message was sent), then read them back, all direct
back_to_back() {
	py - "$@" <<'PY'
import mmap, os, subprocess, sys
name, msg = sys.argv[1], sys.argv[2:]
buf = mmap.mmap(-1, 4096)
fd = os.open('/dev/mapper/' + name, os.O_RDWR | os.O_DIRECT)
if msg:
    subprocess.run(['dmsetup', 'message', name, '0'] + msg, check=True)
else:
    os.pwrite(fd, buf, 0)
os.preadv(fd, [buf], 0)
PY
}

# --- QD1 reads are held until the modeled instant; set changes it live ---
pcm_create tm /dev/ram0 read_ns:20000000 gap_interval:0
expect_eq "timing is on" "$(field tm timing)" on
dmsetup message tm 0 stats reset
read -r min max <<<"$(clat /dev/mapper/tm randread 20)"
note "read_ns:20000000: fio clat min $min ns, max $max ns"
expect "every read took at least read_ns (20 ms)" test "${min:-0}" -ge 20000000
expect_eq "the model's read latency is read_ns on an idle rank" "$(field tm read_lat_max_ns)" 20000000
expect "completions were held" test "$(field tm held)" -ge 20
# 20 ms, not less: on the KASAN/lockdep kernel a first backing read once took 7 ms
expect_eq "no late completion at QD1 with 20 ms to spare" "$(field tm late)" 0
hist=$(dmsetup message tm 0 lateness)
note "lateness: $hist"
expect "lateness counts every timed completion" \
	test "$(echo "$hist" | tr ' ' '\n' | sed -n 's/^completions://p')" -ge 20
expect "lateness words are from-to:count" \
	bash -c "echo '$hist' | tr ' ' '\n' | grep -vqE '^([0-9]+-[0-9]+|completions):[0-9]+$' && exit 1 || exit 0"

dmsetup message tm 0 set read_ns 30000000
dmsetup message tm 0 stats reset
read -r min max <<<"$(clat /dev/mapper/tm randread 10)"
note "set read_ns 30000000: fio clat min $min ns"
expect "after set, reads take at least 30 ms" test "${min:-0}" -ge 30000000
expect_eq "and the model says 30 ms" "$(field tm read_lat_max_ns)" 30000000
# overhead_ns: this host's completion cost comes off each hold; the model
# does not change.  With 20 ms modeled and 15 ms taken off, a read takes
# 5 ms and something: under 15 ms unless completing a bio took 10 ms.
# fio waits 25 ms between reads, so that the rank is idle when the next
# one comes (15 ms is far more than this host's overhead: without the
# pause the model would queue each read behind the last)
dmsetup message tm 0 set read_ns 20000000
dmsetup message tm 0 set overhead_ns 15000000
dmsetup message tm 0 stats reset
read -r min max median <<<"$(clat /dev/mapper/tm randread 10 --thinktime=25000 --thinktime_blocks=1)"
note "read_ns:20000000 overhead_ns:15000000: fio clat min $min ns, median $median ns, max $max ns"
expect "overhead_ns: reads take at least read_ns - overhead_ns" test "${min:-0}" -ge 5000000
# (the median: on a loaded host one completion can come late; without
# overhead_ns every read would take 20 ms)
expect "overhead_ns: and end well before read_ns" test "${median:-99999999}" -lt 15000000
expect_eq "overhead_ns: the model still says 20 ms" "$(field tm read_lat_max_ns)" 20000000
dmsetup message tm 0 set overhead_ns 0
dmsetup message tm 0 set read_ns 0
expect_eq "all timing at 0: the model is off" "$(field tm timing)" off
expect_eq "the table line is unchanged by set" "$(dmsetup table tm | cut -d' ' -f7-)" "gap_interval:0 read_ns:20000000"
dmsetup remove tm

# --- dilation:K: every modeled time K times longer, on this host's clock ---
# (an arrival waits for the next device ns: up to K - 1 ns more)
wipe_meta /dev/ram0
pcm_create td /dev/ram0 read_ns:1000000 dilation:20 gap_interval:0
expect_eq "dilation is printed back, last" "$(dmsetup table td | cut -d' ' -f7-)" \
	"gap_interval:0 read_ns:1000000 dilation:20"
expect_eq "config reports it" "$(dmsetup message td 0 config | tr ' ' '\n' | grep '^dilation:')" \
	dilation:20
dmsetup message td 0 stats reset
read -r min max <<<"$(clat /dev/mapper/td randread 10)"
note "read_ns:1000000 dilation:20: fio clat min $min ns, max $max ns"
expect "every read took at least 20 x read_ns (20 ms)" test "${min:-0}" -ge 20000000
lat=$(field td read_lat_max_ns)
expect "the model's read latency is 20 x read_ns on this host's clock ($lat ns)" \
	test "${lat:-0}" -ge 20000000 -a "${lat:-0}" -lt 20000020
expect_eq "no late completion at QD1 with 20 ms to spare" "$(field td late)" 0
expect_fail "set dilation is refused (the model's clock is fixed at load)" \
	dmsetup message td 0 set dilation 1
t=$(dmsetup table td)
dmsetup reload td --table "$t" && dmsetup resume td
expect_eq "a reload with the printed line keeps it" "$(dmsetup table td)" "$t"
dmsetup remove td

# --- late and early writes; a read behind an early write's program ---
wipe_meta /dev/ram0
pcm_create tw /dev/ram0 write_ns:20000000 read_ns:1000 gap_interval:0
dmsetup message tw 0 stats reset
read -r min max <<<"$(clat /dev/mapper/tw randwrite 3)"
expect "late writes take at least write_ns (20 ms)" test "${min:-0}" -ge 20000000
expect_eq "the model's write latency is write_ns" "$(field tw write_lat_mean_ns)" 20000000
dmsetup message tw 0 set completion early
dmsetup message tw 0 set write_ns 1000000000
dmsetup message tw 0 stats reset
back_to_back tw
expect_eq "an early write completes when its data is in (no bus limit: at once)" \
	"$(field tw write_lat_max_ns)" 0
expect "a read of its rank waits for the program it left running" \
	test "$(field tw read_lat_max_ns)" -gt 1000
dmsetup remove tw

# --- zeros program in zero_write_ns, any other data in write_ns ---
if ! compat_skip "zero_write_ns (the model picks the program time)"; then
	wipe_meta /dev/ram0
	pcm_create tz /dev/ram0 write_ns:20000000 zero_write_ns:1000000 gap_interval:0
	# write_lat DATA-COMMAND: the model's latency of one 4 KiB direct write of its output
	write_lat() {
		dmsetup message tz 0 stats reset
		"$@" | dd of=/dev/mapper/tz bs=4k count=1 oflag=direct iflag=fullblock status=none
		field tz write_lat_max_ns
	}
	expect_eq "a write of zeros programs in zero_write_ns" "$(write_lat head -c 4096 /dev/zero)" 1000000
	expect_eq "a write of data programs in write_ns" "$(write_lat head -c 4096 /dev/urandom)" 20000000
	expect_eq "one byte that is not zero, the last: write_ns" \
		"$(write_lat bash -c 'head -c 4095 /dev/zero; printf x')" 20000000
	dmsetup message tz 0 set zero_write_ns 0
	expect_eq "zero_write_ns 0: zeros program in write_ns" "$(write_lat head -c 4096 /dev/zero)" 20000000
	dmsetup remove tz
fi

# --- one rank serializes, four channels overlap ---
if ! compat_skip "ranks, channels and tags (the model's queues)"; then
	# 4 writes submitted together: rows 0, 4, 8, 12 share channel 0; rows 0-3 do not
	wipe_meta /dev/ram0
	pcm_create tc /dev/ram0 channels:4 write_ns:20000000 gap_interval:0
	burst() {
		fio --name=b --filename=/dev/mapper/tc --direct=1 --ioengine=libaio --iodepth=4 \
		    --iodepth_batch_submit=4 --bs=4k --number_ios=4 --size=64k --rw="$1" \
		    --output-format=terse >/dev/null 2>&1
	}
	dmsetup message tc 0 stats reset
	burst write:12k
	same=$(field tc write_lat_max_ns)
	dmsetup message tc 0 stats reset
	burst write
	apart=$(field tc write_lat_max_ns)
	note "4 writes on one rank: max modeled latency $same ns; on 4 channels: $apart ns"
	expect "on one rank the 4th waits for 3 programs (>= 60 ms)" test "$same" -ge 60000000
	expect_eq "on 4 channels each takes write_ns" "$apart" 20000000

	# --- tags: at most this many in flight, the rest wait ---
	dmsetup message tc 0 set tags 1
	dmsetup message tc 0 stats reset
	burst write
	expect "with one tag, requests waited for it" test "$(field tc tag_waits)" -ge 2
	expect "and the last waited for the others" test "$(field tc write_lat_max_ns)" -ge 60000000
	dmsetup remove tc
fi

# --- a gap move holds the ranks of its rows ---
if ! compat_skip "a gap move holding its ranks (the model)"; then
	wipe_meta /dev/ram0
	pcm_create tg /dev/ram0 write_ns:1000000000 gap_interval:0
	dmsetup message tg 0 stats reset
	back_to_back tg move_gap 1
	note "read after a move with a 1 s program: $(field tg read_lat_max_ns) ns"
	# (what is left of the program when the read arrives: the move's own I/O
	# and the message's return come first, 538 ms of the second on a host
	# loaded 11 deep; with nothing holding the rank the read takes 0 ns)
	expect "a read of a rank a gap move programs waits for the program" \
		test "$(field tg read_lat_max_ns)" -ge 100000000
	dmsetup remove tg
fi

# --- data with the model on: fio verify across gap moves, ext4 ---
wipe_meta /dev/ram0
pcm_create td /dev/ram0 channels:2 ranks:2 read_ns:2000 write_ns:10000 tags:16 \
	write_cache:65536 gap_interval:8
expect "fio verify, 4-64 KiB random writes at depth 8, gap moves and the model on" \
	run_fio --name=v --filename=/dev/mapper/td --rw=randwrite --bssplit=4k/50:16k/25:64k/25 \
	--iodepth=8 --size=4M --verify=crc32c --verify_fatal=1
expect "gap moves were made" test "$(field td gap_moves)" -gt 0
expect "ext4: mkfs, then fsck -fn clean" \
	bash -c "mkfs.ext4 -q -F /dev/mapper/td && fsck.ext4 -fn /dev/mapper/td >/dev/null"
dmsetup remove td

# --- two CPUs at once: channels lock apart, "set" races the data path ---
# Tags and the write cache switch on and off under I/O, moving requests
# between the per-channel path and the model's lock; data must verify and
# every completion be counted once across the CPUs' figures.
wipe_meta /dev/ram0
pcm_create tp /dev/ram0 channels:4 ranks:2 read_ns:3000 write_ns:8000 cmd_ns:500 \
	host_mbps:4000 gap_interval:16
dmsetup message tp 0 stats reset
# (40 rounds of three sets at full PCM_SCALE, 10 in make check: under TCG
# fio ended in the second round, 3 s of the 40 rounds' 32 s on a loaded host)
(
	for i in $(seq "$(scaled 40 10)"); do
		dmsetup message tp 0 set tags $((i % 3 * 8))
		dmsetup message tp 0 set write_cache $((i % 2 * 65536))
		dmsetup message tp 0 set read_ns $((2000 + i * 50))
	done
) &
setter=$!
expect "fio verify, two jobs on two CPUs while set changes tags, cache and read_ns" \
	run_fio --name=p --filename=/dev/mapper/tp --rw=randrw --bssplit=4k/70:32k/30 \
	--iodepth=16 --numjobs=2 --size=4M --offset_increment=4M --verify=crc32c \
	--verify_fatal=1
wait "$setter"
expect "gap moves were made" test "$(field tp gap_moves)" -gt 0
done_n=$(dmsetup message tp 0 lateness | sed 's/.*completions://')
expect_eq "each completion counted once: lateness total = held + late" "$done_n" \
	"$(($(field tp held) + $(field tp late)))"
expect "and there were completions" test "$done_n" -gt 1000
dmsetup remove tp

# --- the ranks' read times vary, drawn from the seed ---
if ! compat_skip "seeded read times (the model's generator)"; then
	# varied SEED: the model's mean and highest latency of 40 QD1 reads on one
	# rank, each after the last completed: a fixed time plus a draw each
	varied() {
		wipe_meta /dev/ram0
		pcm_create tv /dev/ram0 read_ns:100000 read_jitter_ns:50000 read_retry_ns:200000 \
			read_retry_ppm:300000 read_retries:3 gap_interval:0 "seed:$1"
		dmsetup message tv 0 stats reset
		clat /dev/mapper/tv randread 40 >/dev/null
		echo "$(field tv read_lat_mean_ns) $(field tv read_lat_max_ns)"
		dmsetup remove tv
	}
	v5=$(varied 5)
	v5b=$(varied 5)
	v6=$(varied 6)
	note "seed:5 mean and max read latency: $v5; again: $v5b; seed:6: $v6"
	expect_eq "the same seed and reads: the same latencies" "$v5" "$v5b"
	expect "another seed: others" test "$v5" != "$v6"
	read -r mean max <<<"$v5"
	expect "the latencies vary within read_ns + jitter + 3 retries" \
		test "$mean" -gt 100000 -a "$max" -le 750000 -a "$max" -gt "$mean"
	# the host's model (the same C, the kernel's generator in the shim) draws
	# the same: pcmctl model's mean and max of 40 QD1 reads, in us
	host=$("$PCM_ROOT/tools/pcmctl" model --json --ios 40 read_ns:100000 read_jitter_ns:50000 \
		read_retry_ns:200000 read_retry_ppm:300000 read_retries:3 gap_interval:0 seed:5 |
		py -c 'import json, sys; r = json.load(sys.stdin)["read"]
print(int(r["mean_us"] * 1000 + 1e-6), int(round(r["max_us"] * 1000)))')
	expect_eq "pcmctl model draws what the module draws (mean truncated)" "$host" "$v5"
fi

# --- "stats reset" under load: the figures stay consistent ---
# A reset used to zero other CPUs' figures while they were being added
# to: a sum kept while its count went, and read_lat_mean_ns came out far
# above read_lat_max_ns.  Four jobs of QD32 reads; every reset is followed
# by a status read: the mean is never above the maximum.
if command -v fio >/dev/null && ! compat_skip "stats reset under load (dm-pcm's own per-CPU figures and RCU)"; then
	wipe_meta /dev/ram0
	pcm_create tr /dev/ram0 read_ns:20000 gap_interval:0
	n=$(scaled 2000 300)
	fio --name=r --filename=/dev/mapper/tr --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=32 --numjobs=4 --time_based --runtime=600 \
		--size=32m --output=/dev/null &
	fpid=$!
	sleep 2
	PYTHONPATH=$PCM_ROOT/tools py - tr "$n" > /tmp/reset.out <<'PY'
import sys
from pcmlib import dmioctl, status
name, n = sys.argv[1], int(sys.argv[2])
dm = dmioctl.DM()
bad = seen = 0
for i in range(n):
    assert dm.message(name, [b'stats', b'reset'])[0] == 0
    st = status.parse(dm.status(name).decode())
    if st['read_lat_mean_ns'] > st['read_lat_max_ns']:
        bad += 1
        print('bad', i, st['read_lat_mean_ns'], st['read_lat_max_ns'])
    seen += st['reads'] > 0
print('resets', n, 'with_reads', seen, 'bad', bad)
PY
	kill $fpid 2>/dev/null
	wait $fpid 2>/dev/null
	note "$(tail -1 /tmp/reset.out)"
	expect_eq "$n resets under 4 jobs of QD32 reads: the mean never above the maximum" \
		"$(grep -c '^bad' /tmp/reset.out)" 0
	w=$(awk '/^resets/ {print $4}' /tmp/reset.out)
	expect "reads were running: status showed reads after ${w:-0} of the $n resets" test "${w:-0}" -gt 0
	dmsetup remove tr
fi

# --- bad timing words and set values are refused, nothing changes ---
if ! compat_skip "refusals (pcm-params.c)"; then
	wipe_meta /dev/ram0
	pcm_create tb /dev/ram0 read_ns:1000
	before=$(dmsetup message tb 0 config)
	mark=$(dmesg_mark)
	expect_fail "set read_ns above its range" dmsetup message tb 0 set read_ns 1000000001
	expect "the log gives the range" bash -c "dmesg | sed -n '/$mark/,\$p' | grep -q 'read_ns:1000000001: out of range, allowed 0..1000000000'"
	expect_fail "set channels (geometry) is refused" dmsetup message tb 0 set channels 2
	expect_fail "set completion to an unknown value" dmsetup message tb 0 set completion sometimes
	expect_fail "set tags above 1024" dmsetup message tb 0 set tags 1025
	expect_fail "set seed (read when the table loads) is refused" dmsetup message tb 0 set seed 2
	expect_fail "set ctrl_slots (sized when the table loads) is refused" \
		dmsetup message tb 0 set ctrl_slots 2
	expect_fail "set read_retry_ppm above a million" dmsetup message tb 0 set read_retry_ppm 1000001
	expect_fail "set dilation (fixed at load) is refused" dmsetup message tb 0 set dilation 2
	expect_eq "config unchanged" "$(dmsetup message tb 0 config)" "$before"
	dmsetup remove tb
	len=$(pcm_len /dev/ram0)
	for w in channels:0 ranks:65 tags:1025 completion:soon read_mbps:1000001 write_cache:1073741825 \
		ctrl_slots:257 xfer_slots:257 write_retries:65 write_retry_ppm:1000001 seed:-1 \
		dilation:0 dilation:1001 dilation:1.5; do
		expect_fail "table word $w refused" dmsetup create tx --table "0 $len pcm /dev/ram0 0 1 $w"
	done
fi

finish
