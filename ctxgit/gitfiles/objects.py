"""git's loose objects read as plain files (ctx never writes one: git does).

An object is ``KIND SIZE\\0BODY``, named by the SHA-1 of those bytes and stored
zlib-compressed in ``.git/objects/XX/YYYY...``. "Since your last session" reads
loose commits back without loading libgit2. Anything packed is pygit2's to read.
"""

from __future__ import annotations

import os
import zlib

from ctx.storage.files import read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

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
