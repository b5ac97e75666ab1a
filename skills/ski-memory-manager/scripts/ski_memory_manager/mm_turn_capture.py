# Stop (each turn's end) and SessionEnd: the session's snapshot from its own transcript. The
# transcript is read from where the last capture of the session stopped (mm_transcript_read),
# its new lines turned into facts (mm_transcript), and the facts, after the summary of the
# session's last compaction when it had one (the summary covers what came before it, so it
# speaks first), mapped into the four sections within the size budget by the same code as the
# compaction capture (mm_summary through mm_capture.fitted_snapshot): same place, option,
# redaction and stamp neutralising, one file per session, updated each turn. A session that
# changed nothing and settled nothing (no file written, no task list; since its last compaction,
# when it had one) writes nothing, so it never stands in front of a snapshot that holds work.
from __future__ import annotations

import os

from . import mm_session, mm_transcript
from . import mm_transcript_read as reading

# What writes the snapshot (yaml, the snapshot format, the mapping) is imported only when a turn
# brought something to write: most Stop hooks read a few new lines and end there.
TYPE_CHECKING = False  # neither typing nor datetime on the hook's path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime
    from typing import Any

    from . import mm_capture, mm_snapshot, mm_summary

SAY = "ski-memory-manager hook: {event}"  # how its one stderr line starts


def turn_snapshot(
    summary: str,
    text: str,
    place: mm_capture.Place,
    session: str,
    facts: mm_transcript.Facts,
    now: datetime,
    saved: mm_snapshot.Snapshot | None,
) -> tuple[mm_snapshot.Snapshot, mm_summary.Mapped]:
    """The session's snapshot for the facts' text after the session's compaction summary ('' for
    none) (saved: its earlier capture, whose start and compaction count are kept)."""
    from . import mm_capture, mm_snapshot

    started = mm_snapshot.session_datetime(session)
    assert started is not None
    extra: dict[str, object] = {"source": mm_snapshot.TRANSCRIPT_SOURCE, "turns": facts.turns}
    compactions = mm_capture.count_of(saved, "compactions")
    if compactions:
        extra["compactions"] = compactions
    extra["session-ref"] = place.ref
    frame = mm_snapshot.Snapshot(
        project_name=place.project,
        session=session,
        last_session_at=(saved.last_session_at if saved else None) or mm_snapshot.iso_utc(started),
        updated_at=mm_snapshot.iso_utc(now),
        extra=extra,
    )
    return (
        mm_capture.fitted_snapshot(summary, frame, text)
        if summary
        else (mm_capture.fitted_snapshot(text, frame))
    )


def holds_work(snapshot: mm_snapshot.Snapshot) -> bool:
    return bool(snapshot.steps_completed)


def project_folder(env: Mapping[str, str], cwd: object) -> str:
    """The project's folder as mm_cli.project_dir finds it ($CLAUDE_PROJECT_DIR, else the hook's
    cwd, else the working directory), without importing the command line's modules."""
    for candidate in (env.get("CLAUDE_PROJECT_DIR"), cwd):
        if isinstance(candidate, str) and candidate and "\0" not in candidate:
            return candidate
    return os.getcwd()


def capture_turn(payload: Mapping[str, Any], env: Mapping[str, str], now: float) -> str:
    """Bring this session's snapshot up to its last finished turn (now: seconds since the epoch);
    return the one line to say on stderr ('' for none)."""
    mode, note = mm_session.capture_mode(env)
    if mode == "off" or payload.get("agent_id"):
        return note  # off; or a subagent's stop, whose transcript is its task's
    event = payload.get("hook_event_name")
    say = SAY.format(event=event if event in ("Stop", "SessionEnd") else "Stop")
    transcript = payload.get("transcript_path")
    session_id = payload.get("session_id")
    if not (isinstance(transcript, str) and transcript and "\0" not in transcript):
        return note
    if not (isinstance(session_id, str) and session_id):
        return note
    folder = reading.turns_dir(env)
    if folder is None:
        return f"{say}: no cache folder (HOME unset); nothing captured"
    ref = mm_session.session_ref(session_id)
    paths = reading.state_paths(folder, ref)
    if reading.unchanged(paths[1], transcript):
        return note  # nothing new since the last capture
    stamp = reading.transcript_stamp(transcript)
    state = reading.load_state(paths[0]) or {}
    facts = mm_transcript.facts_from_json(state.get("facts"))
    kept = reading.kept_summary(paths[2])
    summary_seen = state.get("summary")
    if kept is not None and kept[1] != summary_seen:
        # A compaction since the last capture: its summary covers the turns before it.
        facts = mm_transcript.Facts(turns=facts.turns, pending=facts.pending)
    device, inode, offset = (state.get(k) for k in ("device", "inode", "offset"))
    try:
        chunk = reading.read_chunk(
            transcript,
            device if isinstance(device, int) else -1,
            inode if isinstance(inode, int) else -1,
            offset if isinstance(offset, int) else 0,
        )
    except OSError as exc:
        return f"{say}: cannot read the transcript ({exc.strerror or exc}); kept what was captured"
    cwd = payload.get("cwd")
    project_dir = project_folder(env, cwd)
    before = facts if state else None
    facts = mm_transcript.read_lines(chunk.data, facts, project_dir)
    state = {
        "format": reading.STATE_FORMAT,
        "device": chunk.device,
        "inode": chunk.inode,
        "offset": chunk.next_offset,
        "summary": kept[1] if kept is not None else None,
        "facts": mm_transcript.facts_to_json(facts),
    }
    line = note
    summary = kept[0] if kept is not None else ""
    if facts.holds_work() and facts != before:
        # (Nothing new read: the snapshot stays as it is. After a compaction, the facts are the
        # turns since: turns that changed nothing leave the compaction's own capture as it is.)
        from datetime import datetime, timezone

        moment = datetime.fromtimestamp(now, timezone.utc)
        line = write_snapshot(payload, env, moment, mode, facts, summary, say) or note
    reading.save_state(folder, paths, state, stamp or "")
    if payload.get("hook_event_name") == "SessionEnd":
        reading.forget_old(folder, now)
    return line


def write_snapshot(
    payload: Mapping[str, Any],
    env: Mapping[str, str],
    now: datetime,
    mode: str,
    facts: mm_transcript.Facts,
    summary: str,
    say: str,
) -> str:
    """Write the session's snapshot from the facts (after the kept summary); the line to say."""
    from . import mm_capture

    place = mm_capture.place_of(payload, env, now, mode, say)
    if isinstance(place, str):
        return place
    text = mm_transcript.summary_text(facts)
    found: list[mm_summary.Mapped] = []

    def make(
        session: str, saved: mm_snapshot.Snapshot | None
    ) -> tuple[mm_snapshot.Snapshot, mm_summary.Mapped] | None:
        snapshot, mapped = turn_snapshot(summary, text, place, session, facts, now, saved)
        if not any(mapped.sections):
            return None
        if saved is not None and holds_work(saved) and not holds_work(snapshot):
            return None  # never a snapshot without work over one with it
        found.append(mapped)
        return snapshot, mapped

    path = mm_capture.write_capture(place, make, say)
    if isinstance(path, str):
        return path
    if found and found[0].redacted:
        return f"{say}: captured {path}: {found[0].redacted} secrets stored as [REDACTED]"
    return ""


def hook(payload: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    """The hook's entry (mm_hook): the line to say."""
    import time

    return capture_turn(payload, os.environ if env is None else env, time.time())
