"""check (pm_check) and what it finds (pm_findings), and the pre-commit hook that runs it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT
from project_memory_loader.core import pm_tokens
from project_memory_loader.core.pm_meta_lines import MAX_KEYWORD_CHARS, MAX_KEYWORDS
from project_memory_loader.core.pm_render import Budget
from project_memory_loader.reading import pm_findings
from project_memory_loader.writing.pm_epic_input import MAX_KEYWORDS_CHARS
from support import EST, TIMEOUT, Result, estimate, memory_file

CASES = Path(__file__).resolve().parent / "cases"
DEMO = ROOT / "examples" / "demo-project"


# check


def test_check_golden(loader: Any) -> None:
    case = CASES / "check-findings"
    path = case / "permanent_memory.md"
    result = loader(["check", str(path)])
    expected = (case / "check.txt").read_text().replace("PATH", str(path))
    assert result == Result(1, expected, "")


@pytest.mark.parametrize("name", ["v2-two-epics", "v1-then-v2"])
def test_check_accepts_the_producer_v2_form(loader: Any, name: str) -> None:
    # The v2 producer writes no Completed line, `**Trace summary:**` lines and a
    # `### Cross-cutting concerns` subsection: warnings that staleness cannot be judged, no error.
    case = CASES / name
    path = case / "permanent_memory.md"
    result = loader(["check", str(path)])
    expected = (case / "check.txt").read_text().replace("PATH", str(path))
    assert result == Result(0, expected, "")
    assert "error:" not in expected and "Trace summary" not in expected
    assert "Cross-cutting" not in expected and expected.count("no completion date") == 2


def test_check_accepts_keywords_lines_silently(loader: Any, tmp_path: Path) -> None:
    path = CASES / "keywords" / "permanent_memory.md"
    expected = (CASES / "keywords" / "check.txt").read_text().replace("PATH", str(path))
    assert loader(["check", str(path)]) == Result(0, expected, "")
    assert "0 errors, 0 warnings" in expected
    # A second one (a hand edit, or a line-based merge of two versions) is read past: a warning.
    twice = tmp_path / "permanent_memory.md"
    twice.write_text(
        "## Epic: A — a\n**Completed:** 2026-01-01\n**Keywords:** x, y\n"
        "### Gotchas\n- g\n**Keywords:** z\n"
    )
    assert loader(["check", str(twice)]) == Result(
        0,
        f"{twice}:6: warning: A: a second Keywords line (first at line 3): only the first is "
        "read; put the terms on one line\n"
        f"{twice}: 1 epic, 37 tokens (max 8000): 0 errors, 1 warning\n",
        "",
    )


def test_check_warns_of_a_keywords_line_over_what_add_writes(loader: Any, tmp_path: Path) -> None:
    # A merge of two branches' lines (pm_merge) can join terms past add's limits.
    head = "## Epic: A — a\n**Completed:** 2026-01-01\n"
    many = ", ".join(f"term{n}" for n in range(MAX_KEYWORDS + 5))
    long = ", ".join("x" * 50 + f"{n:02d}" for n in range(9))
    cases = {
        "many": (
            many,
            f"A: the Keywords line holds {MAX_KEYWORDS + 5} terms; at most {MAX_KEYWORDS}; recall "
            f"reads the first {MAX_KEYWORDS}; keep the words a request about this area would use",
        ),
        "long": (
            long,
            f"A: the Keywords line holds {len(long)} characters in all; at most "
            f"{MAX_KEYWORDS_CHARS}; keep the words a request about this area would use",
        ),
        "term": (
            "short, " + "y" * 70,
            f"A: a Keywords term of 70 characters; at most {MAX_KEYWORD_CHARS}, and recall reads "
            f"only its first {MAX_KEYWORD_CHARS}: shorten it",
        ),
    }
    for name, (terms, warning) in cases.items():
        path = tmp_path / f"{name}.md"
        path.write_text(f"{head}**Keywords:** {terms}\n### Gotchas\n- g\n")
        result = loader(["check", str(path)])
        assert (result.code, result.err) == (0, "")
        assert result.out.splitlines()[0] == f"{path}:3: warning: {warning}"
        assert result.out.endswith(": 0 errors, 1 warning\n")
    # At the limits: nothing to say.
    at = ", ".join([*(f"t{n}" for n in range(MAX_KEYWORDS - 1)), "z" * MAX_KEYWORD_CHARS])
    path = tmp_path / "at.md"
    path.write_text(f"{head}**Keywords:** {at}\n### Gotchas\n- g\n")
    assert loader(["check", str(path)]).out.endswith(": 0 errors, 0 warnings\n")


def test_check_a_clean_file(loader: Any) -> None:
    path = DEMO / ".claude" / "memory" / "permanent_memory.md"
    count, _engine, _source = pm_tokens.load_exact_counter()
    result = loader(["check", "--project-dir", str(DEMO)])
    assert result == Result(
        0,
        f"{path}: 6 epics, {count(path.read_text())} tokens (max 8000): 0 errors, 0 warnings\n",
        "",
    )


def test_check_what_add_writes_is_clean(loader: Any, tmp_path: Path) -> None:
    case = CASES / "add-epic"
    loader(["add", "--project-dir", str(tmp_path), "--input", str(case / "input.json"), *EST])
    result = loader(["check", "--project-dir", str(tmp_path)])
    assert result.code == 0 and "0 errors, 0 warnings" in result.out


def test_check_over_the_ceiling_and_several_files(loader: Any, tmp_path: Path) -> None:
    seed = CASES / "seed-example" / "permanent_memory.md"
    missing = tmp_path / "missing.md"
    tokens = estimate(seed.read_text())
    result = loader(["check", str(seed), str(missing), "--max-tokens", "100", *EST])
    assert result == Result(
        1,
        f"{seed}:1: error: {tokens} tokens, over the 100-token ceiling: the loader will not "
        "summarise this file; move old epics out with permanent_memory.py archive\n"
        f"{seed}: 2 epics, {tokens} estimated tokens (max 100): 1 error, 0 warnings\n",
        f"permanent memory file not found: {missing}\n",
    )


def test_check_stdin_and_encodings(loader: Any, tmp_path: Path) -> None:
    result = loader(
        ["check", "--file", "-", *EST], b"## Epic: A-1 \xe9\n**Completed:** 2026-01-01\n"
    )
    assert result.code == 1
    assert (
        result.out.splitlines()[0]
        == "-:1: error: not UTF-8 at byte offset 13 (line 1); the loader shows \ufffd for it"
    )
    utf16 = CASES / "utf16-bom" / "permanent_memory.md"
    result = loader(["check", str(utf16), *EST])
    assert result.code == 0
    assert result.out.splitlines()[0] == (
        f"{utf16}:1: warning: UTF-16 text: the loader reads it, add and archive need UTF-8"
    )


def test_check_an_empty_file_and_no_file(loader: Any, tmp_path: Path) -> None:
    empty = tmp_path / "permanent_memory.md"
    empty.write_text("# Nothing yet\n")
    assert loader(["check", str(empty), *EST]) == Result(
        0,
        f"{empty}:1: warning: no '## Epic:' section; the loader shows nothing\n"
        f"{empty}: 0 epics, 4 estimated tokens (max 8000): 0 errors, 1 warning\n",
        "",
    )
    assert loader(["check", "--project-dir", str(tmp_path)]) == Result(
        0, f"no permanent memory file at {memory_file(tmp_path)}\n", ""
    )


def test_check_json(loader: Any) -> None:
    path = CASES / "check-findings" / "permanent_memory.md"
    result = loader(["check", str(path), "--format", "json", *EST])
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
    report = pm_findings.check_text(text, estimate, estimate, Budget())
    assert report.findings == []
    assert report.epics == [pm_findings.EpicSize("F-1", 1, estimate(text.rstrip() + "\n"))]


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


def test_a_heading_missing_its_space_is_named_not_blamed_on_a_merge(
    loader: Any, tmp_path: Path
) -> None:
    # It used to say two versions of FEAT-1 were interleaved by a line-based merge.
    path = tmp_path / "permanent_memory.md"
    path.write_text(
        "## Epic: FEAT-1 \u2014 one\n**Completed:** 2026-01-01\n### Gotchas discovered\n- a\n\n"
        "##Epic: FEAT-2 \u2014 two\n### Gotchas discovered\n- b\n\n"
        "```\n# Epic: in a fence is left alone\n```\n"
    )
    result = loader(["check", str(path), *EST])
    assert result.code == 1
    assert result.out.splitlines()[:-1] == [
        f"{path}:6: error: '##Epic: FEAT-2 \u2014 two' is not an epic heading (the space after "
        "## is missing); write '## Epic: FEAT-2 \u2014 two'"
    ]
    first = tmp_path / "first.md"
    first.write_text("# Epic: X-1 \u2014 one\n### Gotchas discovered\n- a\n")
    result = loader(["check", str(first), *EST])
    assert result.out.splitlines()[1:-1] == [
        f"{first}:1: error: '# Epic: X-1 \u2014 one' is not an epic heading (an epic heading is "
        "## (two #), a space, then Epic:); write '## Epic: X-1 \u2014 one'"
    ]


def test_a_byte_that_is_not_utf8_is_given_by_offset_and_line(loader: Any) -> None:
    data = b"## Epic: A-1 \xe2\x80\x94 a\n**Completed:** 2026-01-01\n- caf\xe9\n"
    result = loader(["check", "--file", "-", *EST], data)
    assert result.out.splitlines()[0] == (
        "-:3: error: not UTF-8 at byte offset 50 (line 3); the loader shows \ufffd for it"
    )
