"""The command table: every ``ctx`` command, declared once (§9.1), in the order
``ctx --help`` lists them. Its rows are kept by area (``table_entries.py``,
``table_letters.py``, ``table_git.py``, ``table_features.py``); this module holds the
whole list and the one command that serves the others, ``ctx mcp``: the MCP server
reads ``table_entries.served()``, so the server never imports the row that starts it
(tests/test_layers.py, test_no_import_cycles).
"""

from __future__ import annotations

import textwrap

from ctx.cli.params import Command, Opt
from ctx.cli.table_entries import find as find_among
from ctx.cli.table_entries import served
from ctx.harness.registry import HARNESSES


def _entries() -> str:
    """`ctx mcp --help`'s entry of each harness, as `ctx wire TARGET --mcp` writes it into a new file."""
    import json
    from pathlib import Path

    from ctx.harness.base import Wiring
    shown = []
    for h in HARNESSES.values():
        if h.has_mcp:
            text = h.mcp_text(None, Wiring(Path("/home/me/ctx"), h.agent, "/usr/local/bin/ctx"))
            if text.startswith("{"):  # JSON: on as few lines as it takes
                text = textwrap.fill(json.dumps(json.loads(text), ensure_ascii=False), 72, subsequent_indent="  ",
                                     break_on_hyphens=False, break_long_words=False)
            env = textwrap.fill(f"Its environment: {h.server_env}.", 72, initial_indent="    ",
                                subsequent_indent="    ", break_on_hyphens=False)
            where = textwrap.fill(f"{h.mcp_help}:", 72, initial_indent=f"  {h.name}  ", subsequent_indent="    ",
                                  break_on_hyphens=False)
            shown.append(where + "\n" + textwrap.indent(text.rstrip(), "    ")
                         + "\n" + env)
    return "\n".join(shown)


MCP = Command("mcp", "mcp:serve", "Serve ctx to MCP clients over stdio.", """\
Serve the context to an MCP client (Claude Code, Codex, Gemini CLI, Cursor...)
over stdin and stdout, until the client closes it. A harness starts it.

Each tool is the ctx command of the same name (start, brief, get, set,
amend, supersede, resolve, basis, delete, search, list, history, log, diff,
summary_new, send, inbox, handoff, remind, review; sync where a remote is set), its options as arguments; a
result holds the command's text and its --json object. Resources:
ctx://rules, ctx://brief, ctx://summary/latest. Writes are commits, signed
--author or $CTX_AUTHOR. Needs the mcp extra: pip install 'ctx-memory[mcp]'.""", """\
Examples:
  ctx wire claude-code --mcp --apply    # or codex, gemini, cursor
  CTX_HOME=~/ctx ctx mcp --author "Agent One"

How each harness runs it: `ctx wire TARGET --mcp` writes this entry, with
this installation's ctx, $CTX_HOME and the agent's name:
""" + _entries() + """
""", options=(Opt("author", "--author", metavar="NAME",
                   help="Sign writes with NAME (default: $CTX_AUTHOR, else the operator)."),), auto_sync=False)


def commands() -> tuple[Command, ...]:
    """Every command, in the order ``ctx --help`` lists them."""
    return (*served(), MCP)


def find(name: str) -> Command:
    return find_among(name, commands())
