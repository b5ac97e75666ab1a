# `list`: one line per project (its newest session), or with --project-name one line per
# session of that project, newest first.
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from . import mm_cli, mm_render, mm_snapshot, mm_store
from .mm_errors import CommandError

if TYPE_CHECKING:
    import argparse


HELP = "list projects, or one project's sessions"
DESCRIPTION = (
    "One line per project (newest session), or with --project-name one line "
    "per session of that project, newest first."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    listing = mm_cli.add_command(commands, "list", HELP, DESCRIPTION)
    listing.add_argument("--project-name", metavar="P")
    mm_cli.add_now_option(listing, "the time 'last touched' counts from")


def main(argv: Sequence[str]) -> int:
    return mm_cli.run(list_snapshots, mm_cli.parse_command("list", add_parser, argv))


def list_snapshots(args: argparse.Namespace) -> int:
    project = args.project_name
    if project is not None:
        mm_snapshot.validate_project_name(project)
    now = mm_cli.parse_now(args.now)
    memory_dir = mm_cli.memory_dir_from(args.memory_dir)
    captured = mm_cli.captured_dir(os.environ)
    folders = [
        (folder, mm_store.projects(mm_cli.memory_dir_names(folder)))
        for folder in (memory_dir, captured)  # captured: this project's, in the user's folder
        if folder is not None and folder.is_dir()
    ]
    if not folders:
        raise CommandError(f"memory directory not found at {memory_dir}")
    rows: list[mm_render.SessionRow] = []
    if project is not None:
        for folder, groups in folders:
            for name in groups.get(project, []):
                found, _ = mm_store.first_readable(folder, [name])
                rows.append(
                    mm_render.SessionRow(
                        project,
                        name[: mm_snapshot.STAMP_LEN],
                        str(folder / name),
                        found.snapshot if found is not None else None,
                    )
                )
        rows.sort(key=lambda row: row.session, reverse=True)
    else:
        names = sorted({name for _, groups in folders for name in groups})
        for name in names:
            best, where = None, memory_dir
            for folder, groups in folders:
                if name in groups:
                    found, _ = mm_store.newest_of(folder, groups[name])
                    if found is not None and mm_store.pick(best, found) is found:
                        best, where = found, folder
            if best is None:
                mm_cli.say(f"warning: no readable snapshot for project '{name}'")
                continue
            rows.append(
                mm_render.SessionRow(
                    name,
                    best.name[: mm_snapshot.STAMP_LEN],
                    str(where / best.name),
                    best.snapshot,
                )
            )
        rows.sort(key=lambda row: row.project)
        rows.sort(key=mm_render.touched_key, reverse=True)
    if args.format == "json":
        mm_cli.print_json([mm_render.row_fields(row, now) for row in rows])
    elif not rows:
        print(
            mm_render.no_memory(project)
            if project is not None
            else f"No session memory found in {memory_dir}"
        )
    else:
        sys.stdout.write(mm_render.list_table(rows, now, by_session=project is not None))
    return 0
