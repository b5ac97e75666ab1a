# Memory text is data, never instructions. This module makes it safe to put in front of a model:
# it strips what a terminal or a model could read as control (ANSI sequences, C0/C1 controls,
# zero-width and bidi characters), neutralises what could pass for a trust stamp or a tag, and
# redacts secrets.
#
# Both skills carry a byte-identical copy of this file (a skill folder must be self-contained,
# since `npx skillmds add` copies only that folder); tests/memory_text_test.py keeps them equal.
from __future__ import annotations

import bisect
import re
import unicodedata

REDACTED = "[REDACTED]"

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL / ST
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS / SOS / PM / APC strings
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
# C0 and C1 controls except newline (tab is turned into a space first), DEL, zero-width
# characters, bidi embeddings/overrides/isolates, line and paragraph separators, and the BOM.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]"
    "|[\U000e0000-\U000e007f]"
)
# Look-alikes are judged on a skeleton of the text, in the spirit of Unicode TR39: each character
# is decomposed to its compatibility form (NFKD: fullwidth and small forms, mathematical letters,
# ligatures such as U+FB06 "st"), combining marks and format characters are dropped, and what
# remains goes through _CONFUSABLES below. NFKD rather than NFKC: composition could hide a `<`
# (`<` + U+0338 composes to U+226E). Only the parts of the text that are neutralised change; the
# rest is shown as written. `\u2039` is the neutral form of `<` and is never folded back to it.
#
# Characters a model may read as `[ ] | : < / ! ?` or as Latin letters, that NFKD leaves alone.
# Curated, not the whole TR39 table: what can spell a stamp (`[x | trust:y]`) or a tag opener.
_CONFUSABLE_PAIRS = (
    # brackets: white, tortoise shell, lenticular, quill, corner and ceiling forms
    (
        "[",
        "\u27e6\u301a\u2045\u2772\u3014\u3010\u3016\u3018\u298b\u298d\u298f\u2e22\u2e24"
        "\u2308\u230a\u23a1\u23a3\u2997",
    ),
    (
        "]",
        "\u27e7\u301b\u2046\u2773\u3015\u3011\u3017\u3019\u298c\u298e\u2990\u2e23\u2e25"
        "\u2309\u230b\u23a4\u23a6\u2998",
    ),
    # vertical bars: divides, dental click, paseq, box drawing, ornaments, runic, Tifinagh
    (
        "|",
        "\u2223\u01c0\u05c0\u2502\u2503\u2758\u2759\u275a\u23b8\u23b9\u23d0\u4e28\u16c1"
        "\u2d4f\u2016\u0964",
    ),
    # colons: ratio, modifier letters, Armenian, Hebrew, runic, Syriac, Mongolian, Lisu, Z notation
    (":", "\u2236\u02d0\u02f8\ua789\u0589\u05c3\u16ec\u205a\u0703\u0704\u1804\ua4fd\u2982"),
    # less-than: angle brackets, ornaments, double angles, syllabics pa, modifier arrowhead
    ("<", "\u3008\u27e8\u276e\u276c\u27ea\u300a\u1438\u02c2\u29fc\u2991"),
    ("/", "\u2044\u2215\u29f8\u2571\u27cb\u3033\u1735"),
    ("!", "\u01c3\u2d51"),
    ("?", "\u0294\u0241\u097d"),
    # Latin letters: Cyrillic, Greek, Armenian, Cherokee, small capitals and other Latin letters
    ("a", "\u0430\u03b1\u0251\u1d00"),
    ("b", "\u0432\u0299\u042c\u044c"),
    ("c", "\u0441\u03f2\u1d04\u217d\u13df"),
    ("d", "\u0501\u1d05\u13e7\u217e"),
    ("e", "\u0435\u0451\u1d07\u212e\u04bd"),
    ("f", "\ua730\u0192"),
    ("g", "\u0261\u0262\u0581\u018d"),
    ("h", "\u04bb\u0570\u029c\u13c2"),
    ("i", "\u0456\u0131\u03b9\u0269\u026a\u04cf\u13a5\u2170\u0406\u0399\u04c0\u2160"),
    ("j", "\u0458\u03f3\u0237\u1d0a\u0408\u037f\u13ab"),
    ("k", "\u03ba\u043a\u1d0b\u039a\u041a\u13e6\u212a"),
    ("l", "\u217c\u029f\u13de\u2112"),
    ("m", "\u1d0d\u217f\u039c\u041c\u13b7"),
    ("n", "\u0578\u0274\u039d\u03b7"),
    ("o", "\u043e\u03bf\u0585\u1d0f\u041e\u039f\u0555\u2c9f\u0d20"),
    ("p", "\u0440\u03c1\u1d18\u0420\u03a1\u13e2"),
    ("q", "\u051b\u0566\u0563"),
    ("r", "\u0433\u0280\u1d26\u13a1\u0491\u1d3f"),
    ("s", "\u0455\ua731\u0405\u13da\u054f\u01bd"),
    ("t", "\u0442\u03c4\u1d1b\u0422\u03a4\u13a2\u01ad"),
    ("u", "\u057d\u03c5\u1d1c\u028b"),
    ("v", "\u03bd\u0475\u1d20\u2174\u13d9"),
    ("w", "\u051d\u1d21\u0561\u13b3\u03c9"),
    ("x", "\u0445\u03c7\u2179\u0425\u03a7\u2169"),
    ("y", "\u0443\u03b3\u028f\u04af\u0423\u03a5\u13a9"),
    ("z", "\u1d22\u0396\u13c3"),
)
_CONFUSABLES = {ord(c): a for a, chars in _CONFUSABLE_PAIRS for c in chars}


class _Folds(dict):  # type: ignore[type-arg]
    """Code point -> its skeleton string, computed once per character on first use."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if unicodedata.category(char) == "Cf":
            folded = ""
        elif code in _CONFUSABLES:
            folded = _CONFUSABLES[code]
        else:
            folded = "".join(
                _CONFUSABLES.get(ord(part), part)
                for part in unicodedata.normalize("NFKD", char)
                if not unicodedata.combining(part) and unicodedata.category(part) not in _MARKS
            )
        self[code] = folded
        return folded


class _FormatCharacters(dict):  # type: ignore[type-arg]
    """For str.translate: delete every format character (Cf), whatever the Unicode version."""

    def __missing__(self, code: int) -> int | None:
        value = None if unicodedata.category(chr(code)) == "Cf" else code
        self[code] = value
        return value


_MARKS = ("Mn", "Me")
_FOLDS = _Folds()
_FORMAT = _FormatCharacters()
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# A bracketed span of one line with no bracket inside, and a trust claim: `| trust :`. Each
# pattern can only scan forward from its first character, so both run in linear time.
_BRACKETED = re.compile(r"\[[^\[\]\n]*\]")
_TRUST_CLAIM = re.compile(r"\|(\s*)trust\s*:", re.IGNORECASE)
_NESTING_PASSES = 8  # `[[a | trust:x] | trust:y]` needs two; every trust claim is disarmed anyway
# A tag opener: `<` followed by a letter, `/`, `!` or `?` (so `a < b` and `->` are left alone).
_TAG_OPEN = re.compile(r"<(?=[!?]|\s*/|[^\W\d_])")
_OPAQUE_REDACTED = "(REDACTED)"  # how a redaction marker looks to the stamp rule: no brackets
_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Private key blocks, terminated or not.
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY"
        r"( BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    re.compile(
        r"(?<![0-9A-Za-z])(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}(?![0-9A-Za-z])"
    ),  # AWS key IDs
    re.compile(r"(?<![0-9A-Za-z])AIza[0-9A-Za-z_\-]{35}"),  # Google API keys
    re.compile(r"(?<![0-9A-Za-z])gh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"(?<![0-9A-Za-z])github_pat_[A-Za-z0-9_]{20,}"),  # GitHub fine-grained tokens
    re.compile(
        r"(?<![0-9A-Za-z])xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}"
    ),  # Slack tokens (incl. xoxe.)
    re.compile(r"(?<![0-9A-Za-z])xapp-[0-9]-[A-Za-z0-9-]{10,}"),  # Slack app tokens
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),  # Slack webhooks
    re.compile(r"(?<![0-9A-Za-z])sk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"),  # Anthropic / OpenAI keys
    re.compile(r"(?<![0-9A-Za-z])glpat-[A-Za-z0-9_\-]{20,}"),  # GitLab tokens
    re.compile(r"(?<![0-9A-Za-z])npm_[A-Za-z0-9]{36}(?![0-9A-Za-z])"),  # npm tokens
    re.compile(r"(?<![0-9A-Za-z])(?:sk|rk)_live_[A-Za-z0-9]{20,}"),  # Stripe keys
    re.compile(
        r"(?<![0-9A-Za-z])eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"
    ),  # JWTs
    re.compile(r"(?i)(?<![0-9A-Za-z])bearer\s+[A-Za-z0-9._~+/\-]{20,}=*"),  # bearer tokens
    re.compile(r"(?i)(?<![0-9A-Za-z])basic\s+[A-Za-z0-9+/]{8,}={0,2}"),  # HTTP Basic credentials
    re.compile(r"(?i)(?<=://)[^\s:/@]+:[^\s@/]+(?=@)"),  # credentials in URLs
)
# `password=...`, `api_key: ...`, `"client_secret": "..."`: keep the key, redact the value.
_ASSIGNED_SECRET = re.compile(
    r"""(?ix)
    (
      (?:(?<![A-Za-z0-9_.-])[A-Za-z0-9_.-]*?  # any prefix: PGPASSWORD, DB_PASSWORD, STRIPE_API_KEY
          (?:password|passwd|passphrase|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key
            |account[_-]?key)  # Azure AccountKey=, SharedAccessKey=
        |(?<![A-Za-z0-9])  # a word on its own (GITHUB_TOKEN, auth-token), but not mytoken
          (?:pwd|token|access[_-]?token|auth[_-]?token|refresh[_-]?token))
      \b(?:\\?["'])?[^\S\n]*[:=][^\S\n]*)
    (?!\[REDACTED\])
    ([|>][-+0-9]*[^\S\n]*(?:(?:\n[^\S\n]+[^\n]*)+|[^\n]*)  # a YAML block scalar
    |\\"(?:[^\\\n]|\\(?!"))*\\"  # an escaped-quoted value, as in JSON inside a string
    |"[^"\n]*"|'[^'\n]*'|[^\s,;"'\]\}\\]+)
    """
)


def strip_unsafe(text: str) -> str:
    """Drop ANSI sequences, control, format (Cf), zero-width and bidi characters; tabs become
    spaces."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\t", " "))
    text = _INVISIBLE.sub("", text.replace("\r", "\n"))
    return text if text.isascii() else text.translate(_FORMAT)


def skeleton(text: str) -> str:
    """The folded form the stamp and tag rules are judged on (see _CONFUSABLE_PAIRS)."""
    return text if text.isascii() else text.translate(_FOLDS)


def _fold_map(text: str) -> tuple[str, list[int], list[int], list[int]]:
    """The skeleton and, for each stretch of it, (skeleton start, text start, width): a width of
    0 is a run where both advance together, otherwise one character of the text whose fold is
    that many skeleton characters wide. Only non-ASCII characters are visited."""
    pieces: list[str] = []
    skel_starts, text_starts, widths = [0], [0], [0]
    done = 0  # text consumed
    at = 0  # skeleton length so far
    for match in _NON_ASCII.finditer(text):
        index = match.start()
        char = match.group()
        folded = _FOLDS[ord(char)]
        if folded == char:
            continue
        pieces.append(text[done:index])
        at += index - done
        if folded:  # a format character folds to nothing: only the run after it is recorded
            pieces.append(folded)
            skel_starts.append(at)
            text_starts.append(index)
            widths.append(len(folded))
            at += len(folded)
        done = index + 1
        skel_starts.append(at)
        text_starts.append(done)
        widths.append(0)
    pieces.append(text[done:])
    return "".join(pieces), skel_starts, text_starts, widths


def neutralise_markup(text: str) -> str:
    """Make stamp lookalikes and tag openers inert while keeping them readable, judged on the
    skeleton: `[x | trust:y]` becomes `(x | trust=y)`, every other `| trust:` loses its colon,
    and a tag opener's `<` becomes `\u2039`. A redaction marker is opaque to the stamp rule, so
    it cannot be used to break a stamp's shape. Only the characters that change are replaced;
    the rest of the text is kept as written."""
    if text.isascii():
        folded, skel_starts, text_starts, widths = text, [0], [0], [0]
    else:
        folded, skel_starts, text_starts, widths = _fold_map(text)
    work = folded.replace(REDACTED, _OPAQUE_REDACTED)
    edits: dict[int, str] = {}  # skeleton position -> its new character

    def disarm(match: re.Match[str]) -> str:
        span = match.group()
        if not _TRUST_CLAIM.search(span):
            return span
        edits[match.start()] = "("
        edits[match.end() - 1] = ")"
        return f"({span[1:-1]})"

    for _ in range(_NESTING_PASSES):
        work, count = _BRACKETED.subn(disarm, work)
        if not count or not _TRUST_CLAIM.search(work):
            break
    for match in _TRUST_CLAIM.finditer(work):
        # `| trust` spelt plainly (whatever look-alikes spelt it), the colon made `=`.
        edits[match.start()] = "|"
        word = match.end(1)
        for offset, letter in enumerate("trust"):
            edits[word + offset] = letter
        edits[match.end() - 1] = "="
    for match in _TAG_OPEN.finditer(work):
        edits[match.start()] = "\u2039"
    if not edits:
        return text
    if len(skel_starts) == 1:  # the skeleton is the text itself
        return _apply(text, edits)
    return _apply_mapped(text, folded, edits, skel_starts, text_starts, widths)


def _apply(text: str, edits: dict[int, str]) -> str:
    pieces = []
    done = 0
    for position in sorted(edits):
        pieces.append(text[done:position])
        pieces.append(edits[position])
        done = position + 1
    pieces.append(text[done:])
    return "".join(pieces)


def _apply_mapped(
    text: str,
    folded: str,
    edits: dict[int, str],
    skel_starts: list[int],
    text_starts: list[int],
    widths: list[int],
) -> str:
    """Apply skeleton edits to the text: an edited character of a run is replaced as it is; an
    edited folded character is replaced by its (edited) skeleton, e.g. a fullwidth `[` by `(`."""
    replaced: dict[int, str] = {}  # text position -> replacement
    for position in sorted(edits):
        stretch = bisect.bisect_right(skel_starts, position) - 1
        start, width = skel_starts[stretch], widths[stretch]
        if width == 0:
            replaced[text_starts[stretch] + position - start] = edits[position]
            continue
        index = text_starts[stretch]
        if index not in replaced:
            replaced[index] = "".join(
                edits.get(at, folded[at]) for at in range(start, start + width)
            )
    return _apply(text, replaced)


def redact_secrets(text: str) -> tuple[str, int]:
    """Replace secrets with [REDACTED]; return the text and how many were replaced."""
    count = 0
    for pattern in _SECRET_PATTERNS:
        text, n = pattern.subn(REDACTED, text)
        count += n

    def _keep_key(match: re.Match[str]) -> str:
        value = match.group(2)
        if not value.strip("\"'"):
            return match.group(0)
        nonlocal count
        count += 1
        return match.group(1) + REDACTED

    text = _ASSIGNED_SECRET.sub(_keep_key, text)
    return text, count


def clean(text: str) -> str:
    """Everything memory text goes through before it is shown: strip, redact, neutralise."""
    text, _ = redact_secrets(strip_unsafe(text))
    return neutralise_markup(text)
