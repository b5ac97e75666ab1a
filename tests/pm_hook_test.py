"""pm_hook: the hook's writes (cache entries, session marks, pruning), atomic and contained."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pm_hook
import pm_hot
import pytest
from pm_render import STAMP

SEED = (
    Path(__file__).resolve().parent / "cases" / "seed-example" / "permanent_memory.md"
).read_bytes()


def test_write_atomic_creates_private_folders_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "entry.txt"
    pm_hook.write_atomic(str(target), b"one")
    pm_hook.write_atomic(str(target), b"two")
    assert target.read_bytes() == b"two"
    assert (target.parent.stat().st_mode & 0o777) == 0o700
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry.txt"]


def test_write_atomic_failure_keeps_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "entry.txt"
    target.write_bytes(b"old")
    (tmp_path / f"entry.txt.{os.getpid()}.tmp").mkdir()  # the temporary cannot be created
    with pytest.raises(OSError):
        pm_hook.write_atomic(str(target), b"new")
    assert target.read_bytes() == b"old"


def test_render_and_store_writes_an_entry_the_hit_path_accepts(tmp_path: Path) -> None:
    slot = tmp_path / "cache" / "blocks" / "slot.txt"
    block, status = pm_hook.render_and_store(
        SEED,
        len(SEED),
        (120, 200, 1000),
        str(slot),
        lambda text: pm_hot.cache_entry("key-1", text),
    )
    assert block.startswith(STAMP + "\nEpic FEAT-007 (JWT auth):\n")
    assert status == "2 epics, 80 tokens"
    assert pm_hot.read_cache_entry(str(slot), "key-1") == f"{status}\n{block}"
    assert pm_hot.read_cache_entry(str(slot), "key-2") is None


def test_render_and_store_without_a_cache(tmp_path: Path) -> None:
    block, _status = pm_hook.render_and_store(SEED, len(SEED), (120, 200, 90), "", lambda t: b"")
    assert block.startswith(STAMP)
    assert list(tmp_path.iterdir()) == []


def test_render_and_store_reports_an_unwritable_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    slot = blocker / "blocks" / "slot.txt"
    block, _status = pm_hook.render_and_store(
        SEED, len(SEED), (120, 200, 90), str(slot), lambda t: b"x"
    )
    assert block.startswith(STAMP)
    assert capsys.readouterr().err.startswith(
        f"permanent-memory hook: cannot write the cache in {slot.parent}: "
    )


def test_record_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "sessions" / "abc"
    pm_hook.record_sent(str(state), "digest")
    assert state.read_text() == "digest"
    pm_hook.record_sent(str(tmp_path / "sessions" / "abc" / "x"), "digest")  # abc is a file
    assert capsys.readouterr().err.startswith("permanent-memory hook: cannot record session state")


def test_prune_sessions_removes_only_old_marks(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("x")
    new.write_text("y")
    month_ago = time.time() - 31 * 86400
    os.utime(old, (month_ago, month_ago))
    pm_hook.prune_sessions(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]
    pm_hook.prune_sessions(str(tmp_path / "missing"))  # no folder: nothing to do


def test_session_file_names_are_safe(tmp_path: Path) -> None:
    folder = str(tmp_path)
    assert pm_hot.session_file(folder, "abc-123_x") == str(tmp_path / "sessions" / "abc-123_x")
    for hostile in ("../../etc/passwd", "a/b", "é", "x" * 101, "", "."):
        name = Path(pm_hot.session_file(folder, hostile)).name
        assert len(name) == 32 and name.isalnum()
