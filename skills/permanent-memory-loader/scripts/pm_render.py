# Turns epic records into the stamped block, inside the token budget. Pure: the token counter
# and the clock are passed in.
#
# The counter must satisfy two facts that hold for cl100k_base and for the byte estimate; the
# level choice relies on them to avoid counting text whose count cannot change the choice:
# count(t) <= the UTF-8 length of t (a token is at least one byte), and count(t) >= the number of
# lines of a rendered block (each line starts with text, and no cl100k_base token runs from a
# newline into the next line).
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING or not __package__:  # run as a script from the skill folder
    import memory_text
    from pm_parse import LABELS, Epic, is_stale
else:  # installed as a package
    from . import memory_text
    from .pm_parse import LABELS, Epic, is_stale

STAMP = "[permanent-memory | trust:file]"
MAX_LINE_CHARS = 120
MAX_ID_CHARS = 40
ELLIPSIS = "\u2026"
SKIP_TOKENS = 8000
LEVELS = ("L0", "L1", "L2", "L3", "IDS")
# What each level leaves out, cumulatively, and the labels it keeps.
LEVEL_DROPS = {
    "L0": "nothing",
    "L1": "tentative lines",
    "L2": "tentative and patterns lines",
    "L3": "all subsection lines",
    "IDS": "intents, and the oldest epics beyond the hard cap",
}
_KEEP = {
    "L0": LABELS,
    "L1": tuple(label for label in LABELS if label != "tentative"),
    "L2": tuple(label for label in LABELS if label not in ("tentative", "patterns")),
    "L3": (),
}
# The last line of a degraded block: what was left out, briefly.
_NOTE = {
    "L1": "(trimmed for the token budget: tentative lines left out)",
    "L2": "(trimmed for the token budget: tentative and patterns lines left out)",
    "L3": "(trimmed for the token budget: Epic lines only)",
}

Counter = Callable[[str], int]


class Budget(NamedTuple):
    target: int = 120
    hard_cap: int = 200
    stale_days: int = 90
    epic_line_tokens: int = 20  # an Epic line (stale prefix included) stays within this
    max_chars: int = 9000  # hooks must stay under 10,000 characters


class Block(NamedTuple):
    text: str  # what is printed: "" or the stamp, lines, newline at the end
    level: str  # one of LEVELS, "empty" (no epics) or "skipped" (file too large)
    levels: dict[str, str]  # every level's text (L0..L3 and IDS), for --explain and JSON
    tokens: dict[str, int]  # counts made while choosing (levels not needed are not counted)
    reason: str  # why this level, in words


def cut_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + ELLIPSIS


def safe_text(text: str) -> str:
    """One line of memory text, safe to show: cleaned, on one line, trimmed."""
    return " ".join(memory_text.clean(text).split())


def stale_prefix(epic: Epic, now: datetime, stale_days: int) -> str:
    return f"(>{stale_days}d may be outdated) " if is_stale(epic, now, stale_days) else ""


def fits(text: str, limit: int, count: Counter, max_chars: int = 9000) -> bool:
    if len(text) > max_chars or text.count("\n") > limit:
        return False  # at least one token per line: cannot fit, no need to count
    if len(text.encode("utf-8", "surrogatepass")) <= limit:
        return True  # at most one token per byte: fits, no need to count
    return count(text) <= limit


def epic_line(epic: Epic, now: datetime, budget: Budget, count: Counter) -> str:
    """`Epic ID (intent):` within 120 characters and the Epic-line token limit (stale prefix
    included), cutting the intent first, then the ID."""
    prefix = stale_prefix(epic, now, budget.stale_days)
    full_id = cut_line(safe_text(epic.epic_id) or "?", MAX_ID_CHARS)
    intent = safe_text(epic.intent)

    def assemble(id_chars: int, intent_chars: int) -> str:
        shown_id = cut_line(full_id, id_chars)
        shown = cut_line(intent, intent_chars) if intent_chars > 0 else ""
        body = f"Epic {shown_id} ({shown}):" if shown else f"Epic {shown_id}:"
        # Neutralise again across the fields: `[x` as ID and `| trust:y]` as intent together
        # would make a stamp lookalike.
        return memory_text.neutralise_markup(prefix + body)

    def ok(line: str) -> bool:
        return len(line) <= MAX_LINE_CHARS and fits(line, budget.epic_line_tokens, count)

    def longest(make: Callable[[int], str], high: int) -> int:
        # Largest n in [0, high] with ok(make(n)), assuming longer never fits better.
        low = 0
        while low < high:
            middle = (low + high + 1) // 2
            if ok(make(middle)):
                low = middle
            else:
                high = middle - 1
        return low

    if ok(assemble(len(full_id), len(intent))):
        return assemble(len(full_id), len(intent))
    intent_chars = longest(lambda n: assemble(len(full_id), n), len(intent) - 1)
    if intent_chars > 0 or ok(assemble(len(full_id), 0)):
        return assemble(len(full_id), intent_chars)
    id_chars = longest(lambda n: assemble(n, 0), len(full_id) - 1)
    return cut_line(assemble(max(id_chars, 1), 0))


def sub_lines(epic: Epic, labels: Sequence[str]) -> list[str]:
    """`  label: first line` for each kept label that has a non-empty first line."""
    lines = []
    for label in labels:
        for sub in epic.subsections:
            if sub.label != label:
                continue
            shown = next((s for s in (safe_text(entry) for entry in sub.entries) if s), "")
            if shown:
                lines.append(cut_line(memory_text.neutralise_markup(f"  {label}: {shown}")))
                break
    return lines


def _ids_block(epics: Sequence[Epic], kept: int, width: int = MAX_LINE_CHARS) -> str:
    shown = [cut_line(safe_text(epic.epic_id) or "?", MAX_ID_CHARS) for epic in epics]
    shown = shown[len(shown) - kept :] if kept else []
    lines = [STAMP]
    current = ""
    for index, epic_id in enumerate(shown):
        piece = epic_id + ("," if index < len(shown) - 1 else "")
        candidate = f"{current} {piece}" if current else f"Epics: {piece}"
        if current and len(candidate) > width:
            lines.append(current)
            candidate = f"  {piece}"
        current = candidate
    if current:
        lines.append(memory_text.neutralise_markup(current))
    older = len(epics) - kept
    if older:
        lines.append(f"(+{older} older; trimmed for the token budget: newest Epic IDs only)")
    else:
        lines.append("(trimmed for the token budget: Epic IDs only)")
    return "\n".join(lines) + "\n"


def level_texts(
    epics: Sequence[Epic], now: datetime, budget: Budget, count: Counter
) -> dict[str, str]:
    """The L0..L3 blocks."""
    heads = [epic_line(epic, now, budget, count) for epic in epics]
    texts = {}
    for level, keep in _KEEP.items():
        lines = [STAMP]
        for epic, head in zip(epics, heads):
            lines.append(head)
            lines.extend(sub_lines(epic, keep))
        if level in _NOTE:
            lines.append(_NOTE[level])
        texts[level] = "\n".join(lines) + "\n"
    return texts


def ids_text(epics: Sequence[Epic], budget: Budget, count: Counter) -> str:
    """The IDS block: as many of the newest epics' IDs as fit the hard cap, and `+N older`."""
    low, high = 0, len(epics)
    while low < high:
        middle = (low + high + 1) // 2
        if fits(_ids_block(epics, middle), budget.hard_cap, count, budget.max_chars):
            low = middle
        else:
            high = middle - 1
    return _ids_block(epics, low)


def render_block(epics: Sequence[Epic], budget: Budget, count: Counter, now: datetime) -> Block:
    """The block to show: the first level within the target, else the first within the hard
    cap, else the newest IDs that fit the hard cap. Never over the hard cap."""
    if not epics:
        return Block("", "empty", {}, {}, "no epics in the file")
    texts = level_texts(epics, now, budget, count)
    tokens: dict[str, int] = {}

    def counted(level: str) -> Counter:
        def count_once(text: str) -> int:
            if level not in tokens:
                tokens[level] = count(text)
            return tokens[level]

        return count_once

    target, cap = min(budget.target, budget.hard_cap), budget.hard_cap
    # Levels ruled out by the character limit of a hook rather than by tokens: say so.
    too_long = [level for level in _KEEP if len(texts[level]) > budget.max_chars]
    rules = (
        (target, "", f"the target ({target})"),
        (cap, f"none within the target ({target}); ", f"the hard cap ({cap})"),
    )
    for limit, before, within in rules:
        for level in ("L0", "L1", "L2", "L3"):
            if fits(texts[level], limit, counted(level), budget.max_chars):
                skipped = [other for other in too_long if other < level]
                if skipped:
                    reason = (
                        f"{before}{', '.join(skipped)} over the {budget.max_chars:,}-character "
                        f"limit of a hook; first level within it and {within}"
                    )
                else:
                    reason = f"{before}first level within {within}"
                return Block(texts[level], level, texts, tokens, reason)
    texts["IDS"] = ids_text(epics, budget, count)
    if fits(texts["IDS"], cap, counted("IDS"), budget.max_chars):
        reason = f"no level within the hard cap ({cap}); the newest IDs that fit it"
        return Block(texts["IDS"], "IDS", texts, tokens, reason)
    # A hard cap too small even for the stamp and the note: the stamp alone, or nothing.
    fallback = STAMP + "\n" if fits(STAMP + "\n", budget.hard_cap, count) else ""
    return Block(fallback, "IDS", texts, tokens, f"hard cap ({budget.hard_cap}) too small")


def human_size(size: int) -> str:
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def render_skipped(
    size: int, budget: Budget, count: Counter, estimated: bool = False, over: str = ""
) -> Block:
    """The block for a file over SKIP_TOKENS (or over what `over` says): the stamp and one line
    saying what to do."""
    over = over or f"over {SKIP_TOKENS} tokens" + (" (estimated)" if estimated else "")
    candidates = (
        f"permanent_memory.md not loaded: {human_size(size)}, {over}. "
        "Archive old epics: permanent_memory.py archive",
        f"permanent_memory.md not loaded: {over}",
    )
    for line in candidates:
        text = f"{STAMP}\n{line}\n"
        if fits(text, budget.hard_cap, count, budget.max_chars):
            return Block(text, "skipped", {}, {}, f"file {over}")
    fallback = STAMP + "\n" if fits(STAMP + "\n", budget.hard_cap, count) else ""
    return Block(fallback, "skipped", {}, {}, f"file {over}")
