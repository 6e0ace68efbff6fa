#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The examples in the documentation and the README run as written and
# print what the documents say they print.
. "$(dirname "$0")/lib/lib.sh"

rmmod brd 2>/dev/null
python3 "$PCM_ROOT/tests/vm/lib/doc-examples.py" --where vm \
	"$PCM_ROOT/Documentation/admin-guide/device-mapper/dm-pcm.rst" \
	"$PCM_ROOT/README.md"
