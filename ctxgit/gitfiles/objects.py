"""git's loose objects, written and read as plain files: the one codec.

An object is ``KIND SIZE\\0BODY``, named by the SHA-1 of those bytes and stored
zlib-compressed in ``.git/objects/XX/YYYY...``. The fast commit writes blobs,
trees and commits this way; "since your last session" reads loose commits back.
Anything packed is pygit2's to read.
"""

from __future__ import annotations

import os
import zlib

from ctx.storage.files import make_dir, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

LEVEL = 1  # zlib level of a written object: packing recompresses it later


def encode(kind: bytes, body: bytes) -> tuple[str, tuple[bytes, bytes]]:
    """The object's id, and its header and body (never joined: a store's blob is megabytes)."""
    import hashlib  # here, not above: "since your last session" reads objects on every start, and
    #                 no read loads hashlib's OpenSSL (only writes name objects)
    header = kind + b" %d\0" % len(body)
    digest = hashlib.sha1(header)
    digest.update(body)
    return digest.hexdigest(), (header, body)


def blob_id(content: bytes) -> str:
    """The git blob id of ``content``."""
    return encode(b"blob", content)[0]


def write(git: StrPath, sha: str, data: tuple[bytes, bytes], packed: bytes | None = None) -> int:
    """A loose object from ``encode``'s header and body (``packed``: its bytes, compressed
    already); its size on disk (0 when it existed already)."""
    folder = os.path.join(git, "objects", sha[:2])
    path = os.path.join(folder, sha[2:])
    if os.path.exists(path):
        return 0
    if packed is None:
        squeeze = zlib.compressobj(LEVEL)
        packed = b"".join([squeeze.compress(data[0]), squeeze.compress(data[1]), squeeze.flush()])
    tmp = os.path.join(folder, f"tmp_obj_{os.getpid()}_{os.urandom(4).hex()}")
    for attempt in range(20):
        # a background `git gc` removes object directories it has emptied: make it again
        make_dir(folder)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            break
        except FileNotFoundError:
            if attempt == 19:
                raise
    try:
        os.write(fd, packed)
    finally:
        os.close(fd)
    os.replace(tmp, path)  # the directory holds our file now: gc leaves it be
    return len(packed)


def read(git: StrPath, sha: str) -> tuple[bytes, bytes] | None:
    """(kind, body) of a loose object; None when it is not loose (packed, or missing) or
    does not decode."""
    try:
        data = zlib.decompress(read_bytes(os.path.join(git, "objects", sha[:2], sha[2:])))
    except (OSError, zlib.error, ValueError):
        return None
    header, _, body = data.partition(b"\0")
    kind, _, size = header.partition(b" ")
    if not size.isdigit() or int(size) != len(body):
        return None
    return kind, body


def tree_bytes(entries: list[list[str]]) -> bytes:
    """A tree's body from ``[mode, name, sha]`` entries, in git's order (a folder sorts
    as if its name ended in ``/``)."""
    def order(item: list[str]) -> bytes:
        return item[1].encode() + (b"/" if item[0] == "40000" else b"")
    return b"".join(b"%s %s\0%s" % (mode.encode(), name.encode(), bytes.fromhex(sha))
                    for mode, name, sha in sorted(entries, key=order))


def commit_fields(body: bytes) -> tuple[list[str], str, int, str] | None:
    """(parents, author name, author time, message) of a commit's body; None when it has
    no author line git would accept."""
    try:
        head, _, message = body.partition(b"\n\n")
        parents: list[str] = []
        author = None
        for line in head.split(b"\n"):
            if line.startswith(b"parent "):
                parents.append(line[7:].decode("ascii"))
            elif line.startswith(b"author "):
                person = line[7:].decode("utf-8", "replace")
                name, _, rest = person.partition("<")
                author = (name.strip(), int(rest.rsplit(">", 1)[1].split()[0]))
    except (ValueError, IndexError):
        return None
    if author is None:
        return None
    return parents, author[0], author[1], message.decode("utf-8", "replace")
