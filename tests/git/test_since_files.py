"""SINCE YOUR LAST SESSION names what the commits' trailers do not: a RULES.md change
(who, when) and entries deleted by a commit not made by a ctx entry write (a plain git
commit, a store file edited outside ctx), beside the entry changes and bounded with them.
Both ways of reading the history (loose objects, pygit2) give the same rows.
"""

from __future__ import annotations

import json

import pytest

from ctxgit.gitfiles.identity import SYSTEM_NAME
from ctxgit.porcelain import since as since_module
from ctxgit.porcelain.since import since_last_session
from support.gitutil import commit_ids, git

A, B = "Agent A", "Agent B"


@pytest.fixture
def write(run):
    def do(*args: str, author: str | None = None) -> None:
        result = run(*args, author=author)
        assert result.exit_code == 0, (args, result.output, result.exception)
    return do


def rows(since) -> list[tuple[str | None, str, str, str]]:
    return [(c.store, c.key, c.author, c.kind) for c in since.changes]


def test_a_rules_md_edit_outside_ctx_is_news_with_its_committer(root, write):
    write("set", "mine", "A's", author=A)
    with open(root / "RULES.md", "a", encoding="utf-8") as f:
        f.write("- a new rule\n")
    write("set", "theirs", "B's", author=B)  # commits the outside edit first (by the system)
    expected = [("shared", "theirs", B, "new"), (None, "RULES.md", SYSTEM_NAME, "changed")]
    assert rows(since_last_session(root, A)) == expected
    assert rows(since_last_session(root, A, write=False)) == expected
    assert rows(since_module._in_memory(root, commit_ids(root)[0], A, 10)) == expected
    assert since_last_session(root, A).as_json()["changes"][1]["store"] is None


def test_entries_deleted_outside_ctx_are_news_as_deleted(root, write):
    write("set", "keep", "stays", author=B)
    write("set", "gone", "goes", author=B)
    write("set", "mine", "A's", author=A)
    path = root / "memory" / "shared.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["entries"]["gone"]
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    write("set", "later", "B again", author=B)
    assert rows(since_last_session(root, A)) == [("shared", "later", B, "new"),
                                                 ("shared", "gone", SYSTEM_NAME, "deleted")]


def test_a_commit_with_trailers_that_changes_rules_md_is_read_alike_loose_and_by_pygit2(root, write):
    """A commit whose trailers name only an entry but whose tree changes RULES.md too (made
    by hand: loose objects), read straight from .git/objects and by pygit2."""
    write("set", "mine", "A's", author=A)
    tip = commit_ids(root)[0]
    (root / "RULES.md").write_text("# other rules\n", encoding="utf-8")
    git(root, "add", "RULES.md")
    git(root, "commit", "-q", "--no-verify", "-m", "set shared/x: y\n\nCtx-Operation: set\nCtx-Store: shared\n"
        "Ctx-Key: x\n", env={"GIT_AUTHOR_NAME": B, "GIT_AUTHOR_EMAIL": "b@example.invalid"})
    head = commit_ids(root)[0]
    loose = since_module._loose_run(root / ".git", head, tip)
    assert loose is not None and loose == since_module._walk(root, head, tip)
    assert loose[0][0][5] == [("shared", "x"), ("", "RULES.md", "file")]
    assert (None, "RULES.md", B, "changed") in rows(since_last_session(root, A, write=False))


def test_rules_md_counts_within_the_bound(root, write):
    write("set", "mine", "A's", author=A)
    (root / "RULES.md").write_text("# replaced\n", encoding="utf-8")
    for i in range(4):
        write("set", f"k{i}", "v", author=B)
    since = since_last_session(root, A, limit=2)
    assert len(since.changes) == 2 and since.more == 3
    assert "RULES.md" in [c.key for c in since_last_session(root, A, limit=10).changes]


def test_the_brief_lists_the_rules_change_as_a_file(root, write, run):
    write("set", "mine", "A's", author=A)
    (root / "RULES.md").write_text("# replaced\n", encoding="utf-8")
    write("set", "theirs", "B's", author=B)
    text = run("brief", author=A).stdout
    since = text.split("SINCE YOUR LAST SESSION", 1)[1]
    assert f"RULES.md (file): changed by {SYSTEM_NAME}" in since, text
