"""mm_hook: the session-start hook's cache of the resume block, and the one line for the user."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import LOADER_DIR, MANAGER_DIR
from hypothesis import given
from hypothesis import strategies as st
from memory_text_test import HOSTILE
from ski_memory_manager import mm_hook, mm_render
from support import (
    MANAGER,
    MANAGER_HOOK_LIMIT,
    SESSION_STAMP,
    assert_no_traceback,
    call_main,
    check_hook_stdin_samples,
    clean_env,
    hook_fuzz,
    hostile_save_input,
    module,
    output_problems,
    run_command,
    save_and_drop_input,
    snapshot_files,
)

SCRIPT = MANAGER_DIR / "memory_manager.py"
SEED = LOADER_DIR.parent.parent.parent / "tests" / "cases" / "seed-example" / "permanent_memory.md"


def snapshot(memory: Path, session: str, project: str, checkpoint: str = "CP-S1") -> Path:
    path = memory / f"{session}-{project}.md"
    path.write_text(
        f"---\nschema_version: 1.1\nproject-name: {project}\nsession: {session}\n"
        f"status: in-progress\nlast-checkpoint: {checkpoint}\n---\n\n"
        f"## Session summary\n{project} at {session}\n",
        encoding="utf-8",
    )
    return path


def env_for(tmp_path: Path, project: Path, **extra: str) -> dict[str, str]:
    env = clean_env(keep_python=False)
    env.update(
        CLAUDE_PROJECT_DIR=str(project),
        CLAUDE_PLUGIN_DATA=str(tmp_path / "data"),
        HOME=str(tmp_path / "home"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.update(extra)
    return env


def start(env: dict[str, str], flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    payload = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
    return subprocess.run(
        [sys.executable, *flags, str(SCRIPT), "hook"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def shown(result: subprocess.CompletedProcess[str]) -> tuple[str, str | None]:
    assert (result.returncode, result.stderr) == (0, "")
    value: dict[str, Any] = json.loads(result.stdout)
    return value["hookSpecificOutput"]["additionalContext"], value.get("systemMessage")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "memory").mkdir(parents=True)
    snapshot(folder / "memory", "2026-05-01-10-00", "billing-api", "CP-S2")
    return folder


def test_one_line_for_both_blocks(tmp_path: Path, project: Path) -> None:
    (project / ".claude" / "memory").mkdir(parents=True)
    (project / ".claude" / "memory" / "permanent_memory.md").write_bytes(SEED.read_bytes())
    context, message = shown(start(env_for(tmp_path, project)))
    assert context.startswith("[session-memory | trust:file]\nResuming `billing-api` (")
    assert context.count("[permanent-memory | trust:file]\n") == 1
    assert context.index("[permanent-memory") > context.index("Resuming")
    assert message is not None
    assert message.startswith("project-memory: 2 epics, ")
    assert message.endswith(" \u00b7 resumed billing-api at CP-S2")
    # The option turns the line off; the context stays as it was.
    off = shown(start(env_for(tmp_path, project, CLAUDE_PLUGIN_OPTION_STATUS_MESSAGE="false")))
    assert off == (context, None)


def test_without_site_a_miss_adds_site_packages_and_says_the_same(
    tmp_path: Path, project: Path
) -> None:
    # The plugin starts the hook as `python3 -S` (hooks/hooks.json); a cache miss reads the
    # snapshot with PyYAML from site-packages (mm_frontmatter.require_yaml adds them).
    (project / ".claude" / "memory").mkdir(parents=True)
    (project / ".claude" / "memory" / "permanent_memory.md").write_bytes(SEED.read_bytes())
    said = {
        flags: [shown(start(env_for(tmp_path / f"run{len(flags)}", project), flags))
                for _ in range(2)]  # the miss, then the hit
        for flags in ((), ("-S",))
    }  # fmt: skip
    assert said[("-S",)] == said[()]
    assert "Resuming `billing-api`" in said[()][0][0] and said[()][0] == said[()][1]


def test_nothing_injected_means_no_output(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = start(env_for(tmp_path, empty))
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_cache_is_used_and_notices_every_change(tmp_path: Path, project: Path) -> None:
    env = env_for(tmp_path, project)
    first = shown(start(env))
    [entry_path] = (tmp_path / "data" / "session-memory" / "resume").iterdir()
    entry = json.loads(entry_path.read_text(encoding="utf-8"))
    snapshot_path = str(project / "memory" / "2026-05-01-10-00-billing-api.md")
    assert entry["block"] == first[0] and entry["files"][0][0] == snapshot_path
    assert entry["valid_until"] > time.time()
    # A hit gives the same answer and writes nothing.
    stamp = entry_path.stat().st_mtime_ns
    assert shown(start(env)) == first
    assert entry_path.stat().st_mtime_ns == stamp
    # The snapshot is rewritten (same size, new checkpoint): the block follows.
    path = project / "memory" / "2026-05-01-10-00-billing-api.md"
    path.write_text(path.read_text().replace("CP-S2", "CP-S3"), encoding="utf-8")
    changed = shown(start(env))
    assert "CP-S3" in changed[0] and changed[1] == "project-memory: resumed billing-api at CP-S3"
    # A newer session appears: the block resumes it.
    snapshot(project / "memory", "2026-05-02-10-00", "billing-api", "CP-S4")
    assert "CP-S4" in shown(start(env))[0]
    # The clock: an entry past its valid_until is not used, even with the same files.
    entry = json.loads(entry_path.read_text(encoding="utf-8"))
    entry["block"] = "stale text\n"
    entry_path.write_text(json.dumps(entry), encoding="utf-8")
    assert shown(start(env))[0] == "stale text\n"  # still valid: the entry is what is used
    entry["valid_until"] = time.time() - 1
    entry_path.write_text(json.dumps(entry), encoding="utf-8")
    assert "CP-S4" in shown(start(env))[0]


def test_a_damaged_entry_is_rendered_again(tmp_path: Path, project: Path) -> None:
    env = env_for(tmp_path, project)
    first = shown(start(env))
    [entry_path] = (tmp_path / "data" / "session-memory" / "resume").iterdir()
    for damage in (b"", b"{", b"[]", b'{"format": "mm-resume-1"}', b"\xff" * 10):
        entry_path.write_bytes(damage)
        assert shown(start(env)) == first


def test_a_hit_imports_neither_yaml_nor_argparse_nor_typing(tmp_path: Path, project: Path) -> None:
    env = env_for(tmp_path, project)
    start(env)
    result = start(env, flags=("-X", "importtime"))
    floor = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import json, hashlib"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=True,
    )

    def names(stderr: str) -> set[str]:
        return {line.split("|")[-1].strip() for line in stderr.splitlines() if "|" in line}

    imported = names(result.stderr) - names(floor.stderr)
    # mm_hook itself is imported by importlib.import_module, which -X importtime does not time;
    # the session record it imports is.
    assert "ski_memory_manager.mm_session" in imported
    imported = {name.rsplit(".", 1)[-1] for name in imported}  # the modules' own names
    heavy = {"yaml", "argparse", "mm_resume", "mm_snapshot", "pathlib", "typing"}
    assert not imported & heavy, imported
    assert (
        json.loads(result.stdout)["systemMessage"] == "project-memory: resumed billing-api at CP-S2"
    )


def test_the_hook_keeps_its_bytecode_under_pythondontwritebytecode(tmp_path: Path) -> None:
    import shutil

    skills = tmp_path / "plugin" / "skills"
    for skill in (MANAGER_DIR.parent, LOADER_DIR.parent):
        shutil.copytree(skill, skills / skill.name, ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "project"
    (project / "memory").mkdir(parents=True)
    snapshot(project / "memory", "2026-05-01-10-00", "p")
    env = env_for(tmp_path, project)
    payload = json.dumps({"hook_event_name": "SessionStart", "cwd": str(project)})
    for script in ("ski-memory-manager/scripts/memory_manager.py",):
        done = run_command(
            [sys.executable, skills / script, "hook"], env=env, stdin=payload.encode()
        )
        assert done.code == 0 and done.out
    cached = sorted(p.name.split(".")[0] for p in skills.rglob("__pycache__/*.pyc"))
    beside_scripts = list(skills.glob("*/scripts/__pycache__/*.pyc"))
    assert {"mm_hook", "mm_resume", "mm_render", "pm_hook", "pm_cache", "pm_file"} <= set(cached), (
        cached
    )
    assert beside_scripts == []  # a script run directly is never cached


@given(st.integers(min_value=-10 * 86400, max_value=400 * 86400), st.floats(0, 1))
def test_ago_stays_the_same_until_it_says_it_changes(seconds: float, fraction: float) -> None:
    changes_in = mm_render.ago_changes_in(seconds)
    assert changes_in > 0
    assert mm_render.ago(seconds + changes_in * fraction * 0.999) == mm_render.ago(seconds)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, 60),
        (59, 1),
        (3599, 1),
        (3600, 3600),
        (48 * 3600 - 1, 1),
        (48 * 3600, 86400),
        (-400, 100),
    ],
)
def test_ago_changes_in(seconds: float, expected: float) -> None:
    assert mm_render.ago_changes_in(seconds) == expected


def test_status_option_values(capsys: pytest.CaptureFixture[str]) -> None:
    assert mm_hook.status_message_on({}) is True
    assert mm_hook.status_message_on({mm_hook.STATUS_OPTION: "No"}) is False
    assert capsys.readouterr().err == ""
    assert mm_hook.status_message_on({mm_hook.STATUS_OPTION: "2"}) is True
    assert capsys.readouterr().err == (
        "note: ignoring CLAUDE_PLUGIN_OPTION_STATUS_MESSAGE='2' (want true or false)\n"
    )


def test_session_start_output_forms() -> None:
    resume = ("[session-memory | trust:file]\nR\n", "resumed p at CP-S1")
    permanent = ("[permanent-memory | trust:file]\nP\n", "1 epic, 9 tokens")
    out = mm_hook.session_start_output(resume, permanent, "SessionStart", True)
    assert json.loads(out) == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": resume[0] + permanent[0],
        },
        "systemMessage": "project-memory: 1 epic, 9 tokens \u00b7 resumed p at CP-S1",
    }
    assert mm_hook.session_start_output(resume, ("", "x"), None, True) == resume[0]
    assert mm_hook.session_start_output(("", "a"), ("", "b"), "SessionStart", True) == ""


# Fuzzing the hook's stdin: arbitrary JSON and bytes.


def test_manager_hook_stdin(monkeypatch: Any) -> None:
    counts = hook_fuzz(
        monkeypatch, "ski_memory_manager.memory_manager", MANAGER_HOOK_LIMIT, SESSION_STAMP
    )
    print("manager hook fuzz:", counts)
    assert counts["emitted"] > 0, "no generated payload ever reached the project"


def test_manager_hook_stdin_subprocess(tmp_path: Path) -> None:
    check_hook_stdin_samples(MANAGER, MANAGER_HOOK_LIMIT, tmp_path)


@pytest.mark.parametrize(
    "name", ["close-reminder", "fake-session-stamp", "ansi-osc", "bidi", "combining-solidus-tag"]
)
def test_the_project_list_is_neutralised(name: str, memory_dir: Path) -> None:
    """With several projects the SessionStart hook prints a compact list of resume lines, built
    from hand-editable front matter (hostile text from memory_text_test's HOSTILE): the list
    must be as inert as a single block."""
    mm = module("ski_memory_manager.memory_manager")
    payload = HOSTILE[name]
    assert save_and_drop_input(mm, memory_dir, hostile_save_input("first")).code == 0
    other = hostile_save_input("second", "2026-01-03-10-00")
    other["project_name"] = "other"
    assert save_and_drop_input(mm, memory_dir, other).code == 0
    for snap in snapshot_files(memory_dir):
        text = snap.read_text(encoding="utf-8")
        text = text.replace("last-checkpoint: CP-S1", f"last-checkpoint: {json.dumps(payload)}")
        text = text.replace("status: in-progress", f"status: {json.dumps(payload)}")
        snap.write_text(text, encoding="utf-8")
    start = {"session_id": "s", "hook_event_name": "SessionStart", "cwd": str(memory_dir.parent)}
    res = call_main(mm, ["hook"], stdin=json.dumps(start).encode())
    assert_no_traceback(res, "hook")
    assert res.code == 0
    assert not output_problems(res.out), (output_problems(res.out), res.out)
    lst = call_main(mm, ["list", "--memory-dir", str(memory_dir)])
    assert lst.code == 0 and not output_problems(lst.out), (output_problems(lst.out), lst.out)


def test_a_compactions_lessons_are_counted_at_the_next_start(tmp_path: Path) -> None:
    # PostCompact: the summary's lessons kept as proposals; SessionStart: the line for the model
    # after the permanent-memory block, the count in the person's line, even with no block.
    project = tmp_path / "project"
    project.mkdir()
    env = env_for(tmp_path, project)
    summary = (
        "<summary>\n1. Primary Request and Intent:\n   Idempotent webhooks.\n</summary>\n\n"
        "Lessons for project memory:\n- [gotcha] Stripe retries for 3 days (files: a.py)\n"
        "- [decision] duplicates answered 200\n"
    )
    payload = {
        "session_id": "s0",
        "hook_event_name": "PostCompact",
        "trigger": "manual",
        "cwd": str(project),
        "compact_summary": summary,
    }
    post = subprocess.run(
        [sys.executable, "-S", str(SCRIPT), "hook"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert (post.returncode, post.stdout, post.stderr) == (0, "", "")
    context, message = shown(start(env, ("-S",)))
    assert "lessons proposed" not in context and "propose it" not in context  # no block: no line
    assert message is not None and message.endswith(
        " \u00b7 2 lessons proposed: /project-memory:review"
    )
    (project / ".claude" / "memory").mkdir(parents=True)
    (project / ".claude" / "memory" / "permanent_memory.md").write_bytes(SEED.read_bytes())
    context, message = shown(start(env, ("-S",)))
    assert context.endswith(
        "\n\nLessons: when you settle a decision or find a gotcha later "
        "sessions must know, propose it with the permanent-memory-loader "
        "skill's propose command.\n"
    )
    assert message is not None and message.endswith("2 lessons proposed: /project-memory:review")
