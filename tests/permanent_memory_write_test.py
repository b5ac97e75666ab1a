"""add, archive and check (pm_add, pm_archive, pm_check, and their pure cores pm_write_*)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

import memory_io
import permanent_memory
import pm_parse
import pm_tokens
import pm_write_archive
import pm_write_check
import pm_write_epic
import pytest
import yaml
from conftest import LOADER_DIR, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pm_render import Budget
from pm_write_epic import InvalidEntry
from readme_test import console_examples, output_matches
from support import LOADER, clean_env

SCRIPT = LOADER_DIR / "permanent_memory.py"
SKILL = LOADER_DIR.parent
CASES = Path(__file__).resolve().parent / "cases"
DEMO = ROOT / "examples" / "demo-project"
WRITING_MD = SKILL / "references" / "writing.md"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
NOW_ARG = "2026-11-29T12:00:00Z"
TIMEOUT = 60
EST = ["--tokenizer", "estimate"]


def estimate(text: str) -> int:
    """The writing commands' estimate: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


class Result(NamedTuple):
    code: int
    out: str
    err: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)

    def call(args: list[str], stdin: str | bytes = b"") -> Result:
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
        try:
            code = permanent_memory.main(args)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return call


def memory_file(project: Path) -> Path:
    return project / ".claude" / "memory" / "permanent_memory.md"


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def epic_json(epic_id: str = "FEAT-100", **fields: Any) -> str:
    data: dict[str, Any] = {"id": epic_id, "intent": "An epic", "completed": "2026-05-01"}
    data.update(fields)
    return json.dumps(data)


# add: the golden epic


def test_add_writes_the_golden_v2_epic(run: Any, tmp_path: Path) -> None:
    # The default form: marker with epic, confidence, items and completed; the summary; every
    # item tagged with its kind and its confidence; what add writes, load shows, check passes.
    case = CASES / "add-epic-v2"
    result = run(["add", "--project-dir", str(tmp_path), "--input", str(case / "input.json"), *EST])
    path = memory_file(tmp_path)
    golden = (case / "permanent_memory.md").read_text(encoding="utf-8")
    assert result.code == 0, result.err
    assert path.read_text(encoding="utf-8") == golden
    assert result.out == f"added FEAT-042 to {path} ({estimate(golden)} estimated tokens)\n"
    assert result.err == (CASES / "add-epic" / "stderr.txt").read_text(encoding="utf-8")
    [epic] = pm_parse.parse_permanent(golden)
    assert (epic.schema, epic.summary, epic.completed) == (
        2,
        "Nightly CSV export to the ledger over SFTP; retries are idempotent by date.",
        "2026-05-15T14:00:00Z",
    )
    loaded = run(["load", "--file", str(path), "--now", "2026-06-01T00:00:00Z", "--target", "200"])
    assert loaded == Result(0, (case / "expected.txt").read_text(encoding="utf-8"), "")
    checked = run(["check", str(path), *EST])
    assert checked.code == 0 and checked.out.endswith(": 0 errors, 0 warnings\n")


def test_add_writes_the_golden_epic(run: Any, tmp_path: Path) -> None:
    case = CASES / "add-epic"
    result = run(
        [
            "add",
            "--project-dir",
            str(tmp_path),
            "--input",
            str(case / "input.json"),
            "--schema",
            "1",
            *EST,
        ]
    )
    path = memory_file(tmp_path)
    golden = (case / "permanent_memory.md").read_text(encoding="utf-8")
    assert result.code == 0, result.err
    assert path.read_text(encoding="utf-8") == golden
    assert result.out == f"added FEAT-042 to {path} ({estimate(golden)} estimated tokens)\n"
    assert result.err == (case / "stderr.txt").read_text(encoding="utf-8")
    # .claude/memory/ was created, with nothing in it but the file.
    assert [p.name for p in path.parent.iterdir()] == ["permanent_memory.md"]


def test_the_golden_epic_loads_as_laid_out() -> None:
    [epic] = pm_parse.parse_permanent((CASES / "add-epic" / "permanent_memory.md").read_text())
    assert (epic.epic_id, epic.intent, epic.completed) == (
        "FEAT-042",
        "Invoice export to the ledger",
        "2026-05-15T14:00:00Z",
    )
    assert [(s.label, s.heading, s.entries) for s in epic.subsections] == [
        (
            "decisions",
            "Architectural decisions",
            (
                "export nightly as CSV over SFTP (DEC-050)",
                "ledger IDs are stored on the invoice row",
            ),
        ),
        (
            "gotchas",
            "Gotchas discovered",
            (
                "the ledger rejects lines over 255 characters",
                "(WIP) retries use password=[REDACTED]",
            ),
        ),
        ("anti-patterns", "Anti-patterns to avoid", ()),
        ("patterns", "Patterns that worked", ("one export job per day, idempotent by date",)),
        ("conflicts", "Conflicts encountered", ()),
        (
            "tentative",
            "Tentative (low confidence \u2014 review)",
            ("move to the ledger's REST import later", "batch by currency"),
        ),
    ]


def test_add_json_output(run: Any, tmp_path: Path) -> None:
    case = CASES / "add-epic"
    result = run(
        [
            "add",
            "--project-dir",
            str(tmp_path),
            "--input",
            str(case / "input.json"),
            "--schema",
            "1",
            *EST,
            "--format",
            "json",
        ]
    )
    golden = (case / "permanent_memory.md").read_text(encoding="utf-8")
    assert result.code == 0
    assert json.loads(result.out) == {
        "action": "added",
        "path": str(memory_file(tmp_path)),
        "id": "FEAT-042",
        "intent": "Invoice export to the ledger",
        "completed": "2026-05-15T14:00:00Z",
        "summary": None,
        "schema": 1,
        "sections": {
            "decisions": [
                "export nightly as CSV over SFTP (DEC-050)",
                "ledger IDs are stored on the invoice row",
            ],
            "gotchas": [
                "the ledger rejects lines over 255 characters",
                "(WIP) retries use password=[REDACTED]",
            ],
            "anti-patterns": [],
            "patterns": ["one export job per day, idempotent by date"],
            "conflicts": [],
            "tentative": ["move to the ledger's REST import later", "batch by currency"],
        },
        "tokens": estimate(golden),
        "file_tokens": estimate(golden),
        "tokenizer": "estimate",
        "trimmed": [],
        "created": True,
    }
    assert result.err == (case / "stderr.txt").read_text(encoding="utf-8")


def test_add_appends_and_keeps_the_file_as_it_was(run: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    before = (CASES / "seed-example" / "permanent_memory.md").read_bytes()
    path.write_bytes(before)
    path.chmod(0o640)
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], epic_json())
    assert result.code == 0, result.err
    after = path.read_bytes()
    assert after.startswith(before.rstrip(b"\n") + b"\n\n## Epic: FEAT-100 \xe2\x80\x94 An epic\n")
    assert path.stat().st_mode & 0o777 == 0o640
    epics = pm_parse.parse_permanent(after.decode("utf-8"))
    assert [e.epic_id for e in epics] == ["FEAT-007", "FEAT-008", "FEAT-100"]
    assert result.err == ""


def test_add_keeps_crlf_and_bom(run: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    original = (CASES / "crlf-bom" / "permanent_memory.md").read_bytes()
    assert original.startswith(b"\xef\xbb\xbf") and b"\r\n" in original
    path.write_bytes(original)
    assert run(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], epic_json()).code == 0
    after = path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in after.replace(b"\r\n", b"")  # every line end is CRLF
    assert after.endswith(b"### Conflicts encountered\r\n")


def test_add_refuses_a_duplicate_and_replaces_in_place(run: Any, tmp_path: Path) -> None:
    base = ["add", "--project-dir", str(tmp_path), "--input", "-", *EST]
    for epic_id in ("A-1", "B-2", "C-3"):
        assert run(base, epic_json(epic_id, decisions=[f"first {epic_id}"])).code == 0
    path = memory_file(tmp_path)
    before = path.read_bytes()
    again = run(base, epic_json("B-2", decisions=["second"]))
    assert again == Result(
        1,
        "",
        f"error: {path}: B-2 is already in the file (line 15); give --replace to replace it\n",
    )
    assert path.read_bytes() == before
    replaced = run([*base, "--replace"], epic_json("B-2", decisions=["second"]))
    assert replaced.code == 0
    assert replaced.out.startswith(f"replaced B-2 in {path} (")
    epics = pm_parse.parse_permanent(path.read_text())
    assert [(e.epic_id, e.first_entry("decisions")) for e in epics] == [
        ("A-1", "first A-1"),
        ("B-2", "second"),
        ("C-3", "first C-3"),
    ]
    # The replaced section sits where the old one was, one blank line on each side.
    text = path.read_text()
    assert (
        "\n\n## Epic: B-2 \u2014 An epic\n" in text and "\n\n## Epic: C-3 \u2014 An epic\n" in text
    )
    assert "\n\n\n" not in text


def test_replace_refuses_an_id_that_is_already_twice_in_the_file(run: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("## Epic: X-1 — one\n\n## Epic: X-1 — two\n")
    result = run(
        ["add", "--project-dir", str(tmp_path), "--input", "-", "--replace", *EST], epic_json("X-1")
    )
    assert result == Result(
        1, "", f"error: {path}: X-1 is in the file 2 times (lines 1, 3); keep one by hand first\n"
    )


# add: bad input. One table: the pure function and the command.

OK = {"id": "A-1", "intent": "x"}
INVALID: list[tuple[object, str]] = [
    ([], "--input: expected a JSON object with id, intent and the item lists, got a list"),
    ({"intent": "x"}, "id: required (the epic's ID, e.g. FEAT-007)"),
    ({"id": "A-1"}, "intent: required (one line saying what the epic did)"),
    ({"id": "A-1", "intent": " \n "}, "intent: required (one line saying what the epic did)"),
    ({"id": 7, "intent": "x"}, "id: must be text, got a number"),
    (
        {"id": "a b", "intent": "x"},
        "id: 'a b' is not an epic ID: letters, digits and . _ : # / + -, starting with a letter "
        "or digit, at most 64 characters (e.g. FEAT-007)",
    ),
    (
        {"id": "ghp_" + "A1b2C3d4E5" * 3, "intent": "x"},
        "id: looks like a secret; use the epic's ticket ID, e.g. FEAT-007",
    ),
    (
        {**OK, "decision": []},
        "--input: unknown key 'decision' (known: id, intent, summary, completed, decisions, "
        "gotchas, anti_patterns, patterns, conflicts, tentative)",
    ),
    ({**OK, "decisions": "one"}, "decisions: must be a list, got text"),
    (
        {**OK, "gotchas": [3]},
        'gotchas[0]: must be text or {"text": ..., "confidence": ...}, got a number',
    ),
    ({**OK, "gotchas": ["a", {"confidence": 0.5}]}, "gotchas[1].text: required"),
    (
        {**OK, "gotchas": [{"text": "t", "why": "x"}]},
        "gotchas[0]: unknown key 'why' (known: text, confidence)",
    ),
    (
        {**OK, "patterns": [{"text": "t", "confidence": 1.5}]},
        "patterns[0].confidence: must be a number from 0 to 1, got 1.5",
    ),
    (
        {**OK, "patterns": [{"text": "t", "confidence": "high"}]},
        "patterns[0].confidence: must be a number from 0 to 1, got text",
    ),
    (
        {**OK, "patterns": [{"text": "t", "confidence": True}]},
        "patterns[0].confidence: must be a number from 0 to 1, got true/false",
    ),
    (
        {**OK, "completed": "yesterday"},
        "completed: 'yesterday' is not an ISO 8601 date or date-time (e.g. 2026-05-15T14:00:00Z)",
    ),
    ({**OK, "completed": 20260101}, "completed: must be text, got a number"),
    (
        {**OK, "conflicts": ["x (confidence: 2)"]},
        "conflicts[0]: ends with '(confidence: 2)', which the loader reads as a confidence; give "
        "a number from 0 to 1 or rephrase",
    ),
    (
        {"id": "A-1", "intent": "Release notes ##"},
        "intent: the loader would read it back as 'Release notes'; rephrase it",
    ),
    (
        {"id": "A-1", "intent": "x" * 3000},
        "intent: the epic is over 500 tokens even without its items; shorten the intent",
    ),
]


def prepare(data: object) -> str:
    entry, _notes = pm_write_epic.read_entry(data, NOW)
    entry, _dropped = pm_write_epic.fit_entry(entry, estimate)
    text = pm_write_epic.format_epic(entry)
    pm_write_epic.verify_epic(entry, text)
    return text


@pytest.mark.parametrize(("data", "message"), INVALID)
def test_invalid_entry(data: object, message: str) -> None:
    with pytest.raises(InvalidEntry) as caught:
        prepare(data)
    assert str(caught.value) == message


@pytest.mark.parametrize(("data", "message"), INVALID)
def test_add_refuses_invalid_input(run: Any, tmp_path: Path, data: object, message: str) -> None:
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(data))
    assert result == Result(1, "", f"error: {message}\n")
    assert list(tmp_path.iterdir()) == []  # nothing written, not even .claude/


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "--input: not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        (
            "{'id': 1}",
            "--input: not valid JSON: Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1)",
        ),
        (b"\xff{}", "--input: not UTF-8 (byte 0)"),
        ("[" * 10 + " " * (1024 * 1024), "--input: over 1024 KiB; an epic is a summary"),
        ("[" * 100000, "--input: not valid JSON: nested too deeply"),
    ],
)
def test_add_refuses_what_is_not_json(
    run: Any, tmp_path: Path, stdin: str | bytes, message: str
) -> None:
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], stdin)
    assert result == Result(1, "", f"error: {message}\n")


def test_add_reports_an_unreadable_input_file(run: Any, tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    result = run(["add", "--project-dir", str(tmp_path), "--input", str(missing)])
    assert result == Result(
        1, "", f"error: cannot read --input {missing}: No such file or directory\n"
    )


def test_add_settles_what_the_loader_would_misread() -> None:
    data = {
        **OK,
        "decisions": [
            "[security] [x] nested tags",
            "plain (conf=0.5)",
            {"text": "explicit wins (confidence: 0.3)", "confidence": 0.9},
            "  multi\nline\ttext  ",
            "[REDACTED] kept as text",
            "- a list marker stays",
            "(confidence: 0.5)",
        ],
    }
    entry, notes = pm_write_epic.read_entry(data, NOW)
    assert [(i.text, i.confidence) for i in entry.items] == [
        ("(security) [x] nested tags", None),
        ("plain", 0.5),
        ("explicit wins", 0.9),
        ("multi line text", None),
        ("(REDACTED) kept as text", None),
        ("- a list marker stays", None),
    ]
    assert notes == [
        "note: decisions[0]: a leading '[security]' is read by the loader as an entry type; "
        "stored as '(security)'",
        "note: decisions[4]: a leading '[REDACTED]' is read by the loader as an entry type; "
        "stored as '(REDACTED)'",
    ]
    # "plain" had 0.5 in its text: it goes to Tentative.
    assert pm_write_epic.stored_sections(entry)["tentative"] == ["plain"]


def test_completed_defaults_to_now_and_is_written_in_utc(run: Any, tmp_path: Path) -> None:
    result = run(
        [
            "add",
            "--project-dir",
            str(tmp_path),
            "--input",
            "-",
            "--now",
            "2026-06-01T08:30:15.5+02:00",
            *EST,
        ],
        json.dumps(OK),
    )
    assert result.code == 0
    assert " completed=2026-06-01T06:30:15Z -->\n" in memory_file(tmp_path).read_text()
    entry, _ = pm_write_epic.read_entry({**OK, "completed": "2026-05-15"}, NOW)
    assert entry.completed == "2026-05-15T00:00:00Z"


def test_an_epic_over_500_tokens_loses_its_lowest_confidence_items(
    run: Any, tmp_path: Path
) -> None:
    # The real tokenizer: the 500-token limit is in cl100k_base tokens.
    count, _engine, _source = pm_tokens.load_exact_counter()
    filler = "; ".join(
        f"detail {n} about retries, idempotency keys and ledger cut-offs" for n in range(8)
    )
    data = {
        **OK,
        "decisions": [
            {"text": f"decision {n}: {filler}", "confidence": c}
            for n, c in enumerate([0.95, 0.8, 0.9])
        ],
        "gotchas": [f"gotcha: {filler}"],
        "tentative": [{"text": f"maybe: {filler}", "confidence": 0.8}],
    }
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-"], json.dumps(data))
    assert result.code == 0, result.err
    full = pm_write_epic.format_epic(pm_write_epic.read_entry(data, NOW)[0])
    assert result.err == (
        f"note: A-1 was {count(full)} tokens, over the 500-token limit of an epic; left out 2 "
        "items, lowest confidence first: tentative[0] (0.80), decisions[1] (0.80)\n"
    )
    text = memory_file(tmp_path).read_text()
    assert count(text) <= 500
    [epic] = pm_parse.parse_permanent(text)
    assert [len(s.entries) for s in epic.subsections] == [2, 1, 0, 0, 0]
    assert result.out == f"added A-1 to {memory_file(tmp_path)} ({count(text)} tokens)\n"


def test_fit_entry_leaves_out_as_few_items_as_needed() -> None:
    entry, _ = pm_write_epic.read_entry(
        {**OK, "patterns": [{"text": "p" * 40, "confidence": c} for c in (0.75, 0.9, 0.8, 0.9)]},
        NOW,
    )
    full = estimate(pm_write_epic.format_epic(entry))
    fitted, dropped = pm_write_epic.fit_entry(entry, estimate, full - 1)
    assert [item.where for item in dropped] == ["patterns[0]"]
    fitted, dropped = pm_write_epic.fit_entry(entry, estimate, full - 20)
    assert [item.where for item in dropped] == ["patterns[0]", "patterns[2]"]
    assert [item.where for item in fitted.items] == ["patterns[1]", "patterns[3]"]
    assert pm_write_epic.fit_entry(entry, estimate, full) == (entry, [])


def test_add_into_a_missing_folder_given_with_file(run: Any, tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "permanent_memory.md"
    result = run(["add", "--file", str(target), "--input", "-", *EST], json.dumps(OK))
    assert result == Result(1, "", f"error: directory not found: {target.parent}\n")


@pytest.mark.parametrize("command", ["add", "archive"])
def test_the_writing_commands_refuse_stdin_as_the_file(run: Any, command: str) -> None:
    result = run(
        [command, "--file", "-", "--input", "-"] if command == "add" else [command, "--file", "-"]
    )
    assert result.code == 2
    assert result.err.endswith(
        f"error: {command}: --file - is not possible, the command writes the file\n"
    )


def _refused(run: Any, tmp_path: Path, setup: Callable[[Path], None]) -> Result:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    setup(path)
    before = tree(tmp_path)
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(OK))
    assert tree(tmp_path) == before
    return result


def test_add_leaves_alone_what_it_cannot_rewrite_faithfully(run: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    latin1 = _refused(run, tmp_path, lambda p: p.write_bytes(b"## Epic: A \xe9t\xe9\n"))
    assert latin1 == Result(
        1,
        "",
        f"error: {path} is not UTF-8 text (byte 11, line 1); fix it first, nothing was written\n",
    )
    utf16 = _refused(run, tmp_path, lambda p: p.write_bytes("## Epic: A\n".encode("utf-16")))
    assert utf16 == Result(
        1, "", f"error: {path} is UTF-16 text; save it as UTF-8 first (this command writes UTF-8)\n"
    )
    path.unlink()
    real = tmp_path / "real.md"
    real.write_text("## Epic: R-1 — real\n")
    link = _refused(run, tmp_path, lambda p: p.symlink_to(real))
    assert link == Result(
        1,
        "",
        f"error: {path} is a symbolic link; add and archive replace the file, which would break "
        "the link: give --file the real file\n",
    )
    path.unlink()
    folder = _refused(run, tmp_path, lambda p: p.mkdir())
    assert folder == Result(1, "", f"error: {path} is not a regular file\n")


def test_add_refuses_manual_overrides(run: Any, tmp_path: Path) -> None:
    target = tmp_path / "manual_overrides.md"
    result = run(["add", "--file", str(target), "--input", "-"], json.dumps(OK))
    assert result == Result(
        1, "", f"error: {target}: manual_overrides.md is user-curated; it is never written\n"
    )


def test_add_refuses_an_epic_the_file_would_swallow(run: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("## Epic: A-0 — open fence\n\n```\nno closing fence\n")
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(OK))
    assert result == Result(
        1,
        "",
        f"error: {path}: the loader would not read the new epic back (is a ``` fence left open "
        "above it?); run permanent_memory.py check\n",
    )


def test_add_says_when_the_file_grows_past_what_the_loader_summarises(
    run: Any, tmp_path: Path
) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("# Notes\n\n" + "padding line for the notes\n" * 1300)
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(OK))
    assert result.code == 0
    tokens = estimate(path.read_text())
    assert result.err == (
        f"note: {path} is now {tokens} estimated tokens, over the 8000 the loader summarises; "
        "run permanent_memory.py archive\n"
    )


def test_without_the_tokenizer_auto_says_it_estimates(
    run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable(bundled_first: bool = False) -> Any:
        raise pm_tokens.EncodingUnavailable("no cl100k_base file found on disk")

    monkeypatch.setattr(pm_tokens, "load_exact_counter", unavailable)
    result = run(["add", "--project-dir", str(tmp_path), "--input", "-"], json.dumps(OK))
    assert result.code == 0
    assert result.err == (
        "note: exact token counts unavailable (no cl100k_base file found on disk); "
        "estimating 4 bytes a token\n"
    )
    assert result.out.endswith(" estimated tokens)\n")


# add: the loader reads back exactly what was added

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=50)
# Text with nothing the loader reads as markup, no characters the cleaning removes (the Hangul
# fillers are letters to Unicode) and nothing shaped like a secret assignment.
PLAIN = st.text(
    st.characters(
        whitelist_categories=("L", "N", "Zs"),
        whitelist_characters=".,;'!?/-+&%",
        blacklist_characters="\u115f\u1160\u3164\uffa0",
    ),
    max_size=50,
).filter(lambda t: t.strip())
IDS = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:#/+-]{0,20}", fullmatch=True)
CONFIDENCE = st.one_of(st.none(), st.floats(0, 1), st.sampled_from([0.0, 0.69, 0.695, 0.7, 1]))


def entries(text: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    item = st.one_of(text, st.builds(lambda t, c: {"text": t, "confidence": c}, text, CONFIDENCE))
    return st.fixed_dictionaries(
        {"id": IDS.filter(lambda i: i not in EXISTING_IDS), "intent": text},
        optional={
            "completed": st.datetimes(timezones=st.just(timezone.utc)).map(datetime.isoformat),
            **{field: st.lists(item, max_size=3) for field in pm_write_epic.LIST_FIELDS},
        },
    )


EXISTING = [
    "",
    (CASES / "seed-example" / "permanent_memory.md").read_text(),
    pm_parse.normalise_text((CASES / "crlf-bom" / "permanent_memory.md").read_text()),
    (CASES / "v2-sections" / "permanent_memory.md").read_text(),
    "# Title only, no newline at the end",
]
EXISTING_IDS = {epic.epic_id for text in EXISTING for epic in pm_parse.parse_permanent(text)}


def _add_pure(data: dict[str, Any], existing: str) -> tuple[pm_write_epic.Entry, str] | None:
    try:
        entry, _notes = pm_write_epic.read_entry(data, NOW)
        entry, _dropped = pm_write_epic.fit_entry(entry, estimate)
        pm_write_epic.verify_epic(entry, pm_write_epic.format_epic(entry))
        new_text, _action = pm_write_epic.place_epic(existing, entry, replace=False)
    except (InvalidEntry, pm_write_epic.DuplicateEpic):
        return None
    return entry, new_text


def _read_back(new_text: str) -> tuple[str, str, str | None, dict[str, list[str]]]:
    epic = pm_parse.parse_permanent(new_text)[-1]
    subs = {sub.label: list(sub.entries) for sub in epic.subsections}
    return epic.epic_id, epic.intent, epic.completed, subs


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=entries(TEXT), existing=st.sampled_from(EXISTING))
def test_the_loader_reads_back_exactly_what_add_wrote(data: dict[str, Any], existing: str) -> None:
    added = _add_pure(data, existing)
    if added is None:
        return
    entry, new_text = added
    assert _read_back(new_text) == (
        entry.epic_id,
        entry.intent,
        entry.completed,
        pm_write_epic.stored_sections(entry),
    )
    assert new_text.startswith(existing.rstrip("\n"))
    assert pm_write_epic.find_placed(new_text, entry) is not None


@given(data=entries(PLAIN), existing=st.sampled_from(EXISTING))
def test_plain_text_is_read_back_as_given(data: dict[str, Any], existing: str) -> None:
    added = _add_pure(data, existing)
    assert added is not None  # plain text is never refused
    entry, new_text = added
    epic_id, intent, _completed, subs = _read_back(new_text)
    assert (epic_id, intent) == (data["id"], " ".join(data["intent"].split()))
    given_texts = sorted(
        " ".join((item if isinstance(item, str) else item["text"]).split())
        for field in pm_write_epic.LIST_FIELDS
        for item in data.get(field, [])
    )
    assert sorted(text for texts in subs.values() for text in texts) == given_texts
    for item in entry.items:  # and each went where its confidence sends it
        label = "tentative" if item.tentative else pm_write_epic.FIELD_LABELS[item.field]
        assert item.text in subs[label]


JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=8,
)


@given(
    data=st.one_of(
        JSON,
        st.fixed_dictionaries(
            {"id": IDS, "intent": TEXT},
            optional={field: JSON for field in (*pm_write_epic.LIST_FIELDS, "completed")},
        ),
    )
)
def test_bad_input_raises_only_invalid_entry(data: object) -> None:
    try:
        prepare(data)
    except InvalidEntry as exc:
        assert "\n" not in str(exc)


def test_item_layout_matches_the_loader_labels() -> None:
    for field, heading in pm_write_epic.HEADINGS.items():
        assert pm_parse.subsection_label(heading) == pm_write_epic.FIELD_LABELS[field]
    assert set(pm_write_epic.FIELD_LABELS.values()) == set(pm_parse.LABELS)


# add: locking


HOLD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import memory_io
with memory_io.locked(Path(sys.argv[2])):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_add_waits_for_the_folder_lock(tmp_path: Path) -> None:
    folder = memory_file(tmp_path).parent
    folder.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(LOADER_DIR), str(folder)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    add = None
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "locked\n"
        add = subprocess.Popen(
            [sys.executable, SCRIPT, "add", "--project-dir", tmp_path, "--input", "-", *EST],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert add.stdin is not None
        add.stdin.write(json.dumps(OK).encode())
        add.stdin.close()
        time.sleep(1.0)
        assert add.poll() is None  # waiting for the lock
        assert not memory_file(tmp_path).exists()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert add.wait(timeout=TIMEOUT) == 0
    finally:
        for process in (holder, add):
            if process is not None:
                process.kill()
                process.wait(timeout=TIMEOUT)
    assert [e.epic_id for e in pm_parse.parse_permanent(memory_file(tmp_path).read_text())] == [
        "A-1"
    ]
    assert sorted(p.name for p in folder.iterdir()) == ["permanent_memory.md"]  # no lock file


def test_concurrent_adds_all_land(tmp_path: Path) -> None:
    ids = [f"PAR-{n}" for n in range(6)]
    processes = [
        subprocess.Popen(
            [sys.executable, SCRIPT, "add", "--project-dir", tmp_path, "--input", "-", *EST],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in ids
    ]
    for process, epic_id in zip(processes, ids):
        assert process.stdin is not None
        process.stdin.write(epic_json(epic_id).encode())
        process.stdin.close()
    assert [p.wait(timeout=TIMEOUT) for p in processes] == [0] * len(ids)
    found = [e.epic_id for e in pm_parse.parse_permanent(memory_file(tmp_path).read_text())]
    assert sorted(found) == ids


# archive

ARCHIVE_FILE = """# Permanent memory

Notes above the epics stay.

## Epic: E1 — one
**Completed:** 2026-03-01T00:00:00Z

### Architectural decisions
- first decision of E1, with enough words to weigh something

## Epic: E2 — two
**Completed:** 2026-01-01T00:00:00Z

### Gotchas discovered
- E2 is older than E1 although it comes later in the file

## Epic: E3 — three

### Patterns that worked
- E3 has no date: it counts as completed when E2 was

## Epic: E4 — four
**Completed:** 2026-05-01T00:00:00Z

### Conflicts encountered
- E4 is the newest

## Notes below the epics

They stay too.
"""
KEPT = """# Permanent memory

Notes above the epics stay.

## Epic: E1 — one
**Completed:** 2026-03-01T00:00:00Z

### Architectural decisions
- first decision of E1, with enough words to weigh something

## Epic: E4 — four
**Completed:** 2026-05-01T00:00:00Z

### Conflicts encountered
- E4 is the newest

## Notes below the epics

They stay too.
"""
E2_E3 = """## Epic: E2 — two
**Completed:** 2026-01-01T00:00:00Z

### Gotchas discovered
- E2 is older than E1 although it comes later in the file

## Epic: E3 — three

### Patterns that worked
- E3 has no date: it counts as completed when E2 was
"""


@pytest.fixture
def archived_project(tmp_path: Path) -> Path:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(ARCHIVE_FILE)
    return tmp_path


def archive_args(project: Path, *extra: str) -> list[str]:
    limit = str(estimate(KEPT))
    return [
        "archive",
        "--project-dir",
        str(project),
        "--max-tokens",
        limit,
        "--now",
        NOW_ARG,
        *EST,
        *extra,
    ]


def test_archive_order_by_completed_then_file_order() -> None:
    epics = pm_parse.parse_permanent(ARCHIVE_FILE)
    assert [epics[i].epic_id for i in pm_write_archive.archive_order(epics)] == [
        "E2",
        "E3",
        "E1",
        "E4",
    ]
    undated_first = pm_parse.parse_permanent("## Epic: U — u\n\n" + ARCHIVE_FILE)
    order = pm_write_archive.archive_order(undated_first)
    assert [undated_first[i].epic_id for i in order] == ["U", "E2", "E3", "E1", "E4"]


def test_archive_moves_the_oldest_until_within_the_limit(run: Any, archived_project: Path) -> None:
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    result = run(archive_args(archived_project))
    assert result == Result(
        0,
        f"moved E2 (completed 2026-01-01T00:00:00Z) to {archive}\n"
        f"moved E3 (no Completed date) to {archive}\n"
        f"{path}: {estimate(ARCHIVE_FILE)} estimated tokens before, {estimate(KEPT)} after "
        f"(max {estimate(KEPT)})\n",
        "",
    )
    assert path.read_text() == KEPT
    assert archive.read_text() == pm_write_archive.ARCHIVE_HEADER + "\n" + E2_E3
    # Moving E2 alone would not have been enough: as few as possible moved.
    epics = pm_parse.parse_permanent(ARCHIVE_FILE)
    only_e2 = pm_write_archive.text_without(ARCHIVE_FILE.split("\n"), epics, {1})
    assert "## Epic: E3" in only_e2 and estimate(only_e2) > estimate(KEPT)


def test_archive_appends_to_the_day_s_archive_and_never_twice(
    run: Any, archived_project: Path
) -> None:
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    archive.parent.mkdir()
    archive.write_text(
        "# Kept by hand\n\n## Epic: E3 — three\n\n### Patterns that worked\n"
        "- E3 has no date: it counts as completed when E2 was\n"
    )
    result = run(archive_args(archived_project))
    assert result.code == 0
    assert result.out.splitlines()[1] == (
        f"moved E3 (no Completed date) to {archive} (already there: an earlier run was interrupted)"
    )
    assert archive.read_text() == (
        "# Kept by hand\n\n## Epic: E3 — three\n\n### Patterns that worked\n"
        "- E3 has no date: it counts as completed when E2 was\n\n" + E2_E3.split("\n## Epic: E3")[0]
    )
    assert path.read_text() == KEPT


def test_archive_dry_run_writes_nothing(run: Any, archived_project: Path) -> None:
    before = tree(archived_project)
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    result = run(archive_args(archived_project, "--dry-run"))
    assert result == Result(
        0,
        f"would move E2 (completed 2026-01-01T00:00:00Z) to {archive}\n"
        f"would move E3 (no Completed date) to {archive}\n"
        f"{path}: {estimate(ARCHIVE_FILE)} estimated tokens, {estimate(KEPT)} after moving 2 "
        f"epics (max {estimate(KEPT)}); nothing written\n",
        "",
    )
    assert tree(archived_project) == before


def test_archive_json(run: Any, archived_project: Path) -> None:
    result = run(archive_args(archived_project, "--format", "json"))
    assert result.code == 0
    path = memory_file(archived_project)
    assert json.loads(result.out) == {
        "path": str(path),
        "archive": str(path.parent / "archive" / "2026-11-29.md"),
        "dry_run": False,
        "max_tokens": estimate(KEPT),
        "tokens_before": estimate(ARCHIVE_FILE),
        "tokens_after": estimate(KEPT),
        "tokenizer": "estimate",
        "moved": [
            {
                "id": "E2",
                "completed": "2026-01-01T00:00:00Z",
                "line": 11,
                "already_archived": False,
            },
            {"id": "E3", "completed": None, "line": 17, "already_archived": False},
        ],
    }


def test_archive_with_nothing_to_do(run: Any, archived_project: Path) -> None:
    path = memory_file(archived_project)
    before = tree(archived_project)
    result = run(["archive", "--project-dir", str(archived_project), *EST])
    assert result == Result(
        0,
        f"{path}: {estimate(ARCHIVE_FILE)} estimated tokens, within 8000; nothing to archive\n",
        "",
    )
    assert tree(archived_project) == before


def test_archive_without_a_file(run: Any, tmp_path: Path) -> None:
    result = run(["archive", "--project-dir", str(tmp_path), *EST])
    assert result == Result(
        0, f"no permanent memory file at {memory_file(tmp_path)}; nothing to archive\n", ""
    )
    assert list(tmp_path.iterdir()) == []  # nothing created
    missing = tmp_path / "missing.md"
    result = run(["archive", "--file", str(missing), *EST])
    assert result == Result(1, "", f"error: permanent memory file not found: {missing}\n")


def test_archive_cannot_shrink_the_text_around_the_epics(run: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("# Notes\n\n" + "a long preamble line\n" * 30 + "\n## Epic: A — a\n")
    before = tree(tmp_path)
    result = run(["archive", "--project-dir", str(tmp_path), "--max-tokens", "50", *EST])
    rest = estimate("# Notes\n\n" + "a long preamble line\n" * 30)
    assert result == Result(
        1,
        "",
        f"error: without any epic the file is still {rest} tokens, over --max-tokens 50; "
        "shorten the text outside the epics\n",
    )
    assert tree(tmp_path) == before


def test_archive_keeps_the_file_s_mode_and_line_ends(run: Any, archived_project: Path) -> None:
    path = memory_file(archived_project)
    path.write_bytes(ARCHIVE_FILE.replace("\n", "\r\n").encode())
    path.chmod(0o600)
    assert run(archive_args(archived_project)).code == 0
    assert path.read_bytes() == KEPT.replace("\n", "\r\n").encode()
    assert path.stat().st_mode & 0o777 == 0o600


KILLED_AT_REPLACE = """
import os, sys
sys.path.insert(0, sys.argv[1])
import permanent_memory
calls = []
real = os.replace
def replace(src, dst):
    calls.append(dst)
    if len(calls) == int(sys.argv[2]):
        os._exit(9)
    real(src, dst)
os.replace = replace
raise SystemExit(permanent_memory.main(sys.argv[3:]))
"""


@pytest.mark.parametrize("dies_at", [1, 2], ids=["archive-rename", "memory-rename"])
def test_archive_killed_at_either_rename_loses_nothing(
    run: Any, archived_project: Path, dies_at: int
) -> None:
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            KILLED_AT_REPLACE,
            str(LOADER_DIR),
            str(dies_at),
            *archive_args(archived_project),
        ],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert killed.returncode == 9, killed.stderr
    assert path.read_text() == ARCHIVE_FILE  # the memory file is untouched either way
    if dies_at == 1:
        assert not archive.exists()
    else:
        assert archive.read_text() == pm_write_archive.ARCHIVE_HEADER + "\n" + E2_E3
    # The next run finishes the job, without a second copy of anything.
    again = run(archive_args(archived_project))
    assert again.code == 0
    assert path.read_text() == KEPT
    assert archive.read_text() == pm_write_archive.ARCHIVE_HEADER + "\n" + E2_E3
    leftovers = [p.name for p in path.parent.rglob("*") if memory_io.is_temp_name(p.name)]
    assert len(leftovers) == 1  # the dead run's temp file; never read as memory


def _epic_sections(count: int) -> list[str]:
    return [
        f"## Epic: K-{n:02d} \u2014 epic {n}\n**Completed:** 2026-{1 + n % 12:02d}-{1 + n % 27:02d}"
        f"T00:00:00Z\n\n### Architectural decisions\n- decision {n}: "
        + "idempotent retries with jitter " * 3
        + "\n"
        for n in range(count)
    ]


EPIC_SPECS = st.lists(
    st.tuples(
        st.one_of(st.none(), st.dates().map(lambda d: d.isoformat())),
        st.integers(min_value=0, max_value=6),
    ),
    max_size=12,
)


@given(
    specs=EPIC_SPECS,
    preamble=st.sampled_from(["", "# Permanent memory\n\nNotes.\n\n"]),
    max_tokens=st.integers(min_value=1, max_value=400),
)
def test_archive_plan_moves_the_oldest_and_loses_nothing(
    specs: list[tuple[str | None, int]], preamble: str, max_tokens: int
) -> None:
    sections = [
        f"## Epic: P-{n} \u2014 epic {n}\n"
        + (f"**Completed:** {date}\n" if date else "")
        + "\n### Gotchas discovered\n"
        + "".join(f"- gotcha {n}.{k}\n" for k in range(lines))
        for n, (date, lines) in enumerate(specs)
    ]
    text = preamble + "\n".join(sections)
    try:
        plan = pm_write_archive.plan_archive(text, max_tokens, estimate)
    except pm_write_archive.ArchiveError:
        assert estimate(preamble) > max_tokens or not specs
        return
    assert estimate(plan.kept_text) == plan.tokens_after <= max_tokens
    kept = pm_parse.parse_permanent(plan.kept_text)
    moved_ids = [epic.epic_id for epic in plan.moved]
    assert sorted(moved_ids + [e.epic_id for e in kept]) == sorted(
        f"P-{n}" for n in range(len(specs))
    )
    assert list(plan.sections) == [
        s.rstrip("\n") + "\n" for s in sections if s.split()[2] in moved_ids
    ]
    epics = pm_parse.parse_permanent(text)
    order = [epics[i].epic_id for i in pm_write_archive.archive_order(epics)]
    assert sorted(moved_ids, key=order.index) == order[: len(moved_ids)]  # the oldest ones
    if plan.moved:  # and no fewer would do
        fewer = pm_write_archive.text_without(
            text.split("\n"),
            epics,
            set(pm_write_archive.archive_order(epics)[: len(moved_ids) - 1]),
        )
        assert estimate(fewer) > max_tokens


def test_archive_survives_sigkill_at_random_moments(tmp_path: Path) -> None:
    """Kill archive runs at random moments: every epic stays in the memory file or the archive
    (or both), and the memory file is always whole, the old one or the new one."""
    sections = _epic_sections(24)
    original = "# Permanent memory\n\n" + "\n".join(sections)
    project = tmp_path / "p"
    path = memory_file(project)
    archive = path.parent / "archive" / "2026-11-29.md"
    command = [sys.executable, str(SCRIPT), *archive_args(project)[:3], "--max-tokens", "600"]
    command += ["--now", NOW_ARG, *EST]
    path.parent.mkdir(parents=True)
    path.write_text(original)
    durations = []
    for _ in range(2):  # the shorter of two whole runs: kill moments fall inside a run
        shutil.rmtree(path.parent)
        path.parent.mkdir()
        path.write_text(original)
        started = time.monotonic()
        subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=True)
        durations.append(time.monotonic() - started)
    duration = min(durations)
    final_memory, final_archive = path.read_text(), archive.read_text()
    assert final_memory != original
    rng = random.Random(8)
    states: Counter[str] = Counter()
    kills = 0
    for _ in range(400):
        if kills >= 55:
            break
        shutil.rmtree(path.parent)
        path.parent.mkdir()
        path.write_text(original)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Half the moments anywhere in a run, half near its end, where the writes are.
        late = rng.random() < 0.5
        time.sleep(
            rng.uniform(0.7 * duration, 1.05 * duration) if late else rng.uniform(0, duration)
        )
        process.send_signal(signal.SIGKILL)
        if process.wait(timeout=TIMEOUT) == -signal.SIGKILL:
            kills += 1
        memory_text = path.read_text()
        archive_text = archive.read_text() if archive.exists() else ""
        assert memory_text in (original, final_memory)  # whole, never a part
        assert archive_text in ("", final_archive)
        for section in sections:
            assert section in memory_text or section in archive_text
        states[
            f"memory {'old' if memory_text == original else 'new'}, archive "
            f"{'written' if archive_text else 'absent'}"
        ] += 1
        if kills % 5 == 0:  # and a later run always finishes the job, once
            subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=True)
            assert (path.read_text(), archive.read_text()) == (final_memory, final_archive)
    assert kills >= 55, states
    assert "memory new, archive absent" not in states
    print(
        f"{kills} kills in {sum(states.values())} runs (one run {duration:.3f} s): {dict(states)}"
    )


def test_archive_of_a_20000_token_file(run: Any, tmp_path: Path) -> None:
    count, _engine, _source = pm_tokens.load_exact_counter()
    sections = _epic_sections(360)
    text = "# Permanent memory\n\n" + "\n".join(sections)
    tokens = count(text)
    assert tokens > 20000
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    started = time.monotonic()
    result = run(["archive", "--project-dir", str(tmp_path), "--now", NOW_ARG])
    elapsed = time.monotonic() - started
    assert result.code == 0, result.err
    after = count(path.read_text())
    assert after <= 8000
    assert result.out.endswith(f"{path}: {tokens} tokens before, {after} after (max 8000)\n")
    archived = (path.parent / "archive" / "2026-11-29.md").read_text()
    kept = [e.epic_id for e in pm_parse.parse_permanent(path.read_text())]
    moved = [e.epic_id for e in pm_parse.parse_permanent(archived)]
    assert sorted(kept + moved) == sorted(f"K-{n:02d}" for n in range(360))
    moved_dates = [e.completed_at for e in pm_parse.parse_permanent(archived)]
    kept_dates = [e.completed_at for e in pm_parse.parse_permanent(path.read_text())]
    assert None not in moved_dates and None not in kept_dates
    assert max(d for d in moved_dates if d) <= min(d for d in kept_dates if d)
    assert elapsed < 10, elapsed
    print(f"archive of {tokens} tokens ({len(moved)} epics moved): {elapsed:.3f} s in process")


# check


def test_check_golden(run: Any) -> None:
    case = CASES / "check-findings"
    path = case / "permanent_memory.md"
    result = run(["check", str(path)])
    expected = (case / "check.txt").read_text().replace("PATH", str(path))
    assert result == Result(1, expected, "")


@pytest.mark.parametrize("name", ["v2-two-epics", "v1-then-v2"])
def test_check_accepts_the_producer_v2_form(run: Any, name: str) -> None:
    # The v2 producer writes no Completed line, `**Trace summary:**` lines and a
    # `### Cross-cutting concerns` subsection: warnings that staleness cannot be judged, no error.
    case = CASES / name
    path = case / "permanent_memory.md"
    result = run(["check", str(path)])
    expected = (case / "check.txt").read_text().replace("PATH", str(path))
    assert result == Result(0, expected, "")
    assert "error:" not in expected and "Trace summary" not in expected
    assert "Cross-cutting" not in expected and expected.count("no completion date") == 2


def test_check_a_clean_file(run: Any) -> None:
    path = DEMO / ".claude" / "memory" / "permanent_memory.md"
    count, _engine, _source = pm_tokens.load_exact_counter()
    result = run(["check", "--project-dir", str(DEMO)])
    assert result == Result(
        0,
        f"{path}: 6 epics, {count(path.read_text())} tokens (max 8000): 0 errors, 0 warnings\n",
        "",
    )


def test_check_what_add_writes_is_clean(run: Any, tmp_path: Path) -> None:
    case = CASES / "add-epic"
    run(["add", "--project-dir", str(tmp_path), "--input", str(case / "input.json"), *EST])
    result = run(["check", "--project-dir", str(tmp_path)])
    assert result.code == 0 and "0 errors, 0 warnings" in result.out


def test_check_over_the_ceiling_and_several_files(run: Any, tmp_path: Path) -> None:
    seed = CASES / "seed-example" / "permanent_memory.md"
    missing = tmp_path / "missing.md"
    tokens = estimate(seed.read_text())
    result = run(["check", str(seed), str(missing), "--max-tokens", "100", *EST])
    assert result == Result(
        1,
        f"{seed}:1: error: {tokens} tokens, over the 100-token ceiling: the loader will not "
        "summarise this file; move old epics out with permanent_memory.py archive\n"
        f"{seed}: 2 epics, {tokens} estimated tokens (max 100): 1 error, 0 warnings\n",
        f"error: permanent memory file not found: {missing}\n",
    )


def test_check_stdin_and_encodings(run: Any, tmp_path: Path) -> None:
    result = run(["check", "--file", "-", *EST], b"## Epic: A-1 \xe9\n**Completed:** 2026-01-01\n")
    assert result.code == 1
    assert (
        result.out.splitlines()[0]
        == "-:1: error: not UTF-8 (byte 13); the loader shows \ufffd for it"
    )
    utf16 = CASES / "utf16-bom" / "permanent_memory.md"
    result = run(["check", str(utf16), *EST])
    assert result.code == 0
    assert result.out.splitlines()[0] == (
        f"{utf16}:1: warning: UTF-16 text: the loader reads it, add and archive need UTF-8"
    )


def test_check_an_empty_file_and_no_file(run: Any, tmp_path: Path) -> None:
    empty = tmp_path / "permanent_memory.md"
    empty.write_text("# Nothing yet\n")
    assert run(["check", str(empty), *EST]) == Result(
        0,
        f"{empty}:1: warning: no '## Epic:' section; the loader shows nothing\n"
        f"{empty}: 0 epics, 4 estimated tokens (max 8000): 0 errors, 1 warning\n",
        "",
    )
    assert run(["check", "--project-dir", str(tmp_path)]) == Result(
        0, f"no permanent memory file at {memory_file(tmp_path)}\n", ""
    )


def test_check_json(run: Any) -> None:
    path = CASES / "check-findings" / "permanent_memory.md"
    result = run(["check", str(path), "--format", "json", *EST])
    assert result.code == 1
    data = json.loads(result.out)
    [found] = data["files"]
    assert data["tokenizer"] == "estimate"
    assert (found["path"], found["errors"], found["warnings"]) == (str(path), 3, 4)
    assert [e["id"] for e in found["epics"]] == [
        "OK-1",
        "NODATE-2",
        "BADDATE-3",
        "OK-1",
        "LONG-5",
        "BIG-6",
    ]
    assert found["findings"][0] == {  # a missing date is a warning: the v2 form often has none
        "line": 9,
        "level": "warning",
        "message": "NODATE-2: no completion date, so the loader cannot tell when it goes stale; "
        "add a **Completed:** line or completed= in the v2 marker",
    }
    assert found["tokens"] == estimate(path.read_text())


def test_check_report_line_numbers_follow_the_loader() -> None:
    text = "## Epic: F-1 — fenced\n**Completed:** 2026-01-01\n\n```\n### Not a heading\n```\n"
    report = pm_write_check.check_text(text, estimate, estimate, Budget())
    assert report.findings == []
    assert report.epics == [pm_write_check.EpicSize("F-1", 1, estimate(text.rstrip() + "\n"))]


def test_pre_commit_hook_entry_runs(tmp_path: Path) -> None:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "permanent-memory-check"
    assert hook["language"] == "python"
    assert re.search(hook["files"], ".claude/memory/permanent_memory.md")
    assert not re.search(hook["files"], ".claude/memory/manual_overrides.md")
    entry = hook["entry"].split()
    assert entry == ["permanent-memory", "check"]
    # The console script pip installs (pyproject's [project.scripts]), as pre-commit runs it:
    # the entry, then the staged files.
    command = shutil.which(entry[0], path=str(Path(sys.executable).parent))
    assert command is not None
    good = CASES / "seed-example" / "permanent_memory.md"
    bad = CASES / "check-findings" / "permanent_memory.md"
    results = [
        subprocess.run(
            [command, *entry[1:], *files],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        for files in ([str(good)], [str(good), str(bad)])
    ]
    assert [r.returncode for r in results] == [0, 1]
    assert results[0].stdout.endswith("2 epics, 143 tokens (max 8000): 0 errors, 0 warnings\n")
    assert (
        f"{bad}:23: error: duplicate epic ID OK-1 (first at line 3); keep one" in results[1].stdout
    )


# the command line and the docs


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("add", ["--input FILE", "--replace", "Tentative", "500 tokens"]),
        ("archive", ["--max-tokens N", "--dry-run", "archive/YYYY-MM-DD.md"]),
        ("check", ["PATH:LINE: LEVEL: MESSAGE", "--max-tokens N", "FILE"]),
    ],
)
def test_help(run: Any, command: str, expected: list[str]) -> None:
    result = run([command, "--help"])
    assert result.code == 0
    text = " ".join(result.out.split())
    for part in expected:
        assert part in text, part


def test_the_loader_help_lists_the_writing_commands(run: Any) -> None:
    result = run(["--help"])
    commands = "load (default), hook, inspect, show, doctor, add, archive, check, merge, git-setup."
    assert f"commands: {commands}" in " ".join(result.out.split())


def test_runs_from_a_copied_skill_folder_in_another_directory(tmp_path: Path) -> None:
    copy = tmp_path / "skill"
    shutil.copytree(SKILL, copy, ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "project"
    project.mkdir()
    env = clean_env()
    env["CLAUDE_PROJECT_DIR"] = str(project)
    script = copy / "scripts" / "permanent_memory.py"
    results = [
        subprocess.run(
            [sys.executable, str(script), *args],
            input=stdin,
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        for args, stdin in (
            (["add", "--input", "-", *EST], json.dumps(OK)),
            (["check", *EST], ""),
            (["archive", "--max-tokens", "10", "--now", NOW_ARG, *EST], ""),
        )
    ]
    assert [r.returncode for r in results] == [0, 0, 0], [r.stderr for r in results]
    assert results[2].stdout.startswith("moved A-1 ")
    assert (project / ".claude" / "memory" / "archive" / "2026-11-29.md").exists()


def _bash_blocks(markdown: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", markdown, flags=re.DOTALL)


def _in_skill_dir(command: str) -> str:
    """writing.md names the skill folder SKILL_DIR (Claude Code does not substitute variables
    in references/); put the real folder in, as the model does from the base directory line."""
    assert "${" not in command
    return command.replace('python3 "SKILL_DIR/', f'python3 "{SKILL}/')


@pytest.mark.parametrize("form", ["<<'EPIC'", "<<'EOF'"], ids=["lines", "json"])
def test_writing_md_example_records_an_epic_in_one_call(tmp_path: Path, form: str) -> None:
    markdown = WRITING_MD.read_text(encoding="utf-8")
    [heredoc] = [block for block in _bash_blocks(markdown) if form in block]
    env = clean_env()
    env.update(CLAUDE_PROJECT_DIR=str(tmp_path))
    added = subprocess.run(
        ["bash", "-c", _in_skill_dir(heredoc)],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    assert added.stderr == ""
    path = memory_file(tmp_path)
    written = path.read_text()
    count, _engine, _source = pm_tokens.load_exact_counter()
    assert added.stdout == f"added FEAT-007 to {path} ({count(written)} tokens)\n"
    [shown] = re.findall(r"```markdown\n(.*?)```", markdown, flags=re.DOTALL)
    completed = re.search(r" completed=(\S+) -->", written)
    assert completed is not None
    assert written == shown.replace("2026-05-15T14:00:00Z", completed.group(1))
    [block] = re.findall(r"```text\n(.*?)```", markdown, flags=re.DOTALL)
    loaded = subprocess.run(
        [sys.executable, str(SCRIPT), "load", "--project-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    assert loaded.stdout == block


def test_writing_md_commands_run(tmp_path: Path) -> None:
    markdown = WRITING_MD.read_text(encoding="utf-8")
    assert "CLAUDE_SKILL_DIR" not in markdown  # not substituted here: it would run /scripts/...
    commands = [b.strip() for b in _bash_blocks(markdown) if "<<'" not in b]
    lines = [line for block in commands for line in block.splitlines()]
    assert [line.split('permanent_memory.py" ')[1] for line in lines] == [
        "archive --dry-run",
        "archive",
        "check",
    ]
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    shutil.copy(CASES / "seed-example" / "permanent_memory.md", path)
    env = clean_env()
    env.update(CLAUDE_PROJECT_DIR=str(tmp_path))
    for line in lines:
        result = subprocess.run(
            ["bash", "-c", _in_skill_dir(line)],
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert result.returncode == 0, (line, result.stderr)
    assert "max 8000" in result.stdout


def test_writing_md_states_the_code_s_numbers() -> None:
    markdown = " ".join(WRITING_MD.read_text(encoding="utf-8").split())
    assert f"At most {pm_write_epic.MAX_EPIC_TOKENS} tokens per epic" in markdown
    assert f"under {pm_write_epic.TENTATIVE_BELOW} confidence" in markdown
    assert f"at most {pm_write_epic.MAX_ID_CHARS} characters" in markdown
    assert f"`{pm_write_archive.ARCHIVE_DIR}/YYYY-MM-DD.md`" in markdown
    assert f"; {Budget().epic_line_tokens} tokens per Epic line)" in markdown
    for field, heading in pm_write_epic.HEADINGS.items():
        assert f"| `{field}` | no | list → `### {heading}` |" in markdown
    assert "`.claude/memory/`" in markdown and "flock" in markdown


def test_skill_md_points_to_writing_md() -> None:
    skill_md = (SKILL / "SKILL.md").read_text(encoding="utf-8")
    section = skill_md.split("\n## Recording an epic\n", 1)[1].split("\n## ", 1)[0]
    assert "[references/writing.md](references/writing.md)" in section
    scanner = re.compile(
        r"\b(api[_-]?key|secret|token|password|os\.environ|process\.env|getenv)\b"
        r"|\b(fetch|requests\.|urllib|axios|curl|wget|https?://|websocket)\b",
        re.IGNORECASE,
    )
    assert [line for line in section.splitlines() if scanner.search(line)] == []


def _digest(root: Path) -> str:
    digest = hashlib.sha256()
    for name, data in tree(root).items():
        digest.update(name.encode() + b"\0" + data)
    return digest.hexdigest()


def test_demo_readme_add_load_archive(tmp_path: Path) -> None:
    readme = (DEMO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Writing permanent memory: add → load → archive", 1)[1]
    examples = console_examples(section)
    assert [e.command.split()[1] for e in examples if e.command.startswith("permanent-memory")] == [
        "load",
        "archive",
        "load",
    ]
    assert "permanent-memory add" in examples[1].command
    scratch = tmp_path / "billing-api"
    before = _digest(DEMO)
    env = clean_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for example in examples:
        command = example.command.replace("/tmp/billing-api", str(scratch))
        result = subprocess.run(
            ["bash", "-c", command],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        assert result.returncode == 0, (example.line, result.stderr)
        expected = [line.replace("/tmp/billing-api", str(scratch)) for line in example.expected]
        assert output_matches(expected, result.stdout.splitlines()), (example.line, result.stdout)
    assert _digest(DEMO) == before
    assert (scratch / ".claude" / "memory" / "archive" / "2026-11-29.md").exists()


# ---------------------------------------------------------------------------------------------
# The loader's writing commands: `archive` moves epics between two files and `add` rewrites the
# memory file. Killed at random moments, or the moment a temp file appears, no epic may be lost
# or torn, and a rerun must finish the job without duplicating anything.

ARCHIVE_KILLS = int(os.environ.get("HARDENING_ARCHIVE_KILLS", "60"))


def _epics_by_id(text: str) -> dict[str, str]:
    import re

    parts = re.split(r"(?m)^(?=## Epic: )", text)
    out: dict[str, str] = {}
    for part in parts:
        if part.startswith("## Epic: "):
            eid = part.split()[2]
            assert eid not in out, f"epic {eid} twice in one file"
            out[eid] = part.rstrip("\n")
    return out


def _original_memory() -> str:
    body = " ".join(["decision"] * 60)
    return "".join(
        f"## Epic: E-{i:03d} — intent {i}\n"
        f"**Completed:** 2025-{1 + i % 12:02d}-{1 + i % 28:02d}\n\n"
        f"### Architectural decisions\n- {body} {i}\n\n### Gotchas discovered\n- gotcha {i}\n\n"
        for i in range(60)
    )


def _memory_state(memdir: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(epics in the memory file, epics in its archive files), by ID."""
    kept = _epics_by_id((memdir / "permanent_memory.md").read_text(encoding="utf-8"))
    archived: dict[str, str] = {}
    folder = memdir / "archive"
    for f in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        for eid, text in _epics_by_id(f.read_text(encoding="utf-8")).items():
            assert eid not in archived, f"{eid} archived twice"
            archived[eid] = text
    return kept, archived


def test_sigkill_archive_and_add_campaign(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    rng = random.Random(int(os.environ.get("HARDENING_SEED", "20260601")) + 1)
    original = _original_memory()
    sections = _epics_by_id(original)
    kills = rounds = windows = finished = 0
    scale = 0.4
    deadline = time.monotonic() + 60
    while kills < ARCHIVE_KILLS and time.monotonic() < deadline:
        rounds += 1
        proj = tmp_path / f"p{rounds}"
        memdir = proj / ".claude" / "memory"
        memdir.mkdir(parents=True)
        main = memdir / "permanent_memory.md"
        main.write_text(original, encoding="utf-8")
        new_epic = tmp_path / f"add{rounds}.json"
        new_epic.write_text(
            json.dumps(
                {
                    "id": f"NEW-{rounds}",
                    "intent": "added",
                    "decisions": [f"added in round {rounds}"],
                }
            )
        )
        base = [sys.executable, str(LOADER)]
        common = ["--project-dir", str(proj), "--tokenizer", "estimate"]
        procs = [
            subprocess.Popen(
                [*base, "archive", *common, "--max-tokens", "4000"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            ),
            subprocess.Popen(
                [*base, "add", *common, "--input", str(new_epic)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            ),
        ]
        t0 = time.monotonic()
        if rounds % 2:
            for proc, delay in sorted(
                ((p, rng.uniform(0, scale)) for p in procs), key=lambda x: x[1]
            ):
                time.sleep(max(0.0, t0 + delay - time.monotonic()))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
        else:
            while time.monotonic() - t0 < 10 and any(p.poll() is None for p in procs):
                names = [
                    e.name
                    for root in (memdir, memdir / "archive")
                    if root.is_dir()
                    for e in os.scandir(root)
                    if ".tmp-" in e.name
                ]
                if names:
                    for proc in procs:
                        if proc.poll() is None:
                            proc.send_signal(signal.SIGKILL)
                            kills += 1
                    windows += 1
                    break
        codes = []
        for proc in procs:
            proc.wait(timeout=60)
            err = proc.stderr.read().decode() if proc.stderr else ""
            if proc.stderr:
                proc.stderr.close()
            assert "Traceback" not in err, err
            assert proc.returncode in (0, -signal.SIGKILL), (proc.returncode, err)
            codes.append(proc.returncode)
        finished += codes.count(0)
        if rounds % 6 == 0:
            scale *= 1.3 if finished < rounds * 2 / 3 else 0.8

        kept, archived = _memory_state(memdir)
        for eid, text in {**kept, **archived}.items():
            if eid.startswith("NEW-"):
                assert "added in round" in text, f"torn added epic: {text!r}"
            else:
                assert text == sections[eid], f"epic {eid} torn or altered"
        assert set(sections) <= set(kept) | set(archived), "an epic was lost"
        if codes[1] == 0:
            assert f"NEW-{rounds}" in set(kept) | set(archived), "a finished add was lost"
        # A rerun finishes the job without duplicating anything.
        rerun = subprocess.run(
            [*base, "archive", *common, "--max-tokens", "4000"],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert rerun.returncode == 0, rerun.stderr
        kept, archived = _memory_state(memdir)
        assert not set(kept) & set(archived), f"in both files: {sorted(set(kept) & set(archived))}"
        assert set(sections) <= set(kept) | set(archived)
    print(
        "archive/add crash campaign:",
        json.dumps(
            {
                "kills": kills,
                "rounds": rounds,
                "write_windows_caught": windows,
                "finished": finished,
            }
        ),
    )
    assert kills >= ARCHIVE_KILLS, f"only {kills} kills"
