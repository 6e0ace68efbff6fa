#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Message storms racing I/O: while fio writes and verifies as it goes
# (verify_backlog, verify_fatal) on a device with gap_interval:1 and four
# randomized domains, concurrent loops send "set gap_interval N" (N varying,
# 0 included), "move_gap N", "stats reset", "config", "registers",
# "persist", status reads and bad messages (through dmsetup and straight
# through the ioctl), and a control loop suspends and resumes the device
# and reloads its table.  Then: fio saw no error and no verify failure,
# every valid message succeeded, every bad one failed, gap_moves grew by
# at least N per domain around every move_gap N, status always parsed, the
# table line never changed, and after remove + create the registers are
# the same and a last full pass of fio reads back whole (verify_only).
#
# move_gap and persist are refused while the device is suspended: the
# control loop, which must never see them fail, is also the one that
# suspends, so they never overlap; another loop races them with the
# suspends on purpose and accepts only that refusal (EINVAL or EAGAIN,
# logged as "device is suspend..."), which it counts.  The loops use few
# processes: under TCG each one costs about a second of guest CPU.
#
# PCM_STORM_SECS (default 60) sets the length of the time-based phase.
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || skip_all "fio not installed"
brd_load 32 || skip_all "brd not available"

secs=${PCM_STORM_SECS:-60}
doms=4
words="preset:none gap_interval:1 domains:$doms randomize:4321"
table=$(pcm_table /dev/ram0 $words)
len=$(cut -d' ' -f2 <<<"$table")
dmsetup create ms --table "$table" || skip_all "cannot create the device"
t0_table=$(dmsetup table ms)
size=$((len * 512))
fill=$((size / 65536 * 65536))	# the full pass in 64 KiB writes
W=/tmp/storm
rm -rf $W
mkdir -p $W
: > $W/run
echo 0 > $W/reloads
mark=$(dmesg_mark)
# the bad messages log a line each: follow the log, the ring may wrap
dmesg -w > $W/kmsg 2>&1 &
kpid=$!

# msg VERB...: one message to ms; its reply in $W/out.$me, its stderr in
# $W/err.$me (each loop sets me=$BASHPID first)
me=main
msg() { dmsetup message ms 0 "$@" > $W/out.$me 2> $W/err.$me; }

# field KEY LINE: REPLY = the value of KEY:value in LINE (no fork: under
# TCG every process costs a second, and the loops must leave fio the CPU)
field() {
	REPLY=
	[[ " $2" =~ \ $1:([^ ]*) ]] && REPLY=${BASH_REMATCH[1]}
}

# status_ok LINE: every field there, in order, with a well-formed value
keys="reads writes read_bytes write_bytes flushes fua_writes discards discard_bytes write_zeroes write_zeroes_bytes gap_moves start_wraps move_errors metadata domains start gap"
status_ok() {
	local -a w
	local i k v
	read -r -a w <<<"$1"
	[ "${w[0]} ${w[1]} ${w[2]}" = "0 $len pcm" ] || return 1
	i=3
	for k in $keys; do
		[ "${w[i]%%:*}" = "$k" ] || return 1
		v=${w[i]#*:}
		case $k in
		metadata) [ "$v" = ok ] || return 1 ;;
		domains) [ "$v" = $doms ] || return 1 ;;
		start|gap) [[ $v =~ ^[0-9]+(,[0-9]+){3}$ ]] || return 1 ;;
		*) [[ $v =~ ^[0-9]+$ ]] || return 1 ;;
		esac
		i=$((i + 1))
	done
	[ ${#w[@]} -eq $i ]
}

# set and the table line: a runtime change shows in config, never in the table
msg set gap_interval 7
expect_eq "set gap_interval 7: config shows it" \
	"$(dmsetup message ms 0 config | grep -o 'gap_interval:[0-9]*')" gap_interval:7
expect_eq "set gap_interval 7: the table line does not" "$(dmsetup table ms)" "$t0_table"
msg set gap_interval 1

# Each loop runs while $W/run exists and leaves "key value" lines in
# $W/<loop>.cnt.

# reload_seen: REPLY = how many reloads the control loop has finished,
# or "busy" while one is under way (no fork)
reload_seen() {
	REPLY=busy
	[ -e $W/reloading ] || read -r REPLY < $W/reloads
}

loop_set() {
	me=$BASHPID
	local vals=(0 1 2 3 5 8 1 0 16 1 4 1 1000 1) i=0 v ok=0 bad=0 cfg=0 lost=0 r1 c
	while [ -e $W/run ]; do
		v=${vals[i % ${#vals[@]}]}
		i=$((i + 1))
		reload_seen
		r1=$REPLY
		if msg set gap_interval $v; then
			ok=$((ok + 1))
			# only this loop sets it: config must say so, unless a
			# reload came in between (the new table has the table
			# line's gap_interval:1; a "set" is lost with its table)
			msg config
			c=" $(< $W/out.$me) "
			reload_seen
			if [[ $c == *" gap_interval:$v "* ]]; then
				:
			elif [[ $r1 != "$REPLY" || $r1 = busy ]] && [[ $c == *" gap_interval:1 "* ]]; then
				lost=$((lost + 1))
			else
				cfg=$((cfg + 1))
				echo "set gap_interval $v, then config: $c" >> $W/failures
			fi
		else
			bad=$((bad + 1))
			echo "set gap_interval $v: $(< $W/err.$me)" >> $W/failures
		fi
		sleep 0.2
	done
	printf 'set_ok %s\nset_fail %s\nconfig_mismatch %s\nset_lost %s\n' $ok $bad $cfg $lost > $W/set.cnt
}

# move_gap 1 and persist racing suspend on purpose: a refusal is accepted
# only as EINVAL/EAGAIN ("device is suspend..." in the log, counted there
# too); anything else counts as a failure.
loop_race() {
	me=$BASHPID
	local i=0 ok=0 refused=0 bad=0 v
	while [ -e $W/run ]; do
		i=$((i + 1))
		if [ $((i % 2)) = 0 ]; then v="move_gap 1"; else v=persist; fi
		if msg $v; then
			ok=$((ok + 1))
		elif [[ $(< $W/err.$me) =~ Invalid\ argument|Resource\ temporarily\ unavailable ]]; then
			refused=$((refused + 1))
		else
			bad=$((bad + 1))
			echo "race $v: $(< $W/err.$me)" >> $W/failures
		fi
		sleep 0.1
	done
	printf 'race_ok %s\nrace_refused %s\nrace_fail %s\n' $ok $refused $bad > $W/race.cnt
}

# config, registers, status and a bad message, over and over
loop_info() {
	me=$BASHPID
	local i=0 ok=0 bad=0 parse=0 badok=0 badtried=0 m s
	local bads=("bogus" "move_gap 0" "move_gap 1000001" "move_gap 1 2"
		    "set row_size 8192" "set gap_interval -1" "set gap_interval 1000000001"
		    "set gap_interval" "stats" "stats reset now" "config extra"
		    "registers extra" "persist now" "set domains 2")
	while [ -e $W/run ]; do
		i=$((i + 1))
		for m in config registers; do
			if msg $m; then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
				echo "$m: $(< $W/err.$me)" >> $W/failures
			fi
		done
		[[ $(< $W/out.$me) =~ ^[0-9]+/[0-9]+(\ [0-9]+/[0-9]+){3}$ ]] || parse=$((parse + 1))
		s=$(dmsetup status ms)
		status_ok "$s" || { parse=$((parse + 1)); echo "status: $s" >> $W/failures; }
		m=${bads[i % ${#bads[@]}]}
		badtried=$((badtried + 1))
		if msg $m; then
			badok=$((badok + 1))
			echo "accepted bad message: $m" >> $W/failures
		fi
		sleep 0.2
	done
	printf 'info_ok %s\ninfo_fail %s\nparse_fail %s\nbad_tried %s\nbad_accepted %s\n' \
		$ok $bad $parse $badtried $badok > $W/info.cnt
}

# The same through the ioctl itself (tests/vm/dmioctl.py, no fork): many
# more config, registers, status and bad messages than dmsetup can send.
loop_py() {
	python3 - "$PCM_ROOT/tests/vm" $W $len $doms <<'PY'
import os, re, sys, time
sys.path.insert(0, sys.argv[1])
from dmioctl import DM
w, length, doms = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
keys = ('reads writes read_bytes write_bytes flushes fua_writes discards discard_bytes '
        'write_zeroes write_zeroes_bytes gap_moves start_wraps move_errors').split()
lst = r'\d+(,\d+){%d}' % (doms - 1)
status_re = re.compile(' '.join(k + r':\d+' for k in keys) +
                       r' metadata:ok domains:%d start:%s gap:%s$' % (doms, lst, lst))
regs_re = re.compile(r'\d+/\d+( \d+/\d+){%d}$' % (doms - 1))
bad = [b'bogus', b'move_gap 0', b'move_gap x', b'set gap_interval 1e3', b'set randomize 1',
       b'stats reset 1', b'registers 1', b'config 1', b'persist 1', b'STATS', b'x' * 4000]
dm = DM()
n = ok = fail = parse = tried = accepted = 0
while os.path.exists(w + '/run'):
    n += 1
    for words in (b'config', b'registers'):
        err, _, out = dm.message('ms', words.split())
        if err:
            fail += 1
            continue
        ok += 1
        out = out.split(b'\0', 1)[0].decode()
        if words == b'registers' and not regs_re.match(out):
            parse += 1
        if words == b'config' and not out.startswith('preset:none row_size:4096 gap_interval:'):
            parse += 1
    st = dm.status('ms')
    if st is None or not status_re.match(st.decode()):
        parse += 1
        with open(w + '/failures', 'a') as f:
            print('py status:', st, file=f)
    if n % 8:
        time.sleep(0.005)
        continue
    tried += 1
    err, _, _ = dm.message('ms', bad[n % len(bad)].split())
    if err != 22:
        accepted += 1
        with open(w + '/failures', 'a') as f:
            print('py bad message', bad[n % len(bad)][:40], 'gave', err, file=f)
    time.sleep(0.005)
with open(w + '/py.cnt', 'w') as f:
    print(f'py_ok {ok}\npy_fail {fail}\npy_parse {parse}\npy_bad_tried {tried}\npy_bad_accepted {accepted}', file=f)
PY
}

# The control loop, the only one that suspends, reloads and resets the
# counters: move_gap N and persist (never refused: nothing suspends while
# this loop sends them), gap_moves read around each move_gap (it must
# have grown by N per domain at least), stats reset every 3rd round and a
# same-table reload every 5th (both start the counters from zero: the
# values read just before are added up), a suspend/resume every round.
loop_ctl() {
	me=$BASHPID
	local i=0 n g1 g2 s bad=0 short=0 moves_ok=0 asked=0 grown=0 pers=0 resets=0
	local cycles=0 reloads=0 sm=0 sw=0 se=0
	while [ -e $W/run ]; do
		i=$((i + 1))
		n=$((1 + i % 5))
		field gap_moves "$(dmsetup status ms)"
		g1=$REPLY
		if msg move_gap $n; then
			field gap_moves "$(dmsetup status ms)"
			g2=$REPLY
			moves_ok=$((moves_ok + 1))
			asked=$((asked + n * doms))
			grown=$((grown + g2 - g1))
			[ $((g2 - g1)) -ge $((n * doms)) ] || {
				short=$((short + 1))
				echo "move_gap $n: gap_moves $g1 -> $g2" >> $W/failures
			}
		else
			bad=$((bad + 1))
			echo "move_gap $n: $(< $W/err.$me)" >> $W/failures
		fi
		if msg persist; then
			pers=$((pers + 1))
		else
			bad=$((bad + 1))
			echo "persist: $(< $W/err.$me)" >> $W/failures
		fi
		if [ $((i % 3)) = 0 ]; then
			s=$(dmsetup status ms)
			if msg stats reset; then
				resets=$((resets + 1))
				field gap_moves "$s"; sm=$((sm + REPLY))
				field start_wraps "$s"; sw=$((sw + REPLY))
				field move_errors "$s"; se=$((se + REPLY))
			else
				bad=$((bad + 1))
				echo "stats reset: $(< $W/err.$me)" >> $W/failures
			fi
		fi
		s=
		if [ $((i % 5)) = 0 ]; then
			# the new table counts from zero: add up the old one's
			s=$(dmsetup status ms)
			: > $W/reloading
			if dmsetup reload ms --table "$table" 2>> $W/failures; then
				reloads=$((reloads + 1))
			else
				bad=$((bad + 1))
				s=
			fi
		fi
		dmsetup suspend ms 2>> $W/failures || bad=$((bad + 1))
		sleep 0.1
		dmsetup resume ms 2>> $W/failures || bad=$((bad + 1))
		if [ -e $W/reloading ]; then
			echo $reloads > $W/reloads
			rm -f $W/reloading
		fi
		if [ -n "$s" ]; then
			field gap_moves "$s"; sm=$((sm + REPLY))
			field start_wraps "$s"; sw=$((sw + REPLY))
			field move_errors "$s"; se=$((se + REPLY))
		fi
		cycles=$((cycles + 1))
		echo $cycles > $W/cycles
	done
	printf 'ctl_fail %s\nmove_ok %s\nmove_asked %s\nmove_grown %s\nmove_short %s\npersist_ok %s\nresets %s\ncycles %s\nreloads %s\nsnap_moves %s\nsnap_wraps %s\nsnap_errors %s\n' \
		$bad $moves_ok $asked $grown $short $pers $resets $cycles $reloads $sm $sw $se > $W/ctl.cnt
}

# phase 1: time-based random writes verified as they go, for $secs
fio --name=storm --filename=/dev/mapper/ms --rw=randwrite --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=16 --size=$size --time_based --runtime="$secs" \
	--verify=crc32c --verify_backlog=256 --verify_fatal=1 --verify_state_save=0 \
	--randseed=1 --output-format=json --output=$W/fio1.json 2> $W/fio1.err &
fpid=$!
t0=$(date +%s)
pids=()
for l in loop_set loop_race loop_info loop_py loop_ctl; do
	$l &
	pids+=($!)
done
wait $fpid
rc1=$?
# phase 2, the storm still going: one pass that writes every block once
# (the final verify_only replays it), verified as it goes and at the end
fio_fill() {
	fio --name=fill --filename=/dev/mapper/ms --rw=randwrite --bs=64k --direct=1 \
		--ioengine=libaio --iodepth=16 --size=$fill --verify=crc32c \
		--randseed=2 --verify_state_save=0 --output-format=json "$@"
}
fio_fill --verify_backlog=256 --verify_fatal=1 --output=$W/fio2.json 2> $W/fio2.err
rc2=$?
# the storm ends when fio is done and the control loop has made 10 rounds
# (a loaded host runs processes slowly), but not after 5 more minutes
for _ in $(seq 300); do
	[ "$(cat $W/cycles 2>/dev/null || echo 0)" -ge 10 ] && break
	sleep 1
done
rm -f $W/run
wait "${pids[@]}"
elapsed=$(( $(date +%s) - t0 ))

cnt() { cat $W/*.cnt | awk -v k="$1" '$1 == k {print $2}'; }
s=$(dmsetup status ms)
final_moves=$(status_field ms gap_moves)
final_wraps=$(status_field ms start_wraps)
final_errors=$(status_field ms move_errors)
moves=$(( $(cnt snap_moves) + final_moves ))
wraps=$(( $(cnt snap_wraps) + final_wraps ))
asked=$(cnt move_asked)
kill $kpid
wait $kpid 2>/dev/null
refused_log=$(sed -n "/$mark/,\$p" $W/kmsg | grep -cE 'pcm: (move_gap|persist): device is suspend')
bad_log=$(grep -E 'WARNING:|BUG:|Oops|possible circular locking|KASAN|UBSAN|hung task|general protection|Call Trace' $W/kmsg | head -3)

fio_bytes() {
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
print(j["error"], j["write"]["io_bytes"], j["read"]["io_bytes"])' "$1" 2>/dev/null || echo "? 0 0"
}
read -r e1 w1 v1 <<<"$(fio_bytes $W/fio1.json)"
read -r e2 w2 v2 <<<"$(fio_bytes $W/fio2.json)"

note "storm ran ${elapsed}s: fio wrote $(( (w1 + w2) >> 20 )) MiB, verified $(( (v1 + v2) >> 20 )) MiB"
note "control loop: move_gap ok $(cnt move_ok) ($(cnt move_asked) moves asked, gap_moves grew $(cnt move_grown) meanwhile), persist ok $(cnt persist_ok), stats reset $(cnt resets)"
note "control loop: suspend/resume cycles $(cnt cycles), same-table reloads $(cnt reloads)"
note "set gap_interval ok $(cnt set_ok) ($(cnt set_lost) undone by a reload in between); config/registers ok $(cnt info_ok); bad messages $(cnt bad_tried)"
note "ioctl storm: config/registers ok $(cnt py_ok), bad messages $(cnt py_bad_tried)"
note "racing suspend: ok $(cnt race_ok), refused $(cnt race_refused) (kernel log: $refused_log)"
note "gap moves $moves, start wraps $wraps, registers $(registers ms)"
[ -s $W/failures ] && sed 's/^/# failure: /' $W/failures | head -20

expect_eq "fio phase 1: exit 0, no error" "$rc1:$e1" 0:0
expect_fail "fio phase 1: no verify failure" grep -qiE 'verify|bad magic|crc' $W/fio1.err
expect_eq "fio phase 2 (full pass): exit 0, no error" "$rc2:$e2" 0:0
expect_fail "fio phase 2: no verify failure" grep -qiE 'verify|bad magic|crc' $W/fio2.err
expect "fio verified data while the storm ran" test "$((v1 + v2))" -gt 0
expect_eq "every set gap_interval succeeded" "$(cnt set_fail)" 0
expect_eq "config always showed the gap_interval just set" "$(cnt config_mismatch)" 0
expect_eq "control loop: every move_gap, persist, stats reset, suspend, resume, reload succeeded" "$(cnt ctl_fail)" 0
expect_eq "config and registers all succeeded" "$(cnt info_fail)" 0
expect_eq "status and registers always parsed" "$(cnt parse_fail)" 0
expect_eq "every bad message failed" "$(cnt bad_accepted)" 0
expect_eq "ioctl storm: every config/registers succeeded" "$(cnt py_fail)" 0
expect_eq "ioctl storm: replies and status always parsed" "$(cnt py_parse)" 0
expect_eq "ioctl storm: every bad message failed with EINVAL" "$(cnt py_bad_accepted)" 0
expect_eq "racing move_gap/persist failed only as refused-while-suspended" "$(cnt race_fail)" 0
expect "every refusal logged as suspended/suspending" test "$refused_log" -ge "$(cnt race_refused)"
expect "at least 10 suspend/resume cycles" test "$(cnt cycles)" -ge 10
expect_eq "gap_moves grew by N per domain around every move_gap N" "$(cnt move_short)" 0
expect "gap_moves in all ($moves) >= moves asked ($asked)" test "$moves" -ge "$asked"
expect_eq "no move errors" "$(( $(cnt snap_errors) + final_errors ))" 0
expect "final status parses" status_ok "$s"
expect_eq "kernel log during the storm: no warning, oops, lockdep, hung task" "$bad_log" ""
expect_eq "the table is unchanged" "$(dmsetup table ms)" "$t0_table"

# final: remove + create, same registers, every byte of the full pass reads back
regs=$(registers ms)
dmsetup remove ms
expect "create again" dmsetup create ms --table "$table"
expect_eq "registers survive remove + create" "$(registers ms)" "$regs"
expect "final full verify_only" fio_fill --verify_only=1 --output=$W/fio3.json
read -r e3 w3 v3 <<<"$(fio_bytes $W/fio3.json)"
note "final verify_only read $((v3 >> 20)) MiB"
expect_eq "verify_only read the whole pass" "$v3" "$fill"
dmsetup remove ms
finish
