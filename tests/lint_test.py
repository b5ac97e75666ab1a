# The conventions' lint and type gates, run by the suite so CI enforces them: ruff (lint and
# format) on every Python file git tracks, mypy --strict on the product's source and tooling.
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LOADER_DIR, MANAGER_DIR, ROOT
from support import run_command

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


def test_ruff_lint_and_format() -> None:
    files = _python_files()
    assert "scripts/dev.py" in files and "scripts/bench" in files
    lint = run_command([_tool("ruff"), "check", *files], env=os.environ, cwd=ROOT, timeout=300)
    assert lint.code == 0, lint.out + lint.err
    form = run_command(
        [_tool("ruff"), "format", "--check", *files], env=os.environ, cwd=ROOT, timeout=300
    )
    assert form.code == 0, form.out + form.err


@pytest.mark.parametrize(
    "target",
    [
        [str(LOADER_DIR)],
        [str(MANAGER_DIR)],
        [
            "scripts/dev.py",
            "scripts/e2e/fake_server.py",
            "scripts/e2e/fake_anthropic.py",
            "scripts/e2e/fake_responses.py",
        ],
        ["--scripts-are-modules", "scripts/bench"],
        ["--scripts-are-modules", "scripts/bench-client"],
    ],
    ids=["loader", "manager", "tooling", "bench", "bench-client"],
)
def test_mypy_strict(target: list[str]) -> None:
    result = run_command(
        [_tool("mypy"), "--strict", *target], env=os.environ, cwd=ROOT, timeout=300
    )
    assert result.code == 0, result.out + result.err
