# What `permanent_memory.py archive` moves out of permanent_memory.md: the oldest epics, until
# the file is within a token limit, and the new texts of the file and of the archive. Pure: the
# token counter is passed in; only pm_archive touches files.
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from ..core.pm_errors import LoaderError
from ..core.pm_fit import fewest_that_fit
from ..core.pm_parse import Epic, parse_permanent

ARCHIVE_DIR = "archive"
ARCHIVE_HEADER = (
    "# Permanent memory archive\n"
    "\n"
    "Epics moved out of permanent_memory.md by `permanent_memory.py archive`, to keep that file\n"
    "within its token limit. Prompt-time recall and `search` read this folder; the block shown at\n"
    "session start does not.\n"
)

Counter = Callable[[str], int]


class ArchiveError(LoaderError):
    """Archiving cannot bring the file within the limit; str() says what to do."""


class Plan(NamedTuple):
    moved: tuple[Epic, ...]  # in file order
    sections: tuple[str, ...]  # their text, in file order, each ending with one newline
    kept_text: str  # the file without them
    tokens_before: int
    tokens_after: int


def archive_order(epics: Sequence[Epic]) -> list[int]:
    """Epic indices, oldest first, by Completed. The file is append-only, so an epic without a
    usable date is taken as completed when the nearest dated epic above it was (before every
    dated epic when there is none); ties keep file order."""
    floor = datetime.min.replace(tzinfo=timezone.utc)
    last = floor
    keys = []
    for index, epic in enumerate(epics):
        if epic.completed_at is not None:
            last = epic.completed_at
        keys.append((epic.completed_at or last, index))
    return [index for _, index in sorted(keys)]


def section_text(lines: Sequence[str], epic: Epic) -> str:
    """The epic's lines, trailing blank lines left out, ending with one newline."""
    body = list(lines[epic.start_line : epic.end_line])
    while body and not body[-1].strip():
        body.pop()
    return "\n".join(body) + "\n"


def _tidy(text: str) -> str:
    text = text.rstrip("\n")
    return text + "\n" if text.strip() else ""


def text_without(lines: Sequence[str], epics: Sequence[Epic], drop: set[int]) -> str:
    """The text with the epics whose indices are in `drop` taken out, text around them kept."""
    kept: list[str] = []
    position = 0
    for index, epic in enumerate(epics):
        if index in drop:
            kept.extend(lines[position : epic.start_line])
            position = epic.end_line
    kept.extend(lines[position:])
    return _tidy("\n".join(kept))


def plan_archive(text: str, max_tokens: int, count: Counter) -> Plan:
    """Move the oldest epics, as few as possible, until `text` (normalised) is within
    max_tokens. Raises ArchiveError when even moving every epic is not enough."""
    epics = parse_permanent(text)
    before = count(text)
    if before <= max_tokens:
        return Plan((), (), text, before, before)
    lines = text.split("\n")
    order = archive_order(epics)

    def kept(moved: int) -> str:
        return text_without(lines, epics, set(order[:moved]))

    rest = count(kept(len(order)))
    if rest > max_tokens:
        what = "without any epic" if epics else "with no epic to move"
        raise ArchiveError(
            f"{what} the file is still {rest} tokens, over --max-tokens {max_tokens}; "
            "shorten the text outside the epics"
        )
    moved = fewest_that_fit(1, len(order), lambda n: count(kept(n)) <= max_tokens)
    chosen = sorted(order[:moved])
    kept_text = kept(moved)
    return Plan(
        moved=tuple(epics[i] for i in chosen),
        sections=tuple(section_text(lines, epics[i]) for i in chosen),
        kept_text=kept_text,
        tokens_before=before,
        tokens_after=count(kept_text),
    )


def archive_text(existing: str | None, sections: Sequence[str]) -> tuple[str, list[int]]:
    """The archive's new text: `existing` (normalised; None when there is no archive file yet)
    with the sections appended, and the indices of sections already in it, which are not
    appended again (an archive run stopped between its two writes leaves them there)."""
    base = ARCHIVE_HEADER if existing is None else existing
    base_lines = base.split("\n")
    present = {section_text(base_lines, epic) for epic in parse_permanent(base)}
    text = base.rstrip("\n")
    skipped = []
    for index, section in enumerate(sections):
        if section in present:
            skipped.append(index)
            continue
        text = text + "\n\n" + section.rstrip("\n") if text.strip() else section.rstrip("\n")
    return text + "\n", skipped
