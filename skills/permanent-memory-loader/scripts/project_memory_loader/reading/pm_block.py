# `permanent_memory.py load` (the default command): print the block; --format json and
# --explain say how it was chosen (pm_report).
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from ..core import pm_cli, pm_file, pm_limits
from ..core.pm_cli import MEMORY_FILE, project_dir
from ..core.pm_errors import LoaderError
from ..core.pm_load import Summary, summarise
from ..core.pm_render import Budget
from ..core.pm_tokens import Tokenizer
from .pm_report import ReportInputs, explain_text, summary_json

HELP = "print the block (the default command)"


def add_block_options(parser: argparse.ArgumentParser) -> None:
    """The options of load and inspect: where the file is, the budget, the clock, the counter."""
    pm_cli.add_project_dir(parser)
    pm_cli.add_file(parser)
    limits = pm_limits
    for flag, minimum, default, what in (
        ("--target", limits.MIN_TOKEN_TARGET, limits.TOKEN_TARGET, "token target of the block"),
        ("--hard-cap", limits.MIN_HARD_CAP, limits.HARD_CAP, "tokens the block never exceeds"),
        (
            "--stale-days",
            limits.MIN_STALE_DAYS,
            limits.STALE_DAYS,
            "epics completed more than N days ago are flagged",
        ),
    ):
        pm_cli.add_count(parser, flag, minimum, default, what)
    pm_cli.add_now(parser, "the time to judge staleness by (default: now, UTC)")
    pm_cli.add_tokenizer(parser, "the conservative byte estimate")
    pm_cli.add_format(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser("load", "Print the permanent-memory block.")
    add_block_options(parser)
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also print, on stderr, the tokens per level and why a level was chosen",
    )
    return parser


class MemoryBytes(NamedTuple):
    path: str  # as shown in messages ("-" for stdin)
    data: bytes | None  # None when too large to be worth reading
    size: int


def read_memory(file: str | None, project: str | None) -> MemoryBytes | None:
    """The memory file to show: --file (anywhere, or - for stdin), else the project's own, which
    must not lead outside the project. None: the project has no file, say nothing."""
    if file == "-":
        data = sys.stdin.buffer.read()
        return MemoryBytes("-", data, len(data))
    root: Path | None = None
    if file is None:
        root = project_dir(project)
        path = root / MEMORY_FILE
    else:
        path = Path(file)
    explicit = root is None
    if path.name == "manual_overrides.md":
        raise LoaderError(f"{path}: manual_overrides.md is user-curated and never loaded")
    try:
        data, size = pm_file.read_memory_file(str(path), None if root is None else str(root))
    except (FileNotFoundError, NotADirectoryError):
        if explicit:
            raise LoaderError(f"permanent memory file not found: {path}") from None
        return None
    except OSError as exc:
        raise LoaderError(f"cannot read {path}: {exc.strerror or exc}") from None
    return MemoryBytes(str(path), data, size)


class LoadedSummary(NamedTuple):
    summary: Summary
    tokenizer: Tokenizer
    path: str
    now: datetime

    def report_inputs(self) -> ReportInputs:
        tokenizer = self.tokenizer
        tokenizer.ensure_loaded()  # may not have been needed for the block itself
        if tokenizer.exact:
            detail = f"{tokenizer.engine}, {tokenizer.source}"
        else:
            detail = f"UTF-8 bytes, never fewer than the real count; {tokenizer.problem}"
        return ReportInputs(self.path, tokenizer.name, detail, self.now)

    def json_data(self) -> dict[str, Any]:
        return summary_json(self.summary, self.report_inputs(), self.tokenizer.count)


def load_summary(args: argparse.Namespace) -> LoadedSummary | None:
    found = read_memory(args.file, args.project_dir)
    return None if found is None else summary_of(found, args)


def summary_of(found: MemoryBytes, args: argparse.Namespace) -> LoadedSummary:
    """The summary of the file read, with the budget, clock and counter of add_block_options."""
    tokenizer = Tokenizer(allow_exact=args.tokenizer == "auto")
    now = args.now or datetime.now(timezone.utc)
    budget = Budget(target=args.target, hard_cap=args.hard_cap, stale_days=args.stale_days)
    root = pm_cli.evidence_root(args.file, args.project_dir)
    summary = summarise(
        found.data, found.size, budget, tokenizer, now, None if root is None else str(root)
    )
    return LoadedSummary(summary, tokenizer, found.path, now)


def load(args: argparse.Namespace) -> int:
    loaded = load_summary(args)
    if loaded is None:
        return 0
    if args.format == "json":
        pm_cli.emit_json(loaded.json_data())
    else:
        sys.stdout.write(loaded.summary.block.text)
    if args.explain:
        inputs = loaded.report_inputs()
        sys.stderr.write(explain_text(loaded.summary, inputs, loaded.tokenizer.count))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: load(args))
