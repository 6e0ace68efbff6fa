# SPDX-License-Identifier: GPL-2.0-only
#
# dm-pcm top-level Makefile.  Everything a newcomer needs is one of:
#   make demo      make check      make bench      make lint      make soak
# Each target installs what it is missing (tools/install-deps) first.
# make check runs the unit tests, lint, every VM test on 6.12 and the
# compatibility tier (tests/vm/tiers) on 6.1, heavy loops at PCM_SCALE=25;
# budget: 35 min with warm caches, 70 on a fresh machine (tests/README.md,
# "Test budget").  The debug kernel's tests are not in it (a boot and two
# tests there were 11-14 min of its 52 at 6ecc102): make check DEBUG=1
# adds a named subset (tools/check DEBUG_SUBSET) on a KASAN/lockdep/
# kmemleak/UBSAN 6.12 kernel that tools/debug-kernel builds once (~40 min
# on 2 cores, beside the other stages), and make check says whether that
# subset passed there with the code as it is (the ledger below).
# make check-full runs every VM test on both kernels at full size, and the
# debug subset; make check-debug the whole VM suite on the debug kernel;
# make check-rt the ECC tests on its PREEMPT_RT variant (RT_TESTS).
# make install / make uninstall put dm-pcm.ko in /lib/modules/KVER/updates
# (then depmod) and pcmctl in BINDIR; make dkms-install / make dkms-remove
# do it through DKMS, for every kernel installed later too; make
# kernel-patch KSRC=<linux tree> writes the patch that adds dm-pcm to a
# kernel tree as drivers/md/dm-pcm/ (tools/README.md, "On a real host").
# make soak runs a mixed workload (fio verify, ext4, message storms,
# suspend/resume, reloads) for SOAK_MINUTES (default 10) in a 6.12 VM and
# prints PASS or FAIL; results in build/soak/summary.json.
#
# Variables:
#   KVER    kernel release to build for (default: running kernel if its
#           headers are installed, else the newest installed headers)
#   KDIR    kernel build tree (default: /lib/modules/$(KVER)/build)
#   NATIVE  1 = run tests/demo/bench on this host instead of a VM (root,
#           a kernel that can load modules)
#   KERNELS kernels the VM suite runs on (default: 6.1 6.12)
#   DEBUG   1 = make check also runs the debug kernel's subset (DEBUG_SUBSET);
#           0 = make check-full leaves it out
#   DEBUG_TESTS  check-debug: VM tests whose names contain one of these words
#           (default: all of them)
#   RESUME  1 = check-debug skips the tests that already passed on the debug
#           kernel with the code as it is now (a ledger in /var/cache/dm-pcm)
#   SOAK_MINUTES  length of make soak (default 10)
#   DEMO_ARGS, BENCH_ARGS, SOAK_ARGS  more arguments for tools/demo,
#           tools/pcm-bench (default: passthrough), tools/soak; e.g.
#           BENCH_ARGS=ecc: issue 16's ECC acceptance (dm-pcm ecc:bch with
#           the pss layout vs dm-linear vs dm-integrity, 4 KiB QD1/QD32)
#   PREFIX, BINDIR, LIBDIR, DESTDIR  where make install puts pcmctl
#           (default /usr/local, PREFIX/bin, PREFIX/lib) and under which root
#           it puts everything (default /; then depmod is left to the target)
#   KSRC    make kernel-patch: the kernel tree the patch is made against
#   KPATCH  make kernel-patch: the file it writes (build/dm-pcm-VERSION.patch)
#   PCM_SCALE  percent of their full size the VM tests' heavy loops run at
#           (make check: 25; make check-full and make soak: 100)

SHELL := /bin/bash
TOP := $(abspath .)

running_kver := $(shell uname -r)
# (not the debug kernel: its 6.12.NNN-pcmdebug-* sorts after 6.12.NNN+deb12)
newest_kver = $(shell ls -d /lib/modules/*/build 2>/dev/null | grep -v -- -pcmdebug- | sort -V | tail -n1 | cut -d/ -f4)
KVER ?= $(if $(wildcard /lib/modules/$(running_kver)/build),$(running_kver),$(newest_kver))
KDIR ?= /lib/modules/$(KVER)/build
KERNELS ?= 6.1 6.12
NATIVE ?= 0

BUILD := $(TOP)/build/$(KVER)
MODSRC := $(wildcard dm-pcm/*.c dm-pcm/*.h) dm-pcm/Kbuild

.PHONY: all module module-bare modules-all tools deps unit lint check check-full check-debug check-rt demo bench \
	soak clean help install uninstall dkms-install dkms-remove kernel-patch

all: module

help:
	@sed -n '2,/^$$/p' Makefile

# Out-of-tree build in build/$(KVER)/dm-pcm: the sources are symlinked, so
# one checkout builds for several kernels side by side (6.1's kbuild has no
# separate output directory for external modules).
module: $(MODSRC)
	@test -d "$(KDIR)" || { echo "no kernel build tree at $(KDIR): run 'make deps' or set KDIR" >&2; exit 1; }
	@mkdir -p "$(BUILD)/dm-pcm"
	@for f in $(MODSRC); do ln -sfn "$(TOP)/$$f" "$(BUILD)/dm-pcm/$$(basename $$f)"; done
	$(MAKE) -C "$(KDIR)" M="$(BUILD)/dm-pcm" CONFIG_DM_PCM=m W=1 modules
	@echo "built $(BUILD)/dm-pcm/dm-pcm.ko"

# The same module with its counters and tracepoints compiled out
# (PCM_COUNTERS=0, NOTRACE), as dm-pcm-bare.ko with target "pcm_bare", in
# build/$(KVER)/dm-pcm-bare: pcm-bench counters loads it beside dm-pcm.ko
# and measures what they cost, both in the same boot.
module-bare: $(MODSRC)
	@test -d "$(KDIR)" || { echo "no kernel build tree at $(KDIR): run 'make deps' or set KDIR" >&2; exit 1; }
	@mkdir -p "$(BUILD)/dm-pcm-bare"
	@for f in $(filter-out dm-pcm/Kbuild,$(MODSRC)); do ln -sfn "$(TOP)/$$f" "$(BUILD)/dm-pcm-bare/$$(basename $$f)"; done
	@{ sed -e 's/^dm-pcm-y/dm-pcm-bare-y/' -e 's/^obj-$$(CONFIG_DM_PCM).*/obj-m += dm-pcm-bare.o/' dm-pcm/Kbuild; \
	  echo 'ccflags-y += -DNOTRACE -DPCM_COUNTERS=0 -DPCM_TARGET_NAME=\"pcm_bare\"'; } \
	  > "$(BUILD)/dm-pcm-bare/Kbuild.new"
	@cmp -s "$(BUILD)/dm-pcm-bare/Kbuild.new" "$(BUILD)/dm-pcm-bare/Kbuild" || mv "$(BUILD)/dm-pcm-bare/Kbuild.new" "$(BUILD)/dm-pcm-bare/Kbuild"
	@rm -f "$(BUILD)/dm-pcm-bare/Kbuild.new"
	$(MAKE) -C "$(KDIR)" M="$(BUILD)/dm-pcm-bare" W=1 modules
	@echo "built $(BUILD)/dm-pcm-bare/dm-pcm-bare.ko"

modules-all:
	@for k in $$(tools/kernels $(KERNELS)); do $(MAKE) --no-print-directory module KVER=$$k || exit 1; done

# build/host/libpcm.so: the module's arithmetic for tools/pcmctl (tools/Makefile);
# build/host/bdb-swap where BerkeleyDB's header is installed (pcm-bench app's
# bdb-swap program: a VM's guest sees the tree read-only, so it is built here)
tools:
	$(MAKE) -s -C tools libpcm
	@if [ -e /usr/include/db.h ]; then $(MAKE) -s -C tools bdb-swap >/dev/null; fi

deps:
	tools/install-deps

unit:
	$(MAKE) -C tests/host run

lint:
	tools/lint

# (a comma inside $(if ...) would end its "then" part)
comma := ,
with_debug = --build-debug --only unit$(comma)lint$(comma)vm$(comma)debug
check_args = $(if $(filter 1,$(NATIVE)),--native) --kernels "$(KERNELS)"
check:
	tools/check $(check_args) $(if $(filter 1,$(DEBUG)),$(with_debug))

check-full:
	tools/check --full $(check_args) $(if $(filter 0,$(DEBUG)),,$(with_debug))

# The debug kernel's release is the last line tools/debug-kernel prints.
check-debug:
	tools/check --only debug --build-debug --debug-tests "$(or $(DEBUG_TESTS),all)" \
		$(if $(filter 1,$(RESUME)),--debug-resume)

# The PREEMPT_RT variant of the debug kernel (tools/debug-kernel --rt:
# PREEMPT_RT and DEBUG_ATOMIC_SLEEP, built once, cached): the tests that
# decode rows in a 1-vCPU icount VM, where the clmul engine wins the
# constructor's race and codes inside kernel_fpu_begin(): a sleeping lock
# taken there is "BUG: sleeping function called from invalid context"
# (issue 45, item 5; tests/README.md, "PREEMPT_RT").
RT_TESTS ?= 30-ecc 38-error-paths
check-rt:
	rel=$$(tools/debug-kernel --rt | tail -n 1) && \
	tools/vm-run --kernel "$$rel" --icount --cpus 1 --memory 2G --nvme 128 -- tests/vm/run $(RT_TESTS)

demo:
	tools/demo $(if $(filter 1,$(NATIVE)),--native) $(DEMO_ARGS)

bench:
	tools/pcm-bench $(if $(filter 1,$(NATIVE)),--native) $(or $(BENCH_ARGS),passthrough)

soak:
	tools/soak $(if $(filter 1,$(NATIVE)),--native) --minutes $(or $(SOAK_MINUTES),10) $(SOAK_ARGS)

# ---- installing on a real host (tools/README.md, "On a real host") --------
# The release, dm-pcm.h's, as dkms.conf reads it.
VERSION := $(shell . ./dkms.conf && echo "$$PACKAGE_VERSION")
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/updates

# The module through kbuild's modules_install (compressed as the kernel's
# config says; unsigned, as DKMS without a MOK key: a distribution's
# signing key is not in its headers, and sign-file would only complain);
# pcmctl as PREFIX/lib/dm-pcm/ with the tools' package (pcmlib/) and its
# prebuilt library, linked from BINDIR.
install: module tools
	$(MAKE) -C "$(KDIR)" M="$(BUILD)/dm-pcm" INSTALL_MOD_PATH="$(DESTDIR)" \
		INSTALL_MOD_DIR=updates DEPMOD=true CONFIG_MODULE_SIG_ALL= modules_install
	$(if $(DESTDIR),@echo "DESTDIR set: run 'depmod $(KVER)' on the target",depmod $(KVER))
	install -d "$(DESTDIR)$(LIBDIR)/dm-pcm/pcmlib" "$(DESTDIR)$(BINDIR)"
	install -m 755 tools/pcmctl "$(DESTDIR)$(LIBDIR)/dm-pcm/pcmctl"
	install -m 644 build/host/libpcm.so "$(DESTDIR)$(LIBDIR)/dm-pcm/"
	install -m 644 tools/pcmlib/*.py "$(DESTDIR)$(LIBDIR)/dm-pcm/pcmlib/"
	ln -sfn "$(LIBDIR)/dm-pcm/pcmctl" "$(DESTDIR)$(BINDIR)/pcmctl"

uninstall:
	rm -f "$(MODDIR)"/dm-pcm.ko*
	$(if $(DESTDIR),,depmod $(KVER))
	rm -f "$(DESTDIR)$(BINDIR)/pcmctl"
	rm -rf "$(DESTDIR)$(LIBDIR)/dm-pcm"

# DKMS: a copy of only what the build needs in /usr/src/dm-pcm-VERSION
# (dkms add . would copy the whole checkout, build/ included); a version
# already added is removed first, so that the install is of this code.
DKMS_SRC = /usr/src/dm-pcm-$(VERSION)
dkms-install:
	@command -v dkms >/dev/null || { echo "dkms is not installed: run 'make deps'" >&2; exit 1; }
	@if dkms status dm-pcm/$(VERSION) | grep -q .; then \
		echo "dkms remove dm-pcm/$(VERSION) --all"; dkms remove dm-pcm/$(VERSION) --all || exit 1; fi
	rm -rf "$(DKMS_SRC)"
	install -d "$(DKMS_SRC)/dm-pcm"
	install -m 644 dkms.conf "$(DKMS_SRC)/"
	install -m 644 $(MODSRC) "$(DKMS_SRC)/dm-pcm/"
	dkms add dm-pcm/$(VERSION)
	dkms build dm-pcm/$(VERSION) -k $(KVER)
	dkms install dm-pcm/$(VERSION) -k $(KVER)

# every version DKMS has of dm-pcm, for every kernel, and its sources
dkms-remove:
	@command -v dkms >/dev/null || { echo "dkms is not installed" >&2; exit 1; }
	@for v in $$(dkms status dm-pcm | sed -n 's|^dm-pcm/\([^,:]*\).*|\1|p' | sort -u); do \
		echo "dkms remove dm-pcm/$$v --all"; dkms remove dm-pcm/$$v --all || exit 1; \
		echo "rm -rf /usr/src/dm-pcm-$$v"; rm -rf "/usr/src/dm-pcm-$$v"; done

# The patch that adds dm-pcm to KSRC as drivers/md/dm-pcm/ (tools/kernel-patch says
# what it holds); tools/intree-check (in make lint) builds it in
# linux-source-6.12.
KPATCH ?= build/dm-pcm-$(VERSION).patch
kernel-patch:
	@test -n "$(KSRC)" || { echo "usage: make kernel-patch KSRC=<linux tree> [KPATCH=file]" >&2; exit 1; }
	@mkdir -p "$(dir $(KPATCH))"
	tools/kernel-patch "$(KSRC)" "$(KPATCH)"
	@echo "wrote $(KPATCH): apply it with 'patch -p1 -d $(KSRC) < $(KPATCH)', then set CONFIG_DM_PCM"

clean:
	rm -rf build
	$(MAKE) -C tests/host clean
