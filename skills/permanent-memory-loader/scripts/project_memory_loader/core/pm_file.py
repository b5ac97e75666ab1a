# Finding and reading the project's permanent-memory file, for the hook and the commands alike:
# the path the repository controls must not lead outside the project, and a file too large to
# be summarised is measured, never read. Import-light: the hook's steady state imports it.
from __future__ import annotations

import os

from ..shared import memory_io

MEMORY_FILE = os.path.join(".claude", "memory", "permanent_memory.md")
# More bytes than this means more than 8000 cl100k_base tokens whatever the file holds (no token
# is longer than 128 bytes): the file is skipped without being read, let alone tokenised.
CERTAIN_SKIP_BYTES = 8000 * 128 + 3


def memory_path(root: str) -> str:
    """Where the project rooted at `root` keeps its permanent memory."""
    return os.path.join(root, MEMORY_FILE)


def read_memory_file(path: str, root: str | None = None) -> tuple[bytes | None, int]:
    """The file's bytes (None when it is over CERTAIN_SKIP_BYTES) and its size. It is opened
    without blocking and read only if it is a regular file: a FIFO or a device must neither
    hang nor flood the reader. With `root` (the project), `path` is the repository's and must not
    lead outside it. Raises FileNotFoundError or NotADirectoryError when there is no file,
    memory_io.OutsideProject or another OSError when it cannot be read."""
    if root is None:
        return memory_io.read_regular(path, CERTAIN_SKIP_BYTES)
    return memory_io.read_inside(root, path, CERTAIN_SKIP_BYTES)
