from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import MANAGER_DIR
from hypothesis import given
from hypothesis import strategies as st
from ski_memory_manager import mm_snapshot, mm_store
from ski_memory_manager.shared import memory_io
from support import (
    FAULT_SESSION,
    MANAGER,
    OUTSIDE_SNAPSHOT,
    SPECIAL_FILES,
    assert_no_traceback,
    call_main,
    call_save,
    clean_env,
    clear_claude_env,
    hook_payload,
    make_link,
    make_special,
    module,
    other_project,
    outside_tree,
    refusal_problems,
    run,
    save_input,
    snapshot_files,
    stderr_lines,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("2026-05-01-14-30-billing-api.md", ("2026-05-01-14-30", "billing-api")),
        ("2026-05-01-14-30-a.md", ("2026-05-01-14-30", "a")),
        ("2026-05-01-14-30-x.md.md", ("2026-05-01-14-30", "x.md")),
        ("2026-05-01-14-30-.hidden.md", None),
        ("2026-05-01-14-30-.md", None),
        ("2026-05-01-14-30-a b.md", None),
        ("2026-02-30-14-30-p.md", None),
        ("2026-02-29-14-30-p.md", None),
        ("2024-02-29-14-30-p.md", ("2024-02-29-14-30", "p")),
        ("2026-04-31-14-30-p.md", None),
        ("2026-05-31-14-30-p.md", ("2026-05-31-14-30", "p")),
        ("0000-01-01-00-00-p.md", None),
        ("2026-05-01-24-00-p.md", None),
        ("2026-05-01-14-60-p.md", None),
        ("2026-05-01-14-30_p.md", None),
        ("2026-05-01-14-30-p.txt", None),
        ("2026-05-01-14-30-p.MD", None),
        (".2026-05-01-14-30-p.md.tmp-1-ab", None),
        (".ski-memory.lock", None),
        ("notes.md", None),
        ("", None),
    ],
)
def test_split_name(name: str, expected: tuple[str, str] | None) -> None:
    assert mm_store.split_name(name) == expected


NAMES = [
    "2026-05-03-09-00-foo-system.md",
    "2026-05-02-09-00-system.md",
    "2026-05-01-09-00-system.md",
    "2026-05-04-09-00-system.md.bak",
    "2026-99-99-99-99-system.md",
    ".2026-05-05-09-00-system.md.tmp-123-abcd1234",
    ".ski-memory.lock",
    "2026-05-05-09-00-SYSTEM.md",
    "README.md",
]


@given(
    stamp=st.one_of(
        st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{2}", fullmatch=True),
        st.text(max_size=17),
    ),
    project=st.one_of(st.from_regex(r"[A-Za-z0-9._-]{1,66}", fullmatch=True), st.text(max_size=9)),
    suffix=st.sampled_from([".md", ".md ", ".MD", "", ".txt"]),
)
def test_split_name_agrees_with_the_field_rules(stamp: str, project: str, suffix: str) -> None:
    expected = (
        (stamp, project)
        if suffix == ".md"
        and mm_snapshot.session_datetime(stamp) is not None
        and mm_snapshot.is_project_name(project)
        else None
    )
    assert mm_store.split_name(f"{stamp}-{project}{suffix}") == expected


def test_newest_first_matches_the_project_exactly() -> None:
    assert list(mm_store.newest_first(NAMES, "system")) == [
        "2026-05-02-09-00-system.md",
        "2026-05-01-09-00-system.md",
    ]
    assert list(mm_store.newest_first(NAMES, "foo-system")) == ["2026-05-03-09-00-foo-system.md"]
    assert list(mm_store.newest_first(NAMES, "SYSTEM")) == ["2026-05-05-09-00-SYSTEM.md"]
    assert list(mm_store.newest_first(NAMES, "nothing")) == []


def test_newest_first_sorts_only_when_the_newest_is_passed_over() -> None:
    names = [f"2026-05-{d:02d}-10-00-p.md" for d in (3, 1, 2)]
    candidates = mm_store.newest_first(names, "p")
    assert next(candidates) == "2026-05-03-10-00-p.md"
    assert list(candidates) == ["2026-05-02-10-00-p.md", "2026-05-01-10-00-p.md"]


def test_projects_groups_newest_first() -> None:
    assert mm_store.projects(NAMES) == {
        "foo-system": ["2026-05-03-09-00-foo-system.md"],
        "system": ["2026-05-02-09-00-system.md", "2026-05-01-09-00-system.md"],
        "SYSTEM": ["2026-05-05-09-00-SYSTEM.md"],
    }


def test_temp_names() -> None:
    assert mm_store.is_temp_name(".2026-05-05-09-00-p.md.tmp-123-abcd1234")
    assert not mm_store.is_temp_name(".ski-memory.lock")
    assert not mm_store.is_temp_name("2026-05-05-09-00-p.md")


def test_read_text(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_bytes("\u00e9t\u00e9\n".encode())
    assert mm_store.read_text(path) == "\u00e9t\u00e9\n"


def _read_error(path: Path) -> str:
    with pytest.raises(mm_store.StoreError) as caught:
        mm_store.read_text(path)
    return str(caught.value)


def test_read_text_refuses_what_is_not_a_small_regular_utf8_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    link = tmp_path / "link.md"
    link.symlink_to(outside)
    assert _read_error(link) == "it is a symbolic link"
    (tmp_path / "dir.md").mkdir()
    assert _read_error(tmp_path / "dir.md") == "not a regular file"
    os.mkfifo(tmp_path / "fifo.md")
    assert _read_error(tmp_path / "fifo.md") == "not a regular file"  # and does not hang
    big = tmp_path / "big.md"
    big.write_bytes(b"x" * (mm_store.MAX_SNAPSHOT_BYTES + 1))
    assert _read_error(big) == "larger than 256 KiB"
    (tmp_path / "latin1.md").write_bytes(b"ok\xe9")
    assert _read_error(tmp_path / "latin1.md") == "not UTF-8 text (byte 2)"
    assert _read_error(tmp_path / "missing.md") == "No such file or directory"


def test_write_into_a_read_only_directory(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(memory_io.MemoryIOError) as caught:
            memory_io.atomic_write(tmp_path / "s.md", b"x")
        assert str(caught.value) == f"cannot write {tmp_path / 's.md'}: Permission denied"
    finally:
        tmp_path.chmod(0o700)


KILLED_BEFORE_REPLACE = """
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from ski_memory_manager.shared import memory_io
os.replace = lambda *a: os._exit(9)  # the process dies right before the rename
memory_io.atomic_write(Path(sys.argv[2]), b"new, complete text\\n")
"""


def test_write_killed_before_replace_leaves_the_previous_file(tmp_path: Path) -> None:
    path = tmp_path / "2026-05-01-14-30-p.md"
    path.write_bytes(b"previous\n")
    result = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_REPLACE, str(MANAGER_DIR), str(path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 9, result.stderr
    assert path.read_bytes() == b"previous\n"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert len(names) == 2 and names[0].startswith(".2026-05-01-14-30-p.md.tmp-")
    assert (tmp_path / names[0]).read_bytes() == b"new, complete text\n"
    # The leftover is never taken for a snapshot.
    assert list(mm_store.newest_first(names, "p")) == ["2026-05-01-14-30-p.md"]
    assert mm_store.projects(names) == {"p": ["2026-05-01-14-30-p.md"]}


HOLD_LOCK = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from ski_memory_manager import mm_store
with mm_store.locked(Path(sys.argv[2])):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_locked_excludes_other_processes(tmp_path: Path) -> None:
    import fcntl

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(MANAGER_DIR), str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline() == "locked\n"
        # The lock is the directory itself: another open of it cannot take it.
        handle = os.open(tmp_path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            holder.stdin.write("\n")
            holder.stdin.flush()
            assert holder.wait(timeout=30) == 0
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on exit
        finally:
            os.close(handle)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert list(tmp_path.iterdir()) == []  # no lock file: nothing for `git add -A`


def test_locked_in_a_read_only_directory(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    fcntl = pytest.importorskip("fcntl")
    try:
        with mm_store.locked(folder):
            other = os.open(folder, os.O_RDONLY)
            try:
                with pytest.raises(BlockingIOError):
                    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            finally:
                os.close(other)
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_locked_reports_a_directory_it_cannot_use(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(mm_store.StoreError) as caught, mm_store.locked(missing):
        pass
    assert str(caught.value).startswith(f"cannot lock {missing}: ")


def test_helpers_are_importable_from_the_script_folder_alone() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from ski_memory_manager import mm_store
        print(mm_store.snapshot_name("2026-05-01-14-30", "p"))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(MANAGER_DIR)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert out == "2026-05-01-14-30-p.md\n"


def test_misnamed_names_end_in_the_project_but_are_no_snapshot_name() -> None:
    names = [
        "2026-04-27-foo.md",
        "2026-05-01-10-00-foo.md",
        "2026-05-01-10-00-bar-foo.md",  # a snapshot of bar-foo, not misnamed
        "notes-foo.md",
        ".hidden-foo.md",
        "welcome-shown.md",
        ".gitkeep",
    ]
    assert mm_store.misnamed(names, "foo") == ["2026-04-27-foo.md", "notes-foo.md"]
    assert mm_store.misnamed(names, "bar") == []


# ---------------------------------------------------------------------------------------------
# Symbolic links: a memory dir the user names, a snapshot that links out of the memory dir.


def test_memory_dir_symlink_works_when_the_user_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--memory-dir is the user's: a link there is followed wherever it leads. The project's own
    memory/ is the repository's: the same link there leads outside the project and is refused
    (a clone must not resume another project's session)."""
    mm = module("ski_memory_manager.memory_manager")
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


def test_snapshot_symlink_to_outside_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A snapshot name that is a link to a file outside the memory dir (say, committed to a repo
    by someone else) must not be shown, nor merged from, nor written through."""
    mm = module("ski_memory_manager.memory_manager")
    clear_claude_env(monkeypatch)
    outside = tmp_path / "outside" / "private.md"
    outside.parent.mkdir()
    outside.write_text(OUTSIDE_SNAPSHOT)
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
    assert outside.read_text() == OUTSIDE_SNAPSHOT, "save wrote through a symbolic link"
    if res.code == 0:
        assert not link.is_symlink()
        assert "OUTSIDE-SECRET-CONTENT" not in link.read_text(), "save merged an outside file"
    else:
        assert len(stderr_lines(res.err)) == 1 and link.is_symlink()


# ---------------------------------------------------------------------------------------------
# Files that are not regular files where a snapshot is expected.


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
# Links out of the project. A clone may hold symbolic links to anywhere: the project's memory/
# and its lock file are the repository's, and when they lead outside the project they are
# refused with one stderr line naming them, nothing read or written there. A --memory-dir the
# user names may point anywhere. The loader's side is in pm_file_test.

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
def test_an_old_lock_link_creates_nothing_outside(tmp_path: Path, memory_flag: bool) -> None:
    other = other_project(tmp_path)
    proj = tmp_path / "proj"
    lock = make_link(proj / "memory" / ".ski-memory.lock", other / "planted.lock")
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(proj))
    argv = ["save", "--project-name", "proj", "--session-timestamp", "2026-06-01-10-00"]
    if memory_flag:  # even a memory dir the user names: the lock file is never a link
        argv += ["--memory-dir", str(proj / "memory")]
    res = run(MANAGER, argv, env=env, stdin=b"")
    assert_no_traceback(res, "save")
    # The lock is the folder itself: a `.ski-memory.lock` planted there (the name older
    # versions locked) is never opened, so nothing is created through it.
    assert not (other / "planted.lock").exists(), "save created the lock link's target"
    assert lock.is_symlink()
    assert (res.code, res.err) == (0, "")
    assert [path.name for path in snapshot_files(proj / "memory")] == ["2026-06-01-10-00-proj.md"]
