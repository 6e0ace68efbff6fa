# SPDX-License-Identifier: GPL-2.0-only
"""Tell a guest kernel's death that is the emulator's from one that is not.

One signature only, kept narrow on purpose (issue 45, item 6): under QEMU's
TCG, a vCPU traps on an int3 in kernel text that memory no longer holds,
at a site the kernel patches live.

Why that is the emulator's: the kernel changes live text (a tracepoint's
or static key's jump label, a static call, ftrace) with text_poke_bp()
(arch/x86/kernel/alternative.c, text_poke_bp_batch): it writes an int3 on
the site's first byte, makes every CPU serialize (an IPI running
sync_core()), writes the rest of the new instruction, serializes again,
writes the new first byte over the int3, serializes again, and only then
stops answering int3s at that site (poke_int3_handler() finds no patch in
progress and returns 0).  A CPU that meets the int3 after that has run
code that memory no longer holds and that three rounds of serialization
should have discarded: on hardware it cannot happen.  Under QEMU 7.2's
multi-threaded TCG it does; the likely way is a vCPU that translates the
site while another rewrites it, and registers its translation of the old
bytes after the write has discarded the page's translations, so that
every vCPU runs the int3 for as long as that translation lives.
do_int3() finds no owner, die() runs in the NMI context the int3 handler
enters, and the kernel panics: "Fatal exception in interrupt".  Measured
(Documentation/testing/emulator-int3.md): five guests of five died with
2 vCPUs on their own host threads, none with 1 vCPU (937 loops) or with
2 vCPUs taking turns on one thread (icount, 900 loops).

The Oops itself proves it: its "Code:" line shows the bytes memory holds
around RIP (read when the Oops is printed), with the byte at RIP in <>.
An int3 trap leaves RIP one past the int3, so the byte just before the <>
is the byte at the int3's address.  If that byte is not 0xcc, memory no
longer holds the int3 that trapped; if it starts one of the instructions
text_poke_bp() writes, the site is a live-patched one.

Only the standard library is used.
"""

import re

# "Oops: int3: 0000 [#1] ..." (6.12), "int3: 0000 [#1] ..." (6.1)
_INT3 = re.compile(r'^(?:Oops: )?int3: [0-9a-f]{4} \[#\d+\]')
# any Oops's first line ("Oops: general protection fault, ...: 0000 [#1]")
_HEADER = re.compile(r': [0-9a-f]{4} \[#\d+\]')
_STAMP = re.compile(r'^\s*\[\s*\d+\.\d+\]\s?')
_RIP = re.compile(r'RIP: 0010:(\S.*)$')
_CODE = re.compile(r'^Code: ((?:[0-9a-f]{2} )+)<([0-9a-f]{2})>((?: [0-9a-f]{2})*)\s*$')
_PANIC = 'Kernel panic - not syncing: '
_DEATH = _PANIC + 'Fatal exception in interrupt'
# what tests/vm/run's check of the kernel log fails a test on
_BAD = re.compile(r'WARNING:|BUG:|Oops|possible circular locking|KASAN|UBSAN|hung task|'
                  r'blocked for more than|general protection|Call Trace|kmemleak')


def _insn(code):
    """The instruction text_poke_bp() leaves at a site, if code (bytes from
    the site on) starts with one, as (length, name); else None."""
    b = code
    if len(b) >= 5 and b[:5] == [0x0f, 0x1f, 0x44, 0x00, 0x00]:
        return 5, 'a 5-byte NOP (jump label or static call off)'
    if len(b) >= 5 and b[:5] == [0x2e, 0x2e, 0x2e, 0x31, 0xc0]:
        return 5, 'cs-prefixed xor %eax,%eax (a static call returning 0)'
    if len(b) >= 2 and b[:2] == [0x66, 0x90]:
        return 2, 'a 2-byte NOP (jump label off)'
    if len(b) >= 5 and b[0] == 0xe9:
        return 5, 'jmp rel32 (jump label on, or a static call\'s tail jump)'
    if len(b) >= 5 and b[0] == 0xe8:
        return 5, 'call rel32 (a static call or ftrace site)'
    if len(b) >= 2 and b[0] == 0xeb:
        return 2, 'jmp rel8 (jump label on)'
    if len(b) >= 6 and b[0] == 0x0f and 0x80 <= b[1] <= 0x8f:
        return 6, 'jcc rel32'
    if len(b) >= 2 and 0x70 <= b[0] <= 0x7f:
        return 2, 'jcc rel8'
    if len(b) >= 1 and b[0] == 0xc3:
        return 1, 'ret (a static call returning)'
    return None


def _stale_block(texts, head, stop):
    """The int3 Oops whose header is texts[head] (its block ends before
    @stop): (RIP's line, Code's line, the bytes at the int3's address, its
    (length, name)) if memory no longer holds the int3 there and a
    live-patched instruction starts there; else None.  Nothing in the block
    may be what tests/vm/run fails a test on, but its own Call Trace."""
    if not _INT3.match(texts[head]) or any(
            _BAD.search(t) and not t.startswith('Call Trace') for t in texts[head + 1:stop]):
        return None
    rip = code = None
    for i in range(head + 1, stop):
        text = texts[i]
        if text.startswith('---[ end trace'):
            break
        if rip is None and text.startswith('RIP: '):
            if not _RIP.match(text):
                return None   # the Oops's own RIP is not kernel text
            rip = i
        elif rip is not None and text.startswith('Code: '):
            code = i
            break
    if rip is None or code is None:
        return None
    m = _CODE.match(texts[code])
    if not m:
        return None
    before = [int(x, 16) for x in m.group(1).split()]
    after = [int(m.group(2), 16)] + [int(x, 16) for x in m.group(3).split()]
    if before[-1] == 0xcc:
        return None   # memory still holds an int3 there: not this signature
    site = [before[-1]] + after
    found = _insn(site)
    return (rip, code, site, found) if found else None


def stale_int3(lines):
    """Whether a guest's console (one boot's) shows it died of a kernel int3
    that memory no longer holds, at a live-patched site.  Only the death
    counts: the boot's last panic must be that Oops's ("Fatal exception in
    interrupt"), every Oops before it an int3 of that signature (each vCPU
    that ran the stale translation prints its own: two at once with 2
    vCPUs, seen in a 6.12 suite run), and nothing else on the console
    what tests/vm/run fails a test on (another Oops, BUG, WARNING...),
    before them or inside them.  None if any part is missing; else a dict
    of the last Oops: 'rip' (symbol, as the Oops prints it), 'insn' (the
    bytes memory holds at the int3's address, hex), 'what' (which
    instruction that is), 'lines' (the lines that show it, each Oops's,
    timestamps kept), 'oopses' (how many) and 'why' (one sentence)."""
    lines = [l.rstrip('\r\n') for l in lines]
    texts = [_STAMP.sub('', l) for l in lines]
    panics = [i for i, t in enumerate(texts) if t.startswith(_PANIC)]
    if not panics or texts[panics[-1]] != _DEATH:
        return None
    end = panics[-1]
    headers = [i for i in range(end) if _HEADER.search(texts[i])]
    if not headers or any(_BAD.search(t) for t in texts[:headers[0]]):
        return None
    shown = []
    for k, head in enumerate(headers):
        got = _stale_block(texts, head, headers[k + 1] if k + 1 < len(headers) else end)
        if got is None:
            return None
        rip, code, site, (n, what) = got
        shown += [lines[head], lines[rip], lines[code]]
    sym = _RIP.match(texts[rip]).group(1)
    insn = ' '.join(f'{x:02x}' for x in site[:n])
    why = (f'a vCPU trapped on an int3 just before RIP {sym} that memory no longer '
           f'holds: the byte there starts {insn}, {what}, as text_poke_bp() leaves a '
           'live-patched site once it has finished and serialized every CPU; the vCPU '
           'ran a stale translation of the site (QEMU TCG, cross-modifying code), '
           'not code the kernel left in memory')
    return {'rip': sym, 'insn': insn, 'what': what, 'oopses': len(headers),
            'lines': shown + [lines[end]], 'why': why}
