"""FOR YOU in the brief and the start payload: the reader's open letters, where they
stand among the sections and in the budget, and what the other sections keep."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from ctx.brief import build_brief, render_brief
from ctx.start import start_payload
from support.contexts import Context
from support.stores import make_entry

NOW = datetime(2026, 1, 12, 12, 0, 0, tzinfo=UTC)


def _letter(n: int, to: str = "agent_one", sender: str = "Agent Two", **extra) -> tuple[str, dict]:
    key = f"comms:{to}:{1768000000 + n}-{n:06x}:letter-{n}"
    return key, make_entry(f"letter number {n} with some words to read", when=f"2026-01-{n + 1:02d}T08:00:00Z",
                           tags=["letter"], **{"from": sender, "to": to.replace("_", " "), "shape": "request",
                                               **extra})


def _setup(write_store, letters: dict[str, dict]) -> None:
    write_store("operator", {"pref_one_question": make_entry("Ask one question at a time.", source="operator",
                                                             tags=["preference"])})
    write_store("shared", {"current_focus": make_entry("Ship the upload fix.", source="operator"),
                           "decision_pool": make_entry("Use a pool of 20.", when="2026-01-11T00:00:00Z",
                                                       tags=["decision"]),
                           "result_x": make_entry("A result.", when="2026-01-10T00:00:00Z"),
                           **letters})


def test_for_you_comes_after_the_instructions_and_before_the_rest(root, write_store):
    _setup(write_store, dict([_letter(1), _letter(2, to="agent_two", sender="Agent One")]))
    text = render_brief(build_brief(Context(root, author="Agent One"), now=NOW))
    order = [text.index(h) for h in ("CURRENT FOCUS", "STANDING INSTRUCTIONS", "FOR YOU", "DECISIONS",
                                     "RECENT CHANGES")]
    assert order == sorted(order)
    section = text[text.index("FOR YOU"):text.index("DECISIONS")]
    assert "  - 2026-01-02 08:00 from Agent Two (request): letter number 1 with some words to read " \
           "[comms:agent_one:1768000001-000001:letter-1]\n" in section
    assert "letter-2" not in section  # a letter to someone else is never FOR YOU ...
    changes = text[text.index("RECENT CHANGES"):]
    assert changes.count("letter-2") == 1 and "letter-1" not in changes  # ... and one line of the changes
    assert "letter number 2" in [line for line in changes.splitlines() if "letter-2" in line][0]


def test_for_you_shows_ten_then_a_count_and_only_open_letters(root, write_store):
    letters = dict(_letter(n) for n in range(1, 14))
    answered = "comms:agent_one:1768000013-00000d:letter-13"
    letters.update([_letter(20, to="agent_two", sender="Agent One", re=answered)])
    key, resolved = _letter(14)
    resolved.update(status="resolved", status_timestamp="2026-01-15T09:00:00Z")
    letters[key] = resolved
    _setup(write_store, letters)
    brief = build_brief(Context(root, author="agent ONE"), now=NOW)
    assert len(brief.for_you) == 10 and brief.for_you_more == 2  # 13 open: 1-12
    assert [i.key[-9:] for i in brief.for_you[:2]] == ["letter-12", "letter-11"]
    text = render_brief(brief)
    assert "  2 more: ctx inbox\n" in text
    got = brief.as_json()["for_you"]
    assert got["reader"] == "agent ONE" and got["more"] == 2 and len(got["items"]) == 10
    assert set(got["items"][0]) == {"key", "from", "shape", "timestamp", "text", "new"}


def test_the_operators_for_you_and_the_new_mark(root, write_store):
    from ctx.brief import Since
    _setup(write_store, dict([_letter(1, to="operator"), _letter(2, to="operator"), _letter(3)]))
    brief = build_brief(Context(root), now=NOW)
    assert [i.key[-8:] for i in brief.for_you] == ["letter-2", "letter-1"]
    agent = build_brief(Context(root, author="Agent One"), now=NOW,
                        since=Since("Agent One", "2026-01-03T12:00:00Z", []))
    assert [(i.key[-8:], i.new) for i in agent.for_you] == [("letter-3", True)]
    assert "  - [new] 2026-01-04 08:00 from Agent Two" in render_brief(agent)


def test_no_letters_leaves_the_brief_as_it_was(root, write_store):
    _setup(write_store, {})
    before = build_brief(Context(root, author="Agent One"), now=NOW)
    assert before.for_you == [] and before.due == []
    text = render_brief(before)
    assert "FOR YOU" not in text and "DUE" not in text
    _setup(write_store, dict([_letter(1, to="someone_else")]))
    after = build_brief(Context(root, author="Agent One"), now=NOW)
    shown = {k: v for k, v in after.as_json().items() if k != "changes" and k != "counts"}
    assert shown == {k: v for k, v in before.as_json().items() if k != "changes" and k != "counts"}
    keys = [i.key for i in after.changes]
    assert [k for k in keys if k.startswith("comms:")] == ["comms:someone_else:1768000001-000001:letter-1"]
    assert [k for k in keys if not k.startswith("comms:")] == [i.key for i in before.changes]


def test_the_start_budget_keeps_for_you_and_due_before_the_later_sections(root, write_store):
    _setup(write_store, dict([_letter(1)]))
    write_store("shared", {"plan_due": make_entry("Renew the certificate.", due="2026-01-13")})
    whole = start_payload(Context(root, author="Agent One"))
    heads = [whole.index(h) for h in ("STANDING INSTRUCTIONS", "FOR YOU", "DUE (", "RECENT CHANGES")]
    assert heads == sorted(heads)  # (the decision is too old for today's DECISIONS)
    seen = set()
    for budget in range(whole.index("FOR YOU"), len(whole), 20):  # whatever the budget, in that order
        fitted = start_payload(Context(root, author="Agent One"), max_chars=budget)
        assert len(fitted) <= budget
        has = ("letter-1]" in fitted, "plan_due:" in fitted, "RECENT CHANGES" in fitted)
        assert has in ((False, False, False), (True, False, False), (True, True, False), (True, True, True))
        seen.add(has)
    assert len(seen) == 4


def test_brief_json_through_the_cli(run, write_store):
    _setup(write_store, dict([_letter(1)]))
    got = json.loads(run("brief", "--json", author="Agent One").stdout)
    assert got["for_you"]["items"][0]["key"] == "comms:agent_one:1768000001-000001:letter-1"
    assert got["due"] == {"items": [], "more": 0}


def test_start_with_letters_and_due_dates_writes_nothing(run, root):
    from support.stores import snapshot
    run("init", "--yes")
    run("send", "Agent Two", "please look", author="Agent One")
    run("set", "plan_due", "renew", "--due", "today", author="Agent One")
    run("brief", author="Agent Two")  # the index and the since-log as a read leaves them
    before = snapshot(root, with_cache=True)
    out = run("start", author="Agent Two").stdout
    assert "FOR YOU" in out and "please look" in out and "plan_due" in out
    assert snapshot(root, with_cache=True) == before
