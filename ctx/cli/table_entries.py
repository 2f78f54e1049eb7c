"""The command table's everyday commands (§4, §5), and the part of the table a door
may read without the rest: the fast door's commands, and ``served()``, every command
but ``ctx mcp`` (what the MCP server offers: it never reaches the row that starts it).

Each ``Command`` (``params.py``) names its arguments and options (type, choices, default,
help), whether it only reads, and the function that does its work (``handler``:
``"module:function"`` in ``ctx/cli/commands/``). Everything else is derived from the
table (``table.py`` holds the whole of it): the fast parser (``fast.py``), the click
commands and their ``--help`` (``app.py``), the reference in docs/reference.md
(``docs.py``), and the MCP tools' schemas. A test checks the doors agree.

Plain classes and constants only: the fast door imports this on every run.
"""

from __future__ import annotations

from ctx.cli.params import (
    BRIEF,
    FILTERS,
    FLAG,
    FORCE,
    HOOK_HARNESSES,
    INT,
    JSON,
    KEY,
    MULTI,
    ORDER_HELP,
    SEARCH_LIMIT,
    STORE,
    VERBOSE,
    WORDS,
    Arg,
    Command,
    Opt,
)
from ctx.model import BASES, SCOPES, SOURCES

# --- the everyday commands (the fast door takes these) --------------------------------

ENTRIES: tuple[Command, ...] = (
    Command("init", "setup:init", "Create the context root; never overwrites.", """\
Create the context root: memory/, sessions/ (0700) and RULES.md (0600).

Never overwrites anything: on an existing root it creates only what is
missing and says so. On a terminal, without --yes or --focus, it asks
§13.3's questions one at a time, each with its default: where the root
goes, the agent's name, which harnesses to wire, the current focus and
standing instructions.""", """\
Example:
  CTX_HOME=~/ctx ctx init --focus "Ship the upload fix, then the progress bar"
""", options=(Opt("focus", "--focus", metavar="TEXT", help="Write current_focus (source operator, basis reported)."),
              Opt("yes", "--yes", "-y", kind=FLAG,
                  help="Ask nothing; take every default (the default off a terminal)."),
              JSON), idempotent=True),
    Command("start", "entries:start", "Rules, brief and newest summary (§5.1).", """\
Print the start payload: RULES.md, the brief, the newest summary (§5.1).

Writes nothing (with auto-sync on it pulls first, within sync-timeout),
and exits 0 even on an empty or missing context (it says so), or an
unreachable remote, so a harness hook never fails a session. With a budget the output is
at most that many characters: whole items in order of importance (RULES.md,
the brief's header, focus, instructions, letters for you, what is due,
since your last session, open items, decisions, recent changes, then the
summary, its Open section first),
and one line saying what was left out and which command shows it.""", """\
Examples (a harness's session-start hook):
  CTX_HOME=~/ctx CTX_AUTHOR="Agent One" timeout 10 ctx start || true
  ctx start --max-chars 9000        # Claude Code inlines up to 10,000
Budget, the first that is set: --max-chars (or --max-tokens, 4 characters
each; 0: none); 5% of $CTX_CONTEXT_WINDOW_CHARS (or of 4 x
$CTX_CONTEXT_WINDOW_TOKENS); `ctx config start-max-chars N` (this
machine). None: the whole payload.
Run by a harness's hook (--harness, as `ctx wire` writes it), the payload is
noted in the local shown log (`ctx log --shown`; off with `ctx config
shown-log false`); otherwise start writes nothing at all.
""", options=BRIEF + (
                Opt("max_chars", "--max-chars", kind=INT, minimum=0, metavar="N",
                    help="At most N characters (0: no budget)."),
                Opt("max_tokens", "--max-tokens", kind=INT, minimum=0, metavar="N",
                    help="At most N tokens of 4 characters (0: no budget)."),
                Opt("output_format", "--format", choices=("text", "hook"), default="text", cli_only=True,
                    help="hook: the payload as a session-start hook's JSON, {\"hookSpecificOutput\": "
                         "{\"hookEventName\": \"SessionStart\", \"additionalContext\": PAYLOAD}} (what "
                         "Gemini CLI hands the model; Claude Code reads it too)."),
                Opt("harness", "--harness", choices=HOOK_HARNESSES, metavar="NAME", cli_only=True,
                    help="Run by NAME's SessionStart hook (claude-code, codex, gemini; `ctx wire`): read the "
                         "hook's JSON on stdin once, for its session id: the shown log's record "
                         "(`ctx log --shown`) and the session's start, noted on this machine "
                         "(.git/ctx/sessions.json, never committed) for `ctx event stop`.")),
            reads=True, fast=True, tool=True),
    Command("brief", "entries:brief", "The one-screen brief (§5.2).",
            "Print the one-screen brief (§5.2): focus, instructions, open, decisions, changes.", """\
Example:
  ctx brief --days 14 --changes 5
JSON shape (--json): {"generated", "commit", "counts": {store: n},
  "focus": item|null, "instructions": [item], "instructions_more": n, "for_you": {"reader",
  "items": [{"key", "from", "shape", "timestamp", "text", "new"}], "more"},
  "due": {"items": [{"key", "store", "due", "when", "text", "status",
  "must_not_forget", "stale"}], "more"}, "since": null | {"author",
  "last", "first_session", "changes": [{"store", "key", "author",
  "timestamp", "kind"}], "more"}, "open": {"from", "items", "more"},
  "decisions": {"days", "items": [item]}, "changes": [item], "sync": str|null,
  "warnings": [str]}
  where item = {"text", "key"?, "store"?, "status"?, "timestamp"?, "typed_by"?}
  ("typed_by": the agent that typed a standing instruction, its author)
With a remote, "sync" names the sync state (`ctx status` has the details);
with auto-sync on (`ctx config sync-auto true`) brief pulls first.
With CTX_AUTHOR set, SINCE YOUR LAST SESSION lists what others changed
since that author's last commit (kind: new, changed, amended, superseded,
resolved, deleted). FOR YOU lists the reader's open letters (CTX_AUTHOR,
else operator: ctx inbox); DUE what is overdue or due within 7 days.
""", options=BRIEF + (JSON,), reads=True, fast=True, tool=True),
    Command("get", "entries:get", "One entry, with its status (§4.1).",
            "Print one entry with its status (§4.1). Exits 1 when the key is missing.", """\
Examples:
  ctx get current_focus
  ctx get operator_preference_one_question --store operator -v
  ctx get k --all --json
  ctx get decision_db_pool --at 2026-11-01      # as it was then
JSON shape: {"store", "key", "entry"}; with --all, a list of them.
""", args=(KEY,), options=(STORE, Opt("all_stores", "--all", kind=FLAG, help="The key from every store that has it."),
                          Opt("at", "--at", metavar="REV|DATE", help="The entry as it was at a commit or date."),
                          VERBOSE, JSON), reads=True, fast=True, tool=True),
    Command("set", "entries:set_", "Write an entry (§4.2).",
            "Write an entry (§4.2): KEY, then the value's words, joined by spaces.", """\
Examples:
  ctx set decision_db_pool "Use a pool of 20" --tag decision --basis verified
  ctx set --store operator pref_one_question Ask one question at a time \\
      --source operator --basis reported --tag preference
  ctx set k -- --literal-words      # -- ends the options
Values: objects, arrays, true, false, null and integers up to 2^53-1 are
stored as JSON; anything else (1.5, 007, NaN) as the text it was.
--due, --valid-from and --valid-to write the fields due (and due_set),
valid_from and valid_to; an update without them keeps the old ones.
""", args=(KEY, Arg("value", WORDS, help="The value (its words are joined by spaces).")),
            options=(STORE,
                     Opt("source", "--source", choices=SOURCES,
                         help="Whose knowledge (default: agent with CTX_AUTHOR, else operator)."),
                     Opt("basis", "--basis", choices=BASES,
                         help="How you know (new entries: inferred; updates keep it)."),
                     Opt("scope", "--scope", choices=SCOPES, help="global (default) or session."),
                     Opt("tags", "--tag", kind=MULTI, help="A tag; repeat for more. Replaces the old tags."),
                     Opt("derivation", "--derivation", help="How the value was reached."),
                     Opt("due", "--due", metavar="DATE",
                         help="Due date (YYYY-MM-DD, today, tomorrow, +N days): see ctx remind."),
                     Opt("valid_from", "--valid-from", metavar="TIME",
                         help="When it became true in the world (YYYY-MM-DD or RFC 3339)."),
                     Opt("valid_to", "--valid-to", metavar="TIME",
                         help="When it stops (or stopped) being true (YYYY-MM-DD or RFC 3339)."),
                     FORCE, JSON), fast=True, words_rule=True, idempotent=True, tool=True),
    Command("amend", "entries:amend", "Mark an entry amended, with a note (§3.6).",
            "Mark an entry amended: prepend [Amended DATE: NOTE] to its value (§3.6).", """\
Example:
  ctx amend result_port The port is 8443, not 8080
""", args=(KEY, Arg("note", WORDS, help="The note (its words are joined by spaces).")),
            options=(STORE, FORCE, JSON), fast=True, words_rule=True, tool=True),
    Command("supersede", "entries:supersede", "Mark an entry superseded by another (§3.6).",
            "Mark an entry superseded by another; its value stays (§3.6).", """\
Example:
  ctx supersede decision_pool_10 --by decision_pool_20 --note "load test"
""", args=(KEY,), options=(Opt("by", "--by", required=True, metavar="KEY",
                                   help="The key that replaces this one (same store)."),
                               Opt("note", "--note", help="Why."), STORE, FORCE, JSON),
            fast=True, idempotent=True, tool=True),
    Command("resolve", "entries:resolve", "Mark an entry resolved (§3.6).",
            "Mark an issue or open item resolved; its value stays (§3.6).", """\
Example:
  ctx resolve issue_upload_fails --note "Fixed: proxy timeout raised"
""", args=(KEY,), options=(Opt("note", "--note", help="How it was resolved."), STORE, FORCE, JSON),
            fast=True, idempotent=True, tool=True),
    Command("basis", "entries:basis", "Set an entry's basis (§4.4).",
            "Set an entry's basis without touching its timestamp (§4.4).", """\
Example:
  ctx basis result_tests_pass verified
""", args=(KEY, Arg("basis", choices=BASES, help="How the entry is known.")), options=(STORE, JSON),
            fast=True, idempotent=True, tool=True),
    Command("delete", "entries:delete", "Remove an entry for good (§4.5).",
            "Remove an entry for good: a wrong key, a duplicate, a secret (§4.5).", """\
Example:
  ctx delete duplicate_key --store agent
Knowledge that turned out wrong is marked (amend, supersede), not deleted.
""", args=(KEY,), options=(STORE, JSON), fast=True, destructive=True, tool=True),
    Command("search", "entries:search", "Entries whose key or value has a pattern (§4.6).", """\
Entries whose key or value contains PATTERN, case-insensitively (§4.6).

A plain substring, not a regular expression; quote a pattern of several
words. Non-string values are matched on their compact JSON text. An
empty pattern matches every entry.""", f"""\
Examples:
  ctx search timeout
  ctx search "proxy timeout" --tag uploads --since 2026-10-01 --limit 5
  ctx search --full-text "upload proxy retry"
  ctx search --semantic "why do big file transfers break"
{ORDER_HELP}
With --full-text, every word must occur (as a word, in the key or value) and
results come by how often they occur, then in that order.
With --semantic, entries come by meaning and by words together: any word of
the pattern (stemmed) counts, and so does an entry saying the same in other
words (needs `pip install 'ctx-memory[semantic]'`; without it, by words only).
JSON shape: a list of {{"store", "key", "entry"}} (with --full-text or
--semantic also "score", higher is better).
""", args=(Arg("pattern", required=False, default="", help="The text to look for."),),
            options=FILTERS + (
                Opt("full_text", "--full-text", kind=FLAG,
                    help="Match words, ranked by how often they occur (index: SQLite FTS5)."),
                Opt("semantic", "--semantic", kind=FLAG,
                    help="Rank by meaning and by any of the words (a local model; see above)."),
                Opt("limit", "--limit", kind=INT, minimum=0, default=SEARCH_LIMIT, help="At most this many."),
                Opt("verbose", "-v", "--verbose", kind=FLAG, help="Show every field of each entry."), JSON),
            reads=True, fast=True, words_rule=True, tool=True),
    Command("list", "entries:list_", "Entries that pass the filters (§4.6).",
            "Entries that pass the filters (§4.6).", f"""\
Examples:
  ctx list --store operator
  ctx list --tag decision --status current --keys-only
{ORDER_HELP}
JSON shape: a list of {{"store", "key", "entry"}}; with --keys-only, of {{"store", "key"}}.
""", options=FILTERS + (
                Opt("keys_only", "--keys-only", kind=FLAG, help="Print store/key only."),
                Opt("limit", "--limit", kind=INT, minimum=0, help="At most this many (default: all)."),
                Opt("verbose", "-v", "--verbose", kind=FLAG, help="Show every field of each entry."), JSON),
            reads=True, fast=True, words_rule=True, tool=True),
    Command("reindex", "entries:reindex", "Rebuild the search index.", """\
Drop and rebuild the index reads use (.git/ctx/, never committed).

Never needed for correctness: the index notices any change to a store
file by itself. Use it after moving a context, or to reclaim space.
With --semantic, also read every entry for meaning now (the vectors
`ctx search --semantic` ranks by), rather than at the first such search:
minutes for a big context, on a progress line; Ctrl-C keeps what is made.""", """\
Examples:
  ctx reindex
  ctx reindex --semantic
JSON shape: {"reindexed": {store: n}}; with --semantic also "vectors": the
number of entries read for meaning (0 without the semantic extra).
""", options=(Opt("semantic", "--semantic", kind=FLAG,
                  help="Also build the vectors of search --semantic (needs the semantic extra)."), JSON),
            idempotent=True, slow=True),
)


def served() -> tuple[Command, ...]:
    """Every command but ``ctx mcp``, in the order ``ctx --help`` lists them: what an MCP
    server may offer (``table.commands()`` is these and ``ctx mcp``)."""
    from ctx.cli.table_events import EVENTS
    from ctx.cli.table_features import FEATURES
    from ctx.cli.table_git import GIT
    from ctx.cli.table_letters import LETTERS
    return ENTRIES + LETTERS + GIT + FEATURES + EVENTS


def fast_commands() -> dict[str, Command]:
    """The commands the fast door takes, by name (the entries' and the letters' parts of
    the table, no handler)."""
    from ctx.cli.table_letters import LETTERS
    return {c.name: c for c in ENTRIES + LETTERS if c.fast}


def fast_command(name: str) -> Command | None:
    """The command ``name`` when the fast door takes it. An entries command is found
    without loading the letters' rows (a ``ctx get`` pays for no other table)."""
    for command in ENTRIES:
        if command.name == name:
            return command if command.fast else None
    if name.startswith("event "):  # a harness's hook (``table_events.py``): no other table loaded
        from ctx.cli.table_events import EVENTS
        return next((c for c in EVENTS if c.name == name and c.fast), None)
    return fast_commands().get(name)


def find(name: str, rows: tuple[Command, ...] | None = None) -> Command:
    """The command ``name`` among ``rows`` (None: those ``served()``)."""
    for command in served() if rows is None else rows:
        if command.name == name:
            return command
    raise KeyError(name)
