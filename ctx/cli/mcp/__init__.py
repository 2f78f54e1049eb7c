"""The MCP door: ``ctx mcp`` serves the command table to MCP clients over stdio.

``tools.py`` builds each tool (name, JSON schema, annotations) from a row of
the command table and turns a call's arguments into the values the command's
handler takes, as the CLI's parsers do; it imports nothing of the MCP SDK, so
it can be tested (and the table checked) without it. ``server.py`` is the
server itself, on the official SDK (the ``mcp`` extra), imported only by
``ctx mcp``. Every call runs through ``run.invoke``, as both CLI doors do.
"""
