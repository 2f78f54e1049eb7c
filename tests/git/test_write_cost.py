"""A write costs what it changes: it reads, checks and rewrites only its entry, and
its commit is one ``git commit`` whenever the repository is as ctx's last commit left it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ctx.storage import files
from support.contexts import Context
from support.stores import store_path


def _git(root, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, env=env, check=True).stdout


def _count_parses(monkeypatch) -> list[str]:
    parsed: list[str] = []
    real = files.parse_store

    def counting(name, *args, **kwargs):
        parsed.append(name)
        return real(name, *args, **kwargs)
    monkeypatch.setattr(files, "parse_store", counting)
    monkeypatch.setattr("ctx.storage.cache.parse_store", counting)  # the read index rebuilds from a parse
    return parsed


def test_a_write_to_a_store_the_index_describes_parses_no_store_file(root, run, monkeypatch):
    for i in range(5):
        assert run("set", f"k{i}", f"value {i}", author="A").exit_code == 0
    parsed = _count_parses(monkeypatch)
    for args in (("set", "k1", "new value"), ("set", "k9", "a new key"), ("amend", "k2", "a note"),
                 ("delete", "k3"), ("supersede", "k4", "--by", "k1")):
        assert run(*args, author="A").exit_code == 0, args
    assert parsed == []
    entries = json.loads(store_path(root, "shared").read_text())["entries"]
    assert list(entries) == ["k0", "k1", "k2", "k4", "k9"]
    assert entries["k1"]["value"] == "new value" and entries["k4"]["status"] == "superseded"
    assert Context(root).get("k9")["value"] == "a new key"  # the index kept in step
    _git(root, "fsck", "--strict")
    assert _git(root, "status", "--porcelain") == ""


def test_letters_handoffs_and_due_dates_parse_no_store_file(root, run, monkeypatch):
    for i in range(5):
        assert run("set", f"k{i}", f"value {i}", author="A").exit_code == 0
    parsed = _count_parses(monkeypatch)
    for args in (("send", "Agent Two", "please review k1"), ("remind", "k1", "2030-01-01"), ("review", "k1"),
                 ("handoff", "Agent Two", "--baton", "k0", "--note", "yours now")):
        assert run(*args, author="A").exit_code == 0, args
    assert parsed == []
    entries = json.loads(store_path(root, "shared").read_text())["entries"]
    letters = [k for k in entries if k.startswith("comms:agent_two:")]
    assert len(letters) == 2 and entries["k0"]["holder"] == "Agent Two" and entries["k1"]["last_review"]
    _git(root, "fsck", "--strict")
    assert _git(root, "status", "--porcelain") == ""


def test_an_outside_edit_is_parsed_once_then_writes_are_spliced_again(root, run, monkeypatch):
    assert run("set", "a", "one", author="A").exit_code == 0
    path = store_path(root, "shared")
    path.write_text(path.read_text().replace('"one"', '"ONE"'))
    parsed = _count_parses(monkeypatch)
    assert run("set", "b", "two", author="A").exit_code == 0
    assert parsed.count("shared") >= 1  # changed outside ctx: read whole, and indexed again
    parsed.clear()
    assert run("set", "c", "three", author="A").exit_code == 0
    assert parsed == []
    assert json.loads(path.read_text())["entries"]["a"]["value"] == "ONE"


def test_an_incomplete_entry_written_by_hand_still_stops_a_write(root, run):
    assert run("set", "a", "one", author="A").exit_code == 0
    path = store_path(root, "shared")
    data = json.loads(path.read_text())
    del data["entries"]["a"]["source"]
    path.write_text(json.dumps(data, indent=2) + "\n")
    before = path.read_bytes()
    for _ in range(2):  # the second time the index describes the file: it still knows
        assert run("get", "a").exit_code == 0
        done = run("set", "b", "two", author="A")
        assert done.exit_code == 3 and "lacks source" in done.stderr
        assert path.read_bytes() == before


@pytest.mark.parametrize("slow", [None, "1"], ids=["fast-way", "libgit2-way"])
def test_a_credential_in_an_entry_is_refused_by_the_one_commit_check_either_way(root, run, monkeypatch, slow):
    from ctx.changes import Edit
    from ctx.errors import CredentialRefused
    from ctxgit.recorder import GitRecorder
    leak = "AKIA" + "QWERTYUIOPASDFGH"
    assert run("set", "a", "one", author="A").exit_code == 0
    assert run("set", "b", "two", author="A").exit_code == 0
    if slow:
        monkeypatch.setenv("CTX_GIT_SLOW", "1")
    context = Context(root, "A", recorder_factory=GitRecorder)

    def mutate(stores):  # a field no command sets, so only the commit's check sees it
        before = stores["shared"].entry("b")
        after = dict(before, notes=f"the key is {leak}")
        stores["shared"].put("b", after)
        return [Edit("shared", "b", before, after)]
    with pytest.raises(CredentialRefused) as refused:
        context.transact("set", ["shared"], mutate)
    assert "shared/b notes" in str(refused.value) and "ctx delete b --store shared" in str(refused.value)
    assert leak not in store_path(root, "shared").read_text()  # put back as it was
    assert leak not in _git(root, "log", "-p")
    assert run("set", "c", "three", author="A").exit_code == 0


def test_a_credential_kept_with_force_and_amended_is_not_new(root, run):
    leak = "AKIA" + "QWERTYUIOPASDFGH"
    for slow in (None, "1"):
        assert run("set", "k", f"token {leak}", "--force", author="A", env={"CTX_GIT_SLOW": slow}).exit_code == 0
        assert run("amend", "k", "rotated soon", author="A", env={"CTX_GIT_SLOW": slow}).exit_code == 0


def test_an_operator_without_a_git_identity_commits_the_one_commit_way(root, run, monkeypatch):
    from support.signutil import spy_fast_commits
    assert run("set", "a", "one").exit_code == 0
    ways = spy_fast_commits(monkeypatch)
    assert run("set", "b", "two").exit_code == 0
    assert ways == [("git commit",)]
    assert _git(root, "log", "-1", "--format=%an <%ae>|%cn <%ce>").strip() == \
        "operator <operator@ctx.invalid>|operator <operator@ctx.invalid>"


@pytest.mark.parametrize("same_tick", [True, False])
def test_a_change_in_the_tick_of_the_last_commit_sends_the_write_to_ask_git(root, run, same_tick):
    from pathlib import Path

    from ctxgit.gitfiles.layout import STATE
    from ctxgit.plumbing import lastcommit
    assert run("set", "a", "one", author="A").exit_code == 0
    assert run("set", "a", "two", author="A").exit_code == 0
    state_file = root / ".git" / STATE
    recorded = json.loads(state_file.read_text())["files"]["memory/shared.json"]
    path = store_path(root, "shared")
    with open(path, "r+b") as handle:  # in place: the same inode and size, another byte
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace(b'"two"', b'"TWO"'))
    os.utime(path, ns=(recorded[1], recorded[1]))  # and the time it had: only the bytes tell
    later = recorded[1] if same_tick else recorded[1] + 5_000_000
    os.utime(state_file, ns=(later, later))
    state, why = lastcommit.check(Path(root))
    assert (state is None) == same_tick  # git's rule: a file older than the record is taken as clean
    if same_tick:
        assert why == "memory/shared.json may have changed in the tick of ctx's last commit"
        assert run("set", "b", "three", author="A").exit_code == 0
        assert '"TWO"' in _git(root, "show", "HEAD~1:memory/shared.json")  # committed first, as found


def _commit_args(monkeypatch) -> list[list[str]]:
    """The arguments of every ``git commit`` ctx runs from now on."""
    from ctxgit.plumbing import gitcommit
    seen: list[list[str]] = []
    real = gitcommit._git

    def spy(root, args, env=None, data=None):
        if args and args[0] == "commit":
            seen.append(list(args))
        return real(root, args, env, data)
    monkeypatch.setattr(gitcommit, "_git", spy)
    return seen


def test_a_write_has_git_read_its_store_file_once_when_nothing_else_is_staged(root, run, monkeypatch):
    # `git commit --only` hashes the file into the index and again into a temporary index
    # made from HEAD; with nothing else staged, `--include` commits the same tree reading it once
    for args in (("set", "a", "one"), ("set", "a", "two")):
        assert run(*args, author="A").exit_code == 0
    seen = _commit_args(monkeypatch)
    for args in (("set", "b", "three"), ("amend", "a", "a note"), ("set", "a", "four")):
        assert run(*args, author="A").exit_code == 0, args
    assert len(seen) == 3 and all("--include" in a and "--only" not in a for a in seen), seen
    assert _git(root, "status", "--porcelain") == ""
    assert json.loads(_git(root, "show", "HEAD:memory/shared.json"))["entries"]["a"]["value"] == "four"


def test_a_file_the_operator_staged_is_never_committed_by_a_write(root, run, monkeypatch):
    assert run("set", "a", "one", author="A").exit_code == 0
    (root / "notes.txt").write_text("mine, not ctx's\n")
    _git(root, "add", "notes.txt")
    seen = _commit_args(monkeypatch)
    for value in ("two", "three", "four"):  # the first asks git what changed, the others commit at once
        assert run("set", "a", value, author="A").exit_code == 0
    assert "notes.txt" not in _git(root, "ls-tree", "-r", "--name-only", "HEAD")
    assert _git(root, "diff", "--cached", "--name-only").split() == ["notes.txt"]
    assert seen and all("--only" in a for a in seen), seen
    _git(root, "reset", "-q", "--", "notes.txt")  # unstaged: the index is HEAD's again
    seen.clear()
    for value in ("five", "six"):
        assert run("set", "a", value, author="A").exit_code == 0
    assert "--include" in seen[-1], seen
    assert "notes.txt" not in _git(root, "ls-tree", "-r", "--name-only", "HEAD")


def _loose_size(root, spec: str) -> int:
    oid = _git(root, "rev-parse", spec).strip()
    return (root / ".git" / "objects" / oid[:2] / oid[2:]).stat().st_size


@pytest.mark.parametrize("told", [None, "global", "local"])
def test_loose_objects_are_kept_uncompressed_unless_git_is_told_otherwise(root, run, told):
    # a loose object lives until the next packing (pack.py), which compresses as git's
    # settings say: deflating each whole store file again is most of git's part of a write
    if told == "global":
        with open(os.environ["GIT_CONFIG_GLOBAL"], "a") as config:
            config.write("[core]\n\tcompression = 9\n")
    assert run("set", "a", "one " * 200, author="A").exit_code == 0
    if told == "local":
        _git(root, "config", "core.looseCompression", "4")
    assert run("set", "b", "two " * 200, author="A").exit_code == 0
    local = subprocess.run(["git", "-C", str(root), "config", "--local", "--get", "core.looseCompression"],
                           capture_output=True, text=True).stdout.strip()
    assert local == {None: "0", "global": "", "local": "4"}[told]
    size = store_path(root, "shared").stat().st_size
    stored = _loose_size(root, "HEAD:memory/shared.json")
    assert (stored > size) if told is None else (stored < size / 2)
    _git(root, "fsck", "--strict")


HERE = str(Path(__file__).resolve().parents[2])


def test_a_write_that_starts_the_packing_does_not_load_subprocess(root, run):
    # the packing starts every CTX_PACK_THRESHOLD bytes written (every few writes of a large
    # store): `subprocess` (with `re`, `enum`, `locale`...) would be paid by each such write
    assert run("set", "a", "one", author="A").exit_code == 0
    code = (f"import sys\nsys.path.insert(0, {HERE!r})\n"  # (-I: this checkout, not the installed one)
            "sys.argv = ['ctx', 'set', 'b', 'two']\nfrom ctx.cli.fast import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', 'subprocess' in sys.modules)")
    env = dict(os.environ, CTX_HOME=str(root), CTX_AUTHOR="A", CTX_PACK_THRESHOLD="1")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, env=env, cwd=HERE)
    assert "LOADED False" in out.stdout, out.stdout + out.stderr
    assert (root / ".git" / "ctx" / "loose-bytes").read_text().strip() == "0"  # the packing started


def test_the_packing_holds_none_of_ctxs_files_open(root, run, tmp_path):
    # it may run for seconds: holding the context lock (or any file of the root) would stall writes
    from support.gitutil import run_ctx, wait_for
    assert run("set", "a", "one", author="A").exit_code == 0
    bin_dir, seen = tmp_path / "bin", tmp_path / "fds.txt"
    bin_dir.mkdir()
    stub = bin_dir / "git"
    stub.write_text(f"#!/bin/sh\nfor a in \"$@\"; do\n"
                    "if [ \"$a\" = gc ] || [ \"$a\" = repack ]; then\n"  # its own descriptors
                    "  x=; for f in /proc/$$/fd/*; do x=\"$x${f##*/}=$(readlink \"$f\")\n\"; done\n"
                    f"  printf '%s' \"$x\" > '{seen}.tmp'; mv '{seen}.tmp' '{seen}'; exit 0\nfi; done\n"
                    f"exec {shutil.which('git')} \"$@\"\n")
    stub.chmod(0o755)
    done = run_ctx("set", "b", "two", env={"CTX_HOME": str(root), "CTX_AUTHOR": "A", "CTX_PACK_THRESHOLD": "1",
                                           "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    assert done.returncode == 0, done.stderr
    assert wait_for(seen.exists, timeout=10)
    targets = dict(line.split("=", 1) for line in seen.read_text().splitlines() if line)
    assert [targets[fd] for fd in ("0", "1", "2")] == [os.devnull] * 3, targets
    assert not [t for t in targets.values() if str(root) in t], targets


def test_a_writes_own_records_are_renamed_onto_no_file(root, run, monkeypatch):
    # ext4 (auto_da_alloc) writes a file renamed over another out to disk before the rename
    # returns: the record of the last commit, the packing's count and the since-log's lag,
    # replaced at every write, are removed first (a missing one is made again)
    from ctx.storage import atomic
    for value in ("one", "two"):
        assert run("set", "a", value, author="A").exit_code == 0
    over: list[str] = []
    real = atomic.os.replace

    def replace(src, dst, *args, **kwargs):
        if os.path.exists(dst):
            over.append(os.path.basename(dst))
        return real(src, dst, *args, **kwargs)
    monkeypatch.setattr(atomic.os, "replace", replace)
    assert run("set", "a", "three", author="A").exit_code == 0
    assert not {"state.json", "loose-bytes", "since-lag"} & set(over), over
    assert (root / ".git" / "ctx" / "state.json").exists() and (root / ".git" / "ctx" / "loose-bytes").exists()
    seen = _commit_args(monkeypatch)
    assert run("set", "a", "four", author="A").exit_code == 0
    assert len(seen) == 1 and "--include" in seen[0]  # the record still takes the one-commit way
