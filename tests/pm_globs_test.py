"""pm_globs: an epic's Paths globs, gitignore-style, matched against project-relative paths."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pm_globs import glob_matches, glob_problem, literal_prefix, parse_glob

MATCHES = [
    ("billing_api/webhooks/**", "billing_api/webhooks/handler.py", True),
    ("billing_api/webhooks/**", "billing_api/webhooks/a/b/c.py", True),
    ("billing_api/webhooks/**", "billing_api/webhooks", False),  # the folder's contents only
    ("billing_api/webhooks/**", "billing_api/webhooks_old/x.py", False),
    ("billing_api/webhooks", "billing_api/webhooks/a/b.py", True),  # a folder: all in it
    ("billing_api/stripe_client.py", "billing_api/stripe_client.py", True),
    ("billing_api/stripe_client.py", "other/billing_api/stripe_client.py", False),  # anchored
    ("*.proto", "a/b/c.proto", True),  # no slash: at any depth
    ("*.proto", "c.proto", True),
    ("*.proto", "c.protobuf", False),
    ("migrations/", "db/migrations/0001.py", True),
    ("migrations/", "db/migrations", False),  # a trailing slash: folders only
    ("src/*.py", "src/b.py", True),
    ("src/*.py", "src/a/b.py", False),  # * stays within one part
    ("**/test_*.py", "x/y/test_a.py", True),
    ("**/test_*.py", "test_a.py", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b/c", True),
    ("src/?.py", "src/a.py", True),
    ("src/?.py", "src/ab.py", False),
    ("[a-c]x.py", "bx.py", True),
    ("[!a-c]x.py", "bx.py", False),
    ("[!a-c]x.py", "dx.py", True),
    ("./src/**", "src/x", True),
    ("docs", "src/docs/x.md", True),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), MATCHES)
def test_glob_matches(pattern: str, path: str, expected: bool) -> None:
    assert glob_problem(pattern) is None
    assert glob_matches(parse_glob(pattern), path) is expected


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("/etc/passwd", "'/etc/passwd' is absolute: write it relative to the project's root"),
        ("C:/x", "'C:/x' is absolute: write it relative to the project's root"),
        ("../x", "'../x' leaves the project (..)"),
        ("a/../../b", "'a/../../b' leaves the project (..)"),
        ("!a", "'!a' is a negation, which a Paths line does not take"),
        ("a\\b", "'a\\\\b' holds a backslash: separate folders with /"),
        ("   ", "an empty glob"),
    ],
)
def test_glob_problem(pattern: str, problem: str) -> None:
    assert glob_problem(pattern) == problem


def test_literal_prefix() -> None:
    assert literal_prefix(parse_glob("src/auth/**")) == "src/auth"
    assert literal_prefix(parse_glob("src/*/x.py")) == "src"
    assert literal_prefix(parse_glob("a.py")) == ""  # may match at any depth
    assert literal_prefix(parse_glob("src/a.py")) == "src/a.py"


NAME = st.text(alphabet="abcxyz._-", min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))
WILD = st.text(alphabet="abcxyz.*?", min_size=1, max_size=6).filter(lambda n: n not in (".", ".."))


@given(WILD, NAME)
def test_a_name_matches_as_fnmatch_says(pattern: str, name: str) -> None:
    # Within one part of a path, without sets, the matcher agrees with fnmatch.
    glob = parse_glob(f"top/{pattern}")
    assert glob_matches(glob, f"top/{name}") is fnmatch.fnmatchcase(name, pattern)


@given(st.lists(NAME, min_size=1, max_size=5), st.integers(min_value=1, max_value=5))
def test_a_folder_governs_everything_under_it(parts: list[str], depth: int) -> None:
    cut = min(depth, len(parts))
    folder = "/".join(parts[:cut])
    path = "/".join(parts)
    assert glob_matches(parse_glob(folder + "/**"), path) is (cut < len(parts))
    assert glob_matches(parse_glob(folder), path)
    assert glob_matches(parse_glob("**"), path)
