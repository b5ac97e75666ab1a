"""Real git in temporary repositories for the merge-driver tests: no network, and none of the
user's or the system's git config (GIT_CONFIG_GLOBAL and HOME point into the test's folder)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import LOADER_DIR, MANAGER_DIR

LOADER = LOADER_DIR / "permanent_memory.py"
MANAGER = MANAGER_DIR / "memory_manager.py"
TIMEOUT = 120
MEMORY = Path(".claude") / "memory" / "permanent_memory.md"


class Run(NamedTuple):
    code: int
    out: str
    err: str


def git_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".gitconfig"
    config.touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CLAUDE_"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_GLOBAL=str(config),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_TERMINAL_PROMPT="0",
        GIT_EDITOR="true",
        NO_COLOR="1",
    )
    return env


class Repo:
    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path = path
        self.env = env

    def run(self, *args: str | Path, check: bool = True) -> Run:
        done = subprocess.run(
            [str(a) for a in args],
            cwd=self.path,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        result = Run(done.returncode, done.stdout, done.stderr)
        if check and done.returncode != 0:
            raise AssertionError(f"{args} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
        return result

    def git(self, *args: str, check: bool = True) -> Run:
        return self.run("git", *args, check=check)

    def loader(self, *args: str, check: bool = True) -> Run:
        return self.run(sys.executable, LOADER, *args, check=check)

    def manager(self, *args: str, check: bool = True) -> Run:
        return self.run(sys.executable, MANAGER, *args, check=check)

    def write(self, relative: str | Path, text: str) -> None:
        path = self.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def read(self, relative: str | Path) -> str:
        return (self.path / relative).read_text(encoding="utf-8")

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)


def make_repo(tmp_path: Path) -> Repo:
    if shutil.which("git") is None:
        pytest.fail("git is required for these tests")
    path = tmp_path / "repo"
    path.mkdir()
    repo = Repo(path, git_env(tmp_path / "home"))
    repo.git("init", "-q", "-b", "main")
    return repo
