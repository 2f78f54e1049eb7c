"""The ``ctx`` command line (§9.1). The only module that imports click.

Library errors (``ctx.errors``) become a one-line ``ctx: …`` message on
stderr and an exit status from ``ExitStatus``, in ``CtxGroup.invoke``.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ctx import SPEC_VERSION, __version__
from ctx.cli import entries as commands
from ctx.cli.words import OptionBetweenWords, split
from ctx.errors import CtxError
from ctx.cli.exits import ExitStatus, exit_status_for, internal_error_line, os_error_line  # noqa: F401
from ctx.model import BASES, SCOPES, SOURCES, STATUSES, STORES


class CtxGroup(click.Group):
    """Turns library errors into one line and an exit status, in one place."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except CtxError as error:
            click.echo(f"ctx: {error}", err=True)
            ctx.exit(exit_status_for(error))
        except OSError as error:
            click.echo(os_error_line(error), err=True)
            ctx.exit(ExitStatus.FAILED)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as error:  # a bug: one line, a distinct status; CTX_DEBUG=1 for the trace
            import os
            if os.environ.get("CTX_DEBUG"):
                raise
            click.echo(internal_error_line(error), err=True)
            ctx.exit(ExitStatus.FAILED)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)  # in the order they were defined, not sorted


class WordsCommand(click.Command):
    """Options before or after a command's words, never between them (§9.1).

    ``--`` ends the options; a word like ``-5`` is a word, not an option.
    The arguments are normalised to ``OPTIONS -- WORDS`` (``argv.split``)
    before click sees them, so click never mistakes a value for an option.
    """

    def takes_value(self, ctx: click.Context) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for param in self.get_params(ctx):
            if isinstance(param, click.Option):
                for name in param.opts + param.secondary_opts:
                    out[name] = not (param.is_flag or param.count)
        return out

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            options, words = split(args, self.takes_value(ctx))
        except OptionBetweenWords as exc:
            raise click.UsageError(exc.message, ctx) from None
        return super().parse_args(ctx, options + ["--"] + words)


ROOT_HELP = f"""ctx: one shared memory for an operator and their AI agents.

\b
Conforms to ctx specification {SPEC_VERSION} (core level).
Context root: $CTX_HOME, default ~/ctx.
Author of writes: $CTX_AUTHOR (a blank value counts as unset); with it
set, a new entry's source defaults to agent, otherwise to operator.

\b
Start here:
  ctx init --focus "What the work is about now"
  ctx set decision_db_pool "Use a pool of 20" --tag decision --basis verified
  ctx start                 # rules, brief and newest session summary

\b
Exit status: 0 ok, 1 key not found, 2 invalid argument, 3 store file or
root unusable (never overwritten), 4 refused (a credential, a conflict),
5 busy (lock held too long), 6 other failed write.
"""


@click.group(cls=CtxGroup, help=ROOT_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "-V", "--version",
                      message=f"ctx %(version)s (ctx specification {SPEC_VERSION})")
def cli() -> None:
    pass


def _context(**options):
    from ctx.context import Context
    from ctxgit.recorder import recorder_for
    context = Context(recorder_factory=recorder_for, **options)
    click.get_current_context().meta["ctx.context"] = context
    return context


def _emit_json(payload: Any) -> None:
    commands.emit_json(click.echo, payload)


def _warn(context) -> None:
    """What the last writes had to say besides their result, each thing once (a sync
    fetches twice), on stderr."""
    for warning in dict.fromkeys(context.warnings):
        click.echo(f"ctx: {warning}", err=True)


def _err(text: str) -> None:
    click.echo(text, err=True)


store_option = click.option("--store", "-s", default="shared", show_default=True,
                            type=click.Choice(STORES), help="The store to use.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON (shape above).")
force_option = click.option("--force", is_flag=True,
                            help="Store it even if it looks like a credential (§11).")




# --- init, start, brief -----------------------------------------------------------

@cli.command(short_help="Create the context root; never overwrites.", epilog="""\b
Example:
  CTX_HOME=~/ctx ctx init --focus "Ship the upload fix, then the progress bar"
""")
@click.option("--focus", metavar="TEXT", help="Write current_focus (source operator, basis reported).")
@click.option("--yes", "-y", is_flag=True, help="Ask nothing; take every default (the default off a terminal).")
@json_option
def init(focus: str | None, yes: bool, as_json: bool) -> None:
    """Create the context root: memory/, sessions/ (0700) and RULES.md (0600).

    Never overwrites anything: on an existing root it creates only what is
    missing and says so. On a terminal, without --yes or --focus, it asks
    §13.3's questions one at a time, each with its default: where the root
    goes, the agent's name, which harnesses to wire, the current focus and
    standing instructions.
    """
    answers = None
    if as_json:  # no questions: the answer is one JSON object
        ctx = _context()
        report = ctx.init()
        if focus is not None:
            ctx.set("current_focus", focus, source="operator", basis="reported")
        hook = None
        if (ctx.root / ".git").is_dir():
            from hooks.install import install
            hook = install(ctx.root).status
        _emit_json({"root": str(ctx.root), "existed": report.existed, "created": report.created,
                    "focus": focus is not None, "hook": hook})
        return
    if not yes and focus is None and sys.stdin.isatty() and sys.stdout.isatty():
        from ctx.cli.questions import run_setup
        answers = run_setup(lambda question, default: click.prompt(question, default=default))
    ctx = _context(root=answers.root) if answers else _context()
    report = ctx.init()
    if not report.existed:
        click.echo(f"Created the context root {ctx.root}")
    elif report.created:
        click.echo(f"The context root {ctx.root} exists; nothing overwritten, "
                   f"added: {', '.join(report.created)}")
    else:
        click.echo(f"The context root {ctx.root} exists and is complete; nothing changed")
    if focus is not None:
        ctx.set("current_focus", focus, source="operator", basis="reported")
        click.echo("Wrote current_focus")
    if (ctx.root / ".git").is_dir():
        from hooks.install import install
        result = install(ctx.root)
        if result.status != "unchanged":
            click.echo(result.message())
    if answers:
        _finish_setup(ctx, answers)
    click.echo(f"Next: export CTX_HOME={ctx.root}; ctx start")


def _finish_setup(ctx, answers) -> None:
    """Record the operator's answers, and wire each harness only after showing the change."""
    from ctx.cli.questions import record_answers
    from ctx.features.wire import apply, plan
    if answers.focus or answers.instructions:
        record_answers(ctx, answers)
        click.echo("Recorded current_focus and the standing instructions")
    for target in answers.harnesses:
        wiring = plan(target, ctx.root, agent=answers.agent)
        if not wiring.changed:
            click.echo(f"{target}: already wired ({wiring.path})")
            continue
        click.echo(wiring.diff())
        if click.confirm(f"Apply this change to {wiring.path}?", default=False):
            apply(wiring)
            click.echo(f"{target}: wired ({wiring.path})")
    if not answers.version_control:
        click.echo("ctx keeps each write as a commit in the root's own repository; "
                   "set CTX_NO_GIT=1 to keep store files only")
    click.echo(f"Set in the harness's environment: CTX_HOME={ctx.root} CTX_AUTHOR={answers.agent!r}")


@cli.command(short_help="Rules, brief and newest summary (§5.1).", epilog="""\b
Example (a harness's session-start hook):
  CTX_HOME=~/ctx CTX_AUTHOR="Agent One" timeout 10 ctx start || true
""")
@click.option("--days", default=7, show_default=True, type=click.IntRange(min=0),
              help="Decisions changed within this many days.")
@click.option("--changes", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many recent changes.")
def start(days: int, changes: int) -> None:
    """Print the start payload: RULES.md, the brief, the newest summary (§5.1).

    Writes nothing, and exits 0 even on an empty or missing context (it says
    so), so a harness hook never fails a session.
    """
    commands.start(_context(cache="read"), click.echo, days, changes)  # writes nothing, not even the index


@cli.command(short_help="The one-screen brief (§5.2).", epilog="""\b
Example:
  ctx brief --days 14 --changes 5
JSON shape (--json): {"generated", "commit", "counts": {store: n},
  "focus": item|null, "instructions": [item], "open": {"from", "items", "more"},
  "decisions": {"days", "items": [item]}, "changes": [item], "warnings": [str]}
  where item = {"text", "key"?, "store"?, "status"?, "timestamp"?}
""")
@click.option("--days", default=7, show_default=True, type=click.IntRange(min=0),
              help="Decisions changed within this many days.")
@click.option("--changes", default=10, show_default=True, type=click.IntRange(min=0),
              help="How many recent changes.")
@json_option
def brief(days: int, changes: int, as_json: bool) -> None:
    """Print the one-screen brief (§5.2): focus, instructions, open, decisions, changes."""
    commands.brief(_context(), click.echo, days, changes, as_json)


# --- get --------------------------------------------------------------------------

@cli.command(short_help="One entry, with its status (§4.1).", epilog="""\b
Examples:
  ctx get current_focus
  ctx get operator_preference_one_question --store operator -v
  ctx get k --all --json
  ctx get decision_db_pool --at 2026-11-01      # as it was then
JSON shape: {"store", "key", "entry"}; with --all, a list of them.
""")
@click.argument("key")
@store_option
@click.option("--all", "all_stores", is_flag=True, help="The key from every store that has it.")
@click.option("--at", "at", metavar="REV|DATE", help="The entry as it was at a commit or date.")
@click.option("-v", "--verbose", is_flag=True, help="Show every field.")
@json_option
def get(key: str, store: str, all_stores: bool, at: str | None, verbose: bool, as_json: bool) -> None:
    """Print one entry with its status (§4.1). Exits 1 when the key is missing."""
    commands.get(_context(), click.echo, key, store, all_stores, at, verbose, as_json)


# --- writes ---------------------------------------------------------------------

@cli.command("set", short_help="Write an entry (§4.2).", cls=WordsCommand, epilog="""\b
Examples:
  ctx set decision_db_pool "Use a pool of 20" --tag decision --basis verified
  ctx set --store operator pref_one_question Ask one question at a time \\
      --source operator --basis reported --tag preference
  ctx set k -- --literal-words      # -- ends the options
Values: objects, arrays, true, false, null and integers up to 2^53-1 are
stored as JSON; anything else (1.5, 007, NaN) as the text it was.
""")
@click.argument("key")
@click.argument("value", nargs=-1)
@store_option
@click.option("--source", type=click.Choice(SOURCES), help="Whose knowledge (default: agent with CTX_AUTHOR, else operator).")
@click.option("--basis", type=click.Choice(BASES), help="How you know (new entries: inferred; updates keep it).")
@click.option("--scope", type=click.Choice(SCOPES), help="global (default) or session.")
@click.option("--tag", "tags", multiple=True, help="A tag; repeat for more. Replaces the old tags.")
@click.option("--derivation", help="How the value was reached.")
@force_option
@json_option
def set_(key: str, value: tuple[str, ...], store: str, source: str | None, basis: str | None,
        scope: str | None, tags: tuple[str, ...], derivation: str | None, force: bool,
        as_json: bool) -> None:
    """Write an entry (§4.2): KEY, then the value's words, joined by spaces."""
    if not value:
        raise click.UsageError("set needs a value after the key")
    commands.set_(_context(), click.echo, _err, key, list(value), store, source, basis, scope, list(tags),
                  derivation, force, as_json)


@cli.command(short_help="Mark an entry amended, with a note (§3.6).", cls=WordsCommand, epilog="""\b
Example:
  ctx amend result_port The port is 8443, not 8080
""")
@click.argument("key")
@click.argument("note", nargs=-1)
@store_option
@force_option
@json_option
def amend(key: str, note: tuple[str, ...], store: str, force: bool, as_json: bool) -> None:
    """Mark an entry amended: prepend [Amended DATE: NOTE] to its value (§3.6)."""
    if not note:
        raise click.UsageError("amend needs a note after the key")
    commands.amend(_context(), click.echo, _err, key, list(note), store, force, as_json)


@cli.command(short_help="Mark an entry superseded by another (§3.6).", epilog="""\b
Example:
  ctx supersede decision_pool_10 --by decision_pool_20 --note "load test"
""")
@click.argument("key")
@click.option("--by", required=True, metavar="KEY", help="The key that replaces this one (same store).")
@click.option("--note", help="Why.")
@store_option
@force_option
@json_option
def supersede(key: str, by: str, note: str | None, store: str, force: bool, as_json: bool) -> None:
    """Mark an entry superseded by another; its value stays (§3.6)."""
    commands.supersede(_context(), click.echo, _err, key, by, note, store, force, as_json)


@cli.command(short_help="Mark an entry resolved (§3.6).", epilog="""\b
Example:
  ctx resolve issue_upload_fails --note "Fixed: proxy timeout raised"
""")
@click.argument("key")
@click.option("--note", help="How it was resolved.")
@store_option
@force_option
@json_option
def resolve(key: str, note: str | None, store: str, force: bool, as_json: bool) -> None:
    """Mark an issue or open item resolved; its value stays (§3.6)."""
    commands.resolve(_context(), click.echo, _err, key, note, store, force, as_json)


@cli.command(short_help="Set an entry's basis (§4.4).", epilog="""\b
Example:
  ctx basis result_tests_pass verified
""")
@click.argument("key")
@click.argument("basis", type=click.Choice(BASES))
@store_option
@json_option
def basis(key: str, basis: str, store: str, as_json: bool) -> None:
    """Set an entry's basis without touching its timestamp (§4.4)."""
    commands.basis(_context(), click.echo, _err, key, basis, store, as_json)


@cli.command(short_help="Remove an entry for good (§4.5).", epilog="""\b
Example:
  ctx delete duplicate_key --store agent
Knowledge that turned out wrong is marked (amend, supersede), not deleted.
""")
@click.argument("key")
@store_option
@json_option
def delete(key: str, store: str, as_json: bool) -> None:
    """Remove an entry for good: a wrong key, a duplicate, a secret (§4.5)."""
    commands.delete(_context(), click.echo, _err, key, store, as_json)


# --- search and list ------------------------------------------------------------

ORDER_HELP = ("Results: newest timestamp first, then store (operator, shared, agent), "
              "then key; a limit cuts them after ordering.")


def _filter_options(func):
    options = [
        click.option("--store", "-s", type=click.Choice(STORES), help="Only this store (default: all)."),
        click.option("--tag", "tags", multiple=True, help="Has any of these tags (repeatable)."),
        click.option("--source", type=click.Choice(SOURCES), help="Only this source."),
        click.option("--status", type=click.Choice(STATUSES + ("current",)),
                     help="Only this status; current means none."),
        click.option("--scope", type=click.Choice(SCOPES), help="Only this scope."),
        click.option("--since", metavar="TIME",
                      help="timestamp at or after TIME: RFC 3339, or YYYY-MM-DD (00:00 UTC)."),
        click.option("--prefix", metavar="P", help="Only keys starting with P."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@cli.command(short_help="Entries whose key or value has a pattern (§4.6).", cls=WordsCommand, epilog=f"""\b
Examples:
  ctx search timeout
  ctx search "proxy timeout" --tag uploads --since 2026-10-01 --limit 5
  ctx search --full-text "upload proxy retry"
{ORDER_HELP}
With --full-text, every word must occur (as a word, in the key or value) and
results come by how often they occur, then in that order.
JSON shape: a list of {{"store", "key", "entry"}} (with --full-text also "score").
""")
@click.argument("pattern", required=False, default="")
@_filter_options
@click.option("--full-text", is_flag=True, help="Match words, ranked by how often they occur (index: SQLite FTS5).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(min=0), help="At most this many.")
@click.option("-v", "--verbose", is_flag=True, help="Show every field of each entry.")
@json_option
def search(pattern: str, store, tags, source, status, scope, since, prefix, full_text: bool, limit: int,
           verbose: bool, as_json: bool) -> None:
    """Entries whose key or value contains PATTERN, case-insensitively (§4.6).

    A plain substring, not a regular expression; quote a pattern of several
    words. Non-string values are matched on their compact JSON text. An
    empty pattern matches every entry.
    """
    found = commands.filters(store, tags, source, status, scope, since, prefix)
    if full_text:
        from ctx.fulltext import search as words_search
        from ctx.display import result_json
        ranked = words_search(_context(), pattern, found, limit)
        if as_json:
            _emit_json([{**result_json(r), "score": n} for r, n in ranked])
        else:
            commands.print_results(click.echo, [r for r, _ in ranked], verbose, False)
        return
    commands.search(_context(), click.echo, pattern, found, limit, verbose, as_json)


@cli.command("list", short_help="Entries that pass the filters (§4.6).", cls=WordsCommand, epilog=f"""\b
Examples:
  ctx list --store operator
  ctx list --tag decision --status current --keys-only
{ORDER_HELP}
JSON shape: a list of {{"store", "key", "entry"}}; with --keys-only, of {{"store", "key"}}.
""")
@_filter_options
@click.option("--keys-only", is_flag=True, help="Print store/key only.")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many (default: all).")
@click.option("-v", "--verbose", is_flag=True, help="Show every field of each entry.")
@json_option
def list_(store, tags, source, status, scope, since, prefix, keys_only: bool, limit: int | None,
          verbose: bool, as_json: bool) -> None:
    """Entries that pass the filters (§4.6)."""
    commands.list_(_context(), click.echo, commands.filters(store, tags, source, status, scope, since, prefix),
                   keys_only, limit, verbose, as_json)


@cli.command(short_help="Rebuild the search index.", epilog="""\b
Example:
  ctx reindex
""")
@json_option
def reindex(as_json: bool) -> None:
    """Drop and rebuild the index reads use (.git/ctx/, never committed).

    Never needed for correctness: the index notices any change to a store
    file by itself. Use it after moving a context, or to reclaim space.
    """
    from ctx.storage.index import drop
    from ctx.fulltext import search as words_search
    ctx = _context()
    drop(ctx.root)
    counts = ctx.counts()
    words_search(ctx, "x", commands.filters(None, (), None, None, None, None, None), 1)  # builds FTS too
    if as_json:
        _emit_json({"reindexed": counts})
        return
    click.echo(f"reindexed {sum(counts.values())} entries "
               f"({', '.join(f'{n} {c}' for n, c in counts.items())})")


from ctx.cli import cmd_git, cmd_sync, cmd_more  # noqa: E402,F401  (register their commands on cli)


def main() -> None:
    """The click front door (``fastcli.main`` hands over here for anything it does not take)."""
    cli(prog_name="ctx")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
