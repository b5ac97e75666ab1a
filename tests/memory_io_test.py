from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support import (
    LOADER,
    LOADER_STAMP,
    MANAGER,
    SESSION_STAMP,
    clean_env,
    hook_context,
    hook_payload,
)

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
import memory_io
os.replace = lambda *a: os._exit(9)  # the process dies right before the rename
memory_io.atomic_write(Path(sys.argv[2]), b"new, complete text\\n")
"""


def test_killed_before_replace_leaves_the_previous_file(
    memory_io: ModuleType, tmp_path: Path
) -> None:
    skill_dir = Path(memory_io.__file__).parent
    path = tmp_path / "f.md"
    path.write_bytes(b"previous\n")
    result = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_REPLACE, str(skill_dir), str(path)],
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
import memory_io
with memory_io.locked(Path(sys.argv[2])):
    print("locked", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def _holder(memory_io: ModuleType, target: Path) -> subprocess.Popen[str]:
    # The holder runs the same skill's copy, imported as that skill imports it.
    skill_dir = Path(memory_io.__file__).parent
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(skill_dir), str(target)],
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


def test_add_attributes_appends_only_what_is_missing(memory_io: ModuleType, tmp_path: Path) -> None:
    (tmp_path / ".gitattributes").write_text("*.png binary")
    mode = 0o640
    os.chmod(tmp_path / ".gitattributes", mode)
    added = memory_io.add_attributes(tmp_path, "# ours", ["a merge=x", "b merge=x"])
    assert added == ["a merge=x", "b merge=x"]
    assert (tmp_path / ".gitattributes").read_text() == (
        "*.png binary\n\n# ours\na merge=x\nb merge=x\n"
    )
    assert (tmp_path / ".gitattributes").stat().st_mode & 0o777 == mode
    before = (tmp_path / ".gitattributes").stat().st_mtime_ns
    assert memory_io.add_attributes(tmp_path, "# ours", ["a merge=x", "b merge=x"]) == []
    assert (tmp_path / ".gitattributes").stat().st_mtime_ns == before  # not rewritten
    assert memory_io.add_attributes(tmp_path, "# ours", ["c merge=y"]) == ["c merge=y"]
    assert (tmp_path / ".gitattributes").read_text().endswith("b merge=x\nc merge=y\n")


def test_add_attributes_creates_the_file_and_refuses_links(
    memory_io: ModuleType, tmp_path: Path
) -> None:
    assert memory_io.add_attributes(tmp_path, "# ours", ["a merge=x"]) == ["a merge=x"]
    assert (tmp_path / ".gitattributes").read_text() == "# ours\na merge=x\n"
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / ".gitattributes").symlink_to(tmp_path / ".gitattributes")
    with pytest.raises(memory_io.MemoryIOError, match="is a symbolic link"):
        memory_io.add_attributes(linked, "# ours", ["z merge=x"])
    assert (tmp_path / ".gitattributes").read_text() == "# ours\na merge=x\n"
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / ".gitattributes").mkdir()
    with pytest.raises(memory_io.MemoryIOError):
        memory_io.add_attributes(tmp_path / "dir", "# ours", ["z merge=x"])


def test_the_caches_stamps(memory_io: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    stamp = memory_io.code_stamp(str(tmp_path), ("a.py", "missing.py"))
    assert stamp == f"{(tmp_path / 'a.py').stat().st_mtime_ns},-"
    status = (tmp_path / "a.py").lstat()
    assert memory_io.file_stamp(str(tmp_path / "a.py")) == [1, status.st_mtime_ns, status.st_ino]
    assert memory_io.file_stamp(str(tmp_path / "missing")) is None
    assert memory_io.digest(b"x") != memory_io.digest(b"y")
    assert len(memory_io.digest(b"x")) == 32


def test_doctor_report_text_and_json(memory_io: ModuleType) -> None:
    import json

    checks = [
        memory_io.DoctorCheck("python", "ok", "Python 3.12.1"),
        memory_io.DoctorCheck("memory-dir", "FAIL", "no directory", "mkdir memory"),
    ]
    assert memory_io.doctor_report(checks) == (
        "ok    python    Python 3.12.1\nFAIL  memory-dir no directory -> mkdir memory\n"
    )
    assert memory_io.doctor_failed(checks) and not memory_io.doctor_failed(checks[:1])
    report = memory_io.doctor_report(checks, "json")
    assert report.endswith("}\n")
    parsed = json.loads(report)
    assert parsed["ok"] is False
    # Both skills' `doctor --format json` list a check's keys in this order.
    assert [list(check) for check in parsed["checks"]] == [["name", "status", "detail", "fix"]] * 2
    assert parsed["checks"][1] == checks[1]._asdict()
    assert checks[0] == memory_io.DoctorCheck("python", "ok", "Python 3.12.1", "")
    assert checks[0] != memory_io.DoctorCheck("python", "warn", "Python 3.12.1")
    assert repr(checks[0]) == (
        "DoctorCheck(name='python', status='ok', detail='Python 3.12.1', fix='')"
    )


def test_hook_json_is_what_the_json_package_writes_and_reads(memory_io: ModuleType) -> None:
    import json

    context, message = '[block]\n\u00e9 "quoted" \\ \x01\n', "project-memory: 1 epic \u00b7 x"
    written = memory_io.hook_json("SessionStart", context, message)
    expected = {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context},
        "systemMessage": message,
    }
    assert written == json.dumps(expected, ensure_ascii=False) + "\n"
    assert (
        memory_io.hook_json("X", "c")
        == json.dumps({"hookSpecificOutput": {"hookEventName": "X", "additionalContext": "c"}})
        + "\n"
    )
    assert memory_io.scan_json(written.strip()) == expected
    for bad in ("", "{", '{"a": 1} 2', "nope"):
        with pytest.raises(ValueError):
            memory_io.scan_json(bad)


class RefusingStream:
    def write(self, text: str) -> int:
        raise OSError(errno.EPIPE, os.strerror(errno.EPIPE))


def test_stderr_line_writes_one_line_and_never_fails(
    memory_io: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memory_io.stderr_line("one diagnostic")
    assert capsys.readouterr() == ("", "one diagnostic\n")
    for stream in (None, RefusingStream()):  # stderr closed, or a pipe nobody reads
        monkeypatch.setattr(sys, "stderr", stream)
        memory_io.stderr_line("lost, quietly")
    monkeypatch.undo()
    assert capsys.readouterr() == ("", "")


# ---------------------------------------------------------------------------------------------
# The process boundary (write_output): a stdout that cannot take the text, a closed stdout. Hooks
# exit 0 with the block (in UTF-8, which is what Claude Code reads) or with nothing; commands
# print or give one `error:` line, never a traceback. (No temporary directory and a tokenizer
# that panics: pm_tokens_test.)

# (name, environment, interpreter flags): each makes sys.stdout's encoding one that cannot show
# support.UNICODE_MEMORY and UNICODE_SNAPSHOT_INPUT.
UNENCODABLE_STDOUT = [
    ("ascii", {"PYTHONIOENCODING": "ascii"}, []),
    ("cp1252-pipe", {"PYTHONIOENCODING": "cp1252"}, []),
    ("c-locale-no-utf8-mode", {"LC_ALL": "C", "PYTHONUTF8": "0"}, ["-X", "utf8=0"]),
]
REFUSED = "error: cannot print the results: stdout's encoding ({}) cannot show them; set "
REFUSED += "PYTHONIOENCODING=utf-8"


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
