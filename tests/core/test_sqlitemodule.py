"""SQLite loaded without functools (ctx/storage/sqlitemodule.py): the statement cache lent to
``_sqlite3`` behaves as ``lru_cache`` does for it, the loan is taken back, and a process that
cannot take the loan safely (functools or threading already there), or a module that wants
more than the loan holds, gets the ordinary import."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ctx.storage.sqlitemodule import statement_cache


def _python(code: str, *path: str) -> list[str]:
    """The lines ``code`` prints in a fresh interpreter (``path``: folders put first on sys.path)."""
    prefix = "".join(f"import sys; sys.path.insert(0, {p!r})\n" for p in path)
    done = subprocess.run([sys.executable, "-c", prefix + textwrap.dedent(code)],
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


def test_the_cache_keeps_the_newest_made_and_drops_the_least_recently_used():
    made = []

    def make(sql):
        made.append(sql)
        return f"statement {sql}"
    cached = statement_cache(2)(make)
    assert cached("a") == "statement a" and cached("b") == "statement b"
    assert cached("a") == "statement a"  # kept: a is now the most recent
    assert made == ["a", "b"]
    cached("c")  # full: b, the least recently used, goes
    cached("a")
    assert made == ["a", "b", "c"]
    cached("b")
    assert made == ["a", "b", "c", "b"]


def test_a_cache_of_no_size_keeps_nothing_and_one_of_none_keeps_everything():
    made = []
    none_kept = statement_cache(0)(lambda sql: made.append(sql) or sql)
    none_kept("x"), none_kept("x")
    assert made == ["x", "x"]
    made.clear()
    unbounded = statement_cache(None)(lambda sql: made.append(sql) or sql)
    for n in range(300):
        unbounded(str(n))
    for n in range(300):
        unbounded(str(n))
    assert len(made) == 300


def test_the_index_loads_sqlite_without_functools_and_gives_the_loan_back():
    if "functools" in _python("import sys; print(' '.join(sys.modules))"):
        pytest.skip("this interpreter loads functools at start (its site does): there is nothing to lend")
    lines = _python("""
        import sys
        from ctx.storage import index
        print(index.sqlite3.__name__, "functools" in sys.modules, "collections" in sys.modules)
        db = index.sqlite3.connect(":memory:")
        db.execute("CREATE TABLE t(a)")
        for n in range(200):  # more statements than the cache holds, the same ones again and again
            db.execute(f"INSERT INTO t VALUES ({n % 150})")
            db.execute("INSERT INTO t VALUES (?)", (n,))
        print(db.execute("SELECT count(*), sum(a) FROM t").fetchone()[0])
        import functools
        print(hasattr(functools, "reduce"), functools.lru_cache.__module__)
    """)
    assert lines == ["_sqlite3", "False", "False", "400", "True", "functools"]


def test_a_process_with_functools_or_threads_imports_it_the_ordinary_way():
    for first in ("functools", "threading"):
        lines = _python(f"""
            import sys
            import {first}
            from ctx.storage import index
            import functools
            print(sys.modules["functools"].__name__, hasattr(functools, "partial"),
                  index.sqlite3.connect(":memory:").execute("SELECT 7").fetchone()[0])
        """)
        assert lines == ["functools", "True", "7"], first


def test_a_module_that_wants_more_than_the_loan_is_imported_again_with_the_real_one(tmp_path):
    (tmp_path / "wants_more.py").write_text("from functools import lru_cache, reduce\nREDUCE = reduce\n")
    lines = _python("""
        import sys
        from ctx.storage.sqlitemodule import load
        module = load("wants_more")
        import functools
        print(module.REDUCE is functools.reduce, sys.modules["functools"] is functools,
              hasattr(functools, "partial"))
    """, str(tmp_path))
    assert lines == ["True", "True", "True"]


def test_threads_sharing_one_cache_get_right_statements_and_no_error():
    """A thread started after the loan may share a connection (check_same_thread=False):
    lru_cache's C code runs as one step, the lent cache in several; it must still answer right."""
    import random
    import threading
    cached = statement_cache(4)(lambda sql: ("statement", sql))
    wrong: list[object] = []
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        def hammer(seed: int) -> None:
            rng = random.Random(seed)
            try:
                for _ in range(20_000):
                    sql = str(rng.randrange(12))
                    if cached(sql) != ("statement", sql):
                        wrong.append(sql)
            except Exception as error:  # (any error is the failure shown)
                wrong.append(error)
        threads = [threading.Thread(target=hammer, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switch)
    assert wrong == []
