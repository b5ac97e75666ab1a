"""mm_keep: a captured snapshot copied from the user's folder into the project's memory folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from mm_capture_test import captures, compacted, proj
from ski_memory_manager import memory_manager
from support import call_main

__all__ = ["proj"]  # the fixture, shared with mm_capture_test


def test_keep_copies_the_newest_capture_and_never_another_file(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(proj)
    none = call_main(memory_manager, ["keep"])
    assert (none.code, none.out) == (1, "")
    assert none.err.startswith("no captured snapshot of this project")
    assert compacted(proj).err == ""
    [path] = captures(proj)
    kept = call_main(memory_manager, ["keep"])
    assert (kept.code, kept.err) == (0, f"note: created {proj / 'memory'}\n")
    assert kept.out == f"{proj / 'memory' / path.name}\n"
    assert (proj / "memory" / path.name).read_bytes() == path.read_bytes()
    assert call_main(memory_manager, ["keep"]).code == 0  # the same capture again: updated
    (proj / "memory" / path.name).write_text("not a capture\n", encoding="utf-8")
    refused = call_main(memory_manager, ["keep"])
    assert (refused.code, refused.out) == (1, "")
    assert refused.err == f"{proj / 'memory' / path.name} is another snapshot; nothing copied\n"
    assert (proj / "memory" / path.name).read_text(encoding="utf-8") == "not a capture\n"
    other = call_main(memory_manager, ["keep", "--session", "2020-01-01-00-00"])
    assert other.code == 1 and other.err.startswith("no captured snapshot of this project in ")
    as_json = call_main(memory_manager, ["keep", "--format", "json", "--memory-dir", "shared"])
    assert as_json.code == 0 and '"from": "' in as_json.out
    assert (proj / "shared" / path.name).is_file()
