# The optional nudge at a turn's end (plugin option `propose_at_stop`, off by default): once per
# session, in the main session only, when the session changed files (what the turn capture read
# from its transcript) and nothing was proposed since it started, the Stop hook asks the model
# once to propose what later sessions must know or to say there is nothing. Never while the
# client is already continuing because of a Stop hook (`stop_hook_active`).
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from . import mm_session, mm_transcript_read
from .shared import memory_io

OPTION = "CLAUDE_PLUGIN_OPTION_PROPOSE_AT_STOP"
REASON = (
    "Before you stop: if this session settled a decision or found a gotcha "
    "that later sessions in this project must know, propose it with the "
    "permanent-memory-loader skill's propose command (a person reviews it); otherwise say "
    "there is nothing to propose."
)


def option_on(env: Mapping[str, str]) -> bool:
    return env.get(OPTION, "").strip().lower() in ("1", "true", "yes", "on")


def proposed_since(items: list[dict[str, Any]], ref: str, started: str) -> bool:
    """Whether a proposal came from this session (its compactions) or after its start (the
    propose command; `started` as YYYY-MM-DD-HH-MM)."""
    for item in items:
        when = str(item.get("proposed_at", ""))[:16].replace("T", "-").replace(":", "-")
        if item.get("session") == ref or (started and when >= started):
            return True
    return False


def nudge(payload: Mapping[str, Any], env: Mapping[str, str], proposals: Any, root: str) -> str:
    """The Stop hook's `{"decision": "block", …}` when the nudge is due, else "" (proposals:
    the loader's pm_proposals module)."""
    if payload.get("hook_event_name") != "Stop" or payload.get("stop_hook_active") is not False:
        return ""
    session_id = payload.get("session_id")
    folder = mm_transcript_read.turns_dir(env)
    if payload.get("agent_id") or not isinstance(session_id, str) or not session_id or not folder:
        return ""
    ref = mm_session.session_ref(session_id)
    state_path, _, _ = mm_transcript_read.state_paths(folder, ref)
    asked = os.path.join(folder, ref + ".asked")
    if os.path.exists(asked):
        return ""
    state = mm_transcript_read.load_state(state_path) or {}
    facts = state.get("facts")
    if not (isinstance(facts, dict) and facts.get("files")):
        return ""  # no file changed: nothing to ask about
    store = proposals.store_dir(env, root)
    try:
        items = proposals.read_store(store) if store else []
    except proposals.StoreError:
        return ""
    starts = mm_session.starts_dir(env)
    start = mm_session.read_start(starts, session_id) if starts else None
    if proposed_since(items, ref, start.started if start else ""):  # pm_harvest's ref is ref
        return ""
    memory_io.atomic_write(asked, b"asked\n", 0o600, durable=False)  # once per session
    import json

    return json.dumps({"decision": "block", "reason": REASON}) + "\n"
