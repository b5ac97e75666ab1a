# `permanent_memory.py git-setup`: tell git to merge permanent memory with
# `permanent_memory.py merge` (pm_merge_driver). See references/git.md.
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..core import pm_cli
from ..core.pm_cli import MEMORY_FILE, PROG, project_dir
from ..core.pm_errors import LoaderError
from ..shared import git_config
from .pm_archive_plan import ARCHIVE_DIR

HELP = "make git merge permanent memory with this script"

DRIVER = "permanent-memory"
DRIVER_NAME = "permanent memory: epics merged by ID (permanent_memory.py merge)"
COMMENT = "# project-memory: merge permanent memory epic by epic (permanent_memory.py git-setup)"
# The skill's entry script beside the package; a pip install has none, and runs the module.
SCRIPT = Path(__file__).resolve().parents[2] / "permanent_memory.py"
MODULE = "project_memory_loader.permanent_memory"


def driver_command(python: str, script: Path) -> str:
    """What git runs (git_config.driver_command, both skills' driver line)."""
    return git_config.driver_command(python, script, MODULE, PROG)


def attribute_lines(root: Path, project: Path) -> list[str]:
    try:
        relative = project.resolve().relative_to(root.resolve())
    except ValueError:
        raise LoaderError(f"{project} is not inside the git work tree {root}") from None
    memory = (relative / MEMORY_FILE).as_posix()
    if any(char.isspace() for char in memory):
        raise LoaderError(f"{memory}: a path with spaces cannot be written in .gitattributes")
    archive = (relative / MEMORY_FILE.parent / ARCHIVE_DIR).as_posix()
    return [f"{memory} merge={DRIVER}", f"{archive}/*.md merge={DRIVER}"]


def git_setup(args: argparse.Namespace) -> int:
    project = project_dir(args.project_dir)
    root = git_config.git_root(project)
    lines = attribute_lines(root, project)
    out = sys.stdout
    added = git_config.add_attributes(root, COMMENT, lines)
    for line in lines:
        verb = "added" if line in added else "already has"
        out.write(f"{git_config.ATTRIBUTES}: {verb} {line}\n")
    command = driver_command(sys.executable, SCRIPT)
    git_config.set_merge_driver(root, DRIVER, DRIVER_NAME, command, out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "git-setup",
        "Add the merge=permanent-memory lines to the repository's .gitattributes and define the "
        "driver in its own git config (.git/config), with absolute paths to this interpreter "
        "and script. Safe to run again; changes nothing else.",
    )
    pm_cli.add_project_dir(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: git_setup(args))
