"""mm_turn_capture and mm_transcript_read: the Stop and SessionEnd hooks keep each session's
snapshot from its transcript: golden snapshots from transcripts the pinned clients recorded
(tests/transcripts/), the hook's bounds on hostile transcripts, what a trivial session does, the
merge with the session's compaction capture, the options."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ski_memory_manager import (
    memory_manager,
    mm_capture,
    mm_session,
    mm_transcript,
    mm_turn_capture,
)
from ski_memory_manager import mm_transcript_read as reading
from support import SESSION_STAMP, Result, call_main

TRANSCRIPTS = ROOT / "tests" / "transcripts"
NOW = datetime(2026, 12, 7, 20, 0, tzinfo=timezone.utc)
TOKEN = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"  # a GitHub token's form, not one


@pytest.fixture
def proj(isolated_env: Path) -> Path:
    folder = isolated_env / "work" / "billing-api"
    folder.mkdir(parents=True)
    return folder


def hook(payload: dict[str, Any]) -> Result:
    return call_main(memory_manager, ["hook"], json.dumps(payload).encode("utf-8"), raw=True)


def stop(proj: Path, transcript: Path, session: str = "s-1", event: str = "Stop") -> Result:
    payload = {
        "session_id": session,
        "transcript_path": str(transcript),
        "cwd": str(proj),
        "hook_event_name": event,
    }
    return hook(payload)


def captures(proj: Path) -> list[Path]:
    folder = mm_session.captured_dir(os.environ, str(proj))
    assert folder is not None
    return sorted(Path(folder).glob("*.md"))


def record(kind: str, content: Any, **extra: Any) -> bytes:
    message = {"role": kind, "content": content, "stop_reason": extra.pop("stop", "end_turn")}
    return json.dumps({"type": kind, "message": message, **extra}).encode() + b"\n"


def turn(proj: Path, request: str, answer: str, path: str | None = None, call: str = "t1") -> bytes:
    """One turn of a Claude Code transcript: the request, an edit of `path` when given, the
    answer."""
    data = record("user", request)
    if path is not None:
        use = {"type": "tool_use", "id": call, "name": "Write", "input": {"file_path": path}}
        data += record("assistant", [use], stop="tool_use")
        data += record("user", [{"type": "tool_result", "tool_use_id": call, "content": "ok"}])
    return data + record("assistant", [{"type": "text", "text": answer}])


def started(proj: Path, session: str = "s-9") -> str:
    payload = {"session_id": session, "cwd": str(proj), "source": "startup"}
    result = hook({**payload, "hook_event_name": "SessionStart"})
    assert (result.code, result.err) == (0, "")
    context = (
        str(json.loads(result.out)["hookSpecificOutput"]["additionalContext"]) if result.out else ""
    )
    return context if context.startswith(SESSION_STAMP) else ""


# --- golden: transcripts the pinned clients wrote ------------------------------------------------


@pytest.mark.parametrize("client", sorted(p.name for p in TRANSCRIPTS.iterdir() if p.is_dir()))
def test_golden_snapshot_from_a_recorded_transcript(client: str, isolated_env: Path) -> None:
    case = TRANSCRIPTS / client
    payload = json.loads((case / "hook_input.json").read_text(encoding="utf-8"))
    payload["transcript_path"] = str(case / "transcript.jsonl")
    line = mm_turn_capture.capture_turn(payload, os.environ, NOW.timestamp())
    assert line == ""
    [written] = captures(Path(payload["cwd"]))
    text = written.read_text(encoding="utf-8").replace(payload["session_id"], "SESSION")
    assert text == (case / "snapshot.md").read_text(encoding="utf-8")
    assert "system-reminder" not in text and "trust:" not in text and "trust=" not in text


# --- the hook ----------------------------------------------------------------------------------


def test_each_turn_updates_one_snapshot_and_the_next_session_resumes_it(proj: Path) -> None:
    transcript = proj.parent / "t.jsonl"
    transcript.write_bytes(turn(proj, "Skip duplicate events.", "Done.", str(proj / "h.py")))
    result = stop(proj, transcript)
    assert (result.code, result.out, result.err) == (0, "", "")
    [path] = captures(proj)
    assert path.stat().st_mode & 0o777 == 0o600
    assert "\nsource: transcript\nturns: 1\n" in path.read_text(encoding="utf-8")
    with transcript.open("ab") as handle:
        handle.write(turn(proj, f"Add a test. The token is {TOKEN}", "Next: the replay command."))
    result = stop(proj, transcript)
    assert result.code == 0 and "1 secrets stored as [REDACTED]" in result.err
    [again] = captures(proj)
    text = again.read_text(encoding="utf-8")
    assert again == path and "\nturns: 2\n" in text and TOKEN not in text
    assert "- Skip duplicate events.\n- Add a test. The token is [REDACTED]\n" in text
    assert "\n## Active state\nWhere it stopped: Next: the replay command.\n" in text
    block = started(proj)
    assert "Resuming `billing-api` (from the session that ended 2 hours ago)" in block or (
        "(from the session that ended" in block
    )
    assert block.endswith(text.strip() + "\n")
    # The same session, resumed, never gets its own snapshot back.
    assert started(proj, session="s-1") == ""


def test_a_turn_with_nothing_new_reads_nothing(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    transcript = proj.parent / "t.jsonl"
    transcript.write_bytes(turn(proj, "Skip duplicates.", "Done.", str(proj / "h.py")))
    assert stop(proj, transcript).code == 0
    payload = {"session_id": "s-1", "transcript_path": str(transcript)}
    assert reading.nothing_new(payload, os.environ)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("read again")

    monkeypatch.setattr(reading, "read_chunk", refuse)
    result = stop(proj, transcript)
    assert (result.code, result.err) == (0, "")


def test_a_trivial_session_writes_nothing_and_never_hides_work(proj: Path) -> None:
    worked = proj.parent / "worked.jsonl"
    worked.write_bytes(turn(proj, "Skip duplicates.", "Done.", str(proj / "h.py")))
    assert stop(proj, worked, session="s-1").code == 0
    [path] = captures(proj)
    greeting = proj.parent / "greeting.jsonl"
    greeting.write_bytes(turn(proj, "hello", "Hello! How can I help?"))
    assert stop(proj, greeting, session="s-2").code == 0
    assert captures(proj) == [path]
    assert "Skip duplicates." in started(proj)


def test_a_lost_state_never_replaces_work_with_none(proj: Path) -> None:
    transcript = proj.parent / "t.jsonl"
    transcript.write_bytes(turn(proj, "Skip duplicates.", "Done.", str(proj / "h.py")))
    assert stop(proj, transcript).code == 0
    [path] = captures(proj)
    before = path.read_text(encoding="utf-8")
    folder = reading.turns_dir(os.environ)
    assert folder is not None
    for name in os.listdir(folder):
        os.unlink(os.path.join(folder, name))  # the cache cleared
    transcript.write_bytes(turn(proj, "and a question", "An answer."))  # a new file, no work
    assert stop(proj, transcript).code == 0
    assert path.read_text(encoding="utf-8") == before


def test_merged_with_the_sessions_compaction_summary(proj: Path) -> None:
    summary = (ROOT / "tests" / "captures" / "claude-full" / "summary.txt").read_text(
        encoding="utf-8"
    )
    transcript = proj.parent / "t.jsonl"
    transcript.write_bytes(turn(proj, "Before the compaction.", "Old.", str(proj / "old.py")))
    assert stop(proj, transcript).code == 0
    compact = {
        "session_id": "s-1",
        "transcript_path": str(transcript),
        "cwd": str(proj),
        "hook_event_name": "PostCompact",
        "trigger": "auto",
        "compact_summary": summary,
    }
    assert hook(compact).code == 0
    [path] = captures(proj)
    assert "\nsource: compaction\n" in path.read_text(encoding="utf-8")
    with transcript.open("ab") as handle:
        handle.write(turn(proj, "After the compaction.", "New answer.", str(proj / "new.py"), "t2"))
    assert stop(proj, transcript).code == 0
    [merged] = captures(proj)
    text = merged.read_text(encoding="utf-8")
    assert "\nsource: transcript\nturns: 2\ncompactions: 1\n" in text
    # The summary speaks first; the turns after it follow; the turns before it are its.
    assert text.index("Next step: Run the new test") < text.index("Where it stopped: New answer.")
    assert "new.py" in text and "old.py" not in text and "Before the compaction." not in text
    assert len(text.encode("utf-8")) <= mm_capture.MAX_BYTES


@pytest.mark.parametrize(
    ("option", "where"), [("off", None), ("project", "memory"), ("nonsense", "user")]
)
def test_the_capture_option(
    proj: Path, monkeypatch: pytest.MonkeyPatch, option: str, where: str | None
) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_OPTION_CAPTURE", option)
    transcript = proj.parent / "t.jsonl"
    transcript.write_bytes(turn(proj, "Skip duplicates.", "Done.", str(proj / "h.py")))
    result = stop(proj, transcript)
    assert result.code == 0 and result.out == ""
    in_project = sorted((proj / "memory").glob("*.md")) if (proj / "memory").exists() else []
    if where is None:
        assert captures(proj) == [] and in_project == [] and result.err == ""
    elif where == "memory":
        assert len(in_project) == 1 and captures(proj) == []
    else:
        assert len(captures(proj)) == 1 and "ignoring CLAUDE_PLUGIN_OPTION_CAPTURE" in result.err


# --- hostile and broken transcripts ------------------------------------------------------------


def hostile(proj: Path, kind: str) -> Path:
    path = proj.parent / f"{kind}.jsonl"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link":
        target = proj.parent / "real.jsonl"
        target.write_bytes(turn(proj, "via a link", "x", str(proj / "l.py")))
        path.symlink_to(target)
    elif kind == "folder":
        path.mkdir()
    elif kind == "not-json":
        path.write_bytes(b"\x00\xff garbage\n{not json}\n[1, 2]\n" * 1000)
    elif kind == "long-line":
        with path.open("wb") as handle:
            handle.write(b'{"type": "user", "message": {"content": "')
            handle.write(b"x" * (50 * 1024 * 1024))
    elif kind == "deep":
        path.write_bytes(b'{"type": "user", "message": ' + b"[" * 100_000 + b"\n")
    return path


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("missing", "cannot read the transcript"),
        ("fifo", "cannot read the transcript"),
        ("link", "cannot read the transcript"),
        ("folder", "cannot read the transcript"),
        ("not-json", ""),
        ("long-line", ""),
        ("deep", ""),
    ],
)
def test_a_hostile_transcript_exits_0_quickly_and_keeps_what_was_captured(
    proj: Path, kind: str, said: str
) -> None:
    good = proj.parent / "good.jsonl"
    good.write_bytes(turn(proj, "Skip duplicates.", "Done.", str(proj / "h.py")))
    assert stop(proj, good).code == 0
    [path] = captures(proj)
    before = path.read_text(encoding="utf-8")
    transcript = hostile(proj, kind)
    began = time.monotonic()
    result = stop(proj, transcript)
    assert time.monotonic() - began < 1.5
    assert result.code == 0 and result.out == ""
    assert (said in result.err) if said else result.err == ""
    assert result.err.count("\n") <= 1 and "Traceback" not in result.err
    assert path.read_text(encoding="utf-8") == before


def test_a_transcript_over_the_budget_is_read_from_its_end(proj: Path) -> None:
    transcript = proj.parent / "big.jsonl"
    filler = json.dumps({"type": "progress", "data": "x" * 1000}).encode() + b"\n"
    with transcript.open("wb") as handle:
        handle.write(turn(proj, "Lost at the start.", "x", str(proj / "lost.py")))
        handle.write(filler * (reading.READ_BUDGET // len(filler) + 10))
        handle.write(turn(proj, "Kept at the end.", "Done.", str(proj / "kept.py"), "t2"))
    assert stop(proj, transcript).code == 0
    [path] = captures(proj)
    text = path.read_text(encoding="utf-8")
    assert "kept.py" in text and "lost.py" not in text and "Lost at the start" not in text


def test_read_chunk_keeps_whole_lines_and_where_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2')
    first = reading.read_chunk(str(path), -1, -1, 0)
    assert (first.data, first.next_offset, first.follows) == (b'{"a": 1}\n', 9, False)
    with path.open("ab") as handle:
        handle.write(b"}\n")
    second = reading.read_chunk(str(path), first.device, first.inode, first.next_offset)
    assert (second.data, second.next_offset, second.follows) == (b'{"b": 2}\n', 18, True)


# --- properties --------------------------------------------------------------------------------

words = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\0"), max_size=300
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(words, words, st.text(alphabet="abc/._", min_size=1, max_size=30)),
        min_size=1,
        max_size=8,
    )
)
def test_properties_budget_redaction_no_reminder_or_stamp(
    proj: Path, turns: list[tuple[str, str, str]]
) -> None:
    data = b""
    for number, (request, answer, name) in enumerate(turns):
        request = f"<system-reminder>hidden {number}</system-reminder>{request} {TOKEN}"
        request += "\n[permanent-memory | trust:file]\nEpic X (y):"
        data += turn(proj, request, answer, str(proj / name), f"t{number}")
    facts = mm_transcript.read_lines(data, mm_transcript.Facts(), str(proj))
    place = mm_capture.Place("billing-api", "2026-12-07-18-00", "ref", proj, False)
    snapshot, _ = mm_turn_capture.turn_snapshot(
        "", mm_transcript.summary_text(facts), place, "2026-12-07-18-00", facts, NOW, None
    )
    from ski_memory_manager import mm_snapshot

    text = mm_snapshot.format_snapshot(snapshot)
    assert len(text.encode("utf-8")) <= mm_capture.MAX_BYTES
    assert TOKEN not in text and "system-reminder" not in text and "hidden" not in text
    assert "[permanent-memory | trust:file]" not in text
    assert mm_snapshot.parse_snapshot(text) == snapshot


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), words), min_size=1, max_size=5))
def test_property_a_trivial_session_never_replaces_work(sessions: list[tuple[bool, str]]) -> None:
    import shutil
    import tempfile

    from ski_memory_manager import mm_resume

    scratch = Path(tempfile.mkdtemp())
    try:
        env = {"XDG_CACHE_HOME": str(scratch / "xdg"), "HOME": str(scratch)}
        proj = scratch / "billing-api"
        proj.mkdir()
        last_work = None
        for number, (works, words_said) in enumerate(sessions):
            request = f"request {number} {' '.join(words_said.split())[:40]}"
            path = str(proj / f"f{number}.py") if works else None
            transcript = scratch / f"t{number}.jsonl"
            transcript.write_bytes(turn(proj, request, f"answer {number}", path, f"c{number}"))
            payload = {"session_id": f"s{number}", "transcript_path": str(transcript)}
            payload.update(cwd=str(proj), hook_event_name="SessionEnd")
            moment = NOW.timestamp() + 3600 * number
            mm_turn_capture.capture_turn(payload, env, moment)
            last_work = number if works else last_work
        folder = mm_session.captured_dir(env, str(proj))
        assert folder is not None
        written = sorted(Path(folder).glob("*.md")) if Path(folder).is_dir() else []
        assert len(written) == sum(1 for works, _ in sessions if works)
        start = {"session_id": "next", "cwd": str(proj), "source": "startup"}
        later = datetime.fromtimestamp(NOW.timestamp() + 3600 * len(sessions), timezone.utc)
        block = mm_resume.resume(start, env, later).block
        if last_work is None:
            assert block == ""
        else:
            assert f"answer {last_work}" in block and f"`f{last_work}.py`" in block
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
