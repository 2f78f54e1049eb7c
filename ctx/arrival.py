"""The entries that arrive from elsewhere (a remote's store file, an import file),
checked before any of them is taken.

An entry a person or an agent writes here passes the model's rules on the way
in; one that arrives was written by something else, so the same rules are
asked of it again: a key ``model.validate_key`` takes, one-line fields with no
control character (they are printed to models and terminals as they are), and
no time more than a day ahead of this machine's clock (an entry stamped in the
future would win every later merge, ``entrymerge.merge_entry``). Only the
entries that changed against the side already here are checked, so taking in
a big store costs no more than its changes.

Core: imports neither ctxgit nor the front door (``ctxgit/sync/incoming.py``
and ``ctx/features/exchange.py`` call it).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from ctx import model
from ctx.display import name as shown
from ctx.errors import Conflict, InvalidArgument

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.model import Entry

# fields shown on one line wherever an entry is printed (letters: from, to, shape, expects, re)
ONE_LINE_FIELDS: tuple[str, ...] = ("author", "source", "basis", "scope", "status", "superseded_by",
                                    "from", "to", "shape", "expects", "re")
TIME_FIELDS: tuple[str, ...] = ("timestamp", "created", "status_timestamp")
AHEAD_SECONDS = 86400  # a clock this far fast is a mistake to mend, not an entry to take


def problem(key: str, entry: object, latest: float) -> str | None:
    """What is wrong with one arriving entry (``latest``: the last acceptable time, in
    epoch seconds), or None."""
    try:
        model.validate_key(key)
    except InvalidArgument as exc:
        return str(exc)
    if not isinstance(entry, dict):
        return "is not an entry (a JSON object)"
    for name in ONE_LINE_FIELDS:
        value = entry.get(name)
        if isinstance(value, str) and model.has_control(value):
            return f"its {name} {shown(value)} holds a control character"
    tags = entry.get("tags")
    for tag in tags if isinstance(tags, list) else ():
        if isinstance(tag, str) and model.has_control(tag):
            return f"its tag {shown(tag)} holds a control character"
    for name in TIME_FIELDS:
        value = entry.get(name)
        if isinstance(value, str) and model.ts_seconds(value) > latest:
            return f"its {name} {shown(value)} is more than a day in the future"
    return None


def check_entries(store: str, entries: Mapping[str, Entry], before: Mapping[str, Entry] | None = None, *,
                  side: str = "the remote", now: float | None = None) -> None:
    """Refuse (``Conflict``) the first of ``entries`` that changed against ``before`` (the
    side already here; None: every entry is new) and breaks the rules above, by
    ``store/key`` and what is wrong. ``now``: this machine's time (tests give one)."""
    latest = (time.time() if now is None else now) + AHEAD_SECONDS
    for key, entry in entries.items():
        if before is not None and before.get(key) == entry:
            continue
        found = problem(key, entry, latest)
        if found is not None:
            raise Conflict(f"{store}/{shown(key)} from {side}: {found}")


def check_stores(stores: Mapping[str, Mapping[str, Entry]], *, side: str = "the file",
                 now: float | None = None) -> None:
    """``check_entries`` over each store's entries (an import: nothing is here before it)."""
    for store, entries in stores.items():
        check_entries(store, entries, side=side, now=now)
