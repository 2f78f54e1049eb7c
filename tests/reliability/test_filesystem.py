"""Filesystem faults: a read-only root, a full disk, links, awkward paths.

* Read-only: the tests run as root, and root ignores ``chmod``. The ctx process
  is started without the capabilities that let root do so (CAP_DAC_OVERRIDE,
  CAP_DAC_READ_SEARCH, CAP_FOWNER dropped from its bounding set), so a
  ``chmod -w`` stops it as it stops anyone; when that cannot be done the test
  is skipped with the reason.
* Full disk: ``RLIMIT_FSIZE`` in the ctx process (a write past it fails with
  EFBIG; Python ignores SIGXFSZ), and ENOSPC injected at each file operation
  of a write by an audit hook (``relutil.FAULTY``).
* Links: ``memory/``, a store file, the lock file, ``sessions/`` or ``.git``
  as a symbolic link: refused, nothing written through the link.
* ``CTX_HOME`` with spaces, quotes, shell characters and non-ASCII letters.
"""

from __future__ import annotations

import ctypes
import os
import resource
import stat
from pathlib import Path

import pytest

from support import relutil as R

pytestmark = pytest.mark.slow  # real processes, kills, full disks, many examples

PR_CAPBSET_DROP = 24
DAC_CAPABILITIES = (1, 2, 3)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER


def _seeded(root, author="Agent FS", n=3):
    env = R.ctx_env(root, author=author)
    for i in range(n):
        done = R.run_ctx(["set", f"k{i}", f"value {i}"], env)
        assert done.returncode == 0, done.describe()
    return env


def _leftovers(root) -> list[str]:
    """Temporary files a failed write must not leave in memory/."""
    return sorted(p.name for p in (root / "memory").iterdir() if p.name.endswith(".tmp"))


def _assert_failed_cleanly(root, done, before: bytes, head: str | None, store="shared"):
    assert done.returncode > 0, done.describe()
    assert R.one_line_error(done) is None, done.describe()
    assert R.store_file(root, store).read_bytes() == before, "the failed write changed the store file"
    assert R.head(root) == head, "the failed write left a commit"
    assert not _leftovers(root), _leftovers(root)
    assert not R.inspect_root(root)


# --- a read-only root -------------------------------------------------------------------------

def _without_dac_override():
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in DAC_CAPABILITIES:
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _read_only_runner():
    """preexec_fn that makes chmod bind this process, or a pytest.skip."""
    if os.geteuid() != 0:
        return None
    try:
        probe = R.run_ctx(["--version"], dict(os.environ), preexec_fn=_without_dac_override)
    except (OSError, R.subprocess.SubprocessError) as error:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE for the ctx process ({error}): "
                    "root ignores chmod, so a read-only root cannot be simulated here")
    if probe.returncode != 0:
        pytest.skip(f"running as root; ctx without CAP_DAC_OVERRIDE does not start: {probe.describe()}")
    return _without_dac_override


def _chmod_tree(path: Path, writable: bool) -> None:
    for d, _dirs, files in os.walk(path):
        for name in files:
            p = Path(d) / name
            if not p.is_symlink():
                p.chmod(p.stat().st_mode | stat.S_IWUSR if writable else p.stat().st_mode & ~0o222)
        Path(d).chmod(Path(d).stat().st_mode | stat.S_IWUSR if writable else Path(d).stat().st_mode & ~0o222)


@pytest.mark.parametrize("part,author", [("root", "Agent FS"), ("memory", None), ("git", "Agent FS"), ("git", None)],
                         ids=["root", "memory", "git-fast-way", "git-libgit2-way"])
def test_a_read_only_root_fails_writes_cleanly_and_still_reads(root, part, author):
    preexec = _read_only_runner()
    env = _seeded(root, author or "Seeder")
    env = R.ctx_env(root, author=author)
    before, head = R.store_file(root, "shared").read_bytes(), R.head(root)
    target = {"root": root, "memory": root / "memory", "git": root / ".git"}[part]
    _chmod_tree(target, writable=False)
    if part == "memory":
        (root / "memory" / ".lock").chmod(0o600)  # the lock can be taken; nothing else written
    try:
        for args in (["set", "k9", "blocked"], ["amend", "k1", "blocked"], ["delete", "k2"]):
            done = R.run_ctx(args, env, preexec_fn=preexec)
            assert done.returncode > 0, done.describe()
            assert R.one_line_error(done) is None, done.describe()
            assert R.store_file(root, "shared").read_bytes() == before
            assert R.head(root) == head
        got = R.run_ctx(["get", "k1", "--json"], env, preexec_fn=preexec)
        assert got.returncode == 0 and '"value 1"' in got.stdout, got.describe()
        assert R.run_ctx(["brief"], env, preexec_fn=preexec).returncode == 0
        assert R.run_ctx(["search", "value"], env, preexec_fn=preexec).returncode == 0
    finally:
        _chmod_tree(target, writable=True)
    assert not _leftovers(root)
    assert not R.inspect_root(root, committed=True)
    after = R.run_ctx(["set", "k9", "writable again"], env)
    assert after.returncode == 0, after.describe()
    assert R.read_entries(root, "shared")["k1"]["value"] == "value 1"
    assert not R.inspect_root(root, committed=True)


def test_a_read_only_repository_gets_a_clear_error(root):
    """(BUG-14, fixed in a74c462: libgit2's errors outside _retry came out as
    'internal error'.)"""
    preexec = _read_only_runner()
    env = _seeded(root, None)
    _chmod_tree(root / ".git", writable=False)
    try:
        done = R.run_ctx(["set", "k9", "blocked"], env, preexec_fn=preexec)
    finally:
        _chmod_tree(root / ".git", writable=True)
    assert done.returncode > 0 and R.one_line_error(done) is None, done.describe()


# --- a full disk ----------------------------------------------------------------------------------

def _file_size_limit(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.parametrize("author", ["Agent FS", None], ids=["fast-way", "libgit2-way"])
def test_a_full_disk_fails_the_write_cleanly_and_keeps_the_old_store(root, author):
    env = _seeded(root, author or "Seeder", n=6)
    env = R.ctx_env(root, author=author)
    path = R.store_file(root, "shared")
    before, head = path.read_bytes(), R.head(root)
    limit = len(before) + 500  # the new store file needs more than that
    for args in (["set", "big", "x" * 3000], ["set", "k1", "y" * 3000], ["amend", "k2", "z" * 3000]):
        done = R.run_ctx(args, env, preexec_fn=_file_size_limit(limit))
        _assert_failed_cleanly(root, done, before, head)
    after = R.run_ctx(["set", "big", "fits now"], env)
    assert after.returncode == 0, after.describe()
    entries = R.read_entries(root, "shared")
    assert entries["big"]["value"] == "fits now" and entries["k1"]["value"] == "value 1"
    assert "Amended" not in entries["k2"]["value"]
    assert not R.inspect_root(root, committed=True)


def test_a_first_write_out_of_room_leaves_no_rules_cut_short(root):
    """The disk fills while the first write makes RULES.md: it is not left (a part
    of it would have been kept and committed by every later write), and the next
    write makes it whole."""
    env = R.ctx_env(root, author="Agent FS")
    done = R.run_ctx(["set", "k", "v"], env, preexec_fn=_file_size_limit(200))
    assert done.returncode > 0 and R.one_line_error(done) is None, done.describe()
    assert not (root / "RULES.md").exists()
    assert not [p.name for p in root.iterdir() if p.name.endswith(".tmp")]
    after = R.run_ctx(["set", "k", "v"], env)
    assert after.returncode == 0, after.describe()
    from ctx.storage.root import RULES_TEMPLATE
    assert (root / "RULES.md").read_text(encoding="utf-8") == RULES_TEMPLATE
    assert not R.inspect_root(root, committed=True)


def test_a_write_that_just_fits_is_whole_and_reads_agree(root):
    """Room for the store file but maybe not for the read index (.git/ctx): the write
    succeeds, is committed, and later reads agree with the file."""
    env = _seeded(root, n=6)
    path = R.store_file(root, "shared")
    value = "w" * 3000
    limit = len(path.read_bytes()) + len(value) + 400
    done = R.run_ctx(["set", "fits", value], env, preexec_fn=_file_size_limit(limit))
    assert done.returncode == 0, done.describe()
    assert R.read_entries(root, "shared")["fits"]["value"] == value
    got = R.run_ctx(["search", "wwww", "--json"], env)
    assert got.returncode == 0 and '"fits"' in got.stdout, got.describe()
    assert not R.inspect_root(root, committed=True)


# ENOSPC injected at each file operation of a write. Two of them also have a test of
# their own below: after the branch moved (BUG-2) and at git's start (BUG-3).
COMMIT_START = R.COMMIT_START


def test_no_space_at_any_file_operation_fails_cleanly_or_completes(root, tmp_path):
    """A failure before the commit: nothing changed, a clear message, no lock left; a
    failure after it (reflog, index, bookkeeping): the write stands and says so. (The
    fast way; the soak sweeps the libgit2 way, amend and delete too.)"""
    env = R.ctx_env(root, author="Agent FS")
    for i in range(2):
        assert R.run_ctx(["set", f"seed{i}", f"seed value {i}"], env).returncode == 0
    steps, problems = R.sweep(root, env, "set", "enospc", set(), tmp_path / "fault.log", every_object=False)
    assert not problems, "\n".join(problems)
    assert R.Step("os.rename memory/shared.json", 1) in steps


@pytest.mark.parametrize("step,author", [*((step, "Agent FS") for step in sorted(R.POST_COMMIT_STEPS, key=str)),
                                         (R.Step("open .git/ctx/.loose-bytes.*.tmp", 1), None),
                                         (R.Step("os.rename .git/ctx/loose-bytes", 1), None)],
                         ids=lambda v: str(v) if isinstance(v, R.Step) else "libgit2" if v is None else "fast")
def test_no_space_after_the_branch_moved_leaves_no_failed_write_in_history(root, tmp_path, step, author):
    """(BUG-2, fixed in a74c462: the write reported failure and put the store
    file back while its commit stayed on main; the next write reverted it.)"""
    env = R.ctx_env(root, author=author)
    for i in range(2):
        assert R.run_ctx(["set", f"seed{i}", f"seed value {i}"], env).returncode == 0
    before, head = R.store_file(root, "shared").read_bytes(), R.head(root)
    done, _, hit = R.run_faulty(["set", "k", "v"], env, step, "enospc", tmp_path / "fault.log")
    assert hit
    if done.returncode == 0:  # a write that reports success must be whole
        assert R.read_entries(root, "shared")["k"]["value"] == "v"
    else:
        assert R.store_file(root, "shared").read_bytes() == before
        assert R.head(root) == head, "the write failed, yet its commit is on main"


def test_no_space_as_git_starts_leaves_no_lock_file(root, tmp_path):
    """(BUG-3, fixed in a74c462: the hand-made commit left refs/heads/main.lock behind; git
    makes the commit now, and a commit it could not start leaves nothing.)"""
    env = R.ctx_env(root, author="Agent FS")
    for i in range(2):
        assert R.run_ctx(["set", f"seed{i}", f"seed value {i}"], env).returncode == 0
    done, _, hit = R.run_faulty(["set", "k", "v"], env, COMMIT_START, "enospc", tmp_path / "fault.log")
    assert hit and done.returncode != 0
    assert R.stale_git_locks(root) == []
    assert R.run_ctx(["set", "k2", "v2"], dict(env, CTX_GIT_RETRY_SECONDS="0.5")).returncode == 0


# --- symbolic links -------------------------------------------------------------------------------

def _link(root: Path, which: str, elsewhere: Path) -> tuple[Path, Path]:
    """Replace a part of the root by a link to a copy elsewhere; returns (link, target)."""
    rel = {"memory-dir": "memory", "store-file": "memory/shared.json", "lock-file": "memory/.lock",
           "sessions-dir": "sessions", "git-dir": ".git"}[which]
    link = root / rel
    target = elsewhere / Path(rel).name
    if link.exists():
        link.rename(target)
    elif which == "sessions-dir":
        target.mkdir()
    else:
        target.write_text("")
    link.symlink_to(target)
    return link, target


def _digest(path: Path) -> dict:
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.iterdir()) if p.is_file()}
    return {"": path.read_bytes()}


@pytest.mark.parametrize("which", ["memory-dir", "store-file", "lock-file", "sessions-dir", "git-dir"])
def test_a_link_in_the_root_is_never_written_through(root, tmp_path, which):
    """(git-dir: BUG-15, fixed in a74c462: the fast commit wrote through it.)"""
    env = _seeded(root)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link, target = _link(root, which, elsewhere)
    kept = _digest(target)
    for args in (["set", "k1", "through a link"], ["delete", "k2"]):
        done = R.run_ctx(args, env)
        assert done.returncode > 0, f"a write went through with {which} a link: {done.describe()}"
        assert R.one_line_error(done) is None, done.describe()
        assert "link" in done.stderr, done.describe()
    assert link.is_symlink() and _digest(target) == kept
    if which in ("store-file",):  # another store is not behind the link: writable, the link untouched
        other = R.run_ctx(["set", "k1", "elsewhere", "--store", "agent"], env)
        assert other.returncode == 0, other.describe()
        assert link.is_symlink() and _digest(target) == kept
    if (root / ".git").is_dir() and not (root / ".git").is_symlink():
        log = R.git_text(root, "log", "-p", "--all")
        assert "through a link" not in log


def test_a_dangling_store_link_is_not_followed_to_create_a_file(root, tmp_path):
    env = _seeded(root)
    R.run_ctx(["set", "a", "v", "--store", "agent"], env)
    target = tmp_path / "nowhere" / "agent.json"
    target.parent.mkdir()
    R.store_file(root, "agent").unlink()
    R.store_file(root, "agent").symlink_to(target)
    done = R.run_ctx(["set", "a", "through a dangling link", "--store", "agent"], env)
    assert done.returncode > 0 and R.one_line_error(done) is None, done.describe()
    assert not target.exists(), "ctx created the file at the end of a dangling link"


# --- awkward paths -------------------------------------------------------------------------------------

AWKWARD = "sp ace/ünï cödé 日本語 Ωμέγα/quote'd \"dq\" $HOME `x` ;&| *?[a] #~ -lead"


def test_an_awkward_context_root_path_works_end_to_end(tmp_path):
    root = tmp_path / AWKWARD
    env = R.ctx_env(root, author="Agent Path")
    steps = [["init"], ["set", "k", "v", "--tag", "t"], ["set", "j", "w", "--store", "operator"],
             ["amend", "k", "a note"], ["resolve", "k", "--note", "done"], ["get", "k", "-v"],
             ["search", "v"], ["list", "--json"], ["brief"], ["start"], ["history", "k"], ["log"],
             ["delete", "j", "--store", "operator"], ["doctor", "--check"],
             ["export", "-o", str(tmp_path / "exp ü.json")]]
    for args in steps:
        done = R.run_ctx(args, env)
        assert done.returncode == 0, done.describe()
    remote = R.make_bare(tmp_path / "remote ü 'q'.git")
    for args in (["remote", "add", "origin", str(remote)], ["sync"]):
        done = R.run_ctx(args, env)
        assert done.returncode == 0, done.describe()
    clone_root = tmp_path / "clone ß/ctx root ☃"
    clone_env = R.ctx_env(clone_root, author="Agent Clone")
    done = R.run_ctx(["clone", str(remote), str(clone_root)], clone_env)
    assert done.returncode == 0, done.describe()
    assert R.read_entries(clone_root, "shared")["k"]["status"] == "resolved"
    assert R.run_ctx(["set", "from_clone", "x"], clone_env).returncode == 0
    assert R.run_ctx(["sync"], clone_env).returncode == 0
    assert R.run_ctx(["sync"], env).returncode == 0
    assert R.read_entries(root, "shared")["from_clone"]["value"] == "x"
    for path in (root, clone_root):
        assert not R.inspect_root(path, committed=True)
    # the pre-commit hook ctx installed runs from there too
    (root / "sessions" / "note.md").write_text("an operator's note\n")
    R.git(root, "add", "sessions/note.md")
    R.git(root, "commit", "-q", "-m", "by hand")
    assert R.status_porcelain(root) == []
