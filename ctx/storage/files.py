"""Store files (§8.2) and atomic replacement (§8.3).

A store file is read whole into a ``StoreFile``; its top-level keys and the
fields of its entries that ctx does not know are carried through every
write untouched. The bytes (§8.2's layout, the serializer, the splice that
rewrites only the entries a write changed) are ``textlayout.py``'s. Writes
go to a unique temporary file in ``memory/`` that is fsynced and renamed
over the old file, so a crash leaves the old file or the new one. The lock
is in ``lock.py``.
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False  # typing is for the checker only (test_fastcli.py: test_a_read_loads_only_what_it_uses)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ctx.storage.atomic import StrPath


from ctx.errors import ContextRootError, StoreError
from ctx.model import Entry
from ctx.storage.atomic import (  # noqa: F401 (the names the rest of ctx imports from here)
    FILE_MODE,
    STALE_TEMPORARY,
    TMP_SUFFIX,
    Identity,
    atomic_write,
    identity_of,
    keep_old,
    put_back,
    remove,
    sweep_temporaries,
    temporary_name,
)

FORMAT_VERSION = "1"
REQUIRED_FIELDS = frozenset(("value", "source"))  # §3.3: without them an entry says nothing, or nobody
DIR_MODE = 0o700




class StoreFile:
    """One store file; ``data`` is the whole top-level object.

    A store the write path reads through the read index (``read_known``) is not parsed
    whole: ``top`` holds its top-level members (its entries object left empty),
    ``entry`` and ``put`` read and change one entry, and ``count`` says how many there
    are. Anything that asks for ``data`` or ``entries`` gets the whole file parsed then,
    with what ``put`` changed applied.
    """

    __slots__ = ("name", "path", "_data", "exists", "raw", "identity", "incomplete", "known", "_count",
                 "_pending")

    def __init__(self, name: str, path: str, data: dict[str, Any], exists: bool,
                 raw: bytes = b"", identity: Identity | None = None,
                 incomplete: tuple[tuple[str, str], ...] = (),
                 known: Callable[[str], Entry | None] | None = None, count: int = 0) -> None:
        self.name, self.path, self._data, self.exists = name, path, data, exists
        self.raw, self.identity = raw, identity
        self.incomplete = incomplete  # (key, fields missing) of entries lacking what §3.3 requires
        self.known = known  # key -> its entry as a full parse of ``raw`` found it (None: parsed here)
        self._count = count
        self._pending: dict[str, Entry | None] = {}

    def __repr__(self) -> str:
        return f"StoreFile({self.name!r}, {str(self.path)!r}, exists={self.exists})"

    @property
    def data(self) -> dict[str, Any]:
        if self.known is not None:
            self._parse_whole()
        return self._data

    @data.setter
    def data(self, value: dict[str, Any]) -> None:
        self._data, self.known = value, None

    @property
    def top(self) -> dict[str, Any]:
        """The top-level object, without parsing the entries when they were not."""
        return self._data

    @property
    def entries(self) -> dict[str, Entry]:
        return self.data["entries"]

    @property
    def count(self) -> int:
        return self._count if self.known is not None else len(self._data["entries"])

    def entry(self, key: str) -> Entry | None:
        """One entry (None: absent), without parsing the others when they were not."""
        if self.known is None:
            return self._data["entries"].get(key)
        if key in self._pending:
            return self._pending[key]
        return self.known(key)

    def put(self, key: str, entry: Entry | None) -> None:
        """Set one entry (None removes it); a new key goes last."""
        if self.known is None:
            if entry is None:
                self._data["entries"].pop(key, None)
            else:
                self._data["entries"][key] = entry
            return
        self._count += (entry is not None) - (self.entry(key) is not None)
        self._pending[key] = entry

    def _parse_whole(self) -> None:
        top = self._data
        parsed = parse_store(self.name, self.path, self.raw, self.identity, checked=True)
        data = parsed._data
        data.update((k, v) for k, v in top.items() if k != "entries")  # last_updated, as set since
        for key, entry in self._pending.items():
            if entry is None:
                data["entries"].pop(key, None)
            else:
                data["entries"][key] = entry
        self._data, self.known, self._pending = data, None, {}

    @property
    def writable(self) -> bool:
        return self.top.get("version") == FORMAT_VERSION and self.top.get("type") == self.name


def store_path(root: StrPath, name: str) -> str:
    return os.path.join(root, "memory", f"{name}.json")


# --- small files, as pathlib's methods would give them, without pathlib ---------------------

def read_text(path: StrPath, errors: str = "strict", follow: bool = True) -> str:
    """A small file's text (UTF-8, newlines as ``Path.read_text`` gives them).

    ``follow=False``: a symbolic link is refused (``StoreError``), never read through:
    what the root holds (RULES.md, a summary) is shown to models, and a link there would
    show them any file the user can read (tests/reliability/test_root_links.py)."""
    if follow:
        with open(path, encoding="utf-8", errors=errors) as handle:
            return handle.read()
    try:  # (O_NONBLOCK: a FIFO put in its place does not hang the reader; refused below)
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StoreError(f"{path}: is a symbolic link; ctx never follows a link in the "
                             "context root") from None
        raise
    with open(fd, encoding="utf-8", errors=errors, closefd=True) as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(f"{path}: is not a regular file; ctx does not read it")
        return handle.read()


def is_link(path: StrPath) -> bool:
    """Whether ``path`` is a symbolic link (a dangling one included)."""
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def read_bytes(path: StrPath) -> bytes:
    """A file's bytes (``Path.read_bytes``)."""
    with open(path, "rb") as handle:
        return handle.read()


def make_dir(path: StrPath, mode: int = 0o777) -> None:
    """A folder, made when missing; its parent must exist (``Path.mkdir(exist_ok=True)``)."""
    try:
        os.mkdir(path, mode)
    except FileExistsError:
        pass


def read_raw(path: StrPath) -> tuple[bytes, Identity] | None:
    """A file's bytes and the identity of exactly those bytes; None when missing.

    The identity is taken from the open file before and after reading, so a
    cache keyed by it never describes bytes other than these.
    """
    for _ in range(5):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise StoreError(f"{path}: is a directory, not a store file") from None
        except PermissionError:
            raise StoreError(f"{path}: permission denied") from None
        try:
            before = identity_of(os.fstat(fd))
            # the whole file in one read (one copy of a large store, not chunks joined), and a
            # byte more: a file that grew since is read on to its end
            chunks = [os.read(fd, before[0] + 1)]
            while len(chunks) > 1 or len(chunks[0]) != before[0]:
                chunk = os.read(fd, 1 << 22)
                if not chunk:
                    break
                chunks.append(chunk)
            after = identity_of(os.fstat(fd))
        except IsADirectoryError:
            raise StoreError(f"{path}: is a directory, not a store file") from None
        finally:
            os.close(fd)
        if before == after:
            return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), after
    raise StoreError(f"{path}: kept changing while being read")


def parse_store(name: str, path: str, raw: bytes, identity: Identity | None = None,
                checked: bool = False) -> StoreFile:
    """Parse a store file's bytes, or raise ``StoreError`` saying what is wrong.

    ``checked``: these very bytes passed this check before (the read index describes
    them), so the search for keys written twice is skipped.
    """
    try:
        data = _collector_paused(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise StoreError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start}); "
                         "fix or restore it, ctx will not overwrite it") from None
    except (ValueError, RecursionError) as exc:
        raise StoreError(f"{path}: not valid JSON ({exc}); "
                         "fix or restore it, ctx will not overwrite it") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path}: not a store file (the top level is not an object)")
    entries = data.get("entries", {})
    if not isinstance(entries, dict):
        raise StoreError(f"{path}: 'entries' is not an object; ctx will not overwrite it")
    duplicate = None if checked else _duplicate_name(raw, data, entries)
    if duplicate:
        raise StoreError(f"{path}: {duplicate} appears twice; JSON keeps only the last, so ctx "
                         "will not read or overwrite it (remove one by hand)")
    incomplete = []
    for key, entry in entries.items():
        if not isinstance(entry, dict):
            raise StoreError(f"{path}: entry {key!r} is not an object; ctx will not overwrite it")
        if not REQUIRED_FIELDS <= entry.keys():
            incomplete.append((key, ", ".join(sorted(REQUIRED_FIELDS - entry.keys()))))
    data.setdefault("entries", entries)
    return StoreFile(name, path, data, True, raw, identity, tuple(incomplete))


def _collector_paused(text: str) -> Any:
    """``text`` parsed as JSON, the cyclic collector paused for the parse only: a store file is
    one tree of new dicts, lists and strings with no cycle to find, so the collections its
    allocations would start free nothing. The collector's state is given back as it was,
    whatever happens; this is the one place the product switches it
    (tests/test_no_tricks.py: test_the_product_plays_no_process_wide_tricks)."""
    import gc

    from ctx.jsoncodec import loads
    collecting = gc.isenabled()
    gc.disable()
    try:
        return loads(text, parse_constant=_not_json)
    finally:
        if collecting:
            gc.enable()


def _not_json(name: str):
    raise ValueError(f"{name} is not JSON (RFC 8259)")


def _duplicate_name(raw: bytes, data: dict, entries: dict) -> str | None:
    """A top-level key or entry key the file names twice (``json.loads`` keeps the last
    silently, and a write would drop the other), described; None when there is none.

    When ctx's own layout shows there is none (``textlayout.unique_by_layout``), the
    full check (a second parse) is skipped.
    """
    if _unique_by_layout(raw, data, entries):
        return None
    from ctx.jsoncodec import loads
    doubled: dict[int, str] = {}
    keep: list[dict] = []

    def pairs(items: list) -> dict:
        made = dict(items)
        keep.append(made)  # ids stay unique while the parse runs
        if len(made) != len(items):
            seen: set = set()
            for name, _ in items:
                if name in seen:
                    doubled[id(made)] = name
                    break
                seen.add(name)
        return made
    try:
        top = loads(raw.decode("utf-8"), object_pairs_hook=pairs, parse_constant=_not_json)
    except (ValueError, RecursionError):
        return None  # the first parse succeeded; nothing more to learn here
    if not doubled:
        return None
    if id(top) in doubled:
        return f"the top-level key {doubled[id(top)]!r}"
    inner = top.get("entries")
    if isinstance(inner, dict) and id(inner) in doubled:
        return f"the entry key {doubled[id(inner)]!r}"
    for key, entry in (inner.items() if isinstance(inner, dict) else ()):
        if isinstance(entry, dict) and id(entry) in doubled:
            return f"the field {doubled[id(entry)]!r} of entry {key!r}"
        name = _doubled_within(entry, doubled)
        if name is not None:
            return f"the key {name!r} inside entry {key!r}"
    return f"the key {next(iter(doubled.values()))!r}"


def _unique_by_layout(raw: bytes, data: dict, entries: dict) -> bool:
    """True when ctx's own layout shows that no object of the file names a key twice:
    one member line per top-level key and per entry (``textlayout.unique_by_layout``),
    one six-space line per field of every entry, and no object but the file, its entries
    object and the entries themselves (a deeper one's keys are not counted: parse then).
    No string holds a raw newline, so ``{`` then a newline only opens an object."""
    from ctx.storage.textlayout import unique_by_layout  # (the layout: not on the index's read path)
    if not unique_by_layout(raw, len(data), len(entries)):
        return False
    fields = filled = 0
    for entry in entries.values():
        if type(entry) is not dict:
            return False
        fields += len(entry)
        filled += bool(entry)
    return raw.count(b"{\n") == 1 + bool(entries) + filled and raw.count(b'\n      "') == fields


def _doubled_within(value: Any, doubled: dict[int, str]) -> str | None:
    """The key written twice in an object nested anywhere in ``value``, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if id(item) in doubled:
                return doubled[id(item)]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def empty_store(name: str, path: str) -> StoreFile:
    data: dict[str, Any] = {"type": name, "version": FORMAT_VERSION, "last_updated": None, "entries": {}}
    return StoreFile(name, path, data, False)


def read_store(root: StrPath, name: str, checked: bool = False) -> StoreFile:
    """Read one store; a missing file is an empty store (§8.2)."""
    path = store_path(root, name)
    found = read_raw(path)
    if found is None:
        return empty_store(name, path)
    return parse_store(name, path, *found, checked=checked)


def read_known(root: StrPath, name: str,
               described: Callable[[Identity, bytes], tuple[int, tuple, tuple[int, int] | None] | None],
               known: Callable[[str], Entry | None]) -> StoreFile:
    """Read one store for a write without parsing its entries, when a full parse of
    these very bytes is on record: ``described(identity, raw)`` gives that parse's entry
    count and incomplete entries, and where the entries are in the bytes (the read index),
    or None; ``known(key)`` an entry as it found it. Otherwise (and for bytes not in
    ctx's layout) the file is parsed whole."""
    path = store_path(root, name)
    found = read_raw(path)
    if found is None:
        return empty_store(name, path)
    raw, identity = found
    facts = described(identity, raw)
    top = None
    if facts is not None:
        from ctx.storage.bytesplice import known_region, top_level
        if facts[2] is not None:
            known_region(raw, *facts[2])  # the entries' region, kept by the index: no search
        top = top_level(raw)
    if facts is None or top is None:
        return parse_store(name, path, raw, identity, checked=facts is not None)
    return StoreFile(name, path, top, True, raw, identity, tuple(facts[1]), known, facts[0])


def check_writable(store: StoreFile) -> None:
    """Refuse to write a store another format version or another store owns."""
    version = store.top.get("version")
    if version != FORMAT_VERSION:
        raise StoreError(f"{store.path}: format version {version!r}, not {FORMAT_VERSION!r}; "
                         "ctx reads it but will not write it (§8.2)")
    kind = store.top.get("type")
    if kind != store.name:
        raise StoreError(f"{store.path}: 'type' is {kind!r}, not {store.name!r}; "
                         "ctx will not write it")
    if os.path.islink(store.path):
        raise StoreError(f"{store.path}: is a symbolic link; ctx never writes through a link")
    if store.incomplete:
        raise StoreError(incomplete_message(store))


def incomplete_message(store: StoreFile) -> str:
    """Why a store with entries lacking required fields is read but never written."""
    key, missing = store.incomplete[0]
    more = f" (and {len(store.incomplete) - 1} more)" if len(store.incomplete) > 1 else ""
    return (f"{store.path}: entry {key!r}{more} lacks {missing}, which §3.3 requires; "
            "ctx reads it but will not write this file until it is fixed by hand")


def _spliced_right(content: bytes, store: StoreFile, edits: list) -> bool:
    """The spliced bytes parse to exactly the entries the write meant (one parse: cheap
    beside a full serialization, and a misread layout never reaches the disk)."""
    from ctx.jsoncodec import loads
    try:
        parsed = loads(content)
    except ValueError:
        return False
    entries = parsed.get("entries") if isinstance(parsed, dict) else None
    if not isinstance(entries, dict) or len(entries) != len(store.entries) or set(parsed) != set(store.data):
        return False
    return all(entries.get(key) == store.entries.get(key) for key, _, _ in edits)


def write_store(store: StoreFile, edits: list | None = None,
                before_replace: Callable[[Identity], None] | None = None) -> bytes:
    """Atomically replace a store file with ``store.data``; returns the bytes written.

    With ``edits`` (``(key, before, after)`` for every entry that changed, and
    nothing else changed but ``last_updated``), only those entries' text is
    rewritten (``textlayout.splice``); otherwise the whole file is serialized.
    """
    from ctx.storage.bytesplice import splice_known
    from ctx.storage.textlayout import serialize, splice
    check_writable(store)
    content = None
    if store.known is not None:  # not parsed whole: the edits are spliced into the bytes
        if edits:
            content = splice_known(store.raw, edits, store.top.get("last_updated"))
        if content is None:
            store.data  # noqa: B018 (parsed whole now, the changes applied: written whole below)
            edits = None
    if content is None and edits is not None and store.raw:
        content = splice(store.raw, edits, store.data.get("last_updated"))
        # (no edits: the bytes are ``store.raw``, serialized whole by the caller, with only
        # the top-level last_updated set again: nothing an entry's layout could misread)
        if content is not None and edits and not _spliced_right(content, store, edits):
            content = None  # a layout the splice misread: write the whole file instead
    if content is None:
        content = serialize(store.data)
    store.identity = atomic_write(store.path, content, before_replace=before_replace)
    store.raw = content
    store.exists = True
    return content


def ensure_private_dir(path: StrPath) -> None:
    """Create a directory with mode 0700 (§11); refuse a file or a link in its place."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        os.makedirs(path, mode=DIR_MODE, exist_ok=True)
        return
    if stat.S_ISLNK(st.st_mode):
        raise ContextRootError(f"{path}: is a symbolic link; ctx never writes through a link")
    if not stat.S_ISDIR(st.st_mode):
        raise ContextRootError(f"{path}: exists and is not a directory")
