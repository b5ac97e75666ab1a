"""End to end in both real CLIs: every session leaves a snapshot, without anyone's step.

A scripted model works over two prompts in a small billing project: it reads the webhook
handler, edits it, runs a test module that does not exist (a failed command), answers; then
writes a test, runs the tests, and ends with what is left. The plugin's Stop hook keeps the
session's snapshot from the client's own transcript after each turn. A new session's first
request carries it, once, in the resume block: the request, the changed files and what is left,
and none of the client's system reminders or of the plugin's own stamped blocks (the project has
a permanent memory, so the transcript holds them). The same session, resumed, never gets its own
snapshot back. Each run's transcript and snapshot are printed for the record
(tests/transcripts/ keeps one run of each client as golden files).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import fake_responses
import pytest
from conftest import pinned_client
from e2e_claude_code_test import copies, option_env, request_texts, stamped
from e2e_codex_test import AppServer, hook_env
from e2e_codex_test import installed_user as codex_user
from e2e_compact_test import captured_files, session_start_block, show
from e2e_write_path_test import installed_user, new_project
from fake_anthropic import FakeAnthropic, ScriptedModel, text, tool_use
from fake_responses import FakeResponses, function_call, message

pytestmark = pytest.mark.e2e

HANDLER = "billing_api/webhooks/handler.py"
TEST = "tests/test_duplicates.py"
FIRST = "Make the Stripe webhook handler skip duplicate events by event id."
SECOND = "Now add a test for the duplicate skip and run the tests."
ANSWER1 = "The handler now skips an event whose id it has seen. Next: a test for it."
ANSWER2 = (
    "Added tests/test_duplicates.py; the tests pass. Next: the replay command for stored events."
)
FAILING = "python3 -m unittest tests.test_missing"
PASSING = "python3 -m unittest discover -s tests -t ."
OLD = "    return 'handled'"
NEW = "    if event['id'] in seen:\n        return 'duplicate'\n    seen.add(event['id'])\n" + OLD
TEST_CODE = (
    "import unittest\nfrom billing_api.webhooks.handler import handle\n\n\n"
    "class Duplicates(unittest.TestCase):\n    def test_second_delivery_is_skipped(self):\n"
    "        seen = set()\n        handle({'id': 'evt_1'}, seen)\n"
    "        self.assertEqual(handle({'id': 'evt_1'}, seen), 'duplicate')\n"
)
MEMORY = """## Epic: FEAT-005 — Stripe webhooks
**Completed:** 2026-11-02T10:00:00Z
**Keywords:** Stripe, webhook, duplicate, events

### Gotchas discovered
- Stripe sends duplicate events; the handler must be idempotent
"""
# What the resume block must carry, as the snapshot keeps it.
EXPECTED = (
    f"## Session summary\n- {FIRST}\n- {SECOND}\n\n"
    f"## Steps completed\n- S1: Changed `{HANDLER}`, `{TEST}`\n"
    f"- S2: Ran `{FAILING}` (failed)\n- S3: Ran `{PASSING}`\n\n"
    f"## Active state\nWhere it stopped: {ANSWER2}\n"
)


def billing_project(tmp_path: Path) -> Path:
    project = new_project(tmp_path, "billing-api")
    (project / "billing_api" / "webhooks").mkdir(parents=True)
    for package in ("billing_api", "billing_api/webhooks", "tests"):
        (project / package).mkdir(exist_ok=True)
        (project / package / "__init__.py").write_text("")
    (project / HANDLER).write_text(f"def handle(event, seen):\n{OLD}\n")
    (project / ".claude" / "memory").mkdir(parents=True)
    (project / ".claude" / "memory" / "permanent_memory.md").write_text(MEMORY)
    return project


def check_written(home: Path, project: Path) -> str:
    """The one snapshot the session left, in the user's cache folder, as the test expects it."""
    [snapshot] = captured_files(home)
    assert snapshot.name.endswith("-billing-api.md") and not (project / "memory").exists()
    written = snapshot.read_text(encoding="utf-8")
    assert "\nsource: transcript\nturns: 2\n" in written, written
    assert EXPECTED in written, written
    for left_out in ("system-reminder", "trust:file", "trust=file", "Stripe sends duplicate"):
        assert left_out not in written, written
    assert "seen.add" not in written  # no code
    return written


def check_received(block: str, written: str, texts: list[str]) -> None:
    assert re.match(
        r"\[session-memory \| trust:file\]\nResuming `billing-api` \(from the session that ended "
        r"\d+ minutes? ago\)\n\n---\n",
        block,
    ), block
    assert block.endswith(written.strip())
    assert copies(block, texts) == 1, stamped(texts)
    assert "system-reminder" not in block and block.count("trust:file") == 1


# --- Claude Code -------------------------------------------------------------------------------


def claude_steps(project: Path) -> list[Callable[[Mapping[str, Any]], list[dict[str, Any]]]]:
    edit = {"file_path": str(project / HANDLER), "old_string": OLD, "new_string": NEW}
    return [
        lambda _: [tool_use("Read", {"file_path": str(project / HANDLER)})],
        lambda _: [tool_use("Edit", {**edit, "replace_all": False})],
        lambda _: [tool_use("Bash", {"command": FAILING, "description": "run a test module"})],
        lambda _: [text(ANSWER1)],
        lambda _: [tool_use("Write", {"file_path": str(project / TEST), "content": TEST_CODE})],
        lambda _: [tool_use("Bash", {"command": PASSING, "description": "run the tests"})],
        lambda _: [text(ANSWER2)],
    ]


def test_claude_code_session_leaves_its_snapshot_and_the_next_resumes_it(
    claude_bin: Path, tmp_path: Path
) -> None:
    project = billing_project(tmp_path)
    model = ScriptedModel(claude_steps(project))
    with FakeAnthropic(responder=model) as api:
        user = installed_user(claude_bin, api, tmp_path / "home")
        flags = ["--output-format", "json", "--permission-mode", "acceptEdits"]
        flags += ["--allowedTools", "Bash(python3 -m unittest *)"]
        first = json.loads(user.ok("-p", FIRST, *flags, cwd=project))
        session = first["session_id"]
        second = json.loads(user.ok("-p", SECOND, *flags, "--resume", session, cwd=project))
        assert (first["result"], second["result"]) == (ANSWER1, ANSWER2)
        assert model.done and api.responder_errors == []
        written = check_written(tmp_path / "home", project)
        show("Claude Code: the session's snapshot, as written", written)
        transcripts = sorted((tmp_path / "home" / ".claude" / "projects").glob("*/*.jsonl"))
        print(f"\ntranscript: {transcripts}")

        # A new session starts with it, once; that session changes nothing, so it leaves no
        # snapshot in front of this one.
        block = session_start_block(project, option_env(user.env))
        _, new = user.prompt(project)
        check_received(block, written, request_texts(new))
        show("Claude Code: the next session's resume block, as the model received it", block)
        assert len(captured_files(tmp_path / "home")) == 1

        # The first session, resumed: its own snapshot is not sent back to it.
        _, again = user.prompt(project, "--resume", session)
        assert copies("(from the session that ended", request_texts(again)) == 0
        assert api.outside_requests() == []


# --- Codex -------------------------------------------------------------------------------------

PATCH = (
    "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: billing_api/webhooks/handler.py\n@@\n"
    + "".join(f"-{line}\n" for line in OLD.split("\n"))
    + "".join(f"+{line}\n" for line in NEW.split("\n"))
    + "*** End Patch\nEOF\n"
)
ADD = (
    f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {TEST}\n"
    + "".join(f"+{line}\n" for line in TEST_CODE.rstrip("\n").split("\n"))
    + "*** End Patch\nEOF\n"
)


def shell(command: str) -> Callable[[Mapping[str, Any]], list[dict[str, Any]]]:
    return lambda _: [function_call("exec_command", {"cmd": command, "yield_time_ms": 10000})]


def test_codex_session_leaves_its_snapshot_and_the_next_resumes_it(tmp_path: Path) -> None:
    steps = [
        shell(f"cat {HANDLER}"),
        shell(PATCH),
        shell(FAILING),
        lambda _: [message(ANSWER1)],
        shell(ADD),
        shell(PASSING),
        lambda _: [message(ANSWER2)],
    ]
    model = fake_responses.ScriptedModel(steps)
    with FakeResponses(responder=model) as api:
        user = codex_user(pinned_client("codex"), api, tmp_path)
        project = billing_project(tmp_path)
        events = {h["eventName"] for h in user.trust_hooks(project)}
        assert {"stop", "sessionEnd"} <= events, events
        with AppServer(user.codex, user.env, project) as server:
            thread = server.session(project, [FIRST, SECOND], lambda number: None)
            runs = [
                n["params"]["run"] for n in server.notifications if n["method"] == "hook/completed"
            ]
        stops = [r for r in runs if r["eventName"] == "stop"]
        assert [(r["status"], r["entries"]) for r in stops] == [("completed", [])] * 2, stops
        assert model.done and api.responder_errors == []
        written = check_written(user.home, project)
        show("Codex: the session's snapshot, as written", written)
        print(f"\ntranscript: {sorted((user.codex_home / 'sessions').rglob('*.jsonl'))}")

        block = session_start_block(project, hook_env(user))
        run = user.exec(project)
        check_received(block, written, fake_responses.all_texts(run.first))
        show("Codex: the next session's resume block, as the model received it", block)
        assert len(captured_files(user.home)) == 1

        again = user.exec(project, resume=thread)
        assert copies("(from the session that ended", fake_responses.all_texts(again.first)) == 0
