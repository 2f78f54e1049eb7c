"""What the everyday commands do and print, with no click: both front doors call these.

``cli.py`` (click: help, validation, every command) and ``fastcli.py`` (the
quick path for the commands agents run hundreds of times a day) parse the
arguments their own way and then run the same function here, so the two
can differ only in parsing — and a test checks they do not.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any, Callable

from ctx.model import STORES

Echo = Callable[[str], None] if TYPE_CHECKING else object  # how a command prints a line


def emit_json(out: Echo, payload: Any) -> None:
    out(json.dumps(payload, ensure_ascii=False, indent=2))


def context(**options):
    from ctx.context import Context
    from ctxgit.recorder import recorder_for
    return Context(recorder_factory=recorder_for, **options)


def head(root) -> str | None:
    """The short id of the commit the stores are at, read from .git's files."""
    from ctxgit.plumbing.refs import head_short_id
    return head_short_id(root)


# --- reads --------------------------------------------------------------------------

def start(ctx, out: Echo, days: int, changes: int) -> None:
    from ctx.brief import start_payload
    from ctx.errors import CtxError
    try:
        out(start_payload(ctx, days=days, changes=changes, commit=head(ctx.root)).rstrip("\n"))
    except CtxError as error:  # start never fails a session (§5.1)
        out(f"ctx: the context at {ctx.root} could not be read: {error}")


def brief(ctx, out: Echo, days: int, changes: int, as_json: bool) -> None:
    from ctx.brief import build_brief, render_brief
    built = build_brief(ctx, days=days, changes=changes)
    built.commit = head(ctx.root)
    if as_json:
        emit_json(out, built.as_json())
    else:
        out(render_brief(built).rstrip("\n"))


def get(ctx, out: Echo, key: str, store: str, all_stores: bool, at: str | None, verbose: bool,
        as_json: bool) -> None:
    from ctx.results import Result
    from ctx.display import result_json, show_entry
    if at is not None:
        from ctxgit.porcelain.history import entries_as_of
        results = entries_as_of(ctx.root, key, list(STORES) if all_stores else [store], at)
    else:
        results = ctx.get_all(key) if all_stores else [Result(store, key, ctx.get(key, store))]
    if as_json:
        emit_json(out, [result_json(r) for r in results] if all_stores else result_json(results[0]))
    else:
        out("\n\n".join(show_entry(r, verbose) for r in results))


def filters(store, tags, source, status, scope, since, prefix):
    from ctx.model import parse_ts
    from ctx.results import Filters
    return Filters(store=store, tags=tuple(tags), source=source, status=status, scope=scope,
                   since=parse_ts(since) if since is not None else None, prefix=prefix)


def print_results(out: Echo, results, verbose: bool, as_json: bool, keys_only: bool = False) -> None:
    from ctx.display import result_json, result_line, show_entry
    if as_json:
        emit_json(out, [{"store": r.store, "key": r.key} for r in results] if keys_only
                  else [result_json(r) for r in results])
    elif keys_only:
        for r in results:
            out(f"{r.store}/{r.key}")
    elif verbose:
        if results:
            out("\n\n".join(show_entry(r, True) for r in results))
    else:
        for r in results:
            out(result_line(r))


def search(ctx, out: Echo, pattern: str, found_filters, limit: int, verbose: bool, as_json: bool) -> None:
    print_results(out, ctx.select(found_filters, pattern, limit), verbose, as_json)


def list_(ctx, out: Echo, found_filters, keys_only: bool, limit: int | None, verbose: bool,
          as_json: bool) -> None:
    print_results(out, ctx.select(found_filters, None, limit), verbose, as_json, keys_only)


# --- writes ---------------------------------------------------------------------------

def write_done(ctx, out: Echo, err: Echo, result: dict[str, Any], message: str, as_json: bool,
               warnings: list[str] | None = None) -> None:
    warnings = (warnings or []) + ctx.warnings
    for warning in warnings:
        err(f"ctx: {warning}")
    if as_json:
        emit_json(out, {**result, "warnings": warnings})
    else:
        out(message)


def set_(ctx, out: Echo, err: Echo, key: str, words: list[str], store: str, source: str | None,
         basis: str | None, scope: str | None, tags: list[str], derivation: str | None, force: bool,
         as_json: bool) -> None:
    from ctx.model import parse_value
    entry = ctx.set(key, parse_value(" ".join(words)), store=store, source=source, basis=basis,
                    scope=scope, tags=list(tags) if tags else None, derivation=derivation, force=force)
    write_done(ctx, out, err, {"store": store, "key": key, "entry": entry}, f"set {store}/{key}", as_json)


def amend(ctx, out: Echo, err: Echo, key: str, words: list[str], store: str, force: bool,
          as_json: bool) -> None:
    entry = ctx.amend(key, " ".join(words), store=store, force=force)
    write_done(ctx, out, err, {"store": store, "key": key, "entry": entry}, f"amended {store}/{key}", as_json)


def supersede(ctx, out: Echo, err: Echo, key: str, by: str, note: str | None, store: str, force: bool,
              as_json: bool) -> None:
    entry, warnings = ctx.supersede(key, by, note=note, store=store, force=force)
    write_done(ctx, out, err, {"store": store, "key": key, "entry": entry},
               f"superseded {store}/{key} by {by}", as_json, warnings)


def resolve(ctx, out: Echo, err: Echo, key: str, note: str | None, store: str, force: bool,
            as_json: bool) -> None:
    entry = ctx.resolve(key, note=note, store=store, force=force)
    write_done(ctx, out, err, {"store": store, "key": key, "entry": entry}, f"resolved {store}/{key}", as_json)


def basis(ctx, out: Echo, err: Echo, key: str, basis: str, store: str, as_json: bool) -> None:
    entry = ctx.set_basis(key, basis, store=store)
    write_done(ctx, out, err, {"store": store, "key": key, "entry": entry},
               f"basis of {store}/{key}: {basis}", as_json)


def delete(ctx, out: Echo, err: Echo, key: str, store: str, as_json: bool) -> None:
    entry = ctx.delete(key, store=store)
    write_done(ctx, out, err, {"store": store, "key": key, "entry": entry, "deleted": True},
               f"deleted {store}/{key}", as_json)
