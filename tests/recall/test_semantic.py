"""search --semantic: recall on the evaluation set, the command's behaviour, the vectors in the
read index, and the model kept off every other path."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from ctx.meaning import model as meaning_model
from ctx.meaning.rank import search
from ctx.results import Filters
from recall.evalset import KINDS, QUESTIONS
from support.contexts import Context, index_file
from support.stores import make_entry


def found_in_top5(context: Context, embedder) -> dict[str, float]:
    hits: dict[str, list[bool]] = {k: [] for k in KINDS}
    for kind, question, answers in QUESTIONS:
        top = [r.key for r, _ in search(context, question, Filters(), 5, embedder)]
        hits[kind].append(any(a in top for a in answers))
    return {k: sum(v) / len(v) for k, v in hits.items()}


def test_by_words_alone_the_set_is_found_as_the_issue_asks(evalset_root):
    shares = found_in_top5(Context(evalset_root), None)
    assert shares["own"] >= 0.95 and shares["mixed"] >= 0.85, shares


def test_with_the_model_the_set_is_found_as_the_issue_asks(evalset_root, embedder):
    shares = found_in_top5(Context(evalset_root), embedder)
    assert shares["other"] >= 0.30 and shares["own"] >= 0.95 and shares["mixed"] >= 0.90, shares


def test_a_question_in_other_words_finds_what_words_cannot(evalset_root, embedder):
    context = Context(evalset_root)
    question = "who delivers messages like password resets to customer inboxes"
    assert "decision_api_email_provider" not in [r.key for r, _ in search(context, question, Filters(), 5, None)]
    assert "decision_api_email_provider" in [r.key for r, _ in search(context, question, Filters(), 5, embedder)]


def test_any_word_counts_and_stems_match(evalset_root):
    context = Context(evalset_root)
    # "retry" is stemmed to what "retries" is; "zebra" is in no entry, yet the others still find it
    keys = [r.key for r, _ in search(context, "duplicate zebra retry", Filters(), 3, None)]
    assert keys[0] == "issue_etl_duplicate_rows"
    assert search(context, "zebra", Filters(), 5, None) == []


def test_the_command_json_scores_filters_and_an_empty_answer(evalset_root, run, embedder):
    done = run("search", "--semantic", "why the iphone store turned down our submission", "--json", "--limit", "5")
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)
    assert "issue_mobile_app_review_rejection" in [r["key"] for r in rows]
    assert all(set(r) == {"store", "key", "entry", "score"} for r in rows)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    only = json.loads(run("search", "--semantic", "dark mode", "--json", "--tag", "docs").stdout)
    assert only and all("docs" in r["entry"]["tags"] for r in only)
    agent = json.loads(run("search", "--semantic", "port", "--json", "--store", "agent").stdout)
    assert agent and {r["store"] for r in agent} == {"agent"}
    prefixed = json.loads(run("search", "--semantic", "crash", "--json", "--prefix", "issue_mobile").stdout)
    assert prefixed and all(r["key"].startswith("issue_mobile") for r in prefixed)
    text = run("search", "--semantic", "Hermes")
    assert text.exit_code == 0 and text.stdout.splitlines()[0].startswith("shared/issue_mobile_ios_crash_launch")
    nothing = run("search", "--semantic", "xyzzy plugh", "--json")
    assert nothing.exit_code == 0 and json.loads(nothing.stdout) == []
    assert run("search", "--semantic", "xyzzy plugh").stdout == ""
    both = run("search", "--semantic", "--full-text", "pool")
    assert both.exit_code == 2 and "choose one" in both.stderr


def test_without_the_model_words_rank_and_stderr_says_once_what_the_extra_adds(evalset_root, run,
                                                                               monkeypatch):
    monkeypatch.setattr(meaning_model, "_loaded", [None])
    monkeypatch.setattr(meaning_model, "_noticed", [])
    first = run("search", "--semantic", "nginx limit on large uploads", "--json")
    assert first.exit_code == 0
    assert json.loads(first.stdout)[0]["key"] == "issue_api_upload_timeout"
    assert meaning_model.EXTRA in first.stderr
    second = run("search", "--semantic", "Dagster")
    assert second.exit_code == 0 and meaning_model.EXTRA not in second.stderr


def test_vectors_are_kept_by_text_in_the_read_index_and_follow_changes(root, git_context, embedder):
    context = git_context
    context.set("decision_pool", "Use a pool of 20 connections")
    context.set("issue_upload", "Uploads over 50 MB fail at 30 s")
    assert search(context, "database connections", Filters(), 5, embedder)

    def vectors():
        with sqlite3.connect(index_file(root)) as db:
            ids = b"".join(row[0] for row in db.execute("SELECT ids FROM vector_sets"))
        return {ids[i:i + 16] for i in range(0, len(ids), 16)}
    before = vectors()
    assert len(before) == 2
    search(context, "database connections", Filters(), 5, embedder)
    assert vectors() == before  # nothing computed again
    context.set("issue_upload", "Uploads over 50 MB fail at 30 s behind nginx")
    assert search(context, "nginx", Filters(), 5, embedder)[0][0].key == "issue_upload"
    after = vectors()
    assert len(after) == 2 and len(after & before) == 1  # the changed text's vector replaced


def test_a_root_without_git_searches_by_meaning_in_memory(root, context, monkeypatch, embedder):
    monkeypatch.setenv("CTX_NO_GIT", "1")
    root.mkdir(parents=True)
    (root / "memory").mkdir()
    from support.stores import write_store_file
    write_store_file(root, "shared", {"decision_pool": make_entry("Use a pool of 20 Postgres connections")})
    found = search(Context(root), "database pool", Filters(), 5, embedder)
    assert [r.key for r, _ in found] == ["decision_pool"]
    assert not index_file(root).exists()


def test_the_server_keeps_the_model_it_loaded(embedder):
    assert meaning_model.shared() is embedder is meaning_model.shared()


@pytest.mark.slow
def test_writes_and_other_reads_never_load_the_model(evalset_root):
    """`ctx set`, `get`, `search` (plain and --full-text) and `list` load neither numpy nor
    the model's code; `search --semantic` does (when the extra is there)."""
    heavy = ("numpy", "tokenizers", "safetensors", "ctx.meaning", "ctx.meaning.model")
    code = ("import sys; sys.argv = ['ctx'] + sys.argv[1:]\n"
            "from ctx.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print('LOADED', sorted(m for m in {heavy!r} if m in sys.modules))")
    env = dict(os.environ, CTX_HOME=str(evalset_root), CTX_AUTHOR="Agent One")
    for args in (["set", "k", "a new value"], ["get", "k"], ["search", "pool"], ["search", "--full-text", "pool"],
                 ["list", "--tag", "docs"], ["brief"], ["set", "k", "another value"]):
        out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env)
        assert out.stdout.strip().endswith("LOADED []"), (args, out.stdout, out.stderr)
    if meaning_model.shared() is not None:
        out = subprocess.run([sys.executable, "-c", code, "search", "--semantic", "pool"], capture_output=True,
                             text=True, env=env)
        assert "'numpy'" in out.stdout.splitlines()[-1], out.stdout + out.stderr


def test_the_first_build_shows_its_progress_on_a_terminal(evalset_root, embedder, monkeypatch):
    import io

    from ctx import progress
    from ctx.meaning import vectors

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True
    drawn: list[str] = []
    monkeypatch.setattr(progress, "AFTER", 0.0)
    monkeypatch.setattr(vectors, "BATCH", 50)  # several batches, so the count moves
    real_count = progress.count

    def seen(done: int, total: int | None, what: str) -> None:
        real_count(done, total, what)
        drawn.append(progress._current.line() if progress._current else "")
    monkeypatch.setattr(progress, "count", seen)
    screen = Terminal()
    with progress.showing("ctx search --semantic", screen):
        assert search(Context(evalset_root), "pool", Filters(), 5, embedder)
    assert any("entries of shared read for meaning 150 of 180" in line for line in drawn), drawn
    assert screen.getvalue().endswith("\r\x1b[K") or screen.getvalue() == ""  # erased when done
