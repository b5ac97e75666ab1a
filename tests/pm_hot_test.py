"""pm_hot: the hook's steady-state helpers (hook JSON, options, cache entries, file reading)."""

from __future__ import annotations

import os
from pathlib import Path

import pm_hot
import pytest


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            b'{"session_id": "a", "hook_event_name": "SessionStart"}',
            {"session_id": "a", "hook_event_name": "SessionStart"},
        ),
        (
            b'  \n{"cwd": "/p\\u00e9", "n": 1.5, "k": [true, null, NaN]}\n',
            {
                "cwd": "/p\u00e9",
                "n": 1.5,
                "k": [True, None, pytest.approx(float("nan"), nan_ok=True)],
            },
        ),
        (b"", {}),
        (b"  \n ", {}),
        (b"[]", None),
        (b'"x"', None),
        (b"{", None),
        (b'{"a": 1} {"b": 2}', None),
        (b"\xff", None),
        (b"{'single': 'quotes'}", None),
        (b"[" * 50_000, None),
    ],
)
def test_parse_hook_json(raw: bytes, expected: object) -> None:
    assert pm_hot.parse_hook_json(raw) == expected


def test_parse_hook_json_agrees_with_the_json_package() -> None:
    import json

    for text in ('{"a": {"b": [1, 2, {"c": "\\ud83d\\ude00"}]}}', '{"x": -0.5e3, "y": ""}'):
        assert pm_hot.parse_hook_json(text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    ("value", "expected", "note"),
    [
        (None, 120, ""),
        ("", 120, ""),
        ("150", 150, ""),
        (" 90 ", 90, ""),
        ("0", 120, "ignoring CLAUDE_PLUGIN_OPTION_TOKEN_TARGET='0' (want a whole number >= 1)"),
        ("1e3", 120, "ignoring CLAUDE_PLUGIN_OPTION_TOKEN_TARGET='1e3' (want a whole number >= 1)"),
    ],
)
def test_int_option(
    value: str | None,
    expected: int,
    note: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if value is None:
        monkeypatch.delenv("CLAUDE_PLUGIN_OPTION_TOKEN_TARGET", raising=False)
    else:
        monkeypatch.setenv("CLAUDE_PLUGIN_OPTION_TOKEN_TARGET", value)
    assert pm_hot.int_option("TOKEN_TARGET", 120, 1) == expected
    err = capsys.readouterr().err
    assert err == (f"permanent-memory hook: {note}; using 120\n" if note else "")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("true", True),
        ("TRUE", True),
        ("1", True),
        ("yes", True),
        ("on", True),
        ("false", False),
        ("0", False),
        ("", False),
        ("no", False),
        ("off", False),
    ],
)
def test_every_turn(value: str, expected: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_OPTION_EVERY_TURN", value)
    assert pm_hot.every_turn() is expected


def test_cache_entry_round_trip_and_damage(tmp_path: Path) -> None:
    path = tmp_path / "entry"
    block = "[permanent-memory | trust:file]\nEpic é:\n"
    path.write_bytes(pm_hot.cache_entry("k", block))
    assert pm_hot.read_cache_entry(str(path), "k") == block
    assert pm_hot.read_cache_entry(str(path), "other") is None
    good = path.read_bytes()
    for damaged in (good[:-1], good + b"x", good.replace(b"\xc3\xa9", b"e!"), b"", b"\n\n\n"):
        path.write_bytes(damaged)
        assert pm_hot.read_cache_entry(str(path), "k") is None
    assert pm_hot.read_cache_entry(str(tmp_path / "missing"), "k") is None


def test_read_memory_file(tmp_path: Path) -> None:
    path = tmp_path / "permanent_memory.md"
    path.write_bytes(b"## Epic: A\n")
    assert pm_hot.read_memory_file(str(path)) == (b"## Epic: A\n", 11)
    with open(path, "wb") as handle:
        handle.truncate(pm_hot.CERTAIN_SKIP_BYTES + 1)
    assert pm_hot.read_memory_file(str(path)) == (None, pm_hot.CERTAIN_SKIP_BYTES + 1)
    with pytest.raises(FileNotFoundError):
        pm_hot.read_memory_file(str(tmp_path / "missing"))
    with pytest.raises(NotADirectoryError):
        pm_hot.read_memory_file(str(path / "below-a-file"))
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        pm_hot.read_memory_file(str(tmp_path / "fifo"))


def test_code_stamp_names_every_rendering_module() -> None:
    assert set(pm_hot.RENDER_MODULES) == {
        "pm_hot.py",
        "pm_load.py",
        "pm_parse.py",
        "pm_render.py",
        "pm_tokens.py",
        "memory_text.py",
    }
    assert "-" not in pm_hot.code_stamp().split(",")  # every one of them exists
