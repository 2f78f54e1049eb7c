"""The evaluation set keeps its own rules: each question is of the kind it says it is."""

from __future__ import annotations

import re

import pytest

from recall import evalset, heldout

SETS = pytest.mark.parametrize("recall_set", [evalset, heldout], ids=["tuning", "held-out"])

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


def answer_stems(recall_set, key: str) -> set[str]:
    value = dict(recall_set.ENTRIES)[key]
    return stems(key) | stems(value) | stems(" ".join(recall_set.tags_of(key)))


@SETS
def test_the_set_is_big_enough_and_every_answer_exists(recall_set):
    entries, questions = recall_set.ENTRIES, recall_set.QUESTIONS
    assert len(entries) >= (200 if recall_set is evalset else 80) and len({k for k, _ in entries}) == len(entries)
    assert len(questions) >= (60 if recall_set is evalset else 50)
    keys = {k for k, _ in entries}
    for kind, question, answers in questions:
        assert kind in recall_set.KINDS and answers and set(answers) <= keys, question
    assert sum(len(s) for s in recall_set.entries_by_store().values()) == len(entries)


def test_the_held_out_set_shares_no_entry_or_question_with_the_tuning_set():
    assert not {k for k, _ in evalset.ENTRIES} & {k for k, _ in heldout.ENTRIES}
    assert not {q for _, q, _ in evalset.QUESTIONS} & {q for _, q, _ in heldout.QUESTIONS}


@SETS
def test_each_question_is_of_its_kind(recall_set):
    wrong = []
    for kind, question, answers in recall_set.QUESTIONS:
        asked = stems(question)
        shared = [asked & answer_stems(recall_set, a) for a in answers]
        if kind == "other" and any(shared):
            wrong.append((question, shared))
        if kind == "own" and not all(asked <= answer_stems(recall_set, a) for a in answers):
            wrong.append((question, "not every word is the entry's"))
        if kind == "mixed" and not all(s and s != asked for s in shared):
            wrong.append((question, shared))
    assert wrong == []
