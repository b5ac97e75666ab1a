# `permanent_memory.py review`: the proposals waiting for a person (pm_proposals), and what the
# person decides about each: --accept writes it into permanent_memory.md through `add --append`
# (its files joining the epic's Paths line), --edit rewrites its text first, --drop marks it
# dropped (kept on disk, never deleted, never proposed again).
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

from ..core import pm_cli, pm_file, pm_parse
from ..core.pm_errors import LoaderError
from ..shared import memory_io
from . import pm_add, pm_lessons, pm_proposals

HELP = "the proposed lessons: list, accept, edit or drop each"
DEFAULT_EPIC = "LESSONS"  # where a lesson that names no epic goes, unless --epic says
DEFAULT_INTENT = "Lessons kept from review"
SOURCES = {"compaction": "from a compaction", "command": "proposed as it worked"}


def listing(items: list[tuple[int, dict[str, Any]]]) -> str:
    if not items:
        return "No lessons proposed.\n"
    count = len(items)
    lines = [
        f"{count} lesson{'' if count == 1 else 's'} proposed "
        f"(review --accept N, --edit N TEXT, --drop N):"
    ]
    for number, item in items:
        lines.append(f"{number}. [{item['type']}] {item['text']}")
        where = SOURCES.get(str(item.get("source")), "proposed")
        when = str(item.get("proposed_at", "")).replace("T", " ").replace("Z", " UTC")
        epic = item.get("epic") or f"{DEFAULT_EPIC} (none named)"
        files = ", ".join(item["files"]) or "none"
        lines.append(f"   epic: {epic} \u00b7 files: {files} \u00b7 {where}, {when}")
    return "\n".join(lines) + "\n"


def as_json(items: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [
        {
            "n": number,
            "type": item["type"],
            "text": item["text"],
            "epic": item.get("epic"),
            "files": item["files"],
            "source": item.get("source"),
            "proposed_at": item.get("proposed_at"),
        }
        for number, item in items
    ]


def chosen(items: list[dict[str, Any]], number: int) -> dict[str, Any]:
    if not 1 <= number <= len(items):
        raise LoaderError(f"no proposal {number}; run {pm_cli.PROG} review to list them")
    item = items[number - 1]
    if item["status"] != pm_proposals.WAITING:
        raise LoaderError(f"proposal {number} was {item['status']} already")
    return item


def on_file(root: str, epic: str) -> bool:
    try:
        data, _ = pm_file.read_memory_file(pm_file.memory_path(root), root)
    except OSError:
        return False
    text = data.decode("utf-8", "replace") if data is not None else ""
    return any(found.epic_id == epic for found in pm_parse.parse_permanent(text))


def accept(args: argparse.Namespace, root: str, item: dict[str, Any]) -> int:
    kind = pm_lessons.kind_of(args.type) if args.type else item["type"]
    if kind is None:
        raise LoaderError(f"--type: {args.type!r} is not one of {', '.join(pm_lessons.TYPES)}")
    epic = args.epic or item.get("epic") or DEFAULT_EPIC
    if pm_lessons.epic_id(epic) is None:
        raise LoaderError(f"--epic: {epic!r} is not an epic ID")
    fields: dict[str, Any] = {"id": epic, pm_lessons.TYPES[kind]: [item["text"]]}
    if item["files"]:
        fields["paths"] = list(item["files"])
    if not on_file(root, epic):
        intent = args.intent or (DEFAULT_INTENT if epic == DEFAULT_EPIC else None)
        if not intent:
            raise LoaderError(
                f"{epic} is not in {pm_file.MEMORY_FILE} yet: give --intent TEXT (what the area "
                "is) to add it, or --epic with an epic on file"
            )
        fields["intent"] = intent
    add_args = pm_add.build_parser().parse_args(["--append", "--lines", "-", "--project-dir", root])
    add_args.fields = fields  # the fields themselves: nothing read from stdin
    code = pm_add.add(add_args)
    if code == 0:
        item.update(status=pm_proposals.ACCEPTED, type=kind, epic=epic)
    return code


def review(args: argparse.Namespace) -> int:
    root = os.path.abspath(pm_cli.project_dir(args.project_dir))
    folder = pm_proposals.store_dir(os.environ, root)
    if folder is None:
        raise LoaderError("no cache folder for proposals: set HOME or XDG_CACHE_HOME")
    number = args.accept or args.edit_number or args.drop
    if number is None:
        try:
            items = pm_proposals.read_store(folder) if os.path.isdir(folder) else []
        except pm_proposals.StoreError as exc:
            raise LoaderError(str(exc)) from None
        waiting = pm_proposals.waiting(items)
        if args.format == "json":
            sys.stdout.write(pm_json(as_json(waiting)))
        else:
            sys.stdout.write(listing(waiting))
        return 0
    if not os.path.isdir(folder):
        raise LoaderError(f"no proposal {number}; run {pm_cli.PROG} review to list them")
    now = (args.now or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with memory_io.locked(folder):
        try:
            items = pm_proposals.read_store(folder)
        except pm_proposals.StoreError as exc:
            raise LoaderError(str(exc)) from None
        item = chosen(items, number)
        if args.accept:
            code = accept(args, root, item)
            if code != 0:
                return code
            said = f"accepted {number} into {item['epic']}"
        elif args.drop:
            item["status"] = pm_proposals.DROPPED
            said = f"dropped {number} (kept on disk, never proposed again): {item['text']}"
        else:
            text = pm_lessons.one_line(args.edit_text, pm_lessons.MAX_TEXT_CHARS)
            if not text:
                raise LoaderError("--edit: the new text is empty")
            item.setdefault("proposed_text", item["text"])
            item["text"] = text
            said = f"edited {number}: [{item['type']}] {text}"
        item["decided_at" if not args.edit_number else "edited_at"] = now
        try:
            pm_proposals.write_store(folder, items)
        except pm_proposals.StoreError as exc:
            raise LoaderError(str(exc)) from None
    sys.stdout.write(said + "\n")
    return 0


def pm_json(data: object) -> str:
    import json

    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "review",
        "List the lessons proposed for this project's permanent memory (from compactions and "
        "the propose command), kept in the user's cache folder; accept one into "
        "permanent_memory.md (through add --append), edit its text, or drop it.",
    )
    pm_cli.add_project_dir(parser)
    pm_cli.add_format(parser)
    action = parser.add_mutually_exclusive_group()
    positive = pm_cli.positive(1)
    action.add_argument("--accept", type=positive, metavar="N", help="write proposal N")
    action.add_argument(
        "--edit", nargs=2, metavar=("N", "TEXT"), help="replace proposal N's text first"
    )
    action.add_argument("--drop", type=positive, metavar="N", help="drop proposal N (kept)")
    parser.add_argument("--type", help=f"with --accept: its type ({', '.join(pm_lessons.TYPES)})")
    parser.add_argument(
        "--epic", help=f"with --accept: the epic it joins (default: its own, else {DEFAULT_EPIC})"
    )
    parser.add_argument("--intent", help="with --accept, for an epic not on file: what it is")
    pm_cli.add_now(parser, "when it was decided (default: now)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = pm_cli.parse_args(parser, sys.argv[1:] if argv is None else argv)
    args.edit_number = args.edit_text = None
    if args.edit:
        try:
            args.edit_number = pm_cli.positive(1)(args.edit[0])
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --edit: {exc}")
        args.edit_text = args.edit[1]
    return pm_cli.run(lambda: review(args))
