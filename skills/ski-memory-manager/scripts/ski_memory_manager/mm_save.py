# `save`: write memory/{session_timestamp}-{project_name}.md, or update it when that session was
# saved before, under the memory directory's lock, atomically. Prints the path written.
from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import mm_cli, mm_frontmatter, mm_input, mm_snapshot, mm_store, mm_update
from .mm_errors import CommandError
from .shared import memory_io, memory_text

if TYPE_CHECKING:
    import argparse
    from datetime import datetime

SIZE_WARNING = 2048  # bytes; snapshots are meant to be 1-2 KB
CREATE_DIR_HINT = "to create it, run the same save again with --create-dir"


HELP = "write or update a session snapshot (memory/DATE-PROJECT.md)"
DESCRIPTION = (
    "Write memory/{session_timestamp}-{project_name}.md, or update it when that "
    "session was saved before (given fields replace, steps and checkpoint decisions merge "
    "by key, approved checkpoints append). Fields come from --input JSON and flags; flags "
    "win. Prints the path written."
)


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    save = mm_cli.add_command(commands, "save", HELP, DESCRIPTION)
    save.add_argument("--project-name", metavar="P")
    save.add_argument(
        "--session-timestamp", metavar="T", help="YYYY-MM-DD-HH-MM in UTC (default: now)"
    )
    save.add_argument("--mode", metavar="MODE", help="architect or express")
    save.add_argument("--status", metavar="S", help="in-progress, paused or completed")
    save.add_argument("--last-checkpoint", metavar="CP")
    save.add_argument("--checkpoints-approved", metavar="CP", nargs="+")
    save.add_argument("--target-dir", metavar="X")
    mm_input.add_input_options(save)
    save.add_argument(
        "--create-dir",
        action="store_true",
        help="create the memory directory (and missing parents) when it does not exist",
    )
    mm_cli.add_now_option(save, "the time recorded as updated_at (default: now)")


def main(argv: Sequence[str]) -> int:
    return mm_cli.run(save, mm_cli.parse_command("save", add_parser, argv))


def save(args: argparse.Namespace) -> int:
    if args.project_name is not None:  # reject path tricks before touching any file
        mm_snapshot.validate_project_name(args.project_name)
    now = mm_cli.parse_now(args.now)
    data = mm_input.read_fields(args.input, args.yaml)
    flags = {
        "project_name": args.project_name,
        "session_timestamp": args.session_timestamp,
        "mode": args.mode,
        "status": args.status,
        "last_checkpoint": args.last_checkpoint,
        "checkpoints_approved": args.checkpoints_approved,
        "target_dir": args.target_dir,
    }
    data.update((key, value) for key, value in flags.items() if value is not None)
    if data.get("session_timestamp") is None and data.get("project_name") is not None:
        data["session_timestamp"] = mm_snapshot.session_stamp(now)
    update = mm_update.parse_input(data)
    note_computed_fields(data)
    memory_dir = memory_dir_for_save(args.memory_dir, data.get("memory_dir"))
    if not memory_dir.is_dir() and not args.create_dir:
        raise CommandError(f"memory directory not found at {memory_dir}", CREATE_DIR_HINT)
    return store(update, memory_dir, now, args.format)


def note_computed_fields(data: dict[str, object]) -> None:
    for key in mm_update.COMPUTED_FIELDS:
        if data.get(key) is not None:
            mm_cli.say(f"note: {key} is computed by the memory manager; ignoring the given value")


def store(
    update: mm_update.Update,
    memory_dir: Path,
    now: datetime,
    output_format: str,
) -> int:
    """Write the update into memory_dir (created when missing), under its lock; print the path
    (or the JSON result)."""
    mm_frontmatter.require_yaml()
    if not memory_dir.is_dir():
        create_memory_dir(memory_dir)
    path = memory_dir / mm_store.snapshot_name(update.session_timestamp, update.project_name)
    with mm_store.locked(memory_dir):
        saved, mode = _saved_snapshot(path)
        merged, redacted = mm_update.redact_snapshot(mm_update.merge(saved, update, now))
        for name in redacted:
            mm_cli.say(f"warning: {name} held a secret; it is stored as {memory_text.REDACTED}")
        encoded = mm_snapshot.format_snapshot(merged).encode("utf-8")
        if len(encoded) > mm_store.MAX_SNAPSHOT_BYTES:
            raise CommandError(
                f"snapshot would be {len(encoded)} bytes, over the "
                f"{mm_store.MAX_SNAPSHOT_BYTES} limit; save a 1-2 KB summary"
            )
        if len(encoded) > SIZE_WARNING:
            mm_cli.say(
                f"warning: {path.name} is {len(encoded)} bytes; keep snapshots to 1-2 KB "
                "(summaries, not the full record)"
            )
        memory_io.atomic_write(path, encoded, mode)
    if output_format == "json":
        mm_cli.print_json(
            {
                "path": str(path),
                "created": saved is None,
                "bytes": len(encoded),
                "redacted": redacted,
            }
        )
    else:
        print(path)
    return 0


def create_memory_dir(memory_dir: Path) -> None:
    """Create the memory directory and any missing parents, each made durable in its parent."""
    missing = []
    folder = memory_dir
    while not os.path.lexists(folder) and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except OSError as exc:
            raise CommandError(f"cannot create {folder}: {exc.strerror or exc}") from None
        memory_io.fsync_dir(folder.parent)
    if not memory_dir.is_dir():
        raise CommandError(f"cannot create {memory_dir}: something else is in its place")
    mm_cli.say(f"note: created {memory_dir}")


def memory_dir_for_save(flag: str | None, from_input: object) -> Path:
    if flag is not None:
        return Path(flag)
    if from_input is not None:
        if not isinstance(from_input, str) or not from_input or "\0" in from_input:
            raise mm_snapshot.InvalidField("memory_dir must be a path (a non-empty string)")
        return Path(from_input)
    return mm_cli.default_memory_dir(os.environ)


def _saved_snapshot(path: Path) -> tuple[mm_snapshot.Snapshot | None, int | None]:
    """The snapshot already saved for this session (None if there is none) and its mode."""
    if not os.path.lexists(path):
        return None, None
    try:
        text = mm_store.read_text(path)
        return mm_snapshot.parse_snapshot(text), os.stat(path).st_mode & 0o7777
    except (mm_store.StoreError, mm_snapshot.SnapshotError, OSError) as exc:
        raise CommandError(
            f"cannot update {path}: {exc}; fix the file or save under another session timestamp"
        ) from None
