"""The evaluation set keeps its own rules: each question is of the kind it says it is."""

from __future__ import annotations

import re

from recall.evalset import ENTRIES, KINDS, QUESTIONS, entries_by_store, tags_of

STOP = set("a an and are as at be by do does for from get gets how i in is it its of on or our the their "
           "them there this to was we were what when where which who why with".split())


def stems(text: str) -> set[str]:
    """Words of ``text`` past stop words, with common endings cut (a rough stemmer)."""
    out = set()
    for word in re.findall(r"[^\W_]+", text.lower()):
        if word in STOP:
            continue
        for end in ("ing", "ed", "es", "s", "ly"):
            if len(word) > len(end) + 3 and word.endswith(end):
                word = word[: -len(end)]
                break
        out.add(word)
    return out


def answer_stems(key: str) -> set[str]:
    value = dict(ENTRIES)[key]
    return stems(key) | stems(value) | stems(" ".join(tags_of(key)))


def test_the_set_is_big_enough_and_every_answer_exists():
    assert len(ENTRIES) >= 200 and len({k for k, _ in ENTRIES}) == len(ENTRIES)
    assert len(QUESTIONS) >= 60
    keys = {k for k, _ in ENTRIES}
    for kind, question, answers in QUESTIONS:
        assert kind in KINDS and answers and set(answers) <= keys, question
    assert sum(len(s) for s in entries_by_store().values()) == len(ENTRIES)


def test_each_question_is_of_its_kind():
    wrong = []
    for kind, question, answers in QUESTIONS:
        asked = stems(question)
        shared = [asked & answer_stems(a) for a in answers]
        if kind == "other" and any(shared):
            wrong.append((question, shared))
        if kind == "own" and not all(asked <= answer_stems(a) for a in answers):
            wrong.append((question, "not every word is the entry's"))
        if kind == "mixed" and not all(s and s != asked for s in shared):
            wrong.append((question, shared))
    assert wrong == []
