# The hook's cache of rendered blocks, both halves of its format: where an entry lives (one per
# memory file and interpreter), the key it must carry (this code, the day, the options, the
# file's content, whether the paths it names are there), reading an entry back and writing one;
# the list of those paths beside it (keyed by the file's content, so a cache hit knows them
# without parsing the file); and the per-session marks of which
# block a session was last sent, forgotten after a month untouched. Everything lands in the
# cache folder, atomically (a temporary file in the same folder, then os.replace). Import-light:
# the hook's steady state reads entries and marks through it.
from __future__ import annotations

import os
import sys
import time

from ..shared import hook_io, memory_io

__version__ = "0.1.0"  # the plugin's, part of every key (a test keeps it equal to pyproject's)
CACHE_FORMAT = "pm-block-2"
PATHS_FORMAT = "pm-paths-1"
# The longest entry read back: the hook's largest block (HOOK_MAX_CHARS in pm_hook) in UTF-8,
# and its header.
MAX_ENTRY_BYTES = 10000 * 4 + 256
# The longest paths entry: the most paths a file's entries are checked for, and as many moves'
# targets, each a line of at most pm_evidence.MAX_PATH_CHARS characters (300) in UTF-8.
MAX_PATHS_BYTES = 2 * 1000 * (300 * 4 + 1) + 256
SESSION_STATE_DAYS = 30
# The modules whose code decides the block, from the loader's folder (LOADER): a change to any of
# them invalidates the cache.
RENDER_MODULES = (
    "pm_hook.py",
    "core/pm_cache.py",
    "evidence/pm_evidence.py",
    "evidence/pm_evidence_git.py",
    "evidence/pm_walk.py",
    "core/pm_file.py",
    "core/pm_fit.py",
    "core/pm_load.py",
    "core/pm_meta_lines.py",
    "core/pm_parse.py",
    "core/pm_render.py",
    "core/pm_tokens.py",
    "recall/pm_recall.py",
    "recall/pm_recall_index.py",
    "recall/pm_recall_store.py",
    "shared/memory_text.py",
)
LOADER = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_dir() -> str | None:
    """Where the hook keeps rendered blocks and per-session state; never the repository."""
    return hook_io.cache_dir("permanent-memory")


_STAMP: list[str] = []


def code_stamp() -> str:
    """hook_io.code_stamp of RENDER_MODULES, taken once per process."""
    if not _STAMP:
        _STAMP.append(hook_io.code_stamp(LOADER, RENDER_MODULES))
    return _STAMP[0]


def block_key(options: tuple[int, int, int], content: str, evidence: str = "") -> str:
    """What an entry must have been made from to be used today: this code, the options (target,
    hard cap, stale days), the file's content (its digest, or its size when unread) and the
    evidence (pm_walk.evidence_key: which of the paths it names are there)."""
    today = time.strftime("%Y-%m-%d", time.gmtime())
    key = f"{__version__}|{code_stamp()}|{today}|{options}|{content}|{evidence}"
    return hook_io.digest(key.encode())


def paths_slot(slot: str) -> str:
    """Where the paths the memory file of block entry `slot` names are kept."""
    return slot[: -len(".txt")] + ".paths"


def paths_key(content: str) -> str:
    return hook_io.digest(f"{PATHS_FORMAT}|{__version__}|{code_stamp()}|{content}".encode())


def read_paths(slot: str, content: str) -> list[str] | None:
    """The paths the file with this content names (pm_load.Evidence.listed), or None when they
    are not cached: the file must be parsed."""
    entry = read_cache_entry(paths_slot(slot), paths_key(content), MAX_PATHS_BYTES)
    if entry is None:
        return None
    return entry.split("\n") if entry else []


def store_paths(slot: str, content: str, paths: list[str]) -> None:
    try:
        write_atomic(paths_slot(slot), cache_entry(paths_key(content), "\n".join(paths)))
    except memory_io.MemoryIOError as exc:
        note(f"cannot write the cache in {os.path.dirname(slot)}: {exc.reason}")


def block_slot(folder: str, path: str) -> str:
    """The entry for the memory file `path` read by this interpreter (which one decides the
    tokenizer available)."""
    where = os.fsencode(path) + b"\0" + os.fsencode(sys.executable or "")
    return os.path.join(folder, "blocks", hook_io.digest(where) + ".txt")


def cache_entry(key: str, text: str) -> bytes:
    """A cache file: a header naming the key, the body's length and its digest, then the body;
    a truncated or altered entry fails the check and is rendered again."""
    return hook_io.sealed(CACHE_FORMAT, key, text.encode("utf-8"))


def read_cache_entry(path: str, key: str, limit: int = MAX_ENTRY_BYTES) -> str | None:
    """The text stored under key, or None when absent, stale, truncated or corrupt."""
    try:
        with open(path, "rb") as handle:
            entry = handle.read(limit)
    except OSError:
        return None
    body = hook_io.unsealed(entry, CACHE_FORMAT, key)
    if body is None:
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_block(slot: str, key: str) -> tuple[str, str] | None:
    """The cached (block, status line) in slot under key, or None."""
    entry = read_cache_entry(slot, key)
    if entry is None or "\n" not in entry:
        return None
    status, block = entry.split("\n", 1)
    return block, status


def store_block(slot: str, key: str, block: str, status: str) -> None:
    """Cache the block and its status line in slot (the entry's text is the status line, then the
    block), and forget sessions nobody has touched for a month."""
    try:
        write_atomic(slot, cache_entry(key, f"{status}\n{block}"))
    except memory_io.MemoryIOError as exc:
        note(f"cannot write the cache in {os.path.dirname(slot)}: {exc.reason}")
    prune_sessions(os.path.join(os.path.dirname(os.path.dirname(slot)), "sessions"))


def session_file(folder: str, session_id: str) -> str:
    safe = session_id.replace("-", "").replace("_", "")
    if not (safe.isascii() and safe.isalnum() and len(session_id) <= 100):
        session_id = hook_io.digest(session_id.encode("utf-8", "surrogatepass"))
    return os.path.join(folder, "sessions", session_id)


def sent_mark(block: str) -> str:
    """What a session's state file holds once it was sent block."""
    return hook_io.digest(block.encode("utf-8"))


def was_sent(state: str, mark: str) -> bool:
    try:
        with open(state, "rb") as handle:
            return handle.read(64) == mark.encode()
    except OSError:
        return False


def record_sent(state: str, mark: str) -> None:
    try:
        write_atomic(state, mark.encode())
    except memory_io.MemoryIOError as exc:
        note(f"cannot record session state in {os.path.dirname(state)}: {exc.reason}")


def prune_sessions(folder: str, max_age_days: int = SESSION_STATE_DAYS) -> None:
    """Forget per-session state untouched for max_age_days (the hook's own files only)."""
    hook_io.forget_older(folder, time.time() - max_age_days * 86400)


def write_atomic(path: str, data: bytes) -> None:
    """Replace a cache file atomically (memory_io.atomic_write), in a private folder made on
    first use. Not synced: an entry lost in a crash is only rendered again. Raises
    memory_io.MemoryIOError, whose `reason` is the system's words."""
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    except OSError as exc:
        raise memory_io.write_error(path, exc) from None
    memory_io.atomic_write(path, data, durable=False)


def note(message: str) -> None:
    hook_io.stderr_line(f"permanent-memory hook: {message}")
