# `permanent_memory.py inspect`: why the block looks as it does, for a person at a terminal
# (pm_report.inspect_text); --format json is load's.
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..core import pm_cli
from ..core.pm_cli import MEMORY_FILE, project_dir
from .pm_block import add_block_options, load_summary
from .pm_inspect_path import add_file_options, inspect_path
from .pm_report import inspect_text
from .pm_search import add_recall_options, inspect_prompt

HELP = "show each epic, the tokens per level and which level is chosen"


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser(
        "inspect",
        "Show why the block looks as it does: each epic (ID, intent, completed, age, stale, "
        "tokens) and each level's tokens, the chosen level and why.",
    )
    add_block_options(parser)
    parser.add_argument(
        "--prompt",
        metavar="TEXT",
        help="instead: what prompt-time recall would add to this prompt, each candidate's "
        "score and why it was or was not added",
    )
    add_recall_options(parser)
    add_file_options(parser)
    return parser


def colour(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return "NO_COLOR" not in os.environ and callable(isatty) and bool(isatty())


def bold(line: str) -> str:
    return f"\x1b[1m{line}\x1b[0m"


def inspect(args: argparse.Namespace) -> int:
    if args.path is not None:
        return inspect_path(args)
    if args.prompt is not None:
        return inspect_prompt(args)
    loaded = load_summary(args)
    if loaded is None:
        path = project_dir(args.project_dir) / MEMORY_FILE
        sys.stdout.write(f"no permanent memory file at {path}\n")
        return 0
    if args.format == "json":
        pm_cli.emit_json(loaded.json_data())
        return 0
    mark = bold if colour(sys.stdout) else str
    inputs = loaded.report_inputs()
    sys.stdout.write(inspect_text(loaded.summary, inputs, loaded.tokenizer.count, mark))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: inspect(args))
