# `permanent_memory.py propose`: one lesson kept as a proposal for a person to review
# (pm_proposals), never written into permanent_memory.md; `review --accept` does that.
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

from ..core import pm_cli
from ..core.pm_errors import LoaderError
from . import pm_lessons, pm_proposals

HELP = "propose a lesson; it waits for a person's review"


def propose(args: argparse.Namespace) -> int:
    root = os.path.abspath(pm_cli.project_dir(args.project_dir))
    kind = pm_lessons.kind_of(args.type)
    if kind is None:
        raise LoaderError(f"--type: {args.type!r} is not one of {', '.join(pm_lessons.TYPES)}")
    if args.epic is not None and pm_lessons.epic_id(args.epic) is None:
        raise LoaderError(f"--epic: {args.epic!r} is not an epic ID (letters, digits, -, _, .)")
    files = [part for value in args.files or () for part in value.split(",") if part.strip()]
    lesson = pm_lessons.lesson(kind, args.text, files, args.epic, root)
    if not lesson.text:
        raise LoaderError("--text: empty")
    outside = len(files) - len(lesson.files)
    if outside:
        pm_cli.say(f"note: left out {outside} file(s) outside the project or not a plain path")
    folder = pm_proposals.store_dir(os.environ, root)
    if folder is None:
        raise LoaderError("no cache folder for proposals: set HOME or XDG_CACHE_HOME")
    now = args.now or datetime.now(timezone.utc)
    try:
        added = pm_proposals.add_lessons(folder, root, [lesson], "command", "", now)
    except pm_proposals.StoreError as exc:
        raise LoaderError(str(exc)) from None
    if not added.added:
        why = "already on file or proposed" if added.duplicates else "the store is full"
        sys.stdout.write(f"not proposed: {why}\n")
        return 0
    number, item = added.added[0]
    sys.stdout.write(f"proposed {number}: [{item['type']}] {item['text']} (a person reviews it)\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "propose",
        "Keep one lesson (a decision settled, a gotcha found) as a proposal in the user's cache "
        "folder; it reaches permanent_memory.md only when a person accepts it with review.",
    )
    pm_cli.add_project_dir(parser)
    parser.add_argument("--type", required=True, help=", ".join(pm_lessons.TYPES))
    parser.add_argument("--text", required=True, help="the lesson, one line")
    parser.add_argument(
        "--files", action="append", metavar="PATH", help="files it governs (comma-separated)"
    )
    parser.add_argument("--epic", help="the epic it would join")
    pm_cli.add_now(parser, "when it was proposed (default: now)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: propose(args))
