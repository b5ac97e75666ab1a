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
    LOADER,
    LOADER_STAMP,
    MANAGER,
    SESSION_STAMP,
    assert_no_traceback,
    call_main,
    clean_env,
    clear_claude_env,
    hook_context,
    hook_payload,
    module,
    run,
    stderr_lines,
)

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
