"""The recall evaluation (scripts/bench_inputs.py's recall_evaluation over tests/recall): the
targets on the fresh held-out part (batch 4's), and the figures of every part as the report
prints them, with the epics' Keywords lines and without them. The scoring was tuned on the tune
parts only; the held-out figures of batches 1-3 were seen after earlier rounds of tuning, batch
4's were computed once, after the scoring was frozen."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pm_tokens
import pytest
from support import load_bench

TARGETS = {"recall": 0.75, "false_injection": 0.15, "tokens_max": 80}


@functools.lru_cache(maxsize=1)
def evaluation() -> dict[str, Any]:
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    report: dict[str, Any] = load_bench("inputs").recall_evaluation(count)
    return report


def fresh() -> dict[str, Any]:
    part: dict[str, Any] = evaluation()["splits"][load_bench("inputs").FRESH_PART]
    return part


def test_the_parts_are_the_materials() -> None:
    splits = evaluation()["splits"]
    assert {name: s["prompts"] for name, s in splits.items()} == {
        "tune-1": 65,
        "tune-2": 32,
        "tune-3": 30,
        "tune-4": 55,
        "heldout-1": 35,
        "heldout-2": 24,
        "heldout-3": 22,
        "heldout-4": 35,
    }
    assert load_bench("inputs").FRESH_PART == "heldout-4"
    assert evaluation()["entries"] > 100  # every entry, the archive's included


# The held-out part's prompts are not named in a failure's message: they stay unseen. Both
# targets are missed on batch 4's held-out part, scored once after the scoring froze (commit
# 7c573c9); each expected failure fails as soon as its target is met, and should then become a
# plain assert.
@pytest.mark.xfail(
    strict=True,
    reason="not met: 13 of the 18 relevant prompts of the fresh held-out part (batch 4's) get an "
    "entry of a labelled epic (0.722 < 0.75), with the scoring frozen on the tune parts of "
    "batches 1-4 (0.748 there)",
)
def test_fresh_held_out_recall() -> None:
    assert fresh()["recall"] >= TARGETS["recall"]


@pytest.mark.xfail(
    strict=True,
    reason="not met: 4 of the 17 unrelated prompts of the fresh held-out part (batch 4's) get an "
    "entry (0.235 > 0.15), with the scoring frozen on the tune parts of batches 1-4 (0.127 there)",
)
def test_fresh_held_out_false_injections() -> None:
    assert fresh()["false_injection"] <= TARGETS["false_injection"]


def test_fresh_held_out_tokens_per_prompt() -> None:
    assert fresh()["tokens_max"] <= TARGETS["tokens_max"]
    assert all(o["tokens"] == 0 for o in fresh()["outcomes"] if not o["added"])


def test_report_prints_every_part_and_names_tune_prompts_only() -> None:
    lines = load_bench("measure").recall_text(evaluation())
    rows = [line.split()[0] for line in lines if line.startswith("  ") and line[2] != " "]
    assert rows.pop(0) == "part"  # the header
    assert rows == [f"{split}-{n}" for split in ("tune", "heldout") for n in (1, 2, 3, 4)]
    named = [line for line in lines if "missed:" in line]
    assert len(named) == 4  # one line per tune part; none for a held-out part


@functools.lru_cache(maxsize=1)
def plain_evaluation() -> dict[str, Any]:
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    report: dict[str, Any] = load_bench("inputs").recall_evaluation(count, keywords=False)
    return report


def test_without_keywords_only_the_keywords_lines_go(tmp_path: Path) -> None:
    # The files as producers write them: every epic's Keywords line left out, nothing else.
    inputs = load_bench("inputs")
    plain = inputs.without_keywords(inputs.RECALL_DATA, tmp_path)
    for name in ("permanent_memory.md", "archive/2025-06-30.md"):
        before = (inputs.RECALL_DATA / name).read_text(encoding="utf-8").split("\n")
        after = (plain / name).read_text(encoding="utf-8").split("\n")
        gone = [line for line in before if line.startswith("**Keywords:** ")]
        assert gone and [line for line in before if line not in gone] == after
    report = plain_evaluation()
    assert report["keywords"] is False and report["entries"] == evaluation()["entries"]
    lines = load_bench("measure").recall_text(report)
    assert lines[1].startswith("the same without the epics' Keywords lines")
    assert [line.split()[0] for line in lines if line.startswith("  ") and line[2] != " "][1:] == [
        f"{split}-{n}" for split in ("tune", "heldout") for n in (1, 2, 3, 4)
    ]
