# One epic for `permanent_memory.py add`: the JSON (or line form) an agent writes when an epic
# closes, read and checked into an Entry, every text brought to the form the loader reads back;
# pm_epic_layout lays it out in the file (the v2 form of permanent_memory.md, the producer's
# current one, or on request the v1 form). Pure: the clock is passed in; only pm_add touches
# files.
#
# The loader must read back exactly what is written, so every text is first brought to the
# form pm_parse reads it as (one line; a leading `[word]` is an entry type to it, a trailing
# `(confidence: N)` a confidence), and the laid-out epic is parsed again before it is used.
# (_kind has the shape of the manager's mm_snapshot.json_type, with the words of add's messages;
# the skills share no code but shared/.)
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from ..core.pm_errors import LoaderError
from ..core.pm_meta_lines import (
    MAX_KEYWORD_CHARS,  # one term: what the parser reads
    MAX_KEYWORDS,
    keywords_value,
    split_keywords,
)
from ..core.pm_parse import LABELS, entry_text
from ..shared import memory_text
from ..shared.memory_text import parse_iso_datetime
from .pm_epic_paths import InvalidPaths, read_paths

# The JSON lists, in the order their subsections are written, and each one's heading.
SECTION_FIELDS = ("decisions", "gotchas", "anti_patterns", "patterns", "conflicts")
LIST_FIELDS = (*SECTION_FIELDS, "tentative")
KEYS = ("id", "intent", "summary", "completed", "keywords", "paths", *LIST_FIELDS)
SCHEMAS = (1, 2)
ITEM_KEYS = ("text", "confidence")
HEADINGS = {
    "decisions": "Architectural decisions",
    "gotchas": "Gotchas discovered",
    "anti_patterns": "Anti-patterns to avoid",
    "patterns": "Patterns that worked",
    "conflicts": "Conflicts encountered",
    "tentative": "Tentative (low confidence \u2014 review)",
}
# The loader's label of each list's subsection (pm_parse.subsection_label of its heading):
# the lists are in the loader's label order.
FIELD_LABELS = dict(zip(LIST_FIELDS, LABELS))
# A low-confidence item moved to Tentative keeps its kind as a v2 entry tag, which the loader
# reads and drops: `- [decision] text (confidence: 0.55)` loads as `text`.
TAGS = {
    "decisions": "decision",
    "gotchas": "gotcha",
    "anti_patterns": "antipattern",
    "patterns": "pattern",
    "conflicts": "conflict",
}
TENTATIVE_BELOW = 0.7
MAX_EPIC_TOKENS = 500
MAX_ID_CHARS = 64  # what add accepts; the block shows at most pm_render.SHOWN_ID_CHARS of it
_EPIC_ID = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._:#/+-]{{0,{MAX_ID_CHARS - 1}}}")
_NUMBER = re.compile(r"[0-9.]+")
INTENT_WHAT = "one line saying what the epic did"
# The epic's `**Keywords:**` line: terms recall and search find it by, never shown in a block.
KEYWORDS_LABEL = "**Keywords:**"
MAX_KEYWORDS_CHARS = 400  # the line's terms, joined with ", "
KEYWORDS_WHAT = 'a list of terms, e.g. ["luxon", "time zones"]'

Counter = Callable[[str], int]


class InvalidEntry(LoaderError):
    """The input cannot be written as asked; str() names the field and what to fix."""


class DuplicateEpic(LoaderError):
    """The file already has an epic with this ID (and --replace was not given)."""


class Item(NamedTuple):
    field: str  # the JSON list it came from
    position: int  # its index in that list
    text: str  # one line, exactly as the loader reads it back
    confidence: float | None  # two decimals; None when not given

    @property
    def where(self) -> str:
        return f"{self.field}[{self.position}]"

    @property
    def tentative(self) -> bool:
        return self.field == "tentative" or (
            self.confidence is not None and self.confidence < TENTATIVE_BELOW
        )


class Keyword(NamedTuple):
    position: int  # its index in the keywords list
    text: str  # one line, cleaned, without a comma

    @property
    def where(self) -> str:
        return f"keywords[{self.position}]"


class Entry(NamedTuple):
    epic_id: str
    intent: str
    completed: str  # YYYY-MM-DDTHH:MM:SSZ
    items: tuple[Item, ...]  # list by list in LIST_FIELDS order, each in input order
    summary: str | None = None  # v2: the one line the loader shows first
    schema: int = 2  # the form written: 2 (marker, summary, typed entries) or 1 (prose)
    keywords: tuple[Keyword, ...] = ()  # in input order, each term once (case aside)
    repeated_keywords: tuple[Keyword, ...] = ()  # terms given again after an earlier one
    paths: tuple[str, ...] = ()  # the Paths line's globs, in input order, each once
    repeated_paths: tuple[str, ...] = ()  # globs given again


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def one_line(text: str) -> str:
    """Control characters out, whitespace (newlines included) collapsed to single spaces."""
    return " ".join(memory_text.strip_unsafe(text).split())


def utc_timestamp(moment: datetime) -> str:
    moment = moment.astimezone(timezone.utc).replace(microsecond=0, tzinfo=None)
    return moment.isoformat() + "Z"


def _confidence(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidEntry(f"{where}: must be a number from 0 to 1, got {_kind(value)}")
    if not 0 <= value <= 1:
        shown = f"{value:.6g}" if isinstance(value, float) or abs(value) < 10**15 else "more"
        raise InvalidEntry(f"{where}: must be a number from 0 to 1, got {shown}")
    return round(float(value), 2)


def read_back_item(text: str, where: str) -> tuple[str, float | None, list[str]]:
    """The item text as the loader will read it back, the confidence found in a trailing
    `(confidence: N)`, and notes for what was changed."""
    notes = []
    found: float | None = None
    while True:
        # A suffix no trailer pattern matches shows whether the loader drops a leading part.
        probe = entry_text("- " + text + " .")
        if probe != text + " .":
            # A leading `[word]` is a v2 entry type to the loader: keep it, in parentheses.
            close = text.find("]")
            if not text.startswith("[") or close < 0:  # only a loader change gets here
                raise InvalidEntry(f"{where}: the loader would read it back as {probe[:-2]!r}")
            rewritten = "(" + text[1:close] + ")" + text[close + 1 :]
            notes.append(
                f"note: {where}: a leading {text[: close + 1]!r} is read by the loader as an "
                f"entry type; stored as {rewritten[: close + 1]!r}"
            )
            text = rewritten
            continue
        read = entry_text("- " + text)
        if read == text or not read:  # nothing but a confidence: an empty item
            return read, found, notes
        if not text.startswith(read):  # only a loader change gets here
            raise InvalidEntry(f"{where}: the loader would read it back as {read!r}")
        trailer = text[len(read) :]
        number = _NUMBER.search(trailer)
        try:
            value = float(number.group(0)) if number else -1.0
        except ValueError:
            value = -1.0
        if not 0 <= value <= 1:
            raise InvalidEntry(
                f"{where}: ends with {trailer.strip()!r}, which the loader reads as a "
                "confidence; give a number from 0 to 1 or rephrase"
            )
        if found is None:
            found = round(value, 2)
        text = read


def _item(value: object, field: str, index: int) -> tuple[Item | None, list[str]]:
    where = f"{field}[{index}]"
    confidence: float | None = None
    if isinstance(value, dict):
        for key in value:
            if key not in ITEM_KEYS:
                raise InvalidEntry(f"{where}: unknown key {key!r} (known: text, confidence)")
        if "text" not in value:
            raise InvalidEntry(f"{where}.text: required")
        raw = value["text"]
        if value.get("confidence") is not None:
            confidence = _confidence(value["confidence"], f"{where}.confidence")
    else:
        raw = value
    if not isinstance(raw, str):
        raise InvalidEntry(
            f'{where}: must be text or {{"text": ..., "confidence": ...}}, got {_kind(raw)}'
        )
    text, count = memory_text.redact_secrets(one_line(raw))
    if not text:
        return None, []  # an empty item: nothing to write
    notes = []
    if count:
        notes.append(f"warning: {where} held a secret; it is stored as {memory_text.REDACTED}")
    text, found, settled = read_back_item(text, where)
    notes.extend(settled)
    if not text:
        return None, notes
    return Item(field, index, text, confidence if confidence is not None else found), notes


def _text_field(data: dict[str, object], key: str, what: str) -> str:
    value = data.get(key)
    if value is None:
        raise InvalidEntry(f"{key}: required ({what})")
    if not isinstance(value, str):
        raise InvalidEntry(f"{key}: must be text, got {_kind(value)}")
    return value


def _summary(data: dict[str, object], schema: int, notes: list[str]) -> str | None:
    value = data.get("summary")
    if value is None:
        return None
    if schema != 2:
        raise InvalidEntry("summary: only the v2 form has a summary; drop it or --schema 1")
    if not isinstance(value, str):
        raise InvalidEntry(f"summary: must be text, got {_kind(value)}")
    text, count = memory_text.redact_secrets(one_line(value))
    if count:
        notes.append(f"warning: summary held a secret; it is stored as {memory_text.REDACTED}")
    text, _confidence, settled = read_back_item(text, "summary")
    notes.extend(settled)
    return text or None


def keyword_key(text: str) -> str:
    """What two terms that name the same thing share: case and runs of whitespace aside."""
    return " ".join(text.split()).casefold()


def keywords_line(terms: Sequence[str]) -> str:
    return f"{KEYWORDS_LABEL} {', '.join(terms)}"


def keywords_over(terms: Sequence[str]) -> str | None:
    """What is over the limits of one Keywords line (the number of terms, all their
    characters), or None when it is within them."""
    if len(terms) > MAX_KEYWORDS:
        return f"{len(terms)} terms; at most {MAX_KEYWORDS}"
    joined = len(", ".join(terms))
    if joined > MAX_KEYWORDS_CHARS:
        return f"{joined} characters in all; at most {MAX_KEYWORDS_CHARS}"
    return None


def _keyword(value: object, index: int, notes: list[str]) -> Keyword | None:
    where = f"keywords[{index}]"
    if not isinstance(value, str):
        raise InvalidEntry(f"{where}: must be text, got {_kind(value)}")
    unsafe = memory_text.strip_unsafe(value)
    if "\n" in unsafe:
        raise InvalidEntry(f"{where}: holds a line break; give each term as its own item")
    if "," in unsafe:
        raise InvalidEntry(
            f"{where}: {one_line(value)!r} holds a comma, which separates terms; give each "
            "term as its own item"
        )
    text, count = memory_text.redact_secrets(one_line(value))
    if count:  # a term is there to be matched: a redacted one matches nothing
        notes.append(f"warning: {where} held a secret; it is left out")
        return None
    if len(text) > MAX_KEYWORD_CHARS:
        raise InvalidEntry(f"{where}: {len(text)} characters; at most {MAX_KEYWORD_CHARS}")
    if not text:
        return None
    read = split_keywords(keywords_value(keywords_line([text])) or "")
    if read != (text,):  # alone on the line it is first and last: what the key's bold takes
        raise InvalidEntry(misread_keyword([Keyword(index, text)], read))
    return Keyword(index, text)


def read_keywords(
    value: object, notes: list[str]
) -> tuple[tuple[Keyword, ...], tuple[Keyword, ...]]:
    """The `keywords` list, cleaned, empty terms dropped: each term once (the first time,
    case and spacing aside), and the terms given again."""
    if value is None:
        return (), ()
    if not isinstance(value, list):
        raise InvalidEntry(f"keywords: must be {KEYWORDS_WHAT}, got {_kind(value)}")
    kept: list[Keyword] = []
    repeated: list[Keyword] = []
    seen: set[str] = set()
    for index, term in enumerate(value):
        keyword = _keyword(term, index, notes)
        if keyword is None:
            continue
        key = keyword_key(keyword.text)
        (repeated if key in seen else kept).append(keyword)
        seen.add(key)
    over = keywords_over([keyword.text for keyword in kept])
    if over is not None:
        raise InvalidEntry(f"keywords: {over}")
    return tuple(kept), tuple(repeated)


def read_entry(
    data: object, now: datetime, schema: int = 2, require_intent: bool = True
) -> tuple[Entry, list[str]]:
    """The epic described by the parsed --input JSON, and the notes for stderr. Without
    `require_intent` (entries for an epic already on file) a missing intent is ""."""
    if not isinstance(data, dict):
        raise InvalidEntry(
            f"--input: expected a JSON object with id, intent and the item lists, got {_kind(data)}"
        )
    for key in data:
        if key not in KEYS:
            raise InvalidEntry(f"--input: unknown key {key!r} (known: {', '.join(KEYS)})")
    notes: list[str] = []
    raw_id = one_line(_text_field(data, "id", "the epic's ID, e.g. FEAT-007"))
    if memory_text.redact_secrets(raw_id)[1]:
        raise InvalidEntry("id: looks like a secret; use the epic's ticket ID, e.g. FEAT-007")
    if not _EPIC_ID.fullmatch(raw_id):
        raise InvalidEntry(
            f"id: {raw_id!r} is not an epic ID: letters, digits and . _ : # / + -, starting "
            f"with a letter or digit, at most {MAX_ID_CHARS} characters (e.g. FEAT-007)"
        )
    if require_intent or data.get("intent") is not None:
        intent_value = _text_field(data, "intent", INTENT_WHAT)
    else:
        intent_value = ""
    intent, count = memory_text.redact_secrets(one_line(intent_value))
    if count:
        notes.append(f"warning: intent held a secret; it is stored as {memory_text.REDACTED}")
    if not intent and require_intent:
        raise InvalidEntry(f"intent: required ({INTENT_WHAT})")
    completed_value = data.get("completed")
    if completed_value is None:
        completed = utc_timestamp(now)
    else:
        if not isinstance(completed_value, str):
            raise InvalidEntry(f"completed: must be text, got {_kind(completed_value)}")
        parsed = parse_iso_datetime(completed_value)
        if parsed is None:
            raise InvalidEntry(
                f"completed: {completed_value!r} is not an ISO 8601 date or date-time "
                "(e.g. 2026-05-15T14:00:00Z)"
            )
        completed = utc_timestamp(parsed)
    items = []
    for field in LIST_FIELDS:
        values = data.get(field)
        if values is None:
            continue
        if not isinstance(values, list):
            raise InvalidEntry(f"{field}: must be a list, got {_kind(values)}")
        for index, value in enumerate(values):
            item, item_notes = _item(value, field, index)
            notes.extend(item_notes)
            if item is not None:
                items.append(item)
    summary = _summary(data, schema, notes)
    keywords, repeated = read_keywords(data.get("keywords"), notes)
    try:
        paths, repeated_paths = read_paths(data.get("paths"), notes)
    except InvalidPaths as error:
        raise InvalidEntry(str(error)) from None
    entry = Entry(raw_id, intent, completed, tuple(items), summary, schema, keywords, repeated,
                  paths, repeated_paths)  # fmt: skip
    return entry, notes


def misread_keyword(keywords: Sequence[Keyword], read: Sequence[str]) -> str:
    """The error for the first term the loader does not read back as written."""
    for index, keyword in enumerate(keywords):
        back = read[index] if index < len(read) else None
        if back != keyword.text:
            shown = "nothing" if back is None else repr(back)
            return (
                f"{keyword.where}: the loader would read {keyword.text!r} back as {shown}; "
                "rephrase it"
            )
    return "keywords: the loader would not read the Keywords line back as written"
