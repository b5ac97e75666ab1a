# The manager's expected failures. Each is a ManagerError whose str() is the one line the user
# reads (exit 1); mm_cli's boundary prints it. memory_io's MemoryIOError, shared with the loader,
# is the one other expected failure that reaches the boundary.
from __future__ import annotations


class ManagerError(Exception):
    """An expected failure; str() is the one-line message for the user."""


class CommandError(ManagerError):
    """A command cannot go on; `hint`, when given, is a second line saying how to go on."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint
