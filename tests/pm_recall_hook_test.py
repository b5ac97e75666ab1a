"""pm_recall_hook and pm_recall_store through the hook command: a prompt gets the entries that
match it once per session, the session-start block's lines count as received, the budgets
are options, the archive is read under the path rule and is part of the index's key."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from project_memory_loader.recall import pm_recall_store
from support import LOADER, LOADER_STAMP, MANAGER, assert_no_traceback, clean_env, run, token_count

MEMORY = (Path(__file__).resolve().parent / "pm_recall_test.py").read_text()
MEMORY = MEMORY.split('MEMORY = """\\\n', 1)[1].split('"""', 1)[0]
ARCHIVE = """\
# Permanent memory archive

## Epic: OLD-001 — Date handling
**Completed:** 2024-01-01T00:00:00Z

### Architectural decisions
- luxon is the one date library; no moment, no dayjs
"""
HEADER = "Relevant to this prompt (from 1 epic):"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "memory" / "archive").mkdir(parents=True)
    (root / ".claude" / "memory" / "permanent_memory.md").write_text(MEMORY)
    (root / ".claude" / "memory" / "archive" / "2024-01-01.md").write_text(ARCHIVE)
    return root


def payload(project: Path, event: str, session: str = "s1", **extra: str) -> bytes:
    data = {"session_id": session, "hook_event_name": event, "cwd": str(project), **extra}
    if event == "SessionStart":
        data.setdefault("source", "startup")
    return json.dumps(data).encode()


def hook(
    project: Path,
    tmp: Path,
    event: str,
    script: Path = LOADER,
    env_extra: dict[str, str] | None = None,
    **extra: str,
) -> str:
    env = clean_env(tmp, CLAUDE_PROJECT_DIR=str(project), **(env_extra or {}))
    result = run(script, ["hook"], env=env, stdin=payload(project, event, **extra))
    assert_no_traceback(result, event)
    assert result.code == 0
    return result.out


def recall_part(context: str) -> str:
    """The recall block of a hook's context ("" for none)."""
    at = context.find(LOADER_STAMP + "\n" + "Relevant to this prompt")
    return context[at:] if at >= 0 else ""


STRIPE = "Stripe webhook events arrive twice: where do we dedupe?"
DATES = "Swap moment for luxon in the date picker"


def test_a_prompt_gets_its_entries_once_then_other_prompts_get_others(
    project: Path, tmp_path: Path
) -> None:
    start = hook(project, tmp_path, "SessionStart")
    assert start.startswith(LOADER_STAMP + "\n") and "Relevant" not in start
    assert "Epic FEAT-005 (Stripe webhook ingestion):" in start
    first = hook(project, tmp_path, "UserPromptSubmit", prompt=STRIPE)
    assert first == (
        f"{LOADER_STAMP}\n{HEADER}\n"
        "FEAT-005 gotchas: retries go on for 3 days, so dedupe on the event id, not on the "
        "delivery\n"
        "FEAT-005 patterns: check the signature before parsing JSON\n"
    )
    assert hook(project, tmp_path, "UserPromptSubmit", prompt=STRIPE) == ""
    dates = hook(project, tmp_path, "UserPromptSubmit", prompt=DATES)
    assert dates == (
        f"{LOADER_STAMP}\n{HEADER}\n"
        "OLD-001 decisions: luxon is the one date library; no moment, no dayjs\n"
    )
    # Another session gets them again; a cleared one starts afresh, a resumed one does not.
    assert (
        recall_part(hook(project, tmp_path, "UserPromptSubmit", prompt=STRIPE, session="s2"))
        == first
    )
    hook(project, tmp_path, "SessionStart", source="resume")
    assert hook(project, tmp_path, "UserPromptSubmit", prompt=STRIPE) == ""
    assert hook(project, tmp_path, "SessionStart", source="clear").startswith(LOADER_STAMP)
    assert hook(project, tmp_path, "UserPromptSubmit", prompt=STRIPE) == first


def test_lines_of_the_session_start_block_are_received(project: Path, tmp_path: Path) -> None:
    # The manager's hook composes the session start; what it sends is recorded all the same.
    start = hook(project, tmp_path, "SessionStart", script=MANAGER)
    assert "  gotchas: Stripe sends duplicate events\n" in start
    again = hook(project, tmp_path, "UserPromptSubmit", prompt="Stripe sends duplicate events")
    assert "Stripe sends duplicate events" not in again


def test_nothing_at_all_when_nothing_matches(project: Path, tmp_path: Path) -> None:
    hook(project, tmp_path, "SessionStart")
    for prompt in ("carry on with the next step", "yes", "", "thanks!"):
        assert hook(project, tmp_path, "UserPromptSubmit", prompt=prompt) == ""


def test_a_changed_block_and_the_recall_block_share_one_additional_context(
    project: Path, tmp_path: Path
) -> None:
    hook(project, tmp_path, "SessionStart")
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.write_text(MEMORY + "\n## Epic: NEW-001 — Fresh\n\n### Gotchas discovered\n- new one\n")
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project))
    stdin = payload(project, "UserPromptSubmit", prompt=STRIPE)
    raw = run(LOADER, ["hook"], env=env, stdin=stdin)  # out: the one additionalContext
    assert raw.out.startswith(LOADER_STAMP + "\n(>90d may be outdated) Epic FEAT-005")
    assert raw.out.count(LOADER_STAMP) == 2 and "\nEpic NEW-001 (Fresh):\n" in raw.out
    assert recall_part(raw.out).startswith(f"{LOADER_STAMP}\n{HEADER}\nFEAT-005 gotchas: retries")


@pytest.mark.parametrize(("per_prompt", "per_session"), [("30", "600"), ("80", "60"), ("0", "600")])
def test_the_budgets_are_options(
    project: Path, tmp_path: Path, per_prompt: str, per_session: str
) -> None:
    options = {
        "CLAUDE_PLUGIN_OPTION_RECALL_PROMPT_TOKENS": per_prompt,
        "CLAUDE_PLUGIN_OPTION_RECALL_SESSION_TOKENS": per_session,
    }
    hook(project, tmp_path, "SessionStart", env_extra=options)
    spent = 0
    prompts = [STRIPE, DATES, "money minor units and the exchange rate", "React.FC props"]
    for prompt in prompts:
        block = hook(project, tmp_path, "UserPromptSubmit", env_extra=options, prompt=prompt)
        tokens = token_count(block)[0] if block else 0
        assert tokens <= int(per_prompt)
        spent += tokens
    assert spent <= int(per_session)
    if per_prompt == "0":
        assert spent == 0


def test_a_changed_archive_file_changes_the_index(project: Path, tmp_path: Path) -> None:
    hook(project, tmp_path, "SessionStart")
    prompt = "should the billing cron sweep retry declined card payments?"
    assert hook(project, tmp_path, "UserPromptSubmit", prompt=prompt) == ""
    (project / ".claude" / "memory" / "archive" / "2024-06-01.md").write_text(
        "## Epic: OLD-002 — Dunning\n\n### Architectural decisions\n"
        "- one scheduled job per failed card payment, no cron sweep for retries\n"
    )
    assert hook(project, tmp_path, "UserPromptSubmit", prompt=prompt) == (
        f"{LOADER_STAMP}\n{HEADER}\n"
        "OLD-002 decisions: one scheduled job per failed card payment, no cron sweep for retries\n"
    )


def test_an_archive_file_linked_from_outside_the_project_is_not_read(
    project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(ARCHIVE.replace("OLD-001", "OUT-001"))
    archive = project / ".claude" / "memory" / "archive"
    (archive / "2024-01-01.md").unlink()
    os.symlink(outside, archive / "2024-02-02.md")
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project))
    result = run(
        LOADER, ["hook"], env=env, stdin=payload(project, "UserPromptSubmit", prompt=DATES)
    )
    assert result.code == 0 and "OUT-001" not in result.out
    assert "2024-02-02.md" in result.err and "Traceback" not in result.err


def test_a_subagent_start_adds_no_recall(project: Path, tmp_path: Path) -> None:
    out = hook(project, tmp_path, "SubagentStart", agent_id="a1", agent_type="general-purpose")
    assert out.startswith(LOADER_STAMP + "\n(>90d may be outdated) Epic FEAT-005")
    assert "Relevant to this prompt" not in out


def test_the_index_cache_round_trip_and_its_checks(tmp_path: Path) -> None:
    slot = str(tmp_path / "recall" / "x.bin")
    index = {"format": 5, "entries": [], "postings": {}, "ids": {}, "unit": 1.0,
             "stamp_tokens": 8, "header_tokens": (9,), "common": (),
             "keywords": ["luxon"], "keyword_spans": (0, 3),
             "keyword_words": {"luxon": (0,)}, "keyword_worth": {"luxon": 1.5}}  # fmt: skip
    pm_recall_store.store_index(slot, "key", index, {"k2", "k1"})  # type: ignore[arg-type]
    assert pm_recall_store.read_index(slot, "key") == index
    assert pm_recall_store.read_shown(slot, "key") == {"k1", "k2"}
    assert pm_recall_store.read_shown(slot, "other") is None
    shown = Path(pm_recall_store.shown_slot(slot))
    assert shown.read_text() == "pm-recall-1 key\nk1\nk2\n"
    shown.write_text("pm-recall-1 key\nk1")  # cut short
    assert pm_recall_store.read_shown(slot, "key") is None
    assert pm_recall_store.read_index(slot, "other") is None
    data = Path(slot).read_bytes()
    Path(slot).write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert pm_recall_store.read_index(slot, "key") is None
    assert pm_recall_store.read_index(str(tmp_path / "missing.bin"), "key") is None


def test_the_session_record_round_trip(tmp_path: Path) -> None:
    record = str(tmp_path / "sessions" / "s1.recall")
    assert pm_recall_store.read_received(record) == (0, set())
    pm_recall_store.write_received(record, 42, {"b", "a"})
    assert Path(record).read_text() == "pm-recall-session-1 42\na\nb\n"
    assert pm_recall_store.read_received(record) == (42, {"a", "b"})
    Path(record).write_text("garbage\n")
    assert pm_recall_store.read_received(record) == (0, set())


def test_archive_digest_changes_with_any_file(project: Path) -> None:
    memory = str(project / ".claude" / "memory" / "permanent_memory.md")
    before = pm_recall_store.archive_digest(pm_recall_store.archive_files(memory, str(project)))
    (project / ".claude" / "memory" / "archive" / "2024-01-01.md").write_text(ARCHIVE + "- more\n")
    after = pm_recall_store.archive_digest(pm_recall_store.archive_files(memory, str(project)))
    assert before != after


def loaded_by(project: Path, tmp: Path, prompt: str) -> tuple[str, set[str]]:
    """A prompt's context and the recall modules the hook imported for it."""
    import subprocess
    import sys

    env = clean_env(tmp, CLAUDE_PROJECT_DIR=str(project))
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(LOADER), "hook"],
        input=payload(project, "UserPromptSubmit", prompt=prompt), capture_output=True,
        env=env, timeout=60, check=True,
    )  # fmt: skip
    found = {  # each module by its own name, its package's left out
        line.split("|")[-1].strip().rsplit(".", 1)[-1]
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    return done.stdout.decode(), found & {"pm_recall", "pm_recall_hook", "pm_recall_store"}


def test_a_prompt_recall_could_score_nothing_in_loads_no_index(
    project: Path, tmp_path: Path
) -> None:
    # No word recall could score and a block the session has: nothing read, nothing kept.
    hook(project, tmp_path, "SessionStart")
    assert loaded_by(project, tmp_path, "") == ("", set())
    assert loaded_by(project, tmp_path, "yes, go on!") == ("", {"pm_recall"})
    # A prompt with a word recall scores, or what may be an epic's ID (X-5 has no word of two
    # letters), is scored as before: the index is read.
    assert loaded_by(project, tmp_path, "invoices please")[1] == {
        "pm_recall", "pm_recall_hook", "pm_recall_store",
    }  # fmt: skip
    assert "pm_recall_hook" in loaded_by(project, tmp_path, "do X-5")[1]
    assert loaded_by(project, tmp_path, "2: carry on") == ("", {"pm_recall"})
    # The block not received yet (it changed): recall runs, to record the lines it shows.
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.write_text(MEMORY + "\n## Epic: NEW-001 — Fresh\n\n### Gotchas discovered\n- new one\n")
    out, loaded = loaded_by(project, tmp_path, "yes")
    assert "Epic NEW-001 (Fresh):" in out and "pm_recall_hook" in loaded
    assert hook(project, tmp_path, "UserPromptSubmit", prompt="new one") == ""
    # A quiet prompt is not kept among the session's last prompts, which recall at the file
    # reads ("", "yes, go on!", "new one": stop words only); the others are, "yes" included,
    # since its block had changed.
    [kept] = list(tmp_path.rglob("s1.prompts"))
    record = str(kept)[: -len(".prompts")] + ".recall"
    assert pm_recall_store.read_prompts(record) == ["invoices please", "do X-5", "yes"]


def test_the_last_prompts_are_appended_then_cut_back(tmp_path: Path) -> None:
    record = str(tmp_path / "sessions" / "s1.recall")
    path = pm_recall_store.prompts_file(record)
    pm_recall_store.note_prompt(record, "first")
    pm_recall_store.note_prompt(record, "")  # nothing to keep: the file is not touched
    pm_recall_store.note_prompt(record, "a\0b" + "x" * 700)
    assert Path(path).read_bytes() == b"\0first\0a b" + b"x" * 597
    assert pm_recall_store.read_prompts(record) == ["first", "a b" + "x" * 597]
    # A file an earlier version wrote (no leading NUL) reads the same with a prompt appended.
    Path(path).write_bytes(b"old one\0old two")
    pm_recall_store.note_prompt(record, "new")
    assert pm_recall_store.read_prompts(record) == ["old one", "old two", "new"]
    for n in range(60):  # past PROMPTS_COMPACT: rewritten with the last three only
        pm_recall_store.note_prompt(record, f"prompt {n} " + "y" * 590)
    assert os.path.getsize(path) <= pm_recall_store.PROMPTS_COMPACT
    assert [p[:10] for p in pm_recall_store.read_prompts(record)] == [
        "prompt 57 ", "prompt 58 ", "prompt 59 ",
    ]  # fmt: skip
    pm_recall_store.note_prompt(record, None)
    assert not os.path.exists(path) and pm_recall_store.read_prompts(record) == []
