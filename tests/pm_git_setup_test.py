"""pm_git_setup: `permanent_memory.py git-setup` with real git: the .gitattributes lines and the
local merge-driver config, written once, never through a link, only inside a work tree."""

from __future__ import annotations

import sys
from pathlib import Path

from support import LOADER, MEMORY, Repo, make_repo

ATTRIBUTES = (
    "# project-memory: merge permanent memory epic by epic (permanent_memory.py git-setup)\n"
    ".claude/memory/permanent_memory.md merge=permanent-memory\n"
    ".claude/memory/archive/*.md merge=permanent-memory\n"
)
SETUP_OUT = (
    ".gitattributes: added .claude/memory/permanent_memory.md merge=permanent-memory\n"
    ".gitattributes: added .claude/memory/archive/*.md merge=permanent-memory\n"
    "git config --local merge.permanent-memory.name: set\n"
    "git config --local merge.permanent-memory.driver: set\n"
)
AGAIN_OUT = (
    ".gitattributes: already has .claude/memory/permanent_memory.md merge=permanent-memory\n"
    ".gitattributes: already has .claude/memory/archive/*.md merge=permanent-memory\n"
    "git config --local merge.permanent-memory.name: already set\n"
    "git config --local merge.permanent-memory.driver: already set\n"
)


def test_git_setup_writes_attributes_and_local_config_and_is_safe_twice(repo: Repo) -> None:
    config_before = repo.read(".git/config")
    first = repo.loader("git-setup")
    assert (first.out, first.err) == (SETUP_OUT, "")
    assert repo.read(".gitattributes") == ATTRIBUTES
    driver = repo.git("config", "--local", "--get", "merge.permanent-memory.driver").out
    assert f"{sys.executable} {LOADER} merge %O %A %B %P" in driver
    assert repo.git("config", "--global", "--list", check=False).out == ""  # user's untouched
    second = repo.loader("git-setup")
    assert (second.out, second.err) == (AGAIN_OUT, "")
    assert repo.read(".gitattributes") == ATTRIBUTES
    # Nothing else changed: one new file, and only the merge section added to .git/config.
    assert repo.git("status", "--porcelain", "--untracked-files=all").out == "?? .gitattributes\n"
    config_after = repo.read(".git/config")
    assert config_after.startswith(config_before)
    assert config_after[len(config_before) :].startswith('[merge "permanent-memory"]\n')
    assert repo.git("check-attr", "merge", str(MEMORY)).out == (
        f"{MEMORY}: merge: permanent-memory\n"
    )


def test_git_setup_appends_to_existing_attributes_and_from_a_subdirectory(repo: Repo) -> None:
    repo.write(".gitattributes", "*.png binary")  # no final newline
    project = repo.path / "services" / "billing"
    project.mkdir(parents=True)
    result = repo.loader("git-setup", "--project-dir", str(project))
    assert result.out.startswith(
        ".gitattributes: added services/billing/.claude/memory/permanent_memory.md "
        "merge=permanent-memory\n"
    )
    assert repo.read(".gitattributes") == "*.png binary\n\n" + ATTRIBUTES.replace(
        ".claude/", "services/billing/.claude/"
    )


def test_git_setup_does_not_write_through_a_link(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_text("kept\n")
    (repo.path / ".gitattributes").symlink_to(outside)
    result = repo.loader("git-setup", check=False)
    assert result.code == 1
    assert result.err == (
        f"{repo.path}/.gitattributes is a symbolic link; git-setup does not write through it\n"
    )
    assert outside.read_text() == "kept\n"
    assert (
        repo.git("config", "--local", "--get", "merge.permanent-memory.driver", check=False).code
        == 1
    )


def test_git_setup_outside_a_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    plain = tmp_path / "plain"
    plain.mkdir()
    result = repo.loader("git-setup", "--project-dir", str(plain), check=False)
    assert (result.code, result.out) == (1, "")
    assert result.err == f"{plain} is not inside a git work tree (git init first)\n"
