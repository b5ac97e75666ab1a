# The loader's command line: each command's module and the dispatch to it (the skill's
# scripts/permanent_memory.py and pip's `permanent-memory` run main). The hooks start here, so
# this imports only the shared dispatch; a command's module is imported when it runs.
from __future__ import annotations

import sys

from .core import pm_names
from .shared import command_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

DESCRIPTION = (
    "Print the budgeted permanent-memory block of a project: one line per epic of\n"
    ".claude/memory/permanent_memory.md, stamped [permanent-memory | trust:file]."
)
DEFAULT = "load"  # what runs when no word at all is given
# Each command's module: main(argv) gets the words after its name; --help lists them in this
# order with each one's HELP.
P = "project_memory_loader"
COMMANDS = {
    "load": f"{P}.reading.pm_block",
    "hook": f"{P}.pm_hook",
    "inspect": f"{P}.reading.pm_inspect",
    "show": f"{P}.reading.pm_show",
    "search": f"{P}.reading.pm_search",
    "doctor": f"{P}.reading.pm_doctor",
    "add": f"{P}.writing.pm_add",
    "archive": f"{P}.writing.pm_archive",
    "import": f"{P}.writing.pm_import",
    "check": f"{P}.reading.pm_check",
    "merge": f"{P}.writing.pm_merge_driver",
    "git-setup": f"{P}.writing.pm_git_setup",
    "propose": f"{P}.writing.pm_propose",
    "review": f"{P}.writing.pm_review",
}


def usage_of(command: str) -> str:
    """The usage line of one command, as its own --help starts."""
    from importlib import import_module

    return str(import_module(COMMANDS[command]).build_parser().format_usage())


def main(argv: Sequence[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return command_line.dispatch(args, COMMANDS, pm_names.prog(), DESCRIPTION, usage_of, DEFAULT)


if __name__ == "__main__":
    raise SystemExit(main())
