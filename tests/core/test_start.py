"""The start payload (§5.1) and its budget (ctx/start.py): never longer than the budget,
whole items in order of importance, one line naming what was left out; RULES.md and
the summary byte for byte; where the budget comes from."""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctx.brief import Section, Since, SinceChange
from ctx.start import budget_from, fit, render, start_payload
from support.contexts import Context
from support.stores import make_entry, write_store_file

ELISION = re.compile(r"\n\[ctx: \d+ more items \([\d,]+ chars\) cut to fit [\d,]+; see ctx [^\n]+\]\n$")


def _context(root, rules: str, entries: dict, summary: str | None) -> Context:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    (root / "sessions").mkdir(exist_ok=True)
    (root / "RULES.md").write_text(rules, encoding="utf-8")
    for store, found in entries.items():
        write_store_file(root, store, found)
    if summary is not None:
        (root / "sessions" / "2026-11-29_session.md").write_text(summary, encoding="utf-8")
    return Context(root)


words = st.text(alphabet=st.sampled_from("abcdefghij klmnop  qrstuvwxyz.,"), min_size=1, max_size=300)
keys = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)


@st.composite
def contexts(draw):
    first = "# " + draw(st.text(alphabet=st.sampled_from("Rules for agents"), min_size=1, max_size=40)).strip()
    rules = first + "\n" + "".join(f"- {draw(words)}\n" for _ in range(draw(st.integers(0, 12))))
    shared = {}
    for key in draw(st.lists(keys, max_size=40, unique=True)):
        tags = draw(st.sampled_from([[], ["decision"], ["preference"]]))
        source = draw(st.sampled_from(["agent", "operator"]))
        shared[key] = make_entry(draw(words), source=source, tags=tags, when="2026-11-29T10:00:00Z")
    summary = None
    if draw(st.booleans()):
        opened = "".join(f"- {draw(words)}\n" for _ in range(draw(st.integers(0, 20))))
        summary = (f"# Session\n\n**Agent:** A\n\n## Done\n- {draw(words)}\n\n## Open\n{opened}\n"
                   f"## Notes\n{draw(words)}\n")
    return rules, {"shared": shared}, summary


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=contexts(), budget=st.integers(200, 20000))
def test_any_context_any_budget_fits_and_keeps_the_rules_first_line(root, case, budget):
    rules, entries, summary = case
    shutil.rmtree(root, ignore_errors=True)
    context = _context(root, rules, entries, summary)
    whole = start_payload(context)
    out = start_payload(context, max_chars=budget)
    assert len(out) <= budget
    assert rules.splitlines()[0] in out
    if len(whole) <= budget:
        assert out == whole  # nothing to cut: the full §5.1 payload
    else:
        assert ELISION.search(out), out[-300:]
        kept = out[:ELISION.search(out).start()]
        # whole items, in order: what is printed of the rules and the brief is the full payload
        # with some of its lines left out (the summary's Open section, printed first, aside)
        printed = kept.split("\n=== SESSION SUMMARY")[0].splitlines()
        if printed and not whole.startswith(kept.split("\n=== SESSION SUMMARY")[0]):
            lines = iter(whole.splitlines())
            assert all(any(line == other for other in lines) for line in printed)


def test_rules_longer_than_the_budget_print_as_much_as_fits_and_say_so(root):
    rules = "# Rules\n" + "".join(f"- rule number {n} says something long enough\n" for n in range(200))
    context = _context(root, rules, {}, None)
    out = start_payload(context, max_chars=1000)
    assert len(out) <= 1000 and out.startswith("=== RULES (RULES.md) ===\n# Rules\n- rule number 0")
    assert "ctx start --max-chars 0" in out.splitlines()[-1]


def test_an_item_that_does_not_fit_is_left_out_and_the_later_ones_still_printed():
    from ctx.brief import Section
    from ctx.start import fit
    parts = [Section("rules", "=== RULES ===\n", ["- one\n"], "ctx start --max-chars 0", always=True),
             Section("for_you", "\nFOR YOU\n", ["  - " + "x" * 5000 + "\n", "  - a short letter\n"], "ctx inbox"),
             Section("open", "\nOPEN\n", ["  - the open item\n"], "ctx summary show")]
    out = fit(parts, 1000)
    assert len(out) <= 1000
    assert "FOR YOU\n  - a short letter\n" in out and "OPEN\n  - the open item\n" in out, out
    assert "x" * 100 not in out and "[ctx: 1 more items" in out and "ctx inbox" in out.splitlines()[-1]


def test_the_order_of_importance(root):
    """A budget that fits the rules, the header and the focus but not the decisions:
    focus in, decisions and changes out, the elision line names `ctx brief`."""
    entries = {"shared": {"current_focus": make_entry("Ship the upload fix", when="2026-11-29T10:00:00Z"),
                          **{f"decision_{n}": make_entry("x" * 90, tags=["decision"], when="2026-11-29T10:00:00Z")
                             for n in range(8)}}}
    context = _context(root, "# Rules\n- one\n", entries, None)
    whole = start_payload(context)
    out = start_payload(context, max_chars=whole.index("DECISIONS") + 320)  # the elision line takes ~140
    assert "Ship the upload fix" in out and "DECISIONS" in out and "RECENT CHANGES" not in out
    assert "ctx brief" in out.splitlines()[-1]


def test_the_summary_open_section_comes_before_the_rest_of_it(root):
    summary = ("# Session\n\n**Agent:** A\n\n## Done\n" + "".join(f"- done {n} " + "y" * 80 + "\n" for n in range(30))
               + "\n## Open\n- the open item\n")
    context = _context(root, "# Rules\n", {}, summary)
    whole = start_payload(context)
    out = start_payload(context, max_chars=len(whole) - 500)
    assert "## Open\n- the open item\n" in out and "done 29" not in out
    assert out.index("## Open") < out.index("done 0") if "done 0" in out else True
    assert "ctx summary show" in out.splitlines()[-1]


@pytest.mark.parametrize("rules", [10, 150])
def test_the_elision_counts_what_was_left_out_and_stays_whole(rules):
    """The elision line says how many characters were left out: a section none of whose items
    was printed leaves its heading out once, not once per item. Counted once per item, the
    figure outgrew the room kept for the line, and the cut to the budget took its newline
    (hypothesis found it in test_any_context_any_budget_fits_and_keeps_the_rules_first_line)."""
    parts = [Section("rules", "=== RULES ===\n", ["r" * rules + "\n"], "ctx start --max-chars 0", always=True),
             Section("open", "\nOPEN (from sessions/2026-11-29_session.md)\n", ["  - item\n"] * 50,
                     "ctx summary show")]
    for budget in (120, 200, 260):
        out = fit(parts, budget)
        assert len(out) <= budget and ELISION.search(out), (budget, out)
        printed = out[:ELISION.search(out).start()]
        assert render(parts).startswith(printed)
        left = len(render(parts)) - len(printed)
        assert f"({left:,} chars)" in out, (budget, left, out)


def test_the_sessions_folder_is_listed_once_and_the_summary_read_once(root, monkeypatch):
    """The brief's newest summary is the one start shows and the one a compaction is
    compared with: sessions/ is listed once and the summary read once, budget or not."""
    from ctx import summaries
    summary = ("# Session\n\n## Done\n" + "".join(f"- done {n}\n" for n in range(40)) + "\n## Open\n- the open item\n")
    context = _context(root, "# Rules\n", {}, summary)
    listed: list[str] = []
    read: list[str] = []
    real_list, real_read = summaries.list_summaries, summaries.Summary.read
    monkeypatch.setattr(summaries, "list_summaries", lambda where: listed.append(where) or real_list(where))
    monkeypatch.setattr(summaries.Summary, "read", lambda self: read.append(self.name) or real_read(self))
    whole = start_payload(context)
    assert whole.endswith(summary) and "the open item" in whole
    assert len(listed) == 1 and len(read) == 2, (listed, read)  # (read by the brief's OPEN, then shown)
    listed.clear()
    read.clear()
    out = start_payload(context, max_chars=len(whole) - 100)
    assert "## Open\n- the open item\n" in out
    assert len(listed) == 1 and len(read) == 2, (listed, read)


def test_rules_and_summary_are_printed_byte_for_byte(root):
    rules = "# Rules  \nA Markdown line break follows:  \nthen this.\t\n\n\n"
    summary = "# Session\n\n**Agent:** A  \n\n## Open\n- item  \n\n\n"
    context = _context(root, rules, {}, summary)
    out = start_payload(context)
    assert "=== RULES (RULES.md) ===\n" + rules in out
    assert out.endswith("=== SESSION SUMMARY (sessions/2026-11-29_session.md) ===\n" + summary)


def test_the_since_section_comes_after_the_instructions_and_before_open(root):
    summary = "# Session\n\n## Open\n- open thing\n"
    entries = {"operator": {"pref": make_entry("Ask first", source="operator", tags=["preference"])}}
    context = _context(root, "# Rules\n", entries, summary)
    since = Since("Agent A", "2026-11-28T10:00:00Z",
                  [SinceChange("shared", "k1", "Agent B", "2026-11-29T09:00:00Z", "amended"),
                   SinceChange("agent", "k2", "Agent C", "2026-11-29T08:00:00Z", "deleted")], more=3)
    out = start_payload(context, since=since)
    assert out.index("STANDING INSTRUCTIONS") < out.index("SINCE YOUR LAST SESSION") < out.index("OPEN (from")
    assert "k1: amended by Agent B" in out and "k2 [agent]: deleted by Agent C" in out
    assert "... and 3 more" in out
    first = start_payload(context, since=Since("Agent A", None, []))
    assert "your first session here, Agent A" in first


@pytest.mark.parametrize("args,expected", [
    ((9000, None, 100000, None, 500), 9000),       # the option first
    ((0, None, 100000, None, 500), None),          # --max-chars 0: no budget
    ((None, 1000, 100000, None, 500), 4000),       # tokens, 4 characters each
    ((None, None, 100000, 50000, 500), 5000),      # 5% of the window in characters
    ((None, None, None, 50000, 500), 10000),       # 5% of 4 x the window in tokens
    ((None, None, None, None, 500), 500),          # this machine's setting
    ((None, None, None, None, 0), None),           # none at all: the whole payload
])
def test_where_the_budget_comes_from(args, expected):
    assert budget_from(*args) == expected
