# The files behind a session's capture from its transcript: the transcript itself (the client's
# own file, named in the hook input: the one file outside the project a hook reads), read from
# where the last capture stopped, never more than READ_BUDGET bytes from its end, only when it is
# a regular file (a FIFO, a device, a folder or a link is refused); and, in the user's cache
# folder, each session's state: where the reading stopped and the facts so far (JSON), a stamp
# (the transcript's size, mtime and inode when it was read, so that a turn with nothing new
# costs one small read and one stat), and the last compaction summary the PostCompact hook kept.
from __future__ import annotations

import os

from . import mm_session
from .shared import hook_io, memory_io

TYPE_CHECKING = False  # neither typing nor collections.abc on the hook's path
if TYPE_CHECKING:
    from collections.abc import Mapping

READ_BUDGET = 8 * 1024 * 1024  # bytes of a transcript read in one capture, at most
STATE_FORMAT = "mm-turns-1"
FOLDER = "turns"
MAX_STATE_BYTES = 256 * 1024
MAX_SUMMARY_BYTES = 256 * 1024
KEEP_DAYS = 30


class Chunk:
    """What one read gave: whole lines, where the next read starts, the file's identity, and
    whether the lines follow the last read's (False: a new file, or bytes were left unread)."""

    __slots__ = ("data", "device", "follows", "inode", "next_offset")

    def __init__(self, data: bytes, device: int, inode: int, next_offset: int, follows: bool):
        self.data = data
        self.device = device
        self.inode = inode
        self.next_offset = next_offset
        self.follows = follows


def turns_dir(env: Mapping[str, str]) -> str | None:
    """$XDG_CACHE_HOME/project-memory/session-memory/turns (else ~/.cache/…); None without."""
    starts = mm_session.starts_dir(env)
    return None if starts is None else os.path.join(os.path.dirname(starts), FOLDER)


def state_paths(folder: str, ref: str) -> tuple[str, str, str]:
    """The session's state, stamp and kept summary (ref: mm_session.session_ref, plain hex)."""
    base = os.path.join(folder, ref)
    return base + ".json", base + ".stamp", base + ".summary"


def transcript_stamp(path: str) -> str | None:
    """The transcript's size, mtime and inode as one line (None when it cannot be seen)."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return f"{status.st_size} {status.st_mtime_ns} {status.st_ino}"


def unchanged(stamp_path: str, transcript: str) -> bool:
    """Whether the transcript is as it was at the last capture: the cheap check every turn
    makes first."""
    now = transcript_stamp(transcript)
    if now is None:
        return False
    try:
        data, _ = memory_io.read_regular(stamp_path, 200)
    except (OSError, memory_io.MemoryIOError):
        return False
    return data is not None and data.decode("ascii", "replace").strip() == now


def nothing_new(payload: Mapping[str, object], env: Mapping[str, str]) -> bool:
    """Whether a Stop or SessionEnd has certainly nothing to capture (capture off, no transcript
    or session named, or the transcript as the last capture left it): the hook's hot path, one
    small read and one stat, nothing heavy imported."""
    if env.get(mm_session.CAPTURE_OPTION, "").strip().lower() in (
        "off",
        "false",
        "0",
        "no",
        "none",
    ):
        return True
    transcript, session_id = payload.get("transcript_path"), payload.get("session_id")
    if not (isinstance(transcript, str) and transcript and isinstance(session_id, str)):
        return True
    folder = turns_dir(env)
    if folder is None or not session_id or "\0" in transcript:
        return folder is None
    return unchanged(state_paths(folder, mm_session.session_ref(session_id))[1], transcript)


def read_chunk(path: str, device: int, inode: int, offset: int, budget: int = READ_BUDGET) -> Chunk:
    """The transcript's whole lines from `offset` (where the last read of the same file stopped;
    from the start for another file), at most the last `budget` bytes of it. Raises OSError
    (memory_io.NotRegularFile for a FIFO, device or folder; ELOOP for a link)."""
    fd, status = memory_io.open_regular(path, follow=False)
    try:
        size = status.st_size
        same = (status.st_dev, status.st_ino) == (device, inode) and 0 <= offset <= size
        start = offset if same else 0
        follows = same
        if size - start > budget:
            start, follows = size - budget, False
        os.lseek(fd, start, os.SEEK_SET)
        data = memory_io.read_at_most(fd, size - start)
    finally:
        os.close(fd)
    if start > 0 and not follows:
        cut = data.find(b"\n")  # the first line is cut: left out
        if cut < 0:
            return Chunk(b"", status.st_dev, status.st_ino, start + len(data), False)
        start, data = start + cut + 1, data[cut + 1 :]
    end = data.rfind(b"\n")
    if end < 0:
        # No whole line: one being written (read again next time), or one longer than the
        # budget (passed by).
        passed = start + len(data) if len(data) >= budget else start
        return Chunk(b"", status.st_dev, status.st_ino, passed, follows)
    return Chunk(data[: end + 1], status.st_dev, status.st_ino, start + end + 1, follows)


def load_state(path: str) -> dict[str, object] | None:
    """A session's state as saved (None when there is none, or it is not this format)."""
    import json

    try:
        data, _ = memory_io.read_regular(path, MAX_STATE_BYTES)
        if data is None:
            return None
        state = json.loads(data)
    except (OSError, memory_io.MemoryIOError, ValueError, RecursionError):
        return None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        return None
    return state


def save_state(
    folder: str, paths: tuple[str, str, str], state: dict[str, object], stamp: str
) -> None:
    """The state, then the stamp (a stamp never says a capture happened that was not kept)."""
    import json

    os.makedirs(folder, mode=0o700, exist_ok=True)
    data = json.dumps(state, ensure_ascii=False).encode("utf-8", "surrogatepass")
    memory_io.atomic_write(paths[0], data, 0o600, durable=False)
    memory_io.atomic_write(paths[1], stamp.encode("ascii") + b"\n", 0o600, durable=False)


def keep_summary(env: Mapping[str, str], ref: str, summary: str) -> None:
    """PostCompact: the summary, for the turns after it (its first MAX_SUMMARY_BYTES)."""
    folder = turns_dir(env)
    if folder is None:
        return
    os.makedirs(folder, mode=0o700, exist_ok=True)
    data = summary.encode("utf-8", "surrogatepass")[:MAX_SUMMARY_BYTES]
    memory_io.atomic_write(state_paths(folder, ref)[2], data, 0o600, durable=False)


def kept_summary(path: str) -> tuple[str, int] | None:
    """The summary PostCompact kept for the session, and its mtime (None when none)."""
    try:
        fd, status = memory_io.open_regular(path, follow=False)
    except OSError:
        return None
    try:
        data = memory_io.read_at_most(fd, MAX_SUMMARY_BYTES)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace"), status.st_mtime_ns


def forget_old(folder: str, now: float) -> None:
    hook_io.forget_older(folder, now - KEEP_DAYS * 86400)
