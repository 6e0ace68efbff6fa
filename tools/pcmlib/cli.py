# SPDX-License-Identifier: GPL-2.0-only
"""Every tool's entry: run(main) instead of sys.exit(main()).

A reader that stops early (pcmctl params | head) closes the pipe; the
next write raises BrokenPipeError, and Python would print a traceback
and, at exit, "Exception ignored ... BrokenPipeError" while flushing.
run() ends the tool quietly instead, with 128 + SIGPIPE as a shell
reports a process killed by it (finally blocks and context managers
still run: a tool that set up devices or a VM cleans them up).
"""
import os
import signal
import sys

EXIT_SIGPIPE = 128 + signal.SIGPIPE


def _quiet_stdout():
    """Point stdout at /dev/null, so that the interpreter's last flush
    cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def run(main, *args):
    """sys.exit(main(*args)), a broken pipe without a traceback."""
    try:
        rc = main(*args)
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        rc = EXIT_SIGPIPE
    sys.exit(rc)
