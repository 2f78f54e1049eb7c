"""Two values compared word by word, for the history of an entry on the operator's view.

``word_diff(old, new)`` gives segments: ``("=", text)`` kept, ``("-", text)``
removed, ``("+", text)`` added, ``("~", text)`` a long kept stretch left out
(its text says how many words). Words are runs of non-space characters,
compared without the spaces around them; a kept stretch is shown as the new
text spells it. When the two values share little (less than a third of
their words), the old is shown removed and the new added, whole: easier to
read than a mosaic; that is first estimated from the pairs of neighbouring
words the two share (cheap, and near zero for unrelated texts), so unrelated
values are never aligned. Very long values are not compared (``LIMIT``).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher

_TOKEN = re.compile(r"\S+\s*|\s+")  # a word with the spaces after it (spaces alone only at the start)
CONTEXT = 6          # words kept on each side of a change
LIMIT = 3000         # past this many tokens on both sides together: removed and added whole
SHARED = 1 / 3       # below this share of common words: removed and added whole


def _words(tokens: list[str]) -> int:
    return sum(1 for t in tokens if not t.isspace())


def _keep(tokens: list[str], first: bool, last: bool) -> list[tuple[str, str]]:
    """A kept stretch: whole when short, else its ends around a ``~`` segment."""
    words = _words(tokens)
    head = 0 if first else CONTEXT
    tail = 0 if last else CONTEXT
    if words <= head + tail + 2:
        return [("=", "".join(tokens))]
    out: list[tuple[str, str]] = []
    start, seen = 0, 0
    while head and start < len(tokens) and seen < head:  # the first ``head`` words
        seen += not tokens[start].isspace()
        start += 1
    end, seen = len(tokens), 0
    while tail and end > start and seen < tail:
        end -= 1
        seen += not tokens[end].isspace()
    if start:
        out.append(("=", "".join(tokens[:start])))
    out.append(("~", f" … {_words(tokens[start:end])} words … "))
    if end < len(tokens):
        out.append(("=", "".join(tokens[end:])))
    return out


def _related(old: str, new: str) -> bool:
    """Whether the texts share at least ``SHARED`` of their pairs of neighbouring words."""
    words_a, words_b = old.split(), new.split()
    pairs_a = set(zip(words_a, words_a[1:], strict=False))
    pairs_b = set(zip(words_b, words_b[1:], strict=False))
    if not pairs_a or not pairs_b:
        return bool(set(words_a) & set(words_b))
    return len(pairs_a & pairs_b) >= SHARED * max(len(pairs_a), len(pairs_b))


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``old`` -> ``new`` as kept, removed and added segments (see the module's doc)."""
    if old == new:
        return _keep(_TOKEN.findall(old), True, True) if old else []
    whole = [s for s in (("-", old), ("+", new)) if s[1]]
    if len(old) + len(new) > LIMIT * 8 or not _related(old, new):
        return whole
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if len(a) + len(b) > LIMIT:
        return whole
    # words are matched without the spaces after them (the last word has none); what is
    # kept is shown as the new text has it
    matcher = SequenceMatcher(None, [t.strip() or t for t in a], [t.strip() or t for t in b], autojunk=False)
    codes = matcher.get_opcodes()
    common = sum(_words(a[i1:i2]) for tag, i1, i2, _, _ in codes if tag == "equal")
    if common < SHARED * max(_words(a), _words(b), 1):
        return whole
    out: list[tuple[str, str]] = []
    for n, (tag, i1, i2, j1, j2) in enumerate(codes):
        if tag == "equal":
            out += _keep(b[j1:j2], n == 0, n == len(codes) - 1)
            continue
        if i2 > i1:
            out.append(("-", "".join(a[i1:i2])))
        if j2 > j1:
            out.append(("+", "".join(b[j1:j2])))
    return out
