"""ctx/storage/textlayout.py: the one owner of a store file's bytes (§8.2).

Every position it gives is checked against ``json.dumps(..., indent=2,
ensure_ascii=False)``, and every edit against the full serialization of the
changed data; a layout it does not own gives None (the caller parses the
whole file). The serializer itself: test_dump.py; the write path's splice:
test_splice.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx.storage.textlayout import (
    dumps,
    entry_line,
    entry_text,
    find_entry,
    insert_entry,
    member,
    read_entry,
    remove_entry,
    replace_entry,
    serialize,
    splice,
    unique_by_layout,
)

# keys a reader must find as the serializer spells them: escapes, non-ASCII, a slash,
# a control character (written \u0001), a key named like a field, the empty key
KEYS = ["plain", 'q"uote', "back\\slash", "line\nbreak", "tab\there", "ключ ✓", "a/b", "ctl\x01",
        "source", ""]


def _entry(value, **extra) -> dict:
    return {"value": value, "source": "agent", "tags": ["a"], **extra}


def _store(entries: dict, **top) -> dict:
    return {"type": "shared", "version": "1", "last_updated": "2026-01-01T00:00:00Z",
            "entries": entries, **top}


def _json(data: dict) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _member_json(key: str, entry: dict) -> str:
    return "\n    " + json.dumps(key, ensure_ascii=False) + ": " + \
        json.dumps(entry, indent=2, ensure_ascii=False).replace("\n", "\n    ")


def _without(data: dict, key: str) -> dict:
    return {**data, "entries": {k: v for k, v in data["entries"].items() if k != key}}


def _data(keys=KEYS, **top) -> dict:
    values: list[Any] = ["x", "ü ✓", 'a "quoted" \\ value\nwith a line', {"nested": {"deep": [1, {}]}}, [], None, 7]
    return _store({key: _entry(values[i % len(values)], **({"x_extra": {}} if i % 3 else {}))
                   for i, key in enumerate(keys)}, **top)


# layouts ctx does not own: each must give None where a position or new bytes are asked
FOREIGN = {
    "compact": json.dumps(_data()).encode(),
    "indent 4": json.dumps(_data(), indent=4, ensure_ascii=False).encode(),
    "tabs": json.dumps(_data(), indent="\t", ensure_ascii=False).encode(),
    "entries on one line": (
        b'{\n  "type": "shared",\n  "version": "1",\n  "last_updated": "2026-01-01T00:00:00Z",\n'
        b'  "entries": {"plain": {"value": "x", "source": "agent"}},\n  "x-other-tool": {\n    "setting": 1\n  }\n}\n'),
    "an entry's object closing at two spaces": (
        b'{\n  "type": "shared",\n  "version": "1",\n  "last_updated": "2026-01-01T00:00:00Z",\n  "entries": {\n'
        b'    "plain": {\n      "value": {\n  },\n      "source": "agent"\n    }\n  }\n}\n'),
}


# --- the serializer ------------------------------------------------------------------------

def test_serialize_is_json_dumps_with_a_final_newline():
    data = _data(x_top={"kept": [True, None, 1.5]})
    assert serialize(data) == _json(data)
    assert dumps(data) + "\n" == _json(data).decode("utf-8")


def test_member_is_one_entry_as_the_serializer_writes_it():
    for key in KEYS:
        entry = _entry({"nested": ["ü", {"k": None}]}, x_unknown={})
        assert member(key, entry) == _member_json(key, entry)
        assert member(key, entry) in serialize(_store({"other": _entry(1), key: entry})).decode()


# --- where an entry is -----------------------------------------------------------------------

@pytest.mark.parametrize("kind", [bytes, str])
def test_find_entry_spans_exactly_the_member_text_of_every_entry(kind):
    data = _data()
    raw = _json(data) if kind is bytes else _json(data).decode("utf-8")
    for key, entry in data["entries"].items():
        span = find_entry(raw, key)
        assert span is not None, key
        start, end = span
        text = raw[start:end]
        assert (text.decode("utf-8") if kind is bytes else text) == _member_json(key, entry)
        assert raw[end:end + 1] in ((b"," if kind is bytes else ","), (b"\n" if kind is bytes else "\n"))


@pytest.mark.parametrize("keys", [["only"], ["first", "middle", "last"], KEYS])
def test_the_first_last_and_only_entry_are_found(keys):
    data = _data(keys)
    raw = _json(data)
    for key in keys:
        assert json.loads(entry_text(raw, key)) == data["entries"][key]
        assert isinstance(entry_text(raw, key), bytes)
        assert isinstance(entry_text(raw.decode(), key), str)


def test_a_missing_key_and_an_empty_store_give_none():
    raw = _json(_data())
    for key in ["missing", "plai", "plain ", "PLAIN", "x_extra", "value"]:  # fields are not entries
        assert find_entry(raw, key) is None and entry_text(raw, key) is None
        assert read_entry(raw, key) is None
    empty = _json(_store({}))
    assert b'"entries": {}' in empty
    assert find_entry(empty, "plain") is None and read_entry(empty, "plain") is None


def test_a_key_whose_text_holds_another_key_is_not_mistaken_for_it():
    data = _data(["a", 'a": {', "aa", "b"])
    raw = _json(data)
    for key in data["entries"]:
        assert read_entry(raw, key) == data["entries"][key]


@pytest.mark.parametrize("layout", sorted(FOREIGN))
def test_a_foreign_layout_gives_none_and_read_entry_parses_it_all(layout):
    raw = FOREIGN[layout]
    parsed = json.loads(raw)
    for key in list(parsed["entries"]) + ["missing"]:
        assert find_entry(raw, key) is None
        assert entry_text(raw, key) is None
        assert replace_entry(raw, key, _entry("new")) is None
        assert remove_entry(raw, key) is None
        assert read_entry(raw, key) == parsed["entries"].get(key)
    assert insert_entry(raw, "new", _entry("new")) is None


def test_escapes_that_may_spell_a_key_otherwise_prove_nothing_absent():
    """json.dumps' default (ensure_ascii) writes "ключ" as \\u escapes, and "a\\/b" is "a/b":
    the needle misses them, so the layout cannot say they are absent."""
    data = _data(["plain", "ключ"])
    raw = (json.dumps(data, indent=2) + "\n").encode()
    assert find_entry(raw, "ключ") is None
    assert read_entry(raw, "ключ") == data["entries"]["ключ"]  # by parsing it all
    assert read_entry(raw, "plain") == data["entries"]["plain"]  # found as written
    assert insert_entry(raw, "ключ", _entry("twice?")) is None
    slashed = _json(_data(["plain", "a/b"])).replace(b'"a/b"', b'"a\\/b"')
    assert json.loads(slashed)["entries"]["a/b"]
    assert find_entry(slashed, "a/b") is None and read_entry(slashed, "a/b") is not None
    assert insert_entry(slashed, "a/b", _entry("twice?")) is None


def test_a_key_written_twice_is_left_to_the_parser():
    """JSON keeps the last of two equal keys: the first one's text is not the entry."""
    raw = _json(_data(["k", "other"])).replace(b'\n    "other": ', b'\n    "k": ')
    assert list(json.loads(raw)["entries"]) == ["k"]
    assert find_entry(raw, "k") is None
    assert read_entry(raw, "k") == json.loads(raw)["entries"]["k"]
    assert remove_entry(raw, "k") is None and replace_entry(raw, "k", _entry(1)) is None


def test_an_entry_that_is_not_an_object_is_left_to_the_parser():
    raw = _json(_store({"a": _entry(1), "s": "a string", "n": None}))
    assert find_entry(raw, "s") is None and read_entry(raw, "s") == "a string"
    assert find_entry(raw, "n") is None and read_entry(raw, "n") is None
    assert find_entry(raw, "a") is not None


def test_read_entry_parses_only_the_entry_unless_it_must():
    calls = []

    def parse(data):
        calls.append(1)
        return json.loads(data)["entries"]
    data = _data([key for key in KEYS if key != "ctl\x01"])
    raw = _json(data)
    for key in ["plain", "ключ ✓", "a/b", "missing"]:
        assert read_entry(raw, key, parse) == data["entries"].get(key)
    assert calls == []  # ctx's layout: the entry alone, or nothing, was parsed
    assert read_entry(FOREIGN["compact"], "plain", parse) == data["entries"]["plain"]
    assert calls == [1]
    escaped = _json(_data())  # "ctl\x01" is written "ctl\u0001": a missing key may be spelled so
    assert read_entry(escaped, "ctl\x01", parse) == _data()["entries"]["ctl\x01"]
    assert calls == [1]  # found as written
    assert read_entry(escaped, "missing", parse) is None
    assert calls == [1, 1]
    assert read_entry(b"not json", "plain") is None


# --- one entry's text replaced, inserted or removed ---------------------------------------------

@pytest.mark.parametrize("keys", [["only"], ["first", "middle", "last"], KEYS])
@pytest.mark.parametrize("kind", [bytes, str])
def test_each_edit_gives_the_bytes_of_serializing_the_changed_data(keys, kind):
    data = _data(keys, x_after={"kept": 1})
    raw = _json(data) if kind is bytes else _json(data).decode("utf-8")

    def full(changed):
        return _json(changed) if kind is bytes else _json(changed).decode("utf-8")
    new = _entry({"changed": ["ü"]}, x_unknown=None)
    for key in keys:
        assert replace_entry(raw, key, new) == full({**data, "entries": {**data["entries"], key: new}})
        assert remove_entry(raw, key) == full(_without(data, key))
        assert insert_entry(raw, key, new) is None  # already there
    plain_keys = all("\x01" not in key for key in keys)  # a \u escape proves nothing absent
    if plain_keys:
        assert insert_entry(raw, "added ✓", new) == full({**data, "entries": {**data["entries"], "added ✓": new}})
    assert replace_entry(raw, "missing", new) is None
    assert remove_entry(raw, "missing") is None


def test_removing_the_only_entry_leaves_an_empty_object_and_inserting_fills_it():
    data = _store({"only": _entry("v")})
    raw = _json(data)
    emptied = remove_entry(raw, "only")
    assert emptied == _json(_store({}))
    assert b'"entries": {}' in emptied
    assert insert_entry(emptied, "only", _entry("v")) == raw
    assert insert_entry(emptied, "other", _entry("w")) == _json(_store({"other": _entry("w")}))


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=8), st.dictionaries(st.text(max_size=4), st.text(max_size=6)
                                                            | st.integers() | st.none(), max_size=3),
                       max_size=5),
       st.text(max_size=8))
def test_any_keys_and_entries_round_trip(entries, new_key):
    data = _store(entries)
    raw = _json(data)
    for key, entry in entries.items():
        assert raw[slice(*find_entry(raw, key))].decode("utf-8") == _member_json(key, entry)
        assert read_entry(raw, key) == entry
        assert remove_entry(raw, key) == _json(_without(data, key))
        assert replace_entry(raw, key, {"v": 1}) == _json({**data, "entries": {**entries, key: {"v": 1}}})
    inserted = insert_entry(raw, new_key, {"v": 2})
    if new_key in entries:
        assert inserted is None
    elif b"\\u" not in raw and b"\\/" not in raw:  # no escape that could spell a key: proven absent
        # (a key with a backslash before a "/" is written with "\\/": those bytes hold "\/" as well,
        # which the layout cannot tell from an escaped "/", and says so)
        assert inserted == _json({**data, "entries": {**entries, new_key: {"v": 2}}})
    else:
        assert inserted in (None, _json({**data, "entries": {**entries, new_key: {"v": 2}}}))


def test_splice_refuses_what_it_cannot_do_exactly():
    raw = _json(_data(["a", "b"]))
    for layout in FOREIGN.values():
        assert splice(layout, [("plain", _entry("x"), _entry("y"))], "z") is None
    assert splice(raw, [("a", _entry("not what it holds"), None)], "z") is None
    assert splice(raw, [("a", None, _entry("new"))], "z") is None  # "a" is there already
    spliced = splice(raw, [("a", json.loads(entry_text(raw, "a")), None)], "2026-02-02T00:00:00Z")
    assert spliced == _json({**_without(_data(["a", "b"]), "a"), "last_updated": "2026-02-02T00:00:00Z"})


# --- lines, and keys written twice ------------------------------------------------------------

def _line_where(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.split("\n"), start=1) if line.startswith(needle))


@pytest.mark.parametrize("kind", [bytes, str])
def test_entry_line_is_the_line_of_the_entrys_key(kind):
    data = _data()
    text = _json(data).decode("utf-8")
    for key in data["entries"]:
        expected = _line_where(text, "    " + json.dumps(key, ensure_ascii=False) + ": {")
        assert entry_line(text.encode("utf-8") if kind is bytes else text, key) == expected


def test_entry_line_of_an_entry_named_like_a_field_and_in_other_layouts():
    data = _store({"first": _entry("fine"), "source": _entry("x")})
    text = _json(data).decode()
    assert entry_line(text, "source") == _line_where(text, '    "source": {')  # not the first field
    four = json.dumps(data, indent=4)
    assert entry_line(four, "first") == _line_where(four, '        "first": {')  # the first mention
    assert entry_line(text, "missing") == 1


def test_unique_by_layout_counts_one_line_per_key():
    data = _data(x_top=[{"a": 1}])
    raw = _json(data)
    assert unique_by_layout(raw, len(data), len(data["entries"]))
    nested = _json(_data(x_top={"a": 1}))  # "a" is at an entry's depth: only a parse can tell
    assert not unique_by_layout(nested, len(data), len(data["entries"]))
    twice = raw.replace(b'\n    "source": ', b'\n    "plain": ')
    parsed = json.loads(twice)
    assert not unique_by_layout(twice, len(parsed), len(parsed["entries"]))
    compact = FOREIGN["compact"]
    parsed = json.loads(compact)
    assert not unique_by_layout(compact, len(parsed), len(parsed["entries"]))
