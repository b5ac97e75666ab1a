# The merge of an epic's set lines, the Keywords line (terms) and the Paths line (globs): each is
# one set, not an entry, so a line changed on both sides becomes one line with ours' values and
# then the values theirs added. pm_merge merges the epics; this module, those two lines.
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..core.pm_meta_lines import keywords_value, paths_value
from .pm_append_plan import entry_key, extended_keywords_line
from .pm_epic_paths import extended_paths_line
from .pm_merge_items import clash


class SetLine(NamedTuple):
    name: str  # for docstrings and notes
    # What stands for the line while the entries around it are merged: the same item on every
    # side, so the line keeps its place (and both sides adding it add it once).
    slot: str
    value_of: Callable[[str], str | None]  # the value of such a line, None for another line
    extended: Callable[[str, bool, list[str]], str]  # the line with values appended
    key: Callable[[str], str]  # what two values that are the same share


def _same_glob(glob: str) -> str:
    return glob


KEYWORDS = SetLine("Keywords", "\x00keywords", keywords_value, extended_keywords_line, entry_key)
PATHS = SetLine("Paths", "\x00paths", paths_value, extended_paths_line, _same_glob)
SET_LINES = (KEYWORDS, PATHS)


def set_values(kind: SetLine, line: str | None) -> list[str]:
    """A set line's values as written (split at commas, trimmed, none cut or dropped)."""
    value = None if line is None else kind.value_of(line)
    return [] if value is None else [term.strip() for term in value.split(",") if term.strip()]


def _with_values(kind: SetLine, line: str, values: Sequence[str]) -> str:
    """The line with its values replaced, key, list marker and bold kept as written."""
    value = kind.value_of(line) or ""
    if not value:
        return kind.extended(line, False, list(values)) if values else line
    at = line.rfind(value)  # the value ends the line, but for a bold closer and blanks
    head, tail = line[:at], line[at + len(value) :]
    return f"{head}{', '.join(values)}{tail}" if values else head.rstrip(" \t") + tail


def merge_set_line(
    kind: SetLine,
    base: str | None,
    ours: str | None,
    theirs: str | None,
) -> tuple[list[str], int]:
    """The epic's line of this kind (None: it has none) as one set: changed on both sides, ours'
    values in order, then the values theirs added, each once (`kind.key` decides sameness, as
    `add --append` does); a value one side removed and the other kept is removed. The line keeps
    ours' form. Returns its lines (none, one, or a clash of both sides when it could not be
    written so that the loader reads those values) and the clash count."""
    if ours == theirs or theirs == base:
        return ([] if ours is None else [ours]), 0
    if ours == base:
        return ([] if theirs is None else [theirs]), 0
    in_base = {kind.key(value) for value in set_values(kind, base)}
    in_theirs = {kind.key(value) for value in set_values(kind, theirs)}
    mine = set_values(kind, ours)
    values = [v for v in mine if kind.key(v) not in in_base or kind.key(v) in in_theirs]
    seen = {kind.key(value) for value in mine}
    added = []
    for value in set_values(kind, theirs):
        key = kind.key(value)
        if key not in in_base and key not in seen:
            seen.add(key)
            added.append(value)
    if ours is None or theirs is None:
        if not values and not added:
            return [], 0  # one side removed the line, the other only removed values
        line = _with_values(kind, ours or theirs or "", [*values, *added])
    elif len(values) == len(mine):
        line = kind.extended(ours, bool(mine), added) if added else ours
    else:
        line = _with_values(kind, ours, [*values, *added])
    if set_values(kind, line) != [*values, *added]:
        return clash([ours or ""], [theirs or ""]), 1
    return [line], 0
