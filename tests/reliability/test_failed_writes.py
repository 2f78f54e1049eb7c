"""A write that fails leaves nothing; a write killed before its commit is committed as its
own (issue 35, "Faults").

* The commit cannot be made (a full disk, an I/O error): the store file is put back to
  the bytes it had, though the disk has no room for a new file, and the next write
  commits nothing "by system". In process (the recorder made to fail as a full disk
  does, every later new file refused), and on a real small tmpfs when the tests run
  as root.
* A ``ctx set`` SIGKILLed between the store file's rename and its commit: the next
  write commits it with the killed write's author and message, not as an outside
  change by ``system``.
"""

from __future__ import annotations

import errno
import os
import subprocess

import pytest

from support import relutil as R
from support.gitutil import git_out, log_rows


class _FullDisk:
    """From the moment the commit is tried, no new file can be made (as on a full disk)."""

    def __init__(self, monkeypatch) -> None:
        import ctx.storage.atomic as files
        self.full = False
        real = files._temporary

        def temporary(directory, name):
            if self.full:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real(directory, name)
        monkeypatch.setattr(files, "_temporary", temporary)

    def fail(self, *args, **kwargs):
        self.full = True
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("way", ["fast", "libgit2"])
def test_a_commit_that_fails_on_a_full_disk_leaves_the_store_as_it_was(root, make_context, monkeypatch, way):
    author = "Agent Full" if way == "fast" else None
    if way == "libgit2":
        monkeypatch.setenv("CTX_GIT_SLOW", "1")
    make_context(author=author, git=True).set("k", "before")
    path = R.store_file(root, "shared")
    before, head = path.read_bytes(), R.head(root)
    disk = _FullDisk(monkeypatch)
    if way == "fast":
        monkeypatch.setattr("ctxgit.plumbing.gitcommit.commit", disk.fail)
    else:
        monkeypatch.setattr("ctxgit.plumbing.repo.commit_paths", disk.fail)
    with pytest.raises(OSError):
        make_context(author=author, git=True).set("k", "after the disk filled")
    assert path.read_bytes() == before, "the failed write's entry stayed in the store file"
    assert R.head(root) == head
    assert not [p.name for p in (root / "memory").iterdir() if p.name.endswith(".tmp")]
    monkeypatch.undo()
    make_context(author="Agent Next", git=True).set("other", "a later write")
    assert "system" not in git_out(root, "log", "--format=%an"), "the next write committed it by system"
    assert R.read_entries(root, "shared")["k"]["value"] == "before"


# --- a real small file system ----------------------------------------------------------------

def _mount_tmpfs(where, size: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


def _fill(where, leave: int) -> None:
    """Fill the file system at ``where`` until ``leave`` bytes are free."""
    st = os.statvfs(where)
    free = st.f_bavail * st.f_frsize
    with open(where / "filler", "ab") as handle:
        handle.write(b"\0" * max(0, free - leave))
    for i in range(1000):  # what the block rounding left
        st = os.statvfs(where)
        if st.f_bavail * st.f_frsize <= leave:
            break
        try:
            with open(where / f"filler{i}", "wb") as handle:
                handle.write(b"\0" * 4096)
        except OSError:
            break


@pytest.mark.slow
def test_writes_on_a_nearly_full_disk_fail_cleanly_at_every_fill_level(tmp_path):
    """(Issue 35: 6 of 21 fill levels left the failed set's entry in the store file, and
    the next write committed it as an external change by system.)"""
    disk = tmp_path / "small"
    _mount_tmpfs(disk, "2m")
    try:
        root = disk / "ctx"
        env = R.ctx_env(root, author="Agent Full")
        for i in range(8):
            assert R.run_ctx(["set", f"seed{i}", "s" * 2000], env).returncode == 0
        value = "v" * 6000
        bad = []
        for level in range(21):
            leave = level * 4096
            for name in disk.iterdir():
                if name.name.startswith("filler"):
                    name.unlink()
            before, head = R.store_file(root, "shared").read_bytes(), R.head(root)
            _fill(disk, leave)
            done = R.run_ctx(["set", f"k{level}", value], env)
            after = R.store_file(root, "shared").read_bytes()
            if done.returncode == 0:
                if R.read_entries(root, "shared").get(f"k{level}", {}).get("value") != value:
                    bad.append(f"level {level}: exit 0 but the entry is not whole")
            else:
                if R.one_line_error(done) is not None:
                    bad.append(f"level {level}: {R.one_line_error(done)}: {done.describe()}")
                if after != before:
                    bad.append(f"level {level}: the failed write changed the store file")
                if R.head(root) != head:
                    bad.append(f"level {level}: the failed write left a commit")
        for name in disk.iterdir():
            if name.name.startswith("filler"):
                name.unlink()
        done = R.run_ctx(["set", "last", "with room again"], env)
        assert done.returncode == 0, done.describe()
        authors = git_out(root, "log", "--format=%an").split()
        if "system" in authors:
            bad.append("a write committed a failed write's entry as an external change by system")
        assert not bad, "\n".join(bad)
        assert not R.inspect_root(root, committed=True)
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


# --- killed between the rename and the commit ------------------------------------------------

# the first step after the store's rename, either way: the commit marker (git's and libgit2's
# own file operations are invisible to the hook); then git's start (tests/support/relutil.py)
AFTER_RENAME = {"fast": R.Step("spawn git commit", 1), "libgit2": R.Step("open .git/ctx/.committing.*.tmp", 1)}


@pytest.mark.slow
@pytest.mark.parametrize("way", ["fast", "libgit2"])
def test_a_write_killed_before_its_commit_is_committed_as_its_own(root, tmp_path, way):
    """(Issue 35: after 200 kill -9s one write was committed as an external change by system.)"""
    env = R.ctx_env(root, author="Agent Killed", CTX_GIT_SLOW="1" if way == "libgit2" else None)
    step = AFTER_RENAME[way]
    for i in range(2):
        assert R.run_ctx(["set", f"seed{i}", f"seed value {i}"], env).returncode == 0
    done, steps, hit = R.run_faulty(["set", "k", "killed mid-write"], env, step, "kill", tmp_path / "fault.log")
    assert hit and done.killed, done.describe()
    assert R.Step("os.rename memory/shared.json", 1) in steps[:steps.index(step)]
    assert R.read_entries(root, "shared")["k"]["value"] == "killed mid-write"
    after = R.run_ctx(["set", "next", "write"], R.ctx_env(root, author="Agent Next"))
    assert after.returncode == 0, after.describe()
    rows = log_rows(root, "%an|%s")
    assert not [r for r in rows if r.startswith("system|")], rows
    assert rows[:2] == ["Agent Next|set shared/next: write", "Agent Killed|set shared/k: killed mid-write"], rows
    assert not R.inspect_root(root, committed=True)
    assert not [p.name for p in (root / "memory").iterdir() if p.name.endswith(".tmp")], \
        "the killed write's second name for the old file stayed"
