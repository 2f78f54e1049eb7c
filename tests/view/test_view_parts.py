"""The pieces of the operator's view: word diffs, safe Markdown, the SVG chart, redaction."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from support.viewpage import parse


def test_word_diff_keeps_removes_and_adds_words():
    from ctx.view.words import word_diff
    segments = word_diff("the quick brown fox jumps", "the quick red fox jumps high")
    assert segments == [("=", "the quick "), ("-", "brown "), ("+", "red "), ("=", "fox jumps "), ("+", "high")]
    assert "".join(t for k, t in segments if k != "-") == "the quick red fox jumps high"
    assert "".join(t for k, t in segments if k != "+") == "the quick brown fox jumps "
    assert word_diff("alpha beta gamma", "one two three") == [("-", "alpha beta gamma"), ("+", "one two three")]
    assert word_diff("", "new") == [("+", "new")]
    assert word_diff("same", "same") == [("=", "same")]


def test_word_diff_leaves_out_long_unchanged_stretches():
    from ctx.view.words import word_diff
    words = " ".join(f"w{n}" for n in range(40))
    segments = word_diff(words, words + " added")
    assert segments[0][0] == "~" and "words" in segments[0][1]
    assert segments[-1] == ("+", "added")


def test_markdown_is_escaped_then_marked():
    from ctx.view.markdown import render
    html = render("# Title <b>\n\n- **bold** and *em* and `<code>`\n  - nested [ok](https://x.test/?a=1&b=2)"
                  " [no](javascript:alert(1))\n\n> quote <i>\n\n```\n<script>alert(1)</script>\n```\n"
                  "<img src=x onerror=alert(1)>\n")
    page, errors = parse(html)
    assert not errors
    assert {n.tag for n in page.iter()} - {"#document"} == {"h4", "ul", "li", "strong", "em", "code", "a",
                                                             "blockquote", "p", "pre"}
    links = page.find_all("a")
    assert [a.attrs["href"] for a in links] == ["https://x.test/?a=1&b=2"]
    text = page.text()
    for literal in ("Title <b>", "<code>", "[no](javascript:alert(1))", "<script>alert(1)</script>",
                    "<img src=x onerror=alert(1)>", "quote <i>"):
        assert literal in text, literal


def test_the_chart_has_a_bar_segment_per_day_and_author():
    from ctx.view.chart import chart, colour_classes, window
    from ctx.view.data import Commit
    day = datetime(2026, 11, 2, 12, tzinfo=UTC)
    commits = [Commit(f"{n:040x}", day + timedelta(days=n % 3), ["A", "B <x>"][n % 2], "a@x", "set", [], [], "s")
               for n in range(9)]
    classes = colour_classes(commits)
    assert classes == {"A": "a0", "B <x>": "a1"}
    first, last = window(commits, 42)
    assert last == date(2026, 11, 4) and (last - first).days == 13  # at least two weeks shown
    svg = chart(commits, classes, first, last)
    page, errors = parse(svg)
    assert not errors
    rects = page.find_all("rect")
    assert len(rects) == 6  # three days, two authors each
    titles = [r.find("title").text() for r in rects]
    assert "2026-11-02 · B <x>: 1 write" in titles and any(t.endswith("2 writes") for t in titles)


def test_clean_redacts_what_the_scanner_finds():
    from ctx.view import data
    token = "ghp_" + "Zq8RtY2mWx4Lk9Pv7Nb3Hc6Jd1Fg5Ss0Aa2B"
    data.reset()
    data.prescan(["nothing here", f"a token {token} here", "more"])
    assert data.clean(f"a token {token} here") == "a token ghp_…(40 chars) here"
    assert data.clean(f"again {token}") == "again ghp_…(40 chars)"  # found once, redacted everywhere
    assert data.clean("nothing here") == "nothing here"
    data.reset()
    assert data.clean(f"unscanned {token}") == "unscanned ghp_…(40 chars)"
    assert data.shown(f"x {token}", True) == "x gh…(42 chars) (stored with --force: not shown)"
