"""scripts/bench-client: a smoke run through the real CLI, checking the report, not the times."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import support
from conftest import ROOT
from e2e_env import in_ci, missing_client_reason

pytestmark = pytest.mark.e2e

BENCH_CLIENT = ROOT / "scripts" / "bench-client"


def _smoke_report(folder: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(BENCH_CLIENT), "--smoke", "--prompts", "3", "--json"],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    value: dict[str, Any] = json.loads(done.stdout)
    return value


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    reason = missing_client_reason("claude")
    if reason is not None:
        if in_ci():
            pytest.fail(reason)
        pytest.skip(reason)
    # One smoke run for the whole test run, whichever xdist workers this module's tests are on.
    value: dict[str, Any] = support.once_per_run(
        tmp_path_factory, "bench-client-smoke", _smoke_report
    )
    return value


def test_every_variant_is_measured(report: dict[str, Any]) -> None:
    assert report["client"] == "2.1.332"
    assert (report["runs"], report["prompts"]) == (1, 3)
    for variant in ("none", "null", "plugin"):
        samples = report["samples_ms"][variant]
        assert len(samples["launch"]) == 1 and len(samples["per_prompt"]) == 2, variant
        assert len(samples["per_tool_call"]) == 3, variant  # one Read a prompt
        assert len(samples["turn_end"]) == 3, variant  # one end a prompt
        every = samples["launch"] + samples["per_prompt"] + samples["per_tool_call"]
        every += samples["turn_end"]
        assert all(0 < ms < 120_000 for ms in every)


@pytest.mark.parametrize(
    ("what", "goal"),
    [("launch", 1.2), ("per_prompt", 1.1), ("per_tool_call", 1.1), ("turn_end", 1.1)],
)
def test_medians_and_ratios(report: dict[str, Any], what: str, goal: float) -> None:
    row = report[what]
    assert row["goal"] == goal
    for variant in ("none", "null", "plugin"):
        assert row[variant] == statistics.median(report["samples_ms"][variant][what])
    assert row["plugin_over_null"] == pytest.approx(row["plugin"] / row["null"])
    assert row["null_over_none"] == pytest.approx(row["null"] / row["none"])


def load_bench_client() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("bench_client", str(BENCH_CLIENT))
    spec = importlib.util.spec_from_loader("bench_client", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_the_null_plugin_mirrors_the_hooks(tmp_path: Path) -> None:
    module = load_bench_client()
    folder = module.null_plugin(tmp_path / "null", "python3")
    real = json.loads((ROOT / "hooks" / "hooks.json").read_text())["hooks"]
    null = json.loads((folder / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(null) == set(real)
    for event, groups in real.items():
        assert [g.get("matcher") for g in null[event]] == [g.get("matcher") for g in groups]
        assert [len(g["hooks"]) for g in null[event]] == [len(g["hooks"]) for g in groups]
        for group in null[event]:
            assert {h["command"] for h in group["hooks"]} == {"python3 -c pass"}
    # The same skills as the client sees them at launch, with no script to run.
    skills = sorted(p.relative_to(folder) for p in (folder / "skills").rglob("*") if p.is_file())
    real_skills = sorted(
        p.relative_to(ROOT)
        for p in (ROOT / "skills").rglob("*")
        if p.is_file() and (p.name == "SKILL.md" or p.parent.name == "references")
    )
    assert skills == real_skills and len(skills) > 2
    for path in skills:
        assert (folder / path).read_bytes() == (ROOT / path).read_bytes()
    manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text())
    real_manifest = json.loads((ROOT / ".claude-plugin" / "plugin.json").read_text())
    assert (
        manifest["name"] == "null-hooks" and manifest["userConfig"] == real_manifest["userConfig"]
    )


def test_the_plugin_is_measured_as_installed(tmp_path: Path) -> None:
    module = load_bench_client()
    folder = module.installed_copy(tmp_path / "installed")
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert names == sorted(listed.stdout.split())
    for name in ("hooks/hooks.json", ".claude-plugin/plugin.json"):
        assert (folder / name).read_bytes() == (ROOT / name).read_bytes()
    assert not (folder / ".venv").exists() and not (folder / "scripts/e2e/node_modules").exists()
