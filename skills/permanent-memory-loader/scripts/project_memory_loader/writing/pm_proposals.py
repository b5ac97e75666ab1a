# The proposals waiting for a person: lessons proposed without a person's step (a compaction's
# summary, the model's `propose`), kept per user in the cache folder, one folder per project
# (`project-memory/proposals/{folder}-{digest}/proposals.json`), never in the repository, so
# nothing shows up in `git status` unasked. One JSON file written whole and atomically under the
# folder's lock; a proposal is never deleted: accepted and dropped ones stay, marked. A lesson
# the file or an earlier proposal already holds (any status: a dropped one is not proposed again)
# is skipped.
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..core import pm_file, pm_parse
from ..shared import memory_io
from .pm_lessons import TYPES, Lesson, key_of
from .pm_waiting import MAX_STORE_BYTES, STORE
from .pm_waiting import store_dir as store_dir  # the store's place, for its callers

FORMAT = 1
MAX_PROPOSALS = 500  # all kept, any status; past it new ones are refused with a note
MAX_PER_CALL = 20  # a compaction's summary, or one propose
WAITING, ACCEPTED, DROPPED = "waiting", "accepted", "dropped"


class StoreError(Exception):
    """The store cannot be read or written; str() is the one-line message."""


def read_store(folder: str) -> list[dict[str, Any]]:
    """The proposals on file, oldest first ([] when there is no store yet)."""
    path = os.path.join(folder, STORE)
    try:
        data, _ = memory_io.read_regular(path, MAX_STORE_BYTES, follow=False)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data is None:
        raise StoreError(f"{path}: over {MAX_STORE_BYTES // 1024 // 1024} MB; not read")
    try:
        parsed = json.loads(data.decode("utf-8"))
        items = parsed["proposals"]
        if parsed.get("format") != FORMAT or not isinstance(items, list):
            raise ValueError("unknown format")
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise StoreError(f"{path}: not a proposals file this version reads ({exc})") from None
    return [item for item in items if valid(item)]


def valid(item: object) -> bool:
    return (
        isinstance(item, dict)
        and item.get("type") in TYPES
        and isinstance(item.get("text"), str)
        and isinstance(item.get("files"), list)
        and item.get("status") in (WAITING, ACCEPTED, DROPPED)
    )


def write_store(folder: str, items: list[dict[str, Any]]) -> None:
    os.makedirs(folder, mode=0o700, exist_ok=True)
    data = json.dumps({"format": FORMAT, "proposals": items}, indent=1, ensure_ascii=False)
    try:
        memory_io.atomic_write(os.path.join(folder, STORE), (data + "\n").encode("utf-8"))
    except memory_io.MemoryIOError as exc:
        raise StoreError(str(exc)) from None


def file_keys(root: str) -> set[str]:
    """The keys of every entry of the project's permanent_memory.md (none when it is missing or
    unreadable: a lesson is then only checked against the proposals)."""
    try:
        data, _ = pm_file.read_memory_file(pm_file.memory_path(root), root)
    except OSError:
        return set()
    if data is None:
        return set()
    epics = pm_parse.parse_permanent(data.decode("utf-8", "replace"))
    keys: set[str] = set()
    for epic in epics:
        for subsection in epic.subsections:
            keys.update(key_of(entry) for entry in subsection.entries)
    return keys


def record(lesson: Lesson, source: str, session: str, now: datetime) -> dict[str, Any]:
    return {
        "type": lesson.kind,
        "text": lesson.text,
        "epic": lesson.epic,
        "files": list(lesson.files),
        "source": source,
        "session": session,
        "proposed_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "status": WAITING,
    }


class Added:
    def __init__(self) -> None:
        self.added: list[tuple[int, dict[str, Any]]] = []  # (number, proposal)
        self.duplicates: list[str] = []
        self.refused = 0  # over MAX_PER_CALL or MAX_PROPOSALS


def add_lessons(
    folder: str, root: str, lessons: Iterable[Lesson], source: str, session: str, now: datetime
) -> Added:
    """Add each lesson as a waiting proposal, unless the file or a proposal holds it already;
    at most MAX_PER_CALL, and the store at most MAX_PROPOSALS."""
    result = Added()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    with memory_io.locked(folder):
        items = read_store(folder)
        seen = file_keys(root) | {key_of(item["text"]) for item in items}
        seen |= {key_of(str(item.get("proposed_text", ""))) for item in items}  # before an edit
        for lesson in lessons:
            key = key_of(lesson.text)
            if not key or key in seen:
                result.duplicates.append(lesson.text)
                continue
            if len(result.added) >= MAX_PER_CALL or len(items) >= MAX_PROPOSALS:
                result.refused += 1
                continue
            seen.add(key)
            items.append(record(lesson, source, session, now))
            result.added.append((len(items), items[-1]))
        if result.added:
            write_store(folder, items)
    return result


def waiting(items: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The proposals waiting for a person, with their numbers (1 for the first ever kept)."""
    return [(n, item) for n, item in enumerate(items, 1) if item["status"] == WAITING]
