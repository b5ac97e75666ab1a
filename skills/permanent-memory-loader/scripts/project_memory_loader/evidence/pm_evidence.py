# Evidence: the repository paths an entry names, and what became of each. Two parts:
#
# - pure: `path_spans` finds the paths a line of memory text names (a backticked token, or a
#   bare token with a `/` and a file name), `mark_line` puts `(gone)` after a gone one and
#   writes a moved one's new path in its place, with `(moved)`;
# - the cache miss: `check_paths` looks each one up strictly inside the project (pm_walk, which
#   is also the hook's steady state: whether each is there, for the block's cache key) and asks
#   git (pm_evidence_git), once and with a short timeout, where the gone paths went.
#
# Every scan is linear in its text (str methods, no patterns); tests/pm_evidence_test.py checks.
from __future__ import annotations

from . import pm_walk

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

# The state of a checked path: it is there, it is gone, or (any other value) it moved to
# MOVED + the new path.
EXISTS = "exists"
GONE = "gone"
MOVED = "moved to "
GONE_MARKER = "(gone)"
MOVED_MARKER = "(moved)"  # after the new path, which the line shows in place of the old one

MAX_PATH_CHARS = 300  # a longer token is not taken for a path
MAX_PATHS = 1000  # distinct paths checked per file, in file order; the rest are not checked

# A token that holds any of these is not a path: globs, placeholders, shell syntax, quotes,
# URLs and drive letters (`:`), Windows separators.
_NOT_IN_PATH = frozenset(" \t\n\r\f\v`*?[]{}<>|;&$%\"'(),=!^:\\#")
_LEADING = "([{\"'*<"  # stripped from the start of a bare token
_TRAILING = ")]}\"'.,;:!?*>"  # and from its end


def _line_suffix(token: str) -> int:
    """Where a trailing `:12`, `:12:5` or `#L12` / `#L12-L20` line reference starts (len(token)
    when there is none): `src/a.py:12` names `src/a.py`."""
    end = len(token)
    hash_at = token.rfind("#L")
    if hash_at > 0 and token[hash_at + 2 :].replace("-L", "").isdigit():
        return hash_at
    for _ in range(2):
        colon = token.rfind(":", 0, end)
        if colon <= 0 or not token[colon + 1 : end].isdigit():
            break
        end = colon
    return end


def _is_file_name(part: str) -> bool:
    """`name.ext` or `.name`: an extension of letters and digits, at least one letter."""
    dot = part.rfind(".")
    if dot < 0 or dot == len(part) - 1:
        return False
    ext = part[dot + 1 :]
    return len(ext) <= 12 and ext.isalnum() and not ext.isdigit()


is_file_name = _is_file_name  # what the file tools' hook takes a shell word for a file by


def path_key(token: str, backticked: bool) -> str | None:
    """The project-relative path a token names (`./a//b.py` -> `a/b.py`), or None when it is
    not one: it needs a `/`; absolute paths, URLs, globs, `..` and host names (`github.com/…`)
    are not paths; the last part must be a file name, or (backticked only) the token ends with
    `/` for a folder."""
    if not 0 < len(token) <= MAX_PATH_CHARS or "/" not in token:
        return None
    if token[0] in "/~-" or not _NOT_IN_PATH.isdisjoint(token):
        return None
    parts = [part for part in token.split("/") if part not in ("", ".")]
    if not parts or ".." in parts:
        return None
    if len(parts) > 1 and "." in parts[0] and not parts[0].startswith("."):
        return None  # a host name: github.com/org/repo.md
    if token.endswith("/"):
        if not backticked:
            return None
    elif not _is_file_name(parts[-1]):
        return None
    return "/".join(parts) + ("/" if token.endswith("/") else "")


def _bare_spans(text: str, start: int, end: int, spans: list[tuple[int, int, str]]) -> None:
    segment = text[start:end]
    if "/" not in segment:
        return
    position = 0
    for token in segment.split():
        position = segment.find(token, position)
        found_at, position = position, position + len(token)
        if "/" not in token:
            continue
        core = token.lstrip(_LEADING)
        lead = len(token) - len(core)
        core = core.rstrip(_TRAILING)
        shown = core
        core = core[: _line_suffix(core)]
        key = path_key(core, backticked=False)
        if key is not None:
            at = start + found_at + lead
            spans.append((at, at + len(shown), key))


def path_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, path) of each path `text` names, in order; `end` is where a marker goes
    (after a backticked token's closing backtick). Text inside backticks is one token: a span
    with a space is a command (`make test`), and nothing in it is a path."""
    spans: list[tuple[int, int, str]] = []
    index = 0
    while index < len(text):
        tick = text.find("`", index)
        if tick < 0:
            _bare_spans(text, index, len(text), spans)
            break
        _bare_spans(text, index, tick, spans)
        close = text.find("`", tick + 1)
        if close < 0:  # an unmatched backtick is a plain character
            _bare_spans(text, tick + 1, len(text), spans)
            break
        inner = text[tick + 1 : close]
        key = path_key(inner[: _line_suffix(inner)], backticked=True)
        if key is not None:
            spans.append((tick, close + 1, key))
        index = close + 1
    return spans


def named_paths(texts: Iterable[str]) -> list[str]:
    """The distinct paths the texts name, in order of first mention, at most MAX_PATHS."""
    seen: dict[str, None] = {}
    for text in texts:
        for _start, _end, key in path_spans(text):
            if key not in seen:
                if len(seen) >= MAX_PATHS:
                    return list(seen)
                seen[key] = None
    return list(seen)


def marker(state: str) -> str:
    """`(gone)`, `(moved)` (after the new path, written in place of the old one), or "" for a
    path that is there (or was not checked)."""
    if state == GONE:
        return GONE_MARKER
    if state.startswith(MOVED):
        return MOVED_MARKER
    return ""


def _moved_token(token: str, new_path: str) -> str:
    """A path's token as written (`src/a.py`, `` `src/a.py:12` ``), naming `new_path` instead:
    its backticks and its line reference kept."""
    tick = "`" if token[:1] == "`" and token[-1:] == "`" and len(token) > 1 else ""
    inner = token[1:-1] if tick else token
    return f"{tick}{new_path}{inner[_line_suffix(inner) :]}{tick}"


def mark_line(
    text: str, states: Mapping[str, str], clean: Callable[[str], str] = str
) -> tuple[str, bool, list[tuple[int, int]]]:
    """text with `(gone)` after each path that is gone, and each path git recorded as moved
    written as its new path (passed through `clean`) followed by `(moved)`, so that the line
    keeps about its length; whether the text names at least one path and every one it names is
    gone (a moved path points somewhere: not gone); and where each marked path and its marker
    are in the result (start, end), so that cutting the line can keep them together."""
    pieces: list[str] = []
    tails: list[tuple[int, int]] = []
    length = done = named = gone = 0
    for start, end, key in path_spans(text):
        state = states.get(key, EXISTS)
        named += 1
        gone += state == GONE
        shown = marker(state)
        if not shown:
            continue
        token = text[start:end]
        if state.startswith(MOVED):
            token = _moved_token(token, clean(state[len(MOVED) :]))
        head = text[done:start] + token
        tails.append((length + start - done, length + len(head) + 1 + len(shown)))
        pieces += [head, " ", shown]
        length += len(head) + 1 + len(shown)
        done = end
    pieces.append(text[done:])
    return "".join(pieces), named > 0 and gone == named, tails


def check_paths(
    root: str, paths: Sequence[str], since: Mapping[str, int | None]
) -> tuple[dict[str, str], str]:
    """Each path's state (EXISTS, GONE, or MOVED + new path) and what git said (GIT_ASKED, or
    why it was not: GIT_NOT_NEEDED, GIT_NO_REPO, GIT_MISSING, or its failure). `since` is the
    Unix time each path's epic was completed (None: the whole history). git is run once, only
    when a path is gone."""
    from .pm_evidence_git import GIT_ASKED, GIT_NOT_NEEDED, follow_moves, parse_renames, rename_log

    walk = pm_walk.Walk(root)
    states = {path: EXISTS if walk.exists(path) else GONE for path in paths}
    gone = [path for path in paths if states[path] == GONE]
    if not gone:
        return states, GIT_NOT_NEEDED
    times = [since.get(path) for path in gone]
    earliest = None if None in times else min(t for t in times if t is not None)
    output, problem = rename_log(root, earliest)
    if problem:
        return states, problem
    renames = parse_renames(output)
    for path in gone:
        moved = follow_moves(path.rstrip("/"), since.get(path), renames)
        if moved and path.endswith("/"):
            moved += "/"
        # A target the hook's list of paths could not hold (pm_cache) reads as gone.
        if moved and len(moved) <= MAX_PATH_CHARS and "\n" not in moved and walk.exists(moved):
            states[path] = MOVED + moved
    return states, GIT_ASKED


def listed_paths(paths: Sequence[str], states: Mapping[str, str]) -> list[str]:
    """What the hook checks on a cache hit: the named paths, then where moved ones went."""
    listed = dict.fromkeys(paths)
    for path in paths:
        state = states.get(path, EXISTS)
        if state.startswith(MOVED):
            listed.setdefault(state[len(MOVED) :])
    return list(listed)


def bits_of(paths: Sequence[str], states: Mapping[str, str]) -> str:
    """existence_bits as the render saw it: a named path is there when its state is EXISTS, a
    move's target was there when the move was found."""
    return "".join("1" if states.get(path, EXISTS) == EXISTS else "0" for path in paths)
