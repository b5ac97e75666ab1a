# What `import` reads in a record a project already has: the format recognised from the text
# (Nygard / adr-tools, MADR 1-4, log4brains, RFC and KEP folders, other agents' path-scoped rule
# files), and the record's facts: number, slug, title, date, status, successor, the decision's
# first sentences, the consequences that constrain later work, the terms and the paths it names.
# Pure: text in, records out; pm_import reads the files and pm_import_plan makes them epics.
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date
from typing import NamedTuple

# A record's status, as the import acts on it.
ACCEPTED, PROPOSED, SUPERSEDED, REJECTED = "accepted", "proposed", "superseded", "rejected"
_STATUS_WORDS = tuple(
    # (status, words that begin the status text), first match wins; superseding is read first
    (status, tuple(words.split("|")))
    for status, words in (
        (REJECTED, "rejected|declined|withdrawn|abandoned|not accepted|refused"),
        (SUPERSEDED, "superseded|superceded|deprecated|obsolete|replaced|retired"),
        (
            PROPOSED,
            "proposed|proposal|draft|in review|under review|review|in progress|provisional|"
            "open|pending|discussion|wip|on hold|deferred|rfc|tentative|under discussion|idea|"
            "todo|tbd",
        ),
        (
            ACCEPTED,
            "accepted|approved|decided|done|implemented|implementable|adopted|agreed|active|"
            "final|completed|complete|merged|in effect|stable|amended|valid|current|live|"
            "published|closed",
        ),
    )
)
MAX_SENTENCE_CHARS = 220
MAX_DECISIONS = 3
MAX_CONSTRAINTS = 3
MAX_TERMS = 40

_HEADING = re.compile(r"(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"[ \t]*(```|~~~)")
_LINK = re.compile(r"!?\[([^\]\n]{0,300})\]\(([^)\s\n]{0,500})[^)\n]{0,200}\)")
_REF_LINK = re.compile(r"\[([^\]\n]{1,300})\]\[[^\]\n]{0,100}\]")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"</?[A-Za-z][^<>\n]{0,200}>")
_LIST = re.compile(r"[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*[ \t]+(?=[A-Z`\"'(\[])")
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_COMPACT_DATE = re.compile(r"(\d{4})(\d{2})(\d{2})")
_FILE_NAME = re.compile(
    r"(?:(?P<date>\d{4}-\d{2}-\d{2}|\d{8})[-_])?"
    r"(?:(?P<prefix>adr|rfc|kep|dr|dec|decision)[-_]?)?"
    r"(?:(?P<number>\d{1,6})(?:[-_. ]+|$))?(?P<slug>.*)$",
    re.I,
)
_SUPERSEDED_BY = re.compile(r"super[sc]eded[ \t]+by[ \t:]*(.*)", re.I)
_TITLE_NUMBER = re.compile(r"(?:(?:adr|rfc|kep|decision)[ \t#-]*)?\d{1,6}[.:)\- \t]+", re.I)
_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_PATHISH = re.compile(r"(?<![\w/.:-])((?:[\w.@-]+/)+[\w.@*-]+/?)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9+#._-]{1,58}[A-Za-z0-9+#]")
_FENCED = re.compile(r"^[ \t]*(```|~~~).*?^[ \t]*\1[^\n]*$", re.M | re.S)
_METADATA = re.compile(r"[\w -]{1,30}:\s")  # `Date: …`, `Technical Story: …`
_URL = re.compile(r"\b(?:https?|ftp)://\S+|\bwww\.\S+")
_HOST = re.compile(r"\.(?:com|net|org|io|dev|gov|edu|co)\b")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|[a-z]\d|\.[a-z]{2,}")
STOP_WORDS = frozenset(
    """a an and are as at be by for from in into is it of on or over the this that to use
    using used with without we our should will can must not do does how what when which why
    add new support make adr rfc kep decision decisions record records proposal status
    via per about vs versus instead all any more less than its their they them these those
    """.split()
)

_RULE_KEYS = ("paths", "globs", "applyto", "alwaysapply")
_DECISION_HEADINGS = (
    "decision outcome", "decision", "decisions", "the decision", "decided", "outcome",
    "resolution", "proposal", "proposed solution", "proposed design", "solution",
    "detailed design", "design", "summary", "decision and rationale", "our decision",
)  # fmt: skip
_CONSEQUENCE_HEADINGS = (
    "consequences", "negative consequences", "positive consequences", "implications",
    "drawbacks", "risks and mitigations", "risks", "trade-offs", "tradeoffs", "caveats",
    "constraints", "limitations", "notes", "follow-up", "rationale",
)  # fmt: skip
_CONSTRAINT = re.compile(
    r"\b(must|must not|mustn't|never|do not|don't|should not|shouldn't|avoid|only|requires?|"
    r"need to|needs to|have to|has to|always|forbidden|not allowed|cannot|can't|no longer|"
    r"deprecated|instead of|breaking|bad, because)\b",
    re.I,
)
_ANTI = re.compile(
    r"\b(must not|mustn't|never|do not|don't|should not|shouldn't|avoid|forbidden|"
    r"not allowed|no longer)\b",
    re.I,
)
# Template text left in a record: `{placeholders}`, `[short title …]`, and the sentences of the
# KEP, RFC and MADR templates that ask for the content instead of giving it.
_TEMPLATE_LEFTOVER = re.compile(
    r"\{[^{}\n]{0,80}\}|\[(?:short title|title|name)[^\]]*\]|nitty gritty|"
    r"what are the risks of this proposal|how will we know that this has succeeded|"
    r"why should (?:this|we) .{0,20}not.{0,5} be implemented|describe the (?:problem|context)|"
    r"^(?:replace|fill in|insert) (?:this|the)",
    re.I,
)


class NotARecord(ValueError):
    """The text is in no format the import knows; str() says why, in a few words."""


class Record(NamedTuple):
    kind: str  # "adr" (Nygard), "madr", "log4brains", "rfc", "kep", "rule"
    number: str  # digits as written, or "" (a date-slug record, a rule file)
    slug: str
    title: str
    date: (
        str | None
    )  # YYYY-MM-DD from the record itself; None when it gives none (or an impossible one)
    status: str  # ACCEPTED, PROPOSED, SUPERSEDED or REJECTED
    status_text: str  # as written, "" when the record has none
    successor: str  # what a superseded record names as its successor, as written; "" for none
    decisions: tuple[str, ...]
    constraints: tuple[tuple[str, str], ...]  # ("gotchas" or "anti_patterns", sentence)
    terms: tuple[str, ...]  # the record's own terms: code spans, tool and library names
    named: tuple[str, ...]  # tokens that may name files, folders, packages or modules
    globs: tuple[str, ...] = ()  # rule files: the files they apply to
    notes: tuple[str, ...] = ()  # what the record had that the import read its own way


class Section(NamedTuple):
    level: int
    title: str  # lower-case, markup and numbering removed
    lines: tuple[str, ...]


def front_matter(text: str) -> tuple[dict[str, object], str]:
    """The YAML front matter (`---` lines first) as a mapping, and the text after it. A block
    that is not a mapping of YAML is no front matter."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---", 3)
    if end < 0 or text[end + 4 : end + 5] not in ("", "\n"):
        return {}, text
    import yaml

    try:
        data = yaml.safe_load(text[4:end])
    except (yaml.YAMLError, RecursionError, ValueError):
        # Cursor writes `globs: **/*.ts` unquoted, which YAML refuses: read `key: value` lines.
        data = dict(re.findall(r"(?m)^([A-Za-z][\w-]{0,40})[ \t]*:[ \t]*(.*?)[ \t]*$", text[4:end]))
    if not isinstance(data, dict):
        return {}, text[end + 4 :].lstrip("\n")
    return {str(key): value for key, value in data.items()}, text[end + 4 :].lstrip("\n")


def plain(text: str) -> str:
    """Markdown inline markup off (links as their text, emphasis, tags), spacing collapsed;
    code spans kept, since they name code."""
    text = _HTML_COMMENT.sub(" ", text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _REF_LINK.sub(lambda m: m.group(1), text)
    text = _TAG.sub(" ", text)
    text = re.sub(r"(\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*]))", "", text)
    return " ".join(text.split())


def sections(body: str) -> tuple[str, list[Section]]:
    """The first level-one heading's text (or "") and the sections under every heading, fenced
    code, tables and HTML comments left out of their lines."""
    body = _HTML_COMMENT.sub("", body)
    title = ""
    found: list[Section] = []
    level, name = 0, ""
    lines: list[str] = []
    in_fence = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        heading = _HEADING.fullmatch(line)
        if heading is not None:
            found.append(Section(level, name, tuple(lines)))
            level, name, lines = len(heading.group(1)), heading_key(heading.group(2)), []
            if level == 1 and not title:
                title = plain(heading.group(2))
            continue
        if line.lstrip().startswith("|"):
            continue
        lines.append(line)
    found.append(Section(level, name, tuple(lines)))
    return title, found


def heading_key(heading: str) -> str:
    text = plain(heading).lower().strip(" :.")
    text = re.sub(r"^(?:\d+(?:\.\d+)*\.?|[ivx]+\.)\s+", "", text)  # "2. Decision", "IV. Design"
    text = re.sub(r"[^\w\s-]", " ", text)
    return " ".join(text.split())


def section_named(found: Sequence[Section], names: Sequence[str]) -> tuple[int, Section] | None:
    for name in names:
        for index, section in enumerate(found):
            if section.title == name:
                return index, section
    return None


def under(found: Sequence[Section], index: int) -> list[Section]:
    """The section and its subsections (the ones after it at a deeper level)."""
    level = found[index].level
    block = [found[index]]
    for section in found[index + 1 :]:
        if section.level <= level:
            break
        block.append(section)
    return block


def paragraphs(lines: Sequence[str]) -> list[str]:
    """Paragraphs and list items, each as one plain line."""
    items: list[str] = []
    current: list[str] = []

    def close() -> None:
        if current:
            text = plain(" ".join(current))
            if text:
                items.append(text)
            current.clear()

    for line in lines:
        if not line.strip():
            close()
            continue
        marker = _LIST.match(line)
        if marker is not None:
            close()
            current.append(line[marker.end() :])
        else:
            current.append(line.strip())
    close()
    return items


def first_sentences(text: str, limit: int = 2) -> str:
    parts = _SENTENCE_END.split(text)
    sentence = " ".join(parts[:limit]).strip()
    if len(sentence) > MAX_SENTENCE_CHARS:
        sentence = sentence[: MAX_SENTENCE_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "\u2026"
    return sentence


def _usable(text: str) -> bool:
    """A sentence worth an entry: some words, not a template leftover or a bare label."""
    if len(text) < 12 or _TEMPLATE_LEFTOVER.search(text):
        return False
    lower = text.lower()
    if lower.startswith(("http://", "https://")):
        return False
    return not re.fullmatch(r"(?:tbd|todo|n/a|none|see (?:above|below)|links?)\b.{0,30}", lower)


def decision_sentences(found: Sequence[Section]) -> tuple[str, ...]:
    """The first sentences of the Decision / Decision Outcome / Proposal section (before its
    subsections), list items each on their own; never the context or the options."""
    hit = section_named(found, _DECISION_HEADINGS)
    if hit is None:
        return ()
    index, section = hit
    texts = paragraphs(section.lines)
    if not texts:  # "## Decision" with everything in its subsections
        texts = [t for s in under(found, index)[1:2] for t in paragraphs(s.lines)]
    chosen = []
    for text in texts:
        if text.endswith(":") and len(texts) > 1:  # "we decided the following:" + a list
            lead = text
            continue_list = [t for t in texts[texts.index(text) + 1 :]][: MAX_DECISIONS - 1]
            chosen = [first_sentences(lead + " " + continue_list[0], 1)] if continue_list else []
            chosen += [first_sentences(t, 1) for t in continue_list[1:]]
            break
        sentence = first_sentences(text)
        if _usable(sentence):
            chosen.append(sentence)
        if len(chosen) == MAX_DECISIONS:
            break
    return tuple(s for s in chosen if _usable(s))


def constraint_sentences(found: Sequence[Section]) -> tuple[tuple[str, str], ...]:
    """Consequences that constrain later work: their sentences that say must, never, avoid,
    only, requires, instead of, ... ("Bad, because" of MADR included), as gotchas, or as
    anti-patterns when they forbid."""
    picked: list[tuple[str, str]] = []
    for index, section in enumerate(found):
        if section.title not in _CONSEQUENCE_HEADINGS:
            continue
        for block in under(found, index):
            if block.title.startswith("positive") or block.title.startswith("good"):
                continue
            for text in paragraphs(block.lines):
                for sentence in _SENTENCE_END.split(text):
                    sentence = first_sentences(sentence, 1)
                    sentence = re.sub(r"^(?:bad|neutral),? because,?\s*", "", sentence, flags=re.I)
                    if text.lower().startswith("good") or not _CONSTRAINT.search(text):
                        continue
                    if not _usable(sentence) or not _CONSTRAINT.search(sentence):
                        continue
                    kind = "anti_patterns" if _ANTI.search(sentence) else "gotchas"
                    if all(sentence != s for _, s in picked):
                        picked.append((kind, sentence[0].upper() + sentence[1:]))
                    if len(picked) == MAX_CONSTRAINTS:
                        return tuple(picked)
    return tuple(picked)


def status_of(text: str) -> tuple[str, str]:
    """(ACCEPTED / PROPOSED / SUPERSEDED / REJECTED, the successor as written). Unknown words
    count as accepted: the record is in the project's folder of decisions."""
    words = plain(text).lower()
    words = re.sub(r"^[^a-z]+", "", words)  # "✅ Accepted", "- **Accepted**"
    found = _SUPERSEDED_BY.search(plain(text))
    if found is not None:
        return SUPERSEDED, found.group(1).strip(" .")
    for status, starts in _STATUS_WORDS:
        if words.startswith(starts):
            return status, ""
    return ACCEPTED, ""


def valid_date(text: str) -> str | None:
    """The first YYYY-MM-DD (or YYYYMMDD) in `text` that is a real date, as YYYY-MM-DD."""
    for pattern in (_DATE, _COMPACT_DATE):
        for found in pattern.finditer(text):
            try:
                day = date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
            except ValueError:
                continue
            if 1970 <= day.year <= 2100:
                return day.isoformat()
    return None


def file_parts(path: str) -> tuple[str, str, str]:
    """(date, number, slug) from a record's path: `0007-project-structure.md`,
    `adr-041-in-place-store-migrations.md`, `20210826-use-log4brains.md`,
    `rfcs/0012-foo/README.md` (the folder names it), `2021-07-20-8288-csv-enrichment.md`."""
    parts = path.split("/")
    name = parts[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    if stem.endswith(".instructions"):
        stem = stem[: -len(".instructions")]
    if stem.lower() in ("readme", "index") and len(parts) > 1:
        stem = parts[-2]
    found = _FILE_NAME.match(stem)
    assert found is not None  # every group is optional
    day = found.group("date") or ""
    number = found.group("number") or ""
    slug = found.group("slug") or ""
    if not slug and number and not day:
        slug, number = number, number
    return day, number, slug


def _slug_words(slug: str) -> str:
    return " ".join(re.split(r"[-_ ]+", slug)).strip()


def _named_tokens(text: str) -> list[str]:
    """Tokens of the record that may name code: code spans, and bare tokens with a `/`."""
    found: list[str] = []
    for span in _BACKTICKED.findall(text):
        found.append(span.strip())
    for token in _PATHISH.findall(_BACKTICKED.sub(" ", _LINK.sub(" ", text))):
        if "://" not in token and not token.startswith("www."):
            found.append(token)
    return found


def record_terms(title: str, body: str) -> tuple[str, ...]:
    """The record's own terms, the most frequent first (ties: the first seen): code spans that
    are one identifier, and the words written as names (CamelCase, ALLCAPS, dotted), each once,
    case aside."""
    counts: dict[str, int] = {}
    spelled: dict[str, str] = {}
    body = _FENCED.sub("\n", body)  # code and diagrams: their names are not the record's terms

    def keep(term: str) -> None:
        term = term.strip(" .,:;()[]'\"`*")
        key = term.lower()
        if 2 < len(term) <= 60 and key not in STOP_WORDS and "," not in term:
            spelled.setdefault(key, term)
            counts[key] = counts.get(key, 0) + 1

    for span in _BACKTICKED.findall(body):
        if re.fullmatch(r"[@\w.:/*+#-]{3,60}", span) and re.search(r"[A-Za-z]{2}", span):
            keep(span.rsplit("/", 1)[-1] if span.count("/") > 1 else span)
    prose = _URL.sub(" ", plain(_BACKTICKED.sub(" ", body)))
    for word in _WORD.findall(prose):
        if _HOST.search(word) or (len(word) > 20 and re.search(r"\d", word)):
            continue
        if _CAMEL.search(word) or (word.isupper() and len(word) > 2):
            keep(word)
    order = sorted(counts, key=lambda key: -counts[key])  # stable: first seen among equals
    return tuple(spelled[key] for key in order[:MAX_TERMS])


def clean_title(title: str) -> str:
    """`# 7. Use Kotlin`, `# ADR 012: X`, `RFC 8288 - 2021-07-20 - CSV Enrichment`: the X."""
    title = plain(title)
    title = re.sub(r"^(?:adr|rfc|kep|decision record)\s*:\s*", "", title, flags=re.I)
    found = _TITLE_NUMBER.match(title)
    if found is not None and found.end() < len(title):
        title = title[found.end() :]
    title = re.sub(r"^\d{4}-\d{2}-\d{2}\s*[-:]\s*", "", title)
    return title.strip(" -:")


def _meta_value(found: Sequence[Section], key: str) -> str | None:
    """A `Key: value` line (bold and list marker optional) in the first lines of the record,
    before or between its sections (`Date: 2020-01-01`, `* Status: accepted`)."""
    pattern = re.compile(rf"[ \t]*(?:[-*+][ \t]+)?(?:\*\*|__)?{key}(?:\*\*|__)?[ \t]*:(.*)", re.I)
    for section in found[:3]:
        if section.title in _DECISION_HEADINGS:
            break
        for line in section.lines[:30]:
            hit = pattern.fullmatch(line)
            if hit is not None:
                return plain(hit.group(1)).strip("* ")
    return None


def _status_section(found: Sequence[Section]) -> str | None:
    hit = section_named(found, ("status", "state"))
    if hit is None:
        return None
    texts = paragraphs(hit[1].lines)
    return " ".join(texts[:2]) if texts else None


def _front_text(meta: Mapping[str, object], *keys: str) -> str | None:
    for key in keys:
        value = meta.get(key)
        if isinstance(value, (str, int, float, date)) and not isinstance(value, bool):
            return str(value)
    return None


def rule_record(path: str, meta: Mapping[str, object], body: str) -> Record:
    """A rule file of another agent: the files it applies to as globs, its bullets."""
    lowered = {key.lower(): value for key, value in meta.items()}
    raw = lowered.get("paths", lowered.get("globs", lowered.get("applyto")))
    globs: list[str] = []
    values = raw if isinstance(raw, list) else [raw] if isinstance(raw, str) else []
    for value in values:
        if isinstance(value, str):
            globs.extend(part.strip().strip("\"'") for part in value.split(","))
    globs = [glob.removeprefix("./") for glob in globs if glob and glob not in ("**", "**/*", "*")]
    title, found = sections(body)
    slug = file_parts(path)[2]
    description = _front_text(meta, "description")
    title = title or (plain(description) if description else "") or _slug_words(slug)
    bullets = []
    for section in found:
        for line in section.lines:
            if _LIST.match(line):
                text = first_sentences(plain(line[_LIST.match(line).end() :]), 1)  # type: ignore[union-attr]
                if _usable(text):
                    bullets.append(text)
    if not bullets:
        bullets = [first_sentences(t) for s in found for t in paragraphs(s.lines)[:1]]
        bullets = [b for b in bullets if _usable(b)]
    if not bullets:
        raise NotARecord("a rule file with no bullet or sentence to keep")
    kinds = tuple(("anti_patterns" if _ANTI.search(b) else "decisions", b) for b in bullets)
    return Record(
        kind="rule",
        number="",
        slug=slug,
        title=title,
        date=None,
        status=ACCEPTED,
        status_text="",
        successor="",
        decisions=tuple(b for k, b in kinds if k == "decisions"),
        constraints=tuple((k, b) for k, b in kinds if k == "anti_patterns"),
        terms=record_terms(title, body),
        named=tuple(_named_tokens(body)),
        globs=tuple(globs),
    )


def is_rule(path: str, meta: Mapping[str, object]) -> bool:
    keys = {key.lower() for key in meta}
    if keys & set(_RULE_KEYS):
        return True
    return path.endswith(".mdc") or path.endswith(".instructions.md")


def kind_of(path: str, found: Sequence[Section], meta: Mapping[str, object], kep: bool) -> str:
    titles = {section.title for section in found if section.level >= 2}
    name = path.rsplit("/", 1)[-1]
    if kep:
        return "kep"
    if {"decision outcome", "considered options", "considered alternatives"} & titles or (
        "context and problem statement" in titles
    ):
        if re.match(r"\d{8}-", name):
            return "log4brains"
        return "madr"
    if "status" in titles and ("context" in titles or "decision" in titles):
        return "adr"
    if {"decision", "decisions", "the decision", "decided"} & titles:
        return "adr"
    if re.search(r"(^|/)(rfcs?|proposals?|design-docs?|keps?)/", path, re.I) or (
        {"motivation", "summary"} & titles
        and {"proposal", "detailed design", "design", "guide-level explanation"} & titles
    ):
        return "rfc"
    if meta.get("status") is not None and {"context", "decision"} & titles:
        return "madr"
    return ""


def parse_record(path: str, text: str, kep_yaml: str | None = None) -> Record:
    """The record in `text` (normalised: LF line ends, no BOM), found at the project-relative
    `path`; `kep_yaml` is the text of a kep.yaml beside a KEP's README.md. Raises NotARecord."""
    meta, body = front_matter(text)
    if is_rule(path, meta):
        return rule_record(path, meta, body)
    kep_meta: dict[str, object] = {}
    if kep_yaml is not None:
        kep_meta, _rest = front_matter("---\n" + kep_yaml.rstrip("\n") + "\n---\n")
    elif "kep-number" in meta:  # the older KEPs: kep.yaml's keys in the README's front matter
        kep_meta = meta
    title, found = sections(body)
    kind = kind_of(path, found, meta, bool(kep_meta))
    if not kind:
        raise NotARecord("no Status, Decision, Decision Outcome or Proposal section")
    day, number, slug = file_parts(path)
    if slug.lower() in ("template", "adr-template", "0000-template") or (
        number.strip("0") == "" and number and "template" in slug.lower()
    ):
        raise NotARecord("a template")
    notes: list[str] = []
    title = _front_text(kep_meta, "title") or _front_text(meta, "title") or title
    title = clean_title(title) if title else _slug_words(slug)
    if not number:
        number = str(_front_text(kep_meta, "kep-number") or "").strip()
    # The date: the record's own (front matter, a Date line, kep.yaml), then the file name's.
    written = (
        _front_text(kep_meta, "last-updated", "creation-date")
        if kind == "kep"
        else _front_text(meta, "date", "last-updated", "created")
    ) or _meta_value(found, "date")
    day_found = valid_date(written) if written else None
    if written and day_found is None:
        notes.append(f"date {written!r} is not a real date; left out")
    if day_found is None and day:
        day_found = valid_date(day)
    # The status: kep.yaml, front matter, a Status section, a `Status:` line; none: accepted.
    status_text = (
        _front_text(kep_meta, "status")
        or _front_text(meta, "status")
        or _status_section(found)
        or _meta_value(found, "status")
        or ""
    )
    status, successor = status_of(status_text) if status_text else (ACCEPTED, "")
    if kind == "kep":
        replaced = kep_meta.get("superseded-by")
        if replaced:
            status = SUPERSEDED
            successor = (
                ", ".join(map(str, replaced)) if isinstance(replaced, list) else str(replaced)
            )
        if status_text.lower() in ("withdrawn", "rejected"):
            status = REJECTED
    if (
        status == ACCEPTED
        and status_text
        and not re.match(
            r"[^a-z]*(" + "|".join(w for _s, ws in _STATUS_WORDS for w in ws) + ")",
            plain(status_text).lower(),
        )
    ):
        notes.append(f"status {status_text[:40]!r} not known: read as accepted")
    decisions = decision_sentences(found)
    if not decisions:  # the summary: the first paragraph under the title or the first heading
        intro = [first_sentences(t) for s in found[:3] for t in paragraphs(s.lines)[:3]]
        decisions = tuple(t for t in intro if _usable(t) and not _METADATA.match(t))[:1]
    if not decisions:
        raise NotARecord("no decision sentence found (empty Decision section)")
    named = _named_tokens(body)
    if kind == "kep":  # the Test Plan's package lines name code: `k8s.io/kubernetes/pkg/x: …`
        named += re.findall(r"`?(k8s\.io/[\w./-]+)`?", body)
    return Record(
        kind=kind,
        number=number,
        slug=slug,
        title=title or _slug_words(slug),
        date=day_found,
        status=status,
        status_text=plain(status_text)[:80],
        successor=successor[:200],
        decisions=decisions,
        constraints=constraint_sentences(found),
        terms=record_terms(title, body),
        named=tuple(named),
        notes=tuple(notes),
    )
