from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import memory_io
import mm_snapshot
import mm_store
import pytest
from conftest import MANAGER_DIR
from hypothesis import given
from hypothesis import strategies as st


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
import memory_io
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
import mm_store
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
        lock = tmp_path / mm_store.LOCK_NAME
        with lock.open("rb") as handle:
            with pytest.raises(BlockingIOError):
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            holder.stdin.write("\n")
            holder.stdin.flush()
            assert holder.wait(timeout=30) == 0
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # released on exit
    finally:
        if holder.poll() is None:
            holder.kill()
    assert [p.name for p in tmp_path.iterdir()] == [mm_store.LOCK_NAME]  # kept, never removed
    assert lock.read_bytes() == b""


def test_locked_in_a_read_only_directory_uses_the_existing_lock_file(tmp_path: Path) -> None:
    (tmp_path / mm_store.LOCK_NAME).write_bytes(b"")
    (tmp_path / mm_store.LOCK_NAME).chmod(0o400)
    fcntl = pytest.importorskip("fcntl")
    with mm_store.locked(tmp_path):
        # The lock is really held: another open file description cannot take it.
        other = os.open(tmp_path / mm_store.LOCK_NAME, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    assert (tmp_path / mm_store.LOCK_NAME).read_bytes() == b""
    assert (tmp_path / mm_store.LOCK_NAME).stat().st_mode & 0o777 == 0o400


def test_locked_reports_a_directory_it_cannot_use(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(mm_store.StoreError) as caught, mm_store.locked(missing):
        pass
    assert str(caught.value) == (
        f"cannot lock {missing / mm_store.LOCK_NAME}: No such file or directory"
    )


def test_helpers_are_importable_from_the_script_folder_alone() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        import mm_store
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
