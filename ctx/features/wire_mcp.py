"""Wiring a harness's MCP side (``ctx wire TARGET --mcp``): its MCP server
entry named ``ctx``, running this installation's ``ctx mcp`` with ``CTX_HOME``
and ``CTX_AUTHOR`` in its environment.

Files (``--project``: the project's own, in the current directory):

- claude-code: ``~/.claude.json``, top-level ``mcpServers`` (Claude Code's user
  scope; ``./.mcp.json``, the project scope, with ``--project``);
- codex: ``$CODEX_HOME/config.toml`` (default ``~/.codex``), the table
  ``[mcp_servers.ctx]`` (``./.codex/config.toml``: Codex reads it in a trusted
  project);
- gemini: ``~/.gemini/settings.json``, ``mcpServers`` (``./.gemini/settings.json``);
- cursor: ``~/.cursor/mcp.json``, ``mcpServers`` (``./.cursor/mcp.json``).

The same rules as the rest of ``wire.py``: ``plan`` computes the change (a
diff), ``wire.apply`` writes it with a backup; everything else in the file is
kept, and an entry already as ctx would write it leaves the file byte for
byte. JSON files are parsed and written back with their indentation. The TOML
file is edited as text, never round-tripped through a TOML library (that would
drop its comments): ctx's table (and any ``[mcp_servers.ctx.*]`` sub-table) is
replaced where it stands, or appended; ``tomllib`` then checks that the result
parses, holds exactly ctx's entry, and that everything else reads as before.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any

from ctx import settings
from ctx.errors import InvalidArgument

MCP_TARGETS = ("claude-code", "codex", "gemini", "cursor")
SERVER_NAME = "ctx"
DEFAULT_NAMES = {"claude-code": "Claude", "codex": "Codex", "gemini": "Gemini", "cursor": "Cursor"}
_HEADER = re.compile(r"^\s*\[\[?\s*(?P<path>[^\[\]#]+?)\s*\]\]?\s*(#.*)?$")


def mcp_path(target: str, project: bool = False) -> Path:
    from ctx.features.wire import home
    if target not in MCP_TARGETS:
        raise InvalidArgument(f"{target} has no MCP side ctx can wire; --mcp takes {', '.join(MCP_TARGETS)}")
    here = Path.cwd()
    if target == "claude-code":
        return here / ".mcp.json" if project else home() / ".claude.json"
    if target == "codex":
        if project:
            return here / ".codex" / "config.toml"
        codex_home = (os.environ.get("CODEX_HOME") or "").strip()
        return (Path(codex_home) if codex_home else home() / ".codex") / "config.toml"
    folder = ".gemini" if target == "gemini" else ".cursor"
    return (here if project else home()) / folder / ("settings.json" if target == "gemini" else "mcp.json")


def server_entry(target: str, root: Path, agent: str) -> dict[str, Any]:
    """The ``ctx`` server entry: this installation's ctx, ``mcp``, and its environment."""
    from ctx.features.wire import ctx_program
    entry: dict[str, Any] = {"command": ctx_program(), "args": ["mcp"],
                             "env": {"CTX_HOME": str(root), "CTX_AUTHOR": agent}}
    return {"type": "stdio", **entry} if target == "claude-code" else entry


# --- JSON: {"mcpServers": {"ctx": {...}}} ----------------------------------------------

def with_json_server(text: str, entry: dict[str, Any]) -> str:
    """A JSON settings file with ctx's server entry; everything else kept."""
    from ctx.features.wire import _indent_of, json_object
    data = json_object(text)
    original = copy.deepcopy(data)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidArgument("'mcpServers' is not a JSON object; ctx will not change it")
    servers[SERVER_NAME] = entry
    if text.strip() and data == original:
        return text  # already wired: the file stays byte for byte
    return json.dumps(data, indent=_indent_of(text), ensure_ascii=False) + "\n"


# --- TOML: [mcp_servers.ctx] -----------------------------------------------------------

def _toml_string(text: str) -> str:
    """A TOML basic string (JSON's escapes are all TOML escapes)."""
    return json.dumps(text, ensure_ascii=False)


def toml_block(entry: dict[str, Any]) -> str:
    env = ", ".join(f"{name} = {_toml_string(value)}" for name, value in entry["env"].items())
    return (f"[mcp_servers.{SERVER_NAME}]\n"
            f"command = {_toml_string(entry['command'])}\n"
            f"args = [{', '.join(_toml_string(a) for a in entry['args'])}]\n"
            f"env = {{ {env} }}\n")


def _table_path(line: str) -> list[str] | None:
    """The key path of a table header line (``[a.b]``, ``[[a.b]]``), or None."""
    found = _HEADER.match(line)
    if found is None:
        return None
    return [part.strip().strip('"').strip("'") for part in found.group("path").split(".")]


def _ours(path: list[str]) -> bool:
    return path[:2] == ["mcp_servers", SERVER_NAME]


def _parse_toml(text: str, what: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidArgument(f"{what} is not valid TOML ({exc}); ctx will not change it") from None


def _without_ours(data: dict[str, Any]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    servers = data.get("mcp_servers")
    if isinstance(servers, dict):
        servers.pop(SERVER_NAME, None)
        if not servers:
            data.pop("mcp_servers")
    return data


def with_toml_server(text: str, entry: dict[str, Any]) -> str:
    """Codex's config.toml with ctx's ``[mcp_servers.ctx]``; every other line kept as it is."""
    before = _parse_toml(text, "the file")
    servers = before.get("mcp_servers")
    if isinstance(servers, dict) and servers.get(SERVER_NAME) == entry:
        return text  # already wired: the file stays byte for byte
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    at: int | None = None  # where ctx's table stood
    inside = False
    pending: list[str] = []  # blank and comment lines at the end of ctx's table: kept
    for line in lines:
        path = _table_path(line)
        if path is not None:
            if inside:
                kept.extend(pending)
                pending = []
            inside = _ours(path)
            if inside and at is None:
                at = len(kept)
            if inside:
                continue
        if inside:
            stripped = line.strip()
            if not stripped or stripped.startswith("#"):
                pending.append(line)
            else:
                pending = []  # a line of ctx's table: replaced
            continue
        kept.append(line)
    if inside:
        kept.extend(pending)
    block = toml_block(entry)
    if at is None:
        if isinstance(servers, dict) and SERVER_NAME in servers:
            raise InvalidArgument("mcp_servers.ctx is set in a form ctx does not edit (dotted keys or an "
                                  "inline table); remove it by hand, then run again")
        body = "".join(kept)
        after = block if not body.strip() else body.rstrip("\n") + "\n\n" + block
    else:
        previous = kept[at - 1].strip() if at else ""
        if previous and not previous.startswith("#"):  # a comment just above is the table's own
            block = "\n" + block
        if at < len(kept) and kept[at].strip():
            block += "\n"
        after = "".join(kept[:at]) + block + "".join(kept[at:])
    # The check: the edit parses, holds exactly ctx's entry, and changed nothing else.
    parsed = _parse_toml(after, "the edited file")
    if parsed.get("mcp_servers", {}).get(SERVER_NAME) != entry or _without_ours(parsed) != _without_ours(before):
        raise InvalidArgument("the file's layout is one ctx cannot edit safely (its ctx table could not be "
                              "replaced alone); edit [mcp_servers.ctx] by hand")
    return after


# --- plan ------------------------------------------------------------------------------

def plan_mcp(target: str, root: Path, *, agent: str | None = None, project: bool = False):
    """What wiring ``target``'s MCP side would change; reads only."""
    from ctx.features.wire import WirePlan, _read
    path = mcp_path(target, project)
    before = _read(path)
    name = (agent or settings.author() or "").strip() or DEFAULT_NAMES[target]
    entry = server_entry(target, root, name)
    if target == "codex":
        after = with_toml_server(before or "", entry)
    else:
        after = with_json_server(before or "", entry)
    notes = [f"the server runs as {name} (CTX_AUTHOR in its env); restart {target} to load it"]
    if target == "codex" and project:
        notes.append("Codex reads ./.codex/config.toml only in a project it trusts")
    if target == "claude-code":
        notes.append("check with `claude mcp list`" + ("; Claude Code asks before it uses a project's .mcp.json"
                                                       if project else ""))
    return WirePlan(target, path, before, after, notes)
