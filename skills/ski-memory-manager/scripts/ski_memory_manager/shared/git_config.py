# Generated from shared/git_config.py by `python3 scripts/dev.py sync-shared`; edit that file.
# Both skills' `git-setup`: the top of the work tree, the lines a skill adds to .gitattributes
# (through no link: the repository controls that file), and the merge driver set in the
# repository's own config (never the user's). Failures are memory_io.MemoryIOError with a
# one-line message. git runs as a child process with a timeout and no stdin.
#
# Each skill carries a copy of this file (`python3 scripts/dev.py sync-shared` writes them; see
# memory_io). No hook imports it.
from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from .memory_io import MemoryIOError, atomic_write, read_regular

if TYPE_CHECKING:
    from pathlib import Path
    from typing import TextIO, Union

    PathArg = Union[str, "os.PathLike[str]"]


GIT_TIMEOUT = 30
ATTRIBUTES = ".gitattributes"
MAX_ATTRIBUTES_BYTES = 1024 * 1024


def _git(root: PathArg, *args: str) -> tuple[int, str]:
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        raise MemoryIOError("git not found on PATH")
    try:
        done = subprocess.run(
            [git, "-C", os.fspath(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MemoryIOError(f"cannot run git {args[0]}: {exc}") from None
    return done.returncode, done.stdout.rstrip("\n")


def git_root(directory: PathArg) -> Path:
    """The top of the git work tree `directory` is in."""
    from pathlib import Path

    code, out = _git(directory, "rev-parse", "--show-toplevel")
    if code != 0 or not out:
        raise MemoryIOError(
            f"{os.fspath(directory)} is not inside a git work tree (git init first)"
        )
    return Path(out)


def add_attributes(root: Path, comment: str, lines: list[str]) -> list[str]:
    """Append to ROOT/.gitattributes those of `lines` it does not have yet (after the comment
    line); return the lines added. A .gitattributes that is a link is refused, not followed:
    the repository controls it, and a link could lead anywhere."""
    path = root / ATTRIBUTES
    if os.path.islink(path):
        raise MemoryIOError(f"{path} is a symbolic link; git-setup does not write through it")
    mode: int | None = None
    data: bytes | None
    try:
        data, _ = read_regular(path, MAX_ATTRIBUTES_BYTES, follow=False)
        mode = stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise MemoryIOError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data is None:
        raise MemoryIOError(f"{path} is over {MAX_ATTRIBUTES_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemoryIOError(f"{path} is not UTF-8 text") from None
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if missing:
        if text and not text.endswith("\n"):
            text += "\n"
        if comment not in present:
            text += ("\n" if text.strip() else "") + comment + "\n"
        text += "".join(line + "\n" for line in missing)
        atomic_write(path, text.encode("utf-8"), mode)
    return missing


def set_git_config(root: PathArg, key: str, value: str) -> str | None:
    """Set `key` in the repository's own config (never the user's); return its previous value,
    None when it was not set. Setting the value it already has writes nothing."""
    code, old = _git(root, "config", "--local", "--get", key)
    previous = old if code == 0 else None
    if previous != value:
        code, _ = _git(root, "config", "--local", key, value)
        if code != 0:
            raise MemoryIOError(f"git config --local {key} failed in {os.fspath(root)}")
    return previous


def set_merge_driver(root: PathArg, driver: str, name: str, command: str, out: TextIO) -> None:
    """Define merge driver `driver` (its name and the command git runs) in the repository's own
    config, writing one line to `out` per setting: set, already set, or updated."""
    for key, value in ((f"merge.{driver}.name", name), (f"merge.{driver}.driver", command)):
        previous = set_git_config(root, key, value)
        if previous == value:
            out.write(f"git config --local {key}: already set\n")
        elif previous is None:
            out.write(f"git config --local {key}: set\n")
        else:
            out.write(f"git config --local {key}: updated (it named another copy)\n")


def driver_command(python: str, script: Path, module: str, prog: str) -> str:
    """What git runs as a skill's merge driver: the skill's script (or, where pip installed the
    package and there is no script, `python -m module`). When the script or the interpreter is
    gone (the plugin moved), git's own line merge runs instead, so the result has conflict
    markers that `check` and `doctor` find rather than one side silently kept."""
    import shlex

    found = script.is_file()
    entry = shlex.quote(str(script)) if found else f"-m {module}"
    run = f"{shlex.quote(python)} {entry} merge %O %A %B %P"
    there = f"test -f {shlex.quote(str(script))}" if found else "true"
    moved = shlex.quote(f"{prog}: {script} not found; run git-setup again. Merged as plain text.")
    return (
        f"if test -x {shlex.quote(python)} && {there}; then {run}; "
        f"else echo {moved} >&2; git merge-file -L ours -L base -L theirs %A %O %B; fi"
    )
