# `permanent_memory.py merge` (the git merge driver for permanent_memory.md) and
# `permanent_memory.py git-setup` (which tells git to use it). The merge itself is pm_merge;
# this module reads and writes the files git names. See references/git.md.
from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import memory_io
from pm_cli import MEMORY_FILE, PROG, LoadError, project_dir
from pm_merge import merge_permanent
from pm_write_archive import ARCHIVE_DIR

DRIVER = "permanent-memory"
DRIVER_NAME = "permanent memory: epics merged by ID (permanent_memory.py merge)"
COMMENT = "# project-memory: merge permanent memory epic by epic (permanent_memory.py git-setup)"
SCRIPT = Path(__file__).resolve().parent / "permanent_memory.py"


def say(line: str) -> None:
    sys.stderr.write(f"{PROG} merge: {line}\n")


def cmd_merge(args: argparse.Namespace) -> int:
    from permanent_memory_write import WriteError, encode_as, read_for_writing

    shown = args.path or args.ours
    try:
        base, ours, theirs = (
            read_for_writing(Path(p)) for p in (args.base, args.ours, args.theirs)
        )
    except WriteError as exc:
        say(f"{exc}; resolve {shown} by hand (git show :2:{shown} and :3:{shown} are the sides)")
        return 2
    if ours is None or theirs is None:
        say(f"{args.ours if ours is None else args.theirs}: not found")
        return 2
    merged = merge_permanent(base.text if base else "", ours.text, theirs.text)
    try:
        memory_io.atomic_write(Path(args.ours), encode_as(merged.text, ours), ours.mode)
    except memory_io.MemoryIOError as exc:
        say(str(exc))
        return 2
    for note in merged.notes:
        say(f"{shown}: {note}")
    if merged.clashes:
        say(
            f"{shown}: {merged.clashes} conflict(s) left inside their epics; edit them, then "
            f"run {PROG} check {shown}"
        )
        return 1
    return 0


def driver_command(python: str, script: Path) -> str:
    """What git runs. When the script or the interpreter is gone (the plugin moved), git's own
    line merge runs instead, so the result has conflict markers that `check` finds rather than
    one side silently kept."""
    run = f"{shlex.quote(python)} {shlex.quote(str(script))} merge %O %A %B %P"
    moved = shlex.quote(f"{PROG}: {script} not found; run git-setup again. Merged as plain text.")
    return (
        f"if test -x {shlex.quote(python)} && test -f {shlex.quote(str(script))}; then {run}; "
        f"else echo {moved} >&2; git merge-file -L ours -L base -L theirs %A %O %B; fi"
    )


def attribute_lines(root: Path, project: Path) -> list[str]:
    try:
        relative = project.resolve().relative_to(root.resolve())
    except ValueError:
        raise LoadError(f"{project} is not inside the git work tree {root}") from None
    memory = (relative / MEMORY_FILE).as_posix()
    if any(char.isspace() for char in memory):
        raise LoadError(f"{memory}: a path with spaces cannot be written in .gitattributes")
    archive = (relative / MEMORY_FILE.parent / ARCHIVE_DIR).as_posix()
    return [f"{memory} merge={DRIVER}", f"{archive}/*.md merge={DRIVER}"]


def cmd_git_setup(args: argparse.Namespace) -> int:
    project = project_dir(args.project_dir)
    root = memory_io.git_root(project)
    lines = attribute_lines(root, project)
    out = sys.stdout
    added = memory_io.add_attributes(root, COMMENT, lines)
    for line in lines:
        verb = "added" if line in added else "already has"
        out.write(f"{memory_io.ATTRIBUTES}: {verb} {line}\n")
    command = driver_command(sys.executable, SCRIPT)
    memory_io.set_merge_driver(root, DRIVER, DRIVER_NAME, command, out)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Merge permanent memory with git.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    merge = sub.add_parser(
        "merge",
        help="git merge driver: merge two versions of permanent_memory.md epic by epic",
        description="Merge OURS and THEIRS (edited copies of BASE) by epic ID and write the "
        "result to OURS. Exit 0 when clean, 1 when conflict markers are left inside an epic. "
        "git-setup makes git call this as: merge %%O %%A %%B %%P.",
    )
    merge.add_argument("base", metavar="BASE", help="the common ancestor (%%O)")
    merge.add_argument("ours", metavar="OURS", help="our version; the result is written here (%%A)")
    merge.add_argument("theirs", metavar="THEIRS", help="their version (%%B)")
    merge.add_argument(
        "path", metavar="PATH", nargs="?", help="the file's path, for messages (%%P)"
    )
    setup = sub.add_parser(
        "git-setup",
        help="make git merge permanent memory with this script",
        description="Add the merge=permanent-memory lines to the repository's .gitattributes "
        "and define the driver in its own git config (.git/config), with absolute paths to "
        "this interpreter and script. Safe to run again; changes nothing else.",
    )
    setup.add_argument(
        "--project-dir",
        help="project root (default: $CLAUDE_PROJECT_DIR, else the current directory)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    try:
        if args.command == "merge":
            return cmd_merge(args)
        return cmd_git_setup(args)
    except (LoadError, memory_io.MemoryIOError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
