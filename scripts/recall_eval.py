"""Prompt-time recall, leave-one-project-out: each project's prompts scored with a threshold chosen
on the other projects' prompts only, the product's scoring beside a plain BM25 (the baseline),
with and without the epics' Keywords lines.

The projects: the four of tests/recall (one memory holding all four, each project's prompts the
part of prompts.json whose `source` is that project's; every part of it has been seen, so all of
it is tuning material) and each complete folder of tests/projects (its own memory, each change's
`request` a prompt, `relevant` its labels; its `tune` changes are tuning material, its `heldout`
changes the final check, scored only with `--heldout`). A folder without changes.json or with a
change not yet labelled is skipped and named.

    python3 scripts/recall_eval.py                 # leave-one-project-out, tune material
    python3 scripts/recall_eval.py --heldout       # the final check (scored once)
    python3 scripts/recall_eval.py --ablate [RULE ...]   # each rule taken out in turn
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import json
import math
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import loader_path  # noqa: E402, F401
from project_memory_loader.core import pm_load, pm_parse, pm_render, pm_tokens  # noqa: E402
from project_memory_loader.recall import pm_recall, pm_recall_index, pm_recall_store  # noqa: E402

RECALL_DATA = ROOT / "tests" / "recall"
PROJECTS_DATA = ROOT / "tests" / "projects"
# Projects kept out of everything above: scored once, every change, with the frozen settings.
UNSEEN_DATA = ROOT / "tests" / "unseen"
# The targets, pooled over the left-out projects: (recall at least, false injections at most).
TARGETS = {False: (0.5, 0.10), True: (0.65, 0.12)}  # by whether the Keywords lines are read
# The baseline: BM25 over each entry's epic title and text, its best BASELINE_TOP entries that
# clear one threshold.
K1, B = 1.2, 0.75
BASELINE_TOP = 3
SCORER_LEVELS = tuple(round(0.25 * n, 2) for n in range(1, 41))  # 0.25 .. 10
BASELINE_LEVELS = tuple(round(0.25 * n, 2) for n in range(1, 101))  # 0.25 .. 25


class Prompt(NamedTuple):
    id: str
    text: str
    relevant: frozenset[str]
    split: str  # "tune" (tuning material) or "heldout" (the final check)


class Project(NamedTuple):
    name: str
    memory: Path  # its permanent_memory.md (with archive/ beside it, if any)
    prompts: tuple[Prompt, ...]


class Skipped(NamedTuple):
    name: str
    why: str


def recall_projects(data: Path = RECALL_DATA) -> list[Project]:
    """tests/recall's four projects (by the owner in each prompt's `source`), one shared memory;
    every prompt is tuning material (all its held-out parts have been seen)."""
    every = json.loads((data / "prompts.json").read_text(encoding="utf-8"))
    by_owner: dict[str, list[Prompt]] = {}
    for p in every:
        owner = p["source"].split("/")[0]
        by_owner.setdefault(owner, []).append(
            Prompt(p["id"], p["prompt"], frozenset(p["relevant"]), "tune")
        )
    memory = data / "permanent_memory.md"
    return [Project(name, memory, tuple(found)) for name, found in sorted(by_owner.items())]


def folder_projects(root: Path = PROJECTS_DATA) -> tuple[list[Project], list[Skipped]]:
    """Each complete folder of tests/projects (permanent_memory.md, changes.json, every change
    labelled); the others, with why they are left out."""
    found, skipped = [], []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        memory, changes = folder / "permanent_memory.md", folder / "changes.json"
        if not memory.is_file() or not changes.is_file():
            missing = "permanent_memory.md" if not memory.is_file() else "changes.json"
            skipped.append(Skipped(folder.name, f"no {missing}"))
            continue
        try:
            rows = json.loads(changes.read_text(encoding="utf-8"))
        except ValueError as exc:
            skipped.append(Skipped(folder.name, f"changes.json does not parse: {exc}"))
            continue
        unlabelled = sum(1 for row in rows if row.get("relevant") is None)
        if unlabelled or not rows:
            why = f"{unlabelled} of {len(rows)} changes not labelled" if rows else "no changes"
            skipped.append(Skipped(folder.name, why))
            continue
        prompts = tuple(
            Prompt(row["id"], row["request"], frozenset(row["relevant"]), row["split"])
            for row in rows
        )
        found.append(Project(folder.name, memory, prompts))
    return found, skipped


def all_projects() -> tuple[list[Project], list[Skipped]]:
    folders, skipped = folder_projects()
    return recall_projects() + folders, skipped


# --- the memory as the hook indexes it


def without_keywords(data: Path, out: Path) -> Path:
    """A copy of a memory folder's files (permanent_memory.md and archive/) in `out` without
    their epics' Keywords lines: the files as producers write them today."""
    for source in [data / "permanent_memory.md", *sorted((data / "archive").glob("*.md"))]:
        lines = pm_load.decode(source.read_bytes()).split("\n")
        dropped = {n for epic in pm_parse.parse_permanent("\n".join(lines))
                   for n in epic.keywords_lines}  # fmt: skip
        target = out / source.relative_to(data)
        target.parent.mkdir(parents=True, exist_ok=True)
        kept = [line for n, line in enumerate(lines) if n not in dropped]
        target.write_text("\n".join(kept), encoding="utf-8")
    return out


def recall_index(memory: Path, counter: Callable[[str], int]) -> Any:
    """The recall index of a memory file and its archive/ folder, as the hook's cache miss
    builds it (the block with the default budget, the same cleaning and counting)."""
    data = memory.read_bytes()
    summary = pm_load.summarise(data, len(data), pm_render.Budget(), pm_tokens.Tokenizer(),
                                dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc))  # fmt: skip
    archives = pm_recall_store.archive_files(str(memory), None)
    lines = [] if summary.skipped else pm_load.decode(data).split("\n")
    epics = [] if summary.skipped else summary.epics
    return pm_recall_index.index_files(epics, lines, archives, summary.block.text, counter)


def recall_outcome(index: Any, prompt: str) -> tuple[list[str], int]:
    """The epics whose entries recall adds to `prompt` as a session's first (the session-start
    block's lines already received), and the tokens it adds."""
    received = {entry[0] for entry in index["entries"] if entry[5]}
    budgets = pm_recall.PROMPT_BUDGET, pm_recall.SESSION_BUDGET
    scores, _, _ = pm_recall.score(index, prompt)
    chosen, _ = pm_recall.choose(index, scores, received, *budgets,
                                 needed=pm_recall.threshold(prompt))  # fmt: skip
    _, _, tokens = pm_recall.recall(index, prompt, received, *budgets)
    return sorted({index["entries"][n][1] for n in chosen}), tokens


def memory_sources(memory: Path) -> list[pm_recall_index.Source]:
    """The memory file's epics and its archive's, as parsed sources (every epic, whatever the
    file's size)."""
    sources = []
    names = [(pm_recall_index.MEMORY_SOURCE, memory.read_bytes())]
    names += pm_recall_store.archive_files(str(memory), None)
    for name, data in names:
        text = pm_load.decode(data)
        sources.append(pm_recall_index.Source(name, pm_parse.parse_permanent(text),
                                              text.split("\n")))  # fmt: skip
    return sources


# --- the methods: each gives, for a prompt, the epics it adds at each of its levels


class Bm25(NamedTuple):
    epics: list[str]  # each entry's epic ID
    postings: dict[str, list[tuple[int, float]]]  # term: (entry, weight)


def bm25_index(memory: Path, keywords: bool) -> Bm25:
    """The baseline's index: BM25 over each entry's epic title (and, with `keywords`, its
    Keywords line) and text, terms as recall's (split, stemmed, stop words left out)."""
    docs: list[list[str]] = []
    epics: list[str] = []
    for source in memory_sources(memory):
        for item in pm_recall_index.items(source):
            head = item.epic.intent + " " + (" ".join(item.epic.keywords) if keywords else "")
            docs.append(pm_recall.terms(head + " " + item.text))
            epics.append(pm_render.safe_text(item.epic.epic_id))
    average = sum(map(len, docs)) / len(docs) if docs else 1.0
    holders: dict[str, int] = {}
    for doc in docs:
        for term in set(doc):
            holders[term] = holders.get(term, 0) + 1
    postings: dict[str, list[tuple[int, float]]] = {}
    for number, doc in enumerate(docs):
        counts: dict[str, int] = {}
        for term in doc:
            counts[term] = counts.get(term, 0) + 1
        norm = K1 * (1 - B + B * len(doc) / average)
        for term, tf in counts.items():
            rarity = math.log(1 + (len(docs) - holders[term] + 0.5) / (holders[term] + 0.5))
            postings.setdefault(term, []).append((number, rarity * tf * (K1 + 1) / (tf + norm)))
    return Bm25(epics, postings)


def bm25_levels(index: Bm25, prompt: str, levels: Sequence[float]) -> list[tuple[str, ...]]:
    scores: dict[int, float] = {}
    for term in dict.fromkeys(pm_recall.terms(prompt[: pm_recall.PROMPT_PREFIX_CHARS])):
        for number, weight in index.postings.get(term, ()):
            scores[number] = scores.get(number, 0.0) + weight
    best = sorted(scores, key=lambda n: (-scores[n], n))[:BASELINE_TOP]
    return [tuple(sorted({index.epics[n] for n in best if scores[n] >= level})) for level in levels]


def scorer_levels(index: Any, prompt: str, levels: Sequence[float]) -> list[tuple[str, ...]]:
    """The product's scoring with THRESHOLD set to each level (its other rules as they are)."""
    received = {entry[0] for entry in index["entries"] if entry[5]}
    scores, _, _ = pm_recall.score(index, prompt, explain=False)
    factor = pm_recall.threshold(prompt) / pm_recall.THRESHOLD
    budgets = pm_recall.PROMPT_BUDGET, pm_recall.SESSION_BUDGET
    found = []
    for level in levels:
        chosen, _ = pm_recall.choose(index, scores, received, *budgets, False, level * factor)
        found.append(tuple(sorted({index["entries"][n][1] for n in chosen})))
    return found


class Method(NamedTuple):
    name: str
    levels: tuple[float, ...]
    build: Callable[[Path, bool, Callable[[str], int]], Any]
    added: Callable[[Any, str, Sequence[float]], list[tuple[str, ...]]]
    shipped: float | None  # the level the product ships with, if any


SCORER = Method(
    "scorer",
    SCORER_LEVELS,
    lambda memory, _keywords, count: recall_index(memory, count),
    scorer_levels,
    pm_recall.THRESHOLD,
)
BASELINE = Method(
    "BM25",
    BASELINE_LEVELS,
    lambda memory, keywords, _count: bm25_index(memory, keywords),
    bm25_levels,
    None,
)


# --- leave-one-project-out


class Outcomes(NamedTuple):
    """A project's prompts (of one split) and what a method adds to each at each level."""

    prompts: tuple[Prompt, ...]
    added: list[list[tuple[str, ...]]]  # prompt: level: epics


class Figures(NamedTuple):
    hits: int
    relevant: int
    injected: int
    unrelated: int

    @property
    def recall(self) -> float | None:
        return self.hits / self.relevant if self.relevant else None

    @property
    def false_injection(self) -> float | None:
        return self.injected / self.unrelated if self.unrelated else None

    def __add__(self, other: object) -> Figures:
        assert isinstance(other, Figures)
        return Figures(*(a + b for a, b in zip(self, other)))


NONE = Figures(0, 0, 0, 0)


def figures(outcomes: Outcomes, level: int) -> Figures:
    hits = relevant = injected = unrelated = 0
    for prompt, added in zip(outcomes.prompts, outcomes.added):
        epics = added[level]
        if prompt.relevant:
            relevant += 1
            hits += bool(prompt.relevant.intersection(epics))
        else:
            unrelated += 1
            injected += bool(epics)
    return Figures(hits, relevant, injected, unrelated)


def choose_level(pooled: Sequence[Figures], limit: float) -> int:
    """The rule every method's threshold is chosen by, on the projects it is not scored on: the
    highest recall with false injections at most `limit` (ties: the higher threshold); if no
    level keeps false injections that low, the fewest false injections."""
    allowed = [n for n, f in enumerate(pooled) if (f.false_injection or 0.0) <= limit]
    if allowed:
        return max(allowed, key=lambda n: ((pooled[n].recall or 0.0), n))
    return min(range(len(pooled)), key=lambda n: ((pooled[n].false_injection or 0.0), -n))


def outcomes_of(
    method: Method,
    projects: Sequence[Project],
    keywords: bool,
    split: str,
    counter: Callable[[str], int],
) -> dict[str, Outcomes]:
    """Each project's prompts of `split` and what the method adds to each at every level."""
    indexes: dict[Path, Any] = {}
    found = {}
    with tempfile.TemporaryDirectory() as folder:
        for project in projects:
            memory = project.memory
            if memory not in indexes:
                source = memory
                if not keywords:
                    copy = Path(folder) / str(len(indexes))
                    source = without_keywords(memory.parent, copy) / memory.name
                indexes[memory] = method.build(source, keywords, counter)
            prompts = tuple(p for p in project.prompts if p.split == split)
            added = [method.added(indexes[memory], p.text, method.levels) for p in prompts]
            found[project.name] = Outcomes(prompts, added)
    return found


class Row(NamedTuple):
    project: str
    level: int  # the threshold chosen on the other projects (its number among the levels)
    figures: Figures


def leave_one_out(outcomes: dict[str, Outcomes], limit: float) -> list[Row]:
    """Each project scored at the level chosen (choose_level) on the other projects pooled."""
    each = {name: [figures(o, n) for n in range(len(o.added[0]))]
            for name, o in outcomes.items() if o.prompts}  # fmt: skip
    levels = min((len(every) for every in each.values()), default=0)
    rows = []
    for name in each:
        pooled = [sum((each[other][n] for other in each if other != name), NONE)
                  for n in range(levels)]  # fmt: skip
        chosen = choose_level(pooled, limit)
        rows.append(Row(name, chosen, each[name][chosen]))
    return rows


def at_most(outcomes: Outcomes, limit: float | None) -> Figures:
    """The best recall a method reaches on these prompts with false injections at most `limit`
    (its best case: the level read off these very prompts)."""
    every = [figures(outcomes, n) for n in range(len(outcomes.added[0]))] if outcomes.added else []
    allowed = [f for f in every if (f.false_injection or 0.0) <= (limit or 0.0)]
    return max(allowed, key=lambda f: f.recall or 0.0, default=NONE)


def evaluation(
    counter: Callable[[str], int],
    keywords: bool,
    projects: Sequence[Project] | None = None,
    split: str = "tune",
) -> dict[str, Any]:
    """Leave-one-project-out figures of the scorer and the baseline, per project and pooled,
    and for each project the baseline's best recall at the scorer's false injections there."""
    if projects is None:
        projects = all_projects()[0]
    limit = TARGETS[keywords][1]
    report: dict[str, Any] = {"keywords": keywords, "split": split, "limit": limit}
    found = {}
    for method in (SCORER, BASELINE):
        outcomes = outcomes_of(method, projects, keywords, split, counter)
        rows = leave_one_out(outcomes, limit)
        found[method.name] = (outcomes, rows)
        report[method.name] = {
            "rows": [
                dict(project=r.project, level=method.levels[r.level], **fig(r.figures))
                for r in rows
            ],
            "pooled": fig(sum((r.figures for r in rows), NONE)),
        }
    outcomes, rows = found[BASELINE.name]
    scorer_rows = {r.project: r for r in found[SCORER.name][1]}
    report["matched"] = {
        name: fig(at_most(o, scorer_rows[name].figures.false_injection))
        for name, o in outcomes.items()
        if name in scorer_rows
    }
    return report


def tune_pick(
    method: Method, projects: Sequence[Project], keywords: bool, counter: Callable[[str], int]
) -> int:
    """The level (its number) the rule picks on every project's tune prompts pooled: how a
    method's one threshold is frozen."""
    tune = outcomes_of(method, projects, keywords, "tune", counter)
    pooled = [sum((figures(o, n) for o in tune.values() if o.prompts), NONE)
              for n in range(len(method.levels))]  # fmt: skip
    return choose_level(pooled, TARGETS[keywords][1])


def final_check(
    counter: Callable[[str], int], keywords: bool, projects: Sequence[Project]
) -> dict[str, Any]:
    """The held-out changes of tests/projects, scored once: the scorer as it ships (THRESHOLD),
    the baseline at the threshold its rule picks on every project's tune prompts."""
    limit = TARGETS[keywords][1]
    report: dict[str, Any] = {"keywords": keywords, "split": "heldout", "limit": limit}
    for method in (SCORER, BASELINE):
        chosen = tune_pick(method, projects, keywords, counter)
        if method.shipped is not None:
            report["shipped"], report["rule_picks"] = method.shipped, method.levels[chosen]
            chosen = method.levels.index(method.shipped)
        held = outcomes_of(method, projects, keywords, "heldout", counter)
        rows = [Row(name, chosen, figures(o, chosen)) for name, o in held.items() if o.prompts]
        report[method.name] = {
            "rows": [
                dict(project=r.project, level=method.levels[r.level], **fig(r.figures))
                for r in rows
            ],
            "pooled": fig(sum((r.figures for r in rows), NONE)),
        }
    report["matched"] = {r["project"]: {"recall": None} for r in report["scorer"]["rows"]}
    return report


def unseen_check(counter: Callable[[str], int], keywords: bool) -> dict[str, Any]:
    """The projects of tests/unseen, every change, scored once as final_check scores the
    held-out changes: the scorer as it ships, the baseline at the threshold its rule picks on
    the tune prompts of tests/recall and tests/projects (tests/unseen has no tune part)."""
    unseen, _skipped = folder_projects(UNSEEN_DATA)
    unseen = [p._replace(prompts=tuple(q._replace(split="heldout") for q in p.prompts))
              for p in unseen]  # fmt: skip
    known, _ = all_projects()
    tuning = [p._replace(prompts=tuple(q for q in p.prompts if q.split == "tune")) for p in known]
    report = final_check(counter, keywords, [*tuning, *unseen])
    names = {p.name for p in unseen}
    for method in (SCORER, BASELINE):
        rows = [r for r in report[method.name]["rows"] if r["project"] in names]
        pooled = dict(report[method.name]["pooled"])
        for key in ("hits", "relevant", "injected", "unrelated"):
            pooled[key] = sum(r[key] for r in rows)
        pooled["recall"] = pooled["hits"] / pooled["relevant"] if pooled["relevant"] else None
        pooled["false_injection"] = (
            pooled["injected"] / pooled["unrelated"] if pooled["unrelated"] else None
        )
        report[method.name] = {"rows": rows, "pooled": pooled}
    report["matched"] = {name: value for name, value in report["matched"].items() if name in names}
    report["split"] = "unseen"
    return report


def fig(f: Figures) -> dict[str, Any]:
    return dict(hits=f.hits, relevant=f.relevant, injected=f.injected, unrelated=f.unrelated,
                recall=f.recall, false_injection=f.false_injection)  # fmt: skip


def rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def table(report: dict[str, Any]) -> list[str]:
    words = "with" if report["keywords"] else "without"
    if report["split"] == "unseen":
        first = (
            f"every change of tests/unseen, {words} the Keywords lines, scored once: the scorer"
            f" as it ships (threshold {report['shipped']:g}), the baseline at the threshold its"
            " rule picks on every tune prompt of tests/recall and tests/projects"
        )
    elif report["split"] == "heldout":
        first = (
            f"held-out changes of tests/projects, {words} the Keywords lines, scored once: the"
            f" scorer as it ships (threshold {report['shipped']:g}; its rule picks"
            f" {report['rule_picks']:g} on every tune prompt), the baseline at the threshold its"
            " rule picks on every tune prompt"
        )
    else:
        first = (
            f"leave-one-project-out, tune prompts, {words} the Keywords lines: each project at"
            " the threshold chosen on the others (highest recall with false injections <="
            f" {report['limit']:.2f})"
        )
    lines = [
        first,
        f"  {'project':<22} {'scorer at':>9} {'recall':>13} {'false inj.':>13}   "
        f"{'BM25 at':>8} {'recall':>13} {'false inj.':>13}   {'BM25 at same f.i.':>17}",
    ]
    scorer, baseline = report["scorer"], report["BM25"]
    for s, b in zip(scorer["rows"], baseline["rows"]):
        m = report["matched"][s["project"]]
        lines.append(
            f"  {s['project']:<22} {s['level']:>9.2f} {cell(s, 'recall')} {cell(s, 'false')}   "
            f"{b['level']:>8.2f} {cell(b, 'recall')} {cell(b, 'false')}   "
            f"{rate(m['recall']):>17}"
        )
    s, b = scorer["pooled"], baseline["pooled"]
    lines.append(f"  {'pooled':<22} {'':>9} {cell(s, 'recall')} {cell(s, 'false')}   "
                 f"{'':>8} {cell(b, 'recall')} {cell(b, 'false')}")  # fmt: skip
    return lines


def cell(f: dict[str, Any], which: str) -> str:
    if which == "recall":
        text = f"{rate(f['recall'])} {f['hits']:>2}/{f['relevant']:<2}"
    else:
        text = f"{rate(f['false_injection'])} {f['injected']:>2}/{f['unrelated']:<2}"
    return f"{text:>13}"


# --- the ablation: each rule of the scorer taken out in turn, its threshold chosen again

# Each rule as the module constants (or function) that take it out of the scoring. The rules
# earn their place on the projects no rule was written on: tests/projects' (NEW).
RULES: dict[str, list[tuple[Any, str, Any]]] = {
    "report factor": [(pm_recall, "REPORT_FACTOR", 1.0)],
    "epic support": [(pm_recall, "EPIC_SHARE", 0.0)],
    "keyword worth": [(pm_recall_index, "KEYWORD_WEIGHT", 0.0)],
}


@contextlib.contextmanager
def without_rules(names: Sequence[str]) -> Iterator[None]:
    saved = []
    for name in names:
        for module, attribute, value in RULES[name]:
            saved.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, value)
    try:
        yield
    finally:
        for module, attribute, value in reversed(saved):
            setattr(module, attribute, value)


def ablation(
    counter: Callable[[str], int], removed: Sequence[str], projects: Sequence[Project]
) -> dict[str, dict[str, Figures]]:
    """The scorer's leave-one-project-out figures with `removed` taken out, then with each other
    rule taken out as well: for each, pooled over tests/recall's projects ("old") and over the
    others ("new"), without and with the Keywords lines."""
    old = {p.name for p in recall_projects()}
    found = {}
    for rule in ["", *(r for r in RULES if r not in removed)]:
        figures_of = {}
        with without_rules([*removed, *([rule] if rule else [])]):
            for keywords in (False, True):
                outcomes = outcomes_of(SCORER, projects, keywords, "tune", counter)
                rows = leave_one_out(outcomes, TARGETS[keywords][1])
                for part in ("old", "new"):
                    mine = [r.figures for r in rows if (r.project in old) == (part == "old")]
                    figures_of[f"{part} {'with' if keywords else 'without'}"] = sum(mine, NONE)
        found[rule] = figures_of
    return found


def ablation_table(found: dict[str, dict[str, Figures]]) -> list[str]:
    """J = recall - false injections, summed without and with the Keywords lines, on the new
    projects and on the old; each rule's row: what taking it out changes."""

    def score(figures_of: dict[str, Figures], part: str) -> float:
        return sum((f.recall or 0.0) - (f.false_injection or 0.0)
                   for name, f in figures_of.items() if name.startswith(part))  # fmt: skip

    base = found[""]
    lines = [f"  {'taken out':<20} {'J new':>7} {'J old':>7}   "
             + "   ".join(f"{name:>20}" for name in base)]  # fmt: skip
    for rule, figures_of in found.items():
        shown = [f"{f.hits}/{f.relevant} {f.injected}/{f.unrelated}" for f in figures_of.values()]
        if rule:
            new = f"{score(figures_of, 'new') - score(base, 'new'):+.3f}"
            old = f"{score(figures_of, 'old') - score(base, 'old'):+.3f}"
        else:
            new, old = f"{score(base, 'new'):.3f}", f"{score(base, 'old'):.3f}"
        lines.append(f"  {rule or '(nothing)':<20} {new:>7} {old:>7}   "
                     + "   ".join(f"{x:>20}" for x in shown))  # fmt: skip
    return lines


@functools.lru_cache(maxsize=1)
def exact_counter() -> Callable[[str], int]:
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    return count


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heldout", action="store_true", help="score the final held-out check")
    parser.add_argument("--unseen", action="store_true",
                        help="score tests/unseen, every change (once, at the end)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    parser.add_argument("--ablate", nargs="*", metavar="RULE", choices=list(RULES),
                        help="the ablation, with these rules already taken out")  # fmt: skip
    args = parser.parse_args(argv)
    projects, skipped = all_projects()
    if args.ablate is not None:
        print("\n".join(ablation_table(ablation(exact_counter(), args.ablate, projects))))
        return 0
    if args.unseen:
        reports = [unseen_check(exact_counter(), keywords) for keywords in (False, True)]
    elif args.heldout:  # the thresholds chosen on every project's tune prompts
        reports = [final_check(exact_counter(), keywords, projects) for keywords in (False, True)]
    else:
        reports = [evaluation(exact_counter(), keywords, projects) for keywords in (False, True)]
    if args.json:
        print(json.dumps({"skipped": [s._asdict() for s in skipped], "reports": reports}, indent=1))
        return 0
    for report in reports:
        print("\n".join(table(report)))
        print()
    for s in skipped:
        print(f"skipped tests/projects/{s.name}: {s.why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
