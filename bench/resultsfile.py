"""``bench/results.md``: the tables the benchmarks wrote, newest first.

Each table is a section under a ``## `` heading that its script wrote; a script's new
table goes on top, and only the newest ``KEEP`` tables of each script are kept, so the
file holds a window of recent runs and never grows without bound (older ones stay in
git's history). Nothing but what the scripts write belongs in the file:
``tests/cli/test_benchresults.py`` holds both rules.
"""

from __future__ import annotations

from pathlib import Path

PATH = Path(__file__).resolve().parent / "results.md"
KEEP = 10
HEAD = ("# ctx benchmark results\n\nNewest first; written by `bench/run.py`, `bench/compare.py`, "
        f"`bench/letters.py` and `bench/recall.py`, each keeping its newest {KEEP} tables.\n\n")


def writer(heading: str) -> str:
    """Which script wrote the section under ``heading`` (each spells its heading its own way)."""
    if heading.startswith("## Recall · "):
        return "recall"
    if " · A/B: commit " in heading:
        return "compare"
    if heading.endswith(" · bench/letters.py"):
        return "letters"
    return "run"


def sections(text: str) -> list[str]:
    """The file's sections, each from its ``## `` heading to the next; the head is left out."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("## "):
            out.append(line)
        elif out:
            out[-1] += "\n" + line
    return [section.rstrip("\n") for section in out]


def keep_newest(found: list[str], keep: int = KEEP) -> list[str]:
    """``found`` (newest first) with at most ``keep`` sections of each writer, in order."""
    seen: dict[str, int] = {}
    kept = []
    for section in found:
        kind = writer(section.split("\n", 1)[0])
        seen[kind] = seen.get(kind, 0) + 1
        if seen[kind] <= keep:
            kept.append(section)
    return kept


def prepend(lines: list[str], path: Path = PATH, keep: int = KEEP) -> Path:
    """Put a table (its lines, the ``## `` heading first) above the older ones, dropping
    the oldest of its writer's beyond ``keep``; returns the file's path."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    kept = keep_newest(["\n".join(lines).rstrip("\n"), *sections(old)], keep)
    path.write_text(HEAD + "\n\n".join(kept) + "\n", encoding="utf-8")
    return path
