"""search --semantic: every entry ranked by meaning and by words, the two fused.

Words: each word of the query, stemmed (SQLite FTS5, porter), found in the entries
that hold it, with its BM25 score there. An entry's word score is the share of the
query's information it holds: the IDF of the query words it has over the IDF of all
of them (a word no entry has counts as the rarest), so an entry holding every rare
word of the query scores near 1 and one holding a single common word scores near 0.
BM25 orders entries of equal share.

Meaning: the cosine of the query's vector and the entry's (``vectors``).

Fusion, measured on the evaluation set in ``tests/recall/`` (``bench/recall.py``):
score = cosine + ``WORDS_WEIGHT`` x word share. A plain reciprocal-rank fusion, or
adding BM25 scaled to the best match, let entries that share one common word with a
question asked in other words push the right entry out of the top 5 (found in top 5,
other words: 0.03 and 0.03-0.33 as the weight goes; the share keeps 0.40 over weights
0.1-0.5 while own words stay 1.00). An entry is a match when it shares a word with
the query or the model finds it related (``Embedder.related``): a query in words no
entry has and of a meaning near none finds nothing.
"""

from __future__ import annotations

import math

from ctx import model
from ctx.context import Context
from ctx.fulltext import words
from ctx.results import Filters, Result, result_order

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.meaning.model import Embedder
    from ctx.storage.index import Index

WORDS_WEIGHT = 0.3


def candidates(ctx: Context, filters: Filters) -> tuple[list[str], list[Result]]:
    """The stores searched and the entries passing the filters (in the usual order)."""
    stores = [model.validate_store(filters.store)] if filters.store else list(model.STORES)
    return stores, ctx.query(stores, lambda r: filters.passes(r.store, r.key, r.entry), None, filters.where())


def index_for(ctx: Context, stores: list[str]) -> tuple[Index, int]:
    """The read index, or one in memory when this root keeps none; and how many entries it holds."""
    index = ctx._index(stores)
    if index is not None:
        return index, sum(index.counts(stores).values())
    from ctx.storage.index import Index
    entries = {s: ctx.read(s).entries for s in stores}
    return Index.memory(ctx.root, entries), sum(len(e) for e in entries.values())


def word_scores(ctx: Context, index: Index, stores: list[str], query: list[str],
                total: int) -> dict[tuple[str, str], tuple[float, float]]:
    """(share of the query's IDF, summed BM25) of each entry holding a query word."""
    per_term = index.ranked_words(stores, query)
    if per_term is None:  # the index could not answer: one in memory can
        from ctx.storage.index import Index
        per_term = Index.memory(ctx.root, {s: ctx.read(s).entries for s in stores}).ranked_words(stores, query)
    per_term = per_term or []
    n = max(total, 1)
    idf = [math.log(1 + (n - len(rows) + 0.5) / (len(rows) + 0.5)) for rows in per_term]
    whole = sum(idf) or 1.0
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for weight, rows in zip(idf, per_term, strict=True):
        for store, key, bm25 in rows:
            share, summed = out.get((store, key), (0.0, 0.0))
            out[(store, key)] = (share + weight / whole, summed + bm25)
    return out


def search(ctx: Context, text: str, filters: Filters, limit: int | None,
           embedder: Embedder | None) -> list[tuple[Result, float]]:
    """The entries that match ``text`` by meaning or by words, best first, with their score."""
    if limit is not None and limit <= 0:
        return []
    stores, found = candidates(ctx, filters)
    query = words(text)
    if not found or not query:
        return []
    index, total = index_for(ctx, stores)
    lexical = word_scores(ctx, index, stores, query, total)
    scored: list[tuple[Result, float, float]] = []
    if embedder is None:
        for r in found:
            share, bm25 = lexical.get((r.store, r.key), (0.0, 0.0))
            if share > 0:
                scored.append((r, share, bm25))
    else:
        from ctx.meaning.vectors import matrix
        everything = not any((filters.store, filters.tags, filters.source, filters.status, filters.scope,
                              filters.since, filters.prefix))
        cosines = (matrix(embedder, index, found, everything) @ embedder.embed([text])[0]).tolist()
        for r, cosine in zip(found, cosines, strict=True):
            share, bm25 = lexical.get((r.store, r.key), (0.0, 0.0))
            if share > 0 or cosine >= embedder.related:
                scored.append((r, cosine + WORDS_WEIGHT * share, bm25))
    scored.sort(key=lambda t: (-t[1], -t[2], result_order(t[0])))
    ranked = [(r, round(score, 4)) for r, score, _ in scored]
    return ranked if limit is None else ranked[:limit]
