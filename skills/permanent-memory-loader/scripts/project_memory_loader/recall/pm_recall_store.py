# What prompt-time recall keeps on disk, all of it in the hook's cache folder: the archive
# files read for the index and the digest of their content (part of the index's key), the
# index cached beside the block (marshal: the hook's cache is per interpreter, and marshal is
# the fastest reader a bare interpreter has), and each session's record of the entries it
# received and the recall tokens it was sent. Import-light: the prompt hook's steady state
# reads the index and the record through it.
from __future__ import annotations

import marshal
import os
import stat
import sys

from ..core import pm_cache, pm_file
from ..shared import hook_io, memory_io

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .pm_path_index import PathTable
    from .pm_recall import Index

INDEX_FORMAT = "pm-recall-1"
INDEX_VERSION = 5  # pm_recall.INDEX_FORMAT (not imported: a cache miss checks it)
SESSION_FORMAT = "pm-recall-session-1"
TABLE_FORMAT = "pm-path-table-1"
TABLE_VERSION = 1  # pm_path_index.TABLE_FORMAT (not imported: a cache miss checks it)
# The prompts a session's file tool calls are matched against: its last few, this much of each.
PROMPTS_KEPT = 3
PROMPT_CHARS = 600
# The last prompts' file grows by one prompt at a time and is cut back to PROMPTS_KEPT past this.
PROMPTS_COMPACT = 16 * 1024
ARCHIVE_DIR = "archive"
# The archive read for recall: at most this many files (newest names first), each of at most
# pm_file.CERTAIN_SKIP_BYTES, all together at most this many bytes; the rest is left out.
MAX_ARCHIVE_FILES = 400
MAX_ARCHIVE_BYTES = 4 * 1024 * 1024
MAX_INDEX_BYTES = 256 * 1024 * 1024
MAX_SESSION_BYTES = 1024 * 1024


def archive_files(memory_path: str, root: str | None) -> list[tuple[str, bytes]]:
    """The archive's `*.md` files beside the memory file, as (`archive/NAME.md`, bytes), newest
    name first, within the bounds above; a file that cannot be read (a link out of the project
    `root`, not a regular file, too large) is left out with a note. No root: the memory file
    is one the user named, and its archive may be anywhere too; "-" (stdin) has none."""
    if memory_path == "-":
        return []
    folder = os.path.join(os.path.dirname(memory_path), ARCHIVE_DIR)
    try:
        names = sorted((n for n in os.listdir(folder) if n.endswith(".md")), reverse=True)
    except OSError:
        return []
    found = []
    total = 0
    for name in names[:MAX_ARCHIVE_FILES]:
        if memory_io.is_temp_name(name):
            continue
        path = os.path.join(folder, name)
        try:
            data, size = pm_file.read_memory_file(path, root)
        except (FileNotFoundError, IsADirectoryError):
            continue
        except OSError as exc:
            hook_io.stderr_line(f"permanent-memory: cannot read {path}: {exc.strerror or exc}")
            continue
        if data is None or total + size > MAX_ARCHIVE_BYTES:
            hook_io.stderr_line(f"permanent-memory: {path} left out of recall: too large")
            continue
        total += size
        found.append((ARCHIVE_DIR + "/" + name, data))
    return found


def archive_stamp(memory_path: str, root: str | None) -> str:
    """What the path table's key takes from the archive without reading it: each `*.md` file's
    name, size, modification time and inode (its link, not followed), newest name first; ""
    when there is none. A folder reached through a link gives its files' content instead."""
    if memory_path == "-":
        return ""
    folder = os.path.join(os.path.dirname(memory_path), ARCHIVE_DIR)
    if root is not None and os.path.lexists(folder) and not plain_folder(root, folder):
        # Reached through a link (archive_files says whether it stays inside): its content.
        return "content:" + archive_digest(archive_files(memory_path, root))
    try:
        names = sorted((n for n in os.listdir(folder) if n.endswith(".md")), reverse=True)
    except OSError:
        return ""
    stamps = []
    for name in names[:MAX_ARCHIVE_FILES]:
        stamp = hook_io.file_stamp(os.path.join(folder, name))
        if stamp is not None and not memory_io.is_temp_name(name):
            stamps.append(f"{name}:{stamp}")
    return "|".join(stamps)


def plain_folder(root: str, folder: str) -> bool:
    """Whether `folder` is a folder under `root` reached through no link (one lstat a part
    below the root): a link, even one that stays inside, makes the archive's stamp empty."""
    top = os.path.abspath(root).rstrip(os.sep) + os.sep
    path = os.path.abspath(folder)
    if not path.startswith(top):
        return False
    for end in range(len(top), len(path) + 1):
        if end == len(path) or path[end] == os.sep:
            try:
                mode = os.lstat(path[:end]).st_mode
            except (OSError, ValueError):
                return False
            if not stat.S_ISDIR(mode):
                return False
    return True


# The modules that build the path table beyond the block's (pm_cache.RENDER_MODULES), from the
# loader's folder (pm_cache.LOADER).
TABLE_MODULES = ("recall/pm_path_index.py", "evidence/pm_globs.py", "recall/pm_recall_hook.py")


def table_key(block_key: str, stamp: str) -> str:
    """The path table's key: the block's, the archive's stamp (archive_stamp) and the code."""
    code = hook_io.code_stamp(pm_cache.LOADER, TABLE_MODULES)
    return hook_io.digest(f"{block_key}|{stamp}|{code}|{marshal.version}|{sys.version}".encode())


def quick_table_key(root: str, memory_path: str, code: str) -> str:
    """A second key the path table is stored under, which a file tool's call can make without
    reading the memory file: its stamp (size, modification time, inode, by lstat, in a folder
    reached through no link), the archive's stamp and the code (`code`: the block's modules' and
    the table's stamps). "" when the memory file is not a plain file there."""
    if not plain_folder(root, os.path.dirname(memory_path)):
        return ""
    try:
        status = os.lstat(memory_path)
    except (OSError, ValueError):
        return ""
    if not stat.S_ISREG(status.st_mode):
        return ""
    memory = f"{status.st_size}:{status.st_mtime_ns}:{status.st_ino}"
    archive = archive_stamp(memory_path, root)
    tables = hook_io.code_stamp(pm_cache.LOADER, TABLE_MODULES)
    key = f"quick|{code}|{tables}|{memory}|{archive}|{marshal.version}|{sys.version}"
    return hook_io.digest(key.encode())


def archive_digest(files: list[tuple[str, bytes]]) -> str:
    """What the archive's content adds to the index's key."""
    parts = [name + "\0" + hook_io.digest(data) for name, data in files]
    return hook_io.digest("\0".join(parts).encode("utf-8", "surrogatepass"))


def index_key(block_key: str, archive: str) -> str:
    """The index's key: the block's (code, day, options, the memory file), the archive's
    content and the interpreter's marshal format."""
    return hook_io.digest(f"{block_key}|{archive}|{marshal.version}|{sys.version}".encode())


def index_slot(block_slot: str) -> str:
    """The index's file, beside the block's entry: blocks/X.txt -> recall/X.bin."""
    name = os.path.basename(block_slot).rsplit(".", 1)[0]
    return os.path.join(os.path.dirname(os.path.dirname(block_slot)), "recall", name + ".bin")


def read_index(slot: str, key: str) -> Index | None:
    """The index stored under key, or None when absent, stale, truncated or corrupt."""
    entry = read_small(slot, MAX_INDEX_BYTES)
    if entry is None:
        return None
    body = hook_io.unsealed(entry, INDEX_FORMAT, key)
    if body is None:
        return None
    try:
        index = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(index, dict) or index.get("format") != INDEX_VERSION:
        return None
    found: Index = index  # type: ignore[assignment]  # written by store_index, checked above
    return found


def table_slot(slot: str) -> str:
    """Beside the index: recall at the file's path table (pm_path_index), same key."""
    return slot.rsplit(".", 1)[0] + ".table"


def quick_slot(slot: str) -> str:
    """Beside the index: the path table again, under its quick key (quick_table_key)."""
    return slot.rsplit(".", 1)[0] + ".quick"


def read_table(slot: str, key: str, quick: bool = False) -> PathTable | None:
    """The path table stored under key beside the index `slot` (`quick`: its copy under the
    quick key), or None."""
    entry = read_small((quick_slot if quick else table_slot)(slot), MAX_INDEX_BYTES)
    body = None if entry is None else hook_io.unsealed(entry, TABLE_FORMAT, key)
    if body is None:
        return None
    try:
        table = marshal.loads(body)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(table, dict) or table.get("format") != TABLE_VERSION:
        return None
    return table


def store_table(slot: str, key: str, table: PathTable, quick: bool = False) -> None:
    try:
        os.makedirs(os.path.dirname(slot), mode=0o700, exist_ok=True)
        sealed = hook_io.sealed(TABLE_FORMAT, key, marshal.dumps(table))
        memory_io.atomic_write((quick_slot if quick else table_slot)(slot), sealed, durable=False)
    except (OSError, memory_io.MemoryIOError):
        pass  # as store_index: the block's entry says it, and the table is only built again


def shown_slot(slot: str) -> str:
    """Beside the index: the keys of the entries the block shows (recall/X.shown)."""
    return slot.rsplit(".", 1)[0] + ".shown"


def read_shown(slot: str, key: str) -> set[str] | None:
    """The keys of the entries the block shows, stored under key; None when absent or stale."""
    data = read_small(shown_slot(slot), MAX_SESSION_BYTES)
    try:
        text = "" if data is None else data.decode("ascii")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if lines[0] != f"{INDEX_FORMAT} {key}" or lines[-1] != "":
        return None  # another key, or cut short (the file ends with a newline)
    return set(lines[1:-1])


def read_small(path: str, limit: int) -> bytes | None:
    """A cache file's bytes (None when absent, unreadable or over limit), read in one call of
    its own size: a read asked for `limit` bytes would allocate that much first."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return None
        chunks = []
        while size > 0:
            chunk = os.read(fd, size)
            if not chunk:
                break
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def store_index(slot: str, key: str, index: Index, shown: set[str]) -> None:
    """Cache the index (without each entry's full text: only `search` prints it, and it builds
    its own) and the keys of the entries the block shows."""
    cached = dict(index)
    cached["entries"] = [(*entry[:7], "") for entry in index["entries"]]
    sealed = hook_io.sealed(INDEX_FORMAT, key, marshal.dumps(cached))
    listed = f"{INDEX_FORMAT} {key}\n" + "".join(k + "\n" for k in sorted(shown))
    try:
        os.makedirs(os.path.dirname(slot), mode=0o700, exist_ok=True)
        memory_io.atomic_write(slot, sealed, durable=False)
        memory_io.atomic_write(shown_slot(slot), listed.encode("ascii"), durable=False)
    except (OSError, memory_io.MemoryIOError):
        # Not said: the block's entry in the same folder says it (pm_cache.store_block), and
        # the index is only built again.
        pass


def session_record(session_file: str) -> str:
    return session_file + ".recall"


def read_received(record: str) -> tuple[int, set[str]]:
    """The recall tokens this session was sent and the keys of the entries it received."""
    data = read_small(record, MAX_SESSION_BYTES)
    try:
        text = "" if data is None else data.decode("ascii")
    except UnicodeDecodeError:
        return 0, set()
    lines = text.split("\n")
    head = lines[0].split(" ")
    if len(head) != 2 or head[0] != SESSION_FORMAT or not head[1].isdigit():
        return 0, set()
    return int(head[1]), set(line for line in lines[1:] if line)


def write_received(record: str, tokens: int, keys: set[str]) -> None:
    text = f"{SESSION_FORMAT} {tokens}\n" + "".join(key + "\n" for key in sorted(keys))
    try:
        os.makedirs(os.path.dirname(record), mode=0o700, exist_ok=True)
        memory_io.atomic_write(record, text.encode("ascii"), durable=False)
    except (OSError, memory_io.MemoryIOError):
        # Not said: the session's block mark in the same folder says it (pm_cache.record_sent).
        pass


def prompts_file(record: str) -> str:
    """Beside a session's record: its last prompts, which recall at the file reads."""
    return record.rsplit(".", 1)[0] + ".prompts"


def read_prompts(record: str) -> list[str]:
    """The session's last prompts, oldest first (at most PROMPTS_KEPT)."""
    data = read_small(prompts_file(record), MAX_SESSION_BYTES)
    text = "" if data is None else data.decode("utf-8", "replace")
    return [prompt for prompt in text.split("\0") if prompt][-PROMPTS_KEPT:]


def note_prompt(record: str, prompt: str | None) -> None:
    """Keep `prompt` (its first PROMPT_CHARS characters) among the session's last prompts; None
    forgets them (a new context). The prompt is appended to the file, a NUL before it: on every
    prompt no new file and no rename (which cost more than the rest of a prompt's recall), and
    the file is rewritten with its last PROMPTS_KEPT prompts once it is past PROMPTS_COMPACT."""
    path = prompts_file(record)
    if prompt is None:
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    if not prompt:
        return
    entry = ("\0" + prompt[:PROMPT_CHARS].replace("\0", " ")).encode("utf-8", "replace")
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.makedirs(os.path.dirname(record), mode=0o700, exist_ok=True)
        fd = os.open(path, flags, 0o600)
        try:
            os.write(fd, entry)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > PROMPTS_COMPACT:
            kept = "\0".join(read_prompts(record)).encode("utf-8", "replace")
            memory_io.atomic_write(path, kept, durable=False)
    except (OSError, memory_io.MemoryIOError):
        pass
