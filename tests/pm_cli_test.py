"""The shared command line (pm_cli) as the load and inspect commands use it: finding the
project and the file, one-line errors and usage errors, the output formats, --explain and the
tokenizer option; inspect's table and colour."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from project_memory_loader import permanent_memory
from support import Result

CASES = Path(__file__).resolve().parent / "cases"
SEED = CASES / "seed-example" / "permanent_memory.md"
SEED_BLOCK = (CASES / "seed-example" / "expected.txt").read_text()
NOW = ["--now", "2026-06-01T00:00:00Z"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude" / "memory").mkdir(parents=True)
    shutil.copy(SEED, folder / ".claude" / "memory" / "permanent_memory.md")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return folder


# One table, two tests: how the project and file are found.
FINDING = [
    (["load", "--project-dir", "{project}"], SEED_BLOCK),
    (["load", "--file", "{project}/.claude/memory/permanent_memory.md"], SEED_BLOCK),
    (["load", "--project-dir", "{tmp}"], ""),  # no memory file: nothing, exit 0
]


@pytest.mark.parametrize(("args", "expected"), FINDING)
def test_finding_the_file(args: list[str], expected: str, project: Path, loader: Any) -> None:
    filled = [a.format(project=project, tmp=project.parent) for a in args]
    assert loader([*filled, *NOW]) == Result(0, expected, "")


def test_project_dir_from_the_environment_then_cwd(
    project: Path, monkeypatch: pytest.MonkeyPatch, loader: Any
) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    assert loader(["load", *NOW]) == Result(0, SEED_BLOCK, "")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert loader(["load", *NOW]) == Result(0, "", "")  # cwd is the project's parent
    monkeypatch.chdir(project)
    assert loader(["load", *NOW]) == Result(0, SEED_BLOCK, "")


def test_load_is_the_command_when_no_word_is_given(
    project: Path, monkeypatch: pytest.MonkeyPatch, loader: Any
) -> None:
    monkeypatch.chdir(project)
    loaded = loader(["load"])
    assert loaded.code == 0 and loaded.out.startswith("[permanent-memory | trust:file]\n")
    assert loader([]) == loaded


def test_an_option_before_any_command_names_load(loader: Any) -> None:
    result = loader([*NOW])
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith("usage: permanent_memory.py load [-h]")
    assert result.err.endswith(
        "permanent_memory.py: error: invalid choice: '--now'; a command comes first, as in "
        "'load --now' (choose from load, hook, inspect, show, search, doctor, add, archive, "
        "import, check, merge, git-setup, propose, review)\n"
    )


def test_file_from_stdin(loader: Any) -> None:
    assert loader(["load", "--file", "-", *NOW], SEED.read_bytes()) == Result(0, SEED_BLOCK, "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["load", "--file", "{tmp}/missing.md"],
            "permanent memory file not found: {tmp}/missing.md\n",
        ),
        (
            ["load", "--project-dir", "{tmp}/nowhere"],
            "project directory not found: {tmp}/nowhere\n",
        ),
        (
            ["load", "--file", "{project}/.claude/memory/manual_overrides.md"],
            "{project}/.claude/memory/manual_overrides.md: manual_overrides.md is "
            "user-curated and never loaded\n",
        ),
        (["load", "--file", "{project}"], "cannot read {project}: Is a directory\n"),
        (["load", "--file", "/dev/zero"], "cannot read /dev/zero: not a regular file\n"),
        (
            ["inspect", "--project-dir", "{tmp}/nowhere"],
            "project directory not found: {tmp}/nowhere\n",
        ),
    ],
)
def test_expected_errors_exit_1_with_one_line(
    args: list[str], message: str, project: Path, loader: Any
) -> None:
    (project / ".claude" / "memory" / "manual_overrides.md").write_text("## Epic: X\n")
    fill = {"project": project, "tmp": project.parent}
    assert loader([a.format(**fill) for a in args]) == Result(1, "", message.format(**fill))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["load", "--target", "19"], "argument --target: must be at least 20, got 19"),
        (["load", "--hard-cap", "39"], "argument --hard-cap: must be at least 40, got 39"),
        (["load", "--stale-days", "x"], "argument --stale-days: not a whole number: 'x'"),
        (
            ["load", "--now", "yesterday"],
            "argument --now: not an ISO 8601 date or date-time: 'yesterday'",
        ),
        (["load", "--format", "xml"], "argument --format: invalid choice: 'xml'"),
        (["load", "--tokenizer", "gpt"], "argument --tokenizer: invalid choice: 'gpt'"),
        (["load", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors_exit_2(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        permanent_memory.main(args)
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: permanent_memory.py ")
    assert message in err.splitlines()[-1]


def test_json_output(project: Path, loader: Any) -> None:
    result = loader(["load", "--project-dir", str(project), "--format", "json", *NOW])
    assert (result.code, result.err) == (0, "")
    data = json.loads(result.out)
    assert data["block"] == SEED_BLOCK
    assert (data["tokenizer"], data["level"], data["skipped"]) == ("cl100k_base", "L0", False)
    assert {k: v["tokens"] for k, v in data["levels"].items()} == {
        "L0": 80,
        "L1": 80,
        "L2": 80,
        "L3": 40,
        "IDS": 32,
    }
    assert [(e["id"], e["stale"], e["age_days"]) for e in data["epics"]] == [
        ("FEAT-007", False, 16),
        ("FEAT-008", False, 11),
    ]


def test_explain_goes_to_stderr(project: Path, loader: Any) -> None:
    result = loader(["load", "--project-dir", str(project), "--explain", *NOW])
    assert (result.code, result.out) == (0, SEED_BLOCK)
    path = project / ".claude" / "memory" / "permanent_memory.md"
    lines = result.err.splitlines()
    assert lines[0] == f"file: {path} (496 bytes, 2 epics)"
    assert lines[1].startswith("tokenizer: cl100k_base (tiktoken, ")
    assert lines[3:] == [
        "level  tokens  leaves out",
        "L0         80  nothing                                            <- chosen",
        "L1         80  tentative lines",
        "L2         80  tentative and patterns lines",
        "L3         40  all sub-lines",
        "IDS        32  intents, and the oldest epics beyond the hard cap",
        "chosen: L0, everything within the target (120)",
    ]


def test_estimate_flag(project: Path, loader: Any) -> None:
    result = loader(
        ["load", "--project-dir", str(project), "--tokenizer", "estimate", "--explain", *NOW]
    )
    expected = (CASES / "estimate-seed-example" / "expected.txt").read_text()
    assert (result.code, result.out) == (0, expected)
    assert result.err.splitlines()[1] == (
        "tokenizer: estimate (UTF-8 bytes, never fewer than the real count; estimate requested)"
    )


def test_inspect(project: Path, loader: Any) -> None:
    result = loader(["inspect", "--project-dir", str(project), *NOW])
    assert (result.code, result.err) == (0, "")
    out = result.out
    assert "\x1b[" not in out  # not a terminal: no colour
    assert out.splitlines()[4:7] == [
        "epic      intent           completed             age (days)  stale  tokens",
        "FEAT-007  JWT auth         2026-05-15T14:00:00Z          16  no         36",
        "FEAT-008  Profile avatars  2026-05-20T09:30:00Z          11  no         36",
    ]
    assert out.endswith("chosen: L0, everything within the target (120)\n")
    nothing = loader(["inspect", "--project-dir", str(project.parent)])
    assert (nothing.code, nothing.out) == (
        0,
        f"no permanent memory file at {project.parent}/.claude/memory/permanent_memory.md\n",
    )


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_inspect_colour_on_a_terminal_unless_no_color(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    permanent_memory.main(["inspect", "--project-dir", str(project), *NOW])
    [chosen] = [line for line in terminal.getvalue().splitlines() if "<- chosen" in line]
    assert chosen.startswith("\x1b[1mL0 ") and chosen.endswith("\x1b[0m")
    monkeypatch.setenv("NO_COLOR", "1")
    plain = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", plain)
    permanent_memory.main(["inspect", "--project-dir", str(project), *NOW])
    assert "\x1b[" not in plain.getvalue()


def test_inspect_json_is_the_load_json(project: Path, loader: Any) -> None:
    inspected = loader(["inspect", "--project-dir", str(project), "--format", "json", *NOW])
    loaded = loader(["load", "--project-dir", str(project), "--format", "json", *NOW])
    assert json.loads(inspected.out) == json.loads(loaded.out)
