"""Editing the text of a harness's files so that ctx's part is replaced, never doubled,
and everything else is kept:

- Markdown: one block between ``<!-- ctx:begin -->`` and ``<!-- ctx:end -->``;
- JSON settings (Claude Code, Gemini CLI): one SessionStart hook whose command ends with
  the comment ``# ctx:session-start``; one ``mcpServers.ctx`` entry. JSON files are parsed
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


def with_hook(text: str, hook: dict[str, Any], event: str = "SessionStart", mark: str = HOOK_MARK,
              matcher: str | None = None) -> tuple[str, list[str]]:
    """JSON settings with ctx's one ``event`` hook (``hook["command"]`` holds ``mark``); other
    content kept. The shape Claude Code, Gemini CLI and Codex's hooks.json share:
    ``{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type": "command", "command", "timeout"}]}]}}``;
    a new hook goes in a group of its own, with ``matcher`` when given."""
    notes: list[str] = []
    data = json_object(text)
    original = copy.deepcopy(data)
    hooks = data.setdefault("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.setdefault(event, []), list):
        raise InvalidArgument(f"'hooks' or 'hooks.{event}' has an unexpected shape; "
                              "ctx will not change it")
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
                    if matcher is not None and isinstance(group, dict) and len(entries) == 1:
                        group["matcher"] = matcher
                found = True
            elif mark == HOOK_MARK and isinstance(cmd, str) and re.search(r"\bctx start\b|/ctx start\b", cmd):
                notes.append(f"another SessionStart hook already runs ctx start: {cmd!r}")
    if not found:
        groups.append({"matcher": matcher, "hooks": [hook]} if matcher is not None else {"hooks": [hook]})
    if text.strip() and data == original:
        return text, notes  # already wired: the file stays byte for byte
    return _dump(text, data), notes


def with_hooks(text: str, wanted: list[tuple[str, dict[str, Any], str, str | None]]) -> tuple[str, list[str]]:
    """``with_hook`` for each (event, hook, mark, matcher), in order, on the same text."""
    notes: list[str] = []
    for event, hook, mark, matcher in wanted:
        text, said = with_hook(text, hook, event, mark, matcher)
        notes += said
    return text, notes


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
