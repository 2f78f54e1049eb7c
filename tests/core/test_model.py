"""The pure field rules of ctx/model.py: values (§9.1), timestamps, keys,
set (§4.2), statuses (§3.6) and basis (§4.4)."""

from __future__ import annotations

import copy
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctx import model
from ctx.errors import InvalidArgument
from ctx.model import (
    apply_basis,
    apply_set,
    apply_status,
    json_text,
    parse_ts,
    parse_value,
    strip_amend_notes,
    validate_key,
)

MAX = 2**53 - 1
T0 = "2026-01-01T00:00:00Z"
T1 = "2026-10-13T09:41:07Z"
T2 = "2026-10-14T23:59:59Z"


# --- parse_value (§9.1) ---------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ('{"a": 1, "b": [1, 2]}', {"a": 1, "b": [1, 2]}),
    ('{}', {}),
    ('[]', []),
    ('[1, "x", null, true]', [1, "x", None, True]),
    ('{"é": "ü", "n": {"m": [false]}}', {"é": "ü", "n": {"m": [False]}}),
    ('{"a": 1.5}', {"a": 1.5}),
    ("true", True),
    ("false", False),
    ("null", None),
    ("0", 0),
    ("42", 42),
    ("-42", -42),
    (str(MAX), MAX),
    (str(-MAX), -MAX),
])
def test_parse_value_stores_json(text, expected):
    value = parse_value(text)
    assert value == expected
    assert type(value) is type(expected)


def test_parse_value_object_keeps_member_order():
    value = parse_value('{"z": 1, "a": 2, "m": 3}')
    assert list(value) == ["z", "a", "m"]


def test_parse_value_booleans_are_not_integers():
    assert parse_value("true") is True
    assert parse_value("false") is False
    assert parse_value("1") == 1 and parse_value("1") is not True


@pytest.mark.parametrize("text", [
    str(2**53),                 # one past the safe range
    "9007199254740993",
    str(-(2**53)),
    "1.10", "1.5", "-1.5", "1.0",
    "007", "00", "-07",
    "+5", "1e5", "1E5", "1e999", "-1e999",
    "NaN", "Infinity", "-Infinity", "nan",
    "True", "FALSE", "Null", "truex", "true false",
    "0x10", "1_000", "١٢",         # other numerals are text
    "-", "--5", "",
    "hello world",
    "{a: 1}", '{"a": 1', '[1, 2', '{"a":1} {"b":2}', "[1,]", "{'a': 1}",
])
def test_parse_value_keeps_text(text):
    value = parse_value(text)
    assert value == text
    assert isinstance(value, str)


@pytest.mark.parametrize("text", [
    '{"a": 1e999}', '[1e999]', '[1, -1e400]',
    '{"a": NaN}', '[NaN]', '[Infinity]', '{"a": [-Infinity]}',
])
def test_parse_value_json_that_cannot_be_written_back_stays_text(text):
    assert parse_value(text) == text


def test_parse_value_deep_nesting_stays_text():
    text = "[" * 100_000 + "]" * 100_000
    assert parse_value(text) == text


def test_parse_value_negative_zero_is_the_integer_zero():
    # "-0" is an integer without a sign other than "-", leading zeros,
    # fraction or exponent: stored as the JSON integer 0 (JSON has no -0 integer)
    value = parse_value("-0")
    assert value == 0 and type(value) is int


def test_parse_value_object_with_surrounding_whitespace_is_json():
    assert parse_value('  {"a": 1}  ') == {"a": 1}
    assert parse_value("\n[1, 2]\t") == [1, 2]


@pytest.mark.parametrize("text", [" true", "true ", " 5", "5 ", " null", "\t-3"])
def test_parse_value_scalar_with_surrounding_whitespace_stays_text(text):
    # the implementation's choice: only an object or array is trimmed
    assert parse_value(text) == text


def test_parse_value_huge_integer_stays_text():
    text = "1" * 5000
    assert parse_value(text) == text


# --- json_text, value_text ---------------------------------------------------------------

def test_json_text_is_compact_in_stored_order_with_non_ascii_as_itself():
    assert json_text({"z": [1, 2, {"b": None}], "a": "ü"}) == '{"z":[1,2,{"b":null}],"a":"ü"}'
    assert json_text("日本") == '"日本"'
    assert json_text(True) == "true"
    assert json_text(5) == "5"


def test_value_text_is_the_string_itself_or_its_json_text():
    assert model.value_text("a \"q\" ü") == 'a "q" ü'
    assert model.value_text({"port": 8080}) == '{"port":8080}'
    assert model.value_text(None) == "null"


# --- timestamps -----------------------------------------------------------------------

def test_now_is_rfc3339_utc_whole_seconds():
    stamp = model.now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", stamp)
    assert abs(parse_ts(stamp) - datetime.now(UTC)) < timedelta(seconds=5)


@pytest.mark.parametrize("text, expected", [
    ("2026-10-13T09:41:07Z", datetime(2026, 10, 13, 9, 41, 7, tzinfo=UTC)),
    ("2026-10-13t09:41:07z", datetime(2026, 10, 13, 9, 41, 7, tzinfo=UTC)),
    ("2026-10-13T11:41:07+02:00", datetime(2026, 10, 13, 9, 41, 7, tzinfo=UTC)),
    ("2026-10-13T04:11:07-05:30", datetime(2026, 10, 13, 9, 41, 7, tzinfo=UTC)),
    ("2026-10-13T09:41:07.5Z", datetime(2026, 10, 13, 9, 41, 7, 500000, tzinfo=UTC)),
    ("2026-10-13T09:41:07.123456Z", datetime(2026, 10, 13, 9, 41, 7, 123456, tzinfo=UTC)),
    ("2026-10-13", datetime(2026, 10, 13, tzinfo=UTC)),
    ("  2026-10-13  ", datetime(2026, 10, 13, tzinfo=UTC)),
])
def test_parse_ts_accepts_rfc3339_and_dates(text, expected):
    moment = parse_ts(text)
    assert moment == expected
    assert moment.utcoffset() is not None


def test_parse_ts_compares_points_in_time_not_text():
    assert parse_ts("2026-01-01T00:00:07.5Z") > parse_ts("2026-01-01T00:00:07Z")
    assert parse_ts("2026-01-01T01:00:00+01:00") == parse_ts("2026-01-01T00:00:00Z")
    assert parse_ts("2026-01-02") == parse_ts("2026-01-02T00:00:00Z")
    # as text, "07.5Z" sorts before "07Z"; as time it is after
    assert "2026-01-01T00:00:07.5Z" < "2026-01-01T00:00:07Z"


@pytest.mark.parametrize("text", [
    "", "   ", "yesterday", "now", "2026/10/13", "13.10.2026", "2026-13-01", "2026-02-30",
    "2026-10-13T25:00:00Z", "2026-10-13T09:61:00Z", "2026-10", "2026-10-13T09:41:07ZZ",
])
def test_parse_ts_refuses_invalid(text):
    with pytest.raises(InvalidArgument):
        parse_ts(text)


@pytest.mark.parametrize("text", ["20261013", "2026-W41-1", "20261013T094107Z",
                                  "2026-10-13X09:41:07Z"])
def test_parse_ts_refuses_other_iso8601_forms(text):
    with pytest.raises(InvalidArgument):
        parse_ts(text)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789-T:Z ZtT\u0663\u00b2+.", min_size=18, max_size=22)
       | st.datetimes(timezones=st.just(UTC)).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
       | st.from_regex(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", fullmatch=True))
def test_parse_ts_reads_the_stored_form_as_the_general_rule_does(text):
    """The stored form (``now``'s) has a short way that compiles no expression: it gives
    what the general rule gives, or refuses what it refuses, Unicode digits included."""
    try:
        general: datetime | None = model._parse_any_ts(text)
    except InvalidArgument:
        general = None
    if general is None:
        with pytest.raises(InvalidArgument):
            parse_ts(text)
    else:
        assert parse_ts(text) == general


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="0123456789-T:Z ZtT\u0663\u00b2+.", min_size=18, max_size=22)
       | st.datetimes(timezones=st.just(UTC)).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
       | st.from_regex(r"\d{4}-(0\d|1[0-3])-[0-3]\dT[0-2]\d:[0-6]\d:[0-6]\dZ", fullmatch=True)
       | st.none() | st.integers())
def test_ts_seconds_is_the_sort_keys_timestamp(text):
    """``ts_seconds`` (a list's local times, the index's time column) reads a stored-form
    stamp without a datetime of its own: the same seconds, 0 for whatever is malformed
    (February 30th, hour 24, second 60, Unicode digits)."""
    assert model.ts_seconds(text) == model.ts_key(text).timestamp()
    assert model.ts_seconds(text) == model.ts_key(text).timestamp()  # (the day, read once, again)


def test_ts_key_sorts_malformed_timestamps_as_oldest():
    assert model.ts_key("garbage") < model.ts_key("1971-01-01T00:00:00Z")
    assert model.ts_key(None) == model.ts_key(12345)
    assert model.ts_key(T1) == parse_ts(T1)


# --- keys, stores, tags ---------------------------------------------------------------------

@pytest.mark.parametrize("key", [
    "", " ", "a b", " lead", "trail ", "a\tb", "a\nb", "a\rb", "a\x00b", "a\x07b", "a\x1bb",
    "a\u00a0b", "a\u2028b", "a\u200bb", "\x7f",
])
def test_validate_key_refuses_empty_whitespace_and_control(key):
    with pytest.raises(InvalidArgument):
        validate_key(key)


@pytest.mark.parametrize("key", ["current_focus", "decision_db_pool_2026_10_13", "k", "a1_b2",
                                 "Mixed-Case.key", "schlüssel"])
def test_validate_key_accepts(key):
    assert validate_key(key) == key


def test_validate_store():
    for name in ("operator", "shared", "agent"):
        assert model.validate_store(name) == name
    for name in ("Shared", "", "memory", "shared.json"):
        with pytest.raises(InvalidArgument):
            model.validate_store(name)


def test_validate_tags():
    assert model.validate_tags(None) is None
    assert model.validate_tags(["b", "a", "b"]) == ["b", "a"]
    for bad in ([""], ["ok", "  "]):
        with pytest.raises(InvalidArgument):
            model.validate_tags(bad)


def test_status_label():
    assert model.status_label({}) == ""
    assert model.status_label({"status": "resolved"}) == "resolved"
    assert model.status_label({"status": "superseded", "superseded_by": "k2"}) == "superseded by k2"


# --- apply_set (§4.2) -----------------------------------------------------------------------

def test_apply_set_new_entry_defaults_without_author():
    entry = apply_set(None, "v", author=None, when=T1)
    assert entry == {"value": "v", "source": "operator", "basis": "inferred", "scope": "global",
                     "tags": [], "created": T1, "timestamp": T1}
    assert list(entry) == ["value", "source", "basis", "scope", "tags", "created", "timestamp"]


def test_apply_set_new_entry_with_author_defaults_source_agent():
    entry = apply_set(None, {"n": 1}, author="Agent One", when=T1)
    assert entry["source"] == "agent"
    assert entry["author"] == "Agent One"
    assert entry["value"] == {"n": 1}


def test_apply_set_new_entry_given_fields():
    entry = apply_set(None, "v", author="Agent One", when=T1, source="operator", basis="verified",
                      scope="session", tags=["a", "b"], derivation="ran it")
    assert entry["source"] == "operator"   # an explicit source wins
    assert entry["basis"] == "verified"
    assert entry["scope"] == "session"
    assert entry["tags"] == ["a", "b"]
    assert entry["derivation"] == "ran it"
    assert entry["created"] == entry["timestamp"] == T1
    assert "status" not in entry


@pytest.mark.parametrize("field, bad", [("source", "human"), ("basis", "guessed"),
                                        ("scope", "project")])
def test_apply_set_refuses_invalid_choices(field, bad):
    with pytest.raises(InvalidArgument):
        apply_set(None, "v", author=None, when=T1, **{field: bad})


def _old_entry() -> dict:
    return {
        "value": "old value",
        "source": "operator",
        "author": "Old Author",
        "x_custom": {"keep": [1, 2]},          # a field ctx does not know, in the middle
        "basis": "verified",
        "scope": "session",
        "tags": ["t1", "t2"],
        "derivation": "how the old value was reached",
        "created": T0,
        "timestamp": T0,
        "status": "superseded",
        "status_timestamp": T0,
        "status_note": "old note",
        "superseded_by": "other_key",
        "x_trailing": "also kept",
    }


def test_apply_set_existing_fields_not_given():
    old = _old_entry()
    pristine = copy.deepcopy(old)
    new = apply_set(old, "new value", author=None, when=T1)
    assert old == pristine, "the old entry must not be changed in place"
    assert new["value"] == "new value"
    assert new["created"] == T0                      # kept
    assert new["timestamp"] == T1                    # now
    assert new["basis"] == "verified"                # kept (§3.5)
    assert new["scope"] == "session"                 # kept
    assert new["tags"] == ["t1", "t2"]               # kept
    assert new["source"] == "operator"               # the default again (no author)
    assert "derivation" not in new                   # removed
    for field in ("status", "status_timestamp", "status_note", "superseded_by"):
        assert field not in new                      # cleared (§3.6)
    assert new["x_custom"] == {"keep": [1, 2]}       # unknown fields kept
    assert new["x_trailing"] == "also kept"
    assert "author" not in new                       # the old author did not write this


def test_apply_set_existing_source_defaults_again_not_kept():
    old = _old_entry()                               # source operator
    new = apply_set(old, "reworded", author="Agent One", when=T1)
    assert new["source"] == "agent"
    assert new["author"] == "Agent One"
    old["source"] = "agent"
    assert apply_set(old, "by hand", author=None, when=T1)["source"] == "operator"


def test_apply_set_existing_fields_given_replace():
    new = apply_set(_old_entry(), "v2", author="Agent Two", when=T1, source="both",
                    basis="reported", scope="global", tags=["t3"], derivation="new reasoning")
    assert new["source"] == "both"
    assert new["basis"] == "reported"
    assert new["scope"] == "global"
    assert new["tags"] == ["t3"]
    assert new["derivation"] == "new reasoning"
    assert new["author"] == "Agent Two"
    assert new["created"] == T0


def test_apply_set_existing_empty_tags_given_replaces_with_none():
    assert apply_set(_old_entry(), "v", author=None, when=T1, tags=[])["tags"] == []


def test_apply_set_existing_preserves_field_order():
    old = _old_entry()
    new = apply_set(old, "v2", author="Agent", when=T1, derivation="d")
    survivors = [k for k in old if k in new]
    assert list(new)[:len(survivors)] == survivors
    assert list(new) == survivors                    # nothing appended: author and derivation existed


def test_apply_set_existing_created_missing_is_filled():
    old = {"value": "v", "source": "agent", "basis": "inferred", "scope": "global", "tags": []}
    assert apply_set(old, "v2", author=None, when=T1)["created"] == T1


# --- apply_status (§3.6) ---------------------------------------------------------------------

def _plain(value="the port is 8080", **extra) -> dict:
    entry = {"value": value, "source": "agent", "author": "Agent One", "basis": "verified",
             "scope": "global", "tags": ["t"], "created": T0, "timestamp": T0}
    entry.update(extra)
    return entry


def test_amend_prepends_dated_note_and_newline():
    old = _plain()
    pristine = copy.deepcopy(old)
    new = apply_status(old, "amended", author=None, when=T1, note="it is 8443")
    assert old == pristine
    assert new["value"] == "[Amended 2026-10-13: it is 8443]\nthe port is 8080"
    assert new["status"] == "amended"
    assert new["status_note"] == "it is 8443"
    assert new["status_timestamp"] == T1
    assert new["timestamp"] == T1
    assert new["created"] == T0
    assert new["basis"] == "verified"


@pytest.mark.parametrize("value, text", [
    ({"port": 8080, "host": "ü"}, '{"port":8080,"host":"ü"}'),
    ([1, 2], "[1,2]"),
    (8080, "8080"),
    (True, "true"),
    (None, "null"),
])
def test_amend_non_string_value_becomes_its_json_text(value, text):
    new = apply_status(_plain(value), "amended", author=None, when=T1, note="n")
    assert isinstance(new["value"], str)
    assert new["value"] == "[Amended 2026-10-13: n]\n" + text


def test_amend_stacks_notes_newest_first():
    first = apply_status(_plain(), "amended", author=None, when=T1, note="first")
    second = apply_status(first, "amended", author=None, when=T2, note="second")
    assert second["value"] == ("[Amended 2026-10-14: second]\n[Amended 2026-10-13: first]\n"
                               "the port is 8080")
    assert second["status_note"] == "second"
    assert second["status_timestamp"] == T2


def test_amend_needs_a_note():
    with pytest.raises(InvalidArgument):
        apply_status(_plain(), "amended", author=None, when=T1, note="")


def test_supersede_sets_superseded_by_and_keeps_value():
    new = apply_status(_plain(), "superseded", author=None, when=T1, by="k_new", note="faster")
    assert new["value"] == "the port is 8080"
    assert new["status"] == "superseded"
    assert new["superseded_by"] == "k_new"
    assert new["status_note"] == "faster"
    assert new["timestamp"] == new["status_timestamp"] == T1


def test_supersede_needs_by():
    with pytest.raises(InvalidArgument):
        apply_status(_plain(), "superseded", author=None, when=T1)


def test_resolve_keeps_value():
    new = apply_status(_plain(), "resolved", author=None, when=T1, note="fixed")
    assert new["value"] == "the port is 8080"
    assert new["status"] == "resolved" and new["status_note"] == "fixed"
    assert "superseded_by" not in new


def test_new_status_replaces_old_whole():
    superseded = apply_status(_plain(), "superseded", author=None, when=T1, by="k2", note="old note")
    resolved = apply_status(superseded, "resolved", author=None, when=T2)
    assert resolved["status"] == "resolved"
    assert "status_note" not in resolved            # no note: absent, not the old one
    assert "superseded_by" not in resolved          # only with superseded
    assert resolved["status_timestamp"] == T2
    amended = apply_status(superseded, "amended", author=None, when=T2, note="fix")
    assert "superseded_by" not in amended
    assert amended["status_note"] == "fix"


def test_status_author_set_when_known_kept_when_not():
    assert apply_status(_plain(), "resolved", author="Agent Two", when=T1)["author"] == "Agent Two"
    assert apply_status(_plain(), "resolved", author=None, when=T1)["author"] == "Agent One"
    anonymous = _plain()
    del anonymous["author"]
    assert "author" not in apply_status(anonymous, "resolved", author=None, when=T1)


def test_status_keeps_unknown_fields_and_order():
    old = _plain(x_custom="kept")
    new = apply_status(old, "resolved", author=None, when=T1, note="n")
    assert new["x_custom"] == "kept"
    assert list(new)[:len(old)] == list(old)


def test_apply_status_refuses_unknown_status():
    with pytest.raises(InvalidArgument):
        apply_status(_plain(), "deleted", author=None, when=T1)


# --- apply_basis (§4.4) ---------------------------------------------------------------------

def test_apply_basis_changes_basis_not_timestamp():
    old = _plain(basis="inferred")
    new = apply_basis(old, "verified", author=None)
    assert new["basis"] == "verified"
    assert new["timestamp"] == T0 and new["created"] == T0
    assert new["author"] == "Agent One"             # kept: none known
    assert old["basis"] == "inferred"
    assert {k: v for k, v in new.items() if k != "basis"} == \
        {k: v for k, v in old.items() if k != "basis"}


def test_apply_basis_sets_author_when_known():
    assert apply_basis(_plain(), "reported", author="Agent Three")["author"] == "Agent Three"


def test_apply_basis_refuses_invalid():
    with pytest.raises(InvalidArgument):
        apply_basis(_plain(), "certain", author=None)


# --- strip_amend_notes ------------------------------------------------------------------------

def test_strip_amend_notes_removes_only_leading_notes():
    text = "[Amended 2026-10-14: b [x]]\n[Amended 2026-10-13: a]\nvalue [Amended 2026-10-12: c]\nend"
    assert strip_amend_notes(text) == "value [Amended 2026-10-12: c]\nend"
    assert strip_amend_notes("no notes") == "no notes"
    assert strip_amend_notes("[Amended soon: x]\nv") == "[Amended soon: x]\nv"


# --- the string checks that replaced expressions on every write ------------------------------

@settings(max_examples=500, deadline=None)
@given(st.text("-0123456789٣²a.", max_size=20) | st.from_regex(r"-?(?:0|[1-9][0-9]*)", fullmatch=True))
def test_an_integer_literal_is_what_the_json_expression_says(text):
    assert model._integer_literal(text) == bool(re.fullmatch(r"-?(?:0|[1-9][0-9]*)", text))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["[Amended 2026-01-02: a]\n", "[Amended 2026-01-0x: b]\n", "[Amended ",
                                 "text", "\n", "]", " [Amended 2026-01-03: c]\n", "[Amended 2026-01-٠٢: d]\n",
                                 "[Amended 2026-01-²2: e]\n", "[Amended 2026+01-02: f]\n", ": ", "-",
                                 "[Amended 2026-01-02:x]\n", "2026-01-02", "]\n"]), max_size=8).map("".join))
def test_amend_notes_are_stripped_as_the_expression_alone_strips_them(text):
    expected = text
    while (match := re.match(r"(?s)\[Amended \d{4}-\d{2}-\d{2}: .*?\]\n", expected)):
        expected = expected[match.end():]
    assert model.strip_amend_notes(text) == expected


@settings(max_examples=300, deadline=None)
@given(st.dates())
def test_day_numbers_count_as_date_ordinals_do(day):
    """``day_number`` / ``day_text`` (the brief's DUE section counts days without datetime)."""
    number = model.day_number(day.isoformat())
    assert number == day.toordinal() - date(1970, 1, 1).toordinal()
    assert model.day_text(number) == day.isoformat()


@pytest.mark.parametrize("text", ["2023-02-29", "1900-02-29", "2026-04-31", "2026-13-01", "0000-01-01", "2026-1-01",
                                  "２０２６-01-01", "2026/01/01", ""])
def test_what_is_not_a_day_has_no_number(text):
    assert model.day_number(text) is None
