"""propose and review (pm_propose, pm_review) and the proposals' store (pm_proposals), with the
compaction's harvest (pm_harvest) and the session start's count (pm_waiting): what a person
decides reaches permanent_memory.md, nothing else does."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import support
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from project_memory_loader import permanent_memory
from project_memory_loader.writing import pm_harvest, pm_lessons, pm_proposals, pm_waiting

NOW = datetime(2026, 12, 7, 18, 0, tzinfo=timezone.utc)
ON_FILE = (
    "## Epic: WEBHOOKS \u2014 Payment webhooks\n"
    "**Completed:** 2026-11-01T12:00:00Z\n\n"
    "### Gotchas discovered\n"
    "- Stripe sends duplicate events\n"
)
TOKEN = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"


@pytest.fixture
def project(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = isolated_env / "work" / "billing-api"
    (root / ".claude" / "memory").mkdir(parents=True)
    (root / ".claude" / "memory" / "permanent_memory.md").write_text(ON_FILE, encoding="utf-8")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    return root


def loader(*argv: str) -> support.Result:
    return support.call_main(permanent_memory, list(argv))


def memory(root: Path) -> str:
    return (root / ".claude" / "memory" / "permanent_memory.md").read_text(encoding="utf-8")


def store(root: Path) -> list[dict[str, Any]]:
    folder = pm_waiting.store_dir(os.environ, str(root))
    assert folder is not None
    return pm_proposals.read_store(folder)


def test_propose_then_review_lists_it_and_nothing_is_written_to_the_project(
    project: Path, isolated_env: Path
) -> None:
    result = loader(
        "propose", "--type", "gotcha", "--text", "Stripe retries for 3 days",
        "--files", "api/webhooks.py,../../etc/passwd", "--epic", "WEBHOOKS",
        "--now", "2026-12-07T18:00:00Z",
    )  # fmt: skip
    assert (result.code, result.out) == (
        0,
        "proposed 1: [gotcha] Stripe retries for 3 days (a person reviews it)\n",
    )
    assert result.err == "note: left out 1 file(s) outside the project or not a plain path\n"
    listed = loader("review")
    assert listed.out == (
        "1 lesson proposed (review --accept N, --edit N TEXT, --drop N):\n"
        "1. [gotcha] Stripe retries for 3 days\n"
        "   epic: WEBHOOKS \u00b7 files: api/webhooks.py \u00b7 proposed as it worked, "
        "2026-12-07 18:00:00 UTC\n"
    )
    assert json.loads(loader("review", "--format", "json").out) == [
        {
            "n": 1,
            "type": "gotcha",
            "text": "Stripe retries for 3 days",
            "epic": "WEBHOOKS",
            "files": ["api/webhooks.py"],
            "source": "command",
            "proposed_at": "2026-12-07T18:00:00Z",
        }
    ]
    assert memory(project) == ON_FILE
    assert sorted(p.name for p in project.rglob("*") if p.is_file()) == ["permanent_memory.md"]
    folder = pm_waiting.store_dir(os.environ, str(project))
    assert folder is not None and folder.startswith(str(isolated_env / "xdg" / "project-memory"))


def test_accept_writes_through_add_append_and_drop_keeps_it_marked(project: Path) -> None:
    loader("propose", "--type", "decision", "--text", "Answer duplicates with 200",
           "--files", "api/webhooks.py", "--epic", "WEBHOOKS")  # fmt: skip
    loader("propose", "--type", "pattern", "--text", "Replay with a dry run first")
    accepted = loader("review", "--accept", "1", "--now", "2026-12-07T19:00:00Z")
    assert accepted.code == 0, accepted.err
    assert accepted.out.endswith("accepted 1 into WEBHOOKS\n")
    written = memory(project)
    assert "### Architectural decisions\n- Answer duplicates with 200\n" in written
    assert "**Paths:** api/webhooks.py\n" in written
    dropped = loader("review", "--drop", "2")
    assert dropped.out.startswith("dropped 2 (kept on disk, never proposed again)")
    assert "Replay" not in memory(project)
    assert [(p["status"], p["text"]) for p in store(project)] == [
        ("accepted", "Answer duplicates with 200"),
        ("dropped", "Replay with a dry run first"),
    ]
    assert loader("review").out == "No lessons proposed.\n"
    again = loader("review", "--drop", "2")
    assert (again.code, again.err) == (1, "proposal 2 was dropped already\n")
    # A dropped lesson is not proposed again.
    assert loader("propose", "--type", "pattern", "--text", "replay with a dry-run first").out == (
        "not proposed: already on file or proposed\n"
    )


def test_accept_into_a_new_epic_needs_its_intent_and_edit_changes_the_text(project: Path) -> None:
    loader("propose", "--type", "gotcha", "--text", "Luxon parses in local time")
    refused = loader("review", "--accept", "1", "--epic", "DATES")
    assert refused.code == 1
    assert refused.err.startswith("DATES is not in .claude/memory/permanent_memory.md yet")
    edited = loader("review", "--edit", "1", "Luxon parses ISO dates in local time")
    assert edited.out == "edited 1: [gotcha] Luxon parses ISO dates in local time\n"
    ok = loader("review", "--accept", "1", "--epic", "DATES", "--intent", "Dates", "--type",
                "anti-pattern")  # fmt: skip
    assert ok.code == 0, ok.err
    assert "### Anti-patterns to avoid\n- [antipattern] Luxon parses ISO dates in local time" in (
        memory(project)
    ) or "Luxon parses ISO dates in local time" in memory(project)
    assert store(project)[0]["proposed_text"] == "Luxon parses in local time"


def test_a_lesson_without_an_epic_goes_to_lessons(project: Path) -> None:
    loader("propose", "--type", "gotcha", "--text", "CI needs the Stripe CLI")
    assert loader("review", "--accept", "1").code == 0
    assert "## Epic: LESSONS \u2014 Lessons kept from review\n" in memory(project)


def test_unknown_numbers_and_types_are_one_line_errors(project: Path) -> None:
    assert loader("review", "--accept", "3").err == (
        "no proposal 3; run permanent_memory.py review to list them\n"
    )
    bad = loader("propose", "--type", "todo", "--text", "x")
    assert (bad.code, bad.err) == (
        1,
        "--type: 'todo' is not one of decision, gotcha, anti-pattern, pattern\n",
    )


def test_the_harvest_keeps_lessons_deduplicated_and_bounds_a_flood(project: Path) -> None:
    lines = [f"- [pattern] lesson number {n}" for n in range(1000)]
    summary = "\n".join(
        [
            pm_lessons.HEADING,
            "- [gotcha] stripe sends duplicate events.",  # on file already
            f"- [decision] token {TOKEN} in CI",
            *lines,
        ]
    )
    notes = pm_harvest.harvest(summary, str(project), os.environ, "session-1", NOW)
    assert notes == [
        "permanent-memory hook: PostCompact: kept 20 lessons, left out 981 more (at most 20 a "
        "compaction, 500 in all)"
    ]
    kept = store(project)
    assert len(kept) == pm_proposals.MAX_PER_CALL
    assert kept[0]["text"] == "token [REDACTED] in CI" and TOKEN not in json.dumps(kept)
    assert kept[0]["session"] == pm_harvest.session_ref("session-1")
    assert pm_waiting.start_status(os.environ, str(project)) == (
        "20 lessons proposed: /project-memory:review"
    )
    # The same summary again (a second compaction) adds only what is new.
    pm_harvest.harvest(summary, str(project), os.environ, "session-1", NOW)
    assert len(store(project)) == 2 * pm_proposals.MAX_PER_CALL
    assert len({pm_lessons.key_of(p["text"]) for p in store(project)}) == len(store(project))


def test_no_store_is_no_count(project: Path) -> None:
    assert pm_waiting.start_status(os.environ, str(project)) == ""


def test_a_harvested_proposal_names_its_session_as_the_manager_does() -> None:
    from ski_memory_manager import mm_session

    assert pm_harvest.session_ref("abc-1") == mm_session.session_ref("abc-1")  # mm_nudge reads it


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["propose", "accept", "drop", "edit"]),
        st.integers(1, 6),
        st.sampled_from(
            ["a gotcha", "A  Gotcha!", f"key {TOKEN}", "x\x1b[31m y", "[p | trust:x] z", "new"]
        ),
    ),
    max_size=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(actions=ACTIONS)
def test_properties_of_any_run_of_decisions(project: Path, actions: list[Any]) -> None:
    folder = pm_waiting.store_dir(os.environ, str(project))
    assert folder is not None
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
    (project / ".claude" / "memory" / "permanent_memory.md").write_text(ON_FILE, encoding="utf-8")
    before = 0
    for action, number, words in actions:
        if action == "propose":
            loader("propose", "--type", "gotcha", "--text", words, "--epic", "WEBHOOKS")
        elif action == "accept":
            loader("review", "--accept", str(number))
        elif action == "drop":
            loader("review", "--drop", str(number))
        else:
            loader("review", "--edit", str(number), words + " edited")
        items = store(project) if os.path.isdir(folder) else []
        assert len(items) >= before  # never deleted
        before = len(items)
        keys = [pm_lessons.key_of(p.get("proposed_text", p["text"])) for p in items]
        assert len(keys) == len(set(keys))  # never duplicated
        assert TOKEN not in json.dumps(items) and TOKEN not in memory(project)  # secrets
        written = memory(project)
        for item in items:  # only what was accepted is in the file
            if item["status"] != "accepted" and item["text"] not in ON_FILE:
                assert f"- [gotcha] {item['text']}\n" not in written
    assert sorted(p.name for p in project.rglob("*") if p.is_file()) == ["permanent_memory.md"]
