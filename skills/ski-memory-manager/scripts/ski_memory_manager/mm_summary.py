# A client's compaction summary as a session snapshot's four sections. Pure functions: text in,
# the sections out, within a byte budget the caller measures.
#
# The summary's parts are found by their headings, matched loosely (`## Next steps`, `9. Optional
# Next Step:`, `**Key decisions**`, `Pending Tasks:`), and each goes to a section: what was asked
# to Session summary, what was done to Steps completed, current work, pending tasks and the next
# step to Active state, decisions and constraints to Key decisions; a part under no heading this
# knows goes to Session summary. Never kept: the verbatim record of the person's messages (Claude
# Code's summary has an "All user messages" part), code excerpts (fenced blocks), the model's
# working notes (`<analysis>`) and the client's own preamble: a snapshot may end up in git.
# Within the budget the next step and the current work are kept first.
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

from .shared import memory_text

# A summary is read from its first and last HEAD_CHARS characters: a model's summary is a few
# KB, and its next step is at its end; what lies between in a text of megabytes is not read.
HEAD_CHARS = 64 * 1024
MAX_UNITS = 80  # pieces of text the budget weighs, at most (the first in its order)
UNIT_CHARS = 500  # a piece's share before the budget is filled (the next step's: NEXT_CHARS)
NEXT_CHARS = 800
MIN_CUT = 60  # a piece cut shorter than this is left out instead
ELLIPSIS = "\u2026"

# Kinds of part, in the order a heading is tried against them (the first that matches wins).
DROPPED, NEXT, PENDING, CURRENT, STEPS, DECISIONS, SUMMARY = (
    "dropped",
    "next",
    "pending",
    "current",
    "steps",
    "decisions",
    "summary",
)
_KINDS: tuple[tuple[str, Callable[[frozenset[str]], bool]], ...] = (
    (DROPPED, lambda w: bool(w & {"user", "users"} and w & {"message", "messages"})),
    (DROPPED, lambda w: "verbatim" in w),
    (NEXT, lambda w: bool(w & {"next", "remaining", "remains", "todo", "todos"})),
    (PENDING, lambda w: bool(w & {"pending", "open", "outstanding", "unresolved", "blockers"})),
    (CURRENT, lambda w: {"current", "work"} <= w),
    (
        STEPS,
        lambda w: bool(
            w
            & {
                "done",
                "completed",
                "progress",
                "accomplished",
                "changes",
                "changed",
                "files",
                "errors",
                "fixes",
                "solving",
                "solved",
                "implemented",
                "implementation",
            }
        ),
    ),
    (
        DECISIONS,
        lambda w: bool(
            w
            & {
                "decision",
                "decisions",
                "decided",
                "constraint",
                "constraints",
                "preference",
                "preferences",
                "choices",
                "rules",
            }
        ),
    ),
    (CURRENT, lambda w: bool(w & {"current", "continuing", "state", "status", "stopped"})),
    (
        SUMMARY,
        lambda w: bool(
            w
            & {
                "request",
                "requests",
                "intent",
                "goal",
                "goals",
                "objective",
                "objectives",
                "task",
                "summary",
                "overview",
                "concepts",
                "context",
                "background",
                "references",
            }
        ),
    ),
)
# How much each kind weighs when the budget is short: the next step and the current work first,
# then what was asked, what is pending, what was done, the decisions, the rest (_rank).
_PRIORITY = {NEXT: 0, CURRENT: 1, SUMMARY: 2, PENDING: 3, STEPS: 4, DECISIONS: 5}
_REST = 6
_LABELS = {NEXT: "Next step", CURRENT: "Current work", PENDING: "Pending"}
_STOPPED = "Where it stopped"
_ASKED = {"request", "requests", "intent", "goal", "goals", "objective", "objectives", "task"}

_MD_HEADING = re.compile(r" {0,3}#{1,6}[ \t]+(.*?)[ \t#]*")
_NUMBERED = re.compile(r" {0,3}(?:[0-9]{1,2}|[A-Za-z])[.)][ \t]+([^:\n]{1,80}?):[ \t]*(.*)")
_BOLD = re.compile(r" {0,3}(?:\*\*|__)([^*_:\n]{1,80}?):?(?:\*\*|__):?[ \t]*(.*)")
_PLAIN = re.compile(r"([A-Z][^:\n]{0,60}):[ \t]*(.*)")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")
_ANNOUNCES_CODE = re.compile(r"(?i)\b(?:code|snippet|excerpt)s?\b[^\n]{0,40}:\s*$")
_WORD = re.compile(r"[a-z]+")
_TAG_BLOCK = re.compile(r"<(analysis|thinking)>.*?(?:</\1>|\Z)", re.DOTALL | re.IGNORECASE)
_BULLET = re.compile(r"(?:[-*+]|[0-9]{1,3}[.)])[ \t]+")
# The preamble Codex puts before the model's summary when it keeps it (its own words, not the
# session's).
_CLIENT_PREAMBLE = "Another language model started to solve this problem"


class Part(NamedTuple):
    """One part of a summary: its heading as written ('' before any heading), its kind, and its
    lines (code excerpts already left out)."""

    title: str
    kind: str
    lines: tuple[str, ...]


class Sections(NamedTuple):
    """What a captured snapshot's body holds."""

    session_summary: str = ""
    steps_completed: tuple[str, ...] = ()
    active_state: str = ""
    key_decisions: tuple[str, ...] = ()


class Mapped(NamedTuple):
    sections: Sections
    known: bool  # False when no heading of the summary was recognised
    redacted: int  # secrets replaced by [REDACTED]
    dropped: int  # pieces left out for the budget (cut ones not counted)


class _Unit(NamedTuple):
    kind: str
    order: int  # where it came in the summary
    label: str  # the part's label ('' for none)
    text: str


def kind_of(title: str) -> str | None:
    """The kind of part a heading names, or None when it names none this knows."""
    words = frozenset(_WORD.findall(title.lower()))
    for kind, test in _KINDS:
        if test(words):
            return kind
    return None


def _halves(text: str) -> list[str]:
    """The text, or its first and last HEAD_CHARS characters when it is longer than both (the
    line each cut goes through left out)."""
    if len(text) <= 2 * HEAD_CHARS:
        return [text]
    head = text[:HEAD_CHARS].rpartition("\n")[0]
    tail = text[-HEAD_CHARS:].partition("\n")[2]
    return [head, tail]


def _without_code(lines: Sequence[str]) -> list[str]:
    """The lines without fenced code blocks (an unclosed one runs to the end), nor the line
    that announced one (`Important Code Snippet:`)."""
    kept: list[str] = []
    fence = ""
    for line in lines:
        match = _FENCE.match(line)
        if fence:
            if match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
                fence = ""
            continue
        if match:
            fence = match.group(1)
            if kept and _ANNOUNCES_CODE.search(kept[-1]):
                kept.pop()
            continue
        kept.append(line)
    return kept


def _unwrapped(piece: str) -> str:
    """A piece of the summary proper: control characters gone, the model's working notes
    (<analysis>) dropped, only the inside of <summary> when it is marked (a piece may hold only
    one end of a tag pair), the client's preamble left out."""
    text = memory_text.strip_unsafe(piece)
    for name in ("analysis", "thinking"):
        closing = re.search(rf"</{name}>", text, re.IGNORECASE)
        opening = re.search(rf"<{name}>", text, re.IGNORECASE)
        if closing is not None and (opening is None or opening.start() > closing.start()):
            text = text[closing.end() :]  # the end of notes that began before this piece
    text = _TAG_BLOCK.sub("", text)
    opening = re.search(r"<summary>", text, re.IGNORECASE)
    if opening is not None:
        text = text[opening.end() :]
    closing = re.search(r"</summary>", text, re.IGNORECASE)
    if closing is not None:
        text = text[: closing.start()]
    stripped = text.lstrip()
    if stripped.startswith(_CLIENT_PREAMBLE):
        text = stripped.partition("\n")[2]
    return text


def _lines(text: str) -> list[str]:
    """The summary's lines, bounded, unwrapped, without code excerpts (each half on its own, so
    that a cut cannot open a fence or a tag over the other)."""
    lines: list[str] = []
    for piece in _halves(text):
        kept = _without_code(_unwrapped(piece).split("\n"))
        if lines and _left_open(text[:HEAD_CHARS]):
            # The head ends inside a code block or the model's notes: the tail's first lines
            # are still in it, up to its first heading.
            found = [at for at, line in enumerate(kept) if _heading(line) is not None]
            kept = kept[found[0] :] if found else []
        lines.extend(kept)
    return lines


def _left_open(head: str) -> bool:
    """Whether a piece ends inside a fenced block or an <analysis> (or <thinking>) block."""
    lowered = head.lower()
    for name in ("analysis", "thinking"):
        if lowered.rfind(f"<{name}>") > lowered.rfind(f"</{name}>"):
            return True
    fence = ""
    for line in head.split("\n"):
        match = _FENCE.match(line)
        if match is None:
            continue
        if not fence:
            fence = match.group(1)
        elif match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            fence = ""
    return bool(fence)


def _heading(line: str) -> tuple[str, str] | None:
    """(title, text after it on the same line) when the line is a heading, else None. A `#`
    heading is always one; a numbered, bold or `Title:` line only when its title names a kind."""
    match = _MD_HEADING.fullmatch(line)
    if match is not None and match.group(1):
        title = match.group(1).strip("*_ ").rstrip(":")
        return title, ""
    for pattern in (_NUMBERED, _BOLD, _PLAIN):
        match = pattern.fullmatch(line.rstrip())
        if match is not None:
            title = match.group(1).strip("*_ ").rstrip(":").strip()
            if title and kind_of(title) is not None:
                return title, match.group(2).strip()
    return None


def split_parts(text: str) -> list[Part]:
    """The summary's parts, in order; text before the first heading is a part with no title."""
    parts: list[Part] = []
    title, lines = "", []
    for line in _lines(text):
        found = _heading(line)
        if found is None:
            lines.append(line.rstrip())
            continue
        parts.append(Part(title, kind_of(title) or SUMMARY, tuple(lines)))
        title, rest = found
        lines = [rest] if rest else []
    parts.append(Part(title, kind_of(title) or SUMMARY, tuple(lines)))
    return [part for part in parts if any(line.strip() for line in part.lines)]


def _dedent(lines: Sequence[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(indents, default=0)
    return [line[cut:] for line in lines]


def _items(lines: Sequence[str]) -> list[str]:
    """A part's text as list items: each top-level bullet (or paragraph) with its further lines,
    the bullet's marker taken off."""
    items: list[list[str]] = []
    paragraph_break = True
    for line in _dedent(lines):
        if not line.strip():
            paragraph_break = True
            continue
        bullet = _BULLET.match(line)
        if bullet is not None:
            items.append([line[bullet.end() :]])
        elif paragraph_break or not items:
            items.append([line])
        else:
            items[-1].append(line)
        paragraph_break = False
    return ["\n".join([item[0], *_dedent(item[1:])]) for item in items]


def _units(parts: Sequence[Part]) -> list[_Unit]:
    units: list[_Unit] = []
    for order, part in enumerate(parts):
        if part.kind == DROPPED:
            continue
        if part.kind in (STEPS, DECISIONS):
            for index, item in enumerate(_items(part.lines)):
                units.append(_Unit(part.kind, order * 1000 + index, "", item))
            continue
        if part.kind == CURRENT and "stopped" in _WORD.findall(part.title.lower()):
            label = _STOPPED  # the last answer of a session read from its transcript
        elif part.kind in _LABELS:
            label = _LABELS[part.kind]
        elif not part.title or _ASKED & set(_WORD.findall(part.title.lower())):
            label = ""  # what was asked, or text under no heading: it needs no label
        else:
            label = part.title
        units.append(_Unit(part.kind, order * 1000, label, "\n".join(_dedent(part.lines))))
    return units


def _cleaned(unit: _Unit) -> tuple[_Unit, int]:
    text, count = memory_text.redact_secrets(unit.text)
    label, in_label = memory_text.redact_secrets(" ".join(unit.label.split()))
    lines = [line.rstrip() for line in memory_text.neutralise_markup(text).split("\n")]
    return unit._replace(
        label=memory_text.neutralise_markup(label), text="\n".join(lines).strip("\n")
    ), count + in_label


def _cut(text: str, chars: int) -> str:
    """The text cut to at most `chars` characters, at a space when one is near, with `…`."""
    if len(text) <= chars:
        return text
    kept = text[: max(chars - 1, 0)]
    space = kept.rfind(" ")
    if space >= chars // 2:
        kept = kept[:space]
    return kept.rstrip() + ELLIPSIS


def _labelled(unit: _Unit) -> str:
    if not unit.label:
        return unit.text
    label = unit.label.rstrip(":")
    bullet = _BULLET.match(unit.text)
    if "\n" not in unit.text and bullet is not None:  # one item: no list for it
        return f"{label}: {unit.text[bullet.end() :]}"
    if "\n" in unit.text or unit.text.startswith("- "):
        return f"{label}:\n{unit.text}"
    return f"{label}: {unit.text}"


def assemble(units: Sequence[_Unit]) -> Sections:
    """The sections the chosen units make, each section's units in the summary's order (Active
    state: the next step, the current work, then the rest)."""
    ordered = sorted(units, key=lambda u: u.order)
    active = sorted(
        (u for u in ordered if u.kind in (NEXT, CURRENT, PENDING)),
        key=lambda u: (_PRIORITY[u.kind] if u.kind != PENDING else 9, u.order),
    )
    return Sections(
        session_summary="\n\n".join(_labelled(u) for u in ordered if u.kind == SUMMARY),
        steps_completed=tuple(u.text for u in ordered if u.kind == STEPS),
        active_state="\n".join(_labelled(u) for u in active),
        key_decisions=tuple(u.text for u in ordered if u.kind == DECISIONS),
    )


def _rank(unit: _Unit) -> int:
    """A unit's place when the budget is short: a summary part with a label (concepts, context,
    anything under a heading this does not know) comes after everything else."""
    if unit.kind == SUMMARY and unit.label:
        return _REST
    return _PRIORITY[unit.kind]


def map_summary(
    text: str, room: int, measure: Callable[[Sections], int], after: str = ""
) -> Mapped:
    """The summary's sections within `room` (what `measure` says they take, in bytes): every
    piece in order of priority, each first cut to its share, then as much of each as fits.
    `after`: a second text read on its own (so that nothing in the first, an unclosed tag or
    fence, reaches into it), whose parts come after the first's."""
    parts = split_parts(text) + (split_parts(after) if after else [])
    known = any(part.title and kind_of(part.title) is not None for part in parts)
    redacted = 0
    units = []
    for unit in _units(parts):
        cleaned, count = _cleaned(unit)
        redacted += count
        if cleaned.text:
            units.append(cleaned)
    ranked = sorted(units, key=lambda u: (_rank(u), u.order))[:MAX_UNITS]
    chosen: list[_Unit] = []
    dropped = 0
    for unit in ranked:
        share = NEXT_CHARS if unit.kind in (NEXT, CURRENT) else UNIT_CHARS
        piece = unit._replace(text=_cut(unit.text, share))
        if measure(assemble([*chosen, piece])) <= room:
            chosen.append(piece)
            continue
        fitted = _fit(chosen, piece, room, measure)
        if fitted is None:
            dropped += 1
        else:
            chosen.append(fitted)
    return Mapped(assemble(chosen), known, redacted, dropped)


def _fit(
    chosen: list[_Unit], piece: _Unit, room: int, measure: Callable[[Sections], int]
) -> _Unit | None:
    """The longest cut of `piece` that still fits beside `chosen` (None when under MIN_CUT)."""
    low, high = MIN_CUT, len(piece.text) - 1
    best = None
    while low <= high:
        middle = (low + high) // 2
        trial = piece._replace(text=_cut(piece.text, middle))
        if measure(assemble([*chosen, trial])) <= room:
            best, low = trial, middle + 1
        else:
            high = middle - 1
    return best
