# The hook's writes, off its steady-state path: render and cache a block on a cache miss, record
# what a session was sent, and forget sessions nobody has touched for a month. Every file lands
# atomically (a temporary file in the same folder, then os.replace), in the cache dir only.
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

SESSION_STATE_DAYS = 30


def _note(message: str) -> None:
    sys.stderr.write(f"permanent-memory hook: {message}\n")


def write_atomic(path: str, data: bytes) -> None:
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def render_and_store(
    data: bytes | None,
    size: int,
    options: tuple[int, int, int],
    slot: str,
    make_entry: Callable[[str], bytes],
) -> tuple[str, str]:
    """Render the block (target, hard cap, stale days) and its status line for the user, and
    cache both in slot ("" for no cache): the entry's text is the status line, then the block."""
    # Imported here: recording what a new session was sent must not load the renderer.
    from pm_load import hook_block

    target, hard_cap, stale_days = options
    block, status, estimate_reason = hook_block(data, size, target, hard_cap, stale_days)
    if estimate_reason:
        # The block still keeps the hard cap, but is trimmed harder than it needs to be.
        _note(f"token counts are estimates ({estimate_reason}); run permanent_memory.py doctor")
    if slot:
        try:
            write_atomic(slot, make_entry(f"{status}\n{block}"))
        except OSError as exc:
            _note(f"cannot write the cache in {os.path.dirname(slot)}: {exc.strerror or exc}")
        prune_sessions(os.path.join(os.path.dirname(os.path.dirname(slot)), "sessions"))
    return block, status


def record_sent(state: str, sent: str) -> None:
    try:
        write_atomic(state, sent.encode())
    except OSError as exc:
        _note(f"cannot record session state in {os.path.dirname(state)}: {exc.strerror or exc}")


def prune_sessions(folder: str, max_age_days: int = SESSION_STATE_DAYS) -> None:
    """Forget per-session state untouched for max_age_days (the hook's own files only)."""
    cutoff = time.time() - max_age_days * 86400
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        path = os.path.join(folder, name)
        try:
            if os.stat(path).st_mtime < cutoff:
                os.unlink(path)
        except OSError:
            continue
