# shared/command_line.py, through each skill's copy: the one command-line design of both skills.
from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import LOADER_DIR as LOADER
from conftest import MANAGER_DIR as MANAGER

COMMANDS = {"load": "x.load", "load-last": "x.load_last", "show": "x.show"}


def usage_of(command: str) -> str:
    return f"usage: prog {command} [-h] ...\n"


@pytest.mark.parametrize(
    ("argv0", "typed"),
    [
        ("/plugin/skills/s/scripts/tool.py", "tool.py"),
        ("/venv/bin/tool-cli", "tool-cli"),
        ("C:\\venv\\Scripts\\tool-cli.exe", "tool.py"),  # not this platform's separator
        ("tool-cli.EXE", "tool-cli"),
        ("", "tool.py"),
    ],
)
def test_typed_name(command_line: ModuleType, argv0: str, typed: str) -> None:
    assert command_line.typed_name(argv0, "tool.py", "tool-cli") == typed


@pytest.mark.parametrize(
    ("word", "near"),
    [("laod-last", "load-last"), ("shwo", "show"), ("lod", "load"), ("zzz", None)],
)
def test_closest(command_line: ModuleType, word: str, near: str | None) -> None:
    assert command_line.closest(word, list(COMMANDS)) == near


def test_a_typo_is_an_invalid_choice_with_the_closest_command_s_usage(
    command_line: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        command_line.dispatch(["shwo", "FEAT-1"], COMMANDS, "prog", "About.", usage_of, "load")
    assert stop.value.code == 2
    assert capsys.readouterr() == (
        "",
        "usage: prog show [-h] ...\n"
        "prog: error: invalid choice: 'shwo'; did you mean 'show'? "
        "(choose from load, load-last, show)\n",
    )


def test_a_word_near_no_command_gets_the_script_s_usage(
    command_line: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        command_line.dispatch(["zzz"], COMMANDS, "prog", "About.", usage_of)
    assert capsys.readouterr().err == (
        "usage: prog [-h] COMMAND ...\n"
        "prog: error: invalid choice: 'zzz' (choose from load, load-last, show)\n"
    )


def test_an_option_first_names_the_default_command(
    command_line: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        command_line.dispatch(["--now", "x"], COMMANDS, "prog", "About.", usage_of, "load")
    assert capsys.readouterr().err == (
        "usage: prog load [-h] ...\n"
        "prog: error: invalid choice: '--now'; a command comes first, as in 'load --now' "
        "(choose from load, load-last, show)\n"
    )


def test_no_word_without_a_default_is_a_usage_error(
    command_line: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        command_line.dispatch([], COMMANDS, "prog", "About.", usage_of)
    assert stop.value.code == 2
    assert capsys.readouterr().err == (
        "usage: prog [-h] COMMAND ...\n"
        "prog: error: a command is required (choose from load, load-last, show)\n"
    )


class Expected(Exception):
    hint = "do this instead"


def test_run_prints_an_expected_failure_and_its_hint(
    command_line: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    def fails() -> int:
        raise Expected("it went wrong")

    assert command_line.run(fails, (Expected,), prints_results=False) == 1
    assert capsys.readouterr() == ("", "it went wrong\ndo this instead\n")


def test_run_lets_a_bug_show(command_line: ModuleType) -> None:
    def bug() -> int:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        command_line.run(bug, (Expected,), prints_results=False)


def test_a_reader_that_goes_away_is_no_traceback(tmp_path: Path) -> None:
    # `git-setup | head -1`: the reader closes the pipe after one line; the command stops
    # quietly (exit 1, nothing on stderr) instead of a BrokenPipeError traceback.
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    (tmp_path / "memory").mkdir()
    for script in (MANAGER / "memory_manager.py", LOADER / "permanent_memory.py"):
        args = (
            ["--memory-dir", str(tmp_path / "memory")]
            if "manager" in script.name
            else ["--project-dir", str(tmp_path)]
        )
        shell = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))} git-setup "
        shell += " ".join(shlex.quote(a) for a in args) + " | head -c 1; exit ${PIPESTATUS[0]}"
        done = subprocess.run(
            ["bash", "-c", shell], capture_output=True, text=True, timeout=60, cwd=tmp_path
        )
        assert "Traceback" not in done.stderr, done.stderr
        assert done.stderr == "" and done.returncode in (0, 1), (done.returncode, done.stderr)
