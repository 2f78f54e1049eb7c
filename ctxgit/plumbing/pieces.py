"""A store's loose blob compressed piece by piece: the next write recompresses only what it changed.

A loose object is the zlib stream of ``blob <size>\\0`` and the file. Compressed
whole, a big store's blob is the largest part of a write (bench/run.py). So
the fast commit compresses the content in pieces of ``PIECE`` bytes, each by a
fresh compressor ending in a full flush: a piece's deflate blocks refer to
nothing before them and end byte-aligned, so they are valid anywhere in a
stream. The sizes of the last blob's pieces are kept in ``.git/ctx/pieces.json``
(by store file, with the blob's id). The next commit of that store compares
each old piece with the new content, where it was or shifted by the change in
length (the bytes are compared, not trusted), copies the compressed pieces
found from the old loose object, and compresses only the rest. The zlib header,
the final block and the Adler-32 of the whole object are written anew; the
Adler-32 is combined from each piece's (the old pieces' were computed checking
the old object), so the new content is not read a second time for it.

Anything unexpected (no map, another blob, a packed or rewritten object, an
Adler-32 that does not match the old content) compresses everything: the
object written is always exactly ``zlib`` of its bytes.
"""

from __future__ import annotations

import os
import struct
import zlib

from ctx.errors import StoreError
from ctx.jsoncodec import compact, loads
from ctx.storage.files import read_bytes, read_text
from ctxgit.gitfiles.layout import PIECES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

PIECE = 1 << 16
MAP = PIECES
_HEAD = b"\x78\x01"  # zlib, deflate with a 32 KB window, the fastest level
_END = b"\x03\x00"   # a final, empty fixed-Huffman block


def _squeeze(data) -> bytes:
    compressor = zlib.compressobj(1, zlib.DEFLATED, -15)
    return compressor.compress(data) + compressor.flush(zlib.Z_FULL_FLUSH)


def _load(git: StrPath, path: str, blob: str | None) -> dict | None:
    if blob is None:
        return None
    try:
        entry = loads(read_text(os.path.join(git, MAP))).get(path)
    except (OSError, ValueError, AttributeError):
        return None
    return entry if isinstance(entry, dict) and entry.get("blob") == blob else None


def _combine(first: int, second: int, length: int) -> int:
    """The Adler-32 of two byte strings joined, from each one's and the second's length
    (zlib's ``adler32_combine``, which Python's zlib does not offer)."""
    rem = length % _BASE
    low = (first & 0xFFFF) + (second & 0xFFFF) + _BASE - 1
    high = (rem * (first & 0xFFFF)) % _BASE + (first >> 16) + (second >> 16) + _BASE - rem
    return (low % _BASE) | ((high % _BASE) << 16)


_BASE = 65521  # the largest prime below 2**16: Adler-32's modulus


def _old_pieces(git: StrPath, path: str, blob: str | None, header: bytes, old: bytes | None):
    """``(compressed bytes, [(raw offset, raw length, compressed offset, compressed length,
    Adler-32 of the raw piece)])`` of the old loose object, when its map holds and its
    Adler-32 is the old content's; else None."""
    entry = _load(git, path, blob)
    if entry is None or old is None or blob is None:
        return None
    try:
        pieces = [(int(r), int(c)) for r, c in entry["pieces"]]
        first = int(entry["head"])
        stream = read_bytes(os.path.join(git, "objects", blob[:2], blob[2:]))
    except (OSError, KeyError, TypeError, ValueError):
        return None
    if sum(r for r, _ in pieces) != len(old):
        return None
    if len(stream) != len(_HEAD) + first + sum(c for _, c in pieces) + len(_END) + 4:
        return None
    running = zlib.adler32(b"blob %d\0" % len(old))
    view = memoryview(old)
    out, raw_at, at = [], 0, len(_HEAD) + first
    for raw, packed in pieces:
        check = zlib.adler32(view[raw_at:raw_at + raw])
        running = _combine(running, check, raw)
        out.append((raw_at, raw, at, packed, check))
        raw_at += raw
        at += packed
    if stream[-4:] != struct.pack(">I", running):
        return None
    return stream, out


def compress(git: StrPath, path: str, blob: str, header: bytes, content: bytes,
             old: bytes | None, old_blob: str | None) -> tuple[bytes, dict]:
    """The loose object bytes of ``header + content`` (blob ``blob`` of the store file
    ``path``), reusing the old blob's pieces that ``content`` still holds; and their map,
    for ``remember`` once the object is written."""
    found = _old_pieces(git, path, old_blob, header, old)
    view = memoryview(content)
    parts: list = [_HEAD]
    head = _squeeze(header)
    parts.append(head)
    sizes: list[list[int]] = []
    running = zlib.adler32(header)   # the Adler-32 of the object's bytes so far

    def fresh(start: int, stop: int) -> None:
        nonlocal running
        for at in range(start, stop, PIECE):
            raw = view[at:min(at + PIECE, stop)]
            piece = _squeeze(raw)
            parts.append(piece)
            sizes.append([len(raw), len(piece)])
            running = zlib.adler32(raw, running)

    covered = reused = 0
    if found is not None and old is not None:
        stream, pieces = found
        shift = len(content) - len(old)
        old_view = memoryview(old)
        for raw_at, raw, at, packed, check in pieces:
            same = old_view[raw_at:raw_at + raw]
            for start in (raw_at, raw_at + shift):
                if start >= covered and start + raw <= len(content) and content.startswith(same, start):
                    fresh(covered, start)
                    parts.append(memoryview(stream)[at:at + packed])
                    sizes.append([raw, packed])
                    running = _combine(running, check, raw)
                    covered = start + raw
                    reused += 1
                    break
    fresh(covered, len(content))
    parts.append(_END)
    parts.append(struct.pack(">I", running))
    return b"".join(parts), {"blob": blob, "head": len(head), "pieces": sizes, "reused": reused}


def remember(git: StrPath, path: str, entry: dict | None) -> None:
    """Keep the map of ``path``'s newest loose blob, as ``compress`` made it and it was
    written (None: the blob is not one this module wrote); never fails the commit."""
    target = os.path.join(git, MAP)
    try:
        try:
            known = loads(read_text(target))
            known = known if isinstance(known, dict) else {}
        except (OSError, ValueError):
            known = {}
        if entry is None:
            if known.pop(path, None) is None:
                return
        else:
            known[path] = entry
        from ctx.storage.files import atomic_write
        atomic_write(target, compact(known, ascii=True).encode(), durable=False)  # a cache: lost, a recompression
    except (OSError, StoreError):
        pass
