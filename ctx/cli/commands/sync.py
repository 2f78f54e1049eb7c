"""Sync: remote, remote add, pull, push, sync, status, clone, and git's merge driver.
The work is in ``ctxgit/sync/``; auto-sync's hooks into start and brief are here
(``before_reading``), its hook after a write in ``ctx/cli/run.py``."""

from __future__ import annotations

import os

from ctx.errors import InvalidArgument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.cli.run import Run
    from ctx.context import Context

CONFLICT_STATUS = 4  # exits.ExitStatus.REFUSED: a merge waits for a human


def remote(run: Run, verbose: bool, as_json: bool) -> None:
    from ctx.display import name as shown
    from ctxgit.sync.remote import list_remotes
    remotes = list_remotes(run.context())
    if as_json:
        run.json([{"name": name, "url": url} for name, url in remotes])
        return
    for name, url in remotes:  # (as .git/config holds them: shown visibly)
        run.out(f"{shown(name)}\t{shown(url)}" if verbose else shown(name))


def remote_add(run: Run, name: str, url: str) -> None:
    from ctx.display import name as shown
    from ctxgit.sync.remote import add_remote
    add_remote(run.context(), name, url)
    run.out(f"added remote {shown(name)}: {shown(url)}")


def _commits(n: int) -> str:
    return f"{n:,} commit" + ("" if n == 1 else "s")


def _names(paths) -> str:
    """File names a remote's tree chose, for one line (``ctx.display.name``)."""
    from ctx.display import name
    return ", ".join(map(name, paths))


def _pull_line(result) -> str:
    from ctx.display import name
    remote = name(result.remote or "the remote")
    if result.kind == "nothing to pull":
        return f"pull: nothing to pull ({remote} has no commits yet)"
    if result.kind == "up to date":
        return f"pull: up to date ({remote} had nothing new)"
    if result.kind == "fast-forward":
        return f"pull: fast-forward (received {_commits(result.received)})"
    if result.kind == "merge":
        return (f"pull: merge ({result.entries} entries changed, commit {result.commit[:8]}; "
                f"received {_commits(result.received)})")
    return f"pull: {result.kind}"


def _push_line(pushed) -> str:
    if pushed.sent:
        return f"push: sent {_commits(pushed.sent)} to {_names([pushed.remote])}"
    return f"push: {_names([pushed.remote])} already had everything"


def _report(run: Run, result, as_json: bool, pushed=None) -> int:
    """Print a pull's (and a sync's push's) report; the exit status (4: a merge waits)."""
    payload = {"result": result.kind, "commit": result.commit, "entries": result.entries,
               "received": result.received, "value_conflicts": result.value_conflicts,
               "renamed": [list(r) for r in result.renamed], "text_conflicts": result.text_conflicts,
               "waiting": result.waiting, "pushed": pushed.remote if pushed else None,
               "sent": pushed.sent if pushed else None, **result.arrived.as_json()}
    lines = None
    if result.kind != "conflict":
        lines = [_pull_line(result)]
        from ctx.display import name  # (a key from the remote: shown visibly)
        lines += [f"  {line}" for line in result.arrived.lines()]  # besides entries: never silent
        for key in result.value_conflicts:
            lines.append(f"  both sides changed {name(key)}: the later timestamp won; the other value is in "
                         "`ctx history`")
        for old, new in result.renamed:
            lines.append(f"  two summaries named {name(old)}: one kept as {name(new)}")
        if pushed:
            lines.append(_push_line(pushed))
    # through run.result: the MCP server gets the text and the JSON of a sync that runs once
    run.result(payload, "\n".join(lines) if lines is not None else None, as_json)
    if result.kind == "conflict":
        files = _names(result.text_conflicts)
        run.err(f"ctx: CONFLICT in {files}: both sides changed the same lines. Nothing was committed or "
                f"pushed; the conflict markers are in the file: edit {files}, then run `ctx sync --continue` "
                "(or `ctx sync --abort` to drop the merge)")
        return CONFLICT_STATUS
    return 0


def _recorded(context: Context, work, summary):
    """Run a pull, push or sync and remember how it ended (``ctx status``)."""
    from ctx.errors import CtxError
    from ctxgit.gitfiles import syncrecord
    try:
        done = work()
    except CtxError as exc:
        syncrecord.record(context.root, False, f"failed: {exc}")
        raise
    syncrecord.record(context.root, *summary(done))
    return done


def _pull_summary(result) -> tuple[bool, str]:
    if result.kind == "conflict":
        return False, f"stopped: a merge waits for {_names(result.text_conflicts)}"
    return True, _pull_line(result)


def pull(run: Run, remote_name: str | None, accept_weaker: bool, as_json: bool) -> int:
    from ctxgit.sync.remote import pull as do_pull
    context = run.context()
    result = _recorded(context, lambda: do_pull(context, remote_name, accept_weaker=accept_weaker),
                       _pull_summary)
    status = _report(run, result, as_json)
    run.warn(context)
    return status


def push(run: Run, remote_name: str | None, as_json: bool) -> None:
    from ctxgit.sync.remote import push as do_push
    context = run.context()
    pushed = _recorded(context, lambda: do_push(context, remote_name), lambda p: (True, _push_line(p)))
    run.warn(context)
    if as_json:
        run.json({"pushed": pushed.remote, "sent": pushed.sent})
        return
    run.out(_push_line(pushed)[len("push: "):])


def _seconds(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise InvalidArgument(f"--timeout {text}: not a number of seconds (0 or more)")
    return value


def sync(run: Run, remote_name: str | None, timeout: str | None, continue_: bool, abort: bool,
         accept_weaker: bool, as_json: bool) -> int:
    from ctxgit.sync.remote import abort_merge, continue_merge
    from ctxgit.sync.remote import sync as do_sync
    if continue_ and abort:
        raise InvalidArgument("--continue and --abort: one or the other")
    seconds = _seconds(timeout)
    context = run.context()
    if abort:
        paths = abort_merge(context)
        if as_json:
            run.json({"aborted": paths})
        else:
            run.out(f"merge dropped: {_names(paths)} put back as this machine last committed "
                    "them; `ctx sync` merges again")
        return 0
    if continue_:
        merged, paths = continue_merge(context)
        if not as_json and merged.kind == "merge":
            run.out(f"merge: committed with {_names(paths)} as you left it (commit {(merged.commit or '')[:8]})")

    def summary(done) -> tuple[bool, str]:
        result, pushed = done
        if result.kind == "conflict":
            return _pull_summary(result)
        return True, _pull_line(result) + "; " + _push_line(pushed)
    result, pushed = _recorded(context, lambda: do_sync(context, remote_name, seconds,
                                                        accept_weaker=accept_weaker), summary)
    status = _report(run, result, as_json, pushed)
    run.warn(context)
    return status


def status(run: Run, as_json: bool) -> None:
    from ctx.display import name, visible
    from ctxgit.gitfiles import waiting
    from ctxgit.sync import state
    context = run.context(cache="read")
    data = state.status(context.root)
    if as_json:
        run.json(data)
        return
    remote = data["remote"]
    if remote is None:
        run.out(visible(f"remote: none ({data['remote_problem']})"))
    else:
        fetched = state.last_fetch(context.root)
        run.out(f"remote: {name(remote)}")
        if data["ahead"] is not None:
            run.out(f"ahead: {_commits(data['ahead'])} not pushed")
            run.out(f"behind: {_commits(data['behind'])} not pulled (as of the last fetch, "
                    f"{state.ago(fetched)})")
    if data["last_sync"]:
        # (the result quotes what the remote said when it failed)
        run.out(visible(f"last sync: {state.ago(data['last_sync'])} ({data['last_sync']}): "
                        f"{data['last_sync_result']}"))
    else:
        run.out("last sync: never")
    run.out("auto-sync: on" if data["auto_sync"] else "auto-sync: off (turn on: `ctx config sync-auto true`)")
    found = waiting.read(context.root)
    run.out(visible(f"merge: a merge with {name(found.label)} waits: {found.next_step()}") if found
            else "merge: none waiting")
    if data["uncommitted"]:
        # (file names in the work tree: whatever an agent or a remote named them)
        run.out(f"uncommitted: {', '.join(map(name, data['uncommitted']))} (changed outside ctx; the next write "
                "commits it" + (", but not a file a waiting merge holds)" if found else ")"))
    else:
        run.out("uncommitted: none")


def before_reading(context: Context) -> tuple[list[str], str | None]:
    """For ``ctx start`` and ``ctx brief``: with auto-sync on, pull first (within
    sync-timeout); the one-line notices to show above everything (the local context
    shown instead, a merge that waits) and the sync state for the brief's header.
    Never raises: reading the context never depends on the remote."""
    from ctx.settings import flag
    root = context.where
    try:
        if flag("CTX_NO_GIT") or not os.path.isdir(os.path.join(root, ".git")):
            return [], None
        from ctxgit.gitfiles import waiting
        from ctxgit.plumbing.gitconfig import upstream
        chosen = upstream(root)
        if waiting.read(root) is None and not chosen.remotes and not chosen.stale:
            return [], None  # no remote, no merge waiting: nothing to pull or to show (plain file reads)
        from ctxgit.sync import auto, state
        notices = []
        notice = auto.pull_first(context.root)
        from ctx.display import name, visible  # (a notice quotes the remote's words, its names)
        if notice:
            notices.append(visible(notice))
        found = waiting.read(root)
        if found is not None:
            notices.append(visible(f"a merge with {name(found.label)} waits: {found.next_step()}"))
        return notices, state.brief_line(context.root)
    except Exception:  # the brief is shown without the sync state
        return [], None


def clone(run: Run, url: str, path: str | None, as_json: bool) -> None:
    from pathlib import Path

    from ctx import settings
    from ctxgit.sync.remote import clone as do_clone
    context, result = do_clone(url, Path(path or settings.home()))
    if as_json:
        run.json({"root": str(context.root), "result": result.kind, "commit": result.commit})
        return
    what = "an empty remote: a new context" if result.kind == "nothing to pull" else "cloned"
    run.out(f"{what} at {context.root}")
    run.out(f"Next: export CTX_HOME={context.root}; ctx start")


def merge_driver(run: Run, base: str, ours: str, theirs: str, path: str) -> int:
    from ctxgit.sync.remote import run_merge_driver
    return run_merge_driver(base, ours, theirs, path)
