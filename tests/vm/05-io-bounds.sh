#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Edges: the last sector works, I/O past the end fails, the offset maps
# every sector to backing sector offset + sector (the pass-through oracle).
. "$(dirname "$0")/lib/lib.sh"

brd_load 32 || skip_all "brd not available"
off=2048
len=$(( $(sectors /dev/ram0) - off - 4096 ))
# gap_interval:0: no row moves, so sector s stays at backing sector off + s
dmsetup create eb --table "0 $len pcm /dev/ram0 $off 2 row_size:4096 gap_interval:0"

io() { python3 - "$@" <<'PY'
import mmap, os, sys
op, dev, off, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, max(n, 4096))
try:
    if op == "w":
        buf[:n] = os.urandom(n)
        r = os.pwritev(fd, [memoryview(buf)[:n]], off)
    else:
        r = os.preadv(fd, [memoryview(buf)[:n]], off)
except OSError as e:
    print(e.strerror); sys.exit(2)
print(r)
PY
}

end=$((len * 512))
expect_eq "write the last sector" "$(io w /dev/mapper/eb $((end - 512)) 512)" 512
expect_eq "read the last sector" "$(io r /dev/mapper/eb $((end - 512)) 512)" 512
expect_eq "write at the end fails" "$(io w /dev/mapper/eb $end 4096)" "No space left on device"
expect_eq "write across the end is cut to what fits" "$(io w /dev/mapper/eb $((end - 1024)) 4096)" 1024
expect_eq "read at the end returns nothing" "$(io r /dev/mapper/eb $end 4096)" 0
expect_fail "dd past the end fails" dd if=/dev/zero of=/dev/mapper/eb bs=512 seek=$len count=1 oflag=direct status=none

# oracle: sector s of the pcm device is sector off + s of the backing device
head -c $((3 * 4096 + 1536)) /dev/urandom > /tmp/pat
for s in 0 7 4095 $((len - 28)); do
	dd if=/tmp/pat of=/dev/mapper/eb bs=512 seek=$s oflag=direct status=none
	expect "sectors $s.. land at backing sector $((off + s))" \
		cmp <(dd if=/dev/ram0 bs=512 skip=$((off + s)) count=27 iflag=direct status=none) /tmp/pat
done
expect "nothing lands before the offset" \
	cmp <(dd if=/dev/ram0 bs=512 count=$off iflag=direct status=none) <(head -c $((off * 512)) /dev/zero)
dmsetup remove eb
finish
