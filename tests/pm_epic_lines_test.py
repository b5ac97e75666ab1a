"""The line form of `add`'s input: text to fields, and the same epic as from JSON."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from project_memory_loader.writing import pm_add
from project_memory_loader.writing.pm_epic_lines import LinesError, parse_epic_lines

NOW = datetime(2026, 5, 15, 14, 0, tzinfo=timezone.utc)
AWKWARD = """it's "quoted" $HOME `tick` {brace} C:\\dir\\file naïve 日本 — ok"""


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("id: FEAT-1\nintent: a b\n", {"id": "FEAT-1", "intent": "a b"}),
        ("intent:   padded  \n", {"intent": "padded"}),
        ("intent: JWT: auth # not a comment\n", {"intent": "JWT: auth # not a comment"}),
        ("gotchas:\n- one\n-   two\n", {"gotchas": ["one", "two"]}),
        ("gotchas:\n  - indented\n\n\n- after blanks\n", {"gotchas": ["indented", "after blanks"]}),
        ("conflicts:\nid: X\n", {"conflicts": [], "id": "X"}),
        ("gotchas:\n- a long\n  item, continued\n", {"gotchas": ["a long item, continued"]}),
        ("intent: one\n\tand more\n", {"intent": "one and more"}),
        ("gotchas:\n-\n", {"gotchas": [""]}),
        (f"gotchas:\n- {AWKWARD}\n", {"gotchas": [AWKWARD]}),
        ("id: A\r\nintent: B\r\n", {"id": "A", "intent": "B"}),
        # keywords: a list on one line too, split at its commas (empty terms are add's to drop)
        (
            "keywords: luxon, time zones,,dayjs\n",
            {"keywords": ["luxon", "time zones", "", "dayjs"]},
        ),
        ("keywords: luxon,\n  dates\n", {"keywords": ["luxon", "dates"]}),
        ("keywords:\n- luxon\n- time zones\n", {"keywords": ["luxon", "time zones"]}),
        ("keywords:\n", {"keywords": []}),
        ("intent: a, b\n", {"intent": "a, b"}),
        ("", {}),
    ],
)
def test_parse(text: str, fields: dict[str, object]) -> None:
    assert parse_epic_lines(text) == fields


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- orphan\n", "line 1: '- item' outside a list; put 'name:' above it"),
        ("id: A\n- item\n", "line 2: '- item' outside a list; put 'name:' above it"),
        ("gotchas:\n  continued\n", "line 2: expected '- item' in the list gotchas"),
        ("just words\n", "line 1: expected 'name: value', 'name:' (a list follows) or '- item'"),
        ('{"id": 1}\n', "line 1: expected 'name: value', 'name:' (a list follows) or '- item'"),
        ("id: A\nid: B\n", "line 2: id is given twice"),
        (
            "  indented first\n",
            "line 1: expected 'name: value', 'name:' (a list follows) or '- item'",
        ),
    ],
)
def test_errors_name_the_line(text: str, message: str) -> None:
    with pytest.raises(LinesError) as caught:
        parse_epic_lines(text)
    assert str(caught.value) == message


_ITEM = (
    st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1)
    .map(str.strip)
    .filter(bool)
)


@given(st.lists(_ITEM, max_size=6), st.lists(_ITEM, max_size=3))
def test_any_one_line_text_comes_back_as_written(gotchas: list[str], decisions: list[str]) -> None:
    text = "gotchas:\n" + "".join(f"- {g}\n" for g in gotchas)
    text += "decisions:\n" + "".join(f"  - {d}\n" for d in decisions)
    assert parse_epic_lines(text) == {"gotchas": gotchas, "decisions": decisions}


LINES = f"""\
id: FEAT-009
intent: Webhook retries
decisions:
- exponential backoff capped at 1 h (DEC-020) (confidence: 0.9)
- a dead-letter table, not a queue (confidence: 0.5)
gotchas:
- {AWKWARD}
anti_patterns:
patterns:
- idempotency keys on every
  delivery attempt
"""
JSON_FORM = {
    "id": "FEAT-009",
    "intent": "Webhook retries",
    "decisions": [
        {"text": "exponential backoff capped at 1 h (DEC-020)", "confidence": 0.9},
        {"text": "a dead-letter table, not a queue", "confidence": 0.5},
    ],
    "gotchas": [AWKWARD],
    "anti_patterns": [],
    "patterns": ["idempotency keys on every delivery attempt"],
}


def _add(tmp_path: Path, name: str, flag: str, text: str) -> tuple[int, str]:
    source = tmp_path / f"{name}.in"
    source.write_text(text, encoding="utf-8")
    memory = tmp_path / name / "permanent_memory.md"
    memory.parent.mkdir()
    args = [flag, str(source), "--file", str(memory), "--now", NOW.isoformat()]
    code = pm_add.main(args)
    return code, memory.read_text(encoding="utf-8") if memory.exists() else ""


def test_add_lines_writes_what_the_same_json_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = _add(tmp_path, "lines", "--lines", LINES)
    from_json = _add(tmp_path, "json", "--input", json.dumps(JSON_FORM))
    assert lines == from_json
    assert lines[0] == 0
    assert f"\n- [gotcha] {AWKWARD}\n" in lines[1]
    assert "\n- [decision] a dead-letter table, not a queue (confidence: 0.50)\n" in lines[1]


def test_add_lines_errors_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _add(tmp_path, "bad", "--lines", "id: A\n- stray\n") == (1, "")
    assert capsys.readouterr().err == (
        "--lines: line 2: '- item' outside a list; put 'name:' above it\n"
    )
    assert _add(tmp_path, "unknown", "--lines", "id: A\nintent: B\nnotes:\n- x\n") == (1, "")
    assert "unknown key 'notes'" in capsys.readouterr().err


def test_add_lines_keywords_either_way(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    head = "id: A\nintent: B\n"
    one_line = _add(tmp_path, "one", "--lines", head + "keywords: luxon, dates\n")
    as_list = _add(tmp_path, "list", "--lines", head + "keywords:\n- luxon\n- dates\n")
    assert one_line == as_list
    assert "\n**Keywords:** luxon, dates\n" in one_line[1]
    # A comma inside a list item is refused, naming the item.
    bad = _add(tmp_path, "bad", "--lines", head + "keywords:\n- luxon\n- dates, times\n")
    assert bad == (1, "")
    assert capsys.readouterr().err == (
        "keywords[1]: 'dates, times' holds a comma, which separates terms; give each "
        "term as its own item\n"
    )


def test_add_takes_one_input(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        pm_add.main(["--lines", "-", "--input", "-"])
    assert caught.value.code == 2
    assert "argument --input: not allowed with argument --lines" in capsys.readouterr().err
