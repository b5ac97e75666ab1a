# Generated from shared/memory_io.py by `python3 scripts/dev.py sync-shared`; edit that file.
# The file layer of memory: which paths a command may follow, reading a file only when it is a
# regular file, an exclusive lock held across a read-modify-write, and the atomic replacement of
# a file (readers see the old file or the new one, never a part, even when the writer is killed).
# The hooks' streams, caches and JSON are in hook_io, git set-up in git_config, the doctors'
# report in doctor_report.
#
# The trust boundary: a path the repository controls (`.claude/memory/...`, `memory/...`, the
# lock file, `archive/`) never resolves outside the project root. A clone can hold symbolic
# links to anywhere, so such a path is followed only when its real path stays inside; a path the
# user sets (a flag, a plugin option, the environment) may point anywhere.
#
# Each skill carries a copy of this file (a skill folder must be self-contained, since
# `npx skillmds add` copies only that folder); `python3 scripts/dev.py sync-shared` writes
# the copies and `sync-shared --check` (run by the tests) fails when one differs.
# Both skills' hooks import it (the loader's on every prompt), so it imports only what a bare
# interpreter has loaded at start-up (os, stat): no `from __future__`, no contextlib, fcntl
# only when locking.
from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Union

    PathArg = Union[str, "os.PathLike[str]"]

# fcntl exists on every POSIX Python; without it (Windows) writes are atomic but not serialised.
HAVE_FLOCK = os.name == "posix"
# Temporary files are `.{name}.tmp-{pid}-{random}` beside the file they replace: the leading dot
# keeps them out of any listing of memory files, and the same directory keeps os.replace atomic.
TEMP_MARK = ".tmp-"
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO in a file's place must not hang a reader


class MemoryIOError(Exception):
    """A lock or a write failed; str() is the one-line message for the user, and `reason` the
    system's words alone, for a caller that names the place in its own message."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class OutsideProject(OSError):
    """A path the repository controls leads, through a link, outside the project root.

    An OSError, so every reader's "cannot read PATH: REASON" line reports it; str() is
    "PATH: REASON" for the callers that print it on its own."""

    def __init__(self, path: PathArg, real: str) -> None:
        reason = f"it leads outside the project (to {real}); refused"
        super().__init__(reason)
        self.strerror = reason
        self.filename = os.fspath(path)
        self.real = real

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class NotRegularFile(OSError):
    def __init__(self, path: PathArg) -> None:
        super().__init__("not a regular file")
        self.strerror = "not a regular file"
        self.filename = os.fspath(path)

    def __str__(self) -> str:
        return "not a regular file"


def _real(path: PathArg) -> str:
    return os.path.normcase(os.path.realpath(path))


def inside_project(root: PathArg, path: PathArg) -> str:
    """The real path of `path`, a path under the project root `root` that the repository
    controls: every link followed, the final part need not exist (a dangling link is followed
    to where it points). Raises OutsideProject when that leaves `root`."""
    real_root = _real(root)
    real = _real(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise OutsideProject(path, os.path.realpath(path))
    return real


def open_regular(path: PathArg, follow: bool = True) -> tuple[int, os.stat_result]:
    """A read-only descriptor of `path` and its status, only when it is a regular file: opened
    without blocking (a FIFO must not hang the reader, a device must not flood it), and without
    following a final link when `follow` is false. The caller closes the descriptor."""
    flags = os.O_RDONLY | _O_NONBLOCK | _O_CLOEXEC | _O_BINARY | (0 if follow else _O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            import errno

            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(status.st_mode):
            raise NotRegularFile(path)
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def read_inside(root: PathArg, path: PathArg, limit: int) -> tuple[bytes | None, int]:
    """The bytes of `path`, a file the repository controls under `root` (None when its size is
    over `limit`: it is not read), and its size. Raises OutsideProject, NotRegularFile, or the
    OSError of opening it (FileNotFoundError when there is no file)."""
    real = inside_project(root, path)
    # The checked real path has no link in it; O_NOFOLLOW refuses one put in its place since.
    return read_regular(real, limit, follow=False)


def read_regular(path: PathArg, limit: int, follow: bool = True) -> tuple[bytes | None, int]:
    """The bytes of the regular file `path` (None when it is over `limit` bytes) and its size."""
    fd, status = open_regular(path, follow)
    try:
        if status.st_size > limit:
            return None, status.st_size
        data = read_at_most(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while being read
        return None, len(data)
    return data, len(data)


def read_at_most(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from fd's position to its end, in as many reads as that takes."""
    chunks = []
    size = 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _create_failure(exc: OSError) -> str:
    """Why a missing file could not be created, in one line: a folder that is read-only, or
    that this process may not write to (a sandbox's), named as such beside errno's words."""
    import errno

    reason = exc.strerror or str(exc)
    if exc.errno == errno.EROFS:
        return f"cannot create it in a read-only folder ({reason})"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"cannot create it: the folder is not writable here ({reason})"
    return reason


class locked:  # a class named like a function: used as `with locked(path):`
    """Hold an exclusive flock on `path` while the `with` block runs, across processes.

    `path` is a lock file (created empty when missing, never removed) or a directory, which is
    locked as it is. A lock file that is a symbolic link is refused (a dangling one would create
    its target wherever it points); a directory may be reached through one, since locking it
    writes nothing. Closing the descriptor releases the lock, so a killed holder never leaves it
    held. Without fcntl (Windows) this does nothing."""

    def __init__(self, path: PathArg) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        if not HAVE_FLOCK:
            return
        import fcntl

        path = self.path
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, 0o666)
        except OSError as create_error:
            if os.path.islink(path) and not os.path.isdir(path):
                raise MemoryIOError(f"cannot lock {path}: it is a symbolic link; refused") from None
            try:  # a directory, or a read-only directory with the lock file already present
                fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
            except FileNotFoundError:
                # Nothing there to open: why it could not be created is the cause (a read-only
                # folder says so here, where this open would only say the file is missing).
                raise MemoryIOError(
                    f"cannot lock {path}: {_create_failure(create_error)}"
                ) from None
            except OSError as exc:
                raise MemoryIOError(f"cannot lock {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:  # e.g. a file system without locks
            os.close(fd)
            raise MemoryIOError(f"cannot lock {path}: {exc.strerror or exc}") from None
        self.fd = fd

    def __exit__(self, *exc_info: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def temp_path(path: PathArg) -> str:
    folder, name = os.path.split(os.fspath(path))
    return os.path.join(folder, f".{name}{TEMP_MARK}{os.getpid()}-{os.urandom(4).hex()}")


def is_temp_name(name: str) -> bool:
    """A name atomic_write may have left behind when its process was killed mid-write."""
    return name.startswith(".") and TEMP_MARK in name


def atomic_write(
    path: PathArg, data: bytes, mode: int | None = None, *, durable: bool = True
) -> None:
    """Replace `path` with `data`: temp file in the same directory, write, fsync, os.replace,
    fsync the directory. On failure the previous file is untouched and the temp file removed.
    durable=False skips both fsyncs, for a cache whose entry lost in a crash is only made again
    (its reader checks length and digest). Takes a str too: the hooks write without pathlib."""
    temp = temp_path(path)
    try:
        # O_EXCL: a link in the temporary file's place is never followed.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY | _O_CLOEXEC, 0o666)
    except OSError as exc:
        raise write_error(path, exc) from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if mode is not None:
                os.chmod(temp, mode)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temp, path)
    except OSError as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise write_error(path, exc) from None
    if durable:
        fsync_dir(os.path.dirname(os.fspath(path)) or ".")


def write_error(path: PathArg, exc: OSError) -> MemoryIOError:
    """The MemoryIOError for an OSError met while writing `path`."""
    reason = exc.strerror or str(exc)
    return MemoryIOError(f"cannot write {os.fspath(path)}: {reason}", reason)


def fsync_dir(directory: PathArg) -> None:
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
