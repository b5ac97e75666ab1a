"""An epic's Paths globs: gitignore-style patterns relative to the project's root, matched
against a project-relative path (`/`-separated). Pure and builtins only (no `re`): the file
tools' hook matches with it on every call.

- A pattern with a `/` other than a trailing one is anchored at the root (`src/auth/**`); one
  without matches at any depth (`*.proto`, `migrations`).
- A trailing `/` matches folders only; a pattern that matches a folder matches everything in it
  (`billing_api/webhooks` governs `billing_api/webhooks/handler.py`), as gitignore ignores a
  folder's contents.
- `*` and `?` match within one part of the path, `[abc]`, `[a-z]`, `[!a]` one character of a
  set, `**` any number of parts (none included).
- Refused (`glob_problem` says why): an absolute path, a `..` part, a `!` negation, a
  backslash, and an empty pattern.

The file tools' hook imports it on a match, so it imports no typing (Glob is a plain class).
"""

from __future__ import annotations


class Glob:
    """A parsed glob: the pattern as written, its `/`-separated parts (`**` ones included),
    and whether it was written with a trailing `/` (folders only)."""

    __slots__ = ("folder_only", "parts", "text")

    def __init__(self, text: str, parts: tuple[str, ...], folder_only: bool) -> None:
        self.text = text
        self.parts = parts
        self.folder_only = folder_only

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Glob):
            return NotImplemented
        return (self.text, self.parts, self.folder_only) == (
            other.text,
            other.parts,
            other.folder_only,
        )

    def __hash__(self) -> int:
        return hash((self.text, self.parts, self.folder_only))

    def __repr__(self) -> str:
        return f"Glob({self.text!r}, {self.parts!r}, {self.folder_only!r})"


def glob_problem(pattern: str) -> str | None:
    """Why `pattern` cannot be a Paths glob, or None when it can."""
    text = pattern.strip()
    if not text:
        return "an empty glob"
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        return f"{text!r} is absolute: write it relative to the project's root"
    if "\\" in text:
        return f"{text!r} holds a backslash: separate folders with /"
    if text.startswith("!"):
        return f"{text!r} is a negation, which a Paths line does not take"
    if ".." in text.rstrip("/").split("/"):
        return f"{text!r} leaves the project (..)"
    return None


def parse_glob(pattern: str) -> Glob:
    """The glob of a pattern `glob_problem` accepts."""
    text = pattern.strip()
    body = text.rstrip("/")
    parts = tuple(part for part in body.split("/") if part not in ("", "."))
    folder_only = text.endswith("/")
    if len(parts) > 1 and parts[-1] == "**":  # `dir/**`: everything in dir, as `dir/` says
        parts, folder_only = parts[:-1], True
    if len(parts) == 1 and "/" not in body:
        parts = ("**", *parts)  # no slash: at any depth
    return Glob(text, parts, folder_only)


def glob_matches(glob: Glob, path: str) -> bool:
    """Whether `glob` governs the project-relative `path` (the path itself, or a folder it is in
    for a glob that names a folder)."""
    return parts_match(glob.parts, glob.folder_only, path)


def parts_match(parts: tuple[str, ...], folder_only: bool, path: str) -> bool:
    """glob_matches for a glob's parts and folder flag (what the hook's path table keeps): the
    parts run as a small automaton over the path's names, one pass, so a glob of several `**`
    costs its parts times the names, never more."""
    names = [name for name in path.split("/") if name not in ("", ".")]
    last = len(names) - 1 if folder_only else len(names)
    states = _skip_stars(parts, {0})
    for name in names[:last]:
        moved = set()
        for state in states:
            if state < len(parts):
                if parts[state] == "**":
                    moved.add(state)  # `**` takes this name too
                elif _name_matches(parts[state], name):
                    moved.add(state + 1)
        states = _skip_stars(parts, moved)
        if len(parts) in states:
            return True  # the names so far are a path the glob matches
        if not states:
            return False
    return False


def _skip_stars(parts: tuple[str, ...], states: set[int]) -> set[int]:
    """The states, with each `**` also matched by no name at all."""
    found = set(states)
    for state in sorted(states):
        while state < len(parts) and parts[state] == "**":
            state += 1
            found.add(state)
    return found


def literal_prefix(glob: Glob) -> str:
    """The leading parts of `glob` that hold no wildcard, joined (`src/auth` for `src/auth/**`;
    empty for a glob that may match at any depth): every path it matches starts with them."""
    fixed = []
    for part in glob.parts:
        if any(char in part for char in "*?["):
            break
        fixed.append(part)
    return "/".join(fixed)


def _name_matches(pattern: str, name: str) -> bool:
    """fnmatch within one part of a path, without `re`: `*`, `?` and `[...]` sets. Each element
    but `*` takes one character, so the last `*` is the only one ever moved back to: time is
    the pattern's length times the name's."""
    at = char = 0
    star, mark = -1, 0
    while char < len(name):
        if at < len(pattern) and pattern[at] == "*":
            star, mark = at, char
            at += 1
            continue
        step = _element(pattern, at, name[char])
        if step >= 0:
            at, char = step, char + 1
        elif star >= 0:
            at, mark = star + 1, mark + 1
            char = mark
        else:
            return False
    while at < len(pattern) and pattern[at] == "*":
        at += 1
    return at == len(pattern)


def _element(pattern: str, at: int, char: str) -> int:
    """Where the pattern continues when its element at `at` (a character, `?` or a `[...]`
    set; `[` without a closing `]` is itself) takes `char`; -1 when it does not."""
    if at >= len(pattern):
        return -1
    head = pattern[at]
    if head == "?":
        return at + 1
    if head == "[":
        end = pattern.find("]", at + 2)
        if end > 0:
            return end + 1 if _in_set(pattern[at + 1 : end], char) else -1
    return at + 1 if head == char else -1


def _in_set(members: str, char: str) -> bool:
    negated = members[:1] in ("!", "^")
    if negated:
        members = members[1:]
    found = False
    index = 0
    while index < len(members):
        if index + 2 < len(members) and members[index + 1] == "-":
            found = found or members[index] <= char <= members[index + 2]
            index += 3
        else:
            found = found or members[index] == char
            index += 1
    return found != negated
