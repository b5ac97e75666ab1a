"""doctor_report: the report both doctors print, as text and as JSON; each test runs against both
skills' copies."""

from __future__ import annotations

from types import ModuleType


def test_doctor_report_text_and_json(doctor_report: ModuleType) -> None:
    import json

    checks = [
        doctor_report.DoctorCheck("python", "ok", "Python 3.12.1"),
        doctor_report.DoctorCheck("memory-dir", "FAIL", "no directory", "mkdir memory"),
    ]
    assert doctor_report.doctor_report(checks) == (
        "ok    python    Python 3.12.1\nFAIL  memory-dir no directory -> mkdir memory\n"
    )
    assert doctor_report.doctor_failed(checks) and not doctor_report.doctor_failed(checks[:1])
    report = doctor_report.doctor_report(checks, "json")
    assert report.endswith("}\n")
    parsed = json.loads(report)
    assert parsed["ok"] is False
    # Both skills' `doctor --format json` list a check's keys in this order.
    assert [list(check) for check in parsed["checks"]] == [["name", "status", "detail", "fix"]] * 2
    assert parsed["checks"][1] == checks[1]._asdict()
    assert checks[0] == doctor_report.DoctorCheck("python", "ok", "Python 3.12.1", "")
    assert checks[0] != doctor_report.DoctorCheck("python", "warn", "Python 3.12.1")
    assert repr(checks[0]) == (
        "DoctorCheck(name='python', status='ok', detail='Python 3.12.1', fix='')"
    )


def test_check_python_names_the_interpreter_and_fails_before_3_9(doctor_report: ModuleType) -> None:
    check_python, check = doctor_report.check_python, doctor_report.DoctorCheck
    assert check_python((3, 9, 0), "/usr/bin/python3") == check(
        "python", "ok", "Python 3.9.0 (/usr/bin/python3)"
    )
    assert check_python((3, 8, 18), "/usr/bin/python3") == check(
        "python", "FAIL", "Python 3.8.18 is too old", "use Python 3.9 or newer"
    )
