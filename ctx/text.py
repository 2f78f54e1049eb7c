"""How values are shown in a line: excerpts (§5.2) and local times. Light to import."""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing is for the checker; importing it costs ~3 ms at every start
if TYPE_CHECKING:
    from typing import Any

from . import model

_SPACE = re.compile(r"\s+")


def excerpt(value: Any, bound: int) -> str:
    """§5.2's excerpt: notes stripped, whitespace collapsed, cut at a word boundary.

    A word that ends exactly at the bound is kept; a first word longer than
    the bound is cut at it; `` ...`` is appended when anything was cut.
    """
    text = model.strip_amend_notes(model.value_text(value))
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= bound:
        return text
    if text[bound] == " ":
        head = text[:bound]
    else:
        cut = text.rfind(" ", 0, bound)
        head = text[:cut] if cut > 0 else text[:bound]
    return head.rstrip() + " ..."


def local_time(stamp: Any, with_time: bool = True) -> str:
    """A stored timestamp in local time (§3.3: tools display local time); a missing or
    malformed one (an entry written by hand) shows as unknown, not as 1970."""
    moment = model.ts_key(stamp)
    if moment == model.ts_key(None):
        return "date unknown"
    moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M" if with_time else "%Y-%m-%d")
