# SPDX-License-Identifier: GPL-2.0-only
"""A minimal client of the device-mapper ioctls (linux/dm-ioctl.h), for
tests that need thousands of table loads or messages: no fork, no exec.
"""
import fcntl
import os
import struct

_HDR = struct.Struct('=3IIIIiIIIQ128s129s7s')     # struct dm_ioctl, 312 bytes
_SPEC = struct.Struct('=QQiI16s')                  # struct dm_target_spec
_IOC_BASE = (3 << 30) | (_HDR.size << 16) | (0xfd << 8)
DEV_CREATE, DEV_REMOVE, DEV_SUSPEND, TABLE_LOAD, TABLE_CLEAR, TABLE_STATUS, TARGET_MSG = \
    3, 4, 6, 9, 10, 12, 14
STATUS_TABLE_FLAG = 1 << 4


class DM:
    def __init__(self):
        self.fd = os.open('/dev/mapper/control', os.O_RDWR)

    def close(self):
        os.close(self.fd)

    def call(self, nr, name, payload=b'', flags=0, target_count=0):
        """Issue one ioctl; return (errno or 0, flags out, data out)."""
        size = max(_HDR.size + len(payload) + 1, 16384)
        buf = bytearray(size)
        _HDR.pack_into(buf, 0, 4, 0, 0, size, _HDR.size, target_count, 0, flags,
                       0, 0, 0, name.encode(), b'', b'')
        buf[_HDR.size:_HDR.size + len(payload)] = payload
        try:
            fcntl.ioctl(self.fd, _IOC_BASE | nr, buf, True)
        except OSError as e:
            return e.errno, 0, b''
        hdr = _HDR.unpack_from(buf, 0)
        data_size, data_start, flags_out = hdr[3], hdr[4], hdr[7]
        return 0, flags_out, bytes(buf[data_start:data_size])

    def create(self, name):
        return self.call(DEV_CREATE, name)[0]

    def remove(self, name):
        return self.call(DEV_REMOVE, name)[0]

    def load(self, name, length, target, params):
        spec = _SPEC.pack(0, length, 0, 0, target.encode()) + params + b'\0'
        return self.call(TABLE_LOAD, name, spec, target_count=1)[0]

    def clear(self, name):
        return self.call(TABLE_CLEAR, name)[0]

    def resume(self, name):
        return self.call(DEV_SUSPEND, name)[0]

    def message(self, name, words):
        return self.call(TARGET_MSG, name, struct.pack('=Q', 0) + b' '.join(words) + b'\0')

    def status(self, name, table=False):
        err, _, data = self.call(TABLE_STATUS, name, flags=STATUS_TABLE_FLAG if table else 0)
        if err or len(data) < _SPEC.size:
            return None
        return data[_SPEC.size:].split(b'\0', 1)[0]
