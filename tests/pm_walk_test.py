# pm_walk: the project's tree looked at strictly inside its root (links read, never followed
# out), as the hook's cache key and the file tools' hook see it.
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from project_memory_loader.evidence import pm_walk

# ---------------------------------------------------------------------------------------------
# Existence, strictly inside the root


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """proj/ with src/a.py, a folder, links inside and out; outside/ beside it."""
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "secret.py").write_text("outside")
    (outside / "deep" / "x.py").write_text("outside")
    root = tmp_path / "proj"
    (root / "src" / "sub").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a")
    (root / "src" / "sub" / "b.py").write_text("b")
    os.symlink("sub", root / "src" / "inner")  # inside: resolved by reading it
    os.symlink("../a.py", root / "src" / "sub" / "up.py")
    os.symlink(str(root / "src"), root / "abs-inside")
    os.symlink(str(outside), root / "out")  # leads out: gone
    os.symlink("../outside/secret.py", root / "escape.py")
    os.symlink("loop2", root / "loop1")
    os.symlink("loop1", root / "loop2")
    os.symlink("nowhere.py", root / "src" / "dangling.py")
    return root


@pytest.mark.parametrize(
    ("path", "exists"),
    [
        ("src/a.py", True),
        ("src/sub/", True),
        ("src/sub/b.py", True),
        ("src/inner/b.py", True),
        ("src/sub/up.py", True),
        ("abs-inside/a.py", True),
        ("src/missing.py", False),
        ("src/a.py/x.py", False),  # a file where a folder should be
        ("out/secret.py", False),
        ("out/", False),  # a link to a folder outside: gone, even named as a folder
        ("src/inner/", True),
        ("out/deep/x.py", False),
        ("escape.py", False),
        ("loop1/x.py", False),
        ("src/dangling.py", False),
    ],
)
def test_existence_inside_the_root(tree: Path, path: str, exists: bool) -> None:
    assert pm_walk.existence_bits(str(tree), [path]) == ("1" if exists else "0")


def test_nothing_outside_the_root_is_stat_ed_or_read(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    touched: list[str] = []
    real_lstat, real_readlink = os.lstat, os.readlink

    def lstat(path: Any, *args: Any, **kwargs: Any) -> Any:
        touched.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    def readlink(path: Any, *args: Any, **kwargs: Any) -> Any:
        touched.append(os.fspath(path))
        return real_readlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    monkeypatch.setattr(os, "readlink", readlink)
    paths = ["out/secret.py", "out/deep/x.py", "out/", "escape.py", "src/inner/b.py"]
    paths += ["abs-inside/a.py", "out/deep/"]
    assert pm_walk.existence_bits(str(tree), paths) == "0000110"
    assert touched and all(p.startswith(str(tree) + os.sep) for p in touched), touched


def test_one_lstat_per_path_when_they_share_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pkg").mkdir()
    paths = [f"pkg/m{i}.py" for i in range(50)]
    for path in paths[:25]:
        (tmp_path / path).write_text("")
    calls = 0
    real_lstat = os.lstat

    def lstat(path: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    assert pm_walk.existence_bits(str(tmp_path), paths) == "1" * 25 + "0" * 25
    assert calls == 51  # the folder once, then each path


@pytest.mark.parametrize(
    ("path", "resolved"),
    [
        ("src/a.py", "src/a.py"),
        ("src/inner/b.py", "src/sub/b.py"),  # a link inside: read and replaced
        ("abs-inside/sub/b.py", "src/sub/b.py"),
        ("src/sub/up.py", "src/a.py"),
        ("src/new/file.py", "src/new/file.py"),  # not there yet: as written
        ("src/inner/new.py", "src/sub/new.py"),
        ("src/new/../../x.py", None),  # would climb out once it is written
        ("out/secret.py", None),
        ("escape.py", None),
        ("loop1", None),
        ("../proj/src/a.py", None),
    ],
)
def test_resolved_path_reads_links_inside_the_root_only(
    tree: Path, path: str, resolved: str | None
) -> None:
    assert pm_walk.resolved_path(str(tree), path) == resolved
    # The strict walk is the same walk: it only refuses what is not there.
    assert pm_walk.Walk(str(tree)).walk(path) == (resolved is not None and (tree / path).exists())
