# The memory directory on disk: which names are snapshots, reading one safely, and writing one
# atomically under the directory's lock. Nothing here deletes a snapshot.
#
# Names: `{YYYY-MM-DD-HH-MM}-{project}.md`. Temporary files (`.{name}.tmp-{pid}-{random}`) start
# with a dot, so they can never match that pattern. The lock is the directory itself: no file.
from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from . import mm_cli, mm_render, mm_snapshot
from .mm_errors import ManagerError
from .shared import memory_io

# Without fcntl (Windows) saves are still atomic, but not serialised (see references/).
HAVE_FLOCK = memory_io.HAVE_FLOCK
SUFFIX = ".md"
LOCK_NAME = ".ski-memory.lock"  # the lock file older versions left in the folder; unused now
TEMP_MARK = memory_io.TEMP_MARK
MAX_SNAPSHOT_BYTES = 256 * 1024  # snapshots are 1-2 KB; anything this big is not one
# The SessionStart listing's budget, for the whole hook: snapshots are 1-2 KB, and a hostile
# memory/ (dense 230 KB snapshots, 150,000 dangling links named like snapshots) must neither
# hold the session's start nor flood stderr. What the hook did not get to is said once.
# Pure-Python YAML parses dense front matter at tens of KB a second: a front matter larger than
# this (a snapshot's is under 1 KB) is skipped by the hook, not parsed; load-last reads it.
HOOK_YAML_BYTES = 8 * 1024
HOOK_TOTAL_BYTES = 128 * 1024
HOOK_TRIES = 50
HOOK_SECONDS = 1.5
HOOK_WARNINGS = 5
_NAME = re.compile(
    r"([0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])-(?:[01][0-9]|2[0-3])-[0-5][0-9])"
    rf"-({mm_snapshot.PROJECT_PATTERN})\.md"
)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # without it (Windows) a link cannot be told apart


class StoreError(ManagerError):
    """A file operation failed; str() is the one-line message for the user."""


def snapshot_name(session: str, project: str) -> str:
    return f"{session}-{project}{SUFFIX}"


def split_name(name: str) -> tuple[str, str] | None:
    """(session, project) of a snapshot file name, or None when the name is not one."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    session = match.group(1)
    # The pattern checks every field's range; only days 29-31 and year 0 need the calendar.
    if (session[8:10] > "28" or session[:4] == "0000") and (
        mm_snapshot.session_datetime(session) is None
    ):
        return None
    return session, match.group(2)


def newest_first(names: Iterable[str], project: str) -> Iterator[str]:
    """The project's snapshot names, newest session first. Exact project match: the name is the
    timestamp, '-', the project, '.md' (so `…-foo-system.md` is not project `system`).

    Hot path of load-last over huge directories: a length test and `endswith` per name, then
    `max`; names are sorted only if the newest turns out unreadable."""
    suffix = f"-{project}{SUFFIX}"
    size = mm_snapshot.STAMP_LEN + len(suffix)
    matches = [name for name in names if len(name) == size and name.endswith(suffix)]
    if not matches:
        return
    best = max(matches)
    if mm_snapshot.session_datetime(best[: mm_snapshot.STAMP_LEN]) is not None:
        yield best
    for name in sorted(matches, reverse=True):
        if name != best and mm_snapshot.session_datetime(name[: mm_snapshot.STAMP_LEN]) is not None:
            yield name


def misnamed(names: Iterable[str], project: str) -> list[str]:
    """Names that end in `-{project}.md` but are not a snapshot name at all (say
    `2026-04-27-foo.md`), sorted: load-last cannot read them, and says so. A snapshot of
    another project whose name merely ends the same way (`…-foo-system.md` for `system`) is
    not one of them."""
    suffix = f"-{project}{SUFFIX}"
    return sorted(
        name
        for name in names
        if name.endswith(suffix) and not name.startswith(".") and split_name(name) is None
    )


def projects(names: Iterable[str]) -> dict[str, list[str]]:
    """Snapshot names grouped by project, each group newest session first."""
    groups: dict[str, list[str]] = {}
    for name in names:
        parts = split_name(name)
        if parts is not None:
            groups.setdefault(parts[1], []).append(name)
    for group in groups.values():
        group.sort(reverse=True)
    return groups


def is_temp_name(name: str) -> bool:
    return memory_io.is_temp_name(name) and name != LOCK_NAME


def read_text(path: Path) -> str:
    """A snapshot's text. Symbolic links are refused (a snapshot must not pull in a file from
    elsewhere); so are files over MAX_SNAPSHOT_BYTES and text that is not UTF-8."""
    try:
        data, _ = memory_io.read_regular(path, MAX_SNAPSHOT_BYTES, follow=False)
    except (IsADirectoryError, memory_io.NotRegularFile):
        raise StoreError("not a regular file") from None
    except OSError as exc:
        if _O_NOFOLLOW and os.path.islink(path):
            raise StoreError("it is a symbolic link") from None
        raise StoreError(exc.strerror or str(exc)) from None
    if data is None:
        raise StoreError(f"larger than {MAX_SNAPSHOT_BYTES // 1024} KiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StoreError(f"not UTF-8 text (byte {exc.start})") from None


@contextlib.contextmanager
def locked(memory_dir: Path) -> Iterator[None]:
    """Hold the memory directory's lock: one read-merge-write at a time, across processes.

    The lock is the memory directory itself (flock on the folder, as the loader locks its own):
    every process saving there agrees on it whatever its environment, and it leaves no file for
    `git add -A` to pick up."""
    if not memory_dir.is_dir():
        raise StoreError(f"cannot lock {memory_dir}: no such directory")
    with contextlib.ExitStack() as held:
        try:
            # The trailing separator: should the folder go in between, nothing is created.
            held.enter_context(memory_io.locked(os.path.join(memory_dir, "")))
        except memory_io.MemoryIOError as exc:
            raise StoreError(str(exc)) from None
        yield


class ReadBudget:
    """What the hook may still spend on reading snapshots: files, bytes, time and warnings."""

    def __init__(self, now: float | None = None) -> None:
        self.deadline = (time.monotonic() if now is None else now) + HOOK_SECONDS
        self.tries = HOOK_TRIES
        self.total_bytes = HOOK_TOTAL_BYTES
        self.warnings = HOOK_WARNINGS
        self.unsaid = 0  # warnings left out
        self.stopped = ""  # why the hook stopped reading ("" while it has not)

    def spent(self) -> bool:
        if not self.stopped:
            if self.tries <= 0:
                self.stopped = f"tried {HOOK_TRIES} files"
            elif self.total_bytes <= 0:
                self.stopped = f"read {HOOK_TOTAL_BYTES // 1024} KiB"
            elif time.monotonic() > self.deadline:
                self.stopped = f"spent {HOOK_SECONDS:g} s"
        return bool(self.stopped)

    def warn(self, line: str) -> None:
        if self.warnings > 0:
            self.warnings -= 1
            mm_cli.say(line)
        else:
            self.unsaid += 1

    def close(self) -> None:
        """One last line: warnings left out, and where the hook stopped."""
        parts = [f"{self.unsaid} more warnings left out"] if self.unsaid else []
        if self.stopped:
            parts.append(f"stopped reading snapshots after it {self.stopped}")
        if parts:
            mm_cli.say(
                f"ski-memory-manager hook: {'; '.join(parts)}; run the ski-memory-manager "
                "skill's doctor command"
            )


def first_readable(
    memory_dir: Path, names: Iterable[str], budget: ReadBudget | None = None
) -> tuple[mm_render.SnapshotFile | None, int]:
    """The first of `names` that reads as a snapshot, and how many were skipped before it
    (each unreadable one with a warning on stderr). With a budget (the hook), it stops when the
    budget is spent, and a front matter over HOOK_YAML_BYTES is skipped without being parsed."""
    skipped = 0
    warn = budget.warn if budget is not None else mm_cli.say
    for name in names:
        if budget is not None:
            if budget.spent():
                break
            budget.tries -= 1
        try:
            text = read_text(memory_dir / name)
            limit = None
            if budget is not None:
                budget.total_bytes -= len(text)
                limit = HOOK_YAML_BYTES
            return mm_render.SnapshotFile(
                name, text, mm_snapshot.parse_header(text, limit)
            ), skipped
        except (StoreError, mm_snapshot.SnapshotError) as exc:
            warn(f"warning: skipping {name}: {exc}")
            skipped += 1
    return None, skipped


def pick(
    first: mm_render.SnapshotFile | None, second: mm_render.SnapshotFile | None
) -> mm_render.SnapshotFile | None:
    """The more recently touched; a workflow's snapshot over a captured one touched at the
    same time."""
    if first is None or second is None:
        return first or second

    def rank(item: mm_render.SnapshotFile) -> tuple[float, bool]:
        touched = mm_render.touched_at(item.snapshot, item.name[: mm_snapshot.STAMP_LEN])
        moment = touched.timestamp() if touched is not None else float("-inf")
        return moment, not mm_snapshot.is_captured(item.snapshot)

    return first if rank(first) >= rank(second) else second


def newest_of(
    folder: Path,
    names: list[str],
    budget: ReadBudget | None = None,
    skip: str | None = None,
    passed: list[str] | None = None,
) -> tuple[mm_render.SnapshotFile | None, list[str]]:
    """The snapshot to resume among one folder's names for a project (newest first), and the
    names tried. A captured snapshot first in line is weighed against the newest workflow
    snapshot after it, so that a workflow's save newer than a capture wins; the capture of the
    session `skip` names is passed over (and its name added to `passed`)."""
    chosen: mm_render.SnapshotFile | None = None
    tried: list[str] = []
    at = 0
    while at < len(names) and not (budget is not None and budget.spent()):
        item, skipped = first_readable(folder, names[at:], budget)
        tried.extend(names[at : at + skipped + 1])
        if item is None:
            break
        at += skipped + 1
        captured = mm_snapshot.is_captured(item.snapshot)
        if captured and skip is not None and item.snapshot.extra.get("session-ref") == skip:
            if passed is not None:
                passed.append(item.name)
            continue
        if chosen is not None:
            if not captured:
                return pick(chosen, item), tried
            continue
        chosen = item
        if not captured:
            break
    return chosen, tried
