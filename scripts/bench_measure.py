"""How scripts/bench runs, checks and reports each command: the small helper that starts every
measured child (so a child's peak RSS is not charged with the parent's), the rows and their
samples, interleaved runs, what each command must print, the targets (each row's, the growth of
a series, the recall evaluation's held-out part), where a command that missed its target spends
its time (-X importtime, cProfile), and the text report."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import math
import os
import pstats
import shlex
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from bench_inputs import (
    DATA,
    DEMO,
    EVERY_TURN,
    FRESH,
    PROMPT,
    TIMEOUT_S,
    Bench,
    BenchError,
    hook_context,
    hook_input,
    log,
)
from file_eval import TARGETS as FILE_TARGETS
from file_eval import evaluation as file_evaluation
from file_eval import table as file_table
from recall_eval import TARGETS as RECALL_TARGETS
from recall_eval import evaluation as recall_evaluation
from recall_eval import table as recall_table

# The Stop hook's nudge (ski_memory_manager.mm_nudge.REASON; a test checks they are the same).
NUDGE_REASON = (
    "Before you stop: if this session settled a decision or found a gotcha "
    "that later sessions in this project must know, propose it with the "
    "permanent-memory-loader skill's propose command (a person reviews it); otherwise say "
    "there is nothing to propose."
)
SLOW_MS, SLOW_RUNS = 3000.0, 5  # a command slower than this is measured SLOW_RUNS times

# The helper that starts every measured child, importing nothing beyond builtins. It reads
# "<n>\n" and n bytes of NUL-separated fields (timeout, cwd, stdin, stdout, stderr, argc,
# argv..., KEY=VALUE...) and answers "<wall ns> <ru_maxrss> <wait status> <CPU µs>\n".
SPAWNER = r"""
import os, sys, time, signal
inp, out, child = sys.stdin.buffer, sys.stdout.buffer, [0]
def on_alarm(signum, frame):
    if child[0]: os.kill(child[0], signal.SIGKILL)
signal.signal(signal.SIGALRM, on_alarm)
try: peak = [int(l.split()[1]) for l in open("/proc/self/status", "rb") if l[:6] == b"VmHWM:"][0]
except (OSError, IndexError): peak = 0
out.write(b"ready %d\n" % peak); out.flush()
for header in iter(inp.readline, b""):
    f = inp.read(int(header)).split(b"\0"); argc = int(f[5]); argv = f[6:6 + argc]
    env = dict(kv.split(b"=", 1) for kv in f[6 + argc:] if kv)
    modes = (os.O_RDONLY,) + (os.O_WRONLY | os.O_CREAT | os.O_TRUNC,) * 2
    fds = [os.open(f[2 + i], modes[i], 0o600) for i in range(3)]
    t0 = time.perf_counter_ns(); pid = os.fork()
    if pid == 0:
        try:
            os.chdir(f[1]); [os.dup2(fd, i) for i, fd in enumerate(fds)]
            os.execve(argv[0], argv, env)
        finally: os._exit(127)
    child[0] = pid; signal.setitimer(signal.ITIMER_REAL, float(f[0]))
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter_ns(); signal.setitimer(signal.ITIMER_REAL, 0); child[0] = 0
    [os.close(fd) for fd in fds]
    cpu = (ru.ru_utime + ru.ru_stime) * 1e6
    out.write(b"%d %d %d %d\n" % (t1 - t0, ru.ru_maxrss, status, cpu)); out.flush()
"""


def med(values: list[Any]) -> float | None:
    return statistics.median(values) if values else None


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b <= 0 else a / b


@dataclass
class Row:
    """One measured command: what it runs, the --only group it belongs to, the floor it is
    measured beside, its targets, what it must print; then its samples."""

    key: str
    label: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # on top of the run's environment
    cwd: str = str(DEMO)
    stdin: str = os.devnull
    group: str = "floor"
    floor: str | None = None  # key of the row it is compared with and interleaved with
    limit: float | None = None  # target: median / the floor's median at most this
    bound_ms: float | None = None  # target: median - the floor's median at most this
    rss_limit: float | None = None  # target: peak RSS / F0's at most this
    show_rss: bool = False  # in the report's peak RSS table (as is a row with an RSS target)
    starts: str = ""  # what its output (a hook's context) must start with,
    has: tuple[str, ...] = ()  # hold,
    lacks: str = ""  # and not hold;
    empty_ok: bool = False  # unless it is empty, when that is fine
    silent: bool = False  # it must print nothing at all
    series: str = ""  # the growth target it belongs to, by its `size` (bytes or files)
    size: float = 0
    ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    runs: int = 0
    note: str = ""
    stderr_sample: str = ""
    error: str = ""

    def median_ms(self) -> float | None:
        return None if self.error else med(self.ms)


class Outcome(NamedTuple):
    ms: float  # wall time from fork to reaped exit
    cpu_ms: float  # user + system CPU time of the child
    maxrss_kb: int
    exit_code: int


class Spawner:
    """Runs each child from the small helper process."""

    def __init__(self, python: str, scratch: Path) -> None:
        argv = [python, "-S", "-I", "-c", SPAWNER]
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._in, self._out = self._proc.stdin, self._proc.stdout
        ready = self._out.readline().split()
        if len(ready) != 2 or ready[0] != b"ready":
            raise BenchError(f"could not start the process helper with {python}")
        self.own_peak_kb, self.scratch, self._fresh = int(ready[1]), scratch, 0
        self.stdout_path, self.stderr_path = scratch / "child.stdout", scratch / "child.stderr"

    def materialise(self, row: Row) -> tuple[list[str], dict[str, str]]:
        fresh = self.scratch / "fresh" / str(self._fresh + 1)
        if FRESH in row.argv or FRESH in row.env.values():
            self._fresh += 1
            fresh.mkdir(parents=True)
        argv = [str(fresh) if a == FRESH else a for a in row.argv]
        return argv, {k: str(fresh) if v == FRESH else v for k, v in row.env.items()}

    def run(self, row: Row, timeout: float = TIMEOUT_S) -> Outcome:
        argv, env = self.materialise(row)
        fields = [repr(timeout), row.cwd, row.stdin, str(self.stdout_path), str(self.stderr_path)]
        fields += [str(len(argv)), *argv, *(f"{k}={v}" for k, v in env.items())]
        payload = b"\0".join(os.fsencode(f) for f in fields)
        self._in.write(b"%d\n" % len(payload) + payload)
        self._in.flush()
        answer = self._out.readline().split()
        if len(answer) != 4:
            raise BenchError("the process helper stopped unexpectedly")
        ns, rss, status, cpu_us = (int(float(x)) for x in answer)
        rss //= 1024 if sys.platform == "darwin" else 1  # bytes there, kilobytes on Linux
        return Outcome(ns / 1e6, cpu_us / 1e3, rss, os.waitstatus_to_exitcode(status))

    def trivial_child_kb(self) -> int | None:
        """Peak RSS measured this way for a child that does nothing (`true`): the RSS column's
        floor, since a forked child starts with a copy of the helper's pages."""
        true = shutil.which("true")
        outcome = self.run(Row("true", "true", [true], {}, str(self.scratch))) if true else None
        return outcome.maxrss_kb if outcome and outcome.exit_code == 0 else None

    def close(self) -> None:
        self._in.close()
        self._proc.wait(timeout=10)


def output_complaint(row: Row, text: str) -> str | None:
    if row.silent:
        return f"it printed {text[:60]!r}, where nothing matches" if text else None
    if (row.empty_ok and not text) or not row.starts:
        return None
    if not text.startswith(row.starts):
        return f"the output does not start with {row.starts!r}"
    wrong = [f"no {x!r}" for x in row.has if x not in text]
    wrong += [repr(row.lacks)] if row.lacks and row.lacks in text else []
    return f"the output has {', '.join(wrong)}" if wrong else None


def measure(spawner: Spawner, rows: list[Row], runs: int) -> None:
    """Each row interleaved with its floor's other rows, the order flipped every round."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.floor or row.key, []).append(row)
    for row in rows:  # warm-up: caches, .pyc files; a slow command is measured fewer times
        outcome = spawner.run(row)
        check(spawner, row, outcome.exit_code)
        row.runs = SLOW_RUNS if outcome.ms > SLOW_MS and runs > SLOW_RUNS else runs
        if row.runs < runs:
            row.note = f"slow ({outcome.ms / 1000:.1f} s per run): measured {SLOW_RUNS} times"
    for number in range(runs):
        log(f"round {number + 1}/{runs}")
        for group in groups.values():
            for row in group if number % 2 == 0 else group[::-1]:
                if not row.error and len(row.ms) < min(row.runs, number + 1):
                    outcome = spawner.run(row)
                    if check(spawner, row, outcome.exit_code):
                        row.ms.append(outcome.ms)
                        row.cpu_ms.append(outcome.cpu_ms)
                        row.rss_kb.append(outcome.maxrss_kb)


def check(spawner: Spawner, row: Row, code: int) -> bool:
    """Whether the last run exited 0 and printed what it should; else the row's error says."""
    err = spawner.stderr_path.read_text(errors="replace").strip()
    row.stderr_sample = row.stderr_sample or err[:200].split("\n")[0]
    out = spawner.stdout_path.read_text(errors="replace")
    complaint = (
        f"exit {code}" + (f": {err.splitlines()[-1][:200]}" if err else "") if code else None
    )
    complaint = complaint or output_complaint(row, hook_context(out))
    row.error = row.error or (f"{complaint}; stdout began {out[:120]!r}" if complaint else "")
    return not row.error


def traced(spawner: Spawner, row: Row, option: list[str]) -> subprocess.CompletedProcess[bytes]:
    """One run of the row's command with `python <option>` (a fresh directory again)."""
    argv, env = spawner.materialise(row)
    with open(row.stdin, "rb") as stdin:
        return subprocess.run([argv[0], *option, *argv[1:]], stdin=stdin, capture_output=True,
                              env=env, cwd=row.cwd, timeout=TIMEOUT_S)  # fmt: skip


def imports_beyond_startup(spawner: Spawner, row: Row) -> list[tuple[int, str]]:
    """(cumulative µs, module) of each top-level import that `python -c pass` does not make."""

    def imports(run: Row) -> list[tuple[int, str]]:
        err = traced(spawner, run, ["-X", "importtime"]).stderr.decode(errors="replace")
        fields = [x.split("|") for x in err.splitlines() if x.startswith("import time:")]
        top = [f for f in fields if len(f) == 3 and not f[2].startswith("  ")]
        return [(int(f[1]), f[2].strip()) for f in top if f[1].strip().isdigit()]

    bare = dataclasses.replace(row, argv=[row.argv[0], "-c", "pass"])
    startup = {name for _, name in imports(bare)}
    return sorted(x for x in imports(row) if x[1] not in startup)[::-1]


def profile(spawner: Spawner, row: Row) -> list[str]:
    """Where a command that missed its target spends its time: its imports, then cProfile."""
    lines = ["imports beyond the interpreter's own start-up (-X importtime, cumulative):"]
    top = imports_beyond_startup(spawner, row)[:10]
    lines += [f"  {us / 1000:7.1f} ms  {name}" for us, name in top]
    stats = spawner.scratch / f"profile-{row.key.replace(':', '-')}.pstats"
    traced(spawner, row, ["-m", "cProfile", "-o", str(stats)])
    if stats.exists():
        out = io.StringIO()
        pstats.Stats(str(stats), stream=out).sort_stats("cumulative").print_stats(14)
        table = [x.strip()[:120] for x in out.getvalue().splitlines() if x.strip()]
        start = next((i for i, x in enumerate(table) if x.startswith("ncalls")), len(table))
        lines += ["cProfile, by cumulative time (s):", *(f"  {x}" for x in table[start:][:15])]
    return lines


def recall_targets(recall: dict[str, Any]) -> list[dict[str, Any]]:
    """The scorer's leave-one-project-out figures, pooled, as targets (recall as its misses, so
    that every target is a value at most its limit)."""
    if not recall:
        return []
    pooled, found = recall["scorer"]["pooled"], []
    least, most = RECALL_TARGETS[recall["keywords"]]
    words = "with" if recall["keywords"] else "without"
    title = f"leave-one-project-out, {words} Keywords lines"
    missed = None if pooled["recall"] is None else 1 - pooled["recall"]
    found.append(target(f"{title}: recall ≥ {least}", "1 - recall (the share missed), pooled",
                        missed, 1 - least, None, "", ""))  # fmt: skip
    found.append(target(f"{title}: false injections ≤ {most}", "false injections, pooled",
                        pooled["false_injection"], most, None, "", ""))  # fmt: skip
    return found


def file_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Recall at the file's held-out figures, both channels, pooled, as targets (recall as its
    misses); leave-one-project-out's as well when it was run."""
    found = []
    for title, part in (("held out", "pooled"), ("held out, leave-one-project-out", "lopo_pooled")):
        figures = report.get(part, {}).get("both")
        if not figures:
            continue
        least, most = FILE_TARGETS["recall"], FILE_TARGETS["false_injection"]
        missed = None if figures["recall"] is None else 1 - figures["recall"]
        found += [
            target(f"recall at the file, {title}: recall ≥ {least}",
                   "1 - recall (the share missed), both channels", missed, 1 - least, None, "",
                   ""),
            target(f"recall at the file, {title}: false injections ≤ {most}",
                   "false injections, both channels", figures["false_injection"], most, None,
                   "", ""),
            target(f"recall at the file, {title}: tokens a session ≤ {FILE_TARGETS['tokens']:g}",
                   "mean tokens added to a session", figures["tokens_mean"],
                   FILE_TARGETS["tokens"], None, "", ""),
        ]  # fmt: skip
    return found


def recall_text(recall: dict[str, Any]) -> list[str]:
    return ["", *recall_table(recall)]


def target(
    name: str, how: str, value: float | None, limit: float, row: str | None, subject: str, why: str
) -> dict[str, Any]:
    met = None if value is None else value <= limit
    text = "n/a" if met is None else ("met" if met else "NOT MET")
    return dict(name=name, measured=how, value=value, limit=limit, met=met, met_text=text,
                why_unavailable=why, row=row, subject=subject)  # fmt: skip


def superlinearity(
    small: tuple[float, float], big: tuple[float, float], base: float
) -> tuple[float, float]:
    """(work ratio / size ratio, growth exponent) between two (size, median ms) points, where
    work is the median above `base` (at least 1 ms, so noise cannot divide by ~0). A value up to
    1 means the cost grows linearly or better."""
    (size_a, ms_a), (size_b, ms_b) = small, big
    work = max(ms_b - base, 1.0) / max(ms_a - base, 1.0)
    return work / (size_b / size_a), math.log(work) / math.log(size_b / size_a)


# How a series of rows grows with its size: (target, series, compare the last two rows rather
# than the smallest and the largest, the row whose median is not work (F0 if it failed) or
# None to compare the medians themselves, limit).
GROWTH = (
    ("load linear in size up to the skip", "load", False, "encoding_floor", 1.1),
    ("skipped files: time flat in size", "load-skipped", False, None, 1.25),
    ("load-last linear or better in files", "load-last", True, "f0", 1.1),
)


def evaluate(rows: dict[str, Row]) -> list[dict[str, Any]]:
    """Each row's own targets, then how the series grow."""
    found = []
    for key, r in rows.items():
        floor = rows.get(r.floor or "", r)
        median, base = r.median_ms(), floor.median_ms()
        why = "" if base is not None else f"{floor.key} unavailable"
        if r.limit is not None:
            name, how = f"{r.label} ≤ {r.limit} x {floor.label}", f"{key} / {floor.key}"
            found.append(target(name, how, ratio(median, base), r.limit, key, key, why))
        if r.bound_ms is not None:
            work = None if median is None or base is None else (median - base) / r.bound_ms
            name = f"{r.label}: work beyond the floor ≤ {r.bound_ms / 1000:g} s"
            how = f"({key} - {floor.key}) / {r.bound_ms:g} ms"
            found.append(target(name, how, work, 1.0, key, key, why))
        if r.rss_limit is not None:
            rss = ratio(med(r.rss_kb), med(rows["f0"].rss_kb))
            name, how = f"{r.label}: peak RSS ≤ {r.rss_limit} x F0's", f"rss:{key} / rss:f0"
            found.append(target(name, how, rss, r.rss_limit, f"rss:{key}", key, ""))
    for name, series, last_two, base_key, limit in GROWTH:
        grown = sorted((r for r in rows.values() if r.series == series and r.median_ms()),
                       key=lambda r: r.size)  # fmt: skip
        if len(grown) < 2:
            continue
        small, big = grown[-2:] if last_two else (grown[0], grown[-1])
        if base_key is None:
            how = f"{big.key} / {small.key} ({big.size / small.size:,.0f}x the bytes)"
            value = ratio(big.median_ms(), small.median_ms())
            found.append(target(name, how, value, limit, None, big.key, ""))
            continue
        base_row = rows[base_key] if rows[base_key].median_ms() else rows["f0"]
        base = base_row.median_ms()
        if base is not None:
            points = (small.size, small.median_ms() or 0), (big.size, big.median_ms() or 0)
            value, exp = superlinearity(*points, base)
            how = f"(work ratio / size ratio) {small.key} → {big.key}, work = median -"
            how += f" {base_row.key}, growth exponent {exp:.2f}"
            found.append(target(name, how, value, limit, None, big.key, ""))
    return found


def row_report(row: Row, rows: dict[str, Row]) -> dict[str, Any]:
    floor = rows.get(row.floor or "")
    base = floor if floor is not None and not floor.error else None
    return {
        "label": row.label,
        "argv": ["<fresh dir>" if a == FRESH else a for a in row.argv],
        "floor": row.floor,
        "group": row.group,
        "runs": len(row.ms),
        "median_ms": med(row.ms),
        "samples_ms": [round(x, 3) for x in row.ms],
        "ratio": ratio(med(row.ms), med(base.ms)) if base else None,
        "median_cpu_ms": med(row.cpu_ms),
        "cpu_ratio": ratio(med(row.cpu_ms), med(base.cpu_ms)) if base else None,
        "median_maxrss_kb": int(med(row.rss_kb) or 0) or None,
        "rss_ratio": ratio(med(row.rss_kb), med(rows["f0"].rss_kb)),
        "show_rss": row.show_rss or row.rss_limit is not None,
        "note": row.note,
        "stderr_sample": row.stderr_sample,
        "error": row.error,
    }


def render_text(report: dict[str, Any]) -> str:
    def num(value: float | None, digits: int = 1) -> str:
        return "—" if value is None else f"{value:.{digits}f}"

    def met(key: str) -> str:
        goal = goals.get(key)
        return f"  ≤ {goal['limit']:.2f} {goal['met_text']}" if goal else ""

    m, rows = report["machine"], report["measurements"]
    goals = {t["row"]: t for t in report["targets"] if t["row"]}
    lines = [
        "project-memory benchmark: medians of interleaved runs; wall and CPU (user + system)"
        " in ms; ratio = median / the floor's median",
        f"machine: {m['platform']}, {m['cpu_count']} CPUs, Python {m['python_version']}"
        f" ({m['python']}), tiktoken {m['tiktoken']}",
        f"load average {m['load_before']} before, {m['load_after']} after; {report['runs']} runs"
        f" per command{' (smoke sizes)' * report['smoke']}",
        "",
        f"{'measurement':<46} {'wall':>7} {'floor':>7} ratio  {'cpu':>6} ratio  target met",
    ]
    for section, keys in report["sections"]:
        lines.append(f"-- {section}")
        for key, row in ((k, rows[k]) for k in keys):
            floor = rows[row["floor"]]["median_ms"] if row["floor"] else None
            cells = f"{num(row['median_ms']):>7} {num(floor):>7} {num(row['ratio'], 2):>5}"
            cells += f"  {num(row['median_cpu_ms']):>6} {num(row['cpu_ratio'], 2):>5}"
            cells = f"FAILED: {row['error']}" if row["error"] else cells + met(key)
            lines.append(f"{row['label']:<46} {cells}")
    lines += ["", f"{'peak RSS (kB, median)':<46} {'kB':>7} {'F0 kB':>7} {'ratio':>5}  target"]
    for key, row in rows.items():
        if row["show_rss"] and row["median_maxrss_kb"]:
            lines.append(
                f"{row['label']:<46} {row['median_maxrss_kb']:>7}"
                f" {rows['f0']['median_maxrss_kb'] or '—':>7} {num(row['rss_ratio'], 2):>5}"
                + met(f"rss:{key}")
            )
    if report["rss_method_floor_kb"]:
        lines.append(
            f"(a child that does nothing, `true`, measures {report['rss_method_floor_kb']} kB"
            " this way)"
        )
    lines += ["", "targets"] + [
        f"  {t['met_text']:<8} {t['name']}: {num(t['value'], 3)} ≤ {t['limit']:.2f};"
        f" {t['measured']}" + (f" ({t['why_unavailable']})" if t["why_unavailable"] else "")
        for t in report["targets"]
    ]
    if report["tokens"]:
        tokens = report["tokens"]
        lines += ["", f"context tokens spent on permanent memory, one session of"
                  f" {tokens['prompts']} prompts ({tokens['counter']}):"]  # fmt: skip
        lines += [f"  {name:<34} {s['total']:>7}  {s['how']}"
                  for name, s in tokens["strategies"].items()]  # fmt: skip
        if tokens.get("lessons"):
            lines += ["", "context tokens lessons add (beside the block's budget):"]
            lines += [f"  {name:<42} {s['tokens']:>5}"
                      for name, s in tokens["lessons"].items()]  # fmt: skip
    if report.get("recall_plain"):
        lines += recall_text(report["recall_plain"])
    if report.get("recall"):
        lines += recall_text(report["recall"])
    if report.get("file"):
        lines += ["", *file_table(report["file"])]
    notes = report["notes"] + [f"{r['label']}: {r['note']}" for r in rows.values() if r["note"]]
    notes += [f"{r['label']} wrote to stderr: {r['stderr_sample']}"
              for r in rows.values() if r["stderr_sample"] and not r["error"]]  # fmt: skip
    lines += ["", "notes", *(f"  {n}" for n in notes)]
    for key, found in report["profiles"].items():
        lines += ["", f"where the time goes: {rows[key]['label']}", *(f"  {x}" for x in found)]
    return "\n".join(lines) + "\n"


def token_session(b: Bench) -> dict[str, Any]:
    """Context tokens the loader's hook adds over one session: SessionStart, then the prompts."""

    def session(every_turn: bool) -> dict[str, Any]:
        env = dict(b.env, **{DATA: b.data(f"session-{every_turn}")})
        env[EVERY_TURN], spent = str(every_turn).lower(), []
        for number in range(b.sizes.prompts + 1):
            event = "UserPromptSubmit" if number else "SessionStart"
            done = subprocess.run(b.hook("UserPromptSubmit"), input=hook_input(event, DEMO, number),
                                  capture_output=True, text=True, env=env, cwd=DEMO,
                                  timeout=TIMEOUT_S)  # fmt: skip
            if done.returncode != 0:
                raise BenchError(f"the hook exited {done.returncode} on {event}")
            spent.append(b.counter.count(hook_context(done.stdout)) if done.stdout else 0)
        how = f"{sum(1 for s in spent if s)} of {len(spent)} hook runs printed a block"
        how += f" ({spent[0]} tokens at SessionStart, {sum(spent[1:])} over the prompts)"
        return {"total": sum(spent), "per_event": spent, "how": how}

    whole = b.counter.count((DEMO / ".claude" / "memory" / "permanent_memory.md").read_text())
    how = "the file read once (a prompt-only skill, or @import in CLAUDE.md, which loads it at"
    how += " launch and again after every /compact)"
    strategies = {
        "emit when changed (default)": session(False),
        "every turn (option)": session(True),
        "whole file each session": {"total": whole, "per_event": [whole], "how": how},
    }
    return {
        "prompts": b.sizes.prompts,
        "counter": b.counter.name,
        "strategies": strategies,
        "lessons": lesson_tokens(b),
    }


def lesson_tokens(b: Bench) -> dict[str, dict[str, Any]]:
    """What proposing lessons adds to the context: the PreCompact hook's instruction (in each
    compaction's prompt), the line on proposing after the block at session start (the manager's
    hook on the demo), the proposals shown to the model (none: never injected), and the nudge
    at a turn's end (option propose_at_stop, at most once a session)."""

    def run(command: list[str], event: str) -> str:
        payload = json.loads(hook_input(event, DEMO))
        payload.update(trigger="auto", stop_hook_active=False)
        done = subprocess.run(command, input=json.dumps(payload), capture_output=True, text=True,
                              env=dict(b.env, **{DATA: b.data(f"lessons-{event}")}), cwd=DEMO,
                              timeout=TIMEOUT_S)  # fmt: skip
        if done.returncode != 0:
            raise BenchError(f"the hook exited {done.returncode} on {event}")
        return done.stdout

    instruction = run(b.hook("PreCompact"), "PreCompact")
    start = hook_context(run(b.hook("SessionStart"), "SessionStart"))
    line = start[start.rindex("\n", 0, len(start) - 1) + 1 :] if "propose it" in start else ""
    return {
        "PreCompact instruction (each compaction)": {
            "tokens": b.counter.count(instruction), "text": instruction},
        "propose line at session start": {"tokens": b.counter.count(line), "text": line},
        "proposals shown to the model": {"tokens": 0, "text": "never injected"},
        "Stop nudge (propose_at_stop, once)": {
            "tokens": b.counter.count(NUDGE_REASON), "text": NUDGE_REASON},
    }  # fmt: skip


def measure_all(
    b: Bench, spawner: Spawner, rows: dict[str, Row], only: set[str], args: argparse.Namespace
) -> dict[str, Any]:
    """The rows measured, the session's tokens, the targets, and profiles of what missed one."""
    tokenizer = rows.get("encoding_floor")
    if tokenizer and spawner.run(tokenizer).exit_code != 0:
        err = spawner.stderr_path.read_text(errors="replace").strip().splitlines() or ["no output"]
        b.notes.append(
            "the tokenizer floor (pm_tokens.load_tiktoken_encoding()) fails here, so cold ratios"
            f" are not available: {err[-1][:160]}"
        )
        tokenizer.error = "unavailable (see notes)"
    if "hook" in only:
        b.notes.append(f"hook command from hooks/hooks.json: {shlex.join(b.hook(PROMPT))}")
    log(f"measuring {len(rows)} commands, {args.runs} runs each, interleaved")
    measure(spawner, list(rows.values()), args.runs)
    tokens = token_session(b) if "tokens" in only else {}
    recall = recall_evaluation(b.counter.count, keywords=True) if "recall" in only else {}
    plain = recall_evaluation(b.counter.count, keywords=False) if "recall" in only else {}
    targets = evaluate(rows)
    for key, what in (("hook_warm", "a cache hit"), ("session_start_warm", "a warm session start")):
        if key in rows and not rows[key].error:
            beyond = sorted(name for _, name in imports_beyond_startup(spawner, rows[key]))
            extra = ", ".join(beyond) or "nothing"
            b.notes.append(f"{what} imports, beyond what `python -c pass` imports: {extra}")
    profiles: dict[str, list[str]] = {}
    for t in [] if args.no_profile else targets:
        subject = rows[t["subject"]]
        if t["met"] is False and subject.key not in profiles and subject.argv[0] == b.python:
            log(f"profiling {subject.key}")
            profiles[subject.key] = profile(spawner, subject)
    targets += recall_targets(plain) + recall_targets(recall)
    # Leave-one-project-out plays every tune change at every level: only in a full run.
    file = file_evaluation(b.counter.count, True, lopo=not args.smoke) if "file" in only else {}
    targets += file_targets(file) if file else []
    return {"targets": targets, "tokens": tokens, "profiles": profiles, "recall": recall,
            "recall_plain": plain, "file": file}  # fmt: skip
