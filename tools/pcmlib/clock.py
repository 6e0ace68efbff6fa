# SPDX-License-Identifier: GPL-2.0-only
"""The clock a tool's figures are measured on, and its defaults: the one
place that says which dilation and calibration a run gets when its
command line and spec say nothing (dm-pcm.rst, "Time dilation").

An icount VM (QEMU -icount shift=0,sleep=off) runs one guest instruction
per nanosecond of guest time, so the guest is a CPU of fixed speed: on it
a held completion costs ~9.4 us and fio tops out near 95,000 4 KiB IOPS,
below Onyx's 191,000 and 478,000.  Dilation K makes the device K times
slower on the guest's clock and the tools divide fio's latencies by K and
multiply its rates by K: the guest behaves as a host K times faster.
Measured (issue 33, icount, 1 vCPU, brd, uncalibrated):

    K   Onyx 4K QD1 p50   Onyx 4K QD64 IOPS   Onyx 512 QD64 IOPS   ReRAM 512 QD1
    1   47.36 us          77,013              79,036               21.73 us
    4   40.19 us          190,548             319,848              14.76 us
    8   38.66 us          190,568             478,040              13.59 us

K = 4 still leaves Onyx's 512 B reads guest-bound (320K of 478K); K = 8
is the smallest power of two at which every preset's figure is the
device's, with the guest at ~60,000 IOPS of its ~95,000 (so a third of
its CPU to spare) at Onyx's fastest point; a larger K only
costs samples (a run of T guest seconds is T / K on the device's clock).
On a real host (--native) or a VM without icount the guest's clock is
the host's: K = 1, as fast as the host is, unless asked.

Calibration is on by default: every run measures this host's completion
overhead per direction at its start, at its dilation, and sets
overhead_ns on the devices it creates (pcmlib/calibrate.py: calibrate());
--no-calibrate turns it off, --overhead-ns gives one measured before.
"""

ICOUNT_DILATION = 8


def default_dilation(native=False, icount=True):
    """K for a run whose command line and spec name none: ICOUNT_DILATION
    in an icount VM, 1 on a real host or a VM on the host's clock."""
    return ICOUNT_DILATION if icount and not native else 1


def name(icount):
    """The clock's name as every figure carries it."""
    return 'icount' if icount else 'real time'


def label(icount, dilation=1, calibration='uncalibrated'):
    """"clock icount, dilation 8, uncalibrated": what every printed figure
    says it is measured on (@calibration: the calibration in words)."""
    return f'clock {name(icount)}, dilation {dilation or 1}, {calibration}'
