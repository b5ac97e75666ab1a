"""What scripts/bench measures its rows on: the sizes, the product's own constants and token
counter, the generated inputs (permanent-memory files, hostile files, memory folders of many
snapshots, a git repository whose epics name moved and deleted paths, a project with most of
its epics archived), each built once per parameter set and kept for later runs, and the hook
JSON the rows send."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "examples" / "demo-project"
ENTRIES = {  # each skill's command-line entry, under skills/
    "loader": "permanent-memory-loader/scripts/permanent_memory.py",
    "manager": "ski-memory-manager/scripts/memory_manager.py",
}
MANAGER_DIR = str((ROOT / "skills" / ENTRIES["manager"]).parent)
sys.path.insert(0, MANAGER_DIR)
# The product's own constants and token counter, never restated here.
import loader_path  # noqa: E402, F401
from project_memory_loader.core import pm_render, pm_tokens  # noqa: E402
from ski_memory_manager import mm_render  # noqa: E402

sys.path.remove(MANAGER_DIR)
# The tokenizer floor: the loader's encoding loaded as the loader loads it.
TOKENIZER_FLOOR = f"import sys; sys.path.insert(0, {str(Path(pm_tokens.__file__).parents[2])!r})"
TOKENIZER_FLOOR += "; from project_memory_loader.core import pm_tokens"
TOKENIZER_FLOOR += "; pm_tokens.load_tiktoken_encoding()"
PERMANENT, SESSION, SKIP_TOKENS = pm_render.STAMP, mm_render.STAMP, pm_render.SKIP_TOKENS
PROJECT = "billing-api"
FIXTURE_VERSION, TIMEOUT_S = "2", 120.0
OTHERS = ("legacy-billing-api", "web-frontend", "billing-api-v2", "data-pipeline")
PROMPT = "UserPromptSubmit"
DATA, EVERY_TURN = "CLAUDE_PLUGIN_DATA", "CLAUDE_PLUGIN_OPTION_EVERY_TURN"
FRESH = "\0fresh\0"  # an argv item or env value replaced by a new empty directory per run


class Sizes(NamedTuple):
    epics: tuple[int, ...]
    big_file_bytes: int
    snapshot_files: tuple[int, ...]
    prompts: int
    commits: int = 5000  # of the git repository the evidence rows run in
    recall_epics: int = 200  # of the recall rows' project, most of them archived


FULL = Sizes((10, 40, 200, 1000), 50 * 1024 * 1024, (10, 1000, 10_000, 100_000), 50)
SMOKE = Sizes((10, 40), 1024 * 1024, (10, 200), 5, commits=500, recall_epics=30)
# The evidence rows: a project of EVIDENCE_EPICS epics naming EVIDENCE_PATHS paths (some since
# renamed, in chains, some deleted), in a git repository of Sizes.commits commits.
EVIDENCE_EPICS, EVIDENCE_PATHS, EVIDENCE_FILES = 200, 300, 400
RECALL_KEPT = 30  # epics left in permanent_memory.md; the rest are archived, 40 to a file
# Hostile permanent_memory.md shapes of about n bytes, where a backtracking pattern or the
# tokenizer would do super-linear work.
# fmt: off
HOSTILE: dict[str, Callable[[int], str]] = {
    "spaces after ### heading": lambda n: "## Epic: A-1 — b\n### Gotchas" + " " * n + "x\n- a\n",
    "spaces in entries":
        lambda n: "## Epic: A-1 — b\n### Gotchas\n- a" + " " * (n // 2) + "b (conf"
        + " " * (n // 2) + "\n",
    "spaces in Epic heading": lambda n: "## Epic: A-1" + " " * n + "b #\n",
    "stamps nested deep":
        lambda n: "## Epic: A-1\n### Gotchas\n- " + "[" * (n // 11) + "a|trust:x]" * (n // 11)
        + "\n",
    "spaces only": lambda n: " " * n + "a",
    "newlines only": lambda n: "\n" * n,
}
HOSTILE_SIZES, HOSTILE_SMOKE_SIZES = (16_000, 63_000, 256 * 1024, 1_000_000), (16_000,)
SAVE_INPUT = {  # 1.2 KB of input for `save`, then an update of the same session
    "project_name": PROJECT, "mode": "architect", "status": "in-progress",
    "last_checkpoint": "CP-S2", "checkpoints_approved": ["CP-S0", "CP-S1", "CP-S2"],
    "checkpoint_decisions": {
        "CP-S0": {"option": "A", "note": "Approved as-is"},
        "CP-S1": {"option": "B", "note": "Adjusted: meter per workspace, not per user"},
        "CP-S2": {"option": "C", "regenerated_count": 1}},
    "target_dir": "docs/design/feat-021-usage-metering",
    "session_summary": "Rating for usage-based metering: tiered prices applied to the hourly"
    " rollups, and how metered lines appear on the invoice next to the subscription line.",
    "steps_completed": {
        "S0": "Inventory of billable events (API calls, exports, seats) with their sources",
        "S1": "Aggregation model: hourly rollups per workspace, closed at the period end",
        "S2": "Rating: graduated tiers, prices stored per plan version"},
    "active_state": "Next: S3, invoice presentation (one line per meter, with a usage CSV"
    " attached). Open: proration of a mid-period plan change.",
    "key_decisions": ["Meter per workspace, not per user",
                      "Usage rollups are append-only; corrections are new negative rows",
                      "Prices are versioned with the plan, never edited in place"],
}
SAVE_UPDATE = {
    "last_checkpoint": "CP-S3", "checkpoints_approved": ["CP-S3"],
    "checkpoint_decisions": {"CP-S3": {"option": "A"}},
    "steps_completed": {"S3": "Invoice presentation: one line per meter, usage CSV attached"},
}
# fmt: on


class BenchError(Exception):
    """The benchmark cannot measure what it should; the message says what to fix."""


class TokenCounter(NamedTuple):
    count: Callable[[str], int]
    name: str
    exact: bool


def load_token_counter() -> TokenCounter:
    """The loader's own exact counter, else its byte estimate (for fixtures and the token
    report; never on a timed path)."""
    try:
        count, engine, _ = pm_tokens.load_exact_counter()
        return TokenCounter(count, f"{pm_tokens.ENCODING} via {engine}", True)
    except pm_tokens.EncodingUnavailable as exc:
        return TokenCounter(pm_tokens.estimate_tokens, f"estimate ({exc})", False)


# --- fixtures, generated once per parameter set under the temp dir and kept for later runs


def fixture_dir(root: Path, kind: str, key: str, build: Callable[[Path], None]) -> Path:
    target = root / f"{kind}-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    if not (target / ".complete").exists():
        for old in root.glob(f"{kind}-*"):  # earlier parameter sets of the same kind
            shutil.rmtree(old, ignore_errors=True)
        building = root / f"{target.name}.building-{os.getpid()}"
        building.mkdir(parents=True)
        build(building)
        (building / ".complete").write_text("")
        os.replace(building, target)
    return target


def demo_epics(demo_text: str) -> tuple[str, Callable[[int, dt.datetime], str]]:
    """The demo file's text before its first epic, and epic(i, completed): its epics in turn,
    the i-th numbered FEAT-{i + 1:05d} and completed then."""
    starts = [m.start() for m in re.finditer(r"(?m)^## Epic:", demo_text)] + [len(demo_text)]
    if len(starts) < 2:
        raise BenchError("the demo's permanent_memory.md has no '## Epic:' section")
    templates = [demo_text[a:b].rstrip("\n") + "\n\n" for a, b in zip(starts, starts[1:])]

    def epic(i: int, completed: dt.datetime) -> str:
        stamp = completed.strftime("%Y-%m-%dT%H:%M:%SZ")
        text = re.sub(
            r"^## Epic:[ \t]*\S+", f"## Epic: FEAT-{i + 1:05d}", templates[i % len(templates)]
        )
        text = re.sub(r"(?m)^\*\*Completed:\*\*.*$", f"**Completed:** {stamp}", text, count=1)
        return re.sub(r"completed=\S+", f"completed={stamp}", text, count=1)

    return demo_text[: starts[0]], epic


def build_permanent_files(
    out: Path, *, demo_text: str, sizes: Sizes, counter: TokenCounter
) -> None:
    """epics-N.md (the demo's epics renumbered FEAT-00001… and redated), under-skip.md (just
    under the token skip) and big.md (of big_file_bytes)."""
    preamble, epic = demo_epics(demo_text)
    now = dt.datetime(2026, 12, 1, 12, tzinfo=dt.timezone.utc)

    def dated(i: int, n: int) -> str:  # epic i of n, six hours apart, the last one before now
        return epic(i, now - dt.timedelta(hours=6) * (n - i))

    for n in sizes.epics:
        (out / f"epics-{n}.md").write_text(preamble + "".join(dated(i, n) for i in range(n)))
    text = preamble  # whole epics while they fit, then detail lines (a subsection shows its first)
    for i in range(400):
        if counter.count(text + dated(i, 400)) >= SKIP_TOKENS:
            break
        text += dated(i, 400)
    for line in range(1, 10**5):
        if counter.count(text + f"- detail {line}: kept for the record\n") >= SKIP_TOKENS:
            break
        text += f"- detail {line}: kept for the record\n"
    (out / "under-skip.md").write_text(text)
    start = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    with (out / "big.md").open("w") as f:
        f.write(preamble)
        written, number = len(preamble.encode()), 0
        while written < sizes.big_file_bytes:
            chunk = "".join(epic(number + i, start + dt.timedelta(minutes=i)) for i in range(500))
            number, written = number + 500, written + len(chunk.encode())
            f.write(chunk)


def build_snapshot_dir(out: Path, *, count: int, snapshot: str) -> None:
    """`count` snapshots, a fifth of them the demo project's, the rest other projects' (one a
    name that ends in `-billing-api`). All but the demo project's newest are hard links to one
    snapshot per project, which makes 100,000 files quick to create."""
    (out / "memory").mkdir()
    projects = (PROJECT, *OTHERS)
    for project in projects:
        text = re.sub(r"(?m)^project-name:.*$", f"project-name: {project}", snapshot, count=1)
        (out / f"{project}.md").write_text(text)
    for index in range(count):
        stamp = (dt.datetime(2024, 1, 1) + dt.timedelta(minutes=index)).strftime("%Y-%m-%d-%H-%M")
        project = projects[index % len(projects)]
        target = out / "memory" / f"{stamp}-{project}.md"
        if project == PROJECT and index + len(projects) >= count:  # the demo project's newest
            text = (out / f"{project}.md").read_text()
            target.write_text(re.sub(r"(?m)^session:.*$", f"session: {stamp}", text, count=1))
            (out / "newest").write_text(stamp)
        else:
            try:
                os.link(out / f"{project}.md", target)
            except OSError:  # no hard links on this file system
                shutil.copyfile(out / f"{project}.md", target)


def build_evidence_project(out: Path, *, commits: int) -> None:
    """A git work tree of `commits` commits (written with git fast-import): EVIDENCE_FILES
    modules added, then one changed per commit, every 50th commit a rename (some modules twice,
    a chain), every 97th a deletion among modules 260-299; and a permanent_memory.md whose
    EVIDENCE_EPICS epics name EVIDENCE_PATHS of the modules as first added."""
    names = [f"pkg{i % 20}/mod_{i:03d}.py" for i in range(EVIDENCE_FILES)]
    first = list(names)
    stream = io.StringIO()

    def body(name: str, revision: int) -> str:
        text = f"# {name}, revision {revision}\n"
        text += "".join(f"def f{k}():\n    return {k}\n" for k in range(20))
        return f"M 100644 inline {name}\ndata {len(text.encode())}\n{text}\n"

    for number in range(commits):
        stream.write("commit refs/heads/main\ncommitter Bench <bench@example.invalid> ")
        stream.write(f"{1_700_000_000 + number * 60} +0000\ndata 9\ncommit {number % 10}\n")
        index = number % EVIDENCE_FILES
        if number == 0:
            stream.write("".join(body(name, 0) for name in names))
        elif number % 50 == 0:
            new = names[index].replace(".py", "_v2.py")
            stream.write(f"R {names[index]} {new}\n")
            names[index] = new
        elif number % 97 == 0 and 260 <= index < 300:
            stream.write(f"D {names[index]}\n")
        else:
            stream.write(body(names[index], number))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    for argv, data in (
        (["git", "init", "-q", "-b", "main", str(out)], None),
        (["git", "-C", str(out), "fast-import", "--quiet"], stream.getvalue().encode()),
        (["git", "-C", str(out), "checkout", "-q", "-f", "main"], None),
    ):
        done = subprocess.run(argv, input=data, capture_output=True, env=env, timeout=TIMEOUT_S)
        if done.returncode != 0:
            raise BenchError(f"{' '.join(argv[:4])} failed: {done.stderr.decode()[:200]}")
    epics = []
    for number in range(EVIDENCE_EPICS):
        named = [first[number]]
        if number + EVIDENCE_EPICS < EVIDENCE_PATHS:
            named.append(f"`{first[number + EVIDENCE_EPICS]}`")
        epics.append(
            f"## Epic: E-{number:03d} — area {number}\n### Gotchas discovered\n"
            f"- see {' and '.join(named)}\n"
        )
    (out / ".claude" / "memory").mkdir(parents=True)
    (out / ".claude" / "memory" / "permanent_memory.md").write_text("\n".join(epics))


def hook_context(text: str) -> str:
    """The additionalContext of a hook's JSON output, or the text itself when it is not JSON."""
    try:
        return str(json.loads(text)["hookSpecificOutput"]["additionalContext"])
    except (ValueError, KeyError, TypeError):
        return text


def hook_input(event: str, cwd: Path, number: int = 1, prompt: str = "") -> str:
    payload = {"session_id": "bench-session-0001", "transcript_path": str(cwd / "t.jsonl")}
    payload.update(cwd=str(cwd), permission_mode="default", hook_event_name=event)
    if event == "SessionStart":
        payload["source"] = "startup"
    else:
        payload["prompt"] = prompt or f"prompt {number}: carry on with the next step"
    return json.dumps(payload)


def build_recall_project(out: Path, *, demo_text: str, epics: int) -> None:
    """A project whose memory holds `epics` epics (the demo's, renumbered and redated): the
    newest RECALL_KEPT in permanent_memory.md, the others in archive/ files of 40, as
    `permanent_memory.py archive` leaves them."""
    preamble, dated = demo_epics(demo_text)
    first = dt.datetime(2022, 1, 1, tzinfo=dt.timezone.utc)

    def epic(i: int) -> str:  # three days apart
        return dated(i, first + dt.timedelta(days=3 * i))

    memory = out / ".claude" / "memory"
    (memory / "archive").mkdir(parents=True)
    archived = max(epics - RECALL_KEPT, 0)
    for number, start in enumerate(range(0, archived, 40)):
        body = "".join(epic(i) for i in range(start, min(start + 40, archived)))
        (memory / "archive" / f"2025-{number + 1:02d}-01.md").write_text("# Archive\n\n" + body)
    kept = "".join(epic(i) for i in range(archived, epics))
    (memory / "permanent_memory.md").write_text(preamble + kept)


# The file tools' hook rows: the recall project's epics with two Paths globs each (400 for 200
# epics), the middle one also naming a file in an entry; a file nothing governs and that one.
FILE_SILENT_PATH = "docs/guide/getting-started.md"


def file_match_path(epics: int) -> str:
    """The file an entry of the middle epic (archived, with 200) names."""
    return f"svc{epics // 2:05d}/handlers/webhook.py"


def build_file_project(out: Path, *, demo_text: str, epics: int) -> None:
    """build_recall_project's memory, each epic given `**Paths:** svcN/handlers/**,
    svcN/models/*.py` after its Completed line, and the middle one an entry naming
    file_match_path(epics)."""
    build_recall_project(out, demo_text=demo_text, epics=epics)
    memory = out / ".claude" / "memory"
    for path in [memory / "permanent_memory.md", *sorted((memory / "archive").glob("*.md"))]:
        text = path.read_text()

        def paths(match: re.Match[str]) -> str:
            n = int(match.group(2))
            line = f"**Paths:** svc{n:05d}/handlers/**, svc{n:05d}/models/*.py\n"
            return match.group(1) + line

        text = re.sub(r"(## Epic: FEAT-(\d+)[^\n]*\n(?:[^\n]*\n)*?\*\*Completed:\*\*[^\n]*\n)",
                      paths, text)  # fmt: skip
        head = f"## Epic: FEAT-{epics // 2:05d}"
        if head in text:
            at = text.index("\n- ", text.index(head)) + 1
            named = file_match_path(epics)
            entry = f"- `{named}` dedupes on the event id before anything else\n"
            text = text[:at] + entry + text[at:]
        path.write_text(text)


def file_input(cwd: Path, path: str, session: bool = True) -> str:
    """A PreToolUse hook input: Read of `path` in the project at cwd (with no session, every
    run is a session's first call on it: the whole choice is made and sent each time)."""
    payload = json.loads(hook_input("PreToolUse", cwd))
    payload.pop("prompt")
    if not session:
        payload.pop("session_id")
    payload.update(tool_name="Read", tool_input={"file_path": str(cwd / path)})
    return json.dumps(payload)


class Fixture(NamedTuple):
    """An input a group's rows are built from: its name, how the report says it, its path."""

    name: str
    what: str
    path: str
    size: int = 0  # bytes or files
    tokens: int | None = None
    newest: str = ""  # the newest snapshot of the demo project, in a memory dir


@dataclass
class Bench:
    """One run's settings and what the rows are built from."""

    python: str
    plugin_root: Path
    sizes: Sizes
    counter: TokenCounter
    fixtures: Path
    scratch: Path
    env: dict[str, str]
    notes: list[str] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)  # the generated permanent files

    def hook(self, event: str) -> list[str]:
        """The plugin's command for `event` in hooks/hooks.json, `python3` resolved to the
        interpreter under test (started without the shell Claude Code adds, as F0 is)."""
        try:
            config = json.loads((self.plugin_root / "hooks" / "hooks.json").read_text())
            command = config["hooks"][event][0]["hooks"][0]["command"]
        except (OSError, ValueError, LookupError) as exc:
            where = f"{self.plugin_root}/hooks/hooks.json"
            raise BenchError(f"no {event} hook in {where}: {exc}") from exc
        # The command tries python3, then python, then py -3 (docs/install.md, "Windows"); what
        # each of them runs is the same `-S SCRIPT hook`, taken from its first line that names it.
        command = command.replace("${CLAUDE_PLUGIN_ROOT}", str(self.plugin_root))
        found = re.search(r'-S "([^"]+)" hook', command)
        if found:
            return [self.python, "-S", found.group(1), "hook"]
        argv = shlex.split(command)
        return [self.python, *argv[1:]] if argv[0] in ("python3", "python") else argv

    def script(self, skill: str, *args: str) -> list[str]:
        return [self.python, str(self.plugin_root / "skills" / ENTRIES[skill]), *args]

    def write(self, name: str, text: str) -> str:
        (self.scratch / name).parent.mkdir(parents=True, exist_ok=True)
        (self.scratch / name).write_text(text)
        return str(self.scratch / name)

    def data(self, name: str) -> str:  # a cache folder kept across runs, so its hook runs warm
        (self.scratch / name).mkdir()
        return str(self.scratch / name)

    def permanent_files(self) -> list[Fixture]:
        demo = (DEMO / ".claude" / "memory" / "permanent_memory.md").read_text()
        log("generating permanent-memory files (kept for later runs)")
        key = f"{FIXTURE_VERSION}|{self.sizes}|{self.counter.name}|{demo}"
        build = functools.partial(
            build_permanent_files, demo_text=demo, sizes=self.sizes, counter=self.counter
        )
        folder = fixture_dir(self.fixtures, "permanent", key, build)
        names = [(f"{n} epics", f"epics-{n}") for n in self.sizes.epics]
        found = []
        for what, name in [*names, ("just under the skip", "under-skip"), ("big file", "big")]:
            path = folder / f"{name}.md"
            size = path.stat().st_size
            tokens = self.counter.count(path.read_text()) if size < 4 * 1024 * 1024 else None
            counted = f", {tokens:,} tok" if tokens else ""
            found.append(
                Fixture(name, f"{what} ({size / 1024:,.0f} KB{counted})", str(path), size, tokens)
            )
        return found

    def hostile_projects(self) -> list[Fixture]:
        """A project folder for each hostile shape and size: its permanent_memory.md, and the
        hook's input for a prompt there (prompt.json)."""
        smoke, found = self.sizes == SMOKE, []
        for number, (shape, build) in enumerate(list(HOSTILE.items())[: 2 if smoke else None]):
            for size in HOSTILE_SMOKE_SIZES if smoke else HOSTILE_SIZES:
                project = f"adversarial/shape{number}-{size}"
                written = self.write(f"{project}/.claude/memory/permanent_memory.md", build(size))
                what = f"{shape}, {Path(written).stat().st_size / 1024:,.0f} KB"
                self.write(f"{project}/prompt.json", hook_input(PROMPT, self.scratch / project))
                found.append(Fixture(f"{number}:{size}", what, str(self.scratch / project)))
        return found

    def evidence_project(self) -> Fixture:
        log(f"generating a git repository of {self.sizes.commits:,} commits (kept for later runs)")
        build = functools.partial(build_evidence_project, commits=self.sizes.commits)
        key = f"{FIXTURE_VERSION}|{self.sizes.commits}|{EVIDENCE_EPICS}|{EVIDENCE_PATHS}"
        project = fixture_dir(self.fixtures, "evidence", key, build)
        self.write("evidence-prompt.json", hook_input(PROMPT, project))
        return Fixture(
            "evidence", f"{self.sizes.commits:,} commits", str(project), self.sizes.commits
        )

    def recall_project(self) -> Path:
        demo = (DEMO / ".claude" / "memory" / "permanent_memory.md").read_text()
        n = self.sizes.recall_epics
        build = functools.partial(build_recall_project, demo_text=demo, epics=n)
        return fixture_dir(self.fixtures, "recall", f"{FIXTURE_VERSION}|{n}|{demo}", build)

    def file_project(self) -> Path:
        demo = (DEMO / ".claude" / "memory" / "permanent_memory.md").read_text()
        n = self.sizes.recall_epics
        build = functools.partial(build_file_project, demo_text=demo, epics=n)
        return fixture_dir(self.fixtures, "file", f"{FIXTURE_VERSION}|{n}|{demo}", build)

    def snapshot_dirs(self) -> list[Fixture]:
        snapshot = sorted((DEMO / "memory").glob(f"*-{PROJECT}.md"))[-1].read_text()
        found = []
        for n in self.sizes.snapshot_files:
            log(f"generating a memory dir of {n:,} snapshots (kept for later runs)")
            build = functools.partial(build_snapshot_dir, count=n, snapshot=snapshot)
            built = fixture_dir(
                self.fixtures, f"snapshots-{n}", f"{FIXTURE_VERSION}|{n}|{snapshot}", build
            )
            newest = (built / "newest").read_text()
            found.append(Fixture(str(n), f"{n:,} files", str(built / "memory"), n, newest=newest))
        return found

    def save_commands(self) -> tuple[list[str], list[str]]:
        """`save` of a new snapshot, and of an update to a snapshot saved here beforehand."""
        save = self.script("manager", "save", "--project-name", PROJECT)
        save += ["--session-timestamp", "2026-11-30-09-00"]
        first = self.write("save-input.json", json.dumps(SAVE_INPUT))
        update = [*save, "--memory-dir", self.data("save-update-memory"), "--input"]
        primed = subprocess.run(
            [*update, first], capture_output=True, text=True, env=self.env, timeout=TIMEOUT_S
        )
        if primed.returncode != 0:
            raise BenchError(f"save failed while priming: {primed.stderr.strip()[:200]}")
        create = [*save, "--memory-dir", FRESH, "--input", first]
        return create, [*update, self.write("update.json", json.dumps(SAVE_UPDATE))]


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr)


# --- the recall evaluation: scripts/recall_eval.py (leave-one-project-out, beside a BM25)

# recall_index and recall_outcome: the prompt channel as the hook runs it, for other evaluations.
from recall_eval import RECALL_DATA as RECALL_DATA  # noqa: E402
from recall_eval import recall_index as recall_index  # noqa: E402
from recall_eval import recall_outcome as recall_outcome  # noqa: E402
from recall_eval import without_keywords as without_keywords  # noqa: E402
