# Memory text is data, never instructions. This module makes it safe to put in front of a model:
# it strips what a terminal or a model could read as control (ANSI sequences, C0/C1 controls,
# zero-width and bidi characters), neutralises what could pass for a trust stamp or a tag, and
# redacts secrets.
#
# One job, kept whole though it runs past 450 lines: text made safe to show a model. `clean`,
# which every block line goes through, runs the three steps in one order (strip, redact,
# neutralise), and that order is kept in this one place; most of the length is the data the
# steps need (the secrets' patterns, the look-alike and format-character tables).
#
# Each skill carries a copy of this file (a skill folder must be self-contained, since
# `npx skillmds add` copies only that folder); `python3 scripts/dev.py sync-shared` writes
# the copies and `sync-shared --check` (run by the tests) fails when one differs.
from __future__ import annotations

import bisect
import re
import unicodedata
from datetime import datetime, timezone

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
# Secrets. The rule set follows the default rules of gitleaks and the detectors of detect-secrets
# (references/secrets.md lists what is covered): tokens known by their prefix, private key
# blocks, credentials in URLs, HTTP auth headers, netrc and `curl -u`, signatures of signed URLs,
# assignments to secret-sounding names in env, shell, YAML, JSON and TOML syntax, and
# high-entropy values in any assignment. Every pattern scans forward from a literal or a single
# character class and cannot backtrack over more than one token, so redaction is linear.
#
# Tokens known by their prefix, one alternation (one pass over the text). A match counts only
# when no ASCII letter, digit or `_` is glued before it (checked in _redact_token).
_TOKEN_RULES = (
    r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])[A-Z0-9]{16}",  # AWS
    r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
    r"ya29\.[0-9A-Za-z_\-]{20,}",  # Google OAuth access token
    r"GOCSPX-[0-9A-Za-z_\-]{20,}",  # Google OAuth client secret
    r"gh[pousr]_[A-Za-z0-9]{20,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{20,}",  # GitHub fine-grained tokens
    r"gl(?:pat|dt|rt|ptt|soat|cbt|ft|imt|agent)-[A-Za-z0-9_\-]{20,}",  # GitLab tokens
    r"xox[a-z](?:\.xox[a-z])?-[A-Za-z0-9-]{10,}",  # Slack tokens (incl. xoxe.)
    r"xapp-[0-9]-[A-Za-z0-9-]{10,}",  # Slack app tokens
    r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]+",  # Slack hooks
    r"sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",  # Anthropic / OpenAI keys
    r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,}",  # Stripe secret and restricted keys
    r"whsec_[A-Za-z0-9+/=]{20,}",  # webhook signing secrets (Stripe, Svix)
    r"npm_[A-Za-z0-9]{36}",  # npm tokens
    r"pypi-[A-Za-z0-9_\-]{50,}",  # PyPI upload tokens
    r"rubygems_[a-f0-9]{48}",  # RubyGems API keys
    r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",  # SendGrid API keys
    r"key-[0-9a-f]{32}",  # Mailgun API keys
    r"[0-9a-f]{32}-us[0-9]{1,2}(?![0-9])",  # Mailchimp API keys
    r"hf_[A-Za-z0-9]{30,}",  # Hugging Face tokens
    r"api_org_[A-Za-z0-9]{30,}",  # Hugging Face organisation tokens
    r"SK[0-9a-fA-F]{32}",  # Twilio API keys
    r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",  # Shopify tokens
    r"do[opr]_v1_[a-f0-9]{64}",  # DigitalOcean tokens
    r"dapi[a-h0-9]{32}",  # Databricks tokens
    r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",  # Doppler tokens
    r"lin_api_[A-Za-z0-9]{40}",  # Linear API keys
    r"glc_[A-Za-z0-9+/]{32,}={0,2}",  # Grafana cloud tokens
    r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",  # Grafana service account tokens
    r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",  # Postman API keys
    r"pul-[a-f0-9]{40}",  # Pulumi tokens
    r"hv[sb]\.[A-Za-z0-9_\-]{24,}",  # HashiCorp Vault tokens
    r"sntr[ysu]s?_[A-Za-z0-9+/=_\-]{40,}",  # Sentry tokens
    r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",  # age secret keys
    r"[0-9]{8,10}:AA[0-9A-Za-z_\-]{33}",  # Telegram bot tokens
    r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}",  # Square tokens
    r"AKC[a-zA-Z0-9]{60,}",  # Artifactory API keys
    r"ATATT3[A-Za-z0-9_\-=]{100,}",  # Atlassian API tokens
    r"[a-zA-Z0-9_~.]{3}[0-9]Q~[a-zA-Z0-9_~.\-]{31,34}",  # Azure AD client secrets
    r"sbp_[a-f0-9]{40}",  # Supabase tokens
    r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,}",  # PlanetScale tokens
    r"NRAK-[A-Z0-9]{27}",  # New Relic user API keys
    r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}",  # Dynatrace tokens
    r"sk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}",  # Mapbox secret tokens
    r"LTAI[A-Za-z0-9]{20}",  # Alibaba Cloud access key IDs
    r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWTs
)
_TOKENS = re.compile("|".join(_TOKEN_RULES))
_GLUED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    # Private key blocks, terminated or not.
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY"
        r"( BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    re.compile(r"(?i)(?<![0-9A-Za-z])bearer\s+[A-Za-z0-9._~+/\-]{20,}=*"),  # bearer tokens
    # HTTP Basic credentials: base64, so not a plain word ("basic structures" is kept): past its
    # first character the credentials hold an upper-case letter, a digit, `+`, `/` or `=`.
    re.compile(
        r"(?<![0-9A-Za-z])(?i:basic)\s+(?=[A-Za-z0-9+/][a-z]*[A-Z0-9+/=])[A-Za-z0-9+/]{8,}={0,2}"
    ),
    # Credentials in URLs, the user part empty or not: scheme://user:password@host.
    re.compile(r"(?<=://)[^\s:/@]*:[^\s@/]+(?=@)"),
)
# Values that keep the name before them: (pattern, group of the value).
_KEPT_NAME_PATTERNS: tuple[re.Pattern[str], ...] = (
    # netrc: `machine HOST login USER password PASS` (and `default ...`, and `account`).
    re.compile(
        r"(?i)((?<![A-Za-z0-9_])(?:machine|default)[^\S\n][^\n]{0,200}?"
        r"(?<![A-Za-z0-9_])(?:password|passwd|account)[^\S\n]+)([^\s]+)"
    ),
    # curl -u / --user / --proxy-user USER:PASSWORD, quoted or not.
    re.compile(
        r"((?<![A-Za-z0-9_-])(?:-u|--user|--proxy-user|-U)(?:[^\S\n]+|=)[\"']?[^\s:\"']*:)"
        r"([^\s\"']+)"
    ),
    # Signatures and tokens in the query of a signed URL.
    re.compile(
        r"(?i)((?<=[?&;])(?:x-amz-signature|x-amz-credential|x-amz-security-token"
        r"|x-goog-signature|x-goog-credential|signature|sig|token|access_token|refresh_token"
        r"|id_token|api_key|apikey|key|client_secret|secret|password|auth)=)"
        r"(?!\[REDACTED\])([^&\s#\"'<>]+)"  # a value redacted before stays as it is
    ),
)
# `password=...`, `api_key: ...`, `"client_secret": "..."`, `export DB_PASS='...'`, TOML
# `secret_key = "..."`: the name is kept, the value redacted when the name sounds secret or the
# value looks like a random key (_random_value). Only the name and its separator are matched
# first, so an assignment inside another's value (`target: "export API_KEY=..."`) is seen too.
_ASSIGNMENT_HEAD = re.compile(
    r"(?<![A-Za-z0-9_.-])-{0,2}([A-Za-z_][A-Za-z0-9_.-]*)(?:\\?[\"'])?[^\S\n]*(?::=|[:=])[^\S\n]*"
)
_VALUE = re.compile(
    r"""(?x)
    (?!\[REDACTED\])
    (?:[|>][-+0-9]*[^\S\n]*(?:(?:\n[^\S\n]+[^\n]*)+|[^\n]*)  # a YAML block scalar
    |\\"(?:[^\\\n]|\\(?!"))*(?:\\")?  # an escaped-quoted value, as in JSON in a string
    |"[^"\n]*"?|'[^'\n]*'?|[^\s,;"'\]\}\\]+)  # quoted to the line's end when not closed
    """
)
# A value judged by its look alone is a key, so at most this long: the scan stays linear.
_SHORT_VALUE = re.compile(
    r"""(?!\[REDACTED\])(?:"[^"\n]{1,200}"|'[^'\n]{1,200}'|[^\s,;"'\]\}\\]{1,200})"""
)
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# Words of a name that make its value a secret; `key` only as the last word of a longer name,
# after none of the words that make a key an identifier.
_SECRET_WORDS = frozenset(
    "password passwd pwd pass passphrase passcode secret secrets token credential credentials"
    " apikey auth privatekey".split()
)
_SECRET_SUFFIXES = ("password", "passwd", "secret", "token", "apikey")
_NOT_SECRET_KEYS = frozenset(
    "primary foreign sort partition cache hash unique composite public lookup row range index"
    " dict map hot idempotency join group ssh object".split()
)
# Values that are no secret: booleans, null, references to a variable, template holes,
# masks (`***`, `xxxx`). The value can be cut at `}` or a space, so openers are enough.
_PLACEHOLDER = re.compile(
    r"(?i)(?:true|false|yes|no|on|off|null|none|nil|~|\$\{.*|\$[A-Za-z_][A-Za-z0-9_]*"
    r"|<.*|\{\{.*|%\([^)]*\)s|(.)\1*)"
)
_RANDOM_VALUE = re.compile(r"[A-Za-z0-9+/=_\-]{24,}")
_HEX_OR_UUID = re.compile(r"[0-9a-fA-F]+|[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def _redact_assignments(text: str) -> tuple[str, int]:
    pieces = []
    done = 0  # text before this is written out; a head inside a redacted value is skipped
    count = 0
    for head in _ASSIGNMENT_HEAD.finditer(text):
        if head.start() < done:
            continue
        at = head.end()
        secret_name = _secret_name(head.group(1))
        value = (_VALUE if secret_name else _SHORT_VALUE).match(text, at)
        if value is None:
            continue
        shown = value.group()
        bare = shown.strip("\"'\\")
        if not bare or (shown[:1] not in "|>" and _PLACEHOLDER.fullmatch(bare)):
            continue
        if not (secret_name or _random_value(bare)):
            continue
        pieces.append(text[done:at])
        pieces.append(REDACTED)
        done = value.end()
        count += 1
    if not count:
        return text, 0
    pieces.append(text[done:])
    return "".join(pieces), count


def _secret_name(name: str) -> bool:
    words = [word.lower() for word in _NAME_WORDS.findall(name)]
    if not words:
        return False
    if any(word in _SECRET_WORDS or word.endswith(_SECRET_SUFFIXES) for word in words):
        return True
    joined = "".join(words)
    if joined.endswith(("apikey", "accesskey", "privatekey", "accountkey", "secretkey")):
        return True
    return len(words) > 1 and words[-1] == "key" and words[-2] not in _NOT_SECRET_KEYS


def _entropy(value: str) -> float:
    import math

    counts: dict[str, int] = {}
    for char in value:
        counts[char] = counts.get(char, 0) + 1
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _random_value(value: str) -> bool:
    """A value shaped like a generated key: long, of key characters, mixing cases and digits,
    high in entropy (detect-secrets' base64 limit), and not a hash or UUID."""
    if not _RANDOM_VALUE.fullmatch(value) or _HEX_OR_UUID.fullmatch(value):
        return False
    if not (any(c.isdigit() for c in value) and any(c.isupper() for c in value)):
        return False
    return any(c.islower() for c in value) and _entropy(value) >= 4.0


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
    disarmed = 0

    def disarm(match: re.Match[str]) -> str:
        nonlocal disarmed
        span = match.group()
        if not _TRUST_CLAIM.search(span):
            return span
        disarmed += 1
        edits[match.start()] = "("
        edits[match.end() - 1] = ")"
        return f"({span[1:-1]})"

    for _ in range(_NESTING_PASSES):  # a disarmed span can expose the one around it
        disarmed = 0
        work = _BRACKETED.sub(disarm, work)
        if not disarmed:
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
    redacted_end = -1  # where the last redacted token ended: one glued to it is no word part

    def _redact_token(match: re.Match[str]) -> str:
        nonlocal count, redacted_end
        start = match.start()
        if start and start != redacted_end and match.string[start - 1] in _GLUED:
            return match.group()
        count += 1
        redacted_end = match.end()
        return REDACTED

    text = _TOKENS.sub(_redact_token, text)
    for pattern in _SECRET_PATTERNS:
        text, n = pattern.subn(REDACTED, text)
        count += n

    def _keep_name(match: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return match.group(1) + REDACTED

    for pattern in _KEPT_NAME_PATTERNS:
        text = pattern.sub(_keep_name, text)

    text, assigned = _redact_assignments(text)
    count += assigned
    return text, count


def clean(text: str) -> str:
    """Everything memory text goes through before it is shown: strip, redact, neutralise."""
    text, _ = redact_secrets(strip_unsafe(text))
    return neutralise_markup(text)


def parse_iso_datetime(value: str) -> datetime | None:
    """An ISO 8601 date or date-time as an aware UTC datetime (naive means UTC), or None. What
    a person writes around one is forgiven: spaces, Markdown's backticks, asterisks and
    underscores, quotes, and a space or lower-case `t` between date and time."""
    value = value.strip().strip("`*_\"'")
    if not value:
        return None
    if value[-1] in "zZ":
        value = value[:-1] + "+00:00"
    if len(value) >= 11 and value[10] in " t":
        value = value[:10] + "T" + value[11:]
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


CONFLICT_MARKS = ("<<<<<<<", "|||||||", ">>>>>>>")  # git writes them at the start of a line


def conflict_mark(line: str) -> str | None:
    """The git conflict marker a line starts with (<<<<<<<, ||||||| or >>>>>>>, then the line's
    end, a space, a tab or a carriage return, as git writes them), or None."""
    for mark in CONFLICT_MARKS:
        if line.startswith(mark) and line[len(mark) : len(mark) + 1] in ("", " ", "\t", "\r"):
            return mark
    return None
