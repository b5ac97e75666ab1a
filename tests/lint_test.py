# The conventions' lint and type gates, run by the suite so CI enforces them: ruff (lint and
# format) on every Python file git tracks, mypy --strict on the product's source and tooling.
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LOADER_DIR, MANAGER_DIR, ROOT

BIN = Path(sys.executable).parent


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; it is in the [test] extras")
    return path


def _python_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "*.py", "scripts/bench", "scripts/bench-client"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.split()
    return [name for name in listed if "/_vendor/" not in name]


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_lint_and_format() -> None:
    files = _python_files()
    assert "scripts/dev.py" in files and "scripts/bench" in files
    lint = _run([_tool("ruff"), "check", *files])
    assert lint.returncode == 0, lint.stdout + lint.stderr
    form = _run([_tool("ruff"), "format", "--check", *files])
    assert form.returncode == 0, form.stdout + form.stderr


@pytest.mark.parametrize(
    "target",
    [
        [str(LOADER_DIR)],
        [str(MANAGER_DIR)],
        ["scripts/dev.py", "scripts/e2e/fake_anthropic.py"],
        ["--scripts-are-modules", "scripts/bench"],
        ["--scripts-are-modules", "scripts/bench-client"],
    ],
    ids=["loader", "manager", "tooling", "bench", "bench-client"],
)
def test_mypy_strict(target: list[str]) -> None:
    result = _run([_tool("mypy"), "--strict", *target])
    assert result.returncode == 0, result.stdout + result.stderr
