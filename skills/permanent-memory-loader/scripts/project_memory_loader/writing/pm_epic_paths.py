# `add`'s `paths` field: the globs an epic's `**Paths:**` line names (the code its decisions
# govern; pm_globs says how they match), checked and laid out. Pure; pm_epic_input uses it for
# a new epic, pm_append_plan for `add --append`.
from __future__ import annotations

from collections.abc import Sequence

from ..core.pm_errors import LoaderError
from ..core.pm_meta_lines import MAX_PATH_CHARS, MAX_PATHS, paths_value, split_paths
from ..evidence.pm_globs import glob_problem
from ..shared import memory_text

PATHS_LABEL = "**Paths:**"
MAX_PATHS_LINE_CHARS = 1000  # the line's globs, joined with ", "
PATHS_WHAT = 'a list of globs relative to the project\'s root, e.g. ["billing_api/webhooks/**"]'


class InvalidPaths(LoaderError):
    """A glob cannot be written as asked; str() names it and what to fix."""


def paths_line(globs: Sequence[str]) -> str:
    return f"{PATHS_LABEL} {', '.join(globs)}"


def paths_over(globs: Sequence[str]) -> str | None:
    """What is over the limits of one Paths line, or None when it is within them."""
    if len(globs) > MAX_PATHS:
        return f"{len(globs)} globs; at most {MAX_PATHS}"
    joined = len(", ".join(globs))
    if joined > MAX_PATHS_LINE_CHARS:
        return f"{joined} characters in all; at most {MAX_PATHS_LINE_CHARS}"
    return None


def _glob(value: object, index: int, notes: list[str]) -> str | None:
    where = f"paths[{index}]"
    if not isinstance(value, str):
        raise InvalidPaths(f"{where}: must be text, got {type(value).__name__}")
    text = " ".join(memory_text.strip_unsafe(value).split())
    if len(text) > 1 and text[0] == text[-1] == "`":
        text = text[1:-1].strip()
    if not text:
        return None
    if "," in text:
        raise InvalidPaths(f"{where}: {text!r} holds a comma, which separates globs")
    if memory_text.redact_secrets(text)[1]:
        notes.append(f"warning: {where} looked like a secret; it is left out")
        return None
    problem = glob_problem(text)
    if problem is not None:
        raise InvalidPaths(f"{where}: {problem}")
    if len(text) > MAX_PATH_CHARS:
        raise InvalidPaths(f"{where}: {len(text)} characters; at most {MAX_PATH_CHARS}")
    if split_paths(paths_value(paths_line([text])) or "") != (text,):
        raise InvalidPaths(f"{where}: the loader would not read {text!r} back as written")
    return text


def read_paths(value: object, notes: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The `paths` list, cleaned, empty globs dropped: each glob once, and the globs given
    again."""
    if value is None:
        return (), ()
    if not isinstance(value, list):
        raise InvalidPaths(f"paths: must be {PATHS_WHAT}, got {type(value).__name__}")
    kept: list[str] = []
    repeated: list[str] = []
    for index, item in enumerate(value):
        glob = _glob(item, index, notes)
        if glob is not None:
            (repeated if glob in kept else kept).append(glob)
    over = paths_over(kept)
    if over is not None:
        raise InvalidPaths(f"paths: {over}")
    return tuple(kept), tuple(repeated)


def extended_paths_line(line: str, had_globs: bool, globs: Sequence[str]) -> str:
    """A Paths line as written with `globs` appended after its last one (or after the key)."""
    body = line.rstrip(" \t")
    added = ", ".join(globs)
    if not had_globs:
        return f"{body} {added}"
    return f"{body}{' ' if body.endswith(',') else ', '}{added}"
