# SPDX-License-Identifier: GPL-2.0-only
"""pcm-bench ecc

issue 16's acceptance: 4 KiB random read and write IOPS at QD1 and QD32
on dm-linear, dm-integrity (D 1 internal_hash:crc32c: detection only),
dm-pcm without ECC (preset:none gap_interval:0) and dm-pcm ecc:bch with
the pss layout (ecc_codewords:6 ecc_t:4 meta_bytes:64, preset:none,
gap_interval:0: no delays; every read decoded, every write encoded),
each alone over the same ramdisk, zeroed before it and then written
whole through it (dm-integrity's tags and dm-pcm's parity all valid),
one device at a time; fio covers the first ECC_MIB MiB of each.  --pcm-
words adds words to dm-pcm ecc:bch's, and a word given as "+WORDS" (e.g.
--pcm-words "+ecc_fast:1") adds a second ecc:bch device with them,
reported beside the first.  Where an ECC I/O's instructions go (perf,
function_graph) and an NVMe read's time: tools/ecc-profile --help.
"""
import statistics

from pcmlib.bench import pcm_create, fio_cmd, run_fio, status
from .common import RAM_MIB, sh, remove_devices, fresh_ramdisk, pcm_words, med, table
from .options import HOST, ICOUNT, ROUNDS, RUNTIME, PCM_WORDS

NAME = 'ecc'
HELP = __doc__.split('\n\n', 1)[1].strip()
PARENTS = (HOST, ICOUNT, ROUNDS, RUNTIME, PCM_WORDS)   # its options' groups (options.py)


ECC_MIB = 192  # ecc: what fio covers of each device (dm-pcm's parity and
# dm-integrity's tags leave less than the ramdisk's 256 MiB)
# dm-integrity's tags leave less than the ramdisk's 256 MiB)
ECC_WORDS = 'ecc:bch ecc_codewords:6 ecc_t:4 meta_bytes:64'  # preset:pss's ECC
ECC_DEVICES = ('dm-linear', 'dm-integrity', 'dm-pcm', 'dm-pcm-ecc')


def ecc_words(args):
    """ecc: the dm-pcm ecc:bch devices' table words, by name: the first
    with --pcm-words' plain words, a second with its "+" words too."""
    plain = [w for w in args.pcm_words.split() if not w.startswith('+')]
    plus = [w[1:] for w in args.pcm_words.split() if w.startswith('+')]
    base = pcm_words(' '.join([ECC_WORDS] + plain))
    out = {'dm-pcm': pcm_words(''), 'dm-pcm-ecc': base}
    if plus:
        out['dm-pcm-ecc+'] = pcm_words(' '.join([ECC_WORDS] + plain + plus))
    return out


def ecc_device(name, words):
    """One device of the ecc mode over a zeroed ramdisk, written whole
    through itself so that every tag or parity is valid."""
    fresh_ramdisk()
    if name == 'dm-linear':
        sh(f'dmsetup create bench-linear --table "0 {RAM_MIB * 2048} linear /dev/ram0 0"')
        dev = '/dev/mapper/bench-linear'
    elif name == 'dm-integrity':
        # a one-sector table first: its status tells the data sectors it provides
        table = '/dev/ram0 0 4 D 1 internal_hash:crc32c'
        sh(f'dmsetup create bench-integrity --table "0 1 integrity {table}"')
        provided = int(sh('dmsetup status bench-integrity').split()[4])
        sh(f'dmsetup reload bench-integrity --table "0 {provided} integrity {table}"')
        sh('dmsetup resume bench-integrity')
        dev = '/dev/mapper/bench-integrity'
    else:
        dev = pcm_create('bench-pcm', words[name])
    sh(f'dd if=/dev/zero of={dev} bs=1M count={ECC_MIB} oflag=direct status=none')
    return dev


def guest(args, runs):
    """One device at a time (they would spoil each other's tags and
    parity), each over a fresh ramdisk; rounds interleave the devices."""
    words = ecc_words(args)
    names = ECC_DEVICES + (('dm-pcm-ecc+',) if 'dm-pcm-ecc+' in words else ())
    for rnd in range(args.rounds):
        for name in names:
            dev = ecc_device(name, words)
            for rw in ('randwrite', 'randread'):
                for qd in (1, 32):
                    cmd = fio_cmd(dev, rw, qd, args.runtime, cpus=args.cpus, size_mib=ECC_MIB)
                    r = run_fio(cmd)
                    r.update(device=name, rw=rw, qd=qd, bs='4k', cpus=args.cpus, round=rnd,
                             cmd=' '.join(cmd), words=words.get(name, ''))
                    if name.startswith('dm-pcm-ecc'):
                        st = status(dev)
                        r.update({k: st[k] for k in ('ecc_uncorrectable_sectors',
                                                     'ecc_silent_sectors') if k in st})
                    runs.append(r)
                    print(f'# round {rnd} {name:12} {rw:9} QD{qd:<2} {r["iops"]:10.0f} IOPS',
                          flush=True)
            remove_devices()


def summarize(res):
    rows = {}
    for r in res['runs']:
        rows.setdefault((r['rw'], r['qd'], r['device']), []).append(r)
    devs = list(dict.fromkeys(r['device'] for r in res['runs']))
    lines = [f"kernel {res['kernel']}, {res['fio']}, {res['cpus']} vCPU, {res['rounds']} "
             f"rounds of {res['runtime_s']} s, medians; 4 KiB, fio over {ECC_MIB} MiB of each"]
    lines += [f"  {d}: {w}" for d, w in res['pcm_words'].items()]
    cells, summary = [], []
    for rw in ('randread', 'randwrite'):
        for qd in (1, 32):
            base = med(rows[(rw, qd, 'dm-linear')], 'iops')
            integ = med(rows[(rw, qd, 'dm-integrity')], 'iops')
            for dev in devs:
                rs = rows[(rw, qd, dev)]
                iops = med(rs, 'iops')
                p50 = statistics.median(r['clat_median_ns'] or 0 for r in rs) / 1000
                unc = max((r.get('ecc_uncorrectable_sectors', 0) for r in rs), default=0)
                sil = max((r.get('ecc_silent_sectors', 0) for r in rs), default=0)
                ecc = dev.startswith('dm-pcm-ecc')
                cells.append([f'{rw} QD{qd}', dev, f'{iops:.0f}', f'{p50:.1f}us',
                              f'{iops / base:.3f}x', f'{iops / integ:.3f}x',
                              unc if ecc else '-', sil if ecc else '-'])
                summary.append({'rw': rw, 'qd': qd, 'device': dev, 'iops': iops,
                                'clat_median_us': p50, 'ratio_to_dm_linear': iops / base,
                                'ratio_to_dm_integrity': iops / integ})
    lines += table(['workload', 'device', 'IOPS', 'clat p50', 'vs dm-linear', 'vs dm-integrity',
                    'uncorr', 'silent'], cells, '<<>>>>>>')
    return '\n'.join(lines), summary
