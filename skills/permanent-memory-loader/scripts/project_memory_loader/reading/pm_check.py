# `permanent_memory.py check`: validate permanent memory files (pm_findings finds the
# problems), one PATH:LINE: LEVEL: MESSAGE line each, then a summary per file; exit 1 on an
# error. Also a pre-commit hook: it takes the files as arguments.
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..core import pm_cli
from ..core.pm_cli import MEMORY_FILE, WriteCounting, plural, project_dir, say
from ..core.pm_load import NO_EVIDENCE, Evidence, check_evidence, decode
from ..core.pm_parse import parse_permanent
from ..core.pm_render import SKIP_TOKENS
from ..writing.pm_epic_input import MAX_EPIC_TOKENS
from ..writing.pm_write_file import (
    MAX_FILE_BYTES,
    UTF16_BOMS,
    first_undecodable,
    inside,
    read_bytes,
)
from .pm_findings import ERROR, WARNING, Finding, check_text
from .pm_glob_check import glob_findings

HELP = "validate the file's format; exit 1 on errors"


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
    if data.startswith(UTF16_BOMS):
        findings.append(
            Finding(1, WARNING, "UTF-16 text: the loader reads it, add and archive need UTF-8")
        )
    else:
        bad = first_undecodable(data)
        if bad is not None:
            findings.append(
                Finding(
                    bad[1],
                    ERROR,
                    f"not UTF-8 at byte offset {bad[0]} (line {bad[1]}); the loader shows "
                    "\ufffd for it",
                )
            )
    return decode(data), findings


def file_evidence(text: str, path: str, root: Path | None, explicit: str | None) -> Evidence:
    """The paths the file's entries name, checked against its project (pm_cli.evidence_root:
    --project-dir, the project of the default file, or of a file in PROJECT/.claude/memory/)."""
    where = root if root is not None else pm_cli.evidence_root(path, explicit)
    if where is None:
        return NO_EVIDENCE
    epics = parse_permanent(text)
    return check_evidence(epics, str(where)) if epics else NO_EVIDENCE


def check(args: argparse.Namespace) -> int:
    paths: list[str] = list(args.files)
    if args.file is not None:
        paths.append(args.file)
    default = not paths
    root = project_dir(args.project_dir) if default else None
    if root is not None:
        paths = [str(root / MEMORY_FILE)]
    counting: WriteCounting | None = None
    status = 0
    results = []
    for path in paths:
        found = read_for_check(path, root)
        if found is None:
            if default:
                sys.stdout.write(f"no permanent memory file at {path}\n")
                return 0
            say(f"permanent memory file not found: {path}")
            status = 1
            continue
        text, encoding_findings = found
        counting = counting or pm_cli.write_counting(args.tokenizer)
        evidence = file_evidence(text, path, root, args.project_dir)
        report = check_text(
            text,
            counting.count,
            counting.line_count,
            counting.line_budget,
            args.max_tokens,
            states=evidence.states,
        )
        where = root if root is not None else pm_cli.evidence_root(path, args.project_dir)
        globs = glob_findings(parse_permanent(text), None if where is None else str(where))
        findings = sorted(
            encoding_findings + report.findings + globs, key=lambda finding: finding.line
        )
        errors = sum(1 for finding in findings if finding.level == ERROR)
        warnings = len(findings) - errors
        if errors:
            status = 1
        results.append((path, report, findings, errors, warnings))
    if args.format == "json":
        pm_cli.emit_json(
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
                "tokenizer": counting.tokenizer_name if counting else None,
            }
        )
        return status
    for path, report, findings, errors, warnings in results:
        for line, level, message in findings:
            sys.stdout.write(f"{path}:{line}: {level}: {message}\n")
        assert counting is not None
        sys.stdout.write(
            f"{path}: {plural(len(report.epics), 'epic')}, {report.tokens} {counting.unit} "
            f"(max {args.max_tokens}): {plural(errors, 'error')}, "
            f"{plural(warnings, 'warning')}\n"
        )
    return status


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "check",
        "One line per finding, PATH:LINE: LEVEL: MESSAGE, then a summary per file. "
        "Errors: unknown subsections, unreadable Completed dates, duplicate IDs, "
        "conflict markers and epics torn by a line-based merge, a file over --max-tokens, "
        "Paths globs that are absolute, leave the project or lead out of it through a link. "
        f"Warnings: lines the loader cuts, epics over {MAX_EPIC_TOKENS} tokens, epics without "
        "a completion date, entries naming a project path that is gone or that git records as "
        "moved, Paths globs that match no file. Exit 1 when there is an error.",
    )
    pm_cli.add_project_dir(parser)
    pm_cli.add_file(
        parser,
        "file to check, or - for stdin (default: PROJECT/.claude/memory/permanent_memory.md)",
    )
    pm_cli.add_tokenizer(parser, "UTF-8 bytes / 4")
    pm_cli.add_format(parser)
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help="files to check (pre-commit passes them)"
    )
    pm_cli.add_count(parser, "--max-tokens", 1, SKIP_TOKENS, "the file's ceiling")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: check(args))
