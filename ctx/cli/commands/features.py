"""The optional features (§10): export, import, cleanup, stats, config; and wire (§5.3).
The work is in ``ctx/features/``."""

from __future__ import annotations

from pathlib import Path

from ctx.errors import InvalidArgument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.cli.run import Run


def export(run: Run, store: str | None, output: str | None) -> None:
    from ctx.features.exchange import export_bytes
    from ctx.storage.files import atomic_write
    context = run.context()
    content = export_bytes(context, store)
    if output is None:
        run.out(content.decode("utf-8"), end="")
        return
    path = Path(output).expanduser().absolute()
    if path.resolve().is_relative_to(context.root.resolve()):
        raise InvalidArgument(f"{path}: inside the context root; write the export elsewhere")
    if path.is_dir():
        raise InvalidArgument(f"{path}: is a directory")
    atomic_write(path, content)
    run.out(f"exported {store or 'all stores'} to {path}")


def import_(run: Run, file: str | None, harness: str | None, store: str | None, dry_run: bool, force: bool,
            as_json: bool) -> None:
    if harness is not None:
        if store is not None or force:
            raise InvalidArgument("--store and --force are for export files; --from imports each memory to the "
                                  "store its kind calls for, and never one that looks like a credential")
        return import_memories(run, harness, file, dry_run, as_json)
    if file is None:
        raise InvalidArgument("give an export FILE (- for stdin), or --from HARNESS")
    from ctx.features.exchange import parse_export, read_import_file, run_import
    raw, name = (run.stdin().encode("utf-8"), "stdin") if file == "-" else read_import_file(file)
    incoming = parse_export(raw, name)
    if store is not None:
        incoming = {store: incoming.get(store, {})}
    context = run.context()
    plan = run_import(context, incoming, dry_run=dry_run, force=force)
    run.warn(context)
    if as_json:
        run.json(plan.as_json(dry_run))
        return
    from ctx.display import name as shown
    for mark, rows in (("+", plan.added), ("~", plan.changed)):
        for s, k in rows:
            conflict = "  (both changed the value; the later one kept)" if (s, k) in plan.conflicts else ""
            run.out(f"{mark} {s}/{shown(k)}{conflict}")
    verb = "would import" if dry_run else "imported"
    run.out(f"{verb}: {len(plan.added)} added, {len(plan.changed)} changed, {len(plan.kept)} kept"
            + (" (dry run: nothing written)" if dry_run else ""))


def import_memories(run: Run, harness: str, path: str | None, dry_run: bool, as_json: bool) -> None:
    """``ctx import --from HARNESS [PATH]``: the harness's reader, then the core's import."""
    from ctx.display import name as shown
    from ctx.display import visible
    from ctx.features.harness_import import run as run_harness_import
    from ctx.harness.memory.sources import read_memories
    source = read_memories(harness, Path(path).expanduser() if path else None)
    context = run.context()
    result = run_harness_import(context, source, dry_run=dry_run)
    run.warn(context)
    for note in result.notes:
        run.err(f"ctx: warning: {visible(note)}")
    if as_json:
        run.json(result.as_json(dry_run))
        return
    for mark, rows in (("+", result.added), ("~", result.changed)):
        for s, k in rows:
            run.out(f"{mark} {s}/{shown(k)}")
    for s, k in result.gone:
        run.out(f"? {s}/{shown(k)}  (gone from {harness}'s memory; the entry is kept: ctx delete it if done)")
    for skipped in result.skipped:
        run.out(f"! {shown(skipped.key)}  (not imported: {visible(skipped.file)} {visible(skipped.why)})")
    verb = "would import" if dry_run else "imported"
    run.out(f"{verb} from {harness}: {len(result.added)} added, {len(result.changed)} changed, "
            f"{len(result.kept)} kept, {len(result.gone)} gone at the source (kept), "
            f"{len(result.skipped)} not imported" + (" (dry run: nothing written)" if dry_run else ""))


def cleanup(run: Run, older_than: str, dry_run: bool, as_json: bool) -> None:
    from ctx.features.cleanup import cleanup as run_cleanup
    context = run.context()
    plan = run_cleanup(context, older_than, dry_run=dry_run)
    run.warn(context)
    if as_json:
        run.json(plan.as_json(dry_run))
        return
    from ctx.display import name
    for store, key, entry in plan.expired:
        run.out(f"- {store}/{name(key)}  {name(entry.get('timestamp'))}")
    for store, key in plan.skipped:
        run.err(f"ctx: warning: {store}/{name(key)}: timestamp unreadable; skipped")
    verb = "would delete" if dry_run else "deleted"
    run.out(f"{verb} {len(plan.expired)} expired session entries (older than {older_than})")


def stats(run: Run, store: str | None, as_json: bool) -> None:
    from ctx.features.stats import render
    from ctx.features.stats import stats as compute
    context = run.context()
    commits = None
    if (context.root / ".git").is_dir():
        from ctxgit.porcelain.history import log
        commits = [(row.author, row.time) for row in log(context.root)]
    result = compute(context, store, commits)
    if as_json:
        run.json(result.as_json())
    else:
        run.out(render(result))


def config(run: Run, key: str | None, value: str | None, as_json: bool) -> None:
    import json

    from ctx.features.config import all_values, get_value, set_value
    context = run.context()
    if key is None:
        values = all_values(context.root, context.state)
    elif value is None:
        values = {key: get_value(context.root, key, context.state)}
    else:
        new, changed = set_value(context, key, value)
        run.warn(context)
        values = {key: new}
        if not as_json:
            run.out(f"{key} = {json.dumps(new)}" + ("" if changed else " (unchanged)"))
            return
    if as_json:
        run.json(values)
    else:
        for name, shown in values.items():
            run.out(f"{name} = {json.dumps(shown)}")


def wire(run: Run, target: str, do_apply: bool, project: bool, agent: str | None, only_under: str | None,
         mcp: bool, trust: bool, as_json: bool) -> None:
    from ctx import settings
    from ctx.harness.wiring import apply, plan
    under = Path(only_under).expanduser().absolute() if only_under else None
    if under is not None and under.exists() and not under.is_dir():
        raise InvalidArgument(f"--only-under {only_under}: not a directory")
    wired = plan(target, Path(settings.home()), agent=agent, project=project, only_under=under, mcp=mcp, trust=trust)
    if do_apply:
        apply(wired)
    if as_json:
        run.json(wired.as_json())
        return
    for note in wired.notes:
        run.err(f"ctx: note: {note}")
    if not wired.changed:
        run.out(f"{wired.paths}: already wired; nothing to change")
        return
    run.out(wired.diff(), end="")
    for change in wired.files:
        if change.applied:
            backup = f" (backup: {change.backup})" if change.backup else ""
            run.out(f"wrote {change.path}{backup}")
    if not wired.applied:
        run.out(f"(not written: add --apply to change {wired.paths})")
