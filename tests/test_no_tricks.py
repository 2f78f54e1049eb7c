"""No process-wide tricks in the product (issue 36): the cyclic collector is never switched off
but around the one whole-store parse (``ctx.storage.files.parse_store``'s pause, given back in
``finally``), no private attribute of the interpreter's modules is used (``atexit._run_exitfuncs``,
``os._exit``, ``sys._getframe``), and nothing is written into ``sys.modules``. The MCP server
lives for hours in one process: what a short command might get away with, it would not
(tests/mcp/test_mcp_memory.py)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STDLIB = frozenset(sys.stdlib_module_names)
# The collector may be paused here only: the function that parses a whole store file.
PAUSE = ("ctx/storage/files.py", "_collector_paused")
COLLECTOR_SWITCHES = frozenset({"disable", "freeze", "unfreeze", "set_threshold"})
SYS_MODULES_WRITES = frozenset({"pop", "popitem", "setdefault", "update", "clear", "__setitem__", "__delitem__"})
# Underscore modules of the standard library imported by name: each is the documented or
# accelerating module beneath a public one, and each import falls back to the public one.
UNDERSCORE_MODULES = frozenset({
    "_thread",   # documented ("low-level threading API"): the lock without importing threading
    "_json",     # json's own accelerator (ctx/jsoncodec.py; falls back to json)
    "_sqlite3",  # the module sqlite3 re-exports (ctx/storage/index.py; falls back to sqlite3)
})


def _product_files() -> list[Path]:
    files = [p for top in ("ctx", "ctxgit", "hooks") for p in sorted((ROOT / top).rglob("*.py"))]
    return [*files, ROOT / "bin" / "ctx"]


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


class _Finder(ast.NodeVisitor):
    """What one module does that the rules above forbid, as "line: what"."""

    def __init__(self, relative: str) -> None:
        self.relative = relative
        self.modules: dict[str, str] = {}  # a local name -> the stdlib module it is bound to
        self.function: list[str] = []
        self.found: list[str] = []

    def _say(self, node: ast.AST, what: str) -> None:
        self.found.append(f"{self.relative}:{getattr(node, 'lineno', 0)}: {what}")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top in STDLIB:
                self.modules[alias.asname or top] = alias.name if alias.asname else top
            if any(_private(part) for part in alias.name.split(".")) and alias.name not in UNDERSCORE_MODULES \
                    and top in STDLIB:
                self._say(node, f"imports the private module {alias.name}")
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        top = module.split(".")[0]
        if node.level == 0 and top in STDLIB:
            if any(_private(part) for part in module.split(".")) and module not in UNDERSCORE_MODULES:
                self._say(node, f"imports from the private module {module}")
            for alias in node.names:
                if module == "gc" and alias.name in COLLECTOR_SWITCHES:
                    self._say(node, f"imports the collector's switch gc.{alias.name}")
                if _private(alias.name):
                    self._say(node, f"imports the private name {module}.{alias.name}")
                if f"{module}.{alias.name}" in STDLIB or (module == "" and alias.name in STDLIB):
                    self.modules[alias.asname or alias.name] = f"{module}.{alias.name}"
        self.generic_visit(node)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.function.append(node.name)
        self.generic_visit(node)
        self.function.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _module_of(self, node: ast.expr) -> str | None:
        return self.modules.get(node.id) if isinstance(node, ast.Name) else None

    def _is_sys_modules(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "modules" and self._module_of(node.value) == "sys"

    def visit_Attribute(self, node: ast.Attribute) -> None:
        module = self._module_of(node.value)
        if module is not None and _private(node.attr):
            self._say(node, f"uses the private {module}.{node.attr}")
        if module == "gc" and node.attr in COLLECTOR_SWITCHES \
                and (self.relative, self.function[-1] if self.function else "") != PAUSE:
            self._say(node, f"switches the collector (gc.{node.attr}) outside {PAUSE[0]}: {PAUSE[1]}")
        self.generic_visit(node)

    def _writes(self, targets: list[ast.expr], node: ast.AST) -> None:
        for target in targets:
            if isinstance(target, ast.Subscript) and self._is_sys_modules(target.value):
                self._say(node, "writes into sys.modules")
            elif self._is_sys_modules(target):
                self._say(node, "replaces sys.modules")

    def visit_Assign(self, node: ast.Assign) -> None:
        self._writes(node.targets, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._writes([node.target], node)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        self._writes(node.targets, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        called = node.func
        if isinstance(called, ast.Attribute) and called.attr in SYS_MODULES_WRITES \
                and self._is_sys_modules(called.value):
            self._say(node, f"writes into sys.modules (.{called.attr})")
        self.generic_visit(node)


def _found(source: str, relative: str = "ctx/example.py") -> list[str]:
    finder = _Finder(relative)
    finder.visit(ast.parse(source))
    return finder.found


def test_the_scan_finds_each_trick():
    tricks = {
        "import gc\ngc.disable()\n": "gc.disable",
        "import gc as g\ndef main():\n    g.freeze()\n": "gc.freeze",
        "from gc import disable\n": "gc.disable",
        "import atexit\natexit._run_exitfuncs()\n": "atexit._run_exitfuncs",
        "import os\nos._exit(0)\n": "os._exit",
        "import sys\nframe = sys._getframe(1)\n": "sys._getframe",
        "from sys import _getframe\n": "sys._getframe",
        "import sys\nsys.modules['functools'] = object()\n": "writes into sys.modules",
        "import sys\ndel sys.modules['functools']\n": "writes into sys.modules",
        "import sys\nsys.modules.pop('functools', None)\n": "writes into sys.modules (.pop)",
        "import sys as s\ns.modules.setdefault('x', None)\n": "writes into sys.modules (.setdefault)",
        "import importlib._bootstrap\n": "private module importlib._bootstrap",
        "from _collections import deque\n": "private module _collections",
    }
    for source, what in tricks.items():
        found = _found(source)
        assert len(found) == 1 and what in found[0], (source, found)
    assert _found("import gc\ndef _collector_paused():\n    gc.disable()\n", PAUSE[0]) == []
    for fine in ("import sys\nx = sys.modules.get('json')\n", "import os\nos.environ.get('X')\n",
                 "import _thread\nlock = _thread.allocate_lock()\n", "self._x = 1\n", "import os\nos.__name__\n",
                 "from ctx.jsoncodec import _Decoder\n", "import gc\ngc.isenabled()\n"):
        assert _found(fine) == [], fine


def test_the_product_plays_no_process_wide_tricks():
    found = []
    for path in _product_files():
        relative = path.relative_to(ROOT).as_posix()
        finder = _Finder(relative)
        finder.visit(ast.parse(path.read_text(encoding="utf-8")))
        found.extend(finder.found)
    assert not found, "process-wide tricks in the product:\n" + "\n".join(found)


def test_the_parse_gives_the_collector_back_as_it_was():
    import gc

    import pytest

    from ctx.errors import StoreError
    from ctx.storage.files import parse_store
    good = b'{"type": "shared", "version": "1", "entries": {}}'
    was = gc.isenabled()
    try:
        for collecting in (True, False):
            (gc.enable if collecting else gc.disable)()
            assert parse_store("shared", "shared.json", good).data["entries"] == {}
            assert gc.isenabled() is collecting
            with pytest.raises(StoreError):
                parse_store("shared", "shared.json", b'{"entries": {"k": NaN}}')
            assert gc.isenabled() is collecting
    finally:
        (gc.enable if was else gc.disable)()
