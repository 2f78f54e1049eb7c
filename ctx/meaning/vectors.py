"""The text the model reads for an entry, and the entries' vectors, kept in the read index.

A vector is keyed by a digest of the model's name and the text it read (the key's
words, the value, the tags, in lower case as the index holds them), so an entry whose
text did not change keeps its vector across rebuilds of the index, and a changed entry
gets a new one the next time a search by meaning needs it; vectors of texts no entry
has any more are dropped then. They are stored as float16 (512 bytes an entry at 256
dimensions), which moves no cosine by more than a thousandth.

A process that searches again (the MCP server) keeps the last matrix while the index
rows it came from stay the same, so a warm search reads no vector.
"""

from __future__ import annotations

import hashlib

from ctx import progress
from ctx.storage.index import SEP

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

    from ctx.meaning.model import Embedder
    from ctx.storage.index import Index

BATCH = 256  # texts embedded at a time (the progress line counts them)

Rows = list[tuple[str, str, str, str, str]]  # Index.texts: store, key, lower-case key and value, tags
_kept: dict[tuple, tuple[tuple, Rows, np.ndarray]] = {}  # (root, model, stores) -> (identity, rows, matrix)


def entry_text(lkey: str, lvalue: str, tags: str) -> str:
    """What the model reads of an entry: its key's words, its value, its tags."""
    words = lkey.replace("_", " ").replace("-", " ")
    return f"{words}: {lvalue} {tags.replace(SEP, ' ')}".strip()


def vector_id(embedder: Embedder, text: str) -> bytes:
    return hashlib.blake2b(f"{embedder.name}\0{text}".encode(), digest_size=16).digest()


def texts_and_matrix(embedder: Embedder, index: Index, stores: list[str], persistent: bool) -> tuple[Rows, np.ndarray]:
    """Every entry of ``stores`` (``Index.texts``) and its unit vector (a row each), computing
    and keeping the vectors missing. ``persistent``: the index is the one on disk."""
    import numpy as np
    place = (str(index.root), embedder.name, tuple(stores))
    identity = index.identity(stores) if persistent else None
    kept = _kept.get(place)
    if identity is not None and kept is not None and kept[0] == identity:
        return kept[1], kept[2]
    rows = index.texts(stores)
    texts = [entry_text(lkey, lvalue, tags) for _, _, lkey, lvalue, tags in rows]
    ids = [vector_id(embedder, text) for text in texts]
    stored = index.vectors()
    missing = [i for i, vid in enumerate(ids) if vid not in stored]
    if missing:
        new: list[tuple[bytes, bytes]] = []
        for start in range(0, len(missing), BATCH):
            progress.count(start, len(missing), "entries read for meaning")
            chunk = missing[start:start + BATCH]
            vecs = embedder.embed([texts[i] for i in chunk]).astype(np.float16)
            for i, vec in zip(chunk, vecs, strict=True):
                stored[ids[i]] = vec.tobytes()
                new.append((ids[i], stored[ids[i]]))
        everything = set(stores) >= {"operator", "shared", "agent"}
        index.keep_vectors(new, set(ids) if everything else None)
    if not rows:
        return rows, np.zeros((0, embedder.dim), dtype=np.float32)
    flat = np.frombuffer(b"".join(stored[vid] for vid in ids), dtype=np.float16)
    result = flat.reshape(len(ids), embedder.dim).astype(np.float32)
    if identity is not None:
        _kept.clear()  # one context's matrix at a time: a server serves one root
        _kept[place] = (identity, rows, result)
    return rows, result
