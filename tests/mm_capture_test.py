"""mm_capture: the PostCompact hook keeps the client's summary as a captured snapshot; the next
session's start resumes it; load-last, list and keep show and copy it."""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from ski_memory_manager import memory_manager, mm_session
from support import SESSION_STAMP, Result, call_main, run

CASES = ROOT / "tests" / "captures"
CLAUDE = (CASES / "claude-full" / "summary.txt").read_text(encoding="utf-8")
CODEX = (CASES / "codex-handoff" / "summary.txt").read_text(encoding="utf-8")
NEXT = 'Next step: Run the new test and then start the replay command: "now add a test'


@pytest.fixture
def proj(isolated_env: Path) -> Path:
    folder = isolated_env / "work" / "Billing API"
    folder.mkdir(parents=True)
    return folder


def hook(payload: dict[str, Any]) -> Result:
    return call_main(memory_manager, ["hook"], json.dumps(payload).encode("utf-8"), raw=True)


def compacted(
    proj: Path, summary: str | None = CLAUDE, session: str = "s-1", **extra: Any
) -> Result:
    payload: dict[str, Any] = {
        "session_id": session,
        "transcript_path": str(proj / "no-transcript.jsonl"),
        "cwd": str(proj),
        "hook_event_name": "PostCompact",
        "trigger": "manual",
        **extra,
    }
    if summary is not None:
        payload["compact_summary"] = summary
    return hook(payload)


def started(proj: Path, session: str = "s-2", source: str = "startup") -> str:
    """The resume block the session-start hook gives the model ('' for none)."""
    payload = {"session_id": session, "cwd": str(proj), "source": source}
    result = hook({**payload, "hook_event_name": "SessionStart"})
    assert (result.code, result.err) == (0, "")
    if not result.out:
        return ""
    context = str(json.loads(result.out)["hookSpecificOutput"]["additionalContext"])
    return context if context.startswith(SESSION_STAMP) else ""


def captures(proj: Path) -> list[Path]:
    folder = mm_session.captured_dir(os.environ, str(proj))
    assert folder is not None
    return sorted(Path(folder).glob("*.md"))


def test_a_compaction_is_kept_and_the_next_session_resumes_it(proj: Path) -> None:
    result = compacted(proj)
    assert (result.code, result.out, result.err) == (0, "", "")
    [path] = captures(proj)
    # The user's cache folder, per project; named after the session's start as `pause` names it.
    record = mm_session.read_start(str(mm_session.starts_dir(os.environ)), "s-1")
    assert record is not None and path.name == f"{record.started}-Billing-API.md"
    assert path.parent.parent.name == "captured" and not (proj / "memory").exists()
    first = path.read_text(encoding="utf-8")
    assert "\nsource: compaction\ntrigger: manual\ncompactions: 1\n" in first
    assert f"\n## Active state\n{NEXT}" in first
    assert path.stat().st_mode & 0o777 == 0o600
    # The session compacted again, automatically: the same file, updated.
    time.sleep(0.01)
    again = compacted(proj, CODEX, trigger="auto")
    assert (again.code, again.err) == (0, "")
    assert captures(proj) == [path]
    second = path.read_text(encoding="utf-8")
    assert "\ntrigger: auto\ncompactions: 2\n" in second and "rate limiting" in second
    last_session = [line for line in first.split("\n") if line.startswith("last_session_at")]
    assert last_session[0] in second.split("\n")

    block = started(proj)
    assert block.startswith(
        f"{SESSION_STAMP}\nResuming `Billing-API` (from the session compacted 0 minutes ago)\n\n"
    )
    assert block.endswith(second)
    # The start that follows the session's own compaction, or its resumption later: the
    # session holds that summary already. Another session still gets it (the cache knows).
    assert started(proj, session="s-1", source="compact") == ""
    assert started(proj, session="s-1", source="resume") == ""
    assert started(proj, session="s-3", source="resume") == block
    assert started(proj, session="s-1", source="compact") == ""


def snapshot(folder: Path, name: str, updated: str, checkpoint: str = "CP-S1") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        f"---\nschema_version: 1.1\nproject-name: {name[17:-3]}\nsession: {name[:16]}\n"
        f"status: paused\nlast-checkpoint: {checkpoint}\nupdated_at: '{updated}'\n---\n\n"
        "## Session summary\nsaved by a workflow\n",
        encoding="utf-8",
    )
    return path


def test_the_newer_of_a_workflow_and_a_capture_is_resumed(proj: Path) -> None:
    assert compacted(proj).err == ""
    older = snapshot(proj / "memory", "2026-01-01-10-00-Billing-API.md", "2026-01-01T10:00:00Z")
    assert "(from the session compacted " in started(proj)
    # After its own compaction the session gets the workflow's snapshot, not its capture.
    assert "saved by a workflow" in started(proj, session="s-1", source="compact")
    newer = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 60))
    older.write_text(older.read_text().replace("2026-01-01T10:00:00Z", newer))
    block = started(proj)
    assert "Resuming `Billing-API` (last touched " in block and "saved by a workflow" in block


def test_options_project_folder_and_off(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(mm_session.CAPTURE_OPTION, "off")
    assert (compacted(proj).err, captures(proj)) == ("", [])
    monkeypatch.setenv(mm_session.CAPTURE_OPTION, "project")
    fresh = proj.parent / "fresh"
    fresh.mkdir()
    assert compacted(fresh, session="s-0").err == ""  # memory/ made, as a repository folder
    assert (fresh / "memory").stat().st_mode & 0o777 == 0o777 & ~current_umask()
    # A pause of the same session already wrote the name: the capture takes the next minute.
    record = mm_session.SessionStart("2026-12-01-09-30", "", str(proj), "")
    mm_session.write_start(str(mm_session.starts_dir(os.environ)), "s-1", record)
    paused = snapshot(proj / "memory", "2026-12-01-09-30-Billing-API.md", "2026-12-01T09:40:00Z")
    before = paused.read_bytes()
    assert compacted(proj).err == ""
    assert captures(proj) == []
    assert paused.read_bytes() == before
    made = proj / "memory" / "2026-12-01-09-31-Billing-API.md"
    assert "\nsource: compaction\n" in made.read_text(encoding="utf-8")
    assert made.stat().st_mode & 0o777 != 0o600  # in the repository: the usual mode
    assert compacted(proj).err == ""  # again: the same file
    assert sorted(p.name for p in (proj / "memory").glob("*.md")) == [paused.name, made.name]
    # The project's memory/ leading out of the project: the user's folder instead.
    other = proj.parent / "elsewhere"
    other.mkdir()
    shutil.move(str(proj / "memory"), str(other / "memory"))
    (proj / "memory").symlink_to(other / "memory")
    assert compacted(proj, session="s-9").err == ""
    assert len(captures(proj)) == 1 and len(list((other / "memory").glob("*.md"))) == 2
    monkeypatch.setenv(mm_session.CAPTURE_OPTION, "sideways")
    result = compacted(proj)
    assert result.err == (
        "note: ignoring CLAUDE_PLUGIN_OPTION_CAPTURE='sideways' (want user, project or off)\n"
    )


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


HUGE = "## Next steps\n- ship\n" + "word " * 3_000_000


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ({}, "no compaction summary in the hook input or its transcript; nothing captured"),
        (
            {"compact_summary": 7},
            "no compaction summary in the hook input or its transcript; nothing captured",
        ),
        (
            {"compact_summary": "   "},
            "no compaction summary in the hook input or its transcript; nothing captured",
        ),
        ({"compact_summary": "```\ncode only\n```"}, "the summary held nothing to keep"),
        ({"compact_summary": "just prose"}, "the summary had no part this knows"),
        ({"compact_summary": "## Goal\nkey AKIAIOSFODNN7EXAMPLE\x1b[2J"}, "1 secrets stored as"),
        ({"compact_summary": HUGE}, ""),
    ],
)
def test_bad_input_is_bounded_and_says_one_line(
    proj: Path, payload: dict[str, Any], said: str
) -> None:
    keep = snapshot(proj / "memory", "2026-01-01-10-00-Billing-API.md", "2026-01-01T10:00:00Z")
    before = keep.read_bytes()
    payload = {"session_id": "s-1", "cwd": str(proj), "hook_event_name": "PostCompact", **payload}
    begun = time.monotonic()
    result = hook(payload)
    assert time.monotonic() - begun < 10
    assert (result.code, result.out) == (0, "")
    assert result.err.count("\n") == (1 if said else 0) and said in result.err, result.err
    assert "AKIAIOSFODNN7EXAMPLE" not in result.err and keep.read_bytes() == before
    for path in captures(proj):
        text = path.read_text(encoding="utf-8")
        assert len(text.encode("utf-8")) <= 2048
        assert "AKIA" not in text and "\x1b" not in text


def test_a_subagents_compaction_and_a_damaged_capture_are_left_alone(proj: Path) -> None:
    # Codex passes agent_id for a subagent's thread: its summary is of the subagent's task.
    assert (compacted(proj, agent_id="a-1", agent_type="worker").err, captures(proj)) == ("", [])
    assert compacted(proj).err == ""
    [path] = captures(proj)
    path.write_text("---\nsource: compaction\n: [\n---\n", encoding="utf-8")  # damaged
    assert compacted(proj).err == ""
    [damaged, made] = captures(proj)
    assert damaged == path and damaged.read_text(encoding="utf-8").endswith(": [\n---\n")
    start = datetime.strptime(path.name[:16], "%Y-%m-%d-%H-%M")
    assert made.name == (start + timedelta(minutes=1)).strftime("%Y-%m-%d-%H-%M") + path.name[16:]


def test_input_that_is_not_json(proj: Path) -> None:
    result = call_main(memory_manager, ["hook"], b'{"hook_event_name": "PostCompact", ', raw=True)
    assert (result.code, result.out) == (0, "")
    assert result.err.count("\n") == 1


def test_a_client_that_passes_no_summary_names_its_transcript(proj: Path) -> None:
    """Codex 0.171.0: no summary in the input; its transcript's last `compacted` record."""
    transcript = proj.parent / "rollout.jsonl"
    lines = [
        {"type": "session_meta", "payload": {"id": "s-1"}},
        {"type": "compacted", "payload": {"message": "## Goal\nold summary"}},
        {"type": "response_item", "payload": {"type": "message", "content": "compacted"}},
        {"type": "compacted", "payload": {"message": CODEX, "replacement_history": []}},
        {"type": "event_msg", "payload": {"type": "context_compacted"}},
    ]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = compacted(proj, None, transcript_path=str(transcript), model="gpt-5", turn_id="t1")
    assert (result.code, result.out, result.err) == (0, "", "")
    [path] = captures(proj)
    text = path.read_text(encoding="utf-8")
    assert "rate limiting" in text and "old summary" not in text
    assert "Another language model" not in text
    # A newest compaction with no readable summary: nothing, never the older one.
    lines.append({"type": "compacted", "payload": {"message": "", "replacement_history": []}})
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    before = path.read_bytes()
    again = compacted(proj, None, transcript_path=str(transcript))
    assert "no compaction summary in the hook input" in again.err
    assert path.read_bytes() == before


def test_load_last_and_list_show_a_capture_marked(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(proj)
    assert compacted(proj).err == ""
    [path] = captures(proj)
    shown = call_main(memory_manager, ["load-last", "--project-name", "Billing-API"])
    assert shown.code == 0 and shown.err == ""
    assert shown.out.startswith(
        f"{SESSION_STAMP}\nResuming `Billing-API` (from the session compacted 0 minutes ago)\n"
    )
    listed = call_main(memory_manager, ["list"])
    assert (listed.code, listed.err) == (0, "")
    assert listed.out.split("\n")[1].split()[:3] == ["Billing-API", path.name[:16], "captured"]
    as_json = call_main(memory_manager, ["list", "--format", "json"])
    assert json.loads(as_json.out)[0]["captured"] is True
    # The status line says where the session was resumed from.
    result = hook({"session_id": "s-2", "cwd": str(proj), "hook_event_name": "SessionStart"})
    message = json.loads(result.out)["systemMessage"]
    assert message.endswith(" resumed Billing-API (compacted session)"), message


def test_the_hook_as_the_client_runs_it(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    payload = {"session_id": "x", "cwd": str(project), "hook_event_name": "PostCompact"}
    result = run(
        ROOT / "skills" / "ski-memory-manager" / "scripts" / "memory_manager.py",
        ["hook"],
        env=env,
        stdin=json.dumps({**payload, "trigger": "auto", "compact_summary": CLAUDE}).encode(),
    )
    assert (result.code, result.out, result.err) == (0, "", "")
    [made] = (tmp_path / "home" / ".cache" / "project-memory" / "session-memory").glob(
        "captured/proj-*/*-proj.md"
    )
    assert "\ntrigger: auto\n" in made.read_text(encoding="utf-8")
