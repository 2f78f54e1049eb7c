"""The operator's view's style sheet and script, written for it and kept inside the page.

The page works without the script: every commit and every entry is in the
HTML. The script (a few functions, no library) adds what needs it: lists
shown a page at a time (so a context of 10,000 entries opens without laying
out 10,000 entries), the commit filters, the entry search, and jumping to an
entry from a link. ``EARLY`` runs in the head, before anything is laid out:
it marks the page as scripted, which hides the rows of later pages. When the
script fails, it says so at the top of the page and shows every row again;
when it has run, it adds ``<p id="view-ready">`` (a headless browser's check),
saying how long after the navigation began.
"""

from __future__ import annotations

EARLY = "document.documentElement.classList.add('js');"

STYLE = """
:root{--ink:#1d2330;--soft:#5b6474;--line:#dde2ea;--back:#f6f7f9;--card:#fff;--accent:#2f5fa7;
--add:#e3f4e6;--add-ink:#155d27;--del:#fbe6e6;--del-ink:#8c1d1d}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--ink);background:var(--back)}
header.top{background:#1f2a3c;color:#eef2f8;padding:14px 28px 12px}
header.top h1{margin:0;font-size:20px;font-weight:600;letter-spacing:.2px}
header.top h1 small{font-weight:400;color:#b8c3d6;font-size:14px;margin-left:8px}
.facts{display:flex;flex-wrap:wrap;gap:6px 26px;margin:8px 0 0;padding:0}
.facts div{margin:0}.facts dt{display:inline;color:#9fb0c9;margin-right:6px}.facts dd{display:inline;margin:0}
.facts code{color:#fff}
nav.sections{display:flex;gap:18px;padding:8px 28px;background:#e9edf3;border-bottom:1px solid var(--line);
position:sticky;top:0;z-index:2;flex-wrap:wrap}
nav.sections a{color:var(--accent);text-decoration:none;font-weight:500}
main{max-width:1220px;margin:0 auto;padding:6px 28px 40px}
section{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:16px 0;padding:12px 18px}
h2{font-size:16px;margin:2px 0 10px}h3{font-size:14px;margin:14px 0 6px}
h4,h5,h6{font-size:13px;margin:10px 0 4px}
.note,.muted{color:var(--soft)}
.warn{color:#8a4b00}
#view-error{background:#8c1d1d;color:#fff;padding:8px 28px;font-weight:600}
figure{margin:0}
.chart{width:100%;height:auto;display:block}
.chart .grid{stroke:#e6e9ef;stroke-width:1}.chart .axis{font-size:11px;fill:#6b7384}
.a0{fill:#3f6fb4;background:#3f6fb4}.a1{fill:#ee8a2a;background:#ee8a2a}.a2{fill:#4f9d48;background:#4f9d48}
.a3{fill:#d64b4d;background:#d64b4d}.a4{fill:#6bb3ad;background:#6bb3ad}.a5{fill:#e0bd3c;background:#e0bd3c}
.a6{fill:#a572a0;background:#a572a0}.a7{fill:#f39aa4;background:#f39aa4}.ax{fill:#9a9ea6;background:#9a9ea6}
.legend{display:flex;flex-wrap:wrap;gap:4px 18px;list-style:none;margin:6px 0 0;padding:0}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;vertical-align:-1px}
.filters{display:flex;flex-wrap:wrap;gap:10px 16px;align-items:center;margin:4px 0 8px}
select,input[type=search]{font:inherit;padding:4px 7px;border:1px solid #c5ccd8;border-radius:5px;background:#fff}
input[type=search]{width:min(420px,100%)}
table{border-collapse:collapse;width:100%}
th{font-weight:600;text-align:left;color:var(--soft);font-size:12px;border-bottom:1px solid var(--line);padding:4px 8px}
td{padding:4px 8px;border-bottom:1px solid #eef0f4;vertical-align:top}
#commit-rows td:nth-child(-n+4){white-space:nowrap}#commit-rows td:nth-child(6){overflow-wrap:anywhere}
#commit-rows td:nth-child(5){white-space:nowrap;max-width:240px;overflow:hidden;text-overflow:ellipsis}
code,#commit-rows td:first-child{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
font-size:12.5px}
a{color:var(--accent)}
.pager{display:flex;gap:8px;align-items:center;margin:8px 0 2px}.pager[hidden]{display:none}
.pager button{font:inherit;padding:2px 10px;border:1px solid #c5ccd8;border-radius:5px;background:#fff;cursor:pointer}
.pager button:disabled{opacity:.4;cursor:default}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:0 28px}
@media (max-width:900px){.cols{grid-template-columns:1fr}}
ul.items{margin:4px 0;padding-left:20px}ul.items li{margin:2px 0}
ol.entries{list-style:none;margin:0;padding:0}
ol.entries>li{border-bottom:1px solid #eef0f4;padding:8px 2px}
html:not(.js) ol.entries>li{content-visibility:auto;contain-intrinsic-size:auto 90px}
.js ol.entries>li:not(.on),.js #commit-rows tr:not(.on){display:none}
ol.entries h4{display:flex;flex-wrap:wrap;gap:4px 10px;align-items:baseline;margin:0;font-size:14px;font-weight:400}
ol.entries h4>a{font:600 12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;color:var(--ink);
text-decoration:none;overflow-wrap:anywhere}
ol.entries h4>a:hover{text-decoration:underline}
.st{font-size:12px;padding:0 6px;border-radius:9px;background:#eef0f4;color:#4a5262}
.st-resolved{background:#e3f4e6;color:#155d27}.st-superseded{background:#f1e6d6;color:#7a4a12}
.st-amended{background:#e5ecf8;color:#2f4f86}.st-deleted{background:#fbe6e6;color:#8c1d1d}
.tag{font-size:12px;color:#3d5a80;background:#edf2fa;border-radius:4px;padding:0 5px}
ol.entries p{white-space:pre-wrap;overflow-wrap:anywhere;margin:3px 0}
.forced{color:#8a4b00;font-style:italic}
ol.entries small{display:block;color:var(--soft);font-size:12.5px}
ol.entries details{margin-top:3px}ol.entries summary{cursor:pointer;color:var(--accent);font-size:12.5px}
ol.vs{margin:4px 0 2px;padding-left:18px;font-size:13px}
ol.vs li{margin:3px 0;white-space:pre-wrap;overflow-wrap:anywhere}
ins{background:var(--add);color:var(--add-ink);text-decoration:none}
del{background:var(--del);color:var(--del-ink)}
.gap{color:var(--soft);font-style:italic}
.md{border-top:1px solid var(--line);padding-top:4px;margin-top:8px}
.md pre{background:#f3f5f8;padding:8px;overflow:auto}
.md blockquote{margin:4px 0;padding-left:10px;border-left:3px solid var(--line);color:var(--soft)}
.counts{color:var(--soft);font-weight:400;font-size:13px;margin-left:6px}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var root = document.documentElement;
  function fail(message) {
    root.classList.remove("js");
    var box = document.getElementById("view-error");
    if (!box) {
      box = document.createElement("div");
      box.id = "view-error";
      box.setAttribute("role", "alert");
      document.body.insertBefore(box, document.body.firstChild);
    }
    box.textContent = "The page's script failed (" + message + "): every row is shown.";
  }
  window.addEventListener("error", function (event) { fail(event.message || "error"); });

  function all(selector, within) {
    return Array.prototype.slice.call((within || document).querySelectorAll(selector));
  }

  function pager(name, rows, size) {
    var nav = document.getElementById(name + "-pager");
    var info = nav.querySelector(".info");
    var buttons = all("button", nav);
    var state = { all: rows, list: rows, page: 0, shown: [] };
    function pages() { return Math.max(1, Math.ceil(state.list.length / size)); }
    function render() {
      state.shown.forEach(function (r) { r.classList.remove("on"); });
      state.page = Math.min(Math.max(state.page, 0), pages() - 1);
      var start = state.page * size;
      state.shown = state.list.slice(start, start + size);
      state.shown.forEach(function (r) { r.classList.add("on"); });
      info.textContent = state.list.length ? ("page " + (state.page + 1) + " of " + pages() + " · " +
        state.list.length + (state.list.length === state.all.length ? "" : " of " + state.all.length) + " shown")
        : "nothing matches";
      buttons[0].disabled = buttons[1].disabled = state.page === 0;
      buttons[2].disabled = buttons[3].disabled = state.page >= pages() - 1;
      nav.hidden = state.all.length <= size && state.list.length === state.all.length;
    }
    var moves = [function () { return 0; }, function () { return state.page - 1; },
                 function () { return state.page + 1; }, function () { return pages() - 1; }];
    buttons.forEach(function (b, n) {
      b.addEventListener("click", function () { state.page = moves[n](); render(); });
    });
    state.set = function (list) { state.list = list; state.page = 0; render(); };
    state.show = function (row) {
      var at = state.list.indexOf(row);
      if (at < 0) { state.list = state.all; at = state.all.indexOf(row); }
      state.page = Math.floor(at / size);
      render();
    };
    render();
    return state;
  }

  function commits() {
    var rows = all("#commit-rows tr");
    var list = pager("commits", rows, 25);
    var who = document.getElementById("f-author"), what = document.getElementById("f-op");
    function apply() {
      var a = who.value, o = what.value;
      list.set(rows.filter(function (r) {
        return (!a || r.cells[2].textContent === a) && (!o || r.cells[3].textContent === o);
      }));
    }
    who.addEventListener("change", apply);
    what.addEventListener("change", apply);
    return list;
  }

  function entries() {
    var lists = all("ol.entries").map(function (ol) {
      var rows = all(":scope > li", ol);
      return { rows: rows, pager: pager(ol.id, rows, 50), text: null };
    });
    var box = document.getElementById("search");
    var count = document.getElementById("search-count");
    var timer = 0;
    function textOf(row) {
      var parts = [];
      for (var c = row.firstElementChild; c; c = c.nextElementSibling) {
        if (c.tagName !== "DETAILS") { parts.push(c.textContent); }
      }
      return parts.join(" ").toLowerCase();
    }
    function apply() {
      var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
      var found = 0;
      lists.forEach(function (l) {
        if (words.length && !l.text) { l.text = l.rows.map(textOf); }
        var kept = !words.length ? l.rows : l.rows.filter(function (r, n) {
          return words.every(function (w) { return l.text[n].indexOf(w) >= 0; });
        });
        found += kept.length;
        l.pager.set(kept);
      });
      count.textContent = words.length ? found + " entries match" : "";
    }
    box.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 120); });
    return lists;
  }

  function jump(lists, commitList) {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) { return; }
    if (target.matches("ol.entries > li")) {
      lists.forEach(function (l) { if (l.rows.indexOf(target) >= 0) { l.pager.show(target); } });
      var history = target.querySelector("details");
      if (history) { history.open = true; }
    } else if (target.matches("#commit-rows tr")) {
      commitList.show(target);
    }
    target.scrollIntoView();
  }

  try {
    var commitList = commits();
    var lists = entries();
    window.addEventListener("hashchange", function () { jump(lists, commitList); });
    jump(lists, commitList);
    var ready = document.createElement("p");
    ready.id = "view-ready";
    ready.hidden = true;
    ready.textContent = "ready after " + Math.round(performance.now()) + " ms";
    document.body.appendChild(ready);
  } catch (error) {
    fail(String(error && error.message || error));
  }
})();
"""
