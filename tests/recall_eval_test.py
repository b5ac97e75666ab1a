"""The recall evaluation (scripts/bench_inputs.py's recall_evaluation over tests/recall): the
targets on the fresh held-out part (batch 3's), and the figures of every part as the report
prints them. The scoring was tuned on the tune parts only; the held-out figures of batches 1
and 2 were seen after earlier rounds of tuning, batch 3's were computed once, after the scoring
was frozen."""

from __future__ import annotations

import functools
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
        "heldout-1": 35,
        "heldout-2": 24,
        "heldout-3": 22,
    }
    assert load_bench("inputs").FRESH_PART == "heldout-3"
    assert evaluation()["entries"] > 100  # every entry, the archive's included


# The held-out part's prompts are not named in a failure's message: they stay unseen. Met
# since the scoring reads the epics' Keywords lines (chosen on the tune parts of batches 1-3,
# references/recall.md); before, 8 of the 14 relevant prompts (0.571).
def test_fresh_held_out_recall() -> None:
    assert fresh()["recall"] >= TARGETS["recall"]


@pytest.mark.xfail(
    strict=True,
    reason="not met: more than 0.15 of the unrelated prompts of batch 3's held-out part get an "
    "entry, with the keyword scoring frozen on the tune parts (0.059, 0.375, 0.267 and 0.348 "
    "there; 3 of 8 before keywords)",
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
    assert rows == ["tune-1", "tune-2", "tune-3", "heldout-1", "heldout-2", "heldout-3"]
    named = [line for line in lines if "missed:" in line]
    assert len(named) == 3  # one line per tune part; none for a held-out part
