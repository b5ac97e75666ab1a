# Parallel sessions: 8 processes x 50 saves (half merging into one shared session, half into
# each process's own session of the same project) while readers loop load-last. No merge may
# be lost and no reader may ever see a partial file.
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from conftest import MANAGER_DIR
from support import clean_env

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
