"""pm_live_cap: every writer keeps permanent_memory.md within LIVE_TOKENS by moving the oldest
epics to the archive first, and says so in one line; a file over the loader's cap keeps the
block's message, which names the command that fixes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import support
from project_memory_loader.core.pm_parse import parse_permanent
from project_memory_loader.writing.pm_live_cap import LIVE_TOKENS


def epic_json(number: int) -> str:
    return json.dumps(
        {
            "id": f"EPIC-{number:03d}",
            "intent": f"area {number}",
            "completed": f"2025-01-{number % 28 + 1:02d}T00:00:00Z",
            "decisions": [f"decision {number} " + "word " * 250],
        }
    )


def test_add_moves_the_oldest_epics_before_the_cap(loader: Any, tmp_path: Path) -> None:
    memory = tmp_path / ".claude" / "memory"
    notes = []
    for number in range(1, 40):
        res = loader(["add", "--project-dir", str(tmp_path), "--input", "-", "--schema", "1"],
                     epic_json(number))  # fmt: skip
        assert res.code == 0, res.err
        notes += [line for line in res.err.splitlines() if "moved" in line]
        text = (memory / "permanent_memory.md").read_text()
        assert support.token_count(text)[0] <= LIVE_TOKENS
    assert notes, "no writer said it moved epics"
    assert all(line.startswith("note: moved 1 epic (EPIC-") for line in notes)
    archived = [
        e.epic_id for p in memory.glob("archive/*.md") for e in parse_permanent(p.read_text())
    ]
    live = [e.epic_id for e in parse_permanent((memory / "permanent_memory.md").read_text())]
    assert sorted(archived + live) == [f"EPIC-{n:03d}" for n in range(1, 40)]
    assert not set(archived) & set(live)
    search = loader(["search", "--project-dir", str(tmp_path), "EPIC-001"])
    assert "EPIC-001" in search.out


def test_a_file_over_the_cap_keeps_its_message_naming_the_fix(loader: Any, tmp_path: Path) -> None:
    memory = tmp_path / ".claude" / "memory"
    memory.mkdir(parents=True)
    body = "".join(
        f"## Epic: E-{n} \u2014 area {n}\n### Gotchas discovered\n- " + "word " * 120 + "\n\n"
        for n in range(100)
    )
    (memory / "permanent_memory.md").write_text(body)
    res = loader(["load", "--project-dir", str(tmp_path)])
    assert res.out.endswith(
        "Archive old epics with the permanent-memory-loader skill's archive command.\n"
    )
