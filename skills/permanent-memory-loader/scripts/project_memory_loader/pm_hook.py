# The loader's hook command (SessionStart, UserPromptSubmit, SubagentStart, PreToolUse for recall at
# the file: pm_file_hook), run on every prompt the user types: read the hook JSON and the plugin's
# options, find the memory file, take the block from the cache (pm_cache) or render and store it on
# a miss (pm_load), and print it once per session as hook JSON, or stay silent. The cache key
# includes whether each path the file's entries name is there (pm_walk: one lstat a path, the
# paths cached beside the block), so a deleted file shows at the next run. The steady state
# imports this module, pm_cache, pm_walk, pm_file, memory_io (the path rule and bounded reads),
# hook_io (hook JSON, the caches' digests), and pm_recall* when recall has work: a prompt with no
# word it could score ("yes", "go on") whose block went out already loads none of them
# (quiet_prompt). The tokenizer, yaml and the parser are loaded on a cache miss only.
from __future__ import annotations

import os
import sys

from .core import pm_cache, pm_file, pm_limits
from .core.pm_cache import note
from .evidence import pm_walk
from .shared import hook_io

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

    from .recall import pm_recall_hook

HELP = "Claude Code hook (session start, prompts, subagents, file tools)"
HOOK_MAX_CHARS = 10000
# The events whose hook JSON takes `additionalContext` (Claude Code 2.1 and later): there the
# text arrives labelled as context, byte for byte, where plain stdout is trimmed and labelled as
# a hook's success message.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse")


def build_parser() -> argparse.ArgumentParser:
    import argparse

    from .core import pm_names

    return argparse.ArgumentParser(
        prog=f"{pm_names.prog()} hook",
        description="Read the client's hook JSON on stdin and print what the model is given "
        "(session start, prompts, subagents, file tools). Always exits 0.",
    )


def main(argv: Sequence[str]) -> int:
    """`hook`: the hook JSON on stdin. A word after it (--help) goes to the parser."""
    if argv:
        build_parser().parse_args(argv)
    return hook()


def hook() -> int:
    """Claude Code SessionStart / UserPromptSubmit / SubagentStart hook: the block or nothing;
    exit 0."""
    try:
        output = hook_output()
    except BaseException as exc:  # the hook boundary: nothing may block the user's prompt (a
        # tokenizer's panic is a BaseException, not an Exception)
        note(f"internal error, nothing emitted: {type(exc).__name__}: {exc}")
        return 0
    hook_io.write_output(output)
    return 0


def hook_output() -> str:
    stdin = sys.stdin
    raw = b"" if stdin is None or stdin.isatty() else stdin.buffer.read()
    payload = parse_hook_json(raw)
    if payload is None:
        note("stdin is not Claude Code hook JSON; nothing emitted")
        return ""
    if payload.get("hook_event_name") == "PreCompact":
        # Plain stdout: Claude Code adds it to its compaction prompt (docs/hooks.md).
        from .writing import pm_lessons

        return pm_lessons.INSTRUCTION
    block, _status = hook_context(payload)
    if not block:
        return ""
    event = payload.get("hook_event_name")
    if event in CONTEXT_EVENTS:
        return hook_io.hook_json(str(event), block)
    return block  # no known event (a run by hand, an older client): the plain block


def parse_hook_json(raw: bytes) -> dict[str, Any] | None:
    """The hook's JSON object; {} for empty input; None when it is not a JSON object."""
    try:
        text = raw.decode("utf-8").strip()
        if not text:
            return {}
        value = hook_io.scan_json(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def int_option(name: str, default: int, minimum: int) -> int:
    value = os.environ.get("CLAUDE_PLUGIN_OPTION_" + name, "").strip()
    if value.isdigit() and int(value) >= minimum:
        return int(value)
    if value:
        note(
            f"ignoring CLAUDE_PLUGIN_OPTION_{name}={value!r} (want a whole number >= "
            f"{minimum}); using {default}"
        )
    return default


def every_turn() -> bool:
    value = os.environ.get("CLAUDE_PLUGIN_OPTION_EVERY_TURN", "").strip().lower()
    if value not in ("", "0", "false", "no", "off", "1", "true", "yes", "on"):
        note(f"ignoring CLAUDE_PLUGIN_OPTION_EVERY_TURN={value!r} (want true or false)")
    return value in ("1", "true", "yes", "on")


# The events prompt-time recall takes part in (pm_recall_hook.EVENTS).
RECALL_EVENTS = ("SessionStart", "UserPromptSubmit")


def recall_budgets() -> tuple[int, int]:
    """The recall block's tokens per prompt and per session (0 turns recall off)."""
    from .recall import pm_recall

    return (
        int_option("RECALL_PROMPT_TOKENS", pm_recall.PROMPT_BUDGET, pm_recall.MIN_BUDGET),
        int_option("RECALL_SESSION_TOKENS", pm_recall.SESSION_BUDGET, pm_recall.MIN_BUDGET),
    )


def hook_context(payload: dict[str, Any]) -> tuple[str, str]:
    """The block this hook call should add to the model's context ("" for none), and the status
    line of the block for the user (what the session-start message says about it)."""
    cwd = payload.get("cwd")
    project = os.environ.get("CLAUDE_PROJECT_DIR") or (cwd if isinstance(cwd, str) else "")
    root = project or os.getcwd()
    path = pm_file.memory_path(root)
    quick = ""
    if payload.get("hook_event_name") == "PreToolUse":
        # A file tool's call: most touch nothing an epic governs, which the path table stored
        # under the memory file's stamp says without reading the file.
        from .recall import pm_file_hook

        silent, quick = pm_file_hook.quick_silence(payload, root, path, pm_cache.cache_dir() or "")
        if silent:
            return "", ""
    try:
        data, size = pm_file.read_memory_file(path, root)
    except (FileNotFoundError, NotADirectoryError):
        return "", ""  # no permanent memory in this project: say nothing
    except OSError as exc:
        note(f"cannot read {path}: {exc.strerror or exc}")
        return "", ""
    options = (
        int_option("TOKEN_TARGET", pm_limits.TOKEN_TARGET, pm_limits.MIN_TOKEN_TARGET),
        int_option("HARD_CAP", pm_limits.HARD_CAP, pm_limits.MIN_HARD_CAP),
        int_option("STALE_DAYS", pm_limits.STALE_DAYS, pm_limits.MIN_STALE_DAYS),
    )
    each_turn = every_turn()
    content = hook_io.digest(data) if data is not None else f"size {size}"
    folder = pm_cache.cache_dir()
    slot = pm_cache.block_slot(folder, path) if folder else ""
    paths = pm_cache.read_paths(slot, content) if slot else None
    key = ""  # unknown until the paths the file names are: a miss
    if paths is not None:
        evidence = pm_walk.evidence_key(root, pm_walk.existence_bits(root, paths))
        key = pm_cache.block_key(options, content, evidence)
    event = payload.get("hook_event_name")
    if event == "PreToolUse":  # a file tool's call: recall at the file, never the block
        return file_context(
            payload, root, path, folder or "", slot, key, data, size, options, content, quick
        ), ""
    cached = pm_cache.read_block(slot, key) if slot and key else None
    session_id = payload.get("session_id")
    session = ""
    if folder and isinstance(session_id, str) and session_id:
        session = pm_cache.session_file(folder, session_id)
    recall = None
    if session and event in RECALL_EVENTS and not quiet_prompt(payload, cached, session):
        from .recall import pm_recall_hook

        recall = pm_recall_hook.Recall(session, event, payload, recall_budgets())
        recall.look_up(path, root, slot, key)
    if cached is not None and (recall is None or recall.ready):
        block, status = cached
    else:
        block, status = render_and_store(data, size, options, slot, content, root, recall)
    if len(block) >= HOOK_MAX_CHARS:
        note("block too large for a hook; nothing emitted")
        return "", ""
    sent = session_block(event, payload, folder, session, block, each_turn)
    if recall is not None:
        return recall.add_to(sent), status
    return sent, status


def quiet_prompt(payload: dict[str, Any], cached: tuple[str, str] | None, session: str) -> bool:
    """A prompt recall has nothing to do for: no word it could score or epic ID it could find
    ("", "yes", "go on", "2: carry on"), and a block this session has received already
    (cached and marked sent), whose lines recall recorded when it went out. Nothing is scored,
    no index read, and the prompt is not kept among the session's last prompts, which recall
    at the file reads for support: it could support nothing."""
    prompt = payload.get("prompt")
    if payload.get("hook_event_name") != "UserPromptSubmit" or not isinstance(prompt, str):
        return False
    if cached is None or not pm_cache.was_sent(session, pm_cache.sent_mark(cached[0])):
        return False
    if prompt.strip():
        from .recall import pm_recall

        scored = prompt[: pm_recall.PROMPT_PREFIX_CHARS]
        if pm_recall.terms(scored) or any(may_name_an_epic(word) for word in scored.split()):
            return False
    return True


def may_name_an_epic(word: str) -> bool:
    """Whether a word of a prompt without terms could still be an epic's ID (three characters
    or more, a digit among them, as pm_recall.named_epics finds them: `X-1`, `1.2.3`)."""
    bare = word.strip(".,;:!?()[]{}'\"")
    return len(bare) >= 3 and any(char.isdigit() for char in bare)


def file_context(
    payload: dict[str, Any],
    root: str,
    path: str,
    folder: str,
    slot: str,
    key: str,
    data: bytes | None,
    size: int,
    options: tuple[int, int, int],
    content: str,
    quick: str = "",
) -> str:
    """PreToolUse: the blocks of the governed files the call touches (pm_file_hook, imported
    here: a prompt's steady state does without it)."""
    from .recall import pm_file_hook, pm_path_index, pm_recall, pm_recall_hook

    per_call = int_option("RECALL_FILE_TOKENS", pm_path_index.FILE_BUDGET, pm_recall.MIN_BUDGET)
    budgets = (per_call, recall_budgets()[1])
    recall = pm_recall_hook.Recall("", payload.get("hook_event_name"), payload, budgets)

    def render(recall: pm_recall_hook.Recall) -> object:
        return render_and_store(data, size, options, slot, content, root, recall)

    return pm_file_hook.file_context(
        payload, root, path, folder, slot, key, budgets, recall, render, quick
    )


def session_block(
    event: object,
    payload: dict[str, Any],
    folder: str | None,
    session: str,
    block: str,
    each_turn: bool,
) -> str:
    """The permanent-memory block if this hook call should send it, else ""."""
    if event == "SubagentStart":
        return block  # a new context of its own: the block once, as it starts
    if not (folder and session):
        return block  # no session to remember what it was sent
    mark = pm_cache.sent_mark(block)
    if pm_cache.was_sent(session, mark):
        if event == "UserPromptSubmit" and not each_turn:
            return ""  # this session already has this block
        if event == "SessionStart" and payload.get("source") == "resume":
            # A resumed transcript already holds it; clear and compact start afresh.
            return ""
        return block
    pm_cache.record_sent(session, mark)
    return block


def render_and_store(
    data: bytes | None,
    size: int,
    options: tuple[int, int, int],
    slot: str,
    content: str,
    root: str,
    recall: pm_recall_hook.Recall | None = None,
) -> tuple[str, str]:
    """The cache miss: render the block (target, hard cap, stale days) for the project at root
    and its status line for the user, and cache both in slot ("" for no cache), keyed by the
    file's content and the evidence the block shows, with the paths that evidence checks; with
    recall, build its index from the same epics and cache it too."""
    # Imported here: recording what a new session was sent must not load the renderer.
    from .core.pm_load import hook_summary
    from .evidence.pm_evidence_git import git_failed

    summary, status, tokenizer = hook_summary(data, size, *options, root=root)
    block = summary.block.text
    evidence = summary.evidence
    key = pm_cache.block_key(options, content, pm_walk.evidence_key(root, evidence.bits()))
    if recall is not None:
        recall.key_by(key)
        recall.build(summary.epics, data, block, tokenizer.count, evidence.states)
    estimate_reason = tokenizer.problem
    if estimate_reason:
        # The block still keeps the hard cap, but is trimmed harder than it needs to be.
        from .core import pm_names

        note(
            f"token counts are estimates ({estimate_reason}); "
            f"run {pm_names.skill_command('doctor')}"
        )
    if git_failed(evidence.git):
        note(f"paths checked without git's record of moves: {evidence.git}")
    if slot:
        pm_cache.store_block(slot, key, block, status)
        pm_cache.store_paths(slot, content, evidence.listed())
    return block, status
