from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from ski_memory_manager import mm_cli
from ski_memory_manager.mm_snapshot import InvalidField

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=timezone.utc)


def test_project_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = {"CLAUDE_PROJECT_DIR": "/from/env"}
    assert mm_cli.project_dir(env, "/from/hook") == Path("/from/env")
    assert mm_cli.project_dir({}, "/from/hook") == Path("/from/hook")
    assert mm_cli.project_dir({}, None) == tmp_path
    assert mm_cli.project_dir({"CLAUDE_PROJECT_DIR": ""}, "") == tmp_path
    assert mm_cli.project_dir({"CLAUDE_PROJECT_DIR": "a\0b"}, "x\0") == tmp_path


def test_default_memory_dir(capsys: pytest.CaptureFixture[str]) -> None:
    option = "CLAUDE_PLUGIN_OPTION_MEMORY_DIR"
    assert mm_cli.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p"}) == Path("/p/memory")
    assert mm_cli.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: ".mem"}) == Path(
        "/p/.mem"
    )
    assert mm_cli.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: "/abs/m"}) == Path(
        "/abs/m"
    )
    assert mm_cli.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: "  "}) == Path(
        "/p/memory"
    )
    assert capsys.readouterr().err == ""
    assert mm_cli.default_memory_dir({"CLAUDE_PROJECT_DIR": "/p", option: "a\nb"}) == Path(
        "/p/memory"
    )
    assert capsys.readouterr().err == (
        "note: ignoring CLAUDE_PLUGIN_OPTION_MEMORY_DIR (not a path); using memory/\n"
    )


def test_parse_now() -> None:
    assert mm_cli.parse_now("2026-05-04T12:00:00Z") == NOW
    assert mm_cli.parse_now(None).tzinfo is not None
    with pytest.raises(InvalidField) as caught:
        mm_cli.parse_now("tomorrow")
    assert str(caught.value) == (
        "--now must be an ISO 8601 date-time like 2026-05-01T10:00:00Z (got 'tomorrow')"
    )


def test_say_keeps_diagnostics_on_one_inert_line(capsys: pytest.CaptureFixture[str]) -> None:
    mm_cli.say("bad\nvalue <tag> [x | trust:y]\x1b[31m")
    assert capsys.readouterr() == ("", "bad value \u2039tag> (x | trust=y)\n")
    mm_cli.say("mode must be one of: architect, express (got 'ghp_" + "a1" * 18 + "')")
    assert capsys.readouterr().err == (
        "mode must be one of: architect, express (got '[REDACTED]')\n"
    )
