"""What the end-to-end tests share: where the pinned npm clients live, and a clean environment.

The clients (Claude Code, Codex and skillmds) are installed by `python3 scripts/dev.py test` with
`npm ci` into `scripts/e2e/node_modules`. Without them the end-to-end tests skip, except in CI
(`CI=true`), where a missing client is a failure: CI must run these checks, not skip them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

E2E_DIR = Path(__file__).resolve().parent
ROOT = E2E_DIR.parent.parent
NODE_BIN = E2E_DIR / "node_modules" / ".bin"

# Switches that keep the Claude Code CLI (and skillmds) from reaching anything but the loopback
# fake API: no auto-update, telemetry, error reporting or other non-essential traffic.
QUIET_NETWORK = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_BUG_COMMAND": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "SKILLMD_NO_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "NO_COLOR": "1",
}

# Variables from the machine's environment worth keeping; everything else (notably any
# CLAUDE_* or ANTHROPIC_* of an enclosing session) is left out.
_KEEP = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "SYSTEMROOT", "TIKTOKEN_CACHE_DIR")


def missing_client_reason(name: str) -> str | None:
    """None when the pinned client `name` is installed, else why the test cannot run."""
    if (NODE_BIN / name).exists():
        return None
    return (
        f"{NODE_BIN / name} is not installed: run `python3 scripts/dev.py test` "
        "(it runs `npm ci` in scripts/e2e when npm is available)"
    )


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def clean_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A minimal environment with a fresh HOME and the test's Python first on PATH.

    Hooks run `python3`; putting this interpreter's folder first makes that the same Python
    (with the same packages) the test uses to compute the expected output.
    """
    path = os.pathsep.join(
        [str(Path(sys.executable).parent), str(NODE_BIN), os.environ.get("PATH", "/usr/bin:/bin")]
    )
    env = {k: os.environ[k] for k in _KEEP if k in os.environ}
    env.update(QUIET_NETWORK)
    env.update(
        {
            "HOME": str(home),
            "PATH": path,
            "TERM": "dumb",
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
        }
    )
    if extra:
        env.update(extra)
    return env
