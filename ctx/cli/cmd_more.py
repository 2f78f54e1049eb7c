"""The command line of the optional features: export, import, cleanup, stats,
config, summary and wire. Part of the CLI layer (with ``cli.py``): the
commands register on ``cli``; the work is in their own modules.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ctx.cli.app import _context, _emit_json, _warn, cli, json_option
from ctx.errors import InvalidArgument
from ctx.model import STORES

store_choice = click.Choice(STORES)


# --- export, import --------------------------------------------------------------

@cli.command("export", short_help="All stores (or one) as one JSON file.", epilog="""\b
Examples:
  ctx export -o ~/ctx-backup.json
  ctx export --store operator > operator.json
File shape: {"format": "ctx-export", "version": "1", "exported": TIME,
  "stores": {store: {"type", "version", "last_updated", "entries": {...},
  other top-level keys}}}.
""")
@click.option("--store", "-s", type=store_choice, help="Only this store (default: all).")
@click.option("-o", "--output", metavar="FILE", help="Write FILE (mode 0600) instead of stdout.")
def export_(store: str | None, output: str | None) -> None:
    """Write every store, or one, to one JSON file (stdout without -o). Reads only."""
    from ctx.features.exchange import export_bytes
    from ctx.storage.files import atomic_write
    context = _context()
    content = export_bytes(context, store)
    if output is None:
        click.echo(content.decode("utf-8"), nl=False)
        return
    path = Path(output).expanduser().absolute()
    if path.resolve().is_relative_to(context.root.resolve()):
        raise InvalidArgument(f"{path}: inside the context root; write the export elsewhere")
    if path.is_dir():
        raise InvalidArgument(f"{path}: is a directory")
    atomic_write(path, content)
    click.echo(f"exported {store or 'all stores'} to {path}")


@cli.command("import", short_help="Merge an export file in, as one commit.", epilog="""\b
Examples:
  ctx import ~/ctx-backup.json --dry-run
  ctx import laptop.json --store shared --json
\b
Rules (those of sync, for a file with no common ancestor): a key only here
is kept (import never deletes); a key only in the file is added; a key
equal on both sides is kept; a key on both sides with different content
is merged field by field: a field on one side only is taken, a field both
sides hold differently comes from the entry with the later timestamp
(listed as a conflict when it is the value); created is the earliest,
timestamp the latest; a status set on either side is kept.
JSON shape: {"dry_run", "added", "changed", "kept", "conflicts"}, each a
  list of {"store", "key"}.
""")
@click.argument("file")
@click.option("--store", "-s", type=store_choice, help="Only this store of the file.")
@click.option("--dry-run", is_flag=True, help="Report what would change; write nothing.")
@click.option("--force", is_flag=True, help="Import even values that look like credentials (§11).")
@json_option
def import_(file: str, store: str | None, dry_run: bool, force: bool, as_json: bool) -> None:
    """Merge FILE (from `ctx export`; - for stdin) into the context, entry by
    entry, as one commit. Refuses a file of an unknown format or version."""
    from ctx.features.exchange import parse_export, read_import_file, run_import
    raw, name = read_import_file(file)
    incoming = parse_export(raw, name)
    if store is not None:
        incoming = {store: incoming.get(store, {})}
    context = _context()
    plan = run_import(context, incoming, dry_run=dry_run, force=force)
    _warn(context)
    if as_json:
        _emit_json(plan.as_json(dry_run))
        return
    for mark, rows in (("+", plan.added), ("~", plan.changed)):
        for s, k in rows:
            conflict = "  (both changed the value; the later one kept)" if (s, k) in plan.conflicts else ""
            click.echo(f"{mark} {s}/{k}{conflict}")
    verb = "would import" if dry_run else "imported"
    click.echo(f"{verb}: {len(plan.added)} added, {len(plan.changed)} changed, "
               f"{len(plan.kept)} kept" + (" (dry run: nothing written)" if dry_run else ""))


# --- cleanup, stats, config ------------------------------------------------------------

@cli.command(short_help="Delete expired session-scoped entries (§3.7).", epilog="""\b
Examples:
  ctx cleanup --dry-run
  ctx cleanup --older-than 7d --json
An entry expires when its scope is session and its timestamp is older
than the threshold; one whose timestamp cannot be read is skipped.
JSON shape: {"dry_run", "cutoff", "deleted": [{"store", "key",
  "timestamp"}], "skipped": [{"store", "key"}]}.
""")
@click.option("--older-than", default="24h", show_default=True, metavar="AGE",
              help="Minutes, hours or days: 30m, 24h, 7d.")
@click.option("--dry-run", is_flag=True, help="List what would go; write nothing.")
@json_option
def cleanup(older_than: str, dry_run: bool, as_json: bool) -> None:
    """Delete session-scoped entries older than AGE, in one commit."""
    from ctx.features.cleanup import cleanup as run_cleanup
    context = _context()
    plan = run_cleanup(context, older_than, dry_run=dry_run)
    _warn(context)
    if as_json:
        _emit_json(plan.as_json(dry_run))
        return
    for store, key, entry in plan.expired:
        click.echo(f"- {store}/{key}  {entry.get('timestamp')}")
    for store, key in plan.skipped:
        click.echo(f"ctx: warning: {store}/{key}: timestamp unreadable; skipped", err=True)
    verb = "would delete" if dry_run else "deleted"
    click.echo(f"{verb} {len(plan.expired)} expired session entries (older than {older_than})")


@cli.command(short_help="Counts by store, source, basis, scope, status, tag.", epilog="""\b
Examples:
  ctx stats
  ctx stats --store shared --json
JSON shape: {"entries", "stores": {store: n}, "source": {..}, "basis":
  {..}, "scope": {..}, "status": {"current", "amended", ...}, "tags":
  {tag: n}, "repository": null | {"commits", "authors": {name: n},
  "first", "last"}}. The repository part is the whole repository's.
""")
@click.option("--store", "-s", type=store_choice, help="Only this store (default: all).")
@json_option
def stats(store: str | None, as_json: bool) -> None:
    """Count the entries by store, source, basis, scope, status and tag, and the
    repository's commits and authors. Reads only."""
    from ctx.features.stats import render, stats as compute
    result = compute(_context(), store)
    if as_json:
        _emit_json(result.as_json())
    else:
        click.echo(render(result))


@cli.command(short_help="Get or set the context's configuration.", epilog="""\b
Examples:
  ctx config                        # every key and its value
  ctx config enforce-stores true
Keys: enforce-stores (true|false, default false): an agent (CTX_AUTHOR
set) may write the operator store only with --source operator (§3.1).
Kept in <root>/config.json; a change is one commit.
JSON shape: {key: value}.
""")
@click.argument("key", required=False)
@click.argument("value", required=False)
@json_option
def config(key: str | None, value: str | None, as_json: bool) -> None:
    """Print every key, print KEY's value, or set KEY to VALUE."""
    import json
    from ctx.features.config import all_values, get_value, set_value
    context = _context()
    if key is None:
        values = all_values(context.root)
    elif value is None:
        values = {key: get_value(context.root, key)}
    else:
        new, changed = set_value(context, key, value)
        _warn(context)
        values = {key: new}
        if not as_json:
            click.echo(f"{key} = {json.dumps(new)}" + ("" if changed else " (unchanged)"))
            return
    if as_json:
        _emit_json(values)
    else:
        for name, shown in values.items():
            click.echo(f"{name} = {json.dumps(shown)}")


# --- session summaries ----------------------------------------------------------------

@cli.group(short_help="Session summaries (§7): new, list, show.", epilog="""\b
Examples:
  ctx summary new --from-stdin < summary.md
  ctx summary list
  ctx summary show
""")
def summary() -> None:
    """Write, list and read the session summaries in sessions/ (§7)."""


@summary.command("new", short_help="Write this session's summary.", epilog="""\b
Example:
  printf '## Done\\n- Fixed the upload (result_upload_fix)\\n\\n## Open\\n- None\\n' |
    CTX_AUTHOR="Agent One" ctx summary new --from-stdin --focus "Upload fix"
Text without its own '# ' title goes under the header '# Session DATE'
and '**Agent:** NAME · **Focus:** LINE'. Refused (exit 2) without an
'## Open' section or with an open item's first line over 150 characters;
refused (exit 4) when it looks like it holds a credential.
JSON shape: {"name", "path"}.
""")
@click.option("--agent", metavar="NAME", help="The agent's name (default: CTX_AUTHOR).")
@click.option("--focus", metavar="TEXT", help="One line (default: current_focus's first line).")
@click.option("--from-stdin", is_flag=True, help="Read the summary from stdin (else $EDITOR).")
@click.option("--force", is_flag=True, help="Pass the credential check (a context under git "
              "still refuses to commit a credential in a summary).")
@json_option
def summary_new(agent: str | None, focus: str | None, from_stdin: bool, force: bool,
                as_json: bool) -> None:
    """Write the next summary of today's local date (YYYY-MM-DD[suffix]_session.md)
    from the §7 template, and commit it."""
    from ctx.summaries import focus_line, new_summary, template, today
    context = _context()
    focus = focus if focus is not None else focus_line(context)
    if from_stdin:
        body = sys.stdin.read()
    elif sys.stdin.isatty() and sys.stdout.isatty():
        name = agent or context.author
        if not name:
            raise InvalidArgument("a summary is headed with its agent's name: give --agent NAME "
                                  "or set CTX_AUTHOR (§6)")
        body = click.edit(template(today(), name, focus), extension=".md")
        if body is None:
            raise InvalidArgument("the editor closed without saving; no summary written")
    else:
        raise InvalidArgument("not on a terminal: give the summary on stdin with --from-stdin")
    if not body.strip():
        raise InvalidArgument("the summary is empty; nothing written")
    name, _ = new_summary(context, body, agent=agent, focus=focus, force=force)
    _warn(context)
    path = context.root / "sessions" / name
    if as_json:
        _emit_json({"name": name, "path": str(path)})
    else:
        click.echo(f"wrote sessions/{name}")


@summary.command("list", short_help="Every summary, oldest first.", epilog="""\b
Example:
  ctx summary list --json
JSON shape: a list of {"name", "path", "date", "agent", "open"} (open:
  how many open items), oldest first; the last is the newest.
""")
@json_option
def summary_list(as_json: bool) -> None:
    """Every summary in sessions/, oldest first, with its agent and open items."""
    from ctx.summaries import summaries
    rows = summaries(_context().root)
    if as_json:
        _emit_json([r.as_json() for r in rows])
        return
    for r in rows:
        click.echo(f"{r.name}  {r.agent or '(no agent)'}  {r.open} open")


@summary.command("show", short_help="Print a summary (the newest by default).", epilog="""\b
Examples:
  ctx summary show
  ctx summary show 2026-10-13b
Exits 1 when there is no such summary.
""")
@click.argument("name", required=False)
def summary_show(name: str | None) -> None:
    """Print the summary NAME (with or without _session.md), or the newest."""
    from ctx.summaries import find_summary
    found = find_summary(_context().root, name)
    click.echo(found.read(), nl=False)


# --- wire ------------------------------------------------------------------------------

@cli.command(short_help="Wire a harness to start from ctx (§5.3).", epilog="""\b
Examples:
  ctx wire claude-code              # show the change (a unified diff)
  ctx wire claude-code --apply      # make it; backup in FILE.ctx-backup
  ctx wire agents-md --agent "Agent One" --apply
\b
Targets and files:
  claude-code  ~/.claude/settings.json (./.claude/ with --project): a
               SessionStart hook running ctx start, errors ignored
  codex        $CODEX_HOME/AGENTS.md (default ~/.codex): the pointer
  agents-md    ./AGENTS.md: the pointer
  gemini       ~/.gemini/GEMINI.md: the pointer
  launcher     ~/.local/bin/ctx-launch: a script that starts a harness
               with ctx start's output as its opening prompt
Everything else in the file is kept; applying twice changes nothing.
JSON shape: {"target", "path", "exists", "changed", "applied", "backup",
  "diff", "notes"}.
""")
@click.argument("target", type=click.Choice(["claude-code", "codex", "agents-md", "gemini", "launcher"]))
@click.option("--apply", "do_apply", is_flag=True, help="Make the change (default: only show it).")
@click.option("--project", is_flag=True, help="claude-code: this project's .claude/settings.json.")
@click.option("--agent", metavar="NAME", help="The agent's name in the pointer (default: CTX_AUTHOR).")
@click.option("--only-under", metavar="DIR", type=click.Path(file_okay=False),
              help="claude-code: run the hook only in sessions under DIR.")
@json_option
def wire(target: str, do_apply: bool, project: bool, agent: str | None, only_under: str | None,
         as_json: bool) -> None:
    """Show, or with --apply make, the change that wires TARGET to ctx."""
    from ctx.storage.root import resolve_root
    from ctx.features.wire import apply, plan
    under = Path(only_under).expanduser().absolute() if only_under else None
    wired = plan(target, resolve_root(), agent=agent, project=project, only_under=under)
    if do_apply:
        apply(wired)
    if as_json:
        _emit_json(wired.as_json())
        return
    for note in wired.notes:
        click.echo(f"ctx: note: {note}", err=True)
    if not wired.changed:
        click.echo(f"{wired.path}: already wired; nothing to change")
        return
    click.echo(wired.diff(), nl=False)
    if wired.applied:
        backup = f" (backup: {wired.backup})" if wired.backup else ""
        click.echo(f"wrote {wired.path}{backup}")
    else:
        click.echo(f"(not written: add --apply to change {wired.path})")
