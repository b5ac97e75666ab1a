# The session-start hook's resume block, rendered (mm_hook serves it from its cache when it still
# holds): the most recently touched projects in the memory directory and the project's captured
# snapshots (mm_capture), each project's newest with its resume line, the starting session's own
# capture left out, read within the hook's budget; and, on a cache miss, what it was made from,
# for the entry mm_hook.store_resume writes.
from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from . import mm_cli, mm_render, mm_session, mm_snapshot, mm_store
from .shared import hook_io


class Resume(NamedTuple):
    """The resume block, its part of the user's status line, and what it was made from."""

    block: str
    status: str
    memory_dir: str
    files: list[str]  # the snapshots read (or tried) for it, as paths
    touched: list[datetime]  # the "last touched" times it shows
    complete: bool = True  # False when the read budget ran out (then it depends on the clock)
    shown: tuple[str, ...] = ()  # the session references of the captured snapshots it shows
    skipped: bool = False  # True when it left out the session's own capture


def own_capture(payload: object) -> str | None:
    """The reference of this session's own capture, which the block leaves out: a session that
    starts again after its compaction (`compact`, or `resume` later) holds that summary in its
    context already."""
    session_id = payload.get("session_id") if isinstance(payload, dict) else None
    return mm_session.session_ref(session_id) if isinstance(session_id, str) else None


def resume(payload: object, env: Mapping[str, str], now: datetime) -> Resume:
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    base = mm_cli.project_dir(env, cwd if isinstance(cwd, str) else None)
    try:
        memory_dir = mm_cli.default_memory_dir(env, cwd if isinstance(cwd, str) else None)
    except mm_cli.MemoryDirRefused as exc:
        mm_cli.say(f"ski-memory-manager hook: {exc}")
        return Resume("", "", "", [], [])
    captured = mm_cli.captured_dir(env, cwd if isinstance(cwd, str) else None)
    listed: list[tuple[Path, dict[str, list[str]]]] = []
    for folder in (memory_dir, captured):
        if folder is not None and folder.is_dir():
            listed.append((folder, mm_store.projects(mm_cli.memory_dir_names(folder))))
    if not listed:
        return Resume("", "", str(memory_dir), [], [])
    newest: dict[str, str] = {}
    for _, groups in listed:
        for name, group in groups.items():
            newest[name] = max(newest.get(name, ""), group[0])
    ranked = sorted(newest, key=lambda name: (newest[name], name), reverse=True)
    found: list[tuple[str, mm_render.SnapshotFile]] = []
    budget = mm_store.ReadBudget()
    files: list[str] = []
    skip = own_capture(payload)
    passed: list[str] = []
    for name in ranked[: mm_render.HOOK_PROJECTS]:
        best = None
        for folder, groups in listed:
            if name in groups:
                item, tried = mm_store.newest_of(folder, groups[name], budget, skip, passed)
                files.extend(str(folder / tried_name) for tried_name in tried)
                best = mm_store.pick(best, item)
        if best is not None:
            found.append((name, best))
        if budget.spent():
            break
    budget.close()
    complete = not budget.stopped
    if not found:
        return Resume("", "", str(memory_dir), files, [], complete, (), bool(passed))
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
    shown = tuple(
        str(item.snapshot.extra.get("session-ref"))
        for _, item in found
        if mm_snapshot.is_captured(item.snapshot)
    )
    return Resume(
        mm_render.hook_block(found, label, more, now),
        mm_render.hook_status(found, more),
        str(memory_dir),
        files,
        touched,
        complete,
        shown,
        bool(passed),
    )


def resume_and_store(
    payload: dict[str, Any], env: Mapping[str, str], now: float, slot: str, key: str
) -> tuple[str, str]:
    """The session-start hook's cache miss: render the resume block, and cache it in slot ("" for
    none) with what it was made from (mm_hook.store_resume), so that the hook can tell when it is
    no longer true."""
    from . import mm_hook

    cwd = payload.get("cwd")
    try:
        memory_dir = str(mm_cli.default_memory_dir(env, cwd if isinstance(cwd, str) else None))
    except mm_cli.MemoryDirRefused:
        return resume(payload, env, datetime.fromtimestamp(now, timezone.utc))[:2]  # says why
    captured = mm_cli.captured_dir(env, cwd if isinstance(cwd, str) else None)
    folders = [memory_dir] + ([str(captured)] if captured is not None else [])
    # Taken before reading, so that a change made meanwhile shows as a change next time.
    listings = [[folder, mm_hook.listing_digest(folder)] for folder in folders]
    moment = datetime.fromtimestamp(now, timezone.utc)
    before: dict[str, list[int] | None] = {}
    for folder, digest in listings:
        if digest != "missing":
            groups = mm_store.projects(mm_cli.memory_dir_names(Path(folder)))
            for group in groups.values():
                path = os.path.join(folder, group[0])
                before[path] = hook_io.file_stamp(path)
    made = resume(payload, env, moment)
    if slot and made.memory_dir == memory_dir and made.complete:
        files = [[path, before.get(path) or hook_io.file_stamp(path)] for path in made.files]
        changes = [mm_render.ago_changes_in((moment - t).total_seconds()) for t in made.touched]
        valid_until = now + min(changes) if changes else None
        made_block = (made.block, made.status)
        # Whose capture was left out, and whose are shown: a session may use the entry when it
        # would leave out the same (or nothing shown is its own).
        skipped = own_capture(payload) if made.skipped else None
        refs = {"skipped": skipped, "shown": list(made.shown)}
        mm_hook.store_resume(slot, key, valid_until, listings, files, made_block, refs)
    starts = mm_session.starts_dir(env)
    if starts is not None:
        mm_session.prune_starts(starts, now)  # on a miss, as the loader prunes its marks
    return made.block, made.status
