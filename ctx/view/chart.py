"""The audit timeline's chart: writes per day, one colour per author, as inline SVG.

Drawn here, by ctx, as plain SVG elements (no script, no library): one
stacked bar per local day, a segment per author, a tooltip (``<title>``) on
each segment, a few grid lines with their counts, and a date under every
seventh day. Colours are classes (``a0`` … ``a7``, ``ax`` for the authors
past the eighth), so the page's style sheet sets them, for the legend too.
"""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, timedelta
from html import escape

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.view.data import Commit

COLOURS = 8
WIDTH, HEIGHT = 1120, 190
LEFT, RIGHT, TOP, BOTTOM = 40, 8, 10, 24


def colour_classes(commits: list[Commit]) -> dict[str, str]:
    """Author -> colour class, the most active author first; past ``COLOURS``: ``ax``."""
    totals = Counter(c.author for c in commits)
    ranked = sorted(totals, key=lambda a: (-totals[a], a))
    return {a: (f"a{n}" if n < COLOURS else "ax") for n, a in enumerate(ranked)}


def _step(value: int) -> int:
    """The grid's step: the smallest 1, 2 or 5 times a power of ten with four steps at or
    above ``value``."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if 4 * m * step >= value:
                return m * step
        step *= 10


_DAYS: dict[datetime, date] = {}


def day_of(commit: Commit) -> date:
    """The local day of a commit."""
    day = _DAYS.get(commit.time)
    if day is None:
        if len(_DAYS) > 100_000:
            _DAYS.clear()
        day = _DAYS[commit.time] = commit.time.astimezone().date()
    return day


def window(commits: list[Commit], days: int, since: date | None = None, least: int = 14) -> tuple[date, date]:
    """The chart's first and last day: up to ``days`` days ending on the newest commit's day,
    from the oldest commit's day (or ``since``) when that is later, and never fewer than
    ``least`` days."""
    found = [day_of(c) for c in commits]
    last = max(found, default=date.today())
    first = max(last - timedelta(days=days - 1), min(found, default=last), since or date.min)
    return min(first, last - timedelta(days=least - 1)), last


def chart(commits: list[Commit], classes: dict[str, str], first: date, last: date) -> str:
    """The SVG chart of ``commits`` per day from ``first`` to ``last``."""
    days = (last - first).days + 1
    per_day: dict[date, Counter[str]] = {}
    for c in commits:
        day = day_of(c)
        if first <= day <= last:
            per_day.setdefault(day, Counter())[c.author] += 1
    step = _step(max((sum(v.values()) for v in per_day.values()), default=0))
    top = 4 * step
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / days
    bar = max(slot * 0.78, 1.0)
    rank = {a: n for n, a in enumerate(classes)}
    total = sum(sum(v.values()) for v in per_day.values())
    label = (f"Writes per day from {first.isoformat()} to {last.isoformat()}: {total} commits, "
             f"{len({a for v in per_day.values() for a in v})} authors")
    out = [f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
           f'role="img" aria-label="{escape(label, quote=True)}" xmlns="http://www.w3.org/2000/svg">',
           f"<title>{escape(label)}</title>"]
    for n in range(5):  # grid lines and their counts
        value = step * n
        y = TOP + plot_h - plot_h * n / 4
        out.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        out.append(f'<text class="axis" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{value}</text>')
    for n in range(days):
        day = first + timedelta(days=n)
        x = LEFT + slot * n + (slot - bar) / 2
        if n % 7 == 0 or days <= 10:
            out.append(f'<text class="axis" x="{x + bar / 2:.1f}" y="{HEIGHT - 6}" text-anchor="middle">'
                       f'{day.strftime("%b %d")}</text>')
        counts = per_day.get(day)
        if not counts:
            continue
        y = TOP + plot_h
        for author in sorted(counts, key=lambda a: rank.get(a, len(rank))):
            height = plot_h * counts[author] / top
            y -= height
            tip = f"{day.isoformat()} · {author}: {counts[author]} write{'s' if counts[author] != 1 else ''}"
            out.append(f'<rect class="{classes.get(author, "ax")}" x="{x:.1f}" y="{y:.1f}" '
                       f'width="{bar:.1f}" height="{max(height, 0.5):.1f}"><title>{escape(tip)}</title></rect>')
    out.append("</svg>")
    return "".join(out)
