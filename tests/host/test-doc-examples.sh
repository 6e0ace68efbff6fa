#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The documents' examples that need no kernel of ours (the timing model:
# tools/pcmctl model, and the files it reads) run here as written and
# print what the documents say; tests/vm/11-doc-examples runs the others
# in the VM.  One rule decides which is which: doc-examples.py's on_host().
top=$(cd "$(dirname "$0")/../.." && pwd)
PCM_ROOT=$top exec python3 "$top/tests/vm/lib/doc-examples.py" --where host \
	"$top/Documentation/admin-guide/device-mapper/dm-pcm.rst" "$top/README.md"
