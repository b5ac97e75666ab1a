# Injection: memory text that tries to pass for instructions, tags, trust stamps or terminal
# control, and secrets of every kind. Whatever goes in, the emitted blocks hold no tag opener,
# no stamp lookalike but the real first line, no control characters, and no raw secret appears
# in any output or any written file.
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memory_text_test import CONFUSABLES, HOSTILE, LOOKALIKES, SECRETS
from support import (
    SESSION_STAMP,
    assert_no_traceback,
    block_problems,
    call_main,
    clear_claude_env,
    confusable_problems,
    folded_problems,
    module,
    output_problems,
    snapshot_files,
    stderr_lines,
    tree_bytes,
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clear_claude_env(monkeypatch)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "plugin-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    """The manager's memory dir, `memory/` in the project `proj/` (its parent)."""
    folder = tmp_path / "proj" / "memory"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize("name", list(CONFUSABLES))
def test_manager_neutralises_confusables(name: str, memory: Path) -> None:
    mm = module("memory_manager")
    proj = memory.parent
    assert _save(mm, memory, _full_payload(CONFUSABLES[name])).code == 0
    outs = _manager_outputs(mm, proj, memory)
    for what in ("load-last", "hook"):
        assert not confusable_problems(outs[what].out), (what, confusable_problems(outs[what].out))


@pytest.mark.parametrize("name", list(LOOKALIKES))
def test_manager_neutralises_lookalikes(name: str, memory: Path) -> None:
    mm = module("memory_manager")
    proj = memory.parent
    assert _save(mm, memory, _full_payload("clean")).code == 0
    (snap,) = snapshot_files(memory)
    # Hand-edited, so save's own cleaning is not what is tested.
    payload = LOOKALIKES[name]
    snap.write_text(
        snap.read_text(encoding="utf-8").replace("summary clean", f"summary {payload}"),
        encoding="utf-8",
    )
    outs = _manager_outputs(mm, proj, memory)
    for what in ("load-last", "hook", "list", "list-project"):
        assert not folded_problems(outs[what].out), (what, folded_problems(outs[what].out))


# ---------------------------------------------------------------------------------------------
# Manager


def _save(mm: Any, memory: Path, payload: dict[str, Any]) -> Any:
    src = memory.parent / "input.json"
    src.write_text(json.dumps(payload))
    res = call_main(mm, ["save", "--memory-dir", str(memory), "--input", str(src)])
    src.unlink()
    return res


def _full_payload(text: str, session: str = "2026-01-01-10-00") -> dict[str, Any]:
    one_line = text.replace("\n", " ")  # target_dir and IDs are single-line fields
    return {
        "project_name": "proj",
        "session_timestamp": session,
        "mode": "architect",
        "status": "in-progress",
        "last_checkpoint": "CP-S1",
        "checkpoints_approved": ["CP-S0"],
        "checkpoint_decisions": {"CP-S0": {"option": "A", "note": text}},
        "target_dir": one_line,
        "session_summary": f"summary {text}",
        "steps_completed": {"S0": text, "S1": f"before {text} after"},
        "active_state": text,
        "key_decisions": [text, f"k {text}"],
    }


def _manager_outputs(mm: Any, proj: Path, memory: Path) -> dict[str, Any]:
    outs = {
        "load-last": call_main(
            mm, ["load-last", "--memory-dir", str(memory), "--project-name", "proj"]
        ),
        "load-last-json": call_main(
            mm,
            [
                "load-last",
                "--memory-dir",
                str(memory),
                "--project-name",
                "proj",
                "--format",
                "json",
            ],
        ),
        "list": call_main(mm, ["list", "--memory-dir", str(memory)]),
        "list-json": call_main(mm, ["list", "--memory-dir", str(memory), "--format", "json"]),
        "doctor": call_main(mm, ["doctor", "--memory-dir", str(memory)]),
        "list-project": call_main(
            mm, ["list", "--memory-dir", str(memory), "--project-name", "proj"]
        ),
        "hook": call_main(
            mm,
            ["hook"],
            stdin=json.dumps(
                {
                    "session_id": "s",
                    "hook_event_name": "SessionStart",
                    "source": "startup",
                    "cwd": str(proj),
                }
            ).encode(),
        ),
    }
    for what, res in outs.items():
        assert_no_traceback(res, what)
        assert res.code == 0, (what, res.err)
    return outs


@pytest.mark.parametrize("name", list(HOSTILE))
def test_manager_neutralises(name: str, memory: Path) -> None:
    mm = module("memory_manager")
    proj = memory.parent
    payload = HOSTILE[name]
    res = _save(mm, memory, _full_payload(payload))
    assert_no_traceback(res, "save")
    if res.code == 1:
        # Rejecting text with control characters is acceptable; it must say so in one line.
        assert len(stderr_lines(res.err)) == 1, res.err
        assert snapshot_files(memory) == []
        return
    assert res.code == 0, res.err
    # Also a hand-edited snapshot carrying the payload raw, in the body and in the resume line.
    (snap,) = snapshot_files(memory)
    raw = snap.read_text(encoding="utf-8") + f"\n{payload}\n"
    (memory / "2026-01-02-10-00-proj.md").write_text(
        raw.replace("last-checkpoint: CP-S1", f"last-checkpoint: {json.dumps('CP-S1 ' + payload)}"),
        encoding="utf-8",
    )
    outs = _manager_outputs(mm, proj, memory)
    for what in ("load-last", "hook"):
        out = outs[what].out
        assert out.startswith(SESSION_STAMP + "\n"), (what, out[:200])
        problems = block_problems(out, SESSION_STAMP, check_lines=False)
        assert not problems, f"{what}: {problems}\n{out[:2000]}"
    for what in ("list", "list-project"):
        assert not output_problems(outs[what].out), (what, output_problems(outs[what].out))


@pytest.mark.parametrize("name", list(SECRETS))
def test_manager_redacts_on_save(name: str, tmp_path: Path, memory: Path) -> None:
    mm = module("memory_manager")
    proj = memory.parent
    raw, text = SECRETS[name]
    res = _save(mm, memory, _full_payload(text))
    assert_no_traceback(res, "save")
    assert res.code == 0, res.err
    warnings = stderr_lines(res.err)
    assert warnings and any("session_summary" in w or "session-summary" in w for w in warnings), (
        f"no warning naming the field: {warnings}"
    )
    outs = _manager_outputs(mm, proj, memory)
    leaked = [w for w, r in {"save": res, **outs}.items() if raw in r.out or raw in r.err]
    assert not leaked, f"{name}: raw secret in {leaked}"
    for path, data in tree_bytes(tmp_path):
        assert raw.encode() not in data, f"{name}: raw secret written to {path}"
    (snap,) = snapshot_files(memory)
    assert "[REDACTED]" in snap.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(SECRETS))
def test_manager_redacts_on_load(name: str, memory: Path) -> None:
    """A secret pasted into a snapshot by hand is redacted in everything that reads it."""
    mm = module("memory_manager")
    proj = memory.parent
    assert _save(mm, memory, _full_payload("clean")).code == 0
    raw, text = SECRETS[name]
    (snap,) = snapshot_files(memory)
    one_line = text.replace("\n", " ")
    edited = (
        snap.read_text(encoding="utf-8")
        .replace("summary clean", f"summary {text}")
        .replace("target-dir: clean", f"target-dir: {json.dumps(one_line)}")
    )
    snap.write_text(edited, encoding="utf-8")
    outs = _manager_outputs(mm, proj, memory)
    assert "[REDACTED]" in outs["load-last"].out
    leaked = [w for w, r in outs.items() if raw in r.out or raw in r.err]
    assert not leaked, f"{name}: raw secret in {leaked}"


@pytest.mark.parametrize("name", ["aws-key-id", "ghp", "password-eq", "private-key-rsa"])
def test_manager_merge_does_not_rewrite_raw_secret(name: str, memory: Path) -> None:
    """A save that merges into a snapshot holding a hand-pasted secret writes the file anew:
    what it writes must not hold the raw secret (DESIGN: secrets in any field are stored as
    [REDACTED])."""
    mm = module("memory_manager")
    assert _save(mm, memory, _full_payload("clean")).code == 0
    raw, text = SECRETS[name]
    (snap,) = snapshot_files(memory)
    snap.write_text(
        snap.read_text(encoding="utf-8").replace("summary clean", f"summary {text}"),
        encoding="utf-8",
    )
    res = _save(
        mm,
        memory,
        {
            "project_name": "proj",
            "session_timestamp": "2026-01-01-10-00",
            "steps_completed": {"S2": "more"},
        },
    )
    assert res.code == 0, res.err
    assert raw not in snap.read_text(encoding="utf-8"), "the merge rewrote the raw secret"


def test_secret_as_project_name_never_written(tmp_path: Path) -> None:
    """A token is a valid-looking project name: it must not end up in a file name or output."""
    mm = module("memory_manager")
    memory = tmp_path / "memory"
    memory.mkdir()
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    payload = _full_payload("x")
    payload["project_name"] = token
    res = _save(mm, memory, payload)
    assert_no_traceback(res, "save")
    assert token not in res.out + res.err, "the token was echoed"
    assert not [p for p in memory.iterdir() if token in p.name], "the token became a file name"


@pytest.mark.parametrize(
    "name", ["close-reminder", "fake-session-stamp", "ansi-osc", "bidi", "combining-solidus-tag"]
)
def test_manager_hook_project_list_neutralises(name: str, memory: Path) -> None:
    """With several projects the SessionStart hook prints a compact list of resume lines, built
    from hand-editable front matter: the list must be as inert as a single block."""
    mm = module("memory_manager")
    proj = memory.parent
    payload = HOSTILE[name]
    assert _save(mm, memory, _full_payload("first")).code == 0
    other = _full_payload("second", "2026-01-03-10-00")
    other["project_name"] = "other"
    assert _save(mm, memory, other).code == 0
    for snap in snapshot_files(memory):
        text = snap.read_text(encoding="utf-8")
        text = text.replace("last-checkpoint: CP-S1", f"last-checkpoint: {json.dumps(payload)}")
        text = text.replace("status: in-progress", f"status: {json.dumps(payload)}")
        snap.write_text(text, encoding="utf-8")
    res = call_main(
        mm,
        ["hook"],
        stdin=json.dumps(
            {"session_id": "s", "hook_event_name": "SessionStart", "cwd": str(proj)}
        ).encode(),
    )
    assert_no_traceback(res, "hook")
    assert res.code == 0
    assert not output_problems(res.out), (output_problems(res.out), res.out)
    lst = call_main(mm, ["list", "--memory-dir", str(memory)])
    assert lst.code == 0 and not output_problems(lst.out), (output_problems(lst.out), lst.out)
