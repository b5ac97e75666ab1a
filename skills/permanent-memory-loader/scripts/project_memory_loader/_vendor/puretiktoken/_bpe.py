"""Byte-pair-encoding merge, identical to tiktoken's.

A pre-token's bytes are repeatedly merged: at each step the adjacent pair with
the lowest rank in `mergeable_ranks` is joined, until no pair is mergeable.
The remaining parts' ranks are the output token ids.
"""
from __future__ import annotations

_BIG = float("inf")


def byte_pair_encode(piece, ranks):
    """`piece` is bytes; returns a list of token ids."""
    n = len(piece)
    if n <= 2:
        if n == 1:
            return [ranks[piece]]
        r = ranks.get(piece)
        if r is not None:
            return [r]
        return [ranks[piece[:1]], ranks[piece[1:]]]

    rget = ranks.get
    # parts[i] = [start_index, rank-of-pair-starting-here or _BIG]
    parts = [[i, _BIG] for i in range(n + 1)]
    for i in range(n - 1):
        parts[i][1] = rget(piece[i:i + 2], _BIG)

    np = n + 1
    while np > 2:                                # >1 token left to maybe merge
        min_rank = _BIG
        min_i = -1
        for i in range(np - 1):
            r = parts[i][1]
            if r < min_rank:
                min_rank = r
                min_i = i
        if min_i < 0:
            break
        i = min_i
        # parts[i] absorbs parts[i+1]; refresh the two pairs whose right/left
        # element changed (the merged pair at i, and the pair ending at i).
        si = parts[i][0]
        parts[i][1] = rget(piece[si:parts[i + 3][0]], _BIG) if i + 3 < np else _BIG
        if i > 0:
            parts[i - 1][1] = (rget(piece[parts[i - 1][0]:parts[i + 2][0]], _BIG)
                               if i + 2 < np else _BIG)
        del parts[i + 1]
        np -= 1

    return [ranks[piece[parts[i][0]:parts[i + 1][0]]] for i in range(np - 1)]
