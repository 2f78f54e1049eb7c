"""The git-native commands: history, log, diff, revert, doctor, hooks install, scan, purge.
The work is in ``ctxgit/porcelain/``; pygit2 loads only when one of these runs."""

from __future__ import annotations

from ctx.errors import InvalidArgument
from ctx.model import STORES, parse_ts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ctx.cli.run import Run


def _excerpt(value: Any, bound: int = 80) -> str:
    from ctx.display import excerpt
    return excerpt(value, bound)


def history(run: Run, key: str, store: str, all_stores: bool, limit: int | None, verbose: bool,
            as_json: bool) -> None:
    from ctx.display import local_time, name, status_tag, value_block, what_changed
    from ctx.model import BOOKKEEPING, changed_fields
    from ctxgit.porcelain.history import history as versions_of
    found = versions_of(run.context().root, key, list(STORES) if all_stores else [store],
                        limit + 1 if limit else None)  # one more: the version before the oldest shown
    shown = found[:limit] if limit else found
    older = {}  # each version's predecessor in its own store
    for number, version in enumerate(shown):
        older[number] = next((v.entry for v in found[number + 1:] if v.store == version.store), None)
    changes = [changed_fields(older[n], v.entry, BOOKKEEPING) for n, v in enumerate(shown)]

    def line(v, fields) -> str:
        where = f"{name(v.store)}/{name(v.key)}  " if all_stores else ""
        when = local_time(v.info.time.isoformat())
        event = "deleted" if v.deleted else ("created" if v.created else v.info.operation or "changed")
        head = f"{v.info.short}  {when}  {name(v.info.who)}  {where}{name(event)}"
        if v.entry is None:  # deleted
            return head
        if verbose:
            return f"{head}{status_tag(v.entry)}\n{value_block(v.entry.get('value'))}\n"
        if v.created:
            return f"{head}: {_excerpt(v.entry.get('value'))}"
        return f"{head}: {what_changed(fields, v.info.operation or '')}"
    run.result(lambda: [{**v.as_json(), "changed": {name: {"old": old, "new": new} for name, (old, new) in c.items()}}
                        for v, c in zip(shown, changes, strict=True)],
               lambda: "\n".join(line(v, c) for v, c in zip(shown, changes, strict=True)) or None, as_json)


def log(run: Run, key: str | None, store: str | None, author: str | None, since: str | None,
        limit: int | None, as_json: bool, verify: bool = False, shown: bool = False) -> None:
    if shown:
        if verify:
            raise InvalidArgument("--shown and --verify: choose one (the shown log has no signatures)")
        shown_log(run, key, store, author, since, limit, as_json)
        return
    from ctx.display import local_time, name, visible
    from ctxgit.porcelain.history import log as commits
    rows = commits(run.context().root, key=key, store=store, author=author,
                   since=parse_ts(since) if since is not None else None, limit=limit)
    verdicts = {}
    if verify:  # each commit's signature, checked as git checks it
        from ctxgit.plumbing.repo import open_repo
        from ctxgit.plumbing.signing import verify_ids
        verdicts = verify_ids(open_repo(run.context().root), [r.id for r in rows]) if rows else {}
    def line(r) -> str:
        mark = f"[{verdicts[r.id].mark()}]  " if verify else ""
        return f"{r.short}  {mark}{local_time(r.time.isoformat())}  {name(r.who)}  {visible(r.subject)}"
    run.result(lambda: [{**r.as_json(), **(verdicts[r.id].as_json() if verify else {})} for r in rows],
               lambda: "\n".join(line(r) for r in rows) or None, as_json)


def shown_log(run: Run, key: str | None, store: str | None, author: str | None, since: str | None,
              limit: int | None, as_json: bool) -> None:
    """``ctx log --shown``: the shown log (``ctx/shown.py``), newest first, filtered."""
    from ctx import shown
    from ctx.model import ts_seconds
    records = list(reversed(shown.read(run.context().state)))
    if since is not None:
        floor = parse_ts(since).timestamp()
        records = [r for r in records if ts_seconds(r["time"]) >= floor]
    if author:
        records = [r for r in records if author.casefold() in r["author"].casefold()]
    if key or store:
        records = [r for r in records if any((not key or k["key"] == key) and (not store or k["store"] == store)
                                             for k in r["keys"])]
    records = records[:limit] if limit else records
    run.result(records, lambda: "\n".join(shown.line(r) for r in records) or None, as_json)


def diff(run: Run, rev: str | None, rev2: str | None, store: str | None, since: str | None, as_json: bool) -> None:
    from ctxgit.porcelain.diff import diff as entry_diff
    result = entry_diff(run.context().root, rev, rev2, store=store,
                        since=parse_ts(since) if since is not None else None)
    from ctx.display import name

    def text() -> str:
        lines = [f"diff {result.source}..{result.target}: {len(result.entries)} entries changed"]
        for d in result.entries:
            where = f"{name(d.store)}/{name(d.key)}"
            if d.after is not None and d.before is None:
                lines.append(f"+ {where}: {_excerpt(d.after.get('value'))}")
            elif d.before is not None and d.after is None:
                lines.append(f"- {where}: {_excerpt(d.before.get('value'))}")
            else:
                lines.append(f"~ {where}")
                for field, (old, new) in d.fields().items():
                    shown_old = "(none)" if old is None else _excerpt(old, 60)
                    shown_new = "(none)" if new is None else _excerpt(new, 60)
                    lines.append(f"    {name(field)}: {shown_old} -> {shown_new}")
        return "\n".join(lines)
    run.result(result.as_json, text, as_json)


def revert(run: Run, rev: str, as_json: bool) -> None:
    from ctxgit.porcelain.revert import revert as undo
    short, edits = undo(run.context(), rev)
    if as_json:
        run.json({"reverted": short, "entries": [{"store": e.store, "key": e.key, "entry": e.after} for e in edits]})
        return
    from ctx.display import name
    run.out(f"reverted {short}: " + ", ".join(f"{name(e.store)}/{name(e.key)}" for e in edits))


def doctor(run: Run, check: bool, as_json: bool) -> int:
    from ctx.settings import flag
    from ctxgit.porcelain.doctor import examine
    context = run.context()
    with_git = not flag("CTX_NO_GIT")
    findings = examine(context, repair=not check, git=with_git)
    if not with_git and not as_json:
        run.err("ctx: CTX_NO_GIT=1: the store files were checked; the repository was not")
    if as_json:
        run.json([{"problem": f.problem, "repaired": f.repaired, "fixable": f.fixable} for f in findings])
    elif not findings:
        from ctx.display import visible
        run.out(visible(f"ctx doctor: {context.root} is in order"))
    else:
        for f in findings:
            run.out(f.line())
    return 1 if any(not f.repaired for f in findings) else 0


def hooks_install(run: Run, as_json: bool) -> int:
    from ctx.storage.lock import context_lock
    from ctxgit.guard.install import ensure_repo
    from hooks.install import install
    context = run.context()
    context.init()
    with context_lock(context.root):
        ensure_repo(context.root)
    result = install(context.root)
    if as_json:
        run.json({"path": str(result.path), "status": result.status, "ok": result.ok})
    else:
        run.out(result.message())
    return 0 if result.ok else 1


def scan(run: Run, in_history: bool, as_json: bool) -> int:
    from ctxgit.porcelain.scan import scan_current, scan_history
    if in_history:
        from ctx.cli.run import require_git
        require_git("ctx scan --history")
    root = run.context().root
    reports = scan_current(root) + (scan_history(root) if in_history else [])
    if as_json:
        run.json([r.as_json() for r in reports])
    elif not reports:
        run.out("ctx scan: no credentials found" + (" in the files or the history" if in_history else ""))
    else:
        for report in reports:
            run.out(report.line())
    return 1 if reports else 0


def purge(run: Run, key: str, store: str, yes: bool, as_json: bool) -> None:
    if not yes:
        raise InvalidArgument("purge rewrites the whole history; add --yes to do it")
    from ctxgit.porcelain.purge import purge as rewrite
    result = rewrite(run.context(), key, store)
    if as_json:
        run.json({"purged": f"{store}/{key}", "rewritten": result.rewritten, "old_head": result.old_head,
                  "new_head": result.new_head, "pruned": result.pruned, "notes": result.notes})
        return
    from ctx.display import name, visible
    run.out(f"purged {store}/{name(key)}: rewrote {result.rewritten} commits "
            f"({(result.first or '')[:8]}..{result.old_head[:8]} is now ..{(result.new_head or '')[:8]})")
    for note in result.notes:
        run.err(visible(f"ctx: warning: {note}"))
