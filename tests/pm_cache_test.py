"""pm_cache: the hook's block cache (entries, keys, session marks, pruning), atomic, contained."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import memory_io
import pm_cache
import pytest


def test_cache_entry_round_trip_and_damage(tmp_path: Path) -> None:
    path = tmp_path / "entry"
    block = "[permanent-memory | trust:file]\nEpic é:\n"
    path.write_bytes(pm_cache.cache_entry("k", block))
    assert pm_cache.read_cache_entry(str(path), "k") == block
    assert pm_cache.read_cache_entry(str(path), "other") is None
    good = path.read_bytes()
    for damaged in (good[:-1], good + b"x", good.replace(b"\xc3\xa9", b"e!"), b"", b"\n\n\n"):
        path.write_bytes(damaged)
        assert pm_cache.read_cache_entry(str(path), "k") is None
    assert pm_cache.read_cache_entry(str(tmp_path / "missing"), "k") is None


def test_code_stamp_names_every_rendering_module() -> None:
    assert set(pm_cache.RENDER_MODULES) == {
        "pm_hook.py",
        "pm_cache.py",
        "pm_file.py",
        "pm_load.py",
        "pm_parse.py",
        "pm_render.py",
        "pm_tokens.py",
        "memory_text.py",
    }
    stamp = memory_io.code_stamp(pm_cache.HERE, pm_cache.RENDER_MODULES)
    assert "-" not in stamp.split(",")  # every one of them exists


def test_write_atomic_creates_private_folders_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "entry.txt"
    pm_cache.write_atomic(str(target), b"one")
    pm_cache.write_atomic(str(target), b"two")
    assert target.read_bytes() == b"two"
    assert (target.parent.stat().st_mode & 0o777) == 0o700
    assert sorted(p.name for p in target.parent.iterdir()) == ["entry.txt"]


def test_write_atomic_failure_keeps_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "entry.txt"
    target.write_bytes(b"old")

    def disk_full(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(memory_io.MemoryIOError) as caught:
        pm_cache.write_atomic(str(target), b"new")
    monkeypatch.undo()
    assert caught.value.reason == "No space left on device"
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["entry.txt"]


def test_write_atomic_names_a_folder_it_cannot_make(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(memory_io.MemoryIOError) as caught:
        pm_cache.write_atomic(str(tmp_path / "file" / "blocks" / "slot"), b"new")
    assert caught.value.reason == "Not a directory"


def test_record_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "sessions" / "abc"
    pm_cache.record_sent(str(state), "digest")
    assert state.read_text() == "digest"
    pm_cache.record_sent(str(tmp_path / "sessions" / "abc" / "x"), "digest")  # abc is a file
    assert capsys.readouterr().err.startswith("permanent-memory hook: cannot record session state")


def test_prune_sessions_removes_only_old_marks(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("x")
    new.write_text("y")
    month_ago = time.time() - 31 * 86400
    os.utime(old, (month_ago, month_ago))
    pm_cache.prune_sessions(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]
    pm_cache.prune_sessions(str(tmp_path / "missing"))  # no folder: nothing to do


def test_session_file_names_are_safe(tmp_path: Path) -> None:
    folder = str(tmp_path)
    assert pm_cache.session_file(folder, "abc-123_x") == str(tmp_path / "sessions" / "abc-123_x")
    for hostile in ("../../etc/passwd", "a/b", "é", "x" * 101, "", "."):
        name = Path(pm_cache.session_file(folder, hostile)).name
        assert len(name) == 32 and name.isalnum()
