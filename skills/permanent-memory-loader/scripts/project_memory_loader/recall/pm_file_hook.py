# Recall at the file in the hook (PreToolUse on the file tools): the paths a tool call is about
# to touch (Read, Edit, Write, MultiEdit: `file_path`; NotebookEdit: `notebook_path`; Grep,
# Glob: `path`; a shell command's file arguments and a patch's files, as Codex passes them),
# made relative to the project (outside it: nothing, and nothing is looked at there; links are
# read, never followed out: pm_walk), looked up in the path table cached beside the
# recall index (pm_path_index), and for a governed file the block of its chosen entries, within
# the per-call budget and the session's one budget and record shared with prompt-time recall.
# A call whose paths nothing governs reads the memory file's key, the table (its key takes
# the archive files' stamps, not their content), and stops.
from __future__ import annotations

import os

from ..core import pm_cache
from ..evidence import pm_walk
from . import pm_path_index, pm_recall_store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from . import pm_recall_hook

EVENTS = ("PreToolUse",)
MAX_TARGETS = 5  # paths looked up per call, in the order the call names them
MAX_COMMAND_CHARS = 20000  # of a shell command or patch, read for the paths it names
# The lines of a patch (Codex's apply_patch) that name the files it changes.
PATCH_MARKS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: ")
SHELL_PUNCTUATION = "'\"`;|&()<>"


def command_paths(command: str) -> list[tuple[str, bool]]:
    """The files a shell command names: a patch's files, else each word that looks like a path
    (with a `/`, or a file name with an extension), quotes and shell punctuation taken off."""
    from ..evidence.pm_evidence import is_file_name  # a shell command's words only (Codex's calls)

    text = command[:MAX_COMMAND_CHARS]
    found = []
    if "*** Begin Patch" in text:
        for line in text.split("\n"):
            for mark in PATCH_MARKS:
                if line.startswith(mark) and line[len(mark) :].strip():
                    found.append((line[len(mark) :].strip(), False))
        return found
    for word in text.split():
        word = word.strip(SHELL_PUNCTUATION)
        if not word or word[0] == "-" or "=" in word or "$" in word or "*" in word:
            continue
        name = word.rstrip("/").rsplit("/", 1)[-1]
        if "/" in word or is_file_name(name):
            found.append((word, word.endswith("/")))
    return found


def touched(tool_input: object) -> list[tuple[str, bool]]:
    """(path as the call names it, whether it may be a folder) for each path the call touches."""
    if not isinstance(tool_input, dict):
        return []
    found = []
    for key in ("file_path", "notebook_path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            found.append((value, False))
    value = tool_input.get("path")  # a search's: a folder, or a file
    if isinstance(value, str) and value:
        found.append((value, True))
    command = tool_input.get("command")
    if isinstance(command, str):
        found.extend(command_paths(command))
    return found


def project_relative(root: str, cwd: object, path: str) -> str | None:
    """`path` relative to the project at `root` (a relative one is taken from the call's cwd),
    with links inside the project read; None outside it (nothing there is looked at) or for the
    project itself."""
    top = os.path.normpath(os.path.abspath(root))
    base = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else top
    try:
        full = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
    except ValueError:  # a NUL in it
        return None
    prefix = top.rstrip(os.sep) + os.sep
    if not full.startswith(prefix) or "\0" in full:
        return None
    relative = full[len(prefix) :].replace(os.sep, "/")
    return pm_walk.resolved_path(top, relative) or None


def record_of(folder: str, payload: dict[str, Any]) -> tuple[str, str, bool]:
    """The session's record of what its context received, the main session's record (whose
    prompts are read), and whether the first is a subagent's (its context is its own)."""
    session_id = payload.get("session_id")
    if not (folder and isinstance(session_id, str) and session_id):
        return "", "", False
    main = pm_recall_store.session_record(pm_cache.session_file(folder, session_id))
    agent = payload.get("agent_id")
    if isinstance(agent, str) and agent:
        own = pm_cache.session_file(folder, f"{session_id}.agent.{agent}")
        return pm_recall_store.session_record(own), main, True
    return main, main, False


def targets_of(payload: dict[str, Any], root: str) -> list[tuple[str, bool]]:
    """The project-relative paths the call touches (and whether each may be a folder), at most
    MAX_TARGETS, each once."""
    targets: list[tuple[str, bool]] = []
    for path, maybe_folder in touched(payload.get("tool_input")):
        relative = project_relative(root, payload.get("cwd"), path)
        if relative and (relative, maybe_folder) not in targets:
            targets.append((relative, maybe_folder))
    return targets[:MAX_TARGETS]


def quick_silence(
    payload: dict[str, Any], root: str, memory_path: str, folder: str
) -> tuple[bool, str]:
    """Whether the call can be answered with nothing before the memory file is read (it touches
    no path, or the table stored under its quick key governs none of them); and, when that
    table is not stored yet, the quick key to store it under once it is."""
    targets = targets_of(payload, root)
    if not targets:
        return True, ""
    if not folder:
        return False, ""
    key = pm_recall_store.quick_table_key(root, memory_path, pm_cache.code_stamp())
    if not key:
        return False, ""
    slot = pm_recall_store.index_slot(pm_cache.block_slot(folder, memory_path))
    table = pm_recall_store.read_table(slot, key, quick=True)
    if table is None:
        return False, key
    for relative, maybe_folder in targets:
        named, epics = pm_path_index.governing(table, relative, maybe_folder)
        if named or epics:
            return False, ""
    return True, ""


def file_context(
    payload: dict[str, Any],
    root: str,
    memory_path: str,
    folder: str,
    block_slot: str,
    block_key: str,
    budgets: tuple[int, int],
    recall: pm_recall_hook.Recall,
    render: Callable[[pm_recall_hook.Recall], object],
    quick_key: str = "",
) -> str:
    """What a PreToolUse call adds: the blocks of the files it touches that something governs
    ("" for none). `render` renders the block on a cache miss, building the index and the path
    table with `recall`; the table is also stored under `quick_key` (quick_silence) when set."""
    call_budget, session_budget = budgets
    if call_budget <= 0 or session_budget <= 0:
        return ""
    targets = targets_of(payload, root)
    if not targets:
        return ""
    recall.stamp = pm_recall_store.archive_stamp(memory_path, root)
    recall.key_by(block_key)
    recall.slot = pm_recall_store.index_slot(block_slot) if block_slot else ""
    table = None
    if recall.slot and block_key:
        table = pm_recall_store.read_table(recall.slot, recall.table_key)
    if table is None:  # the cache miss: the block, the index and the table, cached
        recall.archives = pm_recall_store.archive_files(memory_path, root)
        render(recall)
        table = recall.table
    if table is None:
        return ""
    if quick_key and recall.slot:
        pm_recall_store.store_table(recall.slot, quick_key, table, quick=True)
    found = []
    for relative, maybe_folder in targets:
        named, epics = pm_path_index.governing(table, relative, maybe_folder)
        if named or epics:
            found.append((relative, named, epics))
    if not found:
        return ""  # most calls: nothing governs what they touch
    index = recall.index
    if index is None:  # a hit: the index's key reads the archive (its content is the key)
        recall.archives = pm_recall_store.archive_files(memory_path, root)
        recall.key_by(block_key)
        index = pm_recall_store.read_index(recall.slot, recall.key)
    if index is None:
        return ""
    return send(payload, folder, table, index, found, call_budget, session_budget)


def send(
    payload: dict[str, Any],
    folder: str,
    table: pm_path_index.PathTable,
    index: Any,
    found: list[tuple[str, list[int], dict[int, list[str]]]],
    call_budget: int,
    session_budget: int,
) -> str:
    """The blocks for the governed files of one call, within the budgets and the record."""
    record, main, own_context = record_of(folder, payload)
    tokens, received = pm_recall_store.read_received(record) if record else (0, set())
    if own_context and not received and not os.path.exists(record):
        # A subagent starts with the permanent-memory block (SubagentStart) and nothing else.
        received = {entry[0] for entry in index["entries"] if entry[5]}
    prompts = pm_recall_store.read_prompts(main) if main else []
    before = (tokens, set(received))
    text, used = file_blocks(
        table, index, found, prompts, received, call_budget, session_budget - tokens
    )
    tokens += used
    if record and (tokens, received) != before:
        pm_recall_store.write_received(record, tokens, received)
    return text


def file_blocks(
    table: pm_path_index.PathTable,
    index: Any,
    found: list[tuple[str, list[int], dict[int, list[str]]]],
    prompts: list[str],
    received: set[str],
    call_budget: int,
    session_left: int,
    threshold: float = pm_path_index.FILE_THRESHOLD,
) -> tuple[str, int]:
    """Pure: the blocks of one call's governed files (`found`: each path, the entries naming it
    and its governing epics, pm_path_index.governing) for a context that `received` these
    entries (updated in place) and has `session_left` tokens of its budget; their tokens.
    `threshold`: the support a governing epic needs (the evaluation tries others)."""
    blocks = []
    spent = 0
    for relative, named, epics in found:
        served = pm_path_index.file_key(relative)
        if served in received:
            continue  # this context already had this file's block
        support = pm_path_index.support_text(relative, prompts)
        order, _best = pm_path_index.candidates(
            table, index, named, epics, support, threshold, received
        )
        limit = min(call_budget - spent, session_left - spent)
        text, keys, used = pm_path_index.fill(table, index, relative, order, received, limit)
        if text:
            blocks.append(text)
            received.update([*keys, served])
            spent += used
    return "".join(blocks), spent
