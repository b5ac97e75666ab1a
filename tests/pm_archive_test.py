"""archive (pm_archive) and what it moves (pm_archive_plan): the oldest epics out to the day's
archive, never twice, and nothing lost when a run is killed at any moment."""

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
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import LOADER_DIR
from hypothesis import given
from hypothesis import strategies as st
from project_memory_loader.core import pm_parse, pm_tokens
from project_memory_loader.core.pm_render import SKIP_TOKENS
from project_memory_loader.shared import memory_io
from project_memory_loader.writing import pm_archive_plan
from support import (
    EST,
    LOADER,
    TIMEOUT,
    Result,
    assert_no_traceback,
    call_main,
    clean_env,
    clear_claude_env,
    estimate,
    memory_file,
    module,
    stderr_lines,
    tree,
)

NOW_ARG = "2026-11-29T12:00:00Z"


# archive

ARCHIVE_FILE = """# Permanent memory

Notes above the epics stay.

## Epic: E1 — one
**Completed:** 2026-03-01T00:00:00Z

### Architectural decisions
- first decision of E1, with enough words to weigh something

## Epic: E2 — two
**Completed:** 2026-01-01T00:00:00Z

### Gotchas discovered
- E2 is older than E1 although it comes later in the file

## Epic: E3 — three

### Patterns that worked
- E3 has no date: it counts as completed when E2 was

## Epic: E4 — four
**Completed:** 2026-05-01T00:00:00Z

### Conflicts encountered
- E4 is the newest

## Notes below the epics

They stay too.
"""
KEPT = """# Permanent memory

Notes above the epics stay.

## Epic: E1 — one
**Completed:** 2026-03-01T00:00:00Z

### Architectural decisions
- first decision of E1, with enough words to weigh something

## Epic: E4 — four
**Completed:** 2026-05-01T00:00:00Z

### Conflicts encountered
- E4 is the newest

## Notes below the epics

They stay too.
"""
E2_E3 = """## Epic: E2 — two
**Completed:** 2026-01-01T00:00:00Z

### Gotchas discovered
- E2 is older than E1 although it comes later in the file

## Epic: E3 — three

### Patterns that worked
- E3 has no date: it counts as completed when E2 was
"""


@pytest.fixture
def archived_project(tmp_path: Path) -> Path:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(ARCHIVE_FILE)
    return tmp_path


def archive_args(project: Path, *extra: str) -> list[str]:
    limit = str(estimate(KEPT))
    return [
        "archive",
        "--project-dir",
        str(project),
        "--max-tokens",
        limit,
        "--now",
        NOW_ARG,
        *EST,
        *extra,
    ]


def test_archive_order_by_completed_then_file_order() -> None:
    epics = pm_parse.parse_permanent(ARCHIVE_FILE)
    assert [epics[i].epic_id for i in pm_archive_plan.archive_order(epics)] == [
        "E2",
        "E3",
        "E1",
        "E4",
    ]
    undated_first = pm_parse.parse_permanent("## Epic: U — u\n\n" + ARCHIVE_FILE)
    order = pm_archive_plan.archive_order(undated_first)
    assert [undated_first[i].epic_id for i in order] == ["U", "E2", "E3", "E1", "E4"]


def test_archive_moves_the_oldest_until_within_the_limit(
    loader: Any, archived_project: Path
) -> None:
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    result = loader(archive_args(archived_project))
    assert result == Result(
        0,
        f"moved E2 (completed 2026-01-01T00:00:00Z) to {archive}\n"
        f"moved E3 (no Completed date) to {archive}\n"
        f"{path}: {estimate(ARCHIVE_FILE)} estimated tokens before, {estimate(KEPT)} after "
        f"(max {estimate(KEPT)})\n",
        "",
    )
    assert path.read_text() == KEPT
    assert archive.read_text() == pm_archive_plan.ARCHIVE_HEADER + "\n" + E2_E3
    # Moving E2 alone would not have been enough: as few as possible moved.
    epics = pm_parse.parse_permanent(ARCHIVE_FILE)
    only_e2 = pm_archive_plan.text_without(ARCHIVE_FILE.split("\n"), epics, {1})
    assert "## Epic: E3" in only_e2 and estimate(only_e2) > estimate(KEPT)


def test_archive_appends_to_the_day_s_archive_and_never_twice(
    loader: Any, archived_project: Path
) -> None:
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    archive.parent.mkdir()
    archive.write_text(
        "# Kept by hand\n\n## Epic: E3 — three\n\n### Patterns that worked\n"
        "- E3 has no date: it counts as completed when E2 was\n"
    )
    result = loader(archive_args(archived_project))
    assert result.code == 0
    assert result.out.splitlines()[1] == (
        f"moved E3 (no Completed date) to {archive} (already there: an earlier run was interrupted)"
    )
    assert archive.read_text() == (
        "# Kept by hand\n\n## Epic: E3 — three\n\n### Patterns that worked\n"
        "- E3 has no date: it counts as completed when E2 was\n\n" + E2_E3.split("\n## Epic: E3")[0]
    )
    assert path.read_text() == KEPT


def test_archive_dry_run_writes_nothing(loader: Any, archived_project: Path) -> None:
    before = tree(archived_project)
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    result = loader(archive_args(archived_project, "--dry-run"))
    assert result == Result(
        0,
        f"would move E2 (completed 2026-01-01T00:00:00Z) to {archive}\n"
        f"would move E3 (no Completed date) to {archive}\n"
        f"{path}: {estimate(ARCHIVE_FILE)} estimated tokens, {estimate(KEPT)} after moving 2 "
        f"epics (max {estimate(KEPT)}); nothing written\n",
        "",
    )
    assert tree(archived_project) == before


def test_archive_json(loader: Any, archived_project: Path) -> None:
    result = loader(archive_args(archived_project, "--format", "json"))
    assert result.code == 0
    path = memory_file(archived_project)
    assert json.loads(result.out) == {
        "path": str(path),
        "archive": str(path.parent / "archive" / "2026-11-29.md"),
        "dry_run": False,
        "max_tokens": estimate(KEPT),
        "tokens_before": estimate(ARCHIVE_FILE),
        "tokens_after": estimate(KEPT),
        "tokenizer": "estimate",
        "moved": [
            {
                "id": "E2",
                "completed": "2026-01-01T00:00:00Z",
                "line": 11,
                "already_archived": False,
            },
            {"id": "E3", "completed": None, "line": 17, "already_archived": False},
        ],
    }


def test_archive_with_nothing_to_do(loader: Any, archived_project: Path) -> None:
    path = memory_file(archived_project)
    before = tree(archived_project)
    result = loader(["archive", "--project-dir", str(archived_project), *EST])
    assert result == Result(
        0,
        f"{path}: {estimate(ARCHIVE_FILE)} estimated tokens, within 8000; nothing to archive\n",
        "",
    )
    assert tree(archived_project) == before


def test_archive_without_a_file(loader: Any, tmp_path: Path) -> None:
    result = loader(["archive", "--project-dir", str(tmp_path), *EST])
    assert result == Result(
        0, f"no permanent memory file at {memory_file(tmp_path)}; nothing to archive\n", ""
    )
    assert list(tmp_path.iterdir()) == []  # nothing created
    missing = tmp_path / "missing.md"
    result = loader(["archive", "--file", str(missing), *EST])
    assert result == Result(1, "", f"permanent memory file not found: {missing}\n")


def test_archive_cannot_shrink_the_text_around_the_epics(loader: Any, tmp_path: Path) -> None:
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("# Notes\n\n" + "a long preamble line\n" * 30 + "\n## Epic: A — a\n")
    before = tree(tmp_path)
    result = loader(["archive", "--project-dir", str(tmp_path), "--max-tokens", "50", *EST])
    rest = estimate("# Notes\n\n" + "a long preamble line\n" * 30)
    assert result == Result(
        1,
        "",
        f"without any epic the file is still {rest} tokens, over --max-tokens 50; "
        "shorten the text outside the epics\n",
    )
    assert tree(tmp_path) == before


def test_archive_keeps_the_file_s_mode_and_line_ends(loader: Any, archived_project: Path) -> None:
    path = memory_file(archived_project)
    path.write_bytes(ARCHIVE_FILE.replace("\n", "\r\n").encode())
    path.chmod(0o600)
    assert loader(archive_args(archived_project)).code == 0
    assert path.read_bytes() == KEPT.replace("\n", "\r\n").encode()
    assert path.stat().st_mode & 0o777 == 0o600


KILLED_AT_REPLACE = """
import os, sys
sys.path.insert(0, sys.argv[1])
from project_memory_loader import permanent_memory
calls = []
real = os.replace
def replace(src, dst):
    calls.append(dst)
    if len(calls) == int(sys.argv[2]):
        os._exit(9)
    real(src, dst)
os.replace = replace
raise SystemExit(permanent_memory.main(sys.argv[3:]))
"""


@pytest.mark.parametrize("dies_at", [1, 2], ids=["archive-rename", "memory-rename"])
def test_archive_killed_at_either_rename_loses_nothing(
    loader: Any, archived_project: Path, dies_at: int
) -> None:
    path = memory_file(archived_project)
    archive = path.parent / "archive" / "2026-11-29.md"
    killed = subprocess.run(
        [
            sys.executable,
            "-c",
            KILLED_AT_REPLACE,
            str(LOADER_DIR),
            str(dies_at),
            *archive_args(archived_project),
        ],
        capture_output=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert killed.returncode == 9, killed.stderr
    assert path.read_text() == ARCHIVE_FILE  # the memory file is untouched either way
    if dies_at == 1:
        assert not archive.exists()
    else:
        assert archive.read_text() == pm_archive_plan.ARCHIVE_HEADER + "\n" + E2_E3
    # The next run finishes the job, without a second copy of anything.
    again = loader(archive_args(archived_project))
    assert again.code == 0
    assert path.read_text() == KEPT
    assert archive.read_text() == pm_archive_plan.ARCHIVE_HEADER + "\n" + E2_E3
    leftovers = [p.name for p in path.parent.rglob("*") if memory_io.is_temp_name(p.name)]
    assert len(leftovers) == 1  # the dead run's temp file; never read as memory


def _epic_sections(count: int) -> list[str]:
    return [
        f"## Epic: K-{n:02d} \u2014 epic {n}\n**Completed:** 2026-{1 + n % 12:02d}-{1 + n % 27:02d}"
        f"T00:00:00Z\n\n### Architectural decisions\n- decision {n}: "
        + "idempotent retries with jitter " * 3
        + "\n"
        for n in range(count)
    ]


EPIC_SPECS = st.lists(
    st.tuples(
        st.one_of(st.none(), st.dates().map(lambda d: d.isoformat())),
        st.integers(min_value=0, max_value=6),
    ),
    max_size=12,
)


@given(
    specs=EPIC_SPECS,
    preamble=st.sampled_from(["", "# Permanent memory\n\nNotes.\n\n"]),
    max_tokens=st.integers(min_value=1, max_value=400),
)
def test_archive_plan_moves_the_oldest_and_loses_nothing(
    specs: list[tuple[str | None, int]], preamble: str, max_tokens: int
) -> None:
    sections = [
        f"## Epic: P-{n} \u2014 epic {n}\n"
        + (f"**Completed:** {date}\n" if date else "")
        + "\n### Gotchas discovered\n"
        + "".join(f"- gotcha {n}.{k}\n" for k in range(lines))
        for n, (date, lines) in enumerate(specs)
    ]
    text = preamble + "\n".join(sections)
    try:
        plan = pm_archive_plan.plan_archive(text, max_tokens, estimate)
    except pm_archive_plan.ArchiveError:
        assert estimate(preamble) > max_tokens or not specs
        return
    assert estimate(plan.kept_text) == plan.tokens_after <= max_tokens
    kept = pm_parse.parse_permanent(plan.kept_text)
    moved_ids = [epic.epic_id for epic in plan.moved]
    assert sorted(moved_ids + [e.epic_id for e in kept]) == sorted(
        f"P-{n}" for n in range(len(specs))
    )
    assert list(plan.sections) == [
        s.rstrip("\n") + "\n" for s in sections if s.split()[2] in moved_ids
    ]
    epics = pm_parse.parse_permanent(text)
    order = [epics[i].epic_id for i in pm_archive_plan.archive_order(epics)]
    assert sorted(moved_ids, key=order.index) == order[: len(moved_ids)]  # the oldest ones
    if plan.moved:  # and no fewer would do
        fewer = pm_archive_plan.text_without(
            text.split("\n"),
            epics,
            set(pm_archive_plan.archive_order(epics)[: len(moved_ids) - 1]),
        )
        assert estimate(fewer) > max_tokens


@pytest.mark.slow
def test_archive_survives_sigkill_at_random_moments(tmp_path: Path) -> None:
    """Kill archive runs at random moments: every epic stays in the memory file or the archive
    (or both), and the memory file is always whole, the old one or the new one."""
    sections = _epic_sections(24)
    original = "# Permanent memory\n\n" + "\n".join(sections)
    project = tmp_path / "p"
    path = memory_file(project)
    archive = path.parent / "archive" / "2026-11-29.md"
    command = [sys.executable, str(LOADER), *archive_args(project)[:3], "--max-tokens", "600"]
    command += ["--now", NOW_ARG, *EST]
    path.parent.mkdir(parents=True)
    path.write_text(original)
    durations = []
    for _ in range(2):  # the shorter of two whole runs: kill moments fall inside a run
        shutil.rmtree(path.parent)
        path.parent.mkdir()
        path.write_text(original)
        started = time.monotonic()
        subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=True)
        durations.append(time.monotonic() - started)
    duration = min(durations)
    final_memory, final_archive = path.read_text(), archive.read_text()
    assert final_memory != original
    rng = random.Random(8)
    states: Counter[str] = Counter()
    kills = 0
    for _ in range(400):
        if kills >= 55:
            break
        shutil.rmtree(path.parent)
        path.parent.mkdir()
        path.write_text(original)
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Half the moments anywhere in a run, half near its end, where the writes are.
        late = rng.random() < 0.5
        time.sleep(
            rng.uniform(0.7 * duration, 1.05 * duration) if late else rng.uniform(0, duration)
        )
        process.send_signal(signal.SIGKILL)
        if process.wait(timeout=TIMEOUT) == -signal.SIGKILL:
            kills += 1
        memory_text = path.read_text()
        archive_text = archive.read_text() if archive.exists() else ""
        assert memory_text in (original, final_memory)  # whole, never a part
        assert archive_text in ("", final_archive)
        for section in sections:
            assert section in memory_text or section in archive_text
        states[
            f"memory {'old' if memory_text == original else 'new'}, archive "
            f"{'written' if archive_text else 'absent'}"
        ] += 1
        if kills % 5 == 0:  # and a later run always finishes the job, once
            subprocess.run(command, capture_output=True, timeout=TIMEOUT, check=True)
            assert (path.read_text(), archive.read_text()) == (final_memory, final_archive)
    assert kills >= 55, states
    assert "memory new, archive absent" not in states
    print(
        f"{kills} kills in {sum(states.values())} runs (one run {duration:.3f} s): {dict(states)}"
    )


def test_archive_of_a_20000_token_file(loader: Any, tmp_path: Path) -> None:
    count, _engine, _source = pm_tokens.load_exact_counter()
    sections = _epic_sections(360)
    text = "# Permanent memory\n\n" + "\n".join(sections)
    tokens = count(text)
    assert tokens > 20000
    path = memory_file(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(text)
    started = time.monotonic()
    result = loader(["archive", "--project-dir", str(tmp_path), "--now", NOW_ARG])
    elapsed = time.monotonic() - started
    assert result.code == 0, result.err
    after = count(path.read_text())
    assert after <= SKIP_TOKENS  # archive's default --max-tokens
    assert result.out.endswith(f"{path}: {tokens} tokens before, {after} after (max 8000)\n")
    archived = (path.parent / "archive" / "2026-11-29.md").read_text()
    kept = [e.epic_id for e in pm_parse.parse_permanent(path.read_text())]
    moved = [e.epic_id for e in pm_parse.parse_permanent(archived)]
    assert sorted(kept + moved) == sorted(f"K-{n:02d}" for n in range(360))
    moved_dates = [e.completed_at for e in pm_parse.parse_permanent(archived)]
    kept_dates = [e.completed_at for e in pm_parse.parse_permanent(path.read_text())]
    assert None not in moved_dates and None not in kept_dates
    assert max(d for d in moved_dates if d) <= min(d for d in kept_dates if d)
    assert elapsed < 10, elapsed
    print(f"archive of {tokens} tokens ({len(moved)} epics moved): {elapsed:.3f} s in process")


# ---------------------------------------------------------------------------------------------
# Disk faults: archive writes two files (the archive, then the shortened memory file); ENOSPC or
# EIO at the write, fsync or rename of either must lose no epic.


def _epic_ids(text: str) -> list[str]:
    return [ln.split()[2] for ln in text.split("\n") if ln.startswith("## Epic: ")]


@pytest.mark.parametrize("target", ["os.write", "os.fsync", "os.replace"])
@pytest.mark.parametrize("nth", [1, 2], ids=["first-file", "second-file"])
@pytest.mark.parametrize("err", [errno.ENOSPC, errno.EIO], ids=["ENOSPC", "EIO"])
def test_archive_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str, nth: int, err: int
) -> None:
    pm = module("project_memory_loader.permanent_memory")
    clear_claude_env(monkeypatch)
    proj = tmp_path / "proj"
    memdir = proj / ".claude" / "memory"
    memdir.mkdir(parents=True)
    body = " ".join(["decision"] * 60)
    original = "".join(
        f"## Epic: E-{i:03d} — intent {i}\n**Completed:** 2025-01-{1 + i:02d}\n\n"
        f"### Architectural decisions\n- {body} {i}\n\n"
        for i in range(25)
    )
    (memdir / "permanent_memory.md").write_text(original, encoding="utf-8")
    real = {"os.write": os.write, "os.fsync": os.fsync, "os.replace": os.replace}[target]
    calls = {"failed": 0}
    # The nth file the command writes (by its temp file's path; fd numbers are reused).
    seen: list[str] = []

    def faulty(*args: Any, **kw: Any) -> Any:
        if target == "os.replace":
            name = str(args[1])
        else:
            try:
                name = os.readlink(f"/proc/self/fd/{args[0]}")
            except OSError:
                return real(*args, **kw)
            if ".tmp-" not in name:
                return real(*args, **kw)  # stdout, stderr, a directory fsync
        if name not in seen:
            seen.append(name)
        if len(seen) == nth and not calls["failed"]:
            calls["failed"] += 1
            raise OSError(err, os.strerror(err))
        return real(*args, **kw)

    args = [
        "archive",
        "--project-dir",
        str(proj),
        "--max-tokens",
        "1500",
        "--tokenizer",
        "estimate",
    ]
    with monkeypatch.context() as mp:
        mp.setattr(os, target.split(".")[1], faulty)
        res = call_main(pm, args)
    assert_no_traceback(res, "archive")
    if not calls["failed"]:
        pytest.skip(f"archive makes fewer than {nth} {target} calls")
    assert res.code == 1, (res.code, res.err)
    errors = [ln for ln in stderr_lines(res.err) if not ln.startswith(("warning:", "note:"))]
    assert len(errors) == 1, res.err
    kept = _epic_ids((memdir / "permanent_memory.md").read_text(encoding="utf-8"))
    archived = [
        eid
        for f in sorted((memdir / "archive").glob("*.md"))
        if (memdir / "archive").is_dir()
        for eid in _epic_ids(f.read_text(encoding="utf-8"))
    ]
    assert set(_epic_ids(original)) <= set(kept) | set(archived), "an epic was lost"
    assert len(archived) == len(set(archived))
    assert [p.name for p in memdir.iterdir() if ".tmp-" in p.name] == []
    # With the fault gone, a rerun completes and leaves each epic in exactly one place.
    again = call_main(pm, args)
    assert again.code == 0, again.err
    kept = _epic_ids((memdir / "permanent_memory.md").read_text(encoding="utf-8"))
    archived = [
        eid
        for f in sorted((memdir / "archive").glob("*.md"))
        for eid in _epic_ids(f.read_text(encoding="utf-8"))
    ]
    assert sorted(kept + archived) == sorted(_epic_ids(original))


# ---------------------------------------------------------------------------------------------
# The loader's writing commands: `archive` moves epics between two files and `add` rewrites the
# memory file. Killed at random moments, or the moment a temp file appears, no epic may be lost
# or torn, and a rerun must finish the job without duplicating anything.

ARCHIVE_KILLS = int(os.environ.get("HARDENING_ARCHIVE_KILLS", "60"))


def _epics_by_id(text: str) -> dict[str, str]:
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
    kept = _epics_by_id((memdir / "permanent_memory.md").read_text(encoding="utf-8"))
    archived: dict[str, str] = {}
    folder = memdir / "archive"
    for f in sorted(folder.glob("*.md")) if folder.is_dir() else []:
        for eid, text in _epics_by_id(f.read_text(encoding="utf-8")).items():
            assert eid not in archived, f"{eid} archived twice"
            archived[eid] = text
    return kept, archived


@pytest.mark.slow
def test_sigkill_archive_and_add_campaign(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    rng = random.Random(int(os.environ.get("HARDENING_SEED", "20260601")) + 1)
    original = _original_memory()
    sections = _epics_by_id(original)
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
