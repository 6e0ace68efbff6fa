#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The README's real-host install through DKMS, as a user runs it: make
# dkms-install builds and installs dm-pcm.ko for the running kernel,
# depmod knows it and its dependencies, 'modprobe dm-pcm' loads it (and
# them), a device works, 'modprobe -r' unloads it; the kernel-install hook
# (/etc/kernel/postinst.d/dkms, what installing a kernel package runs)
# builds it for the other installed kernel; make dkms-remove leaves nothing.
# The guest sees the host's root read-only: /lib/modules, /usr/src and
# /var/lib/dkms get a tmpfs overlay for the test's length, so that DKMS
# and depmod write where they always do.
# shellcheck disable=SC2317 # helpers run through expect, trap or wait_for, which shellcheck cannot follow
. "$(dirname "$0")/lib/lib.sh"

command -v dkms >/dev/null || skip_all "dkms not installed (tools/install-deps installs it)"
# Measured on 2 cores under TCG (other VMs beside it): make dkms-install
# 890 s, the whole test 1,525 s and 13.5 CPU-minutes of QEMU, most of it
# gcc and depmod -a (4,000 compressed modules) run twice.  Too much for
# make check's budget: make check-full runs it.
[ "$PCM_SCALE" -ge 100 ] ||
	skip_all "a module build and two depmod -a in the guest, ~7-13 min under TCG: make check-full runs it"
kver=$(uname -r)
ver=$(set +u; . "$PCM_ROOT/dkms.conf" && echo "$PACKAGE_VERSION")
# shellcheck disable=SC2012 # ls -d of kernel directories: plain names
other=$(ls -d /lib/modules/*/build 2>/dev/null | cut -d/ -f4 | grep -vxF "$kver" | grep -v -- -pcmdebug- | sort -V | head -n1)

ovl=/tmp/dkms-overlay
dirs=(/lib/modules /usr/src /var/lib/dkms)
undo() {
	local d
	cleanup_all	# lib.sh's own EXIT trap, which this one replaces
	for d in "${dirs[@]}"; do
		mountpoint -q "$d" && umount "$d"
	done
	mountpoint -q "$ovl" && umount "$ovl"
	# as vm-guest-init left them for the next test (modprobe -r dm-pcm
	# took dm-mod with it)
	modprobe -a dm-mod dm-bufio bch
	[ -e /sys/module/dm_pcm ] || insmod "$PCM_KO"
}
trap undo EXIT
cleanup_all
rmmod dm_pcm || skip_all "dm_pcm is in use"
# shellcheck disable=SC2015 # skip if either fails
mkdir -p $ovl && mount -t tmpfs dkms-overlay $ovl || skip_all "cannot mount a tmpfs"
i=0
for d in "${dirs[@]}"; do
	mkdir -p $ovl/u$i $ovl/w$i
	mount -t overlay overlay -o lowerdir="$d",upperdir=$ovl/u$i,workdir=$ovl/w$i "$d" ||
		skip_all "cannot put an overlay on $d"
	i=$((i + 1))
done
note "overlays: $(for d in "${dirs[@]}"; do findmnt -n -o TARGET,FSTYPE --mountpoint "$d"; done | tr '\n' ' ')"
expect_eq "nothing of dm-pcm installed before" \
	"$(dkms status dm-pcm; ls /lib/modules/*/updates/dkms/dm-pcm.ko* 2>/dev/null)" ""

start=$SECONDS
make -C "$PCM_ROOT" -s dkms-install > /tmp/dkms.out 2>&1
rc=$?
sed 's/^/# /' /tmp/dkms.out | tail -40
expect_eq "make dkms-install exits 0 ($((SECONDS - start)) s)" "$rc" 0
note "dkms status: $(dkms status dm-pcm)"
expect_eq "dkms status: installed for $kver" \
	"$(dkms status dm-pcm | grep -cF "dm-pcm/$ver, $kver, x86_64: installed")" 1
path=$(modinfo -n dm-pcm 2>&1)
expect "modinfo dm-pcm finds the DKMS module in updates/dkms ($path)" \
	bash -c "[[ '$path' == /lib/modules/$kver/updates/dkms/dm-pcm.ko* ]]"
expect_eq "its version is dm-pcm.h's ($ver)" "$(modinfo -F version dm-pcm)" "$ver"
expect_eq "its vermagic is the running kernel's" "$(modinfo -F vermagic dm-pcm | cut -d' ' -f1)" "$kver"
deps=$(modinfo -F depends dm-pcm)
note "depends: $deps; modules.dep: $(grep -F "updates/dkms/dm-pcm.ko" /lib/modules/"$kver"/modules.dep)"
expect "it depends on dm-mod" bash -c "[[ ,$deps, == *,dm-mod,* ]]"
expect "depmod listed it with dm-mod in modules.dep" \
	grep -qE "^updates/dkms/dm-pcm\.ko[^:]*:.*kernel/drivers/md/dm-mod\.ko" /lib/modules/"$kver"/modules.dep

# modprobe loads what depends names: unload those first (vm-guest-init
# loaded them), so that it is modprobe that loads them again
modprobe -r dm-bufio bch dm-mod 2>/dev/null
expect "dm-mod unloaded before modprobe" test ! -e /sys/module/dm_mod
expect "modprobe dm-pcm" modprobe dm-pcm
for m in dm_pcm ${deps//,/ }; do
	expect "$m loaded" test -e "/sys/module/${m//-/_}"
done
expect_eq "the loaded dm_pcm is DKMS's version" "$(cat /sys/module/dm_pcm/version 2>&1)" "$ver"
expect_eq "dmsetup targets lists pcm v$ver" "$(dmsetup targets | awk '$1 == "pcm" {print $2}')" "v$ver"

brd_load 16 || skip_all "brd not available"
expect "a pcm device over a ramdisk" pcm_create dkms0 /dev/ram0
expect "data written through it reads back" \
	bash -c 'head -c 1M /dev/urandom > /tmp/a && dd if=/tmp/a of=/dev/mapper/dkms0 bs=1M oflag=direct status=none &&
		 cmp <(head -c 1M /dev/mapper/dkms0) /tmp/a'
expect "remove it" dmsetup remove dkms0
expect "modprobe -r dm-pcm" modprobe -r dm-pcm
expect "dm_pcm unloaded" test ! -e /sys/module/dm_pcm
# the dm core asks for "dm-pcm" itself when a table names the pcm target
expect "dmsetup create loads dm-pcm by itself" pcm_create dkms0 /dev/ram0
expect_eq "from updates/dkms" "$(modinfo -F filename dm-pcm | cut -d/ -f5,6)" updates/dkms
expect "and it goes again" bash -c 'dmsetup remove dkms0 && modprobe -r dm-pcm'
rmmod brd

# a kernel installed later: its package's hook builds dm-pcm for it
if [ -n "$other" ]; then
	start=$SECONDS
	/etc/kernel/postinst.d/dkms "$other" > /tmp/dkms-other.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/dkms-other.out | tail -20
	expect_eq "the kernel-install hook for $other exits 0 ($((SECONDS - start)) s)" "$rc" 0
	expect_eq "dkms status: installed for $other" \
		"$(dkms status dm-pcm | grep -cF "dm-pcm/$ver, $other, x86_64: installed")" 1
	ko=$(ls /lib/modules/"$other"/updates/dkms/dm-pcm.ko* 2>/dev/null)
	expect_eq "its module's vermagic is $other's" "$(modinfo -F vermagic "$ko" 2>&1 | cut -d' ' -f1)" "$other"
	expect "depmod listed it for $other" grep -q "^updates/dkms/dm-pcm\.ko" /lib/modules/"$other"/modules.dep
else
	skip "no other kernel's headers: the kernel-install hook is not run"
fi

make -C "$PCM_ROOT" -s dkms-remove > /tmp/dkms.out 2>&1
rc=$?
sed 's/^/# /' /tmp/dkms.out
expect_eq "make dkms-remove exits 0" "$rc" 0
expect_eq "dkms status is empty" "$(dkms status dm-pcm)" ""
expect_eq "no dm-pcm.ko under /lib/modules/*/updates" \
	"$(ls /lib/modules/*/updates/dkms/dm-pcm.ko* /lib/modules/*/updates/dm-pcm.ko* 2>/dev/null)" ""
expect_eq "no DKMS tree, no /usr/src copy" "$(ls -d /var/lib/dkms/dm-pcm /usr/src/dm-pcm-* 2>/dev/null)" ""
expect_eq "modules.dep forgot it" "$(grep -l dm-pcm /lib/modules/*/modules.dep)" ""
expect_fail "modprobe dm-pcm fails" modprobe -q dm-pcm
finish
