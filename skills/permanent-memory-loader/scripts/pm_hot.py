# The hook's steady state, run on every prompt the user types: read the hook JSON, hash the
# memory file, read one small cache entry and the session's "last sent" mark, print or stay
# silent. It uses only modules a bare interpreter has already loaded, plus _json and _blake2
# (the json package would pull in `re`). Cache misses and writes are pm_hook's, rendering the
# other pm_* modules'. This lives in a module rather than in permanent_memory.py because
# Python caches a module's bytecode but compiles a script on every run; compiling this code was
# most of the hook's cost on a bare interpreter.
# No `from __future__ import annotations`: it is an import too; annotations here are strings.
import os
import sys
import time

import memory_io

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

__version__ = "0.1.0"
CACHE_FORMAT = "pm-block-2"
MEMORY_FILE = os.path.join(".claude", "memory", "permanent_memory.md")
HOOK_MAX_CHARS = 10000
# More bytes than this means more than 8000 cl100k_base tokens whatever the file holds (no token
# is longer than 128 bytes): the file is skipped without being read, let alone tokenised.
CERTAIN_SKIP_BYTES = 8000 * 128 + 3
# The modules whose code decides the block: a change to any of them invalidates the cache.
RENDER_MODULES = (
    "pm_hot.py",
    "pm_load.py",
    "pm_parse.py",
    "pm_render.py",
    "pm_tokens.py",
    "memory_text.py",
)
HERE = os.path.dirname(os.path.abspath(__file__))


def note(message: str) -> None:
    try:
        sys.stderr.write(f"permanent-memory hook: {message}\n")
    except (OSError, ValueError):
        pass


def hook() -> int:
    """Claude Code SessionStart / UserPromptSubmit / SubagentStart hook: the block or nothing;
    exit 0."""
    try:
        output = hook_output()
    except BaseException as exc:  # the hook boundary: nothing may block the user's prompt (a
        # tokenizer's panic is a BaseException, not an Exception)
        note(f"internal error, nothing emitted: {type(exc).__name__}: {exc}")
        return 0
    write_output(output)
    return 0


def write_output(output: str) -> None:
    """Everything the hook prints goes through here, in one write."""
    if not output:
        return
    try:
        # Claude Code reads UTF-8 whatever the locale says; write bytes, in one go.
        stream = sys.stdout
        stream.flush()
        stream.buffer.write(output.encode("utf-8"))
        stream.buffer.flush()
    except (OSError, ValueError, AttributeError):
        pass


# The events whose hook JSON takes `additionalContext` (Claude Code 2.1 and later): there the
# text arrives labelled as context, byte for byte, where plain stdout is trimmed and labelled as
# a hook's success message.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit", "SubagentStart")


def json_string(text: str) -> str:
    try:
        from _json import encode_basestring
    except ImportError:  # no C accelerator: the json package
        from json import dumps

        return dumps(text, ensure_ascii=False)
    return str(encode_basestring(text))


def hook_json(event: str, context: str, message: str = "") -> str:
    """The hook's stdout: context for the model as hook JSON, and a line for the user
    (`systemMessage`, shown by the client and never sent to the model) when message is set."""
    shown = f', "systemMessage": {json_string(message)}' if message else ""
    return (
        f'{{"hookSpecificOutput": {{"hookEventName": {json_string(event)}, '
        f'"additionalContext": {json_string(context)}}}{shown}}}\n'
    )


def hook_output() -> str:
    stdin = sys.stdin
    raw = b"" if stdin is None or stdin.isatty() else stdin.buffer.read()
    payload = parse_hook_json(raw)
    if payload is None:
        note("stdin is not Claude Code hook JSON; nothing emitted")
        return ""
    block, _status = hook_context(payload)
    if not block:
        return ""
    event = payload.get("hook_event_name")
    if event in CONTEXT_EVENTS:
        return hook_json(str(event), block)
    return block  # no known event (a run by hand, an older client): the plain block


class _JsonContext:
    # What the standard json package's C scanner reads from its decoder.
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def parse_hook_json(raw: bytes) -> "dict[str, Any] | None":
    """The hook's JSON object; {} for empty input; None when it is not a JSON object."""
    try:
        text = raw.decode("utf-8").strip()
        if not text:
            return {}
        try:
            from _json import make_scanner
        except ImportError:  # no C accelerator: the json package
            from json import loads

            value = loads(text)
        else:
            value, end = make_scanner(_JsonContext)(text, 0)  # type: ignore[arg-type]
            if end != len(text):
                return None
    except (ValueError, StopIteration, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def int_option(name: str, default: int, minimum: int) -> int:
    value = os.environ.get("CLAUDE_PLUGIN_OPTION_" + name, "").strip()
    if value.isdigit() and int(value) >= minimum:
        return int(value)
    if value:
        note(
            f"ignoring CLAUDE_PLUGIN_OPTION_{name}={value!r} (want a whole number >= "
            f"{minimum}); using {default}"
        )
    return default


def every_turn() -> bool:
    value = os.environ.get("CLAUDE_PLUGIN_OPTION_EVERY_TURN", "").strip().lower()
    if value not in ("", "0", "false", "no", "off", "1", "true", "yes", "on"):
        note(f"ignoring CLAUDE_PLUGIN_OPTION_EVERY_TURN={value!r} (want true or false)")
    return value in ("1", "true", "yes", "on")


def cache_dir() -> "str | None":
    """Where the hook keeps rendered blocks and per-session state; never the repository."""
    data = os.environ.get("CLAUDE_PLUGIN_DATA", "")
    if os.path.isabs(data):
        return os.path.join(data, "permanent-memory")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(xdg):
        return os.path.join(xdg, "project-memory", "permanent-memory")
    home = os.path.expanduser("~")
    if not os.path.isabs(home):
        return None
    return os.path.join(home, ".cache", "project-memory", "permanent-memory")


def digest(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def code_stamp() -> str:
    stamps = []
    for name in RENDER_MODULES:
        try:
            stamps.append(str(os.stat(os.path.join(HERE, name)).st_mtime_ns))
        except OSError:
            stamps.append("-")
    return ",".join(stamps)


def cache_entry(key: str, block: str) -> bytes:
    """A cache file: a header naming the key, the body's length and its digest, then the body;
    a truncated or altered entry fails the check and is rendered again."""
    body = block.encode("utf-8")
    return f"{CACHE_FORMAT} {key} {len(body)} {digest(body)}\n".encode() + body


def read_cache_entry(path: str, key: str) -> "str | None":
    """The block stored under key, or None when absent, stale, truncated or corrupt."""
    try:
        with open(path, "rb") as handle:
            entry = handle.read(HOOK_MAX_CHARS * 4 + 256)
    except OSError:
        return None
    header, _, body = entry.partition(b"\n")
    fields = header.split(b" ")
    if len(fields) != 4 or fields[0] != CACHE_FORMAT.encode() or fields[1] != key.encode():
        return None
    if fields[2] != str(len(body)).encode() or fields[3] != digest(body).encode():
        return None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return None


def session_file(folder: str, session_id: str) -> str:
    safe = session_id.replace("-", "").replace("_", "")
    if not (safe.isascii() and safe.isalnum() and len(session_id) <= 100):
        session_id = digest(session_id.encode("utf-8", "surrogatepass"))
    return os.path.join(folder, "sessions", session_id)


def read_memory_file(path: str, root: "str | None" = None) -> "tuple[bytes | None, int]":
    """The file's bytes (None when it is over CERTAIN_SKIP_BYTES) and its size. It is opened
    without blocking and read only if it is a regular file: a FIFO or a device must neither
    hang nor flood the hook. With `root` (the project), `path` is the repository's and must not
    lead outside it. Raises FileNotFoundError or NotADirectoryError when there is no file,
    memory_io.OutsideProject or another OSError when it cannot be read."""
    if root is None:
        return memory_io.read_regular(path, CERTAIN_SKIP_BYTES)
    return memory_io.read_inside(root, path, CERTAIN_SKIP_BYTES)


def read_small(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(64)
    except OSError:
        return b""


def hook_context(payload: "dict[str, Any]") -> "tuple[str, str]":
    """The block this hook call should add to the model's context ("" for none), and the status
    line of the block for the user (what the session-start message says about it)."""
    cwd = payload.get("cwd")
    project = os.environ.get("CLAUDE_PROJECT_DIR") or (cwd if isinstance(cwd, str) else "")
    root = project or os.getcwd()
    path = os.path.join(root, MEMORY_FILE)
    try:
        data, size = read_memory_file(path, root)
    except (FileNotFoundError, NotADirectoryError):
        return "", ""  # no permanent memory in this project: say nothing
    except OSError as exc:
        note(f"cannot read {path}: {exc.strerror or exc}")
        return "", ""
    options = (
        int_option("TOKEN_TARGET", 120, 1),
        int_option("HARD_CAP", 200, 40),
        int_option("STALE_DAYS", 90, 1),
    )
    each_turn = every_turn()
    content = digest(data) if data is not None else f"size {size}"
    today = time.strftime("%Y-%m-%d", time.gmtime())
    key = digest(f"{__version__}|{code_stamp()}|{today}|{options}|{content}".encode())
    folder = cache_dir()
    # One entry per memory file and interpreter (which one decides the tokenizer available).
    where = os.fsencode(path) + b"\0" + os.fsencode(sys.executable or "")
    slot = os.path.join(folder, "blocks", digest(where) + ".txt") if folder else ""
    entry = read_cache_entry(slot, key) if slot else None
    if entry is not None and "\n" in entry:
        status, block = entry.split("\n", 1)
    else:
        import pm_hook

        block, status = pm_hook.render_and_store(
            data, size, options, slot, lambda text: cache_entry(key, text)
        )
    if len(block) >= HOOK_MAX_CHARS:
        note("block too large for a hook; nothing emitted")
        return "", ""
    event = payload.get("hook_event_name")
    if event == "SubagentStart":
        return block, status  # a new context of its own: the block once, as it starts
    session_id = payload.get("session_id")
    if not (folder and isinstance(session_id, str) and session_id):
        return block, status  # no session to remember what it was sent
    state = session_file(folder, session_id)
    sent = digest(block.encode("utf-8"))
    if read_small(state) == sent.encode():
        if event == "UserPromptSubmit" and not each_turn:
            return "", status  # this session already has this block
        if event == "SessionStart" and payload.get("source") == "resume":
            return (
                "",
                status,
            )  # a resumed transcript already holds it; clear and compact start afresh
        return block, status
    import pm_hook

    pm_hook.record_sent(state, sent)
    return block, status
