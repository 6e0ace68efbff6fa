#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Persistence: the start-gap registers and every byte survive
# suspend/resume, a reload, remove + create, and a module reload; the
# data verifies (fio verify_only) after each.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load 32 || skip_all "brd not available"
words="gap_interval:1 domains:3 randomize:4242"
# shellcheck disable=SC2086 # $words: table words, split on purpose
table=$(pcm_table /dev/ram0 $words)
dmsetup create ps --table "$table"
size=$(( $(sectors /dev/mapper/ps) * 512 ))

fio_ps() {
	run_fio --name=ps --filename=/dev/mapper/ps --rw=randwrite --bs=4k --iodepth=8 \
		--verify=crc32c --size="$size" --randseed=77 "$@"
}
verify_only() { fio_ps --verify_only=1; }

expect "write the device with gap_interval:1" fio_ps --do_verify=0
# let the owed moves finish, then force more so start has wrapped
expect "move_gap 3000" dmsetup message ps 0 move_gap 3000
regs=$(registers ps)
note "registers: $regs, moves $(status_field ps gap_moves), wraps $(status_field ps start_wraps)"
expect "some domain's start has advanced" grep -qv '^0/' <<<"$(tr ' ' '\n' <<<"$regs")"
expect "verify after the moves" verify_only

same_after() {
	local what=$1
	shift
	"$@"
	expect_eq "$what: registers identical" "$(registers ps)" "$regs"
	expect "$what: fio verify_only" verify_only
}

same_after "suspend/resume" bash -c 'dmsetup suspend ps && dmsetup resume ps'
same_after "reload" bash -c "dmsetup reload ps --table '$table' && dmsetup suspend ps && dmsetup resume ps"
same_after "remove + create" bash -c "dmsetup remove ps && dmsetup create ps --table '$table'"
reload_module() {
	dmsetup remove ps && rmmod dm_pcm && insmod "$PCM_KO" &&
		dmsetup create ps --table "$table"
}
same_after "module unload/reload" reload_module

# suspended: moves and superblock writes would change the backing device
dmsetup suspend ps
expect_fail "move_gap refused while suspended" dmsetup message ps 0 move_gap
expect_fail "persist refused while suspended" dmsetup message ps 0 persist
dmsetup resume ps
expect "persist" dmsetup message ps 0 persist
same_after "persist + remove + create" bash -c "dmsetup remove ps && dmsetup create ps --table '$table'"

# the table line never carries "format": recreating from it keeps the data
dmsetup remove ps
# shellcheck disable=SC2086 # $words: table words, split on purpose
dmsetup create ps --table "$(pcm_table /dev/ram0 $words format)"
expect_eq "table line omits format" "$(dmsetup table ps | grep -c format)" 0
# shellcheck disable=SC2086 # $words: table words, split on purpose
expect_eq "format resets the registers" "$(registers ps)" \
	"$(for d in 0 1 2; do echo -n "0/$(( ($(pcm_len /dev/ram0 $words) / 8 + 2 - d) / 3 )) "; done | sed 's/ $//')"
dmsetup remove ps
finish
