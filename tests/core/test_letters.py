"""Letters (ctx send, ctx inbox) and the relay's handoff, through the core and the CLI."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from ctx import letters
from ctx.errors import CredentialRefused, InvalidArgument, NotFound
from support.clock import injected_clock
from support.gitutil import commit_count, succeeded
from support.stores import make_entry

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8" * 2 + "i9J0"  # a GitHub token's shape


# --- names and keys ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["Agent One", "agent one", "  AGENT   ONE ", "agent-one", "Agent_One"])
def test_names_fold_to_one_recipient(name):
    assert letters.recipient_id(name) == "agent_one"
    assert letters.prefix_for(name) == "comms:agent_one:"


def test_other_scripts_keep_their_letters_and_blank_names_are_refused():
    assert letters.recipient_id("Ünal Çelik") == "ünal_çelik"
    assert letters.recipient_id("Codex") != letters.recipient_id("Claude")
    for bad in ("", "   ", "--", "::"):
        with pytest.raises(InvalidArgument):
            letters.recipient_id(bad)


def test_a_key_names_the_recipient_the_second_a_random_part_and_the_first_words():
    key = letters.new_key("Agent Two", "Please review: the retry logic!", "2026-12-02T01:00:00Z")
    assert re.fullmatch(r"comms:agent_two:1796173200-[0-9a-f]{6}:please-review-the-retry", key), key
    same = {letters.new_key("Agent Two", "same", "2026-12-02T01:00:00Z") for _ in range(50)}
    assert len(same) == 50  # the same words in the same second: still a key each


def test_a_key_never_reuses_one_that_is_taken(monkeypatch):
    parts = iter([b"\x00\x00\x01", b"\x00\x00\x01", b"\x00\x00\x02"])
    monkeypatch.setattr(letters.os, "urandom", lambda n: next(parts))
    first = letters.new_key("x", "t", "2026-12-02T01:00:00Z")
    second = letters.new_key("x", "t", "2026-12-02T01:00:00Z", lambda k: k == first)
    assert first != second and second.endswith("-000002:t")


# --- send --------------------------------------------------------------------------------------

def test_send_writes_one_entry_with_the_letter_fields(make_context, entries):
    ctx = make_context(author="Agent One")
    key, entry = letters.send(ctx, "Agent Two", "Review the retry loop", shape="request", expects="a report")
    stored = entries()[key]
    assert stored == entry
    assert key.startswith("comms:agent_two:")
    assert stored["value"] == "Review the retry loop"
    assert (stored["from"], stored["to"], stored["shape"], stored["expects"]) == \
        ("Agent One", "Agent Two", "request", "a report")
    assert stored["author"] == "Agent One" and stored["source"] == "agent"
    assert stored["basis"] == "reported" and stored["tags"] == ["letter"]
    assert "re" not in stored


def test_the_operator_sends_and_receives(make_context):
    key, entry = letters.send(make_context(), "operator", "the deploy is blocked", shape="report")
    assert entry["from"] == "operator" and entry["source"] == "operator" and "author" not in entry
    assert key.startswith("comms:operator:")
    found, _ = letters.letters_to(make_context(), "operator")
    assert [x.key for x in found] == [key]


def test_send_refuses_a_bad_shape_empty_text_and_a_missing_re(make_context, root):
    ctx = make_context(author="A")
    with pytest.raises(InvalidArgument):
        letters.send(ctx, "B", "hello", shape="memo")
    with pytest.raises(InvalidArgument):
        letters.send(ctx, "B", "   ")
    with pytest.raises(NotFound):
        letters.send(ctx, "B", "hello", answers="comms:a:1-000000:nothing")
    assert not (root / "memory" / "shared.json").exists()


def test_send_refuses_a_credential_and_writes_nothing(make_context, entries):
    ctx = make_context(author="A")
    letters.send(ctx, "B", "first")
    before = entries()
    with pytest.raises(CredentialRefused):
        letters.send(ctx, "B", f"the key is {SECRET}")
    with pytest.raises(CredentialRefused):
        letters.send(ctx, "B", "fine", expects=f"send back {SECRET}")
    assert entries() == before
    key, _ = letters.send(ctx, "B", f"the key is {SECRET}", force=True)
    assert key in entries()


# --- inbox ---------------------------------------------------------------------------------------

def _put_letter(write_store, key: str, when: str, to: str = "Agent One", sender: str = "Agent Two", **extra):
    entry = make_entry("text of " + key, when=when, tags=["letter"], **{"from": sender, "to": to,
                                                                         "shape": "request", **extra})
    write_store("shared", {key: entry})


def test_inbox_is_the_open_letters_to_the_reader_newest_first(make_context, write_store):
    _put_letter(write_store, "comms:agent_one:100-aaaaaa:old", "2026-01-01T00:00:00Z")
    _put_letter(write_store, "comms:agent_one:200-bbbbbb:new", "2026-01-02T00:00:00Z")
    _put_letter(write_store, "comms:agent_one:150-cccccc:done", "2026-01-01T12:00:00Z",
                status="resolved", status_timestamp="2026-01-03T00:00:00Z")
    _put_letter(write_store, "comms:agent_one_b:300-dddddd:other", "2026-01-03T00:00:00Z", to="Agent One B")
    _put_letter(write_store, "comms:agent_two:400-eeeeee:answer", "2026-01-04T00:00:00Z", to="Agent Two",
                sender="Agent One", re="comms:agent_one:100-aaaaaa:old")
    write_store("shared", {"comms_note": make_entry("not a letter"), "comms:agent_one": make_entry("x")})
    ctx = make_context(author="agent one")
    found, more = letters.letters_to(ctx, "Agent ONE")
    assert [x.key for x in found] == ["comms:agent_one:200-bbbbbb:new"] and more == 0
    every, _ = letters.letters_to(ctx, "Agent One", include_closed=True)
    assert [x.key for x in every] == ["comms:agent_one:200-bbbbbb:new", "comms:agent_one:150-cccccc:done",
                                      "comms:agent_one:100-aaaaaa:old"]
    answered = every[-1]
    assert not answered.open and answered.answered_by == ["comms:agent_two:400-eeeeee:answer"]
    assert not every[1].open and every[0].open


def test_inbox_since_new_marks_and_limit(make_context, write_store):
    for n in range(5):
        _put_letter(write_store, f"comms:agent_one:{n}-00000{n}:l{n}", f"2026-01-0{n + 1}T00:00:00Z")
    ctx = make_context(author="Agent One")
    from ctx.model import parse_ts
    found, _ = letters.letters_to(ctx, "Agent One", since=parse_ts("2026-01-03"))
    assert [x.key[-2:] for x in found] == ["l4", "l3", "l2"]
    found, more = letters.letters_to(ctx, "Agent One", limit=2, last_session="2026-01-03T12:00:00Z")
    assert [x.key[-2:] for x in found] == ["l4", "l3"] and more == 3
    assert [x.new for x in found] == [True, True]
    found, _ = letters.letters_to(ctx, "Agent One", last_session="2026-01-03T12:00:00Z")
    assert [x.new for x in found] == [True, True, False, False, False]


def test_an_answer_from_a_machine_whose_clock_is_behind_still_answers(make_context, write_store):
    _put_letter(write_store, "comms:agent_one:1-aaaaaa:q", "2026-01-02T12:00:00Z")
    _put_letter(write_store, "comms:agent_two:2-bbbbbb:a", "2026-01-02T06:00:00Z", to="Agent Two",
                re="comms:agent_one:1-aaaaaa:q")
    found, _ = letters.letters_to(make_context(author="Agent One"), "Agent One")
    assert found == []


def test_inbox_reads_the_same_with_and_without_the_index(root, write_store, monkeypatch):
    from support.contexts import Context
    _put_letter(write_store, "comms:agent_one:1-aaaaaa:q", "2026-01-02T12:00:00Z")
    _put_letter(write_store, "comms:agent_one:3-cccccc:r", "2026-01-03T12:00:00Z")
    _put_letter(write_store, "comms:agent_two:2-bbbbbb:a", "2026-01-04T06:00:00Z", to="Agent Two",
                re="comms:agent_one:1-aaaaaa:q")
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # the index lives in .git/ctx
    shown = []
    for cache in ("update", "off"):
        found, _ = letters.letters_to(Context(root, author="A", cache=cache), "Agent One", include_closed=True)
        shown.append([(x.key, x.open) for x in found])
    assert shown[0] == shown[1] == [("comms:agent_one:3-cccccc:r", True), ("comms:agent_one:1-aaaaaa:q", False)]
    assert (root / ".git" / "ctx").is_dir()


# --- the CLI ------------------------------------------------------------------------------------

def test_send_inbox_and_answer_through_the_cli(run, root):
    succeeded(run("init", "--yes"))
    sent = json.loads(succeeded(run("send", "Agent Two", "Please", "review", "the", "retry", "--expects", "a report",
                              "--json", author="Agent One")).stdout)
    key = sent["key"]
    assert sent["entry"]["value"] == "Please review the retry"
    listed = succeeded(run("list", "--prefix", "comms:agent_two:", "--keys-only")).stdout
    assert listed.strip() == f"shared/{key}"
    inbox = succeeded(run("inbox", author="agent two")).stdout
    assert "1 open letter to agent two" in inbox and key in inbox and "from Agent One (request)" in inbox
    assert "expects: a report" in inbox
    assert "no open letters to Agent One" in succeeded(run("inbox", author="Agent One")).stdout
    reply = json.loads(succeeded(run("send", "Agent One", "Done:", "it", "is", "clean", "--shape", "report",
                                     "--re", key, "--json", author="Agent Two")).stdout)
    assert reply["entry"]["re"] == key
    assert "no open letters to agent two" in succeeded(run("inbox", author="agent two")).stdout
    everything = json.loads(succeeded(run("inbox", "--all", "--json", author="Agent Two")).stdout)
    assert everything["reader"] == "Agent Two"
    [letter] = everything["letters"]
    assert letter["key"] == key and letter["open"] is False and letter["answered_by"] == [reply["key"]]
    assert "answered by" in succeeded(run("inbox", "--all", author="Agent Two")).stdout
    mine = json.loads(succeeded(run("inbox", "--json", author="Agent One")).stdout)["letters"]
    assert [x["key"] for x in mine] == [reply["key"]]
    succeeded(run("resolve", reply["key"], "--note", "read", author="Agent One"))
    assert json.loads(succeeded(run("inbox", "--json", author="Agent One")).stdout)["letters"] == []


def test_inbox_marks_what_came_since_the_readers_last_session(run, monkeypatch):
    clock = injected_clock(monkeypatch)  # timestamps are whole seconds: the clock moves one on
    succeeded(run("init", "--yes"))
    succeeded(run("send", "Agent Two", "before", author="Agent One"))
    clock.tick()
    succeeded(run("set", "note_two", "my last session", author="Agent Two"))
    clock.tick()
    succeeded(run("send", "Agent Two", "after", author="Agent One"))
    got = json.loads(succeeded(run("inbox", "--json", author="Agent Two")).stdout)
    assert got["last_session"] is not None
    assert [(x["text"], x["new"]) for x in got["letters"]] == [("after", True), ("before", False)]
    assert "(1 new since your last session: *)" in succeeded(run("inbox", author="Agent Two")).stdout


def test_send_errors_exit_with_their_status_and_write_nothing(run, root):
    succeeded(run("init", "--yes"))
    count = commit_count(root)
    assert run("send", "B", "hi", "--re", "nope", author="A").exit_code == 1
    assert run("send", "B", "the key", SECRET, author="A").exit_code == 4
    assert run("send", "--", "hi", author="A").exit_code == 2
    assert run("send", "B", "hi", "--shape", "memo", author="A").exit_code == 2
    assert run("inbox", "--since", "yesterday").exit_code == 2
    assert commit_count(root) == count


# --- handoff ---------------------------------------------------------------------------------------

def test_handoff_names_the_holder_and_sends_a_letter_in_one_commit(run, root, entries):
    succeeded(run("init", "--yes"))
    succeeded(run("set", "relay_upload_baton", "state: fix merged; next: promote", author="Agent One"))
    count = commit_count(root)
    before = entries()["relay_upload_baton"]
    got = json.loads(succeeded(run("handoff", "Agent Two", "--baton", "relay_upload_baton", "--note", "soak passed",
                             "--json", author="Agent One")).stdout)
    assert commit_count(root) == count + 1
    baton = entries()["relay_upload_baton"]
    assert baton["holder"] == "Agent Two"
    assert {k: v for k, v in baton.items() if k != "holder"} == before  # the value (and the rest) kept
    letter = entries()[got["letter"]["key"]]
    assert got["letter"]["key"].startswith("comms:agent_two:")
    assert letter["shape"] == "handoff" and letter["baton"] == "relay_upload_baton"
    assert "relay_upload_baton" in letter["value"] and "soak passed" in letter["value"]
    inbox = succeeded(run("inbox", author="agent two")).stdout
    assert "(handoff)" in inbox and "relay_upload_baton" in inbox
    message = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%B"], capture_output=True,
                             text=True).stdout
    assert "Ctx-Operation: handoff" in message and "Ctx-Key: relay_upload_baton" in message


def test_handoff_of_a_baton_in_another_store(run, entries):
    succeeded(run("init", "--yes"))
    succeeded(run("set", "baton", "mine", "--store", "agent", author="A"))
    got = json.loads(succeeded(run("handoff", "B", "--baton", "baton", "--store", "agent", "--note", "go", "--json",
                             author="A")).stdout)
    assert entries("agent")["baton"]["holder"] == "B"
    assert entries()[got["letter"]["key"]]["baton"] == "agent/baton"


def test_a_refused_handoff_writes_nothing(run, root, entries):
    succeeded(run("init", "--yes"))
    succeeded(run("set", "baton", "state"))
    count, before = commit_count(root), entries()
    assert run("handoff", "B", "--baton", "missing", "--note", "go", author="A").exit_code == 1
    assert run("handoff", "B", "--baton", "baton", "--note", f"use {SECRET}", author="A").exit_code == 4
    assert run("handoff", "B", "--baton", "baton", author="A").exit_code == 2  # --note is required
    assert run("handoff", "  ", "--baton", "baton", "--note", "go", author="A").exit_code == 2
    assert commit_count(root) == count and entries() == before


def test_since_your_last_session_calls_a_letter_new_and_a_handed_baton_changed(run):
    succeeded(run("init", "--yes"))
    succeeded(run("set", "relay_baton", "state", author="Agent Two"))
    key = json.loads(succeeded(run("send", "Agent Two", "hello", "--json", author="Agent One")).stdout)["key"]
    handed = json.loads(succeeded(run("handoff", "Agent Two", "--baton", "relay_baton", "--note", "go", "--json",
                                author="Agent One")).stdout)
    since = json.loads(succeeded(run("brief", "--json", author="Agent Two")).stdout)["since"]
    kinds = {c["key"]: c["kind"] for c in since["changes"]}
    assert kinds == {key: "new", handed["letter"]["key"]: "new", "relay_baton": "changed"}
