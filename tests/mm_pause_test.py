"""mm_pause: `pause`, a paused express snapshot of this session with no workflow: the project
name from the folder, the session timestamp from the session's recorded start."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ski_memory_manager import memory_manager, mm_session
from ski_memory_manager.mm_pause import project_name_for
from ski_memory_manager.mm_snapshot import is_project_name
from support import Result, call_main

STATE = "active_state: |\n  Done: dedupe.\n  Next: replay.\n  Open: retention?\n"


@pytest.mark.parametrize(
    ("folder", "name"),
    [
        ("billing-api", "billing-api"),
        ("My Caf\u00e9 App (v2)", "My-Cafe-App-v2"),
        (".dotfiles", "dotfiles"),
        ("--x--", "x"),
        ("a.b_c-1", "a.b_c-1"),
        ("\u65e5\u672c", "project"),
        ("", "project"),
        ("x" * 63 + " y", "x" * 63),
    ],
)
def test_project_names_from_folders(folder: str, name: str) -> None:
    assert project_name_for(folder) == name


@given(st.text(max_size=100))
def test_every_folder_gives_a_valid_name(folder: str) -> None:
    assert is_project_name(project_name_for(folder))


@pytest.fixture
def project(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = isolated_env / "work" / "Billing API"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def pause(*args: str, stdin: str = STATE) -> Result:
    return call_main(memory_manager, ["pause", *args, "--yaml", "-"], stdin.encode())


def test_pause_in_a_recorded_session(project: Path, isolated_env: Path) -> None:
    folder = mm_session.starts_dir({"XDG_CACHE_HOME": str(isolated_env / "xdg")})
    assert folder is not None
    # What the SessionStart hook recorded: the session's start, its project, the option.
    mm_session.write_start(
        folder, "s-1", mm_session.SessionStart("2026-12-01-09-30", str(project), "", "")
    )
    first = pause("--session-id", "s-1", "--now", "2026-12-01T11:00:00Z")
    path = project / "memory" / "2026-12-01-09-30-Billing-API.md"
    assert first == Result(0, f"{path}\n", f"note: created {project / 'memory'}\n")
    # Later in the same session: the same file, updated.
    second = pause(
        "--session-id",
        "s-1",
        "--now",
        "2026-12-01T12:00:00Z",
        stdin="active_state: |\n  Done: replay too.\n",
    )
    assert second == Result(0, f"{path}\n", "")
    assert sorted(p.name for p in path.parent.glob("*.md")) == [path.name]
    text = path.read_text(encoding="utf-8")
    assert text.startswith(
        "---\nschema_version: 1.1\nproject-name: Billing-API\nsession: 2026-12-01-09-30\n"
        "mode: express\nstatus: paused\n"
    )
    assert "last_session_at: '2026-12-01T09:30:00Z'\nupdated_at: '2026-12-01T12:00:00Z'\n" in text
    assert "\n## Active state\nDone: replay too.\n" in text


def test_the_recorded_memory_dir_option_is_used(project: Path, isolated_env: Path) -> None:
    folder = mm_session.starts_dir({"XDG_CACHE_HOME": str(isolated_env / "xdg")})
    assert folder is not None
    mm_session.write_start(
        folder,
        "s-2",
        mm_session.SessionStart("2026-12-01-09-30", str(project), "", "notes/sessions"),
    )
    result = pause("--session-id", "s-2", "--now", "2026-12-01T11:00:00Z")
    path = project / "notes" / "sessions" / "2026-12-01-09-30-Billing-API.md"
    assert result.out == f"{path}\n" and path.is_file()


def test_a_session_no_hook_recorded_is_recorded_by_its_first_pause(
    project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    first = pause("--session-id", "s-3", "--now", "2026-12-01T11:05:00Z")
    path = project / "memory" / "2026-12-01-11-05-Billing-API.md"
    assert first.code == 0 and first.out == f"{path}\n", first.err
    starts = isolated_env / "xdg" / "project-memory" / "session-memory" / "starts"
    record = mm_session.read_start(str(starts), "s-3")
    assert record == mm_session.SessionStart("2026-12-01-11-05", "", str(project), "")
    later = pause("--session-id", "s-3", "--now", "2026-12-01T13:00:00Z")
    assert later.out == f"{path}\n"


@pytest.mark.parametrize("session_id", [None, "", "${CLAUDE_SESSION_ID}"])
def test_without_a_session_the_timestamp_is_now(project: Path, session_id: str | None) -> None:
    args = [] if session_id is None else ["--session-id", session_id]
    result = pause(*args, "--now", "2026-12-01T11:07:30Z")
    assert result.out == f"{project / 'memory' / '2026-12-01-11-07-Billing-API.md'}\n"


def test_mode_and_status_are_the_pause_s(project: Path) -> None:
    result = pause(
        "--now",
        "2026-12-01T11:00:00Z",
        "--project-name",
        "billing",
        stdin=f"mode: architect\nstatus: completed\n{STATE}",
    )
    assert result.code == 0
    assert result.err == (
        "note: pause saves mode: express (ignoring mode: architect)\n"
        "note: pause saves status: paused (ignoring status: completed)\n"
        f"note: created {project / 'memory'}\n"
    )
    path = project / "memory" / "2026-12-01-11-00-billing.md"
    assert "\nmode: express\nstatus: paused\n" in path.read_text(encoding="utf-8")


NO_STATE = "pause needs active_state: what is done, what is next, the open questions\n"


@pytest.mark.parametrize(
    ("args", "stdin", "error"),
    [
        ([], "session_summary: |\n  x\n", NO_STATE),
        ([], "active_state: |\n  \n", NO_STATE),
        (
            ["--project-name", ".hidden"],
            STATE,
            "project_name must be 1-64 characters of letters, digits, '.', '_' or '-', not "
            "starting with '.' (got '.hidden')\n",
        ),
    ],
    ids=["no-active-state", "blank-active-state", "bad-project-name"],
)
def test_bad_pauses_write_nothing(project: Path, args: list[str], stdin: str, error: str) -> None:
    assert pause(*args, stdin=stdin) == Result(1, "", error)
    assert list(project.iterdir()) == []
