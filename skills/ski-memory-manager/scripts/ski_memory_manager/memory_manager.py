# The manager's command line: each command's module and the dispatch to it (the skill's
# scripts/memory_manager.py and pip's `ski-memory` run main). The session-start hook starts
# here, so this imports only the shared dispatch; a command's module is imported when it runs.
from __future__ import annotations

import sys

from .shared import command_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

SCRIPT = "memory_manager.py"
CONSOLE_SCRIPT = "ski-memory"  # what pip installs (pyproject.toml's [project.scripts])
DESCRIPTION = (
    "Session memory for coding agents: save a 1-2 KB snapshot after each\n"
    "checkpoint, load the newest one at the start of a session."
)
# The module that runs each command (its `main(argv)` gets what follows the command's name);
# --help lists them in this order, each with its module's HELP.
P = "ski_memory_manager"
COMMANDS = {
    "save": f"{P}.mm_save",
    "pause": f"{P}.mm_pause",
    "load-last": f"{P}.mm_load_last",
    "list": f"{P}.mm_list",
    "keep": f"{P}.mm_keep",
    "hook": f"{P}.mm_hook",
    "doctor": f"{P}.mm_doctor",
    "merge": f"{P}.mm_git_merge",
    "git-setup": f"{P}.mm_git_setup",
}


def prog() -> str:
    """The name the person typed: pip's console script when it ran, else the script's."""
    return command_line.typed_name(sys.argv[0] if sys.argv else "", SCRIPT, CONSOLE_SCRIPT)


def usage_of(command: str) -> str:
    """The usage line of one command, as its own --help starts."""
    from importlib import import_module

    from . import mm_cli

    _parser, commands = mm_cli.subcommand_parser()
    import_module(COMMANDS[command]).add_parser(commands)
    return str(commands.choices[command].format_usage())


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return command_line.dispatch(args, COMMANDS, prog(), DESCRIPTION, usage_of)


if __name__ == "__main__":
    raise SystemExit(main())
