"""A get straight from the store file: no SQLite loaded, and no parse of the whole file.

The read index keeps, for each store, the identity (size, mtime, inode) of the file
its rows describe, a CRC when that file was written racily (``RACY_NS``), and where
the file's entries sit in it (``ctx/storage/index.py``: ``meta``, ``layout``). Bytes
with such an identity were parsed whole and found valid (no key twice, every entry
an object), or were written by ctx. After every change of those rows the index
writes them again to one small file beside it (``publish``), and a get reads them
there: when the store file still has that identity, the entry's text is found in the
bytes by ctx's own layout (``ctx/storage/textlayout.py``) and only it is decoded.

Anything else is ``UNKNOWN`` and the caller asks the index: another identity (an edit
outside ctx), a racy file whose bytes are not the ones indexed, a layout that cannot
tell, no such file, a store file over ``LIMIT`` (reading it costs more than SQLite).
A ``ctx get`` loads neither SQLite's library nor the modules its module loads
(tests/cli/test_fastcli.py: test_a_read_loads_only_what_it_uses). The file is mapped, not
read: finding a key touches the pages before it, a read would copy the whole file first. ctx replaces a
store file, never rewrites it in place; a program that truncated one in place during the
millisecond a get maps it would stop that get (SIGBUS), as it would stop git reading a pack.
"""

from __future__ import annotations

import marshal
import mmap
import os
import time

from ctx.errors import StoreError
from ctx.jsoncodec import loads
from ctx.storage.files import atomic_write, identity_of, read_bytes, remove, store_path
from ctx.storage.indextables import KNOWN, MARSHAL_VERSION, RACY_NS

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any

    from ctx.storage.files import StrPath

UNKNOWN: Any = object()  # the file cannot answer: ask the index
# a store file larger than this: the index's lookup costs less than finding a key in the file
# (bench/run.py's "get (index floor)" row measures the index's side)
LIMIT = 8 << 20
# a store's row: (size, mtime_ns, inode, racy, crc32 when racy, body, close)
Row = tuple


def known_path(state: StrPath) -> str:
    """The file of the index's known identities in the state folder ``state``."""
    return os.path.join(state, KNOWN)


def publish(state: StrPath, rows: dict[str, Row]) -> None:
    """Keep ``rows`` (store -> its row) where a get reads them (a cache of the index's
    own rows: lost or stale, a get asks the index)."""
    atomic_write(known_path(state), marshal.dumps(rows, MARSHAL_VERSION), durable=False)


def forget(state: StrPath) -> None:
    remove(known_path(state))


def _rows(state: StrPath) -> dict[str, Row] | None:
    try:
        rows = marshal.loads(read_bytes(known_path(state)))
    except (OSError, ValueError, EOFError, TypeError):
        return None
    return rows if isinstance(rows, dict) else None


class _Mapped(mmap.mmap):
    """A store file mapped, not read: the search for one key touches the pages before it
    (a read would copy the whole store file first)."""

    def startswith(self, prefix: bytes, start: int = 0) -> bool:  # (as bytes has it: the layout asks)
        return self[start:start + len(prefix)] == prefix


def entry(root: StrPath, state: StrPath, store: str, key: str) -> Any:
    """``key``'s entry in ``store`` (None: the file proves there is none), or ``UNKNOWN``."""
    rows = _rows(state)
    row = rows.get(store) if rows is not None else None
    if not isinstance(row, tuple) or len(row) != 7 or row[5] is None or not 0 < row[0] <= LIMIT:
        return UNKNOWN
    try:
        fd = os.open(store_path(root, store), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return UNKNOWN
    try:
        if identity_of(os.fstat(fd)) != row[:3]:
            return UNKNOWN
        data = _Mapped(fd, 0, prot=mmap.PROT_READ)
        try:
            found = _read(data, rows, row, store, key, state)  # type: ignore[arg-type]
        finally:
            data.close()
        # (a writer replaces the file, never the bytes of this one; one that rewrote them in
        # place changed the identity: then the bytes read may be its half-written ones)
        return found if identity_of(os.fstat(fd)) == row[:3] else UNKNOWN
    except (OSError, ValueError):
        return UNKNOWN
    finally:
        os.close(fd)


def _read(data: _Mapped, rows: dict[str, Row], row: Row, store: str, key: str, state: StrPath) -> Any:
    size, mtime, ino, racy, crc, body, close = row
    if racy:
        import zlib
        if zlib.crc32(data) != crc:
            return UNKNOWN
        if time.time_ns() - mtime > RACY_NS:  # no longer racy: checked once more, here
            rows[store] = (size, mtime, ino, 0, 0, body, close)
            try:
                publish(state, rows)
            except (OSError, StoreError):
                pass  # (a read-only state folder: the next get checks the CRC again)
    from ctx.storage.bytesplice import known_region
    from ctx.storage.textlayout import _BYTES, _locate
    if not known_region(data, body, close):  # type: ignore[arg-type]
        return UNKNOWN
    at = _locate(data, key, _BYTES, once=True)
    if at is None:
        return UNKNOWN
    if at[2] < 0:
        return None
    try:
        return loads(data[at[3]:at[4]])
    except (ValueError, RecursionError):
        return UNKNOWN
