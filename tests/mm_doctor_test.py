from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import MANAGER_DIR
from ski_memory_manager import memory_manager, mm_doctor
from ski_memory_manager.shared import doctor_report
from ski_memory_manager.shared.doctor_report import DoctorCheck
from support import clean_env

GOOD = (
    "---\nschema_version: 1.1\nproject-name: p\nsession: 2026-05-01-10-00\nstatus: paused\n---\n"
    "\n## Session summary\nok\n\n## Steps completed\n- S0: x\n\n## Active state\n\n"
    "## Key decisions\n"
)


def test_check_yaml() -> None:
    assert mm_doctor.check_yaml() == DoctorCheck("pyyaml", "ok", f"PyYAML {yaml.__version__}")


def test_run_checks_on_a_healthy_memory_dir(tmp_path: Path) -> None:
    (tmp_path / "2026-05-01-10-00-p.md").write_text(GOOD, encoding="utf-8")
    (tmp_path / "2026-05-02-10-00-q.md").write_text(GOOD, encoding="utf-8")
    checks = mm_doctor.run_checks(tmp_path, (3, 11, 7))
    assert doctor_report.doctor_report(checks) == (
        f"ok    python    Python 3.11.7 ({sys.executable})\n"
        f"ok    pyyaml    PyYAML {yaml.__version__}\n"
        f"ok    locking   fcntl.flock on the directory itself: {tmp_path}\n"
        f"ok    memory-dir {tmp_path}\n"
        "ok    snapshots 2 snapshots parse (2 projects)\n"
    )
    assert not doctor_report.doctor_failed(checks)


def test_run_checks_reports_what_to_fix(tmp_path: Path) -> None:
    (tmp_path / "2026-05-01-10-00-p.md").write_text(GOOD, encoding="utf-8")
    (tmp_path / "2026-05-02-10-00-p.md").write_text("---\nstatus: [\n---\n", encoding="utf-8")
    (tmp_path / "2026-05-03-10-00-p.md").write_text(
        GOOD.replace("- S0: x", "S0 without a dash"), encoding="utf-8"
    )
    (tmp_path / ".2026-05-03-10-00-p.md.tmp-12-ab12cd34").write_text("partial", encoding="utf-8")
    checks = mm_doctor.run_checks(tmp_path, (3, 8, 1))
    assert checks[0] == DoctorCheck(
        "python", "FAIL", "Python 3.8.1 is too old", "use Python 3.9 or newer"
    )
    assert checks[4:] == [
        DoctorCheck(
            "snapshots",
            "warn",
            "2 of 3 snapshots (1 project) do not parse: 2026-05-03-10-00-p.md: '## Steps "
            "completed' line 1 is not a list item '- S0: text': 'S0 without a dash'; "
            "2026-05-02-10-00-p.md: invalid YAML in front matter at line 3: expected the node "
            "content, but found the end of the front matter",
            "repair or move them (load-last skips them; save will not update them)",
        ),
        DoctorCheck(
            "temp-files",
            "warn",
            "1 temporary file(s) left by interrupted saves, e.g. "
            ".2026-05-03-10-00-p.md.tmp-12-ab12cd34",
            "delete them when no save is running (they are never read)",
        ),
    ]
    assert doctor_report.doctor_failed(checks)
    assert doctor_report.doctor_report(checks[:1]) == (
        "FAIL  python    Python 3.8.1 is too old -> use Python 3.9 or newer\n"
    )


def test_run_checks_without_a_memory_dir(tmp_path: Path) -> None:
    missing = tmp_path / "memory"
    checks = mm_doctor.run_checks(missing, (3, 11, 0))
    assert checks[3:] == [
        DoctorCheck(
            "memory-dir",
            "warn",
            f"no memory directory at {missing}",
            f"mkdir -p {missing} (save needs it; load-last works without)",
        ),
    ]
    assert not doctor_report.doctor_failed(checks)


def test_many_snapshots_are_checked_newest_first_within_a_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mm_doctor, "MAX_PARSED", 10)
    for day in range(1, 31):
        (tmp_path / f"2026-04-{day:02d}-10-00-p.md").write_text(GOOD, "utf-8")
    (tmp_path / "2026-04-01-10-00-p.md").write_text("junk", "utf-8")  # oldest: not checked
    checks = mm_doctor.run_checks(tmp_path, (3, 11, 0))
    assert checks[4] == DoctorCheck(
        "snapshots", "ok", "the newest 10 of 30 snapshots parse (1 project)"
    )


def test_doctor_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "2026-05-01-10-00-p.md").write_text(GOOD, encoding="utf-8")
    assert memory_manager.main(["doctor", "--memory-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "ok    snapshots 1 snapshot parses (1 project)"
    assert memory_manager.main(["doctor", "--memory-dir", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    assert [c["name"] for c in report["checks"]] == [
        "python",
        "pyyaml",
        "locking",
        "memory-dir",
        "snapshots",
    ]


def test_doctor_fails_without_pyyaml(tmp_path: Path) -> None:
    stub = tmp_path / "no-yaml" / "yaml"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('No module named yaml')\n")
    project = tmp_path / "project"
    (project / "memory").mkdir(parents=True)
    env = clean_env()
    env.update(PYTHONPATH=str(stub.parent), CLAUDE_PROJECT_DIR=str(project))
    result = subprocess.run(
        [sys.executable, str(MANAGER_DIR / "memory_manager.py"), "doctor"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[1] == "FAIL  pyyaml    PyYAML is not installed -> pip install pyyaml"
    assert lines[3] == f"ok    memory-dir {project / 'memory'}"
    assert lines[4] == "warn  snapshots not checked (needs PyYAML) -> pip install pyyaml"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("---\na: 1\n---\n", None),
        ("x\n<<<<<<< HEAD\ny\n=======\nz\n>>>>>>> topic\n", 2),
        ("x\n>>>>>>>\n", 2),
        ("x\n<<<<<<<< eight\n=======\n", None),  # not git's seven, and ======= alone is text
        ("x\r\n<<<<<<<\r\n", 2),
    ],
)
def test_conflict_line(text: str, line: int | None) -> None:
    assert mm_doctor.conflict_line(text) == line


def test_conflicts_check_names_files_and_fails() -> None:
    check = mm_doctor.conflicts_check([f"2026-01-0{n}-10-00-p.md:{n}" for n in range(1, 6)])
    assert check.status == "FAIL"
    assert check.detail == (
        "5 snapshot(s) hold an unresolved merge conflict: 2026-01-01-10-00-p.md:1, "
        "2026-01-02-10-00-p.md:2, 2026-01-03-10-00-p.md:3, ..."
    )


def test_a_missing_memory_dir_is_not_ok_for_locking(tmp_path: Path) -> None:
    # It used to say `ok locking fcntl.flock on /tmp/nope/.ski-memory.lock`.
    missing = tmp_path / "nope"
    check = mm_doctor.check_locking(missing)
    assert check == DoctorCheck(
        "locking",
        "warn",
        f"nothing to lock: no memory directory at {missing}",
        "save creates it; the lock is the directory itself",
    )
