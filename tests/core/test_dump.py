"""ctx/dump.py writes exactly what json.dumps(indent=2, ensure_ascii=False) writes."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx.storage.textlayout import dumps

scalars = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-10**40, max_value=10**40)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text())
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5)
                      | st.dictionaries(st.text(), inner, max_size=5), max_leaves=40)


@pytest.mark.slow  # 400 examples; the parametrized cases below stay in the quick run
@settings(max_examples=400, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(value):
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", [
    {}, [], {"a": []}, {"a": {}}, [[[]]], -0.0, 1e300, 5e-324, math.inf, -math.inf, math.nan,
    "ü\n\"\\\x00\u2028\U0001f600", {1: "int key", 1.5: "float key", True: "bool key", None: "null key"},  # noqa: F601
    (1, 2), {"entries": {"k": {"value": {"nested": [1, {"deeper": None}]}, "tags": ["a", "b"]}}},
])
def test_edge_cases(value):
    assert dumps(value) == json.dumps(value, indent=2, ensure_ascii=False)


@pytest.mark.parametrize("value", [{"a": object()}, [set()], {(1, 2): "tuple key"}])
def test_what_json_cannot_write_is_refused(value):
    with pytest.raises(TypeError):
        dumps(value)
