#!/usr/bin/env python3
"""Imported epics beside hand-written ones: `permanent_memory.py import` run on the records behind
the hand-written epics of tests/projects and tests/unseen, in a clone of each project at the tree
of its cutoff (so git's history stops there: the commits scored are all after it), then scored by
file_eval.py (recall at the file, with the prompt) and recall_eval.py (prompt-time recall)
exactly as the hand-written memories are: leave-one-project-out on the tune changes, the
held-out changes, and the unseen project.

Each Paths signal alone and together (--paths of import): named, tree, git, and their union;
`none` imports no Paths lines. The labels of each change are carried over through the records:
a hand-written epic's record (its project's SOURCE.md) is the imported epic's Source.

    python3 scripts/import_eval.py --mirrors DIR [--work DIR] [--json]

DIR holds a git mirror of each project as `<owner>+<name>/repo` (a bare clone with history up to
the cutoff). Nothing is written outside --work (default: a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import file_eval  # noqa: E402
import recall_eval  # noqa: E402

LOADER = ROOT / "skills" / "permanent-memory-loader" / "scripts" / "permanent_memory.py"
SIGNAL_SETS = ("none", "named", "tree", "git", "named,tree,git")
# Where a project's SOURCE.md table names its records from.
RECORD_PREFIX = {"unleash": "website/docs/contributing/ADRs/"}
_ROW = re.compile(r"^\| ([A-Z]+-\d+) \| ([^ |]+)")


class Project:
    def __init__(self, folder: Path) -> None:
        text = (folder / "SOURCE.md").read_text(encoding="utf-8")
        self.folder = folder
        self.name = folder.name
        repo = re.search(r"github\.com/([\w.-]+)/([\w.-]+)", text)
        assert repo is not None, folder
        self.mirror = f"{repo.group(1)}+{repo.group(2).removesuffix('.git')}"
        tree = re.search(r"Tree at the cutoff[^`]*`([0-9a-f]{40})`", text)
        assert tree is not None, folder
        self.tree = tree.group(1)
        prefix = RECORD_PREFIX.get(self.name, "")
        self.records = {m.group(1): prefix + m.group(2)
                        for m in map(_ROW.match, text.splitlines()) if m}  # fmt: skip


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout


def checkout(project: Project, mirrors: Path, work: Path) -> Path:
    """A clone of the project at its cutoff tree (objects shared with the mirror)."""
    target = work / "clones" / project.name
    if not (target / ".git").is_dir():
        shutil.rmtree(target, ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        git("clone", "-q", "--shared", "--no-checkout", str(mirrors / project.mirror / "repo"),
            str(target))  # fmt: skip
        git("-c", "advice.detachedHead=false", "checkout", "-q", "--detach", project.tree,
            cwd=target)  # fmt: skip
    return target


def imported_folder(project: Project, clone: Path, signals: str, out: Path) -> dict[str, Any]:
    """Import the project's records with `signals`, and write its evaluation folder in `out`:
    the memory (and archive/), the changes relabelled with the imported epics' IDs."""
    memory = clone / ".claude" / "memory"
    shutil.rmtree(clone / ".claude", ignore_errors=True)
    records = [path for path in project.records.values() if (clone / path).is_file()]
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(clone)}
    done = subprocess.run(
        [sys.executable, str(LOADER), "import", *records, "--write", "--paths", signals,
         "--format", "json", "--project-dir", str(clone)],
        cwd=clone, capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    result = json.loads(done.stdout)
    by_source = {epic["source"]: epic["id"] for epic in result["epics"]}
    mapping = {hand: by_source.get(path) for hand, path in project.records.items()}
    target = out / project.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(memory, target)
    rows = json.loads((project.folder / "changes.json").read_text(encoding="utf-8"))
    for row in rows:  # a label whose record was not imported stays, and counts as a miss
        row["relevant"] = [mapping.get(label) or f"MISSING-{label}" for label in row["relevant"]]
    (target / "changes.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return {"mapping": mapping, "skipped": result["skipped"], "note": result["archive_note"]}


def scores(root: Path, unseen: Path, counter: Any) -> dict[str, Any]:
    """The figures recall_eval and file_eval give for the projects in `root` (and `unseen`)."""
    projects = recall_eval.folder_projects(root)[0]
    unseen_projects = recall_eval.folder_projects(unseen)[0]
    report: dict[str, Any] = {}
    prompt_lopo = recall_eval.evaluation(counter, True, projects, "tune")
    report["prompt_lopo"] = prompt_lopo["scorer"]["pooled"]
    held = recall_eval.final_check(counter, True, projects)
    report["prompt_heldout"] = held["scorer"]["pooled"]
    tuning = [
        p._replace(prompts=tuple(q for q in p.prompts if q.split == "tune")) for p in projects
    ]
    every = [p._replace(prompts=tuple(q._replace(split="heldout") for q in p.prompts))
             for p in unseen_projects]  # fmt: skip
    names = {p.name for p in every}
    unseen_report = recall_eval.final_check(counter, True, [*tuning, *every])
    rows = [r for r in unseen_report["scorer"]["rows"] if r["project"] in names]
    report["prompt_unseen"] = pooled_rows(rows)
    files = file_eval.evaluation(counter, False, root=root)
    report["file_lopo"] = files["lopo_pooled"]
    report["file_heldout"] = file_eval.evaluation(counter, True, root=root, lopo=False)["pooled"]
    report["file_unseen"] = file_eval.unseen_check(counter, unseen)["pooled"]
    return report


def pooled_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    hits, relevant = sum(r["hits"] for r in rows), sum(r["relevant"] for r in rows)
    injected, unrelated = sum(r["injected"] for r in rows), sum(r["unrelated"] for r in rows)
    return {"hits": hits, "relevant": relevant, "injected": injected, "unrelated": unrelated,
            "recall": hits / relevant if relevant else None,
            "false_injection": injected / unrelated if unrelated else None}  # fmt: skip


def rate(value: float | None) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def table(results: dict[str, dict[str, Any]]) -> list[str]:
    columns = [("prompt_lopo", "prompt LOPO"), ("prompt_heldout", "prompt held"),
               ("prompt_unseen", "prompt unseen"), ("file_lopo", "both LOPO"),
               ("file_heldout", "both held"), ("file_unseen", "both unseen")]  # fmt: skip
    lines = ["recall / false injections (both: file_eval's prompt+file channel)",
             f"{'memory':<26}" + "".join(f"{title:>16}" for _k, title in columns)]  # fmt: skip
    for name, report in results.items():
        cells = []
        for key, _title in columns:
            figure = report[key]
            if key.startswith("file"):
                figure = figure["both"]
            cells.append(f"{rate(figure['recall'])}/{rate(figure['false_injection'])}")
        lines.append(f"{name:<26}" + "".join(f"{cell:>16}" for cell in cells))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--signals", default=",".join(s.replace(",", "+") for s in SIGNAL_SETS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="import-eval-"))
    counter = recall_eval.exact_counter()
    results: dict[str, dict[str, Any]] = {
        "hand-written": scores(recall_eval.PROJECTS_DATA, recall_eval.UNSEEN_DATA, counter)
    }
    details: dict[str, Any] = {}
    known = [Project(f) for f in sorted(recall_eval.PROJECTS_DATA.iterdir()) if f.is_dir()]
    unseen = [Project(f) for f in sorted(recall_eval.UNSEEN_DATA.iterdir()) if f.is_dir()]
    clones = {p.name: checkout(p, args.mirrors, work) for p in [*known, *unseen]}
    for signals in args.signals.split(","):
        signals = signals.replace("+", ",")
        out = work / "memories" / signals.replace(",", "+")
        for project in known:
            details[f"{signals}/{project.name}"] = imported_folder(
                project, clones[project.name], signals, out / "projects"
            )
        for project in unseen:
            details[f"{signals}/{project.name}"] = imported_folder(
                project, clones[project.name], signals, out / "unseen"
            )
        results[f"imported, paths {signals}"] = scores(out / "projects", out / "unseen", counter)
    if args.json:
        print(json.dumps({"results": results, "details": details}, indent=1))
    else:
        print("\n".join(table(results)))
        print(f"(memories in {work / 'memories'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
