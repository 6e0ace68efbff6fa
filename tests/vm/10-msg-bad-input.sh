#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Message bad-input sweep: every malformed message fails with EINVAL, says
# why in the kernel log, and changes neither status nor table; then the
# valid verbs do what they say, live and while suspended.
. "$(dirname "$0")/lib/lib.sh"

brd_load 16 || skip_all "brd not available"
pcm_create msg /dev/ram0
dd if=/dev/zero of=/dev/mapper/msg bs=4k count=5 oflag=direct status=none
t0=$(dmsetup table msg)
s0=$(dmsetup status msg)
c0=$(dmsetup message msg 0 config)
big=$(printf 'x%.0s' $(seq 1 4096))
tried=0

bad_msg() {
	local desc=$1 phrase=$2 mark log ok=1
	shift 2
	tried=$((tried + 1))
	mark=$(dmesg_mark)
	if dmsetup message msg 0 "$@" >/dev/null 2>&1; then
		ok=0
		note "accepted: $*"
	fi
	log=$(dmesg_since "$mark")
	grep -qF "$phrase" <<<"$log" || { ok=0; note "expected '$phrase', got: $(head -c 200 <<<"$log")"; }
	[ "$(dmsetup status msg)" = "$s0" ] || { ok=0; note "status changed"; }
	[ "$(dmsetup table msg)" = "$t0" ] || { ok=0; note "table changed"; }
	if [ $ok = 1 ]; then pass "$desc"; else fail "$desc"; fi
}

run_sweep() {
	local when=$1
	bad_msg "$when: unknown verb" "pcm: unknown message: bogus" bogus
	bad_msg "$when: 4 KiB verb" "pcm: unknown message: xxxx" "$big"
	bad_msg "$when: non-UTF-8 verb" "pcm: unknown message" "$(printf '\xff\xfe')"
	bad_msg "$when: stats alone" "usage: stats reset" stats
	bad_msg "$when: stats junk" "usage: stats reset" stats junk
	bad_msg "$when: stats reset extra" "usage: stats reset" stats reset extra
	bad_msg "$when: stats 4 KiB" "usage: stats reset" stats "$big"
	bad_msg "$when: config extra" "usage: config" config extra
	bad_msg "$when: set alone" "usage: set <key> <value>" set
	bad_msg "$when: set key only" "usage: set <key> <value>" set row_size
	bad_msg "$when: set extra" "usage: set <key> <value>" set row_size 4096 extra
	bad_msg "$when: set unknown key" "set: bogus: unknown parameter" set bogus 1
	bad_msg "$when: set 4 KiB key" "unknown parameter" set "$big" 1
	bad_msg "$when: set preset" "set: preset: unknown parameter" set preset none
	bad_msg "$when: set a load-time parameter" "row_size cannot change on a live device" set row_size 8192
}

run_sweep live
expect_fail "empty message refused by dmsetup or the kernel" dmsetup message msg 0 ""
expect_eq "config message" "$(dmsetup message msg 0 config)" "$c0"
expect_eq "verbs are case-insensitive" "$(dmsetup message msg 0 CONFIG)" "$c0"
expect "stats reset" dmsetup message msg 0 stats reset
expect_eq "counters zero after reset" "$(status_field msg writes):$(status_field msg write_bytes)" 0:0

dmsetup suspend msg
s0=$(dmsetup status msg)
run_sweep suspended
expect_eq "config while suspended" "$(dmsetup message msg 0 config)" "$c0"
dmsetup resume msg
dd if=/dev/zero of=/dev/mapper/msg bs=4k count=2 oflag=direct status=none
expect_eq "counting resumes after suspend" "$(status_field msg writes)" 2
dmsetup remove msg
note "bad messages tried: $tried"
finish
