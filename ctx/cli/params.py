"""The vocabulary of the command table: ``Command``, ``Arg``, ``Opt``, the kinds of
value, and the options many commands share (``table.py`` and its siblings use them).

Plain classes and constants only: the fast door imports this on every run.
"""

from __future__ import annotations

from ctx.model import BRIEF_CHANGES as CHANGES  # the core owns these defaults (the fast door
from ctx.model import BRIEF_DAYS as DAYS  # imports model anyway; the brief only when it runs)
from ctx.model import SCOPES, SOURCES, STATUSES, STORES

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any

# kinds of value
FLAG = "flag"      # an option without a value: True when given
TEXT = "text"      # one string
INT = "int"        # a whole number, at least ``minimum``
MULTI = "multi"    # an option given any number of times: a list of strings
WORDS = "words"    # the remaining words (an argument): a list of strings

SEARCH_LIMIT = 50  # search's default limit (list has none)
HOOK_HARNESSES = ("claude-code", "codex", "gemini")  # the harnesses whose hooks ctx wires (--harness)

HANDLERS = "ctx.cli.commands"  # the package a ``Command.handler``'s module is in


class Opt:
    """An option: ``Opt("store", "--store", "-s", choices=STORES, default="shared")``.
    ``cli_only``: it only makes sense on a command line (an output format); an MCP tool
    does not offer it, and its default stands in."""

    __slots__ = ("dest", "flags", "kind", "choices", "default", "help", "metavar", "required", "minimum",
                 "cli_only")

    def __init__(self, dest: str, *flags: str, kind: str = TEXT, choices: tuple[str, ...] | None = None,
                 default: Any = None, help: str = "", metavar: str | None = None,
                 required: bool = False, minimum: int | None = None, cli_only: bool = False) -> None:
        self.dest, self.flags, self.kind, self.choices = dest, flags, kind, choices
        self.default, self.help, self.metavar = default, help, metavar
        self.required, self.minimum, self.cli_only = required, minimum, cli_only

    def empty(self) -> Any:
        """The value when the option is not given."""
        return False if self.kind == FLAG else [] if self.kind == MULTI else self.default


class Arg:
    """A positional argument; ``WORDS`` takes the rest (a value of several words)."""

    __slots__ = ("dest", "kind", "required", "choices", "metavar", "help", "default")

    def __init__(self, dest: str, kind: str = TEXT, required: bool = True,
                 choices: tuple[str, ...] | None = None, metavar: str | None = None,
                 help: str = "", default: Any = None) -> None:
        self.dest, self.kind, self.required, self.choices = dest, kind, required, choices
        self.metavar, self.help, self.default = metavar, help, default


class Stdin:
    """What a command reads from stdin, for the doors without one (MCP): the ``option``
    that makes it read (set to True), and the tool ``argument`` that carries the text."""

    __slots__ = ("option", "argument", "help")

    def __init__(self, option: str, argument: str, help: str) -> None:
        self.option, self.argument, self.help = option, argument, help


class Command:
    """One command: its words, its handler, its help, its parameters and what it does.

    ``name`` is its words ("summary new"); ``handler`` names the function doing the
    work as ``"module:function"`` of ``HANDLERS`` (``"entries:get"``; None for a group),
    resolved in one place, ``run.handler_of``, when the command runs (a start loads no
    handler it does not run), and read by tests/test_layers.py as an import of the
    table's module; ``reads``: it never writes;
    ``fast``: the fast door takes it; ``words_rule``: options may stand before or after
    its words, never between them (§9.1); ``git``: it works on the context's
    repository, so ``CTX_NO_GIT=1`` refuses it with a reason.

    What it does, for the machinery around it: ``slow``: it can take a while (a progress
    line on a terminal); ``network``: it reaches a remote (an MCP tool only where the
    context has one, marked open-world); ``pulls``: it may bring in others' commits
    (the since-log takes them in at once); ``auto_sync``: a write by it starts
    auto-sync's background push (False: it syncs itself, rewrites history, or runs
    other commands); ``tool``: offered over MCP; ``stdin``: what it reads from stdin
    (``Stdin``); ``idempotent``/``destructive``: hints for tool clients (MCP)."""

    __slots__ = ("name", "handler", "summary", "help", "epilog", "args", "options", "reads", "fast",
                 "hidden", "group", "words_rule", "idempotent", "destructive", "git", "slow", "network",
                 "pulls", "auto_sync", "tool", "stdin")

    def __init__(self, name: str, handler: str | None, summary: str, help: str,
                 epilog: str = "", *, args: tuple[Arg, ...] = (), options: tuple[Opt, ...] = (),
                 reads: bool = False, fast: bool = False, hidden: bool = False, group: bool = False,
                 words_rule: bool = False, idempotent: bool = False, destructive: bool = False,
                 git: bool = False, slow: bool = False, network: bool = False, pulls: bool = False,
                 auto_sync: bool = True, tool: bool = False, stdin: Stdin | None = None) -> None:
        self.name, self.handler, self.summary, self.help, self.epilog = name, handler, summary, help, epilog
        self.args, self.options, self.reads, self.fast = args, options, reads, fast
        self.hidden, self.group, self.words_rule = hidden, group, words_rule
        self.idempotent, self.destructive, self.git = idempotent, destructive, git
        self.slow, self.network, self.pulls, self.auto_sync = slow, network, pulls, auto_sync
        self.tool, self.stdin = tool, stdin

    def defaults(self) -> dict[str, Any]:
        """Every parameter's value when nothing is given."""
        values = {a.dest: ([] if a.kind == WORDS else a.default) for a in self.args}
        values.update((o.dest, o.empty()) for o in self.options)
        return values


# --- options many commands share -----------------------------------------------------

def store_option(default: str | None = "shared", help: str = "The store to use.") -> Opt:
    return Opt("store", "--store", "-s", choices=STORES, default=default, help=help)


STORE = store_option()
ANY_STORE = store_option(None, "Only this store (default: all).")
JSON = Opt("as_json", "--json", kind=FLAG, help="Print JSON (shape above).")
FORCE = Opt("force", "--force", kind=FLAG, help="Store it even if it looks like a credential (§11).")
VERBOSE = Opt("verbose", "-v", "--verbose", kind=FLAG, help="Show every field.")
BRIEF = (Opt("days", "--days", kind=INT, minimum=0, default=DAYS, help="Decisions changed within this many days."),
         Opt("changes", "--changes", kind=INT, minimum=0, default=CHANGES, help="How many recent changes."))
FILTERS = (
    ANY_STORE,
    Opt("tags", "--tag", kind=MULTI, help="Has any of these tags (repeatable)."),
    Opt("source", "--source", choices=SOURCES, help="Only this source."),
    Opt("status", "--status", choices=STATUSES + ("current",), help="Only this status; current means none."),
    Opt("scope", "--scope", choices=SCOPES, help="Only this scope."),
    Opt("since", "--since", metavar="TIME",
        help="timestamp at or after TIME: RFC 3339, or YYYY-MM-DD (00:00 UTC)."),
    Opt("prefix", "--prefix", metavar="P", help="Only keys starting with P."),
)
KEY = Arg("key", help="The entry's key.")
REMOTE = Arg("remote_name", required=False, metavar="[REMOTE]",
             help="The remote (default: main's upstream; without one, the only remote, or origin).")
ORDER_HELP = ("Results: newest timestamp first, then store (operator, shared, agent), "
              "then key; a limit cuts them after ordering.")
