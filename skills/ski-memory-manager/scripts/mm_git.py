# `memory_manager.py merge` (the git merge driver for session snapshots) and
# `memory_manager.py git-setup` (which tells git to use it). The merge itself is mm_merge.
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import memory_io
import mm_commands
import mm_merge
import mm_snapshot
import mm_store

PROG = "memory_manager.py"
DRIVER = "ski-memory"
DRIVER_NAME = "session snapshots: one session merged by key (memory_manager.py merge)"
COMMENT = "# project-memory: merge session snapshots by key (memory_manager.py git-setup)"
SCRIPT = Path(__file__).resolve().parent / "memory_manager.py"
GIT_TIMEOUT = 30


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
            timeout=GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.returncode if 0 <= done.returncode < 128 else None


def merge(args: Any) -> int:
    shown = args.path or args.ours
    ours_path = Path(args.ours)
    try:
        base = mm_store.read_text(Path(args.base)) if os.path.getsize(args.base) else ""
        ours, theirs = mm_store.read_text(ours_path), mm_store.read_text(Path(args.theirs))
        mode = os.stat(ours_path).st_mode & 0o7777
    except (mm_store.StoreError, OSError) as exc:
        mm_commands.say(
            f"{PROG} merge: {shown}: {exc}; resolve it by hand (git show :2:{shown} "
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
            mm_commands.say(f"{PROG} merge: {shown}: {exc}; merged as plain text{left}")
            return 1 if conflicts else 0
        mm_store.atomic_write(ours_path, _whole_file_conflict(ours, theirs).encode(), mode)
        mm_commands.say(
            f"{PROG} merge: {shown}: {exc}; both sides are left in the file between conflict "
            "markers: keep one"
        )
        return 1
    for name in merged.redacted:
        mm_commands.say(f"warning: {shown}: {name} held a secret; it is stored as [REDACTED]")
    mm_store.atomic_write(ours_path, merged.text.encode("utf-8"), mode)
    return 0


def driver_command(python: str, script: Path) -> str:
    """What git runs; git's own line merge when the script or interpreter has gone."""
    run = f"{shlex.quote(python)} {shlex.quote(str(script))} merge %O %A %B %P"
    moved = shlex.quote(f"{PROG}: {script} not found; run git-setup again. Merged as plain text.")
    return (
        f"if test -x {shlex.quote(python)} && test -f {shlex.quote(str(script))}; then {run}; "
        f"else echo {moved} >&2; git merge-file -L ours -L base -L theirs %A %O %B; fi"
    )


def git_setup(args: Any) -> int:
    memory_dir = (
        Path(args.memory_dir) if args.memory_dir else mm_commands.default_memory_dir(os.environ)
    )
    start = memory_dir if memory_dir.is_dir() else mm_commands.project_dir(os.environ)
    root = memory_io.git_root(start)
    try:
        relative = memory_dir.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise mm_commands.CommandError(
            f"memory directory {memory_dir} is not inside the git work tree {root}"
        ) from None
    if any(char.isspace() for char in relative):
        raise mm_commands.CommandError(
            f"{relative}: a path with spaces cannot be written in .gitattributes"
        )
    line = f"{relative}/*.md merge={DRIVER}"
    added = memory_io.add_attributes(root, COMMENT, [line])
    out = sys.stdout
    out.write(f"{memory_io.ATTRIBUTES}: {'added' if added else 'already has'} {line}\n")
    for key, value in (
        (f"merge.{DRIVER}.name", DRIVER_NAME),
        (f"merge.{DRIVER}.driver", driver_command(sys.executable, SCRIPT)),
    ):
        previous = memory_io.set_git_config(root, key, value)
        if previous == value:
            out.write(f"git config --local {key}: already set\n")
        elif previous is None:
            out.write(f"git config --local {key}: set\n")
        else:
            out.write(f"git config --local {key}: updated (it named another copy)\n")
    return 0
