from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from ski_memory_manager import mm_resume

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=timezone.utc)


def _snapshot(folder: Path, name: str, updated: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(
        f"---\nstatus: in-progress\nlast-checkpoint: CP-S1\nupdated_at: '{updated}'\n---\nbody\n",
        encoding="utf-8",
    )


def test_resume_block_finds_the_project_from_the_hook_cwd(tmp_path: Path) -> None:
    _snapshot(tmp_path / "memory", "2026-05-01-10-00-p.md", "2026-05-04T11:00:00Z")
    block = mm_resume.resume({"cwd": str(tmp_path)}, {}, NOW).block
    assert block == (
        "[session-memory | trust:file]\n"
        "Resuming `p` (last touched 1 hour ago, status: in-progress at CP-S1)\n\n"
        "---\nstatus: in-progress\nlast-checkpoint: CP-S1\nupdated_at: '2026-05-04T11:00:00Z'\n"
        "---\nbody\n"
    )
    # $CLAUDE_PROJECT_DIR wins over the hook's cwd.
    assert (
        mm_resume.resume({"cwd": str(tmp_path)}, {"CLAUDE_PROJECT_DIR": "/nonexistent"}, NOW).block
        == ""
    )


@pytest.mark.parametrize("payload", [None, [], "x", 3, {"cwd": 5}, {"cwd": None}])
def test_resume_block_tolerates_any_payload(
    payload: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _snapshot(tmp_path / "memory", "2026-05-01-10-00-p.md", "2026-05-04T11:00:00Z")
    assert mm_resume.resume(payload, {}, NOW).block.startswith("[session-memory | trust:file]\n")


def test_resume_block_ranks_projects_by_last_touched_and_lists_outside_labels(
    tmp_path: Path,
) -> None:
    memory = tmp_path / "shared-memory"
    _snapshot(memory, "2026-05-03-10-00-newest-session.md", "2026-05-03T10:00:00Z")
    _snapshot(memory, "2026-04-01-10-00-touched-later.md", "2026-05-04T10:00:00Z")
    (memory / "2026-05-04-10-00-corrupt.md").write_text("junk", encoding="utf-8")
    env = {
        "CLAUDE_PROJECT_DIR": str(tmp_path / "project"),
        "CLAUDE_PLUGIN_OPTION_MEMORY_DIR": str(memory),
    }
    block = mm_resume.resume({}, env, NOW).block
    assert block.split("\n")[1:4] == [
        f"Session memory of 2 projects in {memory}:",
        "- Resuming `touched-later` (last touched 2 hours ago, status: in-progress at CP-S1)",
        "- Resuming `newest-session` (last touched 26 hours ago, status: in-progress at CP-S1)",
    ]
