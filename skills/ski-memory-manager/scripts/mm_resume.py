# The session-start hook's resume block, rendered (mm_hook serves it from its cache when it still
# holds): the most recently touched projects in the memory directory, each with its resume line,
# read within the hook's budget; and, on a cache miss, what it was made from, for the entry
# mm_hook.store_resume writes.
from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import hook_io
import mm_cli
import mm_render
import mm_session
import mm_snapshot
import mm_store


class Resume(NamedTuple):
    """The resume block, its part of the user's status line, and what it was made from."""

    block: str
    status: str
    memory_dir: str
    files: list[str]  # the snapshot names read (or tried) for it
    touched: list[datetime]  # the "last touched" times it shows
    complete: bool = True  # False when the read budget ran out (then it depends on the clock)


def resume(payload: object, env: Mapping[str, str], now: datetime) -> Resume:
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    base = mm_cli.project_dir(env, cwd if isinstance(cwd, str) else None)
    try:
        memory_dir = mm_cli.default_memory_dir(env, cwd if isinstance(cwd, str) else None)
    except mm_cli.MemoryDirRefused as exc:
        mm_cli.say(f"ski-memory-manager hook: {exc}")
        return Resume("", "", "", [], [])
    if not memory_dir.is_dir():
        return Resume("", "", str(memory_dir), [], [])
    groups = mm_store.projects(mm_cli.memory_dir_names(memory_dir))
    ranked = sorted(groups, key=lambda name: (groups[name][0], name), reverse=True)
    found: list[tuple[str, mm_render.SnapshotFile]] = []
    budget = mm_store.ReadBudget()
    files: list[str] = []
    for name in ranked[: mm_render.HOOK_PROJECTS]:
        item, skipped = mm_store.first_readable(memory_dir, groups[name], budget)
        files.extend(groups[name][: skipped + 1])
        if item is not None:
            found.append((name, item))
        if budget.spent():
            break
    budget.close()
    complete = not budget.stopped
    if not found:
        return Resume("", "", str(memory_dir), files, [], complete)
    found.sort(
        key=lambda pair: mm_render.touched_key(
            mm_render.SessionRow(
                pair[0], pair[1].name[: mm_snapshot.STAMP_LEN], "", pair[1].snapshot
            )
        ),
        reverse=True,
    )
    try:
        label = str(memory_dir.relative_to(base)) + "/"
    except ValueError:
        label = str(memory_dir)
    more = max(len(ranked) - mm_render.HOOK_PROJECTS, 0)
    touched = [
        moment
        for _, item in found
        if (moment := mm_render.touched_at(item.snapshot, item.name[: mm_snapshot.STAMP_LEN]))
    ]
    return Resume(
        mm_render.hook_block(found, label, more, now),
        mm_render.hook_status(found, more),
        str(memory_dir),
        files,
        touched,
        complete,
    )


def resume_and_store(
    payload: dict[str, Any], env: Mapping[str, str], now: float, slot: str, key: str
) -> tuple[str, str]:
    """The session-start hook's cache miss: render the resume block, and cache it in slot ("" for
    none) with what it was made from (mm_hook.store_resume), so that the hook can tell when it is
    no longer true."""
    import mm_hook

    cwd = payload.get("cwd")
    try:
        memory_dir = str(mm_cli.default_memory_dir(env, cwd if isinstance(cwd, str) else None))
    except mm_cli.MemoryDirRefused:
        return resume(payload, env, datetime.fromtimestamp(now, timezone.utc))[:2]  # says why
    # Taken before reading, so that a change made meanwhile shows as a change next time.
    names = mm_hook.listing_digest(memory_dir)
    moment = datetime.fromtimestamp(now, timezone.utc)
    before: dict[str, list[int] | None] = {}
    if names != "missing":
        groups = mm_store.projects(mm_cli.memory_dir_names(Path(memory_dir)))
        for group in groups.values():
            before[group[0]] = hook_io.file_stamp(os.path.join(memory_dir, group[0]))
    made = resume(payload, env, moment)
    if slot and made.memory_dir == memory_dir and made.complete:
        files = [
            [name, before.get(name) or hook_io.file_stamp(os.path.join(memory_dir, name))]
            for name in made.files
        ]
        changes = [mm_render.ago_changes_in((moment - t).total_seconds()) for t in made.touched]
        valid_until = now + min(changes) if changes else None
        made_block = (made.block, made.status)
        mm_hook.store_resume(slot, key, valid_until, memory_dir, names, files, made_block)
    starts = mm_session.starts_dir(env)
    if starts is not None:
        mm_session.prune_starts(starts, now)  # on a miss, as the loader prunes its marks
    return made.block, made.status
