"""The SQLite module the index connects through, loaded for what a short process needs.

``_sqlite3`` (the module the ``sqlite3`` package re-exports, without the package's adapters,
which import ``datetime``) imports ``functools`` when it loads, for one name: ``lru_cache``,
which wraps each connection's cache of prepared statements. ``functools`` brings
``collections``, ``keyword``, ``operator``, ``reprlib`` and ``types`` with it, in
every ``ctx brief``, ``search`` or ``list``, and nothing else on those paths uses them
(tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib).

So, in a process that has imported neither ``functools`` nor ``threading`` (the command
line's, before any other thread could import), ``load`` lends ``_sqlite3`` a module holding
``statement_cache`` under that name for the length of its import, then takes it back: every
later ``import functools`` finds the real one. ``statement_cache`` does what the loan is for:
a connection's statements by their SQL, at most ``maxsize``, the least recently used
dropped first. Any failure (an interpreter whose ``_sqlite3`` wants more of ``functools``)
loads the module again the ordinary way, and so does every process that already has
``functools``: the loan is only ever a saving.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
    from typing import Any

LENT = "functools"


def statement_cache(maxsize: int = 128, typed: bool = False) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """``functools.lru_cache``'s shape, for one-argument callables (a connection making a
    statement from its SQL): results by argument, at most ``maxsize``, least recent out first."""
    def wrap(make: Callable[[Any], Any]) -> Callable[[Any], Any]:
        kept: dict[Any, Any] = {}

        def cached(sql: Any) -> Any:
            try:
                made = kept.pop(sql)  # (popped and put back: the newest, last in the dict's order)
            except KeyError:
                made = make(sql)
                if maxsize is not None and len(kept) >= maxsize:
                    if maxsize <= 0:
                        return made
                    try:  # (two threads on one connection may both evict: lru_cache's C code is one step)
                        del kept[next(iter(kept))]
                    except (KeyError, RuntimeError, StopIteration):
                        pass
            kept[sql] = made
            return made
        return cached
    return wrap


def load(name: str = "_sqlite3") -> ModuleType:
    """Import ``name`` (``_sqlite3``; a test names another), with the loan when it is safe."""
    if name in sys.modules:
        return sys.modules[name]
    if LENT in sys.modules or "threading" in sys.modules:
        return __import__(name)
    loan = type(sys)(LENT, "lent while _sqlite3 loads (ctx/storage/sqlitemodule.py)")
    loan.lru_cache = statement_cache  # type: ignore[attr-defined]
    sys.modules[LENT] = loan
    try:
        module = __import__(name)
    except Exception:
        sys.modules.pop(name, None)
        sys.modules.pop(LENT, None)
        return __import__(name)
    finally:
        if sys.modules.get(LENT) is loan:
            del sys.modules[LENT]
    return module
