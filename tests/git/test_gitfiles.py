"""The readers without libgit2 (``ctxgit/gitfiles/``) against libgit2 itself: the loose-object
reader reads what git writes; the author identity is spelled the same by both ways of
committing."""

from __future__ import annotations

import re

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxgit.gitfiles import identity, layout, objects
from ctxgit.plumbing.repo import signature


def test_an_object_libgit2_wrote_reads_back(tmp_path):
    repo = pygit2.init_repository(str(tmp_path), initial_head=layout.BRANCH)
    sha = str(repo.create_blob(b"hello\n"))
    assert objects.read(tmp_path / ".git", sha) == (b"blob", b"hello\n")
    assert objects.read(tmp_path / ".git", "0" * 40) is None


def test_a_commit_libgit2_wrote_reads_back(tmp_path):
    repo = pygit2.init_repository(str(tmp_path), initial_head=layout.BRANCH)
    tree = repo.TreeBuilder().write()
    who = pygit2.Signature("Agent Z", "agent-z@ctx.invalid", 1_700_000_000, 0)
    first = repo.create_commit(layout.BRANCH_REF, who, who, "first\n\nCtx-Operation: set\n", tree, [])
    second = repo.create_commit(layout.BRANCH_REF, who, who, "second", tree, [first])
    kind, body = objects.read(tmp_path / ".git", str(second))
    assert kind == b"commit"
    assert objects.commit_fields(body) == ([str(first)], "Agent Z", 1_700_000_000, "second")
    assert objects.commit_fields(b"tree 00\n\nno author") is None


def test_one_spelling_of_an_author(monkeypatch):
    monkeypatch.delenv("CTX_AUTHOR_EMAIL", raising=False)
    assert identity.author_identity("Agent <Z>\n") == ("Agent  Z", "agent-z@ctx.invalid")
    assert identity.author_identity("!!!") == ("!!!", "agent@ctx.invalid")
    assert identity.author_identity("Bo", "bo@example.org") == ("Bo", "bo@example.org")
    made = signature(None, "Agent <Z>\n")  # libgit2's way spells it the same
    assert (made.name, made.email) == identity.author_identity("Agent <Z>\n")
    monkeypatch.setenv("CTX_AUTHOR_EMAIL", "z@example.org")
    made = signature(None, "Agent Z")
    assert (made.name, made.email) == ("Agent Z", "z@example.org")
    from ctxgit.recorder import author_identity
    assert author_identity("Agent Z") == ("Agent Z", "z@example.org")


def test_layout_names_paths_under_dot_git(tmp_path):
    assert layout.path(tmp_path, layout.MACHINE) == str(tmp_path / ".git" / "ctx" / "machine.json")
    assert layout.tracking_ref("alpha") == "refs/remotes/alpha/main"
    assert layout.BRANCH_REF == f"refs/heads/{layout.BRANCH}"


# --- the author's spelling without expressions (each commit spells it) ----------------------

_NAMES = st.text(st.characters(codec="utf-8"), max_size=40) | st.text("aZ09 -_<>\n\t\x00\x1fİKé.@", max_size=40)


@settings(max_examples=500, deadline=None)
@given(_NAMES)
def test_slug_and_clean_spell_as_their_expressions_do(name):
    """``slug`` and ``clean`` are string methods now; they give what the expressions
    they replace gave, for any text (non-ASCII letters whose lower case is ASCII included)."""
    assert identity.slug(name) == (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "agent")
    assert identity.clean(name) == re.sub(r"[<>\x00-\x1f]+", " ", name).strip()


# --- trailers: string methods, read as the expression reads them --------------------------------

@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["Ctx-Key", "Ctx-", "Ctx-Store", "ctx-Key", "Ctx-Ké", "Ctx-A1", ":", ": ", " ",
                                 "value", "\n", "\r", "\t", "x:y", "Ctx-Op-Name", "\u2028", "é"]),
                max_size=12).map("".join))
def test_trailers_are_read_as_the_expression_reads_them(message):
    from ctxgit.gitfiles.trailers import trailers
    expected: dict[str, list[str]] = {}
    for name, value in re.findall(r"^(Ctx-[A-Za-z-]+): ?(.*)$", message, re.M):
        expected.setdefault(name, []).append(value.strip())
    assert trailers(message) == expected


def test_the_trailers_a_commit_carries():
    from ctxgit.gitfiles.trailers import trailers
    message = ("set: shared/k\n\nbody text: not a trailer\n\n"
               "Ctx-Operation: set\nCtx-Store: shared\nCtx-Key: k\nCtx-Key:k2\n")
    assert trailers(message) == {"Ctx-Operation": ["set"], "Ctx-Store": ["shared"], "Ctx-Key": ["k", "k2"]}
