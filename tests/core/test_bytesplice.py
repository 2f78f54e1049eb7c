"""The write path's splice (ctx/storage/bytesplice.py): the bytes a full serialization
would write, and the entries' region it carries over is the one a search finds."""

from __future__ import annotations

import json
import random

import pytest

from ctx.storage import textlayout
from ctx.storage.bytesplice import known_region, region_of, splice_known, top_level
from ctx.storage.textlayout import _BYTES, _find_region, serialize


def _store(n: int) -> dict:
    data: dict = {"type": "shared", "version": "1", "last_updated": None if n % 2 else "2026-01-01T00:00:00Z",
            "entries": {f"k{i}": {"value": f"v{i} é", "source": "agent", "tags": ["a"]} for i in range(n)}}
    if n % 3 == 0:
        data["extra"] = {"x": [1, 2]}  # a top-level member after the entries (another implementation's)
    return data


@pytest.mark.parametrize("n", range(7))
def test_random_edits_splice_to_what_serialize_writes(n):
    rng = random.Random(n)
    carried = 0
    for _ in range(40):
        raw = serialize(_store(n))
        assert top_level(raw) == dict(_store(n), entries={})
        data = json.loads(raw)
        edits = []
        for _ in range(rng.randint(1, 3)):
            keys = list(data["entries"])
            kind = rng.choice(["new", "update", "delete"])
            if kind == "new" or not keys:
                key = f"new{rng.randint(0, 99)}"
                if key not in data["entries"]:
                    entry = {"value": "new \u2603", "source": "agent"}
                    edits.append((key, None, entry))
                    data["entries"][key] = entry
            elif kind == "update":
                key = rng.choice(keys)
                entry = dict(data["entries"][key], value="x" * rng.randint(0, 9))
                edits.append((key, data["entries"][key], entry))
                data["entries"][key] = entry
            else:
                key = rng.choice(keys)
                edits.append((key, data["entries"].pop(key), None))
        if not edits:
            continue
        data["last_updated"] = rng.choice([None, "2026-12-02T00:00:00Z"])
        spliced = splice_known(raw, edits, data["last_updated"])
        assert spliced == serialize(data)
        kept = textlayout._last_region
        if kept[0] is spliced:
            carried += 1
            assert kept[1] == _find_region(spliced, _BYTES)
    assert n < 2 or carried  # past the first entry, the region is carried, not searched


def test_an_entry_that_is_not_what_the_parse_found_is_never_spliced():
    raw = serialize(_store(3))
    assert splice_known(raw, [("k1", {"value": "something else", "source": "agent"}, None)], None) is None
    assert splice_known(raw, [("k1", None, {"value": "new", "source": "agent"})], None) is None  # k1 is there


def test_a_region_kept_elsewhere_is_taken_only_where_its_landmarks_are():
    raw = serialize(_store(4))
    body, close = region_of(raw)
    assert known_region(raw, body, close)
    assert not known_region(raw, body + 1, close)
    assert not known_region(raw, body, close - 3)
    assert not known_region(raw, body, len(raw) + 10)
