"""Signed commits, as git signs them, and what a commit's signature proves.

Signing: when the repository's or the user's git config sets ``commit.gpgsign``,
``signing_config`` reads how git would sign (``gpg.format`` openpgp, ssh or x509;
``user.signingkey``; ``gpg.program``, ``gpg.ssh.program``...) into a plain dict,
which the fast commit keeps in its cached state; ``sign`` makes the signature git
makes (``gpg --status-fd=2 -bsau KEY``, or ``ssh-keygen -Y sign -n git -f KEYFILE``,
with ``-U`` for a literal ``ssh-...``/``key::`` key held by an agent) and
``with_signature`` puts it in the commit's ``gpgsig`` header. A signer that fails
fails the write: ``GitError`` naming the program and the first line it wrote.

Verifying: ``verify_commit`` says of one commit ``good``, ``bad``, ``unknown
signer`` or ``unsigned``. An ssh signature is checked against
``gpg.ssh.allowedSignersFile`` (``ssh-keygen -Y find-principals``, then ``-Y
verify`` as each principal found); an openpgp (or x509) one with ``gpg --verify``,
whose status lines must show a good signature by a key trusted at least
``gpg.minTrustLevel`` (default ``marginal``). What a ``require-signed`` machine
does with the verdicts is ``ctxgit/guard/trust.py``'s. ctx never adds a key
anywhere: whose keys are trusted is the operator's decision, kept in git's own
files.

No pygit2 at import, nor subprocess, tempfile or dataclasses: the fast commit
signs through this module, and a signed write should cost what its signer costs.
Programs run through ``os.posix_spawnp`` with files in a private scratch folder
for their input and output (no pipe to deadlock on).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ctx.errors import GitError
from ctxgit.plumbing.gitenv import clean_git_env

TYPE_CHECKING = False  # typing costs milliseconds at import, on every signed write
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ctx.storage.files import StrPath

FORMATS = {"openpgp": ("gpg.openpgp.program", "gpg"), "ssh": ("gpg.ssh.program", "ssh-keygen"),
           "x509": ("gpg.x509.program", "gpgsm")}
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


def _true(config: Any, name: str) -> bool:
    try:
        if name in config and hasattr(config, "get_bool"):
            return bool(config.get_bool(name))
    except Exception:
        pass
    return (_text(config, name) or "false").lower() in ("true", "yes", "on", "1")


def signing_config(config: Any) -> dict | None:
    """How git would sign a commit here, or None when ``commit.gpgsign`` is off.

    A plain dict (it is kept in the fast commit's JSON state): ``format``,
    ``program``, ``key`` (``user.signingkey``, None when unset) and
    ``key_command`` (``gpg.ssh.defaultKeyCommand``, for ssh without a key).
    """
    if not _true(config, "commit.gpgsign"):
        return None
    form = (_text(config, "gpg.format") or "openpgp").lower()
    own, default = FORMATS.get(form, (None, None))
    program = _text(config, own) if own else None
    if form == "openpgp":
        program = program or _text(config, "gpg.program")
    return {"format": form, "program": program or default, "key": _text(config, "user.signingkey"),
            "key_command": _text(config, "gpg.ssh.defaultKeyCommand") if form == "ssh" else None}


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

class Ran:
    """What a program did: its exit status and what it wrote."""

    def __init__(self, returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


class Scratch:
    """A private folder for a signer's files, removed after (``with Scratch() as folder``)."""

    def __enter__(self) -> Path:
        base = os.environ.get("TMPDIR") or "/tmp"
        self.path = Path(base) / f"ctx-sign-{os.getpid()}-{os.urandom(6).hex()}"
        os.mkdir(self.path, 0o700)
        return self.path

    def __exit__(self, *exc: object) -> None:
        for name in os.listdir(self.path):
            os.unlink(self.path / name)
        os.rmdir(self.path)


def _resolve(path: str, cwd: StrPath | None) -> str:
    """A path as git reads it in the repository: ``~`` expanded, relative to the work tree."""
    full = os.path.expanduser(path)
    return full if os.path.isabs(full) or cwd is None else str(Path(cwd) / full)


def _run(argv: list[str], data: bytes | None, cwd: StrPath | None, what: str,
         after: str = "; nothing was written") -> Ran:
    """Run ``argv`` with ``data`` on its standard input; a program that cannot be run is
    a GitError saying ``what`` failed (and ``after``)."""
    program = argv[0]
    if "/" in program:
        program = _resolve(program, cwd)
    with Scratch() as folder:
        streams = [folder / "stdin", folder / "stdout", folder / "stderr"]
        streams[0].write_bytes(data or b"")
        actions = [(os.POSIX_SPAWN_OPEN, 0, str(streams[0]), os.O_RDONLY, 0)]
        actions += [(os.POSIX_SPAWN_OPEN, fd, str(streams[fd]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                    for fd in (1, 2)]
        try:
            pid = os.posix_spawnp(program, [program] + argv[1:], clean_git_env(), file_actions=actions)
        except OSError as exc:
            raise GitError(f"{what}: {argv[0]} could not be run ({exc.strerror or exc}){after}") from None
        try:
            status = os.waitpid(pid, 0)[1]
        except BaseException:  # Ctrl-C: the program does not outlive the write
            try:
                os.kill(pid, 15)
                os.waitpid(pid, 0)
            except OSError:
                pass
            raise
        return Ran(os.waitstatus_to_exitcode(status), streams[1].read_bytes(), streams[2].read_bytes())


def _first_line(stderr: bytes) -> str:
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.strip() and not line.startswith("[GNUPG:]"):
            return line.strip()
    return "no message"


def _failed(program: str, done: Ran) -> GitError:
    return GitError(f"signing the commit failed: {program} exited {done.returncode}: "
                    f"{_first_line(done.stderr)}; nothing was written")


def sign(payload: bytes, how: dict, committer: tuple[str, str], cwd: StrPath | None = None) -> str:
    """The signature of a commit's bytes, as git makes it; GitError when the signer fails."""
    form = how.get("format")
    if form == "ssh":
        return _sign_ssh(payload, how, cwd)
    if form in ("openpgp", "x509"):
        return _sign_gpg(payload, how, committer, cwd)
    raise GitError(f"cannot sign the commit: gpg.format is {form!r}, which git does not know "
                   "(openpgp, ssh or x509); nothing was written")


def _sign_gpg(payload: bytes, how: dict, committer: tuple[str, str], cwd: StrPath | None) -> str:
    program = how["program"]
    key = how.get("key") or f"{committer[0]} <{committer[1]}>"  # git's default: the committer
    done = _run([program, "--status-fd=2", "-bsau", key], payload, cwd, "signing the commit failed")
    if done.returncode != 0 or b"\n[GNUPG:] SIG_CREATED " not in b"\n" + done.stderr:
        raise _failed(program, done)
    return done.stdout.decode("utf-8", "replace")


def _literal_key(key: str) -> str | None:
    if key.startswith("key::"):
        return key[5:]
    return key if key.startswith("ssh-") else None


def _sign_ssh(payload: bytes, how: dict, cwd: StrPath | None) -> str:
    program = how["program"]
    key = how.get("key") or ""
    if not key and how.get("key_command"):
        import shlex
        done = _run(shlex.split(how["key_command"]), None, cwd, "gpg.ssh.defaultKeyCommand failed")
        lines = done.stdout.decode("utf-8", "replace").splitlines()
        key = lines[0].strip() if done.returncode == 0 and lines else ""
        if not _literal_key(key):
            raise GitError("signing the commit failed: gpg.ssh.defaultKeyCommand gave no key "
                           f"({_first_line(done.stderr)}); nothing was written")
    if not key:
        raise GitError("cannot sign the commit: commit.gpgsign is on with gpg.format ssh, but "
                       "user.signingkey is not set (a key file, or key::ssh-... for an agent's key); "
                       "nothing was written")
    literal = _literal_key(key)
    with Scratch() as tmp:
        if literal is not None:  # a public key whose private half an ssh-agent holds
            key_file = tmp / "key.pub"
            key_file.write_text(literal + "\n")
        else:
            key_file = Path(_resolve(key, cwd))
        buffer = tmp / "commit"
        buffer.write_bytes(payload)
        argv = [program, "-Y", "sign", "-n", "git", "-f", str(key_file)]
        done = _run(argv + (["-U"] if literal is not None else []) + [str(buffer)], None, cwd,
                    "signing the commit failed")
        signature = tmp / "commit.sig"
        if done.returncode != 0 or not signature.is_file():
            raise _failed(program, done)
        return signature.read_text(encoding="utf-8", errors="replace")


def with_signature(commit: bytes, signature: str) -> bytes:
    """The commit's bytes with a ``gpgsig`` header after its others, as git writes it
    (each further line of the signature starts with a space)."""
    head, blank, message = commit.partition(b"\n\n")
    lines = signature.rstrip("\n").split("\n")
    return head + b"\ngpgsig " + "\n ".join(lines).encode("utf-8") + blank + message


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
        sig_file = tmp / "commit.sig"
        sig_file.write_bytes(signature)
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
        sig_file = tmp / "commit.sig"
        sig_file.write_bytes(signature)
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
