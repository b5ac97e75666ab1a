"""End to end in the real Claude Code CLI: validate, install, and see the blocks reach the model.

A fake Anthropic Messages API on 127.0.0.1 records every request the CLI sends; the assertions
read what the model would have been given. Each scenario runs with a fresh HOME, so Claude
Code's settings, installed plugins and the hooks' cache (CLAUDE_PLUGIN_DATA) start empty.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import fake_anthropic
import pytest
import support
from conftest import LOADER_DIR, MANAGER_DIR, ROOT
from e2e_env import clean_env
from fake_anthropic import FakeAnthropic, last_tool_results, tool_names, tool_use
from support import Result, run_command

pytestmark = pytest.mark.e2e

MARKETPLACE = "project-memory"
PLUGIN_ID = f"project-memory@{MARKETPLACE}"
DEMO = ROOT / "examples" / "demo-project"
LOADER = LOADER_DIR / "permanent_memory.py"
MANAGER = MANAGER_DIR / "memory_manager.py"
PERMANENT = Path(".claude") / "memory" / "permanent_memory.md"
TIMEOUT = 90  # seconds, for any one CLI call; a normal one takes about a second

NEW_EPIC = """
## Epic: FEAT-021 — Dunning emails
**Completed:** {completed}

### Architectural decisions
- dunning schedule lives in the database, not in cron (DEC-031)

### Gotchas discovered
- the mail provider rate-limits bursts above 10 per second
"""


# --- reading the recorded requests -------------------------------------------------------------


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
    return []


def request_texts(body: Mapping[str, Any]) -> list[str]:
    """Every piece of text the model is given: system blocks and all messages."""
    texts = _texts(body.get("system"))
    for message in body["messages"]:
        texts.extend(_texts(message.get("content")))
    return texts


def new_turn_texts(body: Mapping[str, Any]) -> list[str]:
    """The text added for this prompt: the messages after the last assistant reply."""
    messages = body["messages"]
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    texts: list[str] = []
    for message in messages[last + 1 :]:
        texts.extend(_texts(message.get("content")))
    if last == -1:
        texts.extend(_texts(body.get("system")))
    return texts


def copies(block: str, texts: Sequence[str]) -> int:
    return sum(text.count(block) for text in texts)


def stamped(texts: Sequence[str]) -> list[str]:
    """For failure messages: each stamped block in `texts` with the line before it."""
    found = []
    for text in texts:
        for match in re.finditer(r"[^\n]*\n?\[[a-z-]+ \| trust:file\]\n(?:[^\n]+\n?){0,4}", text):
            found.append(match.group(0))
    return found


# --- driving the CLI ---------------------------------------------------------------------------


class ClaudeUser:
    """One user of Claude Code: a HOME of their own, talking to the fake API."""

    def __init__(self, claude: Path, api: FakeAnthropic, home: Path) -> None:
        self.claude = claude
        self.api = api
        home.mkdir(parents=True, exist_ok=True)
        # Any attempt to reach another host goes through the proxy, which is the fake API:
        # it refuses and records it, and each scenario asserts there was none.
        proxy = {
            name: api.base_url
            for name in ("HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy")
        }
        self.env = clean_env(
            home,
            {
                "ANTHROPIC_BASE_URL": api.base_url,
                "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy-key",
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
                **proxy,
            },
        )

    def run(self, *args: str, cwd: Path, stdin: str | None = None) -> Result:
        """The real client, in this user's environment (support.run_command)."""
        data = None if stdin is None else stdin.encode("utf-8")
        return run_command([self.claude, *args], env=self.env, stdin=data, cwd=cwd, timeout=TIMEOUT)

    def ok(self, *args: str, cwd: Path, stdin: str | None = None) -> str:
        result = self.run(*args, cwd=cwd, stdin=stdin)
        assert result.code == 0, (args, result.out, result.err)
        return result.out

    def prompt(self, project: Path, *flags: str, words: str = "") -> tuple[str, dict[str, Any]]:
        """Send one prompt with `claude -p` (`words`, then a unique mark); return the session
        id and the main request."""
        text = (
            f"{words} (e2e prompt {uuid.uuid4().hex})"
            if words
            else f"e2e prompt {uuid.uuid4().hex}"
        )
        out = self.ok("-p", text, "--output-format", "json", *flags, cwd=project)
        reply = json.loads(out)
        assert reply["result"] == "Noted.", reply
        bodies = [
            b
            for b in self.api.message_requests()
            if b.get("tools") and any(text in t for t in _user_texts(b))
        ]
        assert bodies, f"no request carried the prompt {text!r}"
        return str(reply["session_id"]), bodies[-1]


def _user_texts(body: Mapping[str, Any]) -> list[str]:
    return [t for m in body["messages"] if m["role"] == "user" for t in _texts(m["content"])]


def run_script(
    script: Path, args: Sequence[str], env: Mapping[str, str], stdin: str | None = None
) -> str:
    data = None if stdin is None else stdin.encode("utf-8")
    result = run_command([sys.executable, script, *args], env=env, stdin=data)
    assert result.code == 0, (script.name, args, result.err)
    return result.out


def loader_block(project: Path, env: Mapping[str, str], *flags: str) -> str:
    """The permanent-memory block exactly as `permanent_memory.py load` prints it."""
    block = run_script(LOADER, ["load", "--project-dir", str(project), *flags], env)
    assert block.startswith("[permanent-memory | trust:file]\n"), block
    return block.strip()


def resume_block(project: Path, env: Mapping[str, str], data_dir: Path) -> str:
    """What the session-memory hook prints at a session's start, run here by hand."""
    hook_input = {
        "session_id": f"expected-{uuid.uuid4().hex}",
        "cwd": str(project),
        "transcript_path": str(data_dir / "transcript.jsonl"),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    hook_env = {**env, "CLAUDE_PROJECT_DIR": str(project), "CLAUDE_PLUGIN_DATA": str(data_dir)}
    out = json.loads(run_script(MANAGER, ["hook"], hook_env, stdin=json.dumps(hook_input)))
    context = out["hookSpecificOutput"]["additionalContext"]
    # The session-start hook adds the permanent-memory block after its own.
    block = context.split("[permanent-memory | trust:file]\n", 1)[0]
    assert block.startswith("[session-memory | trust:file]\n"), block
    assert re.search(r"Resuming `[^`]+` \(last touched ", block), block
    return block.strip()


# What the user sees at session start on the demo project (its permanent-memory block is
# trimmed to fit the budget; its snapshots are of two projects).
STATUS_LINE = (
    r"project-memory: \d+ epics, \d+ tokens( \([\w ,]+ lines left out\))?(, \d+ stale)?"
    r" \u00b7 2 projects' sessions, newest [\w.-]+ at CP-[\w-]+"
)


def system_messages(user: ClaudeUser, project: Path, session: str) -> list[str]:
    """The lines hooks showed the user in a session, from the client's own transcript."""
    home = Path(user.env["HOME"])
    [transcript] = list((home / ".claude" / "projects").glob(f"*/{session}.jsonl"))
    lines = []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        attachment = json.loads(line).get("attachment") or {}
        if attachment.get("type") == "hook_system_message":
            lines.append(str(attachment["content"]))
    return lines


def demo_copy(tmp_path: Path) -> Path:
    project = tmp_path / "work" / "demo-project"
    shutil.copytree(DEMO, project)
    return project


def option_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment the test's own script runs use: the CLI's, minus its API settings."""
    return {
        k: v for k, v in env.items() if not k.startswith("ANTHROPIC_") and "proxy" not in k.lower()
    }


@pytest.fixture(autouse=True)
def no_outside_traffic(api: FakeAnthropic) -> Iterator[None]:
    yield
    assert api.outside_requests() == [], "the CLI tried to reach a host other than the fake API"


# --- the scenarios -----------------------------------------------------------------------------


def test_validate_strict(claude_bin: Path, api: FakeAnthropic, tmp_path: Path) -> None:
    user = ClaudeUser(claude_bin, api, tmp_path / "home")
    out = user.ok("plugin", "validate", ".", "--strict", cwd=ROOT)
    assert "Validation passed" in out
    assert "⚠" not in out and "✘" not in out, out
    for target in (".", ".claude-plugin/plugin.json", ".claude-plugin/marketplace.json"):
        report = json.loads(user.ok("plugin", "validate", target, "--strict", "--json", cwd=ROOT))
        assert report["success"] is True, report
        assert report["manifest"]["errors"] == [] and report["manifest"]["warnings"] == []
        for item in report.get("contents", []):
            assert not item.get("errors") and not item.get("warnings"), item
        assert report["advice"] == []
    plugin_report = json.loads(
        user.ok("plugin", "validate", ".claude-plugin/plugin.json", "--strict", "--json", cwd=ROOT)
    )
    hooks = plugin_report["provides"]["hooks"]
    # Each command is the launcher (plugin_manifest_test.launcher): the script it runs.
    scripts = [(h["event"], re.findall(r'scripts/(\w+\.py)" hook', h["command"])) for h in hooks]
    assert sorted((event, set(names)) for event, names in scripts) == [
        ("PostCompact", {"memory_manager.py"}),
        ("PreCompact", {"permanent_memory.py"}),
        ("PreToolUse", {"permanent_memory.py"}),
        ("PreToolUse", {"permanent_memory.py"}),
        ("SessionEnd", {"memory_manager.py"}),
        ("SessionStart", {"memory_manager.py"}),
        ("Stop", {"memory_manager.py"}),
        ("SubagentStart", {"permanent_memory.py"}),
        ("UserPromptSubmit", {"permanent_memory.py"}),
    ]
    assert sorted(plugin_report["provides"]["skills"]) == [
        "project-memory:permanent-memory-loader",
        "project-memory:ski-memory-manager",
    ]
    assert plugin_report["hosts"]["declared"]["plugin"] is True  # network.hosts: [] counts


def test_installed_plugin_puts_blocks_in_front_of_the_model(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    user = ClaudeUser(claude_bin, api, tmp_path / "home")
    out = user.ok(
        "plugin", "marketplace", "add", str(support.clean_checkout(tmp_path)), cwd=tmp_path
    )
    assert MARKETPLACE in out
    out = user.ok("plugin", "install", PLUGIN_ID, cwd=tmp_path)
    assert f"Successfully installed plugin: {PLUGIN_ID}" in out
    details = user.ok("plugin", "details", "project-memory", cwd=tmp_path)
    assert "⚠" not in details and "warning" not in details.lower(), details
    always_on = re.search(r"Always-on:\s+~?([\d,.]+k?)\s+tok", details)
    assert always_on, details
    print(f"\nclaude plugin details project-memory:\n{details}")

    project = demo_copy(tmp_path)
    env = option_env(user.env)
    block = loader_block(project, env)
    resume = resume_block(project, env, tmp_path / "expected-data")

    # First prompt of a new session: both blocks, one copy each, as hook context.
    session, first = user.prompt(project)
    texts = request_texts(first)
    assert copies(block, texts) == 1, stamped(texts)
    assert copies(resume, texts) == 1, stamped(texts)
    assert copies(f"SessionStart hook additional context: {resume}\n", texts) == 1
    assert copies(f"UserPromptSubmit hook additional context: {block}\n", texts) == 0
    # The user's line: in the client's transcript as a hook message, never sent to the model.
    shown = system_messages(user, project, session)
    assert len(shown) == 1 and re.fullmatch(STATUS_LINE, shown[0]), shown
    assert not any(
        "project-memory: " in t for b in api.message_requests() for t in request_texts(b)
    )
    print(f"\nfirst request, permanent-memory block as sent:\n{block}\n\nresume block:\n{resume}")

    # Same session, nothing changed: no second copy.
    _, second = user.prompt(project, "--resume", session)
    assert copies(block, request_texts(second)) == 1, stamped(request_texts(second))
    assert copies(block, new_turn_texts(second)) == 0, stamped(new_turn_texts(second))

    # The file changes: the next prompt carries the new block.
    path = project / PERMANENT
    path.write_text(
        path.read_text(encoding="utf-8") + NEW_EPIC.format(completed="2026-11-01T12:00:00Z"),
        encoding="utf-8",
    )
    changed = loader_block(project, env)
    assert changed != block
    _, third = user.prompt(project, "--resume", session)
    assert copies(changed, new_turn_texts(third)) == 1, stamped(new_turn_texts(third))
    assert copies(changed, request_texts(third)) == 1, stamped(request_texts(third))

    # A file of random bytes, then no file at all: the prompt still reaches the API.
    path.write_bytes(os.urandom(4096) + b"\xff\xfe\x00## Epic: \x1b[31m")
    _, garbage = user.prompt(project)
    assert garbage["messages"]
    path.unlink()
    _, missing = user.prompt(project, "--resume", session)
    assert copies("[permanent-memory | trust:file]", new_turn_texts(missing)) == 0, stamped(
        new_turn_texts(missing)
    )


def recall_block(project: Path, env: Mapping[str, str], prompt: str) -> str:
    """What prompt-time recall adds to `prompt` as a session's first: `inspect --prompt`."""
    report = run_script(LOADER, ["inspect", "--prompt", prompt, "--project-dir", str(project)], env)
    _, found, block = report.partition("\nadded (")
    assert found, report
    return block.split(":\n", 1)[1].strip()


STRIPE_PROMPT = "Stripe webhooks: we keep getting duplicate events; where should we dedupe them?"


def test_a_prompt_gets_the_entries_relevant_to_it_once(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    user = ClaudeUser(claude_bin, api, tmp_path / "home")
    user.ok("plugin", "marketplace", "add", str(support.clean_checkout(tmp_path)), cwd=tmp_path)
    user.ok("plugin", "install", PLUGIN_ID, cwd=tmp_path)
    project = demo_copy(tmp_path)
    env = option_env(user.env)
    recall = recall_block(project, env, STRIPE_PROMPT)
    assert recall.startswith("[permanent-memory | trust:file]\nRelevant to this prompt (from ")
    assert "\nFEAT-005 gotchas: retries go on for 3 days" in recall

    # The first prompt of a session gets it, once, as the prompt hook's context (its stamp,
    # header and lines byte for byte), beside the session-start blocks.
    session, first = user.prompt(project, words=STRIPE_PROMPT)
    texts = new_turn_texts(first)
    assert copies(f"UserPromptSubmit hook additional context: {recall}\n", texts) == 1, stamped(
        texts
    )
    assert copies("Relevant to this prompt", request_texts(first)) == 1
    # The session-start block's lines are not sent again.
    assert "FEAT-005 gotchas: Stripe sends duplicate events" not in recall
    print(f"\nrecall block as the model got it:\n{recall}")

    # The next prompt of the same session, on the same subject: none of those entries again
    # (the next best ones, if any, are new to the session).
    _, second = user.prompt(project, "--resume", session, words=STRIPE_PROMPT)
    again = "".join(new_turn_texts(second))
    for line in recall.split("\n")[2:]:
        assert line not in again, stamped(new_turn_texts(second))
    assert copies(recall, request_texts(second)) == 1  # the first prompt's, in the history
    # A prompt about something the memory does not hold: nothing at all.
    _, third = user.prompt(project, "--resume", session, words="rename the README's title")
    assert copies("[permanent-memory | trust:file]", new_turn_texts(third)) == 0


def test_user_options_reach_the_hooks(claude_bin: Path, api: FakeAnthropic, tmp_path: Path) -> None:
    user = ClaudeUser(claude_bin, api, tmp_path / "home")
    user.ok("plugin", "marketplace", "add", str(support.clean_checkout(tmp_path)), cwd=tmp_path)
    options = {
        "every_turn": "true",
        "stale_days": "30",
        "token_target": "40",
        "hard_cap": "80",
        "memory_dir": "notes/sessions",
    }
    config_flags = [f for k, v in options.items() for f in ("--config", f"{k}={v}")]
    user.ok("plugin", "install", PLUGIN_ID, *config_flags, cwd=tmp_path)
    configured = json.loads(user.ok("plugin", "configure", PLUGIN_ID, "--json", cwd=tmp_path))
    assert sorted(configured["configured"]) == sorted(options)

    project = demo_copy(tmp_path)
    (project / "notes").mkdir()
    (project / "memory").rename(project / "notes" / "sessions")
    env = option_env(user.env)
    block = loader_block(project, env, "--stale-days", "30", "--target", "40", "--hard-cap", "80")
    assert block != loader_block(project, env)  # the options change what the hook must print
    resume = resume_block(
        project,
        {**env, "CLAUDE_PLUGIN_OPTION_MEMORY_DIR": "notes/sessions"},
        tmp_path / "expected-data",
    )

    session, first = user.prompt(project)
    assert copies(block, request_texts(first)) >= 1, stamped(request_texts(first))
    assert copies(resume, request_texts(first)) == 1, stamped(request_texts(first))
    for turn in range(2, 4):  # every prompt carries the block, changed or not
        flags = ("--continue",) if turn == 2 else ("--resume", session)
        _, body = user.prompt(project, *flags)
        assert copies(block, new_turn_texts(body)) == 1, (turn, stamped(new_turn_texts(body)))


def test_plugin_dir_without_install(claude_bin: Path, api: FakeAnthropic, tmp_path: Path) -> None:
    user = ClaudeUser(claude_bin, api, tmp_path / "home")
    project = demo_copy(tmp_path)
    env = option_env(user.env)
    block = loader_block(project, env)
    resume = resume_block(project, env, tmp_path / "expected-data")
    _, first = user.prompt(project, "--plugin-dir", str(ROOT))
    assert copies(block, request_texts(first)) == 1, stamped(request_texts(first))
    assert copies(resume, request_texts(first)) == 1, stamped(request_texts(first))
    _, second = user.prompt(project, "--plugin-dir", str(ROOT), "--continue")
    assert copies(block, request_texts(second)) == 1, stamped(request_texts(second))


def test_a_subagent_gets_the_permanent_memory_block_once(claude_bin: Path, tmp_path: Path) -> None:
    prompt = f"e2e prompt {uuid.uuid4().hex}"
    task = f"subagent task {uuid.uuid4().hex}"

    def model(body: dict[str, Any]) -> list[dict[str, Any]] | None:
        asked = _user_texts(body)
        if any(task in t for t in asked) and not any(prompt in t for t in asked):
            return None  # the subagent: the default reply ends its work
        if any(prompt in t for t in asked):
            if last_tool_results(body):
                return [fake_anthropic.text("Noted.")]
            return [
                tool_use(
                    "Agent",
                    {
                        "description": "check the memory",
                        "prompt": task,
                        "subagent_type": "general-purpose",
                        "run_in_background": False,
                    },
                )
            ]
        return None

    with FakeAnthropic(responder=model) as api:
        user = ClaudeUser(claude_bin, api, tmp_path / "home")
        project = demo_copy(tmp_path)
        block = loader_block(project, option_env(user.env))
        # A project hook of our own records the SubagentStart input the client passes.
        recorded = tmp_path / "subagent-start.json"
        write = f"import sys; open({str(recorded)!r}, 'w').write(sys.stdin.read())"
        recorder = f'{sys.executable} -c "{write}"'
        settings = {
            "hooks": {"SubagentStart": [{"hooks": [{"type": "command", "command": recorder}]}]}
        }
        (project / ".claude" / "settings.json").write_text(json.dumps(settings))
        out = user.ok(
            "-p", prompt, "--output-format", "json", "--plugin-dir", str(ROOT), cwd=project
        )
        assert json.loads(out)["result"] == "Noted.", out
        assert api.responder_errors == []
        assert api.outside_requests() == []
        bodies = [b for b in api.message_requests() if b.get("tools")]
        main = [b for b in bodies if any(prompt in t for t in _user_texts(b))]
        subagent = [b for b in bodies if b not in main and any(task in t for t in _user_texts(b))]
    assert main and subagent, [tool_names(b) for b in bodies]
    # The main conversation got the block once, at session start.
    assert copies(block, request_texts(main[-1])) == 1, stamped(request_texts(main[-1]))
    # The subagent's first request carries it once, as SubagentStart's additional context.
    first = request_texts(subagent[0])
    assert copies(block, first) == 1, stamped(first)
    assert copies(f"SubagentStart hook additional context: {block}\n", first) == 1, stamped(first)
    assert copies("[session-memory | trust:file]", first) == 0, stamped(first)
    for later in subagent[1:]:
        assert copies(block, request_texts(later)) == 1
    # What SubagentStart's input holds: no task text, so no prompt-time recall for it.
    given = json.loads(recorded.read_text())
    print(f"\nSubagentStart hook input: {sorted(given)}")
    assert given["hook_event_name"] == "SubagentStart" and given["agent_type"] == "general-purpose"
    assert not any(task in json.dumps(value) for value in given.values())
