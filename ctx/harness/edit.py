"""Editing the text of a harness's files so that ctx's part is replaced, never doubled,
and everything else is kept:

- Markdown: one block between ``<!-- ctx:begin -->`` and ``<!-- ctx:end -->``;
- JSON settings (Claude Code, Codex CLI's hooks.json, Gemini CLI): one hook of each event
  ctx wires, found by the comment its command ends with (``# ctx:session-start``,
  ``# ctx:stop``...: ``texts.py``); one ``mcpServers.ctx`` entry. JSON files are parsed
  and written back with their own indentation, and an entry already as ctx would write it
  leaves the file byte for byte.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

from ctx.errors import InvalidArgument

BEGIN, END = "<!-- ctx:begin -->", "<!-- ctx:end -->"
HOOK_MARK = "# ctx:session-start"
FAILURE_MARK = "# ctx:failure"  # the failing-command hook's (ctx event failure)
SERVER_NAME = "ctx"


def read(path: Path) -> str | None:
    """A harness file's text, or None when it does not exist; refused when not text."""
    if path.is_dir():
        raise InvalidArgument(f"{path} is a directory; ctx will not change it")
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise InvalidArgument(f"{path} is not UTF-8 text; ctx will not change it") from None


def with_block(text: str, block: str) -> str:
    """``text`` with ctx's Markdown block replaced, or appended when absent."""
    starts, ends = text.count(BEGIN), text.count(END)
    if starts == 0 and ends == 0:
        if not text:
            return block
        return text.rstrip("\n") + "\n\n" + block
    if starts != 1 or ends != 1 or text.index(BEGIN) > text.index(END):
        raise InvalidArgument(f"the file holds a broken or repeated {BEGIN} … {END} block; "
                              "fix it by hand, ctx will not guess")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + block.rstrip("\n") + tail if tail.startswith("\n") else head + block + tail


def _indent_of(text: str) -> int:
    match = re.search(r"^( +)\S", text, re.M)
    return len(match.group(1)) if match else 2


def json_object(text: str) -> dict[str, Any]:
    """A harness's JSON settings file as an object ({} when empty); anything else is refused."""
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidArgument(f"not valid JSON ({exc}); ctx will not change it") from None
    if not isinstance(data, dict):
        raise InvalidArgument("the settings file is not a JSON object; ctx will not change it")
    return data


def _dump(text: str, data: dict[str, Any]) -> str:
    return json.dumps(data, indent=_indent_of(text), ensure_ascii=False) + "\n"


def with_hooks(text: str, wanted: list[tuple[str, dict[str, Any], str]]) -> tuple[str, list[str]]:
    """JSON settings with ctx's hooks: for each (event, hook, mark), the one hook of that event
    whose command holds ``mark`` replaced by ``hook``, or added in a group of its own (a
    ``"matcher"`` in ``hook`` goes on that group); other content kept. The shape Claude Code,
    Codex CLI and Gemini CLI share: ``{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type":
    "command", "command", "timeout"}]}]}}``."""
    notes: list[str] = []
    data = json_object(text)
    original = copy.deepcopy(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidArgument("'hooks' has an unexpected shape; ctx will not change it")
    for event, hook, mark in wanted:
        _with_one(hooks, event, dict(hook), mark, notes)
    if text.strip() and data == original:
        return text, notes  # already wired: the file stays byte for byte
    return _dump(text, data), notes


def _with_one(hooks: dict[str, Any], event: str, hook: dict[str, Any], mark: str, notes: list[str]) -> None:
    if not isinstance(hooks.setdefault(event, []), list):
        raise InvalidArgument(f"'hooks.{event}' has an unexpected shape; ctx will not change it")
    matcher = hook.pop("matcher", None)
    groups = hooks[event]
    found = False
    for group in groups:
        entries = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(entries, list):
            continue
        for i, entry in enumerate(entries):
            cmd = entry.get("command", "") if isinstance(entry, dict) else ""
            if isinstance(cmd, str) and mark in cmd:
                if not found:
                    entries[i] = hook
                    if matcher is not None and len(entries) == 1:  # never on a group others share
                        group["matcher"] = matcher
                found = True
            elif event == "SessionStart" and isinstance(cmd, str) and re.search(r"\bctx start\b|/ctx start\b", cmd):
                notes.append(f"another SessionStart hook already runs ctx start: {cmd!r}")
    if not found:
        groups.append({"matcher": matcher, "hooks": [hook]} if matcher is not None else {"hooks": [hook]})


def with_json_server(text: str, entry: dict[str, Any]) -> str:
    """A JSON settings file with ctx's ``mcpServers`` entry; everything else kept."""
    data = json_object(text)
    original = copy.deepcopy(data)
    servers = data.setdefault("mcpServers", {})
    if not isinstance(servers, dict):
        raise InvalidArgument("'mcpServers' is not a JSON object; ctx will not change it")
    servers[SERVER_NAME] = entry
    if text.strip() and data == original:
        return text  # already wired: the file stays byte for byte
    return _dump(text, data)
