# SPDX-License-Identifier: GPL-2.0-only
"""Table words, config replies and sizes: the one copy of each.

  split_word('gap_interval:64')   ('gap_interval', '64'); a flag such as
                                  'format' is ('format', None)
  word_key('gap_interval:64')     'gap_interval'
  word_value(words, key)          the value of KEY among WORDS (a string or
                                  a list), None if it is not there
  parse_words(text)               key:value words (a table's optional
                                  words, a "config" reply) as an ordered
                                  dict of strings; flags map to None
  merge_words(base, extra)        BASE's words with EXTRA's added, a word
                                  of the same key replaced
  parse_size('4k')                bytes: digits with an optional k, m, g
                                  (powers of 1024); SizeError if not
  size_word(4096)                 '4k': bytes as fio writes them
"""
import re

SIZE_RE = re.compile(r'([0-9]+)([kmg]?)')
SIZE_SHIFT = {'': 0, 'k': 10, 'm': 20, 'g': 30}


class SizeError(ValueError):
    """Not a size: the text, and what a size looks like."""


def _words(words):
    return words.split() if isinstance(words, str) else list(words)


def split_word(word):
    """A table word as (key, value); a flag (no ':') has value None."""
    key, sep, val = word.partition(':')
    return key, (val if sep else None)


def word_key(word):
    return word.partition(':')[0]


def word_value(words, key):
    """The value of the last word of @key in @words; None if none."""
    val = None
    for w in _words(words):
        k, v = split_word(w)
        if k == key:
            val = v
    return val


def parse_words(text):
    """key:value words as an ordered dict of strings (flags: None); a
    key given twice keeps its last value, as the module's parser does."""
    return dict(split_word(w) for w in _words(text))


def merge_words(base, extra):
    """The words of @base with those of @extra added, a word of the same
    key replacing base's in its place; a string of words."""
    out = {word_key(w): w for w in _words(base)}
    for w in _words(extra):
        out[word_key(w)] = w
    return ' '.join(out.values())


def parse_size(text, multiple=1, allow_zero=False):
    """Bytes from '512', '4k', '1M', '2g' (k, m, g: powers of 1024, any
    case) or an int; SizeError unless positive (or zero with @allow_zero)
    and a multiple of @multiple."""
    if isinstance(text, int) and not isinstance(text, bool):
        n = text
    else:
        m = SIZE_RE.fullmatch(str(text).strip().lower())
        n = int(m[1]) << SIZE_SHIFT[m[2]] if m else None
    if n is None or n < 0 or (n == 0 and not allow_zero) or n % multiple:
        what = f', a multiple of {multiple}' if multiple > 1 else ''
        raise SizeError(f'{text!r} is not a size (512, 4k, 1m, 2g{what})')
    return n


def size_word(n):
    """Bytes as fio writes them: 4k, 1m, 512."""
    for unit, shift in (('g', 30), ('m', 20), ('k', 10)):
        if n and n % (1 << shift) == 0:
            return f'{n >> shift}{unit}'
    return str(n)
