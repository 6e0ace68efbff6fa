# SPDX-License-Identifier: GPL-2.0-only
"""TAP for the Python host tests, as tap.h for the C ones: a case (a
function) runs any number of checks and prints one 'ok N - name' line;
a crash fails its case, not the run.  result() is a case of one check.
done() prints the plan and returns the exit code."""
import os
import traceback

cases = failed_cases = checks = case_failures = 0


def check(cond, msg):
    global checks, case_failures
    checks += 1
    if not cond:
        case_failures += 1
        print(f'#   check failed: {msg}')
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
    """A case of one check, named desc; a failure shows detail's last 20 lines."""
    global cases, failed_cases
    cases += 1
    failed_cases += not ok
    print(f'{"ok" if ok else "not ok"} {cases} - {desc}', flush=True)
    if not ok:
        for line in str(detail).splitlines()[-20:]:
            print(f'#   {line}')


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
