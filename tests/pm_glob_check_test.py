"""check's findings about an epic's Paths globs (pm_glob_check), through the command."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from support import EST, Result, memory_file

EPIC = (
    "## Epic: A-1 \u2014 a\n**Completed:** 2024-01-01\n**Paths:** {globs}\n\n"
    "### Gotchas discovered\n- g\n"
)


def project(tmp_path: Path, globs: str) -> Path:
    (tmp_path / "src" / "auth").mkdir(parents=True)
    (tmp_path / "src" / "auth" / "login.py").write_text("x\n")
    (tmp_path / ".git" / "objects").mkdir(parents=True)
    (tmp_path / ".git" / "objects" / "pack.idx").write_text("x\n")
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(EPIC.format(globs=globs), encoding="utf-8")
    return path


def test_check_reports_each_glob_that_matches_nothing_or_leaves_the_project(
    loader: Any, tmp_path: Path
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "secret.py").write_text("x\n")
    os.symlink(outside, tmp_path / "ext")
    globs = "src/auth/**, *.py, src/billing/**, ext/**, /etc/x, docs/, *.idx, src/a[b"
    path = project(tmp_path, globs)
    result = loader(["check", "--project-dir", str(tmp_path), *EST])
    at = f"{path}:3"
    assert result == Result(
        1,
        f"{at}: warning: A-1: Paths: 'src/billing/**' matches no file of the project\n"
        f"{at}: error: A-1: Paths: 'ext/**' leads out of the project through a link\n"
        f"{at}: error: A-1: Paths: '/etc/x' is absolute: write it relative to the project's "
        "root\n"
        f"{at}: warning: A-1: Paths: 'docs/' matches no file of the project\n"
        f"{at}: warning: A-1: Paths: '*.idx' matches no file of the project\n"
        f"{at}: warning: A-1: Paths: 'src/a[b' matches no file of the project\n"
        f"{path}: 1 epic, {result.out.split(', ')[1].split(' ')[0]} estimated tokens (max "
        "8000): 2 errors, 4 warnings\n",
        "",
    )


def test_a_file_outside_a_project_gets_the_globs_form_checked_only(
    loader: Any, tmp_path: Path
) -> None:
    path = tmp_path / "notes.md"
    path.write_text(EPIC.format(globs="nowhere/**, ../up"), encoding="utf-8")
    result = loader(["check", str(path), *EST])
    assert result.code == 1
    assert (
        result.out.splitlines()[0]
        == f"{path}:3: error: A-1: Paths: '../up' leaves the project (..)"
    )
    assert "nowhere" not in result.out


def test_globs_that_match_raise_nothing(loader: Any, tmp_path: Path) -> None:
    project(tmp_path, "src/auth/**, src/auth/login.py, src/, **/*.py, src/*/login.py")
    result = loader(["check", "--project-dir", str(tmp_path), *EST])
    assert result.code == 0 and result.out.endswith(": 0 errors, 0 warnings\n"), result
