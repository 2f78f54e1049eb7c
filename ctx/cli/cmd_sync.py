"""The command line of sync: remote, clone, pull, push, sync, merge-driver.

Part of the CLI layer (with ``cli.py``); the git work is in ``ctxgit/sync.py``.
"""

from __future__ import annotations

from pathlib import Path

import click

from ctx.cli.app import _context, _emit_json, _warn, cli, json_option


@cli.group(short_help="Remotes to sync with.", invoke_without_command=True, epilog="""\b
Examples:
  ctx remote add origin git@example.com:me/ctx.git
  ctx remote add usb /media/usb/ctx.git
  ctx remote -v
""")
@click.option("-v", "--verbose", is_flag=True, help="Show each remote's URL.")
@json_option
@click.pass_context
def remote(click_ctx: click.Context, verbose: bool, as_json: bool) -> None:
    """List the context's remotes, or add one (any git remote: a bare
    repository on a server, GitHub, GitLab, a USB disk)."""
    if click_ctx.invoked_subcommand is not None:
        return
    from ctxgit.sync.remote import list_remotes
    if as_json:
        _emit_json([{"name": name, "url": url} for name, url in list_remotes(_context())])
        return
    for name, url in list_remotes(_context()):
        click.echo(f"{name}\t{url}" if verbose else name)


@remote.command("add", short_help="Add a remote.", epilog="""\b
Example:
  ctx remote add origin /srv/git/ctx.git
""")
@click.argument("name")
@click.argument("url")
def remote_add(name: str, url: str) -> None:
    """Add a remote NAME at URL (a path, file://, ssh or https)."""
    from ctxgit.sync.remote import add_remote
    add_remote(_context(), name, url)
    click.echo(f"added remote {name}: {url}")


def _report(result, as_json: bool, pushed: str | None = None) -> None:
    if as_json:
        _emit_json({"result": result.kind, "commit": result.commit, "entries": result.entries,
                    "value_conflicts": result.value_conflicts,
                    "renamed": [list(r) for r in result.renamed],
                    "text_conflicts": result.text_conflicts, "pushed": pushed})
        return
    line = f"pull: {result.kind}"
    if result.kind == "merge":
        line += f" ({result.entries} entries changed, commit {result.commit[:8]})"
    click.echo(line)
    for key in result.value_conflicts:
        click.echo(f"  both sides changed {key}: the later timestamp won; "
                   f"the other value is in `ctx history`")
    for old, new in result.renamed:
        click.echo(f"  two summaries named {old}: one kept as {new}")
    for path in result.text_conflicts:
        click.echo(f"ctx: CONFLICT in {path}: both sides changed the same lines; "
                   "resolve the markers in it, then commit", err=True)
    if pushed:
        click.echo(f"push: {pushed} is up to date")


@cli.command(short_help="Fetch and merge from a remote.", epilog="""\b
Example:
  ctx pull origin
""")
@click.argument("remote_name", required=False, metavar="[REMOTE]")
@json_option
def pull(remote_name: str | None, as_json: bool) -> None:
    """Fetch REMOTE (default: the upstream, or origin) and merge it, entry by
    entry. Never rewrites local history; a merge is a commit with both parents."""
    from ctxgit.sync.remote import pull as do_pull
    context = _context()
    _report(do_pull(context, remote_name), as_json)
    _warn(context)


@cli.command(short_help="Push main to a remote.", epilog="""\b
Example:
  ctx push origin
""")
@click.argument("remote_name", required=False, metavar="[REMOTE]")
@json_option
def push(remote_name: str | None, as_json: bool) -> None:
    """Push main to REMOTE and make it main's upstream (so `git pull` works too).
    Refused (exit 4) when the remote has changes this machine lacks: `ctx sync`."""
    from ctxgit.sync.remote import push as do_push
    context = _context()
    name = do_push(context, remote_name)
    _warn(context)
    if as_json:
        _emit_json({"pushed": name})
        return
    click.echo(f"pushed main to {name}")


@cli.command(short_help="Pull, merge and push: the everyday command.", epilog="""\b
Example:
  ctx sync            # with the upstream remote
""")
@click.argument("remote_name", required=False, metavar="[REMOTE]")
@json_option
def sync(remote_name: str | None, as_json: bool) -> None:
    """Pull (merging entry by entry), then push; retried when someone pushed in between."""
    from ctxgit.sync.remote import sync as do_sync
    context = _context()
    result, pushed = do_sync(context, remote_name)
    _report(result, as_json, pushed)
    _warn(context)


@cli.command(short_help="A new context root from a remote.", epilog="""\b
Examples:
  ctx clone git@example.com:me/ctx.git ~/ctx
  CTX_HOME=~/ctx ctx clone /media/usb/ctx.git
""")
@click.argument("url")
@click.argument("path", required=False, type=click.Path(path_type=Path))
@json_option
def clone(url: str, path: Path | None, as_json: bool) -> None:
    """Clone URL into PATH (default: $CTX_HOME, else ~/ctx), with hooks, merge
    driver and upstream set. An empty remote gives a new context that pushes there."""
    from ctxgit.sync.remote import clone as do_clone
    from ctx.storage.root import resolve_root
    ctx, result = do_clone(url, path or resolve_root())
    if as_json:
        _emit_json({"root": str(ctx.root), "result": result.kind, "commit": result.commit})
        return
    what = "an empty remote: a new context" if result.kind == "nothing to pull" else "cloned"
    click.echo(f"{what} at {ctx.root}")
    click.echo(f"Next: export CTX_HOME={ctx.root}; ctx start")


@cli.command("merge-driver", hidden=True)
@click.argument("base")
@click.argument("ours")
@click.argument("theirs")
@click.argument("path", required=False, default="store")
def merge_driver(base: str, ours: str, theirs: str, path: str) -> None:
    """git's merge driver for store files (configured as merge.ctx.driver)."""
    from ctxgit.sync.remote import run_merge_driver
    raise SystemExit(run_merge_driver(base, ours, theirs, path))
