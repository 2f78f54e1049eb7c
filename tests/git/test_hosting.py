"""Sync through real git hosting on 127.0.0.1: a private sshd and git's smart HTTP behind
Basic auth (tests/support/servers.py), set up as people set them up: a key named in
~/.ssh/config, an ssh agent, GIT_SSH_COMMAND, a credential helper. Each failure ends in
one line naming its cause, a non-zero exit, no prompt, no hang past the limit, and
nothing lost (the write is committed here and the next sync delivers it). Both
transports: git, and libgit2 (``CTX_GIT_TRANSPORT=libgit2``).

The servers are shared by the tests of this module; each test has its own home (its
~/.ssh and ~/.git-credentials) and its own repositories on them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from support.gitutil import wait_for
from support.servers import SSHD, HttpServer, SilentServer, SshServer, bare_repo, closed_port, keygen, ssh_client
from support.syncutil import Machine, bare_head, hanging_background_push, one_line_error

pytestmark = pytest.mark.slow

WAYS = ["git", "libgit2"]


# --- the servers (one of each for the module) and the client's set-up ---------------------------------

@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("keys")
    return {name: keygen(base / name / "id_ed25519", name) for name in ("good", "other", "hostkey2")}


@pytest.fixture(scope="module")
def sshd(tmp_path_factory, keys):
    if not os.path.exists(SSHD) or shutil.which("ssh") is None:
        pytest.skip("sshd is not installed (apt-get install openssh-server)")
    server = SshServer(tmp_path_factory.mktemp("sshd"))
    server.authorize(keys["good"])
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    server = HttpServer(tmp_path_factory.mktemp("http"))
    yield server
    server.stop()


@pytest.fixture
def home(monkeypatch) -> Path:
    """The test's home; no ssh agent unless a test starts one."""
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    monkeypatch.delenv("GIT_ASKPASS", raising=False)
    monkeypatch.delenv("SSH_ASKPASS", raising=False)
    return Path(os.environ["HOME"])


@pytest.fixture
def ssh_setup(home, tmp_path, monkeypatch, sshd, keys):
    """~/.ssh/config naming the good key, the server's host key known, ``ssh`` reading them."""
    ssh_client(home, tmp_path / "bin", keys["good"])
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    known(home, sshd.known_hosts_line())
    return home


def known(home: Path, text: str) -> None:
    (home / ".ssh" / "known_hosts").write_text(text)


def identity(home: Path, key: Path | None) -> None:
    config = home / ".ssh" / "config"
    lines = [line for line in config.read_text().splitlines() if "IdentityFile" not in line]
    lines.append(f"  IdentityFile {key if key else home / '.ssh' / 'no-such-key'}")
    config.write_text("\n".join(lines) + "\n")


def new_repo(server, name: str | None = None) -> tuple[Path, str]:
    name = name or f"ctx-{uuid.uuid4().hex[:8]}.git"
    where = server.repos if isinstance(server, SshServer) else server.root
    return bare_repo(where / name), server.url(name)


def last_result(machine: Machine) -> str:
    return json.loads(machine.sh("status", "--json").stdout)["last_sync_result"]


def two_machines(tmp_path: Path, url: str) -> tuple[Machine, Machine]:
    a, b = Machine(tmp_path / "a", "A"), Machine(tmp_path / "b", "B")
    a.sh("clone", url, str(a.root))
    a.sh("set", "from_a", "written on A")
    a.sh("sync")
    b.sh("clone", url, str(b.root))
    assert (b.entry("from_a") or {}).get("value") == "written on A"
    b.sh("set", "from_b", "written on B")
    b.sh("sync")
    a.sh("sync")
    assert (a.entry("from_b") or {}).get("value") == "written on B"
    return a, b


# --- ssh: the ways people set it up ----------------------------------------------------------------

@pytest.mark.parametrize("way", WAYS)
def test_clone_push_and_sync_with_the_key_named_in_ssh_config_and_no_agent(tmp_path, monkeypatch, ssh_setup,
                                                                          sshd, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    bare, url = new_repo(sshd)
    a, b = two_machines(tmp_path, url)
    assert bare_head(bare) == a.head() == b.head()


@pytest.fixture
def agent(tmp_path, monkeypatch, keys):
    """An ssh agent holding the good key, for this test only."""
    import tempfile
    short = Path(tempfile.mkdtemp(prefix="agent", dir="/tmp"))  # a socket's path must be short
    sock = short / "sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    assert wait_for(sock.exists, 10)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    subprocess.run(["ssh-add", "-q", str(keys["good"])], check=True, capture_output=True)
    yield sock
    proc.terminate()
    proc.wait(10)
    shutil.rmtree(short, ignore_errors=True)


@pytest.mark.parametrize("way", WAYS)
def test_clone_sync_and_auto_sync_with_an_agent(tmp_path, monkeypatch, ssh_setup, sshd, agent, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    identity(ssh_setup, None)  # the key only in the agent
    bare, url = new_repo(sshd)
    a, b = two_machines(tmp_path, url)
    a.sh("config", "sync-auto", "true")
    a.sh("set", "automatic", "pushed in the background")
    assert wait_for(lambda: bare_head(bare) == a.head(), 30), (a.root / ".git/ctx/sync.log").read_text()
    b.sh("sync")
    assert b.entry("automatic")["value"] == "pushed in the background"


@pytest.mark.parametrize("where", ["GIT_SSH_COMMAND", "core.sshCommand"])
def test_clone_and_sync_with_the_operators_own_ssh_command(tmp_path, monkeypatch, home, sshd, keys, where):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir(exist_ok=True)
    (ssh_dir / "hosts").write_text(sshd.known_hosts_line())
    command = (f"{shutil.which('ssh')} -F /dev/null -i {keys['good']} -o IdentitiesOnly=yes "
               f"-o UserKnownHostsFile={ssh_dir / 'hosts'} -o GlobalKnownHostsFile=/dev/null")
    if where == "GIT_SSH_COMMAND":
        monkeypatch.setenv("GIT_SSH_COMMAND", command)
    else:
        subprocess.run(["git", "config", "--global", "core.sshCommand", command], check=True)
    bare, url = new_repo(sshd)
    a, b = two_machines(tmp_path, url)
    assert bare_head(bare) == b.head()


# --- ssh: what goes wrong ---------------------------------------------------------------------------

def _write_then_fail_then_deliver(tmp_path, sshd, break_it, mend_it, expected: tuple[str, ...]) -> None:
    """A machine with a remote writes; the sync fails with one line naming the cause (in
    the error, ``status --json`` and, for auto-sync, the log); the write stays committed;
    once mended, the next sync delivers it."""
    bare, url = new_repo(sshd)
    a = Machine(tmp_path / "a", "A")
    a.sh("clone", url, str(a.root))
    a.sh("set", "kept", "written while the server could not be reached")
    head = a.head()
    break_it()
    line = one_line_error(a.sh("sync", check=False))
    for words in expected:
        assert words in line, line
    assert line[len("ctx: "):] in last_result(a)
    assert a.head() == head and a.entry("kept") is not None and a.status() == []
    mend_it()
    a.sh("sync")
    assert bare_head(bare) == a.head()


@pytest.mark.parametrize("way", WAYS)
def test_an_unknown_host_key_is_refused_and_named_with_the_command_that_adds_it(tmp_path, monkeypatch,
                                                                               ssh_setup, sshd, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    bare, url = new_repo(sshd)
    known(ssh_setup, "")
    line = one_line_error(Machine(tmp_path / "c", "C").sh("clone", url, str(tmp_path / "c"), check=False))
    assert "host key of 127.0.0.1 is unknown" in line and f"ssh-keyscan -p {sshd.port} 127.0.0.1" in line, line
    assert not (tmp_path / "c").exists()
    known(ssh_setup, sshd.known_hosts_line())
    _write_then_fail_then_deliver(tmp_path, sshd, lambda: known(ssh_setup, ""),
                                  lambda: known(ssh_setup, sshd.known_hosts_line()),
                                  ("host key of 127.0.0.1 is unknown", "ssh-keyscan"))


@pytest.mark.parametrize("way", WAYS)
def test_an_unknown_host_key_passes_where_the_operator_turned_the_check_off(tmp_path, monkeypatch, ssh_setup,
                                                                            sshd, way):
    """``StrictHostKeyChecking no`` in ~/.ssh/config: their choice, kept on both paths."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    bare, url = new_repo(sshd)
    known(ssh_setup, "")
    config = ssh_setup / ".ssh" / "config"
    config.write_text(config.read_text() + "  StrictHostKeyChecking no\n")
    c = Machine(tmp_path / "c", "C")
    c.sh("clone", url, str(c.root))
    c.sh("set", "k", "v")
    c.sh("sync")
    assert bare_head(bare) == c.head()


@pytest.mark.parametrize("way", WAYS)
def test_a_changed_host_key_is_refused_and_named_with_the_command_that_removes_it(tmp_path, monkeypatch,
                                                                                 ssh_setup, sshd, keys, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    other = Path(f"{keys['hostkey2']}.pub").read_text().split()
    impostor = f"[127.0.0.1]:{sshd.port} {other[0]} {other[1]}\n"
    bare, url = new_repo(sshd)
    known(ssh_setup, impostor)
    line = one_line_error(Machine(tmp_path / "c", "C").sh("clone", url, str(tmp_path / "c"), check=False))
    assert "host key of 127.0.0.1 has changed" in line and f"ssh-keygen -R '[127.0.0.1]:{sshd.port}'" in line
    assert not (tmp_path / "c").exists()
    known(ssh_setup, sshd.known_hosts_line())
    _write_then_fail_then_deliver(tmp_path, sshd, lambda: known(ssh_setup, impostor),
                                  lambda: known(ssh_setup, sshd.known_hosts_line()),
                                  ("host key of 127.0.0.1 has changed", "ssh-keygen -R"))


@pytest.mark.parametrize("way", WAYS)
def test_a_key_the_server_refuses(tmp_path, monkeypatch, ssh_setup, sshd, keys, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    _write_then_fail_then_deliver(tmp_path, sshd, lambda: identity(ssh_setup, keys["other"]),
                                  lambda: identity(ssh_setup, keys["good"]),
                                  (f"{sshd.user}@127.0.0.1 refused the SSH key", "ssh-add"))


@pytest.mark.parametrize("way", WAYS)
def test_a_server_that_is_stopped_refuses_the_connection(tmp_path, monkeypatch, ssh_setup, sshd, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    port = closed_port()
    m = Machine(tmp_path / "m", "M")
    m.sh("set", "kept", "v")
    m.sh("remote", "add", "origin", f"ssh://{sshd.user}@127.0.0.1:{port}/srv/ctx.git")
    line = one_line_error(m.sh("sync", check=False))
    assert f"127.0.0.1 port {port} refused the connection" in line, line
    assert m.entry("kept") is not None and m.status() == []


@pytest.mark.parametrize("way", WAYS)
def test_a_missing_repository_is_named(tmp_path, monkeypatch, ssh_setup, sshd, web, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    store_password(ssh_setup, web, web.password)
    for url in (sshd.url("no-such.git"), web.url("no-such.git")):
        line = one_line_error(Machine(tmp_path / "c", "C").sh("clone", url, str(tmp_path / "c"), check=False))
        assert f"no repository at {url} (repository not found)" in line, line


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("scheme", ["ssh", "http"])
def test_a_silent_server_is_given_up_after_the_limit(tmp_path, monkeypatch, ssh_setup, sshd, way, scheme):
    """A server that accepts the connection and never answers: clone and sync stop after
    CTX_REMOTE_TIMEOUT seconds without a word, with one line; the write stays."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    monkeypatch.setenv("CTX_REMOTE_TIMEOUT", "2")
    silent = SilentServer()
    try:
        url = (f"ssh://{sshd.user}@127.0.0.1:{silent.port}/ctx.git" if scheme == "ssh"
               else f"http://127.0.0.1:{silent.port}/ctx.git")
        began = time.monotonic()
        line = one_line_error(Machine(tmp_path / "c", "C").sh("clone", url, str(tmp_path / "c"), timeout=30,
                                                              check=False))
        assert time.monotonic() - began < 15
        assert "127.0.0.1 gave no answer in 2 s" in line and "CTX_REMOTE_TIMEOUT" in line, line
        assert not (tmp_path / "c").exists()
        m = Machine(tmp_path / "m", "M")
        m.sh("set", "kept", "v")
        m.sh("remote", "add", "origin", url)
        line = one_line_error(m.sh("sync", timeout=30, check=False))
        assert "gave no answer in 2 s" in line, line
        assert m.entry("kept") is not None and m.status() == []
    finally:
        silent.stop()


def test_auto_sync_says_its_own_push_is_busy_and_logs_why_it_stopped(tmp_path, monkeypatch, ssh_setup, sshd):
    """With a server that never answers, the write's background push holds the remote;
    ``ctx start`` says so (not "another ctx"), and the log names the server's silence."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    monkeypatch.setenv("CTX_REMOTE_TIMEOUT", "4")
    silent = SilentServer()
    try:
        m = hanging_background_push(tmp_path / "m", f"ssh://{sshd.user}@127.0.0.1:{silent.port}/ctx.git",
                                    ("sync-timeout", "1"))
        log = m.root / ".git" / "ctx" / "sync.log"
        start = m.sh("start")
        first = start.stdout.splitlines()[0]
        assert "auto-sync's own background push is still talking to origin" in first, first
        assert "written while the server hangs" in start.stdout
        assert wait_for(lambda: log.exists() and "auto-sync failed" in log.read_text(), 30)
        assert "127.0.0.1 gave no answer in 4 s" in log.read_text(), log.read_text()
        assert "127.0.0.1 gave no answer in 4 s" in last_result(m)
    finally:
        silent.stop()


# --- https: a credential helper, or none --------------------------------------------------------------

def store_password(home: Path, web: HttpServer, password: str) -> None:
    """git's ``store`` helper, with this password for the server (in the test's home)."""
    subprocess.run(["git", "config", "--global", "credential.helper", "store"], check=True)
    (home / ".git-credentials").write_text(f"http://{web.user}:{password}@127.0.0.1:{web.port}\n")


@pytest.mark.parametrize("way", WAYS)
def test_clone_and_sync_over_http_with_a_credential_helper(tmp_path, monkeypatch, home, web, way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    store_password(home, web, web.password)
    bare, url = new_repo(web)
    a, b = two_machines(tmp_path, url)
    assert bare_head(bare) == a.head()


@pytest.mark.parametrize("way", WAYS)
def test_over_http_a_missing_or_wrong_password_names_the_credential_helper(tmp_path, monkeypatch, home, web,
                                                                           way):
    monkeypatch.setenv("CTX_GIT_TRANSPORT", way)
    bare, url = new_repo(web)
    line = one_line_error(Machine(tmp_path / "c", "C").sh("clone", url, str(tmp_path / "c"), check=False))
    assert "asks for a user name and password" in line and "credential.helper" in line, line
    assert "SSH agent" not in line and "ssh-add" not in line
    store_password(home, web, "not-the-password")
    m = Machine(tmp_path / "m", "M")
    m.sh("set", "kept", "v")
    m.sh("remote", "add", "origin", url)
    line = one_line_error(m.sh("sync", check=False))
    assert "refused the user name and password (authentication failed)" in line, line
    assert "not-the-password" not in line
    store_password(home, web, web.password)
    m.sh("sync")
    assert bare_head(bare) == m.head()


def test_a_password_in_a_url_is_refused_and_never_shown(tmp_path, web):
    m = Machine(tmp_path / "m", "M")
    m.sh("set", "k", "v")
    secret = f"http://alice:PASSWORD-123@127.0.0.1:{web.port}/ctx.git"
    for args in (("remote", "add", "origin", secret), ("clone", secret, str(tmp_path / "c"))):
        done = m.sh(*args, check=False)
        line = one_line_error(done, 2)
        assert "PASSWORD-123" not in done.stdout + done.stderr
        assert "http://alice:***@127.0.0.1" in line and "credential helper" in line, line
    assert "PASSWORD-123" not in (m.root / ".git" / "config").read_text()
    assert not (tmp_path / "c").exists()
    m.git("remote", "add", "by-hand", secret)  # set outside ctx: still never printed
    for args in (("remote", "-v"), ("remote", "--json"), ("sync", "by-hand")):
        done = m.sh(*args, check=False)
        assert "PASSWORD-123" not in done.stdout + done.stderr, (args, done.stdout, done.stderr)
    assert "PASSWORD-123" not in json.dumps(json.loads(m.sh("status", "--json").stdout))


def test_nothing_is_left_running_after_a_stopped_clone(tmp_path, monkeypatch, ssh_setup, sshd):
    """The clone's git and ssh are stopped with it (their process group), not left behind."""
    if shutil.which("pgrep") is None:
        pytest.skip("pgrep is not installed (procps)")
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    monkeypatch.setenv("CTX_REMOTE_TIMEOUT", "1")
    silent = SilentServer()
    marker = f"ctx-marker-{uuid.uuid4().hex[:8]}"
    try:
        done = Machine(tmp_path / "c", "C").sh("clone", f"ssh://{sshd.user}@127.0.0.1:{silent.port}/{marker}.git",
                                               str(tmp_path / "c"), timeout=30, check=False)
        assert done.returncode == 6
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
        for pid in left:  # clean up before failing
            os.kill(int(pid), signal.SIGKILL)
        assert left == []
    finally:
        silent.stop()


def test_a_helper_left_running_with_gits_pipes_does_not_hold_clone_or_sync(tmp_path, monkeypatch, ssh_setup,
                                                                            sshd):
    """Something git started may outlive it holding its stderr (an ssh master kept by
    ControlPersist, a helper's daemon): ctx goes on once git has exited, instead of
    reading the pipe until that ends or the time limit stops it."""
    monkeypatch.setenv("CTX_GIT_TRANSPORT", "git")
    monkeypatch.setenv("CTX_REMOTE_TIMEOUT", "20")
    lingering = tmp_path / "ssh-leaving-a-child"
    stay = "import os, time; os.closerange(3, 4096); time.sleep(25)"  # as ssh, it closes all but 0-2
    lingering.write_text(f'#!/bin/sh\n{sys.executable} -c "{stay}" &\nexec ssh "$@"\n')
    lingering.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(lingering))
    bare, url = new_repo(sshd)
    a = Machine(tmp_path / "a", "A")
    a.sh("clone", url, str(a.root))
    a.sh("set", "k", "v")
    a.sh("sync")
    assert bare_head(bare) == a.head()
