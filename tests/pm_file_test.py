"""pm_file: finding and reading the permanent-memory file, bounded and regular files only."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from project_memory_loader.core import pm_file
from project_memory_loader.core.pm_render import SKIP_TOKENS
from project_memory_loader.core.pm_tokens import MAX_TOKEN_BYTES
from support import (
    ENV_PLANT,
    LOADER,
    LOADER_STAMP,
    MANAGER,
    OTHER_EPIC,
    SEED_MEMORY,
    SPECIAL_FILES,
    assert_no_traceback,
    clean_env,
    hook_payload,
    make_link,
    make_special,
    memory_file,
    other_project,
    outside_tree,
    refusal_problems,
    run,
    stderr_lines,
    tree_bytes,
)


def test_read_memory_file(tmp_path: Path) -> None:
    path = tmp_path / "permanent_memory.md"
    path.write_bytes(b"## Epic: A\n")
    assert pm_file.read_memory_file(str(path)) == (b"## Epic: A\n", 11)
    with open(path, "wb") as handle:
        handle.truncate(pm_file.CERTAIN_SKIP_BYTES + 1)
    assert pm_file.read_memory_file(str(path)) == (None, pm_file.CERTAIN_SKIP_BYTES + 1)
    with pytest.raises(FileNotFoundError):
        pm_file.read_memory_file(str(tmp_path / "missing"))
    with pytest.raises(NotADirectoryError):
        pm_file.read_memory_file(str(path / "below-a-file"))
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OSError, match="not a regular file"):
        pm_file.read_memory_file(str(tmp_path / "fifo"))


def test_the_skip_bound_is_the_skip_size_in_the_longest_tokens() -> None:
    assert pm_file.CERTAIN_SKIP_BYTES == SKIP_TOKENS * MAX_TOKEN_BYTES + 3
    assert pm_file.memory_path("/p") == os.path.join(
        "/p", ".claude", "memory", "permanent_memory.md"
    )


# ---------------------------------------------------------------------------------------------
# Files that are not regular files where the memory file is expected.


@pytest.mark.parametrize("kind", SPECIAL_FILES)
def test_loader_special_file(tmp_path: Path, kind: str) -> None:
    """The hook runs on every prompt with a 5 s timeout: no file type may hang or flood it."""
    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    make_special(proj / ".claude" / "memory" / "permanent_memory.md", kind)
    env = clean_env(tmp_path)
    for args, stdin in (
        (["hook"], hook_payload(proj, "x")),
        (["load", "--project-dir", str(proj)], b""),
    ):
        try:
            res = run(LOADER, args, env=env, stdin=stdin, timeout=8)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{args[0]} hung on a {kind} (hook timeout is 5 s)")
        assert_no_traceback(res, args[0])
        if args[0] == "hook" or res.code != 1:
            assert res.code == 0, (args[0], res.code, res.err)
        else:  # `load` may call an unreadable file an expected error: one line, exit 1
            assert len(stderr_lines(res.err)) == 1 and res.out == "", res.err
        assert res.seconds < 5, f"{args[0]} took {res.seconds:.1f}s on a {kind}"
        assert res.out == "" or res.out.startswith(LOADER_STAMP + "\n"), res.out[:300]
        assert len(res.out) <= 2000


# ---------------------------------------------------------------------------------------------
# Links out of the project. A clone may hold symbolic links to anywhere: every path the
# repository controls (.claude/memory/permanent_memory.md, .claude/memory, .claude, archive/) is
# refused when it leads outside the project, by the reading commands (pm_file) and the writing
# ones (pm_write_file), with one stderr line naming it and nothing read or written there. Paths
# the user sets (--file, --project-dir, plugin options) may point anywhere. The manager's side
# (memory/, its lock file) is in mm_store_test.

# name -> (what to link in the project, returns the path a refusal must name)
LOADER_LINKS: dict[str, Any] = {
    "file to another project": lambda proj, other: make_link(
        memory_file(proj), other / ".claude" / "memory" / "permanent_memory.md"
    ),
    "relative file link": lambda proj, other: make_link(
        memory_file(proj), "../../../other/.claude/memory/permanent_memory.md"
    ),
    ".claude/memory to another project": lambda proj, other: (
        make_link(proj / ".claude" / "memory", other / ".claude" / "memory") / "permanent_memory.md"
    ),
    ".claude to another project": lambda proj, other: (
        make_link(proj / ".claude", other / ".claude") / "memory" / "permanent_memory.md"
    ),
    "link chain leaving the project": lambda proj, other: make_link(
        memory_file(proj),
        make_link(proj / "docs" / "notes.md", other / ".claude/memory/permanent_memory.md"),
    ),
    "/proc/self/environ": lambda proj, other: make_link(memory_file(proj), "/proc/self/environ"),
    "dangling link out of the project": lambda proj, other: make_link(
        memory_file(proj), other / "not-yet-there.md"
    ),
}
LOADER_READS = {
    "hook": ["hook"],
    "load": ["load"],
    "load json": ["load", "--format", "json"],
    "load explain": ["load", "--explain"],
    "inspect": ["inspect"],
    "check": ["check"],
    "doctor": ["doctor"],
}
LOADER_READ_CASES = [(link, cmd) for link in LOADER_LINKS for cmd in LOADER_READS]


@pytest.mark.parametrize(("link", "command"), LOADER_READ_CASES)
def test_loader_refuses_project_paths_that_lead_outside(
    tmp_path: Path, link: str, command: str
) -> None:
    other = other_project(tmp_path)
    proj = tmp_path / "proj"
    proj.mkdir()
    refused = LOADER_LINKS[link](proj, other)
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(proj), PM_PLANT=ENV_PLANT)
    before = outside_tree(tmp_path)
    argv = LOADER_READS[command]
    stdin = hook_payload(proj, "s", "SessionStart") if command == "hook" else b""
    res = run(LOADER, argv, env=env, stdin=stdin)
    assert_no_traceback(res, command)
    problems = refusal_problems(res, refused, hook=command == "hook", doctor=command == "doctor")
    assert not problems, (problems, res)
    assert outside_tree(tmp_path) == before


def _archive_link(proj: Path, other: Path) -> Path:
    memory_file(proj).parent.mkdir(parents=True)
    memory_file(proj).write_bytes(SEED_MEMORY)
    return make_link(
        proj / ".claude" / "memory" / "archive", other / ".claude" / "memory" / "archive"
    )


ADD_INPUT = json.dumps({"id": "NEW-1", "intent": "new epic", "decisions": ["d"]})
LOADER_WRITE_CASES: dict[str, tuple[Any, list[str]]] = {
    "add through .claude/memory": (
        LOADER_LINKS[".claude/memory to another project"],
        ["add", "--input", "-", "--tokenizer", "estimate"],
    ),
    "add through .claude": (
        LOADER_LINKS[".claude to another project"],
        ["add", "--input", "-", "--tokenizer", "estimate"],
    ),
    "add through a dangling .claude/memory": (
        lambda proj, other: (
            make_link(proj / ".claude" / "memory", other / "new-memory") / "permanent_memory.md"
        ),
        ["add", "--input", "-", "--tokenizer", "estimate"],
    ),
    "archive through .claude/memory": (
        LOADER_LINKS[".claude/memory to another project"],
        ["archive", "--max-tokens", "1", "--tokenizer", "estimate", "--now", "2026-06-01"],
    ),
    "archive into a linked archive/": (
        _archive_link,
        ["archive", "--max-tokens", "1", "--tokenizer", "estimate", "--now", "2026-06-01"],
    ),
}


@pytest.mark.parametrize("case", sorted(LOADER_WRITE_CASES))
def test_loader_writes_nothing_through_links_out_of_the_project(tmp_path: Path, case: str) -> None:
    other = other_project(tmp_path)
    proj = tmp_path / "proj"
    proj.mkdir()
    make, argv = LOADER_WRITE_CASES[case]
    refused = make(proj, other)
    if "archive/" in case:
        refused = refused / "2026-06-01.md"
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(proj))
    before = outside_tree(tmp_path)
    inside_before = dict(tree_bytes(proj))
    res = run(LOADER, argv, env=env, stdin=ADD_INPUT.encode())
    assert_no_traceback(res, case)
    assert not refusal_problems(res, refused, hook=False), res
    assert outside_tree(tmp_path) == before, "written outside the project"
    assert dict(tree_bytes(proj)) == inside_before


def test_paths_the_user_sets_may_point_anywhere(tmp_path: Path) -> None:
    other = other_project(tmp_path)
    proj = tmp_path / "proj"
    proj.mkdir()
    link = make_link(proj / "linked.md", other / ".claude" / "memory" / "permanent_memory.md")
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(proj))
    res = run(LOADER, ["load", "--file", str(link), "--now", "2026-06-01"], env=env)
    assert res.code == 0 and "OTHER-1 (other-project-plan-7731)" in res.out, res
    res = run(LOADER, ["load", "--project-dir", str(other), "--now", "2026-06-01"], env=env)
    assert res.code == 0 and "OTHER-1 (other-project-plan-7731)" in res.out, res
    # The memory-dir plugin option is the user's too, even when it is relative to the project.
    option = clean_env(
        tmp_path, CLAUDE_PROJECT_DIR=str(proj), CLAUDE_PLUGIN_OPTION_MEMORY_DIR="../other/memory"
    )
    res = run(MANAGER, ["hook"], env=option, stdin=hook_payload(proj, "s", "SessionStart"))
    assert res.code == 0 and "other-project-session-7731" in res.out, res
    res = run(MANAGER, ["load-last", "--project-name", "proj"], env=option)
    assert res.code == 0 and "other-project-session-7731" in res.out, res
    # A link that stays inside the project is followed.
    inner = tmp_path / "inner"
    (inner / "docs").mkdir(parents=True)
    (inner / "docs" / "memory.md").write_text(OTHER_EPIC)
    make_link(memory_file(inner), "../../docs/memory.md")
    res = run(LOADER, ["load", "--project-dir", str(inner), "--now", "2026-06-01"], env=env)
    assert res.code == 0 and "OTHER-1 (other-project-plan-7731)" in res.out, res
