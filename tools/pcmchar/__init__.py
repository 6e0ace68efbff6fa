# SPDX-License-Identifier: GPL-2.0-only
"""pcmchar: the characterization toolkit behind 'tools/pcm-bench characterize'.

  spec      the spec file (TOML): parsing, errors that name the field and
            the allowed values, and its expansion into points
  fiojob    one fio job file per point (warm-up, then the repetitions)
  results   fio's JSON (json+) parsed; statistics over the repetitions;
            the CSV of every point
  papers    the one table of the papers' figures (dm-pcm.rst's "Presets");
            tests/host/test-presets.py holds the model to the same values
  figures   the papers' figures redrawn from the points (matplotlib), each
            with the CSV behind it
  report    the run's report (Markdown) with the paper-vs-dm-pcm table:
            paper, model (libpcm), measured, errors, verdict
  verdict   judge(): the one verdict on a paper figure (reproduced,
            host-bound, model-differs-from-paper, not reproduced)
  guest     the part that runs in the VM: devices, file systems, fio

Only the standard library, but for figures (python3-matplotlib, Debian's:
run with /usr/bin/python3, as tools/pcm-bench is).
"""
