"""What every reader of a harness's memory shares (``claude``, ``codex``,
``gemini``, ``cursor``): bounded reads of untrusted files, the project a
session runs in, key parts, and the frontmatter those formats use.

A harness's files are input like any other: a file over ``FILE_BOUND`` bytes is skipped
and named, a folder yields at most ``FILE_COUNT`` files, a memory's text is cut at
``TEXT_BOUND`` characters, and a symbolic link is followed only when it stays inside the
folder being read (tests/features/test_memory_formats.py::test_links_out_of_the_source_are_not_followed).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ctx.errors import NotFound
from ctx.features.harness_import import Source

FILE_BOUND = 512 * 1024   # bytes of one memory file; a harness's own files are a few KB
FILE_COUNT = 1000         # files read from one folder
TEXT_BOUND = 32 * 1024    # characters of one memory's text
SLUG_BOUND = 60           # characters of a key part


def project_root(start: Path | None = None) -> Path:
    """The git root of the current folder (a ``.git`` folder or file), else the folder: where
    Claude Code and Gemini CLI key a project's memory."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def slug(text: str, bound: int = SLUG_BOUND) -> str:
    """A key part: lower-case ASCII letters and digits, other runs one ``_``, cut at a word."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    out = ""
    for word in words:
        if len(out) + len(word) + 1 > bound:
            break
        out = f"{out}_{word}" if out else word
    return out or (words[0][:bound] if words else "")


def project_slug(root: Path) -> str:
    return slug(root.name, 40) or "root"


class Keys:
    """Unique keys under one prefix: a second memory of the same slug gets ``_2``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.taken: set[str] = set()

    def key(self, part: str, fallback: str) -> str:
        base = slug(part) or fallback
        name, n = base, 1
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return self.prefix + name


def inside(path: Path, top: Path) -> bool:
    """Whether ``path``, links resolved, is ``top`` or under it."""
    try:
        return path.resolve().is_relative_to(top.resolve())
    except OSError:
        return False


def read(path: Path, top: Path, source: Source) -> str | None:
    """The text of ``path`` (bad UTF-8 replaced), or None with a note in ``source`` when it is
    a link out of ``top``, not a regular file, or over ``FILE_BOUND``."""
    shown = str(path)
    if not inside(path, top):
        source.notes.append(f"{shown}: a link out of {top}; not followed")
        return None
    try:
        if not path.is_file():
            return None
        size = path.stat().st_size
        if size > FILE_BOUND:
            source.notes.append(f"{shown}: {size} bytes, over {FILE_BOUND}; skipped")
            return None
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError as exc:
        source.notes.append(f"{shown}: unreadable ({exc.strerror or exc}); skipped")
        return None
    source.files.append(shown)
    return text


def files(top: Path, pattern: str, source: Source) -> list[Path]:
    """The files under ``top`` matching ``pattern`` (a glob), sorted, at most ``FILE_COUNT``;
    folders reached through a link are not walked."""
    found: list[Path] = []
    for folder, dirs, names in os.walk(top):  # (os.walk does not follow links to folders)
        dirs.sort()
        for name in sorted(names):
            path = Path(folder) / name
            if path.match(pattern):
                found.append(path)
        if len(found) > FILE_COUNT:
            break  # (a huge tree is not walked to its end)
    if len(found) > FILE_COUNT:
        source.notes.append(f"{top}: over {FILE_COUNT} files, only the first {FILE_COUNT} read")
        found = found[:FILE_COUNT]
    return found


def cut(text: str) -> str:
    text = text.strip()
    return text if len(text) <= TEXT_BOUND else text[:TEXT_BOUND] + "\n[... cut by ctx import]"


def frontmatter(text: str) -> tuple[dict[str, str], str]:
    """A leading ``---`` block as flat ``name: value`` lines, one level of nesting folded in
    as ``parent.name`` (Claude's ``metadata:``), and the body after it. Values are taken as
    written, quotes removed: not YAML, since Cursor's ``globs: *.ts,*.tsx`` is not valid YAML."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    fields: dict[str, str] = {}
    parent = ""
    for number, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            return fields, "\n".join(lines[number + 1:])
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, colon, value = line.strip().partition(":")
        if not colon:
            continue
        nested = line[:1] in (" ", "\t") and parent
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if nested:
            fields[f"{parent}.{name.strip()}"] = value
        else:
            parent = name.strip() if not value else ""
            fields[name.strip()] = value
    return {}, text  # no closing line: not frontmatter


def missing(path: Path, what: str) -> NotFound:
    return NotFound(f"{path}: no {what} here (nothing imported)")


def empty(path: Path, what: str) -> NotFound:
    return NotFound(f"{path}: holds no {what} (nothing imported)")


def bullets(section: str) -> list[str]:
    """The top-level ``- `` items of a Markdown section, each with its continuation lines."""
    items: list[list[str]] = []
    for line in section.split("\n"):
        if line.startswith(("- ", "* ")):
            items.append([line[2:].strip()])
        elif line.strip() and items and items[-1]:
            if line[:1] in (" ", "\t"):
                items[-1].append(line.strip())  # a continuation line
            else:
                items.append([])  # prose after an item ends it
    return [" ".join(item).strip() for item in items if item and " ".join(item).strip()]


def sections(text: str, level: str = "## ") -> list[tuple[str, str]]:
    """``(title, body)`` of each heading of ``level`` (``"## "``), in order; text before the
    first heading has the title ``""``."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in text.split("\n"):
        if line.startswith(level):
            out.append((line[len(level):].strip(), []))
        else:
            out[-1][1].append(line)
    return [(title, "\n".join(body)) for title, body in out]
