#!/usr/bin/env python3
"""Print the budgeted permanent-memory block for a project (see SKILL.md)."""

# The entry of the skill and of the plugin's hooks. Python compiles a script on every run, so this
# is only the dispatch: the hook is pm_hook (cached bytecode), each command a module's main(argv).
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))  # as sys.path[0]: links resolved
# The modules sit in folders by job (docs/code.md), each on sys.path: they import each other by name
FOLDERS = [os.path.join(HERE, d) for d in ("core", "evidence", "recall", "reading", "writing")]
if __package__:  # installed with pip
    sys.path[:0] = [HERE, *FOLDERS]
elif __name__ == "__main__":  # run as a script: sys.path[0] is this folder
    sys.path[1:1] = FOLDERS
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
        # Keep the hook's bytecode (every prompt runs it) even under PYTHONDONTWRITEBYTECODE.
        sys.dont_write_bytecode = False
    raise SystemExit(main())
