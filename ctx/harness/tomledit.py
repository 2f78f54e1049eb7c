"""Codex's ``config.toml``: ctx's ``[mcp_servers.ctx]`` table, edited as text.

Never round-tripped through a TOML library (that would drop the file's comments): ctx's
table (and any ``[mcp_servers.ctx.*]`` sub-table) is replaced where it stands, or
appended; ``tomllib`` then checks that the result parses, holds exactly ctx's entry, and
that everything else reads as before. A file already holding ctx's entry stays byte for
byte.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from typing import Any

from ctx.errors import InvalidArgument
from ctx.harness.edit import SERVER_NAME

_HEADER = re.compile(r"^\s*\[\[?\s*(?P<path>[^\[\]#]+?)\s*\]\]?\s*(#.*)?$")



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
