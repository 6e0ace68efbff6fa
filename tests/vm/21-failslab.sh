#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Allocation failures (debug kernels: CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC),
# modelled on dmtest-python's VDO memory-fail loop.
# /proc/thread-self/fail-nth fails exactly the k-th allocation, k = 1, 2,
# ..., while a dm-pcm table is loaded and resumed, until the load and
# resume no longer reach a k-th allocation; then the same for the
# move_gap and persist messages.  With CONFIG_FAULT_INJECTION_STACKTRACE_FILTER
# failslab and fail_page_alloc are restricted to allocations with dm-pcm's
# .text on the stack (require-start/require-end); without it every
# allocation of the task counts (dm core's too) and each injected failure
# dumps its stack, so those in dm-pcm can be counted.  At each k: the
# failure is a clean error (or absorbed, as by a mempool), no device is
# left behind, the module's refcount is back to 0, no warning, and a
# normal create (every 16th k with a move and a superblock write) works
# right after.  At the end: kmemleak (if present) finds nothing of
# dm-pcm's, and rmmod dm_pcm works.  PCM_FAILSLAB_BUDGET bounds the loops
# (seconds in all, default 540); a loop cut short is reported as a skip.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

D=/sys/kernel/debug
mountpoint -q $D || mount -t debugfs none $D 2>/dev/null
for f in failslab fail_page_alloc; do
	[ -d $D/$f ] || skip_all "$D/$f absent: kernel without CONFIG_${f^^} (use a debug kernel)"
done
[ -e /proc/thread-self/fail-nth ] || skip_all "no /proc/thread-self/fail-nth"
brd_load 8 || skip_all "brd not available"

# Two modes.  "filter" (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER): only
# allocations with dm-pcm's .text on the stack count, so k walks dm-pcm's
# own allocation points.  "task" (no stack filter): every allocation the
# kernel makes for this task during the load and resume counts (dm core's
# too); each injected failure dumps its stack (verbose=2), and those with
# dm-pcm on the stack are counted apart.
mode=task
if [ -e $D/failslab/require-start ]; then
	# dm-pcm's .text: its address in the kernel, its size from the .ko
	text=$(cat /sys/module/dm_pcm/sections/.text 2>/dev/null)
	# (readelf prints "[ 1] .text PROGBITS addr off size": the size is
	# the fourth field after the name)
	tsize=$(readelf -SW "$PCM_KO" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") { print $(i + 4); exit } }')
	if [ -n "$text" ] && [ -n "$tsize" ] && [ $((text)) -ne 0 ]; then
		mode=filter
		# as unsigned hex: bash arithmetic is signed, kernel addresses are not
		start=$(printf '0x%x' $((text)))
		end=$(printf '0x%x' $((text + 0x$tsize)))
		note "dm-pcm .text: $start..$end (0x$tsize bytes)"
	fi
fi
note "mode: $mode"

# The fault settings are global: save them, put them back at the end.
files="probability interval times space verbose task-filter require-start require-end
	reject-start reject-end stacktrace-depth ignore-gfp-wait ignore-gfp-highmem min-order
	verbose_ratelimit_burst verbose_ratelimit_interval_ms"
declare -A saved
for d in "$D"/fail*/; do
	for f in $files; do
		[ -w "$d$f" ] && saved[$d$f]=$(cat "$d$f")
	done
done
restore_attrs() {
	local p
	for p in "${!saved[@]}"; do echo "${saved[$p]}" > "$p" 2>/dev/null; done
}
restore() { restore_attrs; cleanup_all; }
trap restore EXIT
for d in "$D"/fail*/; do
	# nothing fails but what fail-nth asks for
	[ -w "${d}probability" ] && echo 0 > "${d}probability"
	[ -w "${d}verbose" ] && echo 0 > "${d}verbose"
	# shellcheck disable=SC2015 # continue unless both tests hold
	[ $mode = filter ] && [ -w "${d}require-start" ] || continue
	# every fault type that fail-nth may consume: dm-pcm's stacks only
	echo 32 > "${d}stacktrace-depth"
	echo "$start" > "${d}require-start"
	echo "$end" > "${d}require-end"
	echo 0 > "${d}reject-start"
	echo 0 > "${d}reject-end"
done
for d in failslab fail_page_alloc; do
	echo N > $D/$d/ignore-gfp-wait
	if [ $mode = task ]; then
		echo 2 > $D/$d/verbose
		echo 100000 > $D/$d/verbose_ratelimit_burst
	fi
done
echo 0 > $D/fail_page_alloc/min-order

# kmemleak, when the kernel has it: forget what was reported before
KL=$D/kmemleak
[ -w $KL ] && echo clear > $KL 2>/dev/null

len=$(pcm_len /dev/ram0 gap_interval:1)
params="/dev/ram0 0 1 gap_interval:1"
note "table: 0 $len pcm $params"

rm -f /tmp/failslab.count
python3 - "$PCM_ROOT/tools" "$len" "$params" $mode <<'PY'
import os, re, sys, time
sys.path.insert(0, sys.argv[1])
from pcmlib import dmioctl, tap
from pcmlib.tap import note, result as ok

length, params, mode = int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
MAXK = 5000
BUDGET = int(os.environ.get('PCM_FAILSLAB_BUDGET', '540'))  # seconds, all loops
DEADLINE = time.time() + BUDGET
FULL_EVERY = 16         # a full check (move, persist) every this many k
BAD = re.compile(r'WARNING:|BUG:|Oops|possible circular locking|KASAN|UBSAN|'
                 r'hung task|general protection|Call Trace')
# what prints a stack by design: fault injection itself (verbose=2) and
# the kernel's reports of a failed allocation
REPORT = re.compile(r'FAULT_INJECTION: forcing a failure|percpu: allocation failed|'
                    r'page allocation failure|vmalloc error|SLUB: Unable to allocate')
dm = dmioctl.DM()
nth = os.open('/proc/thread-self/fail-nth', os.O_RDWR)
kmsg = os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK)
os.lseek(kmsg, 0, os.SEEK_END)


def kernel_log():
    out = []
    while True:
        try:
            rec = os.read(kmsg, 8192).decode(errors='replace')
        except BlockingIOError:
            return out
        except OSError:         # EPIPE: records overwritten; skip them
            continue
        out.append(rec.split(';', 1)[-1].rstrip())


def read_log():
    """(problems, injected stacks with dm-pcm in them, injected stacks)
    since the last call.  Problems are warnings beyond the stacks that
    fault injection and failed allocations print by design."""
    recs = kernel_log()
    report = any(REPORT.search(r) for r in recs)
    problems = [r for r in recs if BAD.search(r) and not (report and 'Call Trace' in r)]
    stacks, ours, cur = 0, 0, None
    for r in recs:
        if 'FAULT_INJECTION: forcing a failure' in r:
            stacks += 1
            cur = False
        elif cur is not None and '[dm_pcm]' in r and not cur:
            cur = True
            ours += 1
    return problems, ours, stacks


def set_nth(k):
    os.pwrite(nth, b'%d' % k, 0)


def get_nth():
    return int(os.pread(nth, 32, 0))


def refcnt():
    with open('/sys/module/dm_pcm/refcnt') as f:
        return int(f.read())


def message(name, *words):
    return dm.message(name, [w.encode() for w in words])[0]


def status(name):
    s = dm.status(name)
    return dict(w.split(b':', 1) for w in s.split() if b':' in w) if s else None


def load_resume(name):
    err = dm.load(name, length, 'pcm', params)
    return err or dm.resume(name)


def normal_create_works(name, full):
    good = dm.create(name) == 0 and load_resume(name) == 0
    if full:
        good = good and not message(name, 'move_gap', '2') and not message(name, 'persist')
        st = status(name)
        good = good and st is not None and st[b'metadata'] == b'ok' and st[b'move_errors'] == b'0'
    return dm.remove(name) == 0 and good


class Loop:
    """attempt() under fail-nth = 1, 2, ... until it no longer reaches a
    k-th allocation."""

    def __init__(self, what, attempt, after):
        self.what, self.points, self.failed, self.absorbed = what, 0, 0, 0
        self.ours = self.stacks = 0
        self.errnos = {}
        t0 = time.time()
        for k in range(1, MAXK + 1):
            if time.time() > DEADLINE:
                tap.skip('%s: stopped after %d failure points, time budget %d s'
                         % (what, k - 1, BUDGET))
                break
            set_nth(k)
            err = attempt()
            left = get_nth()
            set_nth(0)
            problems = after(k, err)
            p, o, s = read_log()
            problems += p
            self.ours += o
            self.stacks += s
            if problems:
                ok(False, '%s: allocation %d fails cleanly' % (what, k))
                for line in problems[:10]:
                    note('  ' + line)
                break
            if left:            # no k-th allocation: done
                ok(err == 0, '%s: succeeds when no allocation fails (%d failure points)'
                   % (what, k - 1))
                break
            self.points = k
            if err:
                self.failed += 1
                self.errnos[err] = self.errnos.get(err, 0) + 1
            else:
                self.absorbed += 1
        else:
            ok(False, '%s: still reaching allocations after %d' % (what, MAXK))
        how = ', '.join('errno %d x%d' % e for e in sorted(self.errnos.items()))
        note('%s: %d failure points in %.0f s: %d failed cleanly%s, %d absorbed'
             % (what, self.points, time.time() - t0, self.failed,
                ' (%s)' % how if how else '', self.absorbed))
        if mode == 'task':
            note('%s: %d injected failures dumped a stack, %d of them with dm-pcm on it'
                 % (what, self.stacks, self.ours))


# --- table load + resume --------------------------------------------------

def ctr_attempt():
    return load_resume('fs')


def ctr_after(k, err):
    problems = []
    if dm.remove('fs'):
        problems.append('remove failed after allocation %d (error %d)' % (k, err))
    if dm.status('fs') is not None:
        problems.append('device left behind after allocation %d' % k)
    if refcnt():
        problems.append('dm_pcm refcount %d after remove' % refcnt())
    if not normal_create_works('fs2', k % FULL_EVERY == 0):
        problems.append('a normal create failed after allocation %d' % k)
    # the next attempt's device, created before fail-nth is set
    if dm.create('fs'):
        problems.append('cannot create the next device')
    return problems


ok(dm.create('fs') == 0, 'create an empty device')
ctr = Loop('load + resume', ctr_attempt, ctr_after)
dm.remove('fs')
ok(ctr.points > 0, 'load + resume reached allocations')
ok(normal_create_works('fs2', True), 'a normal create, move and persist after the loop')
total, ours = ctr.points, ctr.ours

# --- messages on a live device ---------------------------------------------

ok(dm.create('fm') == 0 and load_resume('fm') == 0, 'create a device for the messages')


def msg_after(k, err):
    problems = []
    st = status('fm')
    if st is None:
        return ['status unreadable after allocation %d' % k]
    if st[b'metadata'] == b'failed':
        # a superblock write failed: a resume must clear it
        if dm.call(dmioctl.DEV_SUSPEND, 'fm', flags=1 << 1)[0] or dm.resume('fm'):
            problems.append('suspend/resume failed after allocation %d' % k)
    if message('fm', 'persist') or message('fm', 'move_gap'):
        problems.append('persist or move_gap failed after allocation %d' % k)
    st = status('fm')
    if st is None or st[b'metadata'] != b'ok':
        problems.append('metadata not ok after allocation %d' % k)
    return problems


for words in (('move_gap', '2'), ('persist',)):
    m = Loop(' '.join(words), lambda: message('fm', *words), msg_after)
    total += m.points
    ours += m.ours
ok(dm.remove('fm') == 0, 'remove the device')
ok(refcnt() == 0, 'dm_pcm refcount 0')
if mode == 'filter':
    note('allocation failure points exercised (all in dm-pcm): %d' % total)
else:
    note('allocation failure points exercised: %d (%d of the dumped stacks had dm-pcm on them)'
         % (total, ours))
with open('/tmp/failslab.count', 'w') as f:
    f.write('%d %d\n' % (tap.cases, tap.failed_cases))
sys.exit(tap.exit_code())
PY
rc=$?
# the python part numbered its own KTAP lines from 1: continue after them
if read -r T_N T_FAIL < /tmp/failslab.count 2>/dev/null; then
	:
else
	T_N=0 T_FAIL=0
	fail "allocation loop died (exit $rc)"
fi

# leaks: kmemleak reports objects unreferenced for 5 s; scan twice.
# One leak is the kernel's own and known: when sysfs_slab_add() fails
# (an injected failure in kobject_add or sysfs_create_group while a
# bioset or dm-bufio creates a slab cache), 6.12's mm/slub.c returns
# without kobject_put(), so the kobject's name stays allocated.  Those
# are counted and cleared; any other leak fails here if dm-pcm is on its
# stack, and is left for tests/vm/run to fail on otherwise.
# A scan of a KASAN kernel's memory under TCG can take minutes.
if [ -w $KL ] && ! { timeout 900 sh -c "echo scan > $KL" && sleep 6 &&
	timeout 900 sh -c "echo scan > $KL"; }; then
	fail "kmemleak: a scan did not finish in 900 s"
elif [ -w $KL ]; then
	# a record: "unreferenced object ..." and its backtrace lines
	read -r leaks known ours < <(awk '
		function done() {
			if (!n) return
			if (slab && kname) known++
			else if (pcm) ours++
		}
		/unreferenced object/ { done(); n++; slab = kname = pcm = 0 }
		/sysfs_slab_add/ { slab = 1 }
		/kobject_set_name_vargs/ { kname = 1 }
		/pcm_|dm_pcm/ { pcm = 1 }
		END { done(); print n + 0, known + 0, ours + 0 }' $KL)
	note "kmemleak: $leaks suspected leaks: $known the kernel's slab-name leak, $ours other with dm-pcm on the stack"
	[ "$ours" -eq 0 ] || grep -B2 -A20 -m1 'pcm_' $KL | sed 's/^/# /'
	expect_eq "kmemleak: nothing allocated by dm-pcm leaked" "$ours" 0
	if [ "$leaks" -eq "$known" ]; then
		echo clear > $KL
	fi
else
	note "no kmemleak in this kernel: leaks checked by refcount and rmmod only"
fi

restore_attrs
expect "rmmod dm_pcm" rmmod dm_pcm
expect "insmod dm_pcm again" insmod "$PCM_KO"
expect "a normal create after the reload" pcm_create fs /dev/ram0 gap_interval:1
dmsetup remove fs 2>/dev/null

# The runner fails a test on any "Call Trace" in the log (which it
# cleared before the test).  Fault injection (verbose=2) and a failed
# percpu or vmalloc allocation print one by design; the python part
# already failed on anything else, so clear the log only when every
# stack in it belongs to such a report.
# (The python part read every record through /dev/kmsg as it came, so
# a ring buffer that overflowed does not hide anything from it.)
log=$(dmesg)
traces=$(grep -c 'Call Trace' <<<"$log")
others=$(grep -E 'WARNING:|BUG:|Oops|possible circular locking|KASAN|UBSAN|hung task|general protection' <<<"$log" | grep -c .)
if [ "$traces" -gt 0 ] && [ "$others" -eq 0 ] && [ $rc -eq 0 ]; then
	note "clearing $traces stacks of injected or reported allocation failures from the kernel log"
	dmesg -C
fi
finish
