# `memory_manager.py git-setup`: make git merge session snapshots with `memory_manager.py merge`
# (a merge= line in .gitattributes, the driver in the repository's own git config).
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import mm_cli
from .mm_errors import CommandError
from .shared import git_config

if TYPE_CHECKING:
    import argparse

DRIVER = "ski-memory"
# The snapshots' own names (`YYYY-MM-DD-HH-MM-{project}.md`), not every .md in the folder.
SNAPSHOT_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]-*.md"
DRIVER_NAME = "session snapshots: one session merged by key (memory_manager.py merge)"
COMMENT = "# project-memory: merge session snapshots by key (memory_manager.py git-setup)"
# The skill's entry script beside the package; a pip install has none, and runs the module.
SCRIPT = Path(__file__).resolve().parents[1] / "memory_manager.py"
MODULE = "ski_memory_manager.memory_manager"


HELP = "make git merge session snapshots with this script"
DESCRIPTION = (
    "Add a merge=ski-memory line for the memory directory's snapshots "
    "(YYYY-MM-DD-HH-MM-*.md) to the "
    "repository's .gitattributes and define the driver in its own git config, with "
    "absolute paths to this interpreter and script. Safe to run again."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mm_cli.add_command(commands, "git-setup", HELP, DESCRIPTION, output_format=False)


def main(argv: Sequence[str]) -> int:
    return mm_cli.run(git_setup, mm_cli.parse_command("git-setup", add_parser, argv))


def driver_command(python: str, script: Path) -> str:
    """What git runs (git_config.driver_command, both skills' driver line)."""
    return git_config.driver_command(python, script, MODULE, mm_cli.PROG)


def git_setup(args: argparse.Namespace) -> int:
    memory_dir = mm_cli.memory_dir_from(args.memory_dir)
    start = memory_dir if memory_dir.is_dir() else mm_cli.project_dir(os.environ)
    root = git_config.git_root(start)
    try:
        relative = memory_dir.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise CommandError(
            f"memory directory {memory_dir} is not inside the git work tree {root}"
        ) from None
    if any(char.isspace() for char in relative):
        raise CommandError(f"{relative}: a path with spaces cannot be written in .gitattributes")
    line = f"{relative}/{SNAPSHOT_GLOB} merge={DRIVER}"
    added = git_config.add_attributes(root, COMMENT, [line])
    out = sys.stdout
    out.write(f"{git_config.ATTRIBUTES}: {'added' if added else 'already has'} {line}\n")
    older = f"{relative}/*.md merge={DRIVER}"
    # add_attributes has just read it: a regular UTF-8 file within its size limit.
    written = (root / git_config.ATTRIBUTES).read_text(encoding="utf-8")
    if older in {text.strip() for text in written.splitlines()}:
        mm_cli.say(
            f"note: {git_config.ATTRIBUTES} still has {older}, which earlier versions wrote and "
            "which claims every .md there; remove that line"
        )
    command = driver_command(sys.executable, SCRIPT)
    git_config.set_merge_driver(root, DRIVER, DRIVER_NAME, command, out)
    return 0
