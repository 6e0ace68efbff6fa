#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""make install / make uninstall under a DESTDIR, and make kernel-patch.

make install DESTDIR=... PREFIX=/usr must put dm-pcm.ko where the README
says (/lib/modules/<release>/updates, compressed as the kernel's config
says), with dm-pcm.h's version, and pcmctl in PREFIX/lib/dm-pcm linked
from PREFIX/bin; the installed pcmctl must run without the checkout;
make uninstall with the same variables removes all of it.  make
kernel-patch on a copy of a kernel tree's three files it edits must add
what the README lists, refuse a tree that already has dm-pcm and a
directory that is no kernel tree, and write nothing then.  (The patch
applied to the whole of linux-source-6.12 and built there is
tools/intree-check's, in make lint; the DKMS path is tests/vm/28-dkms.)
Prints TAP.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, 'tools'))
from pcmlib.tap import done, result  # noqa: E402 (sys.path set first)


def run(argv, **kw):
    res = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         stdin=subprocess.DEVNULL, **kw)
    return res.returncode, res.stdout


def version():
    return run(['bash', '-c', f'. {TOP}/dkms.conf && echo "$PACKAGE_VERSION"'])[1].strip()


def test_install(stage):
    ver = version()
    result(ver.count('.') == 2 and ver.replace('.', '').isdigit(),
           f'dkms.conf reads the version from dm-pcm.h: {ver!r}')
    make = ['make', '-s', '-C', TOP, f'DESTDIR={stage}', 'PREFIX=/usr']
    rc, out = run(make + ['install'])
    result(rc == 0, 'make install DESTDIR=... PREFIX=/usr exits 0', out)
    kos = glob.glob(f'{stage}/lib/modules/*/updates/dm-pcm.ko*')
    result(len(kos) == 1, f'dm-pcm.ko in /lib/modules/<release>/updates: {kos}', out)
    if kos:
        rc, got = run(['modinfo', '-F', 'version', kos[0]])
        result(got.strip() == ver, f'its version is {ver}', got)
    lib = f'{stage}/usr/lib/dm-pcm'
    have = sorted(os.listdir(lib)) if os.path.isdir(lib) else []
    result(have == ['libpcm.so', 'pcmctl', 'pcmlib'],
           f'PREFIX/lib/dm-pcm holds pcmctl, pcmlib/, libpcm.so: {have}')
    pkg = sorted(os.listdir(f'{lib}/pcmlib')) if os.path.isdir(f'{lib}/pcmlib') else []
    want = sorted(f for f in os.listdir(os.path.join(TOP, 'tools', 'pcmlib')) if f.endswith('.py'))
    result(pkg == want and '__init__.py' in pkg,
           f'PREFIX/lib/dm-pcm/pcmlib holds the package tools/pcmlib: {pkg}')
    link = f'{stage}/usr/bin/pcmctl'
    result(os.path.islink(link) and os.readlink(link) == '/usr/lib/dm-pcm/pcmctl',
           'PREFIX/bin/pcmctl links to PREFIX/lib/dm-pcm/pcmctl',
           os.readlink(link) if os.path.islink(link) else 'no link')
    # the installed copy, moved away from the checkout, runs on its own
    away = tempfile.mkdtemp(prefix='pcmctl-')
    try:
        shutil.copytree(lib, f'{away}/dm-pcm')
        os.symlink(f'{away}/dm-pcm/pcmctl', f'{away}/pcmctl')
        rc, out = run([f'{away}/pcmctl', 'model', '--ios', '100', 'preset:onyx'], cwd=away)
        result(rc == 0 and 'read: IOPS' in out, 'the installed pcmctl runs without the checkout', out)
        # with its own libpcm.so broken it must fail (not build or borrow one)
        open(f'{away}/dm-pcm/libpcm.so', 'w').close()
        rc, out = run([f'{away}/pcmctl', 'model', '--ios', '100', 'preset:onyx'], cwd=away)
        result(rc != 0 and 'libpcm.so' in out, 'and it uses its own libpcm.so', out)
    finally:
        shutil.rmtree(away)
    rc, out = run(make + ['uninstall'])
    left = [os.path.relpath(os.path.join(d, f), stage)
            for d, _, files in os.walk(stage) for f in files] + \
        [p for p in [link] if os.path.lexists(p)]
    result(rc == 0 and not left, 'make uninstall with the same variables removes them', f'{out}\nleft: {left}')


def test_kernel_patch(scratch):
    ksrc = os.environ.get('PCM_KSRC') or \
        run([f'{TOP}/tools/linux-source'])[1].strip().splitlines()[-1]
    tree = f'{scratch}/linux'
    for f in ('drivers/md/Kconfig', 'drivers/md/Makefile',
              'Documentation/admin-guide/device-mapper/index.rst'):
        os.makedirs(os.path.dirname(f'{tree}/{f}'), exist_ok=True)
        shutil.copy(f'{ksrc}/{f}', f'{tree}/{f}')
    out_patch = f'{scratch}/dm-pcm.patch'
    rc, out = run(['make', '-s', '-C', TOP, 'kernel-patch', f'KSRC={tree}', f'KPATCH={out_patch}'])
    result(rc == 0 and os.path.exists(out_patch), 'make kernel-patch KSRC=... KPATCH=... exits 0', out)
    rc, out = run(['patch', '-p1', '-s', '-f', '-d', tree, '-i', out_patch])
    result(rc == 0, 'the patch applies to the tree it was made from', out)
    srcs = sorted(os.path.basename(f) for f in glob.glob(f'{TOP}/dm-pcm/*.[ch]'))
    sub = f'{tree}/drivers/md/dm-pcm'
    added = sorted(f for f in os.listdir(sub) if f.endswith(('.c', '.h'))) if os.path.isdir(sub) else []
    result(added == srcs, f'it adds the {len(srcs)} sources to drivers/md/dm-pcm/', f'{added}')
    same = all(open(f'{TOP}/dm-pcm/{f}', 'rb').read() == open(f'{sub}/{f}', 'rb').read()
               for f in srcs if f in added)
    result(same, 'unchanged')
    result(not glob.glob(f'{tree}/drivers/md/*.[ch]'), 'none of them in drivers/md/ itself')
    kconfig = open(f'{tree}/drivers/md/Kconfig').read()
    entry = open(f'{TOP}/Kconfig').read()
    entry = entry[entry.index('config DM_PCM'):]
    result(entry + '\nendif # MD' in kconfig, "./Kconfig's DM_PCM entry ends drivers/md/Kconfig's MD menu")
    result(os.path.exists(f'{sub}/Makefile') and
           open(f'{sub}/Makefile', 'rb').read() == open(f'{TOP}/dm-pcm/Kbuild', 'rb').read(),
           'dm-pcm/Kbuild is drivers/md/dm-pcm/Makefile, unchanged')
    hook = open(f'{tree}/drivers/md/Makefile').read().rstrip('\n').splitlines()[-1]
    result(hook.split() == ['obj-$(CONFIG_DM_PCM)', '+=', 'dm-pcm/'],
           'drivers/md/Makefile ends with its hook, obj-$(CONFIG_DM_PCM) += dm-pcm/', hook)
    doc = 'Documentation/admin-guide/device-mapper'
    index = [l.strip() for l in open(f'{tree}/{doc}/index.rst') if l.startswith('    ') and l.strip()]
    toc = [e for e in index if not e.startswith(':')]
    i = toc.index('dm-pcm') if 'dm-pcm' in toc else 0
    result(os.path.exists(f'{tree}/{doc}/dm-pcm.rst') and 0 < i < len(toc) - 1 and
           toc[i - 1] < 'dm-pcm' < toc[i + 1],
           f'the .rst is added, its index line between {toc[i - 1]} and {toc[i + 1]}', '\n'.join(toc))
    os.unlink(out_patch)
    rc, out = run(['make', '-s', '-C', TOP, 'kernel-patch', f'KSRC={tree}', f'KPATCH={out_patch}'])
    result(rc != 0 and 'already has dm-pcm' in out and not os.path.exists(out_patch),
           'a tree that has dm-pcm is refused, nothing written', out)
    rc, out = run(['make', '-s', '-C', TOP, 'kernel-patch', f'KSRC={scratch}', f'KPATCH={out_patch}'])
    result(rc != 0 and 'not a kernel tree' in out and not os.path.exists(out_patch),
           'a directory that is no kernel tree is refused, nothing written', out)


def main():
    scratch = tempfile.mkdtemp(prefix='test-install-')
    try:
        os.makedirs(f'{scratch}/stage')
        test_install(f'{scratch}/stage')
        test_kernel_patch(scratch)
    finally:
        shutil.rmtree(scratch)
    return done()


if __name__ == '__main__':
    sys.exit(main())
