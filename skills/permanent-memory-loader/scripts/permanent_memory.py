#!/usr/bin/env python3
"""Print the budgeted permanent-memory block for a project (see SKILL.md)."""

# The entry point of the skill and of the plugin's per-prompt hook. Python compiles a script on
# every run and never caches it, so this file is only the dispatch: the hook's steady state is
# pm_hook (loaded from cached bytecode), each other command is a module with main(argv).
import os
import sys

if __package__:  # installed with pip: the folder's modules import each other by name, as here
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Each command's module: main(argv) gets the words after its name (hook: pm_hook.hook()); words
# that start with no command are load's. --help lists them in this order with each one's HELP.
COMMANDS = {
    **{"load": "pm_block", "hook": "pm_hook", "inspect": "pm_inspect", "show": "pm_show"},
    **{"search": "pm_search", "doctor": "pm_doctor", "add": "pm_add", "archive": "pm_archive"},
    **{"check": "pm_check", "merge": "pm_merge_driver", "git-setup": "pm_git_setup"},
}


def main(argv: "Sequence[str] | None" = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        import pm_hook

        return pm_hook.hook()
    import importlib

    if args[:1] in (["-h"], ["--help"]):
        code: int = importlib.import_module("pm_cli").print_help(COMMANDS)
    else:
        command = args.pop(0) if args and args[0] in COMMANDS else "load"
        code = importlib.import_module(COMMANDS[command]).main(args)
    return code


if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"]:
        # The hook runs on every prompt: keep its modules' bytecode even where
        # PYTHONDONTWRITEBYTECODE is set (container images often do), or every run compiles
        # them again. In a read-only skill folder none is written and nothing else changes.
        sys.dont_write_bytecode = False
    raise SystemExit(main())
