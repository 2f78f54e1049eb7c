"""Resurfacing: what must not be forgotten comes back when it is due.

An entry's ``due`` field (``YYYY-MM-DD``) puts it in every brief's DUE section once
it is overdue or due within ``HORIZON`` days, until it is resolved or superseded.
The fields, all kept by every implementation as unknown fields (§3.3):

- ``due``: the day it comes back; ``due_set``: the day that date was set (``ctx set
  --due``, ``ctx remind``, ``ctx review``), so ``due - due_set`` is the last interval;
- ``must_not_forget``: true: its interval never grows past ``CAP`` days;
- ``last_review``: the day of the last ``ctx review``;
- ``stale``: true after ``ctx review --stale``: due tomorrow, and named in the
  operator's brief (whatever its date) until the next review or reminder.

``ctx review`` sets the next date from the review day: the last interval (at least
one day) times ``GROWTH``, rounded to the nearest day (halves up); at most ``CAP``
days for a must-not-forget entry. These writes change neither the value nor the
status, so, like ``basis`` (§4.4), they leave ``timestamp`` alone.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from datetime import date

    from ctx.context import Context
# datetime (with math and operator) is imported where a day is made: a brief with
# nothing due needs none (tests/cli/test_fastcli.py: test_the_reads_load_neither_re_nor_pathlib)

from ctx import model
from ctx.errors import InvalidArgument
from ctx.model import DEFAULT_STORE, Entry
from ctx.results import Result

HORIZON = 7      # days ahead the DUE section looks
GROWTH = 2.5     # the interval after a review: the last one times this (the manual's FSRS-style rule)
CAP = 30         # days: a must-not-forget entry's longest interval
CLOSED = ("resolved", "superseded")


def today() -> date:
    """The local calendar day (due dates are days as the operator lives them)."""
    from datetime import datetime
    return datetime.now().astimezone().date()


def parse_day(text: str, base: date | None = None) -> date:
    """``YYYY-MM-DD``, ``today``, ``tomorrow`` or ``+N`` (``+Nd``: N days from ``base``);
    anything else is an ``InvalidArgument`` (exit 2, nothing written)."""
    from datetime import timedelta
    raw = (text or "").strip().lower()
    base = base or today()
    if raw in ("today", "tomorrow"):
        return base + timedelta(days=1 if raw == "tomorrow" else 0)
    if raw.startswith("+") and raw.rstrip("d")[1:].isdigit() and len(raw) < 8:
        return base + timedelta(days=int(raw.rstrip("d")[1:]))
    day = stored_day(raw)
    if day is not None:
        return day
    raise InvalidArgument(f"not a date ctx can read: {text!r} (use YYYY-MM-DD, today, tomorrow or +N days)")


def stored_day(value: object) -> date | None:
    """A stored ``due``-like field as a day; None when absent or unreadable (written by hand)."""
    number = model.day_number(value) if isinstance(value, str) else None
    return None if number is None else _day_of(number)


def _day_of(number: int) -> date:
    """The day ``model.day_number`` counts as ``number``."""
    from datetime import date
    return date.fromordinal(number + model.EPOCH_ORDINAL)


def due_fields(day: date, set_on: date | None = None) -> dict[str, str]:
    """The fields a new due date writes: the day, and the day it was set."""
    return {"due": day.isoformat(), "due_set": (set_on or today()).isoformat()}


def last_interval(entry: Entry) -> int:
    """Days from when the due date was set to the date (at least one). An entry whose
    ``due_set`` is missing counts from its timestamp's day."""
    due = stored_day(entry.get("due"))
    start = stored_day(entry.get("due_set"))
    if start is None and isinstance(entry.get("timestamp"), str):
        start = stored_day(entry["timestamp"][:10])
    if due is None or start is None:
        return 1
    return max(1, (due - start).days)


def next_interval(entry: Entry) -> int:
    days = int(last_interval(entry) * GROWTH + 0.5)
    return min(days, CAP) if entry.get("must_not_forget") is True else days


def remind(ctx: Context, key: str, when: str, *, must_not_forget: bool = False,
           store: str = DEFAULT_STORE) -> Entry:
    """Give an existing entry a due date (``ctx remind``), one commit."""
    day = parse_day(when)
    set_on = today()

    def change(entry: Entry) -> Entry:
        entry.update(due_fields(day, set_on))
        if must_not_forget:
            entry["must_not_forget"] = True
        entry.pop("stale", None)
        return entry
    return _write(ctx, "remind", key, store, change)


def review(ctx: Context, key: str, *, stale: bool = False, store: str = DEFAULT_STORE) -> Entry:
    """Record a review (``ctx review``): the next due date is the last interval times
    ``GROWTH`` from today (``CAP`` at most for a must-not-forget entry); with ``stale``,
    tomorrow, and the entry is named in the operator's brief."""
    from datetime import timedelta
    reviewed = today()

    def change(entry: Entry) -> Entry:
        if stored_day(entry.get("due")) is None:
            raise InvalidArgument(f"{key!r} has no due date to review: give it one with "
                                  f"ctx remind {key} YYYY-MM-DD")
        interval = 1 if stale else next_interval(entry)
        entry.update(due_fields(reviewed + timedelta(days=interval), reviewed))
        entry["last_review"] = reviewed.isoformat()
        if stale:
            entry["stale"] = True
        else:
            entry.pop("stale", None)
        return entry
    return _write(ctx, "review", key, store, change)


def _write(ctx: Context, operation: str, key: str, store: str, change) -> Entry:
    """One entry's due fields changed through the write path, one commit."""
    model.validate_store(store)
    model.validate_key(key)
    ctx.check_policy(store, None)
    from ctx.changes import Edit, Outcome
    from ctx.errors import NotFound
    made: list[Entry] = []

    def mutate(files) -> Outcome:
        before = files[store].entry(key)  # this entry alone: the store is not parsed whole
        if before is None:
            raise NotFound(f"no entry {key!r} in store {store!r}")
        after = change(dict(before))
        if ctx.author:
            after["author"] = ctx.author
        files[store].put(key, after)
        made.append(after)
        return Outcome([Edit(store, key, before, after)],
                       subject=f"{operation} {store}/{key}: due {after.get('due')}")
    ctx.transact(operation, [store], mutate)
    return made[0]


# --- the DUE section -------------------------------------------------------------------------

class DueItem:
    """An entry that is due: its result, its day, and how many days from today."""

    __slots__ = ("result", "day", "days")

    def __init__(self, result: Result, day: date, days: int) -> None:
        self.result, self.day, self.days = result, day, days

    @property
    def stale(self) -> bool:
        return self.result.entry.get("stale") is True

    @property
    def must_not_forget(self) -> bool:
        return self.result.entry.get("must_not_forget") is True

    def when(self) -> str:
        if self.days < 0:
            return f"{-self.days} day{'s' if self.days < -1 else ''} overdue"
        return {0: "today", 1: "tomorrow"}.get(self.days, f"in {self.days} days")


def due_items(ctx: Context, stores: list[str], day: date | str, operator: bool = False,
              horizon: int = HORIZON) -> list[DueItem]:
    """Entries of ``stores`` overdue or due within ``horizon`` days of ``day``, soonest
    first (then as results are ordered); for the operator, stale ones whatever their date,
    and first, so that a bounded section never leaves them out.
    Resolved and superseded entries leave it."""
    from ctx.storage.index import Where
    from ctx.storage.indextables import DUE_INDEX
    first = model.day_number(day if isinstance(day, str) else day.isoformat())
    if first is None:
        raise InvalidArgument(f"not a day: {day!r}")
    last = model.day_text(first + horizon)   # (days counted: no datetime until one is due)
    found: list[DueItem] = []

    def kept(r: Result, later: bool) -> bool:
        """Due by ``last`` (``later``: after it, and stale), neither resolved nor superseded."""
        entry = r.entry
        if entry.get("status") in CLOSED:
            return False
        due = entry.get("due")
        number = model.day_number(due) if isinstance(due, str) else None
        if number is None or (number > first + horizon) != later or (later and entry.get("stale") is not True):
            return False
        found.append(DueItem(r, _day_of(number), number - first))
        return True

    def where() -> Where:  # few entries have a due date: SQLite walks by_due, not every row
        return Where().through(DUE_INDEX).add("(status IS NULL OR status NOT IN ('resolved', 'superseded'))")
    # ISO days sort as text; one that cannot be read is left out by ``kept`` too
    ctx.query(stores, lambda r: kept(r, False), None, where().add("due IS NOT NULL AND due <= ?", last))
    if operator:  # and the stale ones, whatever their date (their body names the field)
        ctx.query(stores, lambda r: kept(r, True), None,
                  where().add("due > ? AND instr(body, ?) > 0", last, b"stale"))
    # soonest first (stable: ties keep the results' order); the operator's stale ones lead
    found.sort(key=lambda item: (not (operator and item.stale), item.day))
    return found
