#!/usr/bin/env python3
"""Recall and the cost of search --semantic, side by side in one run.

    python bench/recall.py [--entries 10000] [--runs 5] [--calls 50] [--no-write]

1. Recall on the evaluation set (``tests/recall/evalset.py``: 205 entries, 73 questions
   in other words, own words and mixed): the share of questions whose answer is in the
   top 5, for `ctx search` (substring), `--full-text`, `--semantic` without the model
   (words alone) and with it; then the fusions measured before choosing one (the same
   words and cosines, combined otherwise). Targets (issue 23): with the model >= 0.30
   other words, >= 0.95 own, >= 0.90 mixed; without >= 0.95 own, >= 0.85 mixed.
2. Cost at ``--entries`` entries (the set's texts again and again, each made distinct):
   the first build of the vectors and the words table (whole process), the growth of the
   read index, `ctx search --semantic` as a whole process with the model loaded from cold
   (vectors built), a warm search through `ctx mcp` (the SDK's client), and `ctx set`
   before and after the vectors exist. Targets: 15 s, 12 MB, 1.0 s, 20 ms, unchanged.

Writes the tables into bench/results.md (unless --no-write). Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import build
import resultsfile
import runs

from ctx import fulltext
from ctx.context import Context
from ctx.meaning import model as meaning_model
from ctx.meaning import rank
from ctx.results import Filters
from ctx.storage import index
from ctxgit.gitfiles.layout import state_dir


def _evalset():
    """tests/recall/evalset.py, by its path (this file is named recall.py too)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("ctx_recall_evalset", HERE.parent / "tests" / "recall" / "evalset.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_set = _evalset()
ENTRIES, KINDS, QUESTIONS = _set.ENTRIES, _set.KINDS, _set.QUESTIONS
entries_by_store, store_of, tags_of = _set.entries_by_store, _set.store_of, _set.tags_of

CTX = str(Path(sys.executable).parent / "ctx")
WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench")) / "recall"
TOP = 5


def make_root(path: Path, stores: dict[str, dict[str, dict]]) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    (path / "memory").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    for name, entries in stores.items():
        (path / "memory" / f"{name}.json").write_bytes(build.store_bytes(name, entries))
    return path


# --- 1. recall ----------------------------------------------------------------------------

def shares(found: dict[str, list[bool]]) -> list[float]:
    every = [hit for hits in found.values() for hit in hits]
    return [sum(found[k]) / len(found[k]) for k in KINDS] + [sum(every) / len(every)]


def recall_rows() -> list[tuple[str, list[float]]]:
    root = make_root(WORK / "evalset", entries_by_store())
    context = Context(root, state_of=state_dir)  # the read index kept as the front door keeps it
    embedder = meaning_model.shared()
    ways = {
        "`ctx search Q` (substring)": lambda q: [r.key for r in context.select(Filters(), q, TOP)],
        "`ctx search --full-text Q` (every word)": lambda q: [r.key for r, _ in
                                                              fulltext.search(context, q, Filters(), TOP)],
        "`--semantic`, without the extra (words)": lambda q: [r.key for r, _ in
                                                              rank.search(context, q, Filters(), TOP, None)],
    }
    if embedder is not None:
        ways["`--semantic`, with the extra"] = lambda q: [r.key for r, _ in
                                                          rank.search(context, q, Filters(), TOP, embedder)]
    out = []
    for name, way in ways.items():
        found: dict[str, list[bool]] = {k: [] for k in KINDS}
        for kind, question, answers in QUESTIONS:
            top = way(question)
            found[kind].append(any(a in top for a in answers))
        out.append((name, shares(found)))
    if embedder is not None:
        out += fusions(context, embedder)
    return out


def fusions(context: Context, embedder) -> list[tuple[str, list[float]]]:
    """The same words (BM25) and cosines, fused in the ways tried before choosing."""
    from ctx.meaning.vectors import texts_and_matrix
    stores = ["operator", "shared", "agent"]
    index, persistent = rank.index_for(context, stores)
    rows, vectors = texts_and_matrix(embedder, index, stores, persistent)
    keys = [row[1] for row in rows]
    per_question = []
    for kind, question, answers in QUESTIONS:
        ranked = index.ranked_words(stores, fulltext.words(question)) or []
        scored = {(s, k): (share, bm25) for s, k, share, bm25 in ranked}
        lexical = [scored.get((s, k), (0.0, 0.0))[1] for s, k, *_ in rows]
        shared = [scored.get((s, k), (0.0, 0.0))[0] for s, k, *_ in rows]
        cosines = (vectors @ embedder.embed([question.lower()])[0]).tolist()
        per_question.append((kind, answers, lexical, shared, cosines))

    def positions(values: list[float]) -> list[int]:
        order = sorted(range(len(values)), key=lambda i: -values[i])
        place = [0] * len(values)
        for at, i in enumerate(order):
            place[i] = at + 1
        return place

    def rrf(lexical, shared, cosines):
        by_words, by_meaning = positions(lexical), positions(cosines)
        return [(1 / (60 + by_words[i]) if lexical[i] > 0 else 0) + 1 / (60 + by_meaning[i])
                for i in range(len(cosines))]

    def scaled(weight):
        return lambda lexical, shared, cosines: [c + weight * b / (max(lexical) or 1)
                                                 for b, c in zip(lexical, cosines, strict=True)]

    def chosen(weight):
        return lambda lexical, shared, cosines: [c + weight * s for s, c in zip(shared, cosines, strict=True)]

    tried = {"fusion tried: meaning alone (cosine)": lambda lexical, shared, cosines: cosines,
             "fusion tried: reciprocal rank (k = 60)": rrf,
             "fusion tried: cosine + 0.1 x BM25/best": scaled(0.1),
             "fusion tried: cosine + 0.3 x BM25/best": scaled(0.3)}
    for weight in (0.1, 0.2, 0.3, 0.5, 1.0):
        mark = " (chosen)" if weight == rank.WORDS_WEIGHT else ""
        tried[f"fusion tried: cosine + {weight} x share of the query's IDF{mark}"] = chosen(weight)
    out = []
    for name, fuse in tried.items():
        found: dict[str, list[bool]] = {k: [] for k in KINDS}
        for kind, answers, lexical, shared, cosines in per_question:
            scores = fuse(lexical, shared, cosines)
            top = [keys[i] for i in sorted(range(len(keys)), key=lambda i: -scores[i])[:TOP]]
            found[kind].append(any(a in top for a in answers))
        out.append((name, shares(found)))
    return out


# --- 2. cost ------------------------------------------------------------------------------

def big_stores(n: int) -> dict[str, dict[str, dict]]:
    """``n`` entries: the set's texts again and again, each made distinct by a number."""
    stores: dict[str, dict[str, dict]] = {"operator": {}, "shared": {}, "agent": {}}
    for i in range(n):
        key, value = ENTRIES[i % len(ENTRIES)]
        store = store_of(key)
        stores[store][f"{key}_{i}"] = {"value": f"{value} (case {i})", "source": "agent", "basis": "verified",
                                       "scope": "global", "tags": tags_of(key), "created": "2026-11-01T00:00:00Z",
                                       "timestamp": f"2026-11-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"}
    return stores


def env_for(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(CTX_HOME=str(root), CTX_AUTHOR="Bench Agent")
    return env


def timed(args: list[str], env: dict[str, str]) -> float:
    """Seconds one whole ``ctx`` process took (runs.timed's milliseconds)."""
    return runs.timed([str(CTX), *args], env) / 1000


def index_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in Path(state_dir(root)).glob(index.FILE + "*"))


def cost_rows(n: int, runs: int, calls: int) -> list[tuple[str, str, str, str]]:
    root = make_root(WORK / f"big-{n}", big_stores(n))
    env = env_for(root)
    query = "why do big file transfers break"
    timed(["list", "--limit", "1"], env)  # the read index, as every read has it
    before = index_bytes(root)
    plain = root.with_name(root.name + "-plain")  # the same context, never searched by meaning
    shutil.rmtree(plain, ignore_errors=True)
    shutil.copytree(root, plain, symlinks=True)
    first = timed(["search", "--semantic", query], env)
    grown = index_bytes(root) - before
    colds = [timed(["search", "--semantic", query], env) for _ in range(runs)]
    colds_words = [timed(["search", query], env) for _ in range(runs)]
    sets_before, sets_after = [], []
    for i in range(runs):  # alternating, so the machine's load falls on both alike
        sets_before.append(timed(["set", f"bench_key_{i}", f"a value written, number {i}"], env_for(plain)))
        sets_after.append(timed(["set", f"bench_key_{i}", f"a value written, number {i}"], env))
    rows = [
        ("first build (whole process)", f"{first:.2f} s", "≤ 15 s", "vectors of every entry and the words table"),
        ("read index growth", f"{grown / 1e6:.1f} MB", "≤ 12 MB", f"{before / 1e6:.1f} MB before"),
        ("`ctx search --semantic` (whole process, cold model)", f"{statistics.median(colds):.2f} s", "≤ 1.0 s",
         f"median of {runs}: " + " ".join(f"{t:.2f}" for t in colds)
         + f"; plain `ctx search` {statistics.median(colds_words) * 1000:.0f} ms"),
        ("`ctx set` without / with the vectors", f"{statistics.median(sets_before) * 1000:.0f} / "
         f"{statistics.median(sets_after) * 1000:.0f} ms", "unchanged",
         f"median of {runs} each, alternating between two copies of the context: without and with them"),
    ]
    warm = mcp_warm(env, query, calls)
    if warm is not None:
        rows.append(("MCP `search` with `semantic`, warm", f"{statistics.median(warm):.1f} ms", "≤ 20 ms",
                     f"median of {len(warm)}; p90 {statistics.quantiles(warm, n=10)[-1]:.1f}"))
    return rows


def mcp_warm(env: dict[str, str], query: str, calls: int) -> list[float] | None:
    # bench/mcp.py is beside this file: take the folder off the path so `import mcp` finds the SDK
    sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != HERE]
    try:
        import anyio

        # the SDK, not bench/mcp.py (which mypy, reading bench/ as a base, would take for it)
        from mcp import Client, StdioServerParameters  # type: ignore[attr-defined]
    except ImportError:
        print("the mcp extra is not installed: no MCP figure")
        return None
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctx", "mcp"], env=env)
    questions = [q for _, q, _ in QUESTIONS]
    took: list[float] = []

    async def session() -> None:
        async with Client(params, mode="legacy") as client:
            for i in range(calls + 5):
                started = time.perf_counter()
                done = await client.call_tool("search", {"pattern": questions[i % len(questions)], "semantic": True})
                if done.is_error:
                    raise SystemExit(f"mcp search: {done.content[0].text}")
                if i >= 5:  # after a warm-up
                    took.append((time.perf_counter() - started) * 1000)
    anyio.run(session)
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    load = os.getloadavg()[0]
    lines = [f"## Recall · {time.strftime('%Y-%m-%d %H:%M')} · commit {commit} · {os.cpu_count()} cores, "
             f"load {load:.1f} at the start", "",
             f"Found in the top {TOP}, on the evaluation set ({len(ENTRIES)} entries; "
             + ", ".join(f"{sum(k == kind for k, _, _ in QUESTIONS)} {kind}" for kind in KINDS) + " questions):", "",
             "| search | other words | own words | mixed | all |", "|---|---|---|---|---|"]
    for name, values in recall_rows():
        lines.append(f"| {name} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    if meaning_model.shared() is None:
        lines.append(f"\n(the semantic extra is not installed here: {meaning_model.EXTRA})")
    lines += ["", f"At {args.entries:,} entries (the set's texts, repeated and made distinct):", "",
              "| measure | figure | target | note |", "|---|---|---|---|"]
    for row in cost_rows(args.entries, args.runs, args.calls):
        lines.append("| " + " | ".join(row) + " |")
    lines.append(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} (a shared machine: figures are noisy).")
    print("\n".join(lines))
    if not args.no_write:
        print(f"\nwritten to {resultsfile.prepend(lines)}")


if __name__ == "__main__":
    main()
