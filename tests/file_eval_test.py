"""Recall at the file on real changes (scripts/file_eval.py): each labelled change of
tests/projects played as a session (the request through prompt-time recall, the files read and
then edited through recall at the file), scored on the held-out changes with the threshold
frozen on the tune changes, and leave-one-project-out. Targets, both channels together: recall
>= 0.85, false injections <= 0.25, <= 250 tokens a session; a target missed is a strict
expected failure stating the figures."""

from __future__ import annotations

import functools
from types import ModuleType
from typing import Any

import pytest
from project_memory_loader.core import pm_tokens
from support import load_bench

# The projects the figures below are stated for (the folders of tests/projects that had landed
# when they were scored); a folder landing later joins when the figures are restated.
PROJECTS = ("jabref", "kuma", "thunderbird-android", "unleash", "vector")


def file_eval() -> ModuleType:
    load_bench("inputs")
    import file_eval

    return file_eval


@functools.lru_cache(maxsize=2)
def report(lopo: bool) -> dict[str, Any]:
    count, _engine, _source = pm_tokens.load_exact_counter(bundled_first=True)
    found: dict[str, Any] = file_eval().evaluation(count, True, PROJECTS, lopo)
    return found


def both(which: str) -> dict[str, Any]:
    figures: dict[str, Any] = report(which == "lopo")[
        "lopo_pooled" if which == "lopo" else "pooled"
    ]
    return figures["both"]


def test_every_project_is_scored_and_the_threshold_is_the_frozen_one() -> None:
    found = report(False)
    assert sorted(found["projects"]) == sorted(PROJECTS)
    assert found["threshold"] == file_eval().pm_path_index.FILE_THRESHOLD
    pooled = found["pooled"]
    assert pooled["both"]["changes"] == sum(
        f["both"]["changes"] for f in found["projects"].values()
    )
    # Both channels never do worse than either alone on recall.
    for f in [*found["projects"].values(), pooled]:
        assert f["both"]["hits"] >= max(f["prompt"]["hits"], f["file"]["hits"])


@pytest.mark.xfail(
    strict=True,
    reason="held out, both channels: recall 0.697 (23/33) < 0.85; the file channel alone 0.606,"
    " the prompt alone 0.303. 7 of the 10 misses touch a file the binding epic governs, but the"
    " path and the request support it under the threshold (3) or another governing epic's"
    " entries fill the call; 3 touch none (scripts/file_eval.py --heldout)",
)
def test_heldout_recall() -> None:
    assert both("heldout")["recall"] >= 0.85, both("heldout")


def test_heldout_false_injections_and_tokens() -> None:
    f = both("heldout")
    assert f["false_injection"] <= 0.25 and f["tokens_mean"] <= 250, f


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="leave-one-project-out, held out, both channels: recall 0.636 (21/33) < 0.85 (the"
    " threshold chosen on the other projects' tune changes: 3, and 4 for vector)",
)
def test_leave_one_project_out_recall() -> None:
    assert both("lopo")["recall"] >= 0.85, both("lopo")


@pytest.mark.slow
def test_leave_one_project_out_false_injections_and_tokens() -> None:
    f = both("lopo")
    assert f["false_injection"] <= 0.25 and f["tokens_mean"] <= 250, f
