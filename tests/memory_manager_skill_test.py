"""SKILL.md and references/ are checked against the code they describe."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import MANAGER_DIR
from ski_memory_manager import mm_snapshot, mm_store, mm_update
from support import ALLOWED_KEYS, blocks, clean_env, front_matter, run_command

SKILL = MANAGER_DIR.parent
SKILL_MD = (SKILL / "SKILL.md").read_text(encoding="utf-8")
FORMAT_MD = (SKILL / "references" / "format.md").read_text(encoding="utf-8")
FIELDS_MD = (SKILL / "references" / "fields.md").read_text(encoding="utf-8")


def test_front_matter() -> None:
    meta = front_matter(SKILL_MD)
    assert isinstance(meta, dict)
    assert set(meta) <= ALLOWED_KEYS
    assert meta["name"] == SKILL.name == "ski-memory-manager"
    description = meta["description"]
    assert isinstance(description, str) and 100 < len(description) <= 1024
    assert description.startswith("Saves and loads ")  # third person: what, then when
    assert "Use at the start of a workflow" in description
    assert meta["license"] == "MIT"
    compatibility = meta["compatibility"]
    assert isinstance(compatibility, str) and len(compatibility) <= 500
    assert "3.9" in compatibility and "PyYAML" in compatibility
    # Exactly the bundled script, and reading this skill's own files; Claude Code substitutes
    # the variable in the front matter too (the end-to-end write-path test proves the rule).
    assert meta["allowed-tools"] == (
        'Bash(python3 "${CLAUDE_SKILL_DIR}/scripts/memory_manager.py" *) '
        "Read(/${CLAUDE_SKILL_DIR}/**)"
    )


def test_every_command_in_skill_md_runs(tmp_path: Path) -> None:
    commands = blocks(SKILL_MD, "bash")
    assert len(commands) == 4
    # Every command starts as the allowed-tools rule does, so none asks for permission.
    assert all(
        c.startswith('python3 "${CLAUDE_SKILL_DIR}/scripts/memory_manager.py" ') for c in commands
    )
    assert "save --yaml - <<'YAML'\n" in commands[1]
    project = tmp_path / "project"
    (project / "memory").mkdir(parents=True)
    # CLAUDE_SESSION_ID: what Claude Code fills into the skill's text.
    env = clean_env(
        tmp_path,  # HOME and the caches (pause's session records) under tmp_path
        CLAUDE_SKILL_DIR=str(SKILL),
        CLAUDE_PROJECT_DIR=str(project),
        CLAUDE_SESSION_ID="e2f4c6a8-0000-4000-8000-000000000001",
    )
    outputs = []
    for command in commands:
        result = run_command(["bash", "-c", command], env=env, cwd=project, timeout=120)
        assert (result.code, result.err) == (0, ""), command
        outputs.append(result.out)
    assert outputs[0] == "No previous memory found for project 'billing-api'\n"
    saved = project / "memory" / "2026-05-01-14-30-billing-api.md"
    assert outputs[1] == f"{saved}\n"
    snapshot = mm_snapshot.parse_snapshot(saved.read_text(encoding="utf-8"))
    assert snapshot.checkpoint_decisions == {"CP-S1": mm_snapshot.Decision("B", "Added 2 triggers")}
    assert snapshot.key_decisions == ("Refunds stay in the ledger service, not the card gateway",)
    assert outputs[2].startswith("PROJECT      SESSION           STATUS       CHECKPOINT")
    assert " pause --session-id " in commands[3]
    [paused] = [p for p in (project / "memory").glob("*-project.md")]
    assert outputs[3] == f"{paused}\n"
    snapshot = mm_snapshot.parse_snapshot(paused.read_text(encoding="utf-8"))
    assert (snapshot.mode, snapshot.status) == ("express", "paused")
    assert snapshot.active_state.startswith("Done: events are stored")
    # The resume block shown in SKILL.md is what load-last prints.
    shown = blocks(SKILL_MD, "text")[0].split("\n")
    assert shown[0] == "[session-memory | trust:file]"
    assert re.fullmatch(
        r"Resuming `billing-api` \(last touched 3 days ago, status: "
        r"in-progress at CP-S2\)",
        shown[1],
    )


def test_skill_md_stays_under_codex_s_output_window() -> None:
    # Codex shows the model at most about 10,000 bytes of one command's output, the middle cut
    # out, and a model there reads SKILL.md with a shell command: over that, it loses the
    # middle. Reference material goes to references/ instead.
    assert len((SKILL / "SKILL.md").read_bytes()) < 9000


def test_skill_md_tables_match_the_code() -> None:
    for value in (*mm_update.MODES, *mm_update.STATUSES):
        assert f"`{value}`" in FIELDS_MD
    for name in mm_update.INPUT_FIELDS:
        assert f"| `{name}` |" in FIELDS_MD, name
    assert "[references/fields.md](references/fields.md)" in SKILL_MD
    assert "memory directory not found at {memory_dir}" in SKILL_MD
    for checkpoint in ("CP-S0", "CP-S1", "CP-S2", "CP-CLOSE"):
        assert f"`{checkpoint}`" in SKILL_MD


def test_format_reference_matches_the_code() -> None:
    example = re.search(r"```markdown\n(.*?)```", FORMAT_MD, flags=re.DOTALL)
    assert example is not None
    text = example.group(1)
    snapshot = mm_snapshot.parse_snapshot(text)
    assert mm_snapshot.format_snapshot(snapshot) == text  # the example is exactly what we write
    assert f"`{{memory_dir}}/{mm_store.LOCK_NAME}`" in FORMAT_MD  # the old lock file, unused
    assert f"`git rm memory/{mm_store.LOCK_NAME}`" in FORMAT_MD
    assert f".{{name}}{mm_store.TEMP_MARK}{{pid}}-{{random}}" in FORMAT_MD
    assert f"over {mm_store.MAX_SNAPSHOT_BYTES // 1024} KiB" in FORMAT_MD


def test_references_name_no_variable_claude_code_leaves_unsubstituted() -> None:
    # Claude Code substitutes ${CLAUDE_SKILL_DIR} in SKILL.md only; a command copied from a
    # reference with it would run `python3 /scripts/...`.
    for skill in (SKILL, SKILL.parent / "permanent-memory-loader"):
        for page in sorted((skill / "references").glob("*.md")):
            assert "CLAUDE_SKILL_DIR" not in page.read_text(encoding="utf-8"), page
    assert "[references/commands.md](references/commands.md)" in SKILL_MD
    assert (SKILL / "references" / "commands.md").is_file()
