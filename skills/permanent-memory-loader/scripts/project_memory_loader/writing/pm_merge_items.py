# The three-way merge of a sequence of items (a file's lines, an epic's entries) and of one value,
# with git's conflict markers where both sides changed the same thing differently: what pm_merge
# and pm_merge_sets build on.
from __future__ import annotations

from collections.abc import Sequence
from difflib import SequenceMatcher

OURS_MARK = "<<<<<<< ours"
SPLIT_MARK = "======="
THEIRS_MARK = ">>>>>>> theirs"
# Longer runs of changed lines are not aligned line by line (difflib is quadratic in the worst
# case): they clash as a whole when both sides changed them.
MAX_ALIGNED = 1000


def clash(ours: Sequence[str], theirs: Sequence[str]) -> list[str]:
    return [OURS_MARK, *ours, SPLIT_MARK, *theirs, THEIRS_MARK]


def merge_items(
    base: Sequence[str], ours: Sequence[str], theirs: Sequence[str]
) -> tuple[list[str], int]:
    """A three-way merge of two edited copies of `base` (items: lines, or entries of several
    lines joined by newlines). Where both sides only inserted at the same place, both insertions
    are kept, ours first; where both changed the same items differently, the result holds a
    conflict block. Returns the items (conflict markers are items too) and the clash count."""
    if ours == theirs or list(theirs) == list(base):
        return list(ours), 0
    if list(ours) == list(base):
        return list(theirs), 0
    if max(len(base), len(ours), len(theirs)) > MAX_ALIGNED:
        return clash(ours, theirs), 1
    to_ours = SequenceMatcher(None, base, ours, autojunk=False).get_matching_blocks()
    to_theirs = SequenceMatcher(None, base, theirs, autojunk=False).get_matching_blocks()
    # Runs of base items both sides kept unchanged: the stable points between the changes.
    stable = []
    i = j = 0
    while i < len(to_ours) and j < len(to_theirs):
        base_o, at_o, size_o = to_ours[i]
        base_t, at_t, size_t = to_theirs[j]
        low, high = max(base_o, base_t), min(base_o + size_o, base_t + size_t)
        if low < high:
            stable.append((low, high, at_o + low - base_o, at_t + low - base_t))
        if base_o + size_o < base_t + size_t:
            i += 1
        else:
            j += 1
    stable.append((len(base), len(base), len(ours), len(theirs)))
    out: list[str] = []
    clashes = 0
    at_b = at_o = at_t = 0
    for low, high, next_o, next_t in stable:
        b, o, t = list(base[at_b:low]), list(ours[at_o:next_o]), list(theirs[at_t:next_t])
        if o == b or o == t:
            out.extend(t)
        elif t == b:
            out.extend(o)
        elif not b:  # both inserted here: keep both
            out.extend(o + [item for item in t if item not in o])
        else:
            out.extend(clash(o, t))
            clashes += 1
        out.extend(base[low:high])
        at_b, at_o, at_t = high, next_o + high - low, next_t + high - low
    return out, clashes


def pick(base: str | None, ours: str, theirs: str) -> str | None:
    """The three-way choice of one value; None when both sides changed it differently."""
    if ours == theirs or theirs == base:
        return ours
    if ours == base:
        return theirs
    return None
