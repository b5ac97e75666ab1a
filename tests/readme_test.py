"""README.md and the pages it links to are checked against the code: every command they show is
run.

The pages are docs/*.md and the skills' references/*.md. Commands are the `$ ` lines of their
```console blocks (a trailing backslash continues a command
on the next line); the lines after a command, up to the next command or the end of the block,
are its expected stdout, compared exactly, where a line `...` stands for any number of lines.
Commands run from the repository root, README.md's first and then each page's in the order of
PAGES, with this interpreter's environment first on PATH (a page may use the scratch copy the
README's examples made). Everything an example writes goes under SCRATCH, which the test points at a
temporary directory; the repository's files must be unchanged afterwards.

Commands that need something this test does not do (a network install, the whole suite) are
listed in COVERED_ELSEWHERE with the test module that exercises them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from conftest import LOADER_DIR, ROOT
from project_memory_loader.core.pm_limits import HARD_CAP, TOKEN_TARGET
from support import clean_env, git_env, run_command

README = ROOT / "README.md"
PAGES = [
    README,
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "skills").glob("*/references/*.md")),
]
DEMO = ROOT / "examples" / "demo-project"
LOADER = LOADER_DIR / "permanent_memory.py"
SCRATCH = "/tmp/billing-api"
TIMEOUT = 120
DEMO_COMMAND = "python3 scripts/dev.py demo"
TEST_COMMAND = "python3 scripts/dev.py test"

# Command prefix -> the test module that runs it (or what it stands for).
COVERED_ELSEWHERE = {
    DEMO_COMMAND: "tests/readme_test.py",  # test_first_command_shows_both_blocks below
    TEST_COMMAND: "tests/dev_test.py",  # and .ci/run runs it verbatim
    "python3 -m pip install": "tests/pip_install_test.py",
    "python3 scripts/dev.py skill-zips": "tests/skill_zips_test.py",  # writes dist/skills/
    # skillmds' Codex target, checked with the real Codex CLI listing the installed skills.
    "npx skillmds add project-memory/project-memory --project --agent codex": (
        "tests/e2e_codex_test.py"
    ),
    "npx skillmds add": "tests/e2e_skillmds_test.py",
    "codex ": "tests/e2e_codex_test.py",  # runs the README's codex lines in the real Codex CLI
}


class Example(NamedTuple):
    line: int  # 1-based line of the command in its page
    command: str
    expected: list[str]
    page: str = "README.md"  # relative to the repository root


def console_examples(markdown: str, page: str = "README.md") -> list[Example]:
    examples: list[Example] = []
    in_block = False
    current: Example | None = None
    continuing = False
    for number, line in enumerate(markdown.splitlines(), start=1):
        fence = line.strip()
        if not in_block:
            in_block = fence == "```console"
            continue
        if fence.startswith("```"):
            in_block = False
            current = None
            continue
        if continuing and current is not None:
            command = current.command + "\n" + line
            current = current._replace(command=command)
            examples[-1] = current
            continuing = line.endswith("\\")
        elif line.startswith("$ "):
            current = Example(number, line[2:], [], page)
            examples.append(current)
            continuing = line.endswith("\\")
        elif current is not None:
            current.expected.append(line)
    for example in examples:
        while example.expected and not example.expected[-1]:
            example.expected.pop()
    return examples


def covered_elsewhere(command: str) -> str | None:
    for prefix, test_module in COVERED_ELSEWHERE.items():
        if command.startswith(prefix):
            return test_module
    return None


def output_matches(expected: list[str], actual: list[str]) -> bool:
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(output_matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and actual[0] == head and output_matches(rest, actual[1:])


README_EXAMPLES = console_examples(README.read_text(encoding="utf-8"))
EXAMPLES = [
    example
    for page in PAGES
    for example in console_examples(
        page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix()
    )
]
RUN = [e for e in EXAMPLES if covered_elsewhere(e.command) is None]


def _tree_digest(*folders: Path) -> str:
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


class Scratch:
    """Where this process runs the examples (`path`, which stands for SCRATCH; its parent is
    their HOME), and how many of RUN, in order, have run there."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.restart()

    def restart(self) -> None:
        self.path = self.factory.mktemp("readme") / "billing-api"
        self.ran = 0


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scratch]:
    before = _tree_digest(ROOT / "examples", ROOT / "skills")
    yield Scratch(tmp_path_factory)
    assert _tree_digest(ROOT / "examples", ROOT / "skills") == before, (
        "a README or page example wrote into the repository"
    )


def _env(home: Path) -> dict[str, str]:
    # No CLAUDE_* or git config of the user's; HOME and the caches under `home` (the git section
    # runs real git); this interpreter's environment first on PATH.
    env = git_env(home)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def test_readme_has_console_examples() -> None:
    assert len(RUN) >= 8, [e.command for e in EXAMPLES]
    assert len([e for e in README_EXAMPLES if covered_elsewhere(e.command) is None]) >= 4
    # The pages moved out of the README keep theirs.
    pages = {e.page for e in RUN}
    assert {"docs/team-memory.md", "docs/budget.md", "docs/usage.md"} <= pages, pages


def test_readme_states_exactly_two_commands_first() -> None:
    assert [e.command for e in EXAMPLES[:2]] == [DEMO_COMMAND, TEST_COMMAND]
    text = README.read_text(encoding="utf-8")
    assert text.count(f"$ {DEMO_COMMAND}\n") == 1
    assert text.count(f"$ {TEST_COMMAND}\n") == 1


def test_every_covered_elsewhere_entry_is_used_and_its_test_exists() -> None:
    for prefix, test_module in COVERED_ELSEWHERE.items():
        assert (ROOT / test_module).is_file(), test_module
        # A stale entry could hide a README command that nobody runs any more.
        assert any(e.command.startswith(prefix) for e in EXAMPLES), prefix


def test_examples_write_only_under_scratch() -> None:
    for example in RUN:
        for match in re.finditer(r"(?<![\w.-])/tmp/[\w.-]+", example.command):
            assert match.group(0) == SCRATCH, (example.line, example.command)


def run_example(example: Example, scratch: Path) -> subprocess.CompletedProcess[str]:
    command = example.command.replace(SCRATCH, str(scratch))
    result = subprocess.run(
        ["bash", "-c", "set -o pipefail\n" + command],
        cwd=ROOT,
        env=_env(scratch.parent),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT,
        check=False,
    )
    where = f"{example.page}:{example.line}"
    assert result.returncode == 0, f"{where}: {example.command}\n{result.stderr}"
    return result


@pytest.mark.parametrize("example", RUN, ids=[f"{e.page}:{e.line}" for e in RUN])
def test_readme_command(example: Example, scratch: Scratch) -> None:
    # Each example sees what the ones before it did. Under pytest-xdist another worker may have
    # run some of those (and checked their output): they run again here first, in order, and
    # on a fresh copy when this worker was handed an earlier example than its last.
    index = RUN.index(example)
    if index < scratch.ran:
        scratch.restart()
    for earlier in RUN[scratch.ran : index]:
        run_example(earlier, scratch.path)
    scratch.ran = index + 1
    result = run_example(example, scratch.path)
    where = f"{example.page}:{example.line}"
    actual = result.stdout.replace(str(scratch.path), SCRATCH).rstrip("\n").split("\n")
    if actual == [""]:
        actual = []
    if example.expected:
        assert output_matches(example.expected, actual), (
            f"{where}: {example.command}\n"
            + "expected:\n"
            + "\n".join(example.expected)
            + "\nactual:\n"
            + "\n".join(actual)
        )


# --- the parser itself -------------------------------------------------------------------------


def test_console_examples_parsing() -> None:
    markdown = (
        "text\n```console\n$ echo a \\\n  b\na b\n\n$ true\n```\n"
        "```text\n$ not a command\n```\n```console\n$ printf 'x\\n\\n'\nx\n\n```\n"
    )
    assert console_examples(markdown) == [
        Example(3, "echo a \\\n  b", ["a b"]),
        Example(7, "true", []),
        Example(13, "printf 'x\\n\\n'", ["x"]),
    ]
    assert console_examples("```console\n$ true\n```\n", "docs/x.md") == [
        Example(2, "true", [], "docs/x.md")
    ]


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ([], [], True),
        (["a"], ["a"], True),
        (["a"], ["b"], False),
        (["a"], ["a", "b"], False),
        (["a", "...", "d"], ["a", "b", "c", "d"], True),
        (["a", "...", "d"], ["a", "d"], True),
        (["a", "...", "d"], ["a", "b"], False),
        (["..."], [], True),
    ],
)
def test_output_matches(expected: list[str], actual: list[str], matches: bool) -> None:
    assert output_matches(expected, actual) is matches


# --- the first command, as a newcomer runs it --------------------------------------------------

RESUME = re.compile(
    r"^Resuming `billing-api` \(last touched \d+ (minute|hour|day)s? ago, "
    r"status: in-progress at CP-S2\)$",
    re.MULTILINE,
)


def _check_demo_output(stdout: str) -> None:
    permanent, _, session = stdout.partition("\n\n[session-memory | trust:file]\n")
    assert permanent.startswith("[permanent-memory | trust:file]\n"), stdout
    assert "Epic FEAT-013 (Dunning and card retries):" in permanent
    assert "(>90d may be outdated) Epic FEAT-002 (Invoice PDF rendering):" in permanent
    # The demo's memory needs degrading at the default budget; the block says so last.
    assert permanent.splitlines()[-1].startswith("(trimmed for the token budget"), permanent
    assert "Never change an invoice" not in stdout  # manual_overrides.md is never loaded
    assert RESUME.match(session), session
    assert "project-name: billing-api\n" in session
    assert "legacy-billing-api" not in session


@pytest.mark.parametrize("now", ["2026-11-29T12:00:00Z", "2036-01-01T00:00:00Z"])
def test_demo_memory_degrades_to_l2_at_the_default_budget(now: str) -> None:
    # Over the target at every level, and L2 within the hard cap both today and once every
    # epic is flagged stale (the demo runs with the real clock).
    result = subprocess.run(
        [
            sys.executable,
            str(LOADER),
            "load",
            "--project-dir",
            str(DEMO),
            "--now",
            now,
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
    )
    report = json.loads(result.stdout)
    levels = {name: level["tokens"] for name, level in report["levels"].items()}
    assert report["level"] == "L2", levels
    assert min(levels[name] for name in ("L0", "L1", "L2", "L3")) > TOKEN_TARGET, levels
    assert levels["L2"] <= HARD_CAP, levels


def test_readme_sample_of_the_demo_output_is_true_on_its_date() -> None:
    # The text block after "On 2026-11-29 the demo prints:" is the demo's output on that date.
    text = README.read_text(encoding="utf-8")
    lead = "On 2026-11-29 the demo prints:\n\n```text\n"
    start = text.index(lead) + len(lead)
    sample = text[start : text.index("```", start)].rstrip("\n").split("\n")
    now = "2026-11-29T12:00:00Z"
    manager = ROOT / "skills" / "ski-memory-manager" / "scripts" / "memory_manager.py"
    outputs = [
        subprocess.run(
            [sys.executable, *args, "--now", now],
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=True,
        ).stdout
        for args in (
            [str(LOADER), "load", "--project-dir", str(DEMO)],
            [
                str(manager),
                "load-last",
                "--memory-dir",
                str(DEMO / "memory"),
                "--project-name",
                "billing-api",
            ],
        )
    ]
    actual = "\n".join(outputs).rstrip("\n").split("\n")
    assert output_matches(sample, actual), "\n".join(actual)


def test_readme_first_epic_example_is_true() -> None:
    # The text block of "What it looks like": the ten-line file, then the block it gives.
    text = README.read_text(encoding="utf-8")
    lead = "```text\n$ cat examples/first-epic.md\n"
    start = text.index(lead) + len(lead)
    shown = text[start : text.index("```", start)]
    listed, command, block = re.match(
        r"(.*?)\$ (permanent-memory load .*?)\n(.*)", shown, re.S
    ).groups()
    assert listed == (ROOT / "examples" / "first-epic.md").read_text(encoding="utf-8")
    assert len(listed.splitlines()) == 10
    args = command.split()[1:]
    done = subprocess.run(
        [sys.executable, str(LOADER), *args], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert (done.stdout, done.stderr) == (block, "")


def test_first_command_shows_both_blocks() -> None:
    assert EXAMPLES[0].command == DEMO_COMMAND
    env = clean_env()
    result = run_command(["bash", "-c", DEMO_COMMAND], env=env, cwd=ROOT, timeout=600)
    assert result.code == 0, result.err
    assert "Traceback" not in result.err, result.err
    _check_demo_output(result.out)


def _fresh_machine_env(home: Path) -> dict[str, str]:
    # Only python3 (the base interpreter, not this venv) and the system tools on PATH; keep what
    # reaching PyPI through this network needs (proxy, CA bundle), nothing from the user's HOME.
    base_bin = Path(sys.base_prefix) / ("Scripts" if os.name == "nt" else "bin")
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(base_bin), "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
    }
    for key, value in os.environ.items():
        upper = key.upper()
        if upper.endswith("_PROXY") or upper in {
            "PIP_CERT",
            "PIP_INDEX_URL",
            "PIP_EXTRA_INDEX_URL",
            "PIP_DEFAULT_TIMEOUT",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "REQUESTS_CA_BUNDLE",
            "TMPDIR",
        }:
            env[key] = value
    return env


@pytest.mark.slow
def test_fresh_clone_in_an_empty_home(tmp_path: Path) -> None:
    git = shutil.which("git")
    if git is None:
        pytest.skip("git not found")
    clone = tmp_path / "project-memory"
    subprocess.run(
        [git, "clone", "--quiet", "--no-hardlinks", str(ROOT), str(clone)], check=True, timeout=120
    )
    home = tmp_path / "home"
    home.mkdir()
    result = run_command(
        ["bash", "-c", DEMO_COMMAND], env=_fresh_machine_env(home), cwd=clone, timeout=900
    )
    assert result.code == 0, result.err
    _check_demo_output(result.out)
    assert (clone / ".venv").is_dir()
    # Nothing written into the clone but the (ignored) venv and build metadata.
    status = subprocess.run(
        [git, "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    )
    assert status.stdout == ""


def test_demo_readme_add_load_archive(tmp_path: Path) -> None:
    readme = (DEMO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Writing permanent memory: add → load → archive", 1)[1]
    examples = console_examples(section)
    assert [e.command.split()[1] for e in examples if e.command.startswith("permanent-memory")] == [
        "load",
        "archive",
        "load",
    ]
    assert "permanent-memory add" in examples[1].command
    scratch = tmp_path / "billing-api"
    before = _tree_digest(DEMO)
    env = clean_env()
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    for example in examples:
        command = example.command.replace("/tmp/billing-api", str(scratch))
        result = run_command(["bash", "-c", command], env=env, cwd=ROOT, timeout=TIMEOUT)
        assert result.code == 0, (example.line, result.err)
        expected = [line.replace("/tmp/billing-api", str(scratch)) for line in example.expected]
        assert output_matches(expected, result.out.splitlines()), (example.line, result.out)
    assert _tree_digest(DEMO) == before
    assert (scratch / ".claude" / "memory" / "archive" / "2026-11-29.md").exists()
