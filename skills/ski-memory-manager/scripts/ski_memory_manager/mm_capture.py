# PostCompact: the summary the client made when it compacted the conversation, kept as a captured
# session snapshot (mm_summary maps it into the four sections). The hook's shell: where the
# summary is (Claude Code passes `compact_summary`; a client that passes none names its
# transcript, whose last compaction record holds it), which project and session it belongs to
# (the project name as `pause` makes it, the session's start as the SessionStart hook recorded
# it), where it goes (the `capture` option: the user's cache folder, per project, by default;
# the project's session-memory folder; or off), and the write: under the folder's lock,
# atomically, one file per session, updated by every compaction of that session, and never a
# file this capture did not write.
from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from . import mm_cli, mm_frontmatter, mm_pause, mm_session, mm_snapshot, mm_store, mm_summary
from .shared import memory_io

SUMMARY_KEYS = ("compact_summary", "compaction_summary")  # Claude Code's; later Codex versions'
MAX_BYTES = 2048  # a captured snapshot's size, front matter included: save's 1-2 KB
TRANSCRIPT_TAIL = 8 * 1024 * 1024  # bytes of a transcript read from its end, at most
MAX_SUMMARY_CHARS = 16 * 1024 * 1024
NAME_TRIES = 10  # session timestamps tried, a minute apart, when a name is another file's
TRIGGERS = ("manual", "auto")
SAY = "ski-memory-manager hook: PostCompact"  # how its one stderr line starts


def transcript_summary(path: str) -> str | None:
    """The summary of the last compaction recorded in a client's transcript (JSON lines; Codex
    writes `{"type": "compacted", "payload": {"message": SUMMARY, ...}}`), read from at most
    its last TRANSCRIPT_TAIL bytes; None when there is none."""
    import json

    try:
        fd, status = memory_io.open_regular(path)
    except OSError:
        return None
    try:
        start = max(status.st_size - TRANSCRIPT_TAIL, 0)
        os.lseek(fd, start, os.SEEK_SET)
        tail = memory_io.read_at_most(fd, TRANSCRIPT_TAIL)
    finally:
        os.close(fd)
    lines = tail.split(b"\n")
    if start:
        lines = lines[1:]  # the first may be cut
    for line in reversed(lines):
        if b'"compacted"' not in line:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict) or record.get("type") != "compacted":
            continue
        payload = record.get("payload")
        message = payload.get("message") if isinstance(payload, dict) else None
        # The newest compaction decides: one that kept no readable summary (a compaction the
        # provider made on its side) never lets an older summary pass for it.
        return message if isinstance(message, str) and message.strip() else None
    return None


def summary_of(payload: Mapping[str, Any]) -> str | None:
    for key in SUMMARY_KEYS:
        value = payload.get(key)
        if isinstance(value, str) and value.strip():
            return value[:MAX_SUMMARY_CHARS]
    transcript = payload.get("transcript_path")
    if isinstance(transcript, str) and transcript and "\0" not in transcript:
        found = transcript_summary(transcript)
        if found is not None:
            return found[:MAX_SUMMARY_CHARS]
    return None


def _session_start(env: Mapping[str, str], session_id: str, cwd: str | None, now: datetime) -> str:
    """The session's start as a session timestamp: the SessionStart hook's record, else now
    (recorded, so that the session's later compactions and pauses use the same)."""
    folder = mm_session.starts_dir(env)
    if not session_id or folder is None:
        return mm_snapshot.session_stamp(now)
    found = mm_session.read_start(folder, session_id)
    if found is not None:
        return found.started
    made = mm_session.SessionStart(
        mm_session.stamp_of(now.timestamp()),
        env.get("CLAUDE_PROJECT_DIR", ""),
        cwd or "",
        env.get(mm_session.MEMORY_DIR_OPTION, ""),
    )
    try:
        mm_session.write_start(folder, session_id, made)
    except (OSError, memory_io.MemoryIOError):
        pass  # the snapshot is still written, under this start
    return made.started


def _project_folder(mode: str, env: Mapping[str, str], cwd: str | None) -> Path | None:
    """The project's session-memory folder when the option puts captures there; None when it
    does not, or when that folder leads outside the project (then the user's folder is used)."""
    if mode != "project":
        return None
    try:
        return mm_cli.default_memory_dir(env, cwd)
    except mm_cli.MemoryDirRefused:
        return None


def _make_folder(folder: Path, private: bool) -> None:
    """The folder, made when missing: the user's only for the user (0700); the project's as
    any folder of the repository (the umask decides)."""
    if not folder.is_dir():
        os.makedirs(folder, mode=0o700 if private else 0o777, exist_ok=True)


def _slot(
    folder: Path, project: str, stamp: str, ref: str
) -> tuple[Path, mm_snapshot.Snapshot | None] | None:
    """Where this session's capture goes: its own earlier capture (returned too, to update), else
    the first free name from the session's start on, a minute apart; None when every one tried
    is another file's."""
    start = mm_snapshot.session_datetime(stamp)
    assert start is not None
    for minutes in range(NAME_TRIES):
        session = mm_snapshot.session_stamp(start + timedelta(minutes=minutes))
        path = folder / mm_store.snapshot_name(session, project)
        if not os.path.lexists(path):
            return path, None
        try:
            saved = mm_snapshot.parse_snapshot(mm_store.read_text(path))
        except (mm_store.StoreError, mm_snapshot.SnapshotError):
            continue  # unreadable: never overwritten
        if mm_snapshot.is_captured(saved) and saved.extra.get("session-ref") == ref:
            return path, saved
    return None


def captured_snapshot(
    summary: str,
    project: str,
    session: str,
    trigger: str,
    ref: str,
    now: datetime,
    saved: mm_snapshot.Snapshot | None,
) -> tuple[mm_snapshot.Snapshot, mm_summary.Mapped]:
    """The captured snapshot for a summary (saved: this session's earlier capture), within
    MAX_BYTES."""
    started = mm_snapshot.session_datetime(session)
    assert started is not None
    count = saved.extra.get("compactions") if saved is not None else 0
    extra = {
        "source": mm_snapshot.CAPTURED_SOURCE,
        "trigger": trigger,
        "compactions": (count if isinstance(count, int) and not isinstance(count, bool) else 0) + 1,
        "session-ref": ref,
    }
    frame = mm_snapshot.Snapshot(
        project_name=project,
        session=session,
        last_session_at=(saved.last_session_at if saved else None) or mm_snapshot.iso_utc(started),
        updated_at=mm_snapshot.iso_utc(now),
        extra=extra,
    )
    fixed = len(mm_snapshot.format_snapshot(frame).encode("utf-8")) - len(
        mm_snapshot.format_body(frame).encode("utf-8")
    )

    def filled(sections: mm_summary.Sections) -> mm_snapshot.Snapshot:
        return frame._replace(
            session_summary=sections.session_summary,
            steps_completed={f"S{n}": text for n, text in enumerate(sections.steps_completed, 1)},
            active_state=sections.active_state,
            key_decisions=sections.key_decisions,
        )

    def measure(sections: mm_summary.Sections) -> int:
        return fixed + len(mm_snapshot.format_body(filled(sections)).encode("utf-8"))

    mapped = mm_summary.map_summary(summary, MAX_BYTES, measure)
    return filled(mapped.sections), mapped


def capture(payload: Mapping[str, Any], env: Mapping[str, str], now: datetime) -> str:
    """Keep the compaction summary of the hook input as this session's captured snapshot; return
    the one line to say on stderr ('' for none)."""
    mode, note = mm_session.capture_mode(env)
    if mode == "off" or payload.get("agent_id"):
        return (
            note  # off; or a subagent's compaction, whose summary is its task's, not the session's
        )
    summary = summary_of(payload)
    if summary is None:
        return f"{SAY}: no compaction summary in the hook input or its transcript; nothing captured"
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd and "\0" not in cwd else None
    project_dir = mm_cli.project_dir(env, cwd)
    project = mm_pause.project_name_for(project_dir.resolve().name)
    session_id = payload.get("session_id")
    session_id = session_id if isinstance(session_id, str) else ""
    trigger = payload.get("trigger")
    trigger = trigger if trigger in TRIGGERS else "manual"
    stamp = _session_start(env, session_id, cwd, now)
    folder = _project_folder(mode, env, cwd)
    in_project = folder is not None
    if folder is None:
        users = mm_session.captured_dir(env, str(project_dir))
        if users is None:
            return f"{SAY}: no cache folder (HOME unset); nothing captured"
        folder = Path(users)
    ref = mm_session.session_ref(session_id or stamp)
    mm_frontmatter.require_yaml()
    _make_folder(folder, not in_project)
    with mm_store.locked(folder):
        slot = _slot(folder, project, stamp, ref)
        if slot is None:
            return (
                f"{SAY}: {NAME_TRIES} snapshot names from "
                f"{stamp}-{project}.md are other files; nothing captured"
            )
        path, saved = slot
        snapshot, mapped = captured_snapshot(
            summary, project, path.name[: mm_snapshot.STAMP_LEN], trigger, ref, now, saved
        )
        if not any(mapped.sections):
            return f"{SAY}: the summary held nothing to keep; nothing captured"
        private = None if in_project else 0o600
        bits = os.stat(path).st_mode & 0o7777 if saved is not None else private
        memory_io.atomic_write(path, mm_snapshot.format_snapshot(snapshot).encode("utf-8"), bits)
    notes = []
    if not mapped.known:
        notes.append("the summary had no part this knows; kept as the session summary")
    if mapped.redacted:
        notes.append(f"{mapped.redacted} secrets stored as [REDACTED]")
    if notes:
        return f"{SAY}: captured {path}: {'; '.join(notes)}"
    return note
