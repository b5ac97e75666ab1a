# The live file never falls silent: the loader does not summarise a permanent_memory.md over
# SKIP_TOKENS, so every writer (add, import, what accepts a proposed lesson) writes the file
# through write_live, which first moves the oldest epics to archive/YYYY-MM-DD.md (recall and
# search read the archive) when the new text would be over LIVE_TOKENS, and says so in one line.
# The caller holds the directory's lock.
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from ..core.pm_cli import WriteCounting, plural
from ..core.pm_render import SKIP_TOKENS
from ..shared import memory_io
from .pm_archive_plan import ARCHIVE_DIR, ArchiveError, archive_text, plan_archive
from .pm_write_file import FileText, encode_as, inside, make_dirs, read_for_writing

# Headroom below the loader's cap, for lines a person adds by hand between two writes.
LIVE_TOKENS = SKIP_TOKENS - 1000


class Written(NamedTuple):
    text: str  # what the live file now holds
    note: str | None  # the one line saying what moved to the archive, or why nothing could


def archive_path(path: Path, now: datetime) -> Path:
    return path.parent / ARCHIVE_DIR / f"{now.astimezone(timezone.utc).date().isoformat()}.md"


def write_live(
    path: Path,
    current: FileText | None,
    new_text: str,
    counting: WriteCounting,
    now: datetime,
    limit: int = LIVE_TOKENS,
) -> Written:
    """Write `new_text` (normalised) to the live file `path` (`current` is what it held, for
    its line ends, byte-order mark and mode), the oldest epics moved to the archive first when
    it would be over `limit` tokens: the archive written and synced before the live file."""
    text, note = new_text, None
    try:
        plan = plan_archive(new_text, limit, counting.count)
    except ArchiveError:  # the text outside the epics alone is over: the caller says so
        plan = None
    if plan is not None and plan.moved:
        target = archive_path(path, now)
        inside(path.parent, target)
        existing = read_for_writing(target)
        archived, _again = archive_text(existing.text if existing else None, plan.sections)
        make_dirs(target.parent)
        memory_io.atomic_write(target, encode_as(archived, existing))
        text = plan.kept_text
        moved = ", ".join(epic.epic_id for epic in plan.moved)
        note = (
            f"note: moved {plural(len(plan.moved), 'epic')} ({moved}) to {target} to keep "
            f"{path.name} within {limit} {counting.unit} ({plan.tokens_before} before, "
            f"{plan.tokens_after} after)"
        )
    memory_io.atomic_write(path, encode_as(text, current), current.mode if current else None)
    return Written(text, note)
