"""End to end in the real Claude Code CLI: `/project-memory:import docs/adr`, typed as a prompt.

The fake Messages API plays the model: it reads the command's text as the client sent it (the
plugin's folder filled in), takes the `--write` line of its ```bash blocks, puts the folders the
user typed in place of the example's, and runs it with the Bash tool. No allow rule is given:
the command's own `allowed-tools` must cover the call. The record becomes an epic on file."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from e2e_capture_test import LOADER_SCRIPT, command_message, no_outside_traffic, run_command
from e2e_write_path_test import installed_user, new_project
from fake_anthropic import FakeAnthropic

pytestmark = pytest.mark.e2e
__all__ = ["no_outside_traffic"]  # its autouse fixture: no traffic beyond the fake API

RECORD = """# 1. Use Stripe for billing

Date: 2024-03-01

## Status

Accepted

## Context

We take payments.

## Decision

We use Stripe through `src/billing/stripe_client.py`.

## Consequences

Webhooks must be idempotent.
"""


def import_command(body: dict[str, Any]) -> str:
    tags, command_text = command_message(body, "project-memory:import")
    [typed] = re.findall(r"<command-args>(.*?)</command-args>", tags, flags=re.DOTALL)
    blocks = re.findall(r"```bash\n(.*?)```", command_text, flags=re.DOTALL)
    [line] = [b.strip() for b in blocks if "--write" in b]
    assert "${" not in line and f'{LOADER_SCRIPT}" import docs/adr --write' in line, line
    return line.replace(" import docs/adr ", f" import {typed.strip()} ")


def test_import_writes_the_records_as_epics(
    claude_bin: Path, api: FakeAnthropic, tmp_path: Path
) -> None:
    user = installed_user(claude_bin, api, tmp_path / "home")
    project = new_project(tmp_path, "billing")
    (project / "docs" / "adr").mkdir(parents=True)
    (project / "docs" / "adr" / "0001-use-stripe.md").write_text(RECORD, encoding="utf-8")
    (project / "src" / "billing").mkdir(parents=True)
    (project / "src" / "billing" / "stripe_client.py").write_text("", encoding="utf-8")
    _reply, _seen, results = run_command(
        user, project, "/project-memory:import docs/adr", import_command
    )
    [result] = results
    assert not result.is_error, result.text
    memory = project / ".claude" / "memory" / "permanent_memory.md"
    assert result.text == (
        "added ADR-0001-use-stripe from docs/adr/0001-use-stripe.md: Use Stripe for billing\n"
        f"1 record (1 added), 0 files skipped; {memory}"
    )
    written = memory.read_text(encoding="utf-8")
    assert written.startswith(
        "## Epic: ADR-0001-use-stripe \u2014 Use Stripe for billing\n"
        "**Completed:** 2024-03-01T00:00:00Z\n"
    )
    assert "**Paths:** src/billing/stripe_client.py\n" in written
    assert "**Source:** docs/adr/0001-use-stripe.md (imported " in written
    assert "\n- Webhooks must be idempotent.\n" in written
