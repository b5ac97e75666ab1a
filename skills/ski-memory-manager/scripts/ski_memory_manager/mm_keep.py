# `keep`: copy a captured snapshot (the PostCompact hook keeps them in the user's folder, outside
# the repository) into the project's session-memory folder, for a person who wants it beside the
# workflow's snapshots, or in git to share. The copy stays marked as captured; a file of that
# name that is not the same capture is never overwritten.
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import mm_cli, mm_save, mm_snapshot, mm_store
from .mm_errors import CommandError
from .shared import memory_io

if TYPE_CHECKING:
    import argparse


HELP = "copy a captured snapshot (a compacted session's) into memory/"
DESCRIPTION = (
    "Copy this project's newest captured snapshot (or the one of --session) from the user's "
    "folder into the memory directory, created when missing. A file of the same name that is "
    "not the same capture is left as it is. Prints the path written."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    keep = mm_cli.add_command(commands, "keep", HELP, DESCRIPTION)
    keep.add_argument("--project-name", metavar="P", help="default: any project's, the newest")
    keep.add_argument("--session", metavar="T", help="the capture's session (YYYY-MM-DD-HH-MM)")


def main(argv: Sequence[str]) -> int:
    return mm_cli.run(keep, mm_cli.parse_command("keep", add_parser, argv))


def keep(args: argparse.Namespace) -> int:
    if args.project_name is not None:
        mm_snapshot.validate_project_name(args.project_name)
    captured = mm_cli.captured_dir(os.environ)
    names = []
    if captured is not None and captured.is_dir():
        names = sorted(
            (
                name
                for name in mm_cli.memory_dir_names(captured)
                if (parts := mm_store.split_name(name)) is not None
                and args.project_name in (None, parts[1])
                and args.session in (None, parts[0])
            ),
            reverse=True,
        )
    if captured is None or not names:
        where = f" in {captured}" if captured is not None else ""
        raise CommandError(f"no captured snapshot of this project{where}")
    name = names[0]
    source = captured / name
    text = mm_store.read_text(source)
    try:
        snapshot = mm_snapshot.parse_snapshot(text)
    except mm_snapshot.SnapshotError as exc:
        raise CommandError(f"cannot copy {source}: {exc}") from None
    memory_dir = mm_cli.memory_dir_from(args.memory_dir)
    if not memory_dir.is_dir():
        mm_save.create_memory_dir(memory_dir)
    target = memory_dir / name
    with mm_store.locked(memory_dir):
        if os.path.lexists(target):
            try:
                there = mm_snapshot.parse_snapshot(mm_store.read_text(target))
            except (mm_store.StoreError, mm_snapshot.SnapshotError):
                there = None
            ref = snapshot.extra.get("session-ref")
            if there is None or not (
                mm_snapshot.is_captured(there) and there.extra.get("session-ref") == ref
            ):
                raise CommandError(f"{target} is another snapshot; nothing copied")
        memory_io.atomic_write(target, text.encode("utf-8"))
    if args.format == "json":
        mm_cli.print_json({"path": str(target), "from": str(source)})
    else:
        print(target)
    return 0
