# `permanent_memory.py add`: append one finished epic, from JSON (--input) or the line form
# (--lines), to permanent_memory.md, or with --append its items to the epic already there.
# pm_epic_input checks and lays out the epic, pm_append_plan places items in an epic on file;
# this module reads the input and writes the file, under the directory's lock. See
# references/writing.md.
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from ..core import pm_cli
from ..core.pm_cli import PROG, say
from ..core.pm_errors import MemoryFileError
from ..core.pm_meta_lines import MAX_KEYWORDS, MAX_PATHS
from ..core.pm_parse import Epic
from ..core.pm_render import SKIP_TOKENS
from ..shared import memory_io, memory_text
from .pm_append_plan import KEYWORDS, Appended, append_entries, epic_named
from .pm_epic_input import (
    INTENT_WHAT,
    MAX_EPIC_TOKENS,
    MAX_KEYWORDS_CHARS,
    DuplicateEpic,
    Entry,
    InvalidEntry,
    read_entry,
)
from .pm_epic_layout import (
    check_limit,
    find_placed,
    format_epic,
    place_epic,
    stored_sections,
    verify_epic,
)
from .pm_epic_lines import LinesError, parse_epic_lines
from .pm_epic_paths import MAX_PATHS_LINE_CHARS
from .pm_live_cap import write_live
from .pm_write_file import make_dirs, memory_path, read_for_writing

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
        raise InvalidEntry(f"{flag}: not UTF-8 at byte offset {exc.start}") from None


def parse_json_input(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, or a number too long to convert
        raise InvalidEntry(f"--input: not valid JSON: {exc}") from None
    except RecursionError:
        raise InvalidEntry("--input: not valid JSON: nested too deeply") from None


def epic_fields(args: argparse.Namespace) -> object:
    """The epic's fields from --input (JSON, for programs) or --lines (the line form), or a
    caller's own (`review --accept` sets args.fields)."""
    given = getattr(args, "fields", None)
    if given is not None:
        return given
    if args.lines is not None:
        try:
            return parse_epic_lines(read_input(args.lines, "--lines"))
        except LinesError as exc:
            raise InvalidEntry(f"--lines: {exc}") from None
    return parse_json_input(read_input(args.input))


def new_epic(entry: Entry, counting: pm_cli.WriteCounting) -> tuple[Entry, str]:
    """The entry and its section text, checked to be within the token limit of an epic (else
    refused: nothing is left out) and to read back as laid out."""
    check_limit(entry, counting.count, MAX_EPIC_TOKENS)
    epic_text = format_epic(entry)
    verify_epic(entry, epic_text)
    return entry, epic_text


def add(args: argparse.Namespace) -> int:
    path, explicit = memory_path(args.file, args.project_dir)
    now = args.now or datetime.now(timezone.utc)
    fields = epic_fields(args)
    entry, notes = read_entry(fields, now, args.schema, require_intent=not args.append)
    counting = pm_cli.write_counting(args.tokenizer)
    prepared = None if args.append else new_epic(entry, counting)
    if not path.parent.is_dir():
        if explicit:
            raise MemoryFileError(f"directory not found: {path.parent}")
        make_dirs(path.parent)  # an explicit writing command: .claude/memory/ may be new
    appended: Appended | None = None
    with memory_io.locked(path.parent):
        current = read_for_writing(path)
        old_text = current.text if current else ""
        try:
            on_file = epic_named(old_text, entry.epic_id) if args.append else None
        except DuplicateEpic as exc:
            raise MemoryFileError(f"{path}: {exc}") from None
        if on_file is not None:
            appended = append_entries(old_text, on_file, entry)
            new_text = appended.text
            action = "appended" if appended.changed else "unchanged"
            notes.extend(kept_fields_notes(fields, entry, on_file))
        else:
            if prepared is None:
                if not entry.intent:
                    raise InvalidEntry(
                        f"intent: required ({INTENT_WHAT}): {entry.epic_id} is not in the file "
                        "yet, so --append adds it as a new epic"
                    )
                prepared = new_epic(entry, counting)
            entry = prepared[0]
            try:
                new_text, action = place_epic(old_text, entry, args.replace)
            except DuplicateEpic as exc:
                raise MemoryFileError(f"{path}: {exc}") from None
            if find_placed(new_text, entry) is None:
                raise MemoryFileError(
                    f"{path}: the loader would not read the new epic back (is a ``` fence left "
                    f"open above it?); run {PROG} check"
                )
        if action != "unchanged":
            written = write_live(path, current, new_text, counting, now)
            if written.note:
                notes.append(written.note)
            new_text = written.text
    for note in notes:
        say(note)
    if appended is not None:
        return report_append(args, path, appended, counting)
    assert prepared is not None
    entry, epic_text = prepared
    epic_tokens = counting.count(epic_text)
    file_tokens = counting.count(new_text)
    over_skip_note(path, file_tokens, counting)
    if args.format == "json":
        pm_cli.emit_json(
            {
                "action": action,
                "path": str(path),
                "id": entry.epic_id,
                "intent": entry.intent,
                "completed": entry.completed,
                "summary": entry.summary,
                "keywords": [keyword.text for keyword in entry.keywords],
                "schema": entry.schema,
                "sections": stored_sections(entry),
                "tokens": epic_tokens,
                "file_tokens": file_tokens,
                "tokenizer": counting.tokenizer_name,
                "created": current is None,
            }
        )
    else:
        where = "to" if action == "added" else "in"
        sys.stdout.write(
            f"{action} {entry.epic_id} {where} {path} ({epic_tokens} {counting.unit})\n"
        )
    return 0


def over_skip_note(path: Path, file_tokens: int, counting: pm_cli.WriteCounting) -> None:
    if file_tokens > SKIP_TOKENS:
        say(
            f"note: {path} is now {file_tokens} {counting.unit}, over the {SKIP_TOKENS} the "
            f"loader summarises; run {PROG} archive"
        )


def kept_fields_notes(fields: object, entry: Entry, epic: Epic) -> list[str]:
    """Notes for the fields --append does not change on an epic already on file."""
    given = fields if isinstance(fields, dict) else {}
    notes = []
    if entry.intent and entry.intent != epic.intent:
        notes.append(
            f"note: intent: {epic.epic_id} keeps its own ({memory_text.clean(epic.intent)!r}); "
            "--append adds entries only"
        )
    for key in ("summary", "completed"):
        if given.get(key) is not None:
            notes.append(f"note: {key}: {epic.epic_id} keeps its own; --append adds entries only")
    return notes


def report_append(
    args: argparse.Namespace, path: Path, appended: Appended, counting: pm_cli.WriteCounting
) -> int:
    epic = appended.epic
    lines = appended.text.split("\n")
    epic_tokens = counting.count("\n".join(lines[epic.start_line : epic.end_line]))
    file_tokens = counting.count(appended.text)
    if appended.left_out:
        left = appended.left_out
        say(
            f"note: keywords: the Keywords line of {epic.epic_id} holds at most {MAX_KEYWORDS} "
            f"terms, {MAX_KEYWORDS_CHARS} characters in all; left out {len(left)}: "
            + ", ".join(f"{keyword.where} {keyword.text!r}" for keyword in left)
        )
    if appended.paths_left_out:
        say(
            f"note: paths: the Paths line of {epic.epic_id} holds at most {MAX_PATHS} globs, "
            f"{MAX_PATHS_LINE_CHARS} characters in all; left out: "
            + ", ".join(repr(glob) for glob in appended.paths_left_out)
        )
    if appended.changed:
        over_skip_note(path, file_tokens, counting)
        if epic_tokens > MAX_EPIC_TOKENS:
            say(
                f"note: {epic.epic_id} is now {epic_tokens} {counting.unit}, over the "
                f"{MAX_EPIC_TOKENS}-token limit of an epic; the loader shows only its first "
                "entries, so keep the one that matters most first"
            )
    if args.format == "json":
        pm_cli.emit_json(
            {
                "action": "appended" if appended.added else "unchanged",
                "path": str(path),
                "id": epic.epic_id,
                "appended": [
                    *(
                        {"where": item.where, "label": label, "text": item.text}
                        for label, item in appended.added
                    ),
                    *(
                        {"where": keyword.where, "label": KEYWORDS, "text": keyword.text}
                        for keyword in appended.keywords
                    ),
                    *({"where": "paths", "label": "paths", "text": g} for g in appended.paths),
                ],
                "skipped": [
                    {"where": skip.item.where, "label": skip.label, "text": skip.item.text}
                    for skip in appended.skipped
                ]
                + [{"where": "paths", "label": "paths", "text": g} for g in appended.paths_skipped],
                "left_out": [
                    {"where": keyword.where, "label": KEYWORDS, "text": keyword.text}
                    for keyword in appended.left_out
                ]
                + [
                    {"where": "paths", "label": "paths", "text": g} for g in appended.paths_left_out
                ],
                "tokens": epic_tokens,
                "file_tokens": file_tokens,
                "tokenizer": counting.tokenizer_name,
            }
        )
        return 0
    out = []
    if appended.changed:
        counted = [
            _counted(len(appended.added), "entry", "entries"),
            _counted(len(appended.keywords), "keyword", "keywords"),
            _counted(len(appended.paths), "glob", "globs"),
        ]
        out.append(
            f"appended {' and '.join(part for part in counted if part)} to {epic.epic_id} in "
            f"{path} ({epic_tokens} {counting.unit})"
        )
        out.extend(f"  {label}: {item.text}" for label, item in appended.added)
        if appended.keywords:
            out.append(f"  {KEYWORDS}: " + ", ".join(k.text for k in appended.keywords))
        if appended.paths:
            out.append("  paths: " + ", ".join(appended.paths))
    else:
        if appended.left_out:
            why = "its Keywords line has no room for the new keywords"
        elif appended.paths_left_out:
            why = "its Paths line has no room for the new globs"
        elif appended.paths_skipped:
            why = "it holds every entry, keyword and glob already"
        elif any(skip.label == KEYWORDS for skip in appended.skipped):
            why = "it holds every entry and keyword already"
        else:
            why = "it holds every entry already"
        out.append(f"nothing appended to {epic.epic_id} in {path}: {why}")
    out.extend(
        f"skipped {skip.item.where}, already in {epic.epic_id} ({skip.label}): {skip.item.text}"
        for skip in appended.skipped
    )
    out.extend(
        f"skipped a glob, already in {epic.epic_id} (paths): {glob}"
        for glob in appended.paths_skipped
    )
    sys.stdout.write("".join(line + "\n" for line in out))
    return 0


def _counted(count: int, one: str, many: str) -> str:
    """`1 entry`, `3 entries`; "" for none."""
    return f"{count} {one if count == 1 else many}" if count else ""


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "add",
        "Append one epic section, in the v2 form (--schema 1: the v1 form), from JSON (--input) "
        "or the line form (--lines): id, intent, summary (one line, v2 only), completed "
        f"(default now), keywords (at most {MAX_KEYWORDS} terms recall finds the epic by, "
        "never shown), and lists decisions, gotchas, anti_patterns, patterns, conflicts, "
        'tentative, each item text or {"text": ..., "confidence": 0-1}. Items under 0.7 '
        f"confidence go to Tentative; an epic over {MAX_EPIC_TOKENS} tokens is refused "
        "(nothing written). Creates .claude/memory/ when missing. With --append, "
        "the items go into the epic already on file with that ID instead, and the keywords "
        "onto its Keywords line.",
    )
    pm_cli.add_writing_options(parser)
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--input", metavar="FILE", help="the JSON, or - for stdin")
    given.add_argument(
        "--lines",
        metavar="FILE",
        help="the same fields in the line form ('name: value', 'name:' then '- item' lines), "
        "or - for stdin (a quoted heredoc)",
    )
    same_id = parser.add_mutually_exclusive_group()
    same_id.add_argument("--replace", action="store_true", help="replace an epic with the same ID")
    same_id.add_argument(
        "--append",
        action="store_true",
        help="add the items to the epic with the same ID, each at the end of its subsection "
        "(a missing one is created), skipping items it already holds (case and spacing "
        "aside); its other text stays as it is. Without that epic: add it (intent required)",
    )
    parser.add_argument(
        "--schema",
        type=int,
        choices=(1, 2),
        default=2,
        help="2: the v2 form, with a marker line, the summary and typed entries (default); "
        "1: the v1 prose form",
    )
    pm_cli.add_now(parser, "the default Completed (default: now)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_writing_args(build_parser(), "add", argv)
    return pm_cli.run(lambda: add(args))
