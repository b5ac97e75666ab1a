#!/usr/bin/env python3
"""Draw the commits of tests/projects/<slug>/changes.json from a project's git history.

    python3 scripts/sample_changes.py GIT_DIR tests/projects/SLUG --repo OWNER/NAME
        --cutoff YYYY-MM-DD [--ref REF] [--random 45] [--governed 30]

Non-merge commits after the cutoff (author date) that change at least one file. The random part
is the first `--random` of them in the order of sha256(commit); the governed part the first
`--governed` of the others, in the same order, that change a file some epic's Paths glob of the
folder's permanent_memory.md matches. Written to changes.json unlabelled (`relevant` null, `why`
empty) for the labeller; an existing changes.json is never overwritten.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import loader_path  # noqa: F401
from project_memory_loader.evidence import pm_globs

MAX_FILES = 30
PR_SUFFIXES = ("(#", "[#")


def paths_globs(memory: str) -> list[pm_globs.Glob]:
    globs = []
    for line in memory.splitlines():
        if line.startswith("**Paths:**"):
            for term in line[len("**Paths:**") :].split(","):
                if term.strip() and pm_globs.glob_problem(term) is None:
                    globs.append(pm_globs.parse_glob(term))
    return globs


def history(git_dir: str, ref: str, cutoff: str) -> list[dict[str, object]]:
    out = subprocess.run(
        ["git", "--git-dir", git_dir, "log", "--no-merges", "-M", "--name-only",
         f"--after={cutoff}T23:59:59Z", "--date=short", "--format=%x00%H%x09%ad%x09%s", ref],
        check=True, capture_output=True, text=True, errors="replace",
    ).stdout  # fmt: skip
    commits = []
    for record in out.split("\0")[1:]:
        head, _, names = record.partition("\n")
        sha, date, subject = head.split("\t", 2)
        files = [name for name in names.split("\n") if name.strip()]
        if files:
            commits.append(dict(sha=sha, date=date, subject=subject, files=files[:MAX_FILES]))
    return commits


def request_of(subject: str) -> str:
    text = subject.rstrip()
    for mark in PR_SUFFIXES:
        at = text.rfind(mark)
        if at > 0 and text.endswith((")", "]")) and text[at + 2 : -1].isdigit():
            return text[:at].rstrip()
    return text


def split_of(source: str) -> str:
    return "heldout" if hashlib.sha256(source.encode()).hexdigest()[0] in "012345" else "tune"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("git_dir")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--cutoff", required=True)
    parser.add_argument("--ref", default="HEAD")
    parser.add_argument("--random", type=int, default=45)
    parser.add_argument("--governed", type=int, default=30)
    args = parser.parse_args(argv)
    target = args.folder / "changes.json"
    if target.exists():
        print(f"Error: {target} exists; move it away to draw again", file=sys.stderr)
        return 1
    globs = paths_globs((args.folder / "permanent_memory.md").read_text(encoding="utf-8"))
    commits = sorted(history(args.git_dir, args.ref, args.cutoff),
                     key=lambda c: hashlib.sha256(str(c["sha"]).encode()).hexdigest())  # fmt: skip
    drawn = [(c, "random") for c in commits[: args.random]]
    governed = [c for c in commits[args.random :]
                if any(pm_globs.glob_matches(g, f) for g in globs for f in c["files"])]  # type: ignore[attr-defined]  # fmt: skip
    drawn += [(c, "governed") for c in governed[: args.governed]]
    slug = args.folder.name
    changes = []
    for number, (commit, how) in enumerate(drawn, 1):
        source = f"{args.repo}@{commit['sha']}"
        changes.append(dict(id=f"{slug}-c{number:03d}", source=source, date=commit["date"],
                            subject=commit["subject"], request=request_of(str(commit["subject"])),
                            files=commit["files"], relevant=None, why="", drawn=how,
                            split=split_of(source)))  # fmt: skip
    target.write_text(json.dumps(changes, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(changes)} changes ({len(governed[: args.governed])} governed) of "
          f"{len(commits)} after {args.cutoff} -> {target}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
