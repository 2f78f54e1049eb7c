"""Real git servers on 127.0.0.1 for the hosting tests (tests/git/test_hosting.py).

- ``SshServer``: a private ``sshd`` (Debian's openssh-server) on a free port, with a
  host key, an authorized-keys file and a configuration of its own; the client logs in
  as the current user with a key (root is allowed to, by key only).
- ``HttpServer``: git's smart HTTP, ``git http-backend`` run as CGI behind Basic auth by
  a small threaded Python server.
- ``silent_port`` / ``closed_port``: a socket that accepts and never answers, and a port
  nothing listens on.

ssh reads ``~/.ssh`` from the account's home in the password file, not ``$HOME``, so
a test never lets it read its own: ``client_bin`` holds an ``ssh`` that runs the real one
with ``-F $HOME/.ssh/config`` (the test's home), and the configurations written here
name every file by its absolute path (known hosts, identities).
"""

from __future__ import annotations

import base64
import os
import pwd
import shutil
import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SSHD = "/usr/sbin/sshd"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def keygen(path: Path, comment: str = "ctx-test") -> Path:
    """A new ed25519 key pair without a passphrase; the private key's path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, capture_output=True)
    return path


def bare_repo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "--bare", "-q", "-b", "main", str(path)], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(path), "config", "http.receivepack", "true"], check=True)
    return path


class SshServer:
    """``sshd -D`` on 127.0.0.1:port, serving git over ssh to the current user."""

    def __init__(self, base: Path) -> None:
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.host_key = keygen(base / "host_ed25519", "host")
        self.authorized = base / "authorized_keys"
        self.authorized.write_text("")
        self.port = free_port()
        self.user = pwd.getpwuid(os.getuid()).pw_name
        self.repos = base / "repos"
        self.repos.mkdir()
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        config = self.base / "sshd_config"
        config.write_text(
            f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.host_key}\n"
            f"PidFile {self.base / 'sshd.pid'}\nAuthorizedKeysFile {self.authorized}\n"
            "PubkeyAuthentication yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\n"
            "AllowAgentForwarding no\nAllowTcpForwarding no\nX11Forwarding no\nPrintMotd no\n"
            "SetEnv GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null\nLogLevel ERROR\n")
        if os.getuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation directory
        self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=open(self.base / "sshd.log", "ab"))
        wait_listening(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def authorize(self, private_key: Path) -> None:
        with open(self.authorized, "a") as out:
            out.write(Path(f"{private_key}.pub").read_text())

    def url(self, name: str) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{self.repos / name}"

    def known_hosts_line(self) -> str:
        key = Path(f"{self.host_key}.pub").read_text().split()
        return f"[127.0.0.1]:{self.port} {key[0]} {key[1]}\n"


def wait_listening(port: int, proc: subprocess.Popen | None = None, seconds: float = 10) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def ssh_client(home: Path, bin_dir: Path, identity: Path | None) -> None:
    """The test home's ``~/.ssh/config`` (known hosts and identity named by absolute
    path), and an ``ssh`` first on the PATH that reads it."""
    ssh_dir = home / ".ssh"
    ssh_dir.mkdir(mode=0o700, exist_ok=True)
    (ssh_dir / "known_hosts").touch()
    lines = [f"UserKnownHostsFile {ssh_dir / 'known_hosts'}", "GlobalKnownHostsFile /dev/null",
             f"IdentityFile {identity if identity else ssh_dir / 'no-such-key'}", "ConnectTimeout 20"]
    (ssh_dir / "config").write_text("Host *\n" + "".join(f"  {line}\n" for line in lines))
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "ssh"
    wrapper.write_text(f'#!/bin/sh\nexec {shutil.which("ssh")} -F "$HOME/.ssh/config" "$@"\n')
    wrapper.chmod(0o755)


# --- git's smart HTTP behind Basic auth --------------------------------------------------------

class _GitCgi(BaseHTTPRequestHandler):
    server: _Http

    def log_message(self, format: str, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _serve(self) -> None:
        expected = "Basic " + base64.b64encode(f"{self.server.user}:{self.server.password}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="ctx test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        env = dict(os.environ, GIT_PROJECT_ROOT=str(self.server.root), GIT_HTTP_EXPORT_ALL="1",
                   PATH_INFO=path, QUERY_STRING=query, REQUEST_METHOD=self.command,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""), REMOTE_USER=self.server.user,
                   REMOTE_ADDR="127.0.0.1", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        body = self._body()
        env["CONTENT_LENGTH"] = str(len(body))
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = done.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class _Http(ThreadingHTTPServer):
    daemon_threads = True
    root: Path
    user: str
    password: str


class HttpServer:
    """``http://127.0.0.1:port/NAME.git``: repositories under ``root``, one user."""

    def __init__(self, root: Path, user: str = "alice", password: str = "s3cret-pass") -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.server = _Http(("127.0.0.1", 0), _GitCgi)
        self.server.root, self.server.user, self.server.password = root, user, password
        self.root, self.user, self.password = root, user, password
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class SilentServer:
    """Accepts connections and never says a word (a hung server, a dead link)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def stop(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def closed_port() -> int:
    """A port nothing listens on (bound a moment ago, then let go)."""
    return free_port()
