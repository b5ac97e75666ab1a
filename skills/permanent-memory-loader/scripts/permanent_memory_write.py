# The writing commands of permanent_memory.py: `add` (append one epic from JSON), `archive`
# (move the oldest epics out until the file is within its token limit) and `check` (validate the
# format). pm_cli routes these commands here; main(argv) gets the command name first. See
# references/writing.md.
#
# Writes take an exclusive lock on the memory file's directory (the directory, not a lock file:
# nothing extra appears in the user's repository, and unlike the memory file itself it is never
# replaced) and land atomically. `archive` writes and syncs the archive before it rewrites the
# memory file, so a crash at any point leaves every epic in one of the two, or in both.
from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import memory_io
from pm_cli import MEMORY_FILE, PROG, LoadError, project_dir
from pm_epic_lines import LinesError, parse_epic_lines
from pm_load import decode, line_budget
from pm_parse import normalise_text, parse_iso_datetime
from pm_render import SKIP_TOKENS, Budget
from pm_tokens import ESTIMATE, ESTIMATE_BYTES_PER_TOKEN, Tokenizer
from pm_write_archive import ARCHIVE_DIR, ArchiveError, archive_text, plan_archive
from pm_write_check import ERROR, WARNING, Finding, check_text
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

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_INPUT_BYTES = 1024 * 1024
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO in the file's place must not hang us
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

Counter = Callable[[str], int]


class WriteError(Exception):
    """A file cannot be read or written as needed; str() is the one-line message."""


class Sizes(NamedTuple):
    count: Counter  # tokens: exact cl100k_base, or UTF-8 bytes / 4 rounded up
    estimated: bool
    line_count: Counter  # the loader's own counter, for where it cuts Epic lines
    line_budget: Budget

    @property
    def unit(self) -> str:
        return "estimated tokens" if self.estimated else "tokens"


def say(line: str) -> None:
    sys.stderr.write(line + "\n")


def make_sizes(choice: str) -> Sizes:
    tokenizer = Tokenizer(allow_exact=choice == "auto")
    budget = line_budget(Budget(), tokenizer)
    if tokenizer.exact:
        return Sizes(tokenizer.count, False, tokenizer.count, budget)
    if choice == "auto":
        say(
            f"note: exact token counts unavailable ({tokenizer.problem}); "
            "estimating 4 bytes a token"
        )

    def estimate(text: str) -> int:
        size = len(text.encode("utf-8", "surrogatepass"))
        return -(-size // ESTIMATE_BYTES_PER_TOKEN)

    return Sizes(estimate, True, tokenizer.count, budget)


def tokenizer_name(sizes: Sizes) -> str:
    return ESTIMATE if sizes.estimated else "cl100k_base"


class FileText(NamedTuple):
    text: str  # line ends normalised to LF, no BOM
    crlf: bool  # written back with CRLF line ends
    bom: bool  # written back with a UTF-8 BOM
    mode: int  # permission bits, kept when the file is replaced

    def encode(self, text: str) -> bytes:
        return encode_as(text, self)


def encode_as(text: str, like: FileText | None) -> bytes:
    if like is not None and like.crlf:
        text = text.replace("\n", "\r\n")
    if like is not None and like.bom:
        text = "\ufeff" + text
    return text.encode("utf-8")


def read_bytes(path: Path, follow: bool) -> tuple[bytes, int] | None:
    """The file's bytes and permission bits; None when it does not exist."""
    flags = os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | (0 if follow else _O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if not follow and os.path.islink(path):
            raise WriteError(
                f"{path} is a symbolic link; add and archive replace the file, which would "
                "break the link: give --file the real file"
            ) from None
        raise WriteError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise WriteError(f"{path} is not a regular file")
        if status.st_size > MAX_FILE_BYTES:
            raise WriteError(f"{path} is over {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise WriteError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise WriteError(f"{path} is over {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return data, stat.S_IMODE(status.st_mode)


def _undecodable(data: bytes) -> tuple[int, int] | None:
    """(byte offset, line number) of the first byte that is not UTF-8, or None."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start, data[: exc.start].count(b"\n") + 1
    return None


def read_for_writing(path: Path) -> FileText | None:
    found = read_bytes(path, follow=False)
    if found is None:
        return None
    data, mode = found
    if data.startswith(_UTF16_BOMS):
        raise WriteError(
            f"{path} is UTF-16 text; save it as UTF-8 first (this command writes UTF-8)"
        )
    bad = _undecodable(data)
    if bad is not None:
        raise WriteError(
            f"{path} is not UTF-8 text (byte {bad[0]}, line {bad[1]}); fix it first, "
            "nothing was written"
        )
    raw = data.decode("utf-8")
    return FileText(normalise_text(raw), "\r\n" in raw, raw.startswith("\ufeff"), mode)


def memory_path(args: argparse.Namespace) -> tuple[Path, bool]:
    """The permanent memory file and whether it was given with --file. The project's own file
    (no --file) must not lead outside the project: a clone may link it, or .claude/memory, to
    another project's, and a write through that link would land there."""
    if args.file is not None:
        path = Path(args.file)
        explicit = True
    else:
        project = project_dir(args.project_dir)
        path = project / MEMORY_FILE
        explicit = False
        inside(project, path)
    if path.name == "manual_overrides.md":
        raise WriteError(f"{path}: manual_overrides.md is user-curated; it is never written")
    return path, explicit


def inside(root: Path, path: Path) -> None:
    try:
        memory_io.inside_project(root, path)
    except memory_io.OutsideProject as exc:
        raise WriteError(str(exc)) from None


def make_dirs(directory: Path) -> None:
    """Create `directory` and any missing parents, each made durable in its parent."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            pass
        except OSError as exc:
            raise WriteError(f"cannot create {folder}: {exc.strerror or exc}") from None
        memory_io.fsync_dir(folder.parent)


def emit_json(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _plural(number: int, word: str) -> str:
    return f"{number} {word}" if number == 1 else f"{number} {word}s"


# add


def read_input(source: str, flag: str = "--input") -> str:
    try:
        if source == "-":
            data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        else:
            with open(source, "rb") as handle:
                data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise WriteError(f"cannot read {flag} {source}: {exc.strerror or exc}") from None
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


def cmd_add(args: argparse.Namespace) -> int:
    path, explicit = memory_path(args)
    now = args.now or datetime.now(timezone.utc)
    entry, notes = read_entry(epic_fields(args), now, args.schema)
    sizes = make_sizes(args.tokenizer)
    before_trim = sizes.count(format_epic(entry))
    entry, dropped = fit_entry(entry, sizes.count, MAX_EPIC_TOKENS)
    if dropped:
        notes.append(trimmed_note(entry.epic_id, before_trim, MAX_EPIC_TOKENS, dropped))
    epic_text = format_epic(entry)
    verify_epic(entry, epic_text)
    if not path.parent.is_dir():
        if explicit:
            raise WriteError(f"directory not found: {path.parent}")
        make_dirs(path.parent)  # an explicit writing command: .claude/memory/ may be new
    with memory_io.locked(path.parent):
        current = read_for_writing(path)
        try:
            new_text, action = place_epic(current.text if current else "", entry, args.replace)
        except DuplicateEpic as exc:
            raise WriteError(f"{path}: {exc}") from None
        if find_placed(new_text, entry) is None:
            raise WriteError(
                f"{path}: the loader would not read the new epic back (is a ``` fence left "
                "open above it?); run permanent_memory.py check"
            )
        mode = current.mode if current else None
        memory_io.atomic_write(path, encode_as(new_text, current), mode)
    for note in notes:
        say(note)
    epic_tokens = sizes.count(epic_text)
    file_tokens = sizes.count(new_text)
    if file_tokens > SKIP_TOKENS:
        say(
            f"note: {path} is now {file_tokens} {sizes.unit}, over the {SKIP_TOKENS} the loader "
            "summarises; run permanent_memory.py archive"
        )
    if args.format == "json":
        emit_json(
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
                "tokenizer": tokenizer_name(sizes),
                "trimmed": [item.where for item in dropped],
                "created": current is None,
            }
        )
    else:
        where = "to" if action == "added" else "in"
        sys.stdout.write(f"{action} {entry.epic_id} {where} {path} ({epic_tokens} {sizes.unit})\n")
    return 0


# archive


def _completed(epic_completed: str | None) -> str:
    return f"completed {epic_completed}" if epic_completed else "no Completed date"


def cmd_archive(args: argparse.Namespace) -> int:
    path, explicit = memory_path(args)
    now = args.now or datetime.now(timezone.utc)
    archive = path.parent / ARCHIVE_DIR / f"{now.astimezone(timezone.utc).date().isoformat()}.md"
    if not path.parent.is_dir():
        return _no_file(path, explicit)
    # archive/ belongs to the folder of the memory file, whoever chose that file.
    inside(path.parent, archive)
    sizes = make_sizes(args.tokenizer)
    skipped: list[int] = []
    if args.dry_run:
        current = read_for_writing(path)
        if current is None:
            return _no_file(path, explicit)
        plan = plan_archive(current.text, args.max_tokens, sizes.count)
    else:
        with memory_io.locked(path.parent):
            current = read_for_writing(path)
            if current is None:
                return _no_file(path, explicit)
            plan = plan_archive(current.text, args.max_tokens, sizes.count)
            if plan.moved:
                existing = read_for_writing(archive)
                new_archive, skipped = archive_text(
                    existing.text if existing else None, plan.sections
                )
                make_dirs(archive.parent)
                # The archive first, synced: from here on every moved epic is safe on disk.
                memory_io.atomic_write(archive, encode_as(new_archive, existing))
                memory_io.atomic_write(path, current.encode(plan.kept_text), current.mode)
    verb = "would move" if args.dry_run else "moved"
    if args.format == "json":
        emit_json(
            {
                "path": str(path),
                "archive": str(archive),
                "dry_run": args.dry_run,
                "max_tokens": args.max_tokens,
                "tokens_before": plan.tokens_before,
                "tokens_after": plan.tokens_after,
                "tokenizer": tokenizer_name(sizes),
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
        out.write(f"{verb} {epic.epic_id} ({_completed(epic.completed)}) to {archive}{again}\n")
    if not plan.moved:
        out.write(
            f"{path}: {plan.tokens_before} {sizes.unit}, within {args.max_tokens}; "
            "nothing to archive\n"
        )
    elif args.dry_run:
        out.write(
            f"{path}: {plan.tokens_before} {sizes.unit}, {plan.tokens_after} after moving "
            f"{_plural(len(plan.moved), 'epic')} (max {args.max_tokens}); nothing written\n"
        )
    else:
        out.write(
            f"{path}: {plan.tokens_before} {sizes.unit} before, {plan.tokens_after} after "
            f"(max {args.max_tokens})\n"
        )
    return 0


def _no_file(path: Path, explicit: bool) -> int:
    if explicit:
        raise WriteError(f"permanent memory file not found: {path}")
    sys.stdout.write(f"no permanent memory file at {path}; nothing to archive\n")
    return 0


# check


def read_for_check(path: str, root: Path | None = None) -> tuple[str, list[Finding]] | None:
    """The normalised text and findings about its encoding; None when there is no file. With
    `root`, the file is the project's own and must not lead outside it."""
    if path == "-":
        data: bytes = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
    else:
        if root is not None:
            inside(root, Path(path))
        found = read_bytes(Path(path), follow=True)
        if found is None:
            return None
        data = found[0]
    findings = []
    if data.startswith(_UTF16_BOMS):
        findings.append(
            Finding(1, WARNING, "UTF-16 text: the loader reads it, add and archive need UTF-8")
        )
    else:
        bad = _undecodable(data)
        if bad is not None:
            findings.append(
                Finding(bad[1], ERROR, f"not UTF-8 (byte {bad[0]}); the loader shows \ufffd for it")
            )
    return decode(data), findings


def cmd_check(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.files)
    if args.file is not None:
        paths.append(args.file)
    default = not paths
    root = project_dir(args.project_dir) if default else None
    if root is not None:
        paths = [str(root / MEMORY_FILE)]
    sizes: Sizes | None = None
    status = 0
    results = []
    for path in paths:
        found = read_for_check(path, root)
        if found is None:
            if default:
                sys.stdout.write(f"no permanent memory file at {path}\n")
                return 0
            say(f"error: permanent memory file not found: {path}")
            status = 1
            continue
        text, encoding_findings = found
        sizes = sizes or make_sizes(args.tokenizer)
        report = check_text(text, sizes.count, sizes.line_count, sizes.line_budget, args.max_tokens)
        findings = sorted(encoding_findings + report.findings, key=lambda found: found.line)
        errors = sum(1 for finding in findings if finding.level == ERROR)
        warnings = len(findings) - errors
        if errors:
            status = 1
        results.append((path, report, findings, errors, warnings))
    if args.format == "json":
        emit_json(
            {
                "files": [
                    {
                        "path": path,
                        "tokens": report.tokens,
                        "max_tokens": args.max_tokens,
                        "epics": [
                            {"id": size.epic_id, "line": size.line, "tokens": size.tokens}
                            for size in report.epics
                        ],
                        "findings": [
                            {"line": line, "level": level, "message": message}
                            for line, level, message in findings
                        ],
                        "errors": errors,
                        "warnings": warnings,
                    }
                    for path, report, findings, errors, warnings in results
                ],
                "tokenizer": tokenizer_name(sizes) if sizes else None,
            }
        )
        return status
    for path, report, findings, errors, warnings in results:
        for line, level, message in findings:
            sys.stdout.write(f"{path}:{line}: {level}: {message}\n")
        assert sizes is not None
        sys.stdout.write(
            f"{path}: {_plural(len(report.epics), 'epic')}, {report.tokens} {sizes.unit} "
            f"(max {args.max_tokens}): {_plural(errors, 'error')}, "
            f"{_plural(warnings, 'warning')}\n"
        )
    return status


# command line


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _timestamp(value: str) -> datetime:
    parsed = parse_iso_datetime(value)
    if parsed is None:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or date-time: {value!r}")
    return parsed


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Write and validate .claude/memory/permanent_memory.md.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def common(command: argparse.ArgumentParser, file_help: str) -> None:
        command.add_argument(
            "--project-dir",
            help="project root (default: $CLAUDE_PROJECT_DIR, else the current directory)",
        )
        command.add_argument("--file", help=file_help)
        command.add_argument(
            "--tokenizer",
            choices=("auto", "estimate"),
            default="auto",
            help="auto: exact cl100k_base counts when available (default); "
            "estimate: UTF-8 bytes / 4",
        )
        command.add_argument("--format", choices=("text", "json"), default="text")

    writes = "permanent memory file (default: PROJECT/.claude/memory/permanent_memory.md)"
    add = sub.add_parser(
        "add",
        help="append one finished epic from JSON or the line form",
        description="Append one epic section, in the v2 form (--schema 1: the v1 form), from "
        "JSON (--input) or the line form (--lines): id, intent, summary (one line, v2 only), "
        "completed (default now), and lists decisions, gotchas, anti_patterns, patterns, "
        "conflicts, "
        'tentative, each item text or {"text": ..., "confidence": 0-1}. Items under 0.7 '
        f"confidence go to Tentative; an epic over {MAX_EPIC_TOKENS} tokens loses its "
        "lowest-confidence items. Creates .claude/memory/ when missing.",
    )
    common(add, writes)
    given = add.add_mutually_exclusive_group(required=True)
    given.add_argument("--input", metavar="FILE", help="the JSON, or - for stdin")
    given.add_argument(
        "--lines",
        metavar="FILE",
        help="the same fields in the line form ('name: value', 'name:' then '- item' lines), "
        "or - for stdin (a quoted heredoc)",
    )
    add.add_argument("--replace", action="store_true", help="replace an epic with the same ID")
    add.add_argument(
        "--schema",
        type=int,
        choices=(1, 2),
        default=2,
        help="2: the v2 form, with a marker line, the summary and typed entries (default); "
        "1: the v1 prose form",
    )
    add.add_argument(
        "--now", type=_timestamp, metavar="ISO8601", help="the default Completed (default: now)"
    )
    archive = sub.add_parser(
        "archive",
        help="move the oldest epics to .claude/memory/archive/ until the file is small enough",
        description="Move the oldest epics (by Completed) to archive/YYYY-MM-DD.md beside the "
        "file, appending when it exists, until the file is within --max-tokens.",
    )
    common(archive, writes)
    archive.add_argument(
        "--max-tokens",
        type=_positive,
        default=SKIP_TOKENS,
        metavar="N",
        help=f"tokens the file may keep (default {SKIP_TOKENS}, where the loader stops "
        "summarising it)",
    )
    archive.add_argument(
        "--dry-run", action="store_true", help="list what would move; write nothing"
    )
    archive.add_argument(
        "--now",
        type=_timestamp,
        metavar="ISO8601",
        help="the archive file's date (default: today, UTC)",
    )
    check = sub.add_parser(
        "check",
        help="validate the file's format; exit 1 on errors",
        description="One line per finding, PATH:LINE: LEVEL: MESSAGE, then a summary per file. "
        "Errors: unknown subsections, unreadable Completed dates, duplicate IDs, "
        "conflict markers and epics torn by a line-based merge, a file over --max-tokens. "
        f"Warnings: lines the loader cuts, epics over {MAX_EPIC_TOKENS} tokens, epics without "
        "a completion date. Exit 1 when there is an error.",
    )
    common(
        check, "file to check, or - for stdin (default: PROJECT/.claude/memory/permanent_memory.md)"
    )
    check.add_argument(
        "files", nargs="*", metavar="FILE", help="files to check (pre-commit passes them)"
    )
    check.add_argument(
        "--max-tokens",
        type=_positive,
        default=SKIP_TOKENS,
        metavar="N",
        help=f"the file's ceiling (default {SKIP_TOKENS})",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(sys.argv[1:] if argv is None else list(argv))
    if args.command != "check" and args.file == "-":
        parser.error(f"{args.command}: --file - is not possible, the command writes the file")
    run = {"add": cmd_add, "archive": cmd_archive, "check": cmd_check}[args.command]
    try:
        return run(args)
    except (
        WriteError,
        InvalidEntry,
        ArchiveError,
        LoadError,
        memory_io.MemoryIOError,
    ) as exc:
        say(f"error: {exc}")
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
