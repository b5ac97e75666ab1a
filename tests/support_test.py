"""support.once_in: one build for every process that asks, and none kept from a failed one."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import support

TESTS_DIR = Path(__file__).resolve().parent

# Builds slowly, counting its builds in `builds`, and returns a value read back from its folder.
BUILD = r"""
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import support
root, builds = Path(sys.argv[2]), Path(sys.argv[3])
def build(folder):
    with builds.open("a") as count:
        count.write("built\n")
    time.sleep(0.5)
    (folder / "made").write_text("in the folder")
    return {"path": str(folder / "made")}
value = support.once_in(root, "slow", build)
print(json.dumps([value, Path(value["path"]).read_text()]))
"""


def test_processes_asking_at_once_share_one_build(tmp_path: Path) -> None:
    builds = tmp_path / "builds"
    askers = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD, str(TESTS_DIR), str(tmp_path), str(builds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    answers = [json.loads(asker.communicate(timeout=60)[0]) for asker in askers]
    assert builds.read_text() == "built\n"
    made = str(tmp_path / "once-slow" / "made")
    assert answers == [[{"path": made}, "in the folder"]] * 3


def test_a_failed_build_is_built_again_in_an_empty_folder(tmp_path: Path) -> None:
    def fail(folder: Path) -> None:
        (folder / "half").write_text("left behind")
        raise RuntimeError("build failed")

    with pytest.raises(RuntimeError, match="build failed"):
        support.once_in(tmp_path, "flaky", fail)
    assert not (tmp_path / "once-flaky.json").exists()
    seen = support.once_in(
        tmp_path, "flaky", lambda folder: sorted(p.name for p in folder.iterdir())
    )
    assert seen == []
    assert support.once_in(tmp_path, "flaky", lambda folder: "not called") == []


def test_the_run_folder_is_shared_by_workers_only(tmp_path_factory: pytest.TempPathFactory) -> None:
    base = tmp_path_factory.getbasetemp()
    worker = support.os.environ.get("PYTEST_XDIST_WORKER")
    assert support.run_folder(tmp_path_factory) == (base.parent if worker else base)
    if worker:
        assert base.name == f"popen-{worker}"
