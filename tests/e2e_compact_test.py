"""End to end in both real CLIs: a compacted conversation is kept as a captured snapshot, and the
next session starts with it.

The fake model APIs answer each client's compaction request as a model would: with a summary in
the form the client's own prompt asks for (Claude Code: the nine numbered parts of its prompt,
`<analysis>` then `<summary>`; Codex: a Markdown handoff summary), made from what the session
did. A recording hook of the user's or the project's, beside the plugin's, keeps what each
client passes at PreCompact and PostCompact (docs/hooks.md's table). Then: the captured
snapshot on disk, in the user's cache folder, never the repository; the next session's first
request carrying it once, as the session-start hook prints it; and an automatic compaction, the
fake reporting a prompt near the model's context window.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import MANAGER_DIR, pinned_client
from e2e_claude_code_test import copies, option_env, request_texts, stamped
from e2e_codex_test import (
    CATALOG_HOSTS,
    AppServer,
    CodexUser,
    hook_env,
)
from e2e_codex_test import (
    installed_user as codex_installed_user,
)
from e2e_write_path_test import installed_user, new_project
from fake_anthropic import FakeAnthropic, all_texts
from fake_anthropic import text as claude_text
from fake_responses import FakeResponses, message
from fake_responses import all_texts as codex_texts
from project_memory_loader.writing import pm_lessons
from support import run_command

pytestmark = pytest.mark.e2e

MANAGER = MANAGER_DIR / "memory_manager.py"
CAPTURED = Path(".cache") / "project-memory" / "session-memory" / "captured"  # under HOME
TOKEN = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"  # a GitHub token's form, not one
REQUEST = (
    "Make the Stripe webhook handler idempotent: store each event before handling it and skip "
    f"duplicates by event id. The CI token is {TOKEN}."
)
NEXT = "Run tests/test_webhooks.py and then start the replay command for stored events."
CLAUDE_PROMPT = "Your task is to create a detailed summary of the conversation"
CODEX_PROMPT = "CONTEXT CHECKPOINT COMPACTION"


def recording_hooks(folder: Path) -> dict[str, Any]:
    """Hooks of the user's or the project's that keep each PreCompact and PostCompact input."""
    hooks: dict[str, Any] = {}
    for event in ("PreCompact", "PostCompact"):
        keep = (
            "import sys, time; "
            f"open({str(folder)!r} + '/{event}-' + str(time.time_ns()) + '.json', 'w')"
            ".write(sys.stdin.read())"
        )
        command = f"{shlex.quote(sys.executable)} -c {shlex.quote(keep)}"
        hooks[event] = [{"hooks": [{"type": "command", "command": command}]}]
    return {"hooks": hooks}


def recorded(folder: Path, event: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(folder.glob(f"{event}-*.json"))]


def captured_files(home: Path) -> list[Path]:
    return sorted((home / CAPTURED).glob("*/*.md"))


def session_start_block(project: Path, env: Mapping[str, str]) -> str:
    """What the session-memory hook gives a new session in this project, run by hand."""
    hook_input = {
        "session_id": f"expected-{uuid.uuid4().hex}",
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    result = run_command(
        [sys.executable, MANAGER, "hook"],
        env={**env, "CLAUDE_PROJECT_DIR": str(project)},
        stdin=json.dumps(hook_input).encode(),
        cwd=project,
    )
    assert result.code == 0, result.err
    context = str(json.loads(result.out)["hookSpecificOutput"]["additionalContext"])
    block = context.split("[permanent-memory | trust:file]\n", 1)[0]
    assert block.startswith("[session-memory | trust:file]\nResuming `"), block
    return block.strip()


def show(title: str, body: str) -> None:
    print(f"\n--- {title}\n{body}")


# --- Claude Code -------------------------------------------------------------------------------


def claude_summary(body: Mapping[str, Any]) -> str:
    """A model's answer to Claude Code's compaction prompt: the parts the prompt numbers, in its
    form, from what the conversation holds."""
    prompt = next(t for t in all_texts(body) if CLAUDE_PROMPT in t)
    titles = re.findall(r"^(\d)\. ([A-Z][A-Za-z ]+):", prompt.split("<example>")[0], re.M)
    assert [title for _, title in titles][:3] == [
        "Primary Request and Intent",
        "Key Technical Concepts",
        "Files and Code Sections",
    ], titles
    asked = [t for t in all_texts(body) if "Stripe webhook handler" in t]
    assert asked, "the conversation reached the summary request"
    parts = {
        "Primary Request and Intent": "The user asked to make the Stripe webhook handler "
        "idempotent: store each event first, skip duplicates by event id.",
        "Key Technical Concepts": "- Stripe retries deliveries for up to 3 days\n- idempotency",
        "Files and Code Sections": "- api/webhooks.py\n   - The handler; stores the event first.\n"
        "   - Important Code Snippet:\n     ```python\n     def handle(event):\n"
        "         store(event)\n     ```",
        "Errors and fixes": "- IntegrityError on a repeated event: caught, answered 200.",
        "Problem Solving": "Duplicates are skipped; the replay of stored events is open.",
        "All user messages": f'- "{REQUEST}"',
        "Pending Tasks": "- A replay command for stored events.",
        "Current Work": f"Writing tests/test_webhooks.py; the CI token {TOKEN} is in its env.",
        "Optional Next Step": NEXT,
    }
    lines = ["<analysis>", "The user wants idempotency; I stored the events first.", "</analysis>"]
    lines += ["", "<summary>"]
    for number, title in titles:
        content = parts.get(title, "None.")
        lines += [f"{number}. {title}:", *(f"   {line}" for line in content.split("\n")), ""]
    return "\n".join([*lines, "</summary>"])


@pytest.fixture
def claude_api() -> Iterator[FakeAnthropic]:
    def model(body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if any(CLAUDE_PROMPT in t for t in all_texts(body)):
            return [claude_text(claude_summary(body))]
        return None

    with FakeAnthropic(responder=model) as api:
        yield api
        assert api.outside_requests() == [] and api.responder_errors == []


def test_claude_code_compact_then_the_next_session_resumes_the_capture(
    claude_bin: Path, claude_api: FakeAnthropic, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    user = installed_user(claude_bin, claude_api, home)
    project = new_project(tmp_path, "billing-api")
    record = tmp_path / "recorded"
    record.mkdir()
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps(recording_hooks(record)))

    session, _ = user.prompt(project, words=REQUEST)
    out = user.ok("-p", "/compact", "--output-format", "json", "--resume", session, cwd=project)
    assert json.loads(out)["session_id"] == session
    # What the client passed (docs/hooks.md).
    [pre] = recorded(record, "PreCompact")
    [post] = recorded(record, "PostCompact")
    assert sorted(pre) == [
        "custom_instructions",
        "cwd",
        "hook_event_name",
        "prompt_id",
        "session_id",
        "transcript_path",
        "trigger",
    ]
    assert sorted(post) == sorted({*pre, "compact_summary"} - {"custom_instructions"})
    assert (pre["trigger"], post["trigger"], post["session_id"]) == ("manual", "manual", session)
    assert post["compact_summary"].startswith("<analysis>")
    print(f"\nPreCompact input: {sorted(pre)}\nPostCompact input: {sorted(post)}")

    # On disk: in the user's cache folder, not the repository.
    [snapshot] = captured_files(home)
    assert snapshot.name.endswith("-billing-api.md") and not (project / "memory").exists()
    written = snapshot.read_text(encoding="utf-8")
    assert "\nsource: compaction\ntrigger: manual\ncompactions: 1\n" in written
    assert f"\n## Active state\nNext step: {NEXT}\n" in written
    assert TOKEN not in written and "[REDACTED]" in written
    assert "def handle" not in written and "(e2e prompt" not in written
    show("the captured snapshot, as written", written)

    # The same session goes on: its own capture is not sent back to it.
    _, after = user.prompt(project, "--resume", session)
    assert copies("(from the session compacted", request_texts(after)) == 0

    # A new session starts with it, once, as the hook prints it.
    block = session_start_block(project, option_env(user.env))
    assert re.match(
        r"\[session-memory \| trust:file\]\nResuming `billing-api` \(from the "
        r"session compacted \d+ minutes? ago\)\n\n---\n",
        block,
    ), block
    assert block.endswith(written.strip())
    second, first = user.prompt(project)
    texts = request_texts(first)
    assert copies(block, texts) == 1, stamped(texts)
    assert copies(f"SessionStart hook additional context: {block}\n", texts) == 1
    show("the next session's resume block, as the model received it", block)

    # Automatic compaction: the replies report a prompt near the model's window.
    claude_api.input_tokens = 990_000
    user.prompt(project, "--resume", second)
    claude_api.input_tokens = 10
    user.prompt(project, "--resume", second)
    autos = [p for p in recorded(record, "PostCompact") if p["session_id"] == second]
    assert [p["trigger"] for p in autos] == ["auto"], autos
    made = [p for p in captured_files(home) if p != snapshot]
    assert len(made) == 1 and "\ntrigger: auto\n" in made[0].read_text(encoding="utf-8")


# --- Codex ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def codex_bin() -> Path:
    return pinned_client("codex")


def codex_summary(body: Mapping[str, Any]) -> str:
    """A model's answer to Codex's compaction prompt: the handoff summary it asks for."""
    prompt = next(t for t in codex_texts(body) if CODEX_PROMPT in t)
    assert "handoff summary" in prompt, prompt
    assert any("Stripe webhook handler" in t for t in codex_texts(body))
    return (
        "## Goal\nMake the Stripe webhook handler idempotent (store events first, skip "
        "duplicates by event id).\n\n"
        "## Progress and key decisions\n- Events are stored before handling.\n"
        "- Decided: duplicates are answered 200, not 409.\n\n"
        "## Constraints\n- No new dependency.\n\n"
        f"## Next steps\n1. {NEXT}\n"
    )


def trust_all_hooks(user: CodexUser, project: Path) -> list[str]:
    """What trusting every listed hook in `/hooks` does (the plugin's and the user's)."""
    [listed] = user.app_server(project, [("hooks/list", {"cwds": [str(project)]})])
    [entry] = listed["data"]
    assert entry["errors"] == [] and entry["warnings"] == [], entry
    state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in entry["hooks"]}
    edit = {"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}
    [written] = user.app_server(project, [("config/batchWrite", {"edits": [edit]})])
    assert written["status"] == "ok", written
    return sorted(f"{h['source']}:{h['eventName']}" for h in entry["hooks"])


def test_codex_compact_then_the_next_session_resumes_the_capture(
    codex_bin: Path, tmp_path: Path
) -> None:
    compactions: list[dict[str, Any]] = []

    def model(body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if any(CODEX_PROMPT in t for t in codex_texts(body)):
            compactions.append(body)
            return [message(codex_summary(body))]
        return None

    with FakeResponses(responder=model) as api:
        user = codex_installed_user(codex_bin, api, tmp_path)
        home = user.home
        record = tmp_path / "recorded"
        record.mkdir()
        (user.codex_home / "hooks.json").write_text(json.dumps(recording_hooks(record)))
        project = new_project(tmp_path, "billing-api")
        hooks = trust_all_hooks(user, project)
        assert "plugin:postCompact" in hooks and "user:preCompact" in hooks, hooks

        with AppServer(user.codex, user.env, project) as server:
            thread = server.session(project, [REQUEST], lambda number: None)
            server.request("thread/compact/start", {"threadId": thread})
            server.wait_for("turn/completed")
            runs = [
                n["params"]["run"] for n in server.notifications if n["method"] == "hook/completed"
            ]
        ours = [r for r in runs if r["eventName"] == "postCompact" and r["source"] == "plugin"]
        assert [(r["status"], r["entries"]) for r in ours] == [("completed", [])], ours
        # The plugin's PreCompact instruction runs, but Codex reads no plain stdout there: its
        # compaction request never carries it (docs/hooks.md).
        asks = [r for r in runs if r["eventName"] == "preCompact" and r["source"] == "plugin"]
        assert [(r["status"], r["entries"]) for r in asks] == [("completed", [])], asks
        assert compactions and not any(
            pm_lessons.HEADING in t for b in compactions for t in codex_texts(b)
        )
        [pre] = recorded(record, "PreCompact")
        [post] = recorded(record, "PostCompact")
        keys = ["cwd", "hook_event_name", "model", "session_id", "transcript_path", "trigger"]
        assert sorted(pre) == sorted(post) == sorted([*keys, "turn_id"]), (pre, post)
        assert post["trigger"] == "manual" and post["session_id"] == thread
        print(f"\nCodex PreCompact input: {sorted(pre)}\nPostCompact input: {sorted(post)}")
        assert [r["eventName"] for r in runs].count("sessionStart") == 1  # none after it

        assert api.responder_errors == []
        [snapshot] = captured_files(home)
        written = snapshot.read_text(encoding="utf-8")
        assert "\nsource: compaction\ntrigger: manual\n" in written
        assert f"\n## Active state\nNext step: {NEXT}\n" in written
        assert "\n## Key decisions\n- No new dependency.\n" in written
        assert "Another language model" not in written
        show("Codex: the captured snapshot, as written", written)

        block = session_start_block(project, hook_env(user))
        assert block.endswith(written.strip())
        run = user.exec(project)
        texts = codex_texts(run.first)
        assert copies(block, texts) == 1, stamped(texts)
        show("Codex: the next session's resume block, as the model received it", block)

        # Automatic compaction: a limit in the user's config, a reply reporting a prompt over it.
        config = user.codex_home / "config.toml"
        limit = "model_auto_compact_token_limit = 100000\n"
        config.write_text(limit + config.read_text(encoding="utf-8"), encoding="utf-8")
        api.input_tokens = 200_000
        with AppServer(user.codex, user.env, project) as server:
            later = server.session(project, [REQUEST, "and now the replay command"], lambda n: None)
        api.input_tokens = 10
        autos = [p for p in recorded(record, "PostCompact") if p["session_id"] == later]
        assert [p["trigger"] for p in autos] == ["auto"], autos
        made = [p for p in captured_files(home) if p != snapshot]
        assert len(made) == 1 and "\ntrigger: auto\n" in made[0].read_text(encoding="utf-8")

        tried = {r.path for r in api.outside_requests()}
        assert tried <= CATALOG_HOSTS, tried
        assert api.responder_errors == []
