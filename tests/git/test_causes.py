"""The cause of a failed clone, fetch or push named from git's and libgit2's own words
(ctxgit/sync/causes.py), and URLs read and shown without their password (urls.py).
The same causes against real servers: tests/git/test_hosting.py."""

from __future__ import annotations

import pytest

from ctxgit.sync import causes, transport
from ctxgit.sync.urls import has_password, redact, where, without_password

SSH = "ssh://git@example.com:2222/me/ctx.git"
SCP = "git@example.com:me/ctx.git"
HTTPS = "https://example.com/me/ctx.git"
CLOSING = "fatal: Could not read from remote repository.\n\nPlease make sure you have the correct access rights\n" \
          "and the repository exists.\n"


@pytest.mark.parametrize("url, scheme, host, port, user, known", [
    (SSH, "ssh", "example.com", 2222, "git", "[example.com]:2222"),
    (SCP, "ssh", "example.com", None, "git", "example.com"),
    ("example.com:ctx.git", "ssh", "example.com", None, None, "example.com"),
    ("https://alice:pw@example.com:8443/ctx.git", "https", "example.com", 8443, "alice", "[example.com]:8443"),
    ("ssh://[::1]:22/ctx.git", "ssh", "::1", 22, None, "::1"),
    ("/srv/git/ctx.git", "", None, None, None, ""),
    ("file:///srv/git/ctx.git", "file", None, None, None, ""),
])
def test_where_a_url_points(url, scheme, host, port, user, known):
    place = where(url)
    assert (place.scheme, place.host, place.port, place.user) == (scheme, host, port, user)
    assert place.known_hosts_name() == known


def test_a_password_is_found_and_never_shown():
    url = "https://alice:PASSWORD@example.com/ctx.git"
    assert has_password(url) and not has_password("https://alice@example.com/ctx.git") and not has_password(SCP)
    assert redact(url) == "https://alice:***@example.com/ctx.git"
    assert without_password(url) == "https://alice@example.com/ctx.git"
    assert redact(HTTPS) == HTTPS and redact(SCP) == SCP


@pytest.mark.parametrize("stderr, url, words", [
    ("Host key verification failed.\n" + CLOSING, SSH, ["host key of example.com is unknown",
                                                       "ssh-keyscan -p 2222 example.com"]),
    ("@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @\nHost key verification failed.\n" + CLOSING,
     SCP, ["host key of example.com has changed", "ssh-keygen -R 'example.com'"]),
    ("git@example.com: Permission denied (publickey).\n" + CLOSING, SCP, ["git@example.com refused the SSH key",
                                                                         "ssh-add"]),
    ("ssh: connect to host example.com port 2222: Connection refused\n" + CLOSING, SSH,
     ["example.com port 2222 refused the connection"]),
    ("ssh: Could not resolve hostname example.com: Name or service not known\n" + CLOSING, SCP,
     ["host example.com not found"]),
    ("ssh: connect to host example.com port 22: Connection timed out\n" + CLOSING, SCP, ["timed out"]),
    ("ERROR: Repository not found.\n" + CLOSING, SCP, ["no repository at git@example.com:me/ctx.git"]),
    ("fatal: repository 'https://example.com/me/ctx.git/' not found\n", HTTPS, ["repository not found"]),
    ("fatal: could not read Username for 'https://example.com': terminal prompts disabled\n", HTTPS,
     ["asks for a user name and password", "credential.helper"]),
    ("fatal: Authentication failed for 'https://example.com/me/ctx.git/'\n", HTTPS,
     ["refused the user name and password (authentication failed)", "git credential reject"]),
    # libgit2's words
    ("failed to connect to example.com: Connection refused", HTTPS, ["refused the connection"]),
    ("failed to resolve address for example.com: Name or service not known", SSH, ["host example.com not found"]),
    ("unexpected http status code: 404", HTTPS, ["repository not found"]),
    ("too many redirects or authentication replays", HTTPS, ["refused the user name and password"]),
    ("remote authentication required but no callback set", HTTPS, ["asks for a user name and password"]),
])
def test_the_cause_is_named(stderr, url, words):
    said = causes.explain(stderr, url)
    assert said is not None and "\n" not in said
    for word in words:
        assert word in said, said
    assert "SSH agent" not in said or not url.startswith("https")


def test_a_cause_it_cannot_name_keeps_the_line_that_says_why():
    assert causes.explain("fatal: the remote end hung up unexpectedly\n", SSH) is None
    stderr = "ssh: some new trouble\n" + CLOSING
    error = transport.failure(f"cannot fetch from origin ({SSH})", SSH, stderr)
    assert str(error) == f"cannot fetch from origin ({SSH}): ssh: some new trouble"


def test_a_password_in_gits_words_is_hidden():
    url = "https://alice:PASSWORD@example.com/ctx.git"
    error = transport.failure(f"cannot push to origin ({redact(url)})", url, f"fatal: unable to reach {url}\n")
    assert "PASSWORD" not in str(error) and "alice:***@" in str(error)


def test_an_unknown_host_key_reads_known_hosts_to_tell_a_changed_one(tmp_path, monkeypatch):
    import shutil
    if shutil.which("ssh-keygen") is None:
        pytest.skip("ssh-keygen is not installed")
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True, exist_ok=True)
    libgit2 = "invalid or unknown remote ssh hostkey"
    assert "is unknown" in causes.explain(libgit2, SSH)
    (ssh / "known_hosts").write_text("[example.com]:2222 ssh-ed25519 "
                                     "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n")
    assert "has changed" in causes.explain(libgit2, SSH)
    assert "is unknown" in causes.explain(libgit2, "ssh://git@example.com/ctx.git")  # port 22: another entry
