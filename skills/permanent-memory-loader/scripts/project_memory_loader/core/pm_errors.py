# The loader's expected failures. str() of each is the one-line message a command prints on
# stderr before it exits 1 (pm_cli.run). Import-light: the pure modules raise them too.
from __future__ import annotations


class LoaderError(Exception):
    """An expected failure with a one-line message for the user."""


class MemoryFileError(LoaderError):
    """A file cannot be read or written as a command needs it."""
