"""The everyday commit without libgit2: a store write as loose objects, a ref and an index.

Importing pygit2 costs more than a whole write of a small store, and a
write changes one file. So when the repository is exactly as ctx's last
commit left it (recorded in ``.git/ctx/state.json``: HEAD, the root and
memory/ trees, the index's and config's identity, and the identity of every
versioned file), the commit is written here in plain git formats: the blob
(``ctxgit/gitfiles/objects.py``), the memory/ tree, the root
tree, the commit, ``refs/heads/main`` through its lock file, both reflogs,
and the index entry (its cached-tree extension dropped, so git recomputes
it). Anything else — a file changed outside ctx, another branch, a file
new to git, a lock file held, an index version other than 2, a merge —
returns False and the caller uses libgit2, which also repairs what it finds.
"""

from __future__ import annotations

import hashlib
import os
import struct
import time

from ctx import model, phases
from ctx.jsoncodec import compact, loads
from ctx.storage.files import atomic_write, make_dir, read_bytes, read_text, remove, sweep_temporaries
from ctxgit.gitfiles.layout import BRANCH, BRANCH_REF, COMMITTING, DIR, MANAGED_FILES, STATE
from ctxgit.gitfiles.objects import blob_id
from ctxgit.gitfiles.objects import encode as _sha
from ctxgit.gitfiles.objects import tree_bytes as _tree_bytes
from ctxgit.gitfiles.objects import write as _write_object
from ctxgit.gitfiles.refs import head_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctx.storage.files import StrPath

RACY_NS = 2_000_000_000


INTENT = COMMITTING
LOCKS = ("index.lock", f"{BRANCH_REF}.lock")
OWN_MODE = 0o700  # a lock file ctx makes is born with its owner's x bit, which no git gives one


def begin_commit(git: StrPath, how: str = "fast") -> None:
    """Say, before taking git's lock files, that a commit is under way and who takes
    the locks: ``fast`` (this module: marked with ``OWN_MODE``) or ``libgit2``."""
    path = os.path.join(git, INTENT)
    make_dir(os.path.dirname(path))
    # Replaced whole: ``recover`` judges libgit2's lock files by this file's mtime and
    # says, so it must never find it half-written. Not fsynced (every write takes this
    # path): a kill loses nothing the page cache holds, and after a power cut a lost
    # marker only leaves a lock file named in an error, not removed.
    atomic_write(path, f"{os.getpid()}\n{how}\n".encode(), durable=False)


def end_commit(git: StrPath) -> None:
    remove(os.path.join(git, INTENT))


def recover(root: StrPath) -> list[str]:
    """Remove the lock files a ctx commit killed half-way left behind.

    Called with the context lock held: no other ctx is committing. A lock file
    this module made carries ``OWN_MODE`` from its creation until just before it
    is renamed into place, so it is known for the dead commit's whatever its age.
    libgit2's lock files look like any git's; they count as the dead commit's only
    when it committed through libgit2 and they were made in the seconds after it
    began (an operator's git that took a lock just then is the one case left).
    """
    git = os.path.join(root, ".git")
    sweep_temporaries(os.path.join(git, DIR))  # a counter's or marker's temporary a killed ctx left
    removed = []
    for name in LOCKS:
        try:
            if os.stat(os.path.join(git, name)).st_mode & 0o100:
                os.unlink(os.path.join(git, name))
                removed.append(name)
        except FileNotFoundError:
            continue
    intent = os.path.join(git, INTENT)
    try:
        began = os.stat(intent).st_mtime
        how = read_text(intent, errors="replace").split()[1:2]
    except (FileNotFoundError, IndexError):
        return removed
    for name in LOCKS if how == ["libgit2"] else ():
        try:
            made = os.stat(os.path.join(git, name)).st_mtime
        except FileNotFoundError:
            continue
        if began - 1 <= made <= began + 5:
            remove(os.path.join(git, name))
            removed.append(name)
    end_commit(git)
    forget_state(root)
    return removed


def _make_lock(path: str) -> int | None:
    """Create a lock file (``O_EXCL``) marked as ctx's; its descriptor, or None when
    another git holds it. ``_commit_lock`` renames it into place and only then
    gives it its final mode, so up to the rename it is known for ctx's."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWN_MODE)
    except FileExistsError:
        return None


def _commit_lock(fd: int, lock: str, target: str, content: bytes, before_rename=None) -> bool:
    """Write ``content`` to the lock, rename it over ``target``, give it ``target``'s old
    mode; False (lock removed) when ``before_rename`` says no. Closes ``fd``."""
    mode = _mode_of(target)
    try:
        os.write(fd, content)
        if before_rename is not None and not before_rename():
            remove(lock)
            return False
        os.replace(lock, target)
        try:
            os.fchmod(fd, mode)  # the same file, now in place
        except OSError:
            pass
        return True
    except BaseException:
        remove(lock)
        raise
    finally:
        os.close(fd)


def _mode_of(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        return 0o644


def _identity(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def _stat(path: StrPath) -> list[int] | None:
    try:
        return _identity(os.stat(path))
    except FileNotFoundError:
        return None


def _versioned(root: StrPath) -> dict[str, list[int]]:
    """Identity of every file ctx versions, as it is on disk now."""
    out = {}
    for name in MANAGED_FILES:
        found = _stat(os.path.join(root, name))
        if found is not None:
            out[name] = found
    for folder, test in (("memory", lambda n: n.endswith(".json") and not n.startswith(".")),
                         ("sessions", lambda n: True)):
        where = os.path.join(root, folder)
        try:
            names = os.listdir(where)
        except FileNotFoundError:
            continue
        for name in names:
            path = os.path.join(where, name)
            if test(name) and os.path.isfile(path):
                out[f"{folder}/{name}"] = _identity(os.stat(path))
    return out


# --- the state ctx's last commit left -------------------------------------------------

def _global_configs() -> list:
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [_stat(os.path.join(home, ".gitconfig")), _stat(os.path.join(xdg, "git", "config"))]


def save_state(root: StrPath, head: str, root_tree: list[list[str]], memory_tree: list[list[str]],
               blobs: dict[str, str], operator: list[str] | None = None, signing: dict | None = None) -> None:
    """Record the repository as a commit just left it (called by either way of committing).

    ``operator`` is this machine's git identity (the committer of every commit; None:
    none set), ``signing`` how git is told to sign (``signing.signing_config``; None:
    it is not): both read from the config, which the state's identity covers."""
    git = os.path.join(root, ".git")
    files = _versioned(root)
    if set(files) - set(blobs):
        return  # a versioned file git does not hold: let libgit2 look next time
    state = {"head": head, "root": root_tree, "memory": memory_tree, "index": _stat(os.path.join(git, "index")),
             "config": _stat(os.path.join(git, "config")), "global": _global_configs(), "operator": operator,
             "signing": signing,
             "files": files, "blobs": {p: blobs[p] for p in files}, "written": time.time_ns()}
    path = os.path.join(git, STATE)
    make_dir(os.path.dirname(path))
    atomic_write(path, compact(state, ascii=True).encode(), durable=False)  # lost, libgit2 looks next time


def forget_state(root: StrPath) -> None:
    remove(os.path.join(root, ".git", STATE))


def load_state(root: StrPath) -> dict | None:
    """The recorded state, if the repository is still exactly as it says; else None."""
    return check_state(root)[0]


def check_state(root: StrPath) -> tuple[dict | None, str]:
    """``load_state``, and when it is None why the fast commit cannot be used (a phrase
    for ``ctx doctor --check``); "" with a state."""
    git = os.path.join(root, ".git")
    if os.path.islink(git) or not os.path.isdir(git):
        return None, "the repository is not a plain .git directory"  # libgit2's way refuses it clearly
    try:
        state = loads(read_text(os.path.join(git, STATE)))
    except FileNotFoundError:
        return None, "no record of ctx's last commit (.git/ctx/state.json)"
    except (OSError, ValueError):
        return None, "the record of ctx's last commit is unreadable"
    try:
        if read_text(os.path.join(git, "HEAD")) != f"ref: {BRANCH_REF}\n":
            return None, f"HEAD is not the branch {BRANCH}"
        if head_id(root) != state["head"]:
            return None, "main moved since ctx's last commit (a commit, pull or reset outside ctx)"
        if "signing" not in state:
            return None, "the record was written by an older ctx"
    except (OSError, ValueError, KeyError):
        return None, "the record of ctx's last commit is unreadable"
    for name in ("index.lock", "MERGE_HEAD", f"{BRANCH_REF}.lock"):
        if os.path.exists(os.path.join(git, name)):
            return None, f".git/{name} exists"
    if _stat(os.path.join(git, "index")) != state["index"]:
        return None, "git's index changed since ctx's last commit (a git add, status or gc?)"
    if _stat(os.path.join(git, "config")) != state["config"]:
        return None, ".git/config changed since ctx's last commit"
    if state.get("global") != _global_configs():
        return None, "the user's git configuration changed since ctx's last commit"
    on_disk = _versioned(root)
    if on_disk != state["files"]:
        changed = sorted(p for p in set(on_disk) | set(state["files"]) if on_disk.get(p) != state["files"].get(p))
        return None, f"{', '.join(changed[:3])} changed outside ctx"
    try:
        recorded = os.stat(os.path.join(git, STATE)).st_mtime_ns
    except OSError:
        return None, "the record of ctx's last commit is unreadable"
    for path, ident in on_disk.items():
        if _racy(ident[1], recorded) and blob_id(read_bytes(os.path.join(root, path))) != state["blobs"].get(path):
            return None, f"{path} changed outside ctx"
    return state, ""


def _racy(mtime: int, recorded: int) -> bool:
    """git's rule for a "racily clean" file: one not older than the record of it (the
    state file, written after it, on the same file system and clock) may have changed
    since within the same clock tick, its size, time and inode unchanged: its bytes
    decide. Any change after that tick moves its time past the record's. Where the
    file system keeps whole seconds (no sub-millisecond part), the last ``RACY_NS``
    before the record count too."""
    fine = mtime % 1_000_000 and recorded % 1_000_000
    return mtime >= recorded - (0 if fine else RACY_NS)


# --- the index -----------------------------------------------------------------------

def _update_index(git: str, path: str, sha: str, st: os.stat_result) -> bool:
    index = os.path.join(git, "index")
    data = read_bytes(index)
    if data[:4] != b"DIRC" or struct.unpack(">I", data[4:8])[0] != 2:
        return False
    if hashlib.sha1(data[:-20]).digest() != data[-20:]:
        return False
    count = struct.unpack(">I", data[8:12])[0]
    offset, target = 12, path.encode()
    found = None
    for _ in range(count):
        flags = struct.unpack(">H", data[offset + 60:offset + 62])[0]
        name_len = flags & 0xFFF
        name = data[offset + 62:offset + 62 + name_len]
        size = (62 + name_len + 8) // 8 * 8
        if name == target:
            found = offset
        offset += size
    if found is None:
        return False
    fields = struct.pack(">IIIIIIIIII", int(st.st_ctime) & 0xFFFFFFFF, st.st_ctime_ns % 1_000_000_000,
                         int(st.st_mtime) & 0xFFFFFFFF, st.st_mtime_ns % 1_000_000_000,
                         st.st_dev & 0xFFFFFFFF, st.st_ino & 0xFFFFFFFF, 0o100644,
                         st.st_uid & 0xFFFFFFFF, st.st_gid & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
    body = data[:found] + fields + bytes.fromhex(sha) + data[found + 60:offset]  # extensions dropped
    body += hashlib.sha1(body).digest()
    lock = os.path.join(git, "index.lock")
    fd = _make_lock(lock)
    if fd is None:
        return False  # another git's: left alone
    try:
        return _commit_lock(fd, lock, index, body)
    except OSError:
        return False  # the lock (ours) is removed


# --- the commit ----------------------------------------------------------------------------

def commit_store(root: StrPath, state: dict, store_path: str, content: bytes, message: str,
                 name: str, email: str, committer: tuple[str, str] | None = None,
                 old: bytes | None = None) -> tuple[str, int] | None:
    """Commit one store file's new ``content``, by author ``name <email>`` and ``committer``
    (default: the author), signed when the state says git signs; (commit id, loose bytes)
    or None to fall back. A signer that fails raises GitError before anything is written.
    ``old``: the file's bytes in HEAD, whose loose blob's pieces the new one may reuse
    (``pieces.py``)."""
    git = os.path.join(root, ".git")
    file_name = store_path.split("/", 1)[1]
    if store_path not in state["files"] or not any(e[1] == file_name for e in state["memory"]):
        return None  # a file new to git: libgit2 adds it
    committer_name, committer_email = committer or (name, email)
    for text in (name, email, committer_name, committer_email):
        if any(c in text for c in "<>\n\0"):
            return None
    blob, blob_data = _sha(b"blob", content)
    phases.lap("hash")
    memory = [[m, n, blob if n == file_name else s] for m, n, s in state["memory"]]
    memory_sha, memory_data = _sha(b"tree", _tree_bytes(memory))
    root_tree = [[m, n, memory_sha if n == "memory" else s] for m, n, s in state["root"]]
    root_sha, root_data = _sha(b"tree", _tree_bytes(root_tree))
    now = int(model.clock())  # the entry's clock: a commit is never dated before its entry
    person = f"{name} <{email}> {now} +0000".encode()
    by = f"{committer_name} <{committer_email}> {now} +0000".encode()
    body = (b"tree %s\nparent %s\nauthor %s\ncommitter %s\n\n" % (root_sha.encode(), state["head"].encode(),
                                                                   person, by)) + message.encode()
    if state.get("signing"):  # signed before anything is written: a failing signer leaves no trace
        from ctxgit.plumbing.signing import sign, with_signature
        body = with_signature(body, sign(body, state["signing"], (committer_name, committer_email), root))
    commit, commit_data = _sha(b"commit", body)
    from ctxgit.plumbing import pieces
    packed, chart = pieces.compress(git, store_path, blob, blob_data[0], content, old, state["blobs"].get(store_path))
    written = _write_object(git, blob, blob_data, packed)
    pieces.remember(git, store_path, chart if written else None)
    for sha, data in ((memory_sha, memory_data), (root_sha, root_data), (commit, commit_data)):
        written += _write_object(git, sha, data)
    phases.lap("compress")
    st = os.stat(os.path.join(root, store_path))
    if _identity(st)[0] != len(content):
        return None
    ref = os.path.join(git, BRANCH_REF)  # a loose ref wins over packed-refs
    os.makedirs(os.path.dirname(ref), exist_ok=True)
    lock = os.path.join(os.path.dirname(ref), f"{BRANCH}.lock")
    begin_commit(git)
    fd = _make_lock(lock)
    if fd is None:
        end_commit(git)
        return None
    try:
        moved = _commit_lock(fd, lock, ref, commit.encode() + b"\n",
                             before_rename=lambda: head_id(root) == state["head"])
    except BaseException:
        end_commit(git)
        raise
    if not moved:
        end_commit(git)
        return None
    # The commit stands from here: what follows only keeps git's side files current,
    # and a failure in it must not make the write look undone (libgit2 repairs them).
    try:
        subject = message.split("\n", 1)[0]
        by_whom = f"{committer_name} <{committer_email}> {now} +0000"  # git logs the committer
        line = f"{state['head']} {commit} {by_whom}\tcommit: {subject}\n".encode()
        for log in (os.path.join(git, "logs", "HEAD"), os.path.join(git, "logs", BRANCH_REF)):
            os.makedirs(os.path.dirname(log), exist_ok=True)
            with open(log, "ab") as handle:
                handle.write(line)
        if _update_index(git, store_path, blob, st):
            blobs = dict(state["blobs"], **{store_path: blob})
            save_state(root, commit, root_tree, memory, blobs, state.get("operator"), state.get("signing"))
        else:
            forget_state(root)
    except OSError:
        forget_state(root)
    end_commit(git)
    return commit, written
