"""pm_file: finding and reading the permanent-memory file, bounded and regular files only."""

from __future__ import annotations

import os
from pathlib import Path

import pm_file
import pytest
from pm_render import SKIP_TOKENS
from pm_tokens import MAX_TOKEN_BYTES


def test_read_memory_file(tmp_path: Path) -> None:
    path = tmp_path / "permanent_memory.md"
    path.write_bytes(b"## Epic: A\n")
    assert pm_file.read_memory_file(str(path)) == (b"## Epic: A\n", 11)
    with open(path, "wb") as handle:
        handle.truncate(pm_file.CERTAIN_SKIP_BYTES + 1)
    assert pm_file.read_memory_file(str(path)) == (None, pm_file.CERTAIN_SKIP_BYTES + 1)
    with pytest.raises(FileNotFoundError):
        pm_file.read_memory_file(str(tmp_path / "missing"))
    with pytest.raises(NotADirectoryError):
        pm_file.read_memory_file(str(path / "below-a-file"))
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        pm_file.read_memory_file(str(tmp_path / "fifo"))


def test_the_skip_bound_is_the_skip_size_in_the_longest_tokens() -> None:
    assert pm_file.CERTAIN_SKIP_BYTES == SKIP_TOKENS * MAX_TOKEN_BYTES + 3
    assert pm_file.memory_path("/p") == os.path.join(
        "/p", ".claude", "memory", "permanent_memory.md"
    )
