# `permanent_memory.py add`: append one finished epic, from JSON (--input) or the line form
# (--lines), to permanent_memory.md. pm_write_epic checks and lays out the epic; this module
# reads the input and writes the file, under the directory's lock. See references/writing.md.
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime, timezone

import memory_io
import pm_cli
from pm_cli import PROG, say
from pm_epic_lines import LinesError, parse_epic_lines
from pm_errors import MemoryFileError
from pm_render import SKIP_TOKENS
from pm_write_epic import (
    MAX_EPIC_TOKENS,
    DuplicateEpic,
    InvalidEntry,
    find_placed,
    fit_entry,
    format_epic,
    place_epic,
    read_entry,
    stored_sections,
    trimmed_note,
    verify_epic,
)
from pm_write_file import encode_as, make_dirs, memory_path, read_for_writing

HELP = "append one finished epic from JSON or the line form"
MAX_INPUT_BYTES = 1024 * 1024


def read_input(source: str, flag: str = "--input") -> str:
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise MemoryFileError(f"cannot read {flag} {source}: {exc.strerror or exc}") from None
    if len(data) > MAX_INPUT_BYTES:
        raise InvalidEntry(f"{flag}: over {MAX_INPUT_BYTES // 1024} KiB; an epic is a summary")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidEntry(f"{flag}: not UTF-8 (byte {exc.start})") from None


def parse_json_input(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or a number too long to convert
        raise InvalidEntry(f"--input: not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidEntry("--input: not valid JSON: nested too deeply") from None


def epic_fields(args: argparse.Namespace) -> object:
    """The epic's fields from --input (JSON, for programs) or --lines (the line form)."""
    if args.lines is not None:
        try:
            return parse_epic_lines(read_input(args.lines, "--lines"))
        except LinesError as exc:
            raise InvalidEntry(f"--lines: {exc}") from None
    return parse_json_input(read_input(args.input))


def add(args: argparse.Namespace) -> int:
    path, explicit = memory_path(args.file, args.project_dir)
    now = args.now or datetime.now(timezone.utc)
    entry, notes = read_entry(epic_fields(args), now, args.schema)
    counting = pm_cli.write_counting(args.tokenizer)
    before_trim = counting.count(format_epic(entry))
    entry, dropped = fit_entry(entry, counting.count, MAX_EPIC_TOKENS)
    if dropped:
        notes.append(trimmed_note(entry.epic_id, before_trim, MAX_EPIC_TOKENS, dropped))
    epic_text = format_epic(entry)
    verify_epic(entry, epic_text)
    if not path.parent.is_dir():
        if explicit:
            raise MemoryFileError(f"directory not found: {path.parent}")
        make_dirs(path.parent)  # an explicit writing command: .claude/memory/ may be new
    with memory_io.locked(path.parent):
        current = read_for_writing(path)
        try:
            new_text, action = place_epic(current.text if current else "", entry, args.replace)
        except DuplicateEpic as exc:
            raise MemoryFileError(f"{path}: {exc}") from None
        if find_placed(new_text, entry) is None:
            raise MemoryFileError(
                f"{path}: the loader would not read the new epic back (is a ``` fence left "
                f"open above it?); run {PROG} check"
            )
        mode = current.mode if current else None
        memory_io.atomic_write(path, encode_as(new_text, current), mode)
    for note in notes:
        say(note)
    epic_tokens = counting.count(epic_text)
    file_tokens = counting.count(new_text)
    if file_tokens > SKIP_TOKENS:
        say(
            f"note: {path} is now {file_tokens} {counting.unit}, over the {SKIP_TOKENS} the "
            f"loader summarises; run {PROG} archive"
        )
    if args.format == "json":
        pm_cli.emit_json(
            {
                "action": action,
                "path": str(path),
                "id": entry.epic_id,
                "intent": entry.intent,
                "completed": entry.completed,
                "summary": entry.summary,
                "schema": entry.schema,
                "sections": stored_sections(entry),
                "tokens": epic_tokens,
                "file_tokens": file_tokens,
                "tokenizer": counting.tokenizer_name,
                "trimmed": [item.where for item in dropped],
                "created": current is None,
            }
        )
    else:
        where = "to" if action == "added" else "in"
        sys.stdout.write(
            f"{action} {entry.epic_id} {where} {path} ({epic_tokens} {counting.unit})\n"
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "add",
        "Append one epic section, in the v2 form (--schema 1: the v1 form), from JSON (--input) "
        "or the line form (--lines): id, intent, summary (one line, v2 only), completed "
        "(default now), and lists decisions, gotchas, anti_patterns, patterns, conflicts, "
        'tentative, each item text or {"text": ..., "confidence": 0-1}. Items under 0.7 '
        f"confidence go to Tentative; an epic over {MAX_EPIC_TOKENS} tokens loses its "
        "lowest-confidence items. Creates .claude/memory/ when missing.",
    )
    pm_cli.add_project_dir(parser)
    pm_cli.add_file(parser, pm_cli.WRITE_FILE_HELP)
    pm_cli.add_tokenizer(parser, "UTF-8 bytes / 4")
    pm_cli.add_format(parser)
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--input", metavar="FILE", help="the JSON, or - for stdin")
    given.add_argument(
        "--lines",
        metavar="FILE",
        help="the same fields in the line form ('name: value', 'name:' then '- item' lines), "
        "or - for stdin (a quoted heredoc)",
    )
    parser.add_argument("--replace", action="store_true", help="replace an epic with the same ID")
    parser.add_argument(
        "--schema",
        type=int,
        choices=(1, 2),
        default=2,
        help="2: the v2 form, with a marker line, the summary and typed entries (default); "
        "1: the v1 prose form",
    )
    parser.add_argument(
        "--now",
        type=pm_cli.timestamp,
        metavar="ISO8601",
        help="the default Completed (default: now)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    if args.file == "-":
        pm_cli.usage_error("add: --file - is not possible, the command writes the file")
    return pm_cli.run(lambda: add(args))
