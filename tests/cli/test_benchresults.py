"""bench/results.md holds the tables the benchmark scripts wrote, a window of the newest.

The file is written only through bench/resultsfile.py (bench/run.py, compare.py, letters.py,
recall.py): each new table goes on top and each script keeps its newest KEEP tables.
"""

import importlib.util
import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _resultsfile():
    spec = importlib.util.spec_from_file_location("resultsfile", BENCH / "resultsfile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


resultsfile = _resultsfile()
STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d"
HEADINGS = {
    "run": re.compile(rf"## {STAMP} · commit \w+ · [^·]+, \d+ cores, Python [\d.]+( · quick)?"),
    "compare": re.compile(rf"## {STAMP} · A/B: commit \w+ against \w+ · [^·]+, \d+ cores, Python [\d.]+"),
    "letters": re.compile(rf"## {STAMP} · commit \w+ · [^·]+ \(load [\d.]+\), Python [\d.]+ · bench/letters.py"),
    "recall": re.compile(rf"## Recall · {STAMP} · commit \w+ · \d+ cores, load [\d.]+ at the start"),
}
COMPARE_LINE = "Written by `python bench/compare.py`: the same stores, runs alternating old and new; medians."


def _table(heading: str, *rows: str) -> list[str]:
    return [heading, "", "| entries | operation | ctx ms | floor ms | ratio | note |", "|---|---|---|---|---|---|",
            *rows]


def test_every_section_of_the_results_is_a_table_a_script_wrote():
    text = resultsfile.PATH.read_text(encoding="utf-8")
    assert text.startswith(resultsfile.HEAD)
    found = resultsfile.sections(text)
    assert found
    for section in found:
        heading, *body = section.split("\n")
        kind = resultsfile.writer(heading)
        assert HEADINGS[kind].fullmatch(heading), heading
        if kind in ("run", "compare"):  # their scripts write the heading, the table, nothing else
            prose = [line for line in body if line and not line.startswith("|") and line != COMPARE_LINE]
            assert not prose, (heading, prose)


def test_the_results_keep_at_most_the_newest_tables_of_each_script():
    found = resultsfile.sections(resultsfile.PATH.read_text(encoding="utf-8"))
    kinds = [resultsfile.writer(section.split("\n", 1)[0]) for section in found]
    assert all(kinds.count(kind) <= resultsfile.KEEP for kind in set(kinds))


def test_a_new_table_goes_on_top_and_the_oldest_of_its_script_beyond_the_window_is_dropped(tmp_path):
    path = tmp_path / "results.md"
    resultsfile.prepend(["## 2026-01-01 00:00 · A/B: commit aaa against bbb · x86_64, 2 cores, Python 3.11.7", "",
                         COMPARE_LINE, "", "| entries | operation | old ms | new ms | new/old |"], path, keep=3)
    for i in range(5):
        resultsfile.prepend(_table(f"## 2026-01-0{i + 2} 00:00 · commit c{i} · x86_64, 2 cores, Python 3.11.7",
                                   f"| 10 | get | {i}.0 | 1.0 | {i}.00 |  |"), path, keep=3)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(resultsfile.HEAD) and text.count("# ctx benchmark results") == 1
    headings = [section.split("\n", 1)[0] for section in resultsfile.sections(text)]
    assert [h.split(" · ")[1] for h in headings] == ["commit c4", "commit c3", "commit c2",
                                                     "A/B: commit aaa against bbb"]
    assert "| 10 | get | 4.0 | 1.0 | 4.00 |  |" in text and "commit c1" not in text
