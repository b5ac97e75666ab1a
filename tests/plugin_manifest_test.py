"""The plugin's manifests and hook wiring, checked without the Claude Code or Codex CLI.

(The real CLIs validate and run them in e2e_claude_code_test.py and e2e_codex_test.py.)
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from project_memory_loader.core import pm_limits
from project_memory_loader.recall import pm_path_index, pm_recall
from ski_memory_manager import mm_session
from support import HOOK_LIMIT, run_command

PLUGIN_JSON = ROOT / ".claude-plugin" / "plugin.json"
MARKETPLACE_JSON = ROOT / ".claude-plugin" / "marketplace.json"
HOOKS_JSON = ROOT / "hooks" / "hooks.json"
CODEX_PLUGIN_JSON = ROOT / ".codex-plugin" / "plugin.json"
CODEX_MARKETPLACE_JSON = ROOT / ".agents" / "plugins" / "marketplace.json"

# The hooks start without `site` (`-S`: no site-packages, nothing the user's .pth files run), most
# of an interpreter's start: the loader's need the standard library only; the manager's add the
# site-packages folders when a cache miss needs PyYAML (mm_frontmatter.require_yaml).
#
# Every hook command is this one launcher (docs/install.md, "Windows"), a rule for any hook
# added later: one text that is both a POSIX shell script (Git Bash, /bin/sh) and a PowerShell
# script, since Claude Code runs a hook that names no "shell" in Git Bash on Windows, or in
# PowerShell where Git Bash is absent. Line 1 is an `echo` to /dev/null for the shell (the rest
# of the line a comment), and for PowerShell a string and then `<#`, a block comment that hides
# line 2 up to the `#>` of its end (the last `"` only pairs the line's quotes for readers that
# count them, such as `claude plugin validate`). Line 2, the shell's: python3, then python,
# then `py -3`, the next one only when the one before did not run the hook: 127 (not found),
# 126 (cannot be run), 49 (the Microsoft Store alias: its 9009 as Git Bash reports it), 2 (an
# interpreter that cannot open the script; the hooks themselves never exit 2). `exit` ends the
# shell there, so it never reads line 3. Line 3, PowerShell's: the same order, the next one
# when the one before failed and either was not found ($LASTEXITCODE unset) or gave 2 or 9009.
# In the common case (python3 works) one interpreter starts, in either shell.
RETRY_STATUSES = "2|49|126|127"
# Where none of the three runs, PowerShell says so on stderr and ends successfully: Claude Code
# counts any other failure of a PreToolUse hook in PowerShell (no Git Bash) as blocking, which
# would stop every file tool for want of Python; in Git Bash the shell's 127 is a failure the
# client shows and does not block on.
NO_PYTHON = (
    "[Console]::Error.WriteLine('project-memory: no working Python found (python3, python, "
    "py -3); the hook did not run')"
)


def launcher(script: str) -> str:
    """The hook command that runs `script` (a path under skills/) with `hook`."""
    path = f'"${{CLAUDE_PLUGIN_ROOT}}/skills/{script}"'
    failed = "-not $? -and $LASTEXITCODE -in $null, 2, 9009"
    return (
        'echo " \\`" > /dev/null # " <# "\n'
        f"for p in python3 python 'py -3'; do $p -S {path} hook; s=$?; "
        f"case $s in {RETRY_STATUSES}) ;; *) break;; esac; done; exit $s #> > $null\n"
        f"python3 -S {path} hook; if ({failed}) {{ python -S {path} hook; "
        f"if ({failed}) {{ py -3 -S {path} hook; if ({failed}) {{ {NO_PYTHON} }} }} }}"
    )


LOADER_SCRIPT = "permanent-memory-loader/scripts/permanent_memory.py"
MANAGER_SCRIPT = "ski-memory-manager/scripts/memory_manager.py"
LOADER_HOOK = launcher(LOADER_SCRIPT)
MANAGER_HOOK = launcher(MANAGER_SCRIPT)

# The user options, their types and defaults, and the environment variable each reaches the
# hooks as (Claude Code upper-cases the key: CLAUDE_PLUGIN_OPTION_<KEY>). The hook scripts read
# these names; an option the user never set is absent from the environment, so the scripts
# must fall back to these same defaults themselves.
OPTIONS = {
    "every_turn": ("boolean", False, "CLAUDE_PLUGIN_OPTION_EVERY_TURN"),
    "propose_at_stop": ("boolean", False, "CLAUDE_PLUGIN_OPTION_PROPOSE_AT_STOP"),
    "status_message": ("boolean", True, "CLAUDE_PLUGIN_OPTION_STATUS_MESSAGE"),
    "stale_days": ("number", pm_limits.STALE_DAYS, "CLAUDE_PLUGIN_OPTION_STALE_DAYS"),
    "token_target": ("number", pm_limits.TOKEN_TARGET, "CLAUDE_PLUGIN_OPTION_TOKEN_TARGET"),
    "hard_cap": ("number", pm_limits.HARD_CAP, "CLAUDE_PLUGIN_OPTION_HARD_CAP"),
    "recall_prompt_tokens": (
        "number",
        pm_recall.PROMPT_BUDGET,
        "CLAUDE_PLUGIN_OPTION_RECALL_PROMPT_TOKENS",
    ),
    "recall_session_tokens": (
        "number",
        pm_recall.SESSION_BUDGET,
        "CLAUDE_PLUGIN_OPTION_RECALL_SESSION_TOKENS",
    ),
    "recall_file_tokens": (
        "number",
        pm_path_index.FILE_BUDGET,
        "CLAUDE_PLUGIN_OPTION_RECALL_FILE_TOKENS",
    ),
    "memory_dir": ("string", "memory", "CLAUDE_PLUGIN_OPTION_MEMORY_DIR"),
    "capture": ("string", mm_session.CAPTURE_MODES[0], mm_session.CAPTURE_OPTION),
}

# The budget options' ranges: the loader accepts the same lowest values (pm_limits).
NUMBER_RANGES = {
    "stale_days": (pm_limits.STALE_DAYS, pm_limits.MIN_STALE_DAYS, pm_limits.MAX_STALE_DAYS),
    "token_target": (
        pm_limits.TOKEN_TARGET,
        pm_limits.MIN_TOKEN_TARGET,
        pm_limits.MAX_OPTION_TOKENS,
    ),
    "hard_cap": (pm_limits.HARD_CAP, pm_limits.MIN_HARD_CAP, pm_limits.MAX_OPTION_TOKENS),
    "recall_prompt_tokens": (
        pm_recall.PROMPT_BUDGET,
        pm_recall.MIN_BUDGET,
        pm_recall.MAX_PROMPT_BUDGET,
    ),
    "recall_session_tokens": (
        pm_recall.SESSION_BUDGET,
        pm_recall.MIN_BUDGET,
        pm_recall.MAX_SESSION_BUDGET,
    ),
    "recall_file_tokens": (
        pm_path_index.FILE_BUDGET,
        pm_recall.MIN_BUDGET,
        pm_recall.MAX_PROMPT_BUDGET,
    ),
}

SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?$")


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def pyproject_version() -> str:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    if sys.version_info >= (3, 11):
        import tomllib

        return str(tomllib.loads(text)["project"]["version"])
    # Python < 3.11 has no TOML reader: the [project] table's version line.
    project = text.split("[project]", 1)[1].split("\n[", 1)[0]
    match = re.search(r'^version\s*=\s*"([^"]+)"', project, re.MULTILINE)
    assert match, "pyproject.toml has no [project] version"
    return match.group(1)


def test_versions_agree_with_pyproject() -> None:
    version = pyproject_version()
    assert SEMVER.match(version), version
    plugin = _load(PLUGIN_JSON)
    market = _load(MARKETPLACE_JSON)
    entry = next(p for p in market["plugins"] if p["name"] == "project-memory")
    assert plugin["version"] == version
    assert entry["version"] == version
    assert market["metadata"]["version"] == version
    assert _load(CODEX_PLUGIN_JSON)["version"] == version


def test_plugin_manifest_fields() -> None:
    plugin = _load(PLUGIN_JSON)
    assert plugin["name"] == "project-memory"
    for field in ("description", "license", "repository"):
        assert isinstance(plugin[field], str) and plugin[field], field
    assert plugin["author"]["name"]
    assert plugin["keywords"] and all(isinstance(k, str) for k in plugin["keywords"])
    assert plugin["license"] == "MIT"
    # Nothing the plugin runs reaches a network host.
    assert plugin["network"] == {"hosts": []}


def test_marketplace_is_the_repository_itself() -> None:
    market = _load(MARKETPLACE_JSON)
    assert market["name"] == "project-memory"
    assert market["owner"]["name"]
    [entry] = market["plugins"]
    assert entry["name"] == "project-memory"
    assert entry["source"] == "./"
    assert entry["description"] == _load(PLUGIN_JSON)["description"]


def test_user_options() -> None:
    config = _load(PLUGIN_JSON)["userConfig"]
    assert set(config) == set(OPTIONS)
    for key, (kind, default, env_name) in OPTIONS.items():
        option = config[key]
        assert option["type"] == kind, key
        assert option["default"] == default, key
        assert type(option["default"]) is type(default), key
        assert option["title"] and option["description"], key
        assert not option.get("sensitive", False), key
        assert re.fullmatch(r"[A-Za-z_]\w*", key), key
        assert env_name == "CLAUDE_PLUGIN_OPTION_" + key.upper()
        if kind == "number":
            assert option["min"] <= default <= option["max"], key


def _commands(hooks: dict[str, Any], event: str) -> list[dict[str, Any]]:
    return [h for group in hooks["hooks"][event] for h in group["hooks"]]


def test_hooks_wiring() -> None:
    hooks = _load(HOOKS_JSON)
    assert set(hooks["hooks"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "SubagentStart",
        "PreCompact",
        "PostCompact",
        "PreToolUse",
        "Stop",
        "SessionEnd",
    }
    [start_group] = hooks["hooks"]["SessionStart"]
    assert start_group["matcher"] == "startup|resume|clear|compact"
    # One hook at session start: the manager's, which adds the loader's block beside its own so
    # that the user gets one status line for both.
    assert [h["command"] for h in _commands(hooks, "SessionStart")] == [MANAGER_HOOK]
    [prompt_group] = hooks["hooks"]["UserPromptSubmit"]
    assert "matcher" not in prompt_group  # UserPromptSubmit takes no matcher
    assert [h["command"] for h in _commands(hooks, "UserPromptSubmit")] == [LOADER_HOOK]
    # When the conversation is compacted, either way, the manager keeps the client's summary.
    [compact_group] = hooks["hooks"]["PostCompact"]
    assert compact_group["matcher"] == "manual|auto"
    assert [h["command"] for h in _commands(hooks, "PostCompact")] == [MANAGER_HOOK]
    # Before it, the loader's instruction asking the compaction for the session's lessons.
    [ask_group] = hooks["hooks"]["PreCompact"]
    assert ask_group["matcher"] == "manual|auto"
    assert [h["command"] for h in _commands(hooks, "PreCompact")] == [LOADER_HOOK]
    # Each turn's end and the session's: the manager keeps the session's snapshot from its
    # transcript. SessionEnd within Codex's 3 s cap (Claude Code gives every SessionEnd hook
    # 1.5 s in all by default).
    for event in ("Stop", "SessionEnd"):
        [group] = hooks["hooks"][event]
        assert "matcher" not in group
        assert [h["command"] for h in _commands(hooks, event)] == [MANAGER_HOOK]
    assert [h["timeout"] for h in _commands(hooks, "SessionEnd")] == [3]
    [subagent_group] = hooks["hooks"]["SubagentStart"]
    assert "matcher" not in subagent_group  # every kind of subagent
    assert [h["command"] for h in _commands(hooks, "SubagentStart")] == [LOADER_HOOK]
    # The file tools, by name, so that no other tool spawns the hook; Codex runs every shell
    # command and patch as `Bash` (and ignores `if`), Claude Code only a shell `apply_patch`.
    [files, shell] = hooks["hooks"]["PreToolUse"]
    assert files["matcher"] == "Read|Edit|Write|MultiEdit|NotebookEdit|Grep|Glob"
    assert shell["matcher"] == "Bash"
    assert [h.get("if") for h in shell["hooks"]] == ["Bash(apply_patch *)"]
    assert [h["command"] for h in _commands(hooks, "PreToolUse")] == [LOADER_HOOK, LOADER_HOOK]
    for event in hooks["hooks"]:
        for hook in _commands(hooks, event):
            assert hook["type"] == "command"
            # Seconds. Well above a cold start that imports tiktoken, well below the default 60.
            assert isinstance(hook["timeout"], int) and 2 <= hook["timeout"] <= 10


def test_every_hook_command_is_the_launcher() -> None:
    # Whatever hook is added, it runs its script through the same launcher, so that it finds a
    # working Python on Windows too.
    hooks = _load(HOOKS_JSON)
    commands = [hook["command"] for event in hooks["hooks"] for hook in _commands(hooks, event)]
    assert commands and set(commands) <= {LOADER_HOOK, MANAGER_HOOK}, commands


@pytest.mark.parametrize("script", [LOADER_SCRIPT, MANAGER_SCRIPT])
def test_hook_commands_point_at_skill_scripts(script: str) -> None:
    assert (ROOT / "skills" / script).is_file()
    # The same script and arguments in each of the four places the launcher starts one.
    command = launcher(script)
    runs = re.findall(r'(python3|python|py -3|\$p) -S "([^"]+)" hook', command)
    where = f"${{CLAUDE_PLUGIN_ROOT}}/skills/{script}"
    assert runs == [(name, where) for name in ("$p", "python3", "python", "py -3")]


@pytest.mark.parametrize(
    ("command", "event", "extra"),
    [
        (MANAGER_HOOK, "SessionStart", {"source": "startup"}),
        (MANAGER_HOOK, "PostCompact", {"trigger": "manual", "compact_summary": "## Next\n- x"}),
        (MANAGER_HOOK, "Stop", {"stop_hook_active": False, "last_assistant_message": "Done."}),
        (MANAGER_HOOK, "SessionEnd", {"reason": "other"}),
        (LOADER_HOOK, "SessionStart", {"source": "startup"}),
        (LOADER_HOOK, "UserPromptSubmit", {"prompt": "hello", "permission_mode": "default"}),
        (LOADER_HOOK, "SubagentStart", {"agent_id": "a-1", "agent_type": "general-purpose"}),
    ],
)
def test_hook_commands_run_through_a_shell(
    tmp_path: Path, command: str, event: str, extra: dict[str, str]
) -> None:
    # The command string exactly as Claude Code runs it: through a shell, with
    # CLAUDE_PLUGIN_ROOT set, from a folder with spaces in its name, on a project that has no
    # memory files. The hooks must exit 0 with at most 10,000 characters on stdout.
    root = tmp_path / "plugin root"
    root.symlink_to(ROOT)
    project = tmp_path / "empty project"
    project.mkdir()
    hook_input = {
        "session_id": "wiring-test",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(project),
        "hook_event_name": event,
        **extra,
    }
    env = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CLAUDE_PLUGIN_ROOT": str(root),
        "CLAUDE_PROJECT_DIR": str(project),
        "CLAUDE_PLUGIN_DATA": str(tmp_path / "data"),
    }
    result = run_command(
        ["sh", "-c", command],
        env=env,
        stdin=json.dumps(hook_input).encode(),
        cwd=project,
        timeout=30,
    )
    assert result.code == 0, result.err
    assert len(result.out) <= HOOK_LIMIT


def test_budget_options_are_the_loaders_limits() -> None:
    config = _load(PLUGIN_JSON)["userConfig"]
    shown = {
        key: (config[key]["default"], config[key]["min"], config[key]["max"])
        for key in NUMBER_RANGES
    }
    assert shown == NUMBER_RANGES


# --- the same plugin for Codex ------------------------------------------------------------------

# Fields both manifests carry, with the same meaning.
SHARED_FIELDS = ("name", "version", "description", "author", "license", "repository", "keywords")


def test_codex_manifest_is_the_same_plugin() -> None:
    claude = _load(PLUGIN_JSON)
    codex = _load(CODEX_PLUGIN_JSON)
    assert {k: codex[k] for k in SHARED_FIELDS} == {k: claude[k] for k in SHARED_FIELDS}
    # Paths must start with "./" (Codex refuses others) and lead to the same folders.
    assert codex["skills"] == "./skills/"
    skills = sorted(p.parent.name for p in (ROOT / "skills").glob("*/SKILL.md"))
    assert skills == ["permanent-memory-loader", "ski-memory-manager"]
    assert codex["hooks"] == "./hooks/hooks.json"
    assert (ROOT / codex["hooks"]).resolve() == HOOKS_JSON.resolve()
    interface = codex["interface"]
    assert interface["displayName"] == "project-memory"
    assert interface["shortDescription"] and len(interface["shortDescription"]) <= 120
    # Codex has no plugin options; the hooks read the same variables from the environment.
    assert "userConfig" not in codex


def test_codex_marketplace_is_the_repository_itself() -> None:
    market = _load(CODEX_MARKETPLACE_JSON)
    assert market["name"] == _load(MARKETPLACE_JSON)["name"] == "project-memory"
    [entry] = market["plugins"]
    assert entry["name"] == "project-memory"
    # The plugin root is the repository root, where .codex-plugin/ is.
    assert entry["source"] == {"source": "local", "path": "./"}
    assert entry["policy"] == {"installation": "AVAILABLE", "authentication": "ON_INSTALL"}
