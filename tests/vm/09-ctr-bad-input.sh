#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Constructor bad-input sweep: every table line here must be refused with
# the expected ti->error, leave no device behind and the module unheld.
# The runner fails the test on any kernel warning.
. "$(dirname "$0")/lib/lib.sh"

brd_load 16 || skip_all "brd not available"
len=$(pcm_len /dev/ram0)
max_opt=40	# PCM_MAX_OPT_WORDS: every parameter once plus a preset
tried=0

# dm_named NAME: a device-mapper device NAME exists (sysfs, no process).
dm_named() {
	local f n
	for f in /sys/block/dm-*/dm/name; do
		[ -e "$f" ] && read -r n < "$f" && [ "$n" = "$1" ] && return 0
	done
	return 1
}

# refused DESC PHRASE TABLE: the line fails, says PHRASE, leaves nothing.
refused() {
	local desc=$1 phrase=$2 table=$3 mark log ok=1 rc
	tried=$((tried + 1))
	mark=$(dmesg_mark)
	if dmsetup create bad --table "$table" >/dev/null 2>&1; then
		ok=0
		note "accepted: $table"
	fi
	log=$(dmesg_since "$mark")
	if ! grep -qF "pcm: $phrase" <<<"$log"; then
		ok=0
		note "expected '$phrase' in the kernel log, got:"
		# shellcheck disable=SC2001 # a prefix on every line
		sed 's/^/#   /' <<<"$log" | head -5
	fi
	if dm_named bad; then
		ok=0
		note "device left behind"
		dmsetup remove bad
	fi
	# the module's use count, read without a process: cases are many under TCG
	read -r rc < /sys/module/dm_pcm/refcnt
	[ "$rc" = 0 ] || { ok=0; note "refcount $rc"; }
	if [ $ok = 1 ]; then pass "$desc"; else fail "$desc"; fi
}

accepted() {
	local desc=$1 table=$2
	tried=$((tried + 1))
	if dmsetup create good --table "$table" && dmsetup remove good; then
		pass "$desc"
	else
		fail "$desc"
	fi
}

# argument counts 0 .. 4 and past every maximum, all junk: from 3 on, each
# stops at the junk offset, whatever the count
for n in 0 1 2 3 4 $((2 + 1 + max_opt + 2)); do
	args=$(printf ' x%.0s' $(seq 1 $n))
	if [ $n -lt 2 ]; then
		refused "$n junk arguments" "Invalid argument count" "0 $len pcm$args"
	else
		refused "$n junk arguments" "Invalid device offset" "0 $len pcm /dev/ram0$args"
	fi
done
accepted "2 arguments" "0 $len pcm /dev/ram0 0"
accepted "3 arguments" "0 $len pcm /dev/ram0 0 0"
accepted "4 arguments" "0 $len pcm /dev/ram0 0 1 row_size:4096"
accepted "5 arguments" "0 $len pcm /dev/ram0 0 2 row_size:4096 preset:none"

D="0 $len pcm /dev/ram0"
refused "1 argument: device only" "Invalid argument count" "0 $len pcm /dev/ram0"
refused "missing device" "Device lookup failed" "0 $len pcm /dev/pcm-no-such-device 0"
refused "a directory as device" "Device lookup failed" "0 $len pcm /tmp 0"
refused "negative offset" "Invalid device offset" "$D -1"
refused "junk offset" "Invalid device offset" "$D 12abc"
refused "offset 2^64" "Invalid device offset" "$D 18446744073709551616"
refused "offset 2^32 (past the end)" "Device too small" "$D 4294967296"
refused "offset leaves one row: none for the gap" "Device too small" "$D $len"
refused "offset in the metadata" "Device too small" "$D $((len + 16))"
refused "length past capacity" "Length exceeds device capacity" "0 $((len + 8)) pcm /dev/ram0 0"
refused "length + offset past capacity" "Length exceeds device capacity" "0 $len pcm /dev/ram0 8"
refused "count says 1, none follow" "Invalid number of optional parameters" "$D 0 1"
refused "count says 2, one follows" "Invalid number of optional parameters" "$D 0 2 row_size:4096"
refused "negative count" "Invalid number of optional parameters" "$D 0 -1 row_size:4096"
refused "count 2^32" "Invalid number of optional parameters" "$D 0 4294967296 row_size:4096"
refused "count above the maximum" "Invalid number of optional parameters" "$D 0 $((max_opt + 1)) a b c"
refused "words beyond the count" "Too many arguments" "$D 0 1 row_size:4096 row_size:8192"
refused "unknown key" "Unknown parameter" "$D 0 1 bogus:1"
refused "unknown flag" "Unknown parameter" "$D 0 1 bogus"
refused "key case matters" "Unknown parameter" "$D 0 1 ROW_SIZE:4096"
refused "duplicate key" "Duplicate parameter" "$D 0 2 row_size:4096 row_size:4096"
refused "duplicate preset" "Duplicate parameter" "$D 0 2 preset:none preset:none"
refused "unknown preset" "Unknown preset" "$D 0 1 preset:bogus"
refused "bare preset" "Missing parameter value" "$D 0 1 preset"
refused "row_size without value" "Missing parameter value" "$D 0 1 row_size"
refused "row_size empty" "Invalid parameter value" "$D 0 1 row_size:"
refused "row_size zero" "Parameter out of range" "$D 0 1 row_size:0"
refused "row_size negative" "Invalid parameter value" "$D 0 1 row_size:-4096"
refused "row_size not a power of two" "Parameter must be a power of two" "$D 0 1 row_size:3000"
refused "row_size below 512" "Parameter out of range" "$D 0 1 row_size:256"
refused "row_size 2^32" "Parameter out of range" "$D 0 1 row_size:4294967296"
refused "row_size 2^64" "Invalid parameter value" "$D 0 1 row_size:18446744073709551616"
refused "row_size hex" "Invalid parameter value" "$D 0 1 row_size:0x1000"
refused "row_size 4 KiB of digits" "Invalid parameter value" "$D 0 1 row_size:$(printf '9%.0s' $(seq 1 4096))"
refused "gap_interval negative" "Invalid parameter value" "$D 0 1 gap_interval:-1"
refused "gap_interval above 10^9" "Parameter out of range" "$D 0 1 gap_interval:1000000001"
refused "domains zero" "Parameter out of range" "$D 0 1 domains:0"
refused "domains 1025" "Parameter out of range" "$D 0 1 domains:1025"
refused "more domains than rows" "Fewer rows than domains" "0 8 pcm /dev/ram0 0 1 domains:2"
refused "randomize 2^64" "Invalid parameter value" "$D 0 1 randomize:18446744073709551616"
refused "format with a value" "Invalid parameter value" "$D 0 1 format:1"
refused "meta_device without a path" "Missing parameter value" "$D 0 1 meta_device:"
refused "meta_device missing" "Device lookup failed" "$D 0 1 meta_device:/dev/pcm-no-such-device"
refused "meta_device is the data device" "Metadata device is the data device" "$D 0 1 meta_device:/dev/ram0"
refused "meta_device path of 200 bytes" "Invalid parameter value" "$D 0 1 meta_device:/$(printf 'd%.0s' $(seq 1 200))"
refused "length for one domain with two" "Length exceeds device capacity" "$D 0 1 domains:2"
refused "ecc:ldpc" "Invalid parameter value" "$D 0 1 ecc:ldpc"
refused "ecc_codewords zero" "Parameter out of range" "$D 0 2 ecc:bch ecc_codewords:0"
refused "ecc_t 65" "Parameter out of range" "$D 0 2 ecc:bch ecc_t:65"
refused "meta_bytes 513" "Parameter out of range" "$D 0 2 ecc:bch meta_bytes:513"
refused "parity beyond meta_bytes" "Invalid ECC layout" "$D 0 4 ecc:bch ecc_codewords:6 ecc_t:4 meta_bytes:16"
refused "t 64: 104 parity bytes, meta_bytes 64" "Invalid ECC layout" "$D 0 3 ecc:bch ecc_codewords:1 ecc_t:64"
refused "rber above 0.5" "Parameter out of range" "$D 0 1 rber:0.6"
refused "rber not a number" "Invalid parameter value" "$D 0 1 rber:1e-6x"
refused "a 4 KiB word" "Unknown parameter" "$D 0 1 $(printf 'k%.0s' $(seq 1 4096))"
refused "non-UTF-8 word" "Unknown parameter" "$D 0 1 $(printf '\xff\xfe:1')"

# a device with 4 KiB logical blocks: rows and offsets must respect them
modprobe loop 2>/dev/null
truncate -s 16M /tmp/lb4k.img
if lo=$(losetup --sector-size 4096 -f --show /tmp/lb4k.img 2>/dev/null); then
	l4=$(sectors "$lo")
	refused "rows smaller than logical blocks" "Row size below logical block size" "0 $l4 pcm $lo 0 1 row_size:512"
	refused "offset not on a logical block" "Misaligned device offset" "0 8 pcm $lo 1"
	accepted "4 KiB rows on 4 KiB blocks" "0 $(pcm_len "$lo") pcm $lo 0 1 row_size:4096"
	losetup -d "$lo"
else
	skip "no loop device with 4 KiB sectors"
fi

# a failed reload leaves the live table and its counters untouched
pcm_create live /dev/ram0
dd if=/dev/zero of=/dev/mapper/live bs=4k count=3 oflag=direct status=none
t0=$(dmsetup table live)
s0=$(dmsetup status live)
mark=$(dmesg_mark)
expect_fail "self-mapping reload refused" dmsetup reload live --table "0 8 pcm /dev/mapper/live 0"
expect "self-mapping explained" grep -qE "pcm: (Device cannot map onto itself|Device lookup failed)" \
	<<<"$(dmesg_since "$mark")"
expect_fail "bad reload refused" dmsetup reload live --table "$D 0 1 row_size:3"
dmsetup resume live
expect_eq "table unchanged after failed reloads" "$(dmsetup table live)" "$t0"
expect_eq "status unchanged after failed reloads" "$(dmsetup status live)" "$s0"
dmsetup remove live
note "bad table lines tried: $tried"
finish
