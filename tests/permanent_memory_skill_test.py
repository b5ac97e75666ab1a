"""SKILL.md and its references (format.md, writing.md) are checked against the code they
describe: their numbers, and every command they show is run."""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import LOADER_DIR
from project_memory_loader.core import pm_limits, pm_parse, pm_render, pm_tokens
from project_memory_loader.core.pm_render import Budget
from project_memory_loader.writing import pm_archive_plan, pm_epic_input
from support import (
    ALLOWED_KEYS,
    LOADER,
    blocks,
    clean_env,
    front_matter,
    memory_file,
    run,
    run_command,
)

SKILL = LOADER_DIR.parent
SKILL_MD = (SKILL / "SKILL.md").read_text(encoding="utf-8")
FORMAT_MD = (SKILL / "references" / "format.md").read_text(encoding="utf-8")
BUDGET_MD = (SKILL / "references" / "budget.md").read_text(encoding="utf-8")
WRITING_MD = SKILL / "references" / "writing.md"
CASES = Path(__file__).resolve().parent / "cases"


def test_front_matter() -> None:
    meta = front_matter(SKILL_MD)
    assert isinstance(meta, dict)
    assert set(meta) <= ALLOWED_KEYS
    assert meta["name"] == SKILL.name == "permanent-memory-loader"
    description = meta["description"]
    assert isinstance(description, str) and 100 < len(description) <= 1024
    assert description.startswith("Prints a compact, token-budgeted summary")  # third person
    assert "Use when" in description
    assert meta["license"] == "MIT"
    compatibility = meta["compatibility"]
    assert isinstance(compatibility, str) and len(compatibility) <= 500
    assert "3.9" in compatibility and "tiktoken" in compatibility
    assert meta["user-invocable"] is False
    assert meta["allowed-tools"] == (
        'Bash(python3 "${CLAUDE_SKILL_DIR}/scripts/permanent_memory.py" *) '
        "Read(/${CLAUDE_SKILL_DIR}/**)"
    )
    assert meta["metadata"] == {"version": "0.1.0"}
    for invented in ("autoInvoke", "effort", "version"):
        assert invented not in meta


def test_every_command_in_skill_md_runs(tmp_path: Path) -> None:
    commands = blocks(SKILL_MD, "bash")
    assert len(commands) == 6
    assert all(
        c.startswith('python3 "${CLAUDE_SKILL_DIR}/scripts/permanent_memory.py" ') for c in commands
    )
    project = tmp_path / "project"
    (project / ".claude" / "memory").mkdir(parents=True)
    shutil.copy(CASES / "seed-example" / "permanent_memory.md", project / ".claude" / "memory")
    env = clean_env(
        CLAUDE_SKILL_DIR=str(SKILL),
        CLAUDE_PROJECT_DIR=str(project),
        CLAUDE_PLUGIN_DATA=str(tmp_path / "data"),
    )
    results = [run_command(["bash", "-c", c], env=env, cwd=project, timeout=120) for c in commands]
    assert [r.code for r in results] == [0, 0, 0, 0, 0, 0], [r.err for r in results]
    search, load, explain, inspect, doctor, add = results
    assert search.out == (
        "[permanent-memory | trust:file]\n"
        'No entries match "date library timezone" (4 entries searched, 0 archive files '
        "included).\n"
    )
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    assert add.out.startswith(f"added FEAT-012 to {memory} (")
    assert add.err == ""
    written = memory.read_text(encoding="utf-8")
    gotcha = '- [gotcha] Excel reads a leading "=" as a formula: prefix such cells with \''
    assert f"\n{gotcha}\n" in written
    assert "\n- [decision] one export per customer at a time (confidence: 0.60)\n" in written
    assert load.err == "" and load.out.startswith("[permanent-memory | trust:file]\n")
    data = json.loads(explain.out)
    assert data["block"] == load.out
    assert explain.err.splitlines()[3] == "level  tokens  leaves out"
    assert "epic" in inspect.out and "FEAT-008" in inspect.out
    assert doctor.out.splitlines()[0].startswith("ok    python")


def test_the_example_block_is_a_golden_case() -> None:
    # Not the seed's example: its words ("token storage") trip the skill scanner's secret check.
    [shown] = blocks(SKILL_MD, "text")
    assert shown == (CASES / "skill-example" / "expected.txt").read_text()


def test_skill_md_stays_under_codex_s_output_window() -> None:
    # Codex shows the model at most about 10,000 bytes of one command's output, the middle cut
    # out, and a model there reads SKILL.md with a shell command: over that, it loses the
    # middle. Reference material goes to references/ instead.
    assert len((SKILL / "SKILL.md").read_bytes()) < 9000


def test_budget_and_levels_match_the_code() -> None:
    # The budget's tables live in references/budget.md; SKILL.md states the two limits.
    budget = pm_render.Budget()
    assert "[references/budget.md](references/budget.md)" in SKILL_MD
    assert f"Target {budget.target} `cl100k_base` tokens, hard cap {budget.hard_cap};" in SKILL_MD
    row = (
        f"| the whole block | target {budget.target}, hard cap {budget.hard_cap} (never exceeded) |"
    )
    assert row in BUDGET_MD
    assert f"| {budget.epic_line_tokens} tokens (intent cut first" in BUDGET_MD
    assert "| 12 |" not in BUDGET_MD  # no per-Epic-line target: nothing implements one
    assert "| 12 |" not in SKILL_MD
    assert f"{pm_render.MAX_LINE_CHARS} characters (cut with `…`)" in BUDGET_MD
    assert f"over {pm_render.SKIP_TOKENS} tokens" in BUDGET_MD
    assert f"`--target N` (at least {pm_limits.MIN_TOKEN_TARGET})" in BUDGET_MD
    assert f"`--hard-cap N` (at least {pm_limits.MIN_HARD_CAP})" in BUDGET_MD
    for level in ("L1", "L2", "L3", "IDs"):
        assert f"| {level} |" in BUDGET_MD
    totals = (3, 4, 9)
    for removed in ((1, 0, 0), (3, 0, 0), (3, 2, 0), (3, 4, 0), (3, 4, 5), totals):
        assert f"`{pm_render.trim_note(removed, totals)}`" in FORMAT_MD
    assert f"`{pm_render.trim_note((0, 4, 0), (0, 4, 9))}`" in FORMAT_MD
    for label in pm_parse.LABELS:
        assert f"`{label}`" in SKILL_MD
    assert "`(>90d may be outdated) `" in SKILL_MD
    assert "`(>90d may be outdated) `" in BUDGET_MD


def test_format_examples_render_as_shown() -> None:
    sources = blocks(FORMAT_MD, "markdown")
    outputs = blocks(FORMAT_MD, "text")
    assert len(sources) == len(outputs) == 2
    count, _engine, _source = pm_tokens.load_exact_counter()
    now = datetime(2026, 6, 1, tzinfo=timezone.utc)
    for source, shown in zip(sources, outputs):
        block = pm_render.render_block(
            pm_parse.parse_permanent(source), pm_render.Budget(), count, now
        )
        assert block.text == shown


def test_format_reference_matches_the_code() -> None:
    for heading, label in (
        ("Architectural decisions", "decisions"),
        ("Gotchas discovered", "gotchas"),
        ("Anti-patterns to avoid", "anti-patterns"),
        ("Patterns that worked", "patterns"),
        ("Conflicts encountered", "conflicts"),
    ):
        assert f"| {heading} | `{label}` |" in FORMAT_MD
        assert pm_parse.subsection_label(heading) == label
    assert f"over {pm_render.SKIP_TOKENS * pm_tokens.MAX_TOKEN_BYTES + 3:,} bytes" in FORMAT_MD
    assert f"{pm_tokens.MAX_TOKEN_BYTES} bytes" in FORMAT_MD
    assert "becomes 80 bytes" in FORMAT_MD and pm_tokens.ESTIMATE_BYTES_PER_TOKEN == 4


def _in_skill_dir(command: str) -> str:
    """writing.md names the skill folder SKILL_DIR (Claude Code does not substitute variables
    in references/); put the real folder in, as the model does from the base directory line."""
    assert "${" not in command
    return command.replace('python3 "SKILL_DIR/', f'python3 "{SKILL}/')


@pytest.mark.parametrize("form", ["<<'EPIC'", "<<'EOF'"], ids=["lines", "json"])
def test_writing_md_example_records_an_epic_in_one_call(tmp_path: Path, form: str) -> None:
    markdown = WRITING_MD.read_text(encoding="utf-8")
    [heredoc] = [b for b in blocks(markdown, "bash") if form in b and "--append" not in b]
    env = clean_env()
    env.update(CLAUDE_PROJECT_DIR=str(tmp_path))
    added = run_command(["bash", "-c", _in_skill_dir(heredoc)], env=env)
    assert added.code == 0, added.err
    assert added.err == ""
    path = memory_file(tmp_path)
    written = path.read_text()
    count, _engine, _source = pm_tokens.load_exact_counter()
    assert added.out == f"added FEAT-007 to {path} ({count(written)} tokens)\n"
    [shown] = re.findall(r"```markdown\n(.*?)```", markdown, flags=re.DOTALL)
    completed = re.search(r" completed=(\S+) -->", written)
    assert completed is not None
    assert written == shown.replace("2026-05-15T14:00:00Z", completed.group(1))
    [block] = [b for b in blocks(markdown, "text") if b.startswith("[permanent-memory")]
    loaded = run(LOADER, ["load", "--project-dir", str(tmp_path)], env=env)
    assert (loaded.code, loaded.out) == (0, block), loaded.err


def test_writing_md_append_example_prints_what_it_shows(tmp_path: Path) -> None:
    markdown = WRITING_MD.read_text(encoding="utf-8")
    [heredoc] = [b for b in blocks(markdown, "bash") if " add --append " in b]
    [shown] = [b for b in blocks(markdown, "text") if b.startswith("appended ")]
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    shutil.copy(CASES / "add-append" / "permanent_memory.md", path)
    env = clean_env()
    env.update(CLAUDE_PROJECT_DIR=str(tmp_path))
    appended = run_command(["bash", "-c", _in_skill_dir(heredoc)], env=env)
    assert appended.code == 0 and appended.err == "", appended.err
    tokens = re.search(r" \((\d+) tokens\)\n", appended.out)
    assert tokens is not None, appended.out
    assert appended.out == shown.replace("PROJECT", str(tmp_path)).replace(
        "(N tokens)", f"({tokens.group(1)} tokens)"
    )


def test_writing_md_commands_run(tmp_path: Path) -> None:
    markdown = WRITING_MD.read_text(encoding="utf-8")
    assert "CLAUDE_SKILL_DIR" not in markdown  # not substituted here: it would run /scripts/...
    commands = [b.strip() for b in blocks(markdown, "bash") if "<<'" not in b]
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
        result = run_command(["bash", "-c", _in_skill_dir(line)], env=env)
        assert result.code == 0, (line, result.err)
    assert "max 8000" in result.out


def test_writing_md_states_the_code_s_numbers() -> None:
    markdown = " ".join(WRITING_MD.read_text(encoding="utf-8").split())
    assert f"At most {pm_epic_input.MAX_EPIC_TOKENS} tokens per epic" in markdown
    assert f"under {pm_epic_input.TENTATIVE_BELOW} confidence" in markdown
    assert f"at most {pm_epic_input.MAX_ID_CHARS} characters" in markdown
    assert f"`{pm_archive_plan.ARCHIVE_DIR}/YYYY-MM-DD.md`" in markdown
    assert f"; {Budget().epic_line_tokens} tokens per Epic line)" in markdown
    for field, heading in pm_epic_input.HEADINGS.items():
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
