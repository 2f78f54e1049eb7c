"""An entry as the read index keeps it: its value apart from the rest of it.

A row of ``entries`` holds the entry in Python's ``marshal`` form as two blobs: ``body``, the
entry with its value left as None in the value's place (so the fields keep their order), and
``value``, the value alone (NULL: the entry has no value field). A list or a search prints a
line per result from its value, time and status (``ctx/display.py``, ``result_line``): it
decodes the value alone, and the rest only for an entry with a status
(tests/core/test_entrytags.py, test_a_line_decodes_only_the_value_of_an_entry_without_a_status).
"""

from __future__ import annotations

import marshal

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from typing import Any

from ctx.storage.indextables import MARSHAL_VERSION


def split(entry: dict[str, Any]) -> tuple[bytes, bytes | None]:
    """(body, value) of ``entry``, as ``joined`` puts them back together."""
    if "value" not in entry:
        return marshal.dumps(entry, MARSHAL_VERSION), None
    return marshal.dumps({**entry, "value": None}, MARSHAL_VERSION), marshal.dumps(entry["value"], MARSHAL_VERSION)


def joined(body: bytes, value: bytes | None) -> dict[str, Any]:
    """The entry ``split`` made ``body`` and ``value`` of: its fields in their order."""
    entry = marshal.loads(body)
    if value is not None:
        entry["value"] = marshal.loads(value)
    return entry


def value_of(value: bytes | None) -> Any:
    """The entry's value from its ``value`` blob alone (None: it has none, as ``entry.get`` gives)."""
    return None if value is None else marshal.loads(value)
