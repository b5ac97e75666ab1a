# Hostile-input corpus (tests/corpus/cases.json): every case through every entry point that
# reads it, checked against the contract: no exception, the right exit code, bounded output,
# one stderr line when input is rejected, safe blocks.
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from ski_memory_manager.mm_snapshot import STAMP_LEN, parse_snapshot
from support import (
    HARD_CAP,
    HOOK_LIMIT,
    LOADER,
    LOADER_STAMP,
    MANAGER,
    MANAGER_HOOK_LIMIT,
    NOW,
    SESSION_STAMP,
    SNAP_NOW,
    Result,
    assert_no_traceback,
    block_problems,
    call_main,
    case_bytes,
    cases,
    clean_env,
    front_matter,
    is_lock_name,
    module,
    output_problems,
    run,
    snapshot_files,
    stderr_lines,
    token_count,
    tree_bytes,
)

PERMANENT = cases("permanent")
SEED_BYTES = (Path(__file__).parent / "corpus" / "permanent" / "seed-example.md").read_bytes()
SNAPSHOTS = cases("snapshot")
NAMES = cases("snapshot-names")
SAVES = cases("save-input")


def test_corpus_size() -> None:
    committed = [c for c in PERMANENT + SNAPSHOTS + SAVES if "file" in c]
    assert len(committed) >= 60
    for c in committed:
        assert (Path(__file__).parent / "corpus" / c["file"]).is_file(), c["id"]


# ---------------------------------------------------------------------------------------------
# Loader


def _project(tmp: Path, data: bytes) -> Path:
    proj = tmp / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(data)
    return proj


def _check_loader_block(res: Result, what: str, expect: dict[str, Any]) -> None:
    assert_no_traceback(res, what)
    assert res.code == 0, f"{what}: exit {res.code}, stderr {res.err[-500:]!r}"
    block = res.out
    if expect.get("output") == "stamp":
        assert block.startswith(LOADER_STAMP + "\n"), f"{what}: no stamp: {block[:200]!r}"
    if block:
        assert block.endswith("\n"), f"{what}: block does not end with a newline"
        problems = block_problems(block, LOADER_STAMP)
        assert not problems, f"{what}: {problems}\n{block[:1500]}"
        tokens, how = token_count(block)
        if how == "cl100k_base":
            assert tokens <= HARD_CAP, f"{what}: {tokens} tokens > {HARD_CAP}"
        assert len(block) <= HOOK_LIMIT


def _epic_line(block: str, eid: str) -> str | None:
    for line in block.split("\n"):
        if (
            line.startswith(f"Epic {eid} ")
            or f") Epic {eid} " in line
            or line.startswith(f"Epic {eid}:")
        ):
            return line
    return None


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("case", PERMANENT, ids=[c["id"] for c in PERMANENT])
def test_loader_case(case: dict[str, Any], tmp_path: Path) -> None:
    pm = module("project_memory_loader.permanent_memory")
    proj = _project(tmp_path, case_bytes(case, tmp_path))
    expect = case["expect"]
    start = time.monotonic()
    text = call_main(pm, ["load", "--project-dir", str(proj), "--now", NOW])
    elapsed = time.monotonic() - start
    _check_loader_block(text, "load", expect)
    assert elapsed < 20, f"load took {elapsed:.1f}s"

    block = text.out
    if "exact" in expect:
        assert block == expect["exact"]
    for eid in expect.get("epic_ids", []):
        assert _epic_line(block, eid), f"no Epic line for {eid}:\n{block}"
    for sub in expect.get("contains", []):
        assert sub in block, f"{sub!r} not in block:\n{block}"
    for sub in expect.get("absent", []):
        assert sub not in block, f"{sub!r} leaked into the block"
    for eid in expect.get("stale", []):
        line = _epic_line(block, eid)
        assert line and line.startswith("(>90d may be outdated) "), f"{eid} not stale: {line!r}"
    for eid in expect.get("not_stale", []):
        line = _epic_line(block, eid)
        assert line and not line.startswith("(>"), f"{eid} marked stale: {line!r}"
    if expect.get("skipped"):
        lines = block.rstrip("\n").split("\n")
        # The stamp, the notice, and the fix naming the skill's archive command.
        assert len(lines) == 3, f"over-8000-token file not skipped as a notice:\n{block[:500]}"
        assert "not loaded" in lines[1] and "archive command" in lines[2], lines[1:]

    js = call_main(pm, ["load", "--project-dir", str(proj), "--now", NOW, "--format", "json"])
    assert_no_traceback(js, "load --format json")
    assert js.code == 0, js.err
    if block:
        doc = json.loads(js.out)
        assert isinstance(doc, dict)
    for sub in expect.get("absent", []):
        assert sub not in js.out and sub not in text.err and sub not in js.err

    # Hooks (clock time, not --now): the block must be what `load` prints with the same clock.
    clock = call_main(pm, ["load", "--project-dir", str(proj)])
    for event, extra in (
        ("UserPromptSubmit", {"prompt": "hello"}),
        ("SessionStart", {"source": "startup"}),
    ):
        payload = {
            "session_id": f"corpus-{case['id']}-{event}",
            "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(proj),
            "hook_event_name": event,
            **extra,
        }
        hook = call_main(pm, ["hook"], stdin=json.dumps(payload).encode())
        assert_no_traceback(hook, f"hook {event}")
        assert hook.code == 0, f"hook {event} exit {hook.code}"
        assert len(hook.out) <= HOOK_LIMIT
        assert not block_problems(hook.out, LOADER_STAMP), block_problems(hook.out, LOADER_STAMP)
        assert hook.out == clock.out, f"hook {event} block differs from load's"
        for sub in expect.get("absent", []):
            assert sub not in hook.out and sub not in hook.err
    # Nothing written into the project (no cache, lock or state file in the user's repository).
    written = sorted(str(p.relative_to(proj)) for p in proj.rglob("*"))
    assert written == [".claude", ".claude/memory", ".claude/memory/permanent_memory.md"], written


SUBPROCESS_LOADER = [
    "seed-example",
    "random-bytes",
    "invalid-utf8",
    "utf16-le-bom",
    "file-50mb",
    "epics-10000",
    "single-line-1mb",
    "inject-system-reminder",
    "secrets-every-kind",
    "spaces-after-subsection-heading",
    "spaces-in-entries-60kb",
    "spaces-in-epic-heading-60kb",
    "spaces-in-completed-and-marker-60kb",
    "nested-stamps",
    "spaces-1mb",
    "newlines-900kb",
]


@pytest.mark.parametrize("cid", SUBPROCESS_LOADER)
def test_loader_case_subprocess(cid: str, tmp_path: Path) -> None:
    """The real entry point, as the plugin runs it: `python3 permanent_memory.py hook`."""
    case = next(c for c in PERMANENT if c["id"] == cid)
    proj = _project(tmp_path, case_bytes(case, tmp_path))
    env = clean_env(tmp_path)
    load = run(LOADER, ["load", "--project-dir", str(proj)], env=env, timeout=60)
    _check_loader_block(load, "load (subprocess)", case["expect"])
    payload = {
        "session_id": "s1",
        "cwd": str(proj),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "x",
    }
    for attempt in ("miss", "hit"):
        hook = run(
            LOADER, ["hook"], env=env, stdin=json.dumps(payload).encode(), cwd=tmp_path, timeout=60
        )
        assert_no_traceback(hook, f"hook ({attempt})")
        assert hook.code == 0
        # Claude Code's hook timeout is 5 s; a cache miss on a 50 MB file must still make it.
        assert hook.seconds < 5, f"hook {attempt} took {hook.seconds:.2f}s"
        if attempt == "miss":
            assert hook.out == load.out
            payload["session_id"] = "s2"
        else:
            assert hook.out == load.out


# ---------------------------------------------------------------------------------------------
# Manager: snapshots


def _check_session_block(out: str, what: str) -> None:
    lines = out.split("\n")
    assert lines[0] == SESSION_STAMP, f"{what}: first line {lines[0][:100]!r}"
    assert lines[1].startswith("Resuming `proj` (last touched "), f"{what}: {lines[1][:200]!r}"
    assert lines[2] == "", f"{what}: no blank line after the resume line"
    problems = block_problems(out, SESSION_STAMP, check_lines=False)
    assert not problems, f"{what}: {problems}"


def _manager_runs(mm: Any, proj: Path, memory: Path) -> dict[str, Result]:
    runs = {
        "load-last": call_main(
            mm,
            ["load-last", "--memory-dir", str(memory), "--project-name", "proj", "--now", SNAP_NOW],
        ),
        "load-last-json": call_main(
            mm,
            [
                "load-last",
                "--memory-dir",
                str(memory),
                "--project-name",
                "proj",
                "--now",
                SNAP_NOW,
                "--format",
                "json",
            ],
        ),
        "list": call_main(mm, ["list", "--memory-dir", str(memory)]),
        "list-project": call_main(
            mm, ["list", "--memory-dir", str(memory), "--project-name", "proj"]
        ),
        "list-json": call_main(mm, ["list", "--memory-dir", str(memory), "--format", "json"]),
    }
    payload = {
        "session_id": "m1",
        "cwd": str(proj),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    runs["hook"] = call_main(mm, ["hook"], stdin=json.dumps(payload).encode())
    for what, res in runs.items():
        assert_no_traceback(res, what)
        assert res.code == 0, f"{what}: exit {res.code}: {res.err[-400:]!r}"
        if what.endswith("json"):
            json.loads(res.out)
    assert len(runs["hook"].out) <= MANAGER_HOOK_LIMIT, len(runs["hook"].out)
    hook_out = runs["hook"].out
    assert not hook_out or hook_out.startswith(SESSION_STAMP + "\n"), hook_out[:200]
    for what in ("load-last", "list", "list-project", "hook"):
        bad = output_problems(runs[what].out)
        assert not bad, f"{what}: {bad}"
    return runs


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("case", SNAPSHOTS, ids=[c["id"] for c in SNAPSHOTS])
def test_snapshot_case(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mm = module("ski_memory_manager.memory_manager")
    monkeypatch.chdir(tmp_path)
    proj = tmp_path / "proj"
    memory = proj / "memory"
    memory.mkdir(parents=True)
    data = case_bytes(case, tmp_path)
    snap = memory / "2026-01-01-10-00-proj.md"
    snap.write_bytes(data)
    expect = case["expect"]
    start = time.monotonic()
    runs = _manager_runs(mm, proj, memory)
    elapsed = time.monotonic() - start
    assert elapsed < expect.get("max_seconds", 20), f"{elapsed:.1f}s"
    out, err = runs["load-last"].out, runs["load-last"].err
    skipped = out == "No previous memory found for project 'proj'\n"
    if expect["load_last"] == "shown":
        assert not skipped, f"valid snapshot skipped: {err!r}"
    if expect["load_last"] == "skipped":
        assert skipped, f"corrupt snapshot shown:\n{out[:600]}"
    if skipped:
        assert len(stderr_lines(err)) >= 1 and all(len(ln) < 500 for ln in stderr_lines(err)), (
            f"skipped without a one-line warning: {err!r}"
        )
    else:
        _check_session_block(out, "load-last")
        if "status" in expect:
            assert f"status: {expect['status']} at {expect['checkpoint']})" in out.split("\n")[1]
    for sub in expect.get("contains", []):
        assert sub in out, f"{sub!r} not in load-last output"
    for sub in expect.get("absent", []):
        for what, res in runs.items():
            assert sub not in res.out and sub not in res.err, f"{sub!r} leaked in {what}"
    if "no_file" in expect:
        assert not (tmp_path / expect["no_file"]).exists()
        assert not Path(expect["no_file"]).exists()
    # Reading never changes or adds files.
    assert snap.read_bytes() == data
    assert [p.name for p in memory.iterdir()] == [snap.name]


def _marked(marker: str) -> str:
    text = (Path(__file__).parent / "corpus" / "snapshot" / "snap-valid.md").read_text()
    return text.replace("MARKER-GOOD", marker)


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("case", NAMES, ids=[c["id"] for c in NAMES])
def test_snapshot_names(case: dict[str, Any], tmp_path: Path) -> None:
    mm = module("ski_memory_manager.memory_manager")
    proj = tmp_path / "proj"
    memory = proj / "memory"
    memory.mkdir(parents=True)
    markers = {}
    for i, spec in enumerate(case["files"]):
        name, _, flavour = spec.partition("=")
        marker = f"MARK-{i:02d}"
        if name.endswith("/"):
            (memory / name.rstrip("/")).mkdir()
            continue
        markers[name] = marker
        (memory / name).write_text("---\n: : [\n" if flavour == "corrupt" else _marked(marker))
    res = call_main(
        mm, ["load-last", "--memory-dir", str(memory), "--project-name", "proj", "--now", SNAP_NOW]
    )
    assert_no_traceback(res, "load-last")
    assert res.code == 0
    pick = case["expect"]["pick"]
    shown = [n for n, m in markers.items() if m in res.out]
    if pick is None:
        assert res.out == "No previous memory found for project 'proj'\n", res.out[:300]
    else:
        assert shown == [pick], f"showed {shown}, expected {pick}"
        _check_session_block(res.out, "load-last")
    if case["expect"].get("warn"):
        assert len(stderr_lines(res.err)) == 1, res.err
    _manager_runs(mm, proj, memory)


# ---------------------------------------------------------------------------------------------
# Manager: save --input


def _field_named(line: str, field: str) -> bool:
    variants = {field, field.replace("_", "-"), "--" + field.replace("_", "-")}
    if field == "checkpoint_decisions":
        variants |= {"option", "note", "regenerated_count", "checkpoint"}
    return any(v in line for v in variants)


@pytest.mark.usefixtures("isolated_env")
@pytest.mark.parametrize("case", SAVES, ids=[c["id"] for c in SAVES])
def test_save_input_case(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mm = module("ski_memory_manager.memory_manager")
    monkeypatch.chdir(tmp_path)
    memory = tmp_path / "memory"
    memory.mkdir()
    previous = memory / "2025-12-31-09-00-proj.md"
    previous.write_text(_marked("MARK-PREVIOUS"))
    before = {p.name: p.read_bytes() for p in memory.iterdir()}
    src = tmp_path / "input.json"
    src.write_bytes(case_bytes(case, tmp_path))
    res = call_main(mm, ["save", "--memory-dir", str(memory), "--input", str(src)])
    assert_no_traceback(res, "save")
    expect = case["expect"]
    after = {p.name: p.read_bytes() for p in memory.iterdir() if not is_lock_name(p.name)}
    assert after[previous.name] == before[previous.name], "an existing snapshot changed"
    result = {0: "accept", 1: "reject"}.get(res.code, f"exit {res.code}")
    if expect["result"] != "either":
        assert result == expect["result"], f"{result}: stderr {res.err!r}"
    assert result in ("accept", "reject"), f"{result}: stderr {res.err!r}"
    if result == "reject":
        lines = stderr_lines(res.err)
        assert len(lines) == 1, f"expected one stderr line, got {lines}"
        if "field" in expect:
            assert _field_named(lines[0], expect["field"]), (
                f"{expect['field']} not named: {lines[0]}"
            )
        assert after == before, f"rejected input wrote {set(after) - set(before)}"
        assert res.out == ""
    else:
        new = set(after) - set(before)
        assert len(new) == 1, f"accepted input wrote {new}"
        (name,) = new
        assert name.endswith("-proj.md")
        written = (memory / name).read_text(encoding="utf-8")
        meta = front_matter(written)
        assert isinstance(meta, dict)
        assert res.out.strip().endswith(name), res.out
        for key, value in expect.get("check", {}).items():
            assert meta[key] == value
        for sub in expect.get("absent", []):
            for path, data in tree_bytes(tmp_path):
                if path == src:
                    continue
                assert sub.encode() not in data, f"{sub!r} written to {path}"
            assert sub not in res.out and sub not in res.err
    # Nothing but snapshots in the memory dir (no temp or lock file left behind).
    leftovers = [n for n in after if n not in {p.name for p in snapshot_files(memory)}]
    assert not leftovers, leftovers


@pytest.mark.usefixtures("isolated_env")
def test_save_hostile_strings_round_trip(tmp_path: Path) -> None:
    """Valid hostile strings come back exactly through the manager's own parser and load-last."""
    mm = module("ski_memory_manager.memory_manager")
    memory = tmp_path / "memory"
    memory.mkdir()
    case = next(c for c in SAVES if c["id"] == "save-hostile-strings")
    data = json.loads(case_bytes(case, tmp_path))
    src = tmp_path / "in.json"
    src.write_text(json.dumps(data))
    res = call_main(mm, ["save", "--memory-dir", str(memory), "--input", str(src)])
    assert res.code == 0, res.err
    (snap,) = snapshot_files(memory)
    meta = front_matter(snap.read_text(encoding="utf-8"))
    assert meta["status"] == "in-progress"
    assert meta["checkpoints-approved"] == ["CP-S0", "CP-S1"]
    body = snap.read_text(encoding="utf-8").split("\n---\n", 1)[1]
    headings = [ln for ln in body.split("\n") if ln.startswith("## ")]
    assert headings == [
        "## Session summary",
        "## Steps completed",
        "## Active state",
        "## Key decisions",
    ], headings
    steps = [ln.split(":")[0] for ln in body.split("\n") if ln.startswith("- S")]
    assert steps[:3] == ["- S0", "- S2", "- S10"], steps


def test_save_stdin_rejections_subprocess(tmp_path: Path) -> None:
    """The real entry point with --input - : garbage on stdin is one line and exit 1."""
    memory = tmp_path / "memory"
    memory.mkdir()
    env = clean_env(tmp_path)
    for payload in (b"", b"\xff\xfe\x00", b"[1]", b'{"project_name": 5}', b"[" * 50_000):
        res = run(
            MANAGER,
            ["save", "--memory-dir", str(memory), "--input", "-"],
            env=env,
            stdin=payload,
            timeout=60,
        )
        assert_no_traceback(res, f"save --input - {payload[:20]!r}")
        assert res.code == 1, (payload[:20], res.code, res.err)
        assert len(stderr_lines(res.err)) == 1, res.err
    assert list(memory.iterdir()) == []
    missing = run(
        MANAGER,
        ["save", "--memory-dir", str(tmp_path / "nope"), "--project-name", "p"],
        env=env,
        timeout=60,
    )
    assert missing.code == 1
    assert missing.err == (
        f"memory directory not found at {tmp_path / 'nope'}\n"
        "to create it, run the same save again with --create-dir\n"
    )
    assert not (tmp_path / "nope").exists()


def test_block_sizes_measured_with_the_real_encoding() -> None:
    """The hard-cap checks above use tiktoken's cl100k_base loaded from the ranks file that an
    installed package ships (verified by hash); without it they would only bound bytes."""
    assert token_count("[permanent-memory | trust:file]\n") == (8, "cl100k_base")


def _wide_epics(long_intent: bool) -> str:
    """18 epics whose every subsection holds one 118-character line of long words: far more than
    10,000 characters at a 2000-token budget."""
    words = "configuration implementation documentation internationalization responsibilities"
    line = (words + " ") * 3
    intent = line[:60] if long_intent else "x"
    headings = (
        "Architectural decisions",
        "Gotchas discovered",
        "Anti-patterns to avoid",
        "Patterns that worked",
        "Conflicts encountered",
        "Tentative (low confidence)",
    )
    return "".join(
        f"## Epic: W-{i:03d} — {intent}\n**Completed:** 2026-11-01\n"
        + "".join(f"### {h}\n- {line[:118]}\n" for h in headings)
        for i in range(18)
    )


def test_loader_hook_bounded_at_the_largest_options(tmp_path: Path) -> None:
    """plugin.json allows a hard cap of 2000 tokens; wide lines of long words make that far more
    than 10,000 characters. The hook still stays under 10,000."""
    text = _wide_epics(long_intent=True)
    proj = _project(tmp_path, text.encode())
    env = clean_env(
        tmp_path, CLAUDE_PLUGIN_OPTION_HARD_CAP="2000", CLAUDE_PLUGIN_OPTION_TOKEN_TARGET="2000"
    )
    for event in ("UserPromptSubmit", "SessionStart"):
        res = run(
            LOADER,
            ["hook"],
            env=env,
            stdin=json.dumps(
                {"session_id": event, "cwd": str(proj), "hook_event_name": event}
            ).encode(),
        )
        assert_no_traceback(res, "hook")
        assert res.code == 0 and res.out.startswith(LOADER_STAMP)
        assert len(res.out) <= HOOK_LIMIT, len(res.out)
        tokens, how = token_count(res.out)
        assert how == "cl100k_base" and tokens <= 2000
        assert not block_problems(res.out, LOADER_STAMP)


def test_explain_reason_when_characters_decide(tmp_path: Path) -> None:
    """When the 9,000-character guard, not the token target, rules out L0-L2, the reported
    reason must not claim the chosen level is the first within the target (FINDINGS F11)."""
    text = _wide_epics(long_intent=False)
    proj = _project(tmp_path, text.encode())
    env = clean_env(tmp_path)
    args = ["load", "--project-dir", str(proj), "--hard-cap", "2000", "--target", "2000"]
    doc = json.loads(run(LOADER, [*args, "--format", "json"], env=env).out)
    within = [lv for lv in ("L0", "L1", "L2", "L3") if doc["levels"][lv]["tokens"] <= 2000]
    assert within and within[0] == "L0"
    if doc["level"] != within[0]:
        assert "first level within the target" not in doc["reason"], doc["reason"]
        explain = run(LOADER, [*args, "--explain"], env=env).err
        assert "first level within the target" not in explain, explain
        assert "a target of at least" not in explain, explain


def test_manager_hook_bounded_with_many_projects(tmp_path: Path) -> None:
    """Hundreds of projects with long names and long checkpoints: the SessionStart hook stays
    under 4,000 characters."""
    memory = tmp_path / "proj" / "memory"
    memory.mkdir(parents=True)
    good = (Path(__file__).parent / "corpus" / "snapshot" / "snap-valid.md").read_text()
    for i in range(300):
        name = f"p{i:03d}-" + "x" * 59
        text = good.replace("project-name: proj", f"project-name: {name}").replace(
            "last-checkpoint: CP-S2", "last-checkpoint: CP-" + "Z" * 60
        )
        (memory / f"2026-01-{1 + i % 28:02d}-10-{i % 60:02d}-{name}.md").write_text(text)
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(tmp_path / "proj"))
    res = run(
        MANAGER,
        ["hook"],
        env=env,
        stdin=json.dumps(
            {
                "session_id": "s",
                "hook_event_name": "SessionStart",
                "source": "startup",
                "cwd": str(tmp_path / "proj"),
            }
        ).encode(),
    )
    assert_no_traceback(res, "hook")
    assert res.code == 0 and res.out, res.err
    assert len(res.out) <= MANAGER_HOOK_LIMIT, len(res.out)
    assert not output_problems(res.out)


def _hook_start(proj: Path) -> bytes:
    return json.dumps(
        {
            "session_id": "s",
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": str(proj),
        }
    ).encode()


# A hostile memory/ for the SessionStart listing: each shape made the hook take seconds (or
# print megabytes on stderr) before it had a budget. The newest project's snapshot is readable
# and older than every hostile file, so the hook must get past them all to reach it.
def _dense_snapshots(memory: Path) -> None:
    for i in range(10):  # 230 KB of YAML each, under the 256 KiB read limit
        dense = "extra: [" + ",".join(["0"] * 115_000) + "]\n"
        (memory / f"2026-02-{10 + i:02d}-10-00-dense{i}.md").write_text(f"---\n{dense}---\n")


def _dangling_links(memory: Path) -> None:
    for i in range(20_000):  # named like snapshots of one project, newest first
        stamp = f"2026-03-{1 + i // 1440:02d}-{i // 60 % 24:02d}-{i % 60:02d}"
        (memory / f"{stamp}-dangling.md").symlink_to(memory / f"missing-{i}")


def _bad_values(memory: Path) -> None:
    for i, value in enumerate(["2026-02-30", "2026-01-01 25:00:00", "9" * 4301]):
        (memory / f"2026-02-0{1 + i}-10-00-bad{i}.md").write_text(
            f"---\nschema_version: 1.1\nupdated_at: {value}\n---\n## Session summary\nx\n"
        )


HOSTILE_LISTINGS = {
    "dense-230kb": _dense_snapshots,
    "dangling-links": _dangling_links,
    "impossible-values": _bad_values,
}


@pytest.mark.parametrize("shape", sorted(HOSTILE_LISTINGS))
def test_manager_hook_budget_on_a_hostile_memory_dir(shape: str, tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    memory = proj / "memory"
    memory.mkdir(parents=True)
    good = (Path(__file__).parent / "corpus" / "snapshot" / "snap-valid.md").read_text()
    (memory / "2026-01-05-10-00-proj.md").write_text(good)
    HOSTILE_LISTINGS[shape](memory)
    env = clean_env(tmp_path, CLAUDE_PROJECT_DIR=str(proj))
    res = run(MANAGER, ["hook"], env=env, stdin=_hook_start(proj))
    assert_no_traceback(res, "hook")
    assert res.code == 0
    # Generous: the budget is 1.5 s of reading; the hook's timeout is 5 s.
    assert res.seconds < 5, f"hook took {res.seconds:.1f}s"
    lines = stderr_lines(res.err)
    assert len(lines) <= 6, lines  # five warnings at most, then one line for the rest
    assert all(len(line) < 300 for line in lines), lines
    if shape == "impossible-values":  # small files: the budget lets the hook reach the good one
        assert SESSION_STAMP in res.out and "`proj`" in res.out, res.out
        assert len(lines) == 3 and all("invalid value in front matter" in x for x in lines)


@pytest.mark.parametrize("shape", sorted(HOSTILE_LISTINGS))
def test_commands_skip_each_hostile_snapshot_with_one_warning(shape: str, tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    HOSTILE_LISTINGS[shape](memory)
    names = sorted(p.name for p in memory.iterdir())
    env = clean_env(tmp_path)
    # list and doctor read every snapshot in full (linear, but dense YAML parses slowly: the
    # dense shape is the hook's budget to keep, not theirs).
    for argv in () if shape == "dense-230kb" else (["list"], ["doctor"]):
        res = run(MANAGER, [*argv, "--memory-dir", str(memory)], env=env, timeout=600)
        assert_no_traceback(res, argv[0])
        assert res.code in (0, 1) and len(stderr_lines(res.err)) <= 2 * len(names) + 1, res.err
    if shape == "impossible-values":
        for name in names:
            project = name[STAMP_LEN + 1 : -len(".md")]
            res = run(
                MANAGER,
                ["load-last", "--memory-dir", str(memory), "--project-name", project],
                env=env,
            )
            assert_no_traceback(res, "load-last")
            assert res.code == 0
            assert res.out == f"No previous memory found for project '{project}'\n"
            warning, summary = stderr_lines(res.err)
            assert warning.startswith(f"warning: skipping {name}: invalid value in front matter")
            assert summary == f"warning: no readable snapshot for project '{project}' (1 skipped)"
            # save refuses to update the unreadable file, and says why, in one line
            res = run(
                MANAGER,
                [
                    *("save", "--memory-dir", str(memory), "--project-name", project),
                    *("--session-timestamp", name[:STAMP_LEN], "--input", "-"),
                ],
                env=env,
                stdin=b'{"session_summary": "s", "mode": "architect", "status": "paused"}',
            )
            assert_no_traceback(res, "save")
            assert res.code == 1 and len(stderr_lines(res.err)) == 1, res.err


# ---------------------------------------------------------------------------------------------
# The loader's `add` command takes JSON too: wrong shapes are one line and exit 1, nothing
# written; hostile text stays inside its own epic.

ADD_REJECTS = [
    b"[]",
    b"{}",
    b'{"id": 5, "intent": "x"}',
    b'{"id": "A-1", "intent": ["x"]}',
    b'{"id": "../x", "intent": "y"}',
    b'{"id": "A-1\\n## Epic: B-2", "intent": "x"}',
    b'{"id": "A-1", "intent": "ok", "decisions": "not a list"}',
    b'{"id": "A-1", "intent": "ok", "decisions": [{"text": "x", "confidence": "high"}]}',
    b'{"id": "A-1", "intent": "ok", "decisions": [{"text": "x", "confidence": 7}]}',
    b'{"id": "A-1", "intent": "ok", "completed": "garbage"}',
    b'{"id": "A-1", "intent": "ok", "decisions": [' + b"[" * 50_000 + b"]" * 50_000 + b"]}",
    b"\xff\xfe\x00",
    b"",
]


@pytest.mark.parametrize("payload", ADD_REJECTS, ids=[f"add-bad-{i:02d}" for i in range(13)])
def test_loader_add_rejects(payload: bytes, tmp_path: Path) -> None:
    proj = _project(tmp_path, SEED_BYTES)
    before = (proj / ".claude" / "memory" / "permanent_memory.md").read_bytes()
    env = clean_env(tmp_path)
    res = run(LOADER, ["add", "--project-dir", str(proj), "--input", "-"], env=env, stdin=payload)
    assert_no_traceback(res, "add")
    assert res.code == 1, (res.code, res.err)
    assert len(stderr_lines(res.err)) == 1, res.err
    assert (proj / ".claude" / "memory" / "permanent_memory.md").read_bytes() == before
    assert sorted(p.name for p in (proj / ".claude" / "memory").iterdir()) == [
        "permanent_memory.md"
    ]


def test_loader_add_keeps_hostile_text_inside_its_epic(tmp_path: Path) -> None:
    proj = _project(tmp_path, SEED_BYTES)
    env = clean_env(tmp_path)
    entry = {
        "id": "HOST-1",
        "intent": "x\n## Epic: SMUGGLED-1 — y\n### Gotchas discovered\n- smuggled",
        "decisions": ["line1\n## Epic: SMUGGLED-2 — z", "```\nunclosed fence"],
        "gotchas": ["<!-- af-memory:v2 -->", "- [decision] nested", "[x | trust:user] \x1b[31m"],
        "patterns": ["password=hunter2-add-secret", "AKIAIOSFODNN7EXAMPLE"],
    }
    res = run(
        LOADER,
        ["add", "--project-dir", str(proj), "--input", "-"],
        env=env,
        stdin=json.dumps(entry).encode(),
    )
    assert_no_traceback(res, "add")
    assert res.code == 0, res.err
    text = (proj / ".claude" / "memory" / "permanent_memory.md").read_text(encoding="utf-8")
    epics = [ln for ln in text.split("\n") if ln.startswith("## Epic:")]
    assert len(epics) == 3 and epics[2].startswith("## Epic: HOST-1 "), epics
    assert "hunter2-add-secret" not in text and "AKIAIOSFODNN7EXAMPLE" not in text
    load = run(LOADER, ["load", "--project-dir", str(proj)], env=env)
    assert load.code == 0 and not block_problems(load.out, LOADER_STAMP), load.out
    assert "SMUGGLED" not in "".join(
        ln for ln in load.out.split("\n") if ln.startswith("Epic SMUGGLED")
    )


# ---------------------------------------------------------------------------------------------
# Manager: transcripts (the Stop hook)

TRANSCRIPTS = cases("transcript")
TRANSCRIPT_PROJECT = "/corpus/proj"  # the project the cases' paths are in (build_corpus.PROJ)


@pytest.mark.parametrize("case", TRANSCRIPTS, ids=[c["id"] for c in TRANSCRIPTS])
def test_transcript_case(case: dict[str, Any], isolated_env: Path) -> None:
    from ski_memory_manager import memory_manager, mm_capture, mm_session

    transcript = isolated_env / "transcript.jsonl"
    transcript.write_bytes(case_bytes(case, isolated_env))
    payload = {
        "session_id": f"corpus-{case['id']}",
        "transcript_path": str(transcript),
        "cwd": TRANSCRIPT_PROJECT,
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    began = time.monotonic()
    res = call_main(memory_manager, ["hook"], json.dumps(payload).encode(), raw=True)
    assert time.monotonic() - began < 1.5, case["id"]
    assert (res.code, res.out) == (0, ""), case["id"]
    assert_no_traceback(res, case["id"])
    assert len(stderr_lines(res.err)) <= 1, res.err
    folder = mm_session.captured_dir(os.environ, TRANSCRIPT_PROJECT)
    assert folder is not None
    written = sorted(Path(folder).glob("*.md")) if Path(folder).is_dir() else []
    expect = case["expect"]
    assert len(written) == (1 if expect["snapshot"] else 0), (case["id"], written)
    if not written:
        return
    text = written[0].read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= mm_capture.MAX_BYTES, case["id"]
    for needle in expect.get("contains", []):
        assert needle in text, (case["id"], needle, text)
    for needle in expect.get("absent", []):
        assert needle not in text, (case["id"], needle, text)
    # Whatever the transcript said, the file reads back as this format, with no key decision
    # (nothing a transcript says is taken for one).
    parsed = parse_snapshot(text)
    assert parsed.schema_version == 1.1 and not parsed.key_decisions, case["id"]
    start = {**payload, "session_id": "corpus-next", "hook_event_name": "SessionStart"}
    start["source"] = "startup"
    res = call_main(memory_manager, ["hook"], json.dumps(start).encode(), raw=True)
    assert res.code == 0
    block = json.loads(res.out)["hookSpecificOutput"]["additionalContext"]
    block = block.split(LOADER_STAMP + "\n", 1)[0]
    assert block.startswith(SESSION_STAMP + "\nResuming `proj` (from the session that ended ")
    problems = block_problems(block, SESSION_STAMP, check_lines=False)
    assert not problems, (case["id"], problems)


# ---------------------------------------------------------------------------------------------
# Manager and loader: compaction summaries with lessons (PostCompact keeps them as proposals)

SUMMARIES = cases("summary")


@pytest.mark.parametrize("case", SUMMARIES, ids=[c["id"] for c in SUMMARIES])
def test_summary_case(case: dict[str, Any], isolated_env: Path) -> None:
    from project_memory_loader.writing import pm_proposals, pm_waiting
    from ski_memory_manager import memory_manager

    project = isolated_env / "proj"
    project.mkdir()
    payload = {
        "session_id": f"corpus-{case['id']}",
        "cwd": str(project),
        "hook_event_name": "PostCompact",
        "trigger": "auto",
        "compact_summary": case_bytes(case, isolated_env).decode("utf-8"),
    }
    began = time.monotonic()
    res = call_main(memory_manager, ["hook"], json.dumps(payload).encode(), raw=True)
    assert time.monotonic() - began < 3, case["id"]
    assert (res.code, res.out) == (0, ""), case["id"]
    assert_no_traceback(res, case["id"])
    assert len(stderr_lines(res.err)) <= 2, res.err
    folder = pm_waiting.store_dir(os.environ, str(project))
    assert folder is not None
    kept = pm_proposals.read_store(folder) if Path(folder).is_dir() else []
    assert len(kept) == case["expect"]["proposals"], (case["id"], kept)
    store = json.dumps(kept, ensure_ascii=False)
    for item in kept:
        lines = "\n".join(["lesson", item["text"], *item["files"]])
        assert not block_problems(lines, "lesson", check_lines=False), item
        assert all(not f.startswith(("/", "../", "~")) for f in item["files"]), item
    for needle in case["expect"].get("contains", []):
        assert needle in store, (case["id"], needle)
    for needle in case["expect"].get("absent", []):
        assert needle not in store, (case["id"], needle)
    # Nothing in the project: the capture and the proposals are in the user's cache folder.
    assert sorted(project.rglob("*")) == []
