"""`permanent_memory.py import`: golden cases on real records of each format (tests/import/),
importing again, lines added since kept, superseded records archived, the hostile corpus, and
properties (idempotent, nothing deleted, the live file within its cap after any write)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest
import support
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from project_memory_loader.core.pm_parse import parse_permanent
from project_memory_loader.writing.pm_live_cap import LIVE_TOKENS

RECORDS = Path(__file__).parent / "import" / "records"
EXPECTED = Path(__file__).parent / "import" / "expected"
NOW = "2026-12-01T00:00:00Z"
CASES = sorted(p.name for p in RECORDS.iterdir() if p.is_dir())


def committed_copy(tmp_path: Path, case: str) -> support.Repo:
    repo = support.make_repo(tmp_path)
    shutil.copytree(RECORDS / case, repo.path, dirs_exist_ok=True)
    repo.env = {**repo.env, "GIT_AUTHOR_DATE": "2024-05-01T12:00:00Z",
                "GIT_COMMITTER_DATE": "2024-05-01T12:00:00Z"}  # fmt: skip
    repo.commit("records")
    return repo


@pytest.mark.parametrize("case", CASES)
def test_golden_dry_run_and_written_file(tmp_path: Path, case: str) -> None:
    repo = committed_copy(tmp_path, case)
    dry = repo.loader("import", ".", "--now", NOW)
    assert dry.err == ""
    assert not (repo.path / ".claude").exists() or not (repo.path / support.MEMORY).exists()
    written = repo.loader("import", ".", "--now", NOW, "--write")
    memory = repo.read(support.MEMORY)
    if os.environ.get("UPDATE_GOLDEN"):
        (EXPECTED / f"{case}.txt").write_text(dry.out.replace(str(repo.path), "REPO"))
        (EXPECTED / f"{case}.md").write_text(memory)
    assert dry.out.replace(str(repo.path), "REPO") == (EXPECTED / f"{case}.txt").read_text()
    assert memory == (EXPECTED / f"{case}.md").read_text()
    assert written.out.count("added ") == dry.out.count("would add ")
    again = repo.loader("import", ".", "--now", NOW, "--write")
    assert "added" not in again.out and "updated" not in again.out
    assert repo.read(support.MEMORY) == memory
    check = repo.loader("check", check=False)
    assert check.code == 0 and " 0 errors" in check.out, check.out


def test_dry_run_writes_nothing_anywhere(tmp_path: Path) -> None:
    repo = committed_copy(tmp_path, "rules")
    before = support.tree(repo.path)
    repo.loader("import", ".", "--now", NOW)
    assert support.tree(repo.path) == before


def test_json_lists_epics_and_skips(tmp_path: Path) -> None:
    repo = committed_copy(tmp_path, "rules")
    res = repo.loader("import", ".", "--format", "json", "--now", NOW)
    data = json.loads(res.out)
    assert data["dry_run"] is True
    assert [e["id"] for e in data["epics"]] == ["RULE-api", "RULE-agent-validation", "RULE-python"]
    assert data["epics"][2]["paths"] == ["src/**/*.py"]
    assert data["skipped"] == [{"path": "src/agent/x.py", "why": "not a Markdown file"}]


ADR_1 = """# 1. Use Stripe for billing

Date: 2024-03-01

## Status

Accepted

## Context

We take payments.

## Decision

We use Stripe through `src/billing/stripe_client.py`.

## Consequences

Webhooks must be idempotent.
"""


def test_changed_record_updates_its_lines_and_keeps_the_added_ones(tmp_path: Path) -> None:
    repo = support.make_repo(tmp_path)
    repo.write("src/billing/stripe_client.py", "")
    repo.write("docs/adr/0001-use-stripe.md", ADR_1)
    repo.commit("one")
    repo.loader("import", "docs/adr", "--write", "--now", NOW)
    lines = "id: ADR-0001-use-stripe\ngotchas:\n- refunds go through the queue\n"
    res = support.run_command(
        (sys.executable, support.LOADER, "add", "--append", "--lines", "-"),
        env=repo.env, cwd=repo.path, stdin=lines.encode(),
    )  # fmt: skip
    assert res.code == 0, res.err
    repo.write(
        "docs/adr/0001-use-stripe.md", ADR_1.replace("must be idempotent", "must never block")
    )
    out = repo.loader("import", "docs/adr", "--write", "--now", NOW).out
    assert out.startswith("updated ADR-0001-use-stripe from docs/adr/0001-use-stripe.md")
    (epic,) = parse_permanent(repo.read(support.MEMORY))
    gotchas = [s.entries for s in epic.subsections if s.label == "gotchas"]
    anti = [s.entries for s in epic.subsections if s.label == "anti-patterns"]
    assert gotchas == [("refunds go through the queue",)]
    assert anti == [("Webhooks must never block.",)]
    assert epic.paths == ("src/billing/stripe_client.py",)
    assert epic.source == "docs/adr/0001-use-stripe.md"


def test_superseded_record_goes_to_the_archive_naming_its_successor(tmp_path: Path) -> None:
    repo = support.make_repo(tmp_path)
    repo.write("docs/adr/0001-use-stripe.md", ADR_1)
    repo.commit("one")
    repo.loader("import", "docs/adr", "--write", "--now", NOW)
    repo.write(
        "docs/adr/0001-use-stripe.md",
        ADR_1.replace("Accepted", "Superceded by [2. Use Adyen](0002-use-adyen.md)"),
    )
    repo.write(
        "docs/adr/0002-use-adyen.md",
        ADR_1.replace("1. Use Stripe", "2. Use Adyen").replace("Stripe through", "Adyen through"),
    )
    out = repo.loader("import", "docs/adr", "--write", "--now", NOW).out
    assert "archived ADR-0001-use-stripe (archive) from docs/adr/0001-use-stripe.md" in out
    live = parse_permanent(repo.read(support.MEMORY))
    assert [e.epic_id for e in live] == ["ADR-0002-use-adyen"]
    (old,) = parse_permanent(repo.read(".claude/memory/archive/imported.md"))
    assert old.first_entry("decisions") == "superseded by ADR-0002-use-adyen"


def test_an_epic_of_the_same_id_written_by_hand_is_left_alone(tmp_path: Path) -> None:
    repo = support.make_repo(tmp_path)
    repo.write("docs/adr/0001-use-stripe.md", ADR_1)
    mine = "## Epic: ADR-0001-use-stripe \u2014 mine\n\n### Gotchas discovered\n- by hand\n"
    repo.write(support.MEMORY, mine)
    out = repo.loader("import", "docs/adr", "--write", "--now", NOW).out
    assert out.startswith("skipped ADR-0001-use-stripe from docs/adr/0001-use-stripe.md: an epic")
    assert repo.read(support.MEMORY) == mine


def test_hostile_files_get_one_line_each_and_the_rest_is_imported(tmp_path: Path) -> None:
    repo = support.make_repo(tmp_path)
    outside = tmp_path / "outside.md"
    outside.write_text(ADR_1)
    adr = repo.path / "docs" / "adr"
    repo.write("docs/adr/0001-use-stripe.md", ADR_1)
    repo.write("docs/adr/README.md", "# Decisions\n\nThe list of our records.\n")
    (adr / "0002-huge.md").write_bytes(b"# 2. Huge\n\n## Decision\n\n" + b"x" * 600_000)
    (adr / "0003-binary.md").write_bytes(b"\x00\x01\x02## Decision\n")
    (adr / "0004-latin1.md").write_bytes(ADR_1.encode("utf-8") + "caf\u00e9".encode("latin-1"))
    (adr / "0005-link.md").symlink_to(outside)
    (adr / "diagram.png").write_bytes(b"\x89PNG\r\n")
    res = repo.loader("import", "docs/adr", "../outside.md", "--write", "--now", NOW)
    assert res.out.splitlines() == [
        "added ADR-0001-use-stripe from docs/adr/0001-use-stripe.md: Use Stripe for billing",
        "skipped ../outside.md: outside the project (" + str(outside.resolve()) + ")",
        "skipped docs/adr/0002-huge.md: 585 KiB, over 512 KiB; not a record",
        "skipped docs/adr/0003-binary.md: binary",
        "skipped docs/adr/0004-latin1.md: not UTF-8 (byte 216)",
        "skipped docs/adr/0005-link.md: a link out of the project (to "
        + str(outside.resolve())
        + "); not read",
        "skipped docs/adr/README.md: no known format: no Status, Decision, Decision Outcome or "
        "Proposal section",
        "skipped docs/adr/diagram.png: not a Markdown file",
        "1 record (1 added), 7 files skipped; " + str(repo.path / support.MEMORY),
    ]
    assert res.err == ""
    assert [e.epic_id for e in parse_permanent(repo.read(support.MEMORY))] == [
        "ADR-0001-use-stripe"
    ]


def test_a_folder_of_ten_thousand_files_is_read_in_linear_time(tmp_path: Path) -> None:
    def run(count: int) -> float:
        project = tmp_path / f"p{count}"
        folder = project / "notes"
        folder.mkdir(parents=True)
        for n in range(count):
            (folder / f"{n:05d}.md").write_text(f"# note {n}\n\nplain text\n")
        started = time.perf_counter()
        res = support.run(
            support.LOADER, ["import", "notes", "--project-dir", str(project), "--paths", "none"],
            env=support.clean_env(tmp_path), cwd=project,
        )  # fmt: skip
        assert res.code == 0, res.err
        assert res.out.count("\n") == count + 1
        assert not (project / ".claude").exists()
        return time.perf_counter() - started

    small, large = run(1000), run(10000)
    assert large < 10 * small + 2.0


# Properties: random records (status, decision, a constraint), imported, changed, imported again.
STATUSES = ("Accepted", "Proposed", "Rejected", "Deprecated", "", "Approved")
words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=9)
sentence = st.lists(words, min_size=4, max_size=30).map(lambda w: " ".join(w).capitalize() + ".")
record = st.tuples(st.sampled_from(STATUSES), sentence, sentence)


def adr_text(number: int, status: str, decision: str, consequence: str) -> str:
    status_part = f"## Status\n\n{status}\n\n" if status else ""
    return (
        f"# {number}. Record {number}\n\nDate: 2024-01-{number % 28 + 1:02d}\n\n{status_part}"
        f"## Context\n\nWhy.\n\n## Decision\n\n{decision}\n\n## Consequences\n\n"
        f"It must {consequence}\n"
    )


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(record, min_size=1, max_size=30), st.data())
def test_properties(
    tmp_path_factory: pytest.TempPathFactory, records: list, data: st.DataObject
) -> None:
    project = tmp_path_factory.mktemp("prop")
    env = support.clean_env(project)
    folder = project / "docs" / "adr"
    folder.mkdir(parents=True)
    for number, (status, decision, consequence) in enumerate(records, 1):
        (folder / f"{number:04d}-record-{number}.md").write_text(
            adr_text(number, status, decision, consequence)
        )

    def run_import() -> support.Result:
        args = ["import", "docs", "--write", "--now", NOW, "--project-dir", str(project)]
        res = support.run(support.LOADER, args, env=env, cwd=project)
        assert res.code == 0 and "Traceback" not in res.err, res.err
        return res

    def every_entry() -> set[str]:
        memory = project / ".claude" / "memory"
        texts = [
            p.read_text()
            for p in [memory / "permanent_memory.md", *memory.glob("archive/*.md")]
            if p.exists()
        ]
        return {
            e
            for t in texts
            for epic in parse_permanent(t)
            for s in epic.subsections
            for e in s.entries
        }

    run_import()
    live = project / support.MEMORY
    first = live.read_bytes() if live.exists() else b""
    assert support.token_count(first.decode())[0] <= LIVE_TOKENS
    run_import()
    assert (live.read_bytes() if live.exists() else b"") == first  # idempotent
    before = every_entry()
    epics = [e.epic_id for e in parse_permanent(first.decode())]
    if epics:  # a person's line, added to one epic on file
        lines = f"id: {epics[0]}\npatterns:\n- a line a person added\n".encode()
        res = support.run(support.LOADER, ["add", "--append", "--lines", "-"], env=env,
                          cwd=project, stdin=lines)  # fmt: skip
        assert res.code == 0, res.err
    changed = data.draw(st.sets(st.integers(1, len(records)), max_size=len(records)))
    for number in changed:
        status, decision, consequence = records[number - 1]
        (folder / f"{number:04d}-record-{number}.md").write_text(
            adr_text(number, status, decision + " Also more.", consequence)
        )
    run_import()
    after = every_entry()
    # Nothing deleted: what the import did not write stays, and what it wrote is there or was
    # replaced by its record's new text.
    assert not epics or "a line a person added" in after
    # An entry replaced by its record's new text starts as the old one did; the new text may be
    # cut to an entry's length (ending in …) where the old one was not.
    lost = {
        e
        for e in before - after
        if not any(e[:-1] in a or (a.endswith("…") and e.startswith(a[:-1])) for a in after)
    }
    assert not lost
    assert support.token_count(live.read_text() if live.exists() else "")[0] <= LIVE_TOKENS


LOG4BRAINS_RECORD = """# Use Log4brains to manage the ADRs

- Status: {status}
- Date: 2021-08-26

## Context and Problem Statement

We want to record decisions.

## Decision Outcome

Chosen option: "Log4brains", because it keeps the records beside the code.
"""


def test_log4brains_folders_come_from_its_config(tmp_path: Path) -> None:
    repo = support.make_repo(tmp_path)
    repo.write(
        ".log4brains.yml",
        "project:\n  name: shop\n  adrFolder: ./docs/adr\n  packages:\n"
        "    - name: billing\n      path: ./packages/billing\n"
        "      adrFolder: ./packages/billing/adr\n",
    )
    repo.write("docs/adr/20210826-use-log4brains.md", LOG4BRAINS_RECORD.format(status="accepted"))
    draft = LOG4BRAINS_RECORD.replace("Log4brains", "Stripe").format(status="draft")
    repo.write("packages/billing/adr/20220101-use-stripe.md", draft)
    repo.write("notes/todo.md", "# nothing\n")
    res = repo.loader("import", ".", "--now", NOW)
    assert res.out.splitlines() == [
        "would add ADR-use-log4brains from docs/adr/20210826-use-log4brains.md: Use Log4brains "
        "to manage the ADRs",
        "would add ADR-use-stripe from packages/billing/adr/20220101-use-stripe.md: Use Stripe "
        "to manage the ADRs",
        "2 records (2 would add), 0 files skipped; nothing written (dry run: --write writes "
        + str(repo.path / support.MEMORY)
        + ")",
    ]
