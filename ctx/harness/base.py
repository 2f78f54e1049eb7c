"""What every harness module declares (``Harness``), and what one wiring is made of
(``Wiring``, ``Edit``).

A harness module (``claude_code``, ``codex``, ``gemini``, ``cursor``, ``agents_md``,
``launcher``) subclasses ``Harness`` once and holds all that ctx knows of that harness,
each fact beside the code that uses it: on its start side, the files it reads and where
they live, the budget of ``ctx start`` in it and why, its start hook or pointer; on its
MCP side, its MCP server entry and what it passes that server of its own environment.
``ctx/harness/wiring.py`` turns a harness's ``Edit`` list into a plan (a diff) and writes it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ctx.errors import InvalidArgument

if TYPE_CHECKING:
    from ctx.failure_recall import Failure


def home() -> Path:
    """HOME from the environment (tests and harnesses set it), else the user's."""
    return Path(os.environ.get("HOME") or os.path.expanduser("~"))


def this_ctx() -> str:
    """This installation's ``ctx`` script when it has one, else ``ctx`` on PATH."""
    script = Path(sys.executable).parent / "ctx"
    return str(script) if script.is_file() else "ctx"


@dataclass(frozen=True)
class Wiring:
    """One wiring's inputs: the context root, the agent's name, the ``ctx`` the harness
    runs, and the options of ``ctx wire``."""

    root: Path
    agent: str
    program: str
    project: bool = False
    only_under: Path | None = None
    trust: bool = False


# An edit of one file: its text (None when absent) -> its new text and notes for the operator.
Change = Callable[[str | None], tuple[str, list[str]]]


@dataclass
class Edit:
    """One file a wiring changes, and how."""

    path: Path
    change: Change
    mode: int = 0o644  # a new file's mode (an existing file keeps its own)


@dataclass(frozen=True)
class Budget:
    """The budget of ``ctx start`` in a harness, in characters, and why that figure
    (``ctx wire --help`` shows both)."""

    chars: int
    why: str


class Harness:
    """A harness, as ctx knows it. A subclass names it (``name``, ``agent``); beside its
    ``start`` (when a session can start from ctx) it declares ``budget`` and ``start_help``;
    beside ``mcp_path``/``mcp_entry`` (when it runs MCP servers), ``mcp_help`` and
    ``server_env``. Its module holds the one instance, ``HARNESS``."""

    name: ClassVar[str]  # the TARGET of `ctx wire`
    agent: ClassVar[str]  # the agent's name when neither --agent nor CTX_AUTHOR gives one
    budget: ClassVar[Budget | None] = None  # the budget of `ctx start` in this harness
    start_help: ClassVar[str] = ""  # `ctx wire --help`: the files `ctx wire TARGET` changes, and what it puts there
    mcp_help: ClassVar[str] = ""  # the same for --mcp ("": no MCP side)
    server_env: ClassVar[str] = ""  # what the harness passes an MCP server of its own environment
    # Recall at a failing command: the hook event that follows one, its matcher (the shell tool), and
    # what `ctx wire` says of it ("" : the harness has no such event)
    failure_event: ClassVar[str] = ""
    failure_matcher: ClassVar[str] = ""

    @property
    def starts(self) -> bool:
        """Whether `ctx wire TARGET` (without --mcp) wires anything."""
        return bool(self.start_help)

    @property
    def has_mcp(self) -> bool:
        return bool(self.mcp_help)

    def failure(self, payload: dict[str, Any]) -> Failure | None:
        """The failing command a ``failure_event`` hook's payload tells of; None when it tells
        of none (a success, another tool, a field missing or of the wrong type)."""
        return None

    def context_output(self, event: str, text: str) -> str:
        """What the hook prints so that ``text`` reaches the model: the JSON
        ``hookSpecificOutput.additionalContext`` every harness here reads."""
        import json
        return json.dumps({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}},
                          ensure_ascii=False) + "\n"

    def start(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        """The files that make a session start from ctx, and notes for the operator."""
        raise InvalidArgument(f"{self.name} is wired only as an MCP server: ctx wire {self.name} --mcp")

    def mcp_path(self, project: bool) -> Path:
        raise NotImplementedError

    def mcp_entry(self, wiring: Wiring) -> dict[str, Any]:
        """The ``ctx`` server entry: this ctx, ``mcp``, and the root and the name in its env
        (every harness gets them explicitly: see ``server_env``)."""
        return {"command": wiring.program, "args": ["mcp"],
                "env": {"CTX_HOME": str(wiring.root), "CTX_AUTHOR": wiring.agent}}

    def mcp_text(self, before: str | None, wiring: Wiring) -> str:
        """The MCP settings file with ctx's entry (JSON ``mcpServers`` unless overridden)."""
        from ctx.harness.edit import with_json_server
        return with_json_server(before or "", self.mcp_entry(wiring))

    def mcp_notes(self, wiring: Wiring) -> list[str]:
        return [f"the server runs as {wiring.agent} (CTX_AUTHOR in its env); restart {self.name} to load it"]

    def mcp(self, wiring: Wiring) -> tuple[list[Edit], list[str]]:
        """The file that holds ctx's MCP server entry, and notes for the operator."""
        return ([Edit(self.mcp_path(wiring.project), lambda before: (self.mcp_text(before, wiring), []))],
                self.mcp_notes(wiring))
