"""pm_report: JSON, --explain and inspect views of a summary."""

from __future__ import annotations

import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from project_memory_loader.core import pm_load
from project_memory_loader.core.pm_render import LEVELS, SKIP_TOKENS, Budget
from project_memory_loader.core.pm_tokens import Tokenizer
from project_memory_loader.reading import pm_report

CASES = Path(__file__).resolve().parent / "cases"
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


DEFAULT = Budget()


def summarise(name: str, budget: Budget = DEFAULT) -> tuple[pm_load.Summary, Tokenizer]:
    data = (CASES / name / "permanent_memory.md").read_bytes()
    tokenizer = Tokenizer()
    return pm_load.summarise(data, len(data), budget, tokenizer, NOW), tokenizer


CONTEXT = pm_report.ReportInputs("memory.md", "cl100k_base", "tiktoken, test", NOW)


def test_summary_json_for_a_degraded_block() -> None:
    summary, tokenizer = summarise("tentative-dropped", Budget(target=80))
    data = pm_report.summary_json(summary, CONTEXT, tokenizer.count)
    assert data["level"] == "L1" and data["reason"] == (
        "as much as fits within the target (80): tentative lines left out"
    )
    assert data["levels"] == {
        "L0": {"tokens": 92, "drops": "nothing"},
        "L1": {"tokens": 77, "drops": "tentative lines"},
        "L2": {"tokens": 65, "drops": "tentative and patterns lines"},
        "L3": {"tokens": 29, "drops": "all sub-lines"},
        "IDS": {"tokens": 27, "drops": "intents, and the oldest epics beyond the hard cap"},
    }
    assert data["block_tokens"] == 77
    [epic] = data["epics"]
    assert epic == {
        "id": "FEAT-020",
        "intent": "Search indexing",
        "completed": "2026-05-02T12:00:00Z",
        "age_days": 29,
        "stale": False,
        "schema": 1,
        "summary": None,
        "tokens": tokenizer.count(
            (CASES / "tentative-dropped" / "expected.txt")
            .read_text()
            .split("\n", 1)[1]
            .replace(
                "(trimmed for the token budget: tentative lines left out)\n",
                "  tentative: per-tenant indices may not scale past 2,000 "
                "tenants; needs a load test before we rely on it\n",
            )
        ),
        "lines": {
            "decisions": "OpenSearch over Postgres full-text for ranking control (DEC-030)",
            "gotchas": "bulk reindex needs the refresh interval turned off first",
            "patterns": "alias swap for zero-downtime reindexing",
            "tentative": "per-tenant indices may not scale past 2,000 tenants; needs a load test "
            "before we rely on it",
        },
    }


def test_json_and_tables_for_a_skipped_file() -> None:
    summary, tokenizer = summarise("skip-over-8000")
    data = pm_report.summary_json(summary, CONTEXT, tokenizer.count)
    assert (data["skipped"], data["level"], data["levels"], data["epics"]) == (
        True,
        "skipped",
        {},
        [],
    )
    assert data["file_tokens"] > SKIP_TOKENS
    text = pm_report.explain_text(summary, CONTEXT, tokenizer.count)
    assert text.splitlines()[0] == "file: memory.md (60,732 bytes, skipped)"
    assert text.splitlines()[-1] == (
        f"chosen: skipped, file over 8000 tokens ({data['file_tokens']:,} counted); "
        "archive old epics: permanent_memory.py archive"
    )


def test_a_hint_names_the_command_as_it_was_typed(monkeypatch: pytest.MonkeyPatch) -> None:
    # Installed with pip, the person typed `permanent-memory`, never the skill's script.
    summary, tokenizer = summarise("skip-over-8000")
    monkeypatch.setattr(sys, "argv", ["/venv/bin/permanent-memory", "inspect"])
    text = pm_report.explain_text(summary, CONTEXT, tokenizer.count)
    assert text.splitlines()[-1].endswith("; archive old epics: permanent-memory archive")


def test_tables_without_epics() -> None:
    summary, tokenizer = summarise("no-epics")
    assert pm_report.level_tokens(summary, tokenizer.count) == {}
    assert pm_report.inspect_text(summary, CONTEXT, tokenizer.count).splitlines()[-1] == (
        "chosen: nothing to show (no `## Epic:` sections)"
    )


def test_inspect_marks_only_the_chosen_row_and_trims_long_cells() -> None:
    summary, tokenizer = summarise("long-lines")
    text = pm_report.inspect_text(summary, CONTEXT, tokenizer.count, lambda line: f">>{line}")
    marked = [line for line in text.splitlines() if line.startswith(">>")]
    assert len(marked) == 1 and marked[0].startswith(">>L0 ")
    rows = text.splitlines()[4:7]
    cells = [re.split(r"\s{2,}", row) for row in rows]
    assert cells[1] == [
        "LONG-1",
        "An extremely long intent that goes on a\u2026",
        "2026-05-01",
        "31",
        "no",
        "45",
    ]
    assert cells[2][:2] == ["EPIC-WITH-A-VERY-LONG-IDENTIFIER-THAT-K\u2026", "short"]
    assert all(len(row) <= 140 for row in rows)


def test_level_tokens_reuse_the_counts_made_while_choosing() -> None:
    summary, tokenizer = summarise("ids-only")
    assert set(summary.block.tokens) <= set(LEVELS)
    counts = pm_report.level_tokens(summary, tokenizer.count)
    assert list(counts) == list(LEVELS)
    for level, tokens in summary.block.tokens.items():
        assert counts[level] == tokens


def test_hostile_text_is_cleaned_in_every_view() -> None:
    summary, tokenizer = summarise("hygiene")
    data = pm_report.summary_json(summary, CONTEXT, tokenizer.count)
    shown = repr(data) + pm_report.inspect_text(summary, CONTEXT, tokenizer.count)
    for hostile in (
        "ghp_",
        "hunter2",
        "sk-ant-",
        "AKIA",
        "\x1b",
        "\u200b",
        "<system",
        "[permanent-memory | trust:user]",
    ):
        assert hostile not in shown


def test_degraded_blocks_say_how_to_see_everything() -> None:
    summary, tokenizer = summarise("tentative-dropped", Budget(target=80))
    lines = pm_report.explain_text(summary, CONTEXT, tokenizer.count).splitlines()
    assert lines[-2:] == [
        "chosen: L1, as much as fits within the target (80): tentative lines left out",
        "to show everything: a target of at least 92 (--target, or the plugin option token_target)",
    ]
    summary, tokenizer = summarise("ids-only")
    lines = pm_report.inspect_text(summary, CONTEXT, tokenizer.count).splitlines()
    assert lines[-2] == (
        "chosen: IDS, the Epic lines alone are over the hard cap (200); the newest IDs that fit it"
    )
    assert lines[-1].startswith("everything needs ")
    assert lines[-1].endswith(
        " tokens, over the hard cap (200): archive old epics (permanent_memory.py archive) or "
        "shorten their first lines"
    )


def test_when_characters_rule_out_everything_it_says_so() -> None:
    summary, tokenizer = summarise("v2-sections", Budget(target=200, hard_cap=200, max_chars=300))
    lines = pm_report.explain_text(summary, CONTEXT, tokenizer.count).splitlines()
    assert lines[-2] == (
        "chosen: L3, as much as fits within the target (200): tentative and 6 of 8 other lines "
        "left out (and within the 300-character limit of a hook)"
    )
    assert lines[-1] == (
        "everything is 707 characters, over the 300 a hook may print: archive old epics "
        "(permanent_memory.py archive) or shorten their first lines"
    )
