# What a client's transcript says a session did, as a few facts: the person's requests, the files
# the tools wrote, the commands run and whether they failed, the model's last answer and the
# client's task list. Pure functions: JSON lines in (bytes, as read from the file's end), facts
# out; mm_transcript_read reads the file, mm_turn_capture writes the snapshot.
#
# Two clients' records are known (docs/hooks.md, "What a transcript holds"):
# - Claude Code: `{"type": "user"|"assistant", "message": {"content": …}}` (a prompt is a user
#   record whose content is text; tool calls are the assistant's `tool_use` parts, their results
#   the next user record's `tool_result` parts, `is_error` set when a command failed); records of
#   every other type (`attachment`, the system reminders it renders, `api-request-blob`,
#   `prompt_snapshot`, `queue-operation`, `cost-state`, `last-prompt`, …) are skipped unread.
# - Codex: `{"type": "event_msg", "payload": {"type": "item_completed", "item": …}}` with items
#   `UserMessage`, `AgentMessage`, `CommandExecution` (status, exit code, parsed command) and
#   `FileChange`; `update_plan` calls in `response_item` records; the rest skipped.
# Never kept: the client's system reminders and attachments, hook output, this plugin's stamped
# blocks (`[… | trust:…]`), a compaction's summary as if it were a request, a subagent's records.
from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

PROMPT_CHARS = 240  # a request, shortened to this
COMMAND_CHARS = 120
ANSWER_CHARS = 2000  # the last answer kept (mm_summary cuts it again to the budget)
TASK_CHARS = 120
MAX_PROMPTS = 6  # the first request, and the last ones up to this many in all
MAX_FILES = 40
MAX_COMMANDS = 6
MAX_TASKS = 12
MAX_PENDING = 64  # tool calls waiting for their result
MAX_LINE = 4 * 1024 * 1024  # a longer line is skipped unread (a client's request dump)
FILE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path"}
NOTEBOOK_TOOLS = {"NotebookEdit": "notebook_path"}
READ_ONLY = frozenset({"read", "list_files", "search"})  # Codex's parsed commands that only look
# Which lines can matter, found before a line is parsed: every other line is skipped unread.
_WANTED = (
    b'"type":"user"',
    b'"type":"assistant"',
    b'"type": "user"',
    b'"type": "assistant"',
    b'"item_completed"',
    b'"update_plan"',
    b'"function_call_output"',
)
# The clients' own tags in a user record (system reminders, a command's output, the environment,
# hook output): a block of one is theirs, not the person's; other tags a person typed are kept.
_CLIENT_TAG = (
    r"system-reminder|command-[a-z]+|local-command-[a-z]+|bash-[a-z]+|task-notification"
    r"|user-prompt-submit-hook|environment_context|user_instructions|turn_aborted|ide_[a-z_]+"
)
_TAG_BLOCK = re.compile(rf"<({_CLIENT_TAG})>.*?</\1>", re.DOTALL)
_CLIENT_OPENING = re.compile(rf"\s*<(?:{_CLIENT_TAG})>")
_STAMP_LINE = re.compile(r"^\s*\[[^\]\n|]{1,80}\|\s*trust\s*:[^\]\n]*\]", re.IGNORECASE)
_COMMAND_NAME = re.compile(r"<command-name>\s*([^<\s]{1,80})\s*</command-name>")
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)


class Command(NamedTuple):
    text: str
    failed: bool


class Task(NamedTuple):
    text: str
    status: str  # pending, in_progress, completed


class Facts(NamedTuple):
    """What the transcript said so far. `pending` holds the tool calls whose result has not been
    read yet: (call id, what it is, its value)."""

    prompts: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    commands: tuple[Command, ...] = ()
    answer: str = ""
    tasks: tuple[Task, ...] = ()
    turns: int = 0  # answers read
    pending: tuple[tuple[str, str, Any], ...] = ()

    def holds_work(self) -> bool:
        """Whether the session changed something or settled on a plan: a file written or a task
        list. A greeting, or a question answered (even after reading or running things), is not
        work."""
        return bool(self.files or self.tasks)


def shorten(text: str, chars: int) -> str:
    """One line, at most `chars` characters, cut at a space when one is near, with `…`."""
    line = " ".join(text.split())
    if len(line) <= chars:
        return line
    kept = line[: chars - 1]
    space = kept.rfind(" ")
    if space >= chars // 2:
        kept = kept[:space]
    return kept.rstrip() + "\u2026"


def prompt_text(raw: str) -> str:
    """A person's request as kept ('' for none): the client's tagged blocks (system reminders,
    command output, environment context) and any stamped block left out; a slash command as
    `/name args`."""
    name = _COMMAND_NAME.search(raw)
    if name is not None:
        args = _COMMAND_ARGS.search(raw)
        raw = name.group(1) + " " + (args.group(1) if args else "")
        raw = raw if raw.startswith("/") else "/" + raw
    text = _TAG_BLOCK.sub(" ", raw)
    if _CLIENT_OPENING.match(text):
        return ""  # a client's own message whose block never closes
    kept: list[str] = []
    in_stamp = False
    for line in text.split("\n"):
        if _STAMP_LINE.match(line):
            in_stamp = True  # a stamped block runs to the next blank line
            continue
        if in_stamp and line.strip():
            continue
        in_stamp = False
        kept.append(line)
    return shorten("\n".join(kept), PROMPT_CHARS)


def relative_path(path: str, project: str) -> str:
    """`path` relative to the project folder ('' when it is outside, or not a plain path)."""
    if not path or "\0" in path or "\n" in path or len(path) > 1024:
        return ""
    path = path.replace("\\", "/")
    if path.startswith("file://"):
        path = path[len("file://") :]
    root = posixpath.normpath(project.replace("\\", "/")) if project else ""
    if posixpath.isabs(path):
        if not root or not posixpath.isabs(root):
            return ""
        found = posixpath.normpath(path)
        if found == root or not found.startswith(root.rstrip("/") + "/"):
            return ""
        return found[len(root.rstrip("/")) + 1 :]
    found = posixpath.normpath(path)
    return "" if found == "." or found.startswith("../") or found == ".." else found


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    found = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"):
            value = part.get("text")
            if isinstance(value, str):
                found.append(value)
        elif isinstance(part, dict) and part.get("type") == "Text":  # Codex's items
            value = part.get("text")
            if isinstance(value, str):
                found.append(value)
    return found


def _with_prompt(facts: Facts, raw: str) -> Facts:
    text = prompt_text(raw)
    if not text:
        return facts
    prompts = (*facts.prompts, text)
    if len(prompts) > MAX_PROMPTS:
        prompts = (prompts[0], *prompts[len(prompts) - MAX_PROMPTS + 1 :])
    return facts._replace(prompts=prompts)


def _with_file(facts: Facts, path: str, project: str) -> Facts:
    relative = relative_path(path, project)
    if not relative or relative in facts.files:
        return facts
    files = (*facts.files, relative)
    return facts._replace(files=files[-MAX_FILES:])


def _with_command(facts: Facts, command: str, failed: bool) -> Facts:
    text = shorten(command.split("\n", 1)[0], COMMAND_CHARS)
    if not text:
        return facts
    kept = [c for c in facts.commands if c.text != text]
    return facts._replace(commands=(*kept, Command(text, failed))[-MAX_COMMANDS:])


def _with_answer(facts: Facts, texts: Iterable[str]) -> Facts:
    answer = "\n".join(t.strip() for t in texts if t.strip())
    if not answer:
        return facts
    return facts._replace(answer=answer[:ANSWER_CHARS])


def _tasks(items: Any, text_key: str) -> tuple[Task, ...] | None:
    if not isinstance(items, list):
        return None
    tasks = []
    for item in items[:MAX_TASKS]:
        if not isinstance(item, dict):
            continue
        text, status = item.get(text_key), item.get("status")
        if isinstance(text, str) and text.strip() and isinstance(status, str):
            tasks.append(Task(shorten(text, TASK_CHARS), shorten(status, 20)))
    return tuple(tasks)


def _waiting(facts: Facts, call_id: Any, kind: str, value: Any) -> Facts:
    if not isinstance(call_id, str) or not call_id:
        return facts
    return facts._replace(pending=(*facts.pending, (call_id, kind, value))[-MAX_PENDING:])


def _resolved(facts: Facts, call_id: Any, failed: bool, project: str) -> Facts:
    """A tool call's result came: what the call did counts when it did not fail (a command
    counts either way, marked)."""
    found = [entry for entry in facts.pending if entry[0] == call_id]
    if not found:
        return facts
    _, kind, value = found[0]
    facts = facts._replace(pending=tuple(e for e in facts.pending if e[0] != call_id))
    if kind == "command":
        return _with_command(facts, value, failed)
    if failed:
        return facts
    if kind == "file":
        return _with_file(facts, value, project)
    if kind == "tasks":
        return facts._replace(tasks=value)
    return facts


def _claude_record(facts: Facts, record: Mapping[str, Any], project: str) -> Facts:
    if record.get("isSidechain") is True:
        return facts  # a subagent's work, told to the session in its result
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if record.get("type") == "user":
        if record.get("isMeta") or record.get("isCompactSummary"):
            return facts  # the client's own text, or the compaction's summary
        if isinstance(content, str):
            return _with_prompt(facts, content)
        if not isinstance(content, list):
            return facts
        texts = []
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_result":
                failed = part.get("is_error") is True
                facts = _resolved(facts, part.get("tool_use_id"), failed, project)
            elif part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
        return _with_prompt(facts, "\n".join(texts)) if texts else facts
    if not isinstance(content, list):
        return facts
    said = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            said.append(part["text"])
        if part.get("type") != "tool_use" or not isinstance(part.get("input"), dict):
            continue
        name, given, call = part.get("name"), part["input"], part.get("id")
        key = FILE_TOOLS.get(str(name)) or NOTEBOOK_TOOLS.get(str(name))
        if key and isinstance(given.get(key), str):
            facts = _waiting(facts, call, "file", given[key])
        elif name == "Bash" and isinstance(given.get("command"), str):
            facts = _waiting(facts, call, "command", given["command"])
        elif name == "TodoWrite":
            tasks = _tasks(given.get("todos"), "content")
            if tasks is not None:
                facts = _waiting(facts, call, "tasks", tasks)
    if said:
        facts = _with_answer(facts, said)
        if record.get("message", {}).get("stop_reason") != "tool_use":
            facts = facts._replace(turns=facts.turns + 1)
    return facts


def _codex_item(facts: Facts, item: Mapping[str, Any], project: str) -> Facts:
    kind = item.get("type")
    if kind == "UserMessage":
        return _with_prompt(facts, "\n".join(_texts(item.get("content"))))
    if kind == "AgentMessage":
        facts = _with_answer(facts, _texts(item.get("content")))
        return facts._replace(turns=facts.turns + 1)
    if kind == "CommandExecution":
        parsed = item.get("parsed_cmd")
        kinds = (
            {p.get("type") for p in parsed if isinstance(p, dict)}
            if isinstance(parsed, list)
            else set()
        )
        if kinds and kinds <= READ_ONLY:
            return facts  # it only looked
        command = item.get("command")
        if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            command = (
                command[-1]
                if len(command) >= 3 and command[-2] in ("-lc", "-c")
                else " ".join(command)
            )
        if not isinstance(command, str):
            return facts
        failed = item.get("status") == "failed" or item.get("exit_code") not in (0, None)
        return _with_command(facts, command, failed)
    if kind == "FileChange":
        changes = item.get("changes")
        if item.get("status") != "completed" or not isinstance(changes, dict):
            return facts
        for path, change in list(changes.items())[:MAX_FILES]:
            moved = change.get("move_path") if isinstance(change, dict) else None
            facts = _with_file(facts, moved if isinstance(moved, str) else str(path), project)
        return facts
    return facts


def _codex_record(facts: Facts, record: Mapping[str, Any], project: str) -> Facts:
    payload = record.get("payload")
    if not isinstance(payload, dict):
        return facts
    if record.get("type") == "event_msg" and payload.get("type") == "item_completed":
        item = payload.get("item")
        return _codex_item(facts, item, project) if isinstance(item, dict) else facts
    if record.get("type") != "response_item":
        return facts
    if payload.get("type") == "function_call" and payload.get("name") == "update_plan":
        try:
            arguments = json.loads(str(payload.get("arguments")))
        except (ValueError, RecursionError):
            return facts
        tasks = _tasks(arguments.get("plan") if isinstance(arguments, dict) else None, "step")
        return facts if tasks is None else _waiting(facts, payload.get("call_id"), "tasks", tasks)
    if payload.get("type") == "function_call_output":
        output = payload.get("output")
        refused = isinstance(output, str) and output.startswith("unsupported call")
        return _resolved(facts, payload.get("call_id"), refused, project)
    return facts


def read_lines(data: bytes, facts: Facts, project: str) -> Facts:
    """The facts after the JSON lines in `data` (whole lines; a line that is not a JSON object,
    or of a kind this does not know, is skipped)."""
    for line in data.split(b"\n"):
        if len(line) > MAX_LINE or not any(marker in line for marker in _WANTED):
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(record, dict):
            continue
        kind = record.get("type")
        if kind in ("user", "assistant"):
            facts = _claude_record(facts, record, project)
        elif kind in ("event_msg", "response_item"):
            facts = _codex_record(facts, record, project)
    return facts


def facts_to_json(facts: Facts) -> dict[str, Any]:
    return {
        "prompts": list(facts.prompts),
        "files": list(facts.files),
        "commands": [list(c) for c in facts.commands],
        "answer": facts.answer,
        "tasks": [list(t) for t in facts.tasks],
        "turns": facts.turns,
        "pending": [
            [call, kind, [list(t) for t in value] if kind == "tasks" else value]
            for call, kind, value in facts.pending
        ],
    }


def facts_from_json(data: Any) -> Facts:
    """The facts a state file kept (empty ones for anything malformed)."""
    if not isinstance(data, dict):
        return Facts()

    def strings(value: Any, limit: int) -> tuple[str, ...]:
        if not isinstance(value, list):
            return ()
        return tuple(v for v in value if isinstance(v, str))[-limit:]

    def pairs(value: Any, limit: int) -> list[tuple[Any, Any]]:
        if not isinstance(value, list):
            return []
        return [(v[0], v[1]) for v in value if isinstance(v, list) and len(v) == 2][-limit:]

    commands = tuple(
        Command(t, f)
        for t, f in pairs(data.get("commands"), MAX_COMMANDS)
        if isinstance(t, str) and isinstance(f, bool)
    )
    tasks = tuple(
        Task(t, s)
        for t, s in pairs(data.get("tasks"), MAX_TASKS)
        if isinstance(t, str) and isinstance(s, str)
    )
    pending: list[tuple[str, str, Any]] = []
    saved = data.get("pending")
    for entry in saved if isinstance(saved, list) else []:
        if not (isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str)):
            continue
        call, kind, value = entry
        if kind in ("file", "command") and isinstance(value, str):
            pending.append((call, kind, value))
        elif kind == "tasks" and isinstance(value, list):
            listed = [
                {"text": v[0], "status": v[1]} for v in value if isinstance(v, list) and len(v) == 2
            ]
            pending.append((call, kind, _tasks(listed, "text") or ()))
    turns = data.get("turns")
    answer = data.get("answer")
    return Facts(
        strings(data.get("prompts"), MAX_PROMPTS),
        strings(data.get("files"), MAX_FILES),
        commands,
        answer[:ANSWER_CHARS] if isinstance(answer, str) else "",
        tasks,
        turns if isinstance(turns, int) and not isinstance(turns, bool) else 0,
        tuple(pending[-MAX_PENDING:]),
    )


def summary_text(facts: Facts) -> str:
    """The facts as a summary in the headings mm_summary maps into a snapshot's four sections:
    the requests to Session summary, the files and commands to Steps completed, the unfinished
    tasks to Active state (`Pending: …`), and the last answer to it too (`Where it stopped: …`,
    kept first within the budget; last in the text, so that a code block it leaves open cannot
    take the other parts with it). Every item is one line and the answer's lines are indented,
    so nothing a person or a model wrote can pass for a heading."""
    parts = []
    if facts.prompts:
        parts.append(
            "## Request\n" + "".join(f"- {shorten(p, PROMPT_CHARS)}\n" for p in facts.prompts)
        )
    steps = []
    if facts.files:
        steps.append("Changed " + ", ".join(f"`{f}`" for f in facts.files))
    for command in facts.commands:
        steps.append(f"Ran `{command.text}`" + (" (failed)" if command.failed else ""))
    done = [t.text for t in facts.tasks if t.status == "completed"]
    if done:
        steps.append("Done: " + "; ".join(done))
    if steps:
        parts.append("## Changes\n" + "".join(f"- {shorten(s, 600)}\n" for s in steps))
    left = [t for t in facts.tasks if t.status != "completed"]
    if left:
        items = "".join(
            f"- {shorten(t.text, TASK_CHARS)} ({shorten(t.status.replace('_', ' '), 20)})\n"
            for t in left
        )
        parts.append("## Pending tasks\n" + items)
    if facts.answer:
        lines = [line for line in facts.answer.split("\n") if line.strip()]
        parts.append("## Where it stopped\n" + "\n".join(f"    {line}" for line in lines) + "\n")
    return "\n".join(parts)
