"""The command line of the git-native commands: history, log, diff, revert, doctor.

Part of the CLI layer (with ``cli.py``): the commands register on ``cli``
and import the git layer (``ctxgit``, pygit2) only when they run.
"""

from __future__ import annotations

from typing import Any

import click

from ctx.cli.app import _context, _emit_json, cli, json_option
from ctx.model import STORES, parse_ts


def _excerpt(value: Any, bound: int = 80) -> str:
    from ctx.brief import excerpt
    return excerpt(value, bound)


@cli.command(short_help="Every version of an entry, newest first.", epilog="""\b
Examples:
  ctx history decision_db_pool
  ctx history pref_one_question --store operator -n 5 -v
  ctx history k --all-stores --json
Newest first. JSON shape: a list of {"commit", "date", "author", "email",
  "operation", "store", "key", "event": created|changed|deleted, "status",
  "entry" (null when deleted), "subject", "stores", "keys"}.
""")
@click.argument("key")
@click.option("--store", "-s", default="shared", show_default=True, type=click.Choice(STORES))
@click.option("--all-stores", is_flag=True, help="The key's history in every store.")
@click.option("-n", "limit", type=click.IntRange(min=1), help="At most N versions.")
@click.option("-v", "--verbose", is_flag=True, help="Whole values, not excerpts.")
@json_option
def history(key: str, store: str, all_stores: bool, limit: int | None, verbose: bool,
            as_json: bool) -> None:
    """Every version of an entry, newest first: commit, time, author, operation, value.

    Exits 1 when the key never existed in the store.
    """
    from ctxgit.porcelain.history import history as versions_of
    from ctx.brief import local_time
    from ctx.display import status_tag, value_block
    ctx = _context()
    versions = versions_of(ctx.root, key, list(STORES) if all_stores else [store], limit)
    if as_json:
        _emit_json([v.as_json() for v in versions])
        return
    for v in versions:
        where = f"{v.store}/{v.key}  " if all_stores else ""
        when = local_time(v.info.time.isoformat())
        event = "deleted" if v.deleted else ("created" if v.created else v.info.operation or "changed")
        head = f"{v.info.short}  {when}  {v.info.author}  {where}{event}"
        if v.deleted:
            click.echo(head)
            continue
        status = status_tag(v.entry)
        if verbose:
            click.echo(f"{head}{status}\n{value_block(v.entry.get('value'))}\n")
        else:
            click.echo(f"{head}{status}: {_excerpt(v.entry.get('value'))}")


@cli.command(short_help="The context's commits, newest first.", epilog="""\b
Examples:
  ctx log -n 20
  ctx log decision_db_pool
  ctx log --author "Agent One" --since 2026-11-29 --json
Newest first. JSON shape: a list of {"commit", "date", "author", "email",
  "operation", "stores", "keys", "subject"}.
""")
@click.argument("key", required=False)
@click.option("--store", "-s", type=click.Choice(STORES), help="Only commits touching this store.")
@click.option("--author", help="Only commits whose author name or email contains this.")
@click.option("--since", metavar="TIME", help="Only commits at or after TIME (RFC 3339 or YYYY-MM-DD).")
@click.option("-n", "limit", type=click.IntRange(min=1), help="At most N commits.")
@json_option
def log(key: str | None, store: str | None, author: str | None, since: str | None,
        limit: int | None, as_json: bool) -> None:
    """The context's commits, one line each: id, local date, author, subject.
    With KEY, the commits that changed that entry (exit 1 when none ever did)."""
    from ctxgit.porcelain.history import log as commits
    from ctx.brief import local_time
    ctx = _context()
    rows = commits(ctx.root, key=key, store=store, author=author,
                   since=parse_ts(since) if since is not None else None, limit=limit)
    if as_json:
        _emit_json([r.as_json() for r in rows])
        return
    for r in rows:
        click.echo(f"{r.short}  {local_time(r.time.isoformat())}  {r.author}  {r.subject}")


@cli.command(short_help="Entry-level changes between two states.", epilog="""\b
Examples:
  ctx diff --since 2026-11-29        # what changed since my last session
  ctx diff HEAD~10                   # the last ten commits' changes
  ctx diff 3f2a91c0 HEAD --store operator --json
REV is a commit id, HEAD~N, or a date (the last commit of that day).
JSON shape: {"from", "to", "changes": [{"store", "key", "change":
  added|removed|changed, "entry" (added/removed) | "fields": {name:
  {"old", "new"}} (changed)}]}.
""")
@click.argument("rev", required=False)
@click.argument("rev2", required=False)
@click.option("--store", "-s", type=click.Choice(STORES), help="Only this store.")
@click.option("--since", metavar="TIME", help="From the state just before TIME.")
@json_option
def diff(rev: str | None, rev2: str | None, store: str | None, since: str | None,
         as_json: bool) -> None:
    """Entries added, removed and changed (field by field) between two states.

    Without REV2 the later state is the store files on disk; without REV and
    --since the earlier one is HEAD (so it shows uncommitted outside edits).
    """
    from ctxgit.porcelain.diff import diff as entry_diff
    ctx = _context()
    result = entry_diff(ctx.root, rev, rev2, store=store, since=parse_ts(since) if since is not None else None)
    if as_json:
        _emit_json(result.as_json())
        return
    click.echo(f"diff {result.source}..{result.target}: {len(result.entries)} entries changed")
    for d in result.entries:
        where = f"{d.store}/{d.key}"
        if d.kind == "added":
            click.echo(f"+ {where}: {_excerpt(d.after.get('value'))}")
        elif d.kind == "removed":
            click.echo(f"- {where}: {_excerpt(d.before.get('value'))}")
        else:
            click.echo(f"~ {where}")
            for name, (old, new) in d.fields().items():
                shown_old = "(none)" if old is None else _excerpt(old, 60)
                shown_new = "(none)" if new is None else _excerpt(new, 60)
                click.echo(f"    {name}: {shown_old} -> {shown_new}")


@cli.command(short_help="Undo one commit's change, as a new commit.", epilog="""\b
Example:
  ctx revert 3f2a91c0
""")
@click.argument("rev")
@json_option
def revert(rev: str, as_json: bool) -> None:
    """Undo one commit's change to the stores, as a new commit.

    The reverted commit stays in history. Refused (exit 4) when a later
    commit changed one of the same entries.
    """
    from ctxgit.porcelain.revert import revert as undo
    short, edits = undo(_context(), rev)
    if as_json:
        _emit_json({"reverted": short, "entries": [{"store": e.store, "key": e.key,
                                                     "entry": e.after} for e in edits]})
        return
    click.echo(f"reverted {short}: " + ", ".join(f"{e.store}/{e.key}" for e in edits))


@cli.command(short_help="Check the context and repair what is safe.", epilog="""\b
Examples:
  ctx doctor            # report and repair what is safe
  ctx doctor --check    # report only; exit 1 when something is wrong
""")
@click.option("--check", is_flag=True, help="Report only; change nothing.")
@json_option
def doctor(check: bool, as_json: bool) -> None:
    """Check the context: store files, repository, uncommitted changes, .gitignore,
    git lock files (here and in remotes on a local path), size.

    Repairs what is safe (commits outside changes, adds .gitignore lines, makes
    again a .git an interrupted first write left empty, packs). A store file ctx
    cannot trust is reported, never touched; so is a lock file ctx did not leave.
    """
    from ctxgit.porcelain.doctor import examine
    ctx = _context()
    findings = examine(ctx, repair=not check)
    if as_json:
        _emit_json([{"problem": f.problem, "repaired": f.repaired, "fixable": f.fixable}
                    for f in findings])
    elif not findings:
        click.echo(f"ctx doctor: {ctx.root} is in order")
    else:
        for f in findings:
            click.echo(f.line())
    if any(not f.repaired for f in findings):
        raise SystemExit(1)


@cli.group(short_help="Install ctx's git pre-commit hook.", epilog="""\b
Example:
  ctx hooks install
""")
def hooks() -> None:
    """The git hooks of the context root's repository."""


@hooks.command("install", short_help="Install the pre-commit hook.", epilog="""\b
Example:
  ctx hooks install
""")
@json_option
def hooks_install(as_json: bool) -> None:
    """Install .git/hooks/pre-commit in the context root: a manual `git commit`
    that adds a credential, memory/.lock or a temporary file is refused.

    A hook ctx did not write is left as it is (and said so).
    """
    from ctxgit.plumbing.repo import ensure_repo
    from hooks.install import install
    ctx = _context()
    from ctx.storage.lock import context_lock
    ctx.init()
    with context_lock(ctx.root):
        ensure_repo(ctx.root)
    result = install(ctx.root)
    if as_json:
        _emit_json({"path": str(result.path), "status": result.status, "ok": result.ok})
    else:
        click.echo(result.message())
    if not result.ok:
        raise SystemExit(1)


@cli.command(short_help="Find credentials in the context (and its history).", epilog="""\b
Examples:
  ctx scan
  ctx scan --history --json
Exit status 1 when something is found. JSON shape: a list of {"commit"
  (null for the current files), "path", "line", "entry" ("store/key field"
  or null), "rule", "kind", "preview"}.
""")
@click.option("--history", "in_history", is_flag=True, help="Scan every commit too (blobs and messages).")
@json_option
def scan(in_history: bool, as_json: bool) -> None:
    """Scan the store files, summaries and RULES.md for credentials.

    Findings name the store/key (or file and line) and the commit, never the
    secret whole. Remove one with `ctx delete`, or from history with `ctx purge`.
    """
    from ctxgit.porcelain.scan import scan_current, scan_history
    ctx = _context()
    reports = scan_current(ctx.root) + (scan_history(ctx.root) if in_history else [])
    if as_json:
        _emit_json([r.as_json() for r in reports])
    elif not reports:
        click.echo("ctx scan: no credentials found" + (" in the files or the history" if in_history else ""))
    else:
        for report in reports:
            click.echo(report.line())
    if reports:
        raise SystemExit(1)


@cli.command(short_help="Remove an entry from the whole history.", epilog="""\b
Example:
  ctx purge leaked_token --store shared --yes
""")
@click.argument("key")
@click.option("--store", "-s", default="shared", show_default=True, type=click.Choice(STORES))
@click.option("--yes", is_flag=True, help="Really rewrite the history (required).")
@json_option
def purge(key: str, store: str, yes: bool, as_json: bool) -> None:
    """Remove an entry from every commit, for a secret that slipped through.

    Rewrites the commits that hold it (every other entry kept byte for byte,
    authors and dates kept, the value scrubbed from commit messages), then
    prunes the old commits. Remotes and older clones still hold it.
    """
    if not yes:
        raise click.UsageError("purge rewrites the whole history; add --yes to do it")
    from ctxgit.porcelain.purge import purge as rewrite
    result = rewrite(_context(), key, store)
    if as_json:
        _emit_json({"purged": f"{store}/{key}", "rewritten": result.rewritten, "old_head": result.old_head,
                    "new_head": result.new_head, "pruned": result.pruned, "notes": result.notes})
        return
    click.echo(f"purged {store}/{key}: rewrote {result.rewritten} commits "
               f"({result.first[:8]}..{result.old_head[:8]} is now ..{result.new_head[:8]})")
    for note in result.notes:
        click.echo(f"ctx: warning: {note}", err=True)
