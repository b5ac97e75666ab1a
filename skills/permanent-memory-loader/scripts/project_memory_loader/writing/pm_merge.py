# Three-way merge of permanent_memory.md, epic by epic: the core of `permanent_memory.py merge`,
# the git merge driver. Pure: three texts in, one text and what happened out.
#
# The file is a list of epics keyed by ID, so the merge is one by ID: every epic either side
# has is kept, one changed on a side only takes that change, and only an epic changed on both
# sides is merged line by line, subsection by subsection. Only what truly clashes there (the
# same lines changed differently) gets conflict markers, and they stay inside that epic. An epic
# one side removed (archive moves epics out) while the other changed it is kept, and reported.
#
# Epics, headings and subsections are found by pm_parse, so the merge and the loader agree on
# where an epic starts and ends. An epic's Keywords and Paths lines are each one set, not an
# entry: changed on both sides, the merged epic has one line with ours' values and then theirs'
# new ones (pm_merge_sets).
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from ..core.pm_meta_lines import completed_value
from ..core.pm_parse import normalise_text, parse_permanent, v2_marker
from .pm_append_plan import keywords_at
from .pm_merge_items import OURS_MARK, THEIRS_MARK, clash, merge_items, pick
from .pm_merge_sets import SET_LINES, merge_set_line

_FLOOR = datetime.min.replace(tzinfo=timezone.utc)

Key = tuple[str, int]  # (epic ID, occurrence): a file with a duplicate ID keeps both


class Unit(NamedTuple):
    """One epic's lines, with any non-epic section that follows it before the next epic."""

    key: Key
    lines: tuple[str, ...]  # trailing blank lines left out
    completed_at: datetime | None


class Split(NamedTuple):
    preamble: tuple[str, ...]  # text before the first epic, trailing blank lines left out
    units: dict[Key, Unit]  # file order


class Merged(NamedTuple):
    text: str
    clashes: int  # conflict blocks left in the text
    notes: tuple[str, ...]  # one line each: what the merge decided that a person should know


def _trim(lines: Sequence[str]) -> tuple[str, ...]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return tuple(lines[:end])


def split_file(text: str) -> Split:
    lines = normalise_text(text).split("\n")
    epics = parse_permanent(text)
    if not epics:
        return Split(_trim(lines), {})
    units: dict[Key, Unit] = {}
    seen: dict[str, int] = {}
    starts = [epic.start_line for epic in epics] + [len(lines)]
    for epic, end in zip(epics, starts[1:]):
        seen[epic.epic_id] = seen.get(epic.epic_id, 0) + 1
        key = (epic.epic_id, seen[epic.epic_id])
        units[key] = Unit(key, _trim(lines[epic.start_line : end]), epic.completed_at)
    return Split(_trim(lines[: epics[0].start_line]), units)


def key_name(key: Key) -> str:
    epic_id, occurrence = key
    name = epic_id or "(epic without an ID)"
    return name if occurrence == 1 else f"{name} (occurrence {occurrence})"


# --- one epic changed on both sides ------------------------------------------------------------


class Layout(NamedTuple):
    heading: str
    head: list[str]  # entries before the first `###` (Completed, v2 marker and summary, …)
    sections: dict[tuple[str, int], list[str]]  # `###` line (and occurrence) -> its entries
    trailer: list[str]  # lines after the epic's end (a non-epic section)
    # The Keywords and Paths lines the loader reads (SET_LINES order), when each is a head entry
    set_lines: tuple[str | None, ...] = (None,) * len(SET_LINES)
    # False when the loader reads such a line this merge leaves to the entries' merge (one
    # inside a subsection, or with lines indented under it)
    usual: bool = True


def _entries(lines: Sequence[str]) -> list[str]:
    """Lines grouped into entries: an indented line continues the entry above it."""
    entries: list[str] = []
    for line in _trim(lines):
        if entries and line[:1] in (" ", "\t") and line.strip() and entries[-1].strip():
            entries[-1] += "\n" + line
        else:
            entries.append(line)
    while entries and not entries[0].strip():
        entries.pop(0)
    return entries


def layout(unit_lines: Sequence[str]) -> Layout:
    epic = parse_permanent("\n".join(unit_lines))[0]
    starts = {line for line in epic.subsection_lines if line >= 0}
    starts.update(line for line, _ in epic.unknown_subsections)
    bounds = [*sorted(starts), epic.end_line]
    sections: dict[tuple[str, int], list[str]] = {}
    for start, end in zip(bounds, bounds[1:]):
        title = unit_lines[start].strip()
        occurrence = 1 + sum(1 for key in sections if key[0] == title)
        sections[(title, occurrence)] = _entries(unit_lines[start + 1 : end])
    head = _entries(unit_lines[1 : bounds[0]])
    found: list[str | None] = []
    usual = True
    for kind, index in zip(SET_LINES, (epic.keywords_line, epic.paths_line)):
        line = None if index is None else unit_lines[index]
        if index is not None and not (index < bounds[0] and line in head and kind.slot not in head):
            line, usual = None, False
        found.append(line)
    trailer = list(_trim(unit_lines[epic.end_line :]))
    return Layout(unit_lines[0], head, sections, trailer, tuple(found), usual)


def _is_completed(entry: str) -> bool:
    # A `**Completed:**` line; a v2 marker's completed= field is part of the marker.
    return completed_value(entry) is not None and not _is_marker(entry)


def _is_marker(entry: str) -> bool:
    return v2_marker(entry) is not None


def _marker_fields(marker: str) -> list[tuple[str, str]]:
    body = marker.strip()[4:]
    body = body[:-3] if body.endswith("-->") else body
    fields = []
    for word in body.split()[1:]:  # the first word is af-memory:v2
        name, _, value = word.partition("=")
        fields.append((name, value))
    return fields


def _merge_marker(
    base: str | None, ours: str, theirs: str, typed_entries: int
) -> tuple[list[str], int]:
    """The v2 marker line, field by field. `items` is recounted when a side changed it (both
    sides may have added entries), and `confidence` changed on both sides takes the lower value
    (the merged epic is no surer than either side)."""
    base_fields = dict(_marker_fields(base)) if base else {}
    ours_fields, theirs_fields = dict(_marker_fields(ours)), dict(_marker_fields(theirs))
    names = list(ours_fields) + [name for name in theirs_fields if name not in ours_fields]
    merged = []
    for name in names:
        b, o, t = base_fields.get(name, ""), ours_fields.get(name, ""), theirs_fields.get(name, "")
        value = pick(b, o, t)
        if name == "items" and (o != b or t != b):
            value = str(typed_entries)
        elif value is None and name == "confidence":
            try:
                value = o if float(o) <= float(t) else t
            except ValueError:
                value = None
        if value is None:
            return clash([ours], [theirs]), 1
        if value:
            merged.append(f"{name}={value}")
    indent = ours[: len(ours) - len(ours.lstrip())]
    return [f"{indent}<!-- {' '.join(['af-memory:v2', *merged])} -->"], 0


def _insideclash(items: Sequence[str], wanted: str) -> bool:
    inside = False
    for item in items:
        if item == OURS_MARK:
            inside = True
        elif item == THEIRS_MARK:
            inside = False
        elif item == wanted and inside:
            return True
    return False


def _merge_head(
    heads: Sequence[list[str]], sides: Sequence[Layout]
) -> tuple[list[str], int, list[str]]:
    """The lines before the first subsection (the v2 marker and Completed line taken out), the
    Keywords and Paths lines each merged as one set in its place. Returns the entries, the clash
    count and the set lines still to place where `add` would write them (the line's place was
    removed on one side while the other changed it)."""
    found_lines = [line for side in sides for line in side.set_lines if line is not None]
    if not found_lines or not all(side.usual for side in sides):
        head, found = merge_items(*heads)
        return head, found, []
    slotted = []
    for entries, side in zip(heads, sides):
        entries = list(entries)
        for kind, line in zip(SET_LINES, side.set_lines):
            if line is not None:
                entries[entries.index(line)] = kind.slot
        slotted.append(entries)
    head, found = merge_items(*slotted)
    if any(_insideclash(head, kind.slot) for kind in SET_LINES):  # merged as before
        head, found = merge_items(*heads)
        return head, found, []
    unplaced: list[str] = []
    for number, kind in enumerate(SET_LINES):
        merged, clashed = merge_set_line(kind, *(side.set_lines[number] for side in sides))
        found += clashed
        if kind.slot not in head:
            unplaced.extend(merged)
            continue
        at = head.index(kind.slot)
        head = [*head[:at], *merged, *(entry for entry in head[at:] if entry != kind.slot)]
    return head, found, unplaced


def _merge_sections(
    base: dict[tuple[str, int], list[str]],
    ours: dict[tuple[str, int], list[str]],
    theirs: dict[tuple[str, int], list[str]],
) -> tuple[list[tuple[str, list[str]]], int]:
    order = list(ours)
    for index, key in enumerate(theirs):
        if key in order:
            continue
        earlier = [k for k in list(theirs)[:index] if k in order]
        order.insert(order.index(earlier[-1]) + 1 if earlier else len(order), key)
    merged = []
    clashes = 0
    for key in order:
        if key in ours and key in theirs:
            entries, found = merge_items(base.get(key, []), ours[key], theirs[key])
            clashes += found
        else:
            kept = ours.get(key, theirs.get(key, []))
            if key in base and kept == base[key]:
                continue  # removed on the other side, unchanged here: removed
            entries = kept
        merged.append((key[0], entries))
    return merged, clashes


def merge_epic(
    base: Sequence[str] | None, ours: Sequence[str], theirs: Sequence[str]
) -> tuple[list[str], int]:
    """One epic changed on both sides: heading, the lines before the first subsection, each
    subsection and any text after the epic merged separately. Returns lines and clash count."""
    b = layout(base) if base else Layout("", [], {}, [])
    o, t = layout(ours), layout(theirs)
    clashes = 0
    heading = pick(b.heading if base else None, o.heading, t.heading)
    heading_clash: list[str] = []
    if heading is None:
        # A `## ` line would start a new section: the clash shows the headings without it.
        heading = o.heading
        heading_clash = clash([o.heading.lstrip("# ")], [t.heading.lstrip("# ")])
        clashes += 1
    # The v2 marker and the Completed line are single values, not entries: merged on their own.
    markers = [[e for e in side.head if _is_marker(e)][:1] for side in (b, o, t)]
    dates = [[e for e in side.head if _is_completed(e)][:1] for side in (b, o, t)]
    heads = [
        [e for e in side.head if e not in marker and e not in date]
        for side, marker, date in zip((b, o, t), markers, dates)
    ]
    head, found, unplaced = _merge_head(heads, (b, o, t))
    clashes += found
    completed: list[str] = []
    if dates[1] and dates[2]:
        date = pick(dates[0][0] if dates[0] else None, dates[1][0], dates[2][0])
        completed = [date] if date is not None else clash(dates[1], dates[2])
        clashes += date is None
    elif dates[1] != dates[2]:
        removed = dates[0] and (dates[0] == dates[1] or dates[0] == dates[2])
        completed = [] if removed else dates[1] or dates[2]
    sections, found = _merge_sections(b.sections, o.sections, t.sections)
    clashes += found
    trailer, found = merge_items(b.trailer, o.trailer, t.trailer)
    clashes += found
    marker: list[str] = []
    if markers[1] or markers[2]:
        everything = [*head, *(entry for _, entries in sections for entry in entries)]
        typed = sum(1 for entry in everything if entry.lstrip().startswith("- ["))
        base_marker = markers[0][0] if markers[0] else None
        if markers[1] and markers[2]:
            marker, found = _merge_marker(base_marker, markers[1][0], markers[2][0], typed)
            clashes += found
        else:
            marker = markers[1] or markers[2]
    lines = [heading, *heading_clash, *marker, *completed, *head]
    for title, entries in sections:
        if lines and lines[-1].strip():
            lines.append("")
        lines.append(title)
        lines.extend(entries)
    if trailer:
        lines.extend(["", *trailer])
    flat = [line for entry in lines for line in entry.split("\n")]
    if unplaced:  # where add writes them: the Keywords line first, the Paths line after it
        epic = parse_permanent("\n".join(flat))[0]
        at = keywords_at(flat, epic)
        if epic.keywords_line is not None and at <= epic.keywords_line:
            at = epic.keywords_line + 1
        flat[at:at] = unplaced
    return flat, clashes


# --- the whole file ----------------------------------------------------------------------------


def _completion_order(units: Sequence[Unit]) -> list[datetime]:
    """Each unit's completion for ordering: an undated epic counts as completed when the dated
    one above it was (the file is append-only)."""
    last = _FLOOR
    keys = []
    for unit in units:
        if unit.completed_at is not None:
            last = unit.completed_at
        keys.append(unit.completed_at or last)
    return keys


def _interleave(ours: Sequence[Unit], theirs: Sequence[Unit]) -> list[Unit]:
    """Both sequences kept in their own order, merged by completion; ours first on a tie."""
    ours_keys, theirs_keys = _completion_order(ours), _completion_order(theirs)
    merged: list[Unit] = []
    i = j = 0
    while i < len(ours) and j < len(theirs):
        if theirs_keys[j] < ours_keys[i]:
            merged.append(theirs[j])
            j += 1
        else:
            merged.append(ours[i])
            i += 1
    return merged + list(ours[i:]) + list(theirs[j:])


def _reparsed(key: Key, lines: Sequence[str]) -> Unit:
    epics = parse_permanent("\n".join(lines))
    return Unit(key, tuple(lines), epics[0].completed_at if epics else None)


def merge_permanent(base: str, ours: str, theirs: str) -> Merged:
    """Merge two edited copies of a permanent_memory.md text (`base` is their common ancestor,
    '' when there is none). The result keeps every epic either side has."""
    b, o, t = split_file(base), split_file(ours), split_file(theirs)
    notes: list[str] = []
    preamble, clashes = merge_items(b.preamble, o.preamble, t.preamble)
    kept: dict[Key, Unit] = {}
    for key in [*o.units, *(k for k in t.units if k not in o.units)]:
        in_base = b.units.get(key)
        mine, other = o.units.get(key), t.units.get(key)
        if mine is not None and other is not None:
            chosen = pick(
                None if in_base is None else "\n".join(in_base.lines),
                "\n".join(mine.lines),
                "\n".join(other.lines),
            )
            if chosen is not None:
                kept[key] = mine if chosen == "\n".join(mine.lines) else other
                continue
            epic_lines, found = merge_epic(
                None if in_base is None else in_base.lines, mine.lines, other.lines
            )
            clashes += found
            if found:
                notes.append(f"{key_name(key)}: changed on both sides; {found} conflict(s) left")
            kept[key] = _reparsed(key, epic_lines)
            continue
        present = mine if mine is not None else other
        assert present is not None
        if in_base is None:
            kept[key] = present  # added on one side
        elif present.lines != in_base.lines:
            side, gone = ("ours", "theirs") if mine is not None else ("theirs", "ours")
            notes.append(
                f"{key_name(key)}: removed on {gone} (archived or deleted) but changed on "
                f"{side}; kept the changed epic"
            )
            kept[key] = present
        # else removed on one side, unchanged on the other: removed
    ours_kept = [kept[key] for key in o.units if key in kept]
    theirs_new = [kept[key] for key in t.units if key in kept and key not in o.units]
    order = _interleave(ours_kept, theirs_new)
    parts = [list(preamble)] if preamble else []
    parts.extend(list(unit.lines) for unit in order)
    lines: list[str] = []
    for part in parts:
        if lines:
            lines.append("")
        lines.extend(line for item in part for line in item.split("\n"))
    text = "\n".join(lines) + "\n" if lines else ""
    if clashes == 0 and _same_content(text, ours):
        text = normalise_text(ours)  # nothing to take from theirs: ours exactly as it was
    return Merged(text, clashes, tuple(notes))


def _same_content(text: str, other: str) -> bool:
    a, b = split_file(text), split_file(other)
    return a.preamble == b.preamble and list(a.units.values()) == list(b.units.values())
