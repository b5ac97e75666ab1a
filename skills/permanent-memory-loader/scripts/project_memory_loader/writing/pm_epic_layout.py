# One epic for `add`, laid out: the section in the v2 form (marker line, one-line summary, typed
# entries) or the v1 form, read back as the loader reads it, refused over the token limit of
# an epic (nothing is left out quietly), and placed in the file's text. Pure: text in, text out;
# pm_epic_input reads and checks the input, pm_add touches the file.
from __future__ import annotations

from collections.abc import Callable

from ..core.pm_parse import Epic, Subsection, parse_permanent
from .pm_epic_input import (
    FIELD_LABELS,
    HEADINGS,
    MAX_EPIC_TOKENS,
    SECTION_FIELDS,
    TAGS,
    DuplicateEpic,
    Entry,
    InvalidEntry,
    Item,
    keywords_line,
    misread_keyword,
)
from .pm_epic_paths import paths_line

Counter = Callable[[str], int]


def sections(entry: Entry) -> list[tuple[str, list[Item]]]:
    """(JSON field, items) per subsection in file order: the five, then Tentative when it has
    items (the tentative list first, then the low-confidence items moved there)."""
    kept: dict[str, list[Item]] = {field: [] for field in SECTION_FIELDS}
    tentative = [item for item in entry.items if item.field == "tentative"]
    for item in entry.items:
        if item.field != "tentative":
            (tentative if item.tentative else kept[item.field]).append(item)
    laid_out = [(field, kept[field]) for field in SECTION_FIELDS]
    if tentative:
        laid_out.append(("tentative", tentative))
    return laid_out


def item_line(item: Item, tagged: bool) -> str:
    # v2 tags every item with its kind; v1 only an item moved to Tentative. An item of the
    # tentative list has no kind, so no tag.
    tag = f"[{TAGS[item.field]}] " if tagged and item.field in TAGS else ""
    trailer = "" if item.confidence is None else f" (confidence: {item.confidence:.2f})"
    return f"- {tag}{item.text}{trailer}"


def v2_marker(entry: Entry) -> str:
    """`<!-- af-memory:v2 epic=ID confidence=0.NN items=N completed=… -->`: the mean confidence
    of the items that have one (left out when none has), the number of items written, and the
    completion time, which the loader reads for staleness."""
    rated = [item.confidence for item in entry.items if item.confidence is not None]
    confidence = f" confidence={sum(rated) / len(rated):.2f}" if rated else ""
    return (
        f"<!-- af-memory:v2 epic={entry.epic_id}{confidence} items={len(entry.items)} "
        f"completed={entry.completed} -->"
    )


def format_epic(entry: Entry) -> str:
    """The epic's section in its form (v2 unless asked for v1), ending with one newline."""
    heading = f"## Epic: {entry.epic_id} \u2014 {entry.intent}"
    if entry.schema == 2:
        lines = [heading, v2_marker(entry), *([entry.summary] if entry.summary else [])]
    else:
        lines = [heading, f"**Completed:** {entry.completed}"]
    if entry.keywords:
        lines.append(keywords_line([keyword.text for keyword in entry.keywords]))
    if entry.paths:
        lines.append(paths_line(entry.paths))
    for field, items in sections(entry):
        lines.append("")
        lines.append(f"### {HEADINGS[field]}")
        lines.extend(
            item_line(item, entry.schema == 2 or (field == "tentative" and item.field != field))
            for item in items
        )
    return "\n".join(lines) + "\n"


def stored_sections(entry: Entry) -> dict[str, list[str]]:
    """What the loader reads back: label -> entries, in file order."""
    return {FIELD_LABELS[field]: [item.text for item in items] for field, items in sections(entry)}


def expected_epic(
    entry: Entry,
) -> tuple[
    str, str, str, tuple[Subsection, ...], str | None, int, tuple[str, ...], tuple[str, ...]
]:
    subs = tuple(
        Subsection(FIELD_LABELS[field], HEADINGS[field], tuple(item.text for item in items))
        for field, items in sections(entry)
    )
    summary = entry.summary if entry.schema == 2 else None
    terms = tuple(keyword.text for keyword in entry.keywords)
    return (entry.epic_id, entry.intent, entry.completed, subs, summary, entry.schema, terms,
            entry.paths)  # fmt: skip


def _read_back(
    epic: Epic,
) -> tuple[
    str, str, str | None, tuple[Subsection, ...], str | None, int, tuple[str, ...], tuple[str, ...]
]:
    return (
        epic.epic_id,
        epic.intent,
        epic.completed,
        epic.subsections,
        epic.summary,
        epic.schema,
        epic.keywords,
        epic.paths,
    )


def verify_epic(entry: Entry, text: str) -> None:
    """Raise InvalidEntry unless the loader reads `text` (one epic's section) back as `entry`."""
    parsed = parse_permanent(text)
    if len(parsed) == 1 and _read_back(parsed[0]) == expected_epic(entry):
        return
    if len(parsed) == 1 and parsed[0].intent != entry.intent:
        raise InvalidEntry(
            f"intent: the loader would read it back as {parsed[0].intent!r}; rephrase it"
        )
    if len(parsed) == 1 and entry.schema == 2 and parsed[0].summary != entry.summary:
        raise InvalidEntry(
            "summary: the loader would not read it back as the summary (it reads "
            f"{parsed[0].summary!r}); rephrase it"
        )
    if len(parsed) == 1 and parsed[0].keywords != expected_epic(entry)[-2]:
        raise InvalidEntry(misread_keyword(entry.keywords, parsed[0].keywords))
    raise InvalidEntry(  # every item text is settled above, so only a loader change gets here
        "the loader would not read this epic back as written; report it with the --input JSON"
    )


class EpicOverLimit(InvalidEntry):
    """An epic over the token limit: nothing is written, and the hint says what to shorten."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


def check_limit(entry: Entry, count: Counter, limit: int = MAX_EPIC_TOKENS) -> None:
    """Refuse an epic over `limit` tokens (EpicOverLimit): no item is ever left out quietly.
    The hint names the longest item, or the intent when the epic is over without its items."""
    tokens = count(format_epic(entry))
    if tokens <= limit:
        return
    if count(format_epic(entry._replace(items=()))) > limit or not entry.items:
        shorten = "the intent or the keywords" if entry.keywords else "the intent"
        raise InvalidEntry(
            f"intent: the epic is over {limit} tokens even without its items; shorten {shorten}"
        )
    longest = max(entry.items, key=lambda item: count(item.text))
    raise EpicOverLimit(
        f"{entry.epic_id} is {tokens} tokens, over the {limit}-token limit of an epic; "
        "nothing written",
        f"shorten its longest item, {longest.where} ({count(longest.text)} tokens), or split "
        f"the epic: some items under another ID, each epic within {limit} tokens",
    )


def place_epic(existing: str, entry: Entry, replace: bool) -> tuple[str, str]:
    """The file's new text (LF line ends; `existing` is normalised text) and "added" or
    "replaced". The epic is appended, or with `replace` put where the old one was."""
    epic_text = format_epic(entry)
    lines = existing.split("\n")
    same = [epic for epic in parse_permanent(existing) if epic.epic_id == entry.epic_id]
    if same and not replace:
        raise DuplicateEpic(
            f"{entry.epic_id} is already in the file (line {same[0].start_line + 1}); "
            "give --append to add its items to it, or --replace to replace it"
        )
    if len(same) > 1:
        lines_at = ", ".join(str(epic.start_line + 1) for epic in same)
        raise DuplicateEpic(
            f"{entry.epic_id} is in the file {len(same)} times (lines {lines_at}); "
            "keep one by hand first"
        )
    if same:
        old = same[0]
        before = "\n".join(lines[: old.start_line]) + "\n" if old.start_line else ""
        after = "\n".join(lines[old.end_line :]).strip("\n")
        text = before + epic_text + ("\n" + after + "\n" if after else "")
        return text, "replaced"
    base = existing.rstrip("\n")
    return (base + "\n\n" if base.strip() else "") + epic_text, "added"


def find_placed(text: str, entry: Entry) -> Epic | None:
    """The epic the loader reads from the new file text for this entry, when it reads it whole."""
    for epic in parse_permanent(text):
        if epic.epic_id == entry.epic_id and _read_back(epic) == expected_epic(entry):
            return epic
    return None
