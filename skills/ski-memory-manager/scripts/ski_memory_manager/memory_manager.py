"""Session memory for coding agents: save a 1-2 KB snapshot after each
checkpoint, load the newest one at the start of a session.

`--help` lists the commands of COMMANDS, each with its module's one-line HELP.
"""

# The manager's command line: the module of each command and the dispatch to it. It lives here
# and not in memory_manager.py because Python compiles a script on every run but loads a module
# from its cached bytecode; `hook` goes straight to mm_hook, whose cache hit needs neither
# argparse nor the snapshot modules.
from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported at run time: the hook starts every session
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


# The module that runs each command (its `main(argv)` gets what follows the command's name);
# --help lists them in this order, each with its module's HELP.
COMMANDS = {
    "save": "ski_memory_manager.mm_save",
    "pause": "ski_memory_manager.mm_pause",
    "load-last": "ski_memory_manager.mm_load_last",
    "list": "ski_memory_manager.mm_list",
    "keep": "ski_memory_manager.mm_keep",
    "hook": "ski_memory_manager.mm_hook",
    "doctor": "ski_memory_manager.mm_doctor",
    "merge": "ski_memory_manager.mm_git_merge",
    "git-setup": "ski_memory_manager.mm_git_setup",
}


def _add_hook_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    commands.add_parser(
        "hook",
        description="Read the hook JSON on stdin: at SessionStart print the resume block of "
        "this project's session memory; at PostCompact keep the compaction summary as a "
        "captured snapshot. Always exits 0.",
    )


def _parser() -> argparse.ArgumentParser:
    """Every command's parser: for --help, and to say what is wrong with a command line."""
    from importlib import import_module

    from . import mm_cli

    summary = __doc__.split("\n\n")[0] if __doc__ else ""
    parser, commands = mm_cli.command_line(f"{summary}\n\n{mm_cli.command_list(COMMANDS)}")
    for name, module in COMMANDS.items():
        add_parser = _add_hook_parser if name == "hook" else import_module(module).add_parser
        add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["hook"]:
        from . import mm_hook

        return mm_hook.hook()
    if args and args[0] in COMMANDS and args[0] != "hook":
        from importlib import import_module

        return int(import_module(COMMANDS[args[0]]).main(args[1:]))
    command = _parser().parse_args(args).command  # exits 2 on a usage error, 0 after --help
    if command == "hook":
        return main(["hook"])
    return main(args[args.index(command) :])


if __name__ == "__main__":
    raise SystemExit(main())
