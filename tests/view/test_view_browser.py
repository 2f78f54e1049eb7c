"""``ctx view`` in a real browser: headless Chromium loads the page from its file.

The page's script marks success with ``<p id="view-ready">`` and reports any
error in ``<div id="view-error">``; ``--dump-dom`` shows the document after
the script ran. A screenshot at 1280×800 is taken too. Skipped without
Chromium (Debian's ``chromium`` package; ``.ci/run`` installs it).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from support.viewpage import parse

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    profile.mkdir(exist_ok=True)
    return subprocess.run([CHROMIUM or "chromium", *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=180)


@pytest.fixture
def page_file(run, root, make_context) -> Path:
    """A page of a context with 130 entries by three authors, and text meant to break it."""
    assert run("init", "--focus", "Audit the <b>agents</b>").exit_code == 0
    for n, who in enumerate(["Agent One", "Agent Two", "Agent Three"]):
        context = make_context(author=who, git=True)
        for k in range(40):
            context.set(f"note_{n}_{k:02d}", f"Finding {k} by {who}: the upload proxy times out after {k} s.",
                        tags=["finding"])
    context = make_context(author="Agent One", git=True)
    context.set("note_0_01", "Finding 1 by Agent One: the upload proxy times out after 30 s.", tags=["finding"])
    context.set("hostile", "<script>document.title='owned'</script><img src=x onerror=\"document.title='owned'\">")
    context.set("decision_chunks", "Chunk uploads into 8 MB parts.", tags=["decision"])
    result = run("view", "--out", str(root.parent / "view page.html"))
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip())


def test_the_page_loads_runs_and_renders_in_chromium(page_file, tmp_path):
    done = chromium(tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom", page_file.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom, errors = parse(done.stdout)
    assert dom.by_id("view-ready") is not None, done.stdout[-2000:]
    assert dom.by_id("view-error") is None, dom.by_id("view-error").text()
    assert "owned" not in dom.find("title").text()
    for ident in ("top", "timeline", "commits", "brief", "entries", "summaries", "churn"):
        assert dom.by_id(ident) is not None, ident
    assert "js" in dom.find("html").classes()
    shared = dom.by_id("entries-shared")
    rows = [c for c in shared.children if not isinstance(c, str)]
    assert len(rows) == 123 and sum("on" in r.classes() for r in rows) == 50  # the first page of 50
    assert "page 1 of 3" in dom.by_id("entries-shared-pager").text()
    assert not dom.by_id("entries-shared-pager").attrs.get("hidden")
    commits = dom.by_id("commit-rows").find_all("tr")
    assert sum("on" in r.classes() for r in commits) == 25
    assert not dom.find_all("img")


def test_a_link_to_an_entry_on_a_later_page_shows_it(page_file, tmp_path):
    page, _ = parse(page_file.read_text(encoding="utf-8"))
    ident = next(li.attrs["id"] for li in page.by_id("entries-shared").children
                 if not isinstance(li, str) and "note_2_39" in li.find("h4").text())
    done = chromium(tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom",
                    page_file.as_uri() + "#" + ident)
    dom, _ = parse(done.stdout)
    row = dom.by_id(ident)
    assert "on" in row.classes()
    assert "page 3 of 3" in dom.by_id("entries-shared-pager").text()


def test_a_screenshot_at_1280_by_800(page_file, tmp_path):
    shot = tmp_path / "view.png"
    done = chromium(tmp_path / "profile", "--virtual-time-budget=5000", f"--screenshot={shot}",
                    "--window-size=1280,800", page_file.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 800)
