# Turns epic records into the stamped block, inside the token budget. Pure: the token counter
# and the clock are passed in. One job, kept whole though it runs past 450 lines: what a line
# says and what is left out to fit are decided together (the degrade levels count the lines
# they would remove), so the lines' text and the fitting live side by side.
#
# The counter must satisfy two facts that hold for cl100k_base and for the byte estimate; the
# level choice relies on them to avoid counting text whose count cannot change the choice:
# count(t) <= the UTF-8 length of t (a token is at least one byte), and count(t) >= the number of
# lines of a rendered block (each line starts with text, and no cl100k_base token runs from a
# newline into the next line).
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from ..evidence import pm_evidence
from ..shared import memory_text
from . import pm_limits, pm_names
from .pm_fit import most_that_fit
from .pm_parse import LABELS, Epic, is_stale

STAMP = "[permanent-memory | trust:file]"
MAX_LINE_CHARS = 120
SHOWN_ID_CHARS = 40  # an ID longer than this is cut in the block
ELLIPSIS = "\u2026"
SKIP_TOKENS = 8000
LEVELS = ("L0", "L1", "L2", "L3", "IDS")
# What each whole level leaves out, cumulatively. The block itself stops a line short of, or
# partway into, a level: see render_block.
LEVEL_DROPS = {
    "L0": "nothing",
    "L1": "tentative lines",
    "L2": "tentative and patterns lines",
    "L3": "all sub-lines",
    "IDS": "intents, and the oldest epics beyond the hard cap",
}
# The sub-lines an epic can show, in display order: a v2 epic's one-line summary first, then
# the first line of each labelled subsection.
SHOWN_LABELS = ("summary", *LABELS)
# Degrading removes sub-lines by group, a group at a time: tentative lines, then patterns
# lines, then the others (each epic's from its last line up, so its summary goes last).
TENTATIVE, PATTERNS, OTHER = 0, 1, 2
_GROUP_NAMES = ("tentative", "patterns", "other")
_GROUP_LEVELS = ("L1", "L2", "L3")
_NOTE_START = "(trimmed for the token budget: "
EPIC_LINES_ONLY = _NOTE_START + "Epic lines only)"

Counter = Callable[[str], int]
# Each named path's state (pm_evidence: EXISTS, GONE or MOVED + where to); empty: not checked.
States = Mapping[str, str]
NO_STATES: States = {}


class Budget(NamedTuple):
    target: int = pm_limits.TOKEN_TARGET
    hard_cap: int = pm_limits.HARD_CAP
    stale_days: int = pm_limits.STALE_DAYS
    epic_line_tokens: int = pm_limits.EPIC_LINE_TOKENS
    max_chars: int = 9000  # hooks must stay under 10,000 characters


class SubLine(NamedTuple):
    epic: int  # index of its epic
    label: str  # one of SHOWN_LABELS
    text: str  # the line as shown: `  label: first line`
    group: int  # TENTATIVE, PATTERNS or OTHER: the degrading step that removes it
    gone: bool = False  # every path it names is gone: left out before the rest of its step


class Block(NamedTuple):
    text: str  # what is printed: "" or the stamp, lines, newline at the end
    level: str  # "L0" (nothing left out), the furthest level a left-out line belongs to,
    # "IDS", "empty" (no epics) or "skipped" (file too large)
    # The whole levels' texts the choice made (L0 and L3, IDS when it came to that); --explain
    # and JSON make the others (level_texts).
    levels: dict[str, str]
    tokens: dict[str, int]  # counts of whole levels made while choosing
    reason: str  # why this block, in words
    limit: int = 0  # the token limit the block was filled to (target or hard cap)
    left_out: tuple[SubLine, ...] = ()  # sub-lines not shown, in the order they were removed
    # What the block leaves out for the budget, in the words of its last line ("" for nothing):
    # what the status line and doctor say.
    trimmed: str = ""


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


def epic_line(
    epic: Epic, now: datetime, budget: Budget, count: Counter, states: States = NO_STATES
) -> str:
    """`Epic ID (intent):` within 120 characters and the Epic-line token limit (stale prefix
    included), cutting the intent first, then the ID; paths in the intent marked."""
    prefix = stale_prefix(epic, now, budget.stale_days)
    full_id = cut_line(safe_text(epic.epic_id) or "?", SHOWN_ID_CHARS)
    intent = safe_text(epic.intent)
    if states:
        intent = pm_evidence.mark_line(intent, states, safe_text)[0]

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
        # Longer never fits better.
        return most_that_fit(0, high, lambda n: ok(make(n)))

    if ok(assemble(len(full_id), len(intent))):
        return assemble(len(full_id), len(intent))
    intent_chars = longest(lambda n: assemble(len(full_id), n), len(intent) - 1)
    if intent_chars > 0 or ok(assemble(len(full_id), 0)):
        return assemble(len(full_id), intent_chars)
    id_chars = longest(lambda n: assemble(n, 0), len(full_id) - 1)
    return cut_line(assemble(max(id_chars, 1), 0))


def first_line(epic: Epic, label: str) -> str:
    """The text a label's sub-line shows ("" for none): a v2 epic's summary, or the first
    non-empty line of the first subsection with that label."""
    if label == "summary":
        return safe_text(epic.summary or "")
    for sub in epic.subsections:
        if sub.label == label:
            shown = next((s for s in (safe_text(entry) for entry in sub.entries) if s), "")
            if shown:
                return shown
    return ""


def marked_line(
    label: str, text: str, states: States = NO_STATES, indent: str = "  "
) -> tuple[str, bool]:
    """`  label: text` as shown (`indent` first), its gone and moved paths marked, within 120
    characters (a marker is kept with its path when the line is cut); and whether every path it
    names is gone."""
    head = f"{indent}{label}: "
    if not states:
        return cut_line(memory_text.neutralise_markup(head + text)), False
    marked, all_gone, tails = pm_evidence.mark_line(text, states, safe_text)
    line = memory_text.neutralise_markup(head + marked)  # same length: it swaps characters
    if len(line) <= MAX_LINE_CHARS:
        return line, all_gone
    for start, end in tails:
        start, end = start + len(head), end + len(head)
        if end < MAX_LINE_CHARS:
            continue  # shown whole by a plain cut
        more = ELLIPSIS if end < len(line) else ""
        room = MAX_LINE_CHARS - (end - start) - 1 - len(more)
        if start >= MAX_LINE_CHARS - 1 or room < len(head) + 2:
            break  # the path itself is cut off, or nothing before it would be left
        return cut_line(line[:start].rstrip(), room) + " " + line[start:end] + more, all_gone
    return cut_line(line), all_gone


def sub_lines(epic: Epic, labels: Sequence[str], states: States = NO_STATES) -> list[str]:
    """`  label: first line` for each kept label that has one."""
    lines = []
    for label in labels:
        shown = first_line(epic, label)
        if shown:
            lines.append(marked_line(label, shown, states)[0])
    return lines


def group_of(label: str) -> int:
    return {"tentative": TENTATIVE, "patterns": PATTERNS}.get(label, OTHER)


def epic_sub_lines(epics: Sequence[Epic], states: States = NO_STATES) -> list[list[SubLine]]:
    """Each epic's sub-lines, in display order. An anti-patterns line is never `gone`: what it
    names was often removed on purpose."""
    by_epic = []
    for index, epic in enumerate(epics):
        lines = []
        for label in SHOWN_LABELS:
            shown = first_line(epic, label)
            if shown:
                line, gone = marked_line(label, shown, states)
                gone = gone and label != "anti-patterns"
                lines.append(SubLine(index, label, line, group_of(label), gone))
        by_epic.append(lines)
    return by_epic


def removal_order(by_epic: Sequence[Sequence[SubLine]]) -> list[SubLine]:
    """The order degrading removes sub-lines in: tentative lines, then patterns lines, then
    the rest, oldest epic (first in the file) first within each; the rest of an epic from its
    last line up, so its decisions and a v2 summary go last. Within each step, the lines whose
    every named path is gone go first."""
    order: list[SubLine] = []
    for group in (TENTATIVE, PATTERNS, OTHER):
        step = [
            line
            for lines in by_epic
            for line in (reversed(lines) if group == OTHER else lines)
            if line.group == group
        ]
        order += [line for line in step if line.gone] + [line for line in step if not line.gone]
    return order


def group_counts(lines: Iterable[SubLine]) -> tuple[int, int, int, int]:
    """Lines per group (tentative, patterns, other), then how many of them are gone."""
    counts = [0, 0, 0, 0]
    for line in lines:
        counts[line.group] += 1
        counts[3] += line.gone
    return counts[0], counts[1], counts[2], counts[3]


def trim_note(removed: Sequence[int], totals: Sequence[int]) -> str:
    """The last line of a block that left sub-lines out, saying which, briefly; "" if none.
    `removed` and `totals` are per group (tentative, patterns, other), then optionally the
    count of those whose every path is gone."""
    if not any(removed[:3]):
        return ""
    gone = removed[3] if len(removed) > 3 else 0
    also = f"; {gone} named only gone paths)" if gone else ")"
    if list(removed[:3]) == list(totals[:3]):
        return EPIC_LINES_ONLY[:-1] + also
    parts = []
    for name, left_out, of in zip(_GROUP_NAMES, removed, totals):
        if left_out:
            parts.append(name if left_out == of else f"{left_out} of {of} {name}")
    listed = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{_NOTE_START}{listed} lines left out{also}"


def assemble(
    heads: Sequence[str], by_epic: Sequence[Sequence[SubLine]], left_out: Iterable[SubLine]
) -> str:
    """The block: stamp, each Epic line with its sub-lines not left out, the note."""
    gone = set(left_out)
    lines = [STAMP]
    for head, subs in zip(heads, by_epic):
        lines.append(head)
        lines.extend(line.text for line in subs if line not in gone)
    every = [line for subs in by_epic for line in subs]
    note = trim_note(group_counts(gone), group_counts(every))
    if note:
        lines.append(note)
    return "\n".join(lines) + "\n"


def level_of(left_out: Sequence[SubLine]) -> str:
    return _GROUP_LEVELS[max(line.group for line in left_out)] if left_out else "L0"


def level_texts(
    epics: Sequence[Epic],
    now: datetime,
    budget: Budget,
    count: Counter,
    states: States = NO_STATES,
) -> dict[str, str]:
    """The whole levels L0..L3: each leaves out every sub-line of its step and the steps
    before it."""
    heads = [epic_line(epic, now, budget, count, states) for epic in epics]
    by_epic = epic_sub_lines(epics, states)
    order = removal_order(by_epic)
    texts = {"L0": assemble(heads, by_epic, [])}
    for group, level in enumerate(_GROUP_LEVELS):
        texts[level] = assemble(heads, by_epic, [line for line in order if line.group <= group])
    return texts


def fill(
    heads: Sequence[str],
    by_epic: Sequence[Sequence[SubLine]],
    limit: int,
    count: Counter,
    max_chars: int,
) -> list[SubLine] | None:
    """The sub-lines to leave out so the block keeps as much as fits within `limit` tokens and
    `max_chars` characters: lines are dropped in removal order until it fits, then every dropped
    line that fits again is put back, the latest dropped first (a smaller line dropped before a
    larger one often does). None when even the Epic lines alone do not fit.

    A block's tokens are the sum of its lines' (each with its newline), which for cl100k_base
    and the byte estimate is the whole block's count; the block found is counted whole, and
    more lines are dropped should a counter not add up that way."""
    order = removal_order(by_epic)
    totals = group_counts(line for subs in by_epic for line in subs)
    costs: dict[str, int] = {}

    def cost(text: str) -> int:
        if text not in costs:
            costs[text] = count(text + "\n")
        return costs[text]

    def fits_without(left_out: list[SubLine]) -> bool:
        """Whether the block without `left_out` fits, counted line by line."""
        dropped = set(left_out)
        lines = [STAMP, *heads]
        lines += [line.text for subs in by_epic for line in subs if line not in dropped]
        note = trim_note(group_counts(left_out), totals)
        if note:
            lines.append(note)
        tokens = sum(cost(text) for text in lines)
        return tokens <= limit and sum(len(text) + 1 for text in lines) <= max_chars

    dropped = 0
    while not fits_without(order[:dropped]):
        if dropped == len(order):
            return None
        dropped += 1
    left_out = order[:dropped]
    put_back = True
    while put_back:  # a line put back changes the note: look again until none fits
        put_back = False
        for line in reversed(left_out):
            without = [other for other in left_out if other is not line]
            if fits_without(without):
                left_out, put_back = without, True
    rest = [line for line in order if line not in left_out]
    while not fits(assemble(heads, by_epic, left_out), limit, count, max_chars):
        if not rest:
            return None
        left_out.append(rest.pop(0))
    return [line for line in order if line in left_out]


def _ids_block(epics: Sequence[Epic], kept: int, width: int = MAX_LINE_CHARS) -> str:
    shown = [cut_line(safe_text(epic.epic_id) or "?", SHOWN_ID_CHARS) for epic in epics]
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


def ids_text(epics: Sequence[Epic], budget: Budget, count: Counter) -> str:
    """The IDS block: as many of the newest epics' IDs as fit the hard cap, and `+N older`."""
    shown = most_that_fit(
        0,
        len(epics),
        lambda n: fits(_ids_block(epics, n), budget.hard_cap, count, budget.max_chars),
    )
    return _ids_block(epics, shown)


def render_block(
    epics: Sequence[Epic],
    budget: Budget,
    count: Counter,
    now: datetime,
    states: States = NO_STATES,
) -> Block:
    """The block to show. Everything when it fits the target. Otherwise sub-lines are left out
    a line at a time (tentative, then patterns, then the rest; oldest epics first within each
    step, lines naming only gone paths before the others) keeping as much as fits within the
    target; when even the Epic lines alone are over the target, as much as fits within the hard
    cap; when they are over the hard cap too, the newest IDs that fit it. Never over the hard
    cap. `states` marks the paths lines name (pm_evidence)."""
    if not epics:
        return Block("", "empty", {}, {}, "no epics in the file")
    heads = [epic_line(epic, now, budget, count, states) for epic in epics]
    by_epic = epic_sub_lines(epics, states)
    texts = {
        "L0": assemble(heads, by_epic, []),
        "L3": assemble(heads, by_epic, removal_order(by_epic)),
    }
    tokens: dict[str, int] = {}

    def counted(level: str) -> Counter:
        def count_once(text: str) -> int:
            if level not in tokens:
                tokens[level] = count(text)
            return tokens[level]

        return count_once

    target, cap = min(budget.target, budget.hard_cap), budget.hard_cap
    chars = budget.max_chars
    if fits(texts["L0"], target, counted("L0"), chars):
        return Block(
            texts["L0"], "L0", texts, tokens, f"everything within the target ({target})", target
        )
    if fits(texts["L3"], target, counted("L3"), chars):
        limit, before, within = target, "", f"the target ({target})"
    elif fits(texts["L3"], cap, counted("L3"), chars):
        limit = cap
        before = f"the Epic lines alone are over the target ({target}); "
        within = f"the hard cap ({cap})"
    else:
        limit = 0
    left_out = fill(heads, by_epic, limit, count, chars) if limit else None
    if left_out is not None:
        text = assemble(heads, by_epic, left_out)
        what = ""
        if not left_out:
            reason = f"{before}everything within {within}"
        else:
            what = text.rstrip("\n").rsplit("\n", 1)[1][len(_NOTE_START) : -1]
            reason = f"{before}as much as fits within {within}: {what}"
        if len(texts["L0"]) > chars:
            reason += f" (and within the {chars:,}-character limit of a hook)"
        level = level_of(left_out)
        return Block(text, level, texts, tokens, reason, limit, tuple(left_out), what)
    texts["IDS"] = ids_text(epics, budget, count)
    if fits(texts["IDS"], cap, counted("IDS"), chars):
        reason = f"the Epic lines alone are over the hard cap ({cap}); the newest IDs that fit it"
        # `(+N older; trimmed for the token budget: newest Epic IDs only)` or `(… Epic IDs only)`
        note = texts["IDS"].rstrip("\n").rsplit("\n", 1)[1][1:-1]
        older, _, what = note.rpartition(_NOTE_START[1:])
        what += f"; {older[1:].rstrip('; ')} left out" if older else ""
        return Block(texts["IDS"], "IDS", texts, tokens, reason, cap, (), what)
    # A hard cap too small even for the stamp and the note: the stamp alone, or nothing.
    fallback = STAMP + "\n" if fits(STAMP + "\n", budget.hard_cap, count) else ""
    reason = f"hard cap ({budget.hard_cap}) too small"
    return Block(fallback, "IDS", texts, tokens, reason, cap, (), f"every line left out: {reason}")


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
        # Two lines, each within MAX_LINE_CHARS (the hook's text names the skill's command).
        f"permanent_memory.md not loaded: {human_size(size)}, {over}.\n"
        f"Archive old epics with {pm_names.skill_command('archive')}.",
        f"permanent_memory.md not loaded: {over}",
    )
    for line in candidates:
        text = f"{STAMP}\n{line}\n"
        if fits(text, budget.hard_cap, count, budget.max_chars):
            return Block(text, "skipped", {}, {}, f"file {over}")
    fallback = STAMP + "\n" if fits(STAMP + "\n", budget.hard_cap, count) else ""
    return Block(fallback, "skipped", {}, {}, f"file {over}")
