"""Hostile and bad input: keys, values, options and store files.

Property-based (hypothesis) over keys, values of every JSON shape, control
characters and NUL, option orders, invalid UTF-8 from the shell (bytes
arguments to a real process), lone surrogates; explicit cases for huge
values and for store files that are truncated, not JSON, duplicated,
another version, mis-shaped. Each gets a clear error (one line, non-zero
exit) or a documented tolerance, and no write ever replaces such a file.

Example counts are small here (25); ``CTX_RELIABILITY_EXAMPLES`` raises them
(``bench/soak.py`` does).
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from support import relutil as R

pytestmark = pytest.mark.slow  # real processes, kills, full disks, many examples

EXAMPLES = int(os.environ.get("CTX_RELIABILITY_EXAMPLES") or 25)
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=False,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])
MAX_SAFE = 2**53 - 1


def _context(root, author=None):
    from ctxgit.recorder import recorder_for
    from support.contexts import Context
    return Context(root, author=author, recorder_factory=recorder_for)


def _committed(root, store="shared") -> bytes:
    return R.git(root, "show", f"HEAD:memory/{store}.json").stdout


def _key_is_valid(key: str) -> bool:
    import unicodedata
    return bool(key) and not any(c.isspace() or unicodedata.category(c).startswith("C") for c in key)


def _tag_is_valid(tag: str) -> bool:
    """A tag is one line of visible text: spaces, but no other whitespace and no control."""
    import unicodedata
    return bool(tag.strip()) and not any((c.isspace() and c != " ") or unicodedata.category(c).startswith("C")
                                         for c in tag)


# --- keys and values through the library ------------------------------------------------------------

@PROPERTY
@given(key=st.text(max_size=30), author=st.sampled_from([None, "Agent Keys"]))
def test_any_key_is_refused_clearly_or_round_trips(root, key, author):
    from ctx.errors import CredentialRefused, InvalidArgument
    ctx = _context(root, author)
    path = R.store_file(root, "shared")
    before = path.read_bytes() if path.exists() else None
    try:
        ctx.set(key, "value of a hostile key")
    except InvalidArgument as refused:
        assert not _key_is_valid(key), f"a valid key refused: {key!r}: {refused}"
        assert (path.read_bytes() if path.exists() else None) == before
        return
    except CredentialRefused:
        assert (path.read_bytes() if path.exists() else None) == before
        return
    assert _key_is_valid(key), f"an invalid key accepted: {key!r}"
    assert _context(root).get(key)["value"] == "value of a hostile key"
    assert json.loads(path.read_bytes())["entries"][key]["value"] == "value of a hostile key"
    assert _committed(root) == path.read_bytes()


JSON_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-MAX_SAFE, max_value=MAX_SAFE)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text())
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@PROPERTY
@given(steps=st.lists(st.tuples(st.sampled_from(["a", "b", "c_ü"]), st.sampled_from(R.STORES), JSON_VALUES),
                      min_size=1, max_size=4))
def test_any_json_value_round_trips_and_the_file_is_exactly_the_full_serialization(root, steps):
    """Every JSON shape, with control characters and NUL in strings: stored as given,
    read back equal, committed as on disk, and the spliced file byte-identical to a
    full serialization of its content (§8.2's layout)."""
    from ctx.errors import CredentialRefused
    from ctx.storage.textlayout import serialize
    for key, store, value in steps:
        try:
            _context(root, "Agent Values").set(key, value, store=store)
        except CredentialRefused:
            continue
        assert _context(root).get(key, store)["value"] == value
        raw = R.store_file(root, store).read_bytes()
        data = json.loads(raw.decode("utf-8"))
        assert data["entries"][key]["value"] == value
        assert serialize(data) == raw
        assert _committed(root, store) == raw


@pytest.mark.parametrize("field", ["value", "derivation", "tags", "note"])
def test_a_lone_surrogate_is_refused_as_an_invalid_argument(root, field):
    """(BUG-8, fixed in a74c462: the write died of UnicodeEncodeError.)"""
    from ctx.errors import InvalidArgument
    ctx = _context(root)
    ctx.set("k", "fine")
    before = R.store_file(root, "shared").read_bytes()
    with pytest.raises(InvalidArgument):
        if field == "note":
            ctx.amend("k", "bad \udcff note")
        else:
            ctx.set("k", *(["bad \udcff value"] if field == "value" else ["fine"]),
                    **({"derivation": "bad \udcff"} if field == "derivation" else
                       {"tags": ["bad\udcff"]} if field == "tags" else {}))
    assert R.store_file(root, "shared").read_bytes() == before


# --- the command line: words, options and their orders ----------------------------------------------

def _expected_value(text: str):
    """§9.1, written out independently of ctx/model.py."""
    if text in ("true", "false", "null"):
        return json.loads(text)
    if re.fullmatch(r"-?(0|[1-9][0-9]*)", text):
        return int(text) if abs(int(text)) <= MAX_SAFE else text
    stripped = text.strip()
    if stripped[:1] in "{[" and stripped[-1:] in "}]" and stripped:
        def finite(number: str) -> float:
            value = float(number)
            if not math.isfinite(value):
                raise ValueError(number)
            return value

        def no_constants(name: str):
            raise ValueError(name)
        try:
            return json.loads(stripped, parse_float=finite, parse_constant=no_constants)
        except (ValueError, RecursionError):
            return text
    return text


ARG_CHARS = st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00")
WORD = st.text(ARG_CHARS, min_size=1, max_size=12)
JSON_WORDS = st.builds(lambda v: [json.dumps(v, ensure_ascii=False)], JSON_VALUES)
NUMBER_WORDS = st.builds(lambda n: [str(n)], st.integers(min_value=-2**60, max_value=2**60))
KEY_CHARS = st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters="\x00")


@st.composite
def command_lines(draw):
    """A ``ctx set`` command line: key, words, options in any order and form."""
    key = draw(st.text(KEY_CHARS, min_size=1, max_size=12) | st.sampled_from(["", "two words", "tab\tkey"]))
    words = draw(st.lists(WORD, min_size=1, max_size=4) | JSON_WORDS | NUMBER_WORDS
                 | st.sampled_from([["true"], ["null"], ["1.10"], ["007"], ["1e999"], ["NaN"], ["-5"],
                                    ["9007199254740993"], ["[1e999]"], ["{\"a\":", "1}"]]))
    options: dict = {}
    if draw(st.booleans()):
        options["--store"] = draw(st.sampled_from(R.STORES))
    for name, choices in (("--source", ["operator", "agent", "both", "system"]),
                          ("--basis", ["verified", "reported", "inferred"]), ("--scope", ["global", "session"])):
        if draw(st.booleans()):
            options[name] = draw(st.sampled_from(choices))
    if draw(st.booleans()):
        options["--derivation"] = draw(st.text(ARG_CHARS, min_size=1, max_size=20))
    tags = draw(st.lists(st.text(ARG_CHARS, min_size=1, max_size=8), max_size=3))
    rendered = []
    for name, value in options.items():
        form = draw(st.sampled_from(["split", "equals"] + (["short"] if name == "--store" else [])))
        rendered.append([f"{name}={value}"] if form == "equals" else ["-s" if form == "short" else name, value])
    rendered += [[f"--tag={t}"] if draw(st.booleans()) else ["--tag", t] for t in tags]
    if draw(st.booleans()):
        rendered.append(["--json"])
    dash = draw(st.booleans()) or any(w.startswith("-") and not re.match(r"-\d", w) for w in words) \
        or key.startswith("-")
    before, between, after = [], [], []
    for option in rendered:
        # an option whose value starts with "-" is still the option's value
        (before if dash else draw(st.sampled_from([before, between, after]))).append(option)
    if dash:  # `--` ends the options: key and words after it, options before it
        args = [a for o in before for a in o] + ["--", key] + words
    else:
        args = [a for o in before for a in o] + [key] + [a for o in between for a in o] + words \
            + [a for o in after for a in o]
    wedge = len(words) >= 2 and not dash and draw(st.integers(0, 4)) == 0
    if wedge:  # an option between the value's words: an error
        at = len([a for o in before for a in o]) + 1 + len([a for o in between for a in o]) + 1
        args = args[:at] + ["--tag", "wedged"] + args[at:]
    in_order = [o[0].split("=", 1)[1] if len(o) == 1 else o[1] for o in before + between + after
                if o[0].startswith("--tag")]  # the tags in the order they stand on the line
    return dict(key=key, words=words, options=options, tags=in_order, wedge=wedge, args=args,
                as_json=["--json"] in rendered, slow=draw(st.booleans()),
                author=draw(st.sampled_from([None, "Agent Options"])))


@PROPERTY
@given(line=command_lines())
def test_set_with_any_words_options_and_order(root, line):
    from ctx.credentials import scan
    key, words, options, tags, args, author = (line[k] for k in ("key", "words", "options", "tags", "args", "author"))
    text = " ".join(words)
    assume(not scan(text) and not scan(options.get("--derivation", "")) and not scan(key)
           and not any(scan(t) for t in tags))
    store = options.get("--store", "shared")
    path = R.store_file(root, store)
    before = path.read_bytes() if path.exists() else None
    old = R.read_entries(root, store).get(key, {})
    env = R.ctx_env(root, author=author, CTX_SLOW_PATH="1" if line["slow"] else None)
    done = R.run_ctx(["set", *args], env)
    invalid = not _key_is_valid(key) or not all(map(_tag_is_valid, tags)) or line["wedge"]
    if invalid:
        assert done.returncode == 2 and R.one_line_error(done) is None, done.describe()
        assert (path.read_bytes() if path.exists() else None) == before
        return
    assert done.returncode == 0, done.describe()
    entry = R.read_entries(root, store)[key]
    assert entry["value"] == _expected_value(text), done.describe()
    # §4.2: a new key gets the defaults; an existing one keeps basis, scope and tags not given
    assert entry["source"] == options.get("--source", "agent" if author else "operator")
    assert entry["basis"] == options.get("--basis", old.get("basis", "inferred"))
    assert entry["scope"] == options.get("--scope", old.get("scope", "global"))
    assert entry["tags"] == (list(dict.fromkeys(tags)) if tags else old.get("tags", []))
    assert entry.get("derivation") == options.get("--derivation")
    assert entry.get("author") == author and "status" not in entry
    if line["as_json"]:
        assert json.loads(done.stdout)["entry"] == entry
    assert _committed(root, store) == path.read_bytes()


# --- invalid UTF-8 from the shell ----------------------------------------------------------------------

BAD_BYTES = st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3(", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80",
                             b"\x80", b"\xe2\x82"])
SAFE_BYTES = st.text(st.characters(min_codepoint=0x61, max_codepoint=0x7a), max_size=5).map(str.encode)


@st.composite
def bad_command_lines(draw):
    bad = draw(SAFE_BYTES) + draw(BAD_BYTES) + draw(SAFE_BYTES)
    where = draw(st.sampled_from(["key", "value", "tag", "derivation", "note", "get", "search", "store"]))
    if where == "key":
        return where, [b"set", b"k" + bad, b"value"]
    if where == "value":
        return where, [b"set", b"k", b"good", bad]
    if where == "tag":
        return where, [b"set", b"k", b"value", b"--tag", bad]
    if where == "derivation":
        return where, [b"set", b"k", b"value", b"--derivation", bad]
    if where == "note":
        return where, [b"amend", b"existing", bad]
    if where == "store":
        return where, [b"set", b"k", b"value", b"--store", bad]
    return where, [where.encode(), bad]


@PROPERTY
@given(line=bad_command_lines())
def test_invalid_utf8_arguments_never_write_nor_crash(root, line):
    where, args = line
    env = R.ctx_env(root, author="Agent Bytes")
    if not R.store_file(root, "shared").exists():
        assert R.run_ctx(["set", "existing", "before"], env).returncode == 0
    before = R.store_file(root, "shared").read_bytes()
    head = R.head(root)
    done = R.run_ctx(args, env)
    assert done.returncode > 0, done.describe()
    assert "Traceback" not in done.stderr and done.stderr.strip(), done.describe()
    assert R.store_file(root, "shared").read_bytes() == before
    assert R.head(root) == head


@pytest.mark.parametrize("args", [[b"set", b"k", b"v\xff"], [b"set", b"k", b"v", b"--tag", b"t\xff"],
                                  [b"set", b"k", b"v", b"--derivation", b"d\xc3("], [b"amend", b"existing", b"\xff"],
                                  [b"get", b"k\xff"], [b"search", b"\xff"]],
                         ids=["value", "tag", "derivation", "note", "get", "search"])
def test_invalid_utf8_arguments_get_a_clear_error(root, args):
    """(BUG-8, fixed in a74c462: 'internal error: UnicodeEncodeError', exit 6.)"""
    env = R.ctx_env(root, author="Agent Bytes")
    assert R.run_ctx(["set", "existing", "before"], env).returncode == 0
    done = R.run_ctx(args, env)
    assert R.one_line_error(done) is None, done.describe()
    assert done.returncode in (1, 2), done.describe()


# --- NUL, control characters and huge values through the command line ------------------------------------

def test_control_characters_and_nul_round_trip_through_the_command_line(root):
    env = R.ctx_env(root, author="Agent Control")
    cases = {
        "controls": "a\x01b\x1b[31mred\x7f\u2028\u2029\ufeff\u202e end",
        "tabs_and_newlines": "line one\nline two\r\n\ttabbed",
        "nul_in_json": ["a\x00b", {"\x00": "\x1f"}],
        "emoji_combining": "e\u0301 \U0001F600 \u200d",
    }
    for key, value in cases.items():
        word = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
        done = R.run_ctx(["set", key, word], env)
        assert done.returncode == 0, done.describe()
        got = R.run_ctx(["get", key, "--json"], env)
        assert got.returncode == 0, got.describe()
        assert json.loads(got.stdout)["entry"]["value"] == value
        assert R.read_entries(root, "shared")[key]["value"] == value
    assert not R.inspect_root(root, committed=True)
    search = R.run_ctx(["search", "\x1b[31mred"], env)
    assert search.returncode == 0 and "controls" in search.stdout, search.describe()


def test_a_one_megabyte_value_through_the_command_line_and_the_library(root):
    env = R.ctx_env(root, author="Agent Huge")
    words = [f"{i:02d}" + "abcdefghij" * 11_500 for i in range(9)]  # each under Linux's 128 KiB per argument
    value = " ".join(words)
    assert len(value.encode()) > 1_000_000
    done = R.run_ctx(["set", "huge", *words], env)
    assert done.returncode == 0 and done.seconds < 20, done.describe()
    got = R.run_ctx(["get", "huge", "--json"], env)
    assert json.loads(got.stdout)["entry"]["value"] == value
    _context(root, "Agent Huge").set("huge_too", {"blob": "ü" * 600_000, "n": list(range(1000))}, store="agent")
    assert _context(root).get("huge_too", "agent")["value"]["blob"] == "ü" * 600_000
    small = R.run_ctx(["set", "small", "after the huge ones"], env)
    assert small.returncode == 0 and small.seconds < 5, small.describe()
    assert not R.inspect_root(root, committed=True)


def test_a_large_value_of_keyword_like_text_is_scanned_in_reasonable_time(root):
    """(BUG-11, fixed in a74c462: the credential scan was quadratic on runs like
    'secret.token-secret.token-...': 117 KB took half a minute, partly in the lock.)"""
    env = R.ctx_env(root, author="Agent Huge")
    assert R.run_ctx(["set", "seed", "v"], env).returncode == 0
    words = ["secret.token-" * 9000] * 8  # about 940 KB, each word under Linux's 128 KiB per argument
    try:
        done = R.run_ctx(["set", "log_excerpt", *words], env, timeout=15)
    except subprocess.TimeoutExpired:
        pytest.fail("a 940 KB value was still being checked for credentials after 15 s")
    assert done.returncode in (0, 4), done.describe()
    assert done.seconds < 10, f"the credential check of a 940 KB value took {done.seconds:.1f} s"


_DEPTHS = r'''
import io, json, sys
from ctx.cli import fast as fastcli
from ctx.cli.run import invoke
from ctx.cli.table_entries import fast_commands

def run(name, values):
    return invoke(fast_commands()[name], values)

def main():  # as deep in the stack as the console script's main() -> invoke()
    status = {}
    for depth in range(int(sys.argv[1]), int(sys.argv[2])):
        text = "[" * depth + "]" * depth
        err = io.StringIO()
        sys.stderr, saved = err, sys.stderr
        try:
            code = run("set", fastcli.parse("set", [f"deep{depth}", text]))
            status[depth] = [code, err.getvalue()]
            if code == 0:  # keep the store small: a deep array pretty-printed is about depth**2 bytes
                run("delete", fastcli.parse("delete", [f"deep{depth}"]))
        finally:
            sys.stderr = saved
    print(json.dumps(status))

main()
'''


def test_deeply_nested_values_are_stored_or_refused_clearly(root):
    """(BUG-10, fixed in a74c462: JSON nested just under the parser's limit parsed but could
    not be written back: 'internal error: RecursionError'.)"""
    env = R.ctx_env(root, author="Agent Deep")
    assert R.run_ctx(["set", "seed", "v"], env).returncode == 0
    done = subprocess.run([sys.executable, "-c", _DEPTHS, "965", "1001"], env=dict(env, CTX_NO_GIT="1"),
                          capture_output=True, text=True, timeout=120, cwd=env["HOME"])
    assert done.returncode == 0, done.stderr
    statuses = json.loads(done.stdout.splitlines()[-1])
    problems = {d: s for d, s in statuses.items() if s[0] != 0 and (s[0] == 6 or "internal error" in s[1])}
    assert R.run_ctx(["list", "--keys-only"], env).returncode == 0, "ctx wrote a store it cannot read back"
    assert not problems, (f"depths ending in an internal error: {sorted(problems)[:3]}..: "
                          f"{next(iter(problems.values()))}")


# --- store files that are not what they should be -------------------------------------------------------------

GOOD_ENTRY = {"value": "A", "source": "agent", "basis": "inferred", "scope": "global", "tags": [],
              "created": "2026-01-01T00:00:00Z", "timestamp": "2026-01-01T00:00:00Z"}
GOOD = {"type": "shared", "version": "1", "last_updated": "2026-01-01T00:00:00Z", "entries": {"a": GOOD_ENTRY}}
GOOD_TEXT = json.dumps(GOOD, indent=2) + "\n"


def _without(field: str) -> bytes:
    data = json.loads(GOOD_TEXT)
    del data["entries"]["a"][field]
    return (json.dumps(data, indent=2) + "\n").encode()


REFUSED = {  # every write refuses these with a clear error; reads say what is wrong or read them (version)
    "truncated": GOOD_TEXT[:len(GOOD_TEXT) // 2].encode(),
    "empty": b"",
    "not-json": b"these are notes, not a store\n",
    "top-level-array": b"[]\n",
    "entries-a-list": b'{"type": "shared", "version": "1", "entries": [{"value": "A"}]}\n',
    "entry-a-number": b'{"type": "shared", "version": "1", "entries": {"a": 5}}\n',
    "version-2": GOOD_TEXT.replace('"version": "1"', '"version": "2"').encode(),
    "version-missing": GOOD_TEXT.replace('  "version": "1",\n', "").encode(),
    "type-of-another-store": GOOD_TEXT.replace('"type": "shared"', '"type": "agent"').encode(),
    "byte-order-mark": b"\xef\xbb\xbf" + GOOD_TEXT.encode(),
    "latin-1": GOOD_TEXT.replace('"A"', '"\xe9"').encode("latin-1"),
    "duplicate-entries-member": GOOD_TEXT.replace('\n}\n', ',\n  "entries": {}\n}\n').encode(),  # BUG-5, fixed
    "nested-too-deep": b'{"type": "shared", "version": "1", "entries": {"a": {"value": '
                       + b"[" * 5000 + b"]" * 5000 + b"}}}",
}
READABLE = {"version-2", "version-missing", "type-of-another-store"}

BUGGY = {
    "duplicate-entry-key": (GOOD_TEXT.replace('"entries": {', '"entries": {\n    "a": {"value": "shadowed"},', 1)
                            .encode(), "BUG-5"),
    "nan-value": (GOOD_TEXT.replace('"value": "A"', '"value": NaN').encode(), "BUG-6"),
    "entry-without-value": (_without("value"), "BUG-7"),
    "entry-without-source": (_without("source"), "BUG-7"),
}
BUG_REASONS = {
    "BUG-5": "BUG-5: a store file with a duplicate entry key is accepted (ctx/store.py parse_store: json.loads "
             "keeps the last; a74c462 refuses only a duplicate top-level key) and rewritten: the "
             "shadowed duplicate is dropped without a word",
    "BUG-7": "BUG-7: an entry missing required fields (value, source…) is neither refused nor a documented "
             "tolerance: it reads as value null dated 1970, writes replace the file around it, and amend turns "
             "the missing value into the text 'null'",
}

WRITES = [["set", "newkey", "new value"], ["set", "a", "changed"], ["amend", "a", "a note"], ["delete", "a"]]


def _check_refused(root, raw: bytes, writes=WRITES, other_store: bool = True) -> None:
    env = R.ctx_env(root, author="Agent Hostile")
    assert R.run_ctx(["set", "seed", "v", "--store", "agent"], env).returncode == 0
    path = R.store_file(root, "shared")
    path.write_bytes(raw)
    for args in writes:
        done = R.run_ctx(args, env)
        assert done.returncode == 3 and R.one_line_error(done) is None, done.describe()
        assert path.read_bytes() == raw, f"{args} replaced the file"
    if other_store:  # a write to another store goes through and leaves this file alone
        other = R.run_ctx(["set", "elsewhere", "v", "--store", "agent"], env)
        assert other.returncode == 0, other.describe()
        assert path.read_bytes() == raw


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_bad_store_file_is_never_replaced(root, case):
    raw = REFUSED[case]
    _check_refused(root, raw, WRITES[:1] + (WRITES[2:3] if case in ("truncated", "version-2") else []),
                   other_store=case in ("truncated", "version-2", "entries-a-list", "latin-1"))
    got = R.run_ctx(["get", "a"], R.ctx_env(root))
    if case in READABLE:  # §8.2: another version MAY be read, MUST NOT be written
        assert got.returncode == 0 and "A" in got.stdout, got.describe()
    else:
        assert got.returncode == 3 and R.one_line_error(got) is None, got.describe()
        brief = R.run_ctx(["brief"], R.ctx_env(root))  # the brief never fails; it names the file
        assert brief.returncode == 0 and "shared.json" in brief.stdout, brief.describe()
    doctor = R.run_ctx(["doctor", "--check"], R.ctx_env(root))
    assert doctor.returncode != 0 and "shared.json" in doctor.stdout, doctor.describe()
    assert R.store_file(root, "shared").read_bytes() == raw


def test_doctor_reports_a_store_file_of_another_type(root):
    """(BUG-12, fixed in a74c462: doctor checked the version, not the type.)"""
    _check_refused(root, REFUSED["type-of-another-store"], WRITES[:1])
    doctor = R.run_ctx(["doctor", "--check"], R.ctx_env(root))
    assert doctor.returncode != 0 and "shared.json" in doctor.stdout, doctor.describe()


@pytest.mark.parametrize("case", sorted(BUGGY))
def test_a_store_file_with_duplicates_nan_or_missing_fields_is_never_replaced(root, case, request):
    raw, bug = BUGGY[case]
    _check_refused(root, raw, WRITES[:1])


def test_a_write_that_exits_0_on_a_file_with_two_entries_members_is_readable(root):
    """(BUG-5, fixed in a74c462 for this case: `ctx set` exited 0 and committed,
    the splice wrote into the first 'entries', and reads used the last.)"""
    env = R.ctx_env(root, author="Agent Hostile")
    assert R.run_ctx(["set", "seed", "v", "--store", "agent"], env).returncode == 0
    R.store_file(root, "shared").write_bytes(REFUSED["duplicate-entries-member"])
    done = R.run_ctx(["set", "newkey", "new value"], env)
    if done.returncode == 0:
        got = R.run_ctx(["get", "newkey"], env)
        assert got.returncode == 0, f"set exited 0, then: {got.describe()}"


@st.composite
def damaged_store(draw):
    """A store file ctx wrote, damaged: truncated, a byte range cut out, bytes changed or added."""
    how = draw(st.sampled_from(["truncate", "cut", "replace", "insert"]))
    return how, draw(st.integers(0, 10**6)), draw(st.integers(1, 300)), draw(st.binary(min_size=1, max_size=6))


class Duplicates(ValueError):
    pass


def _strict(raw: bytes, store: str = "shared"):
    """A store file as a strict reader sees it (RFC 8259: no NaN; no duplicate names);
    ValueError when it is not a store ctx may write."""
    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise Duplicates("duplicate names")
        return dict(items)

    def no_constants(name):
        raise ValueError(name)
    data = json.loads(raw.decode("utf-8"), object_pairs_hook=pairs, parse_constant=no_constants)
    if not isinstance(data, dict) or not isinstance(data.get("entries", {}), dict) \
            or not all(isinstance(e, dict) for e in data.get("entries", {}).values()) \
            or data.get("version") != "1" or data.get("type") != store:
        raise ValueError("not a writable store file")
    return data


_BASELINE: dict = {}


def _baseline(root) -> bytes:
    if root not in _BASELINE:
        ctx = _context(root, "Agent Damage")
        for i in range(4):
            ctx.set(f"key{i}", {"n": i, "text": f"value {i} ü"} if i % 2 else f"value {i}", tags=["t"])
        _BASELINE[root] = R.store_file(root, "shared").read_bytes()
    return _BASELINE[root]


@PROPERTY
@given(damage=damaged_store())
def test_a_damaged_store_file_that_is_no_store_is_refused_and_left_unchanged(root, damage):
    from ctx.errors import CtxError
    how, at, length, junk = damage
    good = _baseline(root)
    at %= len(good)
    raw = {"truncate": good[:at], "cut": good[:at] + good[at + length:], "replace": good[:at] + junk
           + good[at + len(junk):], "insert": good[:at] + junk + good[at:]}[how]
    try:
        _strict(raw)
        assume(False)  # still a valid store: the next property's business
    except Duplicates:
        assume(False)  # BUG-5, tested on its own above
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass
    path = R.store_file(root, "shared")
    path.write_bytes(raw)
    with pytest.raises(CtxError):
        _context(root, "Agent Damage").set("added", "after the damage")
    assert path.read_bytes() == raw, "a refused write changed the damaged file"


def _layouts():
    """The baseline store in another valid JSON layout, as another tool or a hand edit leaves it."""
    indent = st.sampled_from([None, 0, 1, 2, 4, "\t"])
    return st.builds(lambda ind, sep, asc, extra, where, compact: (ind, sep, asc, extra, where, compact),
                     indent, st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]), st.booleans(),
                     st.dictionaries(st.sampled_from(["x-tool", "notes", "zz"]),
                                     st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=3),
                                                     min_size=1, max_size=3), max_size=2),
                     st.sampled_from(["before", "after"]), st.booleans())


def _render(data: dict, layout) -> bytes:
    indent, separators, ascii_only, extra, where, compact = layout
    top = {k: v for k, v in data.items() if k != "entries"}
    ordered = {**extra, **top, "entries": data["entries"]} if where == "before" else \
        {**top, "entries": data["entries"], **extra}
    text = json.dumps(ordered, indent=indent, separators=separators, ensure_ascii=ascii_only)
    if compact and indent is not None:  # entries on one line, the rest indented
        one_line = json.dumps(data["entries"], separators=separators, ensure_ascii=ascii_only)
        pretty = json.dumps({"entries": data["entries"]}, indent=indent, separators=separators,
                            ensure_ascii=ascii_only)[1:-1].strip()
        text = text.replace(pretty.split(separators[1], 1)[1], one_line, 1)
    return text.encode("utf-8")


# Valid store files on which the splice (ctx/splice.py) goes wrong today:
ODD_LAYOUTS = [
    # an entry's value object closing at two spaces: the splice takes it for the end of
    # "entries" and writes `{,` there: invalid JSON, committed, the store unusable
    b'{\n  "type": "shared",\n  "version": "1",\n  "last_updated": "2026-01-01T00:00:00Z",\n  "entries": {\n'
    b'    "a": {\n      "value": {\n  },\n      "source": "agent"\n    }\n  }\n}\n',
    # entries on one line, then another tool's object: the new entry lands in that object
    b'{\n  "type": "shared",\n  "version": "1",\n  "last_updated": "2026-01-01T00:00:00Z",\n'
    b'  "entries": {"a": {"value": "x", "source": "agent"}},\n  "x-other-tool": {\n    "setting": 1\n  }\n}\n',
]


def _check_written_without_loss(root, raw: bytes, op: str) -> None:
    from ctx.errors import CtxError
    path = R.store_file(root, "shared")
    path.write_bytes(raw)
    old = _strict(raw)
    ctx = _context(root, "Agent Layout")
    try:
        if op == "delete" and old["entries"]:
            gone = next(iter(old["entries"]))
            ctx.delete(gone)
            expected = {k: v for k, v in old["entries"].items() if k != gone}
        else:
            ctx.set("added", "after the edit")
            expected = dict(old["entries"])
    except CtxError as error:
        pytest.fail(f"a valid store file was refused: {error}")
    try:
        new = _strict(path.read_bytes())
    except ValueError as error:
        pytest.fail(f"ctx wrote a store file that is not valid ({error}):\n{path.read_text()[:600]}")
    got = {k: v for k, v in new["entries"].items() if k != "added"}
    assert got == expected, "entries lost or changed"
    if op != "delete":
        assert new["entries"].get("added", {}).get("value") == "after the edit", \
            f"the write exited without error but is not in the entries:\n{path.read_text()[:800]}"
    assert {k: v for k, v in new.items() if k not in ("entries", "last_updated")} == \
        {k: v for k, v in old.items() if k not in ("entries", "last_updated")}


@PROPERTY
@example(layout=None, op="set", odd=0)
@example(layout=None, op="set", odd=1)
@given(layout=_layouts(), op=st.sampled_from(["set", "delete"]), odd=st.none())
def test_a_valid_store_file_in_another_layout_is_written_without_loss(root, layout, op, odd):
    baseline = _baseline(root)  # the root, its repository, a store ctx wrote
    raw = ODD_LAYOUTS[odd] if odd is not None else _render(json.loads(baseline), layout)
    _check_written_without_loss(root, raw, op)
