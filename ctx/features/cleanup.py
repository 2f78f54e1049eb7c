"""Cleanup of expired session-scoped entries (spec §3.7, §10 optional).

An entry is expired when its scope is ``session`` and its ``timestamp`` is
older than the threshold (default 24 hours, as §3.7 recommends). An entry
whose timestamp cannot be read is never deleted: it is reported as skipped.
Every expired entry of every store goes in one commit (operation
``cleanup``); a dry run reads only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ctx import model
from ctx.errors import InvalidArgument
from ctx.model import STORES, Entry

DEFAULT_THRESHOLD = "24h"
_DURATION = re.compile(r"(\d+)\s*([mhd])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days"}


def parse_duration(text: str) -> timedelta:
    """``30m``, ``24h``, ``7d``: minutes, hours or days; nothing else."""
    match = _DURATION.fullmatch(text.strip().lower())
    if not match:
        raise InvalidArgument(f"not a duration: {text!r}; use minutes, hours or days: 30m, 24h, 7d")
    amount = int(match.group(1))
    if amount <= 0:
        raise InvalidArgument(f"the duration must be more than zero: {text!r}")
    try:
        return timedelta(**{_UNITS[match.group(2)]: amount})
    except OverflowError:
        raise InvalidArgument(f"the duration is too long: {text!r}") from None


def _readable(stamp: Any) -> bool:
    if not isinstance(stamp, str):
        return False
    try:
        model.parse_ts(stamp)
    except InvalidArgument:
        return False
    return True


@dataclass
class CleanupPlan:
    cutoff: datetime
    expired: list[tuple[str, str, Entry]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def as_json(self, dry_run: bool) -> dict[str, Any]:
        return {"dry_run": dry_run, "cutoff": model.format_ts(self.cutoff),
                "deleted": [{"store": s, "key": k, "timestamp": e.get("timestamp")}
                            for s, k, e in self.expired],
                "skipped": [{"store": s, "key": k} for s, k in self.skipped]}


def plan_cleanup(stores: dict[str, dict[str, Entry]], cutoff: datetime) -> CleanupPlan:
    """The session-scoped entries older than ``cutoff``, store by store, in stored order."""
    plan = CleanupPlan(cutoff)
    for store in STORES:
        for key, entry in stores.get(store, {}).items():
            if entry.get("scope") != "session":
                continue
            if not _readable(entry.get("timestamp")):
                plan.skipped.append((store, key))
            elif model.parse_ts(entry["timestamp"]) < cutoff:
                plan.expired.append((store, key, entry))
    return plan


def cleanup(context, older_than: str = DEFAULT_THRESHOLD, *, dry_run: bool = False,
            now: datetime | None = None) -> CleanupPlan:
    """Delete expired session entries in one commit; with ``dry_run``, write nothing."""
    age = parse_duration(older_than)
    cutoff = (now or datetime.now(UTC)) - age
    if dry_run:
        return plan_cleanup({s.name: s.entries for s in context.stores()}, cutoff)
    from ctx.changes import Edit, Outcome
    done: list[CleanupPlan] = []

    def mutate(files) -> Outcome:
        plan = plan_cleanup({name: s.entries for name, s in files.items()}, cutoff)
        done.append(plan)
        edits = []
        for store, key, entry in plan.expired:
            del files[store].entries[key]
            edits.append(Edit(store, key, entry, None))
        count = len(edits)
        return Outcome(edits, subject=f"cleanup: {count} expired session "
                                      f"entr{'y' if count == 1 else 'ies'} (older than {older_than})")
    context.transact("cleanup", STORES, mutate)
    return done[0]
