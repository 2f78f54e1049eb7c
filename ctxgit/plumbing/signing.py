"""What a commit's signature proves (git itself signs ctx's commits: ``gitcommit.py``).

``verify_commit`` says of one commit ``good``, ``bad``, ``unknown signer`` or
``unsigned``. An ssh signature is checked against ``gpg.ssh.allowedSignersFile``
(``ssh-keygen -Y find-principals``, then ``-Y verify`` as each principal found); an
openpgp (or x509) one with ``gpg --verify``, whose status lines must show a good
signature by a key trusted at least ``gpg.minTrustLevel`` (default ``marginal``).
What a ``require-signed`` machine does with the verdicts is
``ctxgit/guard/trust.py``'s. ctx never adds a key anywhere: whose keys are trusted
is the operator's decision, kept in git's own files. Verifiers run through
``spawn.run``, their input and output in files.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctx.errors import GitError
from ctxgit.plumbing.gitenv import clean_git_env
from ctxgit.plumbing.spawn import Ran, Scratch, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ctx.storage.files import StrPath

GOOD, BAD, UNKNOWN, UNSIGNED = "good", "bad", "unknown signer", "unsigned"
TRUST_LEVELS = ("undefined", "never", "marginal", "fully", "ultimate")


# --- git's configuration ------------------------------------------------------------------

def _text(config: Any, name: str) -> str | None:
    """A config value (a pygit2 Config, or any mapping), None when unset or unreadable."""
    try:
        if name not in config:
            return None
        value = config[name]
    except Exception:  # pygit2.GitError (a malformed file) is not imported here: read as unset
        return None
    return value.strip() if isinstance(value, str) else None


def verify_config(config: Any, workdir: Path | None = None) -> dict:
    """What verifying needs: the programs, the allowed signers and revocation files, the trust."""
    def path(name: str) -> str | None:
        value = _text(config, name)
        if not value:
            return None
        full = Path(os.path.expanduser(value))
        return str(full if full.is_absolute() or workdir is None else Path(workdir) / full)
    trust = (_text(config, "gpg.minTrustLevel") or "marginal").lower()
    return {"ssh": _text(config, "gpg.ssh.program") or "ssh-keygen",
            "openpgp": _text(config, "gpg.openpgp.program") or _text(config, "gpg.program") or "gpg",
            "x509": _text(config, "gpg.x509.program") or "gpgsm",
            "allowed": path("gpg.ssh.allowedSignersFile"), "revoked": path("gpg.ssh.revocationFile"),
            "trust": trust if trust in TRUST_LEVELS else "marginal"}


# --- running a signer -----------------------------------------------------------------------

def _resolve(path: str, cwd: StrPath | None) -> str:
    """A path as git reads it in the repository: ``~`` expanded, relative to the work tree."""
    full = os.path.expanduser(path)
    return full if os.path.isabs(full) or cwd is None else str(Path(cwd) / full)


def _run(argv: list[str], data: bytes | None, cwd: StrPath | None, what: str, after: str = "") -> Ran:
    """Run ``argv`` with ``data`` on its standard input; a program that cannot be run is
    a GitError saying ``what`` failed (and ``after``)."""
    program = argv[0]
    if "/" in program:
        program = _resolve(program, cwd)
    try:
        return run([program] + argv[1:], data, clean_git_env())
    except OSError as exc:
        raise GitError(f"{what}: {argv[0]} could not be run ({exc.strerror or exc}){after}") from None


def _first_line(stderr: bytes) -> str:
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.strip() and not line.startswith("[GNUPG:]"):
            return line.strip()
    return "no message"


# --- verifying ------------------------------------------------------------------------------

class Verdict:
    """One commit's signature: ``status`` good, bad, unknown signer or unsigned; ``signer``
    the principal (ssh) or the key's user id (openpgp); ``detail`` what else was said."""

    def __init__(self, status: str, signer: str | None = None, detail: str = "") -> None:
        self.status, self.signer, self.detail = status, signer, detail

    def __repr__(self) -> str:
        return f"Verdict({self.status!r}, {self.signer!r}, {self.detail!r})"

    def why(self) -> str:
        if self.status == UNSIGNED:
            return "unsigned"
        if self.status == UNKNOWN:
            return "signed by a key not among the allowed signers" + (f" ({self.detail})" if self.detail else "")
        if self.status == BAD:
            return "a bad signature" + (f" ({self.detail})" if self.detail else "")
        return f"signed by {self.signer}"

    def mark(self) -> str:
        return f"good: {self.signer}" if self.status == GOOD and self.signer else self.status

    def as_json(self) -> dict[str, Any]:
        return {"signature": self.status, "signer": self.signer, "signature_detail": self.detail}


def verify_commit(commit: Any, settings: dict, cwd: StrPath | None = None) -> Verdict:
    """The verdict on one pygit2 commit's signature."""
    signature, payload = commit.gpg_signature
    return _verify(signature, payload, commit.commit_time, settings, cwd)


VERIFIERS = max(2, min(8, (os.cpu_count() or 1) * 2))  # processes at once: each mostly waits for its child


def verify_many(repo: Any, ids: list[str], settings: dict, cwd: StrPath | None = None) -> list[Verdict]:
    """The verdicts on the commits ``ids``, in their order. Each signature takes one or two
    verifier processes (``ssh-keygen``, ``gpg``): they run a few at a time, the commits read
    beforehand on this thread (a pygit2 repository is not shared between threads)."""
    signed = [(*repo[cid].gpg_signature, repo[cid].commit_time) for cid in ids]
    if len(signed) < 2:
        return [_verify(sig, payload, when, settings, cwd) for sig, payload, when in signed]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(VERIFIERS, len(signed))) as pool:
        return list(pool.map(lambda one: _verify(one[0], one[1], one[2], settings, cwd), signed))


def _verify(signature: bytes | None, payload: bytes | None, when: int, settings: dict,
            cwd: StrPath | None) -> Verdict:
    if not signature:
        return Verdict(UNSIGNED)
    payload = payload or b""
    text = signature.decode("utf-8", "replace")
    try:
        if "-----BEGIN SSH SIGNATURE-----" in text:
            return _verify_ssh(signature, payload, settings, when, cwd)
        form = "x509" if "-----BEGIN SIGNED MESSAGE-----" in text else "openpgp"
        return _verify_gpg(signature, payload, settings, form, cwd)
    except GitError as exc:  # the verifier could not be run: nothing is proven either way
        return Verdict(UNKNOWN, detail=str(exc))


def _verify_ssh(signature: bytes, payload: bytes, settings: dict, when: int, cwd: StrPath | None) -> Verdict:
    program, allowed = settings["ssh"], settings["allowed"]
    at = "-Overify-time=" + time.strftime("%Y%m%d%H%M%S", time.localtime(when))
    with Scratch() as tmp:
        sig_file = os.path.join(tmp, "commit.sig")
        with open(sig_file, "wb") as out:
            out.write(signature)
        principals: list[str] = []
        if allowed and Path(allowed).is_file():
            found = _run([program, "-Y", "find-principals", "-f", allowed, "-s", str(sig_file), at],
                         None, cwd, "verifying", "")
            if found.returncode == 0:
                principals = [p.strip() for p in found.stdout.decode("utf-8", "replace").splitlines()
                              if p.strip()]
        last = b""
        for principal in principals:
            argv = [program, "-Y", "verify", "-n", "git", "-f", allowed, "-I", principal, "-s", str(sig_file), at]
            if settings.get("revoked"):
                argv += ["-r", settings["revoked"]]
            done = _run(argv, payload, cwd, "verifying", "")
            if done.returncode == 0:
                return Verdict(GOOD, principal)
            last = done.stderr or done.stdout
        if principals:
            return Verdict(BAD, principals[0], _first_line(last))
        checked = _run([program, "-Y", "check-novalidate", "-n", "git", "-s", str(sig_file)], payload, cwd,
                       "verifying", "")
        said = (checked.stdout + checked.stderr).decode("utf-8", "replace")
        key = next((w for w in said.split() if w.startswith("SHA256:")), "")
        if checked.returncode != 0:
            return Verdict(BAD, detail=_first_line(checked.stderr or checked.stdout))
        if not allowed or not Path(allowed).is_file():
            return Verdict(UNKNOWN, detail=f"{key} (no gpg.ssh.allowedSignersFile to trust it by)".strip())
        return Verdict(UNKNOWN, detail=key or "key not in the allowed signers")


def _verify_gpg(signature: bytes, payload: bytes, settings: dict, form: str, cwd: StrPath | None) -> Verdict:
    program = settings[form]
    with Scratch() as tmp:
        sig_file = os.path.join(tmp, "commit.sig")
        with open(sig_file, "wb") as out:
            out.write(signature)
        extra = ["--keyid-format=long"] if form == "openpgp" else []
        done = _run([program, *extra, "--status-fd=1", "--verify", str(sig_file), "-"], payload, cwd,
                    "verifying", "")
    status: dict[str, list[str]] = {}
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("[GNUPG:] "):
            word, _, rest = line[9:].partition(" ")
            if word == "ERROR":  # kept by where it failed: gpgsm's ERROR verify.findkey CODE
                where, _, rest = rest.partition(" ")
                word = f"ERROR {where}"
            status.setdefault(word, rest.split(" ", 1))
    def who(word: str) -> str:
        parts = status[word]
        return parts[1] if len(parts) > 1 else parts[0]
    if "BADSIG" in status:
        return Verdict(BAD, who("BADSIG"), "the signature does not match the commit")
    if "REVKEYSIG" in status:
        return Verdict(BAD, who("REVKEYSIG"), "the key is revoked")
    if "GOODSIG" in status:
        signer = who("GOODSIG")
        trust = next((w[6:].lower() for w in status if w.startswith("TRUST_")), "undefined")
        trust = trust if trust in TRUST_LEVELS else "undefined"
        if TRUST_LEVELS.index(trust) >= TRUST_LEVELS.index(settings["trust"]):
            return Verdict(GOOD, signer)
        return Verdict(UNKNOWN, signer, f"key {status['GOODSIG'][0]} is trusted {trust}, "
                                        f"below gpg.minTrustLevel {settings['trust']}")
    for word in ("EXPKEYSIG", "EXPSIG"):
        if word in status:
            return Verdict(UNKNOWN, who(word), "expired")
    if "NO_PUBKEY" in status or "ERRSIG" in status:
        key = (status.get("NO_PUBKEY") or status.get("ERRSIG") or ["?"])[0]
        return Verdict(UNKNOWN, detail=f"key {key} is not in the keyring")
    if "ERROR verify.findkey" in status:  # gpgsm's NO_PUBKEY: the signer's certificate is not in its keybox
        return Verdict(UNKNOWN, detail="gpgsm found no certificate for the signer")
    return Verdict(BAD, detail=_first_line(done.stderr))


# --- which commits to trust -----------------------------------------------------------------

def verify_ids(repo: Any, ids: Iterable[str]) -> dict[str, Verdict]:
    """``ctx log --verify``: the verdict on each commit, by id."""
    workdir = Path(repo.workdir) if repo.workdir else None
    settings = verify_config(repo.config, workdir)
    ids = list(ids)
    return dict(zip(ids, verify_many(repo, ids, settings, workdir), strict=True))
