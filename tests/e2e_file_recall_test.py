"""Recall at the file end to end, in the real Claude Code CLI and the real Codex CLI: a scripted
model reads a file an epic governs, edits it, reads it again, then reads a file nothing
governs. The epic's entries reach the model once, with the first read, so before the edit; the
ungoverned file and the second read of the governed one add nothing. In Claude Code a shell
command that reads the file first adds nothing either: the hook's `if` keeps it to a shell
`apply_patch` there (Codex, which does not read `if`, runs it on every shell command)."""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import fake_anthropic
import fake_responses
import pytest
from conftest import LOADER_DIR, pinned_client
from e2e_claude_code_test import ClaudeUser, _user_texts, copies, demo_copy, option_env, stamped
from e2e_codex_test import hook_env, installed_user
from fake_anthropic import FakeAnthropic, last_tool_results, tool_use
from fake_responses import FakeResponses, all_texts, function_call, new_outputs
from support import run_command

pytestmark = pytest.mark.e2e

LOADER = LOADER_DIR / "permanent_memory.py"
GOVERNED = "billing_api/webhooks.py"
UNGOVERNED = "billing_api/invoices.py"
# The demo's memory, with a Paths line on its webhook epic and an entry naming the file.
PATHS = "**Paths:** billing_api/webhooks.py\n"
NAMING = "- `billing_api/webhooks.py` checks the signature before json.loads, never after\n"
OLD, NEW = "TOLERANCE_SECONDS = 300", "TOLERANCE_SECONDS = 300  # five minutes"


def governed_project(tmp_path: Path) -> Path:
    project = demo_copy(tmp_path)
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    text = memory.read_text(encoding="utf-8")
    head = text.index("## Epic: FEAT-005")
    completed = text.index("\n", text.index("**Completed:**", head)) + 1
    text = text[:completed] + PATHS + text[completed:]
    # Last among its epic's gotchas: the session-start block shows the first one.
    end = text.index("\n### Patterns that worked", head) + 1
    memory.write_text(text[: end - 1] + NAMING + text[end - 1 :], encoding="utf-8")
    return project


def expected_block(project: Path, env: Mapping[str, str], data: Path) -> str:
    """What the loader's hook adds to a session's first Read of GOVERNED, run by hand after a
    session start."""
    session = f"expected-{uuid.uuid4().hex}"
    added = ""
    for event, extra in (
        ("SessionStart", {"source": "startup"}),
        ("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": str(project / GOVERNED)}}),
    ):
        payload = {"session_id": session, "cwd": str(project), "hook_event_name": event, **extra}
        result = run_command(
            [sys.executable, LOADER, "hook"],
            env={**env, "CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PROJECT_DIR": str(project)},
            stdin=json.dumps(payload).encode(),
            cwd=project,
        )
        assert result.code == 0, result.err
        out = json.loads(result.out) if result.out.strip() else {}
        added = out.get("hookSpecificOutput", {}).get("additionalContext", "")
    assert added.startswith(f"[permanent-memory | trust:file]\nFor {GOVERNED}:\n"), added
    assert NAMING[2:].strip() in added, added
    return added


# --- Claude Code -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def claude() -> Path:
    return pinned_client("claude")


def test_claude_code_gives_the_entries_once_with_the_first_read(
    claude: Path, tmp_path: Path
) -> None:
    prompt = f"e2e prompt {uuid.uuid4().hex}"
    steps: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if not any(prompt in t for t in _user_texts(body)) or not body.get("tools"):
            return None
        step = len(steps)
        steps.append(body)
        target = project / (UNGOVERNED if step == 4 else GOVERNED)
        if step == 0:  # a shell command on the file: the hook's `if` keeps it from running
            return [tool_use("Bash", {"command": f"cat {GOVERNED}", "description": "read"})]
        if step in (1, 3, 4):
            return [tool_use("Read", {"file_path": str(target)})]
        if step == 2:
            edit = {"file_path": str(target), "old_string": OLD, "new_string": NEW}
            return [tool_use("Edit", {**edit, "replace_all": False})]
        return [fake_anthropic.text("Noted.")]

    with FakeAnthropic(responder=model) as api:
        user = ClaudeUser(claude, api, tmp_path / "home")
        project = governed_project(tmp_path)
        block = expected_block(project, option_env(user.env), tmp_path / "expected-data")
        flags = ["--output-format", "json", "--plugin-dir", str(LOADER_DIR.parents[2])]
        out = user.ok("-p", prompt, *flags, "--permission-mode", "acceptEdits", cwd=project)
        assert json.loads(out)["result"] == "Noted.", out
        assert api.responder_errors == [] and api.outside_requests() == []
    assert len(steps) == 6, len(steps)
    results = [last_tool_results(body) for body in steps[1:]]
    assert [len(r) for r in results] == [1, 1, 1, 1, 1], results
    assert not any(r[0].is_error for r in results), results
    # The shell command read the file and added nothing (Claude Code ran no hook for it).
    after_shell = [t for m in steps[1]["messages"][-1:] for t in _texts_of(m)]
    assert "TOLERANCE_SECONDS" in "".join(after_shell), after_shell
    assert copies("[permanent-memory | trust:file]\nFor ", after_shell) == 0, stamped(after_shell)
    # The request that asks for the edit carries the block once, with the first read's result.
    before_edit = [t for m in steps[2]["messages"][-1:] for t in _texts_of(m)]
    print(f"\nthe first read's turn, as sent:\n{stamped(before_edit)}")
    assert copies(block, before_edit) == 1, stamped(before_edit)
    assert copies(f"PreToolUse:Read hook additional context: {block}", before_edit) == 1
    # Nothing more: the edit, the second read and the ungoverned file add no block.
    for body in steps[3:]:
        last = [t for m in body["messages"][-1:] for t in _texts_of(m)]
        assert copies("[permanent-memory | trust:file]\nFor ", last) == 0, stamped(last)
    every = [t for m in steps[-1]["messages"] for t in _texts_of(m)]
    assert copies(block, every) == 1, stamped(every)
    assert NEW in (project / GOVERNED).read_text(encoding="utf-8")  # the edit was made


def _texts_of(message: Mapping[str, Any]) -> list[str]:
    """Every text of a message, tool results' included."""
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    found: list[str] = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict):
            if isinstance(part.get("text"), str):
                found.append(part["text"])
            found.extend(_texts_of(part) if isinstance(part.get("content"), list) else [])
            if isinstance(part.get("content"), str):
                found.append(part["content"])
    return found


# --- Codex -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def codex() -> Path:
    return pinned_client("codex")


@pytest.fixture(scope="module")
def responses_api() -> Iterator[FakeResponses]:
    with FakeResponses() as server:
        yield server


PATCH = (
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: billing_api/webhooks.py\n@@\n"
    f"-{OLD}\n+{NEW}\n*** End Patch\nEOF\n"
)


def test_codex_gives_the_entries_once_with_the_first_read(
    codex: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    user = installed_user(codex, responses_api, tmp_path)
    project = governed_project(tmp_path)
    user.trust_hooks(project)
    block = expected_block(project, hook_env(user), tmp_path / "expected-data")
    prompt = f"e2e prompt {uuid.uuid4().hex}"
    commands = [f"sed -n '1,80p' {GOVERNED}", PATCH, f"cat {GOVERNED}", f"cat {UNGOVERNED}"]
    steps: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if not fake_responses.is_agent_turn(body) or not any(prompt in t for t in all_texts(body)):
            return None
        steps.append(body)
        if len(steps) <= len(commands):
            command = commands[len(steps) - 1]
            return [function_call("exec_command", {"cmd": command, "yield_time_ms": 10000})]
        return [fake_responses.message("Done.")]

    responses_api.responder = model
    user.exec(project, prompt)
    responses_api.responder = None
    assert responses_api.responder_errors == []
    assert len(steps) == len(commands) + 1, len(steps)
    assert [len(new_outputs(body)) for body in steps[1:]] == [1, 1, 1, 1]
    # The request that asks for the patch carries the block once, after the first read.
    before_patch = fake_responses_new_texts(steps[1])
    print(f"\nthe first read's turn, as sent:\n{stamped(before_patch)}")
    items = steps[1]["input"]
    after = items[max(i for i, x in enumerate(items) if x.get("type") == "function_call") + 1 :]
    carriers = [
        (x.get("type"), x.get("role"))
        for x in after
        if any(block in t for t in fake_responses.item_texts(x))
    ]
    # A developer message of its own, between the read's call and its output.
    assert carriers == [("message", "developer")], carriers
    assert [x.get("type") for x in after] == ["message", "function_call_output"], after
    assert copies(block, before_patch) == 1, stamped(before_patch)
    for body in steps[2:]:
        later = fake_responses_new_texts(body)
        assert copies("[permanent-memory | trust:file]\nFor ", later) == 0, stamped(later)
    assert copies(block, all_texts(steps[-1])) == 1, stamped(all_texts(steps[-1]))
    assert NEW in (project / GOVERNED).read_text(encoding="utf-8")  # the patch applied


def fake_responses_new_texts(body: Mapping[str, Any]) -> list[str]:
    """The texts of the input items after the model's last function call."""
    items = body["input"]
    last = max(i for i, item in enumerate(items) if item.get("type") == "function_call")
    return [t for item in items[last + 1 :] for t in fake_responses.item_texts(item)]
