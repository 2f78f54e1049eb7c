"""The guard reads the commits it checks as git's walk finds them (``incoming._received``).

A line of single-parent commits down to this side's head is followed parent by parent
(a fast-forward's, most often); any other history is git's walk. Differential,
property-based: random histories (lines, forks, merges, a second root, lines longer than
``incoming.LINE``), a random tip and a random ``known`` (an ancestor, a descendant, a
commit on another branch, none): the commits received, parents first, and whether the
tip descends from ``known``, are git's (``Walker`` with ``known`` hidden, in topological
order, and ``descendant_of``).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxgit.sync import incoming

SIGNATURE = pygit2.Signature("Test Operator", "operator@example.invalid", 1767225600, 0)


def grow(repo: pygit2.Repository, plan: list[tuple[int, int, int]], line: int = 0) -> list[pygit2.Oid]:
    """Commits made by ``plan``: each (kind, a, b) adds a root (kind 0), a child of an earlier
    commit (1), a merge of two (2), or three children in a row (3); then ``line`` children
    in a row from the commit before the last."""
    tree = repo.TreeBuilder().write()
    made: list[pygit2.Oid] = []

    def commit(parents: list[pygit2.Oid]) -> None:
        made.append(repo.create_commit(None, SIGNATURE, SIGNATURE, f"c{len(made)}", tree, parents))
    commit([])
    for kind, a, b in plan:
        if kind == 0:
            commit([])
        elif kind == 2 and len(made) > 1 and a % len(made) != b % len(made):
            commit([made[a % len(made)], made[b % len(made)]])
        elif kind == 3:
            for _ in range(3):
                commit([made[a % len(made)] if _ == 0 else made[-1]])
        else:
            commit([made[a % len(made)]])
    for _ in range(line):
        commit([made[max(0, len(made) - 2)] if _ == 0 else made[-1]])
    return made


def gits(repo: pygit2.Repository, tip: pygit2.Oid, known: pygit2.Oid | None) -> tuple[list[pygit2.Oid], bool]:
    walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
    if known is not None:
        walker.hide(known)
    return [commit.id for commit in walker], known is not None and repo.descendant_of(tip, known)


@pytest.fixture(scope="module")
def repo() -> Iterator[pygit2.Repository]:
    """One repository for every example: commits are named by what they hold, so a history
    made again is the same commits, and one made beside it changes no walk of it."""
    with tempfile.TemporaryDirectory(prefix="ctx-guard-walk-") as tmp:
        yield pygit2.init_repository(tmp, bare=True)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=st.lists(st.tuples(st.sampled_from([0, 1, 1, 1, 2, 3]), st.integers(0, 99), st.integers(0, 99)),
                     max_size=12),
       tip=st.integers(0, 9999), known=st.one_of(st.none(), st.integers(0, 9999)),
       long_line=st.sampled_from([False] * 9 + [True]))
def test_the_commits_received_are_the_ones_gits_walk_finds(repo, plan, tip, known, long_line):
    made = grow(repo, plan, incoming.LINE + 2 if long_line else 0)
    tip_id = made[tip % len(made)]
    known_id = None if known is None else made[known % len(made)]
    commits, descends = incoming._received(repo, tip_id, known_id)
    assert ([commit.id for commit in commits], descends) == gits(repo, tip_id, known_id)


def test_a_line_down_to_the_head_is_read_without_gits_walk(repo, monkeypatch):
    made = grow(repo, [], 30)
    walked: list[object] = []
    monkeypatch.setattr(pygit2.Repository, "walk", lambda self, *args: walked.append(args))
    commits, descends = incoming._received(repo, made[-1], made[0])
    assert [commit.id for commit in commits] == made[1:] and descends and not walked
