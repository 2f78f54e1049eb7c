"""The everyday commands: start, brief, get, the writes of §4, search, list, reindex."""

from __future__ import annotations

import os

from ctx.cli.output import print_results, write_done
from ctx.model import STORES

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any

    from ctx.brief import Since
    from ctx.cli.run import Run
    from ctx.context import Context
    from ctx.hookpayload import Hook
    from ctx.results import Filters
    from ctx.storage.files import StrPath


def head(root: StrPath) -> str | None:
    """The short id of the commit the stores are at, read from .git's files."""
    from ctxgit.gitfiles.refs import head_short_id
    return head_short_id(root)


# --- reads ----------------------------------------------------------------------------

def since(context: Context, write: bool) -> Since | None:
    """What others changed since this author's last session (``CTX_AUTHOR`` set, a repository)."""
    if not context.author or not os.path.isdir(os.path.join(context.where, ".git")):
        return None
    from ctx.settings import flag
    if flag("CTX_NO_GIT"):
        return None
    from ctxgit.porcelain.since import since_last_session
    return since_last_session(context.where, context.author, write=write, index=context.opened_index())


def budget(context: Context, max_chars: int | None, max_tokens: int | None) -> int | None:
    from ctx import settings
    from ctx.start import budget_from
    configured = None
    if max_chars is None and max_tokens is None:
        from ctx.features.config import get_value
        configured = get_value(context.where, "start-max-chars", context.state)
    return budget_from(max_chars, max_tokens, settings.count("CTX_CONTEXT_WINDOW_CHARS"),
                       settings.count("CTX_CONTEXT_WINDOW_TOKENS"), configured)


def start(run: Run, days: int, changes: int, max_chars: int | None, max_tokens: int | None,
          output_format: str = "text", harness: str | None = None) -> None:
    from ctx.cli.commands.sync import before_reading
    from ctx.cli.exits import error_line
    from ctx.errors import CtxError
    from ctx.start import start_payload
    context = run.context(cache="read")  # writes nothing, not even the index
    hook = None
    if harness is not None:  # a SessionStart hook: its stdin read once, for both notes
        from ctx.cli.commands.events import hook_input, note_start
        hook = hook_input(run)
        note_start(run, context, harness, hook)  # this machine notes the session's start
    notices, sync_state = before_reading(context)  # auto-sync pulls first (when on)
    try:
        limit = budget(context, max_chars, max_tokens)
    except CtxError as error:  # a bad setting is named, and the whole payload printed
        run.err(f"{error_line(error)}; printing the whole start payload")
        limit = None
    try:
        news = since(context, write=False)
    except Exception as error:  # the section is left out; the session still starts
        from ctx.display import visible
        run.err(f"ctx: what changed since your last session is left out: {visible(str(error))}")
        news = None
    shown: list[tuple[str, str]] = []
    try:
        payload = start_payload(context, days=days, changes=changes, commit=head(context.where),
                                since=news, max_chars=limit, notices=notices, sync=sync_state, shown=shown)
    except CtxError as error:  # start never fails a session (§5.1)
        payload = f"ctx: the context at {context.root} could not be read: {error}\n"
    note_shown_start(context, harness, hook, shown)
    if output_format == "hook":  # a harness's SessionStart hook (ctx/harness/texts.py)
        from ctx.harness.texts import session_start_json
        payload = session_start_json(payload)
    run.out(payload, end="")


def note_shown_start(context: Context, harness: str | None, hook: Hook | None,
                     shown: list[tuple[str, str]]) -> None:
    """The shown log's record of a payload a harness's hook (``--harness``) hands its model, with
    the session id from the hook's stdin: an append, never a failed start
    (tests/core/test_shown_start.py). A plain ``ctx start`` writes nothing at all (§5.1: the
    acceptance test compares the whole root, ``.git`` included)."""
    if not harness:
        return
    try:
        from ctx.cli.commands.events import note_shown
        session = (hook.session_id or "") if hook is not None else ""
        name = harness if len(harness) <= 32 and harness.replace("-", "").isalnum() else ""
        note_shown(context, "start", name, session, shown)
    except Exception:  # the log never fails a start
        return


def brief(run: Run, days: int, changes: int, as_json: bool) -> None:
    from ctx.brief import build_brief, render_brief
    from ctx.cli.commands.sync import before_reading
    context = run.context()
    notices, sync_state = before_reading(context)  # auto-sync pulls first (when on)
    built = build_brief(context, days=days, changes=changes, since=since(context, write=True))
    built.commit = head(context.where)
    built.sync = sync_state
    built.warnings += notices
    run.result(built.as_json, lambda: render_brief(built).rstrip("\n"), as_json)


def get(run: Run, key: str, store: str, all_stores: bool, at: str | None, verbose: bool, as_json: bool) -> None:
    from ctx.display import result_json, show_entry
    from ctx.results import Result
    context = run.context()
    if at is not None:
        from ctx.cli.run import require_git
        from ctxgit.porcelain.history import entries_as_of
        require_git("ctx get --at")
        results = entries_as_of(context.root, key, list(STORES) if all_stores else [store], at)
    else:
        results = context.get_all(key) if all_stores else [Result(store, key, context.get(key, store))]
    run.result(lambda: [result_json(r) for r in results] if all_stores else result_json(results[0]),
               lambda: "\n\n".join(show_entry(r, verbose) for r in results), as_json)


def filters(given: dict[str, Any]) -> Filters:
    """The §4.6 filters from the values of the table's filter options (``params.FILTERS``),
    named as their ``dest``: a new filter is its row there and its field of ``Filters``."""
    from ctx.model import parse_ts
    from ctx.results import Filters
    values = dict(given)
    if values.get("since") is not None:
        values["since"] = parse_ts(values["since"])
    if "tags" in values:
        values["tags"] = tuple(values["tags"])
    return Filters(**values)


def search(run: Run, pattern: str, full_text: bool, semantic: bool, limit: int, verbose: bool, as_json: bool,
           **given: Any) -> None:
    """``given``: the filter options (``filters``)."""
    found = filters(given)
    context = run.context()
    if semantic:
        if full_text:
            from ctx.errors import InvalidArgument
            raise InvalidArgument("--semantic and --full-text: choose one")
        by_meaning(run, context, pattern, found, limit, verbose, as_json)
        return
    if full_text:
        from ctx.display import result_json
        from ctx.fulltext import search as words_search
        ranked = words_search(context, pattern, found, limit)
        print_results(run, [r for r, _ in ranked], verbose, as_json,
                      payload=lambda: [{**result_json(r), "score": n} for r, n in ranked])
        return
    print_results(run, context.select(found, pattern, limit), verbose, as_json)


def by_meaning(run: Run, context: Context, pattern: str, found: Filters, limit: int, verbose: bool,
               as_json: bool) -> None:
    """search --semantic: the model is loaded once a process (the MCP server keeps it)."""
    import sys

    from ctx import progress
    from ctx.display import result_json
    from ctx.meaning import model
    from ctx.meaning.rank import search as meaning_search
    embedder = model.shared()
    if embedder is None and model.first_notice():
        run.err(model.why_not())
    with progress.showing("ctx search --semantic", sys.stderr):
        ranked = meaning_search(context, pattern, found, limit, embedder)
    print_results(run, [r for r, _ in ranked], verbose, as_json,
                  payload=lambda: [{**result_json(r), "score": n} for r, n in ranked])


def list_(run: Run, keys_only: bool, limit: int | None, verbose: bool, as_json: bool, **given: Any) -> None:
    """``given``: the filter options (``filters``)."""
    found = filters(given)
    print_results(run, run.context().select(found, None, limit), verbose, as_json, keys_only)


def reindex(run: Run, semantic: bool, as_json: bool) -> None:
    from ctx import progress
    from ctx.fulltext import search as words_search
    from ctx.storage.index import drop
    context = run.context()
    drop(context.state)
    progress.step("indexing the entries")
    counts = context.counts()
    progress.step(f"building the full-text index of {sum(counts.values()):,} entries")
    words_search(context, "x", filters({}), 1)  # builds FTS too
    vectors = reindex_meaning(run, context) if semantic else None
    if as_json:
        run.json({"reindexed": counts, **({"vectors": vectors} if vectors is not None else {})})
        return
    run.out(f"reindexed {sum(counts.values())} entries ({', '.join(f'{n} {c}' for n, c in counts.items())})"
            + (f"; {vectors} read for meaning" if vectors else ""))


def reindex_meaning(run: Run, context: Context) -> int:
    """reindex --semantic: every entry's vector made now (0, and the notice, without the model)."""
    from ctx import model as stores_model
    from ctx.meaning import model
    from ctx.meaning.rank import index_for
    from ctx.meaning.vectors import texts_and_matrix
    embedder = model.shared()
    if embedder is None:
        if model.first_notice():
            run.err(model.why_not())
        return 0
    stores = list(stores_model.STORES)
    index, persistent = index_for(context, stores)
    keys, _ = texts_and_matrix(embedder, index, stores, persistent)
    return len(keys)


# --- writes ---------------------------------------------------------------------------

def set_(run: Run, key: str, value: list[str], store: str, source: str | None, basis: str | None,
         scope: str | None, tags: list[str], derivation: str | None, due: str | None, valid_from: str | None,
         valid_to: str | None, force: bool, as_json: bool) -> None:
    from ctx.model import parse_ts, parse_value
    fields: dict[str, str | None] = {}
    if due is not None:  # a new date, as ctx remind gives one: no longer stale
        from ctx.resurface import due_fields, parse_day
        fields.update(due_fields(parse_day(due)), stale=None)
    for name, given in (("valid_from", valid_from), ("valid_to", valid_to)):
        if given is not None:
            parse_ts(given)  # a time ctx cannot read: exit 2, nothing written
            fields[name] = given.strip()
    context = run.context()
    entry = context.set(key, parse_value(" ".join(value)), store=store, source=source, basis=basis, scope=scope,
                        tags=list(tags) if tags else None, derivation=derivation, force=force,
                        fields=fields or None)
    write_done(run, context, {"store": store, "key": key, "entry": entry}, f"set {store}/{key}", as_json)


def amend(run: Run, key: str, note: list[str], store: str, force: bool, as_json: bool) -> None:
    context = run.context()
    entry = context.amend(key, " ".join(note), store=store, force=force)
    write_done(run, context, {"store": store, "key": key, "entry": entry}, f"amended {store}/{key}", as_json)


def supersede(run: Run, key: str, by: str, note: str | None, store: str, force: bool, as_json: bool) -> None:
    context = run.context()
    entry, warnings = context.supersede(key, by, note=note, store=store, force=force)
    write_done(run, context, {"store": store, "key": key, "entry": entry}, f"superseded {store}/{key} by {by}",
               as_json, warnings)


def resolve(run: Run, key: str, note: str | None, store: str, force: bool, as_json: bool) -> None:
    context = run.context()
    entry = context.resolve(key, note=note, store=store, force=force)
    write_done(run, context, {"store": store, "key": key, "entry": entry}, f"resolved {store}/{key}", as_json)


def basis(run: Run, key: str, basis: str, store: str, as_json: bool) -> None:
    context = run.context()
    entry = context.set_basis(key, basis, store=store)
    write_done(run, context, {"store": store, "key": key, "entry": entry}, f"basis of {store}/{key}: {basis}",
               as_json)


def delete(run: Run, key: str, store: str, as_json: bool) -> None:
    context = run.context()
    entry = context.delete(key, store=store)
    write_done(run, context, {"store": store, "key": key, "entry": entry, "deleted": True},
               f"deleted {store}/{key}", as_json)
