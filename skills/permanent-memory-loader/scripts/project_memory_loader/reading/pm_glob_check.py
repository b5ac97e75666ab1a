# `check`'s findings about an epic's Paths globs: a glob the line cannot hold (absolute, `..`,
# a negation: an error, as `add` refuses it), one whose fixed folders lead out of the project
# through a link (an error: the hook never follows it), and one that matches no file of the
# project (a warning, like a named path that is gone). The project's tree is read without
# following links, `.git` left out, at most MAX_WALKED entries (past that, no warning).
from __future__ import annotations

import os
from collections.abc import Sequence

from ..core.pm_parse import Epic
from ..evidence.pm_globs import glob_matches, glob_problem, literal_prefix, parse_glob
from .pm_findings import ERROR, WARNING, Finding

MAX_WALKED = 100_000
SKIPPED_FOLDERS = frozenset({".git"})


def _leads_out(root: str, prefix: str) -> bool:
    """Whether a link among the folders of `prefix` (relative to root) points outside root."""
    top = os.path.abspath(root)
    here = top
    for part in prefix.split("/") if prefix else []:
        here = os.path.join(here, part)
        if not os.path.islink(here):
            continue
        try:
            target = os.readlink(here)
        except OSError:
            return True
        resolved = os.path.normpath(os.path.join(os.path.dirname(here), target))
        if resolved != top and not resolved.startswith(top + os.sep):
            return True
    return False


def _project_files(root: str, folder: str) -> Sequence[str] | None:
    """The project-relative paths of the files and folders under `folder`, links not followed;
    None past MAX_WALKED entries."""
    found: list[str] = []
    top = os.path.join(root, folder) if folder else root
    for current, folders, files in os.walk(top):
        folders[:] = [name for name in folders if name not in SKIPPED_FOLDERS]
        relative = os.path.relpath(current, root).replace(os.sep, "/")
        base = "" if relative == "." else relative + "/"
        found.extend(base + name for name in (*folders, *files))
        if len(found) > MAX_WALKED:
            return None
    return found


def glob_findings(epics: Sequence[Epic], root: str | None) -> list[Finding]:
    """The findings about each epic's Paths globs; without a project root only the globs'
    own form is checked."""
    findings = []
    listed: dict[str, Sequence[str] | None] = {}
    for epic in epics:
        if epic.paths_line is None:
            continue
        line = epic.paths_line + 1
        for text in epic.paths:
            problem = glob_problem(text)
            if problem is not None:
                findings.append(Finding(line, ERROR, f"{epic.epic_id}: Paths: {problem}"))
                continue
            if root is None:
                continue
            glob = parse_glob(text)
            prefix = literal_prefix(glob)
            if _leads_out(root, prefix):
                message = f"{epic.epic_id}: Paths: {text!r} leads out of the project through a link"
                findings.append(Finding(line, ERROR, message))
                continue
            if prefix not in listed:
                listed[prefix] = _files_under(root, prefix)
            files = listed[prefix]
            if files is not None and not any(glob_matches(glob, path) for path in files):
                message = f"{epic.epic_id}: Paths: {text!r} matches no file of the project"
                findings.append(Finding(line, WARNING, message))
    return findings


def _files_under(root: str, prefix: str) -> Sequence[str] | None:
    """The paths a glob with this fixed prefix can match: the prefix and what is under it."""
    if not prefix:
        return _project_files(root, "")
    if not os.path.lexists(os.path.join(root, prefix)):
        return []
    if not os.path.isdir(os.path.join(root, prefix)):
        return [prefix]
    under = _project_files(root, prefix)
    return None if under is None else [prefix, *under]
