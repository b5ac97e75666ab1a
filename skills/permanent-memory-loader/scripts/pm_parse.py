# Reads permanent_memory.md into epic records. Pure: text in, records out; never raises on
# any input. Both the v1 prose form and the later v2 form (marker line, typed entries) land in
# the same records, so rendering and the writing commands see one shape.
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

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

_EPIC_HEADING = re.compile(r"^##[ \t]+epic[ \t]*:[ \t]*(.*)$", re.IGNORECASE)
# Separator between ID and intent: em dash, en dash, `--` or `-`, with space on the left.
_ID_INTENT = re.compile(r"^(\S+)(?:\s+(?:\u2014|\u2013|--|-)(?:\s+|$)|\s+)(.*)$")
_DASH_SPLIT = re.compile(r"^(.*?)\s*[\u2014\u2013]\s*(.*)$")
_SECTION_END = re.compile(r"^#{1,2}(?:[ \t]|$)")
_SUBSECTION = re.compile(r"^###[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")
_V2_MARKER = re.compile(r"^[ \t]*<!--[ \t]*af-memory:v2\b(.*?)(?:-->[ \t]*)?$", re.IGNORECASE)
_V2_COMPLETED = re.compile(r"\bcompleted[ \t]*=[ \t]*\"?([^\s\"]+)", re.IGNORECASE)
_COMPLETED = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?\**completed\**[ \t]*:[ \t]*\**[ \t]*(.*?)[ \t]*$", re.IGNORECASE
)
# `**Trace summary:** …` and other bold "key:" lines are metadata, not content.
_META_LINE = re.compile(r"^[ \t]*\*\*[^*\n]{1,40}:[ \t]*\*\*")
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])(?:[ \t]+|$)")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
_TYPED_ENTRY = re.compile(r"^\[([A-Za-z-]+)\][ \t]*")
_CONFIDENCE = re.compile(
    r"[ \t]*\((?:confidence|conf)[ \t]*[:=][ \t]*[0-9.]+\)[ \t]*$", re.IGNORECASE
)
_COMMENT = re.compile(r"^[ \t]*<!--.*-->[ \t]*$")


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


def parse_iso_datetime(value: str) -> datetime | None:
    """ISO 8601 date or date-time to an aware UTC datetime; naive means UTC; None if invalid."""
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


def subsection_label(heading: str) -> str | None:
    name = " ".join(heading.casefold().replace("\u2011", "-").split()).rstrip(":").strip()
    for prefix, label in _HEADING_PREFIXES:
        if name.startswith(prefix):
            return label
    return None


def entry_text(line: str) -> str:
    """A content line as shown: list marker, v2 type tag and confidence trailer removed."""
    text = _LIST_MARKER.sub("", line, count=1)
    text = _TYPED_ENTRY.sub("", text, count=1)
    return _CONFIDENCE.sub("", text).strip()


def _entry_tag(line: str) -> str | None:
    match = _TYPED_ENTRY.match(_LIST_MARKER.sub("", line, count=1))
    return match.group(1).casefold() if match else None


def _split_heading(rest: str) -> tuple[str, str]:
    # Only a closing run of `#` after a space ends the heading (CommonMark); `C#` keeps its `#`.
    rest = _CLOSING_HASHES.sub("", rest.strip()).strip()
    dashed = _DASH_SPLIT.match(rest)
    if dashed is not None and dashed.group(1) and not any(c.isspace() for c in dashed.group(1)):
        return dashed.group(1), dashed.group(2).strip()
    match = _ID_INTENT.match(rest)
    if match is None:
        return rest, ""
    return match.group(1), match.group(2).strip()


def parse_permanent(text: str) -> list[Epic]:
    """Every `## Epic:` section of a permanent_memory.md text, in file order."""
    lines = normalise_text(text).split("\n")
    starts = []
    in_fence = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and _SECTION_END.match(line):
            starts.append(index)
    starts.append(len(lines))
    epics = []
    for start, end in zip(starts, starts[1:]):
        heading = _EPIC_HEADING.match(lines[start])
        if heading is not None:
            epics.append(_parse_epic(heading.group(1), lines, start, end))
    return epics


def _parse_epic(heading_rest: str, lines: list[str], start: int, end: int) -> Epic:
    epic_id, intent = _split_heading(heading_rest)
    completed: str | None = None
    summary: str | None = None
    schema = 1
    # (label, heading) -> entries, keeping first-seen order of subsections.
    sections: dict[tuple[str, str], list[str]] = {}
    section_lines: dict[tuple[str, str], int] = {}  # (label, heading) -> its first `###` line
    unknown: list[tuple[int, str]] = []
    completed_line: int | None = None
    current: tuple[str, str] | None = None
    in_subsection = False
    want_summary = False
    in_fence = False
    for index, line in enumerate(lines[start + 1 : end], start + 1):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            if current is not None and line.strip():
                sections[current].append(line.strip())
            continue
        sub = _SUBSECTION.match(line)
        if sub is not None:
            want_summary = False
            in_subsection = True
            title = sub.group(1).strip()
            label = subsection_label(title)
            current = None if label is None else (label, title)
            if current is None:
                unknown.append((index, title))
            else:
                sections.setdefault(current, [])
                section_lines.setdefault(current, index)
            continue
        marker = _V2_MARKER.match(line)
        if marker is not None:
            schema = 2
            want_summary = not in_subsection
            found = _V2_COMPLETED.search(marker.group(1))
            if found and completed is None:
                completed = found.group(1)
                completed_line = index
            continue
        if not line.strip() or _COMMENT.match(line):
            continue
        done = _COMPLETED.match(line)
        if done is not None and completed is None:
            value = done.group(1).strip("*").strip()
            # Inside a subsection only a real date makes it the completion line.
            if not in_subsection or parse_iso_datetime(value) is not None:
                completed = value
                completed_line = index
                continue
        if _META_LINE.match(line):
            continue
        text = entry_text(line)
        if not text:
            continue
        if current is not None:
            sections[current].append(text)
        elif not in_subsection:
            tag = _entry_tag(line)
            if tag in _TAG_LABELS:
                sections.setdefault((_TAG_LABELS[tag], ""), []).append(text)
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
    )


def age_days(epic: Epic, now: datetime) -> float | None:
    if epic.completed_at is None:
        return None
    return (now - epic.completed_at) / timedelta(days=1)


def is_stale(epic: Epic, now: datetime, stale_days: int) -> bool:
    """Completed more than stale_days before now. No usable date: not stale."""
    if epic.completed_at is None:
        return False
    return now - epic.completed_at > timedelta(days=stale_days)
