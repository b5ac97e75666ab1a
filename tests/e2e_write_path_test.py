"""End to end in the real Claude Code CLI: a model saves and records memory with the skills' own
permissions.

The fake Messages API plays the model. Its first answer loads a skill with the Skill tool; its
next runs, with the Bash tool, the command shown in the skill text the client has just sent it
(the path as Claude Code substituted it), filled with text that holds every kind of character
a shell could trip on. The only permission given is the Skill call itself
(`--allowedTools "Skill(project-memory:<skill>)"`): the Bash call must pass on the skill's
`allowed-tools` alone. Every tool result is read; a denial or an unexpected failure fails the
test. Then the hooks must show what was written: the next session's SessionStart resumes the
snapshot, and the next prompt's UserPromptSubmit carries the new permanent-memory block once.
"""

from __future__ import annotations

import json
import re
import subprocess
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import support
import yaml
from conftest import ROOT
from e2e_claude_code_test import (
    PLUGIN_ID,
    ClaudeUser,
    copies,
    loader_block,
    new_turn_texts,
    option_env,
    request_texts,
    resume_block,
    stamped,
)
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

pytestmark = pytest.mark.e2e

MANAGER_SKILL = "project-memory:ski-memory-manager"
LOADER_SKILL = "project-memory:permanent-memory-loader"
BASE_LINE = re.compile(r"^Base directory for this skill: (.+)$", re.MULTILINE)

# Every kind of character point 1 of the write path names: apostrophes, double quotes, $HOME,
# backticks, braces, backslashes, non-ASCII, several lines. None of it is escaped.
ACTIVE_STATE = [
    'Next: S2 \u2014 the "refund" path; it\'s blocked on `ledger.lock()` in $HOME/billing.',
    "Open: who owns {refunds} under C:\\data\\refunds? na\u00efve caf\u00e9 \u65e5\u672c \u2713",
    "Also: 'single' quotes, ${PATH} and $(date) stay as written.",
]
STEP_TEXT = 'Mapped {draft, sent, paid}; the "void" state isn\'t reachable from `paid`.'
NOTE_TEXT = "Option B: keep \\n literal, and $HOME unexpanded \u2014 \u00bfok?"
GOTCHA = 'the provider\'s "burst" limit is 10/s; {batch} via `queue.put()` in $HOME \u2014 \u00e9'
DECISION = "store C:\\exports\\dunning paths as given, don't normalise them (DEC-031)"
CONTINUED = ["retry with the same idempotency key,", "even after a 'timeout' \u2192 \u65e5\u672c"]


@pytest.fixture(autouse=True)
def no_outside_traffic(api: FakeAnthropic) -> Iterator[None]:
    api.responder = None
    yield
    api.responder = None
    assert api.outside_requests() == [], "the CLI tried to reach a host other than the fake API"
    assert api.responder_errors == []


# --- the model ---------------------------------------------------------------------------------


def skill_text(body: Mapping[str, Any]) -> str:
    """The SKILL.md text Claude Code sent after the Skill call (it starts with the base line)."""
    found = [t for t in all_texts(body) if BASE_LINE.search(t)]
    assert found, "the request after the Skill call carries no skill text"
    return found[-1]


def command_line(skill: str, marker: str) -> str:
    """The first line of the ```bash block of the skill text that contains `marker`."""
    for block in re.findall(r"```bash\n(.*?)```", skill, flags=re.DOTALL):
        if marker in block:
            line = block.split("\n", 1)[0]
            assert "${" not in line, f"not substituted: {line}"
            return line
    raise AssertionError(f"no bash block with {marker!r} in the skill text")


@dataclass
class Session:
    """One `claude -p` run in which the fake model loads a skill and runs commands from it."""

    skill: str
    commands: list[Callable[[str, list[ToolResult]], str]]
    results: list[list[ToolResult]] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)

    def model(self) -> ScriptedModel:
        def load(body: dict[str, Any]) -> list[Block]:
            return [tool_use("Skill", {"skill": self.skill})]

        def run(index: int) -> Callable[[dict[str, Any]], list[Block]]:
            def step(body: dict[str, Any]) -> list[Block]:
                self.results.append(last_tool_results(body))
                command = self.commands[index](skill_text(body), self.results[-1])
                self.sent.append(command)
                return [tool_use("Bash", {"command": command, "description": "memory"})]

            return step

        def finish(body: dict[str, Any]) -> list[Block]:
            self.results.append(last_tool_results(body))
            return [text("Done.")]

        return ScriptedModel([load, *(run(i) for i in range(len(self.commands))), finish])

    def play(self, user: ClaudeUser, project: Path, *flags: str) -> str:
        user.api.responder = self.model()
        result = user.run(
            "-p",
            f"save the session {uuid.uuid4().hex}",
            "--output-format",
            "json",
            "--allowedTools",
            f"Skill({self.skill})",
            *flags,
            cwd=project,
        )
        user.api.responder = None
        assert result.code == 0, (result.out, result.err)
        reply = json.loads(result.out)
        assert reply["result"] == "Done.", (reply, self.results)
        assert len(self.results) == len(self.commands) + 1, self.results
        print(f"\n--- {self.skill}")
        for number, (sent, results) in enumerate(zip(["Skill", *self.sent], self.results)):
            print(f"[{number}] {sent}\n    -> {[r.text for r in results]!r}")
        return str(reply["session_id"])

    def outcome(self, step: int) -> ToolResult:
        """The one tool result the model got for step `step` (0 is the Skill call)."""
        [result] = self.results[step]
        return result


def succeeded(result: ToolResult) -> str:
    assert not result.is_error, f"denied or failed: {result.text!r}"
    return result.text


def installed_user(claude: Path, api: FakeAnthropic, home: Path) -> ClaudeUser:
    user = ClaudeUser(claude, api, home)
    source = support.clean_checkout(home.parent)  # what a user installs from: a clone
    user.ok("plugin", "marketplace", "add", str(source), cwd=home)
    user.ok("plugin", "install", PLUGIN_ID, cwd=home)
    return user


def new_project(tmp_path: Path, name: str) -> Path:
    project = tmp_path / "work" / name
    project.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    return project


# --- save --------------------------------------------------------------------------------------

SESSION_STAMP = "2026-11-30-09-15"


def save_yaml(project_name: str) -> str:
    lines = [
        f"project_name: {project_name}",
        f"session_timestamp: {SESSION_STAMP}",
        "mode: architect",
        "status: in-progress",
        "last_checkpoint: CP-S1",
        "checkpoints_approved:",
        "  - CP-S1",
        "checkpoint_decisions:",
        "  CP-S1:",
        "    option: B",
        "    note: |",
        f"      {NOTE_TEXT}",
        "steps_completed:",
        "  S1: |",
        f"    {STEP_TEXT}",
        "active_state: |",
        *(f"  {line}" for line in ACTIVE_STATE),
        "key_decisions:",
        "  - |",
        f"    {DECISION}",
    ]
    return "\n".join(lines) + "\n"


def save_command(project_name: str, *extra: str) -> Callable[[str, list[ToolResult]], str]:
    def build(skill: str, results: list[ToolResult]) -> str:
        first = command_line(skill, "save --yaml - <<'YAML'")
        assert first.endswith(" save --yaml - <<'YAML'"), first
        if extra:
            first = first.replace(" save ", " save " + " ".join(extra) + " ", 1)
        return f"{first}\n{save_yaml(project_name)}YAML"

    return build


def assert_saved(project: Path, project_name: str, printed: str) -> str:
    path = project / "memory" / f"{SESSION_STAMP}-{project_name}.md"
    assert printed == str(path)
    written = path.read_text(encoding="utf-8")
    assert "\n## Active state\n" + "\n".join(ACTIVE_STATE) + "\n" in written
    assert f"\n- S1: {STEP_TEXT}\n" in written
    assert f"\n## Key decisions\n- {DECISION}\n" in written
    front = yaml.safe_load(written.split("\n---\n", 1)[0][len("---\n") :])
    assert front["checkpoint_decisions"] == {"CP-S1": {"option": "B", "note": NOTE_TEXT}}
    assert "[REDACTED]" not in written
    return written


def assert_resumed(user: ClaudeUser, project: Path, data_dir: Path) -> None:
    resume = resume_block(project, option_env(user.env), data_dir)
    for line in ACTIVE_STATE:
        assert line in resume
    _, first = user.prompt(project)
    assert copies(resume, request_texts(first)) == 1, stamped(request_texts(first))


def test_save_from_the_skill_text_then_the_next_session_resumes_it(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "billing")
    (project / "memory").mkdir()
    session = Session(MANAGER_SKILL, [save_command("billing-api")])
    session.play(user, project)
    assert succeeded(session.outcome(0)) == f"Launching skill: {MANAGER_SKILL}"
    written = assert_saved(project, "billing-api", succeeded(session.outcome(1)))
    print(f"\nsaved snapshot:\n{written}")
    assert_resumed(user, project, tmp_path / "expected-data")


def test_first_save_in_a_project_without_memory_creates_the_folder(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "fresh")

    def retry(skill: str, results: list[ToolResult]) -> str:
        # The model follows the error's second line: the same command, with --create-dir.
        [refused] = results
        hint = refused.text.rsplit("\n", 1)[-1]
        assert hint == "to create it, run the same save again with --create-dir", refused
        return save_command("fresh-api", "--create-dir")(skill, results)

    session = Session(MANAGER_SKILL, [save_command("fresh-api"), retry])
    session.play(user, project)
    succeeded(session.outcome(0))
    # The only failure allowed is the one the command is made to give: exit 1, nothing written.
    missing = session.outcome(1)
    assert missing.is_error
    assert missing.text == (
        f"Exit code 1\nmemory directory not found at {project / 'memory'}\n"
        "to create it, run the same save again with --create-dir"
    )
    printed = succeeded(session.outcome(2))
    assert printed.startswith(f"note: created {project / 'memory'}\n") or printed.endswith(
        f"\nnote: created {project / 'memory'}"
    ), printed
    path_line = [line for line in printed.splitlines() if not line.startswith("note: ")]
    assert_saved(project, "fresh-api", "\n".join(path_line))
    assert_resumed(user, project, tmp_path / "expected-data")


# --- add ---------------------------------------------------------------------------------------


def epic_lines(epic_id: str) -> str:
    lines = [
        f"id: {epic_id}",
        "intent: Dunning emails \u2014 \"soft\" then 'hard' reminders",
        "decisions:",
        f"- {DECISION} (confidence: 0.9)",
        "gotchas:",
        f"- {GOTCHA}",
        "patterns:",
        f"- {CONTINUED[0]}",
        f"  {CONTINUED[1]}",
    ]
    return "\n".join(lines) + "\n"


def add_command(epic_id: str) -> Callable[[str, list[ToolResult]], str]:
    def build(skill: str, results: list[ToolResult]) -> str:
        first = command_line(skill, "add --lines - <<'EPIC'")
        assert first.endswith(" add --lines - <<'EPIC'"), first
        return f"{first}\n{epic_lines(epic_id)}EPIC"

    return build


def assert_recorded(project: Path, epic_id: str, printed: str) -> str:
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    assert re.fullmatch(rf"added {epic_id} to {re.escape(str(memory))} \(\d+ tokens\)", printed)
    written = memory.read_text(encoding="utf-8")
    # add writes the v2 form: typed entries.
    assert f"\n- [decision] {DECISION} (confidence: 0.90)\n" in written
    assert f"\n- [gotcha] {GOTCHA}\n" in written
    assert f"\n- [pattern] {' '.join(CONTINUED)}\n" in written
    return written


@pytest.mark.parametrize("existing", [True, False], ids=["existing-file", "no-memory-folder"])
def test_add_from_the_skill_text_then_the_next_prompt_carries_the_block(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path, existing: bool
) -> None:
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "dunning")
    env = option_env(user.env)
    if existing:
        # A project that already has an epic: the first prompt's block is the old one.
        memory = project / ".claude" / "memory"
        memory.mkdir(parents=True)
        (memory / "permanent_memory.md").write_text(
            "# Permanent memory\n\n## Epic: FEAT-020 \u2014 Invoices\n"
            "**Completed:** 2026-11-01T12:00:00Z\n\n### Gotchas discovered\n"
            "- totals are rounded once, at the end\n",
            encoding="utf-8",
        )
        before = loader_block(project, env)
    session_id, body = user.prompt(project)
    texts = request_texts(body)
    if existing:
        assert copies(before, texts) == 1, stamped(texts)
    else:
        assert copies("[permanent-memory | trust:file]", texts) == 0, stamped(texts)

    session = Session(LOADER_SKILL, [add_command("FEAT-021")])
    session.play(user, project, "--resume", session_id)
    assert succeeded(session.outcome(0)) == f"Launching skill: {LOADER_SKILL}"
    written = assert_recorded(project, "FEAT-021", succeeded(session.outcome(1)))
    print(f"\npermanent memory now:\n{written}")

    block = loader_block(project, env)
    assert "FEAT-021" in block and "FEAT-021" not in (before if existing else "")
    _, after = user.prompt(project, "--resume", session_id)
    assert copies(block, new_turn_texts(after)) == 1, stamped(new_turn_texts(after))
    assert copies(block, request_texts(after)) == 1, stamped(request_texts(after))
    print(f"\nnext prompt's block:\n{block}")


# --- what the client refuses --------------------------------------------------------------------

REFUSED = [
    (
        '{\n  "project_name": "probe"\n}',
        "Contains brace with quote character (expansion obfuscation)",
    ),
    ("note: |\n  a\\ b", "Contains backslash-escaped whitespace"),
    ("note: |\n  =sum(A1)", "Contains zsh =cmd equals expansion"),
    ("note: |\n  a\u00a0b", "Contains Unicode whitespace"),
]


def test_the_client_refuses_these_heredoc_texts(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    """The limits SKILL.md and references/commands.md state, measured: the save command with
    text the client's command check refuses, under the same permissions, one after another."""
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "refused")
    (project / "memory").mkdir()

    def build(body: str) -> Callable[[str, list[ToolResult]], str]:
        def command(skill: str, results: list[ToolResult]) -> str:
            first = command_line(skill, "save --yaml - <<'YAML'")
            return f"{first}\n{body}\nYAML"

        return command

    session = Session(MANAGER_SKILL, [build(body) for body, _ in REFUSED])
    session.play(user, project)
    verdicts = [session.outcome(step) for step in range(1, len(REFUSED) + 1)]
    assert [(r.is_error, r.text) for r in verdicts] == [(True, v) for _, v in REFUSED]
    assert list((project / "memory").iterdir()) == []
    # The pages that tell a model about these limits quote the client's words.
    pages = [
        ROOT / "skills" / "ski-memory-manager" / "references" / "commands.md",
        ROOT / "skills" / "permanent-memory-loader" / "references" / "writing.md",
    ]
    for page in pages:
        for _, verdict in REFUSED:
            assert f"`{verdict}`" in page.read_text(encoding="utf-8"), (page, verdict)
