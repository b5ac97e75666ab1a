# Recall at the file, its path table: which epics and entries govern a project-relative path.
# Built when the block is rendered (the hook's cache miss, `inspect --path`) from the recall
# index's entries and their epics: each epic's Paths globs (pm_globs), and the paths each entry
# names (pm_evidence, the same extraction the block marks `(gone)` with). Cached beside the
# recall index under the same key (pm_recall_store), so that a file tool's call reads this small
# table only and, when nothing governs its file (most calls), stops there.
#
# Also here: the exact tokens of the block's `For <path>:` line without the tokenizer. cl100k
# cuts a text into pre-tokens (its pattern) and counts each on its own; `pretokens` cuts a plain
# ASCII line the same way (tests/pm_path_index_test.py checks it against the pattern), and the
# table keeps the count of every pre-token the memory's paths and globs are made of, and of
# common ones; a pre-token it does not know counts as its bytes, an upper bound (a token is at
# least one byte), so the line is never counted short.
#
# The lookup side imports pm_globs only (no typing): the file tools' hook runs it.
from __future__ import annotations

from ..evidence import pm_globs

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ..core.pm_parse import Epic
    from .pm_recall import Index
    from .pm_recall_index import Source

    # format, epics (ID, first entry, one past the last, globs as written), globs (epic,
    # parts, folder only, as written), anchored (a glob's first part: its globs), floating (the
    # globs that may match at any depth or start with a wildcard), named (a path an entry
    # names, a folder with its trailing `/`: the entries), pieces (a pre-token: its tokens),
    # and the tokens of the header's own pre-tokens.
    PathTable = dict[str, Any]

TABLE_FORMAT = 1
STAMP = "[permanent-memory | trust:file]"  # pm_render.STAMP (a test keeps them equal)
HEADER = "For {}:"
# Per call, the tokens a file's block may add (stamp included); the per-session budget is
# prompt-time recall's (pm_recall.SESSION_BUDGET), one budget for both.
FILE_BUDGET = 80
# The score (pm_recall.score, in units of one rare word) a governing epic's best entry needs
# against the file's path and the session's prompts for the epic's entries to be offered; the
# entries that name the file need none. Tuned on the evaluation's tune parts
# (tests/projects/, scripts/bench_inputs.py's file_evaluation).
FILE_THRESHOLD = 3.0
# Characters a path may hold to be shown as it is and counted by pre-tokens; any other (a
# space, a quote, a bracket, a control or non-ASCII character) makes the line cleaned as memory
# text is and counted as its bytes.
PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+@=~,#%")
LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
DIGITS = frozenset("0123456789")
MAX_SHOWN_PATH = 100  # a longer path is shown as `…` and its end
# Pre-tokens counted into every table: common pieces of file paths (extensions, folder names).
COMMON_PIECES = (
    ".py .ts .tsx .js .jsx .mjs .cjs .go .rs .rb .java .kt .kts .swift .c .h .cc .cpp .hpp .cs"
    " .php .scala .ex .exs .erl .hs .ml .clj .lua .dart .vue .svelte .md .rst .txt .json .yml"
    " .yaml .toml .ini .cfg .conf .lock .html .css .scss .sql .proto .sh .bash .gradle .xml"
    " .graphql .tf .mod .sum .pyi .d .spec .test .config .env .gitignore"
    " src /src lib /lib test /test tests /tests docs /docs app /app api /api pkg /pkg cmd /cmd"
    " internal /internal core /core utils /utils util /util common /common server /server"
    " client /client models /models model /model views /views components /components"
    " scripts /scripts config /config index /index main /main __ __init __.py init /__ .github"
    " /workflows workflows migrations /migrations packages /packages crates /crates include"
    " /include"
).split()


def pretokens(text: str) -> list[str]:
    """The pre-tokens cl100k cuts `text` into, for a text of PLAIN characters, one optional
    leading space and one optional final newline (its pattern's alternatives in order: letters
    with at most one non-letter before them, one to three digits, a run of other characters
    with the line ends after it)."""
    found = []
    index, end = 0, len(text)
    while index < end:
        char = text[index]
        after = text[index + 1] if index + 1 < end else ""
        if char in LETTERS or (char not in DIGITS and char != "\n" and after in LETTERS and after):
            stop = index + 1
            while stop < end and text[stop] in LETTERS:
                stop += 1
        elif char in DIGITS:
            stop = index + 1
            while stop < end and stop < index + 3 and text[stop] in DIGITS:
                stop += 1
        elif char == " " and after in DIGITS:
            stop = index + 1  # a space before a digit stands alone
        elif char == "\n":
            stop = index + 1
            while stop < end and text[stop] == "\n":
                stop += 1
        else:
            stop = index + 1
            while stop < end and text[stop] not in LETTERS and text[stop] not in DIGITS:
                if text[stop] in " \n":
                    break
                stop += 1
            while stop < end and text[stop] == "\n":
                stop += 1
        found.append(text[index:stop])
        index = stop
    return found


def header_line(relpath: str) -> str:
    return HEADER.format(relpath)


def shown_path(relpath: str) -> str:
    """The path as the header shows it: as it is when PLAIN, else cleaned as memory text (no
    stamp, tag or control character can pass); a long one cut to its end."""
    shown = relpath
    if not PLAIN.issuperset(relpath):
        from ..shared import memory_text

        shown = " ".join(memory_text.clean(relpath).split())
    if len(shown) > MAX_SHOWN_PATH:
        shown = "\u2026" + shown[-(MAX_SHOWN_PATH - 1) :]
    return shown


def header_tokens(table: PathTable, shown: str) -> int:
    """Tokens of `For <shown>:` and its newline: exact when every pre-token is in the table,
    else more (an unknown one counts as its bytes)."""
    line = header_line(shown) + "\n"
    if not PLAIN.issuperset(shown):
        return len(line.encode("utf-8", "surrogatepass"))
    pieces = table["pieces"]
    return sum(pieces.get(piece, len(piece)) for piece in pretokens(line))


def known_pieces(texts: Sequence[str], count: Callable[[str], int]) -> dict[str, int]:
    """The tokens of each pre-token of the header lines of `texts` and of COMMON_PIECES."""
    pieces: dict[str, int] = {}
    lines = [header_line(text) + "\n" for text in texts if PLAIN.issuperset(text)]
    common = [f" {piece}" for piece in COMMON_PIECES if piece[0] in LETTERS]  # a path's first
    for line in [*lines, *COMMON_PIECES, *common, header_line("") + "\n"]:
        for piece in pretokens(line):
            if piece not in pieces:
                pieces[piece] = count(piece)
    return pieces


# --- the lookup (every file tool call) --------------------------------------------------------


def governing(
    table: PathTable, relpath: str, folder: bool = False
) -> tuple[list[int], dict[int, list[str]]]:
    """The entries that name `relpath` (or a folder it is in), in index order, and the epics
    whose globs govern it, each with the globs that do. `folder`: the path is a folder (a
    search's), governed by a glob of the folder itself or of one it is in."""
    parts = [part for part in relpath.split("/") if part not in ("", ".")]
    if not parts:
        return [], {}
    named = table["named"]
    entries: list[int] = []
    for end in range(1, len(parts) + 1):
        key = "/".join(parts[:end])
        found = named.get(key + "/")
        if found is not None:
            entries.extend(found)
        if end == len(parts) and not folder:
            found = named.get(key)
            if found is not None:
                entries.extend(found)
    candidates = list(table["floating"])
    candidates.extend(table["anchored"].get(parts[0], ()))
    epics: dict[int, list[str]] = {}
    if candidates:
        path = relpath + "/\0" if folder else relpath
        globs = table["globs"]
        for number in sorted(set(candidates)):
            epic, glob_parts, folder_only, text = globs[number]
            if pm_globs.parts_match(glob_parts, folder_only, path):
                epics.setdefault(epic, []).append(text)
    return sorted(set(entries)), epics


# --- the build (the cache miss) ---------------------------------------------------------------


def build_table(sources: Sequence[Source], index: Index, count: Callable[[str], int]) -> PathTable:
    """The path table of the recall index built from `sources` (pm_recall_index.index_files):
    its entries in the same order, each with its epic."""
    from ..evidence.pm_evidence import path_spans
    from .pm_recall_index import MAX_ENTRIES, items

    found = [item for source in sources for item in items(source)][:MAX_ENTRIES]
    epics: list[tuple[str, int, int, tuple[str, ...]]] = []
    slot_of: dict[int, int] = {}
    globs: list[tuple[int, tuple[str, ...], bool, str]] = []
    anchored: dict[str, list[int]] = {}
    floating: list[int] = []
    named: dict[str, list[int]] = {}
    for number, item in enumerate(found):
        slot = slot_of.get(id(item.epic))
        if slot is None:
            slot = slot_of[id(item.epic)] = len(epics)
            written = tuple(g for g in item.epic.paths if pm_globs.glob_problem(g) is None)
            epics.append((index["entries"][number][1], number, number + 1, written))
            for text in written:
                glob = pm_globs.parse_glob(text)
                first = glob.parts[0] if glob.parts else "**"
                if first == "**" or any(char in first for char in "*?["):
                    floating.append(len(globs))
                else:
                    anchored.setdefault(first, []).append(len(globs))
                globs.append((slot, glob.parts, glob.folder_only, text))
        epic_id, start, _end, written = epics[slot]
        epics[slot] = (epic_id, start, number + 1, written)
        for _start, _stop, path in path_spans(item.text):
            held = named.setdefault(path, [])
            if not held or held[-1] != number:
                held.append(number)
    shown = [*named, *(pm_globs.literal_prefix(pm_globs.parse_glob(g[3])) for g in globs)]
    return {
        "format": TABLE_FORMAT,
        "epics": epics,
        "globs": globs,
        "anchored": {first: tuple(numbers) for first, numbers in anchored.items()},
        "floating": tuple(floating),
        "named": {path: tuple(numbers) for path, numbers in named.items()},
        "pieces": known_pieces(shown, count),
    }


def table_of(
    epics: Sequence[Epic],
    lines: Sequence[str],
    archives: Sequence[tuple[str, bytes]],
    index: Index,
    count: Callable[[str], int],
) -> PathTable:
    """build_table from what pm_recall_index.index_files built `index` from."""
    from ..core.pm_load import decode
    from ..core.pm_parse import parse_permanent
    from .pm_recall_index import MEMORY_SOURCE, Source

    sources = [Source(MEMORY_SOURCE, epics, lines)]
    for name, data in archives:
        text = decode(data)
        sources.append(Source(name, parse_permanent(text), text.split("\n")))
    return build_table(sources, index, count)


# --- the choice (a call whose file something governs) ----------------------------------------


def support_text(relpath: str, prompts: Sequence[str]) -> str:
    """What an epic's entries are scored against for a file: the file's own path, then the
    session's prompts, newest first."""
    return "\n".join([relpath, *reversed(prompts)])


def candidates(
    table: PathTable,
    index: Index,
    named: Sequence[int],
    epics: dict[int, list[str]],
    support: str,
    threshold: float,
    received: set[str],
) -> tuple[list[int], dict[int, float]]:
    """The entries to offer for a file, best first: those that name it (index order), then the
    entries of each governing epic that the support text supports (its best entry's score at
    least `threshold`), by score, unless recall already sent one of the epic's entries in this
    context (one epic, one block: the session-start block's lines do not count); and every
    governing epic's best score (for `inspect`; an epic already served has none)."""
    order = list(dict.fromkeys(named))
    best: dict[int, float] = {}
    if not epics:
        return order, best
    from . import pm_recall

    entries = index["entries"]
    scores, _matched, _asked = pm_recall.score(index, support, explain=False)
    supported: list[tuple[float, int]] = []
    for slot in sorted(epics):
        _epic_id, start, end, _globs = table["epics"][slot]
        if any(entries[n][0] in received and not entries[n][5] for n in range(start, end)):
            continue
        best[slot] = max((scores.get(n, 0.0) for n in range(start, end)), default=0.0)
        if best[slot] >= threshold:
            supported.extend((scores.get(n, 0.0), n) for n in range(start, end))
    seen = set(order)
    for _score, number in sorted(supported, key=lambda pair: (-pair[0], pair[1])):
        if number not in seen:
            seen.add(number)
            order.append(number)
    return order, best


def file_key(relpath: str) -> str:
    """What a session's record keeps of a file it was sent a block for (the form of an entry's
    key, pm_recall_index.entry_key, which no entry has): the next call on it sends nothing."""
    from ..shared import hook_io

    return hook_io.digest(f"file\0{relpath}".encode("utf-8", "surrogatepass"))[:16]


def fill(
    table: PathTable,
    index: Index,
    relpath: str,
    order: Sequence[int],
    received: set[str],
    limit: int,
) -> tuple[str, list[str], int]:
    """The block for `relpath` of the entries in `order` that this context has not received and
    that fit within `limit` tokens (stamp and header included); its keys and tokens. ("", [],
    0) when none fits."""
    entries = index["entries"]
    shown = shown_path(relpath)
    used = index["stamp_tokens"] + header_tokens(table, shown)
    lines: list[str] = []
    keys: list[str] = []
    for number in order:
        key, _epic_id, _label, line, tokens = entries[number][:5]
        if key in received or key in keys or used + tokens > limit:
            continue
        lines.append(line)
        keys.append(key)
        used += tokens
    if not lines:
        return "", [], 0
    text = "\n".join([STAMP, header_line(shown), *lines]) + "\n"
    return text, keys, used
