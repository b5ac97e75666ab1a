"""Pure-Python re-implementation of tiktoken's pre-tokenization patterns.

tiktoken splits text with a `fancy-regex` pattern that uses \\p{L}/\\p{N}
Unicode classes, possessive quantifiers and a lookahead - features the stdlib
`re` cannot run.  Instead of scanning character by character, we translate the
text into a string of single-character *class codes* (one code per Unicode
class that the pattern distinguishes), then run an equivalent `re` pattern
written over those codes.  Because the translation is the only Unicode-aware
step and it is done with `str.translate` (C speed), and because the class
pattern needs no `\\p{...}`, the heavy lifting runs in the C `re` engine.

The class pattern is equivalent to tiktoken's, verified byte-for-byte against
it across millions of randomized inputs (see tests/).  Two facts make the
translation exact:

* For both encodings, plain greedy quantifiers give the same matches as
  tiktoken's possessive ones, because each alternative is anchored so no
  backtracking can change the result (the one case that *does* backtrack -
  a combining mark matching the optional prefix yet also a letter class - is
  a plain greedy `?`, which Python reproduces).
* Python's `re` alternation is ordered (first-match), exactly like fancy-regex.
"""
from __future__ import annotations

import re
import string
import unicodedata

_cat = unicodedata.category

# \s in fancy-regex (Rust regex) is \p{White_Space}.
_WS = frozenset(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680]
    + list(range(0x2000, 0x200B)) + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000])

_UP_CATS = frozenset(("Lu", "Lt", "Lm", "Lo"))     # o200k upper letter class
_LO_CATS = frozenset(("Ll", "Lm", "Lo"))           # o200k lower letter class
# Letters that begin a contraction, case-insensitively: 's 't 'm 'd, 'll 've 're.
# `(?i)` is Unicode case folding, so we fold each letter (U+017F long-s -> 's').
_FOLD = frozenset("stmdlvre")

# --- assign one distinct code character to each class a pattern cares about ---
_codepool = iter(string.ascii_letters + string.digits)   # 62 codes, plenty
_codes = {}


def _new(key):
    c = next(_codepool)
    _codes[key] = c
    return c


_NL = _new("NL")        # \r or \n
_SP = _new("SP")        # space U+0020 (the literal " ?" in the pattern)
_WSP = _new("WS")       # other whitespace
_NUM = _new("NUM")      # \p{N}
_APOS = _new("APOS")    # apostrophe '
_SLASH = _new("SLASH")  # /  (o200k's [\r\n/])
_PUNCT = _new("PUNCT")  # anything else (symbols, punctuation, controls)
_MARK = _new("MARK")    # \p{M}: in o200k letter classes but not \p{L}
for _up, _lo in ((1, 0), (0, 1), (1, 1)):           # letter codes: (up, lo, fold)
    for _f in ("",) + tuple(sorted(_FOLD)):
        _new(("L", _up, _lo, _f))


def _code_char(ch):
    o = ord(ch)
    if o == 10 or o == 13:
        return _NL
    if o == 32:
        return _SP
    if ch == "'":
        return _APOS
    if ch == "/":
        return _SLASH
    if o < 128:                                  # ASCII fast path
        if 97 <= o <= 122:
            cat = "Ll"
        elif 65 <= o <= 90:
            cat = "Lu"
        elif 48 <= o <= 57:
            return _NUM
        elif o in (9, 11, 12):
            return _WSP
        else:
            return _PUNCT
    else:
        cat = _cat(ch)
        k = cat[0]
        if k == "N":
            return _NUM
        if o in _WS:
            return _WSP
        if k == "M":
            return _MARK
        if k != "L":
            return _PUNCT
    up = 1 if cat in _UP_CATS else 0
    lo = 1 if cat in _LO_CATS else 0
    cf = ch.casefold()
    f = cf if (len(cf) == 1 and cf in _FOLD) else ""
    return _codes[("L", up, lo, f)]


_TBL = {}              # codepoint -> ord(code char); grows as new chars are seen


def _to_codes(text):
    tbl = _TBL
    for ch in set(text):
        o = ord(ch)
        if o not in tbl:
            tbl[o] = ord(_code_char(ch))
    return text.translate(tbl)


# --- build the class strings and compile the two equivalent patterns ---
_LETTER_KEYS = [k for k in _codes if isinstance(k, tuple)]
_LETTERS = "".join(_codes[k] for k in _LETTER_KEYS)                 # \p{L}
_UPS = "".join(_codes[k] for k in _LETTER_KEYS if k[1]) + _MARK     # o200k upper
_LOS = "".join(_codes[k] for k in _LETTER_KEYS if k[2]) + _MARK     # o200k lower
_ALL = "".join(_codes.values())
_WSC = _NL + _SP + _WSP                                             # \s
_NOT_RLN = "".join(c for c in _ALL if c not in (_NL + _LETTERS + _NUM))
_NOT_SLN = "".join(c for c in _ALL if c not in (_WSC + _LETTERS + _NUM))
_NLSLASH = _NL + _SLASH


def _fold(x):
    return "".join(_codes[k] for k in _LETTER_KEYS if k[3] == x)


# (?i:[sdmt]|ll|ve|re) over code chars
_CONTR = "(?:[%s]|[%s][%s]|[%s][%s]|[%s][%s])" % (
    _fold("s") + _fold("t") + _fold("m") + _fold("d"),
    _fold("l"), _fold("l"), _fold("v"), _fold("e"), _fold("r"), _fold("e"))

_CL_RE = re.compile("|".join([
    "[%s]%s" % (_APOS, _CONTR),                        # '(?i:[sdmt]|ll|ve|re)
    "[%s]?[%s]+" % (_NOT_RLN, _LETTERS),               # [^\r\n\p{L}\p{N}]?+\p{L}++
    "[%s]{1,3}" % _NUM,                                # \p{N}{1,3}+
    "[%s]?[%s]+[%s]*" % (_SP, _NOT_SLN, _NL),          #  ?[^\s\p{L}\p{N}]++[\r\n]*+
    "[%s]+\\Z" % _WSC,                                 # \s++$
    "[%s]*[%s]" % (_WSC, _NL),                         # \s*[\r\n]
    "[%s]+(?![^%s])" % (_WSC, _WSC),                   # \s+(?!\S)
    "[%s]" % _WSC,                                     # \s
]))

_CONTR_OPT = "(?:[%s]%s)?" % (_APOS, _CONTR)           # o200k (?i:'s|'t|...)?
_O_RE = re.compile("|".join([
    "[%s]?[%s]*[%s]+%s" % (_NOT_RLN, _UPS, _LOS, _CONTR_OPT),   # UP* LO+
    "[%s]?[%s]+[%s]*%s" % (_NOT_RLN, _UPS, _LOS, _CONTR_OPT),   # UP+ LO*
    "[%s]{1,3}" % _NUM,                                # \p{N}{1,3}
    "[%s]?[%s]+[%s]*" % (_SP, _NOT_SLN, _NLSLASH),     #  ?[^\s\p{L}\p{N}]+[\r\n/]*
    "[%s]*[%s]+" % (_WSC, _NL),                        # \s*[\r\n]+
    "[%s]+(?![^%s])" % (_WSC, _WSC),                   # \s+(?!\S)
    "[%s]+" % _WSC,                                    # \s+
]))


def pretokenize_cl100k(text):
    """Return the cl100k_base pre-token strings of `text`, in order."""
    codes = _to_codes(text)
    return [text[m.start():m.end()] for m in _CL_RE.finditer(codes)]


def pretokenize_o200k(text):
    """Return the o200k_base pre-token strings of `text`, in order."""
    codes = _to_codes(text)
    return [text[m.start():m.end()] for m in _O_RE.finditer(codes)]


# Compiled splitter per encoding, for the fused encode path in __init__.
_RE = {"cl100k": _CL_RE, "o200k": _O_RE}
