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
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

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


def fitted_snapshot(
    summary: str, frame: mm_snapshot.Snapshot, after: str = ""
) -> tuple[mm_snapshot.Snapshot, mm_summary.Mapped]:
    """The frame (front matter) with the summary's sections (and those of `after`, a text read
    on its own whose parts follow the summary's), the whole within MAX_BYTES."""
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

    mapped = mm_summary.map_summary(summary, MAX_BYTES, measure, after)
    return filled(mapped.sections), mapped


def count_of(saved: mm_snapshot.Snapshot | None, key: str) -> int:
    """A counter a saved capture holds (`compactions`, `turns`); 0 for none."""
    value = saved.extra.get(key) if saved is not None else 0
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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
    extra = {
        "source": mm_snapshot.CAPTURED_SOURCE,
        "trigger": trigger,
        "compactions": count_of(saved, "compactions") + 1,
        "session-ref": ref,
    }
    frame = mm_snapshot.Snapshot(
        project_name=project,
        session=session,
        last_session_at=(saved.last_session_at if saved else None) or mm_snapshot.iso_utc(started),
        updated_at=mm_snapshot.iso_utc(now),
        extra=extra,
    )
    return fitted_snapshot(summary, frame)


class Place(NamedTuple):
    """Where a session's capture goes: its project's name, the session's start (a session
    timestamp), the reference of its id, the folder, and whether that is the project's."""

    project: str
    stamp: str
    ref: str
    folder: Path
    in_project: bool


def place_of(
    payload: Mapping[str, Any], env: Mapping[str, str], now: datetime, mode: str, say: str
) -> Place | str:
    """Where this hook input's session is captured, or the line to say when nowhere."""
    cwd = payload.get("cwd")
    cwd = cwd if isinstance(cwd, str) and cwd and "\0" not in cwd else None
    project_dir = mm_cli.project_dir(env, cwd)
    project = mm_pause.project_name_for(project_dir.resolve().name)
    session_id = payload.get("session_id")
    session_id = session_id if isinstance(session_id, str) else ""
    stamp = _session_start(env, session_id, cwd, now)
    folder = _project_folder(mode, env, cwd)
    in_project = folder is not None
    if folder is None:
        users = mm_session.captured_dir(env, str(project_dir))
        if users is None:
            return f"{say}: no cache folder (HOME unset); nothing captured"
        folder = Path(users)
    return Place(project, stamp, mm_session.session_ref(session_id or stamp), folder, in_project)


Made = Callable[[str, "mm_snapshot.Snapshot | None"], "tuple[mm_snapshot.Snapshot, Any] | None"]


def write_capture(place: Place, make: Made, say: str) -> Path | str:
    """Under the folder's lock: this session's capture file (its own earlier one, or a free
    name), the snapshot `make(session timestamp, saved)` gives for it (None: leave it as it is),
    written atomically. The path written, or the line to say when nothing was."""
    mm_frontmatter.require_yaml()
    _make_folder(place.folder, not place.in_project)
    with mm_store.locked(place.folder):
        slot = _slot(place.folder, place.project, place.stamp, place.ref)
        if slot is None:
            return (
                f"{say}: {NAME_TRIES} snapshot names from "
                f"{place.stamp}-{place.project}.md are other files; nothing captured"
            )
        path, saved = slot
        made = make(path.name[: mm_snapshot.STAMP_LEN], saved)
        if made is None:
            return ""
        private = None if place.in_project else 0o600
        bits = os.stat(path).st_mode & 0o7777 if saved is not None else private
        data = mm_snapshot.format_snapshot(made[0]).encode("utf-8")
        memory_io.atomic_write(path, data, bits)
    return path


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
    trigger = payload.get("trigger")
    trigger = trigger if trigger in TRIGGERS else "manual"
    place = place_of(payload, env, now, mode, SAY)
    if isinstance(place, str):
        return place
    found: list[mm_summary.Mapped] = []

    def make(
        session: str, saved: mm_snapshot.Snapshot | None
    ) -> tuple[mm_snapshot.Snapshot, mm_summary.Mapped] | None:
        snapshot, mapped = captured_snapshot(
            summary, place.project, session, trigger, place.ref, now, saved
        )
        found.append(mapped)
        return (snapshot, mapped) if any(mapped.sections) else None

    path = write_capture(place, make, SAY)
    if isinstance(path, str):
        return path or f"{SAY}: the summary held nothing to keep; nothing captured"
    try:
        from . import mm_transcript_read

        mm_transcript_read.keep_summary(env, place.ref, summary)  # for the session's later turns
    except (OSError, memory_io.MemoryIOError):
        pass  # the turns after it are captured without it
    mapped = found[0]
    notes = []
    if not mapped.known:
        notes.append("the summary had no part this knows; kept as the session summary")
    if mapped.redacted:
        notes.append(f"{mapped.redacted} secrets stored as [REDACTED]")
    if notes:
        return f"{SAY}: captured {path}: {'; '.join(notes)}"
    return note
