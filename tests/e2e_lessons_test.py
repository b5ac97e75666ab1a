"""End to end in the real Claude Code CLI: a compaction's lessons become proposals, and a person
accepts or drops them.

The plugin's PreCompact hook prints its instruction; the client adds it to the compaction prompt
(under "Additional Instructions:"), where the fake model reads it and answers with a summary whose
`Lessons for project memory:` section lists two lessons. The PostCompact hook keeps them as
proposals in the user's cache folder (never the repository); the next session's status line
counts them and its context carries the line on proposing; `/project-memory:review`, played by a
scripted model under the command's own `allowed-tools` only, accepts one into
permanent_memory.md and drops the other.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LOADER_DIR
from e2e_capture_test import bash_block, command_message
from e2e_claude_code_test import copies, option_env, request_texts, system_messages
from e2e_compact_test import CLAUDE_PROMPT, REQUEST, claude_summary
from e2e_write_path_test import installed_user, new_project
from fake_anthropic import (
    Block,
    FakeAnthropic,
    ScriptedModel,
    ToolResult,
    all_texts,
    last_tool_results,
    text,
    tool_use,
)
from project_memory_loader.writing import pm_lessons, pm_waiting
from support import run_command

pytestmark = pytest.mark.e2e

LOADER = LOADER_DIR / "permanent_memory.py"
ON_FILE = (
    "# Permanent memory\n\n"
    "## Epic: WEBHOOKS \u2014 Payment webhooks\n"
    "**Completed:** 2026-11-01T12:00:00Z\n\n"
    "### Architectural decisions\n"
    "- one webhook endpoint per Stripe account (DEC-009)\n"
)
GOTCHA = "Stripe retries a delivery for up to 3 days; handlers dedupe by event id"
DECISION = "Run the webhook tests with the Stripe CLI fixtures, not live keys"
LESSONS = (
    f"\n\n{pm_lessons.HEADING}\n"
    f"- [gotcha] {GOTCHA} (files: api/webhooks.py, ../../etc/passwd) (epic: WEBHOOKS)\n"
    f"- [decision] {DECISION}\n"
)


@pytest.fixture
def claude_api() -> Iterator[FakeAnthropic]:
    def model(body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if any(CLAUDE_PROMPT in t for t in all_texts(body)):
            return [text(claude_summary(body) + LESSONS)]
        return None

    with FakeAnthropic(responder=model) as api:
        yield api
        assert api.outside_requests() == [] and api.responder_errors == []


def review(project: Path, env: dict[str, str], *args: str) -> str:
    result = run_command(
        [sys.executable, LOADER, "review", *args],
        env={**env, "CLAUDE_PROJECT_DIR": str(project)},
        cwd=project,
    )
    assert result.code == 0, result.err
    return result.out


def git_status(project: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(project), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout


def test_a_compactions_lessons_are_proposed_then_reviewed(
    claude_bin: Path, claude_api: FakeAnthropic, tmp_path: Path
) -> None:
    user = installed_user(claude_bin, claude_api, tmp_path / "home")
    env = option_env(user.env)
    project = new_project(tmp_path, "billing-api")
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(ON_FILE, encoding="utf-8")
    git = ["git", "-C", str(project), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-qm", "memory"], check=True, timeout=30)

    session, _ = user.prompt(project, words=REQUEST)
    user.ok("-p", "/compact", "--output-format", "json", "--resume", session, cwd=project)

    # The compaction request carried the instruction, where the client puts a hook's stdout.
    [asked] = [b for b in claude_api.message_requests() if CLAUDE_PROMPT in str(b)]
    prompt = next(t for t in all_texts(asked) if CLAUDE_PROMPT in t)
    assert "Additional Instructions:" in prompt
    assert copies(pm_lessons.INSTRUCTION.strip(), [prompt]) == 1, prompt[-1500:]
    print(f"\n--- the instruction, as the compaction prompt ends\n{prompt[-700:]}")

    # Two proposals, in the user's cache folder; the file outside the project left out.
    listed = json.loads(review(project, env, "--format", "json"))
    assert [(p["n"], p["type"], p["text"], p["epic"], p["files"]) for p in listed] == [
        (1, "gotcha", GOTCHA, "WEBHOOKS", ["api/webhooks.py"]),
        (2, "decision", DECISION, None, []),
    ]
    assert git_status(project) == ""
    assert memory.read_text(encoding="utf-8") == ON_FILE
    print(f"--- review\n{review(project, env)}")

    # The next session: the person's line counts them, the model gets the line on proposing.
    second, first = user.prompt(project)
    lines = system_messages(user, project, second)
    assert any(line.endswith("2 lessons proposed: /project-memory:review") for line in lines), lines
    assert copies(pm_waiting.PROPOSE_LINE, request_texts(first)) == 1
    print(f"--- the person's line: {lines}")

    # /project-memory:review: the scripted model lists them, accepts 1, drops 2.
    results: list[list[ToolResult]] = []

    def run(command: str) -> list[Block]:
        return [tool_use("Bash", {"command": command, "description": "review"})]

    def list_them(body: dict[str, Any]) -> list[Block]:
        _tags, command_text = command_message(body, "project-memory:review")
        [line] = bash_block(command_text)
        assert line.endswith('permanent_memory.py" review --format json'), line
        list_them.line = line  # type: ignore[attr-defined]
        return run(line)

    def accept(body: dict[str, Any]) -> list[Block]:
        results.append(last_tool_results(body))
        shown = json.loads(results[-1][0].text)
        assert [p["n"] for p in shown] == [1, 2]
        base = list_them.line.removesuffix(" --format json")  # type: ignore[attr-defined]
        accept.base = base  # type: ignore[attr-defined]
        return run(f"{base} --accept 1")

    def drop(body: dict[str, Any]) -> list[Block]:
        results.append(last_tool_results(body))
        return run(f"{accept.base} --drop 2")  # type: ignore[attr-defined]

    def finish(body: dict[str, Any]) -> list[Block]:
        results.append(last_tool_results(body))
        return [text("Done.")]

    claude_api.responder = ScriptedModel([list_them, accept, drop, finish])
    result = user.run(
        "-p", "/project-memory:review", "--output-format", "json", "--resume", second, cwd=project
    )
    claude_api.responder = None
    assert result.code == 0, (result.out, result.err)
    reply = json.loads(result.out)
    assert reply["result"] == "Done." and reply["permission_denials"] == [], reply
    outputs = [r[0].text for r in results]
    assert not any(r[0].is_error for r in results), outputs
    assert "accepted 1 into WEBHOOKS" in outputs[1], outputs
    assert outputs[2].startswith("dropped 2 (kept on disk"), outputs
    print("--- /project-memory:review's commands and results")
    for output in outputs:
        print(output.rstrip())

    written = memory.read_text(encoding="utf-8")
    assert written.count(GOTCHA) == 1 and DECISION not in written
    assert re.search(r"\*\*Paths:\*\* api/webhooks\.py\n", written), written
    assert review(project, env) == "No lessons proposed.\n"
    print(f"--- permanent_memory.md after review\n{written}")
