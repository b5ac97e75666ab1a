# `list`: one line per project (its newest session), or with --project-name one line per
# session of that project, newest first.
from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import mm_cli
import mm_render
import mm_snapshot
import mm_store
from mm_errors import CommandError

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
    if not memory_dir.is_dir():
        raise CommandError(f"memory directory not found at {memory_dir}")
    groups = mm_store.projects(mm_cli.memory_dir_names(memory_dir))
    rows: list[mm_render.SessionRow] = []
    if project is not None:
        for name in groups.get(project, []):
            found, _ = mm_store.first_readable(memory_dir, [name])
            rows.append(
                mm_render.SessionRow(
                    project,
                    name[: mm_snapshot.STAMP_LEN],
                    str(memory_dir / name),
                    found.snapshot if found is not None else None,
                )
            )
    else:
        for name, group in groups.items():
            found, _ = mm_store.first_readable(memory_dir, group)
            if found is None:
                mm_cli.say(f"warning: no readable snapshot for project '{name}'")
                continue
            rows.append(
                mm_render.SessionRow(
                    name,
                    found.name[: mm_snapshot.STAMP_LEN],
                    str(memory_dir / found.name),
                    found.snapshot,
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
