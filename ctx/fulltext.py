"""Full-text search (§10, optional): every query word must match; ranked by how often.

Words are runs of letters and digits, compared in lower case (``decision_db_pool``
is the words decision, db, pool). An entry matches when every query word is
one of its words (key or value); its score is how many times the query words
occur in it, and results come best first, then in the usual order (newest
timestamp, store, key). With the index, SQLite FTS5 in the state folder finds the
candidates and is brought up to date from the entry rows whenever a store
changed; the Python check below decides, so both ways give the same answer.
"""

from __future__ import annotations

import re
from collections import Counter

from ctx import model
from ctx.context import Context
from ctx.results import Filters, Result, result_order

_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def score(result: Result, query: list[str]) -> int:
    """How often the query words occur in the entry; 0 when one of them is missing."""
    counts = Counter(words(result.key) + words(model.value_text(result.entry.get("value"))))
    if any(counts[w] == 0 for w in query):
        return 0
    return sum(counts[w] for w in set(query))


def search(ctx: Context, text: str, filters: Filters, limit: int | None) -> list[tuple[Result, int]]:
    query = words(text)
    if not query:
        return []
    stores = [filters.store] if filters.store else list(model.STORES)
    candidates = None
    index = ctx.fresh_index(stores)
    if index is not None:
        keys = index.fulltext(stores, query)
        if keys is not None:
            candidates = [Result(s, k, e) for s, k in keys if (e := index.get(s, k)) is not None]
    if candidates is None:
        candidates = [Result(s, k, e) for s in stores for k, e in ctx.read(s).entries.items()]
    scored = [(r, n) for r in candidates if filters.passes(r.store, r.key, r.entry) and (n := score(r, query))]
    scored.sort(key=lambda pair: (-pair[1], result_order(pair[0])))
    return scored if limit is None else scored[:limit]
