"""pm_file_hook and pm_path_index through the hook command (PreToolUse): a file an epic's Paths
globs or an entry's named paths govern gets its entries once per session, within the per-call
budget and the session's one record shared with prompt-time recall; an ungoverned file, a path
outside the project and a link out of it get nothing; a subagent keeps its own record."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from project_memory_loader.evidence import pm_walk
from project_memory_loader.recall import pm_file_hook
from project_memory_loader.recall.pm_path_index import PLAIN
from support import LOADER, LOADER_STAMP, assert_no_traceback, clean_env, run

MEMORY = """\
## Epic: FEAT-005 — Stripe webhook ingestion
**Completed:** 2025-07-08T11:05:00Z
**Keywords:** webhooks, Stripe events
**Paths:** billing/webhooks/**, billing/stripe_client.py

### Gotchas discovered
- Stripe sends duplicate events
- retries go on for 3 days, so dedupe on the event id, not on the delivery

### Patterns that worked
- store the raw event first, process it from an outbox table
- check the signature before parsing JSON

## Epic: FEAT-009 — Multi-currency invoices
**Completed:** 2025-11-20T09:40:00Z
**Paths:** billing/money/

### Architectural decisions
- money as integer minor units (DEC-015)
- exchange rate fixed when the invoice is finalised, in `billing/rates.py` (DEC-016)
"""
ARCHIVE = """\
# Permanent memory archive

## Epic: UI-001 — Components
**Completed:** 2024-01-01T00:00:00Z
**Paths:** **/*.tsx

### Anti-patterns to avoid
- typing components as React.FC; write plain functions with typed props
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / ".claude" / "memory" / "archive").mkdir(parents=True)
    (root / ".claude" / "memory" / "permanent_memory.md").write_text(MEMORY)
    (root / ".claude" / "memory" / "archive" / "2024-01-01.md").write_text(ARCHIVE)
    (root / "billing" / "webhooks").mkdir(parents=True)
    (root / "billing" / "webhooks" / "stripe_events.py").write_text("")
    (root / "billing" / "rates.py").write_text("")
    return root


def hook(
    project: Path, tmp: Path, event: str, env: dict[str, str] | None = None, **extra: Any
) -> str:
    data = {"session_id": "s1", "hook_event_name": event, "cwd": str(project), **extra}
    if event == "SessionStart":
        data.setdefault("source", "startup")
    stdin = json.dumps(data).encode()
    result = run(
        LOADER,
        ["hook"],
        env=clean_env(tmp, CLAUDE_PROJECT_DIR=str(project), **(env or {})),
        stdin=stdin,
    )
    assert_no_traceback(result, event)
    assert result.code == 0 and (result.err == "" or "estimate" in result.err), result.err
    return result.out


def tool(
    project: Path, tmp: Path, name: str, env: dict[str, str] | None = None, **tool_input: Any
) -> str:
    extra = {k: tool_input.pop(k) for k in ("session_id", "agent_id") if k in tool_input}
    return hook(project, tmp, "PreToolUse", env, tool_name=name, tool_input=tool_input, **extra)


WEBHOOKS = (
    f"{LOADER_STAMP}\nFor billing/webhooks/stripe_events.py:\n"
    "FEAT-005 gotchas: retries go on for 3 days, so dedupe on the event id, not on the delivery\n"
    "FEAT-005 patterns: check the signature before parsing JSON\n"
)


def test_a_governed_file_gets_its_entries_once_before_the_edit(
    project: Path, tmp_path: Path
) -> None:
    start = hook(project, tmp_path, "SessionStart")
    # The block's lines were received at the start: the file's block leaves them out.
    assert "  gotchas: Stripe sends duplicate events\n" in start
    handler = str(project / "billing" / "webhooks" / "stripe_events.py")
    assert tool(project, tmp_path, "Read", file_path=handler) == WEBHOOKS
    assert tool(project, tmp_path, "Edit", file_path=handler) == ""
    assert tool(project, tmp_path, "Read", file_path=handler) == ""
    # Another file of the same epic: the epic already had its block in this session.
    client = str(project / "billing" / "stripe_client.py")
    assert tool(project, tmp_path, "Write", file_path=client) == ""
    # Another session gets it again; a cleared one starts afresh.
    hook(project, tmp_path, "SessionStart", session_id="s2")
    assert tool(project, tmp_path, "Read", file_path=handler, session_id="s2") == WEBHOOKS
    hook(project, tmp_path, "SessionStart", source="clear")
    assert tool(project, tmp_path, "Read", file_path=handler) == WEBHOOKS


def test_prompt_recall_and_the_file_share_one_record(project: Path, tmp_path: Path) -> None:
    hook(project, tmp_path, "SessionStart")
    prompt = hook(
        project,
        tmp_path,
        "UserPromptSubmit",
        prompt="Stripe webhook events arrive twice: where do we dedupe?",
    )
    assert "FEAT-005 gotchas: retries go on for 3 days" in prompt
    handler = str(project / "billing" / "webhooks" / "stripe_events.py")
    assert tool(project, tmp_path, "Read", file_path=handler) == ""


@pytest.mark.parametrize(
    ("name", "tool_input", "expected"),
    [
        # an entry names the file: no support needed, it comes first
        ("Edit", {"file_path": "billing/rates.py"},
         "For billing/rates.py:\nFEAT-009 decisions: exchange rate fixed when the invoice is "
         "finalised, in `billing/rates.py` (DEC-016)\n"),
        # a folder glob (`billing/money/`), its file's name supports the epic
        ("Write", {"file_path": "billing/money/exchange_rate.py"},
         "For billing/money/exchange_rate.py:\nFEAT-009 decisions: exchange rate fixed when the "
         "invoice is finalised, in `billing/rates.py` (DEC-016)\n"),
        # a glob at any depth, from the archive, that neither the file's name nor a prompt
        # supports (test_support_from_the_prompts)
        ("Read", {"file_path": "web/src/components/Button.tsx"}, ""),
        # a search in a governed folder: the folder's name alone does not support the epic
        ("Grep", {"pattern": "event_id", "path": "billing/webhooks"}, ""),
        ("Grep", {"pattern": "event_id", "path": "billing/webhooks/stripe_events.py"}, "WEBHOOKS"),
        # Codex: a shell command that reads the file, and a patch
        ("Bash", {"command": "sed -n '1,80p' billing/webhooks/stripe_events.py"}, "WEBHOOKS"),
        ("Bash", {"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: "
                  "billing/webhooks/stripe_events.py\n@@\n-a\n+b\n*** End Patch\nEOF\n"},
         "WEBHOOKS"),
        # nothing governs these
        ("Read", {"file_path": "billing/invoices.py"}, ""),
        ("Read", {"file_path": "README.md"}, ""),
        ("Grep", {"pattern": "x"}, ""),
        ("Bash", {"command": "ls -la"}, ""),
        ("Read", {"file_path": "../outside/billing/webhooks/handler.py"}, ""),
        ("Read", {"file_path": "/etc/passwd"}, ""),
        ("Read", {}, ""),
        ("Read", {"file_path": 7}, ""),
    ],
)  # fmt: skip
def test_what_each_tool_touches(
    project: Path, tmp_path: Path, name: str, tool_input: dict[str, Any], expected: str
) -> None:
    hook(project, tmp_path, "SessionStart")
    tool_input = {
        k: str(project / v) if k == "file_path" and isinstance(v, str) and k != "path" else v
        for k, v in tool_input.items()
    }
    out = tool(project, tmp_path, name, **tool_input)
    if expected == "WEBHOOKS":
        assert out == WEBHOOKS
    else:
        assert out == (f"{LOADER_STAMP}\n{expected}" if expected else "")


def test_support_from_the_prompts(project: Path, tmp_path: Path) -> None:
    hook(project, tmp_path, "SessionStart")
    handler = str(project / "billing/webhooks/handler.py")
    assert tool(project, tmp_path, "Read", file_path=handler) == ""  # its name alone: too little
    prompt = "duplicate deliveries"
    assert hook(project, tmp_path, "UserPromptSubmit", prompt=prompt) == ""  # too little alone
    assert tool(project, tmp_path, "Read", file_path=handler) == WEBHOOKS.replace(
        "stripe_events.py", "handler.py"
    )


def test_links_are_read_and_never_followed_out(project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "webhooks").mkdir(parents=True)
    (outside / "webhooks" / "stripe_events.py").write_text("")
    (project / "vendor").symlink_to(outside)
    (project / "hooks_link").symlink_to(project / "billing" / "webhooks")
    hook(project, tmp_path, "SessionStart")
    assert (
        tool(project, tmp_path, "Read", file_path=str(project / "vendor/webhooks/stripe_events.py"))
        == ""
    )
    inside = tool(
        project, tmp_path, "Read", file_path=str(project / "hooks_link" / "stripe_events.py")
    )
    assert inside == WEBHOOKS


def test_a_subagent_keeps_its_own_record(project: Path, tmp_path: Path) -> None:
    hook(project, tmp_path, "SessionStart")
    handler = str(project / "billing" / "webhooks" / "stripe_events.py")
    assert tool(project, tmp_path, "Read", file_path=handler) == WEBHOOKS
    assert tool(project, tmp_path, "Read", file_path=handler, agent_id="a1") == WEBHOOKS
    assert tool(project, tmp_path, "Read", file_path=handler, agent_id="a1") == ""
    assert tool(project, tmp_path, "Read", file_path=handler, agent_id="a2") == WEBHOOKS


@pytest.mark.parametrize(("per_call", "expected"), [("0", 0), ("25", 0), ("40", 1), ("80", 2)])
def test_the_per_call_budget_is_an_option(
    project: Path, tmp_path: Path, per_call: str, expected: int
) -> None:
    env = {"CLAUDE_PLUGIN_OPTION_RECALL_FILE_TOKENS": per_call}
    hook(project, tmp_path, "SessionStart", env)
    out = tool(
        project, tmp_path, "Read", env, file_path=str(project / "billing/webhooks/stripe_events.py")
    )
    assert out.count("\nFEAT-005 ") == expected


def test_the_session_budget_is_shared(project: Path, tmp_path: Path) -> None:
    env = {"CLAUDE_PLUGIN_OPTION_RECALL_SESSION_TOKENS": "50"}
    hook(project, tmp_path, "SessionStart", env)
    out = tool(
        project, tmp_path, "Read", env, file_path=str(project / "billing/webhooks/stripe_events.py")
    )
    assert out.count("\nFEAT-005 ") == 1
    assert tool(project, tmp_path, "Read", env, file_path=str(project / "billing/rates.py")) == ""


def test_a_file_named_outside_stays_unread(project: Path, tmp_path: Path) -> None:
    hook(project, tmp_path, "SessionStart")
    assert tool(project, tmp_path, "Read", file_path=str(tmp_path / "project-other" / "x.py")) == ""


# --- no path outside the project is ever looked at ----------------------------------------


SEGMENTS = st.sampled_from(["billing", "webhooks", "..", ".", "", "link", "out", "a.py", "x"])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(SEGMENTS, min_size=1, max_size=6),
    absolute=st.booleans(),
    cwd_inside=st.booleans(),
)
def test_no_path_outside_the_project_is_stated(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    parts: list[str],
    absolute: bool,
    cwd_inside: bool,
) -> None:
    root = tmp_path / "root"
    if not root.exists():
        (root / "billing" / "webhooks").mkdir(parents=True)
        (tmp_path / "out").mkdir()
        (root / "link").symlink_to(tmp_path / "out")
        (root / "billing" / "up").symlink_to("../../out")
    looked: list[str] = []
    for name in ("lstat", "stat", "readlink"):
        real = getattr(os, name)

        def spy(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            looked.append(os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, spy)
    path = "/".join(parts)
    if absolute:
        path = str(root) + "/" + path
    cwd = str(root / "billing") if cwd_inside else str(tmp_path)
    relative = pm_file_hook.project_relative(str(root), cwd, path)
    monkeypatch.undo()
    inside = str(root) + os.sep
    assert all(p.startswith(inside) for p in looked), looked
    if relative is not None:
        assert ".." not in relative.split("/") and not relative.startswith("/")
        assert pm_walk.resolved_path(str(root), relative) == relative


# --- inspect --path ----------------------------------------------------------------------------

INSPECT_CASE = Path(__file__).resolve().parent / "cases" / "inspect-path"
INSPECT_GOLDEN = [
    (["--path", "billing/webhooks/stripe_events.py"], "inspect-governed.txt"),
    (["--path", "billing/webhooks/handler.py"], "inspect-unsupported.txt"),
    (["--path", "billing/webhooks/handler.py", "--prompt", "duplicate deliveries"],
     "inspect-prompt.txt"),
    (["--path", "billing/rates.py"], "inspect-named.txt"),
    (["--path", "README.md"], "inspect-none.txt"),
    (["--path", "../outside.py"], "inspect-outside.txt"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "expected"), INSPECT_GOLDEN, ids=[n for _, n in INSPECT_GOLDEN])
def test_inspect_path_says_what_matched_and_why(
    isolated_env: Path, loader: Any, args: list[str], expected: str
) -> None:
    now = ["--now", "2026-12-01T00:00:00Z"]
    result = loader(["inspect", *args, "--project-dir", str(INSPECT_CASE), *now])
    assert (result.code, result.err) == (0, "")
    assert result.out == (INSPECT_CASE / expected).read_text(encoding="utf-8")
    # What inspect says is added is what the hook adds to a session's first such call.
    if "added (" in result.out and "--prompt" not in args:
        block = result.out.split(" tokens):\n", 1)[1]
        assert block.startswith(LOADER_STAMP + "\nFor " + args[1] + ":\n")


# --- budgets and the one record, as properties --------------------------------------------------


def built(counter: Any) -> tuple[Any, Any]:
    from project_memory_loader.core import pm_parse
    from project_memory_loader.recall import pm_path_index, pm_recall_index

    epics = pm_parse.parse_permanent(MEMORY)
    archives = [("archive/2024-01-01.md", ARCHIVE.encode())]
    lines = MEMORY.split("\n")
    index = pm_recall_index.index_files(epics, lines, archives, "", counter)
    return index, pm_path_index.table_of(epics, lines, archives, index, counter)


FILES = st.sampled_from(
    [
        "billing/webhooks/stripe_events.py",
        "billing/webhooks/handler.py",
        "billing/stripe_client.py",
        "billing/money/exchange_rate.py",
        "billing/rates.py",
        "web/src/components/Button.tsx",
        "README.md",
    ]
)
PROMPTS = st.sampled_from(
    ["", "handle duplicate Stripe deliveries", "React props for the Button component",
     "money as minor units", "exchange rates"]
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    calls=st.lists(st.tuples(FILES, PROMPTS), min_size=1, max_size=12),
    call_budget=st.integers(0, 120),
    session_budget=st.integers(0, 200),
    threshold=st.sampled_from([0.0, 2.0, 5.0]),
)
def test_budgets_hold_and_no_entry_goes_out_twice(
    calls: list[tuple[str, str]], call_budget: int, session_budget: int, threshold: float
) -> None:
    from project_memory_loader.recall import pm_path_index
    from support import token_count

    count = lambda text: token_count(text)[0]  # noqa: E731  # exact when tiktoken loads
    index, table = built(count)
    received = {entry[0] for entry in index["entries"] if entry[5]}
    prompts: list[str] = []
    spent = 0
    lines: list[str] = []
    for path, prompt in calls:
        if prompt:
            prompts.append(prompt)
        named, epics = pm_path_index.governing(table, path)
        found = [(path, named, epics)] if named or epics else []
        text, used = pm_file_hook.file_blocks(
            table, index, found, prompts, received, call_budget, session_budget - spent, threshold
        )
        assert count(text) <= used <= min(call_budget, session_budget - spent) or not text
        assert (used == 0) == (text == "")
        spent += used
        lines += [line for line in text.split("\n")[2:] if line]
    assert spent <= session_budget
    assert len(lines) == len(set(lines)), lines


# cl100k's pre-token pattern (pm_tokens.CL100K_PAT_STR) for ASCII text: \p{L} and \p{N} are
# ASCII letters and digits there.
ASCII_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\nA-Za-z0-9]?+[A-Za-z]++|[0-9]{1,3}+"""
    r"""| ?[^\sA-Za-z0-9]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


@settings(max_examples=100, deadline=None)
@given(path=st.text(alphabet=sorted(PLAIN), min_size=1, max_size=60))
def test_the_header_is_cut_as_cl100k_cuts_it(path: str) -> None:
    import re

    from project_memory_loader.core import pm_tokens
    from project_memory_loader.recall import pm_path_index

    assert pm_tokens.CL100K_PAT_STR.startswith("'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+")
    line = pm_path_index.header_line(path) + "\n"
    expected = re.findall(ASCII_PATTERN, line)
    assert pm_path_index.pretokens(line) == expected


def test_the_header_counts_exactly_when_its_pieces_are_known() -> None:
    from project_memory_loader.recall import pm_path_index
    from support import token_count

    count = lambda text: token_count(text)[0]  # noqa: E731
    _index, table = built(count)
    for path in ("billing/rates.py", "billing/stripe_client.py", "src/index.ts", "app/main.go"):
        line = pm_path_index.header_line(path) + "\n"
        assert pm_path_index.header_tokens(table, path) == count(line), path
    # An unknown piece counts as its bytes: never less than the real count.
    odd = "zq9/xxyzzy_wobble.qqq"
    assert pm_path_index.header_tokens(table, odd) >= count(pm_path_index.header_line(odd) + "\n")


def test_a_changed_archive_file_is_seen_at_the_next_call(project: Path, tmp_path: Path) -> None:
    # The table's key takes the archive files' stamps: an archived epic given a Paths line
    # governs its files from the next call on, without the block changing.
    hook(project, tmp_path, "SessionStart")
    migration = str(project / "db" / "migrations" / "0001_luxon_dates.sql")
    assert tool(project, tmp_path, "Read", file_path=migration) == ""
    archive = project / ".claude" / "memory" / "archive" / "2024-01-01.md"
    archive.write_text(ARCHIVE.replace("**/*.tsx", "**/*.tsx, db/migrations/"))
    assert tool(project, tmp_path, "Read", file_path=migration) == ""  # its support: too little
    archive.write_text(
        ARCHIVE.replace("**/*.tsx", "**/*.tsx, db/migrations/")
        + "- `db/migrations/0001_luxon_dates.sql` stores dates as UTC\n"
    )
    assert tool(project, tmp_path, "Read", file_path=migration) == (
        f"{LOADER_STAMP}\nFor db/migrations/0001_luxon_dates.sql:\n"
        "UI-001 anti-patterns: `db/migrations/0001_luxon_dates.sql` stores dates as UTC\n"
        # the entry naming it makes the file's path support its epic: the epic's other one too
        "UI-001 anti-patterns: typing components as React.FC; write plain functions with typed "
        "props\n"
    )


def test_a_changed_memory_file_is_seen_at_the_next_call(project: Path, tmp_path: Path) -> None:
    # A call nothing governs is answered from the table stored under the memory file's stamp;
    # a Paths line added to the file governs its files from the next call on.
    hook(project, tmp_path, "SessionStart")
    ledger = str(project / "billing" / "ledger" / "entries.py")
    assert tool(project, tmp_path, "Read", file_path=ledger) == ""
    assert tool(project, tmp_path, "Read", file_path=ledger) == ""  # the quick answer
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.write_text(
        MEMORY.replace("**Paths:** billing/money/", "**Paths:** billing/money/, billing/ledger/")
        + "- `billing/ledger/entries.py` holds amounts as integer minor units too\n"
    )
    out = tool(project, tmp_path, "Read", file_path=ledger)
    assert out.startswith(f"{LOADER_STAMP}\nFor billing/ledger/entries.py:\nFEAT-009 "), out


def imports_of(project: Path, tmp: Path, tool_input: dict[str, Any]) -> tuple[str, set[str]]:
    """A PreToolUse call's context and the modules it imported beyond a bare interpreter."""
    import subprocess
    import sys

    env = clean_env(tmp, CLAUDE_PROJECT_DIR=str(project))
    payload = {"session_id": "s1", "hook_event_name": "PreToolUse", "cwd": str(project)}
    stdin = json.dumps({**payload, "tool_name": "Read", "tool_input": tool_input}).encode()

    def modules(argv: list[str], data: bytes) -> tuple[str, set[str]]:
        done = subprocess.run(
            [sys.executable, "-X", "importtime", *argv], input=data, capture_output=True,
            env=env, timeout=60, check=True,
        )  # fmt: skip
        found = {  # each module by its own name, its package's left out
            line.split("|")[-1].strip().rsplit(".", 1)[-1]
            for line in done.stderr.decode().splitlines()
            if line.startswith("import time:")
        }
        return done.stdout.decode(), found

    out, found = modules([str(LOADER), "hook"], stdin)
    _, floor = modules(["-c", "import json, hashlib"], b"")
    return out, found - floor


def test_a_call_nothing_governs_reads_no_memory_and_loads_nothing_heavy(
    project: Path, tmp_path: Path
) -> None:
    hook(project, tmp_path, "SessionStart")
    other = {"file_path": str(project / "README.md")}
    tool(project, tmp_path, "Read", **other)  # the first call stores the quick table
    out, loaded = imports_of(project, tmp_path, other)
    assert out == ""
    # The quick answer (beyond json and hashlib): no tokenizer, no parser, no index, no scoring;
    # not even the modules that read and key the memory file's block.
    assert loaded <= {
        "project_memory_loader", "core", "evidence", "recall", "shared",
        "permanent_memory", "pm_names", "command_line", "pm_hook", "pm_cache", "pm_walk",
        "pm_file", "pm_limits", "pm_recall",
        "pm_recall_hook", "pm_recall_store", "memory_io", "hook_io",
        "pm_file_hook", "pm_path_index", "pm_globs",
    }, loaded  # fmt: skip
    governed = {"file_path": str(project / "billing/webhooks/stripe_events.py")}
    out, loaded = imports_of(project, tmp_path, governed)
    assert out.startswith('{"hookSpecificOutput"') and "For billing/webhooks" in out
    assert not {m for m in loaded if m.split(".")[0] in {"re", "yaml", "tiktoken", "json"}}
    assert not loaded & {"pm_parse", "pm_render", "pm_load", "pm_recall_index", "pm_tokens"}
