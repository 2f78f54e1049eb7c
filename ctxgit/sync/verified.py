"""The store blobs the arrival guard proved piece by piece, kept between syncs (``.git/ctx/verified/``).

``incoming.check`` proves an arriving store file piece by piece (``ctx/storage/piecewise.py``);
a proof depends on a piece's bytes alone. For each of the last ``KEEP`` store blobs proved
whole, one file here (named by the blob id) keeps its pieces' digests and keys, in order. The
next sync's base (this side's store blob: usually the last one taken in) is then known piece by
piece without being read or parsed, and only the pieces it lacks are proved. This machine's own
state, like the read index: never committed, never taken from a remote (``incoming`` refuses
any ``.git`` path); lost or unreadable, the next sync proves again, slower, never wrong.
"""

from __future__ import annotations

import marshal
import os

import pygit2

from ctx.storage.atomic import atomic_write
from ctxgit.gitfiles.layout import VERIFIED

KEEP = 4  # blobs remembered: a sync's base is nearly always one of the last few taken in
VERSION = 2  # (1: blake2b digests; a proof of another version is made again)


class Verified:
    """The blobs proved whole (blob id -> its pieces' digests and keys), read as asked."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.folder = os.path.join(repo.path, VERIFIED)
        self._read: dict[str, tuple[list[bytes], list[str]] | None] = {}

    def _file(self, blob: pygit2.Oid) -> str:
        return os.path.join(self.folder, str(blob))

    def pieces(self, blob: pygit2.Oid | None) -> tuple[list[bytes], list[str]] | None:
        """The digests and keys of a blob proved whole, or None."""
        if blob is None:
            return None
        name = str(blob)
        if name not in self._read:
            found = None
            try:
                with open(self._file(blob), "rb") as handle:
                    version, digests, keys = marshal.loads(handle.read())
                if version == VERSION and isinstance(digests, list) and isinstance(keys, list) \
                        and len(digests) == len(keys):
                    found = (digests, keys)
            except (OSError, ValueError, EOFError, TypeError):
                pass
            self._read[name] = found
        return self._read[name]

    def known(self) -> dict[bytes, str]:
        """Every piece proved in a kept blob: digest -> key (to prove a base never taken in)."""
        out: dict[bytes, str] = {}
        try:
            names = os.listdir(self.folder)
        except OSError:
            return out
        for name in names:
            if len(name) == 40:
                found = self.pieces(pygit2.Oid(hex=name))
                if found is not None:
                    out.update(zip(*found, strict=True))
        return out

    def record(self, blob: pygit2.Oid, digests: list[bytes], keys: list[str]) -> None:
        """``blob`` proved whole: its pieces' digests and keys. The oldest beyond ``KEEP`` go."""
        self._read[str(blob)] = (digests, keys)
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            atomic_write(self._file(blob), marshal.dumps((VERSION, digests, keys)), durable=False)
            kept = sorted((entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(self.folder)
                          if entry.is_file() and len(entry.name) == 40)
            for _, path in kept[:-KEEP]:
                os.unlink(path)
        except OSError:
            pass  # a cache: the next sync proves again
