"""Reading the past: ``history``, ``log``, ``diff``, ``get --at`` and ``revert``,
through the library (ctxgit) and the command line (CliRunner and the real
``ctx`` executable)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from support.clock import injected_clock
from support.gitutil import (
    CTX_EXE,
    author,
    changed_paths,
    commit_count,
    commit_ids,
    git_env,
    git_out,
    message,
    run_ctx,
    show_file,
    status_lines,
    subject,
    trailers,
)
from support.stores import make_entry, snapshot, store_path

STEPS = [  # name, command, author
    ("init", ["init"], None),
    ("set1", ["set", "k", "first value", "--tag", "decision"], "Agent One"),
    ("set2", ["set", "k", "second value"], "Agent Two"),
    ("amend", ["amend", "k", "port is 8443"], "Agent One"),
    ("agent", ["set", "k", "the agent store's k", "--store", "agent"], "Agent Two"),
    ("other", ["set", "other", "unrelated"], None),
    ("delete", ["delete", "k"], "Agent One"),
    ("reborn", ["set", "k", "born again"], "Agent Two"),
]
K_VERSIONS = ["reborn", "delete", "amend", "set2", "set1"]  # newest first


@pytest.fixture
def timeline(run, root) -> dict[str, str]:
    """The commit id after each step of STEPS."""
    ids = {}
    for name, args, who in STEPS:
        result = run(*args, author=who)
        assert result.exit_code == 0, (name, result.output)
        ids[name] = commit_ids(root)[0]
    assert len(set(ids.values())) == len(STEPS)
    return ids


def entry_at(root: Path, rev: str, key: str, store: str = "shared") -> dict | None:
    return json.loads(show_file(root, rev, f"memory/{store}.json"))["entries"].get(key)


def short(commit: str) -> str:
    return commit[:8]


# --- history ------------------------------------------------------------------------------

def test_history_library_every_version_newest_first(root, timeline):
    from ctxgit.porcelain.history import history
    versions = history(root, "k")
    assert [v.info.id for v in versions] == [timeline[n] for n in K_VERSIONS]
    assert [v.as_json()["event"] for v in versions] == ["created", "deleted", "changed",
                                                        "changed", "created"]
    assert [v.info.operation for v in versions] == ["set", "delete", "amend", "set", "set"]
    assert [v.info.author for v in versions] == ["Agent Two", "Agent One", "Agent One",
                                                 "Agent Two", "Agent One"]
    assert versions[1].deleted and versions[1].entry is None
    for v in versions:
        assert v.store == "shared" and v.key == "k"
        if not v.deleted:
            assert v.entry == entry_at(root, v.info.id, "k")
    assert versions[2].entry["status"] == "amended"
    assert versions[2].entry["value"].startswith("[Amended ")
    assert versions[2].entry["value"].endswith("]\nsecond value")
    # a limit cuts after ordering
    assert [v.info.id for v in history(root, "k", limit=2)] == [timeline["reborn"],
                                                                 timeline["delete"]]


def test_history_library_in_several_stores(root, timeline):
    from ctxgit.porcelain.history import history
    both = history(root, "k", ["shared", "agent"])
    assert [(v.store, v.info.id) for v in both] == (
        [("shared", timeline["reborn"]), ("shared", timeline["delete"]),
         ("agent", timeline["agent"])]
        + [("shared", timeline[n]) for n in ("amend", "set2", "set1")])
    assert [v.info.id for v in history(root, "k", ["agent"])] == [timeline["agent"]]
    assert [v.info.id for v in history(root, "other")] == [timeline["other"]]


def test_history_library_never_seen_is_not_found(root, timeline):
    from ctx.errors import NotFound
    from ctxgit.porcelain.history import history
    with pytest.raises(NotFound):
        history(root, "never")
    with pytest.raises(NotFound):
        history(root, "other", ["agent", "operator"])


def test_history_cli_human(run, timeline):
    result = run("history", "k")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 5
    for line, name in zip(lines, K_VERSIONS, strict=False):
        assert line.startswith(short(timeline[name]) + "  ")
    assert "Agent Two" in lines[0] and "created" in lines[0] and lines[0].endswith("born again")
    assert "Agent One" in lines[1] and lines[1].endswith("deleted")
    assert lines[2].endswith("amend: 'port is 8443'")  # what the amend changed: its note
    assert "second value" not in lines[2]  # not the old value again
    assert lines[4].endswith("first value") and "created" in lines[4]
    assert result.stderr == ""


def test_history_cli_json_verbose_limit_and_stores(run, root, timeline):
    rows = json.loads(run("history", "k", "--json").stdout)
    assert [r["commit"] for r in rows] == [timeline[n] for n in K_VERSIONS]
    first = rows[0]
    assert set(first) >= {"commit", "date", "author", "email", "operation", "store", "key",
                          "event", "status", "entry", "subject", "stores", "keys"}
    assert (first["author"], first["email"]) == ("Agent Two", "agent-two@ctx.invalid")
    assert first["operation"] == "set" and first["event"] == "created"
    assert first["entry"] == entry_at(root, "HEAD", "k")
    assert first["subject"] == "set shared/k: born again"
    assert first["stores"] == ["shared"] and first["keys"] == ["k"]
    assert datetime.strptime(first["date"], "%Y-%m-%dT%H:%M:%SZ")
    assert rows[1]["event"] == "deleted" and rows[1]["entry"] is None
    assert rows[2]["status"] == "amended" and rows[2]["operation"] == "amend"
    # -v shows the whole value, amend note included
    verbose = run("history", "k", "-v").stdout
    assert "[Amended " in verbose and "port is 8443]\nsecond value" in verbose
    # -n
    assert len(run("history", "k", "-n", "2").stdout.splitlines()) == 2
    # another store, and every store
    agent = run("history", "k", "--store", "agent").stdout.splitlines()
    assert len(agent) == 1 and agent[0].startswith(short(timeline["agent"]))
    every = run("history", "k", "--all-stores").stdout.splitlines()
    assert len(every) == 6 and sum("agent/k" in line for line in every) == 1


def test_history_of_a_key_never_seen_exits_1(run, timeline):
    for args in (["history", "never"], ["history", "other", "--store", "agent"],
                 ["history", "never", "--all-stores", "--json"]):
        result = run(*args)
        assert result.exit_code == 1, args
        assert result.stdout == ""
        assert result.stderr.startswith("ctx: ") and repr(args[1]) in result.stderr


def test_history_without_commits_exits_1(run, root):
    assert run("history", "k").exit_code == 1
    assert run("set", "k", "v", env={"CTX_NO_GIT": "1"}).exit_code == 0
    result = run("history", "k")
    assert result.exit_code == 1 and "no history" in result.stderr


def test_history_shows_outside_edits_and_reverts(run, root, write_store):
    assert run("set", "k", "by ctx").exit_code == 0
    write_store("shared", {"k": make_entry("edited by hand")})
    assert run("set", "x", "y").exit_code == 0  # commits the edit as found, then itself
    assert run("revert", "HEAD~1").exit_code == 0  # undo the outside edit
    rows = json.loads(run("history", "k", "--json").stdout)
    assert [(r["operation"], r["author"], r["entry"]["value"]) for r in rows] == [
        ("revert", "operator", "by ctx"),
        ("external", "system", "edited by hand"),
        ("set", "operator", "by ctx"),
    ]
    assert [r["event"] for r in rows] == ["changed", "changed", "created"]


def test_history_reads_store_files_in_any_layout(run, root):
    """Outside edits in another layout, keys only nested in values, non-ASCII keys."""
    assert run("set", "k", "v1").exit_code == 0
    assert run("set", "schlüssel", "wert").exit_code == 0
    assert run("set", "k", "v2").exit_code == 0
    data = json.loads(store_path(root).read_text())
    data["entries"]["k"]["value"] = "compact"
    data["entries"]["k9"] = make_entry("nine")
    data["entries"]["holder"] = make_entry({"zz": {"k": "nested"}})
    store_path(root).write_text(json.dumps(data, separators=(",", ":")))  # one line
    assert run("set", "a", "1", "--store", "agent").exit_code == 0
    data["entries"]["k"]["value"] = "indented"
    store_path(root).write_text(json.dumps(data, indent=2, ensure_ascii=False))  # ctx's layout
    assert run("set", "a", "2", "--store", "agent").exit_code == 0
    from ctxgit.porcelain.history import history
    assert [v.entry["value"] for v in history(root, "k")] == ["indented", "compact", "v2", "v1"]
    assert [v.entry["value"] for v in history(root, "k9")] == ["nine"]
    assert [v.entry["value"] for v in history(root, "schlüssel")] == ["wert"]
    assert run("history", "zz").exit_code == 1  # only a member of a value, never an entry
    assert run("get", "zz", "--at", "HEAD").exit_code == 1


def test_as_of_reads_do_not_take_unknown_top_level_members_for_entries(run, root):
    assert run("init").exit_code == 0
    store_path(root).write_text(
        '{\n  "type": "shared",\n  "version": "1",\n  "last_updated": "2026-01-01T00:00:00Z",\n'
        '  "entries": {},\n  "x_index": {\n    "k": {"value": "not an entry"}\n  }\n}\n')
    assert run("set", "a", "1", "--store", "agent").exit_code == 0
    assert run("get", "k").exit_code == 1
    assert run("get", "k", "--at", "HEAD").exit_code == 1
    assert run("history", "k").exit_code == 1


# --- log ------------------------------------------------------------------------------------

def test_log_library_and_cli(run, root, timeline):
    from ctxgit.porcelain.history import log
    rows = log(root)
    assert [r.id for r in rows] == commit_ids(root)
    assert [r.operation for r in rows] == ["set", "delete", "set", "set", "amend", "set", "set",
                                           "init"]
    assert rows[0].keys == ["k"] and rows[0].stores == ["shared"]
    assert rows[-1].subject == "init: context root"
    human = run("log").stdout.splitlines()
    assert len(human) == len(STEPS)
    for line, commit in zip(human, commit_ids(root), strict=False):
        assert line.startswith(short(commit) + "  ")
        assert line.endswith(subject(root, commit))
    assert "Agent Two" in human[0] and "operator" in human[-1]
    data = json.loads(run("log", "--json").stdout)
    assert [d["commit"] for d in data] == commit_ids(root)
    assert set(data[0]) == {"commit", "date", "author", "email", "committer", "committer_email",
                            "operation", "stores", "keys", "subject"}
    assert data[4] == {**data[4], "author": "Agent One", "operation": "amend",
                       "stores": ["shared"], "keys": ["k"],
                       "subject": "amend shared/k: port is 8443"}


def test_log_filters(run, root, timeline):
    def ids(*args):
        result = run("log", "--json", *args)
        assert result.exit_code == 0, result.output
        return [d["commit"] for d in json.loads(result.stdout)]
    assert ids("k") == [timeline[n] for n in ("reborn", "delete", "agent", "amend", "set2", "set1")]
    assert ids("k", "--store", "agent") == [timeline["agent"]]
    assert ids("k", "--store", "shared") == [timeline[n] for n in K_VERSIONS]
    assert ids("-n", "3") == commit_ids(root)[:3]
    assert ids("k", "-n", "2") == [timeline["reborn"], timeline["delete"]]
    assert ids("--author", "agent one") == [timeline[n] for n in ("delete", "amend", "set1")]
    assert ids("--author", "agent-two@ctx") == [timeline[n] for n in ("reborn", "agent", "set2")]
    assert ids("--author", "Agent Two", "-n", "1") == [timeline["reborn"]]
    assert ids("--author", "nobody") == []
    assert ids("--since", "2999-01-01") == []
    assert ids("--since", "2000-01-01") == commit_ids(root)
    never = run("log", "never")  # as `ctx history never`: a key no commit held is an error
    assert never.exit_code == 1 and "no history for 'never'" in never.output


def test_log_store_lists_only_commits_touching_that_store(run, root, write_store):
    assert run("init").exit_code == 0
    assert run("set", "p", "1", "--store", "operator").exit_code == 0
    assert run("set", "a", "1", "--store", "agent").exit_code == 0
    write_store("agent", {"hand": make_entry("by hand")})
    assert run("set", "s", "1").exit_code == 0  # commits the agent edit first
    rows = json.loads(run("log", "--store", "operator", "--json").stdout)
    assert [r["subject"] for r in rows] == ["set operator/p: 1"]


def test_log_without_a_repository_is_empty(run, root):
    result = run("log")
    assert result.exit_code == 0 and result.stdout == ""
    assert run("log", "--json").stdout.strip() == "[]"


# --- diff -------------------------------------------------------------------------------------

def test_diff_between_commits_library_and_json(run, root, timeline):
    from ctxgit.porcelain.diff import diff
    d = diff(root, timeline["set2"], timeline["amend"])
    assert [(e.store, e.key, e.kind) for e in d.entries] == [("shared", "k", "changed")]
    fields = d.entries[0].fields()
    assert set(fields) >= {"value", "status", "status_timestamp"}
    assert fields["value"][0] == "second value"
    assert fields["status"] == (None, "amended")
    result = run("diff", short(timeline["set1"]), timeline["reborn"], "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["from"] == timeline["set1"][:7] and data["to"] == timeline["reborn"][:7]
    changes = {(c["store"], c["key"]): c for c in data["changes"]}
    assert set(changes) == {("shared", "k"), ("agent", "k"), ("shared", "other")}
    assert changes["agent", "k"]["change"] == "added"
    assert changes["agent", "k"]["entry"]["value"] == "the agent store's k"
    assert changes["shared", "other"]["change"] == "added"
    assert changes["shared", "k"]["change"] == "changed"
    assert changes["shared", "k"]["fields"]["value"] == {"old": "first value", "new": "born again"}
    assert changes["shared", "k"]["fields"]["tags"] == {"old": ["decision"], "new": []}
    # the order: store (operator, shared, agent), then key
    assert [(c["store"], c["key"]) for c in data["changes"]] == [
        ("shared", "k"), ("shared", "other"), ("agent", "k")]
    only = json.loads(run("diff", timeline["set1"], timeline["reborn"], "--store", "agent",
                          "--json").stdout)
    assert [(c["store"], c["key"]) for c in only["changes"]] == [("agent", "k")]


def test_diff_cli_human(run, root, timeline):
    result = run("diff", timeline["agent"], timeline["delete"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (f"diff {timeline['agent'][:7]}..{timeline['delete'][:7]}: "
                        "2 entries changed")
    assert "- shared/k: second value" in lines  # removed: the value, notes stripped
    assert "+ shared/other: unrelated" in lines
    changed = run("diff", "HEAD~1", "HEAD").stdout.splitlines()
    assert changed[1] == "+ shared/k: born again"
    amended = run("diff", timeline["set2"], timeline["amend"]).stdout.splitlines()
    assert amended[1] == "~ shared/k"
    assert "    status: (none) -> amended" in amended
    assert any(line.startswith("    value: second value -> ") for line in amended)


def test_diff_against_the_working_tree_shows_outside_edits(run, root, timeline, write_store):
    clean = run("diff")
    assert clean.exit_code == 0
    assert clean.stdout.splitlines() == [f"diff {timeline['reborn'][:7]}..working tree: "
                                         "0 entries changed"]
    write_store("shared", {"hand": make_entry("by hand")})
    data = json.loads(run("diff", "--json").stdout)
    assert data["to"] == "working tree"
    assert [(c["key"], c["change"]) for c in data["changes"]] == [("hand", "added")]
    # from an older commit to the disk
    data = json.loads(run("diff", "HEAD~2", "--json").stdout)
    assert sorted(c["key"] for c in data["changes"]) == ["hand", "k"]


def test_diff_errors(run, root, timeline):
    assert run("diff", "nonesuch").exit_code == 1
    assert run("diff", "HEAD~99").exit_code == 1
    assert run("diff", "HEAD", "nonesuch").exit_code == 1
    assert run("diff", "--since", "yesterday").exit_code == 2


# --- get --at -----------------------------------------------------------------------------------

def test_get_at_a_commit_id_and_head_n(run, root, timeline):
    def value(*args):
        result = run("get", "k", "--json", *args)
        assert result.exit_code == 0, (args, result.output)
        return json.loads(result.stdout)["entry"]["value"]
    assert value("--at", timeline["set1"]) == "first value"
    assert value("--at", short(timeline["set2"])) == "second value"
    assert value("--at", timeline["set2"][:12]) == "second value"
    assert value("--at", "HEAD") == "born again"
    assert value("--at", "HEAD~2").startswith("[Amended ")
    assert value("--at", "HEAD~5") == "second value"
    assert value("--at", "HEAD~6") == "first value"
    assert value("--at", "HEAD~2", "--store", "agent") == "the agent store's k"
    # the whole entry, as committed
    got = json.loads(run("get", "k", "--at", timeline["amend"], "--json").stdout)
    assert got == {"store": "shared", "key": "k", "entry": entry_at(root, timeline["amend"], "k")}
    # every store that had it then
    every = json.loads(run("get", "k", "--at", timeline["other"], "--all", "--json").stdout)
    assert [(r["store"], r["entry"]["status"] if "status" in r["entry"] else None) for r in every] \
        == [("shared", "amended"), ("agent", None)]
    # the human form names store, key and status
    human = run("get", "k", "--at", timeline["amend"]).stdout
    assert human.startswith("shared/k [amended]\n[Amended ")


def test_get_at_when_the_entry_did_not_exist_exits_1(run, root, timeline):
    assert run("get", "k", "--at", timeline["init"]).exit_code == 1
    gone = run("get", "k", "--at", timeline["delete"])
    assert gone.exit_code == 1 and gone.stdout == ""
    assert "ctx: " in gone.stderr
    assert run("get", "k", "--at", "nonesuch").exit_code == 1
    assert run("get", "k", "--at", "HEAD~50").exit_code == 1
    assert run("get", "k", "--at", "1999-01-01").exit_code == 1
    assert run("get", "other", "--at", "HEAD", "--store", "agent").exit_code == 1
    # deleted now, still readable as it was
    assert run("delete", "k").exit_code == 0
    assert run("get", "k").exit_code == 1
    assert run("get", "k", "--at", "HEAD~1").exit_code == 0


def test_get_at_log_since_and_diff_since_by_time(run, root, monkeypatch):
    clock = injected_clock(monkeypatch)  # commit times are whole seconds: the clock moves one on
    assert run("set", "k", "morning").exit_code == 0
    assert run("set", "j", "early").exit_code == 0
    early = commit_ids(root)[0]
    clock.tick()
    assert run("set", "k", "afternoon").exit_code == 0
    late = commit_ids(root)[0]
    t_early = int(git_out(root, "log", "-1", "--format=%ct", early))
    t_late = int(git_out(root, "log", "-1", "--format=%ct", late))
    assert t_late > t_early

    def stamp(seconds: int) -> str:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    def value(at: str) -> str:
        result = run("get", "k", "--at", at, "--json")
        assert result.exit_code == 0, (at, result.output)
        return json.loads(result.stdout)["entry"]["value"]
    assert value(stamp(t_early)) == "morning"
    assert value(stamp(t_late - 1)) == "morning"
    assert value(stamp(t_late)) == "afternoon"
    assert value(stamp(t_late).replace("Z", "+00:00")) == "afternoon"
    today = stamp(t_late)[:10]
    assert value(today) == "afternoon"  # a day means its end
    assert run("get", "k", "--at", stamp(t_early - 3600)).exit_code == 1  # before the history
    # log --since: at or after
    rows = json.loads(run("log", "--since", stamp(t_late), "--json").stdout)
    assert [r["commit"] for r in rows] == [late]
    # diff --since: from the last state before the time
    data = json.loads(run("diff", "--since", stamp(t_late), "--json").stdout)
    assert data["from"] == early[:7]
    assert [(c["key"], c["fields"]["value"]) for c in data["changes"]] == [
        ("k", {"old": "morning", "new": "afternoon"})]
    # a date as REV of diff: the last commit of that day
    assert json.loads(run("diff", today, "--json").stdout)["from"] == late[:7]


def test_entries_as_of_library(root, timeline):
    from ctx.errors import NotFound
    from ctxgit.porcelain.history import entries_as_of
    found = entries_as_of(root, "k", ["shared", "agent", "operator"], "HEAD~3")
    assert [(r.store, r.key) for r in found] == [("shared", "k"), ("agent", "k")]
    assert found[0].entry == entry_at(root, timeline["amend"], "k")
    assert found[0].entry["status"] == "amended"
    assert found[1].entry == entry_at(root, timeline["agent"], "k", "agent")
    assert [r.entry["value"] for r in entries_as_of(root, "k", ["shared"], timeline["set1"])] \
        == ["first value"]
    with pytest.raises(NotFound):
        entries_as_of(root, "k", ["operator"], "HEAD")


# --- revert -------------------------------------------------------------------------------------

def test_revert_a_set_an_amend_and_a_delete(run, root, timeline):
    def k_now():
        return json.loads(store_path(root).read_text())["entries"].get("k")
    reborn = entry_at(root, timeline["reborn"], "k")
    assert k_now() == reborn
    # an amend: the value and status fields as they were
    assert run("amend", "k", "temporary note").exit_code == 0
    assert k_now()["status"] == "amended"
    assert run("revert", "HEAD").exit_code == 0
    assert k_now() == reborn
    # a delete: the entry comes back as it was
    assert run("delete", "k").exit_code == 0
    assert k_now() is None
    assert run("revert", "HEAD").exit_code == 0
    assert k_now() == reborn
    assert entry_at(root, "HEAD", "k") == reborn
    # a set that created an entry: the entry goes
    count = commit_count(root)
    result = run("revert", timeline["other"], author="Agent One")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"reverted {short(timeline['other'])}: shared/other"
    assert commit_count(root) == count + 1
    assert "other" not in json.loads(store_path(root).read_text())["entries"]
    head_message = message(root)
    assert subject(root) == f"revert {short(timeline['other'])}: set shared/other: unrelated"
    assert ("Ctx-Operation", "revert") in trailers(head_message)
    assert ("Ctx-Revert-Of", timeline["other"]) in trailers(head_message)
    assert author(root) == ("Agent One", "agent-one@ctx.invalid")
    assert changed_paths(root, "HEAD") == ["memory/shared.json"]
    # the reverted commit stays in the history
    assert timeline["other"] in commit_ids(root)
    assert status_lines(root) == []


def test_revert_json_and_revert_of_a_revert(run, root, timeline):
    result = run("revert", "HEAD", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["reverted"] == short(timeline["reborn"])
    assert data["entries"] == [{"store": "shared", "key": "k", "entry": None}]
    assert "k" not in json.loads(store_path(root).read_text())["entries"]
    again = json.loads(run("revert", "HEAD", "--json").stdout)
    assert again["entries"][0]["entry"] == entry_at(root, timeline["reborn"], "k")
    assert json.loads(store_path(root).read_text())["entries"]["k"] == \
        entry_at(root, timeline["reborn"], "k")


def test_revert_an_outside_change_across_stores(run, root, write_store):
    assert run("set", "s", "1").exit_code == 0
    write_store("shared", {"hand": make_entry("by hand")})
    write_store("operator", {"pref": make_entry("terse", source="operator")})
    assert run("set", "a", "1", "--store", "agent").exit_code == 0
    outside = commit_ids(root)[1]
    assert subject(root, outside).startswith("external change:")
    result = run("revert", outside, "--json")
    assert result.exit_code == 0, result.output
    assert sorted((e["store"], e["key"]) for e in json.loads(result.stdout)["entries"]) == [
        ("operator", "pref"), ("shared", "hand")]
    assert sorted(changed_paths(root, "HEAD")) == ["memory/operator.json", "memory/shared.json"]
    assert "hand" not in json.loads(store_path(root).read_text())["entries"]
    assert json.loads(store_path(root, "operator").read_text())["entries"] == {}
    assert ("Ctx-Key", "operator/pref") in trailers(message(root))


def test_revert_refuses_when_a_later_commit_changed_the_entry(run, root, timeline):
    before = snapshot(root)
    count = commit_count(root)
    for rev in (timeline["set1"], timeline["set2"], timeline["amend"], timeline["delete"]):
        result = run("revert", rev)
        assert result.exit_code == 4, (rev, result.output)
        assert "shared/k" in result.stderr and result.stderr.startswith("ctx: ")
        assert result.stdout == ""
    assert commit_count(root) == count
    assert snapshot(root) == before  # nothing changed, .git included
    # an entry nobody changed since can be reverted
    assert run("revert", timeline["agent"]).exit_code == 0


def test_revert_errors(run, root, timeline):
    before = snapshot(root)
    nothing = run("revert", timeline["init"])
    assert nothing.exit_code == 2 and "nothing to revert" in nothing.stderr
    assert run("revert", "nonesuch").exit_code == 1
    assert run("revert", "HEAD~40").exit_code == 1
    assert snapshot(root) == before


def test_revert_without_history(run, root):
    assert run("revert", "HEAD").exit_code == 1
    assert not root.exists()


# --- the real executable ------------------------------------------------------------------------

@pytest.mark.slow
def test_history_log_and_get_at_in_a_real_process(run, root):
    for args, who in ((["set", "k", "one"], "Agent One"), (["set", "k", "two"], None),
                      (["delete", "k"], "Agent One")):
        assert run(*args, author=who).exit_code == 0
    done = run_ctx("set", "k", "three", env={"CTX_AUTHOR": None})
    assert done.returncode == 0, done.stderr
    ids = commit_ids(root)
    assert len(ids) == 4
    done = run_ctx("history", "k", "--json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [(r["event"], r["author"]) for r in rows] == [
        ("created", "operator"), ("deleted", "Agent One"), ("changed", "operator"),
        ("created", "Agent One")]
    assert [r["commit"] for r in rows] == ids
    human = run_ctx("history", "k").stdout.splitlines()
    assert [line[:8] for line in human] == [i[:8] for i in ids]
    log = json.loads(run_ctx("log", "--json", "--author", "agent one").stdout)
    assert [r["commit"] for r in log] == [ids[1], ids[3]]
    got = run_ctx("get", "k", "--at", "HEAD~2")
    assert got.returncode == 0 and got.stdout.startswith("shared/k\ntwo\n")
    missing = run_ctx("history", "never")
    assert missing.returncode == 1 and missing.stdout == "" and missing.stderr.startswith("ctx: ")
    assert run_ctx("get", "k", "--at", ids[1]).returncode == 1


@pytest.mark.slow
def test_diff_and_revert_in_a_real_process(root):
    for args in (["set", "k", "one"], ["set", "k", "two"], ["set", "j", "x"]):
        done = run_ctx(*args)
        assert done.returncode == 0, done.stderr
    diff = run_ctx("diff", "HEAD~2", "HEAD")
    assert diff.returncode == 0, diff.stderr
    assert diff.stdout.splitlines()[:2] == [
        f"diff {commit_ids(root)[2][:7]}..{commit_ids(root)[0][:7]}: 2 entries changed",
        "+ shared/j: x"]
    before = snapshot(root)
    refused = run_ctx("revert", "HEAD~2")  # k was set again since
    assert refused.returncode == 4, refused.stderr
    assert snapshot(root) == before
    done = run_ctx("revert", "HEAD~1", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["entries"][0]["entry"]["value"] == "one"
    assert json.loads(store_path(root).read_text())["entries"]["k"]["value"] == "one"
    assert status_lines(root) == []


def _other_interpreter_path() -> Path:
    """The venv's interpreter under a name other than the one the ``ctx`` script runs."""
    shebang = CTX_EXE.read_text().splitlines()[0][2:].strip()
    bindir = Path(sys.executable).parent
    for name in ("python", "python3", f"python3.{sys.version_info.minor}"):
        if (bindir / name).exists() and str(bindir / name) != shebang:
            return bindir / name
    pytest.skip("no second name for the interpreter")


@pytest.mark.slow
def test_a_refused_revert_changes_nothing_whatever_the_interpreter_path(root):
    for args in (["set", "k", "one"], ["set", "k", "two"]):
        done = run_ctx(*args)
        assert done.returncode == 0, done.stderr
    before = snapshot(root)
    refused = subprocess.run([str(_other_interpreter_path()), "-m", "ctx", "revert", "HEAD~1"],
                             env=git_env(), capture_output=True, text=True, timeout=60)
    assert refused.returncode == 4, refused.stderr
    assert snapshot(root) == before


# --- purge: the bytes a write would have left ---------------------------------------------

def _with_time_of(raw: bytes, other: bytes) -> bytes:
    """``raw`` with the ``last_updated`` of ``other`` (a purge rewrites no dates)."""
    mine, theirs = (json.dumps(json.loads(r)["last_updated"]).encode() for r in (raw, other))
    return raw.replace(b'"last_updated": ' + mine, b'"last_updated": ' + theirs, 1)


def test_purging_the_only_entry_leaves_the_bytes_a_delete_leaves(run, root):
    """A store file holding only the purged entry is left as ``ctx delete`` leaves it:
    ``"entries": {}``, byte for byte (its date aside), in the rewritten commit and on disk."""
    from ctxgit.porcelain.purge import cut_entry
    assert run("set", "leak", "a value to purge").exit_code == 0
    held = store_path(root).read_bytes()
    assert list(json.loads(held)["entries"]) == ["leak"]
    assert run("delete", "leak").exit_code == 0
    deleted = store_path(root).read_bytes()
    assert b'\n  "entries": {},\n' in deleted or b'\n  "entries": {}\n' in deleted
    expected = _with_time_of(deleted, held)
    assert cut_entry(held, "leak") == (expected, json.loads(held)["entries"]["leak"])
    assert run("set", "leak", "set again, then purged").exit_code == 0
    assert run("purge", "leak", "--yes").exit_code == 0
    assert store_path(root).read_bytes() == _with_time_of(deleted, store_path(root).read_bytes())
    assert show_file(root, "HEAD", "memory/shared.json").encode() == store_path(root).read_bytes()
    assert show_file(root, "HEAD~1", "memory/shared.json").encode() == deleted
    assert show_file(root, "HEAD~2", "memory/shared.json").encode() == expected


@pytest.mark.parametrize("gone", ["first", "middle", "last", "ключ \"✓\""])
def test_purge_cuts_an_entry_as_a_write_without_it_would_leave_the_file(gone):
    from ctx.storage.textlayout import serialize
    from ctxgit.porcelain.purge import cut_entry
    data = {"type": "shared", "version": "1", "last_updated": "2026-01-01T00:00:00Z",
            "entries": {k: make_entry(f"value of {k}") for k in ["first", "middle", "ключ \"✓\"", "last"]},
            "x_other_tool": {"kept": True}}
    without = {**data, "entries": {k: v for k, v in data["entries"].items() if k != gone}}
    assert cut_entry(serialize(data), gone) == (serialize(without), data["entries"][gone])
    assert cut_entry(serialize(data), "missing") == (serialize(data), None)
    four = json.dumps(data, indent=4).encode()  # another layout: parsed, and written as ctx writes
    assert cut_entry(four, gone) == (serialize(without), data["entries"][gone])
    assert cut_entry(four, "missing") == (four, None)


def test_history_shows_what_each_version_changed(run, root):
    """Not only the value: the amend note, the status and its note, basis, tags; and --json
    carries the same fields as "changed"."""
    assert run("set", "pool", "Use 10", "--tag", "decision", author="A").exit_code == 0
    assert run("set", "pool", "Use 20", "--tag", "decision", "--tag", "db", author="A").exit_code == 0
    assert run("amend", "pool", "load test says 20", author="B").exit_code == 0
    assert run("basis", "pool", "verified", author="B").exit_code == 0
    assert run("supersede", "pool", "--by", "pool2", "--note", "see pool2", author="C").exit_code == 0
    assert run("resolve", "pool", "--note", "done", author="C").exit_code == 0
    lines = run("history", "pool").stdout.splitlines()
    assert len(lines) == 6
    assert lines[0].endswith("C  resolve: 'done'")
    assert lines[1].endswith("C  supersede: by pool2: 'see pool2'")
    assert lines[2].endswith("B  basis: basis: inferred -> verified")
    assert lines[3].endswith("B  amend: 'load test says 20'")  # the note, not the old value
    assert lines[4].endswith('A  set: value: Use 10 -> Use 20; tags: ["decision"] -> ["decision","db"]')
    assert lines[5].endswith("A  created: Use 10")
    versions = json.loads(run("history", "pool", "--json").stdout)
    assert versions[3]["changed"]["status_note"] == {"old": None, "new": "load test says 20"}
    assert versions[2]["changed"] == {"basis": {"old": "inferred", "new": "verified"}}
    assert versions[0]["changed"]["status"] == {"old": "superseded", "new": "resolved"}
    assert "timestamp" not in versions[1]["changed"]  # bookkeeping is left out
    limited = json.loads(run("history", "pool", "-n", "1", "--json").stdout)
    assert len(limited) == 1 and limited[0]["changed"] == versions[0]["changed"]  # compared with its own predecessor
