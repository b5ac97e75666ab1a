#!/usr/bin/env python3
"""Print the budgeted permanent-memory block for a project (see SKILL.md)."""

# The entry of the skill and of the plugin's hooks. Python compiles a script on every run, so this
# only puts the module folders on sys.path; the command line is pm_main's (cached bytecode).
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))  # as sys.path[0]: links resolved
# The modules sit in folders by job (docs/code.md), each on sys.path: they import each other by name
FOLDERS = [os.path.join(HERE, d) for d in ("core", "evidence", "recall", "reading", "writing")]
if __package__:  # installed with pip
    sys.path[:0] = [HERE, *FOLDERS]
elif __name__ == "__main__":  # run as a script: sys.path[0] is this folder
    sys.path[1:1] = FOLDERS
    if sys.argv[1:2] == ["hook"]:  # every prompt runs it: keep its bytecode, whatever the setting
        sys.dont_write_bytecode = False

from pm_main import COMMANDS as COMMANDS  # noqa: E402  (the folders first)
from pm_main import main as main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
