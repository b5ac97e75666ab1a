# Both skills' command lines, one design: `SCRIPT COMMAND [options]`, each command a module with
# a one-line HELP and main(argv). Here: the name the person typed, the dispatch to a command (a
# word that is no command is an "invalid choice" with the closest command and that command's
# usage), --help's list of commands, and the boundary that turns an expected failure into one
# line on stderr and exit 1.
#
# Each skill carries a copy of this file (`python3 scripts/dev.py sync-shared` writes them; see
# memory_io). The hooks start through dispatch, so it imports nothing at load time beyond os and
# sys; importlib, difflib and argparse are loaded where they are needed.
from __future__ import annotations

import os
import sys

from . import hook_io

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import NoReturn


def typed_name(argv0: str, script: str, console_script: str) -> str:
    """The name the person typed, for usage lines and hints: the console script's when pip
    installed it and it ran, else the skill's script."""
    name = os.path.basename(argv0)
    name = name[:-4] if name.lower().endswith(".exe") else name  # a console script on Windows
    return console_script if name == console_script else script


def command_list(commands: Mapping[str, str]) -> str:
    """--help's list: one line per command, its name and its module's one-line HELP, in the
    table's order."""
    from importlib import import_module

    summaries = {name: import_module(module).HELP for name, module in commands.items()}
    width = max(map(len, summaries))
    return "\n".join(f"  {name:<{width}}  {summary}" for name, summary in summaries.items())


def print_help(prog: str, description: str, commands: Mapping[str, str], default: str) -> int:
    """SCRIPT --help: the usage line, what the script does, and every command with its HELP."""
    which = f"{default} is the default; " if default else ""
    sys.stdout.write(
        f"usage: {prog} [-h] COMMAND ...\n\n{description}\n\n"
        f"commands ({which}`COMMAND --help` for its options):\n{command_list(commands)}\n"
    )
    return 0


def closest(word: str, names: Sequence[str]) -> str | None:
    """The command a mistyped word most likely meant, or None when none is near."""
    from difflib import get_close_matches

    found = get_close_matches(word, list(names), n=1, cutoff=0.6)
    return found[0] if found else None


def usage_error(usage: str, prog: str, message: str) -> NoReturn:
    """Exit 2 with a usage line and the message, as argparse does."""
    sys.stderr.write(f"{usage.rstrip()}\n{prog}: error: {message}\n")
    raise SystemExit(2)


def invalid_choice(
    word: str,
    prog: str,
    commands: Mapping[str, str],
    usage_of: Callable[[str], str],
    default: str = "",
) -> NoReturn:
    """A word that is no command: "invalid choice", the closest command and its usage (an
    option before any command: the default command's)."""
    names = list(commands)
    if word.startswith("-") and default:
        near: str | None = default
        meant = f"; a command comes first, as in '{default} {word}'"
    else:
        near = closest(word, names)
        meant = f"; did you mean {near!r}?" if near else ""
    usage = usage_of(near) if near else f"usage: {prog} [-h] COMMAND ..."
    usage_error(usage, prog, f"invalid choice: {word!r}{meant} (choose from {', '.join(names)})")


def dispatch(
    argv: Sequence[str],
    commands: Mapping[str, str],
    prog: str,
    description: str,
    usage_of: Callable[[str], str],
    default: str = "",
) -> int:
    """Run the command argv names with the words after it. No words at all run `default` (when
    there is one); -h or --help lists the commands; a first word that is no command is an
    invalid choice (exit 2)."""
    args = list(argv)
    if not args:
        if not default:
            usage_error(
                f"usage: {prog} [-h] COMMAND ...",
                prog,
                f"a command is required (choose from {', '.join(commands)})",
            )
        args = [default]
    if args[0] in ("-h", "--help"):
        return print_help(prog, description, commands, default)
    if args[0] not in commands:
        invalid_choice(args[0], prog, commands, usage_of, default)
    from importlib import import_module

    return int(import_module(commands[args[0]]).main(args[1:]))


def run(
    command: Callable[[], int],
    expected: tuple[type[BaseException], ...],
    say: Callable[[str], None] = hook_io.stderr_line,
    prints_results: bool = True,
) -> int:
    """The error boundary both skills' commands run in: an expected failure (one of
    `expected`) is its message on stderr, and its hint when it has one, and exit 1; so is a
    stdout that cannot take the results (closed, or an encoding that cannot show them). Anything
    else is a bug and shows as one."""
    if prints_results:
        refused = hook_io.stdout_refusal()
        if refused is not None:
            say(refused)
            return 1
    try:
        return command()
    except expected as exc:
        say(str(exc))
        hint = getattr(exc, "hint", None)
        if hint:
            say(str(hint))
        return 1
    except BrokenPipeError:  # the reader went away (`| head`): nothing more to print
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that flushing at exit cannot fail again
        return 1
    except (UnicodeEncodeError, ValueError) as exc:  # closed while running, or cannot encode
        say(hook_io.refusal_of(exc))
        return 1
