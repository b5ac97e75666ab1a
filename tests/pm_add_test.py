"""add (pm_add) and its pure parts (pm_epic_input): the epic written, bad input refused, the
loader reading back what was added, and the folder lock."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import LOADER_DIR
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from project_memory_loader.core import pm_parse, pm_tokens
from project_memory_loader.writing import pm_add, pm_epic_input, pm_epic_layout
from project_memory_loader.writing.pm_epic_input import InvalidEntry
from support import EST, LOADER, TIMEOUT, Result, estimate, memory_file, tree

CASES = Path(__file__).resolve().parent / "cases"
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def epic_json(epic_id: str = "FEAT-100", **fields: Any) -> str:
    data: dict[str, Any] = {"id": epic_id, "intent": "An epic", "completed": "2026-05-01"}
    data.update(fields)
    return json.dumps(data)


# add: the golden epic


def test_add_writes_the_golden_v2_epic(loader: Any, tmp_path: Path) -> None:
    # The default form: marker with epic, confidence, items and completed; the summary; every
    # item tagged with its kind and its confidence; what add writes, load shows, check passes.
    case = CASES / "add-epic-v2"
    result = loader(
        ["add", "--project-dir", str(tmp_path), "--input", str(case / "input.json"), *EST]
    )
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
    loaded = loader(
        ["load", "--file", str(path), "--now", "2026-06-01T00:00:00Z", "--target", "200"]
    )
    assert loaded == Result(0, (case / "expected.txt").read_text(encoding="utf-8"), "")
    checked = loader(["check", str(path), *EST])
    assert checked.code == 0 and checked.out.endswith(": 0 errors, 0 warnings\n")


def add_golden_v1(project: Path, *extra: str) -> list[str]:
    """add's arguments for the add-epic case, in the v1 form (--schema 1)."""
    path = CASES / "add-epic" / "input.json"
    return [
        "add",
        "--project-dir",
        str(project),
        "--input",
        str(path),
        "--schema",
        "1",
        *EST,
        *extra,
    ]


def test_add_writes_the_golden_epic(loader: Any, tmp_path: Path) -> None:
    case = CASES / "add-epic"
    result = loader(add_golden_v1(tmp_path))
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


KEYWORDS = CASES / "add-keywords"


@pytest.mark.parametrize("schema", [2, 1])
def test_add_writes_the_keywords_line_and_never_shows_it(
    loader: Any, tmp_path: Path, schema: int
) -> None:
    # v2: right after the summary; v1: right after the Completed line. Each term once (case
    # aside), empty ones dropped, in the order given; the block does not show the line.
    lines = (KEYWORDS / "lines.txt").read_text(encoding="utf-8")
    if schema == 1:
        lines = "".join(line for line in lines.splitlines(True) if not line.startswith("summary"))
    args = ["add", "--project-dir", str(tmp_path), "--lines", "-", "--schema", str(schema)]
    result = loader([*args, "--now", "2026-05-15T14:00:00Z", *EST], lines)
    path = memory_file(tmp_path)
    golden = (KEYWORDS / ("permanent_memory.md" if schema == 2 else "v1.md")).read_text(
        encoding="utf-8"
    )
    assert result == Result(0, f"added DATES to {path} ({estimate(golden)} estimated tokens)\n", "")
    assert path.read_text(encoding="utf-8") == golden
    assert golden.split("\n")[3 if schema == 2 else 2] == (
        "**Keywords:** luxon, dates, time zones, date formatting, moment, dayjs, date-fns"
    )
    loaded = loader(["load", "--file", str(path), "--now", "2026-06-01T00:00:00Z"])
    expected = (KEYWORDS / "expected.txt").read_text(encoding="utf-8")
    if schema == 1:
        expected = expected.replace(
            "  summary: Luxon for every date; timestamps stored in UTC.\n", ""
        )
    assert loaded == Result(0, expected, "")
    checked = loader(["check", str(path), *EST])
    assert checked.code == 0 and checked.out.endswith(": 0 errors, 0 warnings\n"), checked


def test_add_reports_the_keywords_in_json(loader: Any, tmp_path: Path) -> None:
    result = loader(
        ["add", "--project-dir", str(tmp_path), "--input", "-", "--format", "json", *EST],
        json.dumps({**OK, "keywords": ["Stripe", " webhooks ", "", "stripe", "idempotency key"]}),
    )
    assert result.code == 0, result.err
    assert json.loads(result.out)["keywords"] == ["Stripe", "webhooks", "idempotency key"]
    assert (
        "\n**Keywords:** Stripe, webhooks, idempotency key\n" in memory_file(tmp_path).read_text()
    )


def test_keywords_are_cleaned_like_every_field() -> None:
    entry, notes = pm_epic_input.read_entry(
        {
            **OK,
            "keywords": [
                "  time\tzones ",
                "\u200bdate\u200b-fns",
                "ghp_" + "A1b2C3d4E5" * 3,
                "\x1b[31mmoment\x1b[0m",
                "TIME ZONES",
            ],
        },
        NOW,
    )
    assert [(k.where, k.text) for k in entry.keywords] == [
        ("keywords[0]", "time zones"),
        ("keywords[1]", "date-fns"),
        ("keywords[3]", "moment"),
    ]
    assert [k.where for k in entry.repeated_keywords] == ["keywords[4]"]
    assert notes == ["warning: keywords[2] held a secret; it is left out"]
    assert "\n**Keywords:** time zones, date-fns, moment\n" in pm_epic_layout.format_epic(entry)
    # No keywords: no line.
    plain, _ = pm_epic_input.read_entry({**OK, "keywords": ["", "  "]}, NOW)
    assert "Keywords" not in pm_epic_layout.format_epic(plain)


def test_add_json_output(loader: Any, tmp_path: Path) -> None:
    case = CASES / "add-epic"
    result = loader(add_golden_v1(tmp_path, "--format", "json"))
    golden = (case / "permanent_memory.md").read_text(encoding="utf-8")
    assert result.code == 0
    assert json.loads(result.out) == {
        "action": "added",
        "path": str(memory_file(tmp_path)),
        "id": "FEAT-042",
        "intent": "Invoice export to the ledger",
        "completed": "2026-05-15T14:00:00Z",
        "summary": None,
        "keywords": [],
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
        "created": True,
    }
    assert result.err == (case / "stderr.txt").read_text(encoding="utf-8")


def test_add_appends_and_keeps_the_file_as_it_was(loader: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    before = (CASES / "seed-example" / "permanent_memory.md").read_bytes()
    path.write_bytes(before)
    path.chmod(0o640)
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], epic_json())
    assert result.code == 0, result.err
    after = path.read_bytes()
    assert after.startswith(before.rstrip(b"\n") + b"\n\n## Epic: FEAT-100 \xe2\x80\x94 An epic\n")
    assert path.stat().st_mode & 0o777 == 0o640
    epics = pm_parse.parse_permanent(after.decode("utf-8"))
    assert [e.epic_id for e in epics] == ["FEAT-007", "FEAT-008", "FEAT-100"]
    assert result.err == ""


def test_add_keeps_crlf_and_bom(loader: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    original = (CASES / "crlf-bom" / "permanent_memory.md").read_bytes()
    assert original.startswith(b"\xef\xbb\xbf") and b"\r\n" in original
    path.write_bytes(original)
    assert (
        loader(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], epic_json()).code == 0
    )
    after = path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in after.replace(b"\r\n", b"")  # every line end is CRLF
    assert after.endswith(b"### Conflicts encountered\r\n")


def test_add_refuses_a_duplicate_and_replaces_in_place(loader: Any, tmp_path: Path) -> None:
    base = ["add", "--project-dir", str(tmp_path), "--input", "-", *EST]
    for epic_id in ("A-1", "B-2", "C-3"):
        assert loader(base, epic_json(epic_id, decisions=[f"first {epic_id}"])).code == 0
    path = memory_file(tmp_path)
    before = path.read_bytes()
    again = loader(base, epic_json("B-2", decisions=["second"]))
    assert again == Result(
        1,
        "",
        f"{path}: B-2 is already in the file (line 15); give --append to add its items to it, "
        "or --replace to replace it\n",
    )
    assert path.read_bytes() == before
    replaced = loader([*base, "--replace"], epic_json("B-2", decisions=["second"]))
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


def test_replace_refuses_an_id_that_is_already_twice_in_the_file(
    loader: Any, tmp_path: Path
) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("## Epic: X-1 — one\n\n## Epic: X-1 — two\n")
    result = loader(
        ["add", "--project-dir", str(tmp_path), "--input", "-", "--replace", *EST], epic_json("X-1")
    )
    assert result == Result(
        1, "", f"{path}: X-1 is in the file 2 times (lines 1, 3); keep one by hand first\n"
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
        "--input: unknown key 'decision' (known: id, intent, summary, completed, keywords, "
        "paths, decisions, gotchas, anti_patterns, patterns, conflicts, tentative)",
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
    (
        {"id": "A-1", "intent": "x" * 2000, "keywords": ["k"]},
        "intent: the epic is over 500 tokens even without its items; shorten the intent or "
        "the keywords",
    ),
    (
        {**OK, "keywords": "luxon, dates"},
        'keywords: must be a list of terms, e.g. ["luxon", "time zones"], got text',
    ),
    ({**OK, "keywords": ["luxon", 3]}, "keywords[1]: must be text, got a number"),
    ({**OK, "keywords": ["luxon", ["dates"]]}, "keywords[1]: must be text, got a list"),
    (
        {**OK, "keywords": ["luxon", "dates, time zones"]},
        "keywords[1]: 'dates, time zones' holds a comma, which separates terms; give each term "
        "as its own item",
    ),
    (
        {**OK, "keywords": ["time\nzones"]},
        "keywords[0]: holds a line break; give each term as its own item",
    ),
    (
        {**OK, "keywords": ["time\r zones"]},
        "keywords[0]: holds a line break; give each term as its own item",
    ),
    ({**OK, "keywords": ["k" * 61]}, "keywords[0]: 61 characters; at most 60"),
    ({**OK, "keywords": [f"term {n}" for n in range(41)]}, "keywords: 41 terms; at most 40"),
    (
        {**OK, "keywords": [f"{n:02} " + "k" * 30 for n in range(13)]},
        "keywords: 453 characters in all; at most 400",
    ),
    (
        {**OK, "paths": "src/**"},
        "paths: must be a list of globs relative to the project's root, "
        'e.g. ["billing_api/webhooks/**"], got str',
    ),
    ({**OK, "paths": ["src/**", 3]}, "paths[1]: must be text, got int"),
    (
        {**OK, "paths": ["/etc/x"]},
        "paths[0]: '/etc/x' is absolute: write it relative to the project's root",
    ),
    ({**OK, "paths": ["src/../../x"]}, "paths[0]: 'src/../../x' leaves the project (..)"),
    (
        {**OK, "paths": ["!src/x"]},
        "paths[0]: '!src/x' is a negation, which a Paths line does not take",
    ),
    (
        {**OK, "paths": ["src\\x"]},
        "paths[0]: 'src\\\\x' holds a backslash: separate folders with /",
    ),
    (
        {**OK, "paths": ["a/**, b/**"]},
        "paths[0]: 'a/**, b/**' holds a comma, which separates globs",
    ),
    ({**OK, "paths": ["x" * 201]}, "paths[0]: 201 characters; at most 200"),
    ({**OK, "paths": [f"g{n}/**" for n in range(41)]}, "paths: 41 globs; at most 40"),
]


def prepare(data: object) -> str:
    entry, _notes = pm_epic_input.read_entry(data, NOW)
    pm_epic_layout.check_limit(entry, estimate)
    text = pm_epic_layout.format_epic(entry)
    pm_epic_layout.verify_epic(entry, text)
    return text


@pytest.mark.parametrize(("data", "message"), INVALID)
def test_invalid_entry(data: object, message: str) -> None:
    with pytest.raises(InvalidEntry) as caught:
        prepare(data)
    assert str(caught.value) == message


@pytest.mark.parametrize(("data", "message"), INVALID)
def test_add_refuses_invalid_input(loader: Any, tmp_path: Path, data: object, message: str) -> None:
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(data))
    assert result == Result(1, "", f"{message}\n")
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
        (b"\xff{}", "--input: not UTF-8 at byte offset 0"),
        ("[" * 10 + " " * pm_add.MAX_INPUT_BYTES, "--input: over 1024 KiB; an epic is a summary"),
        ("[" * 100000, "--input: not valid JSON: nested too deeply"),
    ],
)
def test_add_refuses_what_is_not_json(
    loader: Any, tmp_path: Path, stdin: str | bytes, message: str
) -> None:
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], stdin)
    assert result == Result(1, "", f"{message}\n")


def test_add_reports_an_unreadable_input_file(loader: Any, tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    result = loader(["add", "--project-dir", str(tmp_path), "--input", str(missing)])
    assert result == Result(1, "", f"cannot read --input {missing}: No such file or directory\n")


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
    entry, notes = pm_epic_input.read_entry(data, NOW)
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
    assert pm_epic_layout.stored_sections(entry)["tentative"] == ["plain"]


def test_completed_defaults_to_now_and_is_written_in_utc(loader: Any, tmp_path: Path) -> None:
    result = loader(
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
    entry, _ = pm_epic_input.read_entry({**OK, "completed": "2026-05-15"}, NOW)
    assert entry.completed == "2026-05-15T00:00:00Z"


def test_an_epic_over_500_tokens_is_refused_and_nothing_is_written(
    loader: Any, tmp_path: Path
) -> None:
    # The real tokenizer: the 500-token limit is in cl100k_base tokens. One long gotcha used
    # to be left out with a note while add wrote an epic of empty headings and exited 0.
    count, _engine, _source = pm_tokens.load_exact_counter()
    gotcha = "gotcha: " + "; ".join(f"retry {n} keeps the idempotency key" for n in range(200))
    data = {**OK, "decisions": ["one short decision"], "gotchas": [gotcha]}
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    seed = "# Notes\n"
    path.write_text(seed)
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-"], json.dumps(data))
    full = pm_epic_layout.format_epic(pm_epic_input.read_entry(data, NOW)[0])
    assert result == Result(
        1,
        "",
        f"A-1 is {count(full)} tokens, over the 500-token limit of an epic; nothing written\n"
        f"shorten its longest item, gotchas[0] ({count(gotcha)} tokens), or split the epic: "
        "some items under another ID, each epic within 500 tokens\n",
    )
    assert path.read_text() == seed


def test_check_limit_passes_an_epic_at_the_limit_and_refuses_one_token_over() -> None:
    entry, _ = pm_epic_input.read_entry(
        {**OK, "patterns": [{"text": "p" * 40, "confidence": c} for c in (0.75, 0.9)]}, NOW
    )
    full = estimate(pm_epic_layout.format_epic(entry))
    pm_epic_layout.check_limit(entry, estimate, full)
    with pytest.raises(pm_epic_layout.EpicOverLimit) as caught:
        pm_epic_layout.check_limit(entry, estimate, full - 1)
    assert caught.value.hint.startswith("shorten its longest item, patterns[0] (")


def test_add_into_a_missing_folder_given_with_file(loader: Any, tmp_path: Path) -> None:
    target = tmp_path / "nowhere" / "permanent_memory.md"
    result = loader(["add", "--file", str(target), "--input", "-", *EST], json.dumps(OK))
    assert result == Result(1, "", f"directory not found: {target.parent}\n")


@pytest.mark.parametrize("command", ["add", "archive"])
def test_the_writing_commands_refuse_stdin_as_the_file(loader: Any, command: str) -> None:
    result = loader(
        [command, "--file", "-", "--input", "-"] if command == "add" else [command, "--file", "-"]
    )
    assert result.code == 2
    assert result.err.endswith(
        f"permanent_memory.py {command}: error: --file - is not possible, the command writes "
        "the file\n"
    )


def _refused(loader: Any, tmp_path: Path, setup: Callable[[Path], None]) -> Result:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    setup(path)
    before = tree(tmp_path)
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(OK))
    assert tree(tmp_path) == before
    return result


def test_add_leaves_alone_what_it_cannot_rewrite_faithfully(loader: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    latin1 = _refused(loader, tmp_path, lambda p: p.write_bytes(b"## Epic: A \xe9t\xe9\n"))
    assert latin1 == Result(
        1,
        "",
        f"{path} is not UTF-8 text at byte offset 11 (line 1); fix it first, nothing was written\n",
    )
    utf16 = _refused(loader, tmp_path, lambda p: p.write_bytes("## Epic: A\n".encode("utf-16")))
    assert utf16 == Result(
        1, "", f"{path} is UTF-16 text; save it as UTF-8 first (this command writes UTF-8)\n"
    )
    path.unlink()
    real = tmp_path / "real.md"
    real.write_text("## Epic: R-1 — real\n")
    link = _refused(loader, tmp_path, lambda p: p.symlink_to(real))
    assert link == Result(
        1,
        "",
        f"{path} is a symbolic link; add and archive replace the file, which would break "
        "the link: give --file the real file\n",
    )
    path.unlink()
    folder = _refused(loader, tmp_path, lambda p: p.mkdir())
    assert folder == Result(1, "", f"{path} is not a regular file\n")


def test_add_refuses_manual_overrides(loader: Any, tmp_path: Path) -> None:
    target = tmp_path / "manual_overrides.md"
    result = loader(["add", "--file", str(target), "--input", "-"], json.dumps(OK))
    assert result == Result(
        1, "", f"{target}: manual_overrides.md is user-curated; it is never written\n"
    )


def test_add_refuses_an_epic_the_file_would_swallow(loader: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("## Epic: A-0 — open fence\n\n```\nno closing fence\n")
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(OK))
    assert result == Result(
        1,
        "",
        f"{path}: the loader would not read the new epic back (is a ``` fence left open "
        "above it?); run permanent_memory.py check\n",
    )


def test_add_says_when_the_file_grows_past_what_the_loader_summarises(
    loader: Any, tmp_path: Path
) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("# Notes\n\n" + "padding line for the notes\n" * 1300)
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(OK))
    assert result.code == 0
    tokens = estimate(path.read_text())
    assert result.err == (
        f"note: {path} is now {tokens} estimated tokens, over the 8000 the loader summarises; "
        "run permanent_memory.py archive\n"
    )


def test_without_the_tokenizer_auto_says_it_estimates(
    loader: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unavailable(bundled_first: bool = False) -> Any:
        raise pm_tokens.EncodingUnavailable("no cl100k_base file found on disk")

    monkeypatch.setattr(pm_tokens, "load_exact_counter", unavailable)
    result = loader(["add", "--project-dir", str(tmp_path), "--input", "-"], json.dumps(OK))
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
            "keywords": st.lists(text.filter(lambda t: "," not in t), max_size=4),
            **{field: st.lists(item, max_size=3) for field in pm_epic_input.LIST_FIELDS},
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


def _add_pure(data: dict[str, Any], existing: str) -> tuple[pm_epic_input.Entry, str] | None:
    try:
        entry, _notes = pm_epic_input.read_entry(data, NOW)
        pm_epic_layout.check_limit(entry, estimate)
        pm_epic_layout.verify_epic(entry, pm_epic_layout.format_epic(entry))
        new_text, _action = pm_epic_layout.place_epic(existing, entry, replace=False)
    except (InvalidEntry, pm_epic_input.DuplicateEpic):
        return None
    return entry, new_text


def _read_back(
    new_text: str,
) -> tuple[str, str, str | None, dict[str, list[str]], tuple[str, ...]]:
    epic = pm_parse.parse_permanent(new_text)[-1]
    subs = {sub.label: list(sub.entries) for sub in epic.subsections}
    return epic.epic_id, epic.intent, epic.completed, subs, epic.keywords


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
        pm_epic_layout.stored_sections(entry),
        tuple(keyword.text for keyword in entry.keywords),
    )
    assert new_text.startswith(existing.rstrip("\n"))
    assert pm_epic_layout.find_placed(new_text, entry) is not None


@given(data=entries(PLAIN), existing=st.sampled_from(EXISTING))
def test_plain_text_is_read_back_as_given(data: dict[str, Any], existing: str) -> None:
    added = _add_pure(data, existing)
    assert added is not None  # plain text is never refused
    entry, new_text = added
    epic_id, intent, _completed, subs, keywords = _read_back(new_text)
    assert (epic_id, intent) == (data["id"], " ".join(data["intent"].split()))
    given_terms = [" ".join(term.split()) for term in data.get("keywords", [])]
    unique = {term.casefold(): term for term in reversed(given_terms) if term}
    assert sorted(keywords) == sorted(unique.values())
    given_texts = sorted(
        " ".join((item if isinstance(item, str) else item["text"]).split())
        for field in pm_epic_input.LIST_FIELDS
        for item in data.get(field, [])
    )
    assert sorted(text for texts in subs.values() for text in texts) == given_texts
    for item in entry.items:  # and each went where its confidence sends it
        label = "tentative" if item.tentative else pm_epic_input.FIELD_LABELS[item.field]
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
            optional={
                field: JSON for field in (*pm_epic_input.LIST_FIELDS, "completed", "keywords")
            },
        ),
    )
)
def test_bad_input_raises_only_invalid_entry(data: object) -> None:
    try:
        prepare(data)
    except InvalidEntry as exc:
        assert "\n" not in str(exc)


def test_item_layout_matches_the_loader_labels() -> None:
    for field, heading in pm_epic_input.HEADINGS.items():
        assert pm_parse.subsection_label(heading) == pm_epic_input.FIELD_LABELS[field]
    assert set(pm_epic_input.FIELD_LABELS.values()) == set(pm_parse.LABELS)


# add: locking


HOLD = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from project_memory_loader.shared import memory_io
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
            [sys.executable, LOADER, "add", "--project-dir", tmp_path, "--input", "-", *EST],
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


def run_loaders_at_once(args: list[str], inputs: list[str]) -> list[int]:
    """Start one loader per input, all before any gets its stdin, and return their exit codes."""
    processes = [
        subprocess.Popen(
            [sys.executable, LOADER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for _ in inputs
    ]
    for process, text in zip(processes, inputs):
        assert process.stdin is not None
        process.stdin.write(text.encode())
        process.stdin.close()
    return [p.wait(timeout=TIMEOUT) for p in processes]


def test_concurrent_adds_all_land(tmp_path: Path) -> None:
    ids = [f"PAR-{n}" for n in range(6)]
    add = ["add", "--project-dir", str(tmp_path), "--input", "-", *EST]
    assert run_loaders_at_once(add, [epic_json(i) for i in ids]) == [0] * len(ids)
    found = [e.epic_id for e in pm_parse.parse_permanent(memory_file(tmp_path).read_text())]
    assert sorted(found) == ids


# add --append: entries for an epic already on file

APPEND = CASES / "add-append"


def append_args(project: Path, *extra: str) -> list[str]:
    return ["add", "--append", "--project-dir", str(project), "--lines", "-", *EST, *extra]


def append_project(tmp_path: Path, raw: bytes | None = None) -> Path:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_bytes((APPEND / "permanent_memory.md").read_bytes() if raw is None else raw)
    return path


def test_append_writes_the_golden_file_and_reports_it(loader: Any, tmp_path: Path) -> None:
    path = append_project(tmp_path)
    lines = (APPEND / "lines.txt").read_text(encoding="utf-8")
    result = loader(append_args(tmp_path), lines)
    after = (APPEND / "after.md").read_text(encoding="utf-8")
    assert result.code == 0, result.err
    assert path.read_text(encoding="utf-8") == after
    stdout = (APPEND / "stdout.txt").read_text(encoding="utf-8").replace("{path}", str(path))
    assert result.out == stdout
    [epic] = [e for e in pm_parse.parse_permanent(after) if e.epic_id == "FEAT-005"]
    section = "\n".join(after.split("\n")[epic.start_line : epic.end_line])
    assert f"({estimate(section)} estimated tokens)\n" in result.out
    assert result.err == ""
    checked = loader(["check", str(path), *EST])
    assert checked.code == 0 and checked.out.endswith(": 0 errors, 0 warnings\n"), checked
    # The same entries again: every one is reported as already there, and the file is not
    # touched (not even rewritten).
    stamp = path.stat().st_mtime_ns
    again = loader(append_args(tmp_path), lines)
    assert again == Result(
        0, (APPEND / "again.txt").read_text(encoding="utf-8").replace("{path}", str(path)), ""
    )
    assert path.read_text(encoding="utf-8") == after
    assert path.stat().st_mtime_ns == stamp


def test_append_keeps_crlf_a_bom_and_every_byte_on_file(loader: Any, tmp_path: Path) -> None:
    text = (APPEND / "permanent_memory.md").read_text(encoding="utf-8")
    path = append_project(tmp_path, ("\ufeff" + text.replace("\n", "\r\n")).encode())
    result = loader(append_args(tmp_path), (APPEND / "lines.txt").read_text(encoding="utf-8"))
    assert result.code == 0, result.err
    after = (APPEND / "after.md").read_text(encoding="utf-8")
    assert path.read_bytes() == ("\ufeff" + after.replace("\n", "\r\n")).encode()


def test_append_in_json(loader: Any, tmp_path: Path) -> None:
    append_project(tmp_path)
    lines = (
        "id: FEAT-005\ngotchas:\n- Stripe sends duplicate events\n"
        "- stripe retries a webhook for three days\n"
    )
    result = loader(append_args(tmp_path, "--format", "json"), lines)
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert {k: report[k] for k in ("action", "id", "appended", "skipped")} == {
        "action": "appended",
        "id": "FEAT-005",
        "appended": [
            {"where": "gotchas[0]", "label": "gotchas", "text": "Stripe sends duplicate events"}
        ],
        "skipped": [
            {
                "where": "gotchas[1]",
                "label": "gotchas",
                "text": "stripe retries a webhook for three days",
            }
        ],
    }
    again = json.loads(loader(append_args(tmp_path, "--format", "json"), lines).out)
    assert (again["action"], again["appended"], len(again["skipped"])) == ("unchanged", [], 2)


def test_append_to_an_epic_not_on_file_adds_it(loader: Any, tmp_path: Path) -> None:
    path = append_project(tmp_path)
    before = path.read_text(encoding="utf-8")
    missing = loader(append_args(tmp_path), "id: FEAT-030\ngotchas:\n- g\n")
    assert missing == Result(
        1,
        "",
        "intent: required (one line saying what the epic did): FEAT-030 is not in the "
        "file yet, so --append adds it as a new epic\n",
    )
    assert path.read_text(encoding="utf-8") == before
    added = loader(
        append_args(tmp_path, "--now", "2026-11-29T12:00:00Z"),
        "id: FEAT-030\nintent: Refunds\ngotchas:\n- g\n",
    )
    assert added.code == 0, added.err
    written = path.read_text(encoding="utf-8")
    assert written.startswith(before.rstrip("\n") + "\n\n## Epic: FEAT-030 \u2014 Refunds\n")
    assert (
        added.out
        == f"added FEAT-030 to {path} ({estimate(written[len(before) + 1 :])} estimated tokens)\n"
    )


def test_append_keeps_the_epics_own_heading_and_says_so(loader: Any, tmp_path: Path) -> None:
    path = append_project(tmp_path)
    result = loader(
        append_args(tmp_path),
        "id: FEAT-005\nintent: Something else\ncompleted: 2026-12-01\ngotchas:\n- g\n",
    )
    assert result.code == 0
    assert result.err == (
        "note: intent: FEAT-005 keeps its own ('Stripe webhook ingestion'); --append adds "
        "entries only\nnote: completed: FEAT-005 keeps its own; --append adds entries only\n"
    )
    assert (
        "## Epic: FEAT-005 \u2014 Stripe webhook ingestion\n**Completed:** 2026-08-20T09:00:00Z\n"
        in (path.read_text(encoding="utf-8"))
    )


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (
            "## Epic: FEAT-005 \u2014 A\n\n## Epic: FEAT-005 \u2014 B\n",
            "FEAT-005 is in the file 2 times (lines 1, 3); keep one by hand first",
        ),
        (
            "## Epic: FEAT-005 \u2014 A\n\n### Gotchas discovered\n```\n- g\n",
            "the loader would not read the entries appended to FEAT-005 back as written (is a "
            "``` fence left open in it?); nothing was written",
        ),
    ],
    ids=["twice", "open-fence"],
)
def test_append_refuses_and_writes_nothing(
    loader: Any, tmp_path: Path, raw: str, error: str
) -> None:
    path = append_project(tmp_path, raw.encode())
    result = loader(append_args(tmp_path), "id: FEAT-005\ngotchas:\n- new\n")
    prefix = f"{path}: " if "times" in error else ""
    assert result == Result(1, "", f"{prefix}{error}\n")
    assert path.read_bytes() == raw.encode()


def test_append_and_replace_do_not_go_together(loader: Any, tmp_path: Path) -> None:
    result = loader(append_args(tmp_path, "--replace"), "id: X\n")
    assert result.code == 2 and result.out == ""
    assert result.err.endswith("argument --replace: not allowed with argument --append\n")


def test_concurrent_appends_to_one_epic_all_land(tmp_path: Path) -> None:
    path = append_project(tmp_path)
    texts = [f"lesson number {n}" for n in range(6)]
    inputs = [f"id: FEAT-005\ngotchas:\n- {text}\n" for text in texts]
    assert run_loaders_at_once(append_args(tmp_path), inputs) == [0] * len(texts)
    [epic] = [e for e in pm_parse.parse_permanent(path.read_text()) if e.epic_id == "FEAT-005"]
    [gotchas] = [s for s in epic.subsections if s.label == "gotchas"]
    assert gotchas.entries[0] == "Stripe retries a webhook for three days"
    assert sorted(gotchas.entries[1:]) == texts
    assert sorted(p.name for p in path.parent.iterdir()) == ["permanent_memory.md"]


# add --append: keywords

APPEND_KEYWORDS = CASES / "add-append-keywords"


def append_keywords(loader: Any, project: Path, *extra: str) -> list[Result]:
    """FEAT-005's entries and keywords (no Keywords line yet), then FEAT-013's keywords (onto
    its line as a person wrote it)."""
    return [
        loader(
            append_args(project, *extra),
            (APPEND_KEYWORDS / f"lines-{epic}.txt").read_text(encoding="utf-8"),
        )
        for epic in ("005", "013")
    ]


def test_append_writes_and_merges_keywords_and_reports_them(loader: Any, tmp_path: Path) -> None:
    path = append_project(tmp_path, (APPEND_KEYWORDS / "permanent_memory.md").read_bytes())
    after = (APPEND_KEYWORDS / "after.md").read_text(encoding="utf-8")

    def golden(name: str) -> Result:
        text = (APPEND_KEYWORDS / name).read_text(encoding="utf-8")
        return Result(0, text.replace("{path}", str(path)), "")

    assert append_keywords(loader, tmp_path) == [golden("stdout-005.txt"), golden("stdout-013.txt")]
    assert path.read_text(encoding="utf-8") == after
    epics = {e.epic_id: e for e in pm_parse.parse_permanent(after)}
    assert epics["FEAT-005"].keywords == ("Stripe", "webhooks", "idempotency", "event id")
    assert epics["FEAT-013"].keywords == ("dunning", "card retries", "past due", "subscription")
    # Only the Keywords lines and the new entry differ from the file as it was.
    before = (APPEND_KEYWORDS / "permanent_memory.md").read_text(encoding="utf-8").split("\n")
    assert [line for line in after.split("\n") if line not in before] == [
        "**Keywords:** Stripe, webhooks, idempotency, event id",
        "- Stripe sends duplicate events",
        "- **Keywords:** dunning,  card retries, past due, subscription",
    ]
    assert [line for line in before if line not in after.split("\n")] == [
        "- **Keywords:** dunning,  card retries,"
    ]
    checked = loader(["check", str(path), *EST])
    assert checked.code == 0 and checked.out.endswith(": 0 errors, 0 warnings\n"), checked
    # The block does not show them.
    loaded = loader(["load", "--file", str(path), "--now", "2026-12-01T00:00:00Z"])
    assert loaded.code == 0 and "idempotency" not in loaded.out and "past due" not in loaded.out
    # The same again: everything is reported as there already, and nothing is rewritten.
    stamp = path.stat().st_mtime_ns
    assert append_keywords(loader, tmp_path) == [golden("again-005.txt"), golden("again-013.txt")]
    assert path.read_text(encoding="utf-8") == after
    assert path.stat().st_mtime_ns == stamp


def test_append_keywords_keeps_crlf_a_bom_and_every_other_byte(loader: Any, tmp_path: Path) -> None:
    text = (APPEND_KEYWORDS / "permanent_memory.md").read_text(encoding="utf-8")
    path = append_project(tmp_path, ("\ufeff" + text.replace("\n", "\r\n")).encode())
    assert [r.code for r in append_keywords(loader, tmp_path)] == [0, 0]
    after = (APPEND_KEYWORDS / "after.md").read_text(encoding="utf-8")
    assert path.read_bytes() == ("\ufeff" + after.replace("\n", "\r\n")).encode()


def test_append_keywords_in_json(loader: Any, tmp_path: Path) -> None:
    append_project(tmp_path, (APPEND_KEYWORDS / "permanent_memory.md").read_bytes())
    lines = "id: FEAT-013\nkeywords: Dunning, past due\ngotchas:\n- cards expire\n"
    result = loader(append_args(tmp_path, "--format", "json"), lines)
    assert result.code == 0, result.err
    report = json.loads(result.out)
    assert {k: report[k] for k in ("action", "appended", "skipped", "left_out")} == {
        "action": "appended",
        "appended": [
            {"where": "gotchas[0]", "label": "gotchas", "text": "cards expire"},
            {"where": "keywords[1]", "label": "keywords", "text": "past due"},
        ],
        "skipped": [{"where": "keywords[0]", "label": "keywords", "text": "Dunning"}],
        "left_out": [],
    }


def test_append_keywords_over_the_line_s_limits_are_left_out_with_a_note(
    loader: Any, tmp_path: Path
) -> None:
    terms = ", ".join(f"term {n}" for n in range(39))
    raw = (APPEND / "permanent_memory.md").read_text(encoding="utf-8")
    path = append_project(
        tmp_path, raw.replace("09:00:00Z\n", f"09:00:00Z\n**Keywords:** {terms}\n").encode()
    )
    result = loader(append_args(tmp_path), "id: FEAT-005\nkeywords: refunds, disputes, payouts\n")
    assert result.code == 0
    assert result.out.startswith(f"appended 1 keyword to FEAT-005 in {path} (")
    assert result.err == (
        "note: keywords: the Keywords line of FEAT-005 holds at most 40 terms, 400 characters "
        "in all; left out 2: keywords[1] 'disputes', keywords[2] 'payouts'\n"
    )
    assert f"**Keywords:** {terms}, refunds\n" in path.read_text(encoding="utf-8")
    full = path.read_bytes()
    again = loader(append_args(tmp_path), "id: FEAT-005\nkeywords: payouts\n")
    assert again.out == (
        f"nothing appended to FEAT-005 in {path}: its Keywords line has no room for the new "
        "keywords\n"
    )
    assert path.read_bytes() == full


@pytest.mark.parametrize(
    ("keywords", "error"),
    [
        (
            "- webhooks, events",
            "keywords[0]: 'webhooks, events' holds a comma, which separates terms",
        ),
        ("- " + "k" * 61, "keywords[0]: 61 characters; at most 60"),
        ("- events*", "keywords[0]: the loader would read 'events*' back as 'events'; rephrase it"),
    ],
    ids=["comma", "long", "misread"],
)
def test_append_refuses_bad_keywords_and_writes_nothing(
    loader: Any, tmp_path: Path, keywords: str, error: str
) -> None:
    path = append_project(tmp_path)
    before = path.read_bytes()
    result = loader(
        append_args(tmp_path), f"id: FEAT-005\ngotchas:\n- new\nkeywords:\n{keywords}\n"
    )
    assert (result.code, result.out) == (1, "")
    assert result.err.startswith(f"{error}") and result.err.count("\n") == 1
    assert path.read_bytes() == before


def test_add_writes_the_paths_line_after_the_keywords_and_never_shows_it(
    loader: Any, tmp_path: Path
) -> None:
    given = {
        **OK,
        "keywords": ["stripe"],
        "paths": [" billing_api/webhooks/** ", "", "`a.py`", "a.py"],
    }
    result = loader(
        ["add", "--project-dir", str(tmp_path), "--input", "-", *EST], json.dumps(given)
    )
    assert result.code == 0, result.err
    text = memory_file(tmp_path).read_text(encoding="utf-8")
    assert "\n**Keywords:** stripe\n**Paths:** billing_api/webhooks/**, a.py\n" in text
    [epic] = pm_parse.parse_permanent(text)
    assert epic.paths == ("billing_api/webhooks/**", "a.py")
    loaded = loader(["load", "--file", str(memory_file(tmp_path)), "--now", "2026-06-01T00:00:00Z"])
    assert loaded.code == 0 and "billing_api" not in loaded.out and "Paths" not in loaded.out
    lines = loader(
        ["add", "--project-dir", str(tmp_path), "--lines", "-", *EST],
        "id: B-2\nintent: b\npaths: src/b/**, src/c.py\ngotchas:\n- g\n",
    )
    assert lines.code == 0, lines.err
    assert "\n**Paths:** src/b/**, src/c.py\n" in memory_file(tmp_path).read_text(encoding="utf-8")


def test_append_keeps_the_v2_markers_item_count_right(loader: Any, tmp_path: Path) -> None:
    # items= used to stay at what add wrote, whatever --append added after.
    add = ["add", "--project-dir", str(tmp_path), "--input", "-", *EST]
    loader(add, json.dumps({**OK, "decisions": ["a", "b"]}))
    result = loader([*add, "--append"], json.dumps({"id": "A-1", "gotchas": ["c"]}))
    assert result.code == 0, result.err
    [marker] = [line for line in memory_file(tmp_path).read_text().split("\n") if "items=" in line]
    assert " items=3 " in marker
    again = loader([*add, "--append"], json.dumps({"id": "A-1", "gotchas": ["c", "d"]}))
    assert again.code == 0, again.err
    assert " items=4 " in memory_file(tmp_path).read_text()
