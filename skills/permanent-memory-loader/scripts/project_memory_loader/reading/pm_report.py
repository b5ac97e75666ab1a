# What `load --format json`, `load --explain` and `inspect` show about a summary: tokens per
# level, what each level leaves out, the chosen level and why, and each epic's figures. Pure.
from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, NamedTuple

from ..core import pm_names
from ..core.pm_load import Summary
from ..core.pm_parse import LABELS, Epic, age_days, is_stale
from ..core.pm_render import (
    LEVEL_DROPS,
    LEVELS,
    NO_STATES,
    SHOWN_ID_CHARS,
    SKIP_TOKENS,
    States,
    cut_line,
    epic_line,
    ids_text,
    level_texts,
    safe_text,
    sub_lines,
)
from ..evidence import pm_evidence

Counter = Callable[[str], int]


class ReportInputs(NamedTuple):
    path: str  # the file read ("-" for stdin)
    tokenizer: str  # "cl100k_base" or "estimate"
    tokenizer_detail: str  # engine and source, or why the estimate is used
    now: datetime


def level_tokens(summary: Summary, count: Counter) -> dict[str, int]:
    """Tokens of every level's block (counted here even where the choice did not need it)."""
    if summary.skipped or not summary.epics:
        return {}
    now = summary.now or datetime.now(timezone.utc)
    texts = level_texts(summary.epics, now, summary.budget, count, summary.evidence.states)
    texts.update(summary.block.levels)
    if "IDS" not in texts:
        texts["IDS"] = ids_text(summary.epics, summary.budget, count)
    return {level: summary.block.tokens.get(level) or count(texts[level]) for level in LEVELS}


def epic_rows(summary: Summary, inputs: ReportInputs, count: Counter) -> list[dict[str, Any]]:
    rows = []
    budget = summary.budget
    for epic in summary.epics:
        states = summary.evidence.states
        lines = [epic_line(epic, inputs.now, budget, count, states)]
        lines += sub_lines(epic, LABELS, states)
        age = age_days(epic, inputs.now)
        rows.append(
            {
                "id": safe_text(epic.epic_id),
                "intent": safe_text(epic.intent),
                "completed": safe_text(epic.completed) if epic.completed else None,
                "age_days": None if age is None else int(age // 1),
                "stale": is_stale(epic, inputs.now, budget.stale_days),
                "schema": epic.schema,
                "summary": safe_text(epic.summary) if epic.summary else None,
                "tokens": count("\n".join(lines) + "\n"),
                "lines": {
                    label: _first(epic, label, states) for label in LABELS if _first(epic, label)
                },
            }
        )
    return rows


def _first(epic: Epic, label: str, states: States = NO_STATES) -> str:
    lines = sub_lines(epic, (label,), states)
    return lines[0].split(": ", 1)[1] if lines else ""


def path_rows(summary: Summary) -> list[dict[str, str]]:
    """Each checked path and its state: exists, gone, or moved (and where to)."""
    rows = []
    for path in summary.evidence.paths:
        state = summary.evidence.states.get(path, pm_evidence.EXISTS)
        if state.startswith(pm_evidence.MOVED):
            moved = safe_text(state[len(pm_evidence.MOVED) :])
            rows.append({"path": path, "state": "moved", "moved_to": moved})
        else:
            rows.append({"path": path, "state": state})
    return rows


def evidence_json(summary: Summary) -> dict[str, Any] | None:
    evidence = summary.evidence
    if evidence.root is None:
        return None
    return {"project": evidence.root, "git": evidence.git, "paths": path_rows(summary)}


def evidence_lines(summary: Summary) -> list[str]:
    """The paths entries name and the state of each, for `inspect`."""
    evidence = summary.evidence
    rows = path_rows(summary)
    if evidence.root is None or not rows:
        return []  # not checked (no project: stdin, a file elsewhere), or none named
    head = f"paths: {len(rows)} named, checked against {evidence.root}; git: {evidence.git}"
    table = [["path", "state"]]
    for row in rows:
        state = row["state"]
        table.append([row["path"], f"moved to {row['moved_to']}" if state == "moved" else state])
    return [head, *_table(table)]


def summary_json(summary: Summary, inputs: ReportInputs, count: Counter) -> dict[str, Any]:
    budget = summary.budget
    tokens = level_tokens(summary, count)
    return {
        "file": inputs.path,
        "size_bytes": summary.size,
        "tokenizer": inputs.tokenizer,
        "tokenizer_detail": inputs.tokenizer_detail,
        "budget": {
            "target": budget.target,
            "hard_cap": budget.hard_cap,
            "stale_days": budget.stale_days,
            "epic_line_tokens": budget.epic_line_tokens,
        },
        "skipped": summary.skipped,
        "file_tokens": summary.file_tokens,
        "level": summary.block.level,
        "reason": summary.block.reason,
        "levels": {
            level: {"tokens": tokens[level], "drops": LEVEL_DROPS[level]} for level in tokens
        },
        "block_tokens": count(summary.block.text) if summary.block.text else 0,
        "epics": epic_rows(summary, inputs, count),
        "evidence": evidence_json(summary),
        "block": summary.block.text,
    }


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(cells).rstrip())
    return lines


def header_lines(summary: Summary, inputs: ReportInputs) -> list[str]:
    budget = summary.budget
    epics = f"{len(summary.epics)} epic" + ("" if len(summary.epics) == 1 else "s")
    what = "skipped" if summary.skipped else epics
    return [
        f"file: {inputs.path} ({summary.size:,} bytes, {what})",
        f"tokenizer: {inputs.tokenizer} ({inputs.tokenizer_detail})",
        f"budget: target {budget.target}, hard cap {budget.hard_cap} tokens; "
        f"Epic lines within {budget.epic_line_tokens}; stale after {budget.stale_days} days",
    ]


def level_lines(summary: Summary, count: Counter, mark: Callable[[str], str] = str) -> list[str]:
    """The levels table, the chosen row marked, then the reason."""
    if summary.skipped:
        counted = "" if summary.file_tokens is None else f" ({summary.file_tokens:,} counted)"
        return [
            f"chosen: skipped, file over {SKIP_TOKENS} tokens{counted}; "
            f"archive old epics: {pm_names.prog()} archive"
        ]
    if not summary.epics:
        return ["chosen: nothing to show (no `## Epic:` sections)"]
    tokens = level_tokens(summary, count)
    rows = [["level", "tokens", "leaves out", ""]]
    for level in LEVELS:
        chosen = "<- chosen" if level == summary.block.level else ""
        rows.append([level, str(tokens[level]), LEVEL_DROPS[level], chosen])
    lines = _table(rows, right=(1,))
    out = [lines[0]]
    for level, line in zip(LEVELS, lines[1:]):
        out.append(mark(line) if level == summary.block.level else line)
    out.append(f"chosen: {summary.block.level}, {summary.block.reason}")
    if summary.block.level != "L0":
        need, cap = tokens["L0"], summary.budget.hard_cap
        characters, limit = len(summary.block.levels["L0"]), summary.budget.max_chars
        fix = f"archive old epics ({pm_names.prog()} archive) or shorten their first lines"
        if need > cap:
            out.append(f"everything needs {need} tokens, over the hard cap ({cap}): {fix}")
        elif characters > limit:
            out.append(
                f"everything is {characters:,} characters, over the {limit:,} a hook may print: "
                f"{fix}"
            )
        else:
            out.append(
                f"to show everything: a target of at least {need} (--target, or the plugin "
                "option token_target)"
            )
    return out


def explain_text(summary: Summary, inputs: ReportInputs, count: Counter) -> str:
    return "\n".join([*header_lines(summary, inputs), *level_lines(summary, count)]) + "\n"


def inspect_text(
    summary: Summary, inputs: ReportInputs, count: Counter, mark: Callable[[str], str] = str
) -> str:
    lines = header_lines(summary, inputs)
    if summary.epics:
        rows = [["epic", "intent", "completed", "age (days)", "stale", "tokens"]]
        for row in epic_rows(summary, inputs, count):
            completed = cut_line(row["completed"] or "-", 20)
            intent = cut_line(row["intent"], 40)
            rows.append(
                [
                    cut_line(row["id"] or "?", SHOWN_ID_CHARS),
                    intent,
                    completed,
                    "-" if row["age_days"] is None else str(row["age_days"]),
                    "yes" if row["stale"] else "no",
                    str(row["tokens"]),
                ]
            )
        lines += ["", *_table(rows, right=(3, 5))]
    paths = evidence_lines(summary)
    lines += ["", *paths] if paths else []
    lines += ["", *level_lines(summary, count, mark)]
    return "\n".join(lines) + "\n"
