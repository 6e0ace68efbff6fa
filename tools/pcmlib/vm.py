# SPDX-License-Identifier: GPL-2.0-only
"""Run a command in a throwaway VM booted with a Debian kernel (virtme-ng).

This is the implementation of tools/vm-run; other tools may import it:

    sys.path.insert(0, os.path.join(REPO, "tools"))
    from pcmlib import vm
    rel = vm.resolve_kernel("6.12")
    rc = vm.main(["--kernel", "6.1", "--", "tests/vm/run"])

Only the standard library is used.  virtme-ng itself lives in <repo>/.venv
(tools/install-deps puts it there).
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from . import emufault

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(REPO, "tools")
BUILD = os.path.join(REPO, "build")
VENV_BIN = os.path.join(REPO, ".venv", "bin")
# KVM's verdict is the machine's, not a clone's: kept where the debug
# kernel and the PostgreSQL cluster are (a fresh clone, as CI's, would
# otherwise spend the probe's 40 s under TCG again), else in build/
MACHINE_CACHE = "/var/cache/dm-pcm"
KVM_CACHE = (os.path.join(MACHINE_CACHE, "kvm-ok") if os.access(MACHINE_CACHE, os.W_OK)
             else os.path.join(BUILD, ".kvm-ok"))
GUEST_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

EXIT_TIMEOUT = 124  # like timeout(1)
BOOT_TRIES = 3  # boots that may die before the command starts
EMU_RESUMES = 2  # boots again after the emulator's int3 in tests/vm/run (emufault)
EXIT_INFRA = 125  # the VM (or the preparation in it) failed, not CMD

# Boot time under TCG is dominated by udev's coldplug loading drivers for
# devices the tests never use; keep these from being autoloaded (an explicit
# 'modprobe NAME' still works), nor tried and failed (cpufreq, EDAC).  Saves
# ~25 % of the boot.  The crypto accelerators that udev loads for the CPU's
# features (crc32c_intel, aesni...) stay: baselines like dm-integrity use them.
# The guest runs without the CPU vulnerability mitigations: the VM runs
# only our tests, and under TCG a retpoline turns every indirect call of
# the kernel (VFS, block layer, dm) into a return TCG cannot chain, and the
# RSB filling at each context switch into 32 calls.  100,000 one-sector
# dd syscalls took 3.3 s with them and 1.3 s without (6.12 guest, TCG,
# two boots on a host loaded by other VMs: a rough figure); make check's
# per-test times at 632a0ea were within a few percent of edb4ee3's, so
# the suite is bound elsewhere (exec and fio under TCG).  Benchmarks are
# ratios to baselines from the same boot, which runs the same way.
# The guest also runs without address-space randomization (norandmaps):
# TCG finds translated code by guest virtual address, so with ASLR every
# exec of a PIE binary and its libraries lands at new addresses and is
# translated afresh.  The suite is bound by exec (dmsetup, dd, awk): the
# same three tests (02, 09, 10) took 280 s with it and 119 s without, on
# the same host load, back to back.  Only user space: the kernel's KASLR,
# the module's addresses and dm-pcm's behaviour are unchanged.
# PCM_VM_APPEND adds kernel arguments of one's own.
GUEST_APPEND = "mitigations=off norandmaps"
MODPROBE_BLACKLIST = (
    "kvm_amd,kvm_intel,kvm,ccp,ahci,ata_piix,sr_mod,sg,lpc_ich,i2c_i801,"
    "intel_pmc_bxt,iTCO_wdt,i6300esb,evdev,psmouse,serio_raw,pcspkr,joydev,"
    "button,qemu_fw_cfg,acpi_cpufreq,powernow_k8,pcc_cpufreq,edac_mce_amd,"
    "amd64_edac"
)

KVM_PROBE_TIMEOUT = 40
KVM_MARKER = "PCM-KVM-OK"

_PROG = "vm-run"


class VmError(Exception):
    """A failure of the runner itself (message for the user)."""


def log(msg):
    print(f"{_PROG}: {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# Host-side preparation


def resolve_kernel(alias):
    """Map '6.1', '6.12', 'running' or a full release to an installed release."""
    res = subprocess.run(
        [os.path.join(TOOLS, "kernels"), alias],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    if res.returncode != 0 or not res.stdout.strip():
        raise VmError(res.stderr.strip() or f"cannot resolve kernel '{alias}'")
    return res.stdout.split()[0]


def install_deps(native=False):
    cmd = [os.path.join(TOOLS, "install-deps")]
    if native:
        cmd.append("--no-vm")
    if subprocess.run(cmd, stdout=sys.stderr, check=False).returncode != 0:
        raise VmError("tools/install-deps failed")


def module_path(rel):
    return os.path.join(BUILD, rel, "dm-pcm", "dm-pcm.ko")


def build_module(rel):
    """make -s -C <repo> module tools KVER=<rel>: the module and the host
    library pcmctl needs (the guest sees the repository read-only)."""
    cmd = ["make", "-s", f"-j{os.cpu_count()}", "-C", REPO, "module", "tools", f"KVER={rel}"]
    res = subprocess.run(
        cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr, check=False
    )
    if res.returncode != 0:
        raise VmError(
            f"building the module for {rel} failed ({shlex.join(cmd)} "
            f"exited {res.returncode}); --no-build runs without building"
        )
    ko = module_path(rel)
    if not os.path.isfile(ko):
        raise VmError(f"make succeeded but {ko} is missing")
    return ko


def kernel_image(rel):
    img = f"/boot/vmlinuz-{rel}"
    if not os.path.isfile(img):
        raise VmError(f"{img} not found (run tools/install-deps)")
    if not os.access(img, os.R_OK):
        raise VmError(f"{img} is not readable by this user")
    if not os.path.isdir(f"/lib/modules/{rel}/kernel"):
        raise VmError(f"/lib/modules/{rel} has no modules: the guest could not modprobe")
    return img


def vng_env():
    env = dict(os.environ)
    env["PATH"] = VENV_BIN + os.pathsep + env.get("PATH", GUEST_PATH)
    return env


def vng_binary():
    vng = os.path.join(VENV_BIN, "vng")
    if not os.access(vng, os.X_OK):
        raise VmError(f"{vng} missing: run tools/install-deps")
    return vng


# --------------------------------------------------------------------------
# Running a child with live output relayed, a timeout, and group kill


class _Child:
    """A process in its own session; its stdout/stderr relayed live."""

    def __init__(self, argv, env=None, cwd=None, relay=True, capture=False):
        self.capture = capture
        self.captured = []
        pipe = subprocess.PIPE if (relay or capture) else None
        # stdin is /dev/null: CI has none, and QEMU must never take a tty.
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=pipe,
            stderr=pipe,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self.threads = []
        if pipe is not None:
            for src, dst in (
                (self.proc.stdout, sys.stdout),
                (self.proc.stderr, sys.stderr),
            ):
                t = threading.Thread(target=self._pump, args=(src, dst), daemon=True)
                t.start()
                self.threads.append(t)

    def _pump(self, src, dst):
        fd = src.fileno()
        alive = True
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            if self.capture:
                self.captured.append(data)
                continue
            if not alive:
                continue
            try:
                dst.buffer.write(data)
                dst.buffer.flush()
            except (OSError, ValueError):
                alive = False  # reader went away: keep draining
        src.close()

    def kill(self):
        """SIGTERM the whole session, then SIGKILL what is left."""
        for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=grace)
                # the leader is gone; make sure no qemu survives it
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                break
            except subprocess.TimeoutExpired:
                continue

    def wait(self, timeout):
        """Return (returncode, timed_out)."""
        try:
            rc = self.proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            self.kill()
            rc = self.proc.wait()
            timed_out = True
        for t in self.threads:
            t.join(timeout=5)
        return rc, timed_out

    def output(self):
        return b"".join(self.captured).decode("utf-8", "replace")


_current = []  # children to kill if we are interrupted
_rundirs = []  # per-boot directories to remove if we are interrupted


def _on_signal(signum, _frame):
    for child in _current:
        child.kill()
    for d in _rundirs:
        shutil.rmtree(d, ignore_errors=True)
    log(f"interrupted by signal {signum}")
    os._exit(128 + signum)


def _install_signal_handlers():
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        try:
            signal.signal(sig, _on_signal)
        except (ValueError, OSError):
            pass


def _run_child(argv, timeout, **kw):
    child = _Child(argv, **kw)
    _current.append(child)
    try:
        return child, child.wait(timeout)
    finally:
        _current.remove(child)


# --------------------------------------------------------------------------
# KVM


def _machine_key():
    return f"{os.uname().release}\t{socket.gethostname()}"


def kvm_usable(rel, mode):
    """Decide whether to use KVM: mode is 'on', 'off' or 'auto'."""
    if mode == "on":
        return True
    if mode == "off":
        return False
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
        os.close(fd)
    except OSError:
        return False
    key = _machine_key()
    try:
        with open(KVM_CACHE, encoding="utf-8") as f:
            verdict, _, cached_key = f.read().rstrip("\n").partition("\t")
        if cached_key == key and verdict in ("yes", "no"):
            return verdict == "yes"
    except OSError:
        pass
    ok = probe_kvm(rel)
    os.makedirs(os.path.dirname(KVM_CACHE), exist_ok=True)
    tmp = f"{KVM_CACHE}.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{'yes' if ok else 'no'}\t{key}\n")
    os.replace(tmp, KVM_CACHE)
    return ok


def probe_kvm(rel):
    """Boot a tiny guest with KVM; it must answer (with kvm-clock) in time."""
    log(
        f"probing KVM (once per machine, verdict cached in {KVM_CACHE}; "
        "--kvm on|off or PCM_KVM overrides)"
    )
    start = time.monotonic()
    cs = "/sys/devices/system/clocksource/clocksource0/available_clocksource"
    argv = [
        vng_binary(),
        "--run", kernel_image(rel),
        "--user", "root",
        "--cpus", "1",
        "--memory", "512M",
        "--cwd", "/",
        "--force-9p",
        "--exec", f"grep -q kvm-clock {cs} && echo {KVM_MARKER}",
    ]
    child, (rc, timed_out) = _run_child(
        argv, KVM_PROBE_TIMEOUT, env=vng_env(), capture=True
    )
    ok = rc == 0 and not timed_out and KVM_MARKER in child.output()
    took = time.monotonic() - start
    if ok:
        log(f"KVM works ({took:.0f} s)")
    else:
        why = "timed out" if timed_out else f"exit {rc}"
        last = [l for l in child.output().splitlines() if l.strip()][-2:]
        log(f"KVM unusable ({why} after {took:.0f} s{': ' + ' | '.join(last) if last else ''}); using TCG")
    return ok


# --------------------------------------------------------------------------
# The guest script


def _guest_env(args, rel, ko, rwdir, nvme, native, nvme_4k=""):
    env = {}
    for k, v in os.environ.items():  # pass PCM_* and CI through
        if k.startswith("PCM_") or k == "CI":
            env[k] = v
    for item in args.env:
        k, sep, v = item.partition("=")
        if not sep or not k:
            raise VmError(f"--env wants NAME=VALUE, got '{item}'")
        env[k] = v
    env.update(
        {
            "PCM_ROOT": REPO,
            "PCM_KO": ko,
            "PCM_KVER": rel,
            "PCM_RWDIR": rwdir,
            "PCM_NVME": nvme,
            "PCM_NVME_4K": nvme_4k,
            "PCM_NATIVE": "1" if native else "0",
        }
    )
    if args.queue:
        env["PCM_QUEUE"] = os.path.abspath(args.queue)
    if args.no_insmod:
        env["PCM_NO_INSMOD"] = "1"
    if args.udev:
        env["PCM_KEEP_UDEV"] = "1"
    return env


def _write_guest_script(path, env, cwd, cmd, status_file, started_file):
    lines = ["#!/bin/bash", "# generated by tools/vm-run for one boot"]
    # the host boots again only if the guest died before this line
    lines.append(f"echo started > {shlex.quote(started_file)}")
    lines.append(f"export PATH={GUEST_PATH}")
    lines.append("export LANG=C.UTF-8")
    for k, v in sorted(env.items()):
        lines.append(f"export {k}={shlex.quote(v)}")
    lines.append(f"cd {shlex.quote(cwd)} 2>/dev/null || cd {shlex.quote(REPO)}")
    lines.append(shlex.join([os.path.join(TOOLS, "vm-guest-init")] + cmd))
    lines.append("rc=$?")
    lines.append(f'echo "$rc" > {shlex.quote(status_file)}')
    lines.append("sync")
    lines.append('exit "$rc"')
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def _make_nvme(path, size_mb):
    # a fresh (all-zero, sparse) image every boot, in the run's own
    # directory: VMs side by side (tools/check) each have theirs
    with open(path, "wb") as f:
        f.truncate(0)
        f.truncate(size_mb * 1024 * 1024)
    return path


def _tail(path, n=40):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().splitlines()[-n:]
    except OSError:
        return []


def run_vm(args, cmd):
    if not args.no_deps:
        install_deps()  # first: a fresh machine has no kernels yet
    rel = resolve_kernel(args.kernel)
    img = kernel_image(rel)
    ko = module_path(rel) if args.no_build else build_module(rel)
    vng = vng_binary()

    # icount: 1 vCPU unless asked; with more, QEMU runs them round-robin
    # on one host thread (icount rules out multi-threaded TCG), all on
    # the one instruction-counted clock
    cpus = args.cpus or (1 if args.icount else 2)
    if args.icount:
        use_kvm = False  # icount is a TCG feature
        if args.kvm == "on":
            log("--icount: ignoring --kvm on (icount needs TCG)")
    else:
        use_kvm = kvm_usable(rel, args.kvm)

    rwdir = os.path.abspath(args.rwdir)
    for path in (rwdir, REPO):
        # these go on the kernel command line (virtme_initmountN=...)
        if any(c.isspace() or c in "=,`'\"" for c in path):
            raise VmError(f"path not usable by virtme-ng (blank, quote, '=' or ','): {path!r}")
    os.makedirs(rwdir, exist_ok=True)

    rundir = os.path.join(BUILD, "vm", f"run-{os.getpid()}-{int(time.time())}")
    os.makedirs(rundir)
    _rundirs.append(rundir)
    status_file = os.path.join(rundir, "status")
    started_file = os.path.join(rundir, "started")
    console_log = os.path.join(rundir, "console.log")
    script = os.path.join(rundir, "cmd.sh")

    nvme_dev = nvme_4k = ""
    qemu_opts = ["-nodefaults"]  # no CD-ROM (ahci, sr_mod...) to probe
    images = []
    if args.nvme or args.nvme_4k:
        # one controller: namespace 1 (--nvme, 512-byte blocks) as its own
        # drive, namespace 2 (--nvme-4k) an nvme-ns of 4 KiB blocks on it;
        # the guest finds each by its nsid (vm-guest-init), since the
        # driver may scan them in either order
        ctrl = "nvme,id=pcmnvme,serial=pcmtest"
        if args.nvme:
            images.append((os.path.join(rundir, "nvme.img"), args.nvme))
            qemu_opts += ["-drive", f"file={images[-1][0]},if=none,id=nvm,format=raw"]
            ctrl += ",drive=nvm"
            nvme_dev = "/dev/nvme0n1"
        qemu_opts += ["-device", ctrl]
        if args.nvme_4k:
            images.append((os.path.join(rundir, "nvme-4k.img"), args.nvme_4k))
            qemu_opts += [
                "-drive", f"file={images[-1][0]},if=none,id=nvm4k,format=raw",
                "-device", "nvme-ns,bus=pcmnvme,drive=nvm4k,nsid=2,shared=false,"
                           "logical_block_size=4096,physical_block_size=4096",
            ]
            nvme_4k = "/dev/nvme0n2"
        for path, size_mb in images:
            _make_nvme(path, size_mb)
    if args.icount:
        qemu_opts += ["-icount", "shift=0,sleep=off"]
        if cpus > 1:
            # QEMU 7.2's round-robin TCG (icount, more than one vCPU) loaded
            # a pointer into EFLAGS at SLUB's cmpxchg16b and the guest died
            # of a double fault in kmem_cache_alloc(), twice, under fio at
            # QD32 on dm-linear and on dm-pcm; without CX16 SLUB takes its
            # locked path.  The same for every device of a run, so ratios
            # hold.  (vng's "-cpu max" comes first: the last one counts.)
            qemu_opts += ["-cpu", "max,-cx16"]
    # Kernel console (warnings and worse) to a file through a virtio console
    # (hvc0: ttyS0 is vng's, and one driver registers one console), never to
    # stdout; shown only if the guest dies.
    qemu_opts += [
        "-device", "virtio-serial-pci,id=pcmconbus",
        "-chardev", f"file,id=pcmcon,path={console_log}",
        "-device", "virtconsole,chardev=pcmcon,bus=pcmconbus.0",
    ]

    env = _guest_env(args, rel, ko, rwdir, nvme_dev, native=False, nvme_4k=nvme_4k)
    _write_guest_script(script, env, os.getcwd(), cmd, status_file, started_file)

    argv = [
        vng,
        "--run", img,
        "--user", "root",
        "--cpus", str(cpus),
        "--memory", args.memory,
        "--cwd", REPO,
        # 9p: vng would first try virtiofs with Debian's old C virtiofsd,
        # which rejects its options, and lose ~3 s waiting for it
        "--force-9p",
        f"--rwdir={rwdir}",
        f"--rwdir={rundir}",
    ]
    if args.queue:
        # tests/vm/run's claims, shared with the VMs beside this one
        os.makedirs(args.queue, exist_ok=True)
        argv.append(f"--rwdir={os.path.abspath(args.queue)}")
    if not args.udev:
        # virtme-ng's init starts udevd if it finds it, and its coldplug
        # and blkid probes would open the tests' devices at random
        # instants; an empty directory over /usr/lib/systemd hides it
        # (the guest loads what it needs itself: vm-guest-init)
        empty = os.path.join(rundir, "no-udevd")
        os.makedirs(empty)
        argv.append(f"--rodir=/usr/lib/systemd={empty}")
    argv += [
        f"--append=console=hvc0 loglevel=4 modprobe.blacklist={MODPROBE_BLACKLIST} "
        f"{GUEST_APPEND} {os.environ.get('PCM_VM_APPEND', '')}".rstrip(),
        f"--qemu-opts={shlex.join(qemu_opts)}",
    ]
    if not use_kvm:
        argv.append("--disable-kvm")
    argv += ["--exec", f"/bin/bash {shlex.quote(script)}"]

    extra = []
    if args.icount:
        extra.append("icount")
    if args.nvme:
        extra.append(f"nvme {args.nvme}M")
    if args.nvme_4k:
        extra.append(f"nvme 4Kn {args.nvme_4k}M")
    log(
        f"{rel}, {'kvm' if use_kvm else 'tcg'}, {cpus} cpu{'s' if cpus != 1 else ''}, "
        f"{args.memory}" + (", " + ", ".join(extra) if extra else "")
    )
    if args.verbose:
        log("vng command: " + shlex.join(argv))

    # A TCG guest now and then dies while it boots (seen: int3 in
    # sched_clock_cpu during SMP text patching, before any module loaded:
    # the emulator's int3 below).  Such a boot ran nothing, so it is tried
    # again; a guest that dies after the command started is a failure like
    # any other, but for one signature: the emulator's int3.
    #
    # The emulator's int3 (tools/pcmlib/emufault.py; tests/README.md):
    # QEMU's multi-threaded TCG can run a stale translation of kernel text
    # that the kernel has just live-patched, trap on an int3 that memory no
    # longer holds, and panic.  Under TCG only, and only if the console shows
    # exactly that, while tests/vm/run ran (it names its test in
    # vm-<kernel>.running in the results directory): the evidence goes to
    # vm-<kernel>.emulator-fault there and the guest boots again; tests/vm/run
    # reports that test as skipped with the evidence and goes on with the
    # next.  At most EMU_RESUMES times in a run; any other command, or a
    # KVM or native run, fails as before.
    running_file = os.path.join(rwdir, f"vm-{rel}.running")
    fault_file = os.path.join(rwdir, f"vm-{rel}.emulator-fault")
    for path in (running_file, fault_file):
        if os.path.exists(path):
            os.unlink(path)  # a previous run's
    resumes = 0
    while True:
        status, timed_out, took, vng_rc = _boot(
            argv, args, status_file, started_file, console_log, images,
            use_kvm)
        if status is not None or timed_out or use_kvm or not os.path.exists(started_file):
            break
        fault = emufault.stale_int3(_tail(console_log, 2000))
        if fault is None:
            break
        log("the guest died of the emulator's int3, not of the command: " + fault["why"])
        for line in fault["lines"]:
            print("  " + line, file=sys.stderr)
        sys.stderr.flush()
        kept = os.path.join(rwdir, f"vm-{rel}.emulator-fault-{resumes + 1}.console")
        shutil.copyfile(console_log, kept)
        if not os.path.exists(running_file):
            log("(no tests/vm/run test in progress to record it against: a failure)")
            break
        if resumes == EMU_RESUMES:
            log(f"the emulator's int3 {resumes + 1} times in this run: a failure")
            break
        resumes += 1
        with open(fault_file, "w", encoding="utf-8") as f:
            f.write(fault["why"] + "\n")
            for line in fault["lines"]:
                f.write(line + "\n")
            f.write(f"whole console: {kept}\n")
        log(f"booting again: tests/vm/run reports its test as skipped with this evidence "
            f"and goes on ({resumes} of {EMU_RESUMES}; whole console in {kept})")

    if timed_out:
        log(f"timeout: killed the VM after {args.timeout} s")
        _show_console(console_log)
        log(f"kept {rundir}")
        return EXIT_TIMEOUT
    if status is None:
        log(
            f"the VM ended after {took:.0f} s without the command's exit status "
            f"(vng exit {vng_rc}): boot failure, kernel panic or QEMU error"
        )
        _show_console(console_log)
        log(f"kept {rundir}")
        return EXIT_INFRA
    if args.verbose:
        log(f"exit {status} after {took:.1f} s")
    if args.keep:
        log(f"kept {rundir}")
    else:
        shutil.rmtree(rundir, ignore_errors=True)
    return status


def _boot(argv, args, status_file, started_file, console_log, images, use_kvm):
    """Boot until the command starts (BOOT_TRIES boots at most); return the
    command's exit status (None if the guest died or timed out), whether it
    timed out, the last boot's seconds and vng's exit code."""
    for attempt in range(1, BOOT_TRIES + 1):
        for path in (status_file, started_file):
            if os.path.exists(path):
                os.unlink(path)
        for path, size_mb in images:
            _make_nvme(path, size_mb)
        start = time.monotonic()
        _, (vng_rc, timed_out) = _run_child(argv, args.timeout, env=vng_env(), cwd=REPO)
        took = time.monotonic() - start

        status = None
        try:
            with open(status_file, encoding="utf-8") as f:
                txt = f.read().strip()
            if txt.isdigit():
                status = int(txt)
        except OSError:
            pass
        if status is not None or timed_out or os.path.exists(started_file):
            break
        if attempt < BOOT_TRIES:
            fault = None if use_kvm else emufault.stale_int3(_tail(console_log, 2000))
            log(f"the guest died during boot, before the command started "
                f"(boot {attempt} of {BOOT_TRIES}, vng exit {vng_rc}); booting again"
                + (f"; the emulator's int3: {fault['why']}" if fault else ""))
            _show_console(console_log)
    return status, timed_out, took, vng_rc


def _show_console(path):
    # "Invalid ELF header magic" x6 on 6.12: virtme-ng's initramfs insmods
    # Debian's .ko.xz without decompressing them (harmless: it falls back)
    lines = [l for l in _tail(path, 60) if "Invalid ELF header magic" not in l][-40:]
    if lines:
        log(f"last kernel console lines ({path}):")
        for line in lines:
            print("  " + line, file=sys.stderr)
        sys.stderr.flush()


# --------------------------------------------------------------------------
# --native


def run_native(args, cmd):
    if os.geteuid() != 0:
        raise VmError("--native needs root")
    if not os.path.exists("/proc/modules"):
        raise VmError("--native: this kernel cannot load modules (no /proc/modules)")
    res = subprocess.run(
        ["modprobe", "dm-mod"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, check=False, stdin=subprocess.DEVNULL,
    )
    if res.returncode != 0:
        raise VmError(f"--native: 'modprobe dm-mod' failed: {res.stdout.strip()}")
    defaults = _parser().parse_args([])
    for opt in ("kernel", "cpus", "memory", "icount", "kvm"):
        if getattr(args, opt) != getattr(defaults, opt):
            log(f"--native: ignoring --{opt}")
    if args.nvme or args.nvme_4k:
        log("--native: no emulated NVMe; PCM_NVME and PCM_NVME_4K are empty")
    if not args.no_deps:
        install_deps(native=True)
    rel = os.uname().release
    ko = module_path(rel) if args.no_build else build_module(rel)
    rwdir = os.path.abspath(args.rwdir)
    os.makedirs(rwdir, exist_ok=True)
    env = dict(os.environ)
    env.update(_guest_env(args, rel, ko, rwdir, "", native=True))
    log(f"native, {rel}")
    argv = [os.path.join(TOOLS, "vm-guest-init")] + cmd
    _, (rc, timed_out) = _run_child(argv, args.timeout, env=env, relay=False)
    if timed_out:
        log(f"timeout: killed the command after {args.timeout} s")
        return EXIT_TIMEOUT
    return rc if rc >= 0 else 128 - rc


# --------------------------------------------------------------------------
# Command line


def _parser():
    p = argparse.ArgumentParser(
        prog=_PROG,
        usage="%(prog)s [options] -- CMD [ARGS...]",
        description=(
            "Boot a Debian kernel in QEMU with virtme-ng (host root shared "
            "read-only), load dm-mod, dm-bufio, bch and the freshly built "
            "dm-pcm.ko, run CMD as root and exit with its status.  CMD sees "
            "PCM_ROOT, PCM_KO, PCM_KVER, PCM_RWDIR, PCM_NVME, PCM_NVME_4K (and PCM_* / CI "
            "from the caller).  Exit 124: timeout; 125: the VM or the "
            "preparation failed."
        ),
    )
    p.add_argument("--kernel", "-k", default=os.environ.get("PCM_KERNEL", "6.12"),
                   help="alias (6.1, 6.12) or release; default 6.12")
    p.add_argument("--native", action="store_true",
                   help="no VM: run on this host (root, module-capable kernel)")
    p.add_argument("--cpus", "-p", type=int, default=None,
                   help="vCPUs (default 2; 1 with --icount)")
    p.add_argument("--memory", "-m", default="2G", help="guest memory (default 2G)")
    p.add_argument("--icount", action="store_true",
                   help="benchmark mode: TCG, -icount shift=0,sleep=off, 1 vCPU "
                        "unless --cpus (then run round-robin on one host thread)")
    p.add_argument("--nvme", type=int, default=0, metavar="SIZE_MB",
                   help="attach a fresh sparse image (in build/vm/run-*/) as an NVMe "
                        "namespace of 512-byte blocks, $PCM_NVME (/dev/nvme0n1)")
    p.add_argument("--nvme-4k", type=int, default=0, metavar="SIZE_MB",
                   help="and one of 4 KiB logical blocks on the same controller, "
                        "$PCM_NVME_4K (namespace 2)")
    p.add_argument("--rwdir", default=os.path.join(BUILD, "results"),
                   help="results directory writable by the guest (default build/results)")
    p.add_argument("--kvm", choices=("auto", "on", "off"),
                   default=os.environ.get("PCM_KVM", "auto"),
                   help="auto: probe once per machine, cache in /var/cache/dm-pcm/kvm-ok "
                   "(build/.kvm-ok where that is not writable; default; env PCM_KVM)")
    p.add_argument("--queue", metavar="DIR",
                   help="a directory the guest may write, shared with other VMs: "
                   "tests/vm/run claims each test there before running it ($PCM_QUEUE)")
    p.add_argument("--no-build", action="store_true", help="do not build the module")
    p.add_argument("--no-deps", action="store_true", help="do not run tools/install-deps")
    p.add_argument("--no-insmod", action="store_true", help="do not insmod dm-pcm.ko")
    p.add_argument("--udev", action="store_true",
                   default=os.environ.get("PCM_KEEP_UDEV") == "1",
                   help="start udevd in the guest (default: not; PCM_KEEP_UDEV=1)")
    p.add_argument("--env", "-e", action="append", default=[], metavar="NAME=VALUE",
                   help="extra environment for CMD (repeatable)")
    p.add_argument("--timeout", type=int, default=3000,
                   help="kill the VM after SEC seconds and exit 124 (default 3000)")
    p.add_argument("--keep", action="store_true",
                   help="keep build/vm/run-*/ (guest script, console log)")
    p.add_argument("--verbose", "-v", action="store_true", help="show the vng command line")
    return p


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:
        i = argv.index("--")
        opts, cmd = argv[:i], argv[i + 1:]
    else:
        opts, cmd = argv, []
    p = _parser()
    args = p.parse_args(opts)
    if not cmd:
        p.error("no command: use  vm-run [options] -- CMD [ARGS...]")
    if args.cpus is not None and args.cpus < 1:
        p.error("--cpus must be >= 1")
    if args.nvme < 0 or args.nvme_4k < 0:
        p.error("--nvme and --nvme-4k must be >= 0")
    if args.timeout <= 0:
        p.error("--timeout must be > 0")
    _install_signal_handlers()
    try:
        if args.native:
            return run_native(args, cmd)
        return run_vm(args, cmd)
    except VmError as e:
        log(str(e))
        return EXIT_INFRA


# --------------------------------------------------------------------------
# For the tools that run a guest part of their own (demo, pcm-bench, soak)


def tool_args(ap, tool):
    """The options tools/demo, tools/pcm-bench and tools/soak share: where
    their guest part runs, and where their results go (build/TOOL)."""
    ap.add_argument("--native", action="store_true",
                    help="run on this host, no VM (root, a kernel that can load modules)")
    ap.add_argument("--kernel", default="6.12", help="guest kernel (default 6.12)")
    ap.add_argument("--outdir", default=os.path.join(BUILD, tool),
                    help=f"where the results go (default build/{tool})")
    ap.add_argument("--no-build", action="store_true",
                    help="use the dm-pcm.ko already built (a read-only tree: the VM suite)")


def tool_vm_run(args, outdir, vm_opts=()):
    """The tools/vm-run command line for tool_args' options: the VM (with
    vm_opts) or --native, results written to outdir."""
    cmd = [os.path.join(TOOLS, "vm-run"), "--rwdir", outdir]
    cmd += ["--no-build"] if args.no_build else []
    cmd += ["--native"] if args.native else ["--kernel", args.kernel] + list(vm_opts)
    return cmd


PROGRESS = re.compile(r'^# (\d+)/(\d+): ')


def call_with_progress(cmd, start=None):
    """Run @cmd (a tool's VM or native run), its output passed through;
    each characterization progress line ("# N/M: ...") gets the host's
    elapsed time and an estimate of what is left (the guest's clock,
    under icount, says nothing of the host's).  The exit status."""
    start = time.monotonic() if start is None else start
    first = None
    with subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True,
                          bufsize=1) as p:
        for line in p.stdout:
            m = PROGRESS.match(line)
            if m:
                now = time.monotonic()
                done, total = int(m.group(1)) - 1, int(m.group(2))
                first = now if first is None else first
                line = line.rstrip('\n') + f' [host {now - start:.0f} s'
                if done:   # the points' own pace, not the boot's
                    line += f', about {(now - first) / done * (total - done):.0f} s left'
                line += ']\n'
            sys.stdout.write(line)
            sys.stdout.flush()
    return p.returncode
