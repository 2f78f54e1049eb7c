"""The announcements count deletions from what the guard learned, and count them right.

``incoming.check`` hands on the entry keys of the store blobs it proved or parsed
(``Received.keys``); ``arrived.what_arrived`` counts a pull's deletions from them instead
of reading and parsing a big store file again. Differential, property-based: random
stores, random edits (entries removed, added, changed), the arriving file in ctx's layout
or another (read whole), the base proved by an earlier sync or not, in ctx's layout or
another: what is announced with the guard's keys equals what is announced without them.
"""

from __future__ import annotations

import json
import tempfile

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx.storage.textlayout import serialize
from ctxgit.sync import arrived, incoming

PATH = "memory/shared.json"
SIGNATURE = pygit2.Signature("Test Operator", "operator@example.invalid", 1767225600, 0)
STAMP = "2026-01-01T00:00:00Z"

names = st.text(alphabet=st.sampled_from("abc_é"), min_size=1, max_size=4)
entries = st.builds(lambda value: {"value": value, "source": "agent", "timestamp": STAMP},
                    st.text(alphabet=st.sampled_from('xy"\\é '), max_size=6))
stores = st.dictionaries(names, entries, max_size=8)
LAYOUTS = ("ctx", "indent4", "one line")


def file_of(store: dict, layout: str) -> bytes:
    data = {"type": "shared", "version": "1", "last_updated": STAMP, "entries": store}
    if layout == "ctx":
        return serialize(data)
    return (json.dumps(data, indent=4 if layout == "indent4" else None) + "\n").encode("utf-8")


def commit(repo: pygit2.Repository, raw: bytes | None, parents: list[pygit2.Oid]) -> pygit2.Oid:
    """A commit whose tree holds RULES.md and, unless ``raw`` is None, the store file."""
    top = repo.TreeBuilder()
    top.insert("RULES.md", repo.create_blob(b"# rules\n"), pygit2.enums.FileMode.BLOB)
    if raw is not None:
        memory = repo.TreeBuilder()
        memory.insert("shared.json", repo.create_blob(raw), pygit2.enums.FileMode.BLOB)
        top.insert("memory", memory.write(), pygit2.enums.FileMode.TREE)
    return repo.create_commit(None, SIGNATURE, SIGNATURE, "a write", top.write(), parents)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base_store=stores, removed=st.lists(st.integers(0, 7), max_size=4), added=stores,
       changed=st.lists(st.tuples(st.integers(0, 7), entries), max_size=3),
       base_layout=st.sampled_from(LAYOUTS), tip_layout=st.sampled_from(LAYOUTS),
       base_proved=st.booleans(), tip_drops_store=st.booleans())
def test_deletions_counted_from_the_guards_keys_are_the_ones_a_whole_read_counts(
        base_store, removed, added, changed, base_layout, tip_layout, base_proved, tip_drops_store):
    theirs = dict(base_store)
    for index in removed:
        if theirs:
            theirs.pop(list(theirs)[index % len(theirs)])
    for index, entry in changed:
        if theirs:
            theirs[list(theirs)[index % len(theirs)]] = entry
    theirs.update(added)
    with tempfile.TemporaryDirectory(prefix="ctx-guard-keys-") as tmp:
        repo = pygit2.init_repository(tmp, bare=True)
        base = commit(repo, file_of(base_store, base_layout), [])
        if base_proved:
            incoming.check(repo, base, None)  # as the sync that took the base in: its pieces are kept
        tip = commit(repo, None if tip_drops_store else file_of(theirs, tip_layout), [base])
        checked = incoming.check(repo, tip, base)
        before, after = repo[base].peel(pygit2.Commit).tree, repo[tip].peel(pygit2.Commit).tree
        told = arrived.what_arrived(repo, before, after, tip, base, checked.keys)
        read = arrived.what_arrived(repo, before, after, tip, base)
    assert told == read
    gone = len([key for key in base_store if tip_drops_store or key not in theirs])
    assert told.deleted == ({"shared": gone} if gone else {})


def test_the_guard_hands_on_the_keys_of_both_blobs_of_a_fast_forward():
    store = {f"k{i}": {"value": f"v{i}", "source": "agent", "timestamp": STAMP} for i in range(20)}
    with tempfile.TemporaryDirectory(prefix="ctx-guard-keys-") as tmp:
        repo = pygit2.init_repository(tmp, bare=True)
        base = commit(repo, file_of(store, "ctx"), [])
        incoming.check(repo, base, None)
        theirs = {k: v for k, v in store.items() if k not in ("k3", "k9")}
        tip = commit(repo, file_of(theirs, "ctx"), [base])
        checked = incoming.check(repo, tip, base)
        tree = repo[tip].peel(pygit2.Commit).tree
        assert checked.keys[tree[PATH].id] == list(theirs)
        assert checked.keys[repo[base].peel(pygit2.Commit).tree[PATH].id] == list(store)
