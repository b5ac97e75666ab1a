from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import support
from conftest import ROOT
from ski_memory_manager import mm_store
from support import load_bench

BENCH = ROOT / "scripts" / "bench"


def run_bench(*args: str, fixtures: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--fixtures", str(fixtures), *args],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )


def _smoke_report(folder: Path) -> dict[str, Any]:
    done = run_bench("--runs", "2", "--json", fixtures=folder / "fixtures")
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.fixture(scope="module")
def smoke_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    # One smoke run for the whole test run, whichever xdist workers this module's tests are on.
    report: dict[str, Any] = support.once_per_run(tmp_path_factory, "bench-smoke", _smoke_report)
    return report


PRODUCT_COMMANDS = [
    "hook_warm",
    "hook_warm_nobytecode",
    "session_start_warm",
    "hook_cold",
    "load:epics-10",
    "load:epics-40",
    "load:under-skip",
    "load:big",
    "load_last:10",
    "load_last:200",
    "save_create",
    "save_update",
    "capture",
    "capture_huge",
    "turn_capture_1mb",
    "turn_skip_1mb",
    "turn_capture_2mb",
    "turn_skip_2mb",
    "adv_load:0:16000",
    "adv_hook:0:16000",
    "adv_load:1:16000",
    "adv_hook:1:16000",
    "evidence_hit",
    "evidence_miss",
    "recall_hook_many",
    "recall_demo_silent",
    "recall_demo_quiet",
    "file_silent",
    "file_match",
]
FLOORS = ["f0", "f0_nosite", "listdir:10", "listdir:200", "yaml_floor", "git_floor"]


def test_smoke_run_reports_the_machine(smoke_report: dict[str, Any]) -> None:
    machine = smoke_report["machine"]
    assert machine["python"] == str(Path(sys.executable).absolute())
    assert machine["python_version"] == ".".join(map(str, sys.version_info[:3]))
    assert isinstance(machine["cpu_count"], int) and machine["cpu_count"] >= 1
    assert machine["platform"] and machine["tiktoken"]
    assert smoke_report["runs"] == 2 and smoke_report["smoke"] is True
    floor_kb = smoke_report["rss_method_floor_kb"]
    assert floor_kb is None or 0 < floor_kb < smoke_report["measurements"]["f0"]["median_maxrss_kb"]


@pytest.mark.parametrize("key", PRODUCT_COMMANDS + FLOORS)
def test_smoke_run_has_numeric_medians(smoke_report: dict[str, Any], key: str) -> None:
    row = smoke_report["measurements"][key]
    assert row["error"] == ""
    assert row["runs"] == 2 and len(row["samples_ms"]) == 2
    assert isinstance(row["median_ms"], float) and 0 < row["median_ms"] < 60_000
    assert row["median_ms"] == pytest.approx(sum(row["samples_ms"]) / 2, abs=0.01)
    assert isinstance(row["median_maxrss_kb"], int) and row["median_maxrss_kb"] > 0
    assert isinstance(row["median_cpu_ms"], float) and row["median_cpu_ms"] > 0


@pytest.mark.parametrize("key", PRODUCT_COMMANDS)
def test_each_product_command_is_compared_with_a_floor(
    smoke_report: dict[str, Any], key: str
) -> None:
    row = smoke_report["measurements"][key]
    floor = smoke_report["measurements"][row["floor"]]
    if floor["error"]:  # only the tokenizer floor may be missing (no encoding on this machine)
        assert row["floor"] == "encoding_floor" and row["ratio"] is None
    else:
        assert row["ratio"] == pytest.approx(row["median_ms"] / floor["median_ms"])


def test_tokenizer_floor_is_measured_or_explained(smoke_report: dict[str, Any]) -> None:
    row = smoke_report["measurements"]["encoding_floor"]
    if row["error"]:
        assert any(n.startswith("the tokenizer floor") for n in smoke_report["notes"])
    else:
        assert isinstance(row["median_ms"], float)


def test_targets_are_listed_with_their_limits(smoke_report: dict[str, Any]) -> None:
    targets = {t["row"] or t["name"]: t for t in smoke_report["targets"]}
    assert targets["hook_warm"]["limit"] == 1.3
    assert targets["hook_warm_nobytecode"]["limit"] == 1.3
    assert targets["session_start_warm"]["limit"] == 1.2
    assert targets["rss:hook_warm"]["limit"] == 1.2
    assert targets["hook_cold"]["limit"] == 1.25
    assert targets["load_last:200"]["limit"] == 2.5
    assert targets["adv_hook:0:16000"]["limit"] == 1.5
    assert targets["adv_load:0:16000"]["limit"] == 1.0
    assert targets["evidence_hit"]["limit"] == 1.3
    assert targets["evidence_miss"]["limit"] == 1.0  # work beyond the floor, in EVIDENCE_MISS_MS
    assert targets["recall_hook_many"]["limit"] == 1.3
    assert targets["recall_demo_silent"]["limit"] == 1.15
    assert targets["file_silent"]["limit"] == 1.15
    assert targets["file_match"]["limit"] == 1.3
    held = "recall at the file, held out"
    assert targets[f"{held}: recall ≥ 0.85"]["limit"] == pytest.approx(0.15)
    assert targets[f"{held}: false injections ≤ 0.25"]["limit"] == 0.25
    assert targets[f"{held}: tokens a session ≤ 250"]["limit"] == 250
    plain, keywords = "leave-one-project-out, without", "leave-one-project-out, with"
    assert targets[f"{plain} Keywords lines: recall ≥ 0.5"]["limit"] == pytest.approx(0.5)
    assert targets[f"{plain} Keywords lines: false injections ≤ 0.1"]["limit"] == 0.1
    assert targets[f"{keywords} Keywords lines: recall ≥ 0.65"]["limit"] == pytest.approx(0.35)
    assert targets[f"{keywords} Keywords lines: false injections ≤ 0.12"]["limit"] == 0.12
    assert targets["hook_warm"]["name"] == "hook, warm (cache hit) ≤ 1.3 x F0: python -c pass"
    assert {"load linear in size up to the skip", "load-last linear or better in files"} <= set(
        targets
    )
    for target in targets.values():
        assert target["met"] in (True, False, None)
        if target["value"] is not None:
            assert target["met"] == (target["value"] <= target["limit"])


def test_recall_report_gives_each_project_for_scorer_and_baseline(
    smoke_report: dict[str, Any],
) -> None:
    recall, plain = smoke_report["recall"], smoke_report["recall_plain"]
    assert recall["keywords"] is True and plain["keywords"] is False
    for report in (recall, plain):
        names = [row["project"] for row in report["scorer"]["rows"]]
        assert names == [row["project"] for row in report["BM25"]["rows"]]
        assert names[:4] == ["backstage", "cosmos", "home-assistant", "mozilla"]
        for method in ("scorer", "BM25"):
            for row in [*report[method]["rows"], report[method]["pooled"]]:
                assert 0 <= row["recall"] <= 1 and 0 <= row["false_injection"] <= 1


def test_token_report_covers_one_session(smoke_report: dict[str, Any]) -> None:
    tokens = smoke_report["tokens"]
    strategies = tokens["strategies"]
    assert set(strategies) == {
        "emit when changed (default)",
        "every turn (option)",
        "whole file each session",
    }
    for name in ("emit when changed (default)", "every turn (option)"):
        per_event = strategies[name]["per_event"]
        assert len(per_event) == tokens["prompts"] + 1  # SessionStart, then each prompt
        assert sum(per_event) == strategies[name]["total"]
        assert per_event[0] > 0  # the block arrives at SessionStart
    every = strategies["every turn (option)"]["per_event"]
    assert all(n > 0 for n in every)
    assert strategies["whole file each session"]["total"] > 0


def test_token_report_counts_what_lessons_add(smoke_report: dict[str, Any]) -> None:
    from project_memory_loader.writing import pm_lessons, pm_waiting
    from ski_memory_manager import mm_nudge

    lessons = smoke_report["tokens"]["lessons"]
    assert lessons["PreCompact instruction (each compaction)"]["text"] == pm_lessons.INSTRUCTION
    assert lessons["propose line at session start"]["text"] == pm_waiting.PROPOSE_LINE
    assert 0 < lessons["propose line at session start"]["tokens"] <= 30
    assert 0 < lessons["PreCompact instruction (each compaction)"]["tokens"] <= 100
    assert lessons["proposals shown to the model"]["tokens"] == 0
    assert lessons["Stop nudge (propose_at_stop, once)"]["text"] == mm_nudge.REASON


def test_text_report_prints_the_table(tmp_path: Path) -> None:
    done = run_bench("--runs", "1", "--only", "save", fixtures=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("project-memory benchmark: medians of interleaved runs")
    assert re.match(r"machine: .+, \d+ CPUs, Python \d+\.\d+\.\d+ \(", lines[1])
    assert any(re.match(r"F0: python -c pass +\d+\.\d ", line) for line in lines)
    wall_floor_ratio_cpu_ratio = r" +\d+\.\d +\d+\.\d +\d+\.\d\d +\d+\.\d +\d+\.\d\d$"
    assert any(re.match("save, new snapshot" + wall_floor_ratio_cpu_ratio, x) for x in lines)


def test_bad_run_count_is_a_usage_error(tmp_path: Path) -> None:
    done = run_bench("--runs", "0", fixtures=tmp_path)
    assert done.returncode == 2
    assert "--runs must be at least 1" in done.stderr


def test_child_peak_rss_is_not_charged_with_the_parents_memory(tmp_path: Path) -> None:
    bench = load_bench()
    ballast = bytearray(256 * 1024 * 1024)
    for i in range(0, len(ballast), 4096):  # touch every page so it is resident
        ballast[i] = 1
    spawner = bench.Spawner(sys.executable, tmp_path)
    try:
        row = bench.Row("f0", "F0", [sys.executable, "-c", "pass"], {}, str(tmp_path))
        outcome = spawner.run(row)
        nothing_kb = spawner.trivial_child_kb()
    finally:
        spawner.close()
    assert outcome.exit_code == 0 and outcome.ms > 0 and 0 < outcome.cpu_ms
    assert 0 < outcome.maxrss_kb < 100 * 1024
    if nothing_kb is not None:  # `true` exists: it measures below any Python
        assert 0 < nothing_kb < outcome.maxrss_kb
    del ballast


def test_superlinearity_separates_linear_from_quadratic() -> None:
    measured = load_bench("measure")
    linear, exponent = measured.superlinearity((10, 105.0), (100, 150.0), 100.0)
    assert linear == pytest.approx(1.0) and exponent == pytest.approx(1.0)
    quadratic, exponent = measured.superlinearity((10, 200.0), (100, 10_100.0), 100.0)
    assert quadratic == pytest.approx(10.0) and exponent == pytest.approx(2.0)
    flat, _ = measured.superlinearity((10, 120.0), (100, 120.0), 100.0)
    assert flat == pytest.approx(0.1)


def test_snapshot_dir_hides_the_newest_demo_snapshot_among_lookalikes(tmp_path: Path) -> None:
    inputs = load_bench("inputs")
    snapshot = (ROOT / "examples/demo-project/memory/2026-11-24-10-05-billing-api.md").read_text()
    inputs.build_snapshot_dir(tmp_path, count=20, snapshot=snapshot)
    names = sorted(p.name for p in (tmp_path / "memory").iterdir())
    assert len(names) == 20
    newest = (tmp_path / "newest").read_text()
    project = {n: mm_store.split_name(n)[1] for n in names}
    demo = [n for n in names if project[n] == "billing-api"]
    assert demo[-1] == f"{newest}-billing-api.md"
    # a newer file whose name also ends in -billing-api.md, and a newer file of another project
    assert any(n > demo[-1] and n.endswith("-legacy-billing-api.md") for n in names)
    assert project[names[-1]] != "billing-api"
    text = (tmp_path / "memory" / demo[-1]).read_text()
    assert f"session: {newest}\n" in text and "project-name: billing-api\n" in text
    legacy = next(n for n in names if n.endswith("-legacy-billing-api.md"))
    assert "project-name: legacy-billing-api\n" in (tmp_path / "memory" / legacy).read_text()


def test_evidence_project_names_paths_some_moved_some_gone(tmp_path: Path) -> None:
    bench = load_bench()
    inputs = load_bench("inputs")
    project = tmp_path / "evidence"
    inputs.build_evidence_project(project, commits=200)
    log = subprocess.run(
        ["git", "-C", str(project), "log", "--oneline"], capture_output=True, text=True, check=True
    )
    assert len(log.stdout.splitlines()) == 200
    text = (project / ".claude" / "memory" / "permanent_memory.md").read_text()
    assert len(re.findall(r"(?m)^## Epic: ", text)) == bench.EVIDENCE_EPICS
    named = re.findall(r"pkg\d+/mod_\d+\.py", text)
    assert len(set(named)) == bench.EVIDENCE_PATHS
    # Commits 50, 100 and 150 renamed modules 50, 100 and 150 (every 50th commit renames one).
    assert (project / "pkg10/mod_050_v2.py").exists() and not (
        project / "pkg10/mod_050.py"
    ).exists()
    assert sum((project / path).exists() for path in named) == bench.EVIDENCE_PATHS - 3


def test_permanent_files_sit_where_their_names_say(tmp_path: Path) -> None:
    bench = load_bench()
    inputs = load_bench("inputs")
    counter = inputs.TokenCounter(lambda text: math.ceil(len(text) / 4), "len/4", False)
    sizes = inputs.Sizes((3, 12), 200_000, (10,), 1)
    demo = (ROOT / "examples/demo-project/.claude/memory/permanent_memory.md").read_text()
    inputs.build_permanent_files(tmp_path, demo_text=demo, sizes=sizes, counter=counter)
    three = (tmp_path / "epics-3.md").read_text()
    assert re.findall(r"(?m)^## Epic: (\S+)", three) == ["FEAT-00001", "FEAT-00002", "FEAT-00003"]
    assert len(re.findall(r"(?m)^## Epic:", (tmp_path / "epics-12.md").read_text())) == 12
    under = counter.count((tmp_path / "under-skip.md").read_text())
    assert bench.SKIP_TOKENS - 20 <= under < bench.SKIP_TOKENS
    assert (tmp_path / "big.md").stat().st_size >= 200_000


def test_plan_measures_the_groups_asked_for_and_their_floors(tmp_path: Path) -> None:
    bench = load_bench()
    inputs = load_bench("inputs")
    counter = inputs.TokenCounter(lambda text: math.ceil(len(text) / 4), "len/4", False)
    b = bench.Bench(
        sys.executable, ROOT, bench.SMOKE, counter, tmp_path / "fixtures", tmp_path, {"A": "1"}
    )
    rows = {r.key: r for r in bench.plan(b, {"hook"})}
    assert list(rows) == [
        "f0",
        "encoding_floor",
        "f0_nosite",
        "hook_warm",
        "hook_warm_nobytecode",
        "session_start_warm",
        "hook_cold",
    ]
    assert {r.group for r in rows.values()} == {"floor", "hook"}
    assert all(r.floor in rows for r in rows.values() if r.floor)
    assert all(r.env["A"] == "1" for r in rows.values())  # the run's environment, then the row's
    assert rows["hook_cold"].env["CLAUDE_PLUGIN_DATA"] == bench.FRESH
    hook = rows["hook_warm"]
    assert hook.argv[0] == sys.executable and hook.argv[-1] == "hook"
    assert json.loads(Path(hook.stdin).read_text())["hook_event_name"] == "UserPromptSubmit"
    assert (hook.floor, hook.limit, hook.rss_limit, hook.starts) == (
        "f0",
        1.3,
        1.2,
        bench.PERMANENT,
    )
    (tmp_path / "again").mkdir()
    again = dataclasses.replace(b, scratch=tmp_path / "again")
    assert [r.key for r in bench.plan(again, {"tokens"})] == ["f0"]  # F0 is always measured


def test_evaluate_checks_each_kind_of_target() -> None:
    bench = load_bench()
    measured = load_bench("measure")

    def row(key: str, ms: float, **kw: Any) -> Any:
        return bench.Row(key, key, ["x"], ms=[ms], rss_kb=[kw.pop("rss", 100)], **kw)

    rows = {
        r.key: r
        for r in [
            row("f0", 10.0),
            row("encoding_floor", 100.0),
            row("warm", 14.0, floor="f0", limit=1.3, rss_limit=1.2, rss=110),
            row("hostile", 600.0, floor="encoding_floor", bound_ms=1000.0),
            row("gone", 1.0, floor="broken", limit=2.0),
            row("broken", 1.0, error="exit 1"),
            row("small", 110.0, floor="encoding_floor", series="load", size=1000),
            row("large", 300.0, floor="encoding_floor", series="load", size=10_000),
            row("skip-a", 50.0, series="load-skipped", size=100_000),
            row("skip-b", 55.0, series="load-skipped", size=1_000_000),
            *(
                row(f"ll{n}", ms, series="load-last", size=n)
                for n, ms in ((10, 30), (1000, 40), (10_000, 60))
            ),
        ]
    }
    found = {t["row"] or t["name"]: t for t in measured.evaluate(rows)}
    value_met = {
        k: (round(t["value"], 3) if t["value"] is not None else None, t["met"])
        for k, t in found.items()
    }
    assert value_met == {
        "warm": (1.4, False),
        "rss:warm": (1.1, True),
        "hostile": (0.5, True),
        "gone": (None, None),
        "load linear in size up to the skip": (2.0, False),  # 10x the work for 10x the size
        "skipped files: time flat in size": (1.1, True),
        "load-last linear or better in files": (0.167, True),  # last two: 30 -> 50 ms of work
    }
    assert found["gone"]["why_unavailable"] == "broken unavailable"
    assert found["load linear in size up to the skip"]["subject"] == "large"


def test_a_command_that_fails_or_prints_the_wrong_thing_is_an_error(tmp_path: Path) -> None:
    bench = load_bench()
    measured = load_bench("measure")
    spawner = bench.Spawner(sys.executable, tmp_path)
    try:
        rows = [
            bench.Row("ok", "ok", [sys.executable, "-c", "print('yes, and more')"], starts="yes"),
            bench.Row("wrong", "wrong", [sys.executable, "-c", "print('no')"], starts="yes"),
            bench.Row(
                "lacks", "lacks", [sys.executable, "-c", "print('yes x')"], lacks="x", starts="y"
            ),
            bench.Row("exit", "exit", [sys.executable, "-c", "raise SystemExit(3)"]),
        ]
        for row in rows:
            row.cwd = str(tmp_path)
            spawner.run(row)
            measured.check(spawner, row, spawner.run(row).exit_code)
    finally:
        spawner.close()
    assert [row.error.split(";")[0] for row in rows] == [
        "",
        "the output does not start with 'yes'",
        "the output has 'x'",
        "exit 3",
    ]


def test_a_failing_hook_makes_the_run_exit_1(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    shutil.copytree(
        ROOT / "skills", plugin / "skills", ignore=shutil.ignore_patterns("__pycache__")
    )
    hooks = (ROOT / "hooks" / "hooks.json").read_text().replace("memory_manager.py", "missing.py")
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(hooks)
    done = run_bench(
        "--runs", "1", "--only", "hook", "--no-profile", "--plugin-root", str(plugin),
        fixtures=tmp_path / "fixtures",
    )  # fmt: skip
    assert done.returncode == 1
    assert "bench: session start, warm (both caches hit) failed: exit 2" in done.stderr
    assert re.search(r"(?m)^session start, warm \(both caches hit\) +FAILED: exit 2: ", done.stdout)
    # the other rows are measured all the same (their targets met or not, depending on the load)
    assert re.search(
        r"(?m)^hook, warm \(cache hit\) +\d+\.\d .* ≤ 1\.30 (met|NOT MET)$", done.stdout
    )


def test_plan_lists_every_row_with_its_floor_and_targets(tmp_path: Path) -> None:
    bench = load_bench()
    inputs = load_bench("inputs")
    counter = inputs.TokenCounter(lambda text: math.ceil(len(text) / 4), "len/4", False)
    b = bench.Bench(sys.executable, ROOT, bench.SMOKE, counter, tmp_path / "fixtures", tmp_path, {})
    rows = bench.plan(b, set(bench.GROUPS))
    table = {r.key: (r.group, r.floor, r.limit, r.bound_ms, r.rss_limit, r.series) for r in rows}
    tok = "encoding_floor"
    assert table == {
        "f0": ("floor", None, None, None, None, ""),
        tok: ("floor", None, None, None, None, ""),
        "f0_nosite": ("hook", "f0", None, None, None, ""),
        "hook_warm": ("hook", "f0", 1.3, None, 1.2, ""),
        "hook_warm_nobytecode": ("hook", "f0", 1.3, None, None, ""),
        "session_start_warm": ("hook", "f0", 1.2, None, None, ""),
        "hook_cold": ("hook", tok, 1.25, None, None, ""),
        "load:epics-10": ("load", tok, None, None, None, "load"),
        "load:epics-40": ("load", tok, None, None, None, "load"),
        "load:under-skip": ("load", tok, None, None, None, "load"),
        "load:big": ("load", tok, None, None, None, "load-skipped"),
        "adv_load:0:16000": ("adversarial", tok, None, 1000.0, None, ""),
        "adv_hook:0:16000": ("adversarial", tok, 1.5, None, None, ""),
        "adv_load:1:16000": ("adversarial", tok, None, 1000.0, None, ""),
        "adv_hook:1:16000": ("adversarial", tok, 1.5, None, None, ""),
        "evidence_hit": ("evidence", "f0", 1.3, None, None, ""),
        "git_floor": ("evidence", None, None, None, None, ""),
        "evidence_miss": ("evidence", tok, None, 1000.0, None, ""),
        "listdir:10": ("load-last", None, None, None, None, ""),
        "load_last:10": ("load-last", "listdir:10", None, None, None, "load-last"),
        "listdir:200": ("load-last", None, None, None, None, ""),
        "load_last:200": ("load-last", "listdir:200", 2.5, None, None, "load-last"),
        "yaml_floor": ("save", None, None, None, None, ""),
        "save_create": ("save", "yaml_floor", None, None, None, ""),
        "save_update": ("save", "yaml_floor", None, None, None, ""),
        "capture": ("save", "yaml_floor", 3.0, None, None, ""),
        "capture_huge": ("save", "yaml_floor", None, 500.0, None, ""),
        "turn_capture_1mb": ("save", "yaml_floor", None, 1000.0, None, ""),
        "turn_skip_1mb": ("save", "f0_nosite", 1.3, None, None, ""),
        "turn_capture_2mb": ("save", "yaml_floor", None, 1000.0, None, ""),
        "turn_skip_2mb": ("save", "f0_nosite", 1.3, None, None, ""),
        "recall_hook_many": ("recall", "f0", 1.3, None, None, ""),
        "recall_demo_silent": ("recall", "f0", 1.15, None, None, ""),
        "recall_demo_quiet": ("recall", "f0", 1.15, None, None, ""),
        "file_silent": ("file", "f0", 1.15, None, None, ""),
        "file_match": ("file", "f0", 1.3, None, None, ""),
    }
    assert [r.key for r in rows] == list(table)  # the report's order
    by_key = {r.key: r for r in rows}
    assert by_key["load:big"].lacks == "FEAT-0" and by_key["load:epics-10"].has == ("FEAT-0",)
    assert [by_key[f"load_last:{n}"].size for n in (10, 200)] == [10, 200]
    assert by_key["save_update"].argv[-1].endswith("update.json")
    assert by_key["capture"].silent and by_key["capture"].argv[-1] == "hook"
    evidence = Path(by_key["evidence_hit"].env["CLAUDE_PROJECT_DIR"])
    assert by_key["evidence_miss"].env["CLAUDE_PLUGIN_DATA"] == bench.FRESH
    assert by_key["evidence_hit"].cwd == str(evidence) == by_key["git_floor"].argv[2]
    assert by_key["save_create"].argv[by_key["save_create"].argv.index("--memory-dir") + 1] == (
        bench.FRESH
    )


def test_the_recall_project_keeps_the_newest_epics_and_archives_the_rest(tmp_path: Path) -> None:
    inputs = load_bench("inputs")
    demo = (ROOT / "examples/demo-project/.claude/memory/permanent_memory.md").read_text()
    inputs.build_recall_project(tmp_path, demo_text=demo, epics=95)
    memory = tmp_path / ".claude" / "memory"
    kept = re.findall(r"(?m)^## Epic: (\S+)", (memory / "permanent_memory.md").read_text())
    assert kept == [f"FEAT-{n:05d}" for n in range(66, 96)]  # RECALL_KEPT, the newest
    archived = [
        re.findall(r"(?m)^## Epic: (\S+)", path.read_text())
        for path in sorted((memory / "archive").glob("*.md"))
    ]
    assert [len(epics) for epics in archived] == [40, 25]
    assert archived[0][0] == "FEAT-00001" and archived[-1][-1] == "FEAT-00065"
