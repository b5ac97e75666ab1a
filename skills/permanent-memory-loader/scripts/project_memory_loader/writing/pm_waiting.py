# What the session-start hook says about proposed lessons, at the cost of one small read: where
# a project's proposals are kept (pm_proposals owns the store), how many wait for a person, and
# the one line that tells the model how to propose. Builtins and hook_io only: the hook starts
# every session.
from __future__ import annotations

import os

from ..shared import hook_io

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

FOLDER = "proposals"
STORE = "proposals.json"
MAX_STORE_BYTES = 4 * 1024 * 1024
# How the store writes a waiting proposal's status (json.dumps): a proposal's text cannot hold
# it, since its quotes are escaped there.
WAITING_MARK = b'"status": "waiting"'
# Beside the permanent-memory block at session start, never inside its budget (docs/hooks.md).
PROPOSE_LINE = (
    "Lessons: when you settle a decision or find a gotcha later sessions must know, "
    "propose it with the permanent-memory-loader skill's propose command.\n"
)
REVIEW_COMMAND = "/project-memory:review"


def store_dir(env: Mapping[str, str], project_dir: str) -> str | None:
    """The folder of one project's proposals in the user's cache folder (not the plugin's data
    folder, which the commands the model runs are not given): proposals/{folder name}-{digest of
    its real path}; None without a cache folder."""
    base = hook_io.cache_dir(FOLDER, {"XDG_CACHE_HOME": env.get("XDG_CACHE_HOME", "")})
    name = hook_io.project_folder(project_dir)
    if base is None or name is None:
        return None
    return os.path.join(base, name)


def waiting_count(env: Mapping[str, str], root: str) -> int:
    """How many proposals wait in this project (0 when there is no store or it cannot be read)."""
    folder = store_dir(env, root)
    if folder is None:
        return 0
    try:
        with open(os.path.join(folder, STORE), "rb") as handle:
            data = handle.read(MAX_STORE_BYTES)
    except OSError:
        return 0
    return data.count(WAITING_MARK)


def start_status(env: Mapping[str, str], root: str) -> str:
    """The person's part of the session-start line: `3 lessons proposed: /project-memory:review`
    ("" when none waits)."""
    count = waiting_count(env, root)
    if not count:
        return ""
    return f"{count} lesson{'' if count == 1 else 's'} proposed: {REVIEW_COMMAND}"
