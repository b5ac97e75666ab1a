"""The recall evaluation's tune parts only: recall, false injections and tokens per tune part
of the batches asked for, the prompts each misses or wrongly gets entries for, and the same
for the odd- and even-numbered halves (`--halves`: choose a setting on one half, check it on
the other). The held-out prompts are dropped before anything is scored, so no held-out figure
or outcome can be seen here; scripts/bench reports those.

    python3 scripts/recall_tune.py                 # batches 1-3
    python3 scripts/recall_tune.py --batches 1 2 3 4 --halves
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_inputs
from project_memory_loader.core import pm_tokens


def tune_prompts(batches: Sequence[int]) -> list[dict[str, Any]]:
    """The tune prompts of the batches, and nothing else."""
    every = json.loads((bench_inputs.RECALL_DATA / "prompts.json").read_text())
    return [p for p in every if p["split"] == "tune" and p["batch"] in batches]


def figures(index: Any, prompts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    relevant = [p for p in prompts if p["relevant"]]
    unrelated = [p for p in prompts if not p["relevant"]]
    missed, injected, spent = [], [], []
    for p in prompts:
        epics, tokens = bench_inputs.recall_outcome(index, p["prompt"])
        spent.append(tokens)
        if p["relevant"] and not set(epics) & set(p["relevant"]):
            missed.append(p["id"])
        if not p["relevant"] and epics:
            injected.append(p["id"])
    return {
        "prompts": len(prompts),
        "recall": 1 - len(missed) / len(relevant) if relevant else None,
        "hits": len(relevant) - len(missed),
        "relevant": len(relevant),
        "false_injection": len(injected) / len(unrelated) if unrelated else None,
        "injected": len(injected),
        "unrelated": len(unrelated),
        "tokens_max": max(spent, default=0),
        "missed": missed,
        "falsely_injected": injected,
    }


def row(name: str, part: dict[str, Any]) -> str:
    recall = "-" if part["recall"] is None else f"{part['recall']:.3f}"
    false = "-" if part["false_injection"] is None else f"{part['false_injection']:.3f}"
    return (
        f"{name:<10} {part['prompts']:>3} prompts  recall {recall} ({part['hits']}/"
        f"{part['relevant']})  false injections {false} ({part['injected']}/"
        f"{part['unrelated']})  tokens max {part['tokens_max']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--halves", action="store_true", help="odd and even prompt numbers too")
    parser.add_argument("--quiet", action="store_true", help="figures only, no prompt IDs")
    args = parser.parse_args(argv)
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    index = bench_inputs.recall_index(bench_inputs.RECALL_DATA / "permanent_memory.md", count)
    prompts = tune_prompts(args.batches)
    parts = {f"tune-{b}": [p for p in prompts if p["batch"] == b] for b in args.batches}
    parts["tune-all"] = prompts
    if args.halves:
        for name, rest in (("odd", 1), ("even", 0)):
            parts[f"tune-{name}"] = [p for p in prompts if int(p["id"][1:]) % 2 == rest]
    for name, chosen in parts.items():
        if not chosen:
            continue
        part = figures(index, chosen)
        print(row(name, part))
        if not args.quiet and name.startswith("tune-") and name[5:].isdigit():
            print(f"           missed: {' '.join(part['missed']) or '-'}")
            print(f"           falsely injected: {' '.join(part['falsely_injected']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
