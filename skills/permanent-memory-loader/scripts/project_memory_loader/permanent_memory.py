# The loader's command line: the module of each command and the dispatch to it. It lives here and
# not in permanent_memory.py because Python compiles a script on every run (0.25 ms for this
# code) but loads a module from its cached bytecode; the script puts the module folders on
# sys.path and hands over.
from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

# Each command's module: main(argv) gets the words after its name (hook: pm_hook.hook()); words
# that start with no command are load's. --help lists them in this order with each one's HELP.
P = "project_memory_loader"
COMMANDS = {
    **{
        "load": f"{P}.reading.pm_block",
        "hook": f"{P}.pm_hook",
        "inspect": f"{P}.reading.pm_inspect",
        "show": f"{P}.reading.pm_show",
    },
    **{
        "search": f"{P}.reading.pm_search",
        "doctor": f"{P}.reading.pm_doctor",
        "add": f"{P}.writing.pm_add",
        "archive": f"{P}.writing.pm_archive",
        "import": f"{P}.writing.pm_import",
    },
    **{
        "check": f"{P}.reading.pm_check",
        "merge": f"{P}.writing.pm_merge_driver",
        "git-setup": f"{P}.writing.pm_git_setup",
    },
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"]:
        from . import pm_hook

        return pm_hook.hook()
    import importlib

    if args[:1] in (["-h"], ["--help"]):
        code: int = importlib.import_module(f"{P}.core.pm_cli").print_help(COMMANDS)
    else:
        command = args.pop(0) if args and args[0] in COMMANDS else "load"
        code = importlib.import_module(COMMANDS[command]).main(args)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
