# `permanent_memory.py archive`: move the oldest epics to archive/YYYY-MM-DD.md beside the
# memory file until the file is within --max-tokens. pm_archive_plan plans the move; this
# module writes it, under the directory's lock: the archive first, synced, then the memory
# file, so a crash at any point leaves every epic in one of the two, or in both.
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from ..core import pm_cli
from ..core.pm_cli import plural
from ..core.pm_errors import MemoryFileError
from ..core.pm_render import SKIP_TOKENS
from ..shared import memory_io
from .pm_archive_plan import ARCHIVE_DIR, archive_text, plan_archive
from .pm_write_file import encode_as, inside, make_dirs, memory_path, read_for_writing

HELP = "move the oldest epics to .claude/memory/archive/ until it fits"


def completed_text(epic_completed: str | None) -> str:
    return f"completed {epic_completed}" if epic_completed else "no Completed date"


def archive(args: argparse.Namespace) -> int:
    path, explicit = memory_path(args.file, args.project_dir)
    now = args.now or datetime.now(timezone.utc)
    target = path.parent / ARCHIVE_DIR / f"{now.astimezone(timezone.utc).date().isoformat()}.md"
    if not path.parent.is_dir():
        return no_file(path, explicit)
    # archive/ belongs to the folder of the memory file, whoever chose that file.
    inside(path.parent, target)
    counting = pm_cli.write_counting(args.tokenizer)
    skipped: list[int] = []
    if args.dry_run:
        current = read_for_writing(path)
        if current is None:
            return no_file(path, explicit)
        plan = plan_archive(current.text, args.max_tokens, counting.count)
    else:
        with memory_io.locked(path.parent):
            current = read_for_writing(path)
            if current is None:
                return no_file(path, explicit)
            plan = plan_archive(current.text, args.max_tokens, counting.count)
            if plan.moved:
                existing = read_for_writing(target)
                new_archive, skipped = archive_text(
                    existing.text if existing else None, plan.sections
                )
                make_dirs(target.parent)
                # The archive first, synced: from here on every moved epic is safe on disk.
                memory_io.atomic_write(target, encode_as(new_archive, existing))
                memory_io.atomic_write(path, current.encode(plan.kept_text), current.mode)
    verb = "would move" if args.dry_run else "moved"
    if args.format == "json":
        pm_cli.emit_json(
            {
                "path": str(path),
                "archive": str(target),
                "dry_run": args.dry_run,
                "max_tokens": args.max_tokens,
                "tokens_before": plan.tokens_before,
                "tokens_after": plan.tokens_after,
                "tokenizer": counting.tokenizer_name,
                "moved": [
                    {
                        "id": epic.epic_id,
                        "completed": epic.completed,
                        "line": epic.start_line + 1,
                        "already_archived": index in skipped,
                    }
                    for index, epic in enumerate(plan.moved)
                ],
            }
        )
        return 0
    out = sys.stdout
    for index, epic in enumerate(plan.moved):
        again = " (already there: an earlier run was interrupted)" if index in skipped else ""
        out.write(f"{verb} {epic.epic_id} ({completed_text(epic.completed)}) to {target}{again}\n")
    if not plan.moved:
        out.write(
            f"{path}: {plan.tokens_before} {counting.unit}, within {args.max_tokens}; "
            "nothing to archive\n"
        )
    elif args.dry_run:
        out.write(
            f"{path}: {plan.tokens_before} {counting.unit}, {plan.tokens_after} after moving "
            f"{plural(len(plan.moved), 'epic')} (max {args.max_tokens}); nothing written\n"
        )
    else:
        out.write(
            f"{path}: {plan.tokens_before} {counting.unit} before, {plan.tokens_after} after "
            f"(max {args.max_tokens})\n"
        )
    return 0


def no_file(path: Path, explicit: bool) -> int:
    if explicit:
        raise MemoryFileError(f"permanent memory file not found: {path}")
    sys.stdout.write(f"no permanent memory file at {path}; nothing to archive\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "archive",
        "Move the oldest epics (by Completed) to archive/YYYY-MM-DD.md beside the file, "
        "appending when it exists, until the file is within --max-tokens.",
    )
    pm_cli.add_writing_options(parser)
    pm_cli.add_count(
        parser,
        "--max-tokens",
        1,
        SKIP_TOKENS,
        "tokens the file may keep",
        "where the loader stops summarising it",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list what would move; write nothing"
    )
    pm_cli.add_now(parser, "the archive file's date (default: today, UTC)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_writing_args(build_parser(), "archive", argv)
    return pm_cli.run(lambda: archive(args))
