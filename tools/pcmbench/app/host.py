# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench app on the host: run() checks the spec (with libpcm) before
any VM boots, then runs the guest's part (--guest) or the host's
(host_run: the cluster shared with the VM, the VM, the report)."""
import json
import os
import subprocess
import sys
import time

from pcmlib import vm
from pcmchar import spec as pspec
from ..common import TOP, VM_TIMEOUT
from .guest import AppGuest
from .postgres import missing_postgres, shared_template, template
from .report import finish, headline
from .spec import loads
from .verdict import FAILED

ENTRY = os.path.join(TOP, 'tools', 'pcm-bench')


def host_run(args, spec, text):
    from pcmchar import rundir
    kernel = os.uname().release if args.native else args.kernel
    base = os.path.join(os.path.abspath(args.outdir), 'app', f'{spec.name}-{kernel}')
    earlier = rundir.runs(base)
    run_dir = rundir.new(base)
    if earlier:
        print(f'pcm-bench: earlier runs kept: {", ".join(earlier)}', flush=True)
    os.environ.setdefault('MPLCONFIGDIR', os.path.join(os.path.dirname(run_dir), '.matplotlib'))
    spec_copy = os.path.join(run_dir, 'spec.toml')
    with open(spec_copy, 'w', encoding='utf-8') as fh:
        fh.write(text)
    cluster = template() if not spec.work else None
    if cluster and not args.native:
        # a VM's /var/cache is its own tmpfs (virtme-ng's init): the guest
        # finds the cluster beside the run's directory, over 9p
        seen = shared_template(run_dir, cluster)
        subprocess.run(['rm', '-rf', seen], check=True)
        subprocess.run(['cp', '-a', cluster, seen], check=True)
        cluster = seen
    if not spec.work:
        print(f'pcm-bench: the cluster: {cluster or "initdb in the guest"}', flush=True)
    icount = not args.no_icount
    # the ramdisk, and the guest's own 2 GiB beside it (the server's
    # cache is the cgroup's, where the spec sets memory)
    mem = max(2048, (spec.ramdisk >> 20) + 1024)
    vm_opts = ['--cpus', str(args.cpus), '--memory', f'{mem}M', '--timeout', str(VM_TIMEOUT)]
    vm_opts += ['--icount'] if icount else []
    inner = [ENTRY, '--guest', '--run-dir', run_dir, 'app', spec_copy]
    inner += ['--short'] if args.short else []
    print(f'pcm-bench: {spec.describe()} on {len(spec.devices())} devices '
          f'({", ".join(spec.devices())}); dilation {spec.dilation}; results in {run_dir}',
          flush=True)
    start = time.monotonic()
    rc = vm.call_with_progress(vm.tool_vm_run(args, os.path.dirname(run_dir), vm_opts) +
                               ['--'] + inner, start)
    if rc or not os.path.exists(os.path.join(run_dir, 'run.json')):
        print(f'pcm-bench: the app run failed (exit {rc}): no {run_dir}/run.json',
              file=sys.stderr)
        return 1
    path, rs, run, png = finish(spec, run_dir, draw_figs=args.figures,
                                icount=icount and not args.native,
                                host_wall_s=time.monotonic() - start)
    if spec.work:
        from .. import appwork
        print(appwork.headline(rs, run))
    else:
        print(headline(rs, run))
    print(f'report: {path}')
    print(f'table: {os.path.join(run_dir, "app-table.csv")}, .json')
    if png:
        print(f'figure: {png[0]}')
    rc = 0
    bad = [r['device'] for r in rs if r['fsck_rc'] or not r['removed']]
    if bad:
        print(f'pcm-bench: fsck not clean or device left on: {", ".join(bad)}', file=sys.stderr)
        rc = 1
    failed = [r['device'] for r in rs if r['verdict'] == FAILED]
    if failed and spec.work:
        print(f'pcm-bench: {spec.work.name} failed or completed nothing on '
              f'{", ".join(dict.fromkeys(failed))} (logs/dK-N.txt, .err, dK-dmesg.txt)',
              file=sys.stderr)
        rc = 1
    elif failed:
        print(f'pcm-bench: no transaction completed on {", ".join(failed)}: their runs '
              f'failed (logs/dK-pgbench.txt, dK-server.log, dK-dmesg.txt)', file=sys.stderr)
        rc = 1
    return rc


def run(args, ap):
    """app SPEC: the spec checked on the host (libpcm too) before any VM
    boots; then the guest's part (--guest) or the host's."""
    from pcmbench import characterize
    if not args.spec:
        ap.error('app needs a SPEC file (e.g. tools/app/pgbench.toml)')
    name = os.path.splitext(os.path.basename(args.spec))[0]
    try:
        with open(args.spec, encoding='utf-8') as fh:
            text = fh.read()
        if not args.guest:
            text = pspec.override_text(text, **characterize.run_clock(args, text))
        spec = loads(text, name, tables=not args.guest, short=args.short)
    except OSError as e:
        ap.error(f'{args.spec}: {e.strerror}')
    except pspec.SpecError as e:
        ap.error(f'{args.spec}: {e}')
    if spec.program == 'bdb-swap' and not args.guest:
        # built (or found up to date) here, before the VM boots: the guest
        # sees the tree read-only
        subprocess.run(['make', '-s', '-C', os.path.join(TOP, 'tools'), 'bdb-swap'],
                       stdout=subprocess.DEVNULL, check=False)
    why = spec.work.missing() if spec.work else missing_postgres()
    if why:
        ap.error(why)
    if args.guest:
        info = AppGuest(spec, args.run_dir, log=lambda m: print(m, flush=True)).run()
        with open(os.path.join(args.run_dir, 'run.json'), 'w', encoding='utf-8') as fh:
            json.dump(info, fh, indent=1)
        return 0
    return host_run(args, spec, text)
