"""Sync: remote, remote add, pull, push, sync, clone, and git's merge driver.
The work is in ``ctxgit/sync/``."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.cli.run import Run


def remote(run: Run, verbose: bool, as_json: bool) -> None:
    from ctxgit.sync.remote import list_remotes
    remotes = list_remotes(run.context())
    if as_json:
        run.json([{"name": name, "url": url} for name, url in remotes])
        return
    for name, url in remotes:
        run.out(f"{name}\t{url}" if verbose else name)


def remote_add(run: Run, name: str, url: str) -> None:
    from ctxgit.sync.remote import add_remote
    add_remote(run.context(), name, url)
    run.out(f"added remote {name}: {url}")


def _report(run: Run, result, as_json: bool, pushed: str | None = None) -> None:
    if as_json:
        run.json({"result": result.kind, "commit": result.commit, "entries": result.entries,
                  "value_conflicts": result.value_conflicts, "renamed": [list(r) for r in result.renamed],
                  "text_conflicts": result.text_conflicts, "pushed": pushed})
        return
    line = f"pull: {result.kind}"
    if result.kind == "merge":
        line += f" ({result.entries} entries changed, commit {result.commit[:8]})"
    run.out(line)
    for key in result.value_conflicts:
        run.out(f"  both sides changed {key}: the later timestamp won; the other value is in `ctx history`")
    for old, new in result.renamed:
        run.out(f"  two summaries named {old}: one kept as {new}")
    for path in result.text_conflicts:
        run.err(f"ctx: CONFLICT in {path}: both sides changed the same lines; resolve the markers in it, then commit")
    if pushed:
        run.out(f"push: {pushed} is up to date")


def pull(run: Run, remote_name: str | None, as_json: bool) -> None:
    from ctxgit.sync.remote import pull as do_pull
    context = run.context()
    _report(run, do_pull(context, remote_name), as_json)
    run.warn(context)


def push(run: Run, remote_name: str | None, as_json: bool) -> None:
    from ctxgit.sync.remote import push as do_push
    context = run.context()
    name = do_push(context, remote_name)
    run.warn(context)
    if as_json:
        run.json({"pushed": name})
        return
    run.out(f"pushed main to {name}")


def sync(run: Run, remote_name: str | None, as_json: bool) -> None:
    from ctxgit.sync.remote import sync as do_sync
    context = run.context()
    result, pushed = do_sync(context, remote_name)
    _report(run, result, as_json, pushed)
    run.warn(context)


def clone(run: Run, url: str, path: str | None, as_json: bool) -> None:
    from pathlib import Path

    from ctx import settings
    from ctxgit.sync.remote import clone as do_clone
    context, result = do_clone(url, Path(path) if path else settings.home())
    if as_json:
        run.json({"root": str(context.root), "result": result.kind, "commit": result.commit})
        return
    what = "an empty remote: a new context" if result.kind == "nothing to pull" else "cloned"
    run.out(f"{what} at {context.root}")
    run.out(f"Next: export CTX_HOME={context.root}; ctx start")


def merge_driver(run: Run, base: str, ours: str, theirs: str, path: str) -> int:
    from ctxgit.sync.remote import run_merge_driver
    return run_merge_driver(base, ours, theirs, path)
