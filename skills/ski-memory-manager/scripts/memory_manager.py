#!/usr/bin/env python3
"""Session memory for coding agents (see SKILL.md); the command line is mm_main's."""

# The entry of the skill and of the plugin's hooks. Python compiles a script on every run, so this
# is kept to the hand-over: the command line is mm_main's (cached bytecode).
import os
import sys

if __package__:  # installed with pip: the folder's modules import each other by name, as here
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
elif __name__ == "__main__" and sys.argv[1:] == ["hook"]:
    # The session-start hook: keep its modules' bytecode even where PYTHONDONTWRITEBYTECODE is
    # set, or every session start compiles them again. A read-only folder: none written.
    sys.dont_write_bytecode = False

from mm_main import COMMANDS as COMMANDS
from mm_main import main as main

if __name__ == "__main__":
    raise SystemExit(main())
