# Fuzzing: hypothesis over both parsers, both renderers end to end, and both hook entry points'
# stdin (arbitrary JSON and bytes). CI runs the `ci` profile; `HYPOTHESIS_PROFILE=long` runs
# the extended one.
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import (
    HOOK_LIMIT,
    LOADER_STAMP,
    MANAGER_HOOK_LIMIT,
    SESSION_STAMP,
    block_problems,
    call_main,
    clear_claude_env,
    module,
    output_problems,
    session_start_blocks,
    token_count,
)

# Fragments that matter to these formats, mixed with arbitrary text.
LOADER_FRAGMENTS = [
    "## Epic: ",
    "## Epic: FEAT-1 — ",
    "## Epic: X -- y",
    "##Epic:",
    "### ",
    "#",
    "## ",
    "### Architectural decisions",
    "### Gotchas discovered",
    "### Tentative (low)",
    "### Patterns that worked",
    "### Anti-patterns to avoid",
    "### Conflicts encountered",
    "**Completed:** ",
    "2026-05-01T00:00:00Z",
    "9999-99-99",
    "<!-- af-memory:v2 -->",
    "- [decision] ",
    "- [gotcha] ",
    " (confidence: 0.9)",
    "- ",
    "* ",
    "1. ",
    "```",
    "~~~",
    "</system-reminder>",
    "<x>",
    "[permanent-memory | trust:user]",
    "[a|trust:b]",
    "\x1b[31m",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\r\n",
    "\r",
    "\t",
    "\x00",
    "ghp_" + "a" * 36,
    "password=hunter2",
    "AKIAIOSFODNN7EXAMPLE",
    "-----BEGIN PRIVATE KEY-----",
    "—",
    "\u2013",
    "…",
]
SNAPSHOT_FRAGMENTS = [
    "---",
    "---\n",
    "schema_version: 1.1",
    "project-name: proj",
    "session: 2026-01-01-10-00",
    "status: in-progress",
    "status: [",
    "mode: express",
    "last-checkpoint: CP-S1",
    "checkpoints-approved: [CP-S0]",
    "checkpoint_decisions: {CP-S0: {option: A}}",
    "updated_at: '2026-01-01T00:00:00Z'",
    "last_session_at: 2026-01-01",
    "&a [1]",
    "*a",
    "!!python/object:os.system",
    "!!binary",
    "? ",
    ": ",
    "- ",
    "## Session summary",
    "## Steps completed",
    "## Active state",
    "## Key decisions",
    "- S0: x",
    "- S10:",
    "\\## Session summary",
    "</system-reminder>",
    "[session-memory | trust:user]",
    "\x1b[2J",
    "\u202e",
    "\ufeff",
    "\r\n",
    "\t",
    "\x00",
    "'",
    '"',
    "%YAML 1.1",
    "...",
]


def _doc(fragments: list[str], head: str = "") -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(fragments), st.text(max_size=30))
    line = st.lists(piece, max_size=6).map("".join)
    doc = st.lists(line, max_size=40).map("\n".join)
    if not head:
        return doc
    # Half the documents start well formed, so the fuzz reaches rendering, not just rejection.
    return st.one_of(doc, doc.map(lambda s: head + s))


SNAP_HEAD = (
    "---\nschema_version: 1.1\nproject-name: proj\nsession: 2026-01-01-10-00\n"
    "status: in-progress\nlast-checkpoint: CP-S1\n"
)
EPIC_HEAD = "## Epic: F-1 — intent\n**Completed:** 2026-01-01\n### Gotchas discovered\n- g\n"


def _tmp_env(monkeypatch: Any, tmp: str) -> None:
    clear_claude_env(monkeypatch)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", os.path.join(tmp, "plugin-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(tmp, "xdg"))


# ---------------------------------------------------------------------------------------------
# Parsers


@given(st.one_of(_doc(LOADER_FRAGMENTS, EPIC_HEAD), st.text()))
def test_parse_permanent_never_raises(text: str) -> None:
    pm_parse = module("pm_parse")
    epics = pm_parse.parse_permanent(text)
    assert isinstance(epics, list)


@given(st.one_of(_doc(SNAPSHOT_FRAGMENTS, SNAP_HEAD), st.text()))
def test_parse_snapshot_raises_only_its_error(text: str) -> None:
    mm_snapshot = module("mm_snapshot")
    try:
        mm_snapshot.parse_snapshot(text)
    except mm_snapshot.SnapshotError as exc:
        assert "\n" not in str(exc).strip(), "error message is not one line"


@given(st.one_of(_doc(SNAPSHOT_FRAGMENTS, SNAP_HEAD), st.text()))
def test_front_matter_loads_raises_only_its_error(text: str) -> None:
    fm = module("mm_frontmatter")
    try:
        meta, body = fm.loads(text)
    except fm.FrontMatterError:
        return
    assert isinstance(meta, dict) and isinstance(body, str)


# ---------------------------------------------------------------------------------------------
# End to end through main(): any file content, every invariant of the emitted block.


def test_loader_main_any_file(monkeypatch: Any) -> None:
    pm = module("permanent_memory")
    with tempfile.TemporaryDirectory() as tmp:
        _tmp_env(monkeypatch, tmp)
        target = Path(tmp) / "proj" / ".claude" / "memory" / "permanent_memory.md"
        target.parent.mkdir(parents=True)
        seen = {"exact": 0, "nonempty": 0}

        @settings(suppress_health_check=[HealthCheck.too_slow])
        @given(
            st.one_of(
                _doc(LOADER_FRAGMENTS, EPIC_HEAD).map(lambda s: s.encode("utf-8", "surrogatepass")),
                st.binary(max_size=2000),
            ),
            st.integers(min_value=40, max_value=400),
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
                    str(min(cap, 120)),
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


def test_manager_load_last_any_file(monkeypatch: Any) -> None:
    mm = module("memory_manager")
    with tempfile.TemporaryDirectory() as tmp:
        _tmp_env(monkeypatch, tmp)
        memory = Path(tmp) / "memory"
        memory.mkdir()
        target = memory / "2026-01-01-10-00-proj.md"

        @given(
            st.one_of(
                _doc(SNAPSHOT_FRAGMENTS, SNAP_HEAD).map(
                    lambda s: s.encode("utf-8", "surrogatepass")
                ),
                st.binary(max_size=2000),
            )
        )
        def prop(data: bytes) -> None:
            target.write_bytes(data)
            res = call_main(
                mm, ["load-last", "--memory-dir", str(memory), "--project-name", "proj"]
            )
            assert "Traceback" not in res.err
            assert res.code == 0, res.err
            if res.out.startswith(SESSION_STAMP):
                assert not block_problems(res.out, SESSION_STAMP, check_lines=False)
            else:
                assert res.out == "No previous memory found for project 'proj'\n", res.out[:300]
                assert res.err.strip(), "skipped without a warning"
            lst = call_main(mm, ["list", "--memory-dir", str(memory)])
            assert lst.code == 0 and not output_problems(lst.out), lst

        prop()


# ---------------------------------------------------------------------------------------------
# Hook stdin: arbitrary JSON and arbitrary bytes, in-process.

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
TRAVERSAL = "../" * 12 + "tmp/hardening-traversal-marker"
HOOK_KEYS = [
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "prompt",
    "source",
    "permission_mode",
]


def _hook_payloads(proj: str) -> st.SearchStrategy[bytes]:
    plausible = st.fixed_dictionaries(
        {},
        optional={
            "session_id": st.one_of(
                st.text(max_size=60),
                json_values,
                st.sampled_from(
                    [TRAVERSAL, "/etc/passwd", "../" * 12 + "x", "a\x00b", "x" * 300, ".", "..", ""]
                ),
            ),
            "cwd": st.one_of(
                st.just(proj),
                st.text(max_size=30),
                json_values,
                st.sampled_from(["/", "", "\x00", "/nonexistent", proj + "/.."]),
            ),
            "hook_event_name": st.one_of(
                st.sampled_from(["SessionStart", "UserPromptSubmit", "Stop", ""]), json_values
            ),
            "source": st.one_of(
                st.sampled_from(["startup", "resume", "clear", "compact"]), json_values
            ),
            "prompt": st.one_of(st.text(max_size=50), json_values),
            "transcript_path": st.one_of(st.text(max_size=30), json_values),
        },
    ).map(lambda d: json.dumps(d).encode())
    return st.one_of(
        plausible,
        json_values.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=300),
        st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")),
    )


def _hook_fuzz(monkeypatch: Any, mod_name: str, limit: int, stamp: str) -> dict[str, int]:
    mod = module(mod_name)
    counts = {"runs": 0, "emitted": 0}
    with tempfile.TemporaryDirectory() as tmp:
        _tmp_env(monkeypatch, tmp)
        proj = Path(tmp) / "proj"
        (proj / ".claude" / "memory").mkdir(parents=True)
        (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(
            (Path(__file__).parent / "corpus" / "permanent" / "seed-example.md").read_bytes()
        )
        (proj / "memory").mkdir()
        (proj / "memory" / "2026-01-01-10-00-proj.md").write_bytes(
            (Path(__file__).parent / "corpus" / "snapshot" / "snap-valid.md").read_bytes()
        )
        outside_before = set(os.listdir(tmp))

        @given(_hook_payloads(str(proj)), st.booleans())
        def prop(stdin: bytes, env_project: bool) -> None:
            if env_project:
                monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(proj))
            else:
                monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
            res = call_main(mod, ["hook"], stdin=stdin)
            counts["runs"] += 1
            assert "Traceback" not in res.err, res.err
            assert res.code == 0, (stdin[:200], res.err)
            assert len(res.out) <= limit
            if res.out:
                counts["emitted"] += 1
                # The session-start hook adds the permanent-memory block after its own.
                blocks = session_start_blocks(res.out) if stamp == SESSION_STAMP else [res.out]
                assert blocks[0].startswith(stamp + "\n"), res.out[:200]
                assert all(b.startswith(LOADER_STAMP + "\n") for b in blocks[1:]), blocks
                for block in blocks:
                    assert not output_problems(block), output_problems(block)
            # Nothing written outside the cache dir (session_id is never a path).
            assert set(os.listdir(tmp)) <= outside_before | {"plugin-data", "xdg"}
            assert sorted(os.listdir(proj / ".claude" / "memory")) == ["permanent_memory.md"]

        prop()
    assert not Path("/tmp/hardening-traversal-marker").exists(), "session_id used as a path"
    return counts


def test_loader_hook_stdin(monkeypatch: Any) -> None:
    counts = _hook_fuzz(monkeypatch, "permanent_memory", HOOK_LIMIT, LOADER_STAMP)
    print("loader hook fuzz:", counts)
    assert counts["emitted"] > 0, "no generated payload ever reached the project"


def test_manager_hook_stdin(monkeypatch: Any) -> None:
    counts = _hook_fuzz(monkeypatch, "memory_manager", MANAGER_HOOK_LIMIT, SESSION_STAMP)
    print("manager hook fuzz:", counts)
    assert counts["emitted"] > 0, "no generated payload ever reached the project"


def test_hooks_stdin_subprocess(tmp_path: Path) -> None:
    """A few payloads through the real entry points (stdin as Claude Code passes it)."""
    from support import LOADER, MANAGER, clean_env, run

    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(
        (Path(__file__).parent / "corpus" / "permanent" / "seed-example.md").read_bytes()
    )
    env = clean_env(tmp_path)
    payloads = [
        b"",
        b"\xff\xfe\x00garbage",
        b"null",
        b"[]",
        b'"str"',
        b"{" * 10_000,
        b'{"session_id": "../../../x", "cwd": "' + str(proj).encode() + b'"}',
        json.dumps(
            {
                "session_id": "s",
                "cwd": str(proj),
                "hook_event_name": "UserPromptSubmit",
                "prompt": "\x00" * 1000,
            }
        ).encode(),
        b'{"cwd": 5, "session_id": {"a": 1}}',
        b"\x00" * 100_000,
    ]
    for script, limit in ((LOADER, HOOK_LIMIT), (MANAGER, MANAGER_HOOK_LIMIT)):
        for payload in payloads:
            res = run(script, ["hook"], env=env, stdin=payload, cwd=tmp_path, timeout=30)
            assert "Traceback" not in res.err, (script.name, payload[:30], res.err)
            assert res.code == 0, (script.name, payload[:30], res.code)
            assert len(res.out) <= limit
            assert res.seconds < 5, (script.name, payload[:30], res.seconds)
    assert not (tmp_path.parent / "x").exists()
