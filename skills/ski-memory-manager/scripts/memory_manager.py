#!/usr/bin/env python3
"""Session memory for coding agents (see SKILL.md)."""

# The skill's entry: run as a script, Python puts this folder first on sys.path, and the
# ski_memory_manager package beside it holds the command line (pip installs the same package).
import sys

if __name__ == "__main__":
    if sys.argv[1:] == ["hook"]:
        # The session-start hook: keep its modules' bytecode even where PYTHONDONTWRITEBYTECODE
        # is set, or every session start compiles them again. A read-only folder: none written.
        sys.dont_write_bytecode = False
    from ski_memory_manager.memory_manager import main

    raise SystemExit(main())
