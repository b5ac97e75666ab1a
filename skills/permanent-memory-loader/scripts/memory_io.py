# Writing memory files safely: an exclusive lock held across a read-modify-write, and the atomic
# replacement of a file (readers see the old file or the new one, never a part, even when the
# writer is killed).
#
# Both skills carry a byte-identical copy of this file (a skill folder must be self-contained,
# since `npx skillmds add` copies only that folder); tests/memory_io_test.py keeps them equal.
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: writes are still atomic, but not serialised
    fcntl = None  # type: ignore[assignment]

HAVE_FLOCK = fcntl is not None
# Temporary files are `.{name}.tmp-{pid}-{random}` beside the file they replace: the leading dot
# keeps them out of any listing of memory files, and the same directory keeps os.replace atomic.
TEMP_MARK = ".tmp-"
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class MemoryIOError(Exception):
    """A lock or a write failed; str() is the one-line message for the user."""


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on `path` until the block ends, across processes.

    `path` is a lock file (created empty when missing, never removed) or a directory, which is
    locked as it is. Closing the descriptor releases the lock, so a killed holder never leaves
    it held. Without fcntl (Windows) this does nothing."""
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _O_CLOEXEC, 0o666)
    except OSError:
        try:  # a directory, or a read-only directory with the lock file already present
            fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
        except OSError as exc:
            raise MemoryIOError(f"cannot lock {path}: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:  # e.g. a file system without locks
            raise MemoryIOError(f"cannot lock {path}: {exc.strerror or exc}") from None
        yield
    finally:
        os.close(fd)


def temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}{TEMP_MARK}{os.getpid()}-{os.urandom(4).hex()}")


def is_temp_name(name: str) -> bool:
    """A name atomic_write may have left behind when its process was killed mid-write."""
    return name.startswith(".") and TEMP_MARK in name


def atomic_write(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` with `data`: temp file in the same directory, write, fsync, os.replace,
    fsync the directory. On failure the previous file is untouched and the temp file removed."""
    temp = temp_path(path)
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC, 0o666)
    except OSError as exc:
        raise MemoryIOError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.chmod(temp, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise MemoryIOError(f"cannot write {path}: {exc.strerror or exc}") from None
    fsync_dir(path.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new entry in `directory` durable. Best effort: some platforms and
    file systems cannot sync a directory, and the file itself is already synced."""
    if os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    try:
        fd = os.open(directory, os.O_RDONLY | _O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
