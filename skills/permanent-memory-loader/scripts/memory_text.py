# Memory text is data, never instructions. This module makes it safe to put in front of a model:
# it strips what a terminal or a model could read as control (ANSI sequences, C0/C1 controls,
# zero-width and bidi characters), neutralises what could pass for a trust stamp or a tag, and
# redacts secrets.
#
# Both skills carry a byte-identical copy of this file (a skill folder must be self-contained,
# since `npx skillmds add` copies only that folder); tests/memory_text_test.py keeps them equal.
from __future__ import annotations

import re

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
# Anything shaped like a stamp: `[ ... | trust: ... ]`, with or without spaces or case.
_STAMP = re.compile(r"\[([^\[\]\n]*?)\|(\s*)trust(\s*):([^\[\]\n]*)\]", re.IGNORECASE)
# The core of a stamp, `| trust:`; used when stamps nest deeper than _STAMP_PASSES.
_TRUST_COLON = re.compile(r"\|(\s*)trust(\s*):", re.IGNORECASE)
_STAMP_PASSES = 4
# A tag opener: `<` followed by a name, `/`, `!` or `?` (so `a < b` and `->` are left alone).
_TAG_OPEN = re.compile(
    r"<(?=[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]*"  # combining marks
    r"(?:[!?A-Za-z]|\s*/))"
)
# Characters a model reads as `[`, `]`, `|`, `:`, `<`, `>` or ASCII letters: the fullwidth forms
# (U+FF01-FF5E: fullwidth brackets, bar, colon, letters), small and math angle brackets. Folded
# to ASCII before the stamp and tag patterns run, so a lookalike is neutralised like the original.
_FOLD_LOOKALIKES = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}
_FOLD_LOOKALIKES.update(
    {
        ord(c): ord(a)
        for c, a in zip(
            "\ufe64\ufe65\u3008\u3009\u2329\u232a\u27e8\u27e9\u2223\u01c0", "<><><><>||"
        )
    }
)

_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Private key blocks, terminated or not.
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY"
        r"( BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),  # AWS key IDs
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),  # Google API keys
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"),  # GitHub tokens
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),  # GitHub fine-grained tokens
    re.compile(r"\bxox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}"),  # Slack tokens (incl. xoxe.)
    re.compile(r"\bxapp-[0-9]-[A-Za-z0-9-]{10,}"),  # Slack app tokens
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),  # Slack webhooks
    re.compile(r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{20,}"),  # Anthropic / OpenAI keys
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"),  # GitLab tokens
    re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"),  # npm tokens
    re.compile(r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,}"),  # Stripe keys
    re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),  # JWTs
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{20,}=*"),  # bearer tokens
    re.compile(r"(?i)\bbasic\s+[A-Za-z0-9+/]{8,}={0,2}"),  # HTTP Basic credentials
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
    """Drop ANSI sequences, control, zero-width and bidi characters; tabs become spaces."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\t", " "))
    return _INVISIBLE.sub("", text.replace("\r", "\n"))


def neutralise_markup(text: str) -> str:
    """Make stamp lookalikes and tag openers inert while keeping them readable."""
    text = text.translate(_FOLD_LOOKALIKES)
    # Repeat: neutralising an inner lookalike can expose an outer one (`[[a | trust:x] | trust:y]`).
    # Each pass is linear; nesting deeper than a few passes is an attack (one pass per level made
    # 20 KB take seconds), so then every remaining `| trust:` loses its colon: no stamp survives.
    for _ in range(_STAMP_PASSES):
        text, n = _STAMP.subn(r"(\1|\2trust\3=\4)", text)
        if not n:
            break
    else:
        text = _TRUST_COLON.sub(r"|\1trust\2=", text)
    return _TAG_OPEN.sub("\u2039", text)  # single left-pointing angle quotation mark


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
