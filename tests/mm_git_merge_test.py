"""mm_git_merge and mm_git_setup through real git: one session saved on two branches, merged by
the driver git-setup installs; doctor catching a merge without it; other files merged as text."""

from __future__ import annotations

import json
from pathlib import Path

from mm_merge_test import NAME, OURS, SESSION
from support import Repo, make_repo


def save(repo: Repo, now: str, *flags: str, **fields: object) -> None:
    (repo.path / "in.json").write_text(json.dumps(fields))
    repo.manager(
        "save",
        "--memory-dir",
        "memory",
        "--project-name",
        "billing",
        "--session-timestamp",
        SESSION,
        "--input",
        "in.json",
        "--now",
        now,
        *flags,
    )
    (repo.path / "in.json").unlink()


GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[0-9][0-9]-*.md"


def two_saves(repo: Repo, setup: bool = True) -> None:
    (repo.path / "memory").mkdir()
    if setup:
        first = repo.manager("git-setup", "--memory-dir", "memory")
        assert first.out == (
            f".gitattributes: added memory/{GLOB} merge=ski-memory\n"
            "git config --local merge.ski-memory.name: set\n"
            "git config --local merge.ski-memory.driver: set\n"
        )
        again = repo.manager("git-setup", "--memory-dir", "memory")
        assert again.out == (
            f".gitattributes: already has memory/{GLOB} merge=ski-memory\n"
            "git config --local merge.ski-memory.name: already set\n"
            "git config --local merge.ski-memory.driver: already set\n"
        )
    save(
        repo,
        "2026-11-29T10:00:00Z",
        "--mode",
        "architect",
        "--last-checkpoint",
        "CP-S0",
        "--checkpoints-approved",
        "CP-S0",
        steps_completed={"S0": "scaffold"},
    )
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "topic")
    save(
        repo,
        "2026-11-29T11:00:00Z",
        "--last-checkpoint",
        "CP-S1",
        "--checkpoints-approved",
        "CP-S1",
        steps_completed={"S1": "topic step"},
        key_decisions=["from topic"],
    )
    repo.commit("topic")
    repo.git("checkout", "-q", "main")
    save(
        repo,
        "2026-11-29T12:00:00Z",
        "--last-checkpoint",
        "CP-S2",
        "--checkpoints-approved",
        "CP-S2",
        "--status",
        "paused",
        steps_completed={"S2": "main step"},
        key_decisions=["from main"],
    )
    repo.commit("main")


EXPECTED_GIT = """\
---
schema_version: 1.1
project-name: billing
session: 2026-11-29-09-30
mode: architect
status: paused
last-checkpoint: CP-S2
checkpoints-approved:
- CP-S0
- CP-S1
- CP-S2
checkpoint_decisions: {}
last_session_at: '2026-11-29T09:30:00Z'
updated_at: '2026-11-29T12:00:00Z'
---

## Session summary

## Steps completed
- S0: scaffold
- S1: topic step
- S2: main step

## Active state

## Key decisions
- from main
- from topic
"""


def test_same_session_on_two_branches_merges(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    two_saves(repo)
    result = repo.git("merge", "--no-edit", "topic")
    assert "CONFLICT" not in result.out
    assert repo.read(NAME) == EXPECTED_GIT
    assert repo.manager("doctor", "--memory-dir", "memory").code == 0


def test_same_session_rebased(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    two_saves(repo)
    repo.git("checkout", "-q", "topic")
    repo.git("rebase", "-q", "main")
    assert repo.read(NAME) == EXPECTED_GIT


def test_without_the_set_up_doctor_fails_on_the_markers(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    two_saves(repo, setup=False)
    assert repo.git("merge", "--no-edit", "topic", check=False).code == 1
    repo.commit("merged with markers")
    line = repo.read(NAME).split("\n").index("<<<<<<< HEAD") + 1
    doctor = repo.manager("doctor", "--memory-dir", "memory", check=False)
    assert doctor.code == 1
    assert (
        f"FAIL  conflicts 1 snapshot(s) hold an unresolved merge conflict: "
        f"{SESSION}-billing.md:{line} -> keep one side's lines"
    ) in doctor.out


def test_merge_command_merges_other_files_as_text(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    for name, text in (("o", "a\nb\nc\n"), ("a", "A\nb\nc\n"), ("b", "a\nb\nC\n")):
        (tmp_path / name).write_text(text)
    args = [str(tmp_path / name) for name in "oab"]
    result = repo.manager("merge", *args, "memory/README.md")
    assert result.err == (
        "memory_manager.py merge: memory/README.md: no front matter (the file must start with "
        "a '---' line); merged as plain text\n"
    )
    assert (tmp_path / "a").read_text() == "A\nb\nC\n"
    (tmp_path / "b").write_text("a\nb\nc\nd\n")
    (tmp_path / "a").write_text(OURS)
    result = repo.manager("merge", *args, NAME, check=False)
    assert result.code == 1
    assert result.err.endswith("merged as plain text, 1 conflict(s) left\n")
    assert (tmp_path / "a").read_text().startswith("<<<<<<< ours\n---\n")


def test_git_setup_claims_only_the_snapshots_and_add_leaves_the_lock_out(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    (repo.path / "memory").mkdir()
    repo.write(".gitattributes", "memory/*.md merge=ski-memory\n")  # what it used to write
    result = repo.manager("git-setup", "--memory-dir", "memory")
    assert result.err == (
        "note: .gitattributes still has memory/*.md merge=ski-memory, which earlier versions "
        "wrote and which claims every .md there; remove that line\n"
    )
    repo.write(".gitattributes", "")
    repo.manager("git-setup", "--memory-dir", "memory")
    repo.write("memory/README.md", "notes about this folder\n")
    save(repo, "2026-11-29T10:00:00Z", steps_completed={"S0": "scaffold"})
    # git asks the driver only for the snapshots; and a save leaves no lock file to add.
    check = repo.git("check-attr", "merge", "--", "memory/README.md", NAME)
    assert check.out == f"memory/README.md: merge: unspecified\n{NAME}: merge: ski-memory\n"
    repo.git("add", "-A")
    staged = repo.git("diff", "--cached", "--name-only").out.split()
    assert staged == [".gitattributes", NAME, "memory/README.md"]
