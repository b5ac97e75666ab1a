"""mm_session: the record of each session's start that the SessionStart hook writes once and
`pause` reads back."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from conftest import MANAGER_DIR
from hypothesis import given
from hypothesis import strategies as st
from ski_memory_manager import mm_session
from ski_memory_manager.mm_session import SessionStart, format_record, parse_record, record_path
from support import clean_env, run_command

SCRIPT = MANAGER_DIR / "memory_manager.py"
NOON = 1_796_126_400.0  # 2026-12-01T12:00:00Z
LINE = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40).filter(
    lambda t: not any(c in t for c in "\n\r\0")
)


def test_the_record_reads_back() -> None:
    start = SessionStart("2026-12-01-12-00", "/p", "/p/sub", "notes")
    text = format_record(start)
    assert text == (
        "mm-session-1\nstarted=2026-12-01-12-00\nproject_dir=/p\ncwd=/p/sub\n"
        "memory_dir_option=notes\n"
    )
    assert parse_record(text) == start


@given(project=LINE, cwd=LINE, option=LINE)
def test_any_one_line_values_read_back(project: str, cwd: str, option: str) -> None:
    start = SessionStart("2026-12-01-12-00", project, cwd, option)
    text = format_record(start)
    assert text is not None
    assert parse_record(text) == start


@pytest.mark.parametrize(
    "text",
    [
        "",
        "mm-session-1\n",
        "mm-session-1\nstarted=2026-12-01-12-00\nproject_dir=/p\ncwd=/p\n",  # torn
        "mm-session-2\nstarted=2026-12-01-12-00\nproject_dir=\ncwd=\nmemory_dir_option=\n",
        "mm-session-1\nstarted=yesterday\nproject_dir=\ncwd=\nmemory_dir_option=\n",
        "mm-session-1\nstarted=\u0662\u0660\u0662\u0666-12-01-12-00\nproject_dir=\ncwd=\n"
        "memory_dir_option=\n",
    ],
    ids=["empty", "format-only", "torn", "other-format", "bad-stamp", "non-ascii-digits"],
)
def test_what_is_not_a_whole_record_is_none(text: str) -> None:
    assert parse_record(text) is None


def test_a_value_on_two_lines_is_not_recorded() -> None:
    assert format_record(SessionStart("2026-12-01-12-00", "/a\nb", "", "")) is None


def test_record_names(tmp_path: Path) -> None:
    folder = str(tmp_path)
    assert record_path(folder, "0f6a-42_x") == os.path.join(folder, "0f6a-42_x")
    odd = record_path(folder, "../../etc/passwd")
    assert odd is not None and os.path.dirname(odd) == folder and "/" not in odd[len(folder) + 1 :]
    assert record_path(folder, "x" * 101) != os.path.join(folder, "x" * 101)
    assert record_path(folder, "") is None


def test_the_first_start_is_kept(tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": "/p"}
    payload = {"session_id": "s-1", "cwd": "/p"}
    mm_session.record_start(payload, env, NOON)
    mm_session.record_start(payload, {**env, "CLAUDE_PROJECT_DIR": "/q"}, NOON + 3600)
    folder = mm_session.starts_dir(env)
    assert folder == str(tmp_path / "project-memory" / "session-memory" / "starts")
    assert mm_session.read_start(folder, "s-1") == SessionStart("2026-12-01-12-00", "/p", "/p", "")
    assert mm_session.read_start(folder, "s-2") is None
    assert os.listdir(folder) == ["s-1"]


def test_no_session_id_records_nothing(tmp_path: Path) -> None:
    for payload in ({}, {"session_id": 7}, {"session_id": ""}):
        mm_session.record_start(payload, {"XDG_CACHE_HOME": str(tmp_path)}, NOON)
    assert list(tmp_path.iterdir()) == []


def test_old_records_are_forgotten(tmp_path: Path) -> None:
    for name, age_days in (("old", 31), ("recent", 29)):
        path = tmp_path / name
        path.write_text("x")
        moment = NOON - age_days * 86400
        os.utime(path, (moment, moment))
    mm_session.prune_starts(str(tmp_path), NOON)
    assert [p.name for p in tmp_path.iterdir()] == ["recent"]


def hook(tmp_path: Path, session_id: str, data: Path) -> tuple[int, str, str]:
    env = clean_env(tmp_path, XDG_CACHE_HOME=str(data), CLAUDE_PROJECT_DIR=str(tmp_path))
    payload = {"session_id": session_id, "cwd": str(tmp_path), "hook_event_name": "SessionStart"}
    result = run_command(
        [sys.executable, SCRIPT, "hook"], env=env, stdin=json.dumps(payload).encode()
    )
    return result.code, result.out, result.err


def test_the_hook_records_the_session_start(tmp_path: Path) -> None:
    before = time.time()
    code, _out, err = hook(tmp_path, "abc-1", tmp_path / "data")
    assert (code, err) == (0, "")
    record = tmp_path / "data" / "project-memory" / "session-memory" / "starts" / "abc-1"
    start = parse_record(record.read_text(encoding="utf-8"))
    assert start is not None
    assert start.started in {mm_session.stamp_of(before), mm_session.stamp_of(time.time())}
    assert (start.project_dir, start.cwd, start.memory_dir_option) == (
        str(tmp_path),
        str(tmp_path),
        "",
    )


def test_the_hook_still_answers_when_it_cannot_record(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "project-memory").mkdir()
    (data / "project-memory" / "session-memory").write_text("a file where the folder would go")
    code, out, err = hook(tmp_path, "abc-1", data)
    assert code == 0 and out == ""
    starts = data / "project-memory" / "session-memory" / "starts"
    assert err.endswith(
        f"ski-memory-manager hook: cannot record the session's start: [Errno 20] Not a "
        f"directory: '{starts}'\n"
    ), err
