"""Statistics of a context (spec §10, optional): entries by store, source,
basis, scope, status and tag, and the repository's commits. Reads only."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ctx.model import BASES, SCOPES, SOURCES, STATUSES


def _ordered(counter: Counter, known: tuple[str, ...] = ()) -> dict[str, int]:
    """Known values in their documented order (zeros included), then others by count."""
    out = {name: counter.get(name, 0) for name in known}
    for name, count in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])):
        out.setdefault(name, count)
    return out


@dataclass
class Stats:
    entries: int = 0
    stores: dict[str, int] = field(default_factory=dict)
    source: dict[str, int] = field(default_factory=dict)
    basis: dict[str, int] = field(default_factory=dict)
    scope: dict[str, int] = field(default_factory=dict)
    status: dict[str, int] = field(default_factory=dict)
    tags: dict[str, int] = field(default_factory=dict)
    repository: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return {"entries": self.entries, "stores": self.stores, "source": self.source,
                "basis": self.basis, "scope": self.scope, "status": self.status,
                "tags": self.tags, "repository": self.repository}


def entry_stats(context, store: str | None = None) -> Stats:
    """Counts over the entries of every store, or of one."""
    by: dict[str, Counter] = {name: Counter() for name in ("source", "basis", "scope", "status", "tags")}
    stats = Stats()
    for sf in context.stores(store):
        stats.stores[sf.name] = len(sf.entries)
        for entry in sf.entries.values():
            stats.entries += 1
            by["source"][str(entry.get("source", "(none)"))] += 1
            by["basis"][str(entry.get("basis", "(none)"))] += 1
            by["scope"][str(entry.get("scope", "global"))] += 1
            by["status"][str(entry.get("status") or "current")] += 1
            tags = entry.get("tags")
            for tag in dict.fromkeys(tags if isinstance(tags, list) else []):
                by["tags"][str(tag)] += 1
    stats.source = _ordered(by["source"], SOURCES)
    stats.basis = _ordered(by["basis"], BASES)
    stats.scope = _ordered(by["scope"], SCOPES)
    stats.status = _ordered(by["status"], ("current",) + STATUSES)
    stats.tags = _ordered(by["tags"])
    return stats


def repository_stats(commits: list[tuple[str, Any]] | None) -> dict[str, Any] | None:
    """Commits, authors (with counts), first and last commit dates, from ``(author, time)``
    pairs (the git layer reads them); None without a repository."""
    if commits is None:
        return None
    from ctx.model import format_ts
    authors = Counter(author for author, _ in commits)
    times = sorted(time for _, time in commits)
    return {"commits": len(commits),
            "authors": _ordered(authors),
            "first": format_ts(times[0]) if times else None,
            "last": format_ts(times[-1]) if times else None}


def stats(context, store: str | None = None, commits: list[tuple[str, Any]] | None = None) -> Stats:
    """The entry counts, and the repository's from ``commits`` (None: no repository)."""
    result = entry_stats(context, store)
    result.repository = repository_stats(commits)
    return result


def render(result: Stats) -> str:
    """The human form: one section per count, aligned; each name (a tag, a source, an author)
    shown visibly (``display.name``), the JSON form keeps them exact."""
    from ctx.display import name
    lines = [f"entries: {result.entries}"]
    sections = [("store", result.stores), ("source", result.source), ("basis", result.basis),
                ("scope", result.scope), ("status", result.status), ("tag", result.tags)]
    for title, counts in sections:
        shown = [(name(k), v) for k, v in counts.items() if v or title in ("store",)]
        if not shown:
            lines.append(f"by {title}: (none)")
            continue
        width = max(len(k) for k, _ in shown)
        lines.append(f"by {title}:")
        lines += [f"  {k.ljust(width)}  {v}" for k, v in shown]
    repo = result.repository
    if repo is None:
        lines.append("repository: none")
    else:
        lines.append(f"repository: {repo['commits']} commits"
                     + (f", {repo['first']} .. {repo['last']}" if repo["commits"] else ""))
        if repo["authors"]:
            authors = [(name(k), v) for k, v in repo["authors"].items()]
            width = max(len(k) for k, _ in authors)
            lines += [f"  {k.ljust(width)}  {v}" for k, v in authors]
    return "\n".join(lines)

