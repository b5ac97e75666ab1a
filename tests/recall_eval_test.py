"""The recall evaluation (scripts/bench's recall_evaluation over tests/recall): the held-out
part's targets, and the figures of both parts as the report prints them. The scoring was tuned
on the `tune` part only; the held-out figures are the result."""

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
    report: dict[str, Any] = load_bench().recall_evaluation(count)
    return report


def held_out() -> dict[str, Any]:
    part: dict[str, Any] = evaluation()["splits"]["heldout"]
    return part


def test_the_parts_are_the_materials() -> None:
    splits = evaluation()["splits"]
    assert {name: s["prompts"] for name, s in splits.items()} == {"tune": 65, "heldout": 35}
    assert evaluation()["entries"] > 100  # every entry, the archive's included


def test_held_out_recall() -> None:
    assert held_out()["recall"] >= TARGETS["recall"], held_out()["missed"]


@pytest.mark.xfail(
    strict=True,
    reason="not met: 4 of the 15 unrelated held-out prompts get an entry (0.267 > 0.15); the "
    "threshold was chosen on the tune part (2 of 17 there)",
)
def test_held_out_false_injections() -> None:
    assert held_out()["false_injection"] <= TARGETS["false_injection"], held_out()[
        "falsely_injected"
    ]


def test_held_out_tokens_per_prompt() -> None:
    assert held_out()["tokens_max"] <= TARGETS["tokens_max"]
    assert all(o["tokens"] == 0 for o in held_out()["outcomes"] if not o["added"])


def test_report_prints_both_parts() -> None:
    lines = load_bench().recall_text(evaluation())
    parts = [line.split()[0] for line in lines[3::2]]
    assert parts == ["tune", "heldout"]
