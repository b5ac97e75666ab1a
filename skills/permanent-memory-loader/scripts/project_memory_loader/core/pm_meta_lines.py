# An epic's metadata lines, `**Completed:** …`, `**Keywords:** …` and `**Paths:** …`: what
# each holds (bold, list marker and case optional), and the Keywords terms and Paths globs split
# out and bounded. Pure, builtins only; pm_parse places them in an epic, and the writing
# commands (add, --append, the merge) read and extend the same lines through them.
from __future__ import annotations

_BLANK = " \t"


def _after_key(line: str, key: str) -> str | None:
    """What follows `key:` on a metadata line such as `**Completed:** …` (bold, list marker and
    case optional), with the blanks and bold after the colon stripped; None for another line."""
    rest = line.lstrip(_BLANK)
    if rest[:1] in ("-", "*") and rest[1:2] in (" ", "\t"):
        rest = rest[1:].lstrip(_BLANK)
    rest = rest.lstrip("*")
    if rest[: len(key)].lower() != key:
        return None
    rest = rest[len(key) :].lstrip("*").lstrip(_BLANK)
    if rest[:1] != ":":
        return None
    return rest[1:].lstrip(_BLANK).lstrip("*")


def completed_value(line: str) -> str | None:
    """The value of a `**Completed:** …` line (bold, list marker and case optional), or None."""
    rest = _after_key(line, "completed")
    return None if rest is None else rest.lstrip(_BLANK).rstrip(_BLANK)


# An epic's `**Keywords:** term, term, …` line: words its author chose for finding the epic
# (recall and `search` score them); never shown in a block. At most this many terms of at most
# this many characters each are read.
MAX_KEYWORDS = 40
MAX_KEYWORD_CHARS = 60


def keywords_value(line: str) -> str | None:
    """What follows the key of a `**Keywords:** …` line (bold, list marker and case optional),
    as written, or None."""
    rest = _after_key(line, "keywords")
    return None if rest is None else rest.strip(_BLANK).rstrip("*").rstrip(_BLANK)


# An epic's `**Paths:** glob, glob` line: the code its decisions govern, as gitignore-style
# globs relative to the project's root (pm_globs); the file tools' hook matches the file being
# worked on against them. Never shown in a block. At most this many globs of at most this many
# characters each are read.
MAX_PATHS = 40
MAX_PATH_CHARS = 200


def paths_value(line: str) -> str | None:
    """What follows the key of a `**Paths:** …` line (bold, list marker and case optional), as
    written, or None."""
    rest = _after_key(line, "paths")
    if rest is None:
        return None
    value = rest.strip(_BLANK)
    # `**Paths: a/**` closes its bold at the end; `**Paths:** a/**` ends with a glob's `**`.
    if line[: len(line) - len(rest)].count("**") == 1 and value.endswith("**"):
        value = value[:-2]
    return value.rstrip(_BLANK)


def split_paths(value: str) -> tuple[str, ...]:
    """A Paths value's globs: split at commas, trimmed, backquotes around one taken off, empty
    ones dropped, at most MAX_PATHS of at most MAX_PATH_CHARS (a longer one is left out)."""
    found = []
    for part in value.split(","):
        glob = part.strip()
        if len(glob) > 1 and glob[0] == glob[-1] == "`":
            glob = glob[1:-1].strip()
        if glob and len(glob) <= MAX_PATH_CHARS:
            found.append(glob)
            if len(found) == MAX_PATHS:
                break
    return tuple(found)


# An epic's `**Source:** path (imported DIGEST, COUNTS)` line: the record `import` made the epic
# from (a project-relative path), and what it wrote there, so that a later import of the same
# record finds the epic, leaves it alone while the record is unchanged and, when it changed,
# replaces only its own lines. Never shown in a block.
def source_value(line: str) -> str | None:
    """What follows the key of a `**Source:** …` line (bold, list marker and case optional), as
    written, or None."""
    rest = _after_key(line, "source")
    return None if rest is None else rest.strip(_BLANK).rstrip("*").rstrip(_BLANK)


def split_source(value: str) -> tuple[str, str]:
    """A Source value's path and the stamp in its trailing `(imported …)`, "" when it has none."""
    mark = value.rfind(" (imported ")
    if mark < 0 or not value.endswith(")"):
        return value, ""
    return value[:mark].rstrip(_BLANK), value[mark + len(" (imported ") : -1].strip(_BLANK)


def is_bold_key(line: str) -> bool:
    """The line's key is bold (`**Keywords:**`, `- **Keywords**:`): metadata wherever it is."""
    rest = line.lstrip(_BLANK)
    if rest[:1] in ("-", "*") and rest[1:2] in (" ", "\t"):
        rest = rest[1:].lstrip(_BLANK)
    return rest.startswith("**")


def split_keywords(value: str) -> tuple[str, ...]:
    """A Keywords value's terms: split at commas, trimmed, empty ones dropped, each cut to
    MAX_KEYWORD_CHARS, at most MAX_KEYWORDS of them."""
    found = []
    for part in value.split(","):
        term = part.strip()[:MAX_KEYWORD_CHARS].rstrip()
        if term:
            found.append(term)
            if len(found) == MAX_KEYWORDS:
                break
    return tuple(found)
