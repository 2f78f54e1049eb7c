"""Recall at a failing command on the failure set's held-out half (tests/recall/failureset.py),
with the gates ctx ships (picked on the tuning half by bench/recallhook.py): a fix found for
at least 0.8 of the failures that have one, anything given for at most 0.1 of those that have
none (issue 37). Words alone, and with the model when it is installed."""

from __future__ import annotations

import subprocess

import pytest

from ctx.context import Context
from ctx.failure_recall import Failure, recall
from ctxgit.gitfiles.layout import state_dir
from recall import failureset
from recall.evalset import entries_by_store
from support.stores import write_store_file


@pytest.fixture
def failure_root(root):
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    stores = entries_by_store()
    stores["shared"].update(failureset.fix_entries())
    for store, entries in stores.items():
        write_store_file(root, store, entries)
    return root


def shares(ctx: Context, embedder) -> tuple[float, float]:
    fixed: list[bool] = []
    answered: list[bool] = []
    for command, error, key in failureset.HELD_OUT:
        given = [r.key for r, _ in recall(ctx, Failure(command, error), embedder)]
        (fixed if key else answered).append(key in given if key else bool(given))
    return sum(fixed) / len(fixed), sum(answered) / len(answered)


def test_the_sets_halves_are_apart_and_each_fix_is_stored():
    tuning = {(c, e) for c, e, _ in failureset.TUNING}
    assert not tuning & {(c, e) for c, e, _ in failureset.HELD_OUT}
    assert {k for *_, k in failureset.HELD_OUT if k} == set(failureset.FIXES)
    assert sum(1 for *_, k in failureset.HELD_OUT if not k) == 10


def test_held_out_by_words_alone(failure_root):
    found, wrong = shares(Context(root=failure_root, state_of=state_dir), None)
    assert found >= 0.8 and wrong <= 0.1, (found, wrong)


def test_held_out_with_the_model(failure_root, embedder):
    ctx = Context(root=failure_root, state_of=state_dir)
    from ctx.failure_recall import GATES, scored
    from ctx.meaning.rank import search
    from ctx.results import Filters
    search(ctx, "vectors", Filters(), 1, embedder)  # the vectors kept, as a search by meaning makes them
    # the model's own gate decides, not words alone (a model GATES lacks would fall back to them)
    assert scored(ctx, Failure("terraform plan", "Error acquiring the state lock"), embedder)[1] == GATES[embedder.name]
    found, wrong = shares(ctx, embedder)
    assert found >= 0.8 and wrong <= 0.1, (found, wrong)


def test_without_kept_vectors_words_decide_and_nothing_is_made(failure_root, embedder, monkeypatch):
    monkeypatch.setattr("ctx.failure_recall.STALE_LIMIT", 10)  # the set is 221 entries: "a big context"
    ctx = Context(root=failure_root, state_of=state_dir)
    made = []
    monkeypatch.setattr(embedder, "embed", lambda texts: made.append(texts) or pytest.fail("embedded"))
    given = recall(ctx, Failure("terraform plan", "Error: Error acquiring the state lock"), embedder)
    assert [r.key for r, _ in given][0] == "fix_terraform_state_lock" and not made


def test_vectors_a_few_writes_behind_still_count_as_ready(failure_root, embedder, monkeypatch):
    from ctx.failure_recall import _vectors_ready
    from ctx.meaning.rank import search
    from ctx.results import Filters
    ctx = Context(root=failure_root, state_of=state_dir)
    search(ctx, "vectors", Filters(), 1, embedder)
    write_store_file(failure_root, "shared", {"fix_new_one": {**failureset.fix_entries()["fix_cuda_oom_batch"],
                                                              "value": "a new entry the vectors lack"}})
    ctx = Context(root=failure_root, state_of=state_dir)
    assert _vectors_ready(ctx, embedder)  # one entry for the model to read: within the bound
    monkeypatch.setattr("ctx.failure_recall.STALE_LIMIT", 0)
    assert not _vectors_ready(ctx, embedder)
