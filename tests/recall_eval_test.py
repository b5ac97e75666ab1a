"""Prompt-time recall, leave-one-project-out (scripts/recall_eval.py): every project's prompts
scored with the threshold chosen on the other projects only, the scorer beside a plain BM25
chosen the same way, with the epics' Keywords lines and without them; the targets are pooled
over the left-out projects, and on every project the scorer's recall is held to the baseline's
at the same false-injection rate."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from project_memory_loader.core import pm_tokens
from support import load_bench


def recall_eval() -> ModuleType:
    load_bench("inputs")
    import recall_eval

    return recall_eval


# The projects the figures below are stated for: tests/recall's four, then the folders of
# tests/projects that had landed. scripts/recall_eval.py scores a folder that lands later at
# once; it joins here when the figures are restated.
PROJECTS = ("backstage", "cosmos", "home-assistant", "mozilla",
            "jabref", "kuma", "thunderbird-android", "unleash", "vector")  # fmt: skip


def projects() -> list[Any]:
    found, _skipped = recall_eval().all_projects()
    return [p for p in found if p.name in PROJECTS]


@functools.lru_cache(maxsize=2)
def report(keywords: bool) -> dict[str, Any]:
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    found: dict[str, Any] = recall_eval().evaluation(count, keywords, projects())
    return found


def pooled(keywords: bool) -> dict[str, Any]:
    figures: dict[str, Any] = report(keywords)["scorer"]["pooled"]
    return figures


def test_every_project_is_scored_by_both_methods() -> None:
    names = [p.name for p in projects()]
    assert names == list(PROJECTS)
    for keywords in (False, True):
        found = report(keywords)
        for method in ("scorer", "BM25"):
            rows = found[method]["rows"]
            assert [r["project"] for r in rows] == names
            for r, project in zip(rows, projects()):
                tune = [p for p in project.prompts if p.split == "tune"]
                assert r["relevant"] + r["unrelated"] == len(tune)
            total = found[method]["pooled"]
            assert total["hits"] == sum(r["hits"] for r in rows)
            assert total["injected"] == sum(r["injected"] for r in rows)


def test_tests_recall_gives_four_projects_of_one_memory() -> None:
    projects = recall_eval().recall_projects()
    prompts = json.loads((recall_eval().RECALL_DATA / "prompts.json").read_text())
    assert sum(len(p.prompts) for p in projects) == len(prompts) == 298
    assert len({p.memory for p in projects}) == 1
    assert {q.split for p in projects for q in p.prompts} == {"tune"}  # every part was seen


def test_an_incomplete_folder_is_skipped_and_named(tmp_path: Path) -> None:
    memory = "## Epic: X-1 — a\n### Gotchas discovered\n- retries dedupe on the event id\n"
    change = {"id": "x-c001", "request": "dedupe retries", "relevant": ["X-1"], "split": "tune"}
    for name, changes in (("done", [change]), ("unlabelled", [dict(change, relevant=None)]),
                          ("empty", None)):  # fmt: skip
        (tmp_path / name).mkdir()
        (tmp_path / name / "permanent_memory.md").write_text(memory)
        if changes is not None:
            (tmp_path / name / "changes.json").write_text(json.dumps(changes))
    (tmp_path / "README.md").write_text("not a project")
    found, skipped = recall_eval().folder_projects(tmp_path)
    assert [p.name for p in found] == ["done"]
    assert found[0].prompts[0].relevant == frozenset({"X-1"})
    assert [tuple(s) for s in skipped] == [
        ("empty", "no changes.json"),
        ("unlabelled", "1 of 1 changes not labelled"),
    ]


def test_the_left_out_project_does_not_choose_its_own_threshold() -> None:
    module = recall_eval()
    prompt = module.Prompt("p", "x", frozenset({"A"}), "tune")
    other = module.Prompt("q", "y", frozenset(), "tune")
    # Levels 0, 1, 2. Project one is best served by level 0, the others by level 2.
    one = module.Outcomes((prompt, other), [[("A",), (), ()], [(), (), ()]])
    two = module.Outcomes((prompt, other), [[("A",), ("A",), ("A",)], [("A",), ("A",), ()]])
    rows = module.leave_one_out({"one": one, "two": two, "three": two}, 0.1)
    assert [(r.project, r.level) for r in rows] == [("one", 2), ("two", 2), ("three", 2)]
    assert rows[0].figures == module.Figures(0, 1, 0, 1)
    assert module.choose_level([module.Figures(1, 1, 1, 1)] * 2, 0.1) == 1  # fewest, higher


def test_the_report_puts_scorer_and_baseline_side_by_side() -> None:
    lines = recall_eval().table(report(False))
    assert lines[0].startswith("leave-one-project-out, tune prompts, without the Keywords lines")
    assert "BM25 at same f.i." in lines[1]
    assert [line.split()[0] for line in lines[2:]] == [
        *(r["project"] for r in report(False)["scorer"]["rows"]),
        "pooled",
    ]


# The targets, pooled over the left-out projects (`python3 scripts/recall_eval.py`).
def test_without_keywords_recall() -> None:
    assert pooled(False)["recall"] >= recall_eval().TARGETS[False][0]


def test_without_keywords_false_injections() -> None:
    assert pooled(False)["false_injection"] <= recall_eval().TARGETS[False][1]


def test_with_keywords_recall() -> None:
    assert pooled(True)["recall"] >= recall_eval().TARGETS[True][0]


def test_with_keywords_false_injections() -> None:
    assert pooled(True)["false_injection"] <= recall_eval().TARGETS[True][1]


@pytest.mark.xfail(
    strict=True,
    reason="not met: without the Keywords lines the scorer's recall is under the baseline's at the "
    "scorer's false injections on backstage (0.667 at 0.286 against 0.704), cosmos (0.882 at 0.048 "
    "against 1.000), jabref (0.300 at 0.032 "
    "against 0.350) and thunderbird-android (0.333 at 0.050 against 0.417); the baseline's figure "
    "is its best case, its threshold read off that project",
)
def test_every_project_at_least_the_baseline_at_the_same_false_injections() -> None:
    found = report(False)
    below = [
        row["project"]
        for row in found["scorer"]["rows"]
        if row["relevant"] and row["recall"] < found["matched"][row["project"]]["recall"]
    ]
    assert below == []


@pytest.mark.parametrize("keywords", [False, True])
def test_the_threshold_travels(keywords: bool) -> None:
    # One threshold, in units of a rare word of the file: chosen on every project's tune prompts
    # it is the one the scorer ships, with the Keywords lines and without them; chosen on the
    # others, each left-out project gets it or the next level.
    module = recall_eval()
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    picked = module.tune_pick(module.SCORER, projects(), keywords, count)
    assert module.SCORER.levels[picked] == module.pm_recall.THRESHOLD == 3.25
    levels = [row["level"] for row in report(keywords)["scorer"]["rows"]]
    assert all(abs(level - module.pm_recall.THRESHOLD) <= 0.25 for level in levels)


def test_without_keywords_only_the_keywords_lines_go(tmp_path: Path) -> None:
    # The files as producers write them: every epic's Keywords line left out, nothing else.
    module = recall_eval()
    plain = module.without_keywords(module.RECALL_DATA, tmp_path)
    for name in ("permanent_memory.md", "archive/2025-06-30.md"):
        before = (module.RECALL_DATA / name).read_text(encoding="utf-8").split("\n")
        after = (plain / name).read_text(encoding="utf-8").split("\n")
        gone = [line for line in before if line.startswith("**Keywords:** ")]
        assert gone and [line for line in before if line not in gone] == after
