# SPDX-License-Identifier: GPL-2.0-only
"""libpcm.so from Python: the module's own parameter parser, layout,
start-gap and timing model (tools/libpcm.c over dm-pcm/pcm-*.c).

In a checkout the library is build/host/libpcm.so, made by tools/Makefile
(make -C tools libpcm) on first use and whenever its sources change; in
make install's layout (PREFIX/lib/dm-pcm/: pcmctl, pcmlib/ and a
prebuilt libpcm.so) it is the one beside the tools, never rebuilt.

  Lib().parse(words)    the table words as the module parses them:
                        row_size, domains, ..., config; PcmError with the
                        parser's own message if it refuses them
  check_words(words)    the same, for a caller that only wants to know
  Lib().length/model/replay/params/map_row   (see each)
"""
import os
import subprocess
import sys

TOOLS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOP = os.path.dirname(TOOLS)
INSTALLED = os.path.exists(os.path.join(TOOLS, 'libpcm.so'))
LIB = os.path.join(TOOLS if INSTALLED else os.path.join(TOP, 'build', 'host'), 'libpcm.so')
TEXT_MAX = 4096
ctypes = None       # imported on first use: a VM test runs pcmctl hundreds of times


# the totals libpcm_model() and libpcm_replay() both give, in their out[] order
TOTALS = ('elapsed_ns', 'gap_moves', 'tag_waits', 'cache_waits', 'dilation', 'ios')
# struct pcm_tm_use, as libpcm_replay() gives it
USE_KEYS = ('reqs', 'busy_ns', 'wait_ns', 'wait_max_ns')
USE_WORDS = len(USE_KEYS)


class PcmError(Exception):
    """A failure a tool reports on one line (and pcmctl exits 1 for)."""


def lib_sources():
    """The files libpcm.so depends on, as tools/Makefile lists them."""
    import glob
    pats = ['tools/libpcm.c', 'dm-pcm/pcm-*.[ch]', 'tools/shim/*.h', 'tools/shim/*/*.h',
            'tools/Makefile']
    return [f for p in pats for f in glob.glob(os.path.join(TOP, p))]


def lib_stale():
    if INSTALLED:
        return False    # built by make install, its sources are not here
    if not os.path.exists(LIB):
        return True
    built = os.path.getmtime(LIB)
    return any(os.path.getmtime(f) > built for f in lib_sources())


def build_lib():
    """make the library if it is missing or older than its sources."""
    if not lib_stale():
        return
    cmd = ['make', '-s', '-C', TOOLS, 'libpcm', f'OUT={os.path.dirname(LIB)}']
    res = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=sys.stderr)
    if res.returncode == 0:
        return
    if not os.path.exists(LIB):
        raise PcmError(f"building {LIB} failed: {' '.join(cmd)}")
    print(f'{os.path.basename(sys.argv[0])}: warning: could not rebuild {LIB}, using it as it is',
          file=sys.stderr)


def _argv(words):
    return (ctypes.c_char_p * (len(words) + 1))(*[os.fsencode(w) for w in words])


class Lib:
    """ctypes front end of tools/libpcm.c."""

    def __init__(self):
        global ctypes
        build_lib()
        import ctypes as ct
        ctypes = ct
        try:
            so = ctypes.CDLL(LIB)
        except OSError as e:
            raise PcmError(f'{LIB}: {e}') from e
        u64, u64p = ctypes.c_uint64, ctypes.POINTER(ctypes.c_uint64)
        so.libpcm_parse.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                                    u64p, ctypes.c_char_p, ctypes.c_size_t]
        so.libpcm_length.argtypes = [u64, ctypes.c_uint32, u64, ctypes.c_uint32, u64,
                                     ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32,
                                     ctypes.c_uint32, ctypes.c_uint32,
                                     u64p, ctypes.c_char_p, ctypes.c_size_t]
        so.libpcm_map.argtypes = [u64, ctypes.c_uint32, u64, u64p, u64p, u64]
        so.libpcm_map.restype = u64
        so.libpcm_params.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
        so.libpcm_model.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), u64p,
                                    u64p, ctypes.POINTER(ctypes.c_uint8), u64p,
                                    ctypes.c_char_p, ctypes.c_size_t]
        so.libpcm_replay.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), u64p, u64,
                                     u64p, u64p, u64p, ctypes.POINTER(ctypes.c_uint8),
                                     u64p, u64p, u64p, u64p, ctypes.c_char_p, ctypes.c_size_t]
        so.libpcm_wear.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p), u64, u64,
                                   u64p, u64p, ctypes.POINTER(ctypes.c_uint8), u64,
                                   ctypes.c_uint32, u64p, ctypes.POINTER(ctypes.c_uint32), u64,
                                   ctypes.c_char_p, ctypes.c_size_t]
        self.so = so
        self.nr_parse = so.libpcm_nr_parse_out()
        self.nr_length = so.libpcm_nr_length_out()

    def parse(self, words):
        """Effective row_size, domains, randomize, meta_given and config text;
        PcmError with the module's message if the words are refused."""
        argv = _argv(words)
        out = (ctypes.c_uint64 * self.nr_parse)()
        text = ctypes.create_string_buffer(TEXT_MAX)
        if self.so.libpcm_parse(len(words), argv, out, text, TEXT_MAX):
            raise PcmError(text.value.decode(errors='replace'))
        return {'row_size': out[0], 'domains': out[1], 'randomize': out[2],
                'meta_given': bool(out[3]), 'row_meta': out[4], 'wear': out[5],
                'channels': out[6], 'ranks': out[7], 'gap_interval': out[8],
                'endurance': out[9], 'config': text.value.decode(errors='replace')}

    def length(self, dev_sectors, offset, meta_sectors, row_size, domains, row_meta=0, wear=0,
               block=512, meta_block=None):
        """max_length, max_rows, meta_start, sb_sectors, block_sectors (a
        length is a multiple of it), row_meta_sectors; PcmError if none.
        @meta_sectors: the meta_device's size, None for metadata inside;
        @row_meta: ECC metadata bytes per row; @wear: rows per wear counter;
        @block: the data device's logical block size, @meta_block the
        meta_device's (default: @block, as for metadata inside)."""
        out = (ctypes.c_uint64 * self.nr_length)()
        err = ctypes.create_string_buffer(TEXT_MAX)
        if self.so.libpcm_length(dev_sectors, block, offset, meta_sectors is not None,
                                 meta_sectors or 0, block if meta_block is None else meta_block,
                                 row_size, domains, row_meta, wear, out, err, TEXT_MAX):
            raise PcmError(err.value.decode(errors='replace'))
        return dict(zip(('length', 'rows', 'meta_start', 'sb_sectors', 'block_sectors',
                         'row_meta_sectors'), out))

    def model(self, words, wl):
        """Run workload @wl (a dict of the LIBPCM_WL_* values) through the
        model of @words: per-request latencies (ns), write flags, totals.
        With dilation:K among @words the latencies and elapsed_ns are in
        the device's time (the model's divided by K); totals['dilation']
        is K.  Optional keys (0 when missing): host_ns, rate_ns (open loop),
        think_ns, think_blocks, runtime_ns, ramp_ns (fio's ramp_time: the
        requests before it run uncounted); with runtime_ns fewer than ios
        requests may run (totals['ios'])."""
        keys = ('rows', 'read_pct', 'bs', 'depth', 'jobs', 'random', 'ios', 'seed',
                'host_ns', 'rate_ns', 'think_ns', 'think_blocks', 'runtime_ns', 'ramp_ns')
        assert self.so.libpcm_nr_wl() == len(keys)
        argv = _argv(words)
        inp = (ctypes.c_uint64 * len(keys))(*[wl.get(k, 0) for k in keys])
        lat = (ctypes.c_uint64 * wl['ios'])()
        wr = (ctypes.c_uint8 * wl['ios'])()
        out = (ctypes.c_uint64 * self.so.libpcm_nr_model_out())()
        text = ctypes.create_string_buffer(TEXT_MAX)
        if self.so.libpcm_model(len(words), argv, inp, lat, wr, out, text, TEXT_MAX):
            raise PcmError(text.value.decode(errors='replace'))
        tot = dict(zip(TOTALS, out))
        return list(lat)[:tot['ios']], list(wr)[:tot['ios']], tot

    def replay(self, words, rows, reqs, depth=1, open_loop=False, host_ns=0, use=False):
        """Replay @reqs, a list of (arrival_ns, offset, bytes, write), through
        the model of @words on a device of @rows rows: open loop (arrivals
        as given, non-decreasing) or closed at @depth (arrivals unread; the
        next request of a slot arrives @host_ns after its completion).
        Per-request start and done instants (ns, the device's time: the
        model's divided by dilation:K) and totals; with @use, totals['use']
        is the model's account of each resource (tools/libpcm.c:
        libpcm_replay()): {'rank': [[{reqs, busy_ns, wait_ns, wait_max_ns}
        per rank] per channel], 'bus': [per channel], 'front', 'tags'}."""
        n = len(reqs)
        argv = _argv(words)
        arr = (ctypes.c_uint64 * n)(*[r[0] for r in reqs])
        pos = (ctypes.c_uint64 * n)(*[r[1] for r in reqs])
        nb = (ctypes.c_uint64 * n)(*[r[2] for r in reqs])
        wr = (ctypes.c_uint8 * n)(*[bool(r[3]) for r in reqs])
        opt = (ctypes.c_uint64 * self.so.libpcm_nr_rp())(rows, depth, bool(open_loop), host_ns)
        start, done = (ctypes.c_uint64 * n)(), (ctypes.c_uint64 * n)()
        out = (ctypes.c_uint64 * self.so.libpcm_nr_replay_out())()
        text = ctypes.create_string_buffer(TEXT_MAX)
        uses = None
        if use:
            p = self.parse(words)
            ch, rk = p['channels'], p['ranks']
            uses = (ctypes.c_uint64 * (USE_WORDS * (ch * rk + ch + 2)))()
        if self.so.libpcm_replay(len(words), argv, opt, n, arr, pos, nb, wr, start, done, out,
                                 uses, text, TEXT_MAX):
            raise PcmError(text.value.decode(errors='replace'))
        tot = dict(zip(TOTALS, out))
        tot['idle_ns'] = out[len(TOTALS)]
        if use:
            u = [dict(zip(USE_KEYS, uses[i:i + USE_WORDS]))
                 for i in range(0, len(uses), USE_WORDS)]
            tot['use'] = {'rank': [u[c * rk:(c + 1) * rk] for c in range(ch)],
                          'bus': u[ch * rk:ch * rk + ch], 'front': u[-2], 'tags': u[-1]}
        return list(start), list(done), tot

    def wear(self, words, rows, reqs, repeat=1, start_gap=True, per_row=False):
        """The wear @repeat passes of the writes of @reqs ((offset, bytes,
        write) each) leave on a fresh device of @words and @rows logical
        rows, start-gap on (at the words' gap_interval) or off: the
        module's summary and projected lifetime (tools/libpcm.c:
        libpcm_wear()); with @per_row, each backing row's writes too."""
        n = len(reqs)
        argv = _argv(words)
        pos = (ctypes.c_uint64 * n)(*[r[0] for r in reqs])
        nb = (ctypes.c_uint64 * n)(*[r[1] for r in reqs])
        wr = (ctypes.c_uint8 * n)(*[bool(r[2]) for r in reqs])
        out = (ctypes.c_uint64 * self.so.libpcm_nr_wear_out())()
        text = ctypes.create_string_buffer(TEXT_MAX)
        nrows = 0
        rowbuf = None
        if per_row:
            p = self.parse(words)
            d = p['domains']
            nrows = rows + d    # pcm_sg_physical_rows(): a gap per domain
            rowbuf = (ctypes.c_uint32 * nrows)()
        if self.so.libpcm_wear(len(words), argv, rows, n, pos, nb, wr, repeat,
                               bool(start_gap), out, rowbuf, nrows, text, TEXT_MAX):
            raise PcmError(text.value.decode(errors='replace'))
        res = dict(zip(('rows', 'writes', 'gap_moves', 'max', 'min', 'mean_milli',
                        'used_permille', 'remaining', 'remaining_level', 'endurance'), out))
        for k in ('remaining', 'remaining_level'):
            if res[k] == 2**64 - 1:
                res[k] = None   # unbounded
        if per_row:
            res['per_row'] = list(rowbuf)
        return res

    def params(self):
        """Every parameter as the module describes it ("params" message):
        a list of dicts of the key:value words of its line."""
        from pcmlib import words as pwords
        text = ctypes.create_string_buffer(16384)
        self.so.libpcm_params(text, 16384)
        return [pwords.parse_words(line) for line in text.value.decode().splitlines()]

    def map_row(self, logical_rows, seed, regs, row):
        """Backing row of logical @row; @regs is [(start, gap)] per domain."""
        k = len(regs)
        start = (ctypes.c_uint64 * k)(*[s for s, _ in regs])
        gap = (ctypes.c_uint64 * k)(*[g for _, g in regs])
        return self.so.libpcm_map(logical_rows, k, seed, start, gap, row)


def check_words(words):
    """None if the module's parser takes the table words @words (a string
    or a list), else its message (e.g. "unknown preset 'psss'")."""
    try:
        Lib().parse(words.split() if isinstance(words, str) else list(words))
    except PcmError as e:
        return str(e)
    return None
