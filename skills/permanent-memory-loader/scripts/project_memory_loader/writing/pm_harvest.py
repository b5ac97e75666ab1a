# The lessons a compaction's summary lists (the section the PreCompact instruction asks for)
# kept as proposals, and what the session-start hook says about them: one line for the model on
# how to propose, one status for the person on how many wait. The session-memory hook calls in
# here at PostCompact and SessionStart (it owns those events); nothing here prints.
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from ..shared import hook_io
from . import pm_lessons, pm_proposals

SAY = "permanent-memory hook: PostCompact"


def session_ref(session_id: str) -> str:
    """What a proposal records of its session: a digest of the id, not the id."""
    return hook_io.digest(session_id.encode("utf-8", "surrogatepass"))[:16] if session_id else ""


def harvest(
    summary: str, root: str, env: Mapping[str, str], session_id: str, now: datetime
) -> list[str]:
    """Keep the summary's lessons as proposals; the lines to say on stderr (none when the
    summary lists none and says nothing odd)."""
    section = pm_lessons.parse_section(summary, root)
    notes = [f"{SAY}: {note}" for note in section.refused[:3]]
    if len(section.refused) > 3:
        notes.append(f"{SAY}: {len(section.refused) - 3} more lines left out")
    if not section.lessons:
        return notes
    folder = pm_proposals.store_dir(env, root)
    if folder is None:
        return [*notes, f"{SAY}: no cache folder (HOME, XDG_CACHE_HOME); lessons not kept"]
    try:
        added = pm_proposals.add_lessons(
            folder, root, section.lessons, "compaction", session_ref(session_id), now
        )
    except (pm_proposals.StoreError, OSError) as exc:
        return [*notes, f"{SAY}: lessons not kept: {exc}"]
    if added.refused:
        notes.append(
            f"{SAY}: kept {len(added.added)} lessons, left out {added.refused} more (at most "
            f"{pm_proposals.MAX_PER_CALL} a compaction, {pm_proposals.MAX_PROPOSALS} in all)"
        )
    return notes
