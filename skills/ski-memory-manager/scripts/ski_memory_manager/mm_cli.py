# What the manager's commands share: the command line they sit on (`memory_manager.py COMMAND`)
# and its shared options, where the memory directory is, one JSON emitter, one stderr helper,
# and the boundary that turns an expected failure into one stderr line and exit 1.
# The session-start hook uses it on a cache miss, so argparse is imported only to build a parser.
from __future__ import annotations

import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from . import memory_manager, mm_snapshot
from .mm_errors import CommandError, ManagerError
from .shared import command_line, hook_io, memory_io, memory_text

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

PROG = memory_manager.prog()  # the name the person typed: the script's or pip's
MEMORY_DIR_OPTION = "CLAUDE_PLUGIN_OPTION_MEMORY_DIR"


class MemoryDirRefused(CommandError):
    """The project's `memory/` leads outside the project: nothing is read or written there."""

    def __init__(self, memory_dir: Path, real: str) -> None:
        self.memory_dir = memory_dir
        self.real = real
        super().__init__(
            f"memory directory {memory_dir} leads outside the project (to {real}); refused: "
            f"pass --memory-dir {real} to use it on purpose"
        )


def say(line: str) -> None:
    """One diagnostic line on stderr, made safe to show to a model (stderr reaches it too):
    no control characters, no markup, no secret echoed back from a rejected value."""
    hook_io.stderr_line(" ".join(memory_text.clean(line).split("\n")))


def print_json(value: object) -> None:
    import json

    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


def parse_now(text: str | None) -> datetime:
    if text is None:
        return datetime.now(timezone.utc)
    moment = memory_text.parse_iso_datetime(text)
    if moment is None:
        raise mm_snapshot.InvalidField(
            f"--now must be an ISO 8601 date-time like 2026-05-01T10:00:00Z (got {text!r})"
        )
    return moment


def project_dir(env: Mapping[str, str], fallback: str | None = None) -> Path:
    """$CLAUDE_PROJECT_DIR, else the given fallback (the hook JSON's cwd), else the cwd."""
    for candidate in (env.get("CLAUDE_PROJECT_DIR"), fallback):
        if candidate and "\0" not in candidate:
            return Path(candidate)
    return Path.cwd()


def default_memory_dir(env: Mapping[str, str], fallback: str | None = None) -> Path:
    """The plugin's memory-dir option (relative to the project dir), else `memory/` there.

    The option is the user's and may point anywhere; `memory/` is the repository's, and a clone
    may link it to another project's: it must not lead outside the project (MemoryDirRefused)."""
    base = project_dir(env, fallback)
    option = env.get(MEMORY_DIR_OPTION, "").strip()
    if option:
        if "\0" in option or "\n" in option:
            say(f"note: ignoring {MEMORY_DIR_OPTION} (not a path); using memory/")
        else:
            return base / Path(option).expanduser()
    memory_dir = base / "memory"
    try:
        memory_io.inside_project(base, memory_dir)
    except memory_io.OutsideProject as exc:
        raise MemoryDirRefused(memory_dir, exc.real) from None
    return memory_dir


def captured_dir(env: Mapping[str, str], fallback: str | None = None) -> Path | None:
    """The project's captured snapshots in the user's folder (mm_capture writes them there by
    default); None when capture is off or there is no such folder."""
    from . import mm_session

    if mm_session.capture_mode(env)[0] == "off":
        return None
    folder = mm_session.captured_dir(env, str(project_dir(env, fallback)))
    return Path(folder) if folder is not None else None


def memory_dir_from(flag: str | None) -> Path:
    """--memory-dir when given, else the default for this environment."""
    return Path(flag) if flag else default_memory_dir(os.environ)


def memory_dir_names(memory_dir: Path) -> list[str]:
    try:
        return os.listdir(memory_dir)
    except OSError as exc:
        raise CommandError(
            f"cannot read memory directory {memory_dir}: {exc.strerror or exc}"
        ) from None


# --- the command line ---------------------------------------------------------------------------


def subcommand_parser(
    description: str | None = None,
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction[argparse.ArgumentParser]]:
    """`memory_manager.py COMMAND ...`: the parser and the action each command adds itself to.
    The description is printed as written (command_list lays the commands out)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog=PROG,
        usage="%(prog)s [-h] COMMAND ...",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, help=argparse.SUPPRESS, prog=PROG
    )
    return parser, commands


def shared_options(output_format: bool = True) -> list[argparse.ArgumentParser]:
    """The parents of a command that reads the memory directory: --format, --memory-dir."""
    import argparse

    parents = []
    if output_format:
        formats = argparse.ArgumentParser(add_help=False)
        formats.add_argument(
            "--format",
            choices=("text", "json"),
            default="text",
            help="output format (default: text)",
        )
        parents.append(formats)
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument(
        "--memory-dir",
        metavar="D",
        help="memory directory (default: $CLAUDE_PLUGIN_OPTION_MEMORY_DIR, else memory/; "
        "relative to $CLAUDE_PROJECT_DIR, else to the current directory)",
    )
    parents.append(where)
    return parents


def add_command(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    summary: str,
    description: str,
    output_format: bool = True,
) -> argparse.ArgumentParser:
    """The parser of a command that reads the memory directory (shared_options its parents):
    `summary` is its line in --help, `description` its own --help's."""
    return commands.add_parser(
        name, parents=shared_options(output_format), help=summary, description=description
    )


def add_now_option(parser: argparse.ArgumentParser, help: str) -> None:
    parser.add_argument("--now", metavar="ISO8601", help=help)


def parse_command(
    name: str,
    add_parser: Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], object],
    argv: Sequence[str],
) -> argparse.Namespace:
    """argv (what follows the command's name) parsed as `memory_manager.py NAME ...`: usage
    errors read the same however the command was reached."""
    parser, commands = subcommand_parser()
    add_parser(commands)
    return parser.parse_args([name, *argv])


def run(command: Callable[[Any], int], args: Any, prints_results: bool = True) -> int:
    """The error boundary (command_line.run, the one both skills share): an expected failure is
    one stderr line (and its hint), exit 1; so is a stdout that cannot take the results."""
    return command_line.run(
        lambda: command(args), (ManagerError, memory_io.MemoryIOError), say, prints_results
    )
