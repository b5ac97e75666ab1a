"""pm_hook: the hook command (hook JSON, plugin options, the cache miss rendered and stored)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from project_memory_loader import pm_hook
from project_memory_loader.core import pm_cache
from project_memory_loader.core.pm_limits import HARD_CAP, STALE_DAYS, TOKEN_TARGET
from project_memory_loader.core.pm_render import STAMP
from support import (
    HOOK_LIMIT,
    LOADER,
    LOADER_STAMP,
    MANAGER,
    assert_no_traceback,
    check_hook_stdin_samples,
    clean_env,
    hook_fuzz,
    hook_payload,
    run,
    run_command,
)

SEED = (
    Path(__file__).resolve().parent / "cases" / "seed-example" / "permanent_memory.md"
).read_bytes()

DEFAULTS = (TOKEN_TARGET, HARD_CAP, STALE_DAYS)  # the plugin options' defaults


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
    assert pm_hook.parse_hook_json(raw) == expected


def test_parse_hook_json_agrees_with_the_json_package() -> None:
    import json

    for text in ('{"a": {"b": [1, 2, {"c": "\\ud83d\\ude00"}]}}', '{"x": -0.5e3, "y": ""}'):
        assert pm_hook.parse_hook_json(text.encode()) == json.loads(text)


@pytest.mark.parametrize(
    ("value", "expected", "note"),
    [
        (None, TOKEN_TARGET, ""),
        ("", TOKEN_TARGET, ""),
        ("150", 150, ""),
        (" 90 ", 90, ""),
        (
            "0",
            TOKEN_TARGET,
            "ignoring CLAUDE_PLUGIN_OPTION_TOKEN_TARGET='0' (want a whole number >= 1)",
        ),
        (
            "1e3",
            TOKEN_TARGET,
            "ignoring CLAUDE_PLUGIN_OPTION_TOKEN_TARGET='1e3' (want a whole number >= 1)",
        ),
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
    assert pm_hook.int_option("TOKEN_TARGET", TOKEN_TARGET, 1) == expected
    err = capsys.readouterr().err
    assert err == (f"permanent-memory hook: {note}; using {TOKEN_TARGET}\n" if note else "")


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
    assert pm_hook.every_turn() is expected


def test_render_and_store_writes_an_entry_the_hit_path_accepts(tmp_path: Path) -> None:
    slot = tmp_path / "cache" / "blocks" / "slot.txt"
    options = (TOKEN_TARGET, HARD_CAP, 1000)
    block, status = pm_hook.render_and_store(
        SEED, len(SEED), options, str(slot), "content-1", str(tmp_path)
    )
    assert block.startswith(STAMP + "\nEpic FEAT-007 (JWT auth):\n")
    assert status == "2 epics, 80 tokens"
    key = pm_cache.block_key(options, "content-1", "")  # the seed names no paths
    assert pm_cache.read_cache_entry(str(slot), key) == f"{status}\n{block}"
    assert pm_cache.read_cache_entry(str(slot), "key-2") is None
    assert pm_cache.read_paths(str(slot), "content-1") == []
    assert pm_cache.read_paths(str(slot), "content-2") is None


def test_render_and_store_without_a_cache(tmp_path: Path) -> None:
    block, _status = pm_hook.render_and_store(SEED, len(SEED), DEFAULTS, "", "", str(tmp_path))
    assert block.startswith(STAMP)
    assert list(tmp_path.iterdir()) == []


def test_render_and_store_reports_an_unwritable_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    slot = blocker / "blocks" / "slot.txt"
    block, _status = pm_hook.render_and_store(
        SEED, len(SEED), DEFAULTS, str(slot), "k", str(tmp_path)
    )
    assert block.startswith(STAMP)
    assert capsys.readouterr().err.startswith(
        f"permanent-memory hook: cannot write the cache in {slot.parent}: "
    )


# ---------------------------------------------------------------------------------------------
# Plugin options with bad values reach the hooks as environment variables.

BAD_OPTIONS = [
    ("CLAUDE_PLUGIN_OPTION_HARD_CAP", "20"),  # allowed by plugin.json's min, below the loader's
    ("CLAUDE_PLUGIN_OPTION_HARD_CAP", "-5"),
    ("CLAUDE_PLUGIN_OPTION_HARD_CAP", "1e9"),
    ("CLAUDE_PLUGIN_OPTION_TOKEN_TARGET", "abc"),
    ("CLAUDE_PLUGIN_OPTION_TOKEN_TARGET", "5000"),
    ("CLAUDE_PLUGIN_OPTION_STALE_DAYS", "0"),
    ("CLAUDE_PLUGIN_OPTION_STALE_DAYS", "NaN"),
    ("CLAUDE_PLUGIN_OPTION_EVERY_TURN", "maybe"),
    ("CLAUDE_PLUGIN_OPTION_MEMORY_DIR", "\x01"),
]


@pytest.mark.parametrize(
    ("name", "value"), BAD_OPTIONS, ids=[f"{n[21:]}={v!r}" for n, v in BAD_OPTIONS]
)
def test_loader_hook_option_out_of_range(
    loader_project: Path, tmp_path: Path, name: str, value: str
) -> None:
    env = clean_env(tmp_path)
    expected = run(LOADER, ["load", "--project-dir", str(loader_project)], env=env).out
    env[name] = value
    res = run(LOADER, ["hook"], env=env, stdin=hook_payload(loader_project, "opt"))
    assert_no_traceback(res, "hook")
    assert res.code == 0
    if name.endswith(("HARD_CAP", "TOKEN_TARGET", "STALE_DAYS")) and value not in ("20", "5000"):
        # A bad value is ignored with a note; the default block is emitted.
        assert res.out == expected, (res.out, res.err)
        assert res.err.strip(), "bad option value ignored without a note"
    else:
        assert res.out.startswith(LOADER_STAMP), (res.out, res.err)
    mres = run(
        MANAGER, ["hook"], env=env, stdin=hook_payload(loader_project, "opt", "SessionStart")
    )
    assert_no_traceback(mres, "manager hook")
    assert mres.code == 0


# Fuzzing the hook's stdin: arbitrary JSON and bytes.


def test_loader_hook_stdin(monkeypatch: Any) -> None:
    counts = hook_fuzz(
        monkeypatch, "project_memory_loader.permanent_memory", HOOK_LIMIT, LOADER_STAMP
    )
    print("loader hook fuzz:", counts)
    assert counts["emitted"] > 0, "no generated payload ever reached the project"


def test_loader_hook_stdin_subprocess(tmp_path: Path) -> None:
    check_hook_stdin_samples(LOADER, HOOK_LIMIT, tmp_path)


def test_a_fresh_interpreter_reports_input_that_is_not_json(tmp_path: Path) -> None:
    # Where json.decoder is not loaded, the C scanner fails on bad input with a SystemError on
    # Python 3.11; the hook still says what is wrong, not that it broke.
    import sys

    from conftest import LOADER_DIR

    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": str(tmp_path)}
    for text in ("{", "[1", "nope"):
        done = run_command(
            [sys.executable, LOADER_DIR / "permanent_memory.py", "hook"],
            env=env,
            stdin=text.encode(),
        )
        assert (done.code, done.out, done.err) == (
            0,
            "",
            "permanent-memory hook: stdin is not Claude Code hook JSON; nothing emitted\n",
        )
