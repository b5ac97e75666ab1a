# How much fits: the two binary searches the loader makes over a count of lines, items, epics or
# characters, for a test that holds up to some n and fails beyond it (or the other way round).
# Pure; import-light (the hook renders through it on a cache miss).
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable


def most_that_fit(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest n in [low, high] with fits(n), where fits holds up to some n and never
    beyond; low when none does (the caller knows whether low itself fits)."""
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def fewest_that_fit(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The smallest n in [low, high] with fits(n), where fits fails up to some n and holds
    from there on; high when only high does (the caller has checked that it does)."""
    while low < high:
        middle = (low + high) // 2
        if fits(middle):
            high = middle
        else:
            low = middle + 1
    return low
