# `load-last`: print the newest readable snapshot of a project, stamped, with a resume line.
# Unreadable snapshots are skipped with a warning; no snapshot at all is not an error.
# Declared as mm_list is (the same shape of module, the same --project-name and --now): two
# commands that read snapshots by project, each in its own module.
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import mm_cli, mm_render, mm_snapshot, mm_store
from .shared import memory_text

if TYPE_CHECKING:
    import argparse


HELP = "print a project's newest snapshot, stamped, with a resume line"
DESCRIPTION = (
    "Print the newest snapshot of the project, stamped, with a resume line. "
    "Unreadable snapshots are skipped with a warning."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    load = mm_cli.add_command(commands, "load-last", HELP, DESCRIPTION)
    load.add_argument("--project-name", metavar="P", required=True)
    mm_cli.add_now_option(load, "the time 'last touched' counts from")


def main(argv: Sequence[str]) -> int:
    return mm_cli.run(load_last, mm_cli.parse_command("load-last", add_parser, argv))


def load_last(args: argparse.Namespace) -> int:
    project = mm_snapshot.validate_project_name(args.project_name)
    now = mm_cli.parse_now(args.now)
    memory_dir = mm_cli.memory_dir_from(args.memory_dir)
    found, skipped = None, 0
    folder = memory_dir
    known: set[str] = set()  # the projects with a snapshot, for a hint when none is this one
    if memory_dir.is_dir():
        names = mm_cli.memory_dir_names(memory_dir)
        known.update(mm_store.projects(names))
        _warn_misnamed(memory_dir, names, project)
        found, tried = mm_store.newest_of(memory_dir, list(mm_store.newest_first(names, project)))
        skipped = len(tried)
    captured = mm_cli.captured_dir(os.environ)
    if captured is None or not captured.is_dir():
        if not memory_dir.is_dir():
            mm_cli.say(f"note: memory directory not found at {memory_dir}")
    else:
        names = mm_cli.memory_dir_names(captured)
        known.update(mm_store.projects(names))
        item, tried = mm_store.newest_of(captured, list(mm_store.newest_first(names, project)))
        skipped += len(tried)
        if item is not None and mm_store.pick(found, item) is item:
            found, folder = item, captured
    if found is None:  # then every name tried was unreadable
        if skipped:
            mm_cli.say(f"warning: no readable snapshot for project '{project}' ({skipped} skipped)")
        else:
            _hint_near(project, known)
        return _no_memory(args.format, project)
    if args.format == "json":
        session = found.name[: mm_snapshot.STAMP_LEN]
        fields = mm_render.row_fields(
            mm_render.SessionRow(project, session, str(folder / found.name), found.snapshot),
            now,
        )
        mm_cli.print_json(
            {
                "found": True,
                **fields,
                "stamp": mm_render.STAMP,
                "resume_line": mm_render.resume_line(project, found.snapshot, session, now),
                "content": memory_text.clean(found.text),
            }
        )
    else:
        sys.stdout.write(mm_render.load_last_block(project, found, now))
    return 0


def _warn_misnamed(memory_dir: Path, names: list[str], project: str) -> None:
    odd = mm_store.misnamed(names, project)
    if not odd:
        return
    shown = memory_text.clean(str(memory_dir / odd[0]))
    more = f" and {len(odd) - 1} more" if len(odd) > 1 else ""
    mm_cli.say(
        f"warning: {shown}{more} not read: a snapshot of '{project}' is named "
        f"YYYY-MM-DD-HH-MM-{project}.md"
    )


def _hint_near(project: str, known: set[str]) -> None:
    """A note naming the project with snapshots closest to the one asked for: the same name in
    another case (`Proj` for `proj`), else a near spelling."""
    same = sorted(name for name in known if name.casefold() == project.casefold())
    if not same:
        import difflib

        same = difflib.get_close_matches(project, sorted(known), n=1, cutoff=0.8)
    if same:
        shown = memory_text.clean(same[0])
        mm_cli.say(f"note: snapshots exist for project '{shown}': --project-name {shown}")


def _no_memory(output_format: str, project: str) -> int:
    message = mm_render.no_memory(project)
    if output_format == "json":
        mm_cli.print_json({"found": False, "project": project, "message": message})
    else:
        print(message)
    return 0
