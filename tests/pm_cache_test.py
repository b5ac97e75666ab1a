"""pm_cache: the hook's block cache (entries, keys, session marks, pruning), atomic, contained."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from project_memory_loader.core import pm_cache
from project_memory_loader.recall import pm_recall_store
from project_memory_loader.shared import hook_io, memory_io
from support import (
    LOADER,
    LOADER_STAMP,
    SEED_MEMORY,
    assert_no_traceback,
    call_main,
    clean_env,
    demote_to_nobody,
    hook_context,
    hook_payload,
    module,
    nobody_folder,
    nobody_script,
    run,
    stderr_lines,
)


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
        "core/pm_cache.py",
        "evidence/pm_evidence.py",
        "evidence/pm_evidence_git.py",
        "evidence/pm_walk.py",
        "core/pm_file.py",
        "core/pm_fit.py",
        "core/pm_load.py",
        "core/pm_meta_lines.py",
        "core/pm_parse.py",
        "core/pm_render.py",
        "core/pm_tokens.py",
        "recall/pm_recall.py",
        "recall/pm_recall_index.py",
        "recall/pm_recall_store.py",
        "shared/memory_text.py",
    }
    for names in (pm_cache.RENDER_MODULES, pm_recall_store.TABLE_MODULES):
        stamp = hook_io.code_stamp(pm_cache.LOADER, names)
        assert "-" not in stamp.split(","), names  # every one of them exists


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


# ---------------------------------------------------------------------------------------------
# The loader hook with its cache damaged, its folder unusable, or unreadable to the user
# `nobody`: the hook still exits 0 with the block `load` prints.

CORRUPTIONS = [
    "empty",
    "half",
    "garbage",
    "flip-byte",
    "directory",
    "dangling-link",
    "wrong-json",
    "nul",
]


def _corrupt(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "half":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(os.urandom(max(64, len(data))))
    elif how == "flip-byte":
        i = len(data) // 2
        path.write_bytes(data[:i] + bytes([data[i] ^ 0x20 or 0x41]) + data[i + 1 :])
    elif how == "directory":
        path.unlink()
        path.mkdir()
    elif how == "dangling-link":
        path.unlink()
        path.symlink_to(path.parent / "does-not-exist")
    elif how == "wrong-json":
        path.write_text(json.dumps({"block": 42, "version": [], "hash": None}))
    elif how == "nul":
        path.write_bytes(b"\0" * max(1, len(data)))


@pytest.mark.parametrize("how", CORRUPTIONS)
def test_loader_cache_corrupted(
    loader_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    pm = module("project_memory_loader.permanent_memory")
    cache = tmp_path / "plugin-data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(cache))
    expected = call_main(pm, ["load", "--project-dir", str(loader_project)]).out
    assert expected.startswith(LOADER_STAMP)
    first = call_main(pm, ["hook"], stdin=hook_payload(loader_project, "prime"))
    assert first.code == 0 and first.out == expected
    files = [p for p in cache.rglob("*") if p.is_file()]
    assert files, "the hook cached nothing under $CLAUDE_PLUGIN_DATA"
    for p in files:
        _corrupt(p, how)
    for session, event in (("fresh-1", "UserPromptSubmit"), ("fresh-2", "SessionStart")):
        res = call_main(pm, ["hook"], stdin=hook_payload(loader_project, session, event))
        assert_no_traceback(res, f"hook after {how}")
        assert res.code == 0
        assert res.out == expected, f"cache {how}: emitted {res.out!r}"
    # The primed session either gets the block again or nothing (its state may be gone), never
    # a wrong block.
    again = call_main(pm, ["hook"], stdin=hook_payload(loader_project, "prime"))
    assert again.code == 0 and again.out in ("", expected), again.out
    assert sorted(p.name for p in (loader_project / ".claude" / "memory").iterdir()) == [
        "permanent_memory.md"
    ]


@pytest.mark.parametrize("how", ["file-not-dir", "under-a-file", "dev-null", "no-home"])
def test_loader_cache_dir_unusable(loader_project: Path, tmp_path: Path, how: str) -> None:
    env = clean_env(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    if how == "file-not-dir":
        env["CLAUDE_PLUGIN_DATA"] = str(blocker)
    elif how == "under-a-file":
        env["CLAUDE_PLUGIN_DATA"] = str(blocker / "sub")
    elif how == "dev-null":
        env["CLAUDE_PLUGIN_DATA"] = "/dev/null"
    else:
        del env["CLAUDE_PLUGIN_DATA"]
        del env["XDG_CACHE_HOME"]
        env["HOME"] = str(blocker)
    expected = run(LOADER, ["load", "--project-dir", str(loader_project)], env=env).out
    assert expected.startswith(LOADER_STAMP)
    for session in ("a", "b"):
        res = run(LOADER, ["hook"], env=env, stdin=hook_payload(loader_project, session))
        assert_no_traceback(res, f"hook with cache {how}")
        assert res.code == 0 and res.out == expected, (res.out, res.err)
        # A diagnostic per thing it could not do (cache, session state), nothing more.
        assert len(stderr_lines(res.err)) <= 3 and "Traceback" not in res.err, res.err
    assert blocker.read_text() == "not a directory"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to nobody")
def test_loader_cache_dir_unreadable_as_unprivileged_user(tmp_path: Path) -> None:
    with nobody_folder("pm-cache-nobody-") as base:
        proj = base / "proj"
        (proj / ".claude" / "memory").mkdir(parents=True)
        (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(SEED_MEMORY)
        for p in [proj, proj / ".claude", proj / ".claude" / "memory"]:
            p.chmod(0o755)
        (proj / ".claude" / "memory" / "permanent_memory.md").chmod(0o644)
        cache = base / "cache"
        cache.mkdir(mode=0o000)
        cache.chmod(0o000)
        env = clean_env(base)
        env["CLAUDE_PLUGIN_DATA"] = str(cache)
        expected = run(LOADER, ["load", "--project-dir", str(proj)], env=env).out
        as_nobody = nobody_script(base, LOADER, "zlib")
        for session in ("a", "b"):
            proc = subprocess.run(
                [*as_nobody, "hook"],
                input=hook_payload(proj, session),
                capture_output=True,
                env=env,
                timeout=60,
                preexec_fn=demote_to_nobody(),
                check=False,
            )
            assert "Traceback" not in proc.stderr.decode(), proc.stderr
            context = hook_context(proc.stdout.decode(), hook_payload(proj, session))
            assert proc.returncode == 0 and context == expected, proc
