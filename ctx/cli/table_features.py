"""The command table, continued: the optional features of §10 (export, import,
cleanup, stats, config), session summaries (§7) and wiring a harness (§5.3).
Their handlers are in ``commands/features.py`` and ``commands/summary.py``."""

from __future__ import annotations

import textwrap

from ctx.cli.params import ANY_STORE, FLAG, JSON, Arg, Command, Opt, Stdin
from ctx.harness.memory.sources import SOURCES as MEMORY_SOURCES
from ctx.harness.registry import HARNESSES, NAMES


def _targets() -> str:
    """`ctx wire --help`'s list of targets and files, from each harness's module."""
    def item(name: str, text: str) -> str:
        return textwrap.fill(text, 72, initial_indent=f"  {name:<11}  ", subsequent_indent=" " * 15,
                             break_on_hyphens=False)
    starts = [item(h.name, h.start_help + (f"; --max-chars {h.budget.chars}: {h.budget.why}" if h.budget else ""))
              for h in HARNESSES.values() if h.starts]
    mcp = [item(h.name, h.mcp_help) for h in HARNESSES.values() if h.has_mcp]
    return ("Targets and files (the budget of ctx start in each, and why):\n" + "\n".join(starts) +
            "\nWith --mcp, the harness's MCP server entry \"ctx\" running `ctx mcp`, with\n"
            "CTX_HOME and CTX_AUTHOR in its env (see `ctx mcp --help`):\n" + "\n".join(mcp))


FEATURES: tuple[Command, ...] = (
    Command("export", "features:export", "All stores (or one) as one JSON file.",
            "Write every store, or one, to one JSON file (stdout without -o). Reads only.", """\
Examples:
  ctx export -o ~/ctx-backup.json
  ctx export --store operator > operator.json
File shape: {"format": "ctx-export", "version": "1", "exported": TIME,
  "stores": {store: {"type", "version", "last_updated", "entries": {...},
  other top-level keys}}}.
""", options=(ANY_STORE, Opt("output", "-o", "--output", metavar="FILE",
                             help="Write FILE (mode 0600) instead of stdout.")),
            reads=True),
    Command("import", "features:import_", "Merge an export file, or a harness's memory, in.", """\
Merge FILE (from `ctx export`; - for stdin) into the context, entry by
entry, as one commit. Refuses a file of an unknown format or version.
With --from HARNESS, import what that harness's own memory holds instead
(at PATH, else in its place for the current project), as one commit.""", """\
Examples:
  ctx import ~/ctx-backup.json --dry-run
  ctx import laptop.json --store shared --json
  ctx import --from claude-code
  ctx import --from codex --dry-run
  ctx import --from cursor ../other-project --json

Rules (those of sync, for a file with no common ancestor): a key only here
is kept (import never deletes); a key only in the file is added; a key
equal on both sides is kept; a key on both sides with different content
is merged field by field: a field on one side only is taken, a field both
sides hold differently comes from the entry with the later timestamp,
the file's on a tie (listed as a conflict when it is the value); created
is the earliest, timestamp the latest; a status set on either side is kept.

With --from (docs/harness-memory.md has each format's mapping):
  claude-code  <CLAUDE_CONFIG_DIR or ~/.claude>/projects/KEY/memory/*.md
  codex        $CODEX_HOME/memories (default ~/.codex/memories):
               memory_summary.md and MEMORY.md blocks of this project
  gemini       '## Gemini Added Memories' of ~/.gemini/GEMINI.md and
               ./GEMINI.md; ~/.gemini/tmp/SLUG/memory/*.md
  cursor       .cursor/rules/**/*.mdc of the project
Each memory is one entry keyed HARNESS:PROJECT:NAME (HARNESS:user:NAME
for what serves every project), author "HARNESS memory", basis reported,
tagged imported and HARNESS; its derivation names the file and a digest
of the memory. A memory the format says is the user's (a Claude user or
feedback memory, Codex's user profile and preferences) goes to the
operator store with source operator, tagged preference (the brief shows
it typed by the harness); any other to shared, source agent.
Again with the same files: nothing added; a changed memory updates its
entry; an entry whose memory is gone is kept and listed as gone; a memory
that looks like a credential is not imported, and is listed (exit 0).
A missing source, or one holding no memory: one line, exit 1.
JSON shape: {"dry_run", "added", "changed", "kept", "conflicts"}, each a
  list of {"store", "key"}; with --from also "from", "gone" (the same
  rows) and "skipped" (a list of {"key", "file", "why"}).
""", args=(Arg("file", required=False, metavar="FILE|PATH",
               help="The export file, or - for stdin; with --from, the harness's memory folder or file."),),
            options=(Opt("harness", "--from", choices=MEMORY_SOURCES, metavar="HARNESS",
                         help="Import this harness's own memory instead of an export file."),
                     Opt("store", "--store", "-s", choices=ANY_STORE.choices, help="Only this store of the file."),
                     Opt("dry_run", "--dry-run", kind=FLAG, help="Report what would change; write nothing."),
                     Opt("force", "--force", kind=FLAG, help="Import even values that look like credentials (§11; "
                         "export files only)."),
                     JSON), idempotent=True),
    Command("cleanup", "features:cleanup", "Delete expired session-scoped entries (§3.7).",
            "Delete session-scoped entries older than AGE, in one commit.", """\
Examples:
  ctx cleanup --dry-run
  ctx cleanup --older-than 7d --json
An entry expires when its scope is session and its timestamp is older
than the threshold; one whose timestamp cannot be read is skipped.
JSON shape: {"dry_run", "cutoff", "deleted": [{"store", "key",
  "timestamp"}], "skipped": [{"store", "key"}]}.
""", options=(Opt("older_than", "--older-than", default="24h", metavar="AGE",
                  help="Minutes, hours or days: 30m, 24h, 7d."),
              Opt("dry_run", "--dry-run", kind=FLAG, help="List what would go; write nothing."), JSON),
            idempotent=True, destructive=True),
    Command("stats", "features:stats", "Counts by store, source, basis, scope, status, tag.", """\
Count the entries by store, source, basis, scope, status and tag, and the
repository's commits and authors. Reads only.""", """\
Examples:
  ctx stats
  ctx stats --store shared --json
JSON shape: {"entries", "stores": {store: n}, "source": {..}, "basis":
  {..}, "scope": {..}, "status": {"current", "amended", ...}, "tags":
  {tag: n}, "repository": null | {"commits", "authors": {name: n},
  "first", "last"}}. The repository part is the whole repository's.
""", options=(ANY_STORE, JSON), reads=True),
    Command("config", "features:config", "Get or set the context's configuration.",
            "Print every key, print KEY's value, or set KEY to VALUE.", """\
Examples:
  ctx config                        # every key and its value
  ctx config enforce-stores true
  ctx config start-max-chars 9000
  ctx config sync-auto true
Keys of the context (kept in <root>/config.json; a change is one commit):
  enforce-stores   true|false, default false: an agent (CTX_AUTHOR set)
                   may write the operator store only with --source operator
  recall-on-failure  true|false, default true: a harness's failing-command
                   hook gives back the entries that answer the failure
  shown-log        true|false, default true: note each start payload and
                   recall that reaches a model (ctx log --shown)
  handover-on-stop true|false, default true: the Stop hook of `ctx wire`
                   asks a session that wrote to the context once for its
                   summary (ctx event stop)
  keep-compaction  true|false, default true: the compaction hook keeps a
                   harness's compaction summary as an agent entry
Keys of this machine (kept in .git/ctx/machine.json; never synced):
  start-max-chars  characters, default 0 (none): the budget of ctx start
                   when no option or context window sets one
  sync-auto        true|false, default false: push in the background after
                   each write; pull before ctx start and ctx brief
  sync-timeout     seconds, default 3: how long start and brief wait for
                   that pull before showing the local context
  require-signed   true|false, default false: sync and pull refuse a
                   remote commit that is unsigned or not signed by an
                   allowed signer (exit 4); doctor lists such commits
JSON shape: {key: value}.
""", args=(Arg("key", required=False, help="The key."), Arg("value", required=False, help="Its new value.")),
            options=(JSON,), idempotent=True),
    Command("summary", None, "Session summaries (§7): new, list, show.",
            "Write, list and read the session summaries in sessions/ (§7).", """\
Examples:
  ctx summary new --from-stdin < summary.md
  ctx summary list
  ctx summary show
""", group=True),
    Command("summary new", "summary:new", "Write this session's summary.", """\
Write the next summary of today's local date (YYYY-MM-DD[suffix]_session.md)
from the §7 template, and commit it.""", """\
Example:
  printf '## Done\\n- Fixed the upload (result_upload_fix)\\n\\n## Open\\n- None\\n' |
    CTX_AUTHOR="Agent One" ctx summary new --from-stdin --focus "Upload fix"
Text without its own '# ' title goes under the header '# Session DATE'
and '**Agent:** NAME · **Focus:** LINE'. Refused (exit 2) without an
'## Open' section or with an open item's first line over 150 characters;
refused (exit 4) when it looks like it holds a credential.
JSON shape: {"name", "path"}.
""", options=(Opt("agent", "--agent", metavar="NAME", help="The agent's name (default: CTX_AUTHOR)."),
              Opt("focus", "--focus", metavar="TEXT", help="One line (default: current_focus's first line)."),
              Opt("from_stdin", "--from-stdin", kind=FLAG, help="Read the summary from stdin (else $EDITOR)."),
              Opt("force", "--force", kind=FLAG, help="Pass the credential check (a context under git "
                  "still refuses to commit a credential in a summary)."), JSON),
            tool=True, stdin=Stdin("from_stdin", "text", "The summary, in Markdown (what `ctx summary new "
                                   "--from-stdin` reads): '## Done', '## Decisions', '## Open' (required), "
                                   "'## Commits'.")),
    Command("summary list", "summary:list_", "Every summary, oldest first.",
            "Every summary in sessions/, oldest first, with its agent and open items.", """\
Example:
  ctx summary list --json
JSON shape: a list of {"name", "path", "date", "agent", "open"} (open:
  how many open items), oldest first; the last is the newest.
""", options=(JSON,), reads=True),
    Command("summary show", "summary:show", "Print a summary (the newest by default).",
            "Print the summary NAME (with or without _session.md), or the newest.", """\
Examples:
  ctx summary show
  ctx summary show 2026-10-13b
Exits 1 when there is no such summary.
""", args=(Arg("name", required=False, help="The summary (default: the newest)."),), reads=True),
    Command("wire", "features:wire", "Wire a harness to start from ctx (§5.3).",
            "Show, or with --apply make, the change that wires TARGET to ctx.", """\
Examples:
  ctx wire claude-code              # show the change (a unified diff)
  ctx wire claude-code --apply      # make it; backup in FILE.ctx-backup
  ctx wire agents-md --agent "Agent One" --apply
  ctx wire gemini --mcp --trust --apply

""" + _targets() + """
Everything else in a file is kept; applying twice changes nothing; an
older ctx hook or pointer is updated in place.
JSON shape: {"target", "changed", "applied", "notes", "files": [{"path",
  "exists", "changed", "applied", "backup", "diff"}]}.
""", args=(Arg("target", choices=NAMES, help="The harness to wire."),),
            options=(Opt("do_apply", "--apply", kind=FLAG, help="Make the change (default: only show it)."),
                     Opt("project", "--project", kind=FLAG, help="This project's files, not the user's "
                         "(./.claude, ./.gemini, ./GEMINI.md; with --mcp: ./.mcp.json, ./.codex, ./.gemini, "
                         "./.cursor)."),
                     Opt("agent", "--agent", metavar="NAME",
                         help="The agent's name in the pointer (default: CTX_AUTHOR)."),
                     Opt("only_under", "--only-under", metavar="DIR",
                         help="claude-code, gemini: run the hook only in sessions under DIR."),
                     Opt("mcp", "--mcp", kind=FLAG, help="Wire the harness's MCP server entry (ctx mcp) instead."),
                     Opt("trust", "--trust", kind=FLAG, help="gemini --mcp: add \"trust\": true (Gemini CLI "
                         "then runs ctx's tools without asking you to confirm each call)."),
                     JSON), idempotent=True, auto_sync=False),
)
