# SPDX-License-Identifier: GPL-2.0-only
"""TAP for every Python test, as tap.h for the C ones and tests/vm/lib/lib.sh
(pass, fail, skip, expect) for the shell ones: the one Python printer of
TAP lines.  A case (a function) runs any number of checks and prints one
'ok N - name' line; a crash fails its case, not the run.  result() is a
case of one check, skip() one skipped.  done() prints the plan and
returns the exit code.

Used by tests/host/test-*.py and by tests/vm's Python (fuzz.py,
doc-examples.py, 21-failslab.sh's loop, the checks under one expect line
of 23-demo.sh, 37-app.sh, 40-app-kv.sh: check(..., shown=True) and
exit_code(), no plan of their own).  Only the standard library."""
import os
import traceback

cases = failed_cases = checks = case_failures = 0


def check(cond, msg, shown=False):
    """One check of the current case: a failure prints msg and fails the
    case; shown: a pass prints msg too (the values a VM test's checks
    print are its log)."""
    global checks, case_failures
    checks += 1
    if not cond:
        case_failures += 1
        print(f'#   check failed: {msg}', flush=True)
    elif shown:
        print(f'#   check ok: {msg}', flush=True)
    return cond


def run_case(fn):
    global cases, failed_cases, case_failures
    before, case_failures = checks, 0
    try:
        fn()
    except Exception:   # a crash fails the case, not the run
        check(False, 'exception:\n# ' + traceback.format_exc().replace('\n', '\n# '))
    cases += 1
    failed_cases += bool(case_failures)
    print(f"{'not ' if case_failures else ''}ok {cases} - {fn.__name__} "
          f'({checks - before} checks)', flush=True)


def result(ok, desc, detail=''):
    """A case of one check, named desc; a failure shows detail's last 20
    lines.  Returns ok."""
    global cases, failed_cases
    cases += 1
    failed_cases += not ok
    print(f'{"ok" if ok else "not ok"} {cases} - {desc}', flush=True)
    if not ok:
        for line in str(detail).splitlines()[-20:]:
            print(f'#   {line}')
    return ok


def skip(desc, why=''):
    """A case not run: 'ok N - desc # SKIP why'."""
    global cases
    cases += 1
    print(f'ok {cases} - {desc} # SKIP{" " + why if why else ""}', flush=True)


def note(msg):
    """A diagnostic line: '# msg'."""
    print(f'# {msg}', flush=True)


def exit_code():
    """1 if a case or a check failed, else 0: the exit of a script that
    prints no plan (checks under one of lib.sh's expect lines)."""
    return 1 if failed_cases or case_failures else 0


def done():
    print(f'1..{cases}')
    return 1 if failed_cases else 0


def run_all(fns, cleanup=None):
    """Every case of fns, then cleanup() whatever happened; the exit code."""
    try:
        for fn in fns:
            run_case(fn)
    finally:
        if cleanup:
            cleanup()
    return done()


def text_files(top, dirs):
    """(path relative to @top, text) of every UTF-8 file under @dirs of
    @top: the tests that hold the whole tree to a rule read it so."""
    for d in dirs:
        for root, _, files in os.walk(os.path.join(top, d)):
            for f in files:
                path = os.path.join(root, f)
                try:
                    with open(path, encoding='utf-8') as fh:
                        text = fh.read()
                except (UnicodeDecodeError, OSError):
                    continue
                yield os.path.relpath(path, top), text
