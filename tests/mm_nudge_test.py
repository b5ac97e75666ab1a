"""The optional nudge at a turn's end (mm_nudge, `propose_at_stop`): once per session, in the
main session, when files changed and nothing was proposed; never when off or stop_hook_active.
Played on the transcript the pinned Claude Code recorded (two files changed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import LOADER_DIR, MANAGER_DIR, ROOT
from ski_memory_manager import mm_nudge
from support import clean_env

SCRIPT = MANAGER_DIR / "memory_manager.py"
RECORDED = ROOT / "tests" / "transcripts" / "claude-code-2.1.332"


def stop(tmp_path: Path, env: dict[str, str], **change: Any) -> subprocess.CompletedProcess[str]:
    payload = json.loads((RECORDED / "hook_input.json").read_text(encoding="utf-8"))
    payload.update(transcript_path=str(tmp_path / "transcript.jsonl"), **change)
    return subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "hook"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    shutil.copy(RECORDED / "transcript.jsonl", tmp_path / "transcript.jsonl")
    # The project the recording was made in (the transcript's files are relative to it).
    recorded = json.loads((RECORDED / "hook_input.json").read_text(encoding="utf-8"))
    return {**clean_env(tmp_path), "CLAUDE_PROJECT_DIR": recorded["cwd"]}


def test_asks_once_when_files_changed_and_nothing_was_proposed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    on = {**env, mm_nudge.OPTION: "true"}
    first = stop(tmp_path, on)
    assert first.returncode == 0 and first.stderr == ""
    assert json.loads(first.stdout) == {"decision": "block", "reason": mm_nudge.REASON}
    assert stop(tmp_path, on).stdout == ""  # once per session


def test_never_when_off_active_a_subagent_or_something_was_proposed(
    tmp_path: Path, env: dict[str, str]
) -> None:
    assert stop(tmp_path, env).stdout == ""  # off by default
    on = {**env, mm_nudge.OPTION: "true"}
    assert stop(tmp_path, on, stop_hook_active=True).stdout == ""
    assert stop(tmp_path, on, agent_id="a1").stdout == ""
    proposed = subprocess.run(
        [sys.executable, str(LOADER_DIR / "permanent_memory.py"), "propose", "--type", "gotcha",
         "--text", "Stripe retries for 3 days"],
        capture_output=True, text=True, env=on, timeout=60, check=False,
    )  # fmt: skip
    assert proposed.returncode == 0, proposed.stderr
    start = {"session_id": "bbb0211a-4085-4f15-989b-9eb319d84c71", "hook_event_name":
             "SessionStart", "source": "startup"}  # fmt: skip
    subprocess.run(
        [sys.executable, str(SCRIPT), "hook"], input=json.dumps(start), text=True,
        capture_output=True, env=on, timeout=60, check=True,
    )  # fmt: skip
    # The session started before the proposal (same minute counts as after its start).
    assert stop(tmp_path, on).stdout == ""


def test_proposed_since_reads_the_session_and_the_start() -> None:
    items = [{"session": "abc", "proposed_at": "2026-12-07T10:00:00Z"}]
    assert mm_nudge.proposed_since(items, "abc", "2026-12-08-00-00")
    assert mm_nudge.proposed_since(items, "x", "2026-12-07-09-59")
    assert not mm_nudge.proposed_since(items, "x", "2026-12-07-10-01")
    assert not mm_nudge.proposed_since([], "x", "")
