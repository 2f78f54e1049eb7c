"""The command line (§9.1) through click's CliRunner: every core command,
its options, its output and its exit statuses."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest

from ctx.cli.app import ExitStatus, cli
from support.stores import make_entry, read_entries, snapshot, store_path

AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
CORE_COMMANDS = ("init", "start", "brief", "get", "set", "amend", "supersede", "resolve",
                 "basis", "delete", "search", "list")


def _ok(result):
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return result


# --- help and version -----------------------------------------------------------------------

def test_root_help_names_the_spec_and_default_root(run):
    out = _ok(run("--help")).stdout
    assert "ctx specification 1.0" in out
    assert "~/ctx" in out
    assert "CTX_HOME" in out and "CTX_AUTHOR" in out
    for command in CORE_COMMANDS:
        assert command in out


def test_short_help_option(run, click_run):
    """-h is --help, through the front door and through click's door alike."""
    assert _ok(run("-h")).stdout == _ok(run("--help")).stdout == _ok(click_run("-h")).stdout


@pytest.mark.parametrize("command", sorted(n for n, c in cli.commands.items() if not c.hidden))
def test_every_command_help_has_an_example(run, command):
    """Every listed command; hidden plumbing (git's merge driver) is not for people."""
    out = _ok(run(command, "--help")).stdout
    assert "Example" in out
    assert f"ctx {command}" in out


def test_core_commands_exist():
    assert set(CORE_COMMANDS) <= set(cli.commands)


def test_version(run):
    for flag in ("--version", "-V"):
        out = _ok(run(flag)).stdout
        assert "0.1.0" in out and "ctx specification 1.0" in out


def test_no_command_prints_usage(run):
    result = run()
    assert result.exit_code in (0, 2)
    assert "Usage" in result.output


# --- init ------------------------------------------------------------------------------------

def _mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_init_creates_the_layout_with_private_modes(run, root):
    result = _ok(run("init"))
    assert str(root) in result.stdout
    assert (root / "memory").is_dir() and (root / "sessions").is_dir()
    assert _mode(root) == 0o700
    assert _mode(root / "memory") == 0o700
    assert _mode(root / "sessions") == 0o700
    rules = root / "RULES.md"
    assert _mode(rules) == 0o600
    text = rules.read_text(encoding="utf-8")
    for rule in ("**ctx is the shared memory.**", "**Write only through `ctx`.**",
                 "**READ means read.**", "**Sign your own work.**"):
        assert rule in text
    assert "co-author trailer" in " ".join(text.split())


def test_init_twice_changes_nothing(run, root):
    _ok(run("init"))
    rules = root / "RULES.md"
    rules.write_text("# My rules\n\n- edited by the operator\n", encoding="utf-8")
    before = _files(root)
    result = _ok(run("init"))
    assert "exists" in result.stdout and "nothing changed" in result.stdout
    assert rules.read_bytes() == b"# My rules\n\n- edited by the operator\n"
    assert _files(root) == before


def _files(root):
    """The context's own files; a repository in .git may record the edit."""
    git = str(root / ".git")
    return {p: h for p, h in snapshot(root).items() if not p.startswith(git)}


def test_init_on_a_partial_root_adds_only_what_is_missing(run, root):
    root.mkdir()
    (root / "RULES.md").write_text("mine\n")
    result = _ok(run("init"))
    assert "exists" in result.stdout and "sessions/" in result.stdout
    assert (root / "RULES.md").read_text() == "mine\n"
    assert (root / "sessions").is_dir()


def test_init_focus_writes_current_focus(run, root, entries):
    result = _ok(run("init", "--focus", "Ship the upload fix", author="Agent One"))
    assert "current_focus" in result.stdout
    focus = entries()["current_focus"]
    assert focus["value"] == "Ship the upload fix"
    assert focus["source"] == "operator"
    assert focus["basis"] == "reported"
    assert focus["author"] == "Agent One"


def test_init_when_ctx_home_is_a_file(run, root):
    root.write_text("a file")
    result = run("init")
    assert result.exit_code == ExitStatus.STORE
    assert "is a file" in result.stderr and "CTX_HOME" in result.stderr
    assert root.read_text() == "a file"


# --- set and get ---------------------------------------------------------------------------------

def test_set_then_get(run, root, entries):
    result = _ok(run("set", "k_plain", "hello", "world"))
    assert "shared/k_plain" in result.stdout
    assert entries()["k_plain"]["value"] == "hello world"
    out = _ok(run("get", "k_plain")).stdout
    assert "shared/k_plain" in out and "hello world" in out
    assert "operator" in out and "inferred" in out


def test_set_words_are_joined_with_single_spaces(run, entries):
    _ok(run("set", "k", "a", "b  c", "d"))
    assert entries()["k"]["value"] == "a b  c d"


@pytest.mark.parametrize("words, stored", [
    (["-5"], -5),
    (["42"], 42),
    (["-1.5"], "-1.5"),
    (["007"], "007"),
    (["1.10"], "1.10"),
    (["NaN"], "NaN"),
    (["9007199254740993"], "9007199254740993"),
    (["true"], True),
    (["null"], None),
    (['{"port": 8443, "host": "ü"}'], {"port": 8443, "host": "ü"}),
    (["[1,", "2]"], [1, 2]),
    (['{"a": 1e999}'], '{"a": 1e999}'),
    (["1", "2"], "1 2"),
])
def test_set_value_parsing(run, entries, words, stored):
    _ok(run("set", "k", *words))
    value = entries()["k"]["value"]
    assert value == stored and type(value) is type(stored)


def test_negative_number_with_options(run, entries):
    _ok(run("set", "k", "-5", "--tag", "n", "--basis", "verified"))
    entry = entries()["k"]
    assert entry["value"] == -5 and entry["tags"] == ["n"] and entry["basis"] == "verified"


def test_set_options_before_and_after_the_words(run, entries):
    _ok(run("set", "--tag", "t1", "--store", "operator", "k", "Ask", "one", "question",
            "--source", "operator", "--basis", "reported", "--tag", "preference",
            "--scope", "session", "--derivation", "The operator said so."))
    entry = read_entries_from(entries, "operator")["k"]
    assert entry["value"] == "Ask one question"
    assert entry["tags"] == ["t1", "preference"]
    assert entry["source"] == "operator" and entry["basis"] == "reported"
    assert entry["scope"] == "session" and entry["derivation"] == "The operator said so."


def read_entries_from(entries, store):
    return entries(store)


def test_option_between_the_value_words_is_an_error(run, root):
    result = run("set", "k", "hello", "--tag", "x", "world")
    assert result.exit_code == 2
    assert "between" in result.stderr
    assert not store_path(root).exists()
    result = run("amend", "k", "one", "--store", "agent", "two")
    assert result.exit_code == 2


def test_double_dash_ends_the_options(run, entries):
    _ok(run("set", "k", "--", "--literal", "words", "-x"))
    assert entries()["k"]["value"] == "--literal words -x"
    _ok(run("set", "--tag", "t", "k2", "plain", "--", "--not-an-option"))
    assert entries()["k2"]["value"] == "plain --not-an-option"
    assert entries()["k2"]["tags"] == ["t"]


@pytest.mark.parametrize("args", [
    ["set", "k", "v", "--bogus"],
    ["set", "k", "-x"],
    ["get", "k", "--bogus"],
    ["search", "--bogus"],
    ["list", "--nope"],
    ["brief", "--weeks", "2"],
    ["start", "--verbose"],
])
def test_unknown_option_exits_2(run, args):
    result = run(*args)
    assert result.exit_code == 2
    assert "No such option" in result.stderr or "no such option" in result.stderr.lower()


@pytest.mark.parametrize("args", [
    ["set", "k", "v", "--basis", "guessed"],
    ["set", "k", "v", "--source", "human"],
    ["set", "k", "v", "--scope", "forever"],
    ["set", "k", "v", "--store", "private"],
    ["set", "k", "v", "--tag", ""],
    ["set", "k"],
    ["set", "two words", "v"],
    ["basis", "k", "guessed"],
    ["amend", "k"],
    ["amend", "k", "   "],
    ["supersede", "k"],
    ["search", "x", "--since", "yesterday"],
    ["search", "x", "--limit", "-1"],
    ["search", "two", "words"],
    ["list", "--status", "open"],
    ["brief", "--days", "-1"],
])
def test_invalid_arguments_exit_2(run, root, args):
    _ok(run("set", "k", "v"))
    before = store_path(root).read_bytes()
    result = run(*args)
    assert result.exit_code == ExitStatus.USAGE, result.output
    assert store_path(root).read_bytes() == before


@pytest.mark.parametrize("args", [
    ["get", "missing"],
    ["get", "k", "--store", "agent"],
    ["get", "missing", "--all"],
    ["amend", "missing", "a", "note"],
    ["supersede", "missing", "--by", "k"],
    ["resolve", "missing"],
    ["basis", "missing", "verified"],
    ["delete", "missing"],
])
def test_missing_key_exits_1(run, root, args):
    _ok(run("set", "k", "v"))
    before = store_path(root).read_bytes()
    result = run(*args)
    assert result.exit_code == ExitStatus.NOT_FOUND == 1
    assert result.stderr.startswith("ctx: ")
    assert "'missing'" in result.stderr or "'k'" in result.stderr
    assert result.stdout == ""
    assert store_path(root).read_bytes() == before


def test_author_and_source_from_ctx_author(run, entries):
    _ok(run("set", "k", "v", author="Agent One"))
    assert entries()["k"]["source"] == "agent" and entries()["k"]["author"] == "Agent One"
    _ok(run("set", "k", "v2", author="   "))
    assert entries()["k"]["source"] == "operator" and "author" not in entries()["k"]
    _ok(run("set", "k", "v3", "--source", "operator", author="Agent One"))
    assert entries()["k"]["source"] == "operator"


def test_set_in_other_stores_and_get_store(run, entries):
    _ok(run("set", "k", "in agent", "-s", "agent"))
    assert entries("agent")["k"]["value"] == "in agent"
    assert "agent/k" in _ok(run("get", "k", "--store", "agent")).stdout
    assert run("get", "k").exit_code == 1


# --- get displays -----------------------------------------------------------------------------------

def test_get_verbose_shows_every_field(run, write_store):
    write_store("shared", {"k": make_entry("v", tags=["a", "b"], author="Agent One",
                                           derivation="DERIVATION-TEXT", x_custom={"n": 1},
                                           status="resolved", status_note="NOTE-TEXT",
                                           status_timestamp="2026-01-02T00:00:00Z")})
    out = _ok(run("get", "k", "-v")).stdout
    for field in ("source: agent", "author: Agent One", "basis: inferred", "scope: global",
                  'tags: ["a","b"]', "derivation: DERIVATION-TEXT", "created: 2026-01-01T00:00:00Z",
                  "timestamp: 2026-01-01T00:00:00Z", "status: resolved",
                  "status_timestamp: 2026-01-02T00:00:00Z", "status_note: NOTE-TEXT",
                  'x_custom: {"n":1}'):
        assert field in out, field
    short = _ok(run("get", "k")).stdout
    assert "DERIVATION-TEXT" not in short
    assert "[resolved: NOTE-TEXT]" in short


def test_get_shows_status_and_superseded_by(run):
    _ok(run("set", "k_old", "use A"))
    _ok(run("set", "k_new", "use B"))
    _ok(run("supersede", "k_old", "--by", "k_new", "--note", "B is faster"))
    out = _ok(run("get", "k_old")).stdout
    assert "superseded by k_new" in out and "use A" in out
    assert "superseded by k_new" in _ok(run("get", "k_old", "-v")).stdout
    assert "superseded_by: k_new" in _ok(run("get", "k_old", "-v")).stdout
    _ok(run("amend", "k_new", "B", "is", "2x", "faster"))
    out = _ok(run("get", "k_new")).stdout
    assert "[amended]" in out and "B is 2x faster" in out and "use B" in out
    assert "shared/k_old [superseded by k_new" in _ok(run("search", "use")).stdout
    assert "shared/k_new [amended]" in _ok(run("list")).stdout


def test_get_all(run):
    _ok(run("set", "k", "shared one"))
    _ok(run("set", "k", "operator one", "--store", "operator"))
    out = _ok(run("get", "k", "--all")).stdout
    assert out.index("operator/k") < out.index("shared/k")


def test_get_non_string_value_is_shown_as_json(run):
    _ok(run("set", "k", '{"port": 8443}'))
    out = _ok(run("get", "k")).stdout
    assert '"port": 8443' in out


# --- --json shapes ---------------------------------------------------------------------------------

def test_json_shapes_of_reads(run):
    _ok(run("set", "k", "v1", "--tag", "t"))
    _ok(run("set", "k", "v2", "--store", "agent"))
    one = json.loads(_ok(run("get", "k", "--json")).stdout)
    assert set(one) == {"store", "key", "entry"}
    assert one["store"] == "shared" and one["key"] == "k" and one["entry"]["value"] == "v1"
    many = json.loads(_ok(run("get", "k", "--all", "--json")).stdout)
    assert [(r["store"], r["entry"]["value"]) for r in many] == [("shared", "v1"), ("agent", "v2")]
    found = json.loads(_ok(run("search", "v", "--json")).stdout)
    assert isinstance(found, list) and all(set(r) == {"store", "key", "entry"} for r in found)
    assert {(r["store"], r["key"]) for r in found} == {("shared", "k"), ("agent", "k")}
    listed = json.loads(_ok(run("list", "--tag", "t", "--json")).stdout)
    assert [(r["store"], r["key"]) for r in listed] == [("shared", "k")]
    keys = json.loads(_ok(run("list", "--keys-only", "--json")).stdout)
    assert sorted(keys, key=lambda r: r["store"]) == [{"store": "agent", "key": "k"},
                                                      {"store": "shared", "key": "k"}]
    assert json.loads(_ok(run("search", "nothing-matches", "--json")).stdout) == []


def test_json_shape_of_brief(run):
    _ok(run("set", "current_focus", "the focus"))
    brief = json.loads(_ok(run("brief", "--json")).stdout)
    assert set(brief) == {"generated", "commit", "counts", "focus", "instructions", "instructions_more", "for_you",
                          "due", "since", "open", "decisions", "changes", "sync", "warnings"}
    assert brief["since"] is None  # no CTX_AUTHOR: nobody's last session to compare with
    assert brief["counts"] == {"operator": 0, "shared": 1, "agent": 0}
    assert brief["focus"]["text"] == "the focus" and brief["focus"]["key"] == "current_focus"
    assert set(brief["open"]) == {"from", "items", "more"}
    assert set(brief["decisions"]) == {"days", "items"} and brief["decisions"]["days"] == 7


def test_json_shapes_of_writes(run):
    out = json.loads(_ok(run("set", "k", "v", "--json")).stdout)
    assert out["store"] == "shared" and out["key"] == "k" and out["entry"]["value"] == "v"
    assert out["warnings"] == []
    out = json.loads(_ok(run("amend", "k", "a", "note", "--json")).stdout)
    assert out["entry"]["status"] == "amended"
    out = json.loads(_ok(run("supersede", "k", "--by", "nope", "--json")).stdout)
    assert out["entry"]["superseded_by"] == "nope"
    assert len(out["warnings"]) == 1 and "nope" in out["warnings"][0]
    out = json.loads(_ok(run("resolve", "k", "--note", "done", "--json")).stdout)
    assert out["entry"]["status_note"] == "done" and "superseded_by" not in out["entry"]
    out = json.loads(_ok(run("basis", "k", "verified", "--json")).stdout)
    assert out["entry"]["basis"] == "verified"
    out = json.loads(_ok(run("delete", "k", "--json")).stdout)
    assert out["deleted"] is True and out["entry"]["value"].endswith("v")


# --- amend, supersede, resolve, basis, delete ------------------------------------------------------------

def test_amend_prepends_the_note(run, entries):
    _ok(run("set", "k_amend", "the port is 8080"))
    _ok(run("amend", "k_amend", "it", "is", "8443", author="Agent One"))
    entry = entries()["k_amend"]
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert entry["value"] == f"[Amended {today}: it is 8443]\nthe port is 8080"
    assert entry["status"] == "amended" and entry["status_note"] == "it is 8443"
    assert entry["author"] == "Agent One"
    _ok(run("set", "k_amend", "the port is 8443"))
    assert "status" not in entries()["k_amend"]


def test_supersede_warning_goes_to_stderr(run, entries):
    _ok(run("set", "k", "v"))
    result = _ok(run("supersede", "k", "--by", "no_such_replacement"))
    assert "warning" in result.stderr and "no_such_replacement" in result.stderr
    assert "warning" not in result.stdout
    assert entries()["k"]["superseded_by"] == "no_such_replacement"
    _ok(run("set", "k2", "v"))
    result = _ok(run("supersede", "k", "--by", "k2"))
    assert result.stderr == ""


def test_resolve_replaces_the_status_whole(run, entries):
    _ok(run("set", "k", "uploads fail"))
    _ok(run("supersede", "k", "--by", "other", "--note", "old note"))
    _ok(run("resolve", "k"))
    entry = entries()["k"]
    assert entry["status"] == "resolved" and entry["value"] == "uploads fail"
    assert "status_note" not in entry and "superseded_by" not in entry


def test_basis_keeps_the_timestamp(run, entries, write_store):
    write_store("shared", {"k": make_entry("v", when="2026-01-01T00:00:00Z")})
    result = _ok(run("basis", "k", "verified", author="Agent Three"))
    assert "verified" in result.stdout
    entry = entries()["k"]
    assert entry["basis"] == "verified" and entry["timestamp"] == "2026-01-01T00:00:00Z"
    assert entry["author"] == "Agent Three"


def test_delete(run, entries):
    _ok(run("set", "k", "v", "--store", "agent"))
    assert run("delete", "k").exit_code == 1                     # shared by default
    result = _ok(run("delete", "k", "--store", "agent"))
    assert "deleted agent/k" in result.stdout
    assert entries("agent") == {}


# --- search and list ---------------------------------------------------------------------------------------

@pytest.fixture
def listed(write_store):
    write_store("shared", {
        "k_new": make_entry("Newest VALUE", tags=["t1"], when="2026-01-05T00:00:00Z"),
        "k_old": make_entry("old value", tags=["t2"], when="2026-01-01T00:00:00Z",
                            status="resolved", status_timestamp="2026-01-02T00:00:00Z"),
        "k_obj": make_entry({"needle": "xyzzy"}, when="2026-01-03T00:00:00Z", scope="session"),
    })
    write_store("operator", {
        "k_op": make_entry("operator value", source="operator", when="2026-01-04T00:00:00Z"),
    })


def _lines(result):
    return [line.split()[0] for line in _ok(result).stdout.splitlines()]


def test_search(run, listed):
    assert _lines(run("search", "value")) == ["shared/k_new", "operator/k_op", "shared/k_old"]
    assert _lines(run("search", "VALUE", "--limit", "2")) == ["shared/k_new", "operator/k_op"]
    assert _lines(run("search", '"needle":"xyzzy"')) == ["shared/k_obj"]
    assert _lines(run("search", "k_o")) == ["operator/k_op", "shared/k_obj", "shared/k_old"]
    assert _lines(run("search")) == ["shared/k_new", "operator/k_op", "shared/k_obj", "shared/k_old"]
    assert _lines(run("search", "")) == _lines(run("search"))
    assert _lines(run("search", "old value")) == ["shared/k_old"]
    assert _ok(run("search", "nothing")).stdout == ""


@pytest.mark.parametrize("options, expected", [
    (["--store", "operator"], ["operator/k_op"]),
    (["--tag", "t1", "--tag", "t2"], ["shared/k_new", "shared/k_old"]),
    (["--source", "operator"], ["operator/k_op"]),
    (["--status", "resolved"], ["shared/k_old"]),
    (["--status", "current"], ["shared/k_new", "operator/k_op", "shared/k_obj"]),
    (["--scope", "session"], ["shared/k_obj"]),
    (["--since", "2026-01-04"], ["shared/k_new", "operator/k_op"]),
    (["--since", "2026-01-03T00:00:00Z"], ["shared/k_new", "operator/k_op", "shared/k_obj"]),
    (["--since", "2026-01-03T00:00:00.5Z"], ["shared/k_new", "operator/k_op"]),
    (["--prefix", "k_o"], ["operator/k_op", "shared/k_obj", "shared/k_old"]),
    (["--limit", "1"], ["shared/k_new"]),
])
def test_list_filters(run, listed, options, expected):
    assert _lines(run("list", *options)) == expected
    assert _lines(run("search", "", *options)) == expected


def test_list_keys_only_and_verbose(run, listed):
    out = _ok(run("list", "--keys-only")).stdout
    assert out.splitlines() == ["shared/k_new", "operator/k_op", "shared/k_obj", "shared/k_old"]
    out = _ok(run("list", "--store", "shared", "--status", "resolved", "-v")).stdout
    assert "shared/k_old [resolved]" in out and "status_timestamp: 2026-01-02T00:00:00Z" in out
    assert "search" in _ok(run("search", "--help")).stdout.lower()
    assert "newest timestamp first" in _ok(run("list", "--help")).stdout.replace("\n", " ")


def test_search_options_after_the_pattern(run, listed):
    assert _lines(run("search", "value", "--store", "operator")) == ["operator/k_op"]
    assert _lines(run("search", "--store", "operator", "value")) == ["operator/k_op"]


# --- brief ------------------------------------------------------------------------------------------------------

def test_brief_options(run, write_store):
    write_store("shared", {f"k{i}": make_entry(f"value {i}", when=f"2026-01-0{i}T00:00:00Z")
                           for i in range(1, 6)})
    out = _ok(run("brief", "--changes", "2")).stdout
    assert "RECENT CHANGES" in out
    assert "k5" in out and "k4" in out and "k3" not in out
    assert "operator 0, shared 5, agent 0 entries" in out.splitlines()[0]
    assert "DECISIONS (last 14 days)" not in _ok(run("brief", "--days", "14")).stdout


# --- credentials (§11) ------------------------------------------------------------------------------------------

def test_credential_is_refused_with_exit_4(run, root):
    result = run("set", "k_leak", "key", AWS)
    assert result.exit_code == ExitStatus.REFUSED == 4
    assert "credential" in result.stderr and "--force" in result.stderr
    assert AWS not in result.stderr
    assert not store_path(root).exists()


def test_credential_in_derivation_or_note_is_refused(run, root):
    _ok(run("set", "k", "v"))
    before = store_path(root).read_bytes()
    assert run("set", "k", "v2", "--derivation", f"from {AWS}").exit_code == 4
    assert run("amend", "k", "the", "key", "is", AWS).exit_code == 4
    assert run("resolve", "k", "--note", "password=" + "hunter2hunter2x").exit_code == 4
    assert run("supersede", "k", "--by", "k2", "--note", AWS).exit_code == 4
    assert store_path(root).read_bytes() == before


def test_force_stores_it(run, entries):
    _ok(run("set", "k_leak", AWS, "--force"))
    assert entries()["k_leak"]["value"] == AWS
    _ok(run("amend", "k_leak", "--force", "rotated", AWS))
    assert entries()["k_leak"]["status_note"] == f"rotated {AWS}"


# --- unusable stores and roots ------------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [b"{ this is not json", b"[]", b'{"type": "shared", "version": "2", '
                                                                 b'"entries": {"k": {"value": 1}}}'])
def test_store_that_ctx_will_not_write_exits_3_and_is_unchanged(run, root, raw):
    (root / "memory").mkdir(parents=True)
    path = store_path(root)
    path.write_bytes(raw)
    for args in (["set", "k", "v"], ["delete", "k"], ["amend", "k", "note"],
                 ["resolve", "k"], ["basis", "k", "verified"]):
        result = run(*args)
        assert result.exit_code == ExitStatus.STORE == 3, (args, result.output)
        assert "shared.json" in result.stderr
        assert path.read_bytes() == raw
    assert not any(n.endswith(".tmp") for n in os.listdir(root / "memory"))


def test_unreadable_store_fails_reads_with_exit_3(run, root):
    (root / "memory").mkdir(parents=True)
    store_path(root).write_bytes(b"not json")
    for args in (["get", "k"], ["search", "x"], ["list"]):
        assert run(*args).exit_code == 3, args


def test_other_stores_still_writable_when_one_is_broken(run, root, entries):
    (root / "memory").mkdir(parents=True)
    store_path(root).write_bytes(b"not json")
    _ok(run("set", "k", "v", "--store", "agent"))
    assert entries("agent")["k"]["value"] == "v"
    assert store_path(root).read_bytes() == b"not json"


@pytest.mark.parametrize("args", [["set", "k", "v"], ["get", "k"], ["list"], ["search", "x"],
                                  ["delete", "k"]])
def test_ctx_home_that_is_a_file(run, root, args):
    root.write_text("just a file")
    result = run(*args)
    assert result.exit_code != 0
    assert result.exit_code == ExitStatus.STORE
    assert "is a file" in result.stderr and "CTX_HOME" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert root.read_text() == "just a file"


def test_ctx_home_under_a_file(run, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    result = run("set", "k", "v", env={"CTX_HOME": str(blocker / "ctx")})
    assert result.exit_code not in (0, 1)
    assert isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("ctx: ")


def test_default_root_is_home_ctx(run, tmp_path):
    home = tmp_path / "home"
    result = run("set", "k", "v", env={"CTX_HOME": None, "HOME": str(home)})
    _ok(result)
    assert read_entries(home / "ctx")["k"]["value"] == "v"


def test_lock_timeout_exits_5(run, root):
    import fcntl
    (root / "memory").mkdir(parents=True)
    fd = os.open(root / "memory" / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        result = run("set", "k", "v", env={"CTX_LOCK_TIMEOUT": "0.3"})
        assert result.exit_code == ExitStatus.BUSY == 5
        assert "CTX_LOCK_TIMEOUT" in result.stderr
    finally:
        os.close(fd)


def test_error_messages_are_one_line_on_stderr(run):
    result = run("get", "missing")
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("ctx: ")
    assert "Traceback" not in result.output


def test_search_default_limit_is_50(run, write_store):
    write_store("shared", {f"k{i:03d}": make_entry("same text") for i in range(60)})
    assert len(_lines(run("search", "same"))) == 50
    assert len(_lines(run("search", "same", "--limit", "55"))) == 55
    assert len(_lines(run("list"))) == 60                       # list: all by default


@pytest.mark.parametrize("command", ["list", "search"])
def test_empty_since_is_an_invalid_argument(run, listed, command):
    assert run(command, "--since", "").exit_code == ExitStatus.USAGE


def test_without_git_every_command_runs_or_says_why_not(run, root):
    """CTX_NO_GIT=1: doctor checks the store files; the commands that need the repository
    refuse in one line naming the variable (exit 2); nothing creates a .git."""
    no_git = {"CTX_NO_GIT": "1"}
    assert run("set", "k", "v", env=no_git).exit_code == 0
    doctor = run("doctor", env=no_git)
    assert doctor.exit_code == 0 and "in order" in doctor.stdout and "CTX_NO_GIT=1" in doctor.stderr
    for args in (["log"], ["history", "k"], ["diff"], ["revert", "HEAD"], ["purge", "k", "--yes"],
                 ["hooks", "install"], ["remote"], ["remote", "add", "o", "/nowhere"], ["pull"], ["push"],
                 ["sync"], ["get", "k", "--at", "2026-01-01"], ["scan", "--history"]):
        result = run(*args, env=no_git)
        assert result.exit_code == 2, (args, result.output)
        assert "CTX_NO_GIT=1" in result.stderr and len(result.stderr.strip().splitlines()) == 1, args
    for args in (["get", "k"], ["list"], ["search", "v"], ["brief"], ["start"], ["stats"], ["scan"],
                 ["export"], ["summary", "list"], ["config"]):
        assert run(*args, env=no_git).exit_code == 0, args
    assert not (root / ".git").exists()


@pytest.mark.slow
def test_shell_completion_offers_commands_and_entry_keys(run, root):
    import os
    import subprocess
    import sys
    from pathlib import Path
    assert run("set", "apple", "1").exit_code == 0 and run("set", "apricot", "2").exit_code == 0
    assert run("set", "banana", "3").exit_code == 0
    assert run("set", "avocado", "4", "--store", "agent").exit_code == 0
    exe = str(Path(sys.executable).parent / "ctx")

    def complete(words: str, cword: int) -> list[str]:
        env = {**os.environ, "CTX_HOME": str(root), "COMP_WORDS": words, "COMP_CWORD": str(cword),
               "_CTX_COMPLETE": "bash_complete"}
        done = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return [line.split(",", 1)[1] for line in done.stdout.splitlines()]
    assert complete("ctx get a", 2) == ["apple", "apricot"]
    assert complete("ctx history --store agent a", 4) == ["avocado"]
    assert "history" in complete("ctx hist", 1)
