"""End to end in the real Codex CLI: install, trust the hooks, and see the blocks and the skills'
commands reach the model.

A fake Responses API on 127.0.0.1 (scripts/e2e/fake_responses.py) plays the model for a custom
model provider in a temporary CODEX_HOME; no real credential exists anywhere. Every other host
the CLI tries goes through HTTPS_PROXY, which is the fake too: it refuses and records the
attempt. The CLI runs as `codex exec` with the sandbox a user sets to let the agent write in
its project (`sandbox_mode = "workspace-write"`) and the approval policy `codex exec` has by
default; no bypass flag. The hooks are trusted the way the `/hooks` screen of the interactive
CLI does it: the CLI's own app-server lists them (`hooks/list`) and writes their current hashes
into the user's config.toml (`config/batchWrite`).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import support
from conftest import ROOT, pinned_client
from e2e_claude_code_test import (
    NEW_EPIC,
    STATUS_LINE,
    copies,
    loader_block,
    resume_block,
    stamped,
)
from e2e_env import clean_env
from e2e_write_path_test import (
    ACTIVE_STATE,
    SESSION_STAMP,
    assert_recorded,
    assert_saved,
    epic_lines,
    save_yaml,
)
from fake_responses import (
    CallOutput,
    FakeResponses,
    Item,
    ScriptedModel,
    all_texts,
    function_call,
    is_agent_turn,
    item_texts,
    message,
    new_outputs,
)
from project_memory_loader.writing import pm_waiting
from support import Result, run_command

pytestmark = pytest.mark.e2e

CODEX_VERSION = "0.171.0"
MARKETPLACE = "project-memory"
PLUGIN_ID = f"project-memory@{MARKETPLACE}"
DEMO = ROOT / "examples" / "demo-project"
PERMANENT = Path(".claude") / "memory" / "permanent_memory.md"
TIMEOUT = 120  # seconds, for any one CLI call; a normal one takes a few seconds
KEY_VAR = "PROJECT_MEMORY_E2E_KEY"
# With plugins enabled the CLI refreshes OpenAI's curated plugin catalog at start-up (git, then
# the GitHub API, then a ChatGPT export). Through the proxy these are refused; nothing else may
# be tried.
CATALOG_HOSTS = {"github.com:443", "api.github.com:443", "chatgpt.com:443"}
# In hooks.json order within each event, events in the order Codex lists them.
HOOK_EVENTS = [
    "preToolUse",
    "preToolUse",
    "preCompact",
    "postCompact",
    "sessionStart",
    "sessionEnd",
    "userPromptSubmit",
    "subagentStart",
    "stop",
]


# --- the user ----------------------------------------------------------------------------------


def provider_config(api: FakeResponses, sandbox: str) -> str:
    return f"""\
model = "e2e-fake-model"
model_provider = "e2e"
check_for_update_on_startup = false
sandbox_mode = "{sandbox}"

# The test's projects live under /tmp, which workspace-write would open to writes as a whole:
# leave it out so the project folder is the only place the agent may write.
[sandbox_workspace_write]
exclude_slash_tmp = true
exclude_tmpdir_env_var = true

[model_providers.e2e]
name = "fake Responses API"
base_url = "{api.base_url}"
env_key = "{KEY_VAR}"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"""


@dataclass
class Run:
    session_id: str
    bodies: list[dict[str, Any]]  # the POST /responses bodies of this run, in order
    result: Result

    @property
    def first(self) -> dict[str, Any]:
        assert self.bodies, self.result.err
        return self.bodies[0]


class CodexUser:
    """One Codex user: a HOME and CODEX_HOME of their own, talking to the fake API."""

    def __init__(
        self,
        codex: Path,
        api: FakeResponses,
        home: Path,
        sandbox: str = "workspace-write",
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.codex = codex
        self.api = api
        self.home = home
        self.codex_home = home / ".codex"
        self.codex_home.mkdir(parents=True, exist_ok=True)
        (self.codex_home / "config.toml").write_text(
            provider_config(api, sandbox), encoding="utf-8"
        )
        proxy = {
            name: api.origin
            for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy")
        }
        self.env = clean_env(
            home,
            {
                "CODEX_HOME": str(self.codex_home),
                KEY_VAR: "e2e-dummy-key",
                "NO_PROXY": "127.0.0.1,localhost",
                "no_proxy": "127.0.0.1,localhost",
                **proxy,
                **(extra_env or {}),
            },
        )

    def run(self, *args: str, cwd: Path) -> Result:
        return run_command([self.codex, *args], env=self.env, cwd=cwd, timeout=TIMEOUT)

    def ok(self, *args: str, cwd: Path) -> str:
        result = self.run(*args, cwd=cwd)
        assert result.code == 0, (args, result.out, result.err)
        return result.out

    def exec(
        self,
        project: Path,
        prompt: str | None = None,
        resume: str | None = None,
        flags: Sequence[str] = (),
    ) -> Run:
        """One `codex exec` (or `codex exec resume ID`) prompt; the requests it made."""
        prompt = prompt or f"e2e prompt {uuid.uuid4().hex}"
        before = len(self.api.response_requests())
        args = ["exec", "resume", resume] if resume else ["exec"]
        result = self.run(*args, *flags, "--json", "--skip-git-repo-check", prompt, cwd=project)
        assert result.code == 0, (result.out, result.err)
        events = [json.loads(line) for line in result.out.splitlines() if line.startswith("{")]
        started = [e["thread_id"] for e in events if e.get("type") == "thread.started"]
        assert started, result.out
        bodies = self.api.response_requests()[before:]
        assert any(prompt in t for b in bodies for t in all_texts(b)), "prompt never sent"
        return Run(started[0], bodies, result)

    def app_server(self, cwd: Path, requests: Sequence[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Send requests to `codex app-server` over stdio, one after another; their results."""
        with AppServer(self.codex, self.env, cwd) as server:
            return [server.request(method, params) for method, params in requests]

    def hooks(self, project: Path) -> list[dict[str, Any]]:
        [listed] = self.app_server(project, [("hooks/list", {"cwds": [str(project)]})])
        [entry] = listed["data"]
        assert entry["errors"] == [] and entry["warnings"] == [], entry
        return [h for h in entry["hooks"] if h.get("pluginId") == PLUGIN_ID]

    def trust_hooks(self, project: Path) -> list[dict[str, Any]]:
        """What trusting the plugin's hooks in `/hooks` does: their current hashes, saved."""
        hooks = self.hooks(project)
        state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
        edit = {"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}
        [written] = self.app_server(project, [("config/batchWrite", {"edits": [edit]})])
        assert written["status"] == "ok", written
        return hooks


class AppServer:
    """`codex app-server` on stdio: JSON-RPC requests, one line each, answered in order."""

    def __init__(self, codex: Path, env: Mapping[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [str(codex), "app-server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            cwd=cwd,
        )
        self.ids = iter(range(1, 1000))
        self.buffer = b""
        self.notifications: list[dict[str, Any]] = []

    def __enter__(self) -> AppServer:
        self.request("initialize", {"clientInfo": {"name": "project-memory-e2e", "version": "1"}})
        self._send({"method": "initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def _line(self, deadline: float) -> bytes:
        assert self.proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "codex app-server did not answer in time"
            if selector.select(timeout=left):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, "codex app-server closed its output"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def request(self, method: str, params: dict[str, Any]) -> Any:
        number = next(self.ids)
        self._send({"id": number, "method": method, "params": params})
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = json.loads(self._line(deadline))
            if reply.get("id") == number and "method" not in reply:
                assert "error" not in reply, (method, reply)
                return reply["result"]
            self.notifications.append(reply)

    def wait_for(self, method: str) -> dict[str, Any]:
        """The next notification `method` (earlier ones seen while waiting are kept)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            for index, note in enumerate(self.notifications):
                if note.get("method") == method:
                    return self.notifications.pop(index)
            self.notifications.append(json.loads(self._line(deadline)))

    def session(self, cwd: Path, prompts: Sequence[str], before: Callable[[int], None]) -> str:
        """One thread, one turn per prompt, as the interactive CLI runs them; `before(n)` runs
        before the n-th prompt is sent. Returns the thread id."""
        started = self.request("thread/start", {"cwd": str(cwd)})
        thread = str(started["thread"]["id"])
        for number, prompt in enumerate(prompts):
            before(number)
            self.request(
                "turn/start", {"threadId": thread, "input": [{"type": "text", "text": prompt}]}
            )
            self.wait_for("turn/completed")
        return thread


def readme_codex_commands() -> list[list[str]]:
    """The `codex …` lines of README.md's Install section, as argument lists."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    return [shlex.split(line[2:]) for line in install.splitlines() if line.startswith("$ codex ")]


def readme_install_commands() -> list[list[str]]:
    commands = [c for c in readme_codex_commands() if c[1] == "plugin"]
    assert [c[:3] for c in commands] == [
        ["codex", "plugin", "marketplace"],
        ["codex", "plugin", "add"],
    ], commands
    return commands


def readme_exec_flags() -> list[str]:
    """The flags of README's `codex exec` line (its prompt left out)."""
    [command] = [c for c in readme_codex_commands() if c[1] == "exec"]
    assert command[-1] and not command[-1].startswith("-"), command
    return command[2:-1]


def installed_user(codex: Path, api: FakeResponses, tmp_path: Path, **settings: Any) -> CodexUser:
    """A user who installed the plugin with the README's own commands, from a clean checkout."""
    user = CodexUser(codex, api, tmp_path / "home", **settings)
    checkout = support.clean_checkout(tmp_path)
    for command in readme_install_commands():
        user.ok(*command[1:], cwd=checkout.parent)
    return user


def demo_copy(tmp_path: Path, only: str | None = None) -> Path:
    """The demo project; with `only`, just that project's session snapshots."""
    project = tmp_path / "work" / "billing"
    shutil.copytree(DEMO, project)
    if only is not None:
        for snapshot in (project / "memory").glob("*.md"):
            if not snapshot.name.endswith(f"-{only}.md") or "-legacy-" in snapshot.name:
                snapshot.unlink()
    return project


def load_last_output(project: Path, env: Mapping[str, str]) -> str:
    """What `load-last --project-name billing-api` prints in `project`, run here by hand."""
    manager = ROOT / "skills" / "ski-memory-manager" / "scripts" / "memory_manager.py"
    result = run_command(
        [sys.executable, manager, "load-last", "--project-name", "billing-api"],
        env=env,
        cwd=project,
        timeout=TIMEOUT,
    )
    assert result.code == 0, result.err
    return result.out


def hook_env(user: CodexUser) -> dict[str, str]:
    """The environment the test's own script runs use: the CLI's, minus its provider settings."""
    return {
        k: v
        for k, v in user.env.items()
        if k not in (KEY_VAR, "CODEX_HOME") and "proxy" not in k.lower()
    }


def new_turn_texts(body: Mapping[str, Any]) -> list[str]:
    """The text added for this prompt: the input items after the model's last item."""
    items = body["input"]
    last = max(
        (
            i
            for i, item in enumerate(items)
            if item.get("type") == "function_call"
            or (item.get("type") == "message" and item.get("role") == "assistant")
        ),
        default=-1,
    )
    return [t for item in items[last + 1 :] for t in item_texts(item)]


def developer_texts(body: Mapping[str, Any]) -> list[str]:
    return [
        t
        for item in body["input"]
        if item.get("type") == "message" and item.get("role") == "developer"
        for t in item_texts(item)
    ]


@pytest.fixture(scope="module")
def codex_bin() -> Path:
    return pinned_client("codex")


@pytest.fixture(scope="module")
def responses_api() -> Iterator[FakeResponses]:
    with FakeResponses() as server:
        yield server


@pytest.fixture(autouse=True)
def only_loopback(responses_api: FakeResponses) -> Iterator[None]:
    responses_api.responder = None
    responses_api.clear()
    yield
    responses_api.responder = None
    tried = {r.path for r in responses_api.outside_requests()}
    assert tried <= CATALOG_HOSTS, tried
    assert all(r.method == "CONNECT" for r in responses_api.outside_requests())
    assert responses_api.responder_errors == []


# --- the scenarios -----------------------------------------------------------------------------


def test_the_pinned_cli_is_the_one_documented(codex_bin: Path, tmp_path: Path) -> None:
    out = run_command([codex_bin, "--version"], env=clean_env(tmp_path), timeout=TIMEOUT).out
    assert out.strip() == f"codex-cli {CODEX_VERSION}"
    assert f"Codex CLI {CODEX_VERSION}" in (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")


def test_install_lists_the_skills_and_the_trusted_hooks_add_both_blocks(
    codex_bin: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    user = installed_user(codex_bin, responses_api, tmp_path)
    cache = user.codex_home / "plugins" / "cache" / MARKETPLACE / "project-memory"
    [installed] = list(cache.iterdir())
    assert (
        installed.name
        == json.loads((ROOT / ".codex-plugin" / "plugin.json").read_text())["version"]
    )
    assert (installed / ".codex-plugin" / "plugin.json").is_file()
    assert not list(installed.rglob("node_modules")) and not (installed / ".venv").exists()
    size = sum(f.stat().st_size for f in installed.rglob("*") if f.is_file())
    print(f"\ninstalled plugin folder: {size / 1e6:.1f} MB")
    assert size < 20e6, size
    listed = json.loads(user.ok("plugin", "list", "--json", cwd=tmp_path))
    assert [p["pluginId"] for p in listed["installed"] if p["enabled"]] == [PLUGIN_ID], listed

    project = demo_copy(tmp_path)
    env = hook_env(user)
    block = loader_block(project, env)
    resume = resume_block(project, env, tmp_path / "expected-data")

    # Installed but not yet trusted: the skills are listed, the hooks do not run.
    hooks = user.hooks(project)
    assert [(h["eventName"], h["trustStatus"]) for h in hooks] == [
        (event, "untrusted") for event in HOOK_EVENTS
    ]
    untrusted = user.exec(project)
    [listing] = [t for t in developer_texts(untrusted.first) if "<skills_instructions>" in t]
    for skill in ("permanent-memory-loader", "ski-memory-manager"):
        description = re.search(r"^description: (.+)$", skill_file(skill), re.MULTILINE)
        assert description, skill
        entry = f"- project-memory:{skill}: {description.group(1)} (file: "
        assert entry in listing, listing
    print(f"\nthe skill listing the model got:\n{listing}")
    # The plugin's commands (commands/*.md) are not among what Codex offers the model.
    ours = re.findall(r"^- (project-memory:[\w-]+):", listing, re.MULTILINE)
    assert ours == ["project-memory:permanent-memory-loader", "project-memory:ski-memory-manager"]
    assert copies("[permanent-memory | trust:file]", all_texts(untrusted.first)) == 0

    # Trusted: a new session starts with both blocks, once each, as one developer message.
    trusted = user.trust_hooks(project)
    assert [h["eventName"] for h in trusted] == HOOK_EVENTS
    assert {h["trustStatus"] for h in user.hooks(project)} == {"trusted"}
    first = user.exec(project)
    texts = all_texts(first.first)
    assert copies(block, texts) == 1, stamped(texts)
    assert copies(resume, texts) == 1, stamped(texts)
    # Then, after a blank line, the line on proposing lessons (docs/hooks.md).
    message = f"{resume}\n{block}\n\n{pm_waiting.PROPOSE_LINE}"
    assert message in developer_texts(first.first), stamped(texts)
    print(f"\nsession start, as sent:\n{resume}\n{block}")

    # `codex exec resume`: SessionStart runs again (source "resume"); nothing changed, so
    # nothing is added.
    again = user.exec(project, resume=first.session_id)
    assert again.session_id == first.session_id
    assert copies(block, all_texts(again.bodies[-1])) == 1, stamped(all_texts(again.bodies[-1]))
    assert copies(block, new_turn_texts(again.bodies[-1])) == 0

    # One session of several prompts, as the interactive CLI holds it: the second prompt, the
    # file unchanged, gets nothing; the third, after the file changed, the new block once.
    path = project / PERMANENT
    prompts = [f"e2e prompt {n} {uuid.uuid4().hex}" for n in range(3)]

    def before(number: int) -> None:
        if number == 2:
            path.write_text(
                path.read_text(encoding="utf-8")
                + NEW_EPIC.format(completed="2026-11-01T12:00:00Z"),
                encoding="utf-8",
            )

    with AppServer(user.codex, user.env, project) as server:
        server.session(project, prompts, before)
        runs = [n["params"]["run"] for n in server.notifications if n["method"] == "hook/completed"]
    changed = loader_block(project, env)
    assert changed != block
    turns = [
        next(b for b in responses_api.response_requests() if any(p in t for t in all_texts(b)))
        for p in prompts
    ]
    assert copies(block, all_texts(turns[0])) == 1, stamped(all_texts(turns[0]))
    assert copies(resume, all_texts(turns[0])) == 1, stamped(all_texts(turns[0]))
    assert copies(block, new_turn_texts(turns[1])) == 0, stamped(new_turn_texts(turns[1]))
    third = new_turn_texts(turns[2])
    assert copies(changed, third) == 1, stamped(third)
    assert copies(changed, all_texts(turns[2])) == 1, stamped(all_texts(turns[2]))
    assert copies("[session-memory | trust:file]", third) == 0, stamped(third)
    print(f"\nprompt after the change, as sent:\n{next(t for t in third if changed in t)}")
    # The user's line: a warning entry of the SessionStart run, never sent to the model.
    [started] = [r for r in runs if r["eventName"] == "sessionStart"]
    shown = [e["text"] for e in started["entries"] if e["kind"] == "warning"]
    assert len(shown) == 1 and re.fullmatch(STATUS_LINE, shown[0]), started["entries"]
    sent = [t for b in responses_api.response_requests() for t in all_texts(b)]
    assert not any("project-memory: " in t for t in sent)
    print(f"\nshown to the user at session start: {shown[0]}")


RECALL_PROMPT = "how do we dedupe webhook retries on the event id and check the signature?"


def expected_turns(
    project: Path, env: Mapping[str, str], data: Path, prompts: Sequence[str]
) -> list[str]:
    """What the loader's UserPromptSubmit hook adds to each prompt of one session, run by hand
    (after a SessionStart that gave the session its block)."""
    loader = ROOT / "skills" / "permanent-memory-loader" / "scripts" / "permanent_memory.py"
    hook_env = {**env, "CLAUDE_PLUGIN_DATA": str(data)}
    session = f"expected-{uuid.uuid4().hex}"
    added = []
    events = [("SessionStart", {"source": "startup"})]
    events += [("UserPromptSubmit", {"prompt": prompt}) for prompt in prompts]
    for event, extra in events:
        hook_input = {"session_id": session, "cwd": str(project), "hook_event_name": event, **extra}
        result = run_command(
            [sys.executable, loader, "hook"],
            env=hook_env,
            stdin=json.dumps(hook_input).encode(),
            cwd=project,
            timeout=TIMEOUT,
        )
        assert result.code == 0, result.err
        out = json.loads(result.out) if result.out.strip() else {}
        added.append(out.get("hookSpecificOutput", {}).get("additionalContext", ""))
    return added[1:]


def test_prompt_time_recall_reaches_the_model(
    codex_bin: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    user = installed_user(codex_bin, responses_api, tmp_path)
    project = demo_copy(tmp_path)
    user.trust_hooks(project)
    prompts = [f"e2e prompt {uuid.uuid4().hex}", RECALL_PROMPT]
    expected = expected_turns(project, hook_env(user), tmp_path / "expected-data", prompts)
    assert expected[0] == ""
    assert expected[1].startswith("[permanent-memory | trust:file]\nRelevant to this prompt"), (
        expected
    )
    with AppServer(user.codex, user.env, project) as server:
        server.session(project, prompts, lambda number: None)
    body = next(
        b
        for b in responses_api.response_requests()
        if any(RECALL_PROMPT in t for t in all_texts(b))
    )
    turn = new_turn_texts(body)
    assert turn == [RECALL_PROMPT, expected[1]], turn
    print(f"\nrecall for {RECALL_PROMPT!r}, as sent:\n{expected[1]}")


def test_a_subagent_gets_the_permanent_memory_block_once(
    codex_bin: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    user = installed_user(codex_bin, responses_api, tmp_path)
    project = demo_copy(tmp_path)
    user.trust_hooks(project)
    block = loader_block(project, hook_env(user))
    prompt = f"e2e prompt {uuid.uuid4().hex}"
    task = f"subagent task {uuid.uuid4().hex}"

    def spawn(body: dict[str, Any]) -> list[Item]:
        return [dict(function_call("spawn_agent", {"message": task}), namespace="multi_agent_v1")]

    def wait(body: dict[str, Any]) -> list[Item]:
        [spawned] = new_outputs(body)
        agent = json.loads(spawned.text)["agent_id"]
        call = function_call("wait_agent", {"targets": [agent], "timeout_ms": 30000})
        return [dict(call, namespace="multi_agent_v1")]

    def main_turn(body: Mapping[str, Any]) -> bool:
        return any(prompt in t for t in all_texts(body))

    responses_api.responder = ScriptedModel(
        [spawn, wait, lambda body: [message("Done.")]], is_main=main_turn
    )
    user.exec(project, prompt)
    responses_api.responder = None
    bodies = responses_api.response_requests()
    subagent = [b for b in bodies if not main_turn(b) and any(task in t for t in all_texts(b))]
    main = [b for b in bodies if main_turn(b)]
    assert len(main) == 3 and subagent, [len(main), len(subagent)]
    assert copies(block, all_texts(main[-1])) == 1, stamped(all_texts(main[-1]))
    first = all_texts(subagent[0])
    assert copies(block, first) == 1, stamped(first)
    assert block + "\n" in developer_texts(subagent[0]), stamped(first)
    assert copies("[session-memory | trust:file]", first) == 0, stamped(first)


# --- the model writes memory -------------------------------------------------------------------


def skill_file(skill: str) -> str:
    return (ROOT / "skills" / skill / "SKILL.md").read_text(encoding="utf-8")


def skill_path(body: Mapping[str, Any], skill: str) -> Path:
    """Where the listing the CLI sent says the skill's SKILL.md is (roots table expanded)."""
    [listing] = [t for t in all_texts(body) if "<skills_instructions>" in t]
    roots = dict(re.findall(r"^- `(r\d+)` = `([^`]+)`$", listing, re.MULTILINE))
    found = re.search(rf"^- project-memory:{skill}: .*\(file: (r\d+)/([^)]+)\)$", listing, re.M)
    assert found, listing
    return Path(roots[found.group(1)]) / found.group(2)


def skill_command(skill_text: str, marker: str, skill_dir: Path) -> str:
    """The first line of the ```bash block holding `marker`, with the skill's folder where the
    text says to put it (`${CLAUDE_SKILL_DIR}`, which only Claude Code fills in)."""
    for block in re.findall(r"```bash\n(.*?)```", skill_text, flags=re.DOTALL):
        if marker in block:
            line: str = block.split("\n", 1)[0]
            assert "${CLAUDE_SKILL_DIR}" in line, line
            return line.replace("${CLAUDE_SKILL_DIR}", str(skill_dir))
    raise AssertionError(f"no bash block with {marker!r} in the skill text")


def shell_output(output: CallOutput) -> tuple[int, str]:
    """Exit code and output of one exec_command result as the CLI reports it."""
    code = re.search(r"^Process exited with code (-?\d+)$", output.text, re.MULTILINE)
    assert code, output.text
    return int(code.group(1)), output.text.split("\nOutput:\n", 1)[1]


# Codex shows the model at most about 10,000 bytes of one command's output (the start and the
# end, the middle cut out, whatever `max_output_tokens` asks); a model reads a longer file in
# pieces. The SKILL.md files are kept under 9,000 bytes (the skill tests check it), so one read
# would do; this model still reads them a page of lines at a time, as it would any file.
PAGE_LINES = 60


@dataclass
class Agent:
    """A model that reads a skill's SKILL.md with the shell tool, a page of lines at a time as it
    would read any long file, then runs commands built from that text."""

    steps: list[tuple[str, Callable[[str, Path], str]]]  # (skill, build(skill text, folder))
    texts: dict[str, str] = field(default_factory=dict)  # SKILL.md as the model read it
    runs: list[tuple[str, int, str]] = field(default_factory=list)  # the steps' commands
    pending: str | None = None  # the command whose output comes with the next request
    page: tuple[str, int] | None = None  # (skill, first line) of the page being read

    def model(self) -> Callable[[dict[str, Any]], list[Item] | None]:
        done = False

        def shell(command: str) -> list[Item]:
            self.pending = command
            return [function_call("exec_command", {"cmd": command, "yield_time_ms": 10000})]

        def answer(body: dict[str, Any]) -> list[Item] | None:
            nonlocal done
            if not is_agent_turn(body) or done:
                return None
            if self.pending is not None:
                [output] = new_outputs(body)
                code, out = shell_output(output)
                if self.page is not None:
                    skill, first = self.page
                    assert code == 0 and "truncated" not in out.split("\n", 1)[0], out
                    self.texts[skill] = self.texts.get(skill, "") + out
                    more = out.count("\n") == PAGE_LINES
                    self.page = (skill, first + PAGE_LINES) if more else None
                else:
                    self.runs.append((self.pending, code, out))
                self.pending = None
            step = len(self.runs)
            if step == len(self.steps) and self.page is None:
                done = True
                return [message("Done.")]
            skill, build = self.steps[step]
            path = skill_path(body, skill)
            if self.page is None and skill not in self.texts:
                self.page = (skill, 1)
            if self.page is not None:
                first = self.page[1]
                last = first + PAGE_LINES - 1
                return shell(f"sed -n '{first},{last}p' {shlex.quote(str(path))}")
            return shell(build(self.texts[skill], path.parent))

        return answer


def test_the_model_runs_load_last_save_and_add_from_the_skill_text(
    codex_bin: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    # The user's config keeps `codex exec`'s read-only default; README's flag opens the project.
    user = installed_user(codex_bin, responses_api, tmp_path, sandbox="read-only")
    project = demo_copy(tmp_path, only="billing-api")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    user.trust_hooks(project)
    env = hook_env(user)
    before = resume_block(project, env, tmp_path / "expected-before")
    loaded = load_last_output(project, env)

    def load_last(text: str, folder: Path) -> str:
        line = skill_command(text, "load-last", folder)
        assert line.endswith(" load-last --project-name billing-api"), line
        return line

    def save(text: str, folder: Path) -> str:
        line = skill_command(text, "save --yaml - <<'YAML'", folder)
        assert line.endswith(" save --yaml - <<'YAML'"), line
        return f"{line}\n{save_yaml('billing-api')}YAML"

    def add(text: str, folder: Path) -> str:
        line = skill_command(text, "add --lines - <<'EPIC'", folder)
        assert line.endswith(" add --lines - <<'EPIC'"), line
        return f"{line}\n{epic_lines('FEAT-021')}EPIC"

    agent = Agent(
        [
            ("ski-memory-manager", load_last),
            ("ski-memory-manager", save),
            ("permanent-memory-loader", add),
        ]
    )
    responses_api.responder = agent.model()
    flags = readme_exec_flags()
    assert flags == ["--sandbox", "workspace-write"], flags
    session = user.exec(project, "resume billing-api, save, record the epic", flags=flags)
    responses_api.responder = None
    for number, (sent, code, out) in enumerate(agent.runs):
        print(f"[{number}] {sent.splitlines()[0]}\n    -> exit {code}: {out[:300]!r}")
    assert agent.texts == {skill: skill_file(skill) for skill in agent.texts}, "misread"
    assert sorted(agent.texts) == ["permanent-memory-loader", "ski-memory-manager"]
    assert [code for _, code, _ in agent.runs] == [0, 0, 0], agent.runs
    # load-last printed the snapshot the session-start hook had already resumed.
    assert agent.runs[0][2] == loaded
    assert copies(before, all_texts(session.bodies[0])) == 1
    assert_saved(project, "billing-api", agent.runs[1][2].strip())
    assert_recorded(project, "FEAT-021", agent.runs[2][2].strip())
    assert session.bodies, session.result.err

    # The next session resumes the new snapshot and carries the new epic, once each.
    block = loader_block(project, env)
    resume = resume_block(project, env, tmp_path / "expected-after")
    assert "FEAT-021" in block
    assert all(line in resume for line in ACTIVE_STATE)
    assert SESSION_STAMP in resume
    following = user.exec(project)
    texts = all_texts(following.first)
    assert copies(block, texts) == 1, stamped(texts)
    assert copies(resume, texts) == 1, stamped(texts)
    print(f"\nnext session start, as sent:\n{resume}\n{block}")


def test_read_only_sandbox_refuses_the_writes_and_loses_nothing(
    codex_bin: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    """`codex exec` without a sandbox setting is read-only: the reads work, a save fails with
    one line and writes nothing."""
    user = installed_user(codex_bin, responses_api, tmp_path, sandbox="read-only")
    project = demo_copy(tmp_path, only="billing-api")
    user.trust_hooks(project)
    env = hook_env(user)
    loaded = load_last_output(project, env)
    snapshots = sorted(p.name for p in (project / "memory").iterdir())

    def load_last(text: str, folder: Path) -> str:
        return skill_command(text, "load-last", folder)

    def save(text: str, folder: Path) -> str:
        line = skill_command(text, "save --yaml - <<'YAML'", folder)
        return f"{line}\n{save_yaml('billing-api')}YAML"

    agent = Agent([("ski-memory-manager", load_last), ("ski-memory-manager", save)])
    responses_api.responder = agent.model()
    user.exec(project, "resume billing-api and save the session")
    responses_api.responder = None
    for sent, code, out in agent.runs:
        print(f"{sent.splitlines()[0]}\n    -> exit {code}: {out[:300]!r}")
    [loading, saving] = [(code, out) for _, code, out in agent.runs]
    assert loading == (0, loaded)
    assert saving[0] == 1, saving
    [line] = saving[1].splitlines()
    # The lock is the folder itself (read access is enough); the snapshot's write is what this
    # sandbox refuses, and the line says so.
    assert line.startswith(f"cannot write {project / 'memory'}/"), saving
    assert "Read-only file system" in line or "ermission denied" in line, saving
    assert sorted(p.name for p in (project / "memory").iterdir()) == snapshots


def test_options_from_the_environment_codex_starts_in(
    codex_bin: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    """Codex has no plugin options; the hooks read the same variables from its environment."""
    user = installed_user(
        codex_bin,
        responses_api,
        tmp_path,
        extra_env={
            "CLAUDE_PLUGIN_OPTION_EVERY_TURN": "true",
            "CLAUDE_PLUGIN_OPTION_HARD_CAP": "80",
        },
    )
    project = demo_copy(tmp_path)
    user.trust_hooks(project)
    env = hook_env(user)
    block = loader_block(project, env, "--hard-cap", "80")
    assert block != loader_block(project, env)
    prompts = [f"e2e prompt {n} {uuid.uuid4().hex}" for n in range(3)]
    with AppServer(user.codex, user.env, project) as server:
        server.session(project, prompts, lambda number: None)
    for prompt in prompts[1:]:
        body = next(
            b for b in responses_api.response_requests() if any(prompt in t for t in all_texts(b))
        )
        assert copies(block, new_turn_texts(body)) == 1, stamped(new_turn_texts(body))


# --- the skills alone --------------------------------------------------------------------------


def test_skills_alone_with_the_skillmds_codex_target(
    codex_bin: Path, responses_api: FakeResponses, tmp_path: Path
) -> None:
    skillmds = pinned_client("skillmds")
    user = CodexUser(codex_bin, responses_api, tmp_path / "home")
    project = tmp_path / "work" / "app"
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    added = run_command(
        [skillmds, "add", str(ROOT), "--project", "--agent", "codex", "--yes"],
        env=user.env,
        cwd=project,
        timeout=TIMEOUT,
    )
    assert added.code == 0, added.out + added.err
    for skill in ("permanent-memory-loader", "ski-memory-manager"):
        assert (project / ".agents" / "skills" / skill / "SKILL.md").is_file(), added.out
    run = user.exec(project)
    [listing] = [t for t in all_texts(run.first) if "<skills_instructions>" in t]
    for skill in ("permanent-memory-loader", "ski-memory-manager"):
        assert re.search(rf"^- {skill}: .*\(file: r\d+/{skill}/SKILL\.md\)$", listing, re.M), (
            listing
        )
    assert copies("trust:file]", all_texts(run.first)) == 0  # no plugin, no hooks
