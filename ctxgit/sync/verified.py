"""The store blobs the arrival guard proved piece by piece, kept between syncs (``.git/ctx/verified/``).

``incoming.check`` proves an arriving store file piece by piece (``ctx/storage/piecewise.py``);
a proof depends on a piece's bytes alone. For each of the last ``KEEP`` store blobs proved
whole, one file here (named by the blob id) keeps its pieces' digests and keys, in order, and
its runs (``piecewise.Run``). The next sync's base (this side's store blob: usually the last
one taken in) is then known piece by piece without being read or parsed, the arriving file is
proved along its runs, and only the pieces it lacks are proved. This machine's own
state, like the read index: never committed, never taken from a remote (``incoming`` refuses
any ``.git`` path); lost or unreadable, the next sync proves again, slower, never wrong.
"""

from __future__ import annotations

import marshal
import os

import pygit2

from ctx.storage.atomic import atomic_write
from ctx.storage.piecewise import Proof, split_digests
from ctxgit.gitfiles.layout import VERIFIED

KEEP = 4  # blobs remembered: a sync's base is nearly always one of the last few taken in
VERSION = 3  # (1: blake2b digests; 2: no runs; a proof of another version is made again)


def _a_run(run: object) -> bool:
    return isinstance(run, tuple) and len(run) == 4 and type(run[0]) is int and type(run[1]) is int \
        and run[0] > 0 and run[1] >= 0 and isinstance(run[2], bytes) and isinstance(run[3], bytes)


class Verified:
    """The blobs proved whole (blob id -> its proof, without entries), read as asked."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.folder = os.path.join(repo.path, VERIFIED)
        self._read: dict[str, Proof | None] = {}

    def _file(self, blob: pygit2.Oid) -> str:
        return os.path.join(self.folder, str(blob))

    def pieces(self, blob: pygit2.Oid | None) -> Proof | None:
        """The proof of a blob proved whole (its ``fresh`` left empty), or None."""
        if blob is None:
            return None
        name = str(blob)
        if name not in self._read:
            found = None
            try:
                with open(self._file(blob), "rb") as handle:
                    version, digests, keys, runs = marshal.loads(handle.read())
                if version == VERSION and isinstance(digests, bytes) and isinstance(keys, list) \
                        and isinstance(runs, list) and all(map(_a_run, runs)):
                    kept = Proof(digests, keys, {}, runs)
                    if kept.whole() or (not keys and not digests and not runs):
                        found = kept
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
                    out.update(zip(split_digests(found.digests), found.keys, strict=True))
        return out

    def record(self, blob: pygit2.Oid, proof: Proof) -> None:
        """``blob`` proved whole by ``proof``. The oldest beyond ``KEEP`` go."""
        kept = Proof(proof.digests, proof.keys, {}, proof.runs)
        self._read[str(blob)] = kept
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            atomic_write(self._file(blob), marshal.dumps((VERSION, kept.digests, kept.keys, kept.runs)),
                         durable=False)
            kept_files = sorted((entry.stat().st_mtime_ns, entry.path) for entry in os.scandir(self.folder)
                                if entry.is_file() and len(entry.name) == 40)
            for _, path in kept_files[:-KEEP]:
                os.unlink(path)
        except OSError:
            pass  # a cache: the next sync proves again
