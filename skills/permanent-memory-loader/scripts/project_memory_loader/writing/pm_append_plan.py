# `add --append`: new entries for an epic already in permanent_memory.md, each appended to its
# subsection of that epic (a missing subsection is created where the canonical order puts it),
# entries the epic already holds skipped; new keywords appended to its Keywords line (the line
# is created where add writes it when the epic has none), and new globs to its Paths line
# (likewise). Pure: text in, text out; pm_add reads
# and writes the file under the folder's lock.
#
# Only lines are inserted, and the Keywords line extended: every other line of the file before
# the append is in the new text, in the same order and unchanged, so nothing a person wrote is
# lost or moved. The new text is parsed again and must read back as the old epic plus exactly
# the appended entries and keywords.
from __future__ import annotations

import re
from typing import NamedTuple

from ..core.pm_errors import LoaderError
from ..core.pm_meta_lines import keywords_value
from ..core.pm_parse import LABELS, Epic, entry_text, parse_permanent
from ..shared import memory_text
from .pm_epic_input import (
    FIELD_LABELS,
    HEADINGS,
    KEYWORDS_LABEL,
    DuplicateEpic,
    Entry,
    Item,
    Keyword,
    keywords_over,
)
from .pm_epic_layout import (
    item_line,
    sections,
)
from .pm_epic_paths import PATHS_LABEL, extended_paths_line, paths_over

KEYWORDS = "keywords"  # the label the reports give the Keywords line

LABEL_FIELDS = {label: field for field, label in FIELD_LABELS.items()}


class AppendRefused(LoaderError):
    """The entries cannot be appended so that the loader reads them back; str() says why."""


class Skipped(NamedTuple):
    item: Item | Keyword
    label: str  # the label of the subsection that already holds it; "keywords" for a term


class Appended(NamedTuple):
    text: str  # the file's new text (the old one when nothing was appended)
    epic: Epic  # the epic as the loader reads it from `text`
    added: tuple[tuple[str, Item], ...]  # (label, item) in the order they were written
    skipped: tuple[Skipped, ...]  # in input order, the items' then the keywords'
    keywords: tuple[Keyword, ...] = ()  # the terms added to the Keywords line, in order
    left_out: tuple[Keyword, ...] = ()  # new terms over the line's limits, not written
    paths: tuple[str, ...] = ()  # the globs added to the Paths line, in order
    paths_left_out: tuple[str, ...] = ()  # new globs over the line's limits, not written
    paths_skipped: tuple[str, ...] = ()  # globs the line holds already, or given twice

    @property
    def changed(self) -> bool:
        return bool(self.added or self.keywords or self.paths)


def entry_key(text: str) -> str:
    """What two entries that say the same thing share: cleaned and redacted as the block shows
    them, with case and runs of whitespace ignored."""
    shown, _count = memory_text.redact_secrets(memory_text.clean(text))
    return " ".join(shown.split()).casefold()


def epic_named(text: str, epic_id: str) -> Epic | None:
    """The file's one epic with this ID, None when it has none; DuplicateEpic when it has two."""
    same = [epic for epic in parse_permanent(text) if epic.epic_id == epic_id]
    if len(same) > 1:
        lines_at = ", ".join(str(epic.start_line + 1) for epic in same)
        raise DuplicateEpic(
            f"{epic_id} is in the file {len(same)} times (lines {lines_at}); keep one by hand first"
        )
    return same[0] if same else None


def _split_new(epic: Epic, entry: Entry) -> tuple[list[Item], list[Skipped]]:
    """The entry's items the epic does not hold yet (nor an earlier item of the entry), and the
    others with where they already are."""
    seen = {entry_key(text): sub.label for sub in epic.subsections for text in sub.entries}
    new: list[Item] = []
    skipped: list[Skipped] = []
    for item in entry.items:
        key = entry_key(item.text)
        if key in seen:
            skipped.append(Skipped(item, seen[key]))
            continue
        seen[key] = FIELD_LABELS["tentative" if item.tentative else item.field]
        new.append(item)
    return new, skipped


def _split_new_keywords(
    epic: Epic, entry: Entry
) -> tuple[list[Keyword], list[Keyword], list[Skipped]]:
    """The entry's terms the epic's Keywords line does not hold yet (case and spacing aside),
    those of them over the line's limits, and the others (given again, or there already)."""
    seen = {entry_key(term) for term in epic.keywords}
    new: list[Keyword] = []
    skipped = [Skipped(keyword, KEYWORDS) for keyword in entry.repeated_keywords]
    for keyword in entry.keywords:
        key = entry_key(keyword.text)
        if key in seen:
            skipped.append(Skipped(keyword, KEYWORDS))
            continue
        seen.add(key)
        new.append(keyword)
    kept = list(epic.keywords)
    fits: list[Keyword] = []
    left_out: list[Keyword] = []
    for keyword in new:  # in order: the first ones that fit are kept
        if not left_out and keywords_over([*kept, keyword.text]) is None:
            kept.append(keyword.text)
            fits.append(keyword)
        else:
            left_out.append(keyword)
    skipped.sort(key=lambda skip: skip.item.position)
    return fits, left_out, skipped


def extended_keywords_line(line: str, had_terms: bool, terms: list[str]) -> str:
    """A Keywords line as written with `terms` appended: after its last term (before a bold
    closer such as the `**` of `**Keywords: a, b**`), or after the key when it has none."""
    body = line.rstrip(" \t")
    added = ", ".join(terms)
    if not had_terms:
        return f"{body} {added}"
    stars = len(body) - len(body.rstrip("*"))
    head, tail = (body[:-stars], body[-stars:]) if stars else (body, "")
    head = head.rstrip(" \t")
    separator = " " if head.endswith(",") else ", "
    return f"{head}{separator}{added}{tail}"


def keywords_at(lines: list[str], epic: Epic) -> int:
    """Where a new Keywords line goes: right after a v2 epic's summary (its marker when it has
    none), right after a v1 epic's Completed line (its heading when it has none), before the
    epic's first `###` heading either way."""
    first_heading = min(epic.heading_lines, default=epic.end_line)
    after = epic.start_line
    if epic.schema == 2 and epic.marker_lines and epic.marker_lines[0] < first_heading:
        after = epic.marker_lines[0]
        if epic.summary is not None:
            for index in range(after + 1, first_heading):
                line = lines[index]
                if keywords_value(line) is None and entry_text(line) == epic.summary:
                    after = index
                    break
    elif epic.completed_line is not None and epic.completed_line < first_heading:
        after = epic.completed_line
    return after + 1


def _last_text_line(lines: list[str], start: int, end: int) -> int:
    """The index of the last non-blank line in lines[start:end] (start itself when none)."""
    for index in range(end - 1, start, -1):
        if lines[index].strip():
            return index
    return start


def _insertions(
    lines: list[str], epic: Epic, laid_out: list[tuple[str, list[str]]]
) -> list[tuple[int, int, list[str]]]:
    """(line index to insert before, canonical rank, lines) for each label's new item lines."""
    headed = [
        (line, sub.label) for sub, line in zip(epic.subsections, epic.subsection_lines) if line >= 0
    ]
    headings = sorted(set(epic.heading_lines))
    found: list[tuple[int, int, list[str]]] = []
    for label, item_lines in laid_out:
        rank = LABELS.index(label)
        own = [line for line, sub_label in headed if sub_label == label]
        if own:
            heading = own[0]
            following = [line for line in headings if line > heading]
            end = following[0] if following else epic.end_line
            found.append((_last_text_line(lines, heading, end) + 1, rank, item_lines))
            continue
        new_section = [f"### {HEADINGS[LABEL_FIELDS[label]]}", *item_lines]
        later = [line for line, sub_label in headed if LABELS.index(sub_label) > rank]
        if later:
            found.append((min(later), rank, [*new_section, ""]))
        else:
            last = _last_text_line(lines, epic.start_line, epic.end_line)
            found.append((last + 1, rank, ["", *new_section]))
    return found


def _entries_by_section(epic: Epic) -> dict[tuple[str, str], tuple[str, ...]]:
    return {(sub.label, sub.heading): sub.entries for sub in epic.subsections}


def _read_back(epic: Epic) -> tuple[object, ...]:
    return epic.epic_id, epic.intent, epic.completed, epic.summary, epic.schema


def _whole(epic: Epic) -> tuple[object, ...]:
    return (*_read_back(epic), epic.subsections, epic.keywords, epic.paths)


def _split_new_paths(epic: Epic, entry: Entry) -> tuple[list[str], list[str], list[str]]:
    """The entry's globs the epic's Paths line does not hold yet, those of them over the line's
    limits, and the others (given again, or there already)."""
    skipped = [*entry.repeated_paths]
    kept = list(epic.paths)
    fits: list[str] = []
    left_out: list[str] = []
    for glob in entry.paths:
        if glob in kept:
            skipped.append(glob)
        elif not left_out and paths_over([*kept, glob]) is None:
            kept.append(glob)
            fits.append(glob)
        else:
            left_out.append(glob)
    return fits, left_out, skipped


_ITEMS_COUNT = re.compile(r"(\sitems=)([0-9]{1,9})(?=\s)")


def append_entries(existing: str, epic: Epic, entry: Entry) -> Appended:
    """`existing` (normalised text holding `epic`) with the entry's new items appended to the
    epic's subsections. The entry's own ID, intent, summary and completion are not used: the
    epic keeps its own. Items are written in the epic's form (v2: tagged with their kind)."""
    new, skipped = _split_new(epic, entry)
    terms, left_out, skipped_terms = _split_new_keywords(epic, entry)
    skipped.extend(skipped_terms)
    globs, globs_left_out, globs_skipped = _split_new_paths(epic, entry)
    path_notes = (tuple(globs_left_out), tuple(globs_skipped))
    if not new and not terms and not globs:
        return Appended(existing, epic, (), tuple(skipped), (), tuple(left_out), (), *path_notes)
    laid_out: list[tuple[str, list[str]]] = []
    added: list[tuple[str, Item]] = []
    for field, items in sections(entry._replace(items=tuple(new))):
        if not items:
            continue
        label = FIELD_LABELS[field]
        tagged = [
            item_line(item, epic.schema == 2 or (field == "tentative" and item.field != field))
            for item in items
        ]
        laid_out.append((label, tagged))
        added.extend((label, item) for item in items)
    lines = existing.split("\n")
    inserts = _insertions(lines, epic, laid_out)
    if added and epic.marker_lines:  # the v2 marker's items= counts the items written
        at_line = epic.marker_lines[0]
        lines = [*lines]
        lines[at_line] = _ITEMS_COUNT.sub(
            lambda found: f"{found[1]}{int(found[2]) + len(added)}", lines[at_line], count=1
        )
    if terms:
        texts = [keyword.text for keyword in terms]
        if epic.keywords_line is not None:  # the one line that changes, in place
            at_line = epic.keywords_line
            lines = [*lines]
            lines[at_line] = extended_keywords_line(lines[at_line], bool(epic.keywords), texts)
        else:  # before anything else inserted at the same place
            inserts.append((keywords_at(lines, epic), -1, [f"{KEYWORDS_LABEL} {', '.join(texts)}"]))
    if globs:
        if epic.paths_line is not None:  # extended in place, as the Keywords line is
            lines = [*lines]
            lines[epic.paths_line] = extended_paths_line(
                lines[epic.paths_line], bool(epic.paths), globs
            )
        else:  # after the Keywords line (or where it goes)
            at_line = (
                keywords_at(lines, epic) if epic.keywords_line is None else epic.keywords_line + 1
            )
            inserts.append((at_line, -1, [f"{PATHS_LABEL} {', '.join(globs)}"]))
    inserts.sort(key=lambda found: found[:2])
    out: list[str] = []
    at = 0
    for index, _rank, block in inserts:
        out.extend(lines[at:index])
        out.extend(block)
        at = index
    out.extend(lines[at:])
    text = "\n".join(out)
    verified = _verified(existing, text, epic, added, terms)
    if verified.paths != (*epic.paths, *globs):
        raise AppendRefused(
            f"the loader would not read the globs appended to {epic.epic_id} back as written; "
            "nothing was written"
        )
    return Appended(
        text, verified, tuple(added), tuple(skipped), tuple(terms), tuple(left_out), tuple(globs),
        *path_notes,
    )  # fmt: skip


def _verified(
    old_text: str, text: str, epic: Epic, added: list[tuple[str, Item]], terms: list[Keyword]
) -> Epic:
    """The appended epic as the loader reads it, after checking it reads the old entries, then
    the new ones, in each subsection, the old keywords then the new ones, and every other epic
    as before."""
    others_before = [_whole(e) for e in parse_permanent(old_text) if e.epic_id != epic.epic_id]
    after = parse_permanent(text)
    others_after = [_whole(e) for e in after if e.epic_id != epic.epic_id]
    mine = [e for e in after if e.epic_id == epic.epic_id]
    if len(mine) == 1 and mine[0].keywords != (*epic.keywords, *(k.text for k in terms)):
        where = (
            f" (its Keywords line, line {epic.keywords_line + 1}, is unusual: add them to it "
            "by hand)"
            if epic.keywords_line is not None
            else ""
        )
        raise AppendRefused(
            f"the loader would not read the keywords appended to {epic.epic_id} back as "
            f"written{where}; nothing was written"
        )
    if len(mine) == 1 and others_before == others_after and _read_back(mine[0]) == _read_back(epic):
        expected = _entries_by_section(epic)
        headings: dict[str, str] = {}
        for sub in epic.subsections:
            if sub.heading:
                headings.setdefault(sub.label, sub.heading)
        for label, item in added:
            key = (label, headings.get(label, HEADINGS[LABEL_FIELDS[label]]))
            expected[key] = (*expected.get(key, ()), item.text)
        if _entries_by_section(mine[0]) == expected:
            return mine[0]
    raise AppendRefused(
        f"the loader would not read the entries appended to {epic.epic_id} back as written "
        "(is a ``` fence left open in it?); nothing was written"
    )
