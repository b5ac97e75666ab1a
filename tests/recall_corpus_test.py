"""The recall evaluation material in tests/recall/ keeps its invariants: enough epics (main file
and archive, v1 and v2 forms), enough labelled prompts in each batch (batch 1, scored while the
scoring was tuned; batches 2 and 3, each added later and its held-out part scored once; batch 4,
added fresh for the next round), every label an existing epic, the split fixed by its stated
rule for every prompt with both kinds of prompt on each side of each batch, the counts the
README states, and every memory file accepted by the loader's own `check` within the 8000-token
limit."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from project_memory_loader.core.pm_parse import Epic, parse_permanent
from project_memory_loader.writing.pm_archive_plan import ARCHIVE_HEADER
from support import LOADER, clean_env, run

RECALL = ROOT / "tests" / "recall"
MAIN = RECALL / "permanent_memory.md"
ARCHIVES = sorted((RECALL / "archive").glob("*.md"))
MEMORY_FILES = [MAIN, *ARCHIVES]
PROMPTS = RECALL / "prompts.json"
# The projects the memory is about: every prompt comes from one of their repositories.
REPOSITORIES = {
    "backstage/backstage",
    "mozilla/fxa",
    "home-assistant/core",
    "home-assistant/home-assistant.io",
    "cosmos/cosmos-sdk",
}
SPLITS = {"tune", "heldout"}
BATCHES = {1, 2, 3, 4}
FIELDS = {"id", "prompt", "relevant", "split", "source", "why", "batch"}
# tests/recall/README.md's counts table: (batch, split) -> (relevant, unrelated).
COUNTS = {
    (1, "tune"): (48, 17),
    (1, "heldout"): (20, 15),
    (2, "tune"): (16, 16),
    (2, "heldout"): (13, 11),
    (3, "tune"): (15, 15),
    (3, "heldout"): (14, 8),
    (4, "tune"): (32, 23),
    (4, "heldout"): (18, 17),
}
SOURCE = re.compile(r"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)#[0-9]+")
CHECK_SUMMARY = re.compile(r"(\d+) epics, (\d+) tokens \(max 8000\): 0 errors, \d+ warnings?")


def epics(path: Path) -> list[Epic]:
    return parse_permanent(path.read_text(encoding="utf-8"))


def all_epics() -> list[Epic]:
    return [epic for path in MEMORY_FILES for epic in epics(path)]


def prompts() -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(PROMPTS.read_text(encoding="utf-8"))
    return data


def batch(number: int) -> list[dict[str, Any]]:
    return [item for item in prompts() if item["batch"] == number]


def heldout_by_rule(source: str) -> bool:
    """The split rule stated in tests/recall/README.md, fixed before any tuning."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[0] in "012345"


def test_at_least_30_epics_with_unique_ids() -> None:
    ids = [epic.epic_id for epic in all_epics()]
    assert len(ids) >= 30
    assert len(ids) == len(set(ids))


def test_a_third_of_the_epics_are_archived_oldest_first() -> None:
    main, archived = epics(MAIN), [e for path in ARCHIVES for e in epics(path)]
    assert ARCHIVES and all(
        p.read_text(encoding="utf-8").startswith(ARCHIVE_HEADER) for p in ARCHIVES
    )
    assert 0.25 <= len(archived) / (len(main) + len(archived)) <= 0.45
    # `archive` moves the oldest epics by Completed date: none archived is newer than one kept.
    archived_dates = [e.completed_at for e in archived if e.completed_at is not None]
    kept_dates = [e.completed_at for e in main if e.completed_at is not None]
    assert len(archived_dates) == len(archived)
    assert max(archived_dates) <= min(kept_dates)


def test_epics_have_several_entries_in_several_subsections_and_both_forms() -> None:
    for epic in all_epics():
        entries = sum(len(sub.entries) for sub in epic.subsections)
        assert len(epic.subsections) >= 2 and entries >= 3, epic.epic_id
        assert epic.intent, epic.epic_id
    schemas = {epic.schema for epic in all_epics()}
    assert schemas == {1, 2}
    assert all(epic.summary for epic in all_epics() if epic.schema == 2)


@pytest.mark.parametrize("path", MEMORY_FILES, ids=lambda p: p.relative_to(RECALL).as_posix())
def test_the_loader_check_accepts_each_file(path: Path, tmp_path: Path) -> None:
    result = run(LOADER, ["check", str(path)], env=clean_env(tmp_path), cwd=tmp_path)
    assert result.code == 0, result.out + result.err
    assert result.err == ""
    summary = result.out.splitlines()[-1]
    assert summary.startswith(f"{path}: "), summary
    match = CHECK_SUMMARY.search(summary)
    assert match, summary
    assert int(match[1]) == len(epics(path))
    assert int(match[2]) < 8000


def test_enough_prompts_per_batch_with_unique_ids_and_sources() -> None:
    items = prompts()
    assert len(batch(1)) >= 80 and len(batch(2)) >= 45 and len(batch(3)) >= 50
    assert len(batch(4)) >= 80
    assert len({item["id"] for item in items}) == len(items)
    # No source is used twice, so no later prompt restates an earlier batch's.
    assert len({item["source"] for item in items}) == len(items)
    # IDs run on in file order, each batch after the one before.
    assert [item["id"] for item in items] == [f"p{n:03d}" for n in range(1, len(items) + 1)]
    assert [item["batch"] for item in items] == sorted(item["batch"] for item in items)
    for item in items:
        assert set(item) == FIELDS, item
        assert item["batch"] in BATCHES and type(item["batch"]) is int, item
        assert item["prompt"].strip() and item["why"].strip(), item
        match = SOURCE.fullmatch(item["source"])
        assert match and match[1] in REPOSITORIES, item


def test_every_label_is_an_existing_epic() -> None:
    known = {epic.epic_id for epic in all_epics()}
    for item in prompts():
        assert isinstance(item["relevant"], list), item
        assert len(set(item["relevant"])) == len(item["relevant"]), item
        assert set(item["relevant"]) <= known, item


def test_two_thirds_relevant_in_batch_1_about_half_in_the_later_batches() -> None:
    bounds = {1: (0.55, 0.75), 2: (0.4, 0.6), 3: (0.5, 0.6), 4: (0.5, 0.6)}
    for number, (low, high) in bounds.items():
        items = batch(number)
        relevant = sum(1 for item in items if item["relevant"])
        assert low <= relevant / len(items) <= high, number


def test_the_counts_are_the_readmes() -> None:
    counts = {
        (number, split): (
            sum(1 for i in batch(number) if i["split"] == split and i["relevant"]),
            sum(1 for i in batch(number) if i["split"] == split and not i["relevant"]),
        )
        for number in BATCHES
        for split in SPLITS
    }
    assert counts == COUNTS


def test_the_split_follows_its_rule_and_mixes_both_kinds() -> None:
    items = prompts()
    for item in items:
        assert item["split"] in SPLITS, item
        assert (item["split"] == "heldout") == heldout_by_rule(item["source"]), item
    for number in BATCHES:
        part_of_batch = batch(number)
        heldout = [item for item in part_of_batch if item["split"] == "heldout"]
        assert 0.3 <= len(heldout) / len(part_of_batch) <= 0.5, number
        for split in SPLITS:
            part = [item for item in part_of_batch if item["split"] == split]
            assert any(item["relevant"] for item in part), (number, split)
            assert any(not item["relevant"] for item in part), (number, split)
