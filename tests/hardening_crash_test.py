# Crash safety: `save` subprocesses killed with SIGKILL at random moments, hundreds of times.
# Afterwards every snapshot parses, each is exactly one version some save wrote (never a blend
# or a prefix), no save that finished was lost, and load-last never shows a temp file.
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support import (
    MANAGER,
    SESSION_STAMP,
    SNAPSHOT_NAME,
    call_main,
    clean_env,
    front_matter,
    module,
    snapshot_files,
)

KILLS = int(os.environ.get("HARDENING_KILLS", "200"))
BUDGET_SECONDS = 75.0
SESSION_A = "2026-01-01-10-00"
SESSION_B_PREFIX = "2026-02-"
SECTIONS = ["## Session summary", "## Steps completed", "## Active state", "## Key decisions"]


def _payload(session: str, tag: str, step: int) -> dict[str, Any]:
    return {
        "project_name": "proj",
        "session_timestamp": session,
        "mode": "architect",
        "status": "in-progress",
        "last_checkpoint": f"CP-S{step}",
        "checkpoints_approved": [f"CP-S{step}"],
        "checkpoint_decisions": {f"CP-S{step}": {"option": "A", "note": tag}},
        "session_summary": f"summary {tag}",
        "steps_completed": {f"S{step}": tag},
        "active_state": f"state {tag}",
        "key_decisions": [f"decision {tag}"],
    }


def _check_snapshot(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    meta = front_matter(text)
    assert isinstance(meta, dict), f"{path.name}: front matter is {type(meta).__name__}"
    body = text.split("\n---\n", 1)[1]
    headings = [ln for ln in body.split("\n") if ln.startswith("## ")]
    assert headings == SECTIONS, f"{path.name}: partial body, headings {headings}"
    summary = body.split("## Session summary\n", 1)[1].split("\n## ", 1)[0].strip()
    steps = {}
    for ln in body.split("## Steps completed\n", 1)[1].split("\n## ", 1)[0].split("\n"):
        if ln.startswith("- S"):
            key, _, value = ln[2:].partition(": ")
            steps[key] = value
    return {"meta": meta, "summary": summary, "steps": steps, "text": text}


def test_sigkill_save_campaign(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    env = clean_env(tmp_path)
    rng = random.Random(int(os.environ.get("HARDENING_SEED", "20260601")))
    cmd = [sys.executable, str(MANAGER), "save", "--memory-dir", str(memory), "--input"]

    def write_input(payload: dict[str, Any]) -> Path:
        p = inputs / f"{payload['session_timestamp']}-{payload['session_summary'][8:]}.json"
        p.write_text(json.dumps(payload))
        return p

    # The first version of session A, and how long an uninterrupted save takes here.
    start = time.monotonic()
    first = subprocess.run(
        [*cmd, str(write_input(_payload(SESSION_A, "R0-P0", 0)))],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    window = time.monotonic() - start
    assert first.returncode == 0, first.stderr
    committed_steps = {"S0": "R0-P0"}  # steps of saves that exited 0: must never be lost
    attempted = {"R0-P0"}  # every tag some save was asked to write
    created_b: dict[str, str] = {}  # session B timestamp -> tag of its (single) save
    kills = rounds = kills_in_window = windows_seen = 0
    leftover_names: set[str] = set()
    load_last_checks = 0
    mm = module("memory_manager")
    deadline = time.monotonic() + BUDGET_SECONDS
    step = 1
    # Kill delays are drawn from [0, scale). The scale adapts so that about a third of the saves
    # finish: kills then land all through a save's life, its write window included.
    scale = window * 1.3
    finished = started = 0

    while kills < KILLS and time.monotonic() < deadline:
        rounds += 1
        procs: list[tuple[subprocess.Popen[bytes], str, str, float]] = []
        # Three concurrent updates of session A and one creation of a new session B.
        for k in range(3):
            tag = f"R{rounds}-P{k}"
            procs.append(
                (
                    subprocess.Popen(
                        [*cmd, str(write_input(_payload(SESSION_A, tag, step)))],
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=subprocess.PIPE,
                    ),
                    tag,
                    f"S{step}",
                    rng.uniform(0, scale),
                )
            )
            attempted.add(tag)
            step += 1
        session_b = (
            f"{SESSION_B_PREFIX}{1 + rounds // 24 % 28:02d}-{rounds % 24:02d}-{rounds % 60:02d}"
        )
        tag_b = f"R{rounds}-B"
        procs.append(
            (
                subprocess.Popen(
                    [*cmd, str(write_input(_payload(session_b, tag_b, 0)))],
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                ),
                tag_b,
                "S0",
                rng.uniform(0, scale),
            )
        )
        t0 = time.monotonic()
        if rounds % 2:
            # Random moments: each save killed at its own random delay.
            for proc, _tag, _key, delay in sorted(procs, key=lambda p: p[3]):
                time.sleep(max(0.0, t0 + delay - time.monotonic()))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
        else:
            # Inside the write window: watch the directory and kill every save still running
            # the moment any file that is not a snapshot (a temp file) shows up.
            known = {p.name for p in memory.iterdir()}
            while time.monotonic() - t0 < 10 and any(p[0].poll() is None for p in procs):
                fresh = [
                    e.name
                    for e in os.scandir(memory)
                    if e.name not in known and not SNAPSHOT_NAME.match(e.name)
                ]
                if fresh:
                    hit = 0
                    for proc, *_ in procs:
                        if proc.poll() is None:
                            proc.send_signal(signal.SIGKILL)
                            kills += 1
                            hit += 1
                    kills_in_window += hit
                    windows_seen += 1
                    break
        for proc, tag, key, _ in procs:
            proc.wait(timeout=60)
            started += 1
            finished += proc.returncode == 0
            err = proc.stderr.read().decode() if proc.stderr else ""
            if proc.stderr:
                proc.stderr.close()
            assert "Traceback" not in err, err
            if proc.returncode == 0:
                if tag.endswith("-B"):
                    created_b[session_b] = tag
                else:
                    committed_steps[key] = tag
            elif proc.returncode != -signal.SIGKILL:
                raise AssertionError(f"save {tag} failed on its own: {proc.returncode} {err!r}")

        if rounds % 10 == 0:
            scale *= 1.25 if finished < started / 3 else 0.8
            finished = started = 0

        # Invariants after every round.
        names = {p.name for p in memory.iterdir()}
        leftover_names |= {n for n in names if not SNAPSHOT_NAME.match(n)}
        a = _check_snapshot(memory / f"{SESSION_A}-proj.md")
        tag_a = a["summary"].removeprefix("summary ")
        assert tag_a in attempted, f"session A summary {a['summary']!r} was never written"
        # Atomic: the version whose summary is X also holds X's step, decision and state.
        assert tag_a in a["steps"].values(), f"summary {tag_a} without its step: blended file"
        assert a["meta"]["checkpoint_decisions"][a["meta"]["last-checkpoint"]]["note"] == tag_a
        assert f"state {tag_a}" in a["text"]
        lost = {k: v for k, v in committed_steps.items() if a["steps"].get(k) != v}
        assert not lost, f"finished saves lost: {sorted(lost)[:10]}"
        for snap in snapshot_files(memory):
            if snap.name.startswith(SESSION_B_PREFIX):
                b = _check_snapshot(snap)
                assert b["summary"].startswith("summary R") and b["summary"].endswith("-B")
        if rounds % 10 == 0:
            res = call_main(
                mm, ["load-last", "--memory-dir", str(memory), "--project-name", "proj"]
            )
            assert res.code == 0 and "Traceback" not in res.err
            lines = res.out.split("\n")
            assert lines[0] == SESSION_STAMP and lines[1].startswith("Resuming `proj`"), res.out[
                :300
            ]
            shown = "\n".join(lines[3:])
            meta = front_matter(shown)
            assert isinstance(meta, dict), "load-last showed no snapshot"
            on_disk = {s.name[:16] for s in snapshot_files(memory)}
            assert str(meta.get("session")) in on_disk, f"load-last showed {meta.get('session')}"
            assert [ln for ln in shown.split("\n") if ln.startswith("## ")] == SECTIONS
            load_last_checks += 1
    for session, tag in created_b.items():
        b = _check_snapshot(memory / f"{session}-proj.md")
        assert b["summary"] == f"summary {tag}"

    # A save after all those kills still goes through at once (no stale lock left behind).
    t = time.monotonic()
    final = subprocess.run(
        [*cmd, str(write_input(_payload(SESSION_A, "FINAL-P0", step)))],
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert final.returncode == 0, final.stderr
    assert time.monotonic() - t < 10
    a = _check_snapshot(memory / f"{SESSION_A}-proj.md")
    assert a["steps"][f"S{step}"] == "FINAL-P0"
    assert all(a["steps"].get(k) == v for k, v in committed_steps.items())
    report = {
        "kills": kills,
        "kills_while_a_temp_file_existed": kills_in_window,
        "write_windows_caught": windows_seen,
        "rounds": rounds,
        "committed_updates": len(committed_steps),
        "sessions_created": len(created_b),
        "leftover_temp_files": len([n for n in leftover_names if not n.endswith(".lock")]),
        "leftover_other_files": sorted(n for n in leftover_names if ".tmp-" not in n),
        "load_last_checks": load_last_checks,
        "save_seconds": round(window, 3),
        "final_kill_scale_seconds": round(scale, 3),
    }
    print("crash campaign:", json.dumps(report))
    (tmp_path / "report.json").write_text(json.dumps(report))
    assert kills >= KILLS, f"only {kills} kills in {BUDGET_SECONDS}s"


# ---------------------------------------------------------------------------------------------
# The loader's writing commands: `archive` moves epics between two files and `add` rewrites the
# memory file. Killed at random moments, or the moment a temp file appears, no epic may be lost
# or torn, and a rerun must finish the job without duplicating anything.

ARCHIVE_KILLS = int(os.environ.get("HARDENING_ARCHIVE_KILLS", "60"))


def _epic_sections(text: str) -> dict[str, str]:
    import re

    parts = re.split(r"(?m)^(?=## Epic: )", text)
    out: dict[str, str] = {}
    for part in parts:
        if part.startswith("## Epic: "):
            eid = part.split()[2]
            assert eid not in out, f"epic {eid} twice in one file"
            out[eid] = part.rstrip("\n")
    return out


def _original_memory() -> str:
    body = " ".join(["decision"] * 60)
    return "".join(
        f"## Epic: E-{i:03d} — intent {i}\n"
        f"**Completed:** 2025-{1 + i % 12:02d}-{1 + i % 28:02d}\n\n"
        f"### Architectural decisions\n- {body} {i}\n\n### Gotchas discovered\n- gotcha {i}\n\n"
        for i in range(60)
    )


def _memory_state(memdir: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(epics in the memory file, epics in its archive files), by ID."""
    kept = _epic_sections((memdir / "permanent_memory.md").read_text(encoding="utf-8"))
    archived: dict[str, str] = {}
    folder = memdir / "archive"
    for f in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        for eid, text in _epic_sections(f.read_text(encoding="utf-8")).items():
            assert eid not in archived, f"{eid} archived twice"
            archived[eid] = text
    return kept, archived


def test_sigkill_archive_and_add_campaign(tmp_path: Path) -> None:
    from support import LOADER

    env = clean_env(tmp_path)
    rng = random.Random(int(os.environ.get("HARDENING_SEED", "20260601")) + 1)
    original = _original_memory()
    sections = _epic_sections(original)
    kills = rounds = windows = finished = 0
    scale = 0.4
    deadline = time.monotonic() + 60
    while kills < ARCHIVE_KILLS and time.monotonic() < deadline:
        rounds += 1
        proj = tmp_path / f"p{rounds}"
        memdir = proj / ".claude" / "memory"
        memdir.mkdir(parents=True)
        main = memdir / "permanent_memory.md"
        main.write_text(original, encoding="utf-8")
        new_epic = tmp_path / f"add{rounds}.json"
        new_epic.write_text(
            json.dumps(
                {
                    "id": f"NEW-{rounds}",
                    "intent": "added",
                    "decisions": [f"added in round {rounds}"],
                }
            )
        )
        base = [sys.executable, str(LOADER)]
        common = ["--project-dir", str(proj), "--tokenizer", "estimate"]
        procs = [
            subprocess.Popen(
                [*base, "archive", *common, "--max-tokens", "4000"],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            ),
            subprocess.Popen(
                [*base, "add", *common, "--input", str(new_epic)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            ),
        ]
        t0 = time.monotonic()
        if rounds % 2:
            for proc, delay in sorted(
                ((p, rng.uniform(0, scale)) for p in procs), key=lambda x: x[1]
            ):
                time.sleep(max(0.0, t0 + delay - time.monotonic()))
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    kills += 1
        else:
            while time.monotonic() - t0 < 10 and any(p.poll() is None for p in procs):
                names = [
                    e.name
                    for root in (memdir, memdir / "archive")
                    if root.is_dir()
                    for e in os.scandir(root)
                    if ".tmp-" in e.name
                ]
                if names:
                    for proc in procs:
                        if proc.poll() is None:
                            proc.send_signal(signal.SIGKILL)
                            kills += 1
                    windows += 1
                    break
        codes = []
        for proc in procs:
            proc.wait(timeout=60)
            err = proc.stderr.read().decode() if proc.stderr else ""
            if proc.stderr:
                proc.stderr.close()
            assert "Traceback" not in err, err
            assert proc.returncode in (0, -signal.SIGKILL), (proc.returncode, err)
            codes.append(proc.returncode)
        finished += codes.count(0)
        if rounds % 6 == 0:
            scale *= 1.3 if finished < rounds * 2 / 3 else 0.8

        kept, archived = _memory_state(memdir)
        for eid, text in {**kept, **archived}.items():
            if eid.startswith("NEW-"):
                assert "added in round" in text, f"torn added epic: {text!r}"
            else:
                assert text == sections[eid], f"epic {eid} torn or altered"
        assert set(sections) <= set(kept) | set(archived), "an epic was lost"
        if codes[1] == 0:
            assert f"NEW-{rounds}" in set(kept) | set(archived), "a finished add was lost"
        # A rerun finishes the job without duplicating anything.
        rerun = subprocess.run(
            [*base, "archive", *common, "--max-tokens", "4000"],
            env=env,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert rerun.returncode == 0, rerun.stderr
        kept, archived = _memory_state(memdir)
        assert not set(kept) & set(archived), f"in both files: {sorted(set(kept) & set(archived))}"
        assert set(sections) <= set(kept) | set(archived)
    print(
        "archive/add crash campaign:",
        json.dumps(
            {
                "kills": kills,
                "rounds": rounds,
                "write_windows_caught": windows,
                "finished": finished,
            }
        ),
    )
    assert kills >= ARCHIVE_KILLS, f"only {kills} kills"
