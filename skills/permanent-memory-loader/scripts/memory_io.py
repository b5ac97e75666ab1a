# Generated from shared/memory_io.py by `python3 scripts/dev.py sync-shared`; edit that file.
# The file layer of memory: which paths a command may follow, reading a file only when it is a
# regular file, an exclusive lock held across a read-modify-write, the atomic replacement of a
# file (readers see the old file or the new one, never a part, even when the writer is killed),
# and what the hooks share (their caches' folder, digests, code and file stamps; hook JSON in
# and out).
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
# interpreter has loaded at start-up (os, stat) and _blake2 for the caches' digests: no
# `from __future__`, no contextlib, fcntl only when locking.
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import TextIO, Union

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


def stdout_refusal(exc: "BaseException | None" = None) -> "str | None":
    """The one-line error when stdout refuses a command's results: it is closed (`>&-`), or exc
    is its encoding failing on them (a cp1252 pipe, PYTHONIOENCODING=ascii, the C locale with
    UTF-8 mode off). None when stdout is fine and exc (if any) is something else. Both skills'
    command boundaries use it to tell that from a bug."""
    import sys

    stream = sys.stdout
    if stream is None or getattr(stream, "closed", False):
        return "cannot print the results: stdout is closed"
    if isinstance(exc, UnicodeEncodeError):
        import codecs

        encoding = getattr(stream, "encoding", None) or "unknown"
        try:
            utf8 = codecs.lookup(encoding).name == "utf-8"
        except LookupError:
            utf8 = False
        if not utf8:
            return (
                f"cannot print the results: stdout's encoding ({encoding}) cannot show them;"
                " set PYTHONIOENCODING=utf-8"
            )
    return None


class OutsideProject(OSError):
    """A path the repository controls leads, through a link, outside the project root.

    An OSError, so every reader's "cannot read PATH: REASON" line reports it; str() is
    "PATH: REASON" for the callers that print it on its own."""

    def __init__(self, path: "PathArg", real: str) -> None:
        reason = f"it leads outside the project (to {real}); refused"
        super().__init__(reason)
        self.strerror = reason
        self.filename = os.fspath(path)
        self.real = real

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


class NotRegularFile(OSError):
    def __init__(self, path: "PathArg") -> None:
        super().__init__("not a regular file")
        self.strerror = "not a regular file"
        self.filename = os.fspath(path)

    def __str__(self) -> str:
        return "not a regular file"


def _real(path: "PathArg") -> str:
    return os.path.normcase(os.path.realpath(path))


def inside_project(root: "PathArg", path: "PathArg") -> str:
    """The real path of `path`, a path under the project root `root` that the repository
    controls: every link followed, the final part need not exist (a dangling link is followed
    to where it points). Raises OutsideProject when that leaves `root`."""
    real_root = _real(root)
    real = _real(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise OutsideProject(path, os.path.realpath(path))
    return real


def open_regular(path: "PathArg", follow: bool = True) -> "tuple[int, os.stat_result]":
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


def read_inside(root: "PathArg", path: "PathArg", limit: int) -> "tuple[bytes | None, int]":
    """The bytes of `path`, a file the repository controls under `root` (None when its size is
    over `limit`: it is not read), and its size. Raises OutsideProject, NotRegularFile, or the
    OSError of opening it (FileNotFoundError when there is no file)."""
    real = inside_project(root, path)
    # The checked real path has no link in it; O_NOFOLLOW refuses one put in its place since.
    return read_regular(real, limit, follow=False)


def read_regular(path: "PathArg", limit: int, follow: bool = True) -> "tuple[bytes | None, int]":
    """The bytes of the regular file `path` (None when it is over `limit` bytes) and its size."""
    fd, status = open_regular(path, follow)
    try:
        if status.st_size > limit:
            return None, status.st_size
        chunks = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:  # it grew while being read
        return None, len(data)
    return data, len(data)


class locked:  # a class named like a function: used as `with locked(path):`
    """Hold an exclusive flock on `path` while the `with` block runs, across processes.

    `path` is a lock file (created empty when missing, never removed) or a directory, which is
    locked as it is. A lock file that is a symbolic link is refused (a dangling one would create
    its target wherever it points); a directory may be reached through one, since locking it
    writes nothing. Closing the descriptor releases the lock, so a killed holder never leaves it
    held. Without fcntl (Windows) this does nothing."""

    def __init__(self, path: "PathArg") -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        if not HAVE_FLOCK:
            return
        import fcntl

        path = self.path
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _O_NOFOLLOW | _O_CLOEXEC, 0o666)
        except OSError:
            if os.path.islink(path) and not os.path.isdir(path):
                raise MemoryIOError(f"cannot lock {path}: it is a symbolic link; refused") from None
            try:  # a directory, or a read-only directory with the lock file already present
                fd = os.open(path, os.O_RDONLY | _O_CLOEXEC)
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


def temp_path(path: "PathArg") -> str:
    folder, name = os.path.split(os.fspath(path))
    return os.path.join(folder, f".{name}{TEMP_MARK}{os.getpid()}-{os.urandom(4).hex()}")


def is_temp_name(name: str) -> bool:
    """A name atomic_write may have left behind when its process was killed mid-write."""
    return name.startswith(".") and TEMP_MARK in name


def atomic_write(
    path: "PathArg", data: bytes, mode: "int | None" = None, *, durable: bool = True
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


def write_error(path: "PathArg", exc: OSError) -> MemoryIOError:
    """The MemoryIOError for an OSError met while writing `path`."""
    reason = exc.strerror or str(exc)
    return MemoryIOError(f"cannot write {os.fspath(path)}: {reason}", reason)


def fsync_dir(directory: "PathArg") -> None:
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


# --- the hooks' caches (both skills' hooks, on their steady-state path) ------------------------

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b


def digest(data: bytes) -> str:
    """The hex digest the caches name and check their entries with (not a security boundary)."""
    return blake2b(data, digest_size=16).hexdigest()


def cache_dir(name: str, env: "Mapping[str, str] | None" = None) -> "str | None":
    """Where a hook keeps the cache called `name`: the plugin's data folder, else the user's
    cache folder; never the repository. None when neither is an absolute path."""
    env = os.environ if env is None else env
    data = env.get("CLAUDE_PLUGIN_DATA", "")
    if os.path.isabs(data):
        return os.path.join(data, name)
    xdg = env.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "project-memory", name)
    home = os.path.expanduser("~")
    if not os.path.isabs(home):
        return None
    return os.path.join(home, ".cache", "project-memory", name)


def code_stamp(folder: str, names: "tuple[str, ...]") -> str:
    """The modification times of the modules whose code decides a cached text ("-" for one that
    is missing): part of a cache key, so that changed code never serves an old entry."""
    stamps = []
    for name in names:
        try:
            stamps.append(str(os.stat(os.path.join(folder, name)).st_mtime_ns))
        except OSError:
            stamps.append("-")
    return ",".join(stamps)


def file_stamp(path: str) -> "list[int] | None":
    """Size, modification time and inode of `path` (its link, not followed); None when absent."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ino]


def stderr_line(line: str) -> None:
    """One diagnostic line on stderr; nothing when stderr is closed or refuses it: a diagnostic
    must never become the failure (the exit code still says it)."""
    import sys

    if sys.stderr is None:  # closed
        return
    try:
        sys.stderr.write(line + "\n")
    except (OSError, ValueError):
        pass


def write_output(output: str) -> None:
    """A hook's whole stdout, in one write of UTF-8 bytes (Claude Code reads UTF-8 whatever the
    locale says); nothing when it is empty, and never an error when stdout is gone."""
    if not output:
        return
    import sys

    try:
        stream = sys.stdout
        stream.flush()
        stream.buffer.write(output.encode("utf-8", "replace"))
        stream.buffer.flush()
    except (OSError, ValueError, AttributeError):  # closed, or no byte stream under it
        pass


# --- hook JSON, read and written without the json package ----------------------------------
# `import json` (json.decoder, json.scanner, json.encoder, and `re` where nothing loaded it yet)
# measured 3.3-7.7 ms with -X importtime, `_json` 0.4 ms: 5-11 % of `python3 -c pass`, most of a
# hook's allowance. The package's own C scanner and encoder are used directly instead.


class _ScanContext:
    # What the json package's C scanner reads from its decoder (json.loads' defaults).
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def scan_json(text: str) -> object:
    """The JSON value that is all of `text`, which has no surrounding whitespace, as json.loads
    reads it. Raises ValueError when it is not JSON, RecursionError when it nests too deep."""
    try:
        from _json import make_scanner
    except ImportError:  # no C accelerator: the json package
        from json import loads

        return loads(text)
    try:
        value, end = make_scanner(_ScanContext)(text, 0)  # type: ignore[arg-type]
    except (StopIteration, ValueError, SystemError):
        # Not JSON. The scanner reports why through json.decoder's error class, and where that
        # module is not loaded (Python 3.11) it fails with a SystemError instead: the package
        # reads the text again and raises the error json.loads raises.
        from json import loads

        return loads(text)
    if end != len(text):
        raise ValueError("not JSON: more after the value")
    return value


def json_string(text: str) -> str:
    """`text` as a JSON string, non-ASCII kept (json.dumps(text, ensure_ascii=False))."""
    try:
        from _json import encode_basestring
    except ImportError:  # no C accelerator: the json package
        from json import dumps

        return dumps(text, ensure_ascii=False)
    return str(encode_basestring(text))


def hook_json(event: str, context: str, message: str = "") -> str:
    """A hook's stdout: context for the model as hook JSON, and a line for the user
    (`systemMessage`, shown by the client and never sent to the model) when message is set."""
    shown = f', "systemMessage": {json_string(message)}' if message else ""
    return (
        f'{{"hookSpecificOutput": {{"hookEventName": {json_string(event)}, '
        f'"additionalContext": {json_string(context)}}}{shown}}}\n'
    )


# --- git set-up (both skills' `git-setup`) -----------------------------------------------------

GIT_TIMEOUT = 30
ATTRIBUTES = ".gitattributes"
MAX_ATTRIBUTES_BYTES = 1024 * 1024


def _git(root: "PathArg", *args: str) -> "tuple[int, str]":
    import shutil
    import subprocess

    git = shutil.which("git")
    if git is None:
        raise MemoryIOError("git not found on PATH")
    try:
        done = subprocess.run(
            [git, "-C", os.fspath(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MemoryIOError(f"cannot run git {args[0]}: {exc}") from None
    return done.returncode, done.stdout.rstrip("\n")


def git_root(directory: "PathArg") -> "Path":
    """The top of the git work tree `directory` is in."""
    from pathlib import Path

    code, out = _git(directory, "rev-parse", "--show-toplevel")
    if code != 0 or not out:
        raise MemoryIOError(
            f"{os.fspath(directory)} is not inside a git work tree (git init first)"
        )
    return Path(out)


def add_attributes(root: "Path", comment: str, lines: "list[str]") -> "list[str]":
    """Append to ROOT/.gitattributes those of `lines` it does not have yet (after the comment
    line); return the lines added. A .gitattributes that is a link is refused, not followed:
    the repository controls it, and a link could lead anywhere."""
    path = root / ATTRIBUTES
    if os.path.islink(path):
        raise MemoryIOError(f"{path} is a symbolic link; git-setup does not write through it")
    mode: int | None = None
    data: bytes | None
    try:
        data, _ = read_regular(path, MAX_ATTRIBUTES_BYTES, follow=False)
        mode = stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise MemoryIOError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data is None:
        raise MemoryIOError(f"{path} is over {MAX_ATTRIBUTES_BYTES // 1024} KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise MemoryIOError(f"{path} is not UTF-8 text") from None
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in lines if line not in present]
    if missing:
        if text and not text.endswith("\n"):
            text += "\n"
        if comment not in present:
            text += ("\n" if text.strip() else "") + comment + "\n"
        text += "".join(line + "\n" for line in missing)
        atomic_write(path, text.encode("utf-8"), mode)
    return missing


def set_git_config(root: "PathArg", key: str, value: str) -> "str | None":
    """Set `key` in the repository's own config (never the user's); return its previous value,
    None when it was not set. Setting the value it already has writes nothing."""
    code, old = _git(root, "config", "--local", "--get", key)
    previous = old if code == 0 else None
    if previous != value:
        code, _ = _git(root, "config", "--local", key, value)
        if code != 0:
            raise MemoryIOError(f"git config --local {key} failed in {os.fspath(root)}")
    return previous


def set_merge_driver(root: "PathArg", driver: str, name: str, command: str, out: "TextIO") -> None:
    """Define merge driver `driver` (its name and the command git runs) in the repository's own
    config, writing one line to `out` per setting: set, already set, or updated."""
    for key, value in ((f"merge.{driver}.name", name), (f"merge.{driver}.driver", command)):
        previous = set_git_config(root, key, value)
        if previous == value:
            out.write(f"git config --local {key}: already set\n")
        elif previous is None:
            out.write(f"git config --local {key}: set\n")
        else:
            out.write(f"git config --local {key}: updated (it named another copy)\n")


# --- doctor reports (both skills' `doctor`) ----------------------------------------------------


class DoctorCheck:
    """One line of a doctor's report: the thing checked, its status (ok, warn, FAIL or info),
    what was found and, for a problem, what to do about it. A plain class rather than a
    NamedTuple: the loader's per-prompt hook imports this module, and typing is not loaded."""

    __slots__ = ("detail", "fix", "name", "status")

    def __init__(self, name: str, status: str, detail: str, fix: str = "") -> None:
        self.name = name
        self.status = status
        self.detail = detail
        self.fix = fix

    def _asdict(self) -> "dict[str, str]":
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DoctorCheck) and self._asdict() == other._asdict()

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in self._asdict().items())
        return f"DoctorCheck({fields})"


def doctor_failed(checks: "list[DoctorCheck]") -> bool:
    return any(check.status == "FAIL" for check in checks)


def doctor_report(checks: "list[DoctorCheck]", output_format: str = "text") -> str:
    """The report both doctors print: one line per check (status, name, detail, `-> fix`), or
    with output_format "json" {"ok": ..., "checks": [{name, status, detail, fix}, ...]}."""
    if output_format == "json":
        import json

        report = {"ok": not doctor_failed(checks), "checks": [c._asdict() for c in checks]}
        return json.dumps(report, indent=2, ensure_ascii=False) + "\n"
    lines = []
    for check in checks:
        line = f"{check.status:<4}  {check.name:<9} {check.detail}"
        lines.append(f"{line} -> {check.fix}" if check.fix else line)
    return "\n".join(lines) + "\n"
