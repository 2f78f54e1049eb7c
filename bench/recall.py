#!/usr/bin/env python3
"""Recall and the cost of search --semantic, side by side in one run.

    python bench/recall.py [--entries 10000] [--runs 5] [--calls 50] [--no-write] [--recall-only]

1. Recall on two sets: the tuning set (``tests/recall/evalset.py``: the weight and the
   gates were chosen on it) and the held-out set (``tests/recall/heldout.py``: written
   before tuning, never tuned on). For each: the share of questions whose answer is in
   the top 5, per kind (other words, own words, mixed), and MRR@10 (the mean reciprocal
   rank of the first answer in the top 10), for `ctx search` (substring), `--full-text`,
   `--semantic` without the model (words alone) and with it; then, on the tuning set, the
   fusions measured before choosing one (the same words and cosines, combined otherwise).
   Targets (issue 38), held-out set with the model: >= 0.65 other words, >= 0.95 own,
   >= 0.95 mixed, MRR@10 >= 0.65.
2. Cost at 1,000 and ``--entries`` entries (the tuning set's texts again and again, each
   made distinct): the first build of the vectors and the words table (a whole `ctx search
   --semantic` process, its stderr a terminal so its progress line shows: the last line
   drawn is printed), the growth of the read index, `ctx search --semantic` as a whole
   process with the model loaded from cold (vectors built), a warm search through `ctx mcp`
   (the SDK's client), and `ctx set` before and after the vectors exist. Targets: first
   build 30 s at 1,000 and 300 s at 10,000, 25 MB, 1.0 s, 20 ms, unchanged.

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
    return _recall_module("evalset")


def _heldout():
    """tests/recall/heldout.py (which imports ``recall.evalset``: given the one loaded here)."""
    import types
    package = types.ModuleType("recall")
    package.evalset = _set
    sys.modules.setdefault("recall", package)
    sys.modules.setdefault("recall.evalset", _set)
    return _recall_module("heldout")


def _recall_module(name: str):
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"ctx_recall_{name}", HERE.parent / "tests" / "recall" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_set = _evalset()
ENTRIES, KINDS, QUESTIONS = _set.ENTRIES, _set.KINDS, _set.QUESTIONS
entries_by_store, store_of, tags_of = _set.entries_by_store, _set.store_of, _set.tags_of
_held = _heldout()
SETS = {"tuning set": _set, "held-out set": _held}

CTX = str(Path(sys.executable).parent / "ctx")
WORK = Path(os.environ.get("CTX_BENCH_DIR", Path(tempfile.gettempdir()) / "ctx-bench")) / "recall"
TOP = 5
QUERY = "why do big file transfers break"


# --- 1. recall ----------------------------------------------------------------------------

def shares(found: dict[str, list[bool]], ranks: list[float]) -> list[float]:
    every = [hit for hits in found.values() for hit in hits]
    return [sum(found[k]) / len(found[k]) for k in KINDS] + [sum(every) / len(every), sum(ranks) / len(ranks)]


def reciprocal(top: list[str], answers: tuple[str, ...]) -> float:
    return next((1 / (i + 1) for i, key in enumerate(top[:10]) if key in answers), 0.0)


def recall_rows(name: str, recall_set) -> list[tuple[str, list[float]]]:
    root = build.make_root(WORK / name.replace(" ", "-"), recall_set.entries_by_store())
    context = Context(root, state_of=state_dir)  # the read index kept as the front door keeps it
    embedder = meaning_model.shared()
    ways = {
        "`ctx search Q` (substring)": lambda q: [r.key for r in context.select(Filters(), q, 10)],
        "`ctx search --full-text Q` (every word)": lambda q: [r.key for r, _ in
                                                              fulltext.search(context, q, Filters(), 10)],
        "`--semantic`, without the extra (words)": lambda q: [r.key for r, _ in
                                                              rank.search(context, q, Filters(), 10, None)],
    }
    if embedder is not None:
        ways["`--semantic`, with the extra"] = lambda q: [r.key for r, _ in
                                                          rank.search(context, q, Filters(), 10, embedder)]
    out = []
    for way_name, way in ways.items():
        found: dict[str, list[bool]] = {k: [] for k in KINDS}
        ranks = []
        for kind, question, answers in recall_set.QUESTIONS:
            top = way(question)
            found[kind].append(any(a in top[:TOP] for a in answers))
            ranks.append(reciprocal(top, answers))
        out.append((way_name, shares(found, ranks)))
    if embedder is not None and recall_set is _set:
        out += fusions(context, embedder, recall_set)
    return out


def fusions(context: Context, embedder, recall_set) -> list[tuple[str, list[float]]]:
    """The same words (BM25) and cosines, fused in the ways tried before choosing."""
    from ctx.meaning.vectors import texts_and_matrix
    stores = ["operator", "shared", "agent"]
    index, persistent = rank.index_for(context, stores)
    rows, vectors = texts_and_matrix(embedder, index, stores, persistent)
    keys = [row[1] for row in rows]
    per_question = []
    for kind, question, answers in recall_set.QUESTIONS:
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
    for weight in (0.05, 0.1, 0.2, 0.3, 0.5, 1.0):
        mark = " (chosen)" if weight == rank.WORDS_WEIGHT else ""
        tried[f"fusion tried: cosine + {weight} x share of the query's IDF{mark}"] = chosen(weight)
    out = []
    for name, fuse in tried.items():
        found: dict[str, list[bool]] = {k: [] for k in KINDS}
        ranks = []
        for kind, answers, lexical, shared, cosines in per_question:
            scores = fuse(lexical, shared, cosines)
            top = [keys[i] for i in sorted(range(len(keys)), key=lambda i: -scores[i])[:10]]
            found[kind].append(any(a in top[:TOP] for a in answers))
            ranks.append(reciprocal(top, answers))
        out.append((name, shares(found, ranks)))
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


def on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Seconds one whole ``ctx`` process took with its stderr a terminal (a pseudo-terminal),
    and the last progress line it drew there."""
    import pty
    import resource
    import select
    main_fd, child_fd = pty.openpty()
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    child = subprocess.Popen([CTX, *args], env=env, stdout=subprocess.DEVNULL, stderr=child_fd)
    os.close(child_fd)
    drawn = b""
    while True:
        ready, _, _ = select.select([main_fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            drawn += chunk
        elif child.poll() is not None:
            break
    child.wait()
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    os.close(main_fd)
    lines = [part.replace(b"\x1b[K", b"").decode("utf-8", "replace").strip()
             for part in drawn.split(b"\r")]
    counted = [line for line in lines if " left" in line] or [line for line in lines if line]
    spent = after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime
    return took, (f"{spent:.0f} s of CPU; " + (f"a progress line drawn: {counted[-1]}" if counted
                                               else "no progress line"))


def first_build(n: int) -> tuple[Path, dict[str, str], float, float, str]:
    """A root of ``n`` entries, its read index made, then its first `ctx search --semantic`:
    (root, env, index bytes before, seconds, the last progress line)."""
    root = build.make_root(WORK / f"big-{n}", big_stores(n))
    env = env_for(root)
    timed(["list", "--limit", "1"], env)  # the read index, as every read has it
    before = index_bytes(root)
    took, line = on_a_terminal(["search", "--semantic", QUERY], env)
    return root, env, before, took, line


def cost_rows(n: int, runs: int, calls: int) -> list[tuple[str, str, str, str]]:
    _, _, _, small, small_line = first_build(1_000)
    root, env, before, first, line = first_build(n)
    grown = index_bytes(root) - before
    plain = root.with_name(root.name + "-plain")  # the same entries, never searched by meaning
    shutil.rmtree(plain, ignore_errors=True)
    build.make_root(plain, big_stores(n))
    timed(["list", "--limit", "1"], env_for(plain))
    colds = [timed(["search", "--semantic", QUERY], env) for _ in range(runs)]
    colds_words = [timed(["search", QUERY], env) for _ in range(runs)]
    sets_before, sets_after = [], []
    for i in range(runs):  # alternating, so the machine's load falls on both alike
        sets_before.append(timed(["set", f"bench_key_{i}", f"a value written, number {i}"], env_for(plain)))
        sets_after.append(timed(["set", f"bench_key_{i}", f"a value written, number {i}"], env))
    rows = [
        ("first build at 1,000 entries (whole process)", f"{small:.1f} s", "≤ 30 s", small_line),
        (f"first build at {n:,} entries (whole process)", f"{first:.1f} s", "≤ 300 s",
         f"vectors of every entry and the words table; {line}"),
        ("read index growth", f"{grown / 1e6:.1f} MB", "≤ 25 MB", f"{before / 1e6:.1f} MB before"),
        ("`ctx search --semantic` (whole process, cold model)", f"{statistics.median(colds):.2f} s", "≤ 1.0 s",
         f"median of {runs}: " + " ".join(f"{t:.2f}" for t in colds)
         + f"; plain `ctx search` {statistics.median(colds_words) * 1000:.0f} ms"),
        ("`ctx set` without / with the vectors", f"{statistics.median(sets_before) * 1000:.0f} / "
         f"{statistics.median(sets_after) * 1000:.0f} ms", "unchanged",
         f"median of {runs} each, alternating between two contexts of the same entries: without and with them"),
    ]
    warm = mcp_warm(env, QUERY, calls)
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
    parser.add_argument("--recall-only", action="store_true", help="the recall tables, no cost")
    args = parser.parse_args()
    commit = subprocess.run(["git", "-C", str(HERE.parent), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    load = os.getloadavg()[0]
    embedder = meaning_model.shared()
    lines = [f"## Recall · {time.strftime('%Y-%m-%d %H:%M')} · commit {commit} · {os.cpu_count()} cores, "
             f"load {load:.1f} at the start", "",
             f"Model: {embedder.name if embedder is not None else 'none'}; words weight {rank.WORDS_WEIGHT}"
             + (f", gates related {embedder.related} / near {embedder.near}" if embedder is not None else "")
             + " (chosen on the tuning set alone)."]
    for name, recall_set in SETS.items():
        questions = recall_set.QUESTIONS
        lines += ["", f"Found in the top {TOP}, and MRR@10, on the {name} ({len(recall_set.ENTRIES)} entries; "
                  + ", ".join(f"{sum(k == kind for k, _, _ in questions)} {kind}" for kind in KINDS)
                  + " questions)" + (": targets with the extra ≥ 0.65 / 0.95 / 0.95, MRR@10 ≥ 0.65"
                                     if recall_set is _held else ":"), "",
                  "| search | other words | own words | mixed | all | MRR@10 |", "|---|---|---|---|---|---|"]
        for way, values in recall_rows(name, recall_set):
            lines.append(f"| {way} | " + " | ".join(f"{v:.2f}" for v in values) + " |")
    if embedder is None:
        lines.append(f"\n(the semantic extra is not installed here: {meaning_model.EXTRA})")
    if not args.recall_only:
        lines += ["", f"At 1,000 and {args.entries:,} entries (the tuning set's texts, repeated and made distinct):",
                  "", "| measure | figure | target | note |", "|---|---|---|---|"]
        for row in cost_rows(args.entries, args.runs, args.calls):
            lines.append("| " + " | ".join(row) + " |")
    lines.append(f"\nLoad average at the end: {os.getloadavg()[0]:.1f} (a shared machine: figures are noisy).")
    print("\n".join(lines))
    if not args.no_write:
        print(f"\nwritten to {resultsfile.prepend(lines)}")


if __name__ == "__main__":
    main()
