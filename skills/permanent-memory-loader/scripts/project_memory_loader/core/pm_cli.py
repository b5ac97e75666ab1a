# What every command of permanent_memory.py shares: the options declared once, their
# validators, the JSON output, the stderr line and the error boundary that turns a LoaderError
# into its one line and exit 1. Each command is a module with main(argv); permanent_memory.py
# maps the command's name to it.
from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from ..shared import command_line, hook_io, memory_io
from ..shared.memory_text import parse_iso_datetime
from . import pm_file, pm_names
from .pm_errors import LoaderError
from .pm_load import line_budget
from .pm_render import Budget
from .pm_tokens import ESTIMATE, ESTIMATE_BYTES_PER_TOKEN, Tokenizer

PROG = pm_names.prog()  # the name the person typed: the script's or pip's
MEMORY_FILE = Path(pm_file.MEMORY_FILE)
READ_FILE_HELP = (
    "permanent memory file, or - for stdin (default: PROJECT/.claude/memory/permanent_memory.md)"
)
WRITE_FILE_HELP = "permanent memory file (default: PROJECT/.claude/memory/permanent_memory.md)"

Counter = Callable[[str], int]


def positive(minimum: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {number}")
        return number

    return parse


def timestamp(value: str) -> datetime:
    parsed = parse_iso_datetime(value)
    if parsed is None:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or date-time: {value!r}")
    return parsed


def command_parser(command: str, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=f"{PROG} {command}", description=description)


def add_project_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project-dir",
        help="project root (default: $CLAUDE_PROJECT_DIR, else the current directory)",
    )


def add_file(parser: argparse.ArgumentParser, file_help: str = READ_FILE_HELP) -> None:
    parser.add_argument("--file", help=file_help)


def add_tokenizer(parser: argparse.ArgumentParser, estimate_help: str) -> None:
    parser.add_argument(
        "--tokenizer",
        choices=("auto", "estimate"),
        default="auto",
        help=f"auto: exact cl100k_base counts when available (default); estimate: {estimate_help}",
    )


def add_count(
    parser: argparse.ArgumentParser,
    flag: str,
    minimum: int,
    default: int,
    what: str,
    more: str = "",
) -> None:
    """An option taking a whole number N of at least `minimum`, its help `what (default D)`,
    or `what (default D, more)`."""
    parser.add_argument(
        flag,
        type=positive(minimum),
        default=default,
        metavar="N",
        help=f"{what} (default {default}{', ' if more else ''}{more})",
    )


def add_now(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--now", type=timestamp, metavar="ISO8601", help=what)


def parse_writing_args(
    parser: argparse.ArgumentParser, command: str, argv: Sequence[str] | None
) -> argparse.Namespace:
    """A writing command's arguments (sys.argv's when argv is None): --file - is refused, since
    the command writes the file."""
    args = parse_args(parser, sys.argv[1:] if argv is None else argv)
    if args.file == "-":
        parser.error("--file - is not possible, the command writes the file")
    return args


def add_writing_options(parser: argparse.ArgumentParser) -> None:
    """The options add and archive share: where the file is, how tokens are counted, --format."""
    add_project_dir(parser)
    add_file(parser, WRITE_FILE_HELP)
    add_tokenizer(parser, "UTF-8 bytes / 4")
    add_format(parser)


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text")


def parse_args(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """argv parsed by the command's parser: a word it does not know is an error with the
    command's own usage line (exit 2)."""
    return parser.parse_args(argv)


def project_dir(explicit: str | None) -> Path:
    if explicit:
        if not Path(explicit).is_dir():
            raise LoaderError(f"project directory not found: {explicit}")
        return Path(explicit)
    return Path(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())


def evidence_root(file: str | None, explicit_project: str | None) -> Path | None:
    """The project whose files the entries' paths are checked against (pm_evidence): the one
    --project-dir names; else, for the project's own file (no --file), the project; else the
    project a --file at PROJECT/.claude/memory/ (or its archive/) belongs to. None for stdin or
    a file elsewhere: its paths are not checked."""
    if explicit_project:
        return project_dir(explicit_project)
    if file is None:
        return project_dir(None)
    if file == "-":
        return None
    folder = Path(os.path.abspath(file)).parent
    if folder.name == "archive":
        folder = folder.parent
    if folder.name == "memory" and folder.parent.name == ".claude":
        return folder.parent.parent
    return None


def emit_json(data: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


say = hook_io.stderr_line


def run(command: Callable[[], int]) -> int:
    """The command's exit code; a LoaderError or a file layer's error is its one line on stderr
    and exit 1 (command_line.run, the boundary both skills share)."""
    return command_line.run(command, (LoaderError, memory_io.MemoryIOError), say)


class WriteCounting(NamedTuple):
    """How the writing commands count tokens (--tokenizer)."""

    count: Counter  # tokens: exact cl100k_base, or UTF-8 bytes / 4 rounded up
    estimated: bool
    line_count: Counter  # the loader's own counter, for where it cuts Epic lines
    line_budget: Budget

    @property
    def unit(self) -> str:
        return "estimated tokens" if self.estimated else "tokens"

    @property
    def tokenizer_name(self) -> str:
        return ESTIMATE if self.estimated else "cl100k_base"


def write_counting(choice: str) -> WriteCounting:
    tokenizer = Tokenizer(allow_exact=choice == "auto")
    budget = line_budget(Budget(), tokenizer)
    if tokenizer.exact:
        return WriteCounting(tokenizer.count, False, tokenizer.count, budget)
    if choice == "auto":
        say(
            f"note: exact token counts unavailable ({tokenizer.problem}); "
            "estimating 4 bytes a token"
        )

    def estimate(text: str) -> int:
        size = len(text.encode("utf-8", "surrogatepass"))
        return -(-size // ESTIMATE_BYTES_PER_TOKEN)

    return WriteCounting(estimate, True, tokenizer.count, budget)


def plural(number: int, word: str) -> str:
    return f"{number} {word}" if number == 1 else f"{number} {word}s"
