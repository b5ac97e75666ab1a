# Evidence, the cache miss: where git says a path an entry names went. One `git log -M
# --diff-filter=R` run with a short timeout, in an environment that cannot point it at another
# repository, prompt or write; its rename records read and followed. pm_evidence's check_paths
# runs it only when a named path is gone; a cache hit never imports this module.
from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

GIT_TIMEOUT_S = 2.0
# What git says, for `inspect` and `doctor`.
GIT_ASKED = "asked where gone paths went"
GIT_NOT_NEEDED = "not needed (nothing gone)"
GIT_NO_REPO = "not a git work tree"
GIT_MISSING = "git not found on PATH"

# What a run of git may inherit that would point it at another repository or let it prompt.
_GIT_LOCATION_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
)


def git_failed(said: str) -> bool:
    """Whether git was run and failed or timed out (rather than not needed or not there)."""
    return said not in ("", GIT_ASKED, GIT_NOT_NEEDED, GIT_NO_REPO, GIT_MISSING)


def git_environment(root: str) -> dict[str, str]:
    """The environment git runs in: the user's, minus what would point it at another
    repository; it never prompts, takes no optional locks (it writes nothing), and does not
    look above the root for a repository."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION_VARIABLES}
    parent = os.path.dirname(os.path.abspath(root))
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_CEILING_DIRECTORIES=parent,
        LC_ALL="C",
    )
    return env


def is_work_tree(root: str) -> bool:
    """Whether ROOT/.git exists (a folder, or the file of a linked work tree or submodule):
    git is asked only about a project that is the top of its work tree."""
    try:
        os.lstat(os.path.join(root, ".git"))
    except (OSError, ValueError):
        return False
    return True


def rename_log(root: str, since: int | None) -> tuple[str, str]:
    """(git's output, "") for the renames recorded since the Unix time `since` (the whole
    history for None); ("", why) when git was not asked or failed."""
    import shutil
    import subprocess

    if not is_work_tree(root):
        return "", GIT_NO_REPO
    git = shutil.which("git")
    if git is None:
        return "", GIT_MISSING
    argv = [
        git,
        *("-c", "core.quotePath=off", "-c", "core.fsmonitor=false", "-c", "log.showSignature=off"),
        *("-C", root, "--no-pager", "log", "-M", "--diff-filter=R", "--name-status", "-z"),
        *("--no-ext-diff", "--no-textconv", "--relative", "--format=%x01%ct"),
    ]
    if since is not None:
        argv.append(f"--since=@{since}")
    posix = os.name == "posix"
    try:
        # Its own process group, so that a timeout ends whatever it started too.
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_environment(root),
            start_new_session=posix,
        )
    except OSError as exc:
        return "", f"cannot run git: {exc.strerror or exc}"
    try:
        out, err = process.communicate(timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, 9) if posix else process.kill()
        except OSError:
            pass
        process.communicate()
        return "", f"git log timed out after {GIT_TIMEOUT_S:g} s"
    if process.returncode != 0:
        first = err.decode("utf-8", "replace").strip().split("\n")[0][:200]
        return "", f"git log failed: {first or f'exit {process.returncode}'}"
    return out.decode("utf-8", "surrogateescape"), ""


def parse_renames(output: str) -> list[tuple[int, str, str]]:
    """(commit time, old path, new path) of each rename in `git log -M --diff-filter=R
    --name-status -z --format=%x01%ct` output: commits oldest first, each commit's renames in
    git's order."""
    commits: list[list[tuple[int, str, str]]] = [[]]
    when = 0
    fields = output.split("\0")
    index = 0
    while index < len(fields):
        field = fields[index].lstrip("\n")
        index += 1
        if field.startswith("\x01"):
            when = int(field[1:]) if field[1:].isdigit() else 0
            commits.append([])
        elif field[:1] == "R" and field[1:].isdigit() and index + 1 < len(fields):
            commits[-1].append((when, fields[index], fields[index + 1]))
            index += 2
    return [rename for commit in reversed(commits) for rename in commit]


def follow_moves(
    path: str, since: int | None, renames: Sequence[tuple[int, str, str]]
) -> str | None:
    """Where `path` went through the chain of renames at or after `since` (a file renamed, or
    a folder whose files were renamed into another folder); None when it did not move."""
    current = path
    for when, old, new in renames:
        if since is not None and when < since:
            continue
        if old == current:
            current = new
        elif old.startswith(current + "/"):
            rest = old[len(current) :]
            if new.endswith(rest) and len(new) > len(rest):
                current = new[: -len(rest)]
    return None if current == path else current
