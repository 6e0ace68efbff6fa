#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Fuzz table lines and messages (a seeded generator with an oracle of the
# documented rules).  PCM_FUZZ_SEED replays a run; PCM_FUZZ_CASES sets the
# number of table cases (messages: two thirds of that; 1200 at full
# PCM_SCALE, 300 in make check).
. "$(dirname "$0")/lib/lib.sh"

brd_load 16 || skip_all "brd not available"
cases=${PCM_FUZZ_CASES:-$(scaled 1200 100)}
# shellcheck disable=SC2086 # no argument at all when PCM_FUZZ_SEED is unset
python3 "$PCM_ROOT/tests/vm/lib/fuzz.py" /dev/ram0 "$cases" $((cases * 2 / 3)) ${PCM_FUZZ_SEED:-}
