# Faults: disk full and I/O errors in the write path, read-only memory dirs (real ones, in a
# private mount namespace, and as an unprivileged user), symbolic links, broken caches. Each:
# a clear error or a graceful fallback, the previous data intact, hooks exit 0 with the right
# block.
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from support import (
    FAULT_SESSION,
    LOADER,
    LOADER_STAMP,
    MANAGER,
    SEED_MEMORY,
    SESSION_STAMP,
    assert_no_traceback,
    call_main,
    call_save,
    clean_env,
    clear_claude_env,
    hook_context,
    hook_payload,
    module,
    run,
    save_input,
    snapshot_files,
    stderr_lines,
    tree_bytes,
)

# ---------------------------------------------------------------------------------------------
# Symbolic links.


def test_memory_dir_symlink_works_when_the_user_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--memory-dir is the user's: a link there is followed wherever it leads. The project's own
    memory/ is the repository's: the same link there leads outside the project and is refused
    (a clone must not resume another project's session)."""
    mm = module("memory_manager")
    clear_claude_env(monkeypatch)
    real = tmp_path / "elsewhere" / "real-memory"
    real.mkdir(parents=True)
    proj = tmp_path / "proj"
    proj.mkdir()
    link = proj / "memory"
    link.symlink_to(real, target_is_directory=True)
    res = call_save(mm, link, save_input("THROUGH LINK"))
    assert res.code == 0, res.err
    assert link.is_symlink()
    assert [p.name for p in snapshot_files(real)] == [f"{FAULT_SESSION}-proj.md"]
    res2 = call_save(mm, link, save_input("SECOND", step="S2"))
    assert res2.code == 0, res2.err
    assert link.is_symlink(), "the memory-dir link was replaced"
    ll = call_main(mm, ["load-last", "--memory-dir", str(link), "--project-name", "proj"])
    assert ll.code == 0 and "SECOND" in ll.out and "- S1: THROUGH LINK" in ll.out, ll.out
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(proj))
    hook = call_main(
        mm,
        ["hook"],
        stdin=json.dumps(
            {
                "session_id": "s",
                "hook_event_name": "SessionStart",
                "source": "startup",
                "cwd": str(proj),
            }
        ).encode(),
    )
    assert (hook.code, hook.out) == (0, ""), (hook.out, hook.err)
    assert hook.err == (
        f"ski-memory-manager hook: memory directory {link} leads outside the project (to "
        f"{real}); refused: pass --memory-dir {real} to use it on purpose\n"
    )


OUTSIDE = """---
schema_version: 1.1
project-name: proj
session: 2026-06-01-10-00
mode: architect
status: in-progress
last-checkpoint: CP-S9
last_session_at: '2026-06-01T10:00:00Z'
updated_at: '2026-06-01T10:00:00Z'
---

## Session summary
OUTSIDE-SECRET-CONTENT

## Steps completed
- S9: outside

## Active state
outside

## Key decisions
- outside
"""


def test_snapshot_symlink_to_outside_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot name that is a link to a file outside the memory dir (say, committed to a repo
    by someone else) must not be shown, nor merged from, nor written through."""
    mm = module("memory_manager")
    clear_claude_env(monkeypatch)
    outside = tmp_path / "outside" / "private.md"
    outside.parent.mkdir()
    outside.write_text(OUTSIDE)
    proj = tmp_path / "proj"
    mem = proj / "memory"
    mem.mkdir(parents=True)
    assert call_save(mm, mem, save_input("OLDER REAL ONE", "2026-01-01-10-00")).code == 0
    link = mem / "2026-06-01-10-00-proj.md"
    link.symlink_to(outside)
    ll = call_main(mm, ["load-last", "--memory-dir", str(mem), "--project-name", "proj"])
    assert_no_traceback(ll, "load-last")
    assert ll.code == 0
    assert "OUTSIDE-SECRET-CONTENT" not in ll.out, "load-last followed a link out of the memory dir"
    assert "OLDER REAL ONE" in ll.out, "the next newest real snapshot should be shown"
    assert len(stderr_lines(ll.err)) == 1, ll.err
    for argv in (
        ["list", "--memory-dir", str(mem)],
        ["list", "--memory-dir", str(mem), "--project-name", "proj"],
    ):
        res = call_main(mm, argv)
        assert res.code == 0 and "OUTSIDE-SECRET-CONTENT" not in res.out
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(proj))
    hook = call_main(
        mm, ["hook"], stdin=b'{"hook_event_name": "SessionStart", "source": "startup"}'
    )
    assert hook.code == 0 and "OUTSIDE-SECRET-CONTENT" not in hook.out
    # Saving that session: the outside file is never written through nor merged from.
    res = call_save(mm, mem, save_input("NEW", "2026-06-01-10-00", "S2"))
    assert_no_traceback(res, "save")
    assert outside.read_text() == OUTSIDE, "save wrote through a symbolic link"
    if res.code == 0:
        assert not link.is_symlink()
        assert "OUTSIDE-SECRET-CONTENT" not in link.read_text(), "save merged an outside file"
    else:
        assert len(stderr_lines(res.err)) == 1 and link.is_symlink()


# ---------------------------------------------------------------------------------------------
# Files that are not regular files where a memory file is expected.

SPECIAL_FILES = ["fifo", "dev-zero-link", "directory", "sparse-2g", "dangling-link"]


def make_special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero-link":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "sparse-2g":
        with open(path, "wb") as handle:
            handle.truncate(2 * 1024**3)
    elif kind == "dangling-link":
        path.symlink_to(path.parent / "nowhere.md")


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


@pytest.mark.parametrize("kind", SPECIAL_FILES)
def test_manager_special_snapshot(tmp_path: Path, kind: str) -> None:
    mem = tmp_path / "proj" / "memory"
    mem.mkdir(parents=True)
    env = clean_env(tmp_path)
    src = tmp_path / "in.json"
    src.write_text(json.dumps(save_input("REAL OLDER ONE")))
    assert run(MANAGER, ["save", "--memory-dir", str(mem), "--input", str(src)], env=env).code == 0
    make_special(mem / "2026-06-01-10-00-proj.md", kind)
    for args in (
        ["load-last", "--memory-dir", str(mem), "--project-name", "proj"],
        ["list", "--memory-dir", str(mem)],
        ["hook"],
    ):
        stdin = hook_payload(tmp_path / "proj", "x", "SessionStart") if args == ["hook"] else b""
        try:
            res = run(MANAGER, args, env=env, stdin=stdin, timeout=8, cwd=tmp_path / "proj")
        except subprocess.TimeoutExpired:
            pytest.fail(f"{args[0]} hung on a {kind}")
        assert_no_traceback(res, args[0])
        assert res.code == 0 and res.seconds < 5
        if args[0] in ("load-last", "hook"):
            assert "REAL OLDER ONE" in res.out, (args[0], res.out[:300], res.err)
    # Saving into that session must fail cleanly, never write through or replace a non-file.
    src.write_text(json.dumps(save_input("NEW", "2026-06-01-10-00", "S2")))
    try:
        res = run(
            MANAGER, ["save", "--memory-dir", str(mem), "--input", str(src)], env=env, timeout=8
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"save hung on a {kind}")
    assert_no_traceback(res, "save")
    if kind in ("fifo", "directory", "sparse-2g"):
        assert res.code == 1 and len(stderr_lines(res.err)) == 1, (res.code, res.err)


# ---------------------------------------------------------------------------------------------
# The loader's writing commands under the same faults: archive writes two files (the archive,
# then the shortened memory file); a fault at either step must lose no epic.


def _epic_ids(text: str) -> list[str]:
    return [ln.split()[2] for ln in text.split("\n") if ln.startswith("## Epic: ")]


@pytest.mark.parametrize("target", ["os.write", "os.fsync", "os.replace"])
@pytest.mark.parametrize("nth", [1, 2], ids=["first-file", "second-file"])
@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EIO], ids=["ENOSPC", "EIO"])
def test_archive_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, nth: int, err: int
) -> None:
    pm = module("permanent_memory")
    clear_claude_env(monkeypatch)
    proj = tmp_path / "proj"
    memdir = proj / ".claude" / "memory"
    memdir.mkdir(parents=True)
    body = " ".join(["decision"] * 60)
    original = "".join(
        f"## Epic: E-{i:03d} — intent {i}\n**Completed:** 2025-01-{1 + i:02d}\n\n"
        f"### Architectural decisions\n- {body} {i}\n\n"
        for i in range(25)
    )
    (memdir / "permanent_memory.md").write_text(original, encoding="utf-8")
    real = {"os.write": os.write, "os.fsync": os.fsync, "os.replace": os.replace}[target]
    calls = {"failed": 0}
    # The nth file the command writes (by its temp file's path; fd numbers are reused).
    seen: list[str] = []

    def faulty(*args: Any, **kw: Any) -> Any:
        if target == "os.replace":
            name = str(args[1])
        else:
            try:
                name = os.readlink(f"/proc/self/fd/{args[0]}")
            except OSError:
                return real(*args, **kw)
            if ".tmp-" not in name:
                return real(*args, **kw)  # stdout, stderr, a directory fsync
        if name not in seen:
            seen.append(name)
        if len(seen) == nth and not calls["failed"]:
            calls["failed"] += 1
            raise OSError(err, os.strerror(err))
        return real(*args, **kw)

    args = [
        "archive",
        "--project-dir",
        str(proj),
        "--max-tokens",
        "1500",
        "--tokenizer",
        "estimate",
    ]
    with monkeypatch.context() as mp:
        mp.setattr(os, target.split(".")[1], faulty)
        res = call_main(pm, args)
    assert_no_traceback(res, "archive")
    if not calls["failed"]:
        pytest.skip(f"archive makes fewer than {nth} {target} calls")
    assert res.code == 1, (res.code, res.err)
    errors = [ln for ln in stderr_lines(res.err) if not ln.startswith(("warning:", "note:"))]
    assert len(errors) == 1, res.err
    kept = _epic_ids((memdir / "permanent_memory.md").read_text(encoding="utf-8"))
    archived = [
        eid
        for f in sorted((memdir / "archive").glob("*.md"))
        if (memdir / "archive").is_dir()
        for eid in _epic_ids(f.read_text(encoding="utf-8"))
    ]
    assert set(_epic_ids(original)) <= set(kept) | set(archived), "an epic was lost"
    assert len(archived) == len(set(archived))
    assert [p.name for p in memdir.iterdir() if ".tmp-" in p.name] == []
    # With the fault gone, a rerun completes and leaves each epic in exactly one place.
    again = call_main(pm, args)
    assert again.code == 0, again.err
    kept = _epic_ids((memdir / "permanent_memory.md").read_text(encoding="utf-8"))
    archived = [
        eid
        for f in sorted((memdir / "archive").glob("*.md"))
        for eid in _epic_ids(f.read_text(encoding="utf-8"))
    ]
    assert sorted(kept + archived) == sorted(_epic_ids(original))


# ---------------------------------------------------------------------------------------------
# Links out of the project. A clone may hold symbolic links to anywhere: every path the
# repository controls (.claude/memory/..., memory/..., the lock file, archive/) is refused when
# it leads outside the project, with one stderr line naming it and nothing read or written
# there. Paths the user sets (--file, --memory-dir, plugin options) may point anywhere.

OTHER_EPIC = "## Epic: OTHER-1 \u2014 other-project-plan-7731\n**Completed:** 2026-05-01\n\n"
OTHER_EPIC += "### Architectural decisions\n- other-project-decision-7731\n"
OTHER_SESSION = OUTSIDE.replace("OUTSIDE-SECRET-CONTENT", "other-project-session-7731")
OTHER_MARKS = ("7731", "environ-marker-5519")
# An environment value can hold a whole epic; through /proc/self/environ it would be injected.
ENV_PLANT = "\n## Epic: ENV-1 \u2014 environ-marker-5519\n### Gotchas discovered\n- x\n"


def other_project(tmp_path: Path) -> Path:
    other = tmp_path / "other"
    (other / ".claude" / "memory").mkdir(parents=True)
    (other / ".claude" / "memory" / "permanent_memory.md").write_text(OTHER_EPIC)
    (other / ".claude" / "memory" / "archive").mkdir()
    (other / "memory").mkdir()
    (other / "memory" / "2026-06-01-10-00-proj.md").write_text(OTHER_SESSION)
    return other


def make_link(path: Path, target: str | Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


def permanent_file(proj: Path) -> Path:
    return proj / ".claude" / "memory" / "permanent_memory.md"


# name -> (what to link in the project, returns the path a refusal must name)
LOADER_LINKS: dict[str, Any] = {
    "file to another project": lambda proj, other: make_link(
        permanent_file(proj), other / ".claude" / "memory" / "permanent_memory.md"
    ),
    "relative file link": lambda proj, other: make_link(
        permanent_file(proj), "../../../other/.claude/memory/permanent_memory.md"
    ),
    ".claude/memory to another project": lambda proj, other: (
        make_link(proj / ".claude" / "memory", other / ".claude" / "memory") / "permanent_memory.md"
    ),
    ".claude to another project": lambda proj, other: (
        make_link(proj / ".claude", other / ".claude") / "memory" / "permanent_memory.md"
    ),
    "link chain leaving the project": lambda proj, other: make_link(
        permanent_file(proj),
        make_link(proj / "docs" / "notes.md", other / ".claude/memory/permanent_memory.md"),
    ),
    "/proc/self/environ": lambda proj, other: make_link(permanent_file(proj), "/proc/self/environ"),
    "dangling link out of the project": lambda proj, other: make_link(
        permanent_file(proj), other / "not-yet-there.md"
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


def outside_tree(tmp_path: Path) -> dict[str, bytes | str]:
    """Everything outside the project (the hook's cache dirs excepted), with contents."""
    found: dict[str, bytes | str] = {}
    for dirpath, dirs, files in os.walk(tmp_path):
        rel = os.path.relpath(dirpath, tmp_path)
        if rel.split(os.sep)[0] in ("proj", "plugin-data", "xdg", "home"):
            dirs[:] = []
            continue
        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            found[os.path.relpath(path, tmp_path)] = (
                os.readlink(path) if os.path.islink(path) else Path(path).read_bytes()
            )
    return found


def refusal_problems(res: Any, refused: Path, *, hook: bool, doctor: bool = False) -> list[str]:
    problems = []
    leaked = [mark for mark in OTHER_MARKS if mark in res.out + res.err]
    if leaked:
        problems.append(f"outside content shown: {leaked}")
    lines = stderr_lines(res.err)
    if doctor:
        fail = [ln for ln in res.out.splitlines() if ln.startswith("FAIL") and str(refused) in ln]
        if not fail or "outside the project" not in fail[0]:
            problems.append(f"doctor does not explain the refusal: {res.out!r}")
        if res.code != 1:
            problems.append(f"doctor exit {res.code}")
        return problems
    if len(lines) != 1 or str(refused) not in lines[0] or "outside the project" not in lines[0]:
        problems.append(f"not one stderr line naming {refused}: {res.err!r}")
    if res.code != (0 if hook else 1):
        problems.append(f"exit {res.code}")
    if hook and res.out:
        problems.append(f"hook printed {res.out[:200]!r}")
    return problems


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
    permanent_file(proj).parent.mkdir(parents=True)
    permanent_file(proj).write_bytes(SEED_MEMORY)
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


MANAGER_LINKS: dict[str, Any] = {
    "memory/ to another project": lambda proj, other: make_link(proj / "memory", other / "memory"),
    "relative memory/ link": lambda proj, other: make_link(proj / "memory", "../other/memory"),
    "memory/ dangling out of the project": lambda proj, other: make_link(
        proj / "memory", other / "memory-to-be"
    ),
}
MANAGER_COMMANDS = {
    "hook": ["hook"],
    "load-last": ["load-last", "--project-name", "proj"],
    "load-last json": ["load-last", "--project-name", "proj", "--format", "json"],
    "list": ["list"],
    "doctor": ["doctor"],
    "save": ["save", "--project-name", "proj", "--session-timestamp", "2026-06-01-10-00"],
}
MANAGER_CASES = [(link, cmd) for link in MANAGER_LINKS for cmd in MANAGER_COMMANDS]


@pytest.mark.parametrize(("link", "command"), MANAGER_CASES)
def test_manager_refuses_a_memory_dir_that_leads_outside(
    tmp_path: Path, link: str, command: str
) -> None:
    other = other_project(tmp_path)
    proj = tmp_path / "proj"
    proj.mkdir()
    refused = MANAGER_LINKS[link](proj, other)
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(proj))
    before = outside_tree(tmp_path)
    stdin = hook_payload(proj, "s", "SessionStart") if command == "hook" else b""
    res = run(MANAGER, MANAGER_COMMANDS[command], env=env, stdin=stdin, cwd=proj)
    assert_no_traceback(res, command)
    problems = refusal_problems(res, refused, hook=command == "hook", doctor=command == "doctor")
    assert not problems, (problems, res)
    assert outside_tree(tmp_path) == before, "written outside the project"


@pytest.mark.parametrize("memory_flag", [False, True])
def test_a_dangling_lock_link_creates_nothing_outside(tmp_path: Path, memory_flag: bool) -> None:
    other = other_project(tmp_path)
    proj = tmp_path / "proj"
    lock = make_link(proj / "memory" / ".ski-memory.lock", other / "planted.lock")
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(proj))
    argv = ["save", "--project-name", "proj", "--session-timestamp", "2026-06-01-10-00"]
    if memory_flag:  # even a memory dir the user names: the lock file is never a link
        argv += ["--memory-dir", str(proj / "memory")]
    res = run(MANAGER, argv, env=env, stdin=b"")
    assert_no_traceback(res, "save")
    assert not (other / "planted.lock").exists(), "save created the lock link's target"
    assert (res.code, res.out) == (1, "")
    assert res.err == f"cannot lock {lock}: it is a symbolic link; refused\n"
    assert snapshot_files(proj / "memory") == []


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
    make_link(permanent_file(inner), "../../docs/memory.md")
    res = run(LOADER, ["load", "--project-dir", str(inner), "--now", "2026-06-01"], env=env)
    assert res.code == 0 and "OTHER-1 (other-project-plan-7731)" in res.out, res


# ---------------------------------------------------------------------------------------------
# The process boundary: a stdout that cannot take the text, a closed stdout, no temporary
# directory, a tokenizer that panics. Hooks exit 0 with the block (in UTF-8, which is what
# Claude Code reads) or with nothing; commands print or give one `error:` line, never a traceback.

UNICODE_MEMORY = (
    "## Epic: CAF\u00c9-1 \u2014 na\u00efve \u2713 d\u00e9cisions\n**Completed:** 2026-05-01\n\n"
    "### Gotchas discovered\n- caf\u00e9 \u2713 \u2014 \u201cquoted\u201d\n"
).encode()
UNICODE_SNAPSHOT_INPUT = {
    "session_summary": "caf\u00e9 \u2713 \u2014 na\u00efve",
    "mode": "architect",
    "status": "in-progress",
}
# (name, environment, interpreter flags): each makes sys.stdout's encoding one that cannot show
# the text above.
UNENCODABLE_STDOUT = [
    ("ascii", {"PYTHONIOENCODING": "ascii"}, []),
    ("cp1252-pipe", {"PYTHONIOENCODING": "cp1252"}, []),
    ("c-locale-no-utf8-mode", {"LC_ALL": "C", "PYTHONUTF8": "0"}, ["-X", "utf8=0"]),
]
REFUSED = "error: cannot print the results: stdout's encoding ({}) cannot show them; set "
REFUSED += "PYTHONIOENCODING=utf-8"


@pytest.fixture
def unicode_project(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(UNICODE_MEMORY)
    (proj / "memory").mkdir()
    saved = run(
        MANAGER,
        [
            *("save", "--memory-dir", str(proj / "memory"), "--project-name", "demo"),
            *("--session-timestamp", "2026-01-01-10-00", "--input", "-"),
        ],
        env=clean_env(tmp_path),
        stdin=json.dumps(UNICODE_SNAPSHOT_INPUT).encode(),
    )
    assert saved.code == 0, saved.err
    return proj


def _run_raw(
    argv: list[str], env: dict[str, str], stdin: bytes, **kwargs: Any
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, *argv], input=stdin, env=env, timeout=60, check=False, **kwargs
    )


def _boundary_commands(proj: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (argv after the interpreter, stamp of a hook's block or "" for a command)."""
    memory = str(proj / "memory")
    return {
        "manager hook": ([str(MANAGER), "hook"], SESSION_STAMP),
        "load-last": (
            [str(MANAGER), "load-last", "--memory-dir", memory, "--project-name", "demo"],
            "",
        ),
        "loader hook": ([str(LOADER), "hook"], LOADER_STAMP),
        "load": ([str(LOADER), "load", "--project-dir", str(proj)], ""),
        "inspect": ([str(LOADER), "inspect", "--project-dir", str(proj)], ""),
    }


@pytest.mark.parametrize("variant", UNENCODABLE_STDOUT, ids=[v[0] for v in UNENCODABLE_STDOUT])
def test_stdout_that_cannot_encode_the_text(
    variant: tuple[str, dict[str, str], list[str]], unicode_project: Path, tmp_path: Path
) -> None:
    name, extra, flags = variant
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(unicode_project), **extra)
    payload = hook_payload(unicode_project, f"enc-{name}", "SessionStart")
    encoding = "cp1252" if name == "cp1252-pipe" else "ascii"
    for what, (argv, stamp) in _boundary_commands(unicode_project).items():
        proc = _run_raw([*flags, *argv], env, payload, capture_output=True)
        err = proc.stderr.decode("utf-8", "replace")
        assert "Traceback" not in err, f"{what}: {err}"
        if stamp:
            assert proc.returncode == 0, f"{what}: exit {proc.returncode}: {err}"
            out = proc.stdout.decode("utf-8")  # raises if the hook did not write UTF-8
            context = hook_context(out, payload)
            assert context.startswith(stamp + "\n") and "caf\u00e9" in context, f"{what}: {out!r}"
        else:
            assert (proc.returncode, proc.stdout, err) == (1, b"", REFUSED.format(encoding) + "\n")


def test_closed_stdout(unicode_project: Path, tmp_path: Path) -> None:
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(unicode_project))
    payload = hook_payload(unicode_project, "closed-stdout", "SessionStart")
    for what, (argv, stamp) in _boundary_commands(unicode_project).items():
        # `>&-`: the child starts with file descriptor 1 closed, so sys.stdout is None.
        proc = _run_raw(
            [
                *("-c", "import os, sys; os.close(1); os.execv(sys.executable, sys.argv[1:])"),
                *(sys.executable, *argv),
            ],
            env,
            payload,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        err = proc.stderr.decode("utf-8", "replace")
        if stamp:
            assert (proc.returncode, err) == (0, ""), what
        else:
            assert (proc.returncode, err) == (
                1,
                "error: cannot print the results: stdout is closed\n",
            )


def test_no_usable_temporary_directory(
    unicode_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What tempfile raises when neither $TMPDIR, /tmp, /var/tmp nor the cwd can be written; the
    # encoding lookup asks for it to find tiktoken's cache.
    def no_tempdir() -> str:
        raise FileNotFoundError(errno.ENOENT, "No usable temporary directory found")

    monkeypatch.setattr(tempfile, "gettempdir", no_tempdir)
    for key in list(os.environ):
        if key.startswith(("CLAUDE_", "TIKTOKEN_", "DATA_GYM_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    pm = module("permanent_memory")
    hook = call_main(pm, ["hook"], stdin=hook_payload(unicode_project, "no-tmp"))
    assert_no_traceback(hook, "hook")
    assert hook.code == 0
    assert hook.out.startswith(LOADER_STAMP + "\n") and "CAF\u00c9-1" in hook.out, hook.err


def test_a_tokenizer_panic_does_not_escape(tmp_path: Path) -> None:
    # A million spaces then a letter overflow tiktoken's pattern engine (a Rust panic, raised
    # as pyo3_runtime.PanicException, a BaseException). Counting in bounded pieces never
    # hands it that much; the hook exits 0 with the one-line notice, and stderr stays short.
    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(b" " * 1_000_000 + b"a")
    env = clean_env(tmp_path, RUST_BACKTRACE="1")
    for argv in (["hook"], ["load", "--project-dir", str(proj)]):
        res = run(LOADER, argv, env=env, stdin=hook_payload(proj, "panic"), cwd=proj)
        assert_no_traceback(res, argv[0])
        assert (res.code, res.err) == (0, "")
        lines = res.out.split("\n")
        assert lines[0] == LOADER_STAMP and "too large to count" in lines[1], res.out
