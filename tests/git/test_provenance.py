"""Provenance: who wrote an entry (the author, ``CTX_AUTHOR``), on whose account it was
committed (the committer: the machine's git identity), and commits signed where git
is told to sign (ssh and openpgp keys, on the fast and the libgit2 commit paths, a
merge, a revert), checked by ``git verify-commit``, ``ctx log --verify`` and the
``require-signed`` check of a pull (``signing.refuse_untrusted``)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from support.gitutil import (
    author,
    commit_count,
    committer,
    git,
    git_out,
    parents,
    run_ctx,
    status_lines,
    subject,
)
from support.signutil import forge, identity, signature_header, spy_fast_commits, verified
from support.syncutil import network

SSH = shutil.which("ssh-keygen")
GPG = shutil.which("gpg")
needs_ssh = pytest.mark.skipif(SSH is None, reason="ssh-keygen is not installed")
needs_gpg = pytest.mark.skipif(GPG is None, reason="gpg is not installed")


# --- keys and git configuration -----------------------------------------------------------

def make_key(folder: Path, name: str) -> Path:
    """An ed25519 key without a passphrase; returns the private key's path (``.pub`` beside it)."""
    folder.mkdir(parents=True, exist_ok=True)
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)],
                   check=True, capture_output=True)
    return key


def allow(allowed: Path, principal: str, key: Path) -> Path:
    """Add ``key`` to an allowed signers file, as the operator would."""
    public = Path(f"{key}.pub").read_text().split()
    with open(allowed, "a") as handle:
        handle.write(f'{principal} namespaces="git" {public[0]} {public[1]}\n')
    return allowed


def ssh_signing(repo: Path, key: Path | str, allowed: Path | None = None, program: Path | None = None) -> None:
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", f"{key}.pub" if isinstance(key, Path) else key)
    git(repo, "config", "commit.gpgsign", "true")
    if allowed is not None:
        git(repo, "config", "gpg.ssh.allowedSignersFile", str(allowed))
    if program is not None:
        git(repo, "config", "gpg.ssh.program", str(program))


@pytest.fixture
def fast_commits(monkeypatch):
    """Every fast commit attempted: its result (None: fell back), or the error it raised."""
    return spy_fast_commits(monkeypatch)


@pytest.fixture
def keys(tmp_path):
    if SSH is None:
        pytest.skip("ssh-keygen is not installed")
    folder = tmp_path / "keys"
    olive, other = make_key(folder, "olive"), make_key(folder, "mallory")
    allowed = allow(folder / "allowed_signers", "olive@example.org", olive)
    return olive, other, allowed


@pytest.fixture
def signed_root(run, root, keys):
    """A context whose repository says: commit as Olive Operator, sign with Olive's ssh key."""
    assert run("init").exit_code == 0
    identity(root)
    ssh_signing(root, keys[0], keys[2])
    return root


# --- author and committer -----------------------------------------------------------------

@pytest.mark.parametrize("slow", [False, True], ids=["fast", "libgit2"])
def test_the_committer_is_the_machines_git_identity(run, root, fast_commits, slow):
    assert run("init").exit_code == 0
    identity(root)
    env = {"CTX_GIT_SLOW": "1"} if slow else {}
    for value in ("v1", "v2"):  # the first after the config change goes through libgit2
        assert run("set", "k", value, author="Agent Z", env=env).exit_code == 0
        assert author(root) == ("Agent Z", "agent-z@ctx.invalid")
        assert committer(root) == ("Olive Operator", "olive@example.org")
    assert any(isinstance(c, tuple) for c in fast_commits) != slow
    # without CTX_AUTHOR the operator wrote it and committed it
    assert run("set", "k", "v3", env=env).exit_code == 0
    assert author(root) == committer(root) == ("Olive Operator", "olive@example.org")
    reflog = git_out(root, "reflog", "-1", "--format=%gn <%ge>")
    assert reflog.strip() == "Olive Operator <olive@example.org>"


def test_outside_changes_and_doctor_commits_are_committed_by_the_machine(run, root, write_store):
    from support.stores import make_entry
    assert run("init").exit_code == 0
    identity(root)
    write_store("shared", {"hand": make_entry("typed by hand")})
    assert run("doctor").exit_code == 0
    assert subject(root).startswith("external change")
    assert author(root) == ("system", "system@ctx.invalid")
    assert committer(root) == ("Olive Operator", "olive@example.org")


def test_without_an_identity_the_committer_is_the_author(run, root):
    assert run("set", "k", "v", author="Agent Z").exit_code == 0
    assert committer(root) == author(root) == ("Agent Z", "agent-z@ctx.invalid")
    assert run("set", "k", "w", author="Agent Z", env={"CTX_GIT_SLOW": "1"}).exit_code == 0
    assert committer(root) == author(root)
    line = run("log", "-n", "1").stdout
    assert "Agent Z  set shared/k" in line and " via " not in line
    row = json.loads(run("log", "-n", "1", "--json").stdout)[0]
    assert (row["committer"], row["committer_email"]) == (row["author"], row["email"])


def test_log_and_history_say_who_wrote_it_and_on_whose_account(run, root):
    assert run("set", "k", "v0").exit_code == 0
    identity(root)
    assert run("set", "k", "v1", author="Agent Z").exit_code == 0
    assert run("set", "k", "v2").exit_code == 0
    lines = run("log").stdout.splitlines()
    assert "  Agent Z via Olive Operator  set shared/k: v1" in lines[1]
    assert "  Olive Operator  set shared/k: v2" in lines[0] and " via " not in lines[0]
    rows = json.loads(run("log", "--json").stdout)
    assert rows[1]["author"] == "Agent Z" and rows[1]["email"] == "agent-z@ctx.invalid"
    assert rows[1]["committer"] == "Olive Operator" and rows[1]["committer_email"] == "olive@example.org"
    history = run("history", "k").stdout.splitlines()
    assert "Agent Z via Olive Operator" in history[1]
    versions = json.loads(run("history", "k", "--json").stdout)
    assert versions[1]["committer"] == "Olive Operator" and versions[1]["author"] == "Agent Z"
    # read again from the history index: the committer is kept there too
    assert json.loads(run("history", "k", "--json").stdout)[1]["committer"] == "Olive Operator"


@pytest.mark.slow
def test_the_users_git_config_identity_and_signing_in_a_real_process(root, keys):
    home = Path(os.environ["HOME"])
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Global Person\n\temail = global@example.org\n"
        f"\tsigningkey = {keys[0]}.pub\n[gpg]\n\tformat = ssh\n"
        f"[gpg \"ssh\"]\n\tallowedSignersFile = {keys[2]}\n[commit]\n\tgpgsign = true\n")
    for value in ("v1", "v2"):
        done = run_ctx("set", "k", value, env={"CTX_AUTHOR": "Agent Z"})
        assert done.returncode == 0, done.stderr
        assert author(root) == ("Agent Z", "agent-z@ctx.invalid")
        assert committer(root) == ("Global Person", "global@example.org")
        assert verified(root)


# --- signed commits -----------------------------------------------------------------------

@pytest.mark.parametrize("slow", [False, True], ids=["fast", "libgit2"])
def test_ssh_signed_writes_verify_with_git(run, signed_root, fast_commits, slow):
    root = signed_root
    env = {"CTX_GIT_SLOW": "1"} if slow else {}
    for value in ("v1", "v2", "v3"):
        result = run("set", "k", value, author="Agent Z", env=env)
        assert result.exit_code == 0, result.stderr
        assert signature_header(root) and verified(root)
    assert any(isinstance(c, tuple) for c in fast_commits) != slow
    shown = git(root, "log", "--show-signature", "-1").stdout
    assert 'Good "git" signature for olive@example.org' in shown
    assert status_lines(root) == []
    assert git(root, "fsck", "--strict", "--no-dangling", check=False).returncode == 0


def test_a_revert_and_doctors_commit_are_signed(run, signed_root, write_store):
    from support.stores import make_entry
    root = signed_root
    assert run("set", "k", "v1", author="Agent Z").exit_code == 0
    assert run("set", "k", "v2", author="Agent Z").exit_code == 0
    result = run("revert", "HEAD", author="Agent Z")
    assert result.exit_code == 0, result.stderr
    assert subject(root).startswith("revert") and verified(root)
    write_store("agent", {"hand": make_entry("typed by hand")})
    assert run("doctor").exit_code == 0
    assert subject(root).startswith("external change") and verified(root)


def _failing_signer(folder: Path, flag: Path) -> Path:
    """An ssh-keygen that signs until ``flag`` exists, then fails as a locked agent key would."""
    script = folder / "failing-signer"
    script.write_text(f'#!/bin/sh\nif [ -e "{flag}" ]; then\n'
                      '  echo "sign_and_send_pubkey: signing failed: agent refused operation" >&2\n'
                      '  echo "second line" >&2\n  exit 1\nfi\n'
                      f'exec {SSH} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


@pytest.mark.parametrize("slow", [False, True], ids=["fast", "libgit2"])
def test_a_failing_signer_fails_the_write_and_leaves_nothing_written(run, root, keys, tmp_path,
                                                                    fast_commits, slow):
    flag = tmp_path / "refuse"
    signer = _failing_signer(tmp_path, flag)
    assert run("init").exit_code == 0
    identity(root)
    ssh_signing(root, keys[0], keys[2], program=signer)
    env = {"CTX_GIT_SLOW": "1"} if slow else {}
    assert run("set", "k", "before", author="Agent Z", env=env).exit_code == 0
    store = root / "memory" / "shared.json"
    before_bytes, head = store.read_bytes(), git_out(root, "rev-parse", "HEAD")
    flag.touch()
    fast_commits.clear()
    result = run("set", "k", "after", author="Agent Z", env=env)
    assert result.exit_code == 6, (result.stdout, result.stderr)
    assert str(signer) in result.stderr and "agent refused operation" in result.stderr
    assert "second line" not in result.stderr and "nothing was written" in result.stderr
    assert store.read_bytes() == before_bytes
    assert git_out(root, "rev-parse", "HEAD") == head
    assert status_lines(root) == []
    assert not (root / ".git" / "ctx" / "committing").exists()
    if not slow:  # the one-commit way was taken, and failed (git's objects dangle: gc's to prune)
        assert [type(c) for c in fast_commits] and all(isinstance(c, Exception) for c in fast_commits)
    from support.stores import read_entries
    assert read_entries(root)["k"]["value"] == "before"
    flag.unlink()
    assert run("set", "k", "after", author="Agent Z", env=env).exit_code == 0
    assert verified(root)


def test_signing_without_a_key_says_what_to_set(run, root):
    assert run("init").exit_code == 0
    git(root, "config", "gpg.format", "ssh")
    git(root, "config", "commit.gpgsign", "true")
    result = run("set", "k", "v")
    assert result.exit_code == 6
    assert "user.signingkey" in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert commit_count(root) == 1 and status_lines(root) == []


@pytest.mark.slow
def test_a_literal_key_signs_with_the_agents_key(run, signed_root, keys, tmp_path, monkeypatch):
    if shutil.which("ssh-agent") is None:
        pytest.skip("ssh-agent is not installed")
    sock = Path(tempfile.mkdtemp(prefix="ctx-agent-")) / "agent.sock"
    started = subprocess.run(["ssh-agent", "-s", "-a", str(sock)], capture_output=True, text=True, check=True)
    pid = int(started.stdout.split("SSH_AGENT_PID=")[1].split(";")[0])
    try:
        monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
        subprocess.run(["ssh-add", "-q", str(keys[0])], check=True, capture_output=True)
        literal = "key::" + Path(f"{keys[0]}.pub").read_text().strip()
        git(signed_root, "config", "user.signingkey", literal)
        for n, slow in enumerate(({}, {"CTX_GIT_SLOW": "1"}, {})):
            assert run("set", "k", f"v{n}", env=slow).exit_code == 0
            assert verified(signed_root)
    finally:
        os.kill(pid, signal.SIGTERM)
        shutil.rmtree(sock.parent, ignore_errors=True)


@pytest.fixture
def gnupg(monkeypatch):
    """A throwaway GNUPGHOME with a generated signing key for Olive (short path: the agent's socket)."""
    if GPG is None:
        pytest.skip("gpg is not installed")
    home = Path(tempfile.mkdtemp(prefix="ctx-gpg-"))
    home.chmod(0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    done = subprocess.run([GPG, "--batch", "--passphrase", "", "--quick-gen-key",
                           "Olive Operator <olive@example.org>", "ed25519", "sign", "never"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        pytest.skip(f"gpg could not make a key here: {done.stderr.strip()[:200]}")
    yield home
    subprocess.run(["gpgconf", "--kill", "gpg-agent"], capture_output=True)
    shutil.rmtree(home, ignore_errors=True)


@pytest.mark.slow
@needs_gpg
def test_openpgp_signed_writes_verify_with_git(run, root, gnupg, fast_commits):
    assert run("init").exit_code == 0
    identity(root)  # no user.signingkey: gpg signs as the committer, as git does
    git(root, "config", "commit.gpgsign", "true")
    for n, env in enumerate(({}, {}, {"CTX_GIT_SLOW": "1"})):
        result = run("set", "k", f"v{n}", author="Agent Z", env=env)
        assert result.exit_code == 0, result.stderr
        assert verified(root)
    assert any(isinstance(c, tuple) for c in fast_commits)
    rows = json.loads(run("log", "--verify", "--json").stdout)
    assert [r["signature"] for r in rows] == ["good", "good", "good", "unsigned"]
    assert "olive@example.org" in rows[0]["signer"]
    git(root, "config", "gpg.program", "/bin/false")
    result = run("set", "k", "refused", author="Agent Z")
    assert result.exit_code == 6 and "/bin/false" in result.stderr


# --- a merge made by sync -------------------------------------------------------------------

@pytest.mark.slow
def test_a_merge_made_by_sync_is_signed_by_the_machine(tmp_path, keys):
    olive, mallory, allowed = keys
    bare, (one, two) = network(tmp_path, "Agent One", "Agent Two")
    allow(allowed, "bob@example.org", mallory)
    identity(one.root)
    ssh_signing(one.root, olive, allowed)
    identity(two.root, "Bob Operator", "bob@example.org")
    ssh_signing(two.root, mallory, allowed)
    one.ok("set", "a", "from one")
    one.ok("push")
    two.ok("set", "b", "from two")
    two.ok("sync")
    assert len(parents(two.root, "HEAD")) == 2
    assert git(two.root, "verify-commit", "HEAD", check=False).returncode == 0
    assert committer(two.root) == ("Bob Operator", "bob@example.org")
    assert author(two.root) == ("Agent Two", "agent-two@ctx.invalid")
    one.ok("sync")
    assert one.head() == two.head()
    for rev in ("HEAD", "HEAD^1", "HEAD^2"):
        assert git(one.root, "verify-commit", rev, check=False).returncode == 0, rev


# --- ctx log --verify -----------------------------------------------------------------------

def test_log_verify_marks_good_unknown_bad_and_unsigned(run, signed_root, keys):
    root = signed_root
    assert run("set", "k", "olive's", author="Agent Z").exit_code == 0
    git(root, "config", "user.signingkey", f"{keys[1]}.pub")  # a key nobody allowed
    assert run("set", "k", "mallory's", author="Agent Z").exit_code == 0
    git(root, "config", "user.signingkey", f"{keys[0]}.pub")
    assert run("set", "k", "to be forged", author="Agent Z").exit_code == 0
    forge(root, "to be forged", "forged value")
    rows = json.loads(run("log", "--verify", "--json").stdout)
    assert [r["signature"] for r in rows] == ["bad", "unknown signer", "good", "unsigned"]
    assert rows[2]["signer"] == "olive@example.org" and rows[0]["committer"] == "Olive Operator"
    assert rows[1]["signature_detail"].startswith("SHA256:")
    lines = run("log", "--verify").stdout.splitlines()
    assert [line.split("  ")[1] for line in lines] == ["[bad]", "[unknown signer]",
                                                       "[good: olive@example.org]", "[unsigned]"]
    assert "Agent Z via Olive Operator" in lines[2]
    plain = run("log", "--json").stdout
    assert "signature" not in plain


def test_log_verify_without_allowed_signers_trusts_no_one(run, signed_root):
    root = signed_root
    assert run("set", "k", "v", author="Agent Z").exit_code == 0
    git(root, "config", "--unset", "gpg.ssh.allowedSignersFile")
    row = json.loads(run("log", "-n", "1", "--verify", "--json").stdout)[0]
    assert row["signature"] == "unknown signer" and "allowedSignersFile" in row["signature_detail"]


# --- require-signed -------------------------------------------------------------------------

@pytest.mark.slow
def test_require_signed_refuses_unsigned_and_wrongly_signed_remote_commits(tmp_path, keys):
    import pygit2

    from ctx.errors import Conflict
    from ctxgit.guard.trust import incoming, refuse_untrusted, untrusted_commits
    olive, mallory, allowed = keys
    bare, (one, two) = network(tmp_path, "Agent One", "Agent Two")
    identity(one.root)
    ssh_signing(one.root, olive, allowed)
    identity(two.root, "Bob Operator", "bob@example.org")
    two.git("config", "gpg.ssh.allowedSignersFile", str(allowed))
    two.author = ""  # require-signed protects the operator: the operator turns it on, no agent may
    two.ok("config", "require-signed", "true")
    two.author = "Agent Two"

    def fetched():
        two.git("fetch", "-q", "origin")
        repo = pygit2.Repository(str(two.root))
        return repo, repo.references["refs/remotes/origin/main"].target

    one.ok("set", "a", "signed by an allowed key")
    one.ok("push")
    repo, theirs = fetched()
    assert untrusted_commits(repo, incoming(repo, theirs, repo.head.target)) == []
    refuse_untrusted(two.root, repo, theirs, "origin/main")  # accepted
    two.ok("pull")

    one.git("config", "commit.gpgsign", "false")
    one.ok("set", "b", "not signed")
    unsigned = one.head()
    one.ok("push")
    repo, theirs = fetched()
    found = untrusted_commits(repo, incoming(repo, theirs, repo.head.target))
    assert found == [(unsigned, "Agent One <agent-one@ctx.invalid>", "unsigned")]
    with pytest.raises(Conflict) as refused:
        refuse_untrusted(two.root, repo, theirs, "origin/main")
    assert unsigned[:8] in str(refused.value) and "Agent One" in str(refused.value)

    one.git("config", "commit.gpgsign", "true")
    one.git("config", "user.signingkey", f"{mallory}.pub")
    one.ok("set", "c", "signed by a key nobody allowed")
    wrong = one.head()
    one.ok("push")
    repo, theirs = fetched()
    found = untrusted_commits(repo, incoming(repo, theirs, repo.head.target))
    assert [f[0] for f in found] == [wrong, unsigned]
    assert "not among the allowed signers" in found[0][2]
    with pytest.raises(Conflict) as refused:
        refuse_untrusted(two.root, repo, theirs, "origin/main")
    assert wrong[:8] in str(refused.value) and "2 commits" in str(refused.value)

    # through the commands: sync and pull refuse (exit 4), naming the commits; nothing taken in
    before = two.head()
    for command in ("sync", "pull"):
        refused_cli = two.run(command)
        assert refused_cli.exit_code == 4, (command, refused_cli.output)
        assert wrong[:8] in refused_cli.stderr and "require-signed" in refused_cli.stderr
        assert two.head() == before

    two.author = ""  # the operator turns it off again (an agent may not: test_operator_voice.py)
    two.ok("config", "require-signed", "false")  # off: the check lets everything in
    two.author = "Agent Two"
    refuse_untrusted(two.root, repo, theirs, "origin/main")
    two.ok("sync")
    assert two.head() != before


def test_doctor_lists_history_commits_no_allowed_signer_signed(run, signed_root):
    root = signed_root
    assert run("set", "k", "v", author="Agent Z").exit_code == 0
    assert run("doctor", "--check").exit_code == 0
    assert run("config", "require-signed", "true").exit_code == 0
    result = run("doctor", "--check")
    assert result.exit_code == 1
    init = git_out(root, "rev-list", "--max-parents=0", "HEAD").strip()
    assert "1 commit in the history is not signed" in result.stdout
    assert f"{init[:8]} by operator <operator@ctx.invalid>: unsigned" in result.stdout
    assert json.loads(run("config", "--json").stdout)["require-signed"] is True


@pytest.mark.slow
def test_purge_signs_again_the_signed_commits_it_rewrites(run, signed_root):
    root = signed_root
    assert run("set", "slipped", "not a secret but purged", author="Agent Z").exit_code == 0
    assert run("set", "k", "kept", author="Agent Z").exit_code == 0
    result = run("purge", "slipped", "--yes")
    assert result.exit_code == 0, result.stderr
    ids = git_out(root, "rev-list", "HEAD").split()
    assert [verified(root, c) for c in ids] == [True, True, False]  # the init commit was never signed
