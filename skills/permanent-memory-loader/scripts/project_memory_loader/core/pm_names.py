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


# Text the model reads from a hook (the block's "not loaded" line, the hook's notes) names a
# command by the skill that runs it: the model reaches the skill's commands through its SKILL.md,
# whatever the install (plugin, skill folder, pip), and no file name is right in all of them.
SKILL = "permanent-memory-loader"


def skill_command(command: str) -> str:
    """A command as a hook's text names it (`the ... skill's archive command`)."""
    return f"the {SKILL} skill's {command} command"
