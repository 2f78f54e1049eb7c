"""X.509 signed commits (``gpg.format x509``, signed by gpgsm), as ``test_provenance``
shows them for ssh and openpgp keys: ctx's writes are signed on the fast and the libgit2
commit paths and ``git verify-commit`` accepts them; ``ctx log --verify`` says good (with
the certificate's subject), bad (a commit altered after it was signed), unknown signer (a
root no longer trusted, a certificate gpgsm does not hold) or unsigned; and a gpgsm that
fails fails the write.

The certificate is made here, in a throwaway GNUPGHOME (a short path in the temporary
folder: the gpg-agent's socket lives in it; never the real home): ``gpgsm --batch
--gen-key`` reads a parameter file (RSA 2048, key usage sign and cert, a random serial,
``CN=Olive Operator`` with the email olive@example.org) and makes a self-signed certificate,
its key without a passphrase (an empty one given through the loopback pinentry, which
``gpg-agent.conf`` allows: no pinentry ever asks); ``gpgsm --import`` takes the certificate
in, and ``trustlist.txt`` marks its fingerprint ``S relax``, a trusted root (the agent told to
read it again). ``gpgsm.conf`` turns off the CRL and policy checks (no dirmngr, no CRL for a
throwaway root). The tests are skipped when gpgsm is missing or cannot make a certificate and
sign with it here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from support.gitutil import git, git_out, status_lines
from support.signutil import forge, identity, spy_fast_commits, verified

GPGSM = shutil.which("gpgsm")
pytestmark = [pytest.mark.slow, pytest.mark.skipif(GPGSM is None, reason="gpgsm is not installed")]

SUBJECT = "/CN=Olive Operator"  # how gpgsm names the signer (GOODSIG), and so git and ctx
CERTIFICATE = """\
Key-Type: RSA
Key-Length: 2048
Key-Usage: sign, cert
Serial: random
Name-DN: CN=Olive Operator
Name-Email: olive@example.org
"""


def gpgsm(home: Path, *args: str, data: bytes = b"") -> bytes:
    """``gpgsm --batch ARGS`` in ``home``; its output. CalledProcessError when it fails."""
    return subprocess.run([str(GPGSM), "--batch", *args], input=data, capture_output=True, check=True,
                          env={**os.environ, "GNUPGHOME": str(home)}).stdout


def reload_agent(home: Path) -> None:
    """The gpg-agent reads ``trustlist.txt`` again."""
    subprocess.run(["gpgconf", "--reload", "gpg-agent"], env={**os.environ, "GNUPGHOME": str(home)},
                   capture_output=True, check=True)


def make_certificate(home: Path) -> str:
    """Olive's self-signed certificate, made, imported and trusted as a root in ``home``;
    its fingerprint. It has signed once by hand before this returns."""
    (home / "gpgsm.conf").write_text("disable-crl-checks\ndisable-policy-checks\n")
    (home / "gpg-agent.conf").write_text("allow-loopback-pinentry\n")
    (home / "certificate.params").write_text(CERTIFICATE)
    cert = home / "olive.der"
    gpgsm(home, "--pinentry-mode", "loopback", "--passphrase", "", "--gen-key", "-o", str(cert),
          str(home / "certificate.params"))
    gpgsm(home, "--import", str(cert))
    listing = gpgsm(home, "--with-colons", "--list-secret-keys", "olive@example.org").decode()
    fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
    (home / "trustlist.txt").write_text(f"# CN=Olive Operator\n{fingerprint} S relax\n")
    reload_agent(home)
    gpgsm(home, "--status-fd=1", "-bsau", fingerprint, data=b"a signature by hand\n")
    return fingerprint


@pytest.fixture
def certificate(monkeypatch):
    """Olive's certificate's fingerprint, in a throwaway GNUPGHOME that ctx and git use."""
    home = Path(tempfile.mkdtemp(prefix="ctx-sm-"))
    home.chmod(0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    try:
        fingerprint = make_certificate(home)
    except (OSError, subprocess.CalledProcessError, StopIteration) as exc:
        said = getattr(exc, "stderr", b"") or b""
        shutil.rmtree(home, ignore_errors=True)
        pytest.skip(f"gpgsm could not make a certificate here: {said.decode(errors='replace').strip()[-200:]}")
    yield fingerprint
    subprocess.run(["gpgconf", "--kill", "gpg-agent"], capture_output=True)
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def x509_root(run, root, certificate):
    """A context whose repository says: commit as Olive Operator, sign with her certificate."""
    assert run("init").exit_code == 0
    identity(root)
    x509_signing(root, certificate)
    return root


def x509_signing(repo: Path, key: str, program: str = "gpgsm") -> None:
    git(repo, "config", "gpg.format", "x509")
    git(repo, "config", "gpg.x509.program", program)
    git(repo, "config", "user.signingkey", key)
    git(repo, "config", "commit.gpgsign", "true")


def test_x509_signed_writes_verify_with_git(run, x509_root, monkeypatch):
    root, fast = x509_root, spy_fast_commits(monkeypatch)
    signed_fast = []
    for n, slow in enumerate((False, False, True, False)):
        fast.clear()
        result = run("set", "k", f"v{n}", author="Agent Z", env={"CTX_GIT_SLOW": "1"} if slow else {})
        assert result.exit_code == 0, result.stderr
        assert "\ngpgsig -----BEGIN SIGNED MESSAGE-----\n" in git_out(root, "cat-file", "commit", "HEAD")
        assert verified(root), git(root, "verify-commit", "-v", "HEAD", check=False).stderr
        signed_fast.append(any(isinstance(c, tuple) for c in fast))
    # the first after the config change goes through libgit2, as does CTX_GIT_SLOW's; the others are fast
    assert signed_fast[1:] == [True, False, True]
    shown = git(root, "log", "--show-signature", "-1").stdout
    assert 'Good signature from "/CN=Olive Operator"' in shown
    assert status_lines(root) == []
    assert git(root, "fsck", "--strict", "--no-dangling", check=False).returncode == 0


def test_log_verify_marks_x509_good_bad_and_unsigned(run, x509_root):
    root = x509_root
    assert run("set", "k", "olive's", author="Agent Z").exit_code == 0
    assert run("set", "k", "to be forged", author="Agent Z", env={"CTX_GIT_SLOW": "1"}).exit_code == 0
    assert run("set", "k", "also olive's", author="Agent Z").exit_code == 0
    forge(root, "also olive's", "forged value")
    rows = json.loads(run("log", "--verify", "--json").stdout)
    assert [r["signature"] for r in rows] == ["bad", "good", "good", "unsigned"]
    assert [r["signer"] for r in rows[1:3]] == [SUBJECT, SUBJECT]
    assert rows[0]["signer"] == SUBJECT and rows[3]["signer"] is None
    assert not verified(root)
    lines = run("log", "--verify").stdout.splitlines()
    assert [line.split("  ")[1] for line in lines] == ["[bad]", f"[good: {SUBJECT}]", f"[good: {SUBJECT}]",
                                                       "[unsigned]"]


def test_log_verify_marks_x509_unknown_signers(run, x509_root, certificate):
    root, home = x509_root, Path(os.environ["GNUPGHOME"])
    assert run("set", "k", "v", author="Agent Z").exit_code == 0
    (home / "trustlist.txt").write_text("")  # her root no longer trusted: a good signature, but by whom?
    reload_agent(home)
    row = json.loads(run("log", "-n", "1", "--verify", "--json").stdout)[0]
    assert (row["signature"], row["signer"]) == ("unknown signer", SUBJECT) and not verified(root)
    assert "trusted undefined" in row["signature_detail"]
    gpgsm(home, "--yes", "--delete-keys", certificate)  # and her certificate gone: gpgsm cannot find the signer
    row = json.loads(run("log", "-n", "1", "--verify", "--json").stdout)[0]
    assert row["signature"] == "unknown signer" and "no certificate" in row["signature_detail"]
    assert not verified(root)


@pytest.mark.parametrize("slow", [False, True], ids=["fast", "libgit2"])
def test_a_failing_gpgsm_fails_the_write(run, x509_root, tmp_path, monkeypatch, slow):
    root = x509_root
    env = {"CTX_GIT_SLOW": "1"} if slow else {}
    signer = tmp_path / "gpgsm"  # gpg.x509.program: gpgsm, then /bin/false with the config unchanged
    signer.symlink_to(str(GPGSM))
    git(root, "config", "gpg.x509.program", str(signer))
    for value in ("v1", "v2"):  # the second is a fast commit, unless slow
        assert run("set", "k", value, author="Agent Z", env=env).exit_code == 0
    head = git_out(root, "rev-parse", "HEAD")
    signer.unlink()
    signer.symlink_to(shutil.which("false") or "/bin/false")
    fast = spy_fast_commits(monkeypatch)
    result = run("set", "k", "refused", author="Agent Z", env=env)
    assert result.exit_code == 6, (result.stdout, result.stderr)
    assert f"signing the commit failed: {signer} (gpg.format x509)" in result.stderr
    assert "nothing was written" in result.stderr
    assert git_out(root, "rev-parse", "HEAD") == head and status_lines(root) == []
    if not slow:  # the one-commit way was taken, and failed (git's objects dangle: gc's to prune)
        assert fast and all(isinstance(c, Exception) for c in fast)
    git(root, "config", "gpg.x509.program", "/bin/false")  # the config itself names it: libgit2 runs it
    result = run("set", "k", "refused", author="Agent Z", env=env)
    assert result.exit_code == 6 and "/bin/false (gpg.format x509)" in result.stderr
    git(root, "config", "gpg.x509.program", "gpgsm")
    assert run("set", "k", "accepted", author="Agent Z", env=env).exit_code == 0
    assert verified(root)
