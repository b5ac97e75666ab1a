"""hook_io: the caches' stamps, hook JSON as the json package writes and reads it, one stderr line
that never fails, and the process boundary (a stdout that cannot take the text, a closed
stdout); each test runs against both skills' copies."""

from __future__ import annotations

import errno
import os
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


def test_the_caches_stamps(hook_io: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x")
    stamp = hook_io.code_stamp(str(tmp_path), ("a.py", "missing.py"))
    assert stamp == f"{(tmp_path / 'a.py').stat().st_mtime_ns},-"
    status = (tmp_path / "a.py").lstat()
    assert hook_io.file_stamp(str(tmp_path / "a.py")) == [1, status.st_mtime_ns, status.st_ino]
    assert hook_io.file_stamp(str(tmp_path / "missing")) is None
    assert hook_io.digest(b"x") != hook_io.digest(b"y")
    assert len(hook_io.digest(b"x")) == 32


def test_a_sealed_entry_opens_only_whole_and_under_its_key(hook_io: ModuleType) -> None:
    entry = hook_io.sealed("fmt-1", "k", b"body\nmore")
    assert entry == b"fmt-1 k 9 " + hook_io.digest(b"body\nmore").encode() + b"\nbody\nmore"
    assert hook_io.unsealed(entry, "fmt-1", "k") == b"body\nmore"
    assert hook_io.unsealed(hook_io.sealed("fmt-1", "k", b""), "fmt-1", "k") == b""
    for wrong in (
        hook_io.unsealed(entry, "fmt-2", "k"),  # another format
        hook_io.unsealed(entry, "fmt-1", "other"),  # another key
        hook_io.unsealed(entry[:-1], "fmt-1", "k"),  # cut short
        hook_io.unsealed(entry[:-1] + b"E", "fmt-1", "k"),  # altered
        hook_io.unsealed(b"", "fmt-1", "k"),
    ):
        assert wrong is None


def test_forget_older_removes_only_what_is_older(hook_io: ModuleType, tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.write_text("x")
    new.write_text("y")
    os.utime(old, (1000, 1000))
    link = tmp_path / "link-to-new"
    link.symlink_to(new)
    os.utime(link, (1000, 1000), follow_symlinks=False)  # an old link to a new file
    hook_io.forget_older(str(tmp_path), 2000)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new"]
    hook_io.forget_older(str(tmp_path / "missing"), 2000)  # no folder: nothing to do


def test_refusal_of_raises_what_is_not_stdout_refusing(hook_io: ModuleType) -> None:
    bug = ValueError("a bug")
    with pytest.raises(ValueError, match="a bug"):
        hook_io.refusal_of(bug)


def test_hook_json_is_what_the_json_package_writes_and_reads(hook_io: ModuleType) -> None:
    import json

    context, message = '[block]\n\u00e9 "quoted" \\ \x01\n', "project-memory: 1 epic \u00b7 x"
    written = hook_io.hook_json("SessionStart", context, message)
    expected = {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context},
        "systemMessage": message,
    }
    assert written == json.dumps(expected, ensure_ascii=False) + "\n"
    assert (
        hook_io.hook_json("X", "c")
        == json.dumps({"hookSpecificOutput": {"hookEventName": "X", "additionalContext": "c"}})
        + "\n"
    )
    assert hook_io.scan_json(written.strip()) == expected
    for bad in ("", "{", '{"a": 1} 2', "nope"):
        with pytest.raises(ValueError):
            hook_io.scan_json(bad)


class RefusingStream:
    def write(self, text: str) -> int:
        raise OSError(errno.EPIPE, os.strerror(errno.EPIPE))


def test_stderr_line_writes_one_line_and_never_fails(
    hook_io: ModuleType, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    hook_io.stderr_line("one diagnostic")
    assert capsys.readouterr() == ("", "one diagnostic\n")
    for stream in (None, RefusingStream()):  # stderr closed, or a pipe nobody reads
        monkeypatch.setattr(sys, "stderr", stream)
        hook_io.stderr_line("lost, quietly")
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
REFUSED = "cannot print the results: stdout's encoding ({}) cannot show them; set "
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
                "cannot print the results: stdout is closed\n",
            )


def test_project_folder_names_a_project_by_its_folder_and_real_path(
    hook_io: ModuleType, tmp_path: Path
) -> None:
    project = tmp_path / "Billing API (v2)"
    project.mkdir()
    link = tmp_path / "link"
    link.symlink_to(project)
    name = hook_io.project_folder(str(project))
    assert name is not None and name.startswith("Billing-API--v2-")
    assert len(name.rsplit("-", 1)[1]) == 12
    assert hook_io.project_folder(str(link)) == name  # the real path decides
    assert hook_io.project_folder(str(tmp_path / "other")) != name
    assert hook_io.project_folder("") is None and hook_io.project_folder("a\0b") is None
