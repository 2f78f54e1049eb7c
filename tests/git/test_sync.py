"""Sync between machines through local bare repositories: ``ctx remote``,
``clone``, ``pull``, ``push``, ``sync``, and a plain ``git pull`` with ctx's
merge driver.

Each machine is its own context root, driven through the CLI with its own
``CTX_HOME`` (click's CliRunner in process, or the installed ``ctx``
executable in a subprocess). Entries that must have chosen timestamps are
written straight into a store file and committed by the next ctx write as
an outside change (``Machine.put``).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pygit2
import pytest

import ctxgit.sync.remote as sync_module
from ctxgit.recorder import recorder_for
from ctxgit.sync.transport import Behind
from support.contexts import Context
from support.gitutil import fsck, trailers
from support.syncutil import (
    Machine,
    assert_converged,
    bare_head,
    clone_machine,
    commit_message,
    commit_parents,
    deadline,
    entry,
    make_bare,
    network,
    plain_clone,
    plain_commit_and_push,
    sync_round,
    sync_until_converged,
    ts,
)

STORES = ("operator", "shared", "agent")


@pytest.fixture(autouse=True, params=[pytest.param("git", marks=pytest.mark.slow), "libgit2"])
def transport(request, monkeypatch):
    """Every test with both ways of fetching and pushing (ctxgit/transport.py).
    The git way starts git processes at each fetch and push: slow; the quick run
    (-m "not slow") takes libgit2's, in process."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", request.param)
    return request.param


def values(machine: Machine, store: str = "shared") -> dict[str, object]:
    return {k: e["value"] for k, e in machine.entries(store).items()}


def history_values(machine: Machine, key: str) -> list[object]:
    result = machine.ok("history", key, "--json")
    return [v["entry"]["value"] for v in json.loads(result.stdout) if v["entry"] is not None]


# --- disjoint writes, fast-forward, merge commits -------------------------------------------

@pytest.mark.slow
def test_disjoint_writes_merge_and_converge_with_the_real_executable(tmp_path):
    bare = make_bare(tmp_path / "remote" / "ctx.git")
    a = Machine(tmp_path / "machine A", "Agent A")
    b = Machine(tmp_path / "machine B", "Agent B")
    assert "an empty remote" in a.sh("clone", str(bare), str(a.root)).stdout
    a.sh("set", "seed", "first entry")
    assert a.sh("push").stdout == "sent 2 commits to origin\n"  # the new context's first commit, seed
    assert a.sh("push").stdout == "origin already had everything\n"
    assert "cloned at" in b.sh("clone", str(bare), str(b.root)).stdout
    a.sh("set", "from_a", "alpha", "--tag", "a")
    a.sh("set", "note_a", "working note", "--store", "agent")
    b.sh("set", "from_b", "beta")
    b.sh("set", "pref_b", "one question at a time", "--store", "operator")
    assert a.sh("sync").stdout.startswith("pull: up to date")
    b_before = b.head()
    out = b.sh("sync").stdout
    assert out.startswith("pull: merge (2 entries changed"), out
    assert "received 2 commits" in out.splitlines()[0], out
    assert "push: sent 3 commits to origin" in out  # its two writes and the merge
    assert commit_parents(b)[0] == b_before
    assert a.sh("sync").stdout.startswith("pull: fast-forward")
    assert_converged([a, b], bare)
    for m in (a, b):
        assert values(m) == {"seed": "first entry", "from_a": "alpha", "from_b": "beta"}
        assert values(m, "agent") == {"note_a": "working note"}
        assert values(m, "operator") == {"pref_b": "one question at a time"}
    fsck(a.root)


def test_pull_fast_forwards_when_there_is_nothing_local(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "k", "v")
    a.ok("push")
    before = b.head()
    result = b.ok("pull")
    assert result.stdout.startswith("pull: fast-forward")
    assert b.head() == a.head()
    assert commit_parents(b) == [before]  # A's own commit, no merge commit
    assert b.entry("k")["value"] == "v"
    assert b.status() == []
    assert b.ok("pull").stdout.startswith("pull: up to date")


def test_pull_from_an_empty_remote_has_nothing_to_pull(tmp_path):
    bare = make_bare(tmp_path / "empty.git")
    a = clone_machine(bare, tmp_path / "a", "A")
    assert a.ok("pull").stdout.startswith("pull: nothing to pull")


def test_a_pull_that_cannot_fast_forward_never_rewrites_local_history(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "from_a", "v1")
    a.ok("push")
    a_head = a.head()
    b.ok("set", "from_b", "v2")
    b.ok("set", "from_b_too", "v3")
    b_old = b.head()
    b_history = set(b.git_out("rev-list", "HEAD").split())
    result = b.ok("pull", "--json")
    report = json.loads(result.stdout)
    assert report["result"] == "merge" and report["commit"] == b.head()
    assert report["entries"] == 1 and report["pushed"] is None
    # a merge commit on top: both parents, ours first; nothing of ours rewritten
    assert commit_parents(b) == [b_old, a_head]
    assert b.is_ancestor(b_old) and b.is_ancestor(a_head)
    assert b_history <= set(b.git_out("rev-list", "HEAD").split())
    message = commit_message(b)
    assert message.startswith("merge origin/main: 1 entries changed")
    found = dict(trailers(message))
    assert found["Ctx-Operation"] == "merge"
    assert found["Ctx-Merge-Of"] == a_head
    assert b.git_out("log", "-1", "--format=%an").strip() == "B"
    assert values(b) == {"seed": "shared by everyone", "from_a": "v1", "from_b": "v2", "from_b_too": "v3"}
    assert b.status() == []
    assert bare_head(bare) == a_head  # a pull pushes nothing
    fsck(b.root)


# --- same-key conflicts ---------------------------------------------------------------

def test_a_status_on_one_side_and_tags_on_the_other_both_survive(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "issue_upload", "uploads over 2 GB time out", "--tag", "issue")
    a.ok("push")
    b.ok("pull")
    a.ok("resolve", "issue_upload", "--note", "raised the proxy timeout")
    b.ok("set", "issue_upload", "uploads over 2 GB time out", "--tag", "issue", "--tag", "uploads")
    sync_until_converged([a, b], bare)
    for m in (a, b):
        e = m.entry("issue_upload")
        assert e["status"] == "resolved"
        assert e["status_note"] == "raised the proxy timeout"
        assert "status_timestamp" in e
        assert e["tags"] == ["issue", "uploads"]
        assert e["value"] == "uploads over 2 GB time out"


@pytest.mark.parametrize("merger", ["A", "B"])
def test_both_changed_the_value_the_later_timestamp_wins_and_is_reported(tmp_path, merger):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.put({"k1": entry("k1 base", ts(1)), "k2": entry("k2 base", ts(1)),
           "k3": entry("k3 base", ts(1))})
    a.ok("push")
    b.ok("pull")
    a.put({"k1": entry("k1 from A", ts(5), created=ts(1)),
           "k2": entry("k2 from A", ts(7), created=ts(1)),
           "k3": entry("k3 same on both", ts(4), created=ts(1))})
    b.put({"k1": entry("k1 from B", ts(6), created=ts(1)),
           "k2": entry("k2 from B", ts(3), created=ts(1)),
           "k3": entry("k3 same on both", ts(4), created=ts(1))})
    first, second = (a, b) if merger == "B" else (b, a)
    first.ok("sync")
    result = second.ok("sync")
    assert "pull: merge" in result.stdout
    assert "both sides changed shared/k1: the later timestamp won" in result.stdout
    assert "both sides changed shared/k2" in result.stdout
    assert "k3" not in result.stdout  # the same change on both sides is no conflict
    message = commit_message(second)
    assert "- shared/k1" in message and "- shared/k2" in message and "shared/k3" not in message
    assert [v for k, v in trailers(message) if k == "Ctx-Conflict"] == ["shared/k1", "shared/k2"]
    first.ok("sync")
    assert_converged([a, b], bare)
    for m in (a, b):
        assert m.entry("k1")["value"] == "k1 from B" and m.entry("k1")["timestamp"] == ts(6)
        assert m.entry("k2")["value"] == "k2 from A" and m.entry("k2")["timestamp"] == ts(7)
        assert m.entry("k3")["value"] == "k3 same on both"
        # the value that lost stays in history
        assert {"k1 from A", "k1 from B"} <= set(history_values(m, "k1"))
        assert {"k2 from A", "k2 from B"} <= set(history_values(m, "k2"))


@pytest.mark.parametrize("transport", ["git", "libgit2"], indirect=True)  # the git way in the quick run too
def test_both_machines_merging_on_their_own_pick_the_same_winners(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.put({"k": entry("base", ts(1)), "j": entry("base", ts(1))})
    a.ok("push")
    b.ok("pull")
    a.put({"k": entry("A's k", ts(3), created=ts(1)), "j": entry("A's j", ts(5), created=ts(1)),
           "only_a": entry("a", ts(2))})
    b.put({"k": entry("B's k", ts(4), created=ts(1)), "j": entry("B's j", ts(2), created=ts(1)),
           "only_b": entry("b", ts(2))})
    a_head, b_head = a.head(), b.head()
    a.ok("push")
    b.ok("pull")  # B merges A into B
    # A merges B into A, from B's pre-merge commit (a second bare, same histories)
    other = make_bare(tmp_path / "other.git")
    b.git("push", "-q", str(other), f"{b_head}:refs/heads/main")
    a.ok("remote", "add", "other", str(other))
    a.ok("pull", "other")
    assert commit_parents(a) == [a_head, b_head] and commit_parents(b) == [b_head, a_head]
    assert a.entries() == b.entries()
    assert a.entry("k")["value"] == "B's k" and a.entry("j")["value"] == "A's j"
    # and the two merge commits converge
    a.ok("sync", "origin")
    b.ok("sync")
    a.ok("sync", "origin")
    assert_converged([a, b], bare)


@pytest.mark.parametrize("deleter", ["A", "B"])
def test_delete_on_one_side_and_change_on_the_other_keeps_the_change(tmp_path, deleter):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "k", "original")
    a.ok("set", "untouched", "x")
    a.ok("push")
    b.ok("pull")
    deleting, changing = (a, b) if deleter == "A" else (b, a)
    deleting.ok("delete", "k")
    deleting.ok("delete", "untouched")
    changing.ok("set", "k", "changed")
    sync_until_converged([a, b], bare)
    for m in (a, b):
        assert m.entry("k")["value"] == "changed"
        assert m.entry("untouched") is None  # deleted there, untouched here: deleted


def test_created_is_the_earliest_of_both_sides(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.put({"dup": entry("written on A", ts(9), created=ts(8))})
    b.put({"dup": entry("written on B", ts(7), created=ts(2))})
    sync_until_converged([a, b], bare)
    for m in (a, b):
        e = m.entry("dup")
        assert e["created"] == ts(2)
        assert e["timestamp"] == ts(9)
        assert e["value"] == "written on A"


def test_unknown_entry_fields_survive_a_merge(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.put({"k": entry("v1", ts(1), x_other_tool={"score": 1}), "j": entry("j", ts(1))})
    a.ok("push")
    b.ok("pull")
    a.put({"k": entry("v1", ts(2), created=ts(1), x_other_tool={"score": 2}, x_added="on A")})
    b.ok("set", "k", "v2 from B")
    b.put({"j": entry("j", ts(3), created=ts(1), x_on_j=[1, 2])})
    sync_until_converged([a, b], bare)
    for m in (a, b):
        k, j = m.entry("k"), m.entry("j")
        assert k["value"] == "v2 from B"
        assert k["x_other_tool"] == {"score": 2} and k["x_added"] == "on A"
        assert j["x_on_j"] == [1, 2]


def test_unknown_top_level_keys_from_the_remote_survive_a_merge(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    path = a.root / "memory" / "shared.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["x_meta"] = {"written_by": "another implementation"}
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    a.commit_outside()
    a.ok("push")
    b.ok("set", "from_b", "local change")  # so B's pull is a merge, not a fast-forward
    b.ok("sync")
    assert b.store_data()["x_meta"] == {"written_by": "another implementation"}


# --- session summaries ------------------------------------------------------------------

SUMMARY_BUG = ("BUG: ctxgit/treemerge.py _next_name gets 'sessions/<name>', its date regex never "
               "matches and it loops forever: a sync with two summaries of one name hangs, "
               "holding the context lock")


def summary(text: str) -> str:
    return f"# Session 2025-03-04\n\n**Agent:** {text}\n\n## Open\n- {text}\n"


def test_concurrent_session_summaries_with_one_name_are_both_kept(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    name = "sessions/2025-03-04_session.md"
    a.write_file(name, summary("written on A"))
    a.commit_outside()
    b.write_file(name, summary("written on B"))
    b.commit_outside()
    a.ok("sync")
    with deadline(3):
        result = b.run("sync")
    assert result.exit_code == 0, (result.stderr, result.exception)
    assert "two summaries named sessions/2025-03-04_session.md: one kept as " \
           "sessions/2025-03-04b_session.md" in result.stdout
    a.ok("sync")
    assert_converged([a, b], bare)
    for m in (a, b):
        names = sorted(p.name for p in (m.root / "sessions").iterdir())
        assert names == ["2025-03-04_session.md", "2025-03-04b_session.md"]
        texts = {(m.root / "sessions" / n).read_text(encoding="utf-8") for n in names}
        assert texts == {summary("written on A"), summary("written on B")}


def test_a_renamed_summary_skips_names_taken_on_either_side(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.write_file("sessions/2025-03-04_session.md", summary("A, first"))
    a.commit_outside()
    b.write_file("sessions/2025-03-04_session.md", summary("B, first"))
    b.write_file("sessions/2025-03-04b_session.md", summary("B, second"))
    b.commit_outside()
    a.ok("sync")
    with deadline(3):
        result = b.run("sync")
    assert result.exit_code == 0, (result.stderr, result.exception)
    a.ok("sync")
    assert_converged([a, b], bare)
    names = sorted(p.name for p in (a.root / "sessions").iterdir())
    assert names == ["2025-03-04_session.md", "2025-03-04b_session.md", "2025-03-04c_session.md"]
    assert (a.root / "sessions" / "2025-03-04b_session.md").read_text() == summary("B, second")


# --- RULES.md ---------------------------------------------------------------------------

def _rules_clash(tmp_path):
    """A and B change RULES.md's first line each their own way; A's change is pushed."""
    bare, (a, b) = network(tmp_path, "A", "B")
    rules = (a.root / "RULES.md").read_text(encoding="utf-8")
    first = rules.splitlines()[0]
    a.write_file("RULES.md", rules.replace(first, first + " (edited on A)", 1))
    a.commit_outside()
    b.write_file("RULES.md", rules.replace(first, first + " (edited on B)", 1))
    b.commit_outside()
    b.ok("set", "k", "v")
    a.ok("sync")
    return bare, a, b, first


def test_a_rules_md_conflict_is_never_committed_or_pushed_and_waits_for_a_human(tmp_path):
    bare, a, b, first = _rules_clash(tmp_path)
    b_head, remote_head = b.head(), bare_head(bare)
    result = b.run("sync", "--json")
    assert result.exit_code == 4, result.stderr
    report = json.loads(result.stdout)
    assert report["result"] == "conflict" and report["text_conflicts"] == ["RULES.md"] and report["waiting"]
    assert "CONFLICT in RULES.md" in result.stderr and "ctx sync --continue" in result.stderr
    text = (b.root / "RULES.md").read_text(encoding="utf-8")
    assert "<<<<<<<" in text and "(edited on A)" in text and "(edited on B)" in text
    assert b.head() == b_head and bare_head(bare) == remote_head  # nothing committed, nothing pushed
    assert b.status() == [" M RULES.md"]
    # while it waits: writes go on without the markers, and everything says so
    b.ok("set", "during", "the merge waits")
    assert "RULES.md" not in b.git_out("show", "--stat", "--format=", "HEAD")
    assert "<<<<<<<" not in b.git_out("show", "HEAD:RULES.md")
    start = b.ok("start").stdout
    assert start.splitlines()[0].startswith("[ctx: a merge with origin/main waits: edit RULES.md"), start
    assert "=== RULES (RULES.md) ===" in start.splitlines()[1]
    status = json.loads(b.ok("status", "--json").stdout)
    assert status["merge_in_progress"] is True and status["uncommitted"] == ["RULES.md"]
    doctor = b.run("doctor", "--check")
    assert doctor.exit_code == 1
    assert "a merge with origin/main is in progress" in doctor.stdout
    assert "RULES.md holds conflict markers" in doctor.stdout
    again = b.run("sync")
    assert again.exit_code == 4 and "a merge with origin/main waits" in again.stderr
    # --continue refuses while the markers are there; after an edit, it commits and pushes
    refused = b.run("sync", "--continue")
    assert refused.exit_code == 4 and "still holds conflict markers" in refused.stderr
    resolved = text.split("<<<<<<<")[0] + first + " (edited on A and B)\n" + text.split(">>>>>>>")[1].split("\n", 1)[1]
    b.write_file("RULES.md", resolved)
    done = b.ok("sync", "--continue")
    assert "merge: committed with RULES.md as you left it" in done.stdout
    assert "push: sent" in done.stdout
    assert len(commit_parents(b)) == 2 and bare_head(bare) == b.head()
    assert "merged by hand" in commit_message(b)
    assert b.git_out("show", "HEAD:RULES.md") == resolved
    assert b.status() == [] and not (b.root / ".git" / "MERGE_HEAD").exists()
    assert b.ok("doctor", "--check").exit_code == 0
    a.ok("sync")
    assert_converged([a, b], bare)
    assert set(a.entries()) == {"seed", "k", "during"}


def test_sync_abort_drops_the_waiting_merge(tmp_path):
    bare, a, b, first = _rules_clash(tmp_path)
    assert b.run("sync").exit_code == 4
    done = b.ok("sync", "--abort")
    assert "merge dropped: RULES.md put back" in done.stdout
    assert (b.root / "RULES.md").read_text(encoding="utf-8") == b.git_out("show", "HEAD:RULES.md")
    assert "(edited on B)" in b.git_out("show", "HEAD:RULES.md")
    assert b.status() == [] and not (b.root / ".git" / "MERGE_HEAD").exists()
    assert b.run("sync", "--abort").exit_code == 1  # nothing waits any more
    assert b.run("sync").exit_code == 4  # merging again finds the same conflict


def test_auto_sync_never_starts_a_merge_that_needs_a_human(tmp_path):
    from ctxgit.sync.remote import sync as do_sync
    bare, a, b, first = _rules_clash(tmp_path)
    ctx = Context(b.root, author="B", recorder_factory=recorder_for)
    pulled, pushed = do_sync(ctx, auto=True)
    assert pulled.kind == "conflict" and pushed is None and not pulled.waiting
    assert b.status() == [] and not (b.root / ".git" / "MERGE_HEAD").exists()


def test_two_contexts_joined_merge_rules_md_as_a_union_of_lines(tmp_path):
    """B ran `ctx init` on its own and added a line to RULES.md, then joined A's context:
    no common ancestor, so RULES.md keeps every line of both, in order, and no markers."""
    bare, (a,) = network(tmp_path, "A")
    rules = (a.root / "RULES.md").read_text(encoding="utf-8")
    a.write_file("RULES.md", rules + "- A's own rule\n")
    a.commit_outside()
    a.ok("sync")
    b = Machine(tmp_path / "machine B", "B")
    b.ok("init")
    b.write_file("RULES.md", (b.root / "RULES.md").read_text(encoding="utf-8") + "- B's own rule\n")
    b.ok("set", "from_b", "B's entry")
    b.ok("remote", "add", "origin", str(bare))
    done = b.run("sync")
    assert done.exit_code == 0, done.stderr
    merged = (b.root / "RULES.md").read_text(encoding="utf-8")
    assert "<<<<<<<" not in merged
    assert merged == rules + "- B's own rule\n- A's own rule\n", merged  # this side's lines first
    a.ok("sync")
    assert_converged([a, b], bare)
    assert "[ctx:" not in a.ok("start").stdout.splitlines()[0]
    assert a.ok("doctor", "--check").exit_code == 0
    assert set(a.entries()) == {"seed", "from_b"}


def test_rules_md_changed_on_different_lines_merges_cleanly(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    rules = (a.root / "RULES.md").read_text(encoding="utf-8")
    a.write_file("RULES.md", "# added on A at the top\n\n" + rules)
    a.commit_outside()
    b.write_file("RULES.md", rules + "\n- added on B at the end\n")
    b.commit_outside()
    a.ok("sync")
    result = b.run("sync", "--json")
    assert json.loads(result.stdout)["text_conflicts"] == []
    a.ok("sync")
    assert_converged([a, b], bare)
    text = (a.root / "RULES.md").read_text(encoding="utf-8")
    assert "added on A at the top" in text and "added on B at the end" in text
    assert "<<<<<<<" not in text


# --- many machines ------------------------------------------------------------------------

@pytest.mark.slow
def test_three_machines_in_a_ring_converge(tmp_path):
    x, y, z = (make_bare(tmp_path / "remotes" / f"{n}.git") for n in "xyz")
    a = clone_machine(x, tmp_path / "machine A", "A")
    a.ok("set", "seed", "v")
    a.ok("push", "origin")
    a.ok("remote", "add", "y", str(y))
    a.ok("push", "y")
    b = clone_machine(y, tmp_path / "machine B", "B")
    b.ok("remote", "add", "z", str(z))
    b.ok("push", "z")
    c = clone_machine(z, tmp_path / "machine C", "C")
    c.ok("remote", "add", "x", str(x))
    # A syncs with x and y, B with y and z, C with z and x
    ring = [(a, ["origin", "y"]), (b, ["origin", "z"]), (c, ["origin", "x"])]
    a.ok("set", "from_a", "v1")
    b.ok("set", "from_b", "v2", "--store", "agent")
    c.ok("set", "from_c", "v3", "--store", "operator")
    a.put({"plan": entry("plan from A", ts(3))})
    b.put({"plan": entry("plan from B", ts(5))})
    c.put({"plan": entry("plan from C", ts(4))})
    machines = [a, b, c]
    for _ in range(1, 6):
        for machine, remotes in ring:
            for name in remotes:
                machine.ok("sync", name)
        heads = {m.head() for m in machines} | {bare_head(r) for r in (x, y, z)}
        if len(heads) == 1:
            break
    else:
        raise AssertionError("the ring did not converge in 5 rounds")
    assert_converged(machines)
    for m in machines:
        assert m.entry("plan")["value"] == "plan from B"
        assert values(m)["from_a"] == "v1"
        assert values(m, "agent") == {"from_b": "v2"}
        assert values(m, "operator") == {"from_c": "v3"}
    # once converged, another round changes nothing
    head = a.head()
    for machine, remotes in ring:
        for name in remotes:
            assert machine.ok("sync", name).stdout.startswith("pull: up to date")
    assert {m.head() for m in machines} == {head}


@pytest.mark.slow
def test_repeated_syncs_converge_to_byte_identical_store_files(tmp_path):
    bare, machines = network(tmp_path, "A", "B", "C")
    a, b, c = machines
    for round_no in range(1, 4):
        for i, m in enumerate(machines):
            m.ok("set", f"r{round_no}_{m.author}", f"round {round_no} on {m.author}")
            m.put({"focus": entry(f"focus {round_no} from {m.author}", ts(round_no * 3 + i),
                                  created=ts(1))})
            if round_no == 2:
                m.ok("set", f"note_{m.author}", "x", "--store", "agent")
        sync_round(machines)
    sync_until_converged(machines, bare)
    expected = {f"r{r}_{m.author}" for r in (1, 2, 3) for m in machines} | {"seed", "focus"}
    for m in machines:
        assert set(m.entries()) == expected
        assert m.entry("focus")["value"] == "focus 3 from C"
        assert m.entry("focus")["created"] == ts(1)
        assert set(m.entries("agent")) == {"note_A", "note_B", "note_C"}
    # stable: syncing again makes no commit anywhere
    head = a.head()
    sync_round(machines)
    assert {m.head() for m in machines} == {head}
    assert_converged(machines, bare)


# --- plain git pull with the merge driver -------------------------------------------------

@pytest.mark.slow
def test_git_pull_merges_store_files_entry_by_entry_with_the_merge_driver(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.put({"both": entry("base", ts(1))})
    a.ok("push")
    b.ok("pull")
    a.ok("set", "from_a", "alpha")
    a.put({"both": entry("A's value", ts(6), created=ts(1))})
    a.ok("push")
    a_head = a.head()
    b.ok("set", "from_b", "beta")
    b.put({"both": entry("B's value", ts(4), created=ts(1))})
    b_old = b.head()
    # what ctx clone and ensure_repo set up for git
    assert b.git_out("config", "branch.main.remote").strip() == "origin"
    assert b.git_out("config", "merge.ctx.driver").strip().endswith(
        "ctx merge-driver %O %A %B %P")
    assert b.git_out("check-attr", "merge", "memory/shared.json").strip() == \
        "memory/shared.json: merge: ctx"
    # the real git CLI, no arguments: the upstream comes from the clone
    done = b.git("-c", "pull.rebase=false", "pull", "--no-edit", check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "both sides changed both" in done.stderr
    text = (b.root / "memory" / "shared.json").read_text(encoding="utf-8")
    assert "<<<<<<<" not in text and "=======" not in text and ">>>>>>>" not in text
    data = json.loads(text)
    assert data["entries"]["both"]["value"] == "A's value"
    assert {"seed", "from_a", "from_b", "both"} == set(data["entries"])
    assert commit_parents(b) == [b_old, a_head]
    assert b.status() == []
    # ctx reads and writes on top of git's merge, and the machines converge
    assert b.ok("get", "from_a").stdout.startswith("shared/from_a")
    b.ok("sync")
    a.ok("sync")
    assert_converged([a, b], bare)


def test_the_merge_driver_command_is_hidden_and_merges_in_place(tmp_path):
    m = Machine(tmp_path / "m", "M")
    m.ok("init")
    assert "merge-driver" not in m.ok("--help").stdout
    from ctx.storage.textlayout import serialize
    files = {}
    for name, entries in (("base", {}), ("ours", {"a": entry("a", ts(2))}),
                          ("theirs", {"b": entry("b", ts(3))})):
        files[name] = tmp_path / f"{name}.json"
        files[name].write_bytes(serialize({"type": "shared", "version": "1",
                                           "last_updated": ts(1), "entries": entries}))
    result = m.run("merge-driver", str(files["base"]), str(files["ours"]), str(files["theirs"]),
                   "memory/shared.json")
    assert result.exit_code == 0, result.stderr
    assert set(json.loads(files["ours"].read_text())["entries"]) == {"a", "b"}


def test_a_new_root_routes_store_files_to_the_merge_driver(tmp_path):
    m = Machine(tmp_path / "fresh", "M")
    (tmp_path / "fresh").mkdir()
    (tmp_path / "fresh" / ".gitattributes").write_text("*.md text")  # no final newline
    m.ok("set", "k", "v")
    attributes = (m.root / ".gitattributes").read_text()
    assert attributes.splitlines() == ["*.md text", "memory/*.json merge=ctx"]
    assert ".gitattributes" in m.git_out("ls-files").split()
    assert m.git_out("config", "merge.ctx.name").strip()
    driver = m.git_out("config", "merge.ctx.driver").strip()
    program = shlex.split(driver)[0]
    assert Path(program).parent == Path(sys.executable).parent and os.access(program, os.X_OK)
    assert driver.endswith("merge-driver %O %A %B %P")
    for store in STORES:
        assert m.git_out("check-attr", "merge", f"memory/{store}.json").strip().endswith(": ctx")
    m.ok("set", "k2", "v")
    assert (m.root / ".gitattributes").read_text() == attributes  # written once


# --- interrupted syncs ---------------------------------------------------------------------

def _fail_merge_commit_once(monkeypatch) -> dict[str, int]:
    """Make the commit of a merge (two parents) fail once, as a crash would: git's
    `commit-tree` where git makes ctx's commits, libgit2's where it does not."""
    from ctx.errors import GitError
    from ctxgit.plumbing import gitcommit
    real = pygit2.Repository.create_commit
    real_tree = gitcommit.commit_tree
    state = {"failed": 0}

    def flaky(self, ref, author, committer, message, tree, parents, *rest):
        if len(parents) == 2 and not state["failed"]:
            state["failed"] += 1
            raise pygit2.GitError("simulated failure while writing the merge commit")
        return real(self, ref, author, committer, message, tree, parents, *rest)

    def flaky_tree(root, tree, parents, *rest, **named):
        if len(parents) == 2 and not state["failed"]:
            state["failed"] += 1
            raise GitError("simulated failure while writing the merge commit")  # as a failed git says it
        return real_tree(root, tree, parents, *rest, **named)
    monkeypatch.setattr(pygit2.Repository, "create_commit", flaky)
    monkeypatch.setattr(gitcommit, "commit_tree", flaky_tree)
    return state


@pytest.mark.slow
def test_a_merge_whose_commit_fails_changes_nothing_and_a_rerun_finishes_it(tmp_path, monkeypatch):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "from_a", "v1")
    a.ok("push")
    a_head = a.head()
    b.ok("set", "from_b", "v2")
    b_old, files_before = b.head(), b.files()
    state = _fail_merge_commit_once(monkeypatch)
    result = b.run("sync")
    assert state["failed"] == 1
    assert result.exit_code != 0
    assert "simulated failure" in result.stderr
    # consistent: the old head, the old files, nothing staged or left over, nothing pushed
    assert b.head() == b_old
    assert b.files() == files_before
    assert b.status() == []
    assert bare_head(bare) == a_head
    # the rerun finishes it
    assert b.ok("sync").stdout.startswith("pull: merge")
    assert commit_parents(b) == [b_old, a_head]
    a.ok("sync")
    assert_converged([a, b], bare)
    assert set(a.entries()) == {"seed", "from_a", "from_b"}


@pytest.mark.slow
def test_a_sync_killed_after_writing_the_merged_files_is_finished_by_a_rerun(tmp_path, monkeypatch):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "from_a", "v1")
    a.ok("set", "agent_a", "v2", "--store", "agent")
    a.ok("push")
    a_head = a.head()
    b.ok("set", "from_b", "v3")
    b_old = b.head()
    with monkeypatch.context() as patch:
        _fail_merge_commit_once(patch)
        patch.setattr("ctx.transaction._restore", lambda written: None)  # killed: nothing rolls back
        assert b.run("sync").exit_code != 0
    assert b.head() == b_old
    assert b.status() != []  # the merged files are on disk, not committed
    result = b.ok("sync")
    assert b.status() == []
    assert b.is_ancestor(b_old) and b.is_ancestor(a_head)
    assert "pull: " in result.stdout
    a.ok("sync")
    assert_converged([a, b], bare)
    assert set(a.entries()) == {"seed", "from_a", "from_b"}
    assert set(a.entries("agent")) == {"agent_a"}


@pytest.mark.slow
def test_a_fast_forward_killed_half_way_is_finished_by_a_rerun(tmp_path, monkeypatch):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "from_a", "v1")
    a.ok("set", "agent_a", "v2", "--store", "agent")
    a.ok("set", "pref_a", "v3", "--store", "operator")
    a.ok("push")
    a_head = a.head()
    b_old = b.head()
    import ctxgit.sync.merging as merging
    real = merging.atomic_write
    calls = []

    def dying(path, content):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(5, "simulated crash in the middle of a fast-forward")
        real(path, content)
    with monkeypatch.context() as patch:
        patch.setattr(merging, "atomic_write", dying)
        result = b.run("pull")
    assert result.exit_code != 0
    assert b.head() == b_old  # the ref moves last
    result = b.ok("pull")
    assert b.status() == []
    assert b.is_ancestor(a_head)
    for store in STORES:
        assert b.entries(store) == a.entries(store)
    b.ok("sync")
    a.ok("sync")
    assert_converged([a, b], bare)


# --- what a remote may not bring ------------------------------------------------------------

@pytest.mark.parametrize("kind", ["fast-forward", "merge"])
def test_a_remote_store_with_another_format_version_stops_the_pull(tmp_path, kind):
    bare, (a, b) = network(tmp_path, "A", "B")
    work = plain_clone(bare, tmp_path / "by hand")
    path = work / "memory" / "shared.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["version"] = "2"
    data["entries"]["from_v2"] = entry("written by a newer ctx", ts(3))
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    remote_head = plain_commit_and_push(work, "a newer format")
    if kind == "merge":
        b.ok("set", "local", "x")
    head, files = b.head(), b.files()
    for command in ("pull", "sync"):
        result = b.run(command)
        assert result.exit_code == 4, (result.stdout, result.stderr)
        assert "memory/shared.json from the remote has format version '2'" in result.stderr
        assert b.head() == head
        assert b.files() == files
        assert b.status() == []
        assert bare_head(bare) == remote_head


@pytest.mark.parametrize("kind", ["fast-forward", "merge"])
@pytest.mark.parametrize("path", ["memory/shared.json", "sessions/2025-03-04_session.md"])
def test_a_link_in_the_remote_tree_is_refused(tmp_path, kind, path):
    bare, (a, b) = network(tmp_path, "A", "B")
    work = plain_clone(bare, tmp_path / "by hand")
    link = work / path
    link.parent.mkdir(parents=True, exist_ok=True)
    link.unlink(missing_ok=True)
    os.symlink("/etc/passwd" if path.startswith("sessions/") else "../RULES.md", link)
    plain_commit_and_push(work, "a link")
    if kind == "merge":
        b.ok("set", "local", "x")
    head, files = b.head(), b.files()
    result = b.run("pull")
    assert result.exit_code == 4, (result.stdout, result.stderr)
    # refused by name (as a link, or, for a store file, as no store file: its blob is the
    # link's target text)
    assert result.stderr.startswith(f"ctx: {path} from the remote is not a ")
    assert "regular file" in result.stderr or "not a store file" in result.stderr
    assert b.head() == head and b.files() == files and b.status() == []
    assert not (b.root / path).is_symlink()


def test_the_lock_and_temporary_files_of_a_remote_are_never_written(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    work = plain_clone(bare, tmp_path / "by hand")
    (work / "memory" / ".lock").write_text("a lock from elsewhere")
    (work / "memory" / ".shared.json.x1y2.tmp").write_text("half a write")
    (work / "junk.tmp").write_text("junk")
    plain_commit_and_push(work, "local state by mistake")
    lock = b.root / "memory" / ".lock"
    lock_before = lock.read_bytes() if lock.exists() else None
    b.ok("pull")
    assert (lock.read_bytes() if lock.exists() else None) == lock_before
    assert not (b.root / "memory" / ".shared.json.x1y2.tmp").exists()
    assert not (b.root / "junk.tmp").exists()
    b.ok("set", "k", "v")
    assert not [p for p in b.git_out("ls-tree", "-r", "--name-only", "HEAD").split()
                if p.endswith(".tmp") or p.endswith(".lock")]


# --- push, upstream, remotes ---------------------------------------------------------------

def test_push_sets_the_upstream_so_plain_git_pull_works(tmp_path):
    m = Machine(tmp_path / "solo", "Solo")
    m.ok("set", "k", "v")
    bare = make_bare(tmp_path / "remote.git")
    m.ok("remote", "add", "origin", str(bare))
    assert m.git("config", "branch.main.remote", check=False).returncode != 0
    assert m.ok("push").stdout.strip() == "sent 1 commit to origin"
    assert m.git_out("config", "branch.main.remote").strip() == "origin"
    assert m.git_out("config", "branch.main.merge").strip() == "refs/heads/main"
    assert bare_head(bare) == m.head()
    other = clone_machine(bare, tmp_path / "other", "Other")
    other.ok("set", "k2", "from the other machine")
    other.ok("push")
    done = m.git("pull", "--ff-only", check=False)  # plain git, no remote named
    assert done.returncode == 0, done.stderr
    assert m.head() == other.head()
    assert m.ok("get", "k2").stdout.splitlines()[1] == "from the other machine"


PUSH_BUG = ("BUG: ctxgit/sync.py push recognises a non-fast-forward refusal only by the words "
            "'non-fast-forward'/'rejected'/'fast forward'; libgit2 says 'cannot push because a "
            "reference that you are trying to update on the remote contains commits that are "
            "not present locally', so it becomes GitError (exit 6) instead of Conflict (exit 4), "
            "and sync never retries")


@pytest.mark.parametrize("transport", ["git", "libgit2"], indirect=True)  # the git way in the quick run too
def test_push_is_refused_when_the_remote_has_changes_this_machine_lacks(tmp_path):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "x", "v1")
    a.ok("push")
    b.ok("set", "y", "v2")
    result = b.run("push")
    assert result.exit_code == 4
    assert "ctx sync" in result.stderr
    assert bare_head(bare) == a.head()


@pytest.mark.slow
def test_sync_retries_when_someone_pushes_between_its_pull_and_its_push(tmp_path, monkeypatch):
    bare, (a, b, c) = network(tmp_path, "A", "B", "C")
    a.ok("set", "from_a", "v1")
    a.ok("push")
    b.ok("set", "from_b", "v2")
    c.ok("set", "from_c", "v3")
    real_pull = sync_module.pull
    kinds = []

    def racing_pull(ctx, remote_name=None, **options):
        result = real_pull(ctx, remote_name, **options)
        kinds.append(result.kind)
        if len(kinds) == 1:  # C syncs while B is between its pull and its push
            other = Context(c.root, author="C", recorder_factory=recorder_for)
            real_pull(other)
            sync_module.push(other)
        return result
    monkeypatch.setattr(sync_module, "pull", racing_pull)
    result = b.ok("sync")
    assert kinds == ["merge", "merge"]
    assert "push: sent 3 commits to origin" in result.stdout  # its write and its two merges
    assert bare_head(bare) == b.head()
    assert b.is_ancestor(c.head()) and b.is_ancestor(a.head())
    monkeypatch.undo()
    sync_until_converged([a, b, c], bare)
    assert set(a.entries()) == {"seed", "from_a", "from_b", "from_c"}


def test_sync_gives_up_when_the_remote_keeps_moving_for_its_whole_timeout(tmp_path, monkeypatch):
    bare, (a, b) = network(tmp_path, "A", "B")
    b.ok("set", "k", "v")
    pushes = []

    def always_moved(ctx, remote_name=None, **options):
        pushes.append(time.monotonic())
        raise Behind("origin has changes this machine lacks: run `ctx sync`")
    monkeypatch.setattr(sync_module, "push", always_moved)
    began = time.monotonic()
    result = b.run("sync", "--timeout", "1.5")
    took = time.monotonic() - began
    assert result.exit_code == 4, result.stderr
    assert "kept moving" in result.stderr and "--timeout" in result.stderr
    assert len(pushes) >= 4 and 1.5 <= took < 5, (len(pushes), took)  # bounded by time, not by a count
    gaps = [later - earlier for earlier, later in zip(pushes, pushes[1:], strict=False)]
    assert len(set(round(g, 3) for g in gaps)) > 1  # paused between tries, and not all alike


def test_a_remote_branch_lock_is_waited_for_a_while_then_named(tmp_path, monkeypatch):
    from ctxgit.plumbing.locks import lock_error
    from ctxgit.sync.transport import RemoteBusy
    bare, (a, b) = network(tmp_path, "A", "B")
    b.ok("set", "k", "v")
    tries = []

    def busy(ctx, remote_name=None, **options):
        tries.append(1)
        if len(tries) < 3:  # another push holds the branch for a moment
            raise RemoteBusy("busy", lock_error("origin could not take the push", str(bare / "refs/heads/main.lock")))
        return real_push(ctx, remote_name, **options)
    real_push = sync_module.push
    monkeypatch.setattr(sync_module, "push", busy)
    assert b.ok("sync").stdout.endswith("push: sent 1 commit to origin\n")
    assert bare_head(bare) == b.head() and len(tries) == 3
    monkeypatch.setattr(sync_module, "LOCK_PATIENCE", 0.3)
    tries.clear()
    b.ok("set", "k2", "v")

    def stuck(ctx, remote_name=None, **options):
        tries.append(1)
        raise RemoteBusy("busy", lock_error("origin could not take the push", str(bare / "refs/heads/main.lock")))
    monkeypatch.setattr(sync_module, "push", stuck)
    result = b.run("sync")
    assert result.exit_code == 6 and "main.lock is in the way" in result.stderr, result.stderr
    assert len(tries) >= 2


@pytest.mark.slow
def test_remote_add_and_remote_v_list_the_url(tmp_path):
    m = Machine(tmp_path / "m", "M")
    m.sh("init")
    (tmp_path / "remotes").mkdir()
    make_bare(tmp_path / "remotes" / "usb ctx.git")
    out = m.sh("remote", "add", "usb", "remotes/usb ctx.git", cwd=tmp_path).stdout
    assert out.startswith("added remote usb")
    expected = str((tmp_path / "remotes" / "usb ctx.git").absolute())
    assert m.sh("remote").stdout == "usb\n"
    assert m.sh("remote", "-v").stdout == f"usb\t{expected}\n"
    m.sh("remote", "add", "server", "git@example.invalid:me/ctx.git")
    assert sorted(m.sh("remote", "-v").stdout.splitlines()) == [
        "server\tgit@example.invalid:me/ctx.git", f"usb\t{expected}"]
    assert sorted(m.sh("remote").stdout.split()) == ["server", "usb"]
    again = m.sh("remote", "add", "usb", "/elsewhere", check=False)
    assert again.returncode == 2 and "exists already" in again.stderr
    # two remotes, no upstream: a pull must be told which
    pulled = m.sh("pull", check=False)
    assert pulled.returncode == 2 and "several remotes" in pulled.stderr


def test_pull_without_any_remote_says_how_to_add_one(tmp_path):
    m = Machine(tmp_path / "m", "M")
    m.ok("set", "k", "v")
    result = m.run("pull")
    assert result.exit_code == 2
    assert "ctx remote add" in result.stderr


@pytest.mark.slow
def test_a_remote_that_is_gone_is_one_clear_line_and_changes_nothing(tmp_path, transport):
    bare, (a,) = network(tmp_path, "A")
    a.ok("set", "k", "v")
    head = a.head()
    bare.rename(tmp_path / "unplugged.git")  # the USB disk is not mounted
    for command in ("pull", "push", "sync"):
        done = a.sh(command, check=False)
        assert done.returncode == 6, (transport, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ctx: cannot fetch from origin (") and \
            str(bare) in lines[0], (transport, done.stderr)
    assert a.head() == head and a.entries()["k"]["value"] == "v"
    (tmp_path / "unplugged.git").rename(bare)  # plugged in again
    a.ok("sync")
    assert bare_head(bare) == a.head()
    assert not (a.root / ".git" / "ctx" / "remote-op").exists()


@pytest.mark.slow
def test_a_push_the_remote_refuses_is_reported_and_not_retried_as_a_race(tmp_path, transport):
    if transport == "libgit2":
        pytest.skip("libgit2 pushes to a local path in process: the remote's hooks never run")
    bare, (a,) = network(tmp_path, "A")
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'policy: no pushes today' >&2\nexit 1\n")
    hook.chmod(0o755)
    a.ok("set", "k", "v")
    for command in ("push", "sync"):
        done = a.sh(command, check=False)
        assert done.returncode == 4 and "kept moving" not in done.stderr, done.stderr
        assert done.stderr.strip().splitlines()[-1] == \
            "ctx: origin refused the push (pre-receive hook declined): policy: no pushes today", done.stderr


# --- clone --------------------------------------------------------------------------------

def test_clone_from_an_empty_bare_repository_gives_a_new_context_that_pushes_there(tmp_path):
    bare = make_bare(tmp_path / "empty.git")
    a = Machine(tmp_path / "machine A", "A")
    out = a.ok("clone", str(bare), str(a.root)).stdout
    assert out.startswith(f"an empty remote: a new context at {a.root}")
    assert {"RULES.md", ".gitignore", ".gitattributes"} <= set(a.git_out("ls-files").split())
    assert (a.root / ".git" / "hooks" / "pre-commit").exists()
    assert a.git_out("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert a.git_out("config", "branch.main.remote").strip() == "origin"
    assert a.status() == []
    a.ok("set", "k", "v")
    a.ok("push")
    assert bare_head(bare) == a.head()
    b = clone_machine(bare, tmp_path / "machine B", "B")
    assert b.head() == a.head() and b.entry("k")["value"] == "v"
    assert_converged([a, b], bare)


@pytest.mark.slow
def test_clone_takes_main_when_the_bare_head_names_a_missing_master(tmp_path):
    bare = make_bare(tmp_path / "remote.git")
    assert (bare / "HEAD").read_text().strip() == "ref: refs/heads/master"
    m = Machine(tmp_path / "first", "First")
    m.ok("set", "k", "v")
    m.ok("remote", "add", "origin", str(bare))
    m.ok("push")
    assert (bare / "HEAD").read_text().strip() == "ref: refs/heads/master"
    refs = json.dumps(sorted(p.name for p in (bare / "refs" / "heads").iterdir()))
    assert refs == '["main"]'
    b = Machine(tmp_path / "second", "Second")
    out = b.sh("clone", str(bare), str(b.root)).stdout  # the real executable
    assert out.startswith(f"cloned at {b.root}")
    assert b.git_out("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert b.head() == m.head()
    assert b.entry("k")["value"] == "v"
    assert b.status() == []
    b.sh("set", "k2", "w")
    b.sh("sync")
    assert bare_head(bare) == b.head()


def test_clone_refuses_a_directory_that_is_not_empty(tmp_path):
    bare = make_bare(tmp_path / "remote.git")
    target = tmp_path / "busy"
    target.mkdir()
    (target / "file").write_text("mine")
    result = Machine(target, "X").run("clone", str(bare), str(target))
    assert result.exit_code == 3
    assert (target / "file").read_text() == "mine"
    assert not (target / ".git").exists()


def test_clone_refuses_a_remote_whose_store_has_another_format_version(tmp_path):
    bare, (a,) = network(tmp_path, "A")
    work = plain_clone(bare, tmp_path / "by hand")
    path = work / "memory" / "shared.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["version"] = "2"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    plain_commit_and_push(work, "a newer format")
    b = Machine(tmp_path / "machine B", "B")
    result = b.run("clone", str(bare), str(b.root))
    assert result.exit_code == 4
    assert "format version '2'" in result.stderr
    assert not (b.root / "memory" / "shared.json").exists()


@pytest.mark.slow
def test_a_sync_interrupted_between_its_merge_and_its_push_is_finished_by_a_rerun(tmp_path, monkeypatch):
    bare, (a, b) = network(tmp_path, "A", "B")
    a.ok("set", "from_a", "v1")
    a.ok("push")
    b.ok("set", "from_b", "v2")
    real_push = sync_module.push
    with monkeypatch.context() as patch:
        def lost_connection(ctx, remote_name=None, **options):
            from ctx.errors import GitError
            raise GitError("cannot push to origin: simulated network failure")
        patch.setattr(sync_module, "push", lost_connection)
        result = b.run("sync")
    assert result.exit_code == 6 and "simulated network failure" in result.stderr
    merged = b.head()
    assert len(commit_parents(b)) == 2 and b.status() == []
    assert bare_head(bare) == a.head()
    assert sync_module.push is real_push
    result = b.ok("sync")
    assert result.stdout.startswith("pull: up to date")
    assert b.head() == merged and bare_head(bare) == merged
    a.ok("sync")
    assert_converged([a, b], bare)


def test_sync_with_an_empty_remote_pushes_the_whole_context_there(tmp_path):
    m = Machine(tmp_path / "solo", "Solo")
    m.ok("set", "k", "v")
    bare = make_bare(tmp_path / "backup.git")
    m.ok("remote", "add", "backup", str(bare))
    out = m.ok("sync").stdout
    assert out.startswith("pull: nothing to pull")
    assert "push: sent 1 commit to backup" in out
    again = m.ok("sync").stdout
    assert again == "pull: up to date (backup had nothing new)\npush: backup already had everything\n", again
    assert bare_head(bare) == m.head()
    assert m.git_out("config", "branch.main.remote").strip() == "backup"


def test_a_refused_clone_leaves_nothing_that_blocks_a_rerun(tmp_path):
    bare, (a,) = network(tmp_path, "A")
    work = plain_clone(bare, tmp_path / "by hand")
    path = work / "memory" / "shared.json"
    good = path.read_text(encoding="utf-8")
    path.write_text(good.replace('"version": "1"', '"version": "2"'), encoding="utf-8")
    plain_commit_and_push(work, "a newer format")
    b = Machine(tmp_path / "machine B", "B")
    assert b.run("clone", str(bare), str(b.root)).exit_code == 4
    path.write_text(good, encoding="utf-8")  # the remote is put right
    plain_commit_and_push(work, "back to format 1")
    result = b.run("clone", str(bare), str(b.root))
    assert result.exit_code == 0, result.stderr
    assert b.entry("seed")["value"] == "shared by everyone"
