"""ctx export and ctx import: round trips, merges with a diverged context,
dry runs, refused files and credentials; each import is one commit."""

from __future__ import annotations

import json
import stat

import pytest

from support.gitutil import commit_count, message, subject
from support.stores import make_entry, read_entries, read_store_file, snapshot

SECRET = "ghp_" + "a1B2c3D4e5F6g7H8" * 2 + "i9J0"


def ok(result):
    assert result.exit_code == 0, (result.output, result.stderr)
    return result


@pytest.fixture
def other(tmp_path):
    """A second, fresh context root, and a ``run`` against it."""
    return tmp_path / "other root"


def run_in(run, where):
    return lambda *args, **kw: run(*args, env={"CTX_HOME": str(where)}, **kw)


def populate(run):
    ok(run("set", "decision_pool", "Use a pool of 20", "--tag", "decision", "--basis", "verified"))
    ok(run("set", "result_numbers", "[1, 2, 3]", "--derivation", "counted by hand"))
    ok(run("set", "issue_upload", "Uploads fail over 2 GB", "--tag", "issue"))
    ok(run("resolve", "issue_upload", "--note", "proxy timeout raised"))
    ok(run("set", "pref_one_question", "Ask one question at a time", "--store", "operator",
           "--source", "operator", "--basis", "reported", author="Agent One"))
    ok(run("set", "scratch", "note to self", "--store", "agent", "--scope", "session", author="Agent One"))


def test_export_to_stdout_has_the_documented_shape(run, root):
    populate(run)
    data = json.loads(ok(run("export")).stdout)
    assert data["format"] == "ctx-export" and data["version"] == "1"
    assert data["exported"].endswith("Z")
    assert list(data["stores"]) == ["operator", "shared", "agent"]
    assert data["stores"]["shared"] == read_store_file(root, "shared")
    only = json.loads(ok(run("export", "--store", "operator")).stdout)
    assert list(only["stores"]) == ["operator"]


def test_export_file_is_private_and_never_inside_the_root(run, root, tmp_path):
    populate(run)
    out = tmp_path / "backup.json"
    ok(run("export", "-o", str(out)))
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert json.loads(out.read_text())["stores"]["shared"]["entries"] == read_entries(root)
    refused = run("export", "-o", str(root / "sessions" / "x.json"))
    assert refused.exit_code == 2 and "inside the context root" in refused.stderr
    assert not (root / "sessions" / "x.json").exists()


def test_round_trip_into_a_fresh_context_gives_identical_entries(run, root, other, tmp_path):
    populate(run)
    # a field ctx does not know, and a top-level key, survive
    data = json.loads((root / "memory" / "shared.json").read_text())
    data["entries"]["decision_pool"]["x_custom"] = {"kept": True}
    (root / "memory" / "shared.json").write_text(json.dumps(data, indent=2))
    path = tmp_path / "e.json"
    ok(run("export", "-o", str(path)))
    there = run_in(run, other)
    result = json.loads(ok(there("import", str(path), "--json")).stdout)
    assert result["dry_run"] is False
    assert len(result["added"]) == 5 and result["changed"] == result["kept"] == []
    for store in ("operator", "shared", "agent"):
        # identical entries, in the same order, field for field
        assert list(read_entries(other, store).items()) == list(read_entries(root, store).items())
    assert commit_count(other) == 1
    assert subject(other) == "import: 5 added, 0 changed"
    assert "Ctx-Operation: import" in message(other)
    # importing the same file again changes nothing and commits nothing
    again = json.loads(ok(there("import", str(path), "--json")).stdout)
    assert again["added"] == again["changed"] == [] and len(again["kept"]) == 5
    assert commit_count(other) == 1


def diverged(write_store, tmp_path):
    """A context and an export file that share some keys and differ in others."""
    here = {
        "same": make_entry("equal on both sides"),
        "only_here": make_entry("never in the file"),
        "clash": make_entry("here's value", when="2026-02-01T00:00:00Z", created="2026-01-01T00:00:00Z"),
        "status_there": make_entry("an issue", when="2026-01-05T00:00:00Z"),
        "older_here": make_entry("old text", when="2026-01-01T00:00:00Z"),
    }
    there = {
        "same": make_entry("equal on both sides"),
        "added": make_entry("only in the file", tags=["x"]),
        "clash": make_entry("file's value", when="2026-03-01T00:00:00Z", created="2026-01-02T00:00:00Z"),
        "status_there": dict(make_entry("an issue", when="2026-01-06T00:00:00Z"), status="resolved",
                             status_timestamp="2026-01-06T00:00:00Z", status_note="done"),
        "older_here": make_entry("old text", when="2026-01-01T00:00:00Z", derivation="from the log"),
    }
    write_store("shared", here)
    path = tmp_path / "file.json"
    path.write_text(json.dumps({"format": "ctx-export", "version": "1", "exported": "2026-03-02T00:00:00Z",
                                "stores": {"shared": {"type": "shared", "version": "1",
                                                      "entries": there}}}))
    return path


def test_import_into_a_diverged_context_merges_entry_by_entry(run, root, write_store, tmp_path):
    path = diverged(write_store, tmp_path)
    ok(run("set", "anchor", "x"))  # the repository exists; the set-up is committed
    before = commit_count(root)
    result = json.loads(ok(run("import", str(path), "--json")).stdout)
    keys = {name: sorted(r["key"] for r in result[name]) for name in ("added", "changed", "kept", "conflicts")}
    assert keys == {"added": ["added"], "changed": ["clash", "older_here", "status_there"],
                    "kept": ["same"], "conflicts": ["clash"]}
    got = read_entries(root)
    assert got["only_here"]["value"] == "never in the file"      # an import never deletes
    assert got["added"]["value"] == "only in the file" and got["added"]["tags"] == ["x"]
    assert got["clash"]["value"] == "file's value"               # the later timestamp wins
    assert got["clash"]["created"] == "2026-01-01T00:00:00Z"     # the earliest created
    assert got["clash"]["timestamp"] == "2026-03-01T00:00:00Z"
    assert got["status_there"]["status"] == "resolved"
    assert got["status_there"]["status_note"] == "done"
    assert got["older_here"]["derivation"] == "from the log"     # a field on one side is taken
    assert got["same"] == make_entry("equal on both sides")
    assert commit_count(root) == before + 1
    assert subject(root) == "import: 1 added, 3 changed"


def export_file(path, entries):
    path.write_text(json.dumps({"format": "ctx-export", "version": "1", "exported": "2026-03-02T00:00:00Z",
                                "stores": {"shared": {"type": "shared", "version": "1", "entries": entries}}}))
    return path


def test_a_same_second_reimport_takes_the_file_s_value(run, root, tmp_path):
    """Issue 39: a tie of timestamps was broken by comparing JSON text, so the second of
    two imports in the same second kept the first's value whenever it sorted later."""
    when = "2026-03-01T00:00:00Z"
    ok(run("import", str(export_file(tmp_path / "one.json", {"k": make_entry("zzz first", when=when)}))))
    result = json.loads(ok(run("import", str(export_file(tmp_path / "two.json",
                                                          {"k": make_entry("aaa second", when=when)})),
                               "--json")).stdout)
    assert [r["key"] for r in result["changed"]] == ["k"]
    assert read_entries(root)["k"]["value"] == "aaa second"


def test_dry_run_reports_the_same_and_changes_nothing(run, root, write_store, tmp_path):
    path = diverged(write_store, tmp_path)
    ok(run("set", "anchor", "x"))
    snap = snapshot(root)
    dry = json.loads(ok(run("import", str(path), "--dry-run", "--json")).stdout)
    assert snapshot(root) == snap  # the store files and .git alike
    human = ok(run("import", str(path), "--dry-run"))
    assert "dry run: nothing written" in human.stdout and "+ shared/added" in human.stdout
    assert snapshot(root) == snap
    real = json.loads(ok(run("import", str(path), "--json")).stdout)
    assert dry["dry_run"] is True and real["dry_run"] is False
    assert {k: v for k, v in dry.items() if k != "dry_run"} == \
        {k: v for k, v in real.items() if k != "dry_run"}


def test_store_option_imports_one_store_only(run, root, other, tmp_path):
    populate(run)
    path = tmp_path / "e.json"
    ok(run("export", "-o", str(path)))
    there = run_in(run, other)
    result = json.loads(ok(there("import", str(path), "--store", "operator", "--json")).stdout)
    assert [(r["store"], r["key"]) for r in result["added"]] == [("operator", "pref_one_question")]
    assert read_entries(other, "shared") == {}


@pytest.mark.parametrize("content, words", [
    ({"format": "something-else", "version": "1", "stores": {}}, "format"),
    ({"format": "ctx-export", "version": "2", "stores": {}}, "version"),
    ({"format": "ctx-export", "version": "1", "stores": {"private": {"entries": {}}}}, "unknown store"),
    ({"format": "ctx-export", "version": "1",
      "stores": {"shared": {"version": "7", "entries": {}}}}, "format version"),
    ({"format": "ctx-export", "version": "1",
      "stores": {"shared": {"entries": {"k": "not an object"}}}}, "not an entry"),
    ({"format": "ctx-export", "version": "1",
      "stores": {"shared": {"entries": {"bad key": make_entry("v")}}}}, "whitespace"),
])
def test_a_file_it_does_not_know_is_refused(run, root, tmp_path, content, words):
    ok(run("set", "k", "v"))
    snap = snapshot(root)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    result = run("import", str(path))
    assert result.exit_code == 2 and words in result.stderr
    assert result.stderr.count("\n") == 1  # one line
    assert snapshot(root) == snap


def test_not_json_and_missing_files(run, root, tmp_path):
    path = tmp_path / "x.json"
    path.write_text("{nope")
    assert run("import", str(path)).exit_code == 2
    assert run("import", str(tmp_path / "missing.json")).exit_code == 1


def test_credentials_are_refused_unless_forced(run, root, tmp_path):
    ok(run("set", "anchor", "x"))
    before = commit_count(root)
    path = tmp_path / "leak.json"
    path.write_text(json.dumps({"format": "ctx-export", "version": "1", "stores": {"shared": {
        "entries": {"fine": make_entry("harmless"), "leak": make_entry(f"the token is {SECRET}")}}}}))
    refused = run("import", str(path))
    assert refused.exit_code == 4 and "shared/leak" in refused.stderr and SECRET not in refused.stderr
    assert "fine" not in read_entries(root)  # nothing of the file was written
    assert commit_count(root) == before
    assert run("import", str(path), "--dry-run").exit_code == 4
    forced = ok(run("import", str(path), "--force", "--json"))
    assert len(json.loads(forced.stdout)["added"]) == 2
    assert read_entries(root)["leak"]["value"].endswith(SECRET)
    assert commit_count(root) == before + 1


def test_import_from_stdin(run, root, other):
    populate(run)
    exported = ok(run("export")).stdout
    there = run_in(run, other)
    ok(there("import", "-", input=exported))
    assert read_entries(other) == read_entries(root)
