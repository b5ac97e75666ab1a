"""The hook launcher where `python3` is missing or is the Microsoft Store alias.

Each hooks.json command runs through /bin/sh and bash (Git Bash is bash) with a PATH of stand-in
interpreters only, a hook's JSON on stdin, and its output compared with the hook run directly.
The PowerShell half of the launcher cannot run here (no PowerShell on this machine); its form is
checked in plugin_manifest_test.py and described in docs/install.md, "Windows".
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from conftest import ROOT
from plugin_manifest_test import LOADER_HOOK, LOADER_SCRIPT, MANAGER_HOOK, MANAGER_SCRIPT
from support import Result, run_command

# What the Store's App Execution Alias prints when no Store Python is installed; it reads no
# input and exits 9009, which a POSIX shell (and Git Bash) reports as 9009 % 256 = 49.
STORE_MESSAGE = (
    "Python was not found; run without arguments to install from the Microsoft Store, or "
    "disable this shortcut from Settings > Apps > Advanced app settings > App execution aliases."
)
SHELLS = [s for s in ("/bin/sh", "/bin/bash") if Path(s).exists()]
HOOKS = [(LOADER_HOOK, LOADER_SCRIPT), (MANAGER_HOOK, MANAGER_SCRIPT)]


def _script(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def _real(folder: Path, name: str) -> None:
    # The interpreter under test, under another name (a script, so that it keeps its own
    # prefix); it notes each start, so that a test can count the interpreters started.
    _script(folder, name, f'echo {name} >> "{folder}/started"\nexec "{sys.executable}" "$@"\n')


def _store_alias(folder: Path, name: str) -> None:
    _script(folder, name, f"echo '{STORE_MESSAGE}' >&2\nexit 9009\n")


def _recorder(folder: Path, name: str) -> None:
    _script(folder, name, f'echo {name} >> "{folder}/started"\nexit 0\n')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "a project"
    shutil.copytree(ROOT / "examples" / "demo-project", folder)
    return folder


def _hook_input(project: Path) -> bytes:
    return json.dumps(
        {
            "session_id": "launcher-test",
            "transcript_path": str(project / "t.jsonl"),
            "cwd": str(project),
            "hook_event_name": "SessionStart",
            "source": "startup",
        }
    ).encode()


def _env(tmp_path: Path, project: Path, path: Path) -> dict[str, str]:
    return {
        "PATH": str(path),  # the stand-ins only: no python3 of the system's
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "CLAUDE_PLUGIN_ROOT": str(ROOT),
        "CLAUDE_PROJECT_DIR": str(project),
        "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
    }


def _run(shell: str, command: str, tmp_path: Path, project: Path, path: Path) -> Result:
    return run_command(
        [shell, "-c", command],
        env=_env(tmp_path, project, path),
        stdin=_hook_input(project),
        cwd=project,
        timeout=60,
    )


def _direct(script: str, tmp_path: Path, project: Path) -> Result:
    """The hook run without the launcher, by the interpreter under test."""
    return run_command(
        [sys.executable, "-S", str(ROOT / "skills" / script), "hook"],
        env=_env(tmp_path, project, Path(sys.executable).parent),
        stdin=_hook_input(project),
        cwd=project,
        timeout=60,
    )


def _started(folder: Path) -> list[str]:
    record = folder / "started"
    return record.read_text().split() if record.exists() else []


LAYOUTS = {
    # python3 is the Store alias; python works.
    "store-alias": {"python3": _store_alias, "python": _real},
    # no python3 at all; python works.
    "no-python3": {"python": _real},
    # python3 and python are both Store aliases; the py launcher works.
    "py-launcher": {"python3": _store_alias, "python": _store_alias, "py": None},
}


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(("command", "script"), HOOKS, ids=["loader", "manager"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_the_hook_runs_where_python3_does_not(
    tmp_path: Path, project: Path, shell: str, command: str, script: str, layout: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, make in LAYOUTS[layout].items():
        if make is None:  # `py -3 ARGS`: the launcher's version switch, then the interpreter
            _script(
                bin_dir,
                name,
                f'[ "$1" = -3 ] || exit 3\nshift\necho py >> "{bin_dir}/started"\n'
                f'exec "{sys.executable}" "$@"\n',
            )
        else:
            make(bin_dir, name)
    expected = _direct(script, tmp_path, project)
    assert expected.code == 0 and '"hookSpecificOutput"' in expected.out, expected.err
    result = _run(shell, command, tmp_path, project, bin_dir)
    # The hook's own output arrives, byte for byte: the input reached the interpreter that ran
    # it, though an interpreter that did not run it was started before.
    assert (result.code, result.out) == (0, expected.out), result.err
    assert _started(bin_dir) == ["py" if layout == "py-launcher" else "python"]
    if "python3" in LAYOUTS[layout]:
        assert STORE_MESSAGE in result.err


@pytest.mark.parametrize("shell", SHELLS)
def test_the_common_case_starts_one_interpreter(tmp_path: Path, project: Path, shell: str) -> None:
    # python3 works: neither python nor py is started.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _real(bin_dir, "python3")
    _recorder(bin_dir, "python")
    _recorder(bin_dir, "py")
    expected = _direct(LOADER_SCRIPT, tmp_path, project)
    result = _run(shell, LOADER_HOOK, tmp_path, project, bin_dir)
    assert (result.code, result.out, result.err) == (0, expected.out, expected.err)
    assert _started(bin_dir) == ["python3"]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize("status", [1, 3, 120, 143])
def test_a_hook_that_ran_is_never_run_again(
    tmp_path: Path, project: Path, shell: str, status: int
) -> None:
    # An interpreter that read the input and then failed (a traceback, a kill) ran the hook:
    # the launcher passes its status on and starts nothing else, which would get no input.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    reads = f'/bin/cat > "{bin_dir}/read"\necho python3 >> "{bin_dir}/started"\n'
    _script(bin_dir, "python3", f"{reads}exit {status}\n")
    _recorder(bin_dir, "python")
    _recorder(bin_dir, "py")
    result = _run(shell, MANAGER_HOOK, tmp_path, project, bin_dir)
    assert result.code == status
    assert _started(bin_dir) == ["python3"]
    assert (bin_dir / "read").read_bytes() == _hook_input(project)


@pytest.mark.parametrize("shell", SHELLS)
def test_no_working_python_at_all(tmp_path: Path, project: Path, shell: str) -> None:
    # Nothing to run the hook with: the shell's own "not found" status (127) goes to the client,
    # which shows the hook as failed, after the one line of each interpreter it tried.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _store_alias(bin_dir, "python3")
    result = _run(shell, LOADER_HOOK, tmp_path, project, bin_dir)
    assert (result.code, result.out) == (127, "")
    assert STORE_MESSAGE in result.err and "python" in result.err and "py" in result.err
