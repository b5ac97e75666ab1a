# Generated from shared/hook_io.py by `python3 scripts/dev.py sync-shared`; edit that file.
# What both skills' hooks share on their steady-state path: the process's streams (one line on
# stderr that can never fail, a hook's stdout in one UTF-8 write, and for the commands the words
# for a stdout that refuses their results), the caches' folder, their digest-checked entries,
# code and file stamps and the forgetting of old files, and hook JSON read and written.
#
# Each skill carries a copy of this file (`python3 scripts/dev.py sync-shared` writes them; see
# memory_io). The hooks import it on every prompt and tool call. It uses the json package and
# hashlib as any code would; the one thing kept from the hooks' diet is typing: annotations are
# strings and TYPE_CHECKING is a plain False (mypy treats the name as True), because `import
# typing` costs about 13 ms with -S on this machine, more than the interpreter's own start
# (docs/performance.md, "Plain code").
from __future__ import annotations

import hashlib
import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


# --- the process's streams ----------------------------------------------------------------


def stdout_refusal(exc: BaseException | None = None) -> str | None:
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


def refusal_of(exc: BaseException) -> str:
    """stdout_refusal(exc) for an error met while printing results; exc raised again when it is
    not stdout refusing them (a bug, which must show as one)."""
    refused = stdout_refusal(exc)
    if refused is None:
        raise exc
    return refused


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


# --- the hooks' caches (both skills' hooks, on their steady-state path) ------------------------


def digest(data: bytes) -> str:
    """The hex digest the caches name and check their entries with (not a security boundary)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def sealed(form: str, key: str, body: bytes) -> bytes:
    """A cache file: a header naming its format, the key, the body's length and its digest, then
    the body; a truncated or altered entry fails unsealed's check and is made again."""
    return f"{form} {key} {len(body)} {digest(body)}\n".encode() + body


def unsealed(entry: bytes, form: str, key: str) -> bytes | None:
    """The body of a sealed entry of this format and key; None when it is another's, truncated
    or altered."""
    header, _, body = entry.partition(b"\n")
    fields = header.split(b" ")
    if len(fields) != 4 or fields[0] != form.encode() or fields[1] != key.encode():
        return None
    if fields[2] != str(len(body)).encode() or fields[3] != digest(body).encode():
        return None
    return body


def forget_older(folder: str, cutoff: float) -> None:
    """Remove the files of a cache folder last modified before cutoff (seconds since the epoch),
    each judged by itself (a link is never followed); what cannot be removed stays."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            if os.lstat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            continue


def cache_dir(name: str, env: Mapping[str, str] | None = None) -> str | None:
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


def project_folder(project_dir: str) -> str | None:
    """The name a project's folder in the cache goes by: its folder's name, made plain, and a
    digest of its real path (`billing-api-3f2a9c01d4e5`); None for no path."""
    if not project_dir or "\0" in project_dir:
        return None
    path = os.path.realpath(project_dir)
    name = os.path.basename(path.rstrip(os.sep)) or "root"
    plain = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "-" for c in name)
    key = digest(path.encode("utf-8", "surrogatepass"))[:12]
    return f"{plain.strip('.-')[:40]}-{key}"


def code_stamp(folder: str, names: tuple[str, ...]) -> str:
    """The modification times of the modules whose code decides a cached text ("-" for one that
    is missing): part of a cache key, so that changed code never serves an old entry."""
    stamps = []
    for name in names:
        try:
            stamps.append(str(os.stat(os.path.join(folder, name)).st_mtime_ns))
        except OSError:
            stamps.append("-")
    return ",".join(stamps)


def file_stamp(path: str) -> list[int] | None:
    """Size, modification time and inode of `path` (its link, not followed); None when absent."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns, status.st_ino]


# --- hook JSON -------------------------------------------------------------------------------


def scan_json(text: str) -> object:
    """The JSON value that is all of `text`, as json.loads reads it. Raises ValueError when it is
    not JSON, RecursionError when it nests too deep."""
    return json.loads(text)


def json_string(text: str) -> str:
    """`text` as a JSON string, non-ASCII kept."""
    return json.dumps(text, ensure_ascii=False)


def hook_json(event: str, context: str, message: str = "") -> str:
    """A hook's stdout: context for the model as hook JSON, and a line for the user
    (`systemMessage`, shown by the client and never sent to the model) when message is set."""
    shown = f', "systemMessage": {json_string(message)}' if message else ""
    return (
        f'{{"hookSpecificOutput": {{"hookEventName": {json_string(event)}, '
        f'"additionalContext": {json_string(context)}}}{shown}}}\n'
    )
