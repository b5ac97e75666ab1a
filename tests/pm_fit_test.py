# The loader's two binary searches against a plain scan, for every threshold in a range.
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from project_memory_loader.core.pm_fit import fewest_that_fit, most_that_fit


@given(st.integers(0, 40), st.integers(0, 40), st.integers(-2, 45))
def test_most_that_fit_is_the_largest_n_that_fits(low: int, span: int, limit: int) -> None:
    high = low + span
    asked: list[int] = []

    def fits(n: int) -> bool:
        asked.append(n)
        return n <= limit

    found = most_that_fit(low, high, fits)
    fitting = [n for n in range(low, high + 1) if n <= limit]
    assert found == (max(fitting) if fitting else low)
    assert all(low <= n <= high for n in asked)
    assert len(asked) <= span.bit_length()


@given(st.integers(0, 40), st.integers(0, 40), st.integers(-2, 45))
def test_fewest_that_fit_is_the_smallest_n_that_fits(low: int, span: int, limit: int) -> None:
    high = low + span
    asked: list[int] = []

    def fits(n: int) -> bool:
        asked.append(n)
        return n >= limit

    found = fewest_that_fit(low, high, fits)
    fitting = [n for n in range(low, high + 1) if n >= limit]
    assert found == (min(fitting) if fitting else high)
    assert all(low <= n <= high for n in asked)
    assert len(asked) <= span.bit_length()
