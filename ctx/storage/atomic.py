"""Replacing a file whole (§8.3): a unique temporary beside it, fsynced and renamed over
it, so a crash leaves the old file or the new one; the temporaries a killed ctx left;
and a second name for the file a write replaces, so that a write that fails can put it
back without room on the disk (tests/reliability/test_failed_writes.py). The store
files' own reading and writing is ``files.py``'s.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable
    from os import PathLike

    StrPath = str | PathLike[str]  # a path as callers hold it: here, always made a str (no pathlib:
    # no read imports it, with the urllib.parse, ipaddress and re it brings:
    # test_fastcli.py, test_the_reads_load_neither_re_nor_pathlib)

from ctx.errors import StoreError

TMP_SUFFIX = ".tmp"
FILE_MODE = 0o600

Identity = tuple  # (size, mtime_ns, inode) of a file: what a cache is checked against


def identity_of(st: os.stat_result) -> Identity:
    """(size, mtime_ns, inode) of a file: what a cache is checked against."""
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def remove(path: StrPath) -> bool:
    """Remove a file when it is there (``Path.unlink(missing_ok=True)``); whether it was."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


STALE_TEMPORARY = 600.0  # seconds: a write renames its temporary within milliseconds


def sweep_temporaries(directory: StrPath, older_than: float = STALE_TEMPORARY) -> list[str]:
    """Remove what ``atomic_write`` left in ``directory`` when a ctx was killed between
    writing a temporary and renaming it (a store file's is as large as the store): only
    names of its making (``.NAME.<12 hex>.tmp``), only files older than ``older_than``
    seconds. Returns the names removed; never fails."""
    import time
    cutoff = time.time() - older_than
    removed = []
    try:
        with os.scandir(directory) as found:
            for entry in found:
                if not temporary_name(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and st.st_mtime <= cutoff:
                        os.unlink(entry.path)
                        removed.append(entry.name)
                except OSError:
                    continue
    except OSError:
        pass
    return removed


def temporary_name(name: str) -> bool:
    """Whether ``name`` is one ``_temporary`` makes: ``.NAME.<12 hex>.tmp``."""
    if not (name.startswith(".") and name.endswith(TMP_SUFFIX)):
        return False
    token = name[:-len(TMP_SUFFIX)].rpartition(".")[2]
    return len(token) == 12 and all(c in "0123456789abcdef" for c in token)


def _temporary(directory: str, name: str) -> tuple[int, str]:
    """A new, uniquely named file beside the target, open for writing (mode 0600)."""
    for _ in range(100):
        tmp = os.path.join(directory, f".{name}.{os.urandom(6).hex()}{TMP_SUFFIX}")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE), tmp
        except FileExistsError:
            continue
    raise StoreError(f"cannot create a temporary file in {directory}")


def atomic_write(path: StrPath, content: bytes, *, mode: int | None = None, durable: bool = True,
                 create_only: bool = False, unlink_first: bool = False,
                 before_replace: Callable[[Identity], None] | None = None) -> Identity:
    """Replace ``path`` with ``content``: temporary file, fsync, rename (§8.3). The one
    way ctx replaces a file, whatever the file.

    ``mode``: the file's permissions (default 0600); ``durable``: False skips the fsyncs,
    for what can be made again (a cache, a log, a generated page), where a lost write
    costs nothing and a write's time counts; ``create_only``: never over a file already
    there (FileExistsError), for a file ctx only makes when it is missing;
    ``before_replace``: called with the new file's identity just before it takes the
    name (the write path says whose file it is: ``Recorder.intend``); ``unlink_first``
    (with ``durable`` False): the old file is removed just before the rename, for a record
    a write replaces every time and whose absence a reader takes as "make it again", never
    as another answer, since ext4 writes a file renamed over another out to disk before
    the rename returns (tests/git/test_write_cost.py). Returns the new file's identity
    (size, mtime, inode).
    """
    path = os.fspath(path)
    directory, name = os.path.split(path)
    directory = directory or os.curdir
    if os.path.islink(directory):
        raise StoreError(f"{directory}: is a symbolic link; ctx never writes through a link")
    fd, tmp = _temporary(directory, name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            if durable:
                os.fsync(handle.fileno())
            identity = identity_of(os.fstat(handle.fileno()))
        if before_replace is not None:
            before_replace(identity)
        if create_only:
            _create(tmp, path)
        else:
            if unlink_first and not durable:
                remove(path)
            os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        _fsync_dir(directory)
    return identity


def _create(tmp: str, path: str) -> None:
    """Put the whole ``tmp`` in place as ``path`` only when there is no ``path``: a hard
    link (FileExistsError when one is there), then the temporary removed. Where the file
    system has no hard links, the name is taken first and the content renamed over it."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:  # no hard links here (some network and FAT file systems)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, FILE_MODE))
        os.replace(tmp, path)
        return
    try:
        os.unlink(tmp)
    except OSError:
        pass  # the file is in place; a temporary left beside it is only litter


def _fsync_dir(directory: str) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def keep_old(path: StrPath) -> str | None:
    """A second name (a temporary's, in the same folder) for the file at ``path``, so that
    a write that fails after replacing it can put it back by a rename, which needs no
    room on a full disk (``put_back``). None when there is no file, or no hard link can
    be made here (then the old bytes are written back instead)."""
    path = os.fspath(path)
    directory, name = os.path.split(path)
    for _ in range(3):
        kept = os.path.join(directory or os.curdir, f".{name}.{os.urandom(6).hex()}{TMP_SUFFIX}")
        try:
            os.link(path, kept, follow_symlinks=False)
            return kept
        except FileExistsError:
            continue
        except OSError:
            return None
    return None


def _same_file(one: str, other: StrPath) -> bool:
    try:
        return os.path.samestat(os.lstat(one), os.lstat(other))
    except FileNotFoundError:
        return False


def put_back(path: StrPath, old: bytes | None, kept: str | None) -> None:
    """Put ``path`` back as it was before a write: its kept name renamed over it
    (``keep_old``), else ``old`` written back, else (there was none) removed."""
    if kept is not None:
        try:
            if _same_file(kept, path):  # never replaced (a rename onto the same file does nothing)
                remove(kept)
                return
            os.replace(kept, path)
            _fsync_dir(os.path.dirname(os.fspath(path)) or os.curdir)
            return
        except OSError:  # (renames fail here too: the bytes are written back, the name not left)
            try:
                remove(kept)
            except OSError:
                pass
    if old is not None:
        atomic_write(path, old)
    else:
        remove(path)
