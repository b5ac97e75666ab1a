#!/usr/bin/env python3
"""Print the budgeted permanent-memory block for a project (see SKILL.md)."""

# The skill's entry: run as a script, Python puts this folder first on sys.path, and the
# project_memory_loader package beside it holds the command line (pip installs the same package).
import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["hook"]:  # every prompt runs it: keep its bytecode, whatever the setting
        sys.dont_write_bytecode = False
    from project_memory_loader.permanent_memory import main

    raise SystemExit(main())
