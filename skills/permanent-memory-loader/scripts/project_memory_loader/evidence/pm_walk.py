# The project's tree, looked at strictly inside its root: whether a project-relative path is
# there, and where its links lead, a link resolved by reading it, never by following it (one
# that leads out of the root counts as gone, and nothing outside is ever stat'ed). The hook's
# steady state: `existence_bits` checks each path an entry names with about one lstat, and
# `evidence_key` puts the result in the block's cache key; the file tools' hook makes a touched
# path relative with `resolved_path`; pm_evidence's check on a cache miss uses `Walk`.
#
# Import-light: a cache hit imports this module, so it imports only what a bare interpreter has
# loaded (os, stat).
from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_LINK_HOPS = 40  # symbolic links followed (by reading them) for one path, as the kernel does


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


class Walk:
    """One root's lookups, remembering each folder prefix it has resolved: the paths a file
    names share their folders, so a check costs about one lstat per path."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self.prefix = self.root.rstrip(os.sep) + os.sep
        self.folders: dict[str, bool] = {}  # folder -> reached through no link, a folder
        # resolved prefix ("a/b") -> its kind: "d" folder, "f" anything else, "" missing, or a
        # link's target as a list of parts relative to the root (None: it leads out).
        self.kinds: dict[str, object] = {}

    def kind(self, parts: Sequence[str]) -> object:
        key = "/".join(parts)
        if key in self.kinds:
            return self.kinds[key]
        found: object
        try:
            status = os.lstat(os.path.join(self.root, *parts))
        except (OSError, ValueError):  # ValueError: a NUL in the name
            found = ""
        else:
            if stat.S_ISLNK(status.st_mode):
                found = self.link_target(parts)
            else:
                found = "d" if stat.S_ISDIR(status.st_mode) else "f"
        self.kinds[key] = found
        return found

    def link_target(self, parts: Sequence[str]) -> list[str] | None:
        """Where the link at `parts` points, as parts relative to the root, read from the link
        itself; None when that is outside the root (or cannot be read)."""
        try:
            target = os.readlink(os.path.join(self.root, *parts))
        except (OSError, ValueError):
            return None
        if os.path.isabs(target):
            prefix = self.root.rstrip(os.sep) + os.sep
            if not (target + os.sep).startswith(prefix):
                return None
            relative = target[len(prefix) :].split(os.sep)
            return [part for part in relative if part not in ("", ".")]
        resolved = list(parts[:-1])
        for part in target.replace(os.sep, "/").split("/"):
            if part == "..":
                if not resolved:
                    return None  # above the root
                resolved.pop()
            elif part not in ("", "."):
                resolved.append(part)
        return resolved

    def exists(self, path: str) -> bool:
        """Whether `path` (relative to the root) names something inside the root, its links
        resolved without leaving it. The common case costs one lstat: the folder it is in is
        looked up once for all the paths in it."""
        bare = path.rstrip("/")  # a trailing `/` would make lstat follow a final link
        folder, _, name = bare.rpartition("/")
        if not name or name in (".", "..") or (folder and not self.plain_folder(folder)):
            return self.walk(path)
        try:
            status = os.lstat(self.prefix + bare)
        except (OSError, ValueError):
            return False
        if stat.S_ISLNK(status.st_mode) or (
            path.endswith("/") and not stat.S_ISDIR(status.st_mode)
        ):
            return self.walk(path)
        return True

    def plain_folder(self, folder: str) -> bool:
        """Whether `folder` is a folder inside the root reached through no link (else the full
        walk decides)."""
        known = self.folders.get(folder)
        if known is None:
            parent, _, name = folder.rpartition("/")
            known = name not in ("", ".", "..") and (not parent or self.plain_folder(parent))
            if known:
                try:
                    known = stat.S_ISDIR(os.lstat(self.prefix + folder).st_mode)
                except (OSError, ValueError):
                    known = False
            self.folders[folder] = known
        return known

    def walk(self, path: str) -> bool:
        """exists(), one part at a time, reading each link on the way."""
        return self.resolve(path, strict=True) is not None

    def resolve(self, path: str, strict: bool = False) -> str | None:
        """`path` (relative to the root) with the links on its way read and replaced by where
        they point, as a path relative to the root; None when a link leads out of the root (or
        too many are chained). Parts that are not there are kept as written: a file about to be
        written is resolved as far as its folder is. `strict`: None as well when a part is not
        there, or a file stands where a folder should."""
        pending = _parts(path)
        resolved: list[str] = []
        hops = 0
        while pending:
            part = pending.pop(0)
            if part == "..":
                if not resolved:
                    return None
                resolved.pop()
                continue
            candidate = [*resolved, part]
            kind = self.kind(candidate)
            if kind == "":  # not there (yet): the rest as written, when it stays inside
                if strict or ".." in pending:
                    return None
                return "/".join([*candidate, *pending])
            if kind is None or isinstance(kind, list):
                hops += 1
                if kind is None or hops > MAX_LINK_HOPS:
                    return None
                pending = [*kind, *pending]
                resolved = []
                continue
            if strict and kind == "f" and pending:
                return None  # a file where a folder should be
            resolved = candidate
        return "/".join(resolved)


def resolved_path(root: str, path: str) -> str | None:
    """Walk.resolve: a project-relative path with its links read inside the root, never
    followed out of it (None when one leads out)."""
    return Walk(root).resolve(path)


def existence_bits(root: str, paths: Sequence[str]) -> str:
    """One character per path, "1" there or "0" gone: what the block's cache key holds."""
    walk = Walk(root)
    return "".join("1" if walk.exists(path) else "0" for path in paths)


def git_stamp(root: str) -> str:
    """Size and modification time of ROOT/.git/logs/HEAD (git appends to it on each commit,
    checkout or reset), when .git is a folder inside the root; "" otherwise. Part of the key
    while a path is gone, so a move committed later is seen at the next hook run."""
    try:
        status = os.lstat(os.path.join(root, ".git", "logs", "HEAD"))
    except (OSError, ValueError):
        return ""
    return f"{status.st_size}:{status.st_mtime_ns}"


def evidence_key(root: str, bits: str) -> str:
    """The evidence part of the block's cache key."""
    return bits + ("|" + git_stamp(root) if "0" in bits else "")
