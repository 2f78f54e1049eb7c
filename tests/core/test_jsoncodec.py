"""ctx/jsoncodec.py reads and writes exactly what ``json`` does, without loading it."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx import jsoncodec
from ctx.jsoncodec import compact, dumps, loads, raw_decode

scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-10**40, max_value=10**40)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text())
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(st.text(), inner, max_size=5), max_leaves=40)
EDGES = [
    {}, [], {"a": []}, {"a": {}}, [[[]]], -0.0, 1e300, 5e-324, math.inf, -math.inf, math.nan,
    "ü\n\"\\\x00\u2028\U0001f600", {1: "int key", 1.5: "float key", True: "bool key", None: "null key"},  # noqa: F601
    (1, 2), {"entries": {"k": {"value": {"nested": [1, {"deeper": None}]}, "tags": ["a", "b"]}}},
    "\udc80 a lone surrogate",
]


@pytest.mark.slow  # 400 examples; the parametrized cases below stay in the quick run
@settings(max_examples=400, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(value):
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert compact(value, ascii=True) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize("value", EDGES)
def test_edge_cases(value):
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)
    assert compact(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert compact(value, ascii=True) == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize("value", [{"a": object()}, [set()], {(1, 2): "tuple key"}])
def test_what_json_cannot_write_is_refused(value):
    with pytest.raises(TypeError):
        dumps(value)
    with pytest.raises(TypeError):
        compact(value)


def _same(text, **options):
    """loads and json.loads agree: the same value (NaN as itself), or the same error."""
    try:
        expected = json.loads(text, **options)
    except Exception as exc:
        with pytest.raises(type(exc)) as got:
            loads(text, **options)
        assert str(got.value) == str(exc)
        return
    assert json.dumps(loads(text, **options)) == json.dumps(expected)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from(["", " ", "\n", " \t\r\n"]))
def test_loads_reads_what_json_writes(value, space):
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        _same(space + text + space)
        _same((space + text + space).encode("utf-8"))


@pytest.mark.parametrize("text", [
    "", " ", "x", "{", '{"a": }', '{"a": 1', "[1,]", '{"a": 1} x', "1 2", "[1] [", "\ufeff{}", "NaN",
    "-Infinity", '"\\ud800"', '{"a": 1, "a": 2}', "nul", "[" * 5000, '"unterminated', "01",
    b"", b"{}", b"\xef\xbb\xbf{}", b'"\xff"', b"\x00{\x00}", b"{\x00}\x00", '{"k": 1.5e999}',
])
def test_loads_gives_what_json_gives_or_its_error(text):
    _same(text)


def _reject(name):
    raise ValueError(f"{name} is not JSON")


def test_loads_passes_the_options_through():
    _same('[NaN, 1.5]', parse_constant=_reject)
    _same('[1.5, 2]', parse_float=lambda t: ("float", t))
    _same('{"a": 1, "a": 2}', object_pairs_hook=lambda pairs: pairs)
    _same('{"a": {"b": 1}}', object_pairs_hook=lambda pairs: dict(reversed(pairs)))


def test_raw_decode_is_json_raw_decode():
    decoder = json.JSONDecoder()
    for text, begin in (('  {"a": [1]} tail', 2), ("[1] [2]", 4), ("x", 0), ("[1", 0)):
        try:
            expected = decoder.raw_decode(text, begin)
        except ValueError as exc:
            with pytest.raises(ValueError, match=str(exc).split(":")[0]):
                raw_decode(text, begin)
        else:
            assert raw_decode(text, begin) == expected


def test_without_the_accelerator_json_itself_answers(monkeypatch):
    monkeypatch.setattr(jsoncodec, "_PLAIN", None)
    monkeypatch.setattr(jsoncodec, "scanner", lambda decoder: None)
    assert loads('{"a": [1, 2]}') == {"a": [1, 2]}
    assert raw_decode("[1] x", 0) == ([1], 3)
    with pytest.raises(json.JSONDecodeError):
        loads("{")


def test_a_scanner_that_asks_for_more_options_is_not_used(monkeypatch):
    """A newer _json may read an option this decoder lacks (3.15 reads array_hook): json decodes."""
    import _json

    def asks_more(decoder):
        decoder.array_hook  # noqa: B018
        return _json.make_scanner(decoder)
    monkeypatch.setattr(_json, "make_scanner", asks_more)
    assert jsoncodec.scanner(jsoncodec._Decoder()) is None
    assert loads("[1]", parse_float=float) == [1]


def test_importing_it_loads_neither_json_nor_re():
    code = ("import sys; from ctx import jsoncodec; jsoncodec.loads('{\"a\": [1, 2.5, null]}');"
            "jsoncodec.dumps({'a': 1}); jsoncodec.compact([1]);"
            "print(sorted(m for m in ('json', 're') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
