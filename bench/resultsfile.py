"""``bench/results.md``: the benchmarks' tables, newest first."""

from __future__ import annotations

from pathlib import Path

PATH = Path(__file__).resolve().parent / "results.md"
HEAD = "# ctx benchmark results\n\nNewest first; written by `python bench/run.py`.\n\n"


def prepend(lines: list[str]) -> Path:
    """Put a table (its lines) above the older ones; returns the file's path."""
    old = PATH.read_text(encoding="utf-8") if PATH.exists() else HEAD
    body = old[len(HEAD):] if old.startswith(HEAD) else old
    PATH.write_text(HEAD + "\n".join(lines) + "\n\n" + body, encoding="utf-8")
    return PATH
