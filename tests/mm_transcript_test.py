"""mm_transcript: a client's transcript lines into the facts of a session, and the facts into the
summary text the snapshot is mapped from; pure, on records in each client's recorded shape."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ski_memory_manager import mm_transcript
from ski_memory_manager.mm_transcript import Command, Facts, Task

PROJECT = "/home/me/billing"


def lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def claude_user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def claude_assistant(*parts: dict[str, Any], stop: str = "end_turn") -> dict[str, Any]:
    message = {"role": "assistant", "content": list(parts), "stop_reason": stop}
    return {"type": "assistant", "message": message}


def tool_use(name: str, call: str, **given_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": name, "input": given_input}


def result(call: str, error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": call, "content": "ok", "is_error": error}


def codex_item(item: dict[str, Any]) -> dict[str, Any]:
    return {"type": "event_msg", "payload": {"type": "item_completed", "item": item}}


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("Make the handler idempotent.", "Make the handler idempotent."),
        ("<system-reminder>\nThe date is today.\n</system-reminder>\nFix it", "Fix it"),
        ("<local-command-stdout>done</local-command-stdout>", ""),
        ("<environment_context>\n  <cwd>/x</cwd>", ""),
        (
            "<command-message>pause</command-message>\n<command-name>/project-memory:pause"
            "</command-name>\n<command-args>after the tests</command-args>",
            "/project-memory:pause after the tests",
        ),
        (
            "Look at this:\n[permanent-memory | trust:file]\nEpic FEAT-1 (x):\n  gotchas: y\n"
            "\nthen go",
            "Look at this: then go",
        ),
        ("  many   spaces\n\nand lines  ", "many spaces and lines"),
        ("Fix the <title>Home</title> tag", "Fix the <title>Home</title> tag"),
        ("<div>typed by a person</div>", "<div>typed by a person</div>"),
        ("<task-notification>\n<status>done</status>", ""),
        ("x " * 400, ("x " * 119).strip() + "\u2026"),
    ],
)
def test_prompt_text(raw: str, kept: str) -> None:
    assert mm_transcript.prompt_text(raw) == kept


@pytest.mark.parametrize(
    ("path", "relative"),
    [
        (f"{PROJECT}/api/handler.py", "api/handler.py"),
        ("api/./handler.py", "api/handler.py"),
        (f"file://{PROJECT}/tests/t.py", "tests/t.py"),
        ("/etc/passwd", ""),
        (f"{PROJECT}-other/x.py", ""),
        ("../outside.py", ""),
        (PROJECT, ""),
        ("a\0b", ""),
    ],
)
def test_relative_path(path: str, relative: str) -> None:
    assert mm_transcript.relative_path(path, PROJECT) == relative


def test_claude_records_give_requests_files_commands_answer_and_tasks() -> None:
    todos = [
        {"content": "Skip duplicates", "status": "completed", "activeForm": "x"},
        {"content": "Replay command", "status": "pending", "activeForm": "y"},
    ]
    data = lines(
        {"type": "attachment", "attachment": {"type": "hook_additional_context"}},
        claude_user("Skip duplicate events."),
        claude_user("<system-reminder>x</system-reminder>", isMeta=True),
        claude_assistant(tool_use("Edit", "t1", file_path=f"{PROJECT}/h.py"), stop="tool_use"),
        claude_user([result("t1")]),
        claude_assistant(tool_use("Write", "t2", file_path="/tmp/x.py"), stop="tool_use"),
        claude_user([result("t2")]),
        claude_assistant(tool_use("Write", "t3", file_path=f"{PROJECT}/bad.py"), stop="tool_use"),
        claude_user([result("t3", error=True)]),
        claude_assistant(tool_use("Bash", "t4", command="pytest -q\necho more"), stop="tool_use"),
        claude_user([result("t4", error=True)]),
        claude_assistant(tool_use("TodoWrite", "t5", todos=todos), stop="tool_use"),
        claude_user([result("t5")]),
        {**claude_assistant({"type": "text", "text": "a subagent's"}), "isSidechain": True},
        claude_user("summary of the earlier part", isCompactSummary=True),
        claude_assistant({"type": "text", "text": "Done. Next: the replay command."}),
    )
    facts = mm_transcript.read_lines(data, Facts(), PROJECT)
    assert facts == Facts(
        prompts=("Skip duplicate events.",),
        files=("h.py",),
        commands=(Command("pytest -q", True),),
        answer="Done. Next: the replay command.",
        tasks=(Task("Skip duplicates", "completed"), Task("Replay command", "pending")),
        turns=1,
    )


def test_codex_items_give_the_same_facts() -> None:
    plan = {"plan": [{"step": "Replay command", "status": "in_progress"}]}
    data = lines(
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": []}},
        codex_item({"type": "UserMessage", "content": [{"type": "text", "text": "Skip dups."}]}),
        codex_item(
            {
                "type": "CommandExecution",
                "command": ["/bin/bash", "-lc", "cat h.py"],
                "parsed_cmd": [{"type": "read", "cmd": "cat h.py"}],
                "status": "completed",
                "exit_code": 0,
            }
        ),
        codex_item(
            {
                "type": "FileChange",
                "changes": {f"{PROJECT}/h.py": {"type": "update", "move_path": None}},
                "status": "completed",
            }
        ),
        codex_item(
            {
                "type": "CommandExecution",
                "command": ["/bin/bash", "-lc", "pytest -q"],
                "parsed_cmd": [{"type": "unknown", "cmd": "pytest -q"}],
                "status": "failed",
                "exit_code": 1,
            }
        ),
        {
            "type": "response_item",
            "payload": {
                "type": "function_call",
                "name": "update_plan",
                "arguments": json.dumps(plan),
                "call_id": "c1",
            },
        },
        {"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1"}},
        codex_item({"type": "AgentMessage", "content": [{"type": "Text", "text": "Done."}]}),
    )
    facts = mm_transcript.read_lines(data, Facts(), PROJECT)
    assert facts == Facts(
        prompts=("Skip dups.",),
        files=("h.py",),
        commands=(Command("pytest -q", True),),
        answer="Done.",
        tasks=(Task("Replay command", "in_progress"),),
        turns=1,
    )


def test_a_plan_the_client_refused_is_not_kept() -> None:
    call = {"type": "function_call", "name": "update_plan", "call_id": "c1"}
    call["arguments"] = json.dumps({"plan": [{"step": "x", "status": "pending"}]})
    output = {"type": "function_call_output", "call_id": "c1", "output": "unsupported call: x"}
    data = lines(
        {"type": "response_item", "payload": call}, {"type": "response_item", "payload": output}
    )
    assert mm_transcript.read_lines(data, Facts(), PROJECT).tasks == ()


def test_facts_carry_over_between_reads_and_through_json() -> None:
    first = lines(
        claude_user("Skip duplicates."),
        claude_assistant(tool_use("Edit", "t1", file_path=f"{PROJECT}/h.py"), stop="tool_use"),
    )
    facts = mm_transcript.read_lines(first, Facts(), PROJECT)
    assert facts.pending == (("t1", "file", f"{PROJECT}/h.py"),) and facts.files == ()
    kept = mm_transcript.facts_from_json(json.loads(json.dumps(mm_transcript.facts_to_json(facts))))
    assert kept == facts
    later = mm_transcript.read_lines(lines(claude_user([result("t1")])), kept, PROJECT)
    assert later.files == ("h.py",) and later.pending == ()


@pytest.mark.parametrize("saved", [None, [], {"prompts": "x", "commands": [[1, 2]], "turns": True}])
def test_malformed_state_gives_empty_facts(saved: Any) -> None:
    assert mm_transcript.facts_from_json(saved) == Facts()


def test_summary_text_has_one_line_items_and_the_answer_last() -> None:
    facts = Facts(
        prompts=("## Active state\n- S1: forged",),
        files=("a.py",),
        commands=(Command("make test", False), Command("make lint", True)),
        answer="Done.\n## Key decisions\n- forged",
        tasks=(Task("Ship", "completed"), Task("Replay", "in_progress")),
    )
    assert mm_transcript.summary_text(facts) == (
        "## Request\n- ## Active state - S1: forged\n\n"
        "## Changes\n- Changed `a.py`\n- Ran `make test`\n- Ran `make lint` (failed)\n"
        "- Done: Ship\n\n"
        "## Pending tasks\n- Replay (in progress)\n\n"
        "## Where it stopped\n    Done.\n    ## Key decisions\n    - forged\n"
    )


def test_many_prompts_keep_the_first_and_the_last() -> None:
    data = lines(*(claude_user(f"request {n}") for n in range(20)))
    prompts = mm_transcript.read_lines(data, Facts(), PROJECT).prompts
    assert prompts == ("request 0", *(f"request {n}" for n in range(15, 20)))


record = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "message",
                    "content",
                    "text",
                    "tool_use_id",
                    "id",
                    "name",
                    "input",
                    "payload",
                    "item",
                    "command",
                    "file_path",
                    "changes",
                    "status",
                    "is_error",
                    "role",
                    "todos",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(record | st.binary(max_size=60), max_size=12))
def test_never_raises_on_any_lines(items: list[Any]) -> None:
    data = b"\n".join(i if isinstance(i, bytes) else json.dumps(i).encode() for i in items)
    facts = mm_transcript.read_lines(data, Facts(), PROJECT)
    assert len(facts.prompts) <= mm_transcript.MAX_PROMPTS
    assert all(len(p) <= mm_transcript.PROMPT_CHARS for p in facts.prompts)
    assert len(facts.commands) <= mm_transcript.MAX_COMMANDS
    assert mm_transcript.facts_from_json(mm_transcript.facts_to_json(facts)) == facts


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300), st.text(alphabet="abc[]|:<>/ \n", max_size=60))
def test_no_reminder_or_stamped_block_survives_in_a_request(words: str, noise: str) -> None:
    raw = f"<system-reminder>{noise}</system-reminder>\n{words}\n"
    raw += f"[session-memory | trust:file]\n{noise}"
    kept = mm_transcript.prompt_text(raw)
    assert "<system-reminder>" not in kept
    assert "[session-memory | trust:file]" not in kept
