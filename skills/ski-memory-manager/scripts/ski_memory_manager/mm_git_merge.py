# `memory_manager.py merge`: the git merge driver for session snapshots. Two saves of one session
# are merged by save's own rules (mm_merge); any other file as plain text, as git would have.
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import mm_cli, mm_merge, mm_snapshot, mm_store
from .shared import git_config, memory_io

if TYPE_CHECKING:
    import argparse


HELP = "git merge driver: one session saved on two branches"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    merge = commands.add_parser(
        "merge",
        help=HELP,
        description="Merge OURS and THEIRS, two saves of one session (BASE: their common "
        "ancestor), by save's own rules, and write the result to OURS; other files are merged "
        "as plain text. Exit 0 when merged, 1 when conflict markers are left. git-setup "
        "makes git call this as: merge %%O %%A %%B %%P.",
    )
    merge.add_argument("base", metavar="BASE", help="the common ancestor (%%O)")
    merge.add_argument("ours", metavar="OURS", help="our version; the result is written here")
    merge.add_argument("theirs", metavar="THEIRS", help="their version (%%B)")
    merge.add_argument("path", metavar="PATH", nargs="?", help="the file's path (%%P)")


def main(argv: Sequence[str]) -> int:
    args = mm_cli.parse_command("merge", add_parser, argv)
    return mm_cli.run(merge, args, prints_results=False)


def _whole_file_conflict(ours: str, theirs: str) -> str:
    def ended(text: str) -> str:
        return text if not text or text.endswith("\n") else text + "\n"

    return f"<<<<<<< ours\n{ended(ours)}=======\n{ended(theirs)}>>>>>>> theirs\n"


def _text_merge(base: str, ours: str, theirs: str) -> int | None:
    """git merge-file into OURS: the number of conflicts left, None when git could not run."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", ours, base, theirs],
            capture_output=True,
            timeout=git_config.GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode if 0 <= done.returncode < 128 else None


def merge(args: argparse.Namespace) -> int:
    shown = args.path or args.ours
    ours_path = Path(args.ours)
    try:
        base = mm_store.read_text(Path(args.base)) if os.path.getsize(args.base) else ""
        ours, theirs = mm_store.read_text(ours_path), mm_store.read_text(Path(args.theirs))
        mode = os.stat(ours_path).st_mode & 0o7777
    except (mm_store.StoreError, OSError) as exc:
        mm_cli.say(
            f"{mm_cli.PROG} merge: {shown}: {exc}; resolve it by hand (git show :2:{shown} "
            f"and :3:{shown} are the sides)"
        )
        return 2
    try:
        merged = mm_merge.merge_snapshot_texts(base, ours, theirs)
    except mm_snapshot.SnapshotError as exc:
        # Not two saves of one session (another kind of file, a damaged snapshot): what git
        # itself would have done, a line merge, and failing that both sides between markers.
        conflicts = _text_merge(args.base, args.ours, args.theirs)
        if conflicts is not None:
            left = f", {conflicts} conflict(s) left" if conflicts else ""
            mm_cli.say(f"{mm_cli.PROG} merge: {shown}: {exc}; merged as plain text{left}")
            return 1 if conflicts else 0
        memory_io.atomic_write(ours_path, _whole_file_conflict(ours, theirs).encode(), mode)
        mm_cli.say(
            f"{mm_cli.PROG} merge: {shown}: {exc}; both sides are left in the file between "
            "conflict markers: keep one"
        )
        return 1
    for name in merged.redacted:
        mm_cli.say(f"warning: {shown}: {name} held a secret; it is stored as [REDACTED]")
    memory_io.atomic_write(ours_path, merged.text.encode("utf-8"), mode)
    return 0
