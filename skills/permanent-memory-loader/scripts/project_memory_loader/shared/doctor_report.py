# Generated from shared/doctor_report.py by `python3 scripts/dev.py sync-shared`; edit that file.
# The report both skills' `doctor` print: one record per check, and the lines (or JSON) made
# of them; whether any check failed decides the exit code.
#
# Each skill carries a copy of this file (`python3 scripts/dev.py sync-shared` writes them; see
# memory_io). No hook imports it.


from __future__ import annotations

from typing import NamedTuple


class DoctorCheck(NamedTuple):
    """One line of a doctor's report: the thing checked, its status (ok, warn, FAIL or info),
    what was found and, for a problem, what to do about it."""

    name: str
    status: str
    detail: str
    fix: str = ""


def doctor_failed(checks: list[DoctorCheck]) -> bool:
    return any(check.status == "FAIL" for check in checks)


def doctor_report(checks: list[DoctorCheck], output_format: str = "text") -> str:
    """The report both doctors print: one line per check (status, name, detail, `-> fix`), or
    with output_format "json" {"ok": ..., "checks": [{name, status, detail, fix}, ...]}."""
    if output_format == "json":
        import json

        report = {"ok": not doctor_failed(checks), "checks": [c._asdict() for c in checks]}
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    lines = []
    for check in checks:
        line = f"{check.status:<4}  {check.name:<9} {check.detail}"
        lines.append(f"{line} -> {check.fix}" if check.fix else line)
    return "\n".join(lines) + "\n"


MIN_PYTHON = (3, 9)


def check_python(version: tuple[int, ...], executable: str) -> DoctorCheck:
    """Both doctors' first line: the interpreter that runs the skill, and whether it is new
    enough."""
    shown = ".".join(str(part) for part in version[:3])
    if tuple(version[:2]) < MIN_PYTHON:
        return DoctorCheck(
            "python", "FAIL", f"Python {shown} is too old", "use Python 3.9 or newer"
        )
    return DoctorCheck("python", "ok", f"Python {shown} ({executable})")
