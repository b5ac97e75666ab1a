# The report both skills' `doctor` print: one record per check, and the lines (or JSON) made
# of them; whether any check failed decides the exit code.
#
# Each skill carries a copy of this file (`python3 scripts/dev.py sync-shared` writes them; see
# memory_io). No hook imports it.


from __future__ import annotations


class DoctorCheck:
    """One line of a doctor's report: the thing checked, its status (ok, warn, FAIL or info),
    what was found and, for a problem, what to do about it. A plain class with slots, compared
    by value and shown like a NamedTuple, so this module, like the other shared ones, imports
    nothing at load time."""

    __slots__ = ("detail", "fix", "name", "status")

    def __init__(self, name: str, status: str, detail: str, fix: str = "") -> None:
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix

    def _asdict(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DoctorCheck) and self._asdict() == other._asdict()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in self._asdict().items())
        return f"DoctorCheck({fields})"


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
