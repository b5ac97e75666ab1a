"""Load a bundled .tiktoken vocabulary (gzipped base64 ranks)."""
from __future__ import annotations

import base64
import gzip
import os

_DIR = os.path.join(os.path.dirname(__file__), "data")


def load_ranks(name):
    """name like 'cl100k_base' -> {token_bytes: rank}."""
    path = os.path.join(_DIR, name + ".tiktoken.gz")
    ranks = {}
    with gzip.open(path, "rt", encoding="ascii") as f:
        for line in f:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks
