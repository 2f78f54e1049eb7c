"""Store files (§8.2), atomic writes (§8.3) and the lock (§8.4)."""

from __future__ import annotations

import fcntl
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ctx.errors import ContextRootError, LockTimeout, StoreError
from ctx.storage import files as store_mod
from ctx.storage.files import atomic_write, parse_store, read_store
from ctx.storage.lock import context_lock
from ctx.storage.textlayout import serialize
from support.stores import make_entry, read_store_file, store_path, write_store_file


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _memory_listing(root: Path) -> list[str]:
    return sorted(os.listdir(root / "memory"))


# --- atomic writes ---------------------------------------------------------------------------

def test_atomic_write_leaves_no_temp_file_and_mode_0600(tmp_path):
    tmp_path = tmp_path / "memory"
    tmp_path.mkdir()
    target = tmp_path / "shared.json"
    target.write_bytes(b"old")
    os.chmod(target, 0o644)
    atomic_write(target, b"new content")
    assert target.read_bytes() == b"new content"
    assert os.listdir(tmp_path) == ["shared.json"]
    assert _mode(target) == 0o600


def test_atomic_write_gives_the_mode_asked_and_syncs_only_when_durable(tmp_path, monkeypatch):
    tmp_path = tmp_path / "out"
    tmp_path.mkdir()
    target = tmp_path / "hook"
    atomic_write(target, b"#!/bin/sh\n", mode=0o700)
    assert _mode(target) == 0o700 and os.listdir(tmp_path) == ["hook"]
    synced: list[int] = []
    monkeypatch.setattr(store_mod.os, "fsync", lambda fd: synced.append(fd))
    atomic_write(tmp_path / "cache", b"x", durable=False)
    assert synced == [] and (tmp_path / "cache").read_bytes() == b"x"
    atomic_write(tmp_path / "store", b"y")
    assert len(synced) == 2  # the file, then its folder


def test_atomic_write_failure_keeps_old_file_and_removes_temp(tmp_path, monkeypatch):
    tmp_path = tmp_path / "memory"
    tmp_path.mkdir()
    target = tmp_path / "shared.json"
    target.write_bytes(b"old bytes")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(store_mod.os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic_write(target, b"new bytes")
    assert target.read_bytes() == b"old bytes"
    assert os.listdir(tmp_path) == ["shared.json"]


@pytest.mark.parametrize("links", [True, False], ids=["hard-link", "no-hard-links"])
def test_atomic_write_create_only_makes_a_missing_file_whole_and_never_replaces_one(tmp_path, monkeypatch,
                                                                                     links):
    if not links:  # a file system without hard links: the name is taken, then renamed over
        def no_link(src, dst):
            raise PermissionError(1, "Operation not permitted")
        monkeypatch.setattr(store_mod.os, "link", no_link)
    tmp_path = tmp_path / "root"
    tmp_path.mkdir()
    target = tmp_path / "RULES.md"
    identity = atomic_write(target, b"the rules\n", create_only=True)
    assert target.read_bytes() == b"the rules\n" and os.listdir(tmp_path) == ["RULES.md"]
    assert identity[2] == os.stat(target).st_ino and _mode(target) == 0o600
    target.write_bytes(b"the operator's own")
    with pytest.raises(FileExistsError):
        atomic_write(target, b"the template\n", create_only=True)
    assert target.read_bytes() == b"the operator's own" and os.listdir(tmp_path) == ["RULES.md"]


def test_write_through_context_leaves_only_store_and_lock(context, root):
    context.set("k", "v")
    context.set("k2", "v2", store="agent")
    context.delete("k")
    assert _memory_listing(root) == [".lock", "agent.json", "shared.json"]
    assert _mode(store_path(root)) == 0o600
    assert _mode(store_path(root, "agent")) == 0o600
    assert _mode(root / "memory") == 0o700
    assert _mode(root) == 0o700


def test_a_write_removes_the_temporaries_a_killed_write_left(context, root):
    """A ctx killed between writing a temporary and renaming it leaves it (a store's is as
    large as the store): the next write removes it, ctx's own names only, whatever its age:
    memory/'s temporaries are made only under the context lock, which the sweep holds, so
    none is a live write's (issue 35: 200 kill -9s in a row left two). (.git/ctx's, swept by
    age: tests/git/test_commit_ways.py.)"""
    context.set("k", "v")
    old = time.time() - 2 * store_mod.STALE_TEMPORARY
    memory = root / "memory"
    left = [memory / ".shared.json.0123456789ab.tmp", memory / ".agent.json.abcdef012345.tmp",
            memory / ".shared.json.fedcba987654.tmp"]   # as young as a write's: its writer is dead
    kept = [memory / ".notes.tmp", memory / ".shared.json.0123456789AB.tmp"]  # names ctx never makes
    for path in left + kept:
        path.write_bytes(b"{}")
    for path in left[:2] + kept:
        os.utime(path, (old, old))
    context.set("k", "w")
    assert not any(path.exists() for path in left)
    assert all(path.exists() for path in kept)
    assert store_mod.sweep_temporaries(root / "nowhere") == []


def test_failed_write_through_context_keeps_store_bytes(context, root, monkeypatch):
    context.set("k", "v")
    before = store_path(root).read_bytes()
    monkeypatch.setattr(store_mod.os, "replace",
                        lambda src, dst: (_ for _ in ()).throw(OSError(5, "I/O error")))
    with pytest.raises(OSError):
        context.set("k", "changed")
    assert store_path(root).read_bytes() == before
    assert _memory_listing(root) == [".lock", "shared.json"]


# --- reading ---------------------------------------------------------------------------------

def test_read_missing_store_is_empty(root):
    data = read_store(root, "shared")
    assert data.exists is False
    assert data.entries == {}
    assert not store_path(root).exists()


def test_read_store_without_entries_key_is_empty(root, context):
    path = store_path(root)
    path.parent.mkdir(parents=True)
    path.write_text('{"type": "shared", "version": "1"}')
    assert read_store(root, "shared").entries == {}
    context.set("k", "v")
    assert read_store_file(root)["entries"]["k"]["value"] == "v"


@pytest.mark.parametrize("raw", [
    b"",
    b"not json",
    b'{"type": "shared", "version": "1", "entries": {}',
    b"[1, 2]",
    b'"a string"',
    b"null",
    b'{"type": "shared", "version": "1", "entries": []}',
    b'{"type": "shared", "version": "1", "entries": "none"}',
    b'{"type": "shared", "version": "1", "entries": {"k": "v"}}',
    b'{"type": "shared", "version": "1", "entries": {"k": [1]}}',
    b'{"type": "shared", "version": "1", "entries": {"k": null}}',
    b'\xff\xfe{"entries": {}}',
])
def test_unusable_store_file_raises_store_error(root, raw):
    path = store_path(root)
    path.parent.mkdir(parents=True)
    path.write_bytes(raw)
    with pytest.raises(StoreError):
        read_store(root, "shared")


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]", b'{"entries": {"k": "v"}}'])
def test_unusable_store_file_is_never_written(root, context, raw):
    path = store_path(root)
    path.parent.mkdir(parents=True)
    path.write_bytes(raw)
    with pytest.raises(StoreError):
        context.set("k", "v")
    with pytest.raises(StoreError):
        context.get("k")
    assert path.read_bytes() == raw


def test_parse_store_keeps_raw_bytes(tmp_path):
    raw = b'{"type": "shared", "version": "1", "entries": {"k": {"value": 1}}}'
    parsed = parse_store("shared", tmp_path / "shared.json", raw)
    assert parsed.raw == raw and parsed.writable and parsed.entries["k"]["value"] == 1


# --- duplicates and entries lacking required fields (BUG-5, BUG-7) ------------------------------

_HEAD = '{\n  "type": "shared",\n  "version": "1",\n  "last_updated": null,\n  "entries": {'
_FULL = '{"value": %s, "source": "agent", "basis": "inferred", "scope": "global", "tags": [], ' \
        '"created": "2026-01-01T00:00:00Z", "timestamp": "2026-01-01T00:00:00Z"}'


@pytest.mark.parametrize("raw, named", [
    (_HEAD + '\n    "a": %s,\n    "a": %s\n  }\n}\n' % (_FULL % '"one"', _FULL % '"two"'), "entry key 'a'"),
    ('{"type": "shared", "version": "1", "entries": {"a": %s, "b": %s, "a": %s}}'
     % (_FULL % 1, _FULL % 2, _FULL % 3), "entry key 'a'"),  # another layout: the full check
    (_HEAD + '\n    "a": %s\n  },\n  "version": "1"\n}\n' % (_FULL % 1), "top-level key 'version'"),
])
def test_a_key_written_twice_is_refused_for_reads_and_writes(root, context, raw, named):
    path = store_path(root)
    path.parent.mkdir(parents=True)
    path.write_text(raw)
    with pytest.raises(StoreError, match=f"{named} appears twice"):
        read_store(root, "shared")
    with pytest.raises(StoreError):
        context.set("new", "value")
    assert path.read_text() == raw


@pytest.mark.parametrize("raw", [
    _HEAD + '\n    "a": %s,\n    "b": %s\n  }\n}\n' % (_FULL % '"one"', _FULL % '"two"'),
    '{"type":"shared","version":"1","entries":{"a":%s,"b":%s}}' % (_FULL % 1, _FULL % 2),
    # an entry whose value holds objects, and an unknown top-level object (members at 4 spaces)
    _HEAD + '\n    "a": %s\n  },\n  "x_other": {\n    "a": 1\n  }\n}\n' % (_FULL % '{"a": {"a": 1}}'),
])
def test_same_names_in_different_objects_are_not_duplicates(tmp_path, raw):
    parsed = parse_store("shared", tmp_path / "shared.json", raw.encode())
    assert sorted(parsed.entries) == ["a", "b"] or sorted(parsed.entries) == ["a"]


def test_an_entry_without_value_or_source_is_read_but_its_store_is_not_written(root, context):
    path = write_store_file(root, "shared", {"ok": make_entry("fine"), "bare": {"source": "agent"},
                                             "anonymous": {"value": "who said this?"}})
    before = path.read_bytes()
    assert context.get("anonymous")["value"] == "who said this?"
    for write in (lambda: context.set("new", "v"), lambda: context.amend("ok", "note"),
                  lambda: context.delete("bare")):
        with pytest.raises(StoreError, match="lacks (value|source), which §3.3 requires"):
            write()
    assert path.read_bytes() == before
    context.set("elsewhere", "v", store="agent")  # another store is written as usual
    assert path.read_bytes() == before


def test_an_entry_with_only_value_and_source_is_written_around_untouched(root, context):
    path = write_store_file(root, "shared", {"minimal": {"value": "v", "source": "operator"}})
    context.set("new", "value")
    assert read_store_file(root)["entries"]["minimal"] == {"value": "v", "source": "operator"}
    assert path.exists()


# --- versions and types ------------------------------------------------------------------------

def test_other_version_is_readable_but_not_writable(root, context):
    path = write_store_file(root, "shared", {"k": make_entry("from version 2")}, version="2")
    before = path.read_bytes()
    assert context.get("k")["value"] == "from version 2"
    with pytest.raises(StoreError, match="version"):
        context.set("k", "changed")
    with pytest.raises(StoreError):
        context.set("other", "new key")
    with pytest.raises(StoreError):
        context.amend("k", "a note")
    with pytest.raises(StoreError):
        context.delete("k")
    assert path.read_bytes() == before


def test_other_version_file_is_not_replaced_by_a_refused_write(root, context):
    path = write_store_file(root, "shared", {"k": make_entry("v")}, version="2")
    os.chmod(path, 0o644)
    before = os.stat(path)
    with pytest.raises(StoreError):
        context.set("k", "changed")
    after = os.stat(path)
    assert (after.st_ino, stat.S_IMODE(after.st_mode)) == (before.st_ino, 0o644)


@pytest.mark.parametrize("top", [{"version": 1}, {"type": "agent"}])
def test_wrong_version_type_or_store_type_is_not_written(root, context, top):
    path = write_store_file(root, "shared", {"k": make_entry("v")}, **top)
    before = path.read_bytes()
    with pytest.raises(StoreError):
        context.set("k", "changed")
    assert path.read_bytes() == before


# --- what a write keeps ---------------------------------------------------------------------------

def test_unknown_top_level_keys_and_entry_fields_survive_a_write(root, context):
    write_store_file(root, "shared", {"k": make_entry("v", x_field={"a": [1]})},
                     x_other_implementation={"n": 1, "ü": "ß"})
    order_before = list(read_store_file(root))
    context.set("k2", "new")
    context.set("k", "changed")
    data = read_store_file(root)
    assert data["x_other_implementation"] == {"n": 1, "ü": "ß"}
    assert list(data) == order_before
    assert data["entries"]["k"]["x_field"] == {"a": [1]}
    assert data["type"] == "shared" and data["version"] == "1"
    assert data["last_updated"] != "2026-01-01T00:00:00Z"


def test_file_format_two_space_indent_non_ascii_and_entry_order(root, context):
    for key in ("zeta", "alpha", "mu"):
        context.set(key, f"wert {key} ü 日本")
    context.set("alpha", "geändert")
    raw = store_path(root).read_bytes()
    text = raw.decode("utf-8")
    assert "ü" in text and "日本" in text and "geändert" in text
    assert "\\u" not in text
    assert list(json.loads(text)["entries"]) == ["zeta", "alpha", "mu"]
    lines = text.splitlines()
    assert lines[0] == "{"
    assert '  "type": "shared",' in lines
    assert any(line.startswith('    "zeta": {') for line in lines)
    assert any(line.startswith('      "value": ') for line in lines)
    assert serialize(json.loads(text)) == raw


def test_last_updated_is_set_on_write(root, context):
    context.set("k", "v")
    stamp = read_store_file(root)["last_updated"]
    assert stamp[-1] == "Z" and stamp[:2] == "20"


# --- the lock (§8.4) --------------------------------------------------------------------------------

def test_lock_is_reentrant_in_process(root, context):
    (root / "memory").mkdir(parents=True)
    with context_lock(root, timeout=0.5):
        with context_lock(root, timeout=0.5):
            context.set("inside", "nested lock")
        context.set("inside2", "still held")
    assert set(read_store_file(root)["entries"]) == {"inside", "inside2"}
    # and released afterwards: another open file description can take it
    fd = os.open(root / "memory" / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def _hold_lock(root: Path) -> int:
    (root / "memory").mkdir(parents=True, exist_ok=True)
    fd = os.open(root / "memory" / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)       # its own open file description: excludes ctx's
    return fd


@pytest.mark.slow
def test_write_times_out_while_another_holder_has_the_flock(root, context, monkeypatch):
    monkeypatch.setenv("CTX_LOCK_TIMEOUT", "0.5")
    fd = _hold_lock(root)
    try:
        started = time.monotonic()
        with pytest.raises(LockTimeout):
            context.set("k", "v")
        waited = time.monotonic() - started
        assert 0.4 <= waited < 5
        assert not store_path(root).exists()
    finally:
        os.close(fd)
    context.set("k", "v")
    assert read_store_file(root)["entries"]["k"]["value"] == "v"


@pytest.mark.slow
def test_write_waits_for_the_flock_then_proceeds(root, context, monkeypatch):
    monkeypatch.setenv("CTX_LOCK_TIMEOUT", "20")
    fd = _hold_lock(root)
    errors: list[BaseException] = []

    def write():
        try:
            context.set("k_locked", "x")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)
    writer = threading.Thread(target=write)
    try:
        writer.start()
        time.sleep(0.3)
        assert writer.is_alive(), "the write did not wait for the lock"
        assert "k_locked" not in read_store_file(root).get("entries", {})
    finally:
        os.close(fd)
    writer.join(10)
    assert not writer.is_alive() and not errors
    assert read_store_file(root)["entries"]["k_locked"]["value"] == "x"


@pytest.mark.slow
def test_lock_held_by_another_process_times_out_cli(root, run):
    (root / "memory").mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys\n"
         "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('locked', flush=True)\n"
         "sys.stdin.read()\n",
         str(root / "memory" / ".lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = run("set", "k", "v", env={"CTX_LOCK_TIMEOUT": "0.5"})
        assert result.exit_code == 5, result.output
        assert "lock" in result.stderr.lower()
        assert not store_path(root).exists()
    finally:
        holder.stdin.close()
        holder.wait(10)
    assert run("set", "k", "v").exit_code == 0


@pytest.mark.slow
def test_lock_excludes_other_threads_of_the_same_process(root):
    (root / "memory").mkdir(parents=True)
    holding = threading.Event()
    release = threading.Event()
    seen: dict[str, object] = {}

    def first():
        with context_lock(root, timeout=5):
            holding.set()
            release.wait(5)

    def second():
        holding.wait(5)
        try:
            with context_lock(root, timeout=0.3):
                seen["entered_while_held"] = not release.is_set()
                time.sleep(0.2)
        except LockTimeout:
            seen["timeout"] = True
        except BaseException as exc:
            seen["error"] = repr(exc)

    a = threading.Thread(target=first)
    b = threading.Thread(target=second)
    a.start()
    b.start()
    time.sleep(0.1)
    release.set()
    a.join(5)
    b.join(5)
    assert seen.get("entered_while_held") is not True, seen
    assert "error" not in seen, seen


# --- links -------------------------------------------------------------------------------------------

def test_symlinked_store_file_is_refused(root, context, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = write_store_file(elsewhere, "shared", {"k": make_entry("through a link")})
    before = target.read_bytes()
    (root / "memory").mkdir(parents=True)
    store_path(root).symlink_to(target)
    assert context.get("k")["value"] == "through a link"     # reading MAY follow it
    with pytest.raises(StoreError, match="link"):
        context.set("k", "changed")
    assert target.read_bytes() == before


def test_refused_write_leaves_a_symlinked_store_in_place(root, context, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = write_store_file(elsewhere, "shared", {"k": make_entry("through a link")})
    (root / "memory").mkdir(parents=True)
    store_path(root).symlink_to(target)
    with pytest.raises(StoreError):
        context.set("k", "changed")
    assert store_path(root).is_symlink()
    assert os.readlink(store_path(root)) == str(target)


def test_symlinked_lock_file_is_refused(root, context, tmp_path):
    (root / "memory").mkdir(parents=True)
    (root / "memory" / ".lock").symlink_to(tmp_path / "elsewhere.lock")
    with pytest.raises(StoreError):
        context.set("k", "v")
    assert not (tmp_path / "elsewhere.lock").exists()
    assert not store_path(root).exists()


def test_symlinked_memory_directory_is_refused(root, context, tmp_path):
    elsewhere = tmp_path / "elsewhere_memory"
    elsewhere.mkdir()
    root.mkdir()
    (root / "memory").symlink_to(elsewhere)
    with pytest.raises(ContextRootError):
        context.set("k", "v")
    assert os.listdir(elsewhere) == []


def test_the_search_for_keys_written_twice_runs_once_per_outside_change(root, git_context, monkeypatch):
    context = git_context  # the read index lives in .git/ctx
    """A file the read index describes passed the search when indexed (or ctx wrote it):
    a write parses it again without the search; an outside edit brings the search back."""
    calls = []
    real = store_mod._duplicate_name
    monkeypatch.setattr(store_mod, "_duplicate_name", lambda *a: calls.append(1) or real(*a))
    context.set("a", "one")
    context.get("a")  # indexed
    calls.clear()
    context.set("b", "two")
    context.set("c", "three")
    assert calls == []
    path = store_path(root)
    path.write_text(path.read_text().replace('"entries": {', '"entries": {\n    "c": {"value": "x"},', 1))
    with pytest.raises(StoreError, match="entry key 'c' appears twice"):
        context.set("d", "four")
    assert calls  # (the recorder's look at the outside change searches too)


def test_a_root_another_process_makes_meanwhile_is_taken_as_found(tmp_path, monkeypatch):
    """Two first writes at once: both see no root, one makes it, the other's makedirs finds it."""
    from ctx.storage import root as root_module
    where = tmp_path / "new root"
    made = os.makedirs

    def racing(path, *args, **kwargs):
        made(path, *args, **kwargs)  # the other process, a moment earlier
        made(path, *args, **kwargs)
    monkeypatch.setattr(root_module.os, "makedirs", racing)
    report = root_module.ensure_layout(str(where), memory_only=True)
    assert report.existed and report.created == ["memory/"] and (where / "memory").is_dir()
