#!/usr/bin/env python3
"""Recall at the file, evaluated on real changes of public projects (tests/projects/).

Each labelled change is played as one session: the session-start block (its lines received),
the change's request as the prompt through prompt-time recall (recall_eval's recall_outcome and
the hook's pm_recall.recall), then the files the change touched, in git's order, each read, and
then each edited, through recall at the file (pm_path_index.governing,
pm_file_hook.file_blocks), with the session's one record of what it received and one budget.
Three channels: the prompt alone, the file alone (the prompt still supports the file's epics;
only its own blocks count) and both.

- recall: a change bound by a decision gets an entry of that epic before its first edit (from
  the prompt or the reads); also reported for a session that edits each file right after
  reading it (only the first file's read comes before the first edit);
- false injections: a change bound by nothing gets any entry, over the whole session;
- tokens: what recall adds to one session on average (stamps and headers included).

The file channel's one tuned number, pm_path_index.FILE_THRESHOLD, is chosen on the `tune`
changes only (the highest recall of both channels with false injections and tokens within the
targets); leave-one-project-out chooses it on the other projects' tune changes and scores the
project left out (all of its changes).

    python3 scripts/file_eval.py              # the tune changes, per project and pooled
    python3 scripts/file_eval.py --heldout    # the held-out changes (scored once, frozen)
    python3 scripts/file_eval.py --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import loader_path  # noqa: F401
from project_memory_loader.recall import (
    pm_file_hook,
    pm_path_index,
    pm_recall,
)
from recall_eval import (
    PROJECTS_DATA,
    UNSEEN_DATA,
    exact_counter,
    folder_projects,
    memory_sources,
    recall_index,
    recall_outcome,
)

CHANNELS = ("prompt", "file", "both")
# Held out and leave-one-project-out, both channels together.
TARGETS = {"recall": 0.85, "false_injection": 0.25, "tokens": 250.0}
THRESHOLDS = tuple(float(n) for n in range(0, 11))  # 0 .. 10


class Change(NamedTuple):
    id: str
    request: str
    files: tuple[str, ...]
    relevant: frozenset[str]
    split: str


class Material(NamedTuple):
    name: str
    index: Any
    table: Any
    changes: tuple[Change, ...]


def materials(
    counter: Callable[[str], int], only: Sequence[str] | None = None, root: Path = PROJECTS_DATA
) -> tuple[list[Material], list[str]]:
    """Each complete folder of tests/projects (recall_eval's rule; with `only`, those named),
    with its index and path table as the hook builds them; and why each other folder is left
    out."""
    projects, skipped = folder_projects(root)
    found = []
    for project in projects:
        if only is not None and project.name not in only:
            continue
        rows = json.loads((project.memory.parent / "changes.json").read_text(encoding="utf-8"))
        changes = tuple(
            Change(r["id"], r["request"], tuple(r["files"]), frozenset(r["relevant"]), r["split"])
            for r in rows
        )
        index = recall_index(project.memory, counter)
        table = pm_path_index.build_table(memory_sources(project.memory), index, counter)
        found.append(Material(project.name, index, table, changes))
    return found, [f"{s.name}: {s.why}" for s in skipped]


class Outcome(NamedTuple):
    relevant: frozenset[str]
    first_edit: dict[str, frozenset[str]]  # channel: the epics received before the first edit
    anything: dict[str, bool]  # channel: whether it sent anything in the session
    tokens: dict[str, int]  # channel: the tokens it added
    # channel: the epics received before the first edit when each file is edited right after
    # it is read (read, edit, read, edit): the first file's read only
    interleaved: dict[str, frozenset[str]]


def calls(files: Sequence[str]) -> list[tuple[str, str]]:
    """The file tool calls of a change: each file read, in git's order, then each edited."""
    return [(path, "read") for path in files] + [(path, "edit") for path in files]


_PROMPTS: dict[tuple[int, str], tuple[list[str], int, list[str]]] = {}
_SCORES: dict[tuple[int, str], Any] = {}


def prompt_channel(index: Any, request: str) -> tuple[list[str], int, list[str]]:
    """The prompt channel's epics, tokens and keys for a session's first prompt (the same at
    every level of the file's threshold: worked out once per change)."""
    key = (id(index), request)
    if key not in _PROMPTS:
        shown = {entry[0] for entry in index["entries"] if entry[5]}
        budgets = pm_recall.PROMPT_BUDGET, pm_recall.SESSION_BUDGET
        epics, tokens = recall_outcome(index, request)
        _text, keys, _used = pm_recall.recall(index, request, shown, *budgets)
        _PROMPTS[key] = (epics, tokens, keys)
    return _PROMPTS[key]


def scored(index: Any, text: str, explain: bool = True) -> Any:
    """pm_recall.score, remembered for the run: the same file and request are scored again at
    each level of the threshold (pure: the same index and text give the same scores)."""
    key = (id(index), text)
    if key not in _SCORES:
        _SCORES[key] = SCORE(index, text, explain=False)
    return _SCORES[key]


SCORE = pm_recall.score


def session(material: Material, change: Change, threshold: float) -> Outcome:
    """One change played as a session, for each channel."""
    index, table = material.index, material.table
    entries = index["entries"]
    shown = {entry[0] for entry in entries if entry[5]}
    prompt_epics, prompt_tokens, prompt_keys = prompt_channel(index, change.request)
    epic_of = {entry[0]: entry[1] for entry in entries}
    first: dict[str, frozenset[str]] = {"prompt": frozenset(prompt_epics)}
    interleaved: dict[str, frozenset[str]] = {"prompt": frozenset(prompt_epics)}
    anything = {"prompt": bool(prompt_epics)}
    tokens = {"prompt": prompt_tokens}
    for channel, keys, spent in (("file", [], 0), ("both", prompt_keys, prompt_tokens)):
        received = shown | set(keys)
        before = set(received)
        sent = spent
        after_first: set[str] = set()
        for step, (path, _call) in enumerate(calls(change.files)):
            named, epics = pm_path_index.governing(table, path)
            if named or epics:
                _text, used = pm_file_hook.file_blocks(
                    table, index, [(path, named, epics)], [change.request], received,
                    pm_path_index.FILE_BUDGET, pm_recall.SESSION_BUDGET - sent, threshold,
                )  # fmt: skip
                sent += used
            if step == 0:
                after_first = set(received)
            if step == len(change.files) - 1:  # every file read: the first edit is next
                first[channel] = frozenset(
                    {epic_of[k] for k in received - before if k in epic_of}
                    | (set(prompt_epics) if channel == "both" else set())
                )
        first.setdefault(channel, frozenset(prompt_epics if channel == "both" else ()))
        interleaved[channel] = frozenset(
            {epic_of[k] for k in after_first - before if k in epic_of}
            | (set(prompt_epics) if channel == "both" else set())
        )
        new = {epic_of[k] for k in received - before if k in epic_of}
        anything[channel] = bool(new) or (channel == "both" and bool(prompt_epics))
        tokens[channel] = sent
    return Outcome(change.relevant, first, anything, tokens, interleaved)


def figures(outcomes: Sequence[Outcome], channel: str) -> dict[str, Any]:
    bound = [o for o in outcomes if o.relevant]
    unbound = [o for o in outcomes if not o.relevant]
    hits = sum(bool(o.first_edit[channel] & o.relevant) for o in bound)
    early = sum(bool(o.interleaved[channel] & o.relevant) for o in bound)
    injected = sum(o.anything[channel] for o in unbound)
    spent = [o.tokens[channel] for o in outcomes]
    return {
        "changes": len(outcomes),
        "bound": len(bound),
        "hits": hits,
        "recall": hits / len(bound) if bound else None,
        "recall_interleaved": early / len(bound) if bound else None,
        "unbound": len(unbound),
        "injected": injected,
        "false_injection": injected / len(unbound) if unbound else None,
        "tokens_mean": statistics.mean(spent) if spent else 0.0,
        "tokens_max": max(spent, default=0),
    }


def meets(f: dict[str, Any]) -> bool:
    return bool(
        (f["recall"] is None or f["recall"] >= TARGETS["recall"])
        and (f["false_injection"] is None or f["false_injection"] <= TARGETS["false_injection"])
        and f["tokens_mean"] <= TARGETS["tokens"]
    )


def played(
    found: Sequence[Material], split: str | None, threshold: float
) -> dict[str, list[Outcome]]:
    """Each project's changes of `split` (None: all of them) played at `threshold`."""
    return {
        m.name: [session(m, c, threshold) for c in m.changes if split in (None, c.split)]
        for m in found
    }


def choose_threshold(by_level: dict[float, list[Outcome]]) -> float:
    """The level whose outcomes (both channels) have the highest recall with false injections
    and tokens within the targets, the highest such level among equals (the fewest tokens);
    with none within them, the level with the largest recall minus false injections (the
    highest among equals)."""
    scored = {level: figures(outcomes, "both") for level, outcomes in by_level.items()}
    within = [
        ((f["recall"] or 0.0), level) for level, f in scored.items() if meets({**f, "recall": None})
    ]
    if within:
        return max(within)[1]
    return max(
        ((f["recall"] or 0.0) - (f["false_injection"] or 0.0), level) for level, f in scored.items()
    )[1]


def evaluation(
    counter: Callable[[str], int],
    heldout: bool = False,
    only: Sequence[str] | None = None,
    lopo: bool = True,
    root: Path = PROJECTS_DATA,
) -> dict[str, Any]:
    """Per project and pooled, per channel: the tune changes at the frozen threshold (or the
    held-out ones), and (with `lopo`) leave-one-project-out with the threshold chosen on the
    other projects' tune changes, and the threshold the pooled tune changes choose."""
    # The levels score the same texts: once each (restored below).
    pm_recall.score = scored  # type: ignore[assignment]
    try:
        return run_evaluation(counter, heldout, only, lopo, root)
    finally:
        pm_recall.score = SCORE
        _SCORES.clear()
        _PROMPTS.clear()


def run_evaluation(
    counter: Callable[[str], int],
    heldout: bool,
    only: Sequence[str] | None,
    lopo: bool,
    root: Path = PROJECTS_DATA,
) -> dict[str, Any]:
    found, skipped = materials(counter, only, root)
    frozen = pm_path_index.FILE_THRESHOLD
    split = "heldout" if heldout else "tune"
    at_frozen = played(found, split, frozen)
    report: dict[str, Any] = {"threshold": frozen, "split": split, "skipped": skipped,
                              "projects": {}, "lopo": {}}  # fmt: skip
    for name, outcomes in at_frozen.items():
        report["projects"][name] = {c: figures(outcomes, c) for c in CHANNELS}
    pooled = [o for outcomes in at_frozen.values() for o in outcomes]
    report["pooled"] = {c: figures(pooled, c) for c in CHANNELS}
    report["chosen_on_tune"], report["lopo_pooled"] = None, {}
    if not lopo:
        return report
    tune = {level: played(found, "tune", level) for level in THRESHOLDS}
    report["chosen_on_tune"] = choose_threshold(
        {level: [o for os in by.values() for o in os] for level, by in tune.items()}
    )
    lopo_pooled = []
    for material in found:
        others = {
            level: [o for name, os in by.items() if name != material.name for o in os]
            for level, by in tune.items()
        }
        level = choose_threshold(others)
        outcomes = played([material], split, level)[material.name]
        lopo_pooled.extend(outcomes)
        report["lopo"][material.name] = {"threshold": level, **figures(outcomes, "both")}
    report["lopo_pooled"] = {c: figures(lopo_pooled, c) for c in CHANNELS} if found else {}
    return report


def unseen_check(counter: Callable[[str], int], root: Path = UNSEEN_DATA) -> dict[str, Any]:
    """The projects of tests/unseen, every change, played once at the frozen threshold."""
    pm_recall.score = scored  # type: ignore[assignment]
    try:
        found, skipped = materials(counter, root=root)
        at_frozen = played(found, None, pm_path_index.FILE_THRESHOLD)
    finally:
        pm_recall.score = SCORE
        _SCORES.clear()
        _PROMPTS.clear()
    report: dict[str, Any] = {"threshold": pm_path_index.FILE_THRESHOLD, "split": "unseen",
                              "skipped": skipped, "projects": {}, "lopo": {}, "lopo_pooled": {},
                              "chosen_on_tune": None}  # fmt: skip
    for name, outcomes in at_frozen.items():
        report["projects"][name] = {c: figures(outcomes, c) for c in CHANNELS}
    pooled = [o for outcomes in at_frozen.values() for o in outcomes]
    report["pooled"] = {c: figures(pooled, c) for c in CHANNELS}
    return report


def rate(value: float | None) -> str:
    return "   -" if value is None else f"{value:.3f}"


def table(report: dict[str, Any]) -> list[str]:
    lines = [f"recall at the file, {report['split']} changes, threshold {report['threshold']:g}"
             f" (the tune changes choose {report['chosen_on_tune']})",
             f"{'project':<22}{'channel':<8}{'recall':>16}{'false inj.':>16}{'tokens':>8}"
             f"{'max':>5}"]  # fmt: skip
    rows = [*report["projects"].items(), ("pooled", report["pooled"])]
    for name, by_channel in rows:
        for channel in CHANNELS:
            f = by_channel[channel]
            lines.append(
                f"{name:<22}{channel:<8}{rate(f['recall']):>8} {f['hits']:>3}/{f['bound']:<3}"
                f"{rate(f['false_injection']):>8} {f['injected']:>3}/{f['unbound']:<3}"
                f"{f['tokens_mean']:>8.1f}{f['tokens_max']:>5}"
            )
    lines.append("leave-one-project-out (both channels; threshold chosen on the others' tune):")
    for name, f in [*report["lopo"].items()]:
        lines.append(
            f"{name:<22}{f['threshold']:<8g}{rate(f['recall']):>8} {f['hits']:>3}/{f['bound']:<3}"
            f"{rate(f['false_injection']):>8} {f['injected']:>3}/{f['unbound']:<3}"
            f"{f['tokens_mean']:>8.1f}{f['tokens_max']:>5}"
        )
    if report["lopo_pooled"]:
        for channel in CHANNELS:
            f = report["lopo_pooled"][channel]
            lines.append(
                f"{'pooled':<22}{channel:<8}{rate(f['recall']):>8} {f['hits']:>3}/{f['bound']:<3}"
                f"{rate(f['false_injection']):>8} {f['injected']:>3}/{f['unbound']:<3}"
                f"{f['tokens_mean']:>8.1f}{f['tokens_max']:>5}"
            )
    lines += [f"skipped tests/projects/{why}" for why in report["skipped"]]
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heldout", action="store_true", help="score the held-out changes")
    parser.add_argument("--unseen", action="store_true",
                        help="score tests/unseen, every change (once, at the end)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args(argv)
    if args.unseen:
        report = unseen_check(exact_counter())
    else:
        report = evaluation(exact_counter(), args.heldout)
    print(json.dumps(report, indent=1) if args.json else "\n".join(table(report)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
