"""git_config: the lines git-setup adds to .gitattributes (only what is missing, never through a
link); each test runs against both skills' copies."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest


def test_add_attributes_appends_only_what_is_missing(
    git_config: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / ".gitattributes").write_text("*.png binary")
    mode = 0o640
    os.chmod(tmp_path / ".gitattributes", mode)
    added = git_config.add_attributes(tmp_path, "# ours", ["a merge=x", "b merge=x"])
    assert added == ["a merge=x", "b merge=x"]
    assert (tmp_path / ".gitattributes").read_text() == (
        "*.png binary\n\n# ours\na merge=x\nb merge=x\n"
    )
    assert (tmp_path / ".gitattributes").stat().st_mode & 0o777 == mode
    before = (tmp_path / ".gitattributes").stat().st_mtime_ns
    assert git_config.add_attributes(tmp_path, "# ours", ["a merge=x", "b merge=x"]) == []
    assert (tmp_path / ".gitattributes").stat().st_mtime_ns == before  # not rewritten
    assert git_config.add_attributes(tmp_path, "# ours", ["c merge=y"]) == ["c merge=y"]
    assert (tmp_path / ".gitattributes").read_text().endswith("b merge=x\nc merge=y\n")


def test_add_attributes_creates_the_file_and_refuses_links(
    git_config: ModuleType, tmp_path: Path
) -> None:
    assert git_config.add_attributes(tmp_path, "# ours", ["a merge=x"]) == ["a merge=x"]
    assert (tmp_path / ".gitattributes").read_text() == "# ours\na merge=x\n"
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".gitattributes").symlink_to(tmp_path / ".gitattributes")
    with pytest.raises(git_config.MemoryIOError, match="is a symbolic link"):
        git_config.add_attributes(linked, "# ours", ["z merge=x"])
    assert (tmp_path / ".gitattributes").read_text() == "# ours\na merge=x\n"
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / ".gitattributes").mkdir()
    with pytest.raises(git_config.MemoryIOError):
        git_config.add_attributes(tmp_path / "dir", "# ours", ["z merge=x"])
