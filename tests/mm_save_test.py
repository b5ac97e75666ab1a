# save under crashes and contention: `save` subprocesses killed with SIGKILL at random moments,
# hundreds of times (afterwards every snapshot parses, each is exactly one version some save
# wrote, never a blend or a prefix, no save that finished was lost, and load-last never shows a
# temp file); and 8 processes x 50 saves (half merging into one shared session, half into each
# process's own session of the same project) while readers loop load-last (no merge may be lost
# and no reader may ever see a partial file).
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

from conftest import MANAGER_DIR
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
# Parallel sessions.

TESTS_DIR = Path(__file__).resolve().parent
WRITERS = 8
SAVES = 50
READERS = 2
SHARED = "2026-03-31-09-00"  # newest, so readers read the contended file

WRITER = r"""
import json, sys, time
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import support
import memory_manager
memory, p, saves, shared = Path(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
own = f"2026-03-{p + 2:02d}-10-00"
done, failures = [], []
for k in range(saves):
    n = p * 1000 + k
    session = shared if k % 2 == 0 else own
    payload = {
        "project_name": "proj", "session_timestamp": session, "mode": "express",
        "status": "in-progress", "last_checkpoint": f"CP-S{n}",
        "checkpoints_approved": [f"CP-S{n}"],
        "checkpoint_decisions": {f"CP-S{n}": {"option": "ABCD"[k % 4], "note": f"p{p}k{k}"}},
        "steps_completed": {f"S{n}": f"p{p}k{k}"},
        "session_summary": f"writer {p} save {k}",
    }
    src = memory.parent / f"in-{p}-{k}.json"
    src.write_text(json.dumps(payload))
    argv = ["save", "--memory-dir", str(memory), "--input", str(src)]
    res = support.call_main(memory_manager, argv)
    if res.code == 0:
        done.append([session, f"S{n}", f"CP-S{n}", f"p{p}k{k}"])
    else:
        failures.append([session, n, res.code, res.err[-300:]])
print(json.dumps({"done": done, "failures": failures}))
"""

READER = r"""
import json, sys, time
from pathlib import Path
sys.path[:0] = [sys.argv[1], sys.argv[2]]
import support
import memory_manager
memory, stop = Path(sys.argv[3]), Path(sys.argv[4])
reads, bad, sessions = 0, [], set()
raw_reads = 0
while not stop.exists():
    # Every snapshot file on disk, read directly: complete and parseable at every moment.
    for path in support.snapshot_files(memory):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        raw_reads += 1
        try:
            meta = support.front_matter(text)
            assert isinstance(meta, dict), type(meta)
            heads = [ln for ln in text.split("\n") if ln.startswith("## ")]
            assert heads[-4:] == ["## Session summary", "## Steps completed", "## Active state",
                                  "## Key decisions"], heads
        except Exception as exc:
            bad.append(["raw-partial", path.name, repr(exc)[:300]])
    res = support.call_main(memory_manager, ["load-last", "--memory-dir", str(memory),
                                        "--project-name", "proj"])
    reads += 1
    if res.code != 0 or "Traceback" in res.err:
        bad.append(["exit", res.code, res.err[-300:]]); continue
    if res.out.startswith("No previous memory"):
        continue
    lines = res.out.split("\n")
    try:
        assert lines[0] == support.SESSION_STAMP, lines[0]
        assert lines[1].startswith("Resuming `proj` (last touched "), lines[1]
        shown = "\n".join(lines[3:])
        meta = support.front_matter(shown)
        assert isinstance(meta, dict), type(meta)
        heads = [ln for ln in shown.split("\n") if ln.startswith("## ")]
        assert heads == ["## Session summary", "## Steps completed", "## Active state",
                         "## Key decisions"], heads
        sessions.add(str(meta["session"]))
    except Exception as exc:
        bad.append(["partial", repr(exc)[:300], res.out[:300]])
    time.sleep(0.005)  # leave the two shared cores mostly to the writers
print(json.dumps({"reads": reads, "raw_reads": raw_reads, "bad": bad[:20], "bad_count": len(bad),
                  "sessions": sorted(sessions)}))
"""


def _steps(text: str) -> dict[str, str]:
    body = text.split("## Steps completed\n", 1)[1].split("\n## ", 1)[0]
    out = {}
    for ln in body.split("\n"):
        if ln.startswith("- S"):
            key, _, value = ln[2:].partition(": ")
            out[key] = value
    return out


def test_eight_writers_fifty_saves_with_readers(tmp_path: Path) -> None:
    from support import front_matter, snapshot_files

    memory = tmp_path / "memory"
    memory.mkdir()
    stop = tmp_path / "stop"
    env = clean_env(tmp_path)
    common = [sys.executable, "-c"]
    paths = [str(TESTS_DIR), str(MANAGER_DIR)]
    start = time.monotonic()
    readers = [
        subprocess.Popen(
            [*common, READER, *paths, str(memory), str(stop)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(READERS)
    ]
    writers = [
        subprocess.Popen(
            [*common, WRITER, *paths, str(memory), str(p), str(SAVES), SHARED],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for p in range(WRITERS)
    ]
    results = []
    try:
        for w in writers:
            out, err = w.communicate(timeout=240)
            assert w.returncode == 0, err.decode()[-2000:]
            results.append(json.loads(out))
    finally:
        stop.touch()
        for proc in writers:
            if proc.poll() is None:
                proc.kill()
    reader_results = []
    for r in readers:
        out, err = r.communicate(timeout=60)
        assert r.returncode == 0, err.decode()[-2000:]
        reader_results.append(json.loads(out))
    elapsed = time.monotonic() - start

    failures = [f for r in results for f in r["failures"]]
    assert not failures, f"{len(failures)} saves failed: {failures[:5]}"
    done = [d for r in results for d in r["done"]]
    assert len(done) == WRITERS * SAVES

    by_session: dict[str, list[list[str]]] = {}
    for d in done:
        by_session.setdefault(d[0], []).append(d)
    files = {p.name[:16]: p for p in snapshot_files(memory)}
    assert set(files) == set(by_session), (sorted(files), sorted(by_session))
    for session, writes in by_session.items():
        text = files[session].read_text(encoding="utf-8")
        meta = front_matter(text)
        steps = _steps(text)
        missing_steps = [w[1] for w in writes if steps.get(w[1]) != w[3]]
        assert not missing_steps, f"{session}: {len(missing_steps)} steps lost: {missing_steps[:8]}"
        decisions = meta["checkpoint_decisions"]
        missing_cp = [w[2] for w in writes if decisions.get(w[2], {}).get("note") != w[3]]
        assert not missing_cp, f"{session}: {len(missing_cp)} decisions lost: {missing_cp[:8]}"
        approved = meta["checkpoints-approved"]
        assert set(approved) >= {w[2] for w in writes}, f"{session}: approvals lost"
        assert len(approved) == len(set(approved)), f"{session}: duplicate approvals"
    leftovers = sorted(p.name for p in memory.iterdir() if p.name[:16] not in files)
    reads = sum(r["reads"] for r in reader_results)
    raw_reads = sum(r["raw_reads"] for r in reader_results)
    bad = [b for r in reader_results for b in r["bad"]]
    report = {
        "seconds": round(elapsed, 1),
        "saves": len(done),
        "reads": reads,
        "raw_file_reads": raw_reads,
        "reader_failures": sum(r["bad_count"] for r in reader_results),
        "sessions": len(files),
        "leftover_files": leftovers,
    }
    print("parallel campaign:", json.dumps(report))
    assert not bad, f"readers saw partial/broken output: {bad[:3]}"
    assert reads >= READERS, "readers did not run"
    assert elapsed < 240
    assert all(n in {".lock", "memory.lock"} or n.endswith(".lock") for n in leftovers), leftovers
