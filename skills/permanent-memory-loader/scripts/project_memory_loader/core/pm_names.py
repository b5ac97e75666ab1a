# The names the loader goes by, for usage lines and the hints that name a command: the skill's
# script, and the console script pip installs (pyproject.toml's [project.scripts]).
from __future__ import annotations

import sys

from ..shared import command_line

SCRIPT = "permanent_memory.py"
CONSOLE_SCRIPT = "permanent-memory"


def prog() -> str:
    """The name the person typed: pip's console script when it ran, else the script's."""
    return command_line.typed_name(sys.argv[0] if sys.argv else "", SCRIPT, CONSOLE_SCRIPT)
