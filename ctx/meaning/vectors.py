"""The text the model reads for an entry, and the entries' vectors, kept in the read index.

A vector is keyed by a digest of the model's name and the text it read (the key's
words, the value, the tags), so an entry whose text did not change keeps its vector
across rebuilds of the index, and a changed entry gets a new one the next time a
search by meaning needs it. Vectors are stored as float16 (256 of them: 512 bytes an
entry), which changes no ranking the model makes.
"""

from __future__ import annotations

import hashlib

from ctx import model, progress
from ctx.results import Result

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

    from ctx.meaning.model import Embedder
    from ctx.storage.index import Index

BATCH = 256  # texts embedded at a time (the progress line counts them)


def entry_text(result: Result) -> str:
    """What the model reads: the key's words, the value, the tags."""
    tags = result.entry.get("tags")
    tag_text = " ".join(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else ""
    words = result.key.replace("_", " ").replace("-", " ")
    return f"{words}: {model.value_text(result.entry.get('value'))} {tag_text}".strip()


def vector_id(embedder: Embedder, text: str) -> bytes:
    return hashlib.blake2b(f"{embedder.name}\0{text}".encode(), digest_size=16).digest()


def matrix(embedder: Embedder, index: Index, results: list[Result], everything: bool) -> np.ndarray:
    """The unit vectors of ``results`` (a row each), computing and keeping those missing.

    ``everything``: ``results`` are all the entries there are, so vectors of texts no
    entry has any more are dropped while new ones are kept.
    """
    import numpy as np
    ids = [vector_id(embedder, entry_text(r)) for r in results]
    stored = index.vectors(list(dict.fromkeys(ids)))
    missing = [i for i, vid in enumerate(ids) if vid not in stored]
    if missing:
        new: list[tuple[bytes, bytes]] = []
        for start in range(0, len(missing), BATCH):
            progress.count(start, len(missing), "entries read for meaning")
            rows = missing[start:start + BATCH]
            vecs = embedder.embed([entry_text(results[i]) for i in rows]).astype(np.float16)
            for i, vec in zip(rows, vecs, strict=True):
                stored[ids[i]] = vec.tobytes()
                new.append((ids[i], stored[ids[i]]))
        index.keep_vectors(new, set(ids) if everything else None)
    if not results:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    flat = np.frombuffer(b"".join(stored[vid] for vid in ids), dtype=np.float16)
    return flat.reshape(len(ids), embedder.dim).astype(np.float32)
