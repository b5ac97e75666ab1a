# save under crashes and contention: `save` subprocesses killed with SIGKILL at random moments,
# hundreds of times (afterwards every snapshot parses, each is exactly one version some save
# wrote, never a blend or a prefix, no save that finished was lost, and load-last never shows a
# temp file); and 8 processes x 50 saves (half merging into one shared session, half into each
# process's own session of the same project) while readers loop load-last (no merge may be lost
# and no reader may ever see a partial file); and under faults: ENOSPC, EIO, EROFS or EACCES
# injected at each step of the write path, a real full or read-only file system in a private
# mount namespace, a memory dir the user `nobody` cannot write, an unreadable snapshot of the
# same session (one error line, the previous snapshots intact, the next save goes through).
from __future__ import annotations

import errno
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from conftest import MANAGER_DIR
from memory_text_test import SECRETS
from ski_memory_manager.mm_snapshot import STAMP_LEN
from support import (
    FAULT_SESSION,
    LOADER,
    LOADER_STAMP,
    MANAGER,
    SEED_MEMORY,
    SESSION_STAMP,
    SNAPSHOT_NAME,
    assert_no_traceback,
    call_main,
    call_save,
    clean_env,
    clear_claude_env,
    demote_to_nobody,
    front_matter,
    hostile_save_input,
    manager_outputs,
    module,
    nobody_folder,
    nobody_script,
    run,
    save_and_drop_input,
    save_input,
    snapshot_files,
    stderr_lines,
    tree_bytes,
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


@pytest.mark.slow
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
    mm = module("ski_memory_manager.memory_manager")
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
            on_disk = {s.name[:STAMP_LEN] for s in snapshot_files(memory)}
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
from ski_memory_manager import memory_manager
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
from ski_memory_manager import memory_manager
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


@pytest.mark.slow
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
    files = {p.name[:STAMP_LEN]: p for p in snapshot_files(memory)}
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
    leftovers = sorted(p.name for p in memory.iterdir() if p.name[:STAMP_LEN] not in files)
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


# ---------------------------------------------------------------------------------------------
# Injected ENOSPC / EIO at each step of the write path, in-process.


@pytest.fixture
def memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    clear_claude_env(monkeypatch)
    mem = tmp_path / "proj" / "memory"
    mem.mkdir(parents=True)
    mm = module("ski_memory_manager.memory_manager")
    src = tmp_path / "first.json"
    src.write_text(json.dumps(save_input("ORIGINAL")))
    res = call_main(mm, ["save", "--memory-dir", str(mem), "--input", str(src)])
    assert res.code == 0, res.err
    return mem


@contextmanager
def _inject(
    monkeypatch: pytest.MonkeyPatch, target: str, err: int, mem: Path, log: list[str]
) -> Iterator[None]:
    exc = OSError(err, os.strerror(err))
    inside = str(mem.resolve())
    real_write, real_replace = os.write, os.replace

    def ours(path: Any) -> bool:
        return isinstance(path, (str, os.PathLike)) and os.path.realpath(path).startswith(inside)

    with monkeypatch.context() as mp:
        if target == "os.write":

            def write(fd: int, data: Any) -> int:
                if fd > 2:
                    log.append("os.write")
                    raise exc
                return real_write(fd, data)

            mp.setattr(os, "write", write)
        elif target == "os.write-partial":
            # The first write lands half its bytes, the next one fails: a torn temp file.
            state = {"n": 0}

            def write(fd: int, data: Any) -> int:
                if fd > 2:
                    log.append("os.write")
                    state["n"] += 1
                    if state["n"] == 1 and len(data) > 1:
                        return real_write(fd, bytes(data[: len(data) // 2]))
                    raise exc
                return real_write(fd, data)

            mp.setattr(os, "write", write)
        elif target == "os.fsync":

            def fsync(fd: int) -> None:
                log.append("os.fsync")
                raise exc

            mp.setattr(os, "fsync", fsync)
        elif target == "os.replace":

            def replace(src: Any, dst: Any, **kw: Any) -> None:
                if ours(dst):
                    log.append(target)
                    raise exc
                real_replace(src, dst, **kw)

            mp.setattr(os, "replace", replace)
        elif target == "os.open":
            real_os_open = os.open

            def os_open(path: Any, flags: int, *a: Any, **kw: Any) -> int:
                if ours(path) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                    log.append("os.open")
                    raise exc
                return real_os_open(path, flags, *a, **kw)

            mp.setattr(os, "open", os_open)
        else:
            raise AssertionError(target)
        yield


# The calls memory_io.atomic_write makes: it writes with os.write (no file object) and renames
# with os.replace.
TARGETS = ["os.open", "os.write", "os.write-partial", "os.fsync", "os.replace"]


# Disk errors anywhere in the write path; permission errors where they come from (open, rename).
FAULTS = [(t, e) for t in TARGETS for e in (errno.ENOSPC, errno.EIO)] + [
    (t, e) for t in ("os.open", "os.replace") for e in (errno.EROFS, errno.EACCES)
]


@pytest.mark.parametrize(
    ("target", "err"), FAULTS, ids=[f"{t}-{errno.errorcode[e]}" for t, e in FAULTS]
)
@pytest.mark.parametrize("scenario", ["update", "create"])
def test_write_fault(
    memory: Path, monkeypatch: pytest.MonkeyPatch, target: str, err: int, scenario: str
) -> None:
    mm = module("ski_memory_manager.memory_manager")
    original = {p.name: p.read_bytes() for p in memory.iterdir()}
    session = FAULT_SESSION if scenario == "update" else "2026-01-02-10-00"
    log: list[str] = []
    with _inject(monkeypatch, target, err, memory, log):
        res = call_save(mm, memory, save_input("NEW VERSION", session, "S2"))
    assert_no_traceback(res, "save")
    assert log, f"{target} is not on the write path: the fault was never injected"
    after = {p.name: p.read_bytes() for p in memory.iterdir()}
    assert res.code == 1, f"fault {log} swallowed: exit {res.code}, stderr {res.err!r}"
    lines = stderr_lines(res.err)
    assert len(lines) == 1, lines
    assert os.strerror(err) in lines[0] or errno.errorcode[err] in lines[0], lines[0]
    assert res.out == ""
    for name, data in original.items():
        assert after.get(name) == data, f"{name} changed by a failed save"
    new = sorted(set(after) - set(original))
    assert new == [], f"failed save left {new}"
    # And the next save, with the fault gone, goes through.
    ok = call_save(mm, memory, save_input("AFTER FAULT", session, "S3"))
    assert ok.code == 0, ok.err


# ---------------------------------------------------------------------------------------------
# Real faults in a private mount namespace: a full tmpfs and a read-only bind mount.


def _namespace_ok() -> bool:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    try:
        probe = subprocess.run(
            ["unshare", "-m", "sh", "-c", "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs $d"],
            capture_output=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


NAMESPACE = pytest.mark.skipif(
    not _namespace_ok(), reason="needs `unshare -m` and mount (root in a sandbox that allows it)"
)

NS_SCRIPT = r"""
import errno, json, os, subprocess, sys
from pathlib import Path
python, manager, loader, work, kind = sys.argv[1:6]
work = Path(work)
mnt = work / "mnt"
mnt.mkdir()
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
mem = mnt / "memory"
mem.mkdir()
env = dict(os.environ)
def save(summary, session, step, pad=0):
    payload = {"project_name": "proj", "session_timestamp": session, "mode": "architect",
               "status": "in-progress", "last_checkpoint": "CP-S1",
               "session_summary": summary + " " + "x" * pad, "steps_completed": {step: summary}}
    src = work / "in.json"
    src.write_text(json.dumps(payload))
    p = subprocess.run([python, manager, "save", "--memory-dir", str(mem), "--input", str(src)],
                       capture_output=True, env=env, timeout=60)
    return {"rc": p.returncode, "err": p.stderr.decode(), "out": p.stdout.decode()}
def state():
    return {p.name: p.read_bytes().decode("utf-8", "replace") for p in sorted(mem.iterdir())}
first = save("ORIGINAL", "2026-01-01-10-00", "S1")
before = state()
results = {"first": first, "before": before, "runs": []}
if kind == "full":
    filler = open(mnt / "filler", "wb", buffering=0)
    try:
        while True:
            filler.write(b"\0" * 4096)
    except OSError as exc:
        results["fill_errno"] = exc.errno
    for label, session, pad in (("update-small", "2026-01-01-10-00", 0),
                                ("create-small", "2026-01-02-10-00", 0)):
        results["runs"].append([label, save("NEW", session, "S2", pad), state()])
    # Free one page: a 12 KB snapshot now fails part-way through its write.
    filler.truncate(os.fstat(filler.fileno()).st_size - 4096)
    for label, session, pad in (("update-torn", "2026-01-01-10-00", 12000),
                                ("create-torn", "2026-01-03-10-00", 12000)):
        results["runs"].append([label, save("NEW", session, "S2", pad), state()])
    # The loader hook with its cache on the full file system still emits its block.
    proj = work / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    seed = Path(sys.argv[6]).read_bytes()
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(seed)
    henv = dict(env, CLAUDE_PLUGIN_DATA=str(mnt / "cache"), CLAUDE_PROJECT_DIR=str(proj))
    hook = subprocess.run([python, loader, "hook"], input=json.dumps(
        {"session_id": "x", "hook_event_name": "UserPromptSubmit", "cwd": str(proj),
         "prompt": "p"}).encode(), capture_output=True, env=henv, timeout=60)
    load = subprocess.run([python, loader, "load", "--project-dir", str(proj)],
                          capture_output=True, env=henv, timeout=60)
    results["hook"] = {"rc": hook.returncode, "out": hook.stdout.decode(),
                       "err": hook.stderr.decode(),
                       "expected": load.stdout.decode()}
elif kind == "readonly":
    subprocess.run(["mount", "--bind", str(mem), str(mem)], check=True)
    subprocess.run(["mount", "-o", "remount,ro,bind", str(mem)], check=True)
    for label, session in (("update", "2026-01-01-10-00"), ("create", "2026-01-02-10-00")):
        results["runs"].append([label, save("NEW", session, "S2"), state()])
    ll = subprocess.run([python, manager, "load-last", "--memory-dir", str(mem), "--project-name",
                         "proj"], capture_output=True, env=env, timeout=60)
    results["load_last"] = {"rc": ll.returncode, "out": ll.stdout.decode(),
                            "err": ll.stderr.decode()}
print(json.dumps(results))
"""


def _in_namespace(tmp_path: Path, kind: str) -> dict[str, Any]:
    script = tmp_path / "ns.py"
    script.write_text(NS_SCRIPT)
    seed = tmp_path / "seed.md"
    seed.write_bytes(SEED_MEMORY)
    proc = subprocess.run(
        [
            "unshare",
            "-m",
            sys.executable,
            str(script),
            sys.executable,
            str(MANAGER),
            str(LOADER),
            str(tmp_path),
            kind,
            str(seed),
        ],
        capture_output=True,
        env=clean_env(tmp_path),
        timeout=240,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()[-3000:]
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


@NAMESPACE
def test_real_disk_full(tmp_path: Path) -> None:
    res = _in_namespace(tmp_path, "full")
    assert res["first"]["rc"] == 0, res["first"]
    assert res["fill_errno"] == errno.ENOSPC
    before = res["before"]
    for label, run_, state in res["runs"]:
        assert "Traceback" not in run_["err"], (label, run_["err"])
        assert run_["rc"] == 1, (label, run_)
        errors = [ln for ln in stderr_lines(run_["err"]) if not ln.startswith("warning:")]
        assert len(errors) == 1, (label, run_["err"])  # the > 2 KB size warning may precede it
        assert "No space left on device" in errors[0], (label, run_["err"])
        snaps = {k: v for k, v in state.items() if k != "filler" and SNAPSHOT_NAME.match(k)}
        assert snaps == {k: v for k, v in before.items() if SNAPSHOT_NAME.match(k)}, label
        extra = sorted(set(state) - set(before) - {"filler"})
        assert extra == [], f"{label}: left {extra}"
    hook = res["hook"]
    assert hook["rc"] == 0 and "Traceback" not in hook["err"], hook
    assert hook["expected"].startswith(LOADER_STAMP)
    context = json.loads(hook["out"])["hookSpecificOutput"]["additionalContext"]
    assert context == hook["expected"], hook


@NAMESPACE
def test_real_read_only_memory_dir(tmp_path: Path) -> None:
    res = _in_namespace(tmp_path, "readonly")
    before = res["before"]
    for label, run_, state in res["runs"]:
        assert "Traceback" not in run_["err"], (label, run_["err"])
        assert run_["rc"] == 1, (label, run_)
        lines = stderr_lines(run_["err"])
        assert len(lines) == 1 and "Read-only file system" in lines[0], (label, lines)
        assert state == before, label
    ll = res["load_last"]
    assert ll["rc"] == 0 and ll["out"].startswith(SESSION_STAMP), ll
    assert "ORIGINAL" in ll["out"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to nobody")
def test_unwritable_memory_dir_as_unprivileged_user(tmp_path: Path) -> None:
    """chmod is ignored by root: run the save as `nobody` against a 0555 directory."""
    with nobody_folder("mm-save-nobody-") as base:
        mem = base / "memory"
        mem.mkdir()
        env = clean_env(base)
        src = base / "in.json"
        src.write_text(json.dumps(save_input("ORIGINAL")))
        src.chmod(0o644)
        assert (
            run(MANAGER, ["save", "--memory-dir", str(mem), "--input", str(src)], env=env).code == 0
        )
        before = {p.name: p.read_bytes() for p in mem.iterdir()}
        mem.chmod(0o555)
        for p in mem.iterdir():
            p.chmod(0o444)
        as_nobody = nobody_script(base, MANAGER, "yaml")
        for session in (FAULT_SESSION, "2026-01-02-10-00"):
            src.write_text(json.dumps(save_input("NEW", session, "S2")))
            proc = subprocess.run(
                [
                    *as_nobody,
                    "save",
                    "--memory-dir",
                    str(mem),
                    "--input",
                    str(src),
                ],
                capture_output=True,
                env=env,
                timeout=60,
                preexec_fn=demote_to_nobody(),
                check=False,
            )
            err = proc.stderr.decode()
            assert "Traceback" not in err, err
            assert proc.returncode == 1, (proc.returncode, err)
            assert len(stderr_lines(err)) == 1 and "Permission denied" in err, err
            assert {p.name: p.read_bytes() for p in mem.iterdir()} == before
        proc = subprocess.run(
            [
                *as_nobody,
                "load-last",
                "--memory-dir",
                str(mem),
                "--project-name",
                "proj",
            ],
            capture_output=True,
            env=env,
            timeout=60,
            preexec_fn=demote_to_nobody(),
            check=False,
        )
        assert proc.returncode == 0 and proc.stdout.decode().startswith(SESSION_STAMP), proc


# ---------------------------------------------------------------------------------------------
# A snapshot of the same session that cannot be read.


def test_save_over_corrupt_same_session_keeps_it(tmp_path: Path) -> None:
    """A same-session save must not replace a snapshot it cannot read (that would lose it)."""
    mem = tmp_path / "memory"
    mem.mkdir()
    env = clean_env(tmp_path)
    src = tmp_path / "in.json"
    src.write_text(json.dumps(save_input("ORIGINAL")))
    assert run(MANAGER, ["save", "--memory-dir", str(mem), "--input", str(src)], env=env).code == 0
    snap = mem / f"{FAULT_SESSION}-proj.md"
    for corrupt in (
        b"---\nstatus: [unclosed\n---\n\n## Session summary\nprecious hand edit\n",
        b"\xff\xfe not utf-8 \x00",
        b"---\n- a list\n---\nbody\n",
        b"---\n!!python/object/apply:os.system [x]\n---\n",
    ):
        snap.write_bytes(corrupt)
        src.write_text(json.dumps(save_input("NEW", step="S2")))
        res = run(MANAGER, ["save", "--memory-dir", str(mem), "--input", str(src)], env=env)
        assert_no_traceback(res, "save")
        assert res.code == 1, (corrupt[:20], res.out, res.err)
        assert len(stderr_lines(res.err)) == 1, res.err
        assert snap.read_bytes() == corrupt, "the unreadable snapshot was replaced"


# ---------------------------------------------------------------------------------------------
# Secrets (the table in memory_text_test): save stores each as [REDACTED], warns naming the
# field, and no output and no file holds it raw.


@pytest.mark.parametrize("name", list(SECRETS))
def test_secrets_are_redacted_on_save(name: str, tmp_path: Path, memory_dir: Path) -> None:
    mm = module("ski_memory_manager.memory_manager")
    raw, text = SECRETS[name]
    res = save_and_drop_input(mm, memory_dir, hostile_save_input(text))
    assert_no_traceback(res, "save")
    assert res.code == 0, res.err
    warnings = stderr_lines(res.err)
    assert warnings and any("session_summary" in w or "session-summary" in w for w in warnings), (
        f"no warning naming the field: {warnings}"
    )
    outs = manager_outputs(mm, memory_dir)
    leaked = [w for w, r in {"save": res, **outs}.items() if raw in r.out or raw in r.err]
    assert not leaked, f"{name}: raw secret in {leaked}"
    for path, data in tree_bytes(tmp_path):
        assert raw.encode() not in data, f"{name}: raw secret written to {path}"
    (snap,) = snapshot_files(memory_dir)
    assert "[REDACTED]" in snap.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["aws-key-id", "ghp", "password-eq", "private-key-rsa"])
def test_an_update_does_not_rewrite_a_raw_secret(name: str, memory_dir: Path) -> None:
    """A save that merges into a snapshot holding a hand-pasted secret writes the file anew:
    what it writes must not hold the raw secret (DESIGN: secrets in any field are stored as
    [REDACTED])."""
    mm = module("ski_memory_manager.memory_manager")
    assert save_and_drop_input(mm, memory_dir, hostile_save_input("clean")).code == 0
    raw, text = SECRETS[name]
    (snap,) = snapshot_files(memory_dir)
    snap.write_text(
        snap.read_text(encoding="utf-8").replace("summary clean", f"summary {text}"),
        encoding="utf-8",
    )
    update = {
        "project_name": "proj",
        "session_timestamp": "2026-01-01-10-00",
        "steps_completed": {"S2": "more"},
    }
    res = save_and_drop_input(mm, memory_dir, update)
    assert res.code == 0, res.err
    assert raw not in snap.read_text(encoding="utf-8"), "the merge rewrote the raw secret"


def test_a_secret_as_project_name_is_never_written(memory_dir: Path) -> None:
    """A token is a valid-looking project name: it must not end up in a file name or output."""
    mm = module("ski_memory_manager.memory_manager")
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    payload = hostile_save_input("x")
    payload["project_name"] = token
    res = save_and_drop_input(mm, memory_dir, payload)
    assert_no_traceback(res, "save")
    assert token not in res.out + res.err, "the token was echoed"
    assert not [p for p in memory_dir.iterdir() if token in p.name], "the token became a file name"
