# Reads permanent_memory.md into epic records. Pure: text in, records out; never raises on
# any input. Both the v1 prose form and the later v2 form (marker line, typed entries) land in
# the same records, so rendering and the writing commands see one shape.
from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from ..shared.memory_text import parse_iso_datetime
from .pm_meta_lines import (
    completed_value,
    is_bold_key,
    keywords_value,
    paths_value,
    source_value,
    split_keywords,
    split_paths,
    split_source,
)

# Subsection headings (case-insensitive, trailing colon ignored) and the label each gets.
# Matched by prefix, longest first, so "Anti-patterns to avoid" is not read as "patterns".
LABELS = ("decisions", "gotchas", "anti-patterns", "patterns", "conflicts", "tentative")
_HEADING_PREFIXES: tuple[tuple[str, str], ...] = (
    ("architectural decisions", "decisions"),
    ("decisions", "decisions"),
    ("gotchas discovered", "gotchas"),
    ("gotchas", "gotchas"),
    ("anti-patterns to avoid", "anti-patterns"),
    ("anti-patterns", "anti-patterns"),
    ("antipatterns", "anti-patterns"),
    ("patterns that worked", "patterns"),
    ("patterns", "patterns"),
    ("conflicts encountered", "conflicts"),
    ("conflicts", "conflicts"),
    ("tentative", "tentative"),
)
# v2 entry tags and the label an untagged-section entry with that tag belongs to.
_TAG_LABELS = {
    "decision": "decisions",
    "gotcha": "gotchas",
    "antipattern": "anti-patterns",
    "anti-pattern": "anti-patterns",
    "pattern": "patterns",
    "conflict": "conflicts",
}

# Every line is classified with str methods or with a pattern that is anchored, bounded or
# deterministic (each character can be consumed in only one way), so parsing takes time linear
# in the text whatever it holds: a pattern that could backtrack over a run of spaces made a
# 3 KB file take seconds. tests/pm_parse_test.py checks the time grows linearly.
_SECTION_END = re.compile(r"#{1,2}(?:[ \t]|$)")  # used with .match: at most three characters
_V2_COMPLETED = re.compile(r"\bcompleted[ \t]*=[ \t]*\"?([^\s\"]+)", re.IGNORECASE)
# `**Trace summary:** …` and other bold "key:" lines are metadata, not content.
_META_LINE = re.compile(r"[ \t]*\*\*[^*\n]{1,40}:[ \t]*\*\*")  # .match, bounded
_LIST_MARKER = re.compile(r"[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])(?:[ \t]+|$)")  # .match
_TYPED_ENTRY = re.compile(r"\[([A-Za-z-]+)\][ \t]*")  # .match, deterministic
_BLANK = " \t"
_DIGITS = frozenset("0123456789.")


def _after_hashes(line: str, hashes: int) -> str | None:
    """The rest of an ATX heading of exactly this level (`##` needs a space or tab after it)."""
    if line[:hashes] != "#" * hashes or line[hashes : hashes + 1] not in (" ", "\t"):
        return None
    return line[hashes:]


def epic_heading(line: str) -> str | None:
    """What follows `## Epic:` (any case, spaces around the colon), or None."""
    rest = _after_hashes(line, 2)
    if rest is None:
        return None
    rest = rest.lstrip(_BLANK)
    if rest[:4].lower() != "epic":
        return None
    rest = rest[4:].lstrip(_BLANK)
    return rest[1:].lstrip(_BLANK) if rest[:1] == ":" else None


def subsection_heading(line: str) -> str | None:
    """The title of a `###` heading, closing hashes and spaces removed, or None."""
    rest = _after_hashes(line, 3)
    if rest is None:
        return None
    return rest.rstrip(_BLANK).rstrip("#").rstrip(_BLANK).strip()


def _is_fence(line: str) -> bool:
    return line.lstrip(_BLANK).startswith(("```", "~~~"))


def _is_comment(line: str) -> bool:
    text = line.strip(_BLANK)
    return text.startswith("<!--") and text[4:].endswith("-->")


def v2_marker(line: str) -> str | None:
    """What an `<!-- af-memory:v2 … -->` marker line holds between the tag and `-->`, or None."""
    rest = line.lstrip(_BLANK)
    if not rest.startswith("<!--"):
        return None
    rest = rest[4:].lstrip(_BLANK)
    if rest[:12].lower() != "af-memory:v2":
        return None
    rest = rest[12:]
    if rest[:1].isalnum() or rest[:1] == "_":  # `af-memory:v20` is not the tag
        return None
    closed = rest.rstrip(_BLANK)
    return closed[:-3] if closed.endswith("-->") else rest


def _strip_closing_hashes(text: str) -> str:
    # Only a closing run of `#` after a space ends the heading (CommonMark); `C#` keeps its `#`.
    trimmed = text.rstrip(_BLANK)
    bare = trimmed.rstrip("#")
    if bare != trimmed and (not bare or bare[-1] in _BLANK):
        return bare.rstrip(_BLANK)
    return text


def _strip_confidence(text: str) -> str:
    """text without a trailing `(confidence: 0.NN)` / `(conf=0.9)` (any case)."""
    trimmed = text.rstrip(_BLANK)
    if not trimmed.endswith(")"):
        return text
    opening = trimmed.rfind("(")
    inner = trimmed[opening + 1 : -1]
    if opening < 0 or "(" in inner:
        return text
    lowered = inner.lower()
    for word in ("confidence", "conf"):
        if lowered.startswith(word):
            rest = inner[len(word) :].lstrip(_BLANK)
            if rest[:1] in (":", "=") and rest[:1]:
                value = rest[1:].lstrip(_BLANK)
                if value and _DIGITS.issuperset(value):
                    return trimmed[:opening].rstrip(_BLANK)
    return text


class Subsection(NamedTuple):
    label: str  # one of LABELS
    heading: str  # as written, e.g. "Gotchas discovered"; "" for v2 entries outside a heading
    entries: tuple[str, ...]  # content lines: list marker, v2 tag and confidence removed


class Epic(NamedTuple):
    epic_id: str
    intent: str
    completed: str | None  # the **Completed:** value as written
    completed_at: datetime | None  # parsed, UTC; None when missing or unparsable
    subsections: tuple[Subsection, ...]  # known labels only, file order
    summary: str | None  # v2: the one-line summary after the marker
    schema: int  # 1 or 2 (has the af-memory:v2 marker)
    start_line: int  # index of the `## Epic:` line in normalise_text(text).split("\n")
    end_line: int  # one past the epic's last line (the next `#`/`##` heading, or the end)
    # Line indexes below refer to the same normalised text as start_line.
    # The `###` line of each of `subsections`, same order; -1 for v2 entries outside a heading.
    subsection_lines: tuple[int, ...] = ()
    completed_line: int | None = None  # the line `completed` was read from
    # (line index, heading as written) of each `###` heading whose label is unknown.
    unknown_subsections: tuple[tuple[int, str], ...] = ()
    # Every `###` heading line, known or not, repeated ones included; every line read as a
    # Completed line (the first one is `completed_line`); every v2 marker line. A merge that
    # interleaves two versions of an epic shows in these.
    heading_lines: tuple[int, ...] = ()
    completed_lines: tuple[int, ...] = ()
    marker_lines: tuple[int, ...] = ()
    # For each of `subsections`, whether each of its entries starts an item (a list item, a v2
    # entry, an unindented line) rather than continuing the one before it (an indented line
    # without a list marker, such as `  Rationale: …`, or a line of a fenced block).
    item_starts: tuple[tuple[bool, ...], ...] = ()
    # The terms of the epic's first Keywords line (split_keywords), and that line; every line
    # read as a Keywords line (only the first one's terms count).
    keywords: tuple[str, ...] = ()
    keywords_line: int | None = None
    keywords_lines: tuple[int, ...] = ()
    # The globs of the epic's first Paths line (split_paths), and that line; every line read as
    # a Paths line (only the first one's globs count).
    paths: tuple[str, ...] = ()
    paths_line: int | None = None
    paths_lines: tuple[int, ...] = ()
    # The record the epic was imported from (`**Source:** path`), the import's stamp on that
    # line, and the line; None, "" and None for an epic without one.
    source: str | None = None
    source_stamp: str = ""
    source_line: int | None = None

    def first_entry(self, label: str) -> str | None:
        """The first content line of the first subsection with this label that has one."""
        for sub in self.subsections:
            if sub.label == label and sub.entries:
                return sub.entries[0]
        return None


def normalise_text(text: str) -> str:
    """Drop a BOM and turn CRLF / CR line ends into LF; line numbers refer to this text."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def subsection_label(heading: str) -> str | None:
    name = " ".join(heading.casefold().replace("\u2011", "-").split()).rstrip(":").strip()
    for prefix, label in _HEADING_PREFIXES:
        if name.startswith(prefix):
            return label
    return None


def entry_text(line: str) -> str:
    """A content line as shown: list marker, v2 type tag and confidence trailer removed."""
    text = _drop_prefix(_TYPED_ENTRY, _drop_prefix(_LIST_MARKER, line))
    return _strip_confidence(text).strip()


def _drop_prefix(pattern: re.Pattern[str], text: str) -> str:
    match = pattern.match(text)
    return text[match.end() :] if match else text


def _entry_tag(line: str) -> str | None:
    match = _TYPED_ENTRY.match(_drop_prefix(_LIST_MARKER, line))
    return match.group(1).casefold() if match else None


def _split_heading(rest: str) -> tuple[str, str]:
    rest = _strip_closing_hashes(rest.strip()).strip()
    # `ID—intent` with no space: split at the first em or en dash when what precedes it is
    # one word.
    dash = min((i for i in (rest.find("\u2014"), rest.find("\u2013")) if i >= 0), default=-1)
    if dash >= 0:
        head = rest[:dash].rstrip()
        if head and not any(c.isspace() for c in head):
            return head, rest[dash + 1 :].strip()
    # Otherwise the first word is the ID; a dash word (em or en dash, `--`, `-`) after it is the
    # separator, and the rest is the intent.
    words = rest.split(None, 1)
    if len(words) < 2:
        return rest, ""
    epic_id, intent = words
    for separator in ("\u2014", "\u2013", "--", "-"):
        if intent.startswith(separator):
            after = intent[len(separator) :]
            if not after or after[0].isspace():
                return epic_id, after.strip()
    return epic_id, intent.strip()


def parse_permanent(text: str) -> list[Epic]:
    """Every `## Epic:` section of a permanent_memory.md text, in file order."""
    lines = normalise_text(text).split("\n")
    starts = []
    in_fence = False
    for index, line in enumerate(lines):
        if _is_fence(line):
            in_fence = not in_fence
        elif not in_fence and _SECTION_END.match(line):
            starts.append(index)
    starts.append(len(lines))
    epics = []
    for start, end in zip(starts, starts[1:]):
        heading = epic_heading(lines[start])
        if heading is not None:
            epics.append(_parse_epic(heading, lines, start, end))
    return epics


def _parse_epic(heading_rest: str, lines: list[str], start: int, end: int) -> Epic:
    epic_id, intent = _split_heading(heading_rest)
    completed: str | None = None
    summary: str | None = None
    schema = 1
    # (label, heading) -> entries, keeping first-seen order of subsections.
    sections: dict[tuple[str, str], list[str]] = {}
    starts: dict[tuple[str, str], list[bool]] = {}  # parallel to sections: item_starts
    section_lines: dict[tuple[str, str], int] = {}  # (label, heading) -> its first `###` line
    unknown: list[tuple[int, str]] = []
    completed_line: int | None = None
    heading_lines: list[int] = []
    completed_lines: list[int] = []
    marker_lines: list[int] = []
    keywords: tuple[str, ...] = ()
    keywords_lines: list[int] = []
    paths: tuple[str, ...] = ()
    paths_lines: list[int] = []
    source: str | None = None
    source_stamp = ""
    source_line: int | None = None
    current: tuple[str, str] | None = None
    in_subsection = False
    want_summary = False
    in_fence = False
    for index, line in enumerate(lines[start + 1 : end], start + 1):
        if _is_fence(line):
            in_fence = not in_fence
            continue
        if in_fence:
            if current is not None and line.strip():
                sections[current].append(line.strip())
                starts[current].append(False)
            continue
        title = subsection_heading(line)
        if title is not None:
            heading_lines.append(index)
            want_summary = False
            in_subsection = True
            label = subsection_label(title)
            current = None if label is None else (label, title)
            if current is None:
                unknown.append((index, title))
            else:
                sections.setdefault(current, [])
                starts.setdefault(current, [])
                section_lines.setdefault(current, index)
            continue
        marker = v2_marker(line)
        if marker is not None:
            marker_lines.append(index)
            schema = 2
            want_summary = not in_subsection
            found = _V2_COMPLETED.search(marker)
            if found and completed is None:
                completed = found.group(1)
                completed_line = index
            continue
        if not line.strip() or _is_comment(line):
            continue
        done = completed_value(line)
        if done is not None:
            value = done.strip("*").strip()
            # Inside a subsection only a real date makes it the completion line.
            if not in_subsection or parse_iso_datetime(value) is not None:
                completed_lines.append(index)
                if completed is None:
                    completed = value
                    completed_line = index
                    continue
        # A Keywords line: any form before the first `###` heading (never the v2 summary), only
        # the bold form inside a subsection (a plain `Keywords: …` there is an entry).
        terms = keywords_value(line)
        if terms is not None and (not in_subsection or is_bold_key(line)):
            if not keywords_lines:
                keywords = split_keywords(terms)
            keywords_lines.append(index)
            continue
        globs = paths_value(line)  # placed and read as a Keywords line is
        if globs is not None and (not in_subsection or is_bold_key(line)):
            if not paths_lines:
                paths = split_paths(globs)
            paths_lines.append(index)
            continue
        origin = source_value(line) if not in_subsection and source_line is None else None
        if origin is not None and is_bold_key(line):
            source, source_stamp = split_source(origin)
            source_line = index
            continue
        if _META_LINE.match(line):
            continue
        text = entry_text(line)
        if not text:
            continue
        if current is not None:
            sections[current].append(text)
            starts[current].append(_starts_item(line))
        elif not in_subsection:
            tag = _entry_tag(line)
            if tag in _TAG_LABELS:
                sections.setdefault((_TAG_LABELS[tag], ""), []).append(text)
                starts.setdefault((_TAG_LABELS[tag], ""), []).append(True)
            elif want_summary:
                summary = text
                want_summary = False
    subsections = tuple(
        Subsection(label, heading, tuple(entries)) for (label, heading), entries in sections.items()
    )
    return Epic(
        epic_id=epic_id,
        intent=intent,
        completed=completed,
        completed_at=parse_iso_datetime(completed) if completed else None,
        subsections=subsections,
        summary=summary,
        schema=schema,
        start_line=start,
        end_line=end,
        subsection_lines=tuple(section_lines.get(key, -1) for key in sections),
        completed_line=completed_line,
        unknown_subsections=tuple(unknown),
        heading_lines=tuple(heading_lines),
        completed_lines=tuple(completed_lines),
        marker_lines=tuple(marker_lines),
        item_starts=tuple(tuple(starts[key]) for key in sections),
        keywords=keywords,
        keywords_line=keywords_lines[0] if keywords_lines else None,
        keywords_lines=tuple(keywords_lines),
        paths=paths,
        paths_line=paths_lines[0] if paths_lines else None,
        paths_lines=tuple(paths_lines),
        source=source,
        source_stamp=source_stamp,
        source_line=source_line,
    )


def _starts_item(line: str) -> bool:
    """A content line starts an item unless it is indented and has no list marker."""
    return line[:1] not in (" ", "\t") or _LIST_MARKER.match(line) is not None


def entry_items(entries: Sequence[str], starts: Sequence[bool]) -> list[tuple[str, ...]]:
    """A subsection's entries grouped into items (Epic.item_starts says where each starts): a
    list item and the lines continuing it, such as its `  Rationale: …` line."""
    items: list[list[str]] = []
    for index, entry in enumerate(entries):
        if not items or (starts[index] if index < len(starts) else True):
            items.append([entry])
        else:
            items[-1].append(entry)
    return [tuple(item) for item in items]


def age_days(epic: Epic, now: datetime) -> float | None:
    if epic.completed_at is None:
        return None
    return (now - epic.completed_at) / timedelta(days=1)


def is_stale(epic: Epic, now: datetime, stale_days: int) -> bool:
    """Completed more than stale_days before now. No usable date: not stale."""
    if epic.completed_at is None:
        return False
    return now - epic.completed_at > timedelta(days=stale_days)
