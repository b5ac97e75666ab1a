"""pm_globs: the Paths globs' matcher, against a table of cases and, as a property, against the
plain recursive reading of the same rules (its first version, kept here as the reference); it
runs in time the glob's length times the path's."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from project_memory_loader.evidence import pm_globs


def reference_parts(parts: tuple[str, ...], names: list[str]) -> bool:
    if not parts:
        return not names
    if parts[0] == "**":
        return any(reference_parts(parts[1:], names[start:]) for start in range(len(names) + 1))
    return (
        bool(names) and reference_name(parts[0], names[0]) and reference_parts(parts[1:], names[1:])
    )


def reference_name(pattern: str, name: str) -> bool:
    if not pattern:
        return not name
    head = pattern[0]
    if head == "*":
        rest = pattern.lstrip("*")
        return any(reference_name(rest, name[start:]) for start in range(len(name) + 1))
    if not name:
        return False
    if head == "?":
        return reference_name(pattern[1:], name[1:])
    if head == "[":
        end = pattern.find("]", 2)
        if end > 0:
            return pm_globs._in_set(pattern[1:end], name[0]) and reference_name(
                pattern[end + 1 :], name[1:]
            )
    return head == name[0] and reference_name(pattern[1:], name[1:])


def reference(glob: pm_globs.Glob, path: str) -> bool:
    names = [name for name in path.split("/") if name not in ("", ".")]
    last = len(names) - 1 if glob.folder_only else len(names)
    return any(reference_parts(glob.parts, names[:end]) for end in range(1, last + 1))


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/auth/**", "src/auth/login.py", True),
        ("src/auth/**", "src/auth", False),  # the folder's contents, as `src/auth/`
        ("src/auth", "src/auth/deep/x.py", True),  # a folder governs what is in it
        ("src/auth/", "src/auth", False),
        ("*.proto", "api/v1/user.proto", True),
        ("*.proto", "api/v1/user.proto.bak", False),
        ("migrations", "db/migrations/0001.sql", True),
        ("**/*Test.kt", "a/b/FooTest.kt", True),
        ("**/src/test/**/*Test.kt", "legacy/ui/src/test/java/x/AttachmentTest.kt", True),
        ("**/src/test/**/*Test.kt", "legacy/ui/src/main/java/x/AttachmentTest.kt", False),
        ("src/lib/db/*-store.ts", "src/lib/db/client-applications-store.ts", True),
        ("src/lib/db/*-store.ts", "src/lib/db/sub/x-store.ts", False),
        ("a/[bc]?/*.py", "a/cd/x.py", True),
        ("a/[!bc]?/*.py", "a/cd/x.py", False),
        ("a/[/x.py", "a/[/x.py", True),  # `[` without `]` is itself
        ("*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/x", False),
    ],
)
def test_cases(pattern: str, path: str, expected: bool) -> None:
    assert pm_globs.glob_problem(pattern) is None
    glob = pm_globs.parse_glob(pattern)
    assert pm_globs.glob_matches(glob, path) is expected
    assert reference(glob, path) is expected


PART = st.sampled_from(["a", "b", "ab", "*", "**", "?", "a*", "*b", "[ab]", "[!a]", "x.py", "*.py"])
NAME = st.sampled_from(["a", "b", "ab", "ba", "x.py", "ab.py", "aab", "c"])


@settings(max_examples=400, deadline=None)
@given(
    parts=st.lists(PART, min_size=1, max_size=5),
    folder=st.booleans(),
    names=st.lists(NAME, min_size=1, max_size=6),
)
def test_the_matcher_reads_the_rules_as_the_reference_does(
    parts: list[str], folder: bool, names: list[str]
) -> None:
    pattern = "/".join(parts) + ("/" if folder else "")
    if pm_globs.glob_problem(pattern) is not None:
        return
    glob = pm_globs.parse_glob(pattern)
    path = "/".join(names)
    assert pm_globs.glob_matches(glob, path) is reference(glob, path), (pattern, path)


def test_many_stars_cost_little() -> None:
    glob = pm_globs.parse_glob("**/" * 12 + "*a*a*a*a*a*a*b")
    path = "/".join(["a" * 40] * 30)
    started = time.perf_counter()
    assert not pm_globs.glob_matches(glob, path)
    assert time.perf_counter() - started < 0.5
