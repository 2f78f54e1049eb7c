"""Letters, handoffs and due dates between machines synced through one bare remote:
every letter arrives, each reader's FOR YOU is exactly its own, and no merge loses or
doubles one."""

from __future__ import annotations

import json

import pytest

from ctx import model
from support.syncutil import Machine, assert_converged, network, sync_until_converged


@pytest.fixture(autouse=True)
def libgit2(monkeypatch):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "libgit2")  # in process: the git transport is test_sync's


def as_operator(machine: Machine, *args: str):
    from support.door import run_front_door
    result = run_front_door(machine.runner, list(args), env={"CTX_HOME": str(machine.root), "CTX_AUTHOR": None})
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def inbox(machine: Machine, operator: bool = False, *extra: str) -> list[dict]:
    args = ("inbox", "--json", *extra)
    result = as_operator(machine, *args) if operator else machine.ok(*args)
    return json.loads(result.stdout)["letters"]


def for_you(machine: Machine, operator: bool = False) -> list[str]:
    result = as_operator(machine, "brief", "--json") if operator else machine.ok("brief", "--json")
    return [item["key"] for item in json.loads(result.stdout)["for_you"]["items"]]


def letter_keys(machine: Machine) -> set[str]:
    return {k for k in machine.entries() if k.startswith("comms:")}


def test_the_same_words_to_one_reader_in_the_same_second_on_two_machines_are_two_letters(tmp_path, monkeypatch):
    bare, (a, b) = network(tmp_path, "Agent A", "Agent B")
    monkeypatch.setattr(model, "now", lambda: "2026-12-02T10:00:00Z")
    a.ok("send", "operator", "The build is green")
    b.ok("send", "operator", "The build is green")
    monkeypatch.undo()
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "libgit2")
    sync_until_converged([a, b], bare)
    keys = sorted(letter_keys(a))
    assert len(keys) == 2 and all(k.startswith("comms:operator:1796205600-") for k in keys)
    assert {a.entry(k)["from"] for k in keys} == {"Agent A", "Agent B"}
    assert sorted(x["key"] for x in inbox(b, operator=True)) == keys


def test_concurrent_handoffs_of_one_baton_keep_both_letters_and_agree_on_the_holder(tmp_path):
    bare, (a, b) = network(tmp_path, "Agent A", "Agent B")
    a.ok("set", "relay_baton", "state: merged")
    sync_until_converged([a, b], bare)
    a.ok("handoff", "Agent C", "--baton", "relay_baton", "--note", "from A")
    b.ok("handoff", "Agent D", "--baton", "relay_baton", "--note", "from B")
    sync_until_converged([a, b], bare)
    holder = a.entry("relay_baton")["holder"]
    assert holder in ("Agent C", "Agent D") and b.entry("relay_baton")["holder"] == holder
    assert a.entry("relay_baton")["value"] == "state: merged"
    assert {a.entry(k)["to"] for k in letter_keys(a)} == {"Agent C", "Agent D"}


def test_an_answer_on_one_machine_and_a_resolve_on_the_other_both_close_the_letter(tmp_path):
    bare, (a, b) = network(tmp_path, "Agent A", "Agent B")
    key = json.loads(a.ok("send", "Agent B", "Please check", "--json").stdout)["key"]
    sync_until_converged([a, b], bare)
    b.ok("send", "Agent A", "Checked", "--re", key)
    a.ok("resolve", key, "--note", "no longer needed")
    sync_until_converged([a, b], bare)
    for m in (a, b):
        assert key not in [x["key"] for x in inbox(m)] + [x["key"] for x in inbox(m, True)]
        assert [x["text"] for x in inbox(m)] == (["Checked"] if m is a else [])
        assert m.entry(key)["status"] == "resolved" and m.entry(key)["value"] == "Please check"
    [letter] = [x for x in inbox(b, False, "--all") if x["key"] == key]
    assert letter["open"] is False and len(letter["answered_by"]) == 1


def test_reviews_and_reminders_on_two_machines_converge(tmp_path):
    bare, (a, b) = network(tmp_path, "Agent A", "Agent B")
    a.ok("set", "cert_renewal", "Renew the certificate", "--due", "+2")
    sync_until_converged([a, b], bare)
    a.ok("review", "cert_renewal")
    b.ok("remind", "cert_renewal", "+20", "--must-not-forget")
    b.ok("set", "other", "an unrelated change")
    sync_until_converged([a, b], bare)
    entry = a.entry("cert_renewal")
    assert entry == b.entry("cert_renewal") and entry["value"] == "Renew the certificate"
    assert entry["must_not_forget"] is True and entry["due"] and entry["due_set"]


@pytest.mark.slow
def test_three_machines_write_letters_to_each_other_and_the_operator(tmp_path):
    names = ["Agent One", "Agent Two", "Agent Three"]
    bare, machines = network(tmp_path, *names)
    sent: dict[str, set[str]] = {"operator": set(), **{n: set() for n in names}}
    for round_no in range(3):
        for m in machines:
            for to in [n for n in names if n != m.author] + ["operator"]:
                spelled = to.lower() if round_no % 2 else to  # "agent two" is Agent Two
                got = json.loads(m.ok("send", spelled, f"round {round_no} from {m.author}", "--json").stdout)
                sent[to].add(got["key"])
        for m in machines:
            m.ok("sync")  # one round of syncs: the others' letters arrive over later rounds
    sync_until_converged(machines, bare)
    assert_converged(machines, bare)
    every = set().union(*sent.values())
    assert len(every) == 3 * 3 * 3  # 3 rounds x 3 senders x 3 readers each, no key twice
    for m in machines:
        assert letter_keys(m) == every  # every letter arrived, on every machine
        mine = {x["key"] for x in inbox(m)}
        assert mine == sent[m.author]  # exactly its own, none twice
        assert len(inbox(m)) == len(mine) == 6
        shown = for_you(m)
        assert len(shown) == 6 and set(shown) <= sent[m.author]
        assert {x["key"] for x in inbox(m, operator=True)} == sent["operator"]
        assert set(for_you(m, operator=True)) <= sent["operator"] and len(for_you(m, operator=True)) == 9
    # answers close letters everywhere once synced
    one = machines[0]
    for key in sorted(sent["Agent One"]):
        one.ok("send", one.entry(key)["from"], "done", "--shape", "ack", "--re", key)
    sync_until_converged(machines, bare)
    assert inbox(one) == []
    for m in machines[1:]:
        letters = inbox(m)
        assert len(letters) == len({x["key"] for x in letters}) == 6 + 3  # and the three acks from Agent One
        assert sum(x["shape"] == "ack" for x in letters) == 3


def test_a_handoff_here_and_a_new_baton_value_there_both_survive(tmp_path):
    bare, (a, b) = network(tmp_path, "Agent A", "Agent B")
    a.ok("set", "relay_baton", "state: merged", "--due", "+3")
    sync_until_converged([a, b], bare)
    a.ok("handoff", "Agent B", "--baton", "relay_baton", "--note", "yours")
    b.ok("set", "relay_baton", "state: soaking on staging")
    sync_until_converged([a, b], bare)
    for m in (a, b):
        baton = m.entry("relay_baton")
        assert baton["holder"] == "Agent B" and baton["value"] == "state: soaking on staging"
        assert baton["due"]  # a new value keeps the due date
    assert [x["shape"] for x in inbox(b)] == ["handoff"]
