"""The brief (§5.2), the start payload (§5.1) and session summaries (§7)."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx import summaries
from ctx.brief import build_brief, render_brief
from ctx.display import excerpt, visible
from ctx.start import start_payload
from ctx.summaries import list_summaries, newest_summary, next_summary_name, open_items
from support.contexts import Context
from support.stores import make_entry, snapshot, store_path, write_store_file

NOW = datetime(2026, 1, 12, 12, 0, 0, tzinfo=UTC)


# --- excerpt ---------------------------------------------------------------------------------

def test_excerpt_collapses_whitespace():
    assert excerpt("  a  b\n\n\tc   d \r\n", 100) == "a b c d"


def test_excerpt_removes_leading_amend_notes_only():
    value = "[Amended 2026-01-02: second]\n[Amended 2026-01-01: first]\nthe value [Amended 2026-01-03: x]\nend"
    assert excerpt(value, 100) == "the value [Amended 2026-01-03: x] end"


def test_excerpt_of_non_string_is_its_json_text():
    assert excerpt({"port": 8443, "host": "ü"}, 100) == '{"port":8443,"host":"ü"}'
    assert excerpt(None, 100) == "null"


def test_excerpt_short_text_is_not_cut():
    assert excerpt("alpha beta gamma", 16) == "alpha beta gamma"
    assert excerpt("alpha beta gamma", 200) == "alpha beta gamma"


def test_excerpt_cuts_at_a_word_boundary_and_appends_marker():
    text = "alpha beta gamma delta"
    assert excerpt(text, 12) == "alpha beta ..."      # "gamma" would cross the bound
    assert excerpt(text, 9) == "alpha ..."


def test_excerpt_keeps_a_word_ending_exactly_at_the_bound():
    assert excerpt("alpha beta gamma delta", 10) == "alpha beta ..."
    assert excerpt("alpha beta gamma delta", 16) == "alpha beta gamma ..."
    assert excerpt("alpha beta gamma delta", 5) == "alpha ..."


def test_excerpt_cuts_a_long_first_word_at_the_bound():
    assert excerpt("abcdefghijklmnop qr", 5) == "abcde ..."
    assert excerpt("x" * 300, 100) == "x" * 100 + " ..."


def test_excerpt_bound_counts_the_excerpt_alone():
    text = " ".join(f"w{i}" * (i % 7 + 1) for i in range(200))
    for bound in range(1, 160):
        got = excerpt(text, bound)
        assert got.endswith(" ...")
        body = got[:-4]
        assert 0 < len(body) <= bound
        assert text.startswith(body)
        assert text[len(body)] == " " or len(body) == bound


def test_excerpt_after_notes_and_collapsing_counts_the_bound():
    value = "[Amended 2026-01-01: n]\n" + "word  " * 50
    got = excerpt(value, 20)
    assert got == "word word word word ..."


def _excerpt_of_the_whole(text: str, bound: int) -> str:
    """§5.2's excerpt computed the plain way, collapsing every character of the value, then
    showing its controls."""
    text = visible(re.sub(r"\s+", " ", text).strip())
    if len(text) <= bound:
        return text
    if text[bound] == " ":
        return text[:bound].rstrip() + " ..."
    cut = text.rfind(" ", 0, bound)
    return (text[:cut] if cut > 0 else text[:bound]).rstrip() + " ..."


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "bb", "word", "x" * 90, " ", "  ", "\n", "\t", "\u00a0", "\u2003",
                                 "\x1c", " " * 150, "\x1b", "\u202e", "é"]), max_size=120),
       st.integers(min_value=1, max_value=200))
def test_excerpt_collapses_only_the_head_it_shows_with_the_same_result(parts, bound):
    """excerpt collapses the whitespace of a head of the value only: the same excerpt as
    collapsing the whole, whitespace of every kind, a head mostly blank included."""
    text = "".join(parts)
    assert excerpt(text, bound) == _excerpt_of_the_whole(text, bound)


def test_local_time_is_the_local_zone_of_that_moment(monkeypatch):
    import time as time_module

    from ctx.display import local_time
    if not hasattr(time_module, "tzset"):
        pytest.skip("time.tzset: POSIX only")
    monkeypatch.setenv("TZ", "Europe/Paris")
    time_module.tzset()
    try:
        assert local_time("2026-01-15T12:30:00Z") == "2026-01-15 13:30"   # winter: UTC+1
        assert local_time("2026-07-15T12:30:00Z") == "2026-07-15 14:30"   # summer: UTC+2
        assert local_time("2026-07-15T12:30:00+02:00", with_time=False) == "2026-07-15"
        assert local_time("not a time") == "date unknown"
    finally:
        monkeypatch.delenv("TZ")
        time_module.tzset()


# --- sections -----------------------------------------------------------------------------------

@pytest.fixture
def briefing(root):
    write_store_file(root, "operator", {
        "pref_a": make_entry("Ask one question at a time.", source="operator",
                             tags=["preference"], when="2026-01-12T10:00:00Z"),
        "constraint_old": make_entry("No new dependencies.", source="operator",
                                     tags=["constraint"], when="2026-01-01T00:00:00Z"),
        "dir_by_agent": make_entry("Agent says: lint first.", source="agent",
                                   tags=["directive"], when="2026-01-12T09:00:00Z"),
        "pref_tagged_decision": make_entry("Tagged decision.", source="operator",
                                           tags=["preference", "decision"],
                                           when="2026-01-12T08:00:00Z"),
        "decision_prefixed_pref": make_entry("Keyed decision.", source="operator",
                                             tags=["constraint"], when="2026-01-12T07:30:00Z"),
        "pref_superseded": make_entry("Two questions at a time.", source="operator",
                                      tags=["preference"], when="2026-01-12T07:00:00Z",
                                      status="superseded", superseded_by="pref_a",
                                      status_timestamp="2026-01-12T07:00:00Z"),
    })
    write_store_file(root, "shared", {
        "current_focus": make_entry("Large   uploads:\nfix them.", source="operator",
                                    when="2025-06-01T00:00:00Z"),
        "shared_constraint": make_entry("Deploy only on Fridays.", source="operator",
                                        tags=["constraint"], when="2026-01-11T00:00:00Z"),
        "decision_recent": make_entry("Raise the proxy timeout.", when="2026-01-11T10:00:00Z"),
        "pick_b": make_entry("B over A.", tags=["decision"], when="2026-01-10T10:00:00Z"),
        "decision_edge": make_entry("Exactly seven days old.", tags=["decision"],
                                    when="2026-01-05T12:00:00Z"),
        "decision_old": make_entry("Eight days old.", tags=["decision"],
                                   when="2026-01-04T12:00:00Z"),
        "decision_superseded": make_entry("Pool of 10.", tags=["decision"],
                                          when="2026-01-11T09:00:00Z", status="superseded",
                                          superseded_by="decision_recent",
                                          status_timestamp="2026-01-11T09:00:00Z"),
        "issue_x": make_entry("Uploads fail.", when="2026-01-09T00:00:00Z", status="resolved",
                              status_timestamp="2026-01-09T00:00:00Z", status_note="fixed"),
    })
    write_store_file(root, "agent", {
        "agent_pref": make_entry("Not the operator's store.", source="operator",
                                 tags=["preference"], when="2026-01-12T06:00:00Z"),
        "decision_agent": make_entry("Not in shared.", tags=["decision"],
                                     when="2026-01-12T05:00:00Z"),
    })
    return Context(root)


def _keys(items):
    return [(i.store, i.key) for i in items]


def test_brief_sections_select_by_the_rules(briefing):
    brief = build_brief(briefing, changes=50, now=NOW)
    assert brief.counts == {"operator": 6, "shared": 8, "agent": 2}
    assert brief.focus.text == "Large uploads: fix them."
    assert _keys(brief.instructions) == [
        ("operator", "pref_a"), ("shared", "shared_constraint"), ("operator", "constraint_old")]
    assert _keys(brief.decisions) == [
        ("shared", "decision_recent"), ("shared", "pick_b"), ("shared", "decision_edge")]
    assert _keys(brief.changes) == [
        ("operator", "dir_by_agent"), ("operator", "pref_tagged_decision"),
        ("operator", "decision_prefixed_pref"), ("operator", "pref_superseded"),
        ("agent", "agent_pref"), ("agent", "decision_agent"),
        ("shared", "decision_superseded"), ("shared", "issue_x"), ("shared", "decision_old"),
    ]


def test_brief_decision_window_is_n_days(briefing):
    assert ("shared", "decision_old") in _keys(build_brief(briefing, days=9, now=NOW).decisions)
    assert _keys(build_brief(briefing, days=0, now=NOW).decisions) == []


def test_brief_recent_changes_limit_and_order(briefing):
    brief = build_brief(briefing, changes=3, now=NOW)
    assert _keys(brief.changes) == [("operator", "dir_by_agent"),
                                    ("operator", "pref_tagged_decision"),
                                    ("operator", "decision_prefixed_pref")]
    assert build_brief(briefing, changes=0, now=NOW).changes == []
    assert len(build_brief(briefing, now=NOW).changes) == 9      # all that remain, under 10


def test_brief_render_order_header_and_markers(briefing, root):
    (root / "sessions").mkdir()
    (root / "sessions" / "2026-01-11_session.md").write_text(
        "# Session\n\n## Open\n- The progress bar needs a design decision.\n")
    text = render_brief(build_brief(briefing, now=NOW))
    lines = text.splitlines()
    assert lines[0].startswith("=== ctx brief 2026-01-12 12:00")
    assert "operator 6, shared 8, agent 2 entries" in lines[0]
    assert "ctx get <key> --store <store>" in lines[0]
    heads = ["CURRENT FOCUS", "STANDING INSTRUCTIONS", "OPEN (from sessions/2026-01-11_session.md)",
             "DECISIONS (last 7 days)", "RECENT CHANGES"]
    positions = [text.index(h) for h in heads]
    assert positions == sorted(positions)
    assert "  Large uploads: fix them." in lines
    assert "  - pref_a [operator]: Ask one question at a time." in lines
    assert "  - shared_constraint: Deploy only on Fridays." in lines          # shared: no marker
    assert "  - The progress bar needs a design decision." in lines
    assert "  - 2026-01-11 decision_recent: Raise the proxy timeout." in lines
    assert "  - 2026-01-12 09:00 dir_by_agent [operator]: Agent says: lint first." in lines
    assert "  - 2026-01-12 07:00 pref_superseded [operator] [superseded by pref_a]: " \
           "Two questions at a time." in lines
    assert "  - 2026-01-09 00:00 issue_x [resolved]: Uploads fail." in lines
    assert "  - 2026-01-12 06:00 agent_pref [agent]: Not the operator's store." in lines
    assert "[shared]" not in text


def test_brief_item_limits_and_cut_items_go_to_recent_changes(root):
    write_store_file(root, "operator", {
        f"pref_{i:02d}": make_entry(f"instruction {i} " + "word " * 40, source="operator",
                                    tags=["directive"], when=f"2026-01-12T{i:02d}:00:00Z")
        for i in range(13)})
    write_store_file(root, "shared", {
        f"decision_{i:02d}": make_entry(f"decision {i} " + "word " * 40,
                                        when=f"2026-01-11T{i:02d}:00:00Z")
        for i in range(10)})
    brief = build_brief(Context(root), changes=10, now=NOW)
    assert [i.key for i in brief.instructions] == [f"pref_{i:02d}" for i in range(12, 0, -1)]
    assert [i.key for i in brief.decisions] == [f"decision_{i:02d}" for i in range(9, 1, -1)]
    assert _keys(brief.changes) == [("operator", "pref_00"), ("shared", "decision_01"),
                                    ("shared", "decision_00")]
    for item in brief.instructions:
        assert len(item.text) <= 130 + 4 and item.text.endswith(" ...")
    for item in brief.decisions:
        assert len(item.text) <= 120 + 4
    for item in brief.changes:
        assert len(item.text) <= 100 + 4


def test_brief_focus_bound(root):
    write_store_file(root, "shared", {"current_focus": make_entry("focus " * 300)})
    focus = build_brief(Context(root), now=NOW).focus
    assert focus.text.endswith(" ...") and len(focus.text) <= 604


def test_brief_header_always_printed_on_empty_context(root):
    text = render_brief(build_brief(Context(root), now=NOW))
    assert text.startswith("=== ctx brief ")
    assert "operator 0, shared 0, agent 0 entries" in text
    assert "RECENT CHANGES" not in text


def test_brief_reports_an_unreadable_store_and_goes_on(root):
    write_store_file(root, "agent", {"k": make_entry("fine")})
    (root / "memory" / "shared.json").write_text("{broken")
    brief = build_brief(Context(root), now=NOW)
    assert brief.warnings and "shared.json" in brief.warnings[0]
    assert _keys(brief.changes) == [("agent", "k")]


def test_brief_does_not_grow_with_the_store(root):
    def bulk(start, stop):
        return {f"bulk_{i:05d}": make_entry(f"bulk value {i} " + "word " * 40,
                                            when=f"2026-01-{1 + i % 28:02d}T00:00:00Z")
                for i in range(start, stop)}
    ctx = Context(root)
    write_store_file(root, "shared", bulk(0, 300))
    small = len(render_brief(build_brief(ctx, now=NOW)))
    write_store_file(root, "shared", bulk(300, 3000))
    large = len(render_brief(build_brief(ctx, now=NOW)))
    assert build_brief(ctx, now=NOW).counts["shared"] == 3000
    assert abs(large - small) < 50, (small, large)


def test_brief_instructions_and_decisions_stay_bounded(root):
    def flood(start, stop):
        write_store_file(root, "shared", {
            f"decision_bulk_{i:03d}": make_entry(f"bulk decision {i} " + "word " * 30,
                                                 source="operator", tags=["decision"],
                                                 when="2026-01-12T00:00:00Z")
            for i in range(start, stop)})
        write_store_file(root, "operator", {
            f"pref_bulk_{i:03d}": make_entry(f"bulk instruction {i} " + "word " * 30,
                                             source="operator", tags=["directive"],
                                             when="2026-01-12T00:00:00Z")
            for i in range(start, stop)})
    ctx = Context(root)
    flood(0, 150)
    few = len(render_brief(build_brief(ctx, now=NOW)))
    flood(150, 600)
    many = len(render_brief(build_brief(ctx, now=NOW)))
    assert abs(many - few) < 50, (few, many)


# --- the Open section (§5.2, §7) ---------------------------------------------------------------------

SUMMARY = """# Session 2026-10-13

**Agent:** Agent One

## Done
- done item

## Open items
- NOT-THIS: a heading with more after "Open"

## Open:
- NOT-THIS-EITHER

 ## Open
- NOR-THIS: indented heading

## open
- First item, in full
  its details on a second line
- Second item
  - a nested bullet is not top-level
-not a bullet
* not a dash bullet
-
### a sub-heading does not end the section
- Third item after the sub-heading
# a level-one heading does not end it either
- Fourth item

## Commits
- abc1234 not open

## Open
- a second Open section is not read
"""


def test_open_items_reads_the_first_exact_open_section():
    assert open_items(SUMMARY) == ["First item, in full", "Second item",
                                   "Third item after the sub-heading", "Fourth item"]


@pytest.mark.parametrize("heading", ["## Open", "## OPEN", "## oPeN"])
def test_open_heading_any_case(heading):
    assert open_items(f"# S\n\n{heading}\n- item\n") == ["item"]


def test_open_items_none_without_section():
    assert open_items("# Session\n\n## Done\n- x\n") == []
    assert open_items("") == []


def _summary(root, name, body, mtime=None):
    sessions = root / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    path = sessions / name
    path.write_text(body, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_brief_open_section_limit_then_count(root):
    bullets = "".join(f"- open item {i:02d}\n" for i in range(18))
    _summary(root, "2026-01-12_session.md", "# S\n\n## Open\n" + bullets + "- " + "long " * 60 + "\n")
    brief = build_brief(Context(root), now=NOW)
    assert [i.text for i in brief.open_items] == [f"open item {i:02d}" for i in range(15)]
    assert brief.open_more == 4
    assert brief.open_from == "sessions/2026-01-12_session.md"
    text = render_brief(brief)
    assert "  ... and 4 more in sessions/2026-01-12_session.md" in text
    assert "open item 15" not in text


def test_brief_open_item_bound(root):
    _summary(root, "2026-01-12_session.md", "## Open\n- " + "long " * 60 + "\n")
    item = build_brief(Context(root), now=NOW).open_items[0].text
    assert item.endswith(" ...") and len(item) <= 154


# --- which summary is newest (§7) ------------------------------------------------------------------

def test_newest_summary_is_last_name_in_byte_order(root):
    names = [("2026-10-13za_session.md", 1000), ("2026-10-13b_session.md", 5000),
             ("2026-10-12_session.md", 9000), ("2026-10-13z_session.md", 4000),
             ("2026-10-13_session.md", 3000)]
    for name, mtime in names:
        _summary(root, name, f"## Open\n- FROM {name}\n", mtime)
    for stray in ("README.md", "notes_session.md", "zz_session.md", "2026-10-13a_session.md",
                  "2026-10-14.md", "2026-10-14_session.md.bak", "2099-12-31_session.txt",
                  "2026-10-14_Session.md", "2026-10-14bb_session.md", "2026-10-14ab_session.md",
                  "2026-1-14_session.md"):
        _summary(root, stray, "## Open\n- STRAY\n", 99999)
    (root / "sessions" / "2099-01-01_session.md").mkdir()      # a directory is not a summary
    assert newest_summary(root).name == "2026-10-13za_session.md"
    assert [s.name for s in list_summaries(root)] == [
        "2026-10-12_session.md", "2026-10-13_session.md", "2026-10-13b_session.md",
        "2026-10-13z_session.md", "2026-10-13za_session.md"]
    brief = build_brief(Context(root), now=NOW)
    assert [i.text for i in brief.open_items] == ["FROM 2026-10-13za_session.md"]


def test_no_summary_without_sessions_dir(root):
    assert newest_summary(root) is None
    assert build_brief(Context(root), now=NOW).open_items == []


def test_a_name_with_a_trailing_newline_is_not_a_summary(root):
    _summary(root, "2026-10-13_session.md", "## Open\n- REAL\n")
    _summary(root, "2099-01-01_session.md\n", "## Open\n- HIJACKED\n")
    assert newest_summary(root).name == "2026-10-13_session.md"


# --- next_summary_name --------------------------------------------------------------------------------

def test_next_summary_name_sequence_over_thirty_sessions(root):
    (root / "sessions").mkdir(parents=True)
    _summary(root, "2026-10-12zz_session.md", "other day")
    seen = []
    for _ in range(30):
        name = next_summary_name(root, "2026-10-13")
        seen.append(name)
        _summary(root, name, "x")
    suffixes = [n[len("2026-10-13"):-len("_session.md")] for n in seen]
    assert suffixes == [""] + list("bcdefghijklmnopqrstuvwxyz") + ["za", "zb", "zc", "zd"]
    assert newest_summary(root).name == "2026-10-13zd_session.md"
    assert sorted(seen, key=lambda n: n.encode()) == seen


def test_next_summary_name_follows_the_newest_past_a_gap(root):
    _summary(root, "2026-10-13_session.md", "x")
    _summary(root, "2026-10-13d_session.md", "x")
    assert next_summary_name(root, "2026-10-13") == "2026-10-13e_session.md"
    assert next_summary_name(root, "2026-10-14") == "2026-10-14_session.md"


def test_suffix_sequence_keeps_byte_order():
    gen = summaries.suffix_sequence()
    suffixes = [next(gen) for _ in range(120)]
    assert suffixes[26] == "za" and suffixes[51] == "zz" and suffixes[52] == "zza"
    names = [f"2026-10-13{s}_session.md" for s in suffixes]
    assert all(summaries.is_summary_name(n) for n in names)
    assert sorted(names, key=lambda n: n.encode()) == names
    assert len(set(names)) == len(names)


# --- the start payload (§5.1) -------------------------------------------------------------------------

def test_start_payload_order(root, briefing):
    from ctx.model import now
    write_store_file(root, "shared", {"decision_today": make_entry("Decided today.",
                                                                   tags=["decision"], when=now())})
    (root / "RULES.md").write_text("- RULE-MARKER-7f3a: write only through ctx.\n")
    _summary(root, "2026-01-11_session.md",
             "# Session\n\n**Agent:** SUMMARY-MARKER\n\n## Open\n- OPEN-MARKER\n")
    _summary(root, "2026-01-10_session.md", "# Session\n\n**Agent:** OLD-SUMMARY\n")
    text = start_payload(briefing)
    marks = [text.find(m) for m in ("=== RULES (RULES.md) ===", "RULE-MARKER-7f3a",
                                    "=== ctx brief", "Large uploads", "pref_a", "OPEN-MARKER",
                                    "decision_today", "RECENT CHANGES",
                                    "=== SESSION SUMMARY (sessions/2026-01-11_session.md) ===",
                                    "SUMMARY-MARKER")]
    assert all(m >= 0 for m in marks), marks
    assert marks == sorted(marks), text
    assert "OLD-SUMMARY" not in text


def test_start_payload_rules_verbatim(root):
    rules = "# Rules\n\n- one\n  - two, with ünïcode and `code`\n\n- three\n"
    root.mkdir()
    (root / "RULES.md").write_text(rules, encoding="utf-8")
    assert rules.rstrip("\n") in start_payload(Context(root))


def test_start_payload_on_empty_root_says_so(root):
    text = start_payload(Context(root))
    assert "no RULES.md" in text
    assert "no session summary yet" in text
    assert "=== ctx brief" in text
    assert not root.exists()


def test_start_and_reads_write_nothing(root, briefing, run):
    (root / "RULES.md").write_text("rules\n")
    _summary(root, "2026-01-11_session.md", "## Open\n- item\n")
    assert run("set", "k", "a write first, so a repository may exist").exit_code == 0
    strict = snapshot(root, with_cache=True)
    assert run("start").exit_code == 0
    assert snapshot(root, with_cache=True) == strict  # start writes nothing, not even a cache
    before = snapshot(root)
    for args in (["start"], ["brief"], ["brief", "--json"], ["get", "k"], ["get", "k", "--all"],
                 ["search", "x"], ["list"], ["list", "--keys-only"], ["get", "pref_a", "-s",
                                                                     "operator", "-v"]):
        result = run(*args)
        assert result.exit_code == 0, (args, result.output)
    assert snapshot(root) == before


def test_start_on_a_missing_root_exits_0_and_creates_nothing(root, run):
    result = run("start")
    assert result.exit_code == 0
    assert "no session summary yet" in result.stdout
    assert not root.exists()
    result = run("brief")
    assert result.exit_code == 0 and "operator 0, shared 0, agent 0 entries" in result.stdout
    assert not root.exists()


def test_start_with_a_broken_store_exits_0(root, run):
    root.mkdir()
    (root / "memory").mkdir()
    (root / "memory" / "shared.json").write_text("not json")
    result = run("start")
    assert result.exit_code == 0
    assert "shared.json" in result.stdout


def test_start_when_ctx_home_is_a_file_exits_0(root, run):
    root.write_text("not a directory")
    result = run("start")
    assert result.exit_code == 0
    assert re.search(r"could not be read|is a file", result.stdout)
    assert root.read_text() == "not a directory"


def test_start_writes_nothing_even_with_a_stale_index(root, run):
    assert run("set", "k", "one").exit_code == 0
    assert run("get", "k").exit_code == 0            # builds the index in .git/ctx
    assert (root / ".git" / "ctx").is_dir()
    data = json.loads(store_path(root, "shared").read_text())
    data["entries"]["outside"] = make_entry("written by another tool")
    store_path(root, "shared").write_text(json.dumps(data, indent=2))  # the index is now stale
    strict = snapshot(root, with_cache=True)
    result = run("start")
    assert result.exit_code == 0 and "outside" in result.stdout
    assert snapshot(root, with_cache=True) == strict
