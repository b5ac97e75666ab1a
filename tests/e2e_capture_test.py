"""End to end in the real Claude Code CLI: the plugin's two commands, typed as a prompt.

`/project-memory:remember …` and `/project-memory:pause …` are the plugin's `commands/*.md`.
The fake Messages API plays the model: it reads the command's text exactly as the client sent
it (the plugin's folder, the session id and the data folder filled in), takes the command line
from its ```bash block and runs it with the Bash tool, with entries made from the words the
user typed. No allow rule is given at all, and no permission mode: each command's own
`allowed-tools` must cover its call. Then the hooks must show what was written: the next
prompt carries the changed permanent-memory block once; a new session resumes the paused
snapshot.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import support
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
from e2e_write_path_test import MANAGER_SKILL, Session, command_line, installed_user, new_project
from fake_anthropic import (
    Block,
    FakeAnthropic,
    ScriptedModel,
    ToolResult,
    last_tool_results,
    text,
    tool_use,
)

pytestmark = pytest.mark.e2e

LOADER_SCRIPT = "/skills/permanent-memory-loader/scripts/permanent_memory.py"
MANAGER_SCRIPT = "/skills/ski-memory-manager/scripts/memory_manager.py"
STARTS = Path(".cache") / "project-memory" / "session-memory" / "starts"  # under HOME


@pytest.fixture(autouse=True)
def no_outside_traffic(api: FakeAnthropic) -> Iterator[None]:
    api.responder = None
    yield
    api.responder = None
    assert api.outside_requests() == [], "the CLI tried to reach a host other than the fake API"
    assert api.responder_errors == []


def command_message(body: dict[str, Any], name: str) -> tuple[str, str]:
    """The command's two user texts in this turn: the client's tag block, then the command
    file's text as the client filled it in."""
    texts = new_turn_texts(body)
    tags = [t for t in texts if f"<command-name>/{name}</command-name>" in t]
    assert len(tags) == 1, texts
    after = texts[texts.index(tags[0]) + 1 :]
    assert after, texts
    return tags[0], after[0]


def bash_block(command_text: str) -> list[str]:
    [block] = re.findall(r"```bash\n(.*?)```", command_text, flags=re.DOTALL)
    lines = block.rstrip("\n").split("\n")
    assert "${" not in lines[0], f"not filled in: {lines[0]}"
    return lines


def run_command(
    user: ClaudeUser,
    project: Path,
    prompt: str,
    build: Callable[[dict[str, Any]], str],
    *flags: str,
) -> tuple[dict[str, Any], list[dict[str, Any]], list[ToolResult]]:
    """One `claude -p PROMPT` in which the fake model runs the one command `build` makes from
    the request it gets; the client's reply, the requests the model answered, the results."""
    seen: list[dict[str, Any]] = []
    results: list[ToolResult] = []

    def act(body: dict[str, Any]) -> list[Block]:
        seen.append(body)
        return [tool_use("Bash", {"command": build(body), "description": "project memory"})]

    def finish(body: dict[str, Any]) -> list[Block]:
        seen.append(body)
        results.extend(last_tool_results(body))
        return [text("Done.")]

    user.api.responder = ScriptedModel([act, finish])
    result = user.run("-p", prompt, "--output-format", "json", *flags, cwd=project)
    user.api.responder = None
    assert result.code == 0, (result.out, result.err)
    reply = json.loads(result.out)
    assert reply["result"] == "Done.", reply
    assert reply["permission_denials"] == [], reply["permission_denials"]
    assert len(seen) == 2, seen
    return reply, seen, results


def show(title: str, *parts: str) -> None:
    print(f"\n--- {title}")
    for part in parts:
        print(part)


# --- /project-memory:remember ------------------------------------------------------------------

ON_FILE = (
    "# Permanent memory\n\n"
    "## Epic: FEAT-020 \u2014 Payment webhooks\n"
    "**Completed:** 2026-11-01T12:00:00Z\n\n"
    "### Architectural decisions\n"
    "- one webhook endpoint per Stripe account (DEC-009)\n\n"
    "### Patterns that worked\n"
    "- store the raw event before handling it\n"
)
LESSON = "Stripe sends duplicate events; dedupe by event id"
KEYWORDS = "Stripe, webhooks, duplicate events, idempotency"


def remember_command(body: dict[str, Any]) -> str:
    """What a model does with the command's text: the add line from its block, the epic on
    file from the block at session start, the user's words as a gotcha."""
    tags, command_text = command_message(body, "project-memory:remember")
    [typed] = re.findall(r"<command-args>(.*?)</command-args>", tags, flags=re.DOTALL)
    assert typed.strip() in command_text  # $ARGUMENTS filled in
    lines = bash_block(command_text)
    first = lines[0]
    assert first.endswith(f"{LOADER_SCRIPT}\" add --append --lines - <<'EPIC'"), first
    assert any(line.startswith("keywords: ") for line in lines), lines  # the form it shows
    epics = re.findall(r"^Epic (\S+) \(", "\n".join(request_texts(body)), flags=re.MULTILINE)
    assert epics == ["FEAT-020"], epics
    return f"{first}\nid: {epics[0]}\nkeywords: {KEYWORDS}\ngotchas:\n- {typed.strip()}\nEPIC"


def test_remember_appends_to_an_epic_on_file_and_the_next_prompt_carries_it(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "webhooks")
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(ON_FILE, encoding="utf-8")
    env = option_env(user.env)
    before = loader_block(project, env)
    session_id, first = user.prompt(project)
    assert copies(before, request_texts(first)) == 1, stamped(request_texts(first))

    prompt = f"/project-memory:remember {LESSON}"
    _reply, seen, results = run_command(
        user, project, prompt, remember_command, "--resume", session_id
    )
    tags, command_text = command_message(seen[0], "project-memory:remember")
    assert command_text.startswith("Record this in the project's permanent memory")
    assert f"\n\n{LESSON}\n\n" in command_text
    [result] = results
    assert not result.is_error, result.text
    tokens = re.search(r" \((\d+) tokens\)\n", result.text)
    assert tokens is not None, result.text
    assert result.text == (
        f"appended 1 entry and 4 keywords to FEAT-020 in {memory} ({tokens.group(1)} tokens)\n"
        f"  gotchas: {LESSON}\n  keywords: {KEYWORDS}"
    )
    # A subsection the epic lacked, made in its place, and the Keywords line after Completed;
    # every line on file kept.
    assert memory.read_text(encoding="utf-8") == ON_FILE.replace(
        "### Patterns", f"### Gotchas discovered\n- {LESSON}\n\n### Patterns"
    ).replace("12:00:00Z\n", f"12:00:00Z\n**Keywords:** {KEYWORDS}\n")
    show("remember: the command as the model got it", tags, command_text)
    show("remember: the model's call", remember_command(seen[0]))
    show("tool result", result.text)

    block = loader_block(project, env)
    assert block == before.replace("\n  patterns: ", f"\n  gotchas: {LESSON}\n  patterns: ")
    _, after = user.prompt(project, "--resume", session_id)
    assert copies(block, new_turn_texts(after)) == 1, stamped(new_turn_texts(after))
    assert copies(block, request_texts(after)) == 1, stamped(request_texts(after))
    show("the next prompt's block", block)


# --- /project-memory:pause ---------------------------------------------------------------------

NOTE = "stop here, the replay tool is next"


def pause_command(done: str) -> Callable[[dict[str, Any]], str]:
    def build(body: dict[str, Any]) -> str:
        tags, command_text = command_message(body, "project-memory:pause")
        [typed] = re.findall(r"<command-args>(.*?)</command-args>", tags, flags=re.DOTALL)
        lines = bash_block(command_text)
        first = lines[0]
        assert f'{MANAGER_SCRIPT}" pause --session-id "' in first, first
        assert first.endswith("--yaml - <<'YAML'") and lines[-1] == "YAML", lines
        fields = [
            "session_summary: |",
            "  Reworked the webhook handler; events are stored before they are handled.",
            "active_state: |",
            f"  Done: {done}",
            f"  Next: {typed.strip()}",
            "  Open: how long should stored events be kept?",
        ]
        return "\n".join([first, *fields, "YAML"])

    return build


@pytest.mark.parametrize("memory_dir", [None, "notes/sessions"], ids=["memory", "option"])
def test_pause_then_a_new_session_resumes_the_snapshot(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path, memory_dir: str | None
) -> None:
    home = tmp_path / "home"
    if memory_dir is None:
        user = installed_user(claude_bin, api, home)
    else:  # the plugin's memory_dir option: the hook reads there, so pause must write there
        user = ClaudeUser(claude_bin, api, home)
        source = support.clean_checkout(tmp_path)
        user.ok("plugin", "marketplace", "add", str(source), cwd=home)
        user.ok("plugin", "install", PLUGIN_ID, "--config", f"memory_dir={memory_dir}", cwd=home)
    folder = memory_dir or "memory"
    project = new_project(tmp_path, "Billing API (v2)")
    reply, seen, results = run_command(
        user, project, f"/project-memory:pause {NOTE}", pause_command("events are stored")
    )
    session_id = str(reply["session_id"])
    tags, command_text = command_message(seen[0], "project-memory:pause")
    first = bash_block(command_text)[0]
    assert f'pause --session-id "{session_id}" --yaml' in first, first
    # The session's start, as the SessionStart hook recorded it, names the snapshot.
    record = (Path(user.env["HOME"]) / STARTS / session_id).read_text(encoding="utf-8")
    [started] = re.findall(r"^started=(\S+)$", record, flags=re.MULTILINE)
    snapshot = project / folder / f"{started}-Billing-API-v2.md"
    [result] = results
    assert not result.is_error, result.text
    assert result.text == f"note: created {project / folder}\n{snapshot}" or (
        result.text == f"{snapshot}\nnote: created {project / folder}"
    ), result.text
    show("pause: the command as the model got it", tags, command_text)
    show("pause: the model's call", pause_command("events are stored")(seen[0]))
    show("tool result", result.text)

    # Pausing again in the same session updates the same snapshot.
    _reply, _seen, again = run_command(
        user,
        project,
        "/project-memory:pause the replay tool is next",
        pause_command("events are stored; duplicates skipped"),
        "--resume",
        session_id,
    )
    assert [(r.is_error, r.text) for r in again] == [(False, str(snapshot))]
    assert sorted((project / folder).glob("*.md")) == [snapshot]
    written = snapshot.read_text(encoding="utf-8")
    assert "\nmode: express\nstatus: paused\n" in written
    assert "\n## Active state\nDone: events are stored; duplicates skipped\n" in written
    show("the snapshot", written)

    # A new session: SessionStart resumes it.
    env = option_env(user.env)
    if memory_dir is not None:
        env["CLAUDE_PLUGIN_OPTION_MEMORY_DIR"] = memory_dir
    resume = resume_block(project, env, tmp_path / "expected-data")
    assert "Resuming `Billing-API-v2` (last touched " in resume and "status: paused)" in resume
    assert "Next: the replay tool is next" in resume
    new_session, body = user.prompt(project)
    assert new_session != session_id
    assert copies(resume, request_texts(body)) == 1, stamped(request_texts(body))
    assert copies(f"SessionStart hook additional context: {resume}\n", request_texts(body)) == 1
    show("the next session's resume block", resume)


def test_the_commands_are_for_people_not_the_model(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    """Typed, they run; the model's skill list does not offer them (it has the two skills,
    whose rules the user grants once), so it never needs a rule of theirs."""
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "listing")
    _session, body = user.prompt(project)
    listing = "\n".join(request_texts(body))
    assert "- project-memory:permanent-memory-loader: " in listing
    assert "- project-memory:ski-memory-manager: " in listing
    assert "project-memory:remember" not in listing and "project-memory:pause" not in listing


def test_pause_asked_in_plain_words_goes_through_the_skill(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    """Without the command: the model loads the session-memory skill (its one allow rule) and
    runs the pause block of its SKILL.md, where Claude Code has filled in the session id too."""
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "ledger")

    def build(skill: str, results: list[ToolResult]) -> str:
        first = command_line(skill, " pause --session-id ")
        assert first.endswith("--yaml - <<'YAML'"), first
        return f"{first}\nactive_state: |\n  Done: the ledger export.\n  Next: totals.\nYAML"

    session = Session(MANAGER_SKILL, [build])
    session_id = session.play(user, project)
    assert f'--session-id "{session_id}" --yaml' in session.sent[0]
    record = (Path(user.env["HOME"]) / STARTS / session_id).read_text(encoding="utf-8")
    [started] = re.findall(r"^started=(\S+)$", record, flags=re.MULTILINE)
    printed = session.outcome(1)
    assert not printed.is_error, printed.text
    assert printed.text.endswith(str(project / "memory" / f"{started}-ledger.md"))
    resume = resume_block(project, option_env(user.env), tmp_path / "expected-data")
    assert "Next: totals." in resume
    _, body = user.prompt(project)
    assert copies(resume, request_texts(body)) == 1, stamped(request_texts(body))


def test_pause_from_a_skill_installed_alone_reuses_its_first_timestamp(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    """The skill copied into a project, as skillmds installs it: no plugin, so no hook. The
    first pause records the session's start in the user's cache folder; the second, in the same
    session, updates the same snapshot."""
    user = ClaudeUser(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "solo")
    shutil.copytree(
        ROOT / "skills" / "ski-memory-manager",
        project / ".claude" / "skills" / "ski-memory-manager",
        ignore=shutil.ignore_patterns("__pycache__"),
    )

    def build(done: str) -> Callable[[str, list[ToolResult]], str]:
        def command(skill: str, results: list[ToolResult]) -> str:
            first = command_line(skill, " pause --session-id ")
            return f"{first}\nactive_state: |\n  Done: {done}\nYAML"

        return command

    first = Session("ski-memory-manager", [build("one")])
    session_id = first.play(user, project)
    assert f'--session-id "{session_id}" ' in first.sent[0]
    assert (Path(user.env["HOME"]) / STARTS / session_id).is_file()
    printed = first.outcome(1)
    assert not printed.is_error, printed.text
    [snapshot] = sorted((project / "memory").glob("*-solo.md"))
    assert printed.text.endswith(str(snapshot))
    second = Session("ski-memory-manager", [build("two")])
    second.play(user, project, "--resume", session_id)
    assert (second.outcome(1).is_error, second.outcome(1).text) == (False, str(snapshot))
    assert sorted((project / "memory").glob("*.md")) == [snapshot]
    assert "\n## Active state\nDone: two\n" in snapshot.read_text(encoding="utf-8")
