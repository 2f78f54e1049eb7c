"""The layers of the code, checked by reading every import (README: "How it fits together").

    ctx/cli/   the front door: the only place click (or ctx.cli) is imported
    ctx/harness/  what ctx knows of each agent harness: imports the core only
    ctx/       the core: imports neither click, ctx.cli, ctx.harness, ctxgit nor hooks
    ctxgit/    git: never imports the front door; inside it, floors (``CTXGIT_FLOORS``),
               each importing only its own and those below: gitfiles (no pygit2,
               no processes), plumbing, guard, recorder, porcelain, sync
    hooks/     credential scanning and guards: imports only the core
    ctx/memorytool.py  the door of Anthropic's memory tool: like the front door it opens a
               context wired to git (``ctx.cli.run.open_context``) and writes through the
               core; it imports neither click, ctx.harness nor hooks, and nothing imports it
               (the anthropic SDK it loads stays off every other path)

Every import counts: at the top, inside functions (they run, only later) and
under ``if TYPE_CHECKING:`` (a module that needs another's types depends on it
as much as one that calls it). No two modules may import each other, directly
or through others, and no module may pass 600 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ctx.cli.params import HANDLERS

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("ctx", "ctxgit", "hooks")
MAX_LINES = 600


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """Every module name an import statement of ``tree`` reaches, wherever it stands."""
    names: set[str] = set()
    package = module if is_package else module.rpartition(".")[0]

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            names.add(origin)
            names.update(f"{origin}.{alias.name}" for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)
    visit(tree)
    return names


def _handler_names(tree: ast.AST) -> list[str]:
    """The handlers a module's ``Command(...)`` rows name: their second argument, a
    ``"module:function"`` of ``HANDLERS`` that ``run.handler_of`` imports when the command
    runs, so the row's module depends on that handler's module as if it imported it."""
    return [call.args[1].value for call in ast.walk(tree)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "Command"
            and len(call.args) > 1 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str)]


def _handler_module(handler: str) -> str:
    return f"{HANDLERS}.{handler.partition(':')[0]}"


def _graph() -> dict[str, set[str]]:
    """Module -> the modules of ctx, ctxgit and hooks it imports or names a handler of (and
    "click" when it imports it)."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = set()
        named = [_handler_module(handler) for handler in _handler_names(tree)]
        for name in [*_imported_names(tree, module, path.name == "__init__.py"), *named]:
            if name == "click" or name.startswith("click."):
                targets.add("click")
            elif name in MODULES and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


GRAPH = _graph()


def _layer(module: str) -> str:
    if module == "click":
        return "click"
    if module == "ctx.cli" or module.startswith("ctx.cli.") or module == "ctx.__main__":
        return "front door"
    if module == "ctx.harness" or module.startswith("ctx.harness."):
        return "harness"
    if module == "ctx.memorytool":
        return "memory tool"
    return module.split(".")[0]  # ctx (the core), ctxgit, hooks


FORBIDDEN = {
    "ctx": {"click", "front door", "harness", "ctxgit", "hooks", "memory tool"},
    "harness": {"click", "front door", "ctxgit", "hooks", "memory tool"},
    "ctxgit": {"click", "front door", "memory tool"},
    "hooks": {"click", "front door", "ctxgit", "memory tool"},
    "front door": {"memory tool"},
    "memory tool": {"click", "harness", "hooks"},
}


def test_the_graph_sees_the_imports_it_should():
    """The reader itself: it finds imports at the top, inside functions and under
    TYPE_CHECKING, both spellings (a rule checked on an empty graph would pass whatever the code)."""
    assert "click" in GRAPH["ctx.cli.app"]
    assert "ctx.harness.wiring" in GRAPH["ctx.cli.commands.features"] and _layer("ctx.harness.gemini") == "harness"
    assert "ctx.context" in GRAPH["ctxgit.recorder"] or "ctx.changes" in GRAPH["ctxgit.recorder"]
    source = ("import os\nTYPE_CHECKING = False\nif TYPE_CHECKING:\n    from ctxgit import recorder\n"
              "def f():\n    from ctx.model import STORES\n    import click\n")
    names = _imported_names(ast.parse(source), "ctx.example", False)
    assert {"ctx.model", "click", "ctxgit.recorder"} <= names
    assert _layer("ctx.memorytool") == "memory tool" and "ctx.cli.run" in GRAPH["ctx.memorytool"]
    typing_spelling = _imported_names(ast.parse("import typing\nif typing.TYPE_CHECKING:\n    import ctx.errors\n"),
                                      "ctx.example", False)
    assert "ctx.errors" in typing_spelling
    relative = _imported_names(ast.parse("from .model import x\nfrom ..errors import y\n"),
                               "ctx.storage.files", False)
    assert {"ctx.storage.model", "ctx.errors"} <= relative


def test_every_handler_the_table_names_is_an_edge():
    """Each row's handler, read from the source, is the one the table resolves: a row whose
    handler were not a literal "module:function" would hide its module from the graph."""
    from ctx.cli.run import handler_of
    from ctx.cli.table import commands
    rows = [c for c in commands() if c.handler is not None]
    read = [h for path in MODULES.values() for h in _handler_names(ast.parse(path.read_text(encoding="utf-8")))]
    assert sorted(read) == sorted(c.handler for c in rows)
    for command in rows:
        function = handler_of(command)
        assert callable(function) and function.__module__ == _handler_module(command.handler), command.name
    assert "ctx.cli.commands.mcp" in GRAPH["ctx.cli.table"]
    assert "ctx.cli.commands.entries" in GRAPH["ctx.cli.table_entries"]
    assert _handler_names(ast.parse('Command("x", "area:go", "s", "h")\nCommand("g", None, "s", "h")\n')) == ["area:go"]


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_each_layer_imports_only_what_it_may(module):
    layer = _layer(module)
    wrong = sorted(t for t in GRAPH[module] if _layer(t) in FORBIDDEN[layer])
    assert not wrong, f"{module} ({layer}) imports {', '.join(wrong)}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def connect(node: str) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target == "click":
                continue
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            connect(module)
    return cycles


def test_no_import_cycles():
    cycles = _cycles(GRAPH)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_would_catch_one():
    """Issue 36's hidden cycle, made up: a table naming the handler that serves the table."""
    graph = {"table": {"handler"}, "handler": {"server"}, "server": {"table", "click"}, "leaf": set()}
    assert _cycles(graph) == [["handler", "server", "table"]]
    assert _cycles({**graph, "server": {"click"}}) == []


# ctxgit's floors, lowest first: a module imports ctxgit modules of its own floor or below
CTXGIT_FLOORS = ("gitfiles", "plumbing", "guard", "recorder", "porcelain", "sync")
# what the lowest floor never loads: every fast path may import it
NOT_IN_GITFILES = ("pygit2", "subprocess", "multiprocessing", "ctx.cli")


def _floor(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "ctxgit" or len(parts) == 1:
        return None  # not ctxgit's, or its empty package: no floor
    return CTXGIT_FLOORS.index(parts[1])


def test_every_ctxgit_module_has_a_floor():
    for module in GRAPH:
        if module.startswith("ctxgit."):
            assert module.split(".")[1] in CTXGIT_FLOORS, f"{module}: on no floor of {CTXGIT_FLOORS}"


@pytest.mark.parametrize("module", sorted(m for m in GRAPH if m.startswith("ctxgit.")))
def test_each_ctxgit_floor_imports_only_its_own_and_those_below(module):
    own = _floor(module)
    above = sorted(t for t in GRAPH[module] if (_floor(t) or 0) > (own or 0))
    assert not above, f"{module} ({CTXGIT_FLOORS[own or 0]}) imports {', '.join(above)} from a floor above"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("ctxgit.gitfiles")))
def test_gitfiles_loads_neither_libgit2_nor_processes(module):
    path = MODULES[module]
    names = _imported_names(ast.parse(path.read_text(encoding="utf-8"), str(path)), module,
                            path.name == "__init__.py")
    wrong = sorted(n for n in names for banned in NOT_IN_GITFILES if n == banned or n.startswith(banned + "."))
    assert not wrong, f"{module} imports {', '.join(wrong)}"
    inside = sorted(t for t in GRAPH[module] if t.startswith("ctxgit.") and not t.startswith("ctxgit.gitfiles"))
    assert not inside, f"{module} imports {', '.join(inside)}"


def test_the_floor_rules_would_catch_a_wrong_import():
    """The floor reader on made-up imports: an upward one is seen, a downward one is not."""
    assert _floor("ctxgit.plumbing.repo") > _floor("ctxgit.gitfiles.layout")
    assert _floor("ctxgit.sync.remote") > _floor("ctxgit.recorder") > _floor("ctxgit.plumbing.repo")
    names = _imported_names(ast.parse("def f():\n    import pygit2\n"), "ctxgit.gitfiles.x", False)
    assert "pygit2" in names


def _git_paths(source: str) -> list[str]:
    """The strings of ``source`` (docstrings too) that name a place inside ``.git``."""
    return [node.value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and (node.value.strip("/") == ".git" or ".git/" in node.value)]


CORE = sorted(m for m in MODULES if _layer(m) == "ctx")


@pytest.mark.parametrize("module", CORE)
def test_the_core_never_spells_where_git_keeps_things(module):
    """The core's own state (the read index, the machine's settings) is kept in the folder
    the front door names (``Context.state``, from ``ctxgit.gitfiles.layout.state_dir``)."""
    found = _git_paths(MODULES[module].read_text(encoding="utf-8"))
    assert not found, f"{module} names a place in .git: {found}"


def test_the_git_path_reader_would_catch_one():
    assert "ctx.storage.index" in CORE and "ctx.cli.run" not in CORE and "ctx.harness.gemini" not in CORE
    assert _git_paths('p = root / ".git" / "ctx"\n') == [".git"]
    assert _git_paths('"""Kept in ``.git/ctx/x``."""\nq = f"{root}/.git/ctx"\n')
    assert not _git_paths('IGNORE = ".gitignore"\nA = ".gitattributes"\n')


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_over_600_lines(module):
    lines = MODULES[module].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{module} has {lines} lines"
