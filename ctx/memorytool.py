"""ctx behind Anthropic's memory tool (``memory_20250818``): ``CtxMemoryTool``.

The anthropic SDK runs the tool (``client.beta.messages.tool_runner``) and calls one
method per command the model sends: ``view``, ``create``, ``str_replace``, ``insert``,
``delete``, ``rename``. Here each memory file is one ctx entry, and every change is
one ctx commit authored by the agent (``author=``, else ``CTX_AUTHOR``), so the
operator gets history, diff, revert and sync of what the model remembered.

The mapping (docs/memorytool.md): the file ``/memories/notes/todo.md`` is the key
``memories/notes/todo.md`` of one store (``shared`` unless told); its value is the
file's text, whole. Directories are not kept: a directory is there while a key is
under it, as git keeps none of its own (so deleting a directory's last file removes
the directory too). A path no key could hold (whitespace, a control character, a key
past ``KEY_BOUND``) is a ``ToolError``, and so is text that looks like a credential
(the scanner ``ctx set`` uses).

The results and error texts are those of the SDK's reference,
``BetaLocalFilesystemMemoryTool``, command for command (held by
tests/memorytool/test_memorytool_differential.py); where the reference lets an
``OSError`` out (a file where a directory should be), this gives a ``ToolError``.

Where it sits: a door, like the command line. It opens its ``Context`` with the front
door's own factory (``ctx.cli.run.open_context``: git records the writes), and
writes through ``Context.transact``, the one write path. Nothing else imports it
(tests/test_layers.py), so the SDK never loads on ctx's own paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from anthropic.lib.tools import BetaAbstractMemoryTool, ToolError

from ctx import model
from ctx.display import visible
from ctx.errors import CredentialRefused, CtxError
from ctx.model import DEFAULT_STORE, KEY_BOUND, Entry

if TYPE_CHECKING:
    from collections.abc import Callable

    from anthropic.types.beta import (
        BetaCacheControlEphemeralParam,
        BetaMemoryTool20250818CreateCommand,
        BetaMemoryTool20250818DeleteCommand,
        BetaMemoryTool20250818InsertCommand,
        BetaMemoryTool20250818RenameCommand,
        BetaMemoryTool20250818StrReplaceCommand,
        BetaMemoryTool20250818ViewCommand,
    )

    from ctx.changes import Edit
    from ctx.context import Context
    from ctx.storage.files import StoreFile, StrPath

ROOT = "/memories"
KEY_PREFIX = "memories/"  # a file's key is its path without the leading "/"
TAG = "memory_tool"  # what every entry this tool makes is tagged, to find them by
OPERATION = "memory"  # the commits' Ctx-Operation; the command is in Ctx-Memory-Command
# the reference's view: line numbers this wide, files at most this many lines
MAX_LINES = 999999
NUMBER_WIDTH = len(str(MAX_LINES))
_ABOVE = "\0above"  # the folder above /memories, in a path being resolved
# the most a memory file holds, in UTF-8: each write rewrites its store file whole, and the
# model reads a memory file whole (tests/memorytool/test_memorytool_ctx.py)
FILE_BOUND = 1 << 20
# what each command must carry: the SDK builds the command without checking its types
FIELDS: dict[str, dict[str, type]] = {
    "view": {"path": str},
    "create": {"path": str, "file_text": str},
    "str_replace": {"path": str, "old_str": str, "new_str": str},
    "insert": {"path": str, "insert_line": int, "insert_text": str},
    "delete": {"path": str},
    "rename": {"old_path": str, "new_path": str},
}


def check_command(command: Any) -> None:
    """A ToolError, one line, for a command the model sent wrong: unknown, or a field
    missing or of the wrong type (the reference would fail on it with whatever Python raises)."""
    name = getattr(command, "command", None)
    fields = FIELDS.get(name) if isinstance(name, str) else None
    if fields is None:
        raise ToolError(f"Unknown command: {visible(str(name))[:60]}; use one of {', '.join(FIELDS)}")
    for field, kind in fields.items():
        value = getattr(command, field, None)
        if not isinstance(value, kind):
            raise ToolError(f"The {name} command needs `{field}`, {'a number' if kind is int else 'a string'}")
    shown = getattr(command, "view_range", None)
    if shown is not None and (not isinstance(shown, list) or
                              not all(isinstance(n, int) for n in shown)):
        raise ToolError("`view_range` must be two line numbers, [first, last] (last -1: to the end)")


def resolve(path: str) -> str:
    """The file or directory ``path`` names under /memories, as a path relative to it
    ("" for /memories itself). As the reference resolves it: any text after "/memories"
    (it checks only that prefix), "." and ".." and repeated "/" as the filesystem takes
    them, and a ToolError when the result is outside /memories."""
    if not path.startswith(ROOT):
        raise ToolError(f"Path must start with /memories, got: {visible(path)}")
    parts = [_ABOVE, "memories"]
    for part in path[len(ROOT):].split("/"):
        if part == "..":
            parts.pop()
            if not parts:  # above the folder above /memories: never back inside it here
                break
        elif part not in ("", "."):
            parts.append(part)
    if parts[:2] != [_ABOVE, "memories"]:
        raise ToolError(f"Path {visible(path)} would escape /memories directory")
    return "/".join(parts[2:])


def key_of(relative: str, path: str) -> str:
    """The key of the file at ``relative`` (under /memories); a ToolError when no key can be."""
    key = KEY_PREFIX + relative
    try:
        model.validate_key(key)
    except CtxError:
        raise ToolError(f"The path {visible(path)} cannot be kept in ctx: a memory path holds no whitespace or "
                        f"control character and is at most {KEY_BOUND - len(KEY_PREFIX)} characters "
                        "after /memories/") from None
    return key


def path_of(key: str) -> str:
    return "/" + key


class Moved:
    """In a write's plan: the entry of the file at ``source``, moved here whole."""

    __slots__ = ("source",)

    def __init__(self, source: str) -> None:
        self.source = source


class Tree:
    """The files under /memories, as one store's keys show them: ``files`` maps each
    relative path to its text; a directory is any prefix of a file's path."""

    def __init__(self, entries: dict[str, Entry]) -> None:
        self.files: dict[str, str] = {}
        for key, entry in entries.items():
            if key.startswith(KEY_PREFIX) and len(key) > len(KEY_PREFIX):
                value = entry.get("value") if isinstance(entry, dict) else None
                self.files[key[len(KEY_PREFIX):]] = value if isinstance(value, str) else model.value_text(value)

    def is_file(self, relative: str) -> bool:
        return bool(relative) and relative in self.files

    def is_dir(self, relative: str) -> bool:
        if not relative:
            return True  # /memories is always there, as the reference makes it at the start
        prefix = relative + "/"
        return any(name.startswith(prefix) for name in self.files)

    def exists(self, relative: str) -> bool:
        return self.is_file(relative) or self.is_dir(relative)

    def under(self, relative: str) -> list[str]:
        """The files inside the directory ``relative``, every depth."""
        prefix = relative + "/" if relative else ""
        return sorted(name for name in self.files if name.startswith(prefix) and name != relative)

    def file_in_the_way(self, relative: str) -> str | None:
        """The first folder of ``relative``'s that is a file (None: none is)."""
        parts = relative.split("/")
        for end in range(1, len(parts)):
            folder = "/".join(parts[:end])
            if folder in self.files:
                return folder
        return None


def size_text(size: int) -> str:
    """A size as the reference shows it: 0B, 512B, 1.5K, 4K, 2.1M."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    power = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024 ** power)
    return f"{int(scaled)}{units[power]}" if scaled == int(scaled) else f"{scaled:.1f}{units[power]}"


def numbered(lines: list[str], first: int) -> str:
    return "\n".join(f"{str(number).rjust(NUMBER_WIDTH)}\t{visible(line, lines=True)}"
                     for number, line in enumerate(lines, first))


def split_lines(text: str) -> list[str]:
    """Lines split on LF only, without the empty tail a final line break leaves (``insert``'s)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class CtxMemoryTool(BetaAbstractMemoryTool):
    """Anthropic's memory tool kept in a ctx context: one entry per memory file, one
    commit per change. ``root``: the context root (default ``CTX_HOME``); ``author``:
    who writes (default ``CTX_AUTHOR``; one is needed: what the model remembers is an
    agent's, never the operator's typing); ``store``: where the entries are kept;
    ``context``: a ``Context`` to use instead (it brings its own root, author and recorder)."""

    def __init__(self, root: StrPath | None = None, *, author: str | None = None, store: str = DEFAULT_STORE,
                 context: Context | None = None,
                 cache_control: BetaCacheControlEphemeralParam | None = None) -> None:
        super().__init__(cache_control=cache_control)
        if context is None:
            from ctx.cli.run import open_context  # the front door's wiring: git records each write
            context = open_context(root=root, author=author)
        if not context.author:
            raise ValueError("CtxMemoryTool needs an author, the agent's name: pass author= or set CTX_AUTHOR")
        self.context = context
        self.store = model.validate_store(store)

    def execute(self, command: Any) -> Any:
        """The SDK's dispatch, once the command's fields are checked (``check_command``)."""
        check_command(command)
        return super().execute(command)

    # --- reading -------------------------------------------------------------------------

    def tree(self) -> Tree:
        """The files as the store holds them now (a read: no lock, nothing written)."""
        try:
            return Tree(self.context.read(self.store).entries)
        except CtxError as error:  # a store file that does not parse, a root that is a file
            raise ToolError(f"ctx could not read the memory: {visible(str(error))}") from error

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        path = command.path
        relative = resolve(path)
        tree = self.tree()
        if tree.is_file(relative):
            return self._view_file(tree.files[relative], command)
        if not tree.is_dir(relative):
            raise ToolError(f"The path {visible(path)} does not exist. Please provide a valid path.")
        shown = visible(path)
        rows = [f"{size_text(self._size(tree, relative))}\t{shown}"]
        base = relative + "/" if relative else ""
        for name in self._listed(tree, relative):
            inside = name[len(base):]
            size = len(tree.files[name].encode("utf-8")) if tree.is_file(name) else self._size(tree, name)
            rows.append(f"{size_text(size)}\t{shown}/{visible(inside)}{'' if tree.is_file(name) else '/'}")
        return (f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:\n"
                + "\n".join(rows))

    @staticmethod
    def _listed(tree: Tree, relative: str) -> list[str]:
        """What the reference lists under a directory: its files and folders two levels
        deep, none whose name starts with ".", each level sorted by name, a folder
        before what it holds."""
        base = relative + "/" if relative else ""
        depth: dict[str, list[str]] = {}
        for name in tree.under(relative):
            parts = name[len(base):].split("/")
            for level in range(1, min(len(parts), 2) + 1):
                if parts[level - 1].startswith("."):
                    break
                item = base + "/".join(parts[:level])
                parent = base + "/".join(parts[:level - 1]) if level > 1 else relative
                children = depth.setdefault(parent, [])
                if item not in children:
                    children.append(item)

        def walk(folder: str) -> list[str]:
            out: list[str] = []
            for item in sorted(depth.get(folder, []), key=lambda i: i.rpartition("/")[2]):
                out.append(item)
                if item != folder and not tree.is_file(item):
                    out.extend(walk(item))
            return out
        return walk(relative)

    @staticmethod
    def _size(tree: Tree, relative: str) -> int:
        """A directory's size: the bytes of the files under it (git keeps no size of a folder)."""
        return sum(len(tree.files[name].encode("utf-8")) for name in tree.under(relative))

    @staticmethod
    def _view_file(text: str, command: BetaMemoryTool20250818ViewCommand) -> str:
        lines = text.split("\n")
        if len(lines) > MAX_LINES:
            raise ToolError(f"File {visible(command.path)} exceeds maximum line limit of 999,999 lines.")
        first = 1
        if command.view_range and len(command.view_range) == 2:
            start = max(1, command.view_range[0]) - 1
            end = len(lines) if command.view_range[1] == -1 else command.view_range[1]
            lines = lines[start:end]
            first = start + 1
        return f"Here's the content of {visible(command.path)} with line numbers:\n" + numbered(lines, first)

    # --- writing: each command one transaction, its checks made under the lock ----------------

    def _write(self, command: str, paths: list[str], change: Callable[[Tree], dict[str, Any]]) -> None:
        """Run ``change(tree)`` under the context lock, on the files as they are then, and
        write what it returns as one commit: {relative path: its new text, None to remove it,
        or ``Moved`` to put an existing file's entry there}."""
        store = self.store
        context = self.context
        author = context.author

        def mutate(files: dict[str, StoreFile]) -> list[Edit]:
            from ctx.changes import Edit
            stored = files[store]
            plan = change(Tree(stored.entries))
            before = {name: stored.entry(KEY_PREFIX + name) for name in plan}
            now = model.now()
            edits = []
            for name, what in plan.items():
                key = KEY_PREFIX + name
                entry: Entry | None
                if what is None:
                    entry = None
                elif isinstance(what, Moved):  # the same memory, renamed: its fields go with it
                    entry = dict(before[what.source] or {})
                    entry["created"] = entry["timestamp"] = now  # (a new key: §3.3)
                    if author:
                        entry["author"] = author
                    self._refuse_credentials(key, "", path_of(key))
                else:
                    self._refuse_credentials(key, what, path_of(key))
                    entry = model.apply_set(before[name], what, author=author, when=now, source="agent",
                                            tags=[TAG] if before[name] is None else None)
                stored.put(key, entry)
                edits.append(Edit(store, key, before[name], entry))
            return edits
        try:
            context.transact(OPERATION, [store], mutate, subject=f"memory {command} {' '.join(paths)}",
                             trailers=[("Ctx-Memory-Command", command)])
        except CtxError as error:  # the lock, a store file ctx must not write, git: one line for the model
            raise ToolError(f"ctx could not keep the change: {visible(str(error))}") from error

    def _refuse_credentials(self, key: str, text: str, path: str) -> None:
        """Refuse a file of more than FILE_BOUND bytes, or whose path or text looks like a
        credential (the scanner of ``ctx set``, ``Context.refuse_credentials``)."""
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > FILE_BOUND:
            raise ToolError(f"The file {visible(path)} was not written: {size:,} bytes, more than the "
                            f"{FILE_BOUND >> 20} MiB ctx keeps in one memory file")
        try:
            self.context.refuse_credentials({"key": key, "value": text}, force=False)
        except CredentialRefused as refused:
            kinds = ", ".join(sorted({f.description for f in refused.findings})) or "a secret"
            raise ToolError(f"The file {visible(path)} was not written: its text looks like it holds a credential "
                            f"({visible(kinds)}). Credentials are never kept in memory.") from None

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        path = command.path
        relative = resolve(path)
        text = command.file_text
        if relative:
            key = key_of(relative, path)
            self._refuse_credentials(key, text, path)  # before the lock; the text cannot change

        def change(tree: Tree) -> dict[str, Any]:
            if tree.exists(relative):
                raise ToolError(f"File {visible(path)} already exists")
            self._no_file_in_the_way(tree, relative, path)
            return {relative: text}
        self._write("create", [path], change)
        return f"File created successfully at: {visible(path)}"

    @staticmethod
    def _no_file_in_the_way(tree: Tree, relative: str, path: str) -> None:
        blocking = tree.file_in_the_way(relative)
        if blocking is not None:
            raise ToolError(f"The path {visible(path)} cannot be made: {path_of(KEY_PREFIX + blocking)} "
                            "is a file, not a directory")

    @staticmethod
    def _file_text(tree: Tree, relative: str, path: str) -> str:
        if not tree.exists(relative):
            raise ToolError(f"The path {visible(path)} does not exist. Please provide a valid path.")
        if not tree.is_file(relative):
            raise ToolError(f"The path {visible(path)} is not a file.")
        return tree.files[relative]

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        path, old, new = command.path, command.old_str, command.new_str
        relative = resolve(path)
        result: list[str] = []

        def change(tree: Tree) -> dict[str, Any]:
            text = self._file_text(tree, relative, path)
            count = text.count(old)
            if count == 0:
                raise ToolError(f"No replacement was performed, old_str `{visible(old, lines=True)}` did not "
                                f"appear verbatim in {visible(path)}.")
            if count > 1:
                lines, start = [], 0
                while (at := text.find(old, start)) != -1:
                    lines.append(text[:at].count("\n") + 1)
                    start = at + 1
                raise ToolError(f"No replacement was performed. Multiple occurrences of old_str "
                                f"`{visible(old, lines=True)}` in lines: {', '.join(map(str, lines))}. "
                                "Please ensure it is unique")
            changed_line = text[:text.find(old)].count("\n")
            after = text.replace(old, new)
            new_lines = after.split("\n")
            first = max(0, changed_line - 2)
            last = min(len(new_lines), changed_line + 3)
            result.append(numbered(new_lines[first:last], first + 1))
            return {relative: after}
        self._write("str_replace", [path], change)
        return ("The memory file has been edited. Here is the snippet showing the change (with line numbers):\n"
                + result[0])

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        path, line, inserted = command.path, command.insert_line, command.insert_text
        relative = resolve(path)

        def change(tree: Tree) -> dict[str, Any]:
            lines = split_lines(self._file_text(tree, relative, path))
            if line < 0 or line > len(lines):
                raise ToolError(f"Invalid `insert_line` parameter: {line}. "
                                f"It should be within the range [0, {len(lines)}].")
            lines.insert(line, inserted.rstrip("\n"))
            after = "\n".join(lines)
            return {relative: after if after.endswith("\n") else after + "\n"}
        self._write("insert", [path], change)
        return f"The file {visible(path)} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        path = command.path
        relative = resolve(path)
        if not relative:
            raise ToolError("Cannot delete the /memories directory itself")

        def change(tree: Tree) -> dict[str, Any]:
            if tree.is_file(relative):
                return {relative: None}
            if tree.is_dir(relative):
                return dict.fromkeys(tree.under(relative))
            raise ToolError(f"The path {visible(path)} does not exist")
        self._write("delete", [path], change)
        return f"Successfully deleted {visible(path)}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        old_path, new_path = command.old_path, command.new_path
        old, new = resolve(old_path), resolve(new_path)
        if not old:
            raise ToolError("Cannot rename the /memories directory itself")

        def change(tree: Tree) -> dict[str, Any]:
            if tree.exists(new):
                raise ToolError(f"The destination {visible(new_path)} already exists")
            if not tree.exists(old):
                raise ToolError(f"The path {visible(old_path)} does not exist")
            if new.startswith(old + "/"):
                raise ToolError(f"Cannot move {visible(old_path)} into itself")
            self._no_file_in_the_way(tree, new, new_path)
            plan: dict[str, Any] = {}
            for name in [old] if tree.is_file(old) else tree.under(old):
                target = new + name[len(old):]
                key_of(target, new_path)
                plan[name] = None
                plan[target] = Moved(name)
            return plan
        self._write("rename", [old_path, new_path], change)
        return f"Successfully renamed {visible(old_path)} to {visible(new_path)}"

    def clear_all_memory(self) -> str:
        """Every memory file removed, in one commit (the reference's ``clear_all_memory``)."""
        self._write("clear", [ROOT], lambda tree: dict.fromkeys(tree.under("")))
        return "All memory cleared"
