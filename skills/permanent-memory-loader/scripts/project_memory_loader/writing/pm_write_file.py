# The writing commands' file layer (add, archive, merge; check reads through it too): the memory
# file read within a bound and as UTF-8, then written back keeping its line ends, byte-order
# mark and permissions. (pm_file finds and reads it for the block.)
#
# Writes take an exclusive lock on the memory file's directory (the directory, not a lock file:
# nothing extra appears in the user's repository, and unlike the memory file itself it is never
# replaced) and land atomically (memory_io).
from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from ..core.pm_cli import MEMORY_FILE, project_dir
from ..core.pm_errors import MemoryFileError
from ..core.pm_parse import normalise_text
from ..shared import memory_io

MAX_FILE_BYTES = 64 * 1024 * 1024
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class FileText(NamedTuple):
    text: str  # line ends normalised to LF, no BOM
    crlf: bool  # written back with CRLF line ends
    bom: bool  # written back with a UTF-8 BOM
    mode: int  # permission bits, kept when the file is replaced

    def encode(self, text: str) -> bytes:
        return encode_as(text, self)


def encode_as(text: str, like: FileText | None) -> bytes:
    if like is not None and like.crlf:
        text = text.replace("\n", "\r\n")
    if like is not None and like.bom:
        text = "\ufeff" + text
    return text.encode("utf-8")


def read_bytes(path: Path, follow: bool) -> tuple[bytes, int] | None:
    """The file's bytes and permission bits; None when it does not exist."""
    try:
        data, _size = memory_io.read_regular(path, MAX_FILE_BYTES, follow)
        mode = stat.S_IMODE(os.stat(path, follow_symlinks=follow).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (IsADirectoryError, memory_io.NotRegularFile):
        raise MemoryFileError(f"{path} is not a regular file") from None
    except OSError as exc:
        if not follow and os.path.islink(path):
            raise MemoryFileError(
                f"{path} is a symbolic link; add and archive replace the file, which would "
                "break the link: give --file the real file"
            ) from None
        raise MemoryFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    if data is None:
        raise MemoryFileError(f"{path} is over {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    return data, mode


def first_undecodable(data: bytes) -> tuple[int, int] | None:
    """(byte offset, line number) of the first byte that is not UTF-8, or None."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start, data[: exc.start].count(b"\n") + 1
    return None


def read_for_writing(path: Path) -> FileText | None:
    found = read_bytes(path, follow=False)
    if found is None:
        return None
    data, mode = found
    if data.startswith(UTF16_BOMS):
        raise MemoryFileError(
            f"{path} is UTF-16 text; save it as UTF-8 first (this command writes UTF-8)"
        )
    bad = first_undecodable(data)
    if bad is not None:
        raise MemoryFileError(
            f"{path} is not UTF-8 text at byte offset {bad[0]} (line {bad[1]}); fix it first, "
            "nothing was written"
        )
    raw = data.decode("utf-8")
    return FileText(normalise_text(raw), "\r\n" in raw, raw.startswith("\ufeff"), mode)


def memory_path(file: str | None, project: str | None) -> tuple[Path, bool]:
    """The permanent memory file to write and whether it was given with --file. The project's
    own file (no --file) must not lead outside the project: a clone may link it, or
    .claude/memory, to another project's, and a write through that link would land there."""
    if file is not None:
        path = Path(file)
        explicit = True
    else:
        root = project_dir(project)
        path = root / MEMORY_FILE
        explicit = False
        inside(root, path)
    if path.name == "manual_overrides.md":
        raise MemoryFileError(f"{path}: manual_overrides.md is user-curated; it is never written")
    return path, explicit


def inside(root: Path, path: Path) -> None:
    try:
        memory_io.inside_project(root, path)
    except memory_io.OutsideProject as exc:
        raise MemoryFileError(str(exc)) from None


def make_dirs(directory: Path) -> None:
    """Create `directory` and any missing parents, each made durable in its parent."""
    missing = []
    while not directory.exists():
        missing.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            pass
        except OSError as exc:
            raise MemoryFileError(f"cannot create {folder}: {exc.strerror or exc}") from None
        memory_io.fsync_dir(folder.parent)
