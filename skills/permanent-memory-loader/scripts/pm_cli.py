# The command line of permanent_memory.py other than `hook`: load (the default), inspect,
# doctor, and the writing commands (add, archive, check) when permanent_memory_write.py is
# present beside this file.
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

import memory_io
from pm_file import read_memory_file
from pm_load import Summary, decode, summarise
from pm_parse import parse_iso_datetime
from pm_render import Budget
from pm_report import Context, explain_text, inspect_text, summary_json
from pm_tokens import Tokenizer

PROG = "permanent_memory.py"
MEMORY_FILE = Path(".claude") / "memory" / "permanent_memory.md"
MIN_HARD_CAP = 40
# Commands provided by a sibling module, imported only when asked for. The module's
# main(argv) receives the whole argument list, the command name first.
WRITE_MODULE = "permanent_memory_write"
WRITE_COMMANDS = ("add", "archive", "check")
GIT_COMMANDS = ("merge", "git-setup")  # pm_git
COMMANDS = ("load", "hook", "inspect", "show", "doctor", *WRITE_COMMANDS, *GIT_COMMANDS)
_HERE = Path(__file__).resolve().parent


class LoadError(Exception):
    """An expected failure with a one-line message for the user."""


def _positive(minimum: int) -> Callable[[str], int]:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
        if number < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {number}")
        return number

    return parse


def _timestamp(value: str) -> datetime:
    parsed = parse_iso_datetime(value)
    if parsed is None:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 date or date-time: {value!r}")
    return parsed


def _write_available() -> bool:
    return (_HERE / f"{WRITE_MODULE}.py").exists()


def build_parser() -> argparse.ArgumentParser:
    commands = "load (default), hook, inspect, show, doctor"
    if _write_available():
        commands += ", " + ", ".join((*WRITE_COMMANDS, *GIT_COMMANDS))
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Print the budgeted permanent-memory block of a project: one line per "
        "epic of .claude/memory/permanent_memory.md, stamped [permanent-memory | trust:file].",
        epilog=f"commands: {commands}. `hook` reads Claude Code hook JSON on stdin.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def file_options(command: argparse.ArgumentParser) -> None:
        command.add_argument(
            "--project-dir",
            help="project root (default: $CLAUDE_PROJECT_DIR, else the current directory)",
        )
        command.add_argument(
            "--file",
            help="permanent memory file, or - for stdin "
            "(default: PROJECT/.claude/memory/permanent_memory.md)",
        )
        command.add_argument(
            "--target",
            type=_positive(1),
            default=120,
            metavar="N",
            help="token target of the block (default 120)",
        )
        command.add_argument(
            "--hard-cap",
            type=_positive(MIN_HARD_CAP),
            default=200,
            metavar="N",
            help="tokens the block never exceeds (default 200)",
        )
        command.add_argument(
            "--stale-days",
            type=_positive(1),
            default=90,
            metavar="N",
            help="epics completed more than N days ago are flagged (default 90)",
        )
        command.add_argument(
            "--now",
            type=_timestamp,
            metavar="ISO8601",
            help="the time to judge staleness by (default: now, UTC)",
        )
        command.add_argument(
            "--tokenizer",
            choices=("auto", "estimate"),
            default="auto",
            help="auto: exact cl100k_base counts when available (default); "
            "estimate: the conservative byte estimate",
        )
        command.add_argument("--format", choices=("text", "json"), default="text")

    load = sub.add_parser(
        "load",
        help="print the block (the default command)",
        description="Print the permanent-memory block.",
    )
    file_options(load)
    load.add_argument(
        "--explain",
        action="store_true",
        help="also print, on stderr, the tokens per level and why a level was chosen",
    )
    sub.add_parser("hook", help="Claude Code SessionStart / UserPromptSubmit hook (stdin: JSON)")
    inspect = sub.add_parser(
        "inspect",
        help="show each epic, the tokens per level and which level is chosen",
        description="Show why the block looks as it does: each epic (ID, intent, completed, age, "
        "stale, tokens) and each level's tokens, the chosen level and why.",
    )
    file_options(inspect)
    show = sub.add_parser(
        "show",
        help="print whole epics by ID, cleaned, redacted and stamped",
        description="Print the whole section of each epic asked for, cleaned and redacted like "
        "the block and stamped [permanent-memory | trust:file]; use it when the block's first "
        "lines are not enough, instead of reading the file raw.",
    )
    show.add_argument("ids", nargs="+", metavar="ID", help="epic IDs, e.g. FEAT-007")
    show.add_argument(
        "--project-dir",
        help="project root (default: $CLAUDE_PROJECT_DIR, else the current directory)",
    )
    show.add_argument(
        "--file",
        help="permanent memory file, or - for stdin "
        "(default: PROJECT/.claude/memory/permanent_memory.md)",
    )
    show.add_argument("--format", choices=("text", "json"), default="text")
    doctor = sub.add_parser(
        "doctor",
        help="check Python, tiktoken, the offline encoding, the cache dir and the memory file",
        description="Check what the loader needs; one line per check.",
    )
    doctor.add_argument(
        "--project-dir",
        help="project root (default: $CLAUDE_PROJECT_DIR, else the current directory)",
    )
    doctor.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def project_dir(explicit: str | None) -> Path:
    if explicit:
        if not Path(explicit).is_dir():
            raise LoadError(f"project directory not found: {explicit}")
        return Path(explicit)
    return Path(os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd())


def read_memory(args: argparse.Namespace) -> tuple[str, bytes | None, int] | None:
    """(path shown, bytes or None when too large to read, size); None: no file, say nothing."""
    if args.file == "-":
        data = sys.stdin.buffer.read()
        return "-", data, len(data)
    explicit = args.file is not None
    # --file may point anywhere; the project's own file must not lead outside the project.
    root = None if explicit else project_dir(args.project_dir)
    path = Path(args.file) if root is None else root / MEMORY_FILE
    if path.name == "manual_overrides.md":
        raise LoadError(f"{path}: manual_overrides.md is user-curated and never loaded")
    try:
        data, size = read_memory_file(str(path), None if root is None else str(root))
    except (FileNotFoundError, NotADirectoryError):
        if explicit:
            raise LoadError(f"permanent memory file not found: {path}") from None
        return None
    except OSError as exc:
        raise LoadError(f"cannot read {path}: {exc.strerror or exc}") from None
    return str(path), data, size


class Loaded(NamedTuple):
    summary: Summary
    tokenizer: Tokenizer
    path: str
    now: datetime

    def context(self) -> Context:
        tokenizer = self.tokenizer
        tokenizer.ensure_loaded()  # may not have been needed for the block itself
        if tokenizer.exact:
            detail = f"{tokenizer.engine}, {tokenizer.source}"
        else:
            detail = f"UTF-8 bytes, never fewer than the real count; {tokenizer.problem}"
        return Context(self.path, tokenizer.name, detail, self.now)


def load_summary(args: argparse.Namespace) -> Loaded | None:
    found = read_memory(args)
    if found is None:
        return None
    path, data, size = found
    tokenizer = Tokenizer(allow_exact=args.tokenizer == "auto")
    now = args.now or datetime.now(timezone.utc)
    budget = Budget(target=args.target, hard_cap=args.hard_cap, stale_days=args.stale_days)
    return Loaded(summarise(data, size, budget, tokenizer, now), tokenizer, path, now)


def _json_text(loaded: Loaded) -> str:
    data = summary_json(loaded.summary, loaded.context(), loaded.tokenizer.count)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def cmd_load(args: argparse.Namespace) -> int:
    loaded = load_summary(args)
    if loaded is None:
        return 0
    if args.format == "json":
        sys.stdout.write(_json_text(loaded))
    else:
        sys.stdout.write(loaded.summary.block.text)
    if args.explain:
        sys.stderr.write(explain_text(loaded.summary, loaded.context(), loaded.tokenizer.count))
    return 0


def _colour(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return "NO_COLOR" not in os.environ and callable(isatty) and bool(isatty())


def cmd_inspect(args: argparse.Namespace) -> int:
    loaded = load_summary(args)
    if loaded is None:
        path = project_dir(args.project_dir) / MEMORY_FILE
        sys.stdout.write(f"no permanent memory file at {path}\n")
        return 0
    if args.format == "json":
        sys.stdout.write(_json_text(loaded))
        return 0

    def bold(line: str) -> str:
        return f"\x1b[1m{line}\x1b[0m"

    mark = bold if _colour(sys.stdout) else str
    sys.stdout.write(inspect_text(loaded.summary, loaded.context(), loaded.tokenizer.count, mark))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import pm_show

    found = read_memory(args)
    if found is None:
        raise LoadError(
            f"no permanent memory file at {project_dir(args.project_dir) / MEMORY_FILE}"
        )
    path, data, _size = found
    if data is None:
        raise LoadError(f"{path} is too large to read; archive old epics: {PROG} archive")
    text = decode(data)
    try:
        shown = pm_show.show_text(text, args.ids)
    except pm_show.UnknownEpic as exc:
        raise LoadError(f"{path}: {exc}") from None
    if args.format == "json":
        data_out = {"file": path, "ids": list(args.ids), "text": shown}
        sys.stdout.write(json.dumps(data_out, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(shown)
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    import pm_doctor

    return pm_doctor.run(project_dir(args.project_dir), args.format)


def run_write_command(argv: Sequence[str]) -> int:
    if not _write_available():
        sys.stderr.write(
            f"{PROG}: {argv[0]}: not available in this copy of the skill "
            f"({WRITE_MODULE}.py is missing)\n"
        )
        return 2
    module = importlib.import_module(WRITE_MODULE)
    result: int = module.main(list(argv))
    return result


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in WRITE_COMMANDS:
        return run_write_command(args_list)
    if args_list and args_list[0] in GIT_COMMANDS:
        if not _write_available():  # merge writes a file: part of the writing commands
            return run_write_command(args_list)
        import pm_git

        return pm_git.main(args_list)
    if args_list[:1] == ["hook"]:
        import pm_hook

        return pm_hook.hook()
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in ("-h", "--help")):
        args_list.insert(0, "load")
    args = build_parser().parse_args(args_list)
    refused = memory_io.stdout_refusal()
    if refused is not None:
        _error(refused)
        return 1
    try:
        if args.command == "inspect":
            return cmd_inspect(args)
        if args.command == "doctor":
            return cmd_doctor(args)
        if args.command == "show":
            return cmd_show(args)
        return cmd_load(args)
    except LoadError as exc:
        _error(str(exc))
        return 1
    except (UnicodeEncodeError, ValueError) as exc:  # closed while running, or cannot encode
        refused = memory_io.stdout_refusal(exc)
        if refused is None:
            raise
        _error(refused)
        return 1


def _error(message: str) -> None:
    try:
        sys.stderr.write(f"error: {message}\n")
    except (AttributeError, OSError, ValueError):  # stderr closed too: the exit code says it
        pass


if __name__ == "__main__":
    raise SystemExit(main())
