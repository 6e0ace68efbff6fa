#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Allocation failures (debug kernels: CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC,
# CONFIG_FAULT_INJECTION_STACKTRACE_FILTER), modelled on dmtest-python's
# VDO memory-fail loop.  failslab and fail_page_alloc are restricted to
# allocations with dm-pcm's .text on the stack (require-start/require-end),
# and /proc/thread-self/fail-nth fails exactly the k-th of them, k = 1, 2,
# ..., while a dm-pcm table is loaded and resumed, until the constructor
# and resume no longer reach a k-th allocation; then the same for the
# move_gap and persist messages.  At each k: the failure is a clean error
# (or absorbed, as by a mempool), no device is left behind, the module's
# refcount is back to 0, no warning, and a normal create (with a move and
# a superblock write) works right after.  At the end rmmod dm_pcm works.
. "$(dirname "$0")/lib.sh"

D=/sys/kernel/debug
mountpoint -q $D || mount -t debugfs none $D 2>/dev/null
for f in failslab fail_page_alloc; do
	[ -d $D/$f ] || skip_all "$D/$f absent: kernel without CONFIG_${f^^} (use a debug kernel)"
done
[ -e $D/failslab/require-start ] ||
	skip_all "no require-start: kernel without CONFIG_FAULT_INJECTION_STACKTRACE_FILTER"
[ -e /proc/thread-self/fail-nth ] || skip_all "no /proc/thread-self/fail-nth"
[ -r /sys/module/dm_pcm/sections/.text ] || skip_all "dm_pcm section addresses not readable"
brd_load 8 || skip_all "brd not available"
here=$(dirname "$0")

# dm-pcm's .text: its address in the kernel, its size from the .ko
text=$(cat /sys/module/dm_pcm/sections/.text)
tsize=$(readelf -SW "$PCM_KO" | awk '$2 == ".text" { print $6; exit }')
[ -n "$text" ] && [ -n "$tsize" ] || skip_all "cannot find dm-pcm's .text"
[ $((text)) -ne 0 ] || skip_all "dm_pcm section addresses hidden (kptr_restrict)"
# as unsigned hex: bash arithmetic is signed, kernel addresses are not
start=$(printf '0x%x' $((text)))
end=$(printf '0x%x' $((text + 0x$tsize)))
note "dm-pcm .text: $start..$end (0x$tsize bytes)"

# every fault type that fail-nth may consume is restricted to dm-pcm's
# stacks; the settings are global: save them, put them back at the end
files="probability interval times space verbose task-filter require-start require-end
	reject-start reject-end stacktrace-depth ignore-gfp-wait ignore-gfp-highmem min-order"
declare -A saved
for d in $D/fail*/; do
	for f in $files; do
		[ -w "$d$f" ] && saved[$d$f]=$(cat "$d$f")
	done
done
restore() {
	local p
	for p in "${!saved[@]}"; do echo "${saved[$p]}" > "$p" 2>/dev/null; done
	cleanup_all
}
trap restore EXIT
for d in $D/fail*/; do
	[ -w "${d}require-start" ] || continue
	echo 0 > "${d}probability"	# nothing fails but what fail-nth asks for
	echo 0 > "${d}verbose"
	echo 32 > "${d}stacktrace-depth"
	echo $start > "${d}require-start"
	echo $end > "${d}require-end"
	echo 0 > "${d}reject-start"
	echo 0 > "${d}reject-end"
done
for d in failslab fail_page_alloc; do echo N > $D/$d/ignore-gfp-wait; done
echo N > $D/fail_page_alloc/ignore-gfp-highmem
echo 0 > $D/fail_page_alloc/min-order

len=$(pcm_len /dev/ram0 gap_interval:1)
params="/dev/ram0 0 1 gap_interval:1"
note "table: 0 $len pcm $params"
mark=$(dmesg_mark)

rm -f /tmp/failslab.count
python3 - "$here" "$len" "$params" <<'PY'
import os, re, sys
sys.path.insert(0, sys.argv[1])
import dmioctl

length, params = int(sys.argv[2]), sys.argv[3].encode()
MAXK = 5000
BAD = re.compile(r'WARNING:|BUG:|Oops|possible circular locking|KASAN|UBSAN|'
                 r'hung task|general protection|Call Trace')
# what the kernel prints, with a stack, when an allocation fails: expected
ALLOC_REPORT = re.compile(r'percpu: allocation failed|page allocation failure|'
                          r'vmalloc error|SLUB: Unable to allocate')
dm = dmioctl.DM()
nth = os.open('/proc/thread-self/fail-nth', os.O_RDWR)
kmsg = os.open('/dev/kmsg', os.O_RDONLY | os.O_NONBLOCK)
os.lseek(kmsg, 0, os.SEEK_END)
n = fails = 0


def ok(cond, what):
    global n, fails
    n += 1
    if not cond:
        fails += 1
    print('%sok %d %s' % ('' if cond else 'not ', n, what), flush=True)
    return cond


def note(s):
    print('# ' + s, flush=True)


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


def log_problems():
    """Warnings in the kernel log since the last call, beyond the expected
    reports of a failed allocation."""
    recs = kernel_log()
    report = any(ALLOC_REPORT.search(r) for r in recs)
    return [r for r in recs if BAD.search(r) and not (report and 'Call Trace' in r)]


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


def create(name):
    """dmsetup create: create, load, resume; remove on failure."""
    err = dm.create(name)
    if err:
        return err, 'create'
    err = dm.load(name, length, 'pcm', params)
    if not err:
        err = dm.resume(name)
    return err, None


def normal_create_works(name):
    err, _ = create(name)
    good = not err and not message(name, 'move_gap', '2') and not message(name, 'persist')
    st = status(name)
    good = good and st is not None and st[b'metadata'] == b'ok' and st[b'move_errors'] == b'0'
    return dm.remove(name) == 0 and good


def loop(what, attempt, after):
    """attempt() under fail-nth = 1, 2, ... until no k-th allocation is
    reached.  Returns (points, failed cleanly, absorbed)."""
    failed = absorbed = 0
    for k in range(1, MAXK + 1):
        set_nth(k)
        err = attempt()
        left = get_nth()
        set_nth(0)
        hit = left == 0
        problems = after(k, err, hit)
        problems += log_problems()
        if problems:
            ok(False, '%s: fail allocation %d cleanly' % (what, k))
            for p in problems[:10]:
                note('  ' + p)
            return k, failed, absorbed
        if not hit:
            ok(err == 0, '%s: succeeds without an injected failure (%d points)' % (what, k - 1))
            return k - 1, failed, absorbed
        if err:
            failed += 1
        else:
            absorbed += 1
    ok(False, '%s: still failing allocations after %d' % (what, MAXK))
    return MAXK, failed, absorbed


# --- table load + resume --------------------------------------------------

errnos = {}


def ctr_attempt():
    err, where = create('fs')
    assert where is None, 'DM_DEV_CREATE failed (%d): fail-nth reached outside dm-pcm' % err
    return err


def ctr_after(k, err, hit):
    problems = []
    if err:
        errnos[err] = errnos.get(err, 0) + 1
    if dm.remove('fs'):
        problems.append('remove failed after allocation %d (error %d)' % (k, err))
    if dm.status('fs') is not None:
        problems.append('device left behind')
    if refcnt():
        problems.append('dm_pcm refcount %d after remove' % refcnt())
    if not normal_create_works('fs2'):
        problems.append('a normal create, move and persist failed after allocation %d' % k)
    return problems


points, failed, absorbed = loop('load + resume', ctr_attempt, ctr_after)
ok(points > 0, 'load + resume reached dm-pcm allocations')
note('load + resume: %d failure points, %d failed cleanly (%s), %d absorbed'
     % (points, failed, ', '.join('errno %d x%d' % e for e in sorted(errnos.items())), absorbed))
total = points

# --- messages on a live device ---------------------------------------------

ok(create('fm')[0] == 0, 'create a device for the messages')


def msg_after(k, err, hit):
    problems = []
    st = status('fm')
    if st is None:
        return ['status unreadable']
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
    what = ' '.join(words)
    points, failed, absorbed = loop(what, lambda: message('fm', *words), msg_after)
    note('%s: %d failure points, %d failed cleanly, %d absorbed' % (what, points, failed, absorbed))
    total += points
ok(dm.remove('fm') == 0, 'remove the device')
ok(refcnt() == 0, 'dm_pcm refcount 0')
note('allocation failure points exercised: %d' % total)
with open('/tmp/failslab.count', 'w') as f:
    f.write('%d %d\n' % (n, fails))
PY
rc=$?
# the python part numbered its own KTAP lines from 1: continue after them
if read -r T_N T_FAIL < /tmp/failslab.count 2>/dev/null; then
	[ $rc -eq 0 ] || fail "allocation loop exited with $rc"
else
	T_N=0 T_FAIL=0
	fail "allocation loop died (exit $rc)"
fi

restore_attrs() { local p; for p in "${!saved[@]}"; do echo "${saved[$p]}" > "$p" 2>/dev/null; done; }
restore_attrs
expect "rmmod dm_pcm" rmmod dm_pcm
expect "insmod dm_pcm again" insmod "$PCM_KO"
expect "a normal create after the reload" pcm_create fs /dev/ram0 gap_interval:1
dmsetup remove fs 2>/dev/null

# The runner fails a test on any "Call Trace" in the log.  A failed
# percpu or vmalloc allocation prints one by design; the python part
# already failed on anything else, so clear the log only when every
# stack in it belongs to such a report.
log=$(dmesg_since "$mark")
traces=$(grep -c 'Call Trace' <<<"$log")
reports=$(grep -cE 'percpu: allocation failed|page allocation failure|vmalloc error|SLUB: Unable to allocate' <<<"$log")
others=$(grep -E 'WARNING:|BUG:|Oops|possible circular locking|KASAN|UBSAN|hung task|general protection' <<<"$log" | grep -c .)
if [ "$traces" -gt 0 ] && [ "$others" -eq 0 ] && [ "$traces" -le "$reports" ]; then
	note "clearing $reports expected allocation-failure reports from the kernel log"
	dmesg -C
fi
finish
