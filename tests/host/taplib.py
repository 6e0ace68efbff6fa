# SPDX-License-Identifier: GPL-2.0-only
"""TAP for the host tests written in Python: result() per case, done() at the end."""

_n = [0]
_failed = [0]


def result(ok, desc, detail=''):
    """One TAP line; a failure shows the last 20 lines of detail."""
    _n[0] += 1
    print(f'{"ok" if ok else "not ok"} {_n[0]} - {desc}')
    if not ok:
        _failed[0] += 1
        for line in str(detail).splitlines()[-20:]:
            print(f'#   {line}')


def done():
    """The plan line; the exit status (1 if a case failed)."""
    print(f'1..{_n[0]}')
    return 1 if _failed[0] else 0
