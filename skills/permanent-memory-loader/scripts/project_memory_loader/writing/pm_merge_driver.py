# `permanent_memory.py merge BASE OURS THEIRS [PATH]`: the git merge driver for
# permanent_memory.md (git-setup tells git to use it). The merge itself is pm_merge; this
# module reads and writes the files git names. Exit 0 when clean, 1 when conflicts are left
# inside epics, 2 when the files cannot be merged (git then reports the conflict). See
# references/git.md.
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..core import pm_cli
from ..core.pm_cli import PROG
from ..core.pm_errors import MemoryFileError
from ..shared import memory_io
from .pm_merge import merge_permanent
from .pm_write_file import encode_as, read_for_writing

HELP = "git merge driver: two versions of the memory file, epic by epic"


def say(line: str) -> None:
    pm_cli.say(f"{PROG} merge: {line}")


def merge(args: argparse.Namespace) -> int:
    shown = args.path or args.ours
    try:
        base, ours, theirs = (
            read_for_writing(Path(p)) for p in (args.base, args.ours, args.theirs)
        )
    except MemoryFileError as exc:
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


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "merge",
        "Merge OURS and THEIRS (edited copies of BASE) by epic ID and write the result to OURS. "
        "Exit 0 when clean, 1 when conflict markers are left inside an epic. git-setup makes "
        "git call this as: merge %%O %%A %%B %%P.",
    )
    parser.add_argument("base", metavar="BASE", help="the common ancestor (%%O)")
    parser.add_argument(
        "ours", metavar="OURS", help="our version; the result is written here (%%A)"
    )
    parser.add_argument("theirs", metavar="THEIRS", help="their version (%%B)")
    parser.add_argument(
        "path", metavar="PATH", nargs="?", help="the file's path, for messages (%%P)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return merge(pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv))
