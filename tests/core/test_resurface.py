"""Due dates (ctx set --due, remind, review), the brief's DUE section, and the fields
beyond §3.3 (due, holder, valid_from, valid_to) that every command keeps (§3.3)."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, date, datetime, timedelta

import pytest

from ctx import resurface
from ctx.brief import build_brief, render_brief
from ctx.errors import InvalidArgument
from ctx.storage import indextables
from support.gitutil import commit_count, succeeded
from support.stores import make_entry

TODAY = date(2026, 3, 10)
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def fixed_today(monkeypatch):
    monkeypatch.setattr(resurface, "today", lambda: TODAY)
    return TODAY


# --- dates and intervals ------------------------------------------------------------------------

def test_the_dates_ctx_reads():
    assert resurface.parse_day("2026-12-20", TODAY) == date(2026, 12, 20)
    assert resurface.parse_day("today", TODAY) == TODAY
    assert resurface.parse_day(" Tomorrow ", TODAY) == date(2026, 3, 11)
    assert resurface.parse_day("+3", TODAY) == date(2026, 3, 13)
    assert resurface.parse_day("+14d", TODAY) == date(2026, 3, 24)
    for bad in ("2026-13-01", "2026-02-30", "20261220", "next week", "", "+", "+3w", "-3", "2026-12-20T10:00:00Z"):
        with pytest.raises(InvalidArgument):
            resurface.parse_day(bad, TODAY)


@pytest.mark.parametrize("due, due_set, mnf, expected", [
    ("2026-03-14", "2026-03-10", False, 10),   # 4 days x 2.5
    ("2026-03-11", "2026-03-10", False, 3),    # 1 x 2.5 = 2.5, halves up
    ("2026-03-10", "2026-03-10", False, 3),    # at least one day
    ("2026-03-01", "2026-03-10", False, 3),    # a date set in the past: one day
    ("2026-04-09", "2026-03-10", False, 75),   # 30 x 2.5, no cap
    ("2026-04-09", "2026-03-10", True, 30),    # must not forget: 30 at most
    ("2026-03-14", "2026-03-10", True, 10),
])
def test_the_next_interval(due, due_set, mnf, expected):
    entry = {"due": due, "due_set": due_set, **({"must_not_forget": True} if mnf else {})}
    assert resurface.next_interval(entry) == expected


def test_without_due_set_the_interval_counts_from_the_timestamp():
    assert resurface.last_interval({"due": "2026-03-20", "timestamp": "2026-03-10T08:00:00Z"}) == 10
    assert resurface.last_interval({"due": "not a date"}) == 1


# --- remind and review through the core -----------------------------------------------------------

def test_remind_then_review_grows_the_interval_and_caps_it(make_context, entries, fixed_today, monkeypatch):
    ctx = make_context(author="A")
    ctx.set("cert_renewal", "renew the TLS certificate")
    before = entries()["cert_renewal"]
    entry = resurface.remind(ctx, "cert_renewal", "+4", must_not_forget=True)
    assert (entry["due"], entry["due_set"], entry["must_not_forget"]) == ("2026-03-14", "2026-03-10", True)
    assert entry["timestamp"] == before["timestamp"] and entry["value"] == before["value"]
    days = [TODAY]
    for _ in range(4):
        days.append(days[-1] + timedelta(days=(resurface.stored_day(entries()["cert_renewal"]["due"]) - days[-1]).days))
        monkeypatch.setattr(resurface, "today", lambda d=days[-1]: d)
        resurface.review(ctx, "cert_renewal")
    stored = entries()["cert_renewal"]
    intervals = [(b - a).days for a, b in zip(days, days[1:], strict=False)]
    assert intervals == [4, 10, 25, 30]  # 4, x2.5, x2.5, then the cap
    assert stored["last_review"] == days[-1].isoformat()
    assert resurface.stored_day(stored["due"]) - days[-1] == timedelta(days=30)


def test_review_stale_makes_it_due_tomorrow_and_a_later_review_clears_it(make_context, entries, fixed_today):
    ctx = make_context()
    ctx.set("plan_call", "call the vendor")
    resurface.remind(ctx, "plan_call", "+20")
    entry = resurface.review(ctx, "plan_call", stale=True)
    assert entry["due"] == "2026-03-11" and entry["stale"] is True and entry["last_review"] == "2026-03-10"
    entry = resurface.review(ctx, "plan_call")
    assert "stale" not in entry and entry["due"] == "2026-03-13"  # the stale interval, one day, x2.5
    resurface.review(ctx, "plan_call", stale=True)
    assert "stale" not in resurface.remind(ctx, "plan_call", "2026-04-01")


def test_review_needs_a_due_date_and_a_bad_date_writes_nothing(make_context, entries, fixed_today):
    ctx = make_context()
    ctx.set("k", "v")
    before = entries()
    with pytest.raises(InvalidArgument):
        resurface.review(ctx, "k")
    with pytest.raises(InvalidArgument):
        resurface.remind(ctx, "k", "2026-02-31")
    assert entries() == before


# --- the CLI ----------------------------------------------------------------------------------------

def test_set_due_remind_review_and_their_errors_through_the_cli(run, root, entries):
    succeeded(run("init", "--yes"))
    got = json.loads(succeeded(run("set", "plan_vendor", "Call the vendor", "--due", "2099-01-02", "--json")).stdout)
    assert got["entry"]["due"] == "2099-01-02"
    assert got["entry"]["due_set"] == resurface.today().isoformat()
    succeeded(run("set", "plan_vendor", "Call the vendor about the quota"))  # a new value keeps the due date
    assert entries()["plan_vendor"]["due"] == "2099-01-02"
    shown = succeeded(run("get", "plan_vendor", "-v")).stdout
    assert "  due: 2099-01-02" in shown and "  due_set: " in shown
    assert "2099-01-02 (must not forget)" in succeeded(run("remind", "plan_vendor", "2099-01-02",
                                                    "--must-not-forget")).stdout
    got = json.loads(succeeded(run("review", "plan_vendor", "--json")).stdout)
    assert got["entry"]["last_review"] == resurface.today().isoformat()
    assert json.loads(succeeded(run("review", "plan_vendor", "--stale", "--json")).stdout)["entry"]["stale"] is True
    succeeded(run("set", "plan_vendor", "Call the vendor today", "--due", "today"))
    assert "stale" not in entries()["plan_vendor"] and entries()["plan_vendor"]["must_not_forget"] is True
    count, before = commit_count(root), entries()
    assert run("set", "other", "x", "--due", "someday").exit_code == 2
    assert run("remind", "plan_vendor", "2026-02-30").exit_code == 2
    assert run("remind", "missing", "2026-02-20").exit_code == 1
    assert run("review", "missing").exit_code == 1
    succeeded(run("set", "no_due", "x"))
    assert run("review", "no_due").exit_code == 2
    assert commit_count(root) == count + 1 and {k: v for k, v in entries().items() if k != "no_due"} == before


# --- the DUE section -----------------------------------------------------------------------------

def test_due_lists_overdue_and_this_weeks_entries_soonest_first(context, write_store):
    write_store("shared", {
        "later": make_entry("in eight days", due="2026-03-18"),
        "week": make_entry("in seven days", due="2026-03-17"),
        "today": make_entry("due today", due="2026-03-10", must_not_forget=True),
        "overdue": make_entry("two days late", due="2026-03-08"),
        "done": make_entry("resolved", due="2026-03-09", status="resolved", status_timestamp="2026-03-09T00:00:00Z"),
        "gone": make_entry("superseded", due="2026-03-09", status="superseded", superseded_by="week",
                           status_timestamp="2026-03-09T00:00:00Z"),
        "amended": make_entry("[Amended 2026-03-01: x]\nstill due", due="2026-03-12", status="amended",
                              status_timestamp="2026-03-01T00:00:00Z"),
        "bad": make_entry("a due date written by hand", due="next week"),
        "overdue_text": make_entry("this text says due but has no field"),
    })
    write_store("agent", {"note": make_entry("agent's note", due="2026-03-11")})
    brief = build_brief(context, now=NOW)
    assert [(d.key, d.when) for d in brief.due] == [
        ("overdue", "2 days overdue"), ("today", "today"), ("note", "tomorrow"), ("amended", "in 2 days"),
        ("week", "in 7 days")]
    text = render_brief(brief)
    assert "\nDUE (overdue or within 7 days" in text
    assert "  - 2026-03-08 (2 days overdue) overdue: two days late\n" in text
    assert "  - 2026-03-10 (today) today [must not forget]: due today\n" in text
    assert "note [agent]" in text and "amended [amended]: still due" in text
    changes = text[text.index("RECENT CHANGES"):]
    assert "overdue:" not in changes and "later:" in changes  # printed in DUE: not again
    assert brief.as_json()["due"]["items"][0] == {
        "key": "overdue", "store": "shared", "due": "2026-03-08", "when": "2 days overdue",
        "text": "two days late", "status": "", "must_not_forget": False, "stale": False}


def test_due_is_bounded_and_stale_entries_are_named_for_the_operator(root, write_store):
    from support.contexts import Context
    write_store("shared", {f"k{n:02d}": make_entry(f"item {n}", due=f"2026-03-{n + 1:02d}") for n in range(14)})
    write_store("shared", {"at_risk": make_entry("needs a human", due="2026-05-01", stale=True)})
    operator = build_brief(Context(root), now=NOW)
    agent = build_brief(Context(root, author="Agent One"), now=NOW)
    assert len(agent.due) == 10 and agent.due_more == 4  # 14 within the week or overdue
    assert "at_risk" not in [d.key for d in agent.due]
    assert operator.due_more == 5
    operator_text = render_brief(operator)
    assert "  ... and 5 more due\n" in operator_text
    operator_all = resurface.due_items(Context(root), ["shared"], TODAY, operator=True)
    assert [d.result.key for d in operator_all][0] == "at_risk"
    assert operator.due[0].key == "at_risk" and operator.due[0].stale


def test_a_stale_entry_is_marked_for_everyone_and_as_the_operators_call_in_theirs(root, write_store):
    from support.contexts import Context
    write_store("shared", {"at_risk": make_entry("needs a human", due="2026-03-11", stale=True)})
    assert "  - 2026-03-11 (tomorrow) at_risk [stale: needs you]: needs a human\n" in \
        render_brief(build_brief(Context(root), now=NOW))
    assert "  - 2026-03-11 (tomorrow) at_risk [stale]: needs a human\n" in \
        render_brief(build_brief(Context(root, author="A"), now=NOW))


# --- fields beyond §3.3: kept by every command -------------------------------------------------------------

EXTRA = {"valid_from": "2026-01-14", "valid_to": "2026-06-30", "x_vendor": {"id": 7}}


def test_every_command_keeps_the_fields_it_does_not_know(run, write_store, entries):
    succeeded(run("init", "--yes"))
    write_store("shared", {"incident": make_entry("auth failing for EU users", **EXTRA),
                           "other": make_entry("other")})
    succeeded(run("set", "note", "commit what was written by hand"))
    steps = [("set", "incident", "auth failing for EU users since the 14th", "--basis", "reported"),
             ("amend", "incident", "began on the 14th"),
             ("basis", "incident", "verified"),
             ("remind", "incident", "2099-01-01", "--must-not-forget"),
             ("review", "incident"),
             ("handoff", "Agent Two", "--baton", "incident", "--note", "yours"),
             ("resolve", "incident", "--note", "fixed"),
             ("supersede", "incident", "--by", "other")]
    for step in steps:
        succeeded(run(*step, author="Agent One"))
        entry = entries()["incident"]
        assert {k: entry.get(k) for k in EXTRA} == EXTRA, step
    shown = succeeded(run("get", "incident", "-v")).stdout
    assert "  valid_from: 2026-01-14\n" in shown and "  valid_to: 2026-06-30\n" in shown
    assert '  x_vendor: {"id":7}' in shown and "  holder: Agent Two" in shown
    got = json.loads(succeeded(run("get", "incident", "--json")).stdout)["entry"]
    assert got["valid_from"] == "2026-01-14" and got["due"] and got["holder"] == "Agent Two"


def test_due_reads_the_same_with_and_without_the_index(root, write_store):
    from support.contexts import Context
    write_store("shared", {"a": make_entry("a", due="2026-03-12"), "b": make_entry("b", due="2026-3-12"),
                           "c": make_entry("c", due="2026-03-30"), "d": make_entry("d", due="2026-04-30", stale=True),
                           "e": make_entry("e", due=20260312), "f": make_entry("the due date is near")})
    write_store("agent", {"g": make_entry("g", due="2026-03-01")})
    subprocess.run(["git", "init", "-q", str(root)], check=True)  # the index lives in .git/ctx
    for operator in (False, True):
        shown = [[(d.result.store, d.result.key) for d in
                  resurface.due_items(Context(root, cache=cache), ["operator", "shared", "agent"], TODAY, operator)]
                 for cache in ("update", "off")]
        assert shown[0] == shown[1] == ([("shared", "d")] if operator else []) + [("agent", "g"), ("shared", "a")]
    assert list((root / ".git" / "ctx").glob(indextables.FILE))


def test_set_writes_the_bitemporal_fields_and_refuses_a_time_it_cannot_read(run, entries):
    succeeded(run("init", "--yes"))
    succeeded(run("set", "incident_auth", "Auth failing for EU users", "--valid-from", "2026-07-14",
            "--valid-to", "2026-07-21T18:00:00Z"))
    entry = entries()["incident_auth"]
    assert (entry["valid_from"], entry["valid_to"]) == ("2026-07-14", "2026-07-21T18:00:00Z")
    succeeded(run("set", "incident_auth", "Auth failing for EU users (fixed)"))
    assert entries()["incident_auth"]["valid_from"] == "2026-07-14"
    assert run("set", "incident_auth", "x", "--valid-from", "last tuesday").exit_code == 2
    assert entries()["incident_auth"]["value"] == "Auth failing for EU users (fixed)"
