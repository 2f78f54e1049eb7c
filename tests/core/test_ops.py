"""The operations of §4 through the Context API (ctx/context.py, ctx/storage/root.py, ctx/settings.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctx import settings
from ctx.errors import CredentialRefused, InvalidArgument, NotFound
from ctx.model import parse_ts
from ctx.results import Filters
from support.contexts import Context
from support.stores import make_entry, read_entries, store_path, write_store_file

AWS = "AKIA" + "ABCDEFGHIJKLMNOP"
PASSWORD = "password=" + "hunter2hunter2x"
PEM = "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


# --- the context root and the environment ----------------------------------------------------

def test_resolve_root_default_is_home_ctx(monkeypatch, tmp_path):
    monkeypatch.delenv("CTX_HOME")
    assert settings.home() == str(Path(os.environ["HOME"]) / "ctx")
    monkeypatch.setenv("CTX_HOME", "   ")
    assert settings.home() == str(Path(os.environ["HOME"]) / "ctx")
    monkeypatch.setenv("CTX_HOME", "~/elsewhere")
    assert settings.home() == str(Path(os.environ["HOME"]) / "elsewhere")
    assert settings.home({"CTX_HOME": str(tmp_path / "x")}) == str(tmp_path / "x")


def test_context_uses_ctx_home(root):
    Context().set("k", "v")
    assert read_entries(root)["k"]["value"] == "v"


def test_author_from_env_strips_and_blank_is_unset():
    assert settings.author({"CTX_AUTHOR": "  Agent One \t"}) == "Agent One"
    assert settings.author({"CTX_AUTHOR": "   "}) is None
    assert settings.author({"CTX_AUTHOR": ""}) is None
    assert settings.author({}) is None


# --- set: defaults (§3.4, §3.5, §3.7, §3.1) -------------------------------------------------------

def test_set_defaults_without_author(context, root):
    entry = context.set("k", "hello")
    on_disk = read_entries(root)["k"]
    assert on_disk == entry
    assert entry["source"] == "operator"
    assert "author" not in entry
    assert entry["basis"] == "inferred"
    assert entry["scope"] == "global"
    assert entry["tags"] == []
    assert entry["created"] == entry["timestamp"]
    assert not store_path(root, "operator").exists() and not store_path(root, "agent").exists()


def test_set_with_ctx_author_defaults_source_agent(make_context, root, monkeypatch):
    monkeypatch.setenv("CTX_AUTHOR", "  Agent One  ")
    entry = make_context().set("k", "hello")
    assert entry["source"] == "agent"
    assert entry["author"] == "Agent One"
    assert read_entries(root)["k"]["author"] == "Agent One"


def test_blank_ctx_author_counts_as_unset(make_context, monkeypatch):
    monkeypatch.setenv("CTX_AUTHOR", " \t ")
    entry = make_context().set("k", "hello")
    assert entry["source"] == "operator"
    assert "author" not in entry


def test_explicit_source_wins(make_context):
    assert make_context("Agent One").set("k", "v", source="operator")["source"] == "operator"
    assert make_context().set("k2", "v", source="both")["source"] == "both"


def test_set_into_other_stores(context, root):
    context.set("k", "op", store="operator")
    context.set("k", "ag", store="agent")
    assert read_entries(root, "operator")["k"]["value"] == "op"
    assert read_entries(root, "agent")["k"]["value"] == "ag"
    assert read_entries(root, "shared") == {}


def test_set_update_replaces_and_keeps_fields(make_context, root, write_store):
    write_store("shared", {"k": make_entry("old", source="operator", tags=["t"], author="Old",
                                           basis="verified", scope="session",
                                           derivation="old reasoning", status="resolved",
                                           status_timestamp="2026-01-01T00:00:00Z",
                                           x_custom=[1])})
    entry = make_context("Agent Two").set("k", "new")
    assert entry == read_entries(root)["k"]
    assert entry["value"] == "new"
    assert entry["created"] == "2026-01-01T00:00:00Z"
    assert parse_ts(entry["timestamp"]) > parse_ts("2026-01-01T00:00:00Z")
    assert entry["basis"] == "verified" and entry["scope"] == "session" and entry["tags"] == ["t"]
    assert entry["source"] == "agent" and entry["author"] == "Agent Two"
    assert "derivation" not in entry and "status" not in entry and "status_timestamp" not in entry
    assert entry["x_custom"] == [1]


def test_set_same_text_still_writes(context, root, write_store):
    write_store("shared", {"k": make_entry("same", author="Someone")})
    context.set("k", "same")
    entry = read_entries(root)["k"]
    assert entry["timestamp"] != "2026-01-01T00:00:00Z"
    assert "author" not in entry and entry["source"] == "operator"


@pytest.mark.parametrize("kwargs", [{"basis": "sure"}, {"source": "me"}, {"scope": "forever"},
                                    {"tags": [""]}, {"store": "private"}])
def test_set_refuses_invalid_arguments_before_writing(context, root, kwargs):
    with pytest.raises(InvalidArgument):
        context.set("k", "v", **kwargs)
    assert not (root / "memory").exists()


@pytest.mark.parametrize("key", ["", "two words", "tab\there", "nul\x00"])
def test_set_refuses_bad_keys(context, root, key):
    with pytest.raises(InvalidArgument):
        context.set(key, "v")
    assert not (root / "memory").exists()


# --- get, get_all, delete -------------------------------------------------------------------------

def test_get_missing_raises_not_found(context, root):
    with pytest.raises(NotFound):
        context.get("nope")
    context.set("k", "v", store="agent")
    with pytest.raises(NotFound):
        context.get("k")                          # get defaults to shared
    assert context.get("k", "agent")["value"] == "v"


def test_get_all_returns_every_store_holding_the_key(context):
    context.set("k", "in agent", store="agent")
    context.set("k", "in operator", store="operator")
    context.set("other", "x")
    results = context.get_all("k")
    assert [(r.store, r.key, r.entry["value"]) for r in results] == [
        ("operator", "k", "in operator"), ("agent", "k", "in agent")]
    with pytest.raises(NotFound):
        context.get_all("missing")


def test_delete(context, root):
    context.set("k", "v")
    context.set("keep", "v")
    removed = context.delete("k")
    assert removed["value"] == "v"
    assert set(read_entries(root)) == {"keep"}
    with pytest.raises(NotFound):
        context.get("k")
    with pytest.raises(NotFound):
        context.delete("k")
    with pytest.raises(NotFound):
        context.delete("keep", store="agent")


# --- statuses and basis on existing and missing keys ----------------------------------------------------

@pytest.mark.parametrize("operation", [
    lambda c: c.amend("missing", "note"),
    lambda c: c.resolve("missing", note="n"),
    lambda c: c.supersede("missing", "other"),
    lambda c: c.set_basis("missing", "verified"),
    lambda c: c.delete("missing"),
    lambda c: c.amend("k", "note", store="agent"),
])
def test_operations_on_a_missing_key_raise_not_found_and_write_nothing(context, root, operation):
    context.set("k", "v")
    before = store_path(root).read_bytes()
    with pytest.raises(NotFound):
        operation(context)
    assert store_path(root).read_bytes() == before
    assert not store_path(root, "agent").exists()


def test_supersede_warns_when_by_does_not_exist(context, root):
    context.set("old", "use A")
    entry, warnings = context.supersede("old", "new_key", note="B is faster")
    assert len(warnings) == 1 and "new_key" in warnings[0]
    assert entry["status"] == "superseded" and entry["superseded_by"] == "new_key"
    assert read_entries(root)["old"]["superseded_by"] == "new_key"
    context.set("new_key", "use B", store="agent")       # another store does not count
    _, warnings = context.supersede("old", "new_key", note="again")
    assert len(warnings) == 1 and "new_key" in warnings[0]


def test_supersede_by_existing_key_gives_no_warning(context):
    context.set("old", "A")
    context.set("new", "B")
    _, warnings = context.supersede("old", "new")
    assert warnings == []


def test_supersede_self_or_bad_key_is_invalid(context):
    context.set("k", "v")
    with pytest.raises(InvalidArgument):
        context.supersede("k", "k")
    with pytest.raises(InvalidArgument):
        context.supersede("k", "two words")


def test_amend_resolve_through_context(make_context, root, write_store):
    write_store("shared", {"k": make_entry("port 8080", author="Agent One")})
    entry = make_context().amend("k", "it is 8443")
    assert entry["value"].startswith("[Amended ") and entry["value"].endswith("]\nport 8080")
    assert entry["status_note"] == "it is 8443"
    assert entry["author"] == "Agent One"            # none known: kept
    entry = make_context("Agent Two").resolve("k")
    assert entry["status"] == "resolved" and "status_note" not in entry
    assert entry["author"] == "Agent Two"
    assert read_entries(root)["k"] == entry
    with pytest.raises(InvalidArgument):
        make_context().amend("k", "   ")


def test_set_basis_keeps_timestamp_and_sets_author(make_context, root, write_store):
    write_store("shared", {"k": make_entry("v", when="2026-01-01T00:00:00Z")})
    entry = make_context("Agent Three").set_basis("k", "verified")
    assert entry["basis"] == "verified"
    assert entry["timestamp"] == "2026-01-01T00:00:00Z"
    assert entry["author"] == "Agent Three"
    assert read_entries(root)["k"] == entry
    with pytest.raises(InvalidArgument):
        make_context().set_basis("k", "certain")


def test_no_op_write_does_not_rewrite_the_file(context, root, write_store):
    path = write_store("shared", {"k": make_entry("v", basis="reported")},
                       last_updated="2020-01-01T00:00:00Z")
    context.set("other", "v")       # lets a recorder settle the hand-written file first
    raw = path.read_bytes()
    inode = os.stat(path).st_ino
    entry = context.set_basis("k", "reported")
    assert entry["basis"] == "reported"
    assert path.read_bytes() == raw
    assert os.stat(path).st_ino == inode, "the file was replaced"
    context.set_basis("k", "verified")
    assert os.stat(path).st_ino != inode


# --- credentials (§11) ------------------------------------------------------------------------

@pytest.mark.parametrize("secret", [AWS, PASSWORD, PEM, GITHUB, "token=" + "Zq8vX2mN4pL7",
                                    "sk-" + "proj-Ab12Cd34Ef56Gh78Ij90Kl"])
def test_credential_in_value_is_refused(context, root, secret):
    with pytest.raises(CredentialRefused) as info:
        context.set("k", f"the key is {secret} ok")
    assert info.value.findings
    assert secret not in str(info.value), "the refusal must not repeat the secret"
    assert not (root / "memory").exists() or read_entries(root) == {}


def test_credential_in_non_string_value_is_refused(context):
    with pytest.raises(CredentialRefused):
        context.set("k", {"aws": AWS})


def test_credential_in_derivation_is_refused(context, root):
    context.set("k", "v")
    before = store_path(root).read_bytes()
    with pytest.raises(CredentialRefused):
        context.set("k", "harmless", derivation=f"read from {PASSWORD}")
    assert store_path(root).read_bytes() == before


@pytest.mark.parametrize("operation", [
    lambda c: c.amend("k", f"the key is {AWS}"),
    lambda c: c.resolve("k", note=f"rotated {GITHUB}"),
    lambda c: c.supersede("k", "k2", note=PASSWORD),
])
def test_credential_in_a_note_is_refused(context, root, operation):
    context.set("k", "v")
    context.set("k2", "v2")
    before = store_path(root).read_bytes()
    with pytest.raises(CredentialRefused):
        operation(context)
    assert store_path(root).read_bytes() == before


def test_force_stores_what_looks_like_a_credential(context, root):
    context.set("k", AWS, force=True, derivation=PASSWORD)
    assert read_entries(root)["k"]["value"] == AWS
    context.amend("k", f"also {GITHUB}", force=True)
    assert read_entries(root)["k"]["status_note"] == f"also {GITHUB}"


@pytest.mark.parametrize("harmless", ["AKIAIOSFODNN7EXAMPLE", "password=<your password>",
                                      "token=$TOKEN_VALUE", "the password is stored in vault",
                                      "sk-learn is a library"])
def test_placeholders_and_prose_are_not_refused(context, harmless):
    assert context.set("k", harmless)["value"] == harmless


# --- select: filters, pattern, order, limit (§4.6) --------------------------------------------------------

@pytest.fixture
def populated(root):
    write_store_file(root, "operator", {
        "pref_one": make_entry("Ask one question at a time", source="operator",
                               tags=["preference"], when="2026-01-03T00:00:00Z"),
        "same_time": make_entry("tie in operator", source="operator",
                                when="2026-01-05T12:00:00Z"),
    })
    write_store_file(root, "shared", {
        "b_key": make_entry("Beta value", tags=["t1"], when="2026-01-05T12:00:00Z"),
        "a_key": make_entry("Alpha value", tags=["t2", "x"], when="2026-01-05T12:00:00Z"),
        "issue_upload": make_entry("Uploads FAIL at 30 s", tags=["t1", "issue"], source="both",
                                   when="2026-01-02T00:00:00Z", status="resolved",
                                   status_timestamp="2026-01-02T00:00:00Z"),
        "obj": make_entry({"needle": "xyzzy", "port": 8443, "name": "Müller"},
                          when="2026-01-04T00:00:00Z", scope="session"),
        "frac": make_entry("fraction", when="2026-01-01T00:00:07.5Z"),
        "old": make_entry("old and superseded", when="2025-12-31T23:59:59Z",
                          status="superseded", superseded_by="a_key",
                          status_timestamp="2026-01-01T00:00:00Z"),
    })
    write_store_file(root, "agent", {
        "note_tmp": make_entry("scratch note", when="2026-01-05T12:00:00Z", scope="session"),
        "zz_last": make_entry("no timestamp"),
    })
    del_ts = read_entries(root, "agent")
    del_ts["zz_last"].pop("timestamp")
    write_store_file(root, "agent", del_ts)
    return Context(root)


def keys(results):
    return [f"{r.store}/{r.key}" for r in results]


def test_select_order_newest_first_then_store_then_key(populated):
    assert keys(populated.select(Filters())) == [
        "operator/same_time", "shared/a_key", "shared/b_key", "agent/note_tmp",
        "shared/obj", "operator/pref_one", "shared/issue_upload", "shared/frac",
        "shared/old", "agent/zz_last",
    ]


def test_select_limit_cuts_after_ordering(populated):
    everything = keys(populated.select(Filters()))
    assert keys(populated.select(Filters(), limit=3)) == everything[:3]
    assert keys(populated.select(Filters(store="shared"), limit=2)) == ["shared/a_key", "shared/b_key"]
    assert populated.select(Filters(), limit=0) == []
    with pytest.raises(InvalidArgument):
        populated.select(Filters(), limit=-1)


@pytest.mark.parametrize("filters, expected", [
    (Filters(store="operator"), {"operator/same_time", "operator/pref_one"}),
    (Filters(tags=("t1",)), {"shared/b_key", "shared/issue_upload"}),
    (Filters(tags=("t2", "issue")), {"shared/a_key", "shared/issue_upload"}),   # any of
    (Filters(tags=("nope",)), set()),
    (Filters(source="both"), {"shared/issue_upload"}),
    (Filters(source="operator"), {"operator/same_time", "operator/pref_one"}),
    (Filters(status="resolved"), {"shared/issue_upload"}),
    (Filters(status="superseded"), {"shared/old"}),
    (Filters(status="amended"), set()),
    (Filters(scope="session"), {"shared/obj", "agent/note_tmp"}),
    (Filters(prefix="issue_"), {"shared/issue_upload"}),
    (Filters(store="shared", tags=("t1",), status="current"), {"shared/b_key"}),   # AND
])
def test_select_filters(populated, filters, expected):
    assert set(keys(populated.select(filters))) == expected


def test_select_status_current_means_no_status(populated):
    found = set(keys(populated.select(Filters(status="current"))))
    assert "shared/issue_upload" not in found and "shared/old" not in found
    assert {"shared/a_key", "shared/obj", "agent/note_tmp", "operator/pref_one"} <= found


def test_select_scope_global_counts_missing_scope_as_global(root):
    entry = make_entry("no scope")
    del entry["scope"]
    write_store_file(root, "shared", {"k": entry, "s": make_entry("s", scope="session")})
    assert keys(Context(root).select(Filters(scope="global"))) == ["shared/k"]


def test_select_since_date_and_timestamps(populated):
    def since(text):
        return set(keys(populated.select(Filters(since=parse_ts(text)))))
    assert since("2026-01-05") == {"operator/same_time", "shared/a_key", "shared/b_key",
                                   "agent/note_tmp"}
    assert since("2026-01-05T12:00:00Z") == since("2026-01-05")        # at or after
    assert since("2026-01-05T12:00:01Z") == set()
    assert since("2026-01-05T13:00:00+01:00") == since("2026-01-05")  # points in time
    assert "shared/frac" in since("2026-01-01T00:00:07Z")             # 07.5Z is after 07Z
    assert "shared/frac" not in since("2026-01-01T00:00:07.6Z")
    assert "shared/frac" in since("2026-01-01")
    assert "shared/old" not in since("2026-01-01")                     # 23:59:59 the day before
    assert "agent/zz_last" not in since("1971-01-01")                  # no timestamp: oldest


def test_select_pattern_case_insensitive_on_key_or_value(populated):
    def search(pattern, **kw):
        return set(keys(populated.select(Filters(**kw), pattern)))
    assert search("upload") == {"shared/issue_upload"}                  # key
    assert search("fail at") == {"shared/issue_upload"}                 # value, case-insensitive
    assert search("ALPHA") == {"shared/a_key"}
    assert search("value") == {"shared/a_key", "shared/b_key"}
    assert search("xyzzy") == {"shared/obj"}                            # non-string: JSON text
    assert search('"needle":"xyzzy"') == {"shared/obj"}                 # compact
    assert search('"needle": "xyzzy"') == set()
    assert search("8443") == {"shared/obj"}
    assert search("müller") == {"shared/obj"}                           # non-ASCII as itself
    assert search("a.*value") == set()                                  # not a regex
    assert search("value", store="operator") == set()
    assert len(search("")) == 10 and search(None) == search("")


def test_select_reads_all_stores_without_writing(populated, root):
    before = {p: p.read_bytes() for p in (root / "memory").glob("*.json")}
    populated.select(Filters(), "x")
    populated.get_all("obj")
    assert {p: p.read_bytes() for p in (root / "memory").glob("*.json")} == before


def test_counts(populated):
    assert populated.counts() == {"operator": 2, "shared": 6, "agent": 2}


# --- init ------------------------------------------------------------------------------------------

def test_init_creates_layout_and_is_idempotent(context, root):
    report = context.init()
    assert report.existed is False
    assert (root / "memory").is_dir() and (root / "sessions").is_dir()
    assert (root / "RULES.md").is_file()
    (root / "RULES.md").write_text("my own rules\n")
    report = context.init()
    assert report.existed is True and report.created == []
    assert (root / "RULES.md").read_text() == "my own rules\n"
