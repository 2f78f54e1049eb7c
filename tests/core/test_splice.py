"""Writing only what changed gives exactly the bytes a full serialization would."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from ctx.storage.textlayout import serialize, splice


def _entry(rng: random.Random, i: int) -> dict:
    value = rng.choice(["plain", "ünïcödé ✓", 'quote " and \\ backslash', "line\nbreak", 7, None,
                        {"nested": {"deep": [1, 2, {"x": "y"}]}}, ["a", "b"], "", "    spaces  "])
    entry: dict[str, Any] = {"value": value, "source": "agent", "basis": "inferred", "scope": "global",
             "tags": rng.sample(["a", "b", "c"], rng.randint(0, 2)), "created": "2026-01-01T00:00:00Z",
             "timestamp": f"2026-01-01T00:00:{i % 60:02d}Z"}
    if rng.random() < 0.2:
        entry["x_unknown"] = {"kept": [True, None]}
    return entry


@pytest.mark.parametrize("seed", range(30))
def test_splicing_equals_serializing(seed):
    rng = random.Random(seed)
    data = {"type": "shared", "version": "1", "last_updated": "2026-01-01T00:00:00Z",
            "entries": {}, "x_top": {"kept": 1}}
    if rng.random() < 0.5:
        data.pop("x_top")
    keys = [f"k{i}" for i in range(rng.randint(0, 6))] + (["ключ ✓", 'q"uote'] if rng.random() < 0.5 else [])
    for i, key in enumerate(keys):
        data["entries"][key] = _entry(rng, i)
    raw = serialize(data)
    for step in range(8):
        entries = data["entries"]
        edits = []
        for _ in range(rng.randint(1, 3)):
            choice = rng.random()
            existing = list(entries)
            if existing and choice < 0.4:
                key = rng.choice(existing)
                before, after = entries[key], _entry(rng, step)
                entries[key] = after
            elif existing and choice < 0.6:
                key = rng.choice(existing)
                before, after = entries.pop(key), None
            else:
                key = f"new_{seed}_{step}_{rng.randint(0, 10 ** 6)}"
                before, after = None, _entry(rng, step)
                entries[key] = after
            edits.append((key, before, after))
        data["last_updated"] = f"2026-02-01T00:00:{step:02d}Z"
        spliced = splice(raw, edits, data["last_updated"])
        assert spliced is not None
        assert json.loads(spliced) == data
        assert spliced == serialize(data)  # byte for byte what the full serializer writes
        raw = spliced


def test_other_implementations_bytes_are_kept():
    """A file written with escaped non-ASCII and another key order keeps those entries' bytes."""
    data = {"version": "1", "type": "shared", "last_updated": "2026-01-01T00:00:00Z",
            "entries": {"a": {"value": "é", "source": "agent"}, "b": {"source": "agent", "value": "x"}}}
    raw = (json.dumps(data, indent=2) + "\n").encode()  # ensure_ascii=True: \u00e9
    new_b = {"value": "changed", "source": "agent"}
    spliced = splice(raw, [("b", data["entries"]["b"], new_b)], "2026-01-02T00:00:00Z")
    assert b'"value": "\\u00e9"' in spliced           # entry a untouched, still escaped
    assert json.loads(spliced)["entries"] == {"a": data["entries"]["a"], "b": new_b}


@pytest.mark.parametrize("raw", [b'{"type": "shared", "entries": {"a": {"value": 1}}}',  # compact
                                 b'{\n    "entries": {\n        "a": {}\n    }\n}'])          # indent 4
def test_a_layout_it_cannot_read_is_left_to_the_full_serializer(raw):
    assert splice(raw, [("a", {"value": 1}, {"value": 2})], "2026-01-01T00:00:00Z") is None


def test_an_entry_that_is_not_what_the_write_started_from_is_not_spliced():
    data = {"type": "shared", "version": "1", "last_updated": "x", "entries": {"a": {"value": 1}}}
    assert splice(serialize(data), [("a", {"value": 2}, {"value": 3})], "y") is None
