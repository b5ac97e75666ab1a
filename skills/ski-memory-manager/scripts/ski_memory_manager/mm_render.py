# What the user and the model read: the stamped resume block, the list table and the hook's
# block. Pure functions of parsed snapshots and `now`; every piece of file text goes through
# memory_text so nothing in it can pass for a control sequence, a tag or a trust stamp.
from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from . import mm_snapshot
from .shared import memory_text

STAMP = "[session-memory | trust:file]"
HOOK_LIMIT = 4000
HOOK_PROJECTS = 10
_FUTURE_SKEW = 300  # seconds of clock skew still shown as "0 minutes ago"


class SnapshotFile(NamedTuple):
    """A snapshot file as read: its name, raw text and parsed front matter."""

    name: str
    text: str
    snapshot: mm_snapshot.Snapshot


def no_memory(project: str) -> str:
    return f"No previous memory found for project '{project}'"


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'' if n == 1 else 's'} ago"


def ago(seconds: float) -> str:
    """< 1 h: minutes; < 48 h: hours; else days (whole units, rounded down)."""
    if seconds < -_FUTURE_SKEW:
        return "in the future"
    seconds = max(seconds, 0)
    if seconds < 3600:
        return _count(int(seconds // 60), "minute")
    if seconds < 48 * 3600:
        return _count(int(seconds // 3600), "hour")
    return _count(int(seconds // 86400), "day")


def touched_at(snapshot: mm_snapshot.Snapshot, session: str) -> datetime | None:
    """When the snapshot was last touched: updated_at, else last_session_at, else the session
    timestamp of its file name."""
    for value in (snapshot.updated_at, snapshot.last_session_at):
        moment = memory_text.parse_iso_datetime(value) if value else None
        if moment is not None:
            return moment
    return mm_snapshot.session_datetime(session)


def one_line(text: str | None, limit: int = 64) -> str:
    """File text made safe for a single line of a block."""
    flat = " ".join(memory_text.clean(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "\u2026"


def state(snapshot: mm_snapshot.Snapshot) -> str:
    """`in-progress at CP-S2` (the status, then the last checkpoint when there is one)."""
    status = one_line(snapshot.status) or "unknown"
    checkpoint = one_line(snapshot.last_checkpoint)
    return f"{status} at {checkpoint}" if checkpoint else status


def resume_line(project: str, snapshot: mm_snapshot.Snapshot, session: str, now: datetime) -> str:
    """`Resuming `P` (last touched 3 days ago, status: in-progress at CP-S2)`; for a captured
    snapshot, `Resuming `P` (from the session compacted 2 hours ago)`, or `… (from the session
    that ended 2 hours ago)` when its transcript made it."""
    touched = touched_at(snapshot, session)
    when = ago((now - touched).total_seconds()) if touched else "at an unknown time"
    if mm_snapshot.is_from_transcript(snapshot):
        return f"Resuming `{project}` (from the session that ended {when})"
    if mm_snapshot.is_captured(snapshot):
        return f"Resuming `{project}` (from the session compacted {when})"
    return f"Resuming `{project}` (last touched {when}, status: {state(snapshot)})"


def load_last_block(project: str, found: SnapshotFile, now: datetime) -> str:
    """Stamp, resume line, a blank line, then the snapshot file's content (made safe)."""
    session = found.name[: mm_snapshot.STAMP_LEN]
    content = memory_text.clean(found.text)
    if not content.endswith("\n"):
        content += "\n"
    return f"{STAMP}\n{resume_line(project, found.snapshot, session, now)}\n\n{content}"


def truncate_block(block: str, limit: int, note: str) -> str:
    """Cut a block at a line boundary so that it plus `note` stays within `limit` characters."""
    if len(block) <= limit:
        return block
    room = limit - len(note) - 1  # what is kept, its final newline included
    cut = block.rfind("\n", 0, room)
    kept = block[: cut + 1] if cut >= 0 else block[: room - 1] + "\n"
    return f"{kept}{note}\n"


class SessionRow(NamedTuple):
    """One session as `list` shows it (the snapshot None when its file could not be read)."""

    project: str
    session: str
    file: str
    snapshot: mm_snapshot.Snapshot | None  # None: the file could not be read


def touched_key(row: SessionRow) -> float:
    """Sorts rows by when they were last touched; unreadable or undated ones last."""
    if row.snapshot is None:
        return float("-inf")
    touched = touched_at(row.snapshot, row.session)
    return touched.timestamp() if touched is not None else float("-inf")


def row_fields(row: SessionRow, now: datetime) -> dict[str, str | bool | None]:
    """One row of `list` as values (the JSON form; text output formats these)."""
    snapshot = row.snapshot
    if snapshot is None:
        return {
            "project": row.project,
            "session": row.session,
            "status": None,
            "last_checkpoint": None,
            "last_touched": None,
            "last_touched_ago": None,
            "file": row.file,
            "captured": False,
        }
    touched = touched_at(snapshot, row.session)
    return {
        "project": row.project,
        "session": row.session,
        "status": one_line(snapshot.status) or None,
        "last_checkpoint": one_line(snapshot.last_checkpoint) or None,
        "last_touched": mm_snapshot.iso_utc(touched) if touched else None,
        "last_touched_ago": ago((now - touched).total_seconds()) if touched else None,
        "file": row.file,
        "captured": mm_snapshot.is_captured(snapshot),
    }


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(cells[i]) for cells in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip() for cells in [header, *rows]
    ]
    return "\n".join(lines) + "\n"


def list_table(rows: Sequence[SessionRow], now: datetime, by_session: bool) -> str:
    """`list` as text: one line per project, or per session of one project (by_session)."""
    header = [
        "SESSION" if by_session else "PROJECT",
        "SESSION",
        "STATUS",
        "CHECKPOINT",
        "LAST TOUCHED",
    ]
    if by_session:
        header = header[1:]
    cells = []
    for row in rows:
        fields = row_fields(row, now)
        status = fields["status"] or ("(unreadable)" if row.snapshot is None else "-")
        line = [
            row.project,
            row.session,
            "captured" if fields["captured"] else str(status),
            str(fields["last_checkpoint"] or "-"),
            str(fields["last_touched_ago"] or "-"),
        ]
        cells.append(line[1:] if by_session else line)
    return _table(header, cells)


def hook_block(
    found: Sequence[tuple[str, SnapshotFile]], memory_label: str, more: int, now: datetime
) -> str:
    """The SessionStart block: one project's resume block, or a compact list of projects (most
    recently touched first) with their resume lines. Always within HOOK_LIMIT characters."""
    if len(found) == 1 and not more:
        project, only = found[0]
        return truncate_block(
            load_last_block(project, only, now),
            HOOK_LIMIT,
            "\u2026 (truncated; run load-last for the whole snapshot)",
        )
    label = one_line(memory_label, 200)
    lines = [STAMP, f"Session memory of {len(found) + more} projects in {label}:"]
    for project, item in found:
        session = item.name[: mm_snapshot.STAMP_LEN]
        lines.append(f"- {resume_line(project, item.snapshot, session, now)}")
    if more:
        lines.append(f"- \u2026 and {more} more")
    lines.append("Load one with the ski-memory-manager skill: load-last --project-name NAME")
    return truncate_block("\n".join(lines) + "\n", HOOK_LIMIT, "\u2026")


def hook_status(found: Sequence[tuple[str, SnapshotFile]], more: int) -> str:
    """The resume block's part of the user's status line at session start: `resumed billing-api
    at CP-S2`, or how many projects the block lists and the newest."""
    project, newest = found[0]
    checkpoint = one_line(newest.snapshot.last_checkpoint, 40)
    where = f" at {checkpoint}" if checkpoint else f" ({one_line(newest.snapshot.status, 40)})"
    if mm_snapshot.is_from_transcript(newest.snapshot):
        where = " (last session)"
    elif mm_snapshot.is_captured(newest.snapshot):
        where = " (compacted session)"
    if len(found) == 1 and not more:
        return f"resumed {one_line(project, 64)}{where}"
    return f"{len(found) + more} projects' sessions, newest {one_line(project, 64)}{where}"


def ago_changes_in(seconds: float) -> float:
    """Seconds until ago(seconds) reads differently (a little sooner is allowed, never later)."""
    if seconds < -_FUTURE_SKEW:
        return -_FUTURE_SKEW - seconds
    seconds = max(seconds, 0)
    unit = 60 if seconds < 3600 else 3600 if seconds < 48 * 3600 else 86400
    return (seconds // unit + 1) * unit - seconds
