"""The text the model reads for an entry, and the entries' vectors, kept in the read index.

Each store's vectors are kept as one set in the read index (``Index.vector_set``): its
keys, a digest of each entry's text (the key's words, the value, the tags, in lower
case as the index holds them, and the model's name) and the vectors, made for the
store file the index rows came from. While that file is unchanged, a search reads the
set as it is (one row: no entry's text is read). When it changed, the set is made
again, and an entry whose text is unchanged keeps its vector (found by its digest):
only new and changed entries are read by the model. Vectors are stored as float16
(768 bytes an entry at 384 dimensions), which moves no cosine by more than a thousandth.

A first build of a big context counts on the progress line with an estimate of the time
left; interrupted (Ctrl-C), or once a minute, it keeps the vectors made so far under an
identity no store file has, so the next search makes only the rest.

A process that searches again (the MCP server) keeps the last matrix while the index
rows it came from stay the same, so a warm search reads no vector at all.
"""

from __future__ import annotations

import hashlib
import marshal
import time

from ctx import progress
from ctx.storage.index import MARSHAL_VERSION, SEP

TYPE_CHECKING = False
if TYPE_CHECKING:
    import numpy as np

    from ctx.meaning.model import Embedder
    from ctx.storage.index import Index

BATCH = 256  # texts embedded at a time (the progress line counts them)
DIGEST = 16  # bytes of a text's digest
UNMADE = bytes(DIGEST)  # the digest kept for an entry whose vector is not made yet (no text's)
KEEP_EVERY = 60.0  # seconds of a long first build between keeping what it made

Keys = list[tuple[str, str]]
_pace = [0.0, 0]  # seconds spent embedding, and texts embedded, in this process (the estimate's rate)
_kept: dict[tuple, tuple[tuple, Keys, np.ndarray]] = {}  # (root, model, stores) -> (identity, keys, matrix)


def entry_text(lkey: str, lvalue: str, tags: str) -> str:
    """What the model reads of an entry: its key's words, its value, its tags."""
    words = lkey.replace("_", " ").replace("-", " ")
    return f"{words}: {lvalue} {tags.replace(SEP, ' ')}".strip()


def digest(embedder: Embedder, text: str) -> bytes:
    return hashlib.blake2b(f"{embedder.name}\0{text}".encode(), digest_size=DIGEST).digest()


def texts_and_matrix(embedder: Embedder, index: Index, stores: list[str], persistent: bool) -> tuple[Keys, np.ndarray]:
    """The (store, key) of every entry of ``stores`` and its unit vector (a row each), making
    and keeping the sets that are out of date. ``persistent``: the index is the one on disk."""
    import numpy as np
    place = (str(index.root), embedder.name, tuple(stores))
    identity = tuple(index.store_identity(s) for s in stores) if persistent else None
    kept = _kept.get(place)
    if identity is not None and kept is not None and kept[0] == identity:
        return kept[1], kept[2]
    keys: Keys = []
    parts = []
    for store in stores:
        store_keys, vecs = _store_set(embedder, index, store, persistent)
        keys += [(store, key) for key in store_keys]
        parts.append(vecs)
    matrix = np.concatenate(parts).astype(np.float32) if parts else np.zeros((0, embedder.dim), np.float32)
    if identity is not None:
        _kept.clear()  # one context's matrix at a time: a server serves one root
        _kept[place] = (identity, keys, matrix)
    return keys, matrix


def _store_set(embedder: Embedder, index: Index, store: str, persistent: bool) -> tuple[list[str], np.ndarray]:
    """One store's keys and float16 vectors: as kept when still true, else made again."""
    import numpy as np
    identity = index.store_identity(store)
    kept = index.vector_set(store, embedder.name) if persistent else None
    if kept is not None and identity is not None and kept[0] == identity:
        keys = marshal.loads(kept[1])
        return keys, np.frombuffer(kept[3], dtype=np.float16).reshape(len(keys), embedder.dim)
    rows = index.texts([store])
    keys = [key for _, key, *_ in rows]
    texts = [entry_text(lkey, lvalue, tags) for _, _, lkey, lvalue, tags in rows]
    ids = [digest(embedder, text) for text in texts]
    known: dict[bytes, int] = {}
    old = None
    if kept is not None:
        old = np.frombuffer(kept[3], dtype=np.float16).reshape(-1, embedder.dim)
        known = {kept[2][i:i + DIGEST]: n for n, i in enumerate(range(0, len(kept[2]), DIGEST))}
    vecs = np.zeros((len(rows), embedder.dim), dtype=np.float16)
    missing = []
    for i, vid in enumerate(ids):
        if old is not None and vid in known:
            vecs[i] = old[known[vid]]
        else:
            missing.append(i)

    def keep(complete: bool) -> None:
        if persistent and identity is not None:
            kept_ids = ids if complete else [vid if i not in pending else UNMADE for i, vid in enumerate(ids)]
            index.keep_vector_set(store, embedder.name, identity if complete else unfinished(identity),
                                  marshal.dumps(keys, MARSHAL_VERSION), b"".join(kept_ids), vecs.tobytes())
    pending = set(missing)
    last_kept = time.monotonic()
    try:
        for start in range(0, len(missing), BATCH):
            left = _pace[0] / _pace[1] * (len(missing) - start) if _pace[1] else None
            progress.count(start, len(missing), f"entries of {store} read for meaning", left)
            chunk = missing[start:start + BATCH]
            began = time.monotonic()
            vecs[chunk] = embedder.embed([texts[i] for i in chunk]).astype(np.float16)
            _pace[0] += time.monotonic() - began
            _pace[1] += len(chunk)
            pending.difference_update(chunk)
            if time.monotonic() - last_kept > KEEP_EVERY and pending:
                keep(complete=False)
                last_kept = time.monotonic()
    except KeyboardInterrupt:  # Ctrl-C: what was made is kept, the next search makes the rest
        keep(complete=False)
        raise
    keep(complete=True)
    return keys, vecs


def unfinished(identity: tuple) -> tuple:
    """The identity a set not yet complete is kept under: never a store file's, so the set is
    made again (keeping the vectors it has) before it is read as it is."""
    return (*identity[:2], -1)
