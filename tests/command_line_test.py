# shared/command_line.py, through each skill's copy: the one command-line design of both skills.
from __future__ import annotations

from types import ModuleType

import pytest

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
