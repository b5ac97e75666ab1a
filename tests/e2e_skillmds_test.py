"""End to end with skillmds: lint, security scan, and `skillmds add` into a fresh project.

The installed copies are then run on the demo data through an auditing wrapper that records
every file the interpreter opens, to show they need nothing of the repository outside their
own skill folder.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from e2e_env import E2E_DIR, NODE_BIN, clean_env
from support import run_command

pytestmark = pytest.mark.e2e

SKILLS = {
    "permanent-memory-loader": "permanent_memory.py",
    "ski-memory-manager": "memory_manager.py",
}
DEMO = ROOT / "examples" / "demo-project"
DEMO_PROJECT_NAME = "billing-api"
AUDIT = E2E_DIR / "audit_open.py"
TIMEOUT = 120
# Flags of `skillmd scan` that must never be raised for these skills.
FORBIDDEN_FLAGS = ("network_calls", "reads_secrets", "untrusted_install")


@pytest.mark.parametrize("skill", sorted(SKILLS))
def test_lint_has_no_warnings(skillmd: Path, tmp_path: Path, skill: str) -> None:
    env = clean_env(tmp_path)
    text = run_command(
        [str(skillmd), "lint", f"skills/{skill}", "--strict"], env=env, cwd=ROOT, timeout=TIMEOUT
    )
    assert text.code == 0, text.out + text.err
    assert "PASS" in text.out and "⚠" not in text.out, text.out
    report = json.loads(
        run_command(
            [str(skillmd), "lint", f"skills/{skill}", "--format", "json"],
            env=env,
            cwd=ROOT,
            timeout=TIMEOUT,
        ).out
    )
    [entry] = report
    assert entry["ok"] is True
    assert entry["diagnostics"] == []


def test_scan_reports_no_network_and_no_secret_access(skillmd: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    result = run_command(
        [str(skillmd), "scan", "--format", "json", "--deny", *FORBIDDEN_FLAGS],
        env=env,
        cwd=ROOT,
        timeout=TIMEOUT,
    )
    assert result.code == 0, result.out + result.err
    entries: list[dict[str, Any]] = json.loads(result.out)
    scanned = {Path(e["file"]).parent.name: e for e in entries}
    assert set(SKILLS) <= set(scanned), scanned
    for skill in SKILLS:
        security = scanned[skill]["security"]
        assert not set(FORBIDDEN_FLAGS) & set(security["flags"]), security
        assert scanned[skill]["denied"] == []
    # The text report a person reads says the same.
    text = run_command([str(skillmd), "scan", "."], env=env, cwd=ROOT, timeout=TIMEOUT)
    assert text.code == 0
    for flag in FORBIDDEN_FLAGS:
        assert flag not in text.out, text.out


def _audited(
    script: Path, args: Sequence[str], env: Mapping[str, str], cwd: Path, report: Path
) -> tuple[str, dict[str, Any]]:
    result = run_command(
        [sys.executable, str(AUDIT), str(report), str(script), *args],
        env=env,
        cwd=cwd,
        timeout=TIMEOUT,
    )
    assert result.code == 0, result.err
    return result.out, json.loads(report.read_text(encoding="utf-8"))


def _repository_files(paths: Sequence[str]) -> list[str]:
    """Paths inside the repository, not counting the virtualenv the interpreter runs from."""
    venv = Path(sys.prefix).resolve()
    found = []
    for name in paths:
        path = Path(name).resolve()
        if path.is_relative_to(ROOT) and not path.is_relative_to(venv):
            found.append(str(path))
    return found


def test_skillmds_add_installs_working_self_contained_copies(skillmd: Path, tmp_path: Path) -> None:
    project = tmp_path / "work" / "demo-project"
    shutil.copytree(DEMO, project)  # has .claude/, so skillmds links the skills for Claude Code
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(home)
    skillmds = NODE_BIN / "skillmds"
    result = run_command(
        [str(skillmds), "add", str(ROOT), "--project", "--yes"],
        env=env,
        cwd=project,
        timeout=TIMEOUT,
    )
    assert result.code == 0, result.out + result.err
    lock = json.loads((project / "skills-lock.json").read_text(encoding="utf-8"))
    assert set(SKILLS) <= set(lock["skills"]), lock

    installed = {}
    for skill, script in SKILLS.items():
        folder = project / ".claude" / "skills" / skill
        real = folder.resolve()
        assert real.is_relative_to(project), real  # a copy in the project, not a link to ROOT
        assert (real / "SKILL.md").is_file()
        assert (real / "scripts" / script).is_file()
        installed[skill] = folder / "scripts" / script

    reports = tmp_path / "reports"
    reports.mkdir()
    expected_env = dict(env)

    # The loader, installed copy vs. the repository's own: same block, nothing read from ROOT.
    loader_args = ["load", "--project-dir", str(project)]
    out, audit = _audited(
        installed["permanent-memory-loader"], loader_args, env, project, reports / "loader.json"
    )
    assert out.startswith("[permanent-memory | trust:file]\n"), out
    source = ROOT / "skills" / "permanent-memory-loader" / "scripts" / "permanent_memory.py"
    reference = run_command(
        [sys.executable, str(source), *loader_args], env=expected_env, cwd=project, timeout=TIMEOUT
    )
    assert out == reference.out
    assert _repository_files(audit["opened"] + audit["modules"]) == []
    # The audit does see repository files when there are some: run the repository's own copy.
    _, control = _audited(source, loader_args, env, project, reports / "control.json")
    assert str(source) in _repository_files(control["opened"] + control["modules"])

    # The manager: resume the demo project, then save a snapshot into a new memory folder.
    manager_args = [
        "load-last",
        "--memory-dir",
        str(project / "memory"),
        "--project-name",
        DEMO_PROJECT_NAME,
    ]
    out, audit = _audited(
        installed["ski-memory-manager"], manager_args, env, project, reports / "manager.json"
    )
    assert out.startswith("[session-memory | trust:file]\n"), out
    assert f"Resuming `{DEMO_PROJECT_NAME}`" in out
    assert _repository_files(audit["opened"] + audit["modules"]) == []

    fresh = project / "fresh-memory"
    fresh.mkdir()
    save_args = [
        "save",
        "--memory-dir",
        str(fresh),
        "--project-name",
        "e2e-check",
        "--session-timestamp",
        "2026-01-02-03-04",
        "--status",
        "paused",
        "--last-checkpoint",
        "CP-S1",
    ]
    out, audit = _audited(
        installed["ski-memory-manager"], save_args, env, project, reports / "save.json"
    )
    written = fresh / "2026-01-02-03-04-e2e-check.md"
    assert out.strip() == str(written)
    assert written.is_file()
    assert _repository_files(audit["opened"] + audit["modules"]) == []
