"""The operator's view as one HTML page: ``render(data, ...)`` -> the page's text.

Sections, in order: the header (the context, its entry counts, the commit
shown, the sync state), the audit timeline (writes per day per author, then
every commit, filterable by author and operation), decisions and open items
(as the brief selects them), the entries by store (searchable, each with its
history; deleted entries last), the newest summaries, and churn (the entries
changed most often, and those untouched for the longest).

Self-contained: the style, the script and the chart are inside the page; a
Content-Security-Policy lets nothing else load and no other script run (the
page's own style and scripts are allowed by their hashes). The data block
(``<script type="application/json" id="ctx-view-data">``) has ``<``, ``>`` and
``&`` escaped as ``\\u003c`` etc., so no text in it can close the element.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.brief import Brief

from ctx import model
from ctx.display import excerpt
from ctx.view import assets
from ctx.view import chart as charts
from ctx.view.data import Commit, Version, ViewData, forced_preview, prescan, reset, shown, texts
from ctx.view.entries import entry_html, esc, forget, when
from ctx.view.markdown import inline
from ctx.view.markdown import render as markdown

DAYS = 42          # the chart's window: six weeks
CHURN = 15         # rows in each churn list
SUMMARIES = 3      # the newest summaries shown
BOUND = 160        # excerpts in the decisions and churn lists


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def json_block(payload: Any) -> str:
    """JSON safe inside ``<script type="application/json">``."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


# --- the header ---------------------------------------------------------------------------

def _place(root: str) -> str:
    """The root as a person writes it: under the home directory, with ``~``."""
    home = str(Path.home())
    return "~" + root[len(home):] if home not in ("", "/") and (root + "/").startswith(home + "/") else root


def header(data: ViewData, generated: datetime) -> str:
    counts = data.counts()
    total = sum(counts.values())
    facts = [("entries", f"{total} (" + ", ".join(f"{esc(s)} {n}" for s, n in counts.items()) + ")")]
    if data.head is not None:
        h = data.head
        facts.append(("commit", f"<code>{esc(h.short)}</code> {esc(when(h.time))} by {esc(h.author)}: "
                                f"{esc(excerpt(shown(h.subject, False), 80))}"))
        empty = f" ({data.empty} that changed nothing, as a purge leaves them, not listed)" if data.empty else ""
        facts.append(("history", f"{data.total} commits{empty}"))
    else:
        facts.append(("commit", "none yet (no history)"))
    if data.sync is not None:
        s = data.sync
        state = []
        if s.remote is None:
            state.append(f"no remote chosen: {esc(s.problem or '')}")
        elif s.ahead is None:
            state.append(f"{esc(s.remote)}: never synced (no {esc(s.branch or 'main')} from it yet)")
        else:
            state.append(f"{esc(s.remote)}/{esc(s.branch)}: {s.ahead} ahead, {s.behind} behind")
        if s.last is not None:
            state.append(f"last sync {esc(when(s.last))}" + (f" ({esc(shown(s.result, False))})" if s.result else ""))
        facts.append(("sync", ", ".join(state)))
    else:
        facts.append(("sync", "no remote"))
    if data.since is not None or data.author:
        only = []
        if data.since is not None:
            only.append(f"since {esc(when(data.since))}")
        if data.author:
            only.append(f"by authors matching “{esc(data.author)}”")
        facts.append(("showing", "commits and entries " + " and ".join(only)))
    facts.append(("generated", esc(when(generated))))
    items = "".join(f"<div><dt>{name}</dt><dd>{value}</dd></div>" for name, value in facts)
    notes = "".join(f'<p class="warn">{esc(n)}</p>' for n in data.notes)
    return (f'<header class="top" id="top"><h1>ctx view<small>{esc(_place(data.root))}</small></h1>'
            f'<dl class="facts">{items}</dl>{notes}</header>')


NAV = ('<nav class="sections"><a href="#timeline">Timeline</a><a href="#commits">Commits</a>'
       '<a href="#brief">Decisions and open items</a><a href="#entries">Entries</a>'
       '<a href="#summaries">Summaries</a><a href="#churn">Churn</a></nav>')


# --- the audit timeline ---------------------------------------------------------------------

def timeline(data: ViewData, classes: dict[str, str]) -> str:
    since = data.since.astimezone().date() if data.since is not None else None
    first, last = charts.window(data.commits, DAYS, since)
    svg = charts.chart(data.commits, classes, first, last)
    totals = Counter(c.author for c in data.commits if first <= charts.day_of(c) <= last)
    legend = "".join(f'<li><span class="sw {classes.get(a, "ax")}"></span>{esc(a)} <span class="muted">'
                     f"{totals[a]}</span></li>" for a in classes if totals[a])
    if not data.commits:
        return ('<section id="timeline"><h2>Audit timeline</h2>'
                '<p class="note">No commits yet: every write will show here, by day and author.</p></section>')
    return (f'<section id="timeline"><h2>Audit timeline<span class="counts">writes per day, '
            f"{esc(first.isoformat())} to {esc(last.isoformat())}, one colour per author</span></h2>"
            f'<figure>{svg}</figure><ul class="legend">{legend}</ul></section>')


def _pager(name: str) -> str:
    return (f'<nav class="pager" id="{name}-pager" hidden><button type="button">« first</button>'
            f'<button type="button">‹ prev</button><button type="button">next ›</button>'
            f'<button type="button">last »</button><span class="info muted"></span></nav>')


def commit_row(c: Commit, classes: dict[str, str], anchors: dict[tuple[str, str], int]) -> str:
    if len(c.keys) == 1:
        key = c.keys[0]
        store = (c.stores or [""])[0]
        if not c.stores and "/" in key:
            store, _, key = key.partition("/")
        place = f"{esc(store)}/{esc(shown(key, False))}"
        target = anchors.get((store, key))
        if target is not None:
            place = f'<a href="#e{target}">{place}</a>'
    else:
        place = f"{len(c.keys)} entries" if c.keys else ""
    return (f'<tr id="c-{c.short}"><td>{c.short}</td><td>{when(c.time)}</td>'
            f'<td><span class="sw {classes.get(c.author, "ax")}"></span>{esc(c.author)}</td>'
            f"<td>{esc(c.operation)}</td><td>{place}</td><td>{esc(shown(c.subject, False))}</td></tr>")


def commits(data: ViewData, classes: dict[str, str], anchors: dict[tuple[str, str], int]) -> str:
    authors = sorted({c.author for c in data.commits}, key=str.lower)
    operations = sorted({c.operation for c in data.commits})
    options = "".join(f'<option value="{esc(a)}">{esc(a)}</option>' for a in authors)
    ops = "".join(f'<option value="{esc(o)}">{esc(o)}</option>' for o in operations)
    rows = "".join(commit_row(c, classes, anchors) for c in data.commits)
    shown_of = f"{len(data.commits)}" + (f" of {data.total}" if len(data.commits) != data.total else "")
    return (f'<section id="commits"><h2>Commits<span class="counts">{shown_of}, newest first</span></h2>'
            f'<div class="filters"><label>Author <select id="f-author"><option value="">every author</option>'
            f'{options}</select></label><label>Operation <select id="f-op"><option value="">every operation'
            f'</option>{ops}</select></label></div>{_pager("commits")}'
            f'<table><thead><tr><th>commit</th><th>date</th><th>author</th><th>operation</th>'
            f'<th>store/key</th><th>subject</th></tr></thead><tbody id="commit-rows">{rows}</tbody></table>'
            f"</section>")


# --- decisions and open items, summaries, churn ---------------------------------------------

def _link(store: str, key: str, anchors: dict[tuple[str, str], int]) -> str:
    number = anchors.get((store, key))
    label = esc(shown(key, False)) + ("" if store == "shared" else f" [{esc(store)}]")
    return f'<a href="#e{number}">{label}</a>' if number is not None else label


def _value(data: ViewData, store: str, key: str, bound: int) -> str:
    entry = data.entries.get(store, {}).get(key)
    if entry is None:
        return ""
    versions = data.versions.get((store, key))
    if versions and versions[0].forced:
        return forced_preview(entry.get("value"))
    return excerpt(shown(entry.get("value"), False), bound)


def brief_section(data: ViewData, brief: Brief | None, anchors: dict[tuple[str, str], int]) -> str:
    parts = ['<section id="brief"><h2>Decisions and open items<span class="counts">as the brief shows them'
             "</span></h2>"]
    if brief is None:
        return parts[0] + '<p class="note">The brief could not be read.</p></section>'
    if brief.focus is not None and brief.focus.key:
        parts.append(f'<h3>Current focus</h3><p>{esc(_value(data, "shared", brief.focus.key, 600))}</p>')
    decisions = "".join(f"<li>{esc(when(i.timestamp)[:10])} {_link(i.store or 'shared', i.key or '', anchors)}"
                        f"{' [' + esc(i.status) + ']' if i.status else ''}: "
                        f"{esc(_value(data, i.store or 'shared', i.key or '', BOUND))}</li>"
                        for i in brief.decisions)
    opened = "".join(f"<li>{inline(shown(i.text, False))}</li>" for i in brief.open_items)
    if brief.open_more:
        opened += f'<li class="muted">… and {brief.open_more} more in {esc(brief.open_from)}</li>'
    parts.append('<div class="cols"><div>')
    parts.append(f"<h3>Decisions (last {brief.days} days)</h3>")
    parts.append(f'<ul class="items">{decisions}</ul>' if decisions else '<p class="note">None.</p>')
    parts.append("</div><div>")
    parts.append(f"<h3>Open (from {esc(brief.open_from)})</h3>" if brief.open_from else "<h3>Open</h3>")
    parts.append(f'<ul class="items">{opened}</ul>' if opened else '<p class="note">No open items.</p>')
    parts.append("</div></div></section>")
    return "".join(parts)


def summaries_section(summaries: list[tuple[str, str]], count: int) -> str:
    """``summaries``: (name, Markdown text), newest first; ``count``: how many there are."""
    if not summaries:
        return ('<section id="summaries"><h2>Newest summaries</h2>'
                '<p class="note">No session summary yet (<code>ctx summary new</code>).</p></section>')
    articles = "".join(f'<article class="md"><h3>{esc(name)}</h3>{markdown(shown(text, False))}</article>'
                       for name, text in summaries[:SUMMARIES])
    shown_of = min(len(summaries), SUMMARIES)
    return (f'<section id="summaries"><h2>Newest summaries<span class="counts">{shown_of} of {max(count, shown_of)}'
            f"</span></h2>{articles}</section>")


def churn_section(data: ViewData, anchors: dict[tuple[str, str], int]) -> str:
    kept = {c.id for c in data.commits}
    counted = [(len([v for v in vs if v.commit.id in kept]), vs[0].commit.time, k)
               for k, vs in data.versions.items() if vs and k in anchors]
    most = sorted((c for c in counted if c[0] > 0), key=lambda c: (-c[0], -c[1].timestamp()))[:CHURN]
    present = [(vs[0].commit.time, k) for k, vs in data.versions.items()
               if vs and k[1] in data.entries.get(k[0], {})]
    oldest = sorted(present, key=lambda c: c[0])[:CHURN]

    def row(store: str, key: str, extra: str) -> str:
        return f"<li>{_link(store, key, anchors)} <span class=\"muted\">{extra}</span></li>"
    left = "".join(row(k[0], k[1], f"{n} version{'s' if n != 1 else ''}, last {esc(when(t))}") for n, t, k in most)
    right = "".join(row(k[0], k[1], f"last changed {esc(when(t))}") for t, k in oldest)
    return ('<section id="churn"><h2>Churn</h2><div class="cols"><div><h3>Changed most often</h3>'
            f'<ol class="items">{left or "<li>nothing yet</li>"}</ol></div><div><h3>Untouched the longest</h3>'
            f'<ol class="items">{right or "<li>nothing yet</li>"}</ol></div></div></section>')


# --- the entries ----------------------------------------------------------------------------------

def _numbering(data: ViewData) -> list[tuple[str, str, Any]]:
    """The rows of the entries section, (store, key, entry): by store, then key, the
    deleted entries (entry None) last; with a filter, only the entries it kept."""
    kept = {c.id for c in data.commits}
    filtered = data.since is not None or bool(data.author)

    def wanted(versions: list[Version]) -> bool:
        return not filtered or any(v.commit.id in kept for v in versions)
    rows: list[tuple[str, str, Any]] = []
    for store in model.STORES:
        current = data.entries.get(store, {})
        rows += [(store, key, current[key]) for key in sorted(current)
                 if wanted(data.versions.get((store, key), []))]
    for (store, key), versions in sorted(data.versions.items()):
        if key not in data.entries.get(store, {}) and versions and versions[0].known \
                and versions[0].entry is None and wanted(versions):
            rows.append((store, key, None))
    return rows


def entries_section(data: ViewData, rows: list[tuple[str, str, Any]]) -> str:
    groups: dict[str, list[str]] = {}
    for number, (store, key, entry) in enumerate(rows):
        groups.setdefault(store if entry is not None else "deleted", []).append(
            entry_html(number, store, key, entry, data.versions.get((store, key), []), data.shown.get((store, key))))
    parts = ['<section id="entries"><h2>Entries<span class="counts">by store, each with its history</span></h2>',
             '<div class="filters"><label>Search <input type="search" id="search" '
             'placeholder="key, value, tag, author…" autocomplete="off"></label>'
             '<span id="search-count" class="muted"></span></div>',
             '<noscript><p class="note">Without script every entry is listed below: use the browser\'s find.'
             "</p></noscript>"]
    if not rows:
        parts.append('<p class="note">No entries yet (<code>ctx set KEY VALUE</code>).</p>')
    for group in (*model.STORES, "deleted"):
        items = groups.get(group)
        if not items:
            continue
        title = "deleted entries" if group == "deleted" else group
        parts.append(f'<h3>{esc(title)}<span class="counts">{len(items)}</span></h3>{_pager("entries-" + group)}'
                     f'<ol class="entries" id="entries-{group}">{"".join(items)}</ol>')
    parts.append("</section>")
    return "".join(parts)


# --- the page -------------------------------------------------------------------------------

def render(data: ViewData, brief: Brief | None = None, summaries: list[tuple[str, str]] | None = None,
           generated: datetime | None = None, summary_count: int | None = None) -> str:
    """The whole page; ``summaries``: the newest, (name, text), newest first."""
    generated = generated or datetime.now(UTC)
    summaries = summaries or []
    reset()
    prescan(texts(data))
    forget()
    classes = charts.colour_classes(data.commits)
    rows = _numbering(data)
    anchors = {(store, key): n for n, (store, key, _) in enumerate(rows)}
    meta = {"generated": model.format_ts(generated), "root": data.root,
            "commit": data.head.id if data.head else None, "counts": data.counts(),
            "commits": len(data.commits), "total_commits": data.total, "entries_shown": len(rows),
            "authors": list(classes), "read_versions": data.read_versions}
    body = "".join([
        header(data, generated), NAV, "<main>", timeline(data, classes), commits(data, classes, anchors),
        brief_section(data, brief, anchors), entries_section(data, rows),
        summaries_section(summaries, len(summaries) if summary_count is None else summary_count),
        churn_section(data, anchors), "</main>",
        f'<script type="application/json" id="ctx-view-data">{json_block(meta)}</script>',
        f"<script>{assets.SCRIPT}</script>"])
    policy = (f"default-src 'none'; style-src {_hash(assets.STYLE)}; "
              f"script-src {_hash(assets.EARLY)} {_hash(assets.SCRIPT)}; base-uri 'none'; form-action 'none'")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>ctx view · {esc(_place(data.root))}</title><style>{assets.STYLE}</style>"
            f"<script>{assets.EARLY}</script></head><body>{body}</body></html>\n")
