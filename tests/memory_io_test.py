"""memory_io, the file layer: the atomic write, locks, the path rule, bounded reads of regular
files; each test runs against both skills' copies."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

TIMEOUT = 60


def test_atomic_write_creates_and_replaces(memory_io: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    memory_io.atomic_write(path, b"one\n")
    assert path.read_bytes() == b"one\n"
    memory_io.atomic_write(path, b"two\n", mode=0o640)
    assert path.read_bytes() == b"two\n"
    assert path.stat().st_mode & 0o777 == 0o640
    memory_io.atomic_write(path, b"")
    assert path.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md"]


def test_temp_names(memory_io: ModuleType) -> None:
    assert memory_io.temp_path("/m/x").startswith(f"/m/.x.tmp-{os.getpid()}-")  # a str path too
    temp = Path(memory_io.temp_path(Path("/m/permanent_memory.md")))
    assert temp.parent == Path("/m")
    prefix = f".permanent_memory.md.tmp-{os.getpid()}-"
    assert temp.name.startswith(prefix) and len(temp.name) == len(prefix) + 8
    assert memory_io.is_temp_name(temp.name)
    assert not memory_io.is_temp_name("permanent_memory.md")
    assert not memory_io.is_temp_name(".permanent_memory.lock")
    assert not memory_io.is_temp_name("x.tmp-1-2")  # no leading dot: not ours


@pytest.mark.parametrize("failing", ["write", "fsync", "replace"])
def test_a_failed_write_leaves_the_previous_file_and_no_temp(
    memory_io: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"previous\n")

    def disk_full(*args: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, failing, disk_full)
    with pytest.raises(memory_io.MemoryIOError) as caught:
        memory_io.atomic_write(path, b"new\n")
    monkeypatch.undo()
    assert str(caught.value) == f"cannot write {path}: No space left on device"
    assert caught.value.reason == "No space left on device"
    assert path.read_bytes() == b"previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.md"]


def test_a_cache_write_is_not_synced(
    memory_io: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[object] = []
    monkeypatch.setattr(os, "fsync", synced.append)
    memory_io.atomic_write(str(tmp_path / "entry"), b"cached", durable=False)
    assert (tmp_path / "entry").read_bytes() == b"cached" and synced == []
    memory_io.atomic_write(tmp_path / "f.md", b"kept")
    assert len(synced) == 2  # the file, then its folder


def test_a_write_into_a_missing_directory(memory_io: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "nowhere" / "f.md"
    with pytest.raises(memory_io.MemoryIOError) as caught:
        memory_io.atomic_write(path, b"x")
    assert str(caught.value) == f"cannot write {path}: No such file or directory"


def test_a_large_write_lands_whole(memory_io: ModuleType, tmp_path: Path) -> None:
    data = os.urandom(3 * 1024 * 1024)
    memory_io.atomic_write(tmp_path / "big", data)
    assert (tmp_path / "big").read_bytes() == data


KILLED_BEFORE_REPLACE = """
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
memory_io = __import__(sys.argv[3], fromlist=["memory_io"])
os.replace = lambda *a: os._exit(9)  # the process dies right before the rename
memory_io.atomic_write(Path(sys.argv[2]), b"new, complete text\\n")
"""


def test_killed_before_replace_leaves_the_previous_file(
    memory_io: ModuleType, tmp_path: Path
) -> None:
    skill_dir = Path(memory_io.__file__).parents[2]  # the skill's scripts/
    path = tmp_path / "f.md"
    path.write_bytes(b"previous\n")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            KILLED_BEFORE_REPLACE,
            str(skill_dir),
            str(path),
            memory_io.__name__,
        ],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert result.returncode == 9, result.stderr
    assert path.read_bytes() == b"previous\n"
    [leftover] = [p for p in tmp_path.iterdir() if p.name != "f.md"]
    assert memory_io.is_temp_name(leftover.name)
    assert leftover.read_bytes() == b"new, complete text\n"


HOLD_LOCK = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
memory_io = __import__(sys.argv[3], fromlist=["memory_io"])
with memory_io.locked(Path(sys.argv[2])):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def _holder(memory_io: ModuleType, target: Path) -> subprocess.Popen[str]:
    # The holder runs the same skill's copy, imported as that skill imports it.
    skill_dir = Path(memory_io.__file__).parents[2]  # the skill's scripts/
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(skill_dir), str(target), memory_io.__name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"
    return holder


def _is_locked(target: Path) -> bool:
    import fcntl

    fd = os.open(target, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


@pytest.mark.parametrize("kind", ["lock file", "directory"])
def test_locked_excludes_other_processes_until_released(
    memory_io: ModuleType, tmp_path: Path, kind: str
) -> None:
    target = tmp_path / ".x.lock" if kind == "lock file" else tmp_path
    holder = _holder(memory_io, target)
    try:
        assert _is_locked(target)
        assert holder.stdin is not None and holder.stdout is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline() == "released\n"
        assert holder.wait(timeout=TIMEOUT) == 0
        assert not _is_locked(target)
    finally:
        holder.kill()
        holder.wait(timeout=TIMEOUT)
    # A directory is locked as it is: nothing is created in it.
    assert [p.name for p in tmp_path.iterdir()] == ([".x.lock"] if kind == "lock file" else [])


def test_a_killed_holder_releases_the_lock(memory_io: ModuleType, tmp_path: Path) -> None:
    holder = _holder(memory_io, tmp_path)
    try:
        assert _is_locked(tmp_path)
        holder.send_signal(signal.SIGKILL)
        assert holder.wait(timeout=TIMEOUT) == -signal.SIGKILL
        assert not _is_locked(tmp_path)
        with memory_io.locked(tmp_path):
            assert _is_locked(tmp_path)  # flock is per open file: ours now excludes a second
    finally:
        holder.kill()
        holder.wait(timeout=TIMEOUT)


def test_locked_reports_what_it_cannot_open(memory_io: ModuleType, tmp_path: Path) -> None:
    missing = tmp_path / "gone" / ".x.lock"
    with pytest.raises(memory_io.MemoryIOError) as caught:
        with memory_io.locked(missing):
            pass  # pragma: no cover
    assert str(caught.value) == f"cannot lock {missing}: No such file or directory"


@pytest.mark.parametrize(
    ("refusal", "cause"),
    [
        (
            errno.EACCES,
            "cannot create it: the folder is not writable here (Permission denied)",
        ),
        (
            errno.EPERM,
            "cannot create it: the folder is not writable here (Operation not permitted)",
        ),
        (errno.EROFS, "cannot create it in a read-only folder (Read-only file system)"),
        (errno.ENOSPC, "No space left on device"),
    ],
)
def test_locked_says_why_a_missing_lock_file_could_not_be_created(
    memory_io: ModuleType,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    refusal: int,
    cause: str,
) -> None:
    # A read-only folder (a sandbox's, where even root is refused) refuses to create the lock
    # file; the open that follows, for a lock file already there, finds none: the cause is the
    # refusal, not that the file is missing.
    real_open = os.open
    lock = tmp_path / ".x.lock"

    def refusing(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if os.fspath(path) == str(lock) and flags & os.O_CREAT:  # type: ignore[arg-type]
            raise OSError(refusal, os.strerror(refusal), str(lock))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", refusing)
    with pytest.raises(memory_io.MemoryIOError) as caught:
        with memory_io.locked(lock):
            pass  # pragma: no cover
    assert str(caught.value) == f"cannot lock {lock}: {cause}"
    assert not lock.exists()


def test_locked_in_a_read_only_directory_uses_the_existing_lock_file(
    memory_io: ModuleType, tmp_path: Path
) -> None:
    if os.geteuid() == 0:
        pytest.skip("root ignores directory permissions")
    lock = tmp_path / ".x.lock"
    lock.touch(mode=0o444)
    tmp_path.chmod(0o500)
    try:
        with memory_io.locked(lock):
            entered = True
    finally:
        tmp_path.chmod(0o700)
    assert entered


def test_without_flock_locked_does_nothing(
    memory_io: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_io, "HAVE_FLOCK", False)
    with memory_io.locked(tmp_path / "missing-dir" / ".x.lock"):
        entered = True
    assert entered
    assert list(tmp_path.iterdir()) == []


def test_fsync_dir_is_best_effort(
    memory_io: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    memory_io.fsync_dir(tmp_path)
    assert len(synced) == 1  # the directory itself was synced
    memory_io.fsync_dir(tmp_path / "missing")  # no error: the file itself is already synced
    assert len(synced) == 1 and not (tmp_path / "missing").exists()

    def failing(fd: int) -> None:
        raise OSError(errno.EINVAL, "cannot sync a directory here")

    monkeypatch.setattr(os, "fsync", failing)
    memory_io.fsync_dir(tmp_path)  # a file system that cannot sync directories: no error


def test_inside_project_follows_links_that_stay_inside(
    memory_io: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "m.md").write_text("x")
    (tmp_path / "m.md").symlink_to("docs/m.md")
    assert memory_io.inside_project(tmp_path, tmp_path / "m.md") == str(tmp_path / "docs/m.md")
    # Not there yet: the path is judged by where it would be.
    assert memory_io.inside_project(tmp_path, tmp_path / "new" / "x") == str(tmp_path / "new/x")
    assert memory_io.inside_project(tmp_path, tmp_path) == str(tmp_path)


@pytest.mark.parametrize(
    ("link", "target"),
    [
        ("m.md", "/proc/self/environ"),
        ("m.md", "../outside.md"),
        ("m.md", "../project-evil/m.md"),  # a sibling whose name starts like the project's
        ("dir", ".."),
        ("dangling", "../nowhere/x"),
    ],
)
def test_inside_project_refuses_links_that_leave(
    memory_io: ModuleType, tmp_path: Path, link: str, target: str
) -> None:
    root = tmp_path / "project"
    root.mkdir()
    (root / link).symlink_to(target)
    path = root / link / "m.md" if link == "dir" else root / link
    with pytest.raises(memory_io.OutsideProject) as caught:
        memory_io.inside_project(root, path)
    real = os.path.realpath(path)
    assert str(caught.value) == f"{path}: it leads outside the project (to {real}); refused"
    assert caught.value.strerror == f"it leads outside the project (to {real}); refused"
    assert isinstance(caught.value, OSError)  # every reader's OSError handler reports it


def test_read_regular_reads_only_regular_files(memory_io: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"abc")
    assert memory_io.read_regular(tmp_path / "f", 3) == (b"abc", 3)
    assert memory_io.read_regular(tmp_path / "f", 2) == (None, 3)  # over the limit: not read
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(memory_io.NotRegularFile):
        memory_io.read_regular(tmp_path / "fifo", 10)  # and it does not hang
    with pytest.raises(IsADirectoryError):
        memory_io.read_regular(tmp_path, 10)
    (tmp_path / "link").symlink_to("f")
    assert memory_io.read_regular(tmp_path / "link", 10) == (b"abc", 3)
    with pytest.raises(OSError) as caught:
        memory_io.read_regular(tmp_path / "link", 10, follow=False)
    assert caught.value.errno == errno.ELOOP


def test_read_inside_refuses_before_opening(memory_io: ModuleType, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    os.mkfifo(tmp_path / "outside-fifo")  # opening it for reading would block
    (root / "m.md").symlink_to(tmp_path / "outside-fifo")
    with pytest.raises(memory_io.OutsideProject):
        memory_io.read_inside(root, root / "m.md", 100)
    (root / "real.md").write_bytes(b"ok")
    (root / "in.md").symlink_to("real.md")
    assert memory_io.read_inside(root, root / "in.md", 100) == (b"ok", 2)


@pytest.mark.parametrize("target", ["dangling", "existing file"])
def test_locked_refuses_a_lock_file_that_is_a_link(
    memory_io: ModuleType, tmp_path: Path, target: str
) -> None:
    outside = tmp_path / "outside.lock"
    if target == "existing file":
        outside.write_bytes(b"")
    lock = tmp_path / "memory" / ".x.lock"
    lock.parent.mkdir()
    lock.symlink_to(outside)
    with pytest.raises(memory_io.MemoryIOError) as caught:
        with memory_io.locked(lock):
            pass  # pragma: no cover
    assert str(caught.value) == f"cannot lock {lock}: it is a symbolic link; refused"
    assert outside.exists() == (target == "existing file")


def test_locked_follows_a_link_to_a_directory(memory_io: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    with memory_io.locked(tmp_path / "link"):
        assert _is_locked(tmp_path / "real")
    assert list((tmp_path / "real").iterdir()) == []


def test_read_at_most_reads_to_the_limit_or_the_end(memory_io: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"0123456789")
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        assert memory_io.read_at_most(fd, 4) == b"0123"
        assert memory_io.read_at_most(fd, 100) == b"456789"  # from where the last read stopped
        assert memory_io.read_at_most(fd, 5) == b""
    finally:
        os.close(fd)
    read, write = os.pipe()  # short reads: a pipe gives what was written so far
    os.write(write, b"ab")
    os.close(write)
    try:
        assert memory_io.read_at_most(read, 10) == b"ab"
    finally:
        os.close(read)
