#!/usr/bin/env python3
"""Session memory for coding agents: save a 1-2 KB snapshot after each checkpoint, load the
newest one at the start of a session.

  save       write or update memory/{YYYY-MM-DD-HH-MM}-{project}.md
  load-last  print the newest snapshot of a project, stamped, with a resume line
  list       one line per project, or per session of one project
  hook       Claude Code SessionStart hook (hook JSON on stdin; always exits 0)
  doctor     check Python, PyYAML and this project's memory directory
  merge      git merge driver: one session saved on two branches, merged by key
  git-setup  make git merge snapshots with this script
"""

# Kept small on purpose: a script run directly is compiled on every start, while its sibling
# modules (mm_*.py) are cached as bytecode. The work happens in those modules; `hook` goes
# straight to mm_hot, whose cache hit needs neither argparse nor the snapshot modules.
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if __package__:  # installed with pip: the folder's modules import each other by name, as here
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="memory_manager.py",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument(
        "--memory-dir",
        metavar="D",
        help="memory directory (default: $CLAUDE_PLUGIN_OPTION_MEMORY_DIR, else memory/; "
        "relative to $CLAUDE_PROJECT_DIR, else to the current directory)",
    )

    save = commands.add_parser(
        "save",
        parents=[common, where],
        help="write or update a session snapshot",
        description="Write memory/{session_timestamp}-{project_name}.md, or update it when that "
        "session was saved before (given fields replace, steps and checkpoint decisions merge "
        "by key, approved checkpoints append). Fields come from --input JSON and flags; flags "
        "win. Prints the path written.",
    )
    save.add_argument("--project-name", metavar="P")
    save.add_argument(
        "--session-timestamp", metavar="T", help="YYYY-MM-DD-HH-MM in UTC (default: now)"
    )
    save.add_argument("--mode", metavar="MODE", help="architect or express")
    save.add_argument("--status", metavar="S", help="in-progress, paused or completed")
    save.add_argument("--last-checkpoint", metavar="CP")
    save.add_argument("--checkpoints-approved", metavar="CP", nargs="+")
    save.add_argument("--target-dir", metavar="X")
    save.add_argument("--input", metavar="FILE", help="JSON object of fields; - for stdin")
    save.add_argument(
        "--yaml",
        metavar="FILE",
        help="the same fields as a block YAML mapping; - for stdin (a quoted heredoc)",
    )
    save.add_argument(
        "--create-dir",
        action="store_true",
        help="create the memory directory (and missing parents) when it does not exist",
    )
    save.add_argument(
        "--now", metavar="ISO8601", help="the time recorded as updated_at (default: now)"
    )

    load = commands.add_parser(
        "load-last",
        parents=[common, where],
        help="print a project's newest snapshot",
        description="Print the newest snapshot of the project, stamped, with a resume line. "
        "Unreadable snapshots are skipped with a warning.",
    )
    load.add_argument("--project-name", metavar="P", required=True)
    load.add_argument("--now", metavar="ISO8601", help="the time 'last touched' counts from")

    listing = commands.add_parser(
        "list",
        parents=[common, where],
        help="list projects, or one project's sessions",
        description="One line per project (newest session), or with --project-name one line "
        "per session of that project, newest first.",
    )
    listing.add_argument("--project-name", metavar="P")
    listing.add_argument("--now", metavar="ISO8601", help="the time 'last touched' counts from")

    commands.add_parser(
        "hook",
        help="Claude Code SessionStart hook",
        description="Read the hook JSON on stdin and print the resume block of this project's "
        "session memory. Always exits 0.",
    )

    commands.add_parser(
        "doctor",
        parents=[common, where],
        help="check the set-up",
        description="Check Python, PyYAML, file locking and this project's memory directory; "
        "exit 1 if something required is missing or a snapshot holds a merge conflict.",
    )

    merge = commands.add_parser(
        "merge",
        help="git merge driver: one session saved on two branches",
        description="Merge OURS and THEIRS, two saves of one session (BASE: their common "
        "ancestor), by save's own rules, and write the result to OURS; other files are merged "
        "as plain text. Exit 0 when merged, 1 when conflict markers are left. git-setup "
        "makes git call this as: merge %%O %%A %%B %%P.",
    )
    merge.add_argument("base", metavar="BASE", help="the common ancestor (%%O)")
    merge.add_argument("ours", metavar="OURS", help="our version; the result is written here")
    merge.add_argument("theirs", metavar="THEIRS", help="their version (%%B)")
    merge.add_argument("path", metavar="PATH", nargs="?", help="the file's path (%%P)")
    commands.add_parser(
        "git-setup",
        parents=[where],
        help="make git merge session snapshots with this script",
        description="Add a merge=ski-memory line for the memory directory's *.md to the "
        "repository's .gitattributes and define the driver in its own git config, with "
        "absolute paths to this interpreter and script. Safe to run again.",
    )
    return parser


def _doctor(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    import mm_commands
    import mm_doctor

    outside = None
    if args.memory_dir:
        memory_dir = Path(args.memory_dir)
    else:
        try:
            memory_dir = mm_commands.default_memory_dir(os.environ)
        except mm_commands.MemoryDirRefused as exc:
            memory_dir, outside = exc.memory_dir, exc.real
    checks = mm_doctor.run_checks(memory_dir, outside=outside)
    if args.format == "json":
        sys.stdout.write(
            mm_commands.dump_json(
                {
                    "ok": not mm_doctor.failed(checks),
                    "checks": [check._asdict() for check in checks],
                }
            )
        )
    else:
        sys.stdout.write(mm_doctor.format_checks(checks))
    return 1 if mm_doctor.failed(checks) else 0


def main(argv: Sequence[str] | None = None) -> int:
    if list(sys.argv[1:] if argv is None else argv) == ["hook"]:
        import mm_hot

        return mm_hot.hook()
    import memory_io
    import mm_commands
    import mm_frontmatter
    import mm_snapshot
    import mm_store

    args = _parser().parse_args(argv)
    if args.command in ("merge", "git-setup"):
        import mm_git

        git_commands = {"merge": mm_git.merge, "git-setup": mm_git.git_setup}
        try:
            return git_commands[args.command](args)
        except (mm_commands.CommandError, mm_store.StoreError, memory_io.MemoryIOError) as exc:
            mm_commands.say(str(exc))
            return 1
    run = {
        "save": mm_commands.save,
        "load-last": mm_commands.load_last,
        "list": mm_commands.list_snapshots,
        "doctor": _doctor,
    }[args.command]
    refused = memory_io.stdout_refusal()
    if refused is not None:
        mm_commands.say(f"error: {refused}")
        return 1
    try:
        return run(args)
    except (
        mm_commands.CommandError,
        mm_snapshot.InvalidField,
        mm_store.StoreError,
        mm_frontmatter.YamlMissing,
    ) as exc:
        mm_commands.say(str(exc))
        hint = getattr(exc, "hint", None)
        if hint:
            mm_commands.say(hint)
        return 1
    except (UnicodeEncodeError, ValueError) as exc:  # closed while running, or cannot encode
        refused = memory_io.stdout_refusal(exc)
        if refused is None:
            raise
        mm_commands.say(f"error: {refused}")
        return 1


if __name__ == "__main__":
    if sys.argv[1:] == ["hook"]:
        # The session-start hook: keep its modules' bytecode even where PYTHONDONTWRITEBYTECODE
        # is set, or every session start compiles them again. A read-only folder: none written.
        sys.dont_write_bytecode = False
    raise SystemExit(main())
