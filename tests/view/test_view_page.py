"""``ctx view``: the operator's page, parsed (``html.parser``) and checked.

Every section is there; every entry and every commit HEAD reaches is on it;
text written by agents (values, keys, tags, authors, summaries) is text,
never an element; a value stored with ``--force`` shows only as a preview;
a purged entry is gone; each entry's versions say what they changed, as
``ctx history`` does.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.gitutil import commit_ids, git
from support.viewpage import parse

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
TOKEN = "ghp_" + "Zq8RtY2mWx4Lk9Pv7Nb3Hc6Jd1Fg5Ss0Aa2B"  # a GitHub token's shape
SECTIONS = ("top", "timeline", "commits", "brief", "entries", "summaries", "churn")
ELEMENTS = {"html", "head", "meta", "title", "style", "script", "body", "header", "h1", "small", "dl", "div",
            "dt", "dd", "code", "p", "nav", "a", "main", "section", "h2", "span", "figure", "svg",
            "line", "text", "rect", "ul", "li", "select", "option", "label", "button", "table", "thead",
            "tbody", "tr", "th", "td", "h3", "h4", "h5", "h6", "ol", "input", "noscript", "details",
            "summary", "del", "ins", "i", "b", "br", "strong", "em", "article", "pre", "blockquote", "hr"}


def ok(result):
    assert result.exit_code == 0, result.output
    return result


def view(run, root: Path, *args: str) -> tuple:
    """Run ``ctx view --out FILE``; the parsed page, its text and its file."""
    out = root.parent / "page.html"
    result = ok(run("view", "--out", str(out), *args))
    assert result.stdout.strip() == str(out)
    text = out.read_text(encoding="utf-8")
    page, errors = parse(text)
    assert not errors, errors
    return page, text, out


def entry_rows(page) -> dict[tuple[str, str], object]:
    """(group, key) -> the entry's row, for every row of the entries section."""
    rows = {}
    for ol in page.find_all("ol", class_="entries"):
        group = ol.attrs["id"].removeprefix("entries-")
        for li in (c for c in ol.children if not isinstance(c, str)):
            rows[(group, li.find("h4").find("a").text())] = li
    return rows


@pytest.fixture
def busy(run, root):
    """A context with three authors, statuses, a deletion, a summary and hostile text."""
    ok(run("init", "--focus", "Large uploads: find why they fail"))
    ok(run("set", "result_timeout", "Uploads over 50 MB fail at 30 s: the proxy timeout.",
           "--tag", "uploads", "--basis", "verified", author="Agent One"))
    ok(run("set", "result_timeout", "Uploads over 50 MB fail at 30 s: nginx's proxy read timeout.",
           "--tag", "uploads", author="Agent Two"))
    ok(run("amend", "result_timeout", "it is proxy_read_timeout", author="Agent One"))
    ok(run("set", "decision_chunks", "Chunk uploads into 8 MB parts.", "--tag", "decision",
           "--source", "operator", "--basis", "reported"))
    ok(run("set", "pref_one_question", "Ask one question at a time.", "--store", "operator",
           "--tag", "preference", "--source", "operator"))
    ok(run("set", "scratch", "agent notes", "--store", "agent", author="Agent Three"))
    ok(run("set", "issue_uploads", "Uploads over 50 MB fail.", author="Agent Two"))
    ok(run("resolve", "issue_uploads", "--note", "a 200 MB chunked upload passes", author="Agent Two"))
    ok(run("set", "temporary", "soon gone", author="Agent Three"))
    ok(run("delete", "temporary", author="Agent One"))
    ok(run("summary", "new", "--from-stdin", "--agent", "Agent One",
           input="## Done\n- Chunked uploads (**decision_chunks**)\n\n## Open\n- Progress bar for `large` uploads\n"))
    return root


def test_every_section_is_there_and_the_data_block_parses(run, busy):
    page, text, _ = view(run, busy)
    for ident in SECTIONS:
        assert page.by_id(ident) is not None, ident
    data = json.loads(page.by_id("ctx-view-data").raw())
    assert data["commit"] == commit_ids(busy)[0]
    assert data["counts"] == {"operator": 1, "shared": 4, "agent": 1}
    assert set(data["authors"]) == {"Agent One", "Agent Two", "Agent Three", "operator"}
    header = page.by_id("top").text()
    assert "operator 1, shared 4, agent 1" in header and commit_ids(busy)[0][:8] in header
    assert "no remote" in header
    assert page.by_id("timeline").find("svg") is not None
    assert len(page.by_id("timeline").find_all("rect")) >= 1
    brief = page.by_id("brief").text()
    assert "decision_chunks" in brief and "Chunk uploads into 8 MB parts." in brief
    assert "Progress bar for large uploads" in brief  # the open item, its Markdown rendered
    assert "Large uploads: find why they fail" in brief
    summaries = page.by_id("summaries")
    assert "decision_chunks" in [s.text() for s in summaries.find_all("strong")]
    churn = page.by_id("churn").text()
    assert "result_timeout" in churn and "3 versions" in churn


def test_every_entry_and_every_commit_is_on_the_page(run, busy, entries):
    page, _, _ = view(run, busy)
    rows = entry_rows(page)
    for store in ("operator", "shared", "agent"):
        for key, entry in entries(store).items():
            row = rows[(store, key)]
            assert row.find("p").text() == entry["value"], key
    assert ("deleted", "temporary") in rows and "soon gone" in rows[("deleted", "temporary")].text()
    table = page.by_id("commit-rows")
    listed = [tr.attrs["id"] for tr in table.find_all("tr")]
    assert listed == [f"c-{c[:8]}" for c in commit_ids(busy)]  # every commit, newest first
    for tr in table.find_all("tr"):
        assert len(tr.find_all("td")) == 6
    authors = {page.by_id(i).find_all("td")[2].text() for i in listed}
    assert authors == {"Agent One", "Agent Two", "Agent Three", "operator"}
    options = [o.attrs["value"] for o in page.by_id("f-op").find_all("option")]
    assert {"set", "amend", "resolve", "delete", "summary", "init"} <= set(options)


def test_each_entry_has_its_versions_with_what_they_changed(run, busy):
    page, _, _ = view(run, busy)
    row = entry_rows(page)[("shared", "result_timeout")]
    versions = row.find("ol", class_="vs").find_all("li")
    assert len(versions) == 3  # newest first: amend, set by Agent Two, created by Agent One
    assert "Agent One · amend" in versions[0].text() and "amended: “it is proxy_read_timeout”" in versions[0].text()
    changed = versions[1]
    assert "Agent Two · set" in changed.text()
    assert [d.text() for d in changed.find_all("del")] == ["the "]
    assert [i.text() for i in changed.find_all("ins")] == ["nginx's ", "read "]
    assert "Agent One · created" in versions[2].text()
    resolved = entry_rows(page)[("shared", "issue_uploads")]
    assert "resolved: “a 200 MB chunked upload passes”" in resolved.text()
    links = [a.attrs["href"] for a in row.find_all("a")]
    assert all(page.by_id(h[1:]) is not None for h in links)  # each version links to its commit row


def test_text_written_by_agents_is_never_an_element(run, root):
    hostile = "<img/src=x/onerror=alert(1)>"  # a valid key: no whitespace
    ok(run("init"))
    ok(run("set", "script_value", SCRIPT, "--tag", SCRIPT, author=IMG))
    ok(run("set", "img_value", IMG, "--tag", "<b>bold</b>"))
    ok(run("set", hostile, "a key that looks like an element", author="</script><script>alert(2)</script>"))
    ok(run("set", "script_value", SCRIPT + " and " + IMG, author="Agent <i>Two</i>"))
    ok(run("summary", "new", "--from-stdin", "--agent", IMG,
           input=f"## Done\n- {SCRIPT}\n- {IMG} [click](javascript:alert(1)) [ok](https://example.com/?a=<b>)\n"
                 f"<iframe src=x></iframe>\n\n## Open\n- {SCRIPT}\n"))
    page, text, _ = view(run, root)
    tags = {n.tag for n in page.iter()} - {"#document"}
    assert tags <= ELEMENTS, tags - ELEMENTS
    scripts = page.find_all("script")
    from ctx.view import assets
    assert [s.raw() for s in scripts] == [assets.EARLY, page.by_id("ctx-view-data").raw(), assets.SCRIPT]
    for node in page.iter():
        assert not any(name.startswith("on") for name in node.attrs), node
        href = node.attrs.get("href")
        assert href is None or href.startswith(("#", "https://", "http://")), href
    shown = page.find("body").text()
    for literal in (SCRIPT, IMG, hostile, "<b>bold</b>", "<iframe src=x></iframe>", "[click](javascript:alert(1))"):
        assert literal in shown, literal
    rows = entry_rows(page)
    assert (("shared", hostile)) in rows
    assert rows[("shared", "img_value")].find("span", class_="tag").text() == "<b>bold</b>"
    assert f"by {IMG}" in rows[("shared", "script_value")].text() or IMG in rows[("shared", "script_value")].text()
    data = page.by_id("ctx-view-data").raw()
    assert "<" not in data and ">" not in data and "&" not in data  # \u003c and so on
    json.loads(data)


def test_the_data_block_escapes_what_could_close_it():
    from ctx.view.page import json_block
    payload = {"a": "</script><script>alert(1)</script>", "b": "&amp; <!-- -->"}
    block = json_block(payload)
    assert not set(block) & set("<>&") and json.loads(block) == payload


def test_a_forced_value_shows_only_as_a_preview(run, root):
    ok(run("init"))
    ok(run("set", "tok", f"the deploy token is {TOKEN}", "--force"))
    ok(run("amend", "tok", "rotate it soon"))
    ok(run("set", "old_tok", f"{TOKEN} was here", "--force"))
    ok(run("set", "old_tok", "nothing secret now"))
    page, text, _ = view(run, root)
    assert TOKEN not in text and TOKEN[4:] not in text
    rows = entry_rows(page)
    value = rows[("shared", "tok")].find("p")
    assert "stored with --force: not shown" in value.text() and "forced" in value.classes()
    history = rows[("shared", "old_tok")]
    assert history.find("p").text() == "nothing secret now"  # a later set without --force passed the check
    assert "changed (stored with --force: not shown)" in history.text()
    subjects = page.by_id("commit-rows").text()
    assert "(value not quoted: stored with --force)" in subjects


def test_what_looks_like_a_credential_is_redacted(run, root):
    ok(run("init"))
    ok(run("summary", "new", "--from-stdin", "--force", "--agent", "Agent One",
           input=f"## Done\n- used {TOKEN} by mistake\n\n## Open\n- revoke {TOKEN}\n"))
    page, text, _ = view(run, root)
    assert TOKEN not in text
    assert "ghp_…(40 chars)" in page.by_id("summaries").text()
    assert "ghp_…(40 chars)" in page.by_id("brief").text()


def test_a_purged_entry_is_gone(run, root):
    ok(run("init"))
    ok(run("set", "keep", "fine"))
    ok(run("set", "leaked_thing", f"{TOKEN}", "--force"))
    ok(run("amend", "leaked_thing", "oops"))
    ok(run("set", "keep", "fine again"))
    ok(run("purge", "leaked_thing", "--yes"))
    page, text, _ = view(run, root)
    assert "leaked_thing" not in text and TOKEN not in text and "oops" not in text
    assert ("shared", "keep") in entry_rows(page)
    assert "changed nothing" in page.by_id("top").text()


def test_an_empty_and_a_fresh_context(run, root):
    page, text, out = view(run, root)  # nothing at all: no root yet
    for ident in SECTIONS:
        assert page.by_id(ident) is not None, ident
    assert "No commits yet" in page.by_id("timeline").text()
    assert not (root / ".git").exists()
    ok(run("init"))
    page, _, _ = view(run, root)
    assert "current_focus" not in page.by_id("entries").text()
    assert len(page.by_id("commit-rows").find_all("tr")) == 1  # the init commit
    default = ok(run("view")).stdout.strip()
    assert default == str(root / ".git" / "ctx" / "view" / "ctx-view.html")
    assert Path(default).stat().st_mode & 0o777 == 0o600
    assert git(root, "status", "--porcelain").stdout == ""  # never committed, never untracked


def test_since_and_author_choose_the_commits(run, busy):
    page, _, _ = view(run, busy, "--author", "agent two")
    rows = page.by_id("commit-rows").find_all("tr")
    assert rows and all(r.find_all("td")[2].text() == "Agent Two" for r in rows)
    assert {k for _, k in entry_rows(page)} == {"result_timeout", "issue_uploads"}
    page, _, _ = view(run, busy, "--since", "2999-01-01")
    assert page.by_id("commit-rows").find_all("tr") == []
    assert run("view", "--since", "yesterday-ish").exit_code == 2


def test_the_header_shows_the_sync_state(run, root, tmp_path):
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    ok(run("init"))
    ok(run("remote", "add", "origin", str(bare)))
    page, _, _ = view(run, root)
    assert "origin: never synced" in page.by_id("top").text()
    ok(run("set", "a", "1"))
    ok(run("sync"))
    ok(run("set", "b", "2"))
    header = view(run, root)[0].by_id("top").text()
    assert "origin/main: 1 ahead, 0 behind" in header and "last sync" in header


def test_open_asks_the_default_browser(run, root, monkeypatch):
    import webbrowser
    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    ok(run("init"))
    out = Path(ok(run("view", "--open")).stdout.strip())
    assert opened == [out.as_uri()]


def test_json_and_no_git(run, root):
    ok(run("init"))
    ok(run("set", "k", "v"))
    result = json.loads(ok(run("view", "--json")).stdout)
    assert result["entries"] == 1 and result["commits"] == 2 and result["commit"] == commit_ids(root)[0]
    assert Path(result["path"]).stat().st_size == result["bytes"]
    refused = run("view", env={"CTX_NO_GIT": "1"})
    assert refused.exit_code == 2 and "CTX_NO_GIT=1" in refused.stderr


def test_outside_edits_and_merges_are_versions_too(run, root, write_store, entries):
    from support.stores import make_entry
    ok(run("init"))
    ok(run("set", "k", "one two three"))
    current = entries("shared")
    current["k"] = dict(current["k"], value="one two three four")
    current["hand"] = make_entry("written by hand")
    write_store("shared", current)
    ok(run("set", "later", "x"))  # commits the outside edit first, as `external`
    page, _, _ = view(run, root)
    rows = entry_rows(page)
    k = rows[("shared", "k")]
    assert "external" in k.text() and [i.text() for i in k.find_all("ins")] == ["four"]
    assert ("shared", "hand") in rows


def test_one_walk_gives_what_ctx_history_gives(root, run, busy):
    """Every version the view derives matches ``ctx history`` (which walks per key)."""
    from ctx.model import STORES
    from ctxgit.porcelain.history import history
    from ctxgit.porcelain.viewdata import gather
    data = gather(root)
    assert data.read_versions >= 0
    for (store, key), versions in data.versions.items():
        expected = history(root, key, [store])
        assert [v.commit.id for v in versions] == [e.info.id for e in expected], key
        assert [v.entry for v in versions] == [e.entry for e in expected], key
        assert all(v.known for v in versions)
    assert {s for s, _ in data.versions} <= set(STORES)


def test_a_history_with_merges(tmp_path):
    """Two machines edit apart and sync: the merge and both sides' commits are on the
    page, and the versions the walk derives are those `ctx history` finds."""
    from ctxgit.porcelain.history import history
    from ctxgit.porcelain.viewdata import gather
    from support.syncutil import network
    _, (one, two) = network(tmp_path, "Agent One", "Agent Two")
    one.ok("set", "mine", "one's first")
    two.ok("set", "theirs", "two's first")
    two.ok("set", "seed", "changed by two")
    two.ok("sync")
    one.ok("set", "mine", "one's second")
    one.ok("sync")  # a merge: both sides changed
    assert len(one.git_out("log", "-1", "--format=%P").split()) == 2
    data = gather(one.root)
    assert {c.id for c in data.commits} == set(one.git_out("rev-list", "HEAD").split())
    for (store, key), versions in data.versions.items():
        expected = history(one.root, key, [store])
        assert [v.commit.id for v in versions] == [e.info.id for e in expected], key
        assert [v.entry for v in versions if v.known] == [e.entry for e, v in zip(expected, versions, strict=True)
                                                          if v.known], key
    result = one.ok("view", "--out", str(tmp_path / "page.html"))
    page, errors = parse(Path(result.stdout.strip()).read_text(encoding="utf-8"))
    assert not errors and "merge" in [o.attrs["value"] for o in page.by_id("f-op").find_all("option")]


def test_unread_versions_are_listed_from_their_commits(root, run, busy):
    """With no store file read, every version is still listed; those the chain cannot
    give say so and name `ctx history`."""
    from ctx.view.page import render
    from ctxgit.porcelain.viewdata import gather
    data = gather(root, read_limit=0)
    versions = data.versions[("shared", "result_timeout")]
    assert [v.known for v in versions] == [False, False, False]  # each needs a store file read
    page, errors = parse(render(data))
    assert not errors
    text = entry_rows(page)[("shared", "result_timeout")].text()
    assert "ctx history result_timeout --store shared" in text and "amend shared/result_timeout" in text
