"""The evaluation material on real changes (tests/projects/ and tests/unseen/, format in
tests/projects/README.md) keeps its invariants: each folder's epics pass the loader's `check`
without an error and each carries a Paths line or says why not; every change is labelled with
epics that exist, drawn by the script's two rules, split by the hash rule, its request its
subject without a trailing pull-request number; and together the folders hold the sizes the
evaluations need (at least 4 projects and 300 changes under tests/projects/)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from project_memory_loader.core.pm_parse import parse_permanent
from project_memory_loader.evidence.pm_globs import glob_problem
from support import LOADER, clean_env, run

FOLDERS = sorted(
    path.parent
    for pattern in ("tests/projects/*/changes.json", "tests/unseen/*/changes.json")
    for path in ROOT.glob(pattern)
)
FIELDS = {
    "id",
    "source",
    "date",
    "subject",
    "request",
    "files",
    "relevant",
    "why",
    "drawn",
    "split",
}
SOURCE = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@[0-9a-f]{40}")
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def changes(folder: Path) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads((folder / "changes.json").read_text(encoding="utf-8"))
    return data


def test_the_evaluations_have_the_material_they_need() -> None:
    projects = [folder for folder in FOLDERS if folder.parent.name == "projects"]
    assert len(projects) >= 4
    assert sum(len(changes(folder)) for folder in projects) >= 300
    assert any(folder.parent.name == "unseen" for folder in FOLDERS)


@pytest.mark.parametrize("folder", FOLDERS, ids=[folder.name for folder in FOLDERS])
def test_a_projects_changes_keep_the_format(folder: Path) -> None:
    epics = parse_permanent((folder / "permanent_memory.md").read_text(encoding="utf-8"))
    ids = {epic.epic_id for epic in epics}
    assert len(ids) == len(epics) >= 7
    assert all(glob_problem(glob) is None for epic in epics for glob in epic.paths)
    assert sum(bool(epic.paths) for epic in epics) >= len(epics) - 2
    items = changes(folder)
    assert len({item["id"] for item in items}) == len(items)
    assert len({item["source"] for item in items}) == len(items)
    for item in items:
        assert set(item) == FIELDS, item["id"]
        assert item["id"].startswith(f"{folder.name}-c")
        assert SOURCE.fullmatch(item["source"]) and DATE.fullmatch(item["date"])
        assert isinstance(item["relevant"], list) and set(item["relevant"]) <= ids, item["id"]
        assert item["why"].strip(), item["id"]
        assert item["drawn"] in ("random", "governed")
        assert 0 < len(item["files"]) <= 30
        heldout = hashlib.sha256(item["source"].encode()).hexdigest()[0] in "012345"
        assert item["split"] == ("heldout" if heldout else "tune"), item["id"]
        assert item["subject"].startswith(item["request"])
        # A subject that is only a pull request's number (one real commit) asks for nothing.
        assert item["request"].strip() or item["subject"].strip().startswith("(#")
    drawn = [item["drawn"] for item in items]
    assert drawn == sorted(drawn, key=["random", "governed"].index)  # as the script wrote them
    assert any(item["relevant"] for item in items) and any(not item["relevant"] for item in items)


@pytest.mark.parametrize("folder", FOLDERS, ids=[folder.name for folder in FOLDERS])
def test_the_loader_checks_each_memory_without_an_error(folder: Path, tmp_path: Path) -> None:
    path = folder / "permanent_memory.md"
    result = run(LOADER, ["check", str(path)], env=clean_env(tmp_path), cwd=tmp_path)
    assert result.code == 0, result.out
    assert result.out.splitlines()[-1].endswith(
        tuple(f"0 errors, {n} warning{'s' if n != 1 else ''}" for n in range(100))
    )
