"""search --semantic: every entry ranked by meaning and by words, the two fused.

Words: any word of the query, stemmed (SQLite FTS5, porter). An entry's word score is
the share of the query's IDF it holds (``Index.ranked_words``): an entry holding every
rare word of the query scores near 1 and one holding a single common word near 0,
whatever the query's length (a word no entry has counts as the rarest); FTS5's BM25
orders entries of equal share.

Meaning: the cosine of the query's vector and the entry's (``vectors``).

Fusion: score = cosine + ``WORDS_WEIGHT`` x word score. Chosen for all-MiniLM-L6-v2 on
the tuning set (``tests/recall/evalset.py``) alone, then measured once on the held-out set
(``tests/recall/heldout.py``), which no weight or gate was chosen on; ``bench/recall.py``
prints both and the fusions tried. On the tuning set, questions in other words found in
the top 5 go 0.83 / 0.83 / 0.80 / 0.77 / 0.70 over weights 0.05 / 0.1 / 0.2 / 0.4 / 0.5
(own words 0.95 at 0.05, else 1.00; mixed 1.00): with a real sentence model a word
shared by chance pulls the wrong entry up more often than it helps, so the weight is
small, yet above nothing: words still decide between entries the model finds alike
(own words 0.95 without them). At 0.1 every kind is at its best on the tuning set.

An entry is a match when it shares a word with the query or is near it by meaning
(``Embedder.near``); a query that shares no word with any entry and is related to none
(``Embedder.related``) finds nothing. For MiniLM (``model.py``): nonsense queries come within
0.12-0.25 of their nearest entry on the tuning set, questions in other words from
0.17 and their answers from 0.15; ``related`` 0.30 sits above the nonsense, and
``near`` 0.15 lists the answers whose cosine is low (0.83 of the other-words questions found
against 0.73 at 0.20).
"""

from __future__ import annotations

import heapq

from ctx import model, progress
from ctx.context import Context
from ctx.fulltext import words
from ctx.results import Filters, Result

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.meaning.model import Embedder
    from ctx.storage.index import Index

WORDS_WEIGHT = 0.1
TIE = 1e-4  # BM25's part of a word score: it orders entries of equal share


def index_for(ctx: Context, stores: list[str]) -> tuple[Index, bool]:
    """The read index (True), or one in memory when this root keeps none (False)."""
    index = ctx.fresh_index(stores)
    if index is not None:
        return index, True
    from ctx.storage.index import Index
    return Index.memory(ctx.root, {s: ctx.read(s).entries for s in stores}), False


def word_scores(ctx: Context, index: Index, stores: list[str], query: list[str]) -> dict[tuple[str, str], float]:
    """Each entry holding a query word: the share of the query's IDF it holds (``Index.ranked_words``),
    plus its BM25 scaled below the smallest step of a share (so BM25 only breaks ties)."""
    ranked = index.ranked_words(stores, query)
    if ranked is None:  # the index could not answer: one in memory can
        from ctx.storage.index import Index
        ranked = Index.memory(ctx.root, {s: ctx.read(s).entries for s in stores}).ranked_words(stores, query)
    return {(store, key): share + TIE * bm25 / (1 + bm25) for store, key, share, bm25 in ranked or []}


_positions: list[tuple[list, dict[tuple[str, str], int]]] = []


def positions(rows: list) -> dict[tuple[str, str], int]:
    """Each entry's row (the last rows' map is kept: a warm search reuses it)."""
    if _positions and _positions[0][0] is rows:
        return _positions[0][1]
    where = {(store, key): i for i, (store, key, *_) in enumerate(rows)}
    _positions[:] = [(rows, where)]
    return where


def filtered(filters: Filters) -> bool:
    return any((filters.tags, filters.source, filters.status, filters.scope, filters.since, filters.prefix))


def search(ctx: Context, text: str, filters: Filters, limit: int | None,
           embedder: Embedder | None) -> list[tuple[Result, float]]:
    """The entries that match ``text`` by meaning or by words, best first, with their score."""
    query = words(text)
    if (limit is not None and limit <= 0) or not query:
        return []
    stores = [model.validate_store(filters.store)] if filters.store else list(model.STORES)
    index, persistent = index_for(ctx, stores)
    rows: list
    if embedder is not None:
        from ctx.meaning.vectors import texts_and_matrix
        rows, vectors = texts_and_matrix(embedder, index, stores, persistent)
    else:
        rows = index.texts(stores)
    passing = None
    if filtered(filters):  # the filters decide on the entries themselves
        passing = {(r.store, r.key) for r in ctx.query(
            stores, lambda r: filters.passes(r.store, r.key, r.entry), None, filters.where())}
    progress.step("ranking by words")
    lexical = word_scores(ctx, index, stores, query)
    # (score, word score, -position): ties go by the usual order (rows come in it)
    scored: list[tuple[float, float, int]] = []
    if embedder is None:
        for position, (store, key, *_) in enumerate(rows):
            share = lexical.get((store, key), 0.0)
            if share > 0 and (passing is None or (store, key) in passing):
                scored.append((share, share, -position))
    elif rows:
        import numpy as np
        shares = np.zeros(len(rows), dtype=np.float32)
        where = positions(rows)
        for found, share in lexical.items():
            if found in where:
                shares[where[found]] = share
        cosines = vectors @ embedder.embed([text.lower()])[0]
        # nothing matches a query that shares no word with any entry and is related to none
        floor = embedder.near if lexical or float(cosines.max()) >= embedder.related else 2.0
        scores = cosines + WORDS_WEIGHT * shares
        chosen = np.flatnonzero((shares > 0) | (cosines >= floor))
        if passing is not None:
            chosen = np.array([i for i in chosen.tolist() if (rows[i][0], rows[i][1]) in passing], dtype=np.int64)
        if limit is not None and len(chosen) > limit * 4:  # the few that can be the best
            chosen = chosen[np.argpartition(-scores[chosen], limit * 4)[:limit * 4]]
        scored = [(float(scores[i]), float(shares[i]), -i) for i in chosen.tolist()]
    best = heapq.nlargest(limit, scored) if limit is not None else sorted(scored, reverse=True)
    out = []
    for score, _, position in best:
        store, key = rows[-position][0], rows[-position][1]
        entry = index.get(store, key)
        if entry is not None:
            out.append((Result(store, key, entry), round(score, 4)))
    return out
