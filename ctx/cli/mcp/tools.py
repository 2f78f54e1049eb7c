"""MCP tools built from the command table, so they cannot drift from the CLI.

One tool per command an agent uses (``Command.tool`` in its row), named as the
command (``summary new`` is ``summary_new``); those that reach a remote
(``Command.network``) come last, and only where the context has a remote. Its arguments are the command's
arguments and options, named by their ``dest`` (``key``, ``store``, ``tags``…),
with JSON-schema types, enums (the choices), defaults, minimums and
``required`` from the table; a value of several words (``set``'s value,
``amend``'s note) is one string. ``--json`` is no argument: every result
carries the JSON as structured content. The description is the command's
help; the annotations come from ``Command.reads``, ``.destructive``,
``.idempotent`` and ``.network``; a command that reads stdin (``Command.stdin``)
takes the text as an argument.

``Tool.values`` turns a call's arguments into the keyword values of the
command's handler, checking them as the CLI's parsers do (an unknown
argument, a missing one, a wrong type, a value outside the choices: an
``InvalidArgument`` naming what is allowed).

No import of the MCP SDK here: the schemas are plain dicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ctx.cli.params import FLAG, INT, MULTI, WORDS, Command
from ctx.errors import InvalidArgument

JSON_DEST = "as_json"  # never an argument: the JSON is the structured content of every result


def tool_commands() -> list[Command]:
    """The commands offered as tools, in the order they are listed: the table's, those
    that reach a remote last."""
    from ctx.cli.table_entries import served  # (never the whole table: it holds `ctx mcp`, which runs this)
    return sorted((c for c in served() if c.tool), key=lambda c: c.network)


@dataclass
class Param:
    """One argument of a tool: a command's argument or option, or the stdin text."""

    dest: str
    kind: str
    required: bool = False
    choices: tuple[str, ...] | None = None
    default: Any = None
    minimum: int | None = None
    help: str = ""

    def schema(self) -> dict[str, Any]:
        prop: dict[str, Any]
        if self.kind == FLAG:
            prop = {"type": "boolean", "default": False}
        elif self.kind == INT:
            prop = {"type": "integer"}
            if self.minimum is not None:
                prop["minimum"] = self.minimum
        elif self.kind == MULTI:
            prop = {"type": "array", "items": {"type": "string"}, "default": []}
            if self.choices is not None:
                prop["items"]["enum"] = list(self.choices)
        else:  # TEXT, WORDS
            prop = {"type": "string"}
        if self.choices is not None and self.kind != MULTI:
            prop["enum"] = list(self.choices)
        if self.default is not None and self.kind not in (FLAG, MULTI):
            prop["default"] = self.default
        if self.help:
            prop["description"] = self.help
        return prop

    def convert(self, tool: str, value: Any) -> Any:
        """The handler's value for the argument's JSON ``value`` (checked as the CLI checks it)."""
        where = f"{tool}: {self.dest}"
        if self.kind == FLAG:
            if not isinstance(value, bool):
                raise InvalidArgument(f"{where} must be true or false, not {value!r}")
            return value
        if self.kind == INT:
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise InvalidArgument(f"{where} must be a whole number, not {value!r}")
            if self.minimum is not None and value < self.minimum:
                raise InvalidArgument(f"{where} must be at least {self.minimum}, not {value}")
            return value
        if self.kind == MULTI:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
                raise InvalidArgument(f"{where} must be a list of strings, not {value!r}")
            for item in items:
                self._check_choice(where, item)
            return list(items)
        if not isinstance(value, str):
            raise InvalidArgument(f"{where} must be a string, not {value!r}")
        self._check_choice(where, value)
        return [value] if self.kind == WORDS else value

    def _check_choice(self, where: str, value: str) -> None:
        if self.choices is not None and value not in self.choices:
            raise InvalidArgument(f"{where} must be one of {', '.join(self.choices)}, not {value!r}")


@dataclass
class Tool:
    """The MCP tool of one command."""

    command: Command
    params: dict[str, Param] = field(default_factory=dict)
    stdin: str | None = None  # the argument that stands for stdin, if any

    @property
    def name(self) -> str:
        return tool_name(self.command)

    @property
    def has_json(self) -> bool:
        return any(o.dest == JSON_DEST for o in self.command.options)

    def input_schema(self) -> dict[str, Any]:
        return {"type": "object",
                "properties": {p.dest: p.schema() for p in self.params.values()},
                "required": [p.dest for p in self.params.values() if p.required],
                "additionalProperties": False}

    def annotations(self) -> dict[str, Any]:
        """MCP's tool hints, from the table (camelCase, as on the wire)."""
        c = self.command
        hints: dict[str, Any] = {"title": c.summary, "readOnlyHint": c.reads}
        if not c.reads:
            hints["destructiveHint"] = c.destructive
            hints["idempotentHint"] = c.idempotent
        hints["openWorldHint"] = c.network  # a remote; every other tool works on the local context only
        return hints

    def definition(self) -> dict[str, Any]:
        """The tool as ``tools/list`` gives it (wire names)."""
        return {"name": self.name, "title": self.command.summary, "description": self.command.help,
                "inputSchema": self.input_schema(), "annotations": self.annotations()}

    def values(self, arguments: dict[str, Any] | None) -> tuple[dict[str, Any], str]:
        """The handler's keyword values for a call's ``arguments`` (``as_json`` False),
        and the text that stands for stdin."""
        arguments = dict(arguments or {})
        unknown = sorted(set(arguments) - set(self.params))
        if unknown:
            raise InvalidArgument(f"{self.name}: unknown argument {unknown[0]!r}; it takes "
                                  f"{', '.join(self.params) or 'none'}")
        values = self.command.defaults()
        if self.command.stdin is not None:  # the option that reads stdin: its text comes as an argument
            values[self.command.stdin.option] = True
        if self.has_json:
            values[JSON_DEST] = False
        given = ""
        for param in self.params.values():
            value = arguments.get(param.dest)
            if value is None:
                if param.required:
                    raise InvalidArgument(f"{self.name} needs {param.dest!r}")
                continue
            if param.dest == self.stdin:
                given = param.convert(self.name, value)
            else:
                values[param.dest] = param.convert(self.name, value)
        return values, given


def tool_name(command: Command) -> str:
    return command.name.replace(" ", "_")


def _words_help(text: str) -> str:
    """An argument's help without the command line's word joining."""
    return re.sub(r"\s*\(its words are joined by spaces\)", "", text)


def build(command: Command) -> Tool:
    """The tool of ``command``, from its row of the table."""
    tool = Tool(command)
    dropped = {JSON_DEST} | ({command.stdin.option} if command.stdin is not None else set())
    for arg in command.args:
        tool.params[arg.dest] = Param(arg.dest, arg.kind, required=arg.required, choices=arg.choices,
                                      default=arg.default if arg.default not in (None, "") else None,
                                      help=_words_help(arg.help) if arg.kind == WORDS else arg.help)
    for opt in command.options:
        if opt.dest in dropped or opt.cli_only:  # its default stands in a tool
            continue
        tool.params[opt.dest] = Param(opt.dest, opt.kind, required=opt.required, choices=opt.choices,
                                      default=opt.default, minimum=opt.minimum, help=opt.help)
    if command.stdin is not None:
        dest = command.stdin.argument
        tool.params[dest] = Param(dest, "text", required=True, help=command.stdin.help)
        tool.stdin = dest
    return tool


def tools(with_remote: bool = True) -> list[Tool]:
    """Every tool, in ``tool_commands`` order (those that reach a remote only ``with_remote``)."""
    return [build(c) for c in tool_commands() if with_remote or not c.network]


def has_remote(root) -> bool:
    """Whether the context's repository names a remote, as git reads its configuration
    (one git refuses names none: the tools that reach a remote are not offered)."""
    from ctx.errors import CtxError
    from ctxgit.plumbing.gitconfig import remotes
    try:
        return bool(remotes(root))
    except CtxError:
        return False


def structured(payload: Any) -> dict[str, Any]:
    """A command's ``--json`` as structured content: an object as it is, anything else
    (a list of results) under ``"results"`` (MCP wants an object)."""
    return payload if isinstance(payload, dict) else {"results": payload}
