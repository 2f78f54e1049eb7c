"""Claude Code's auto memory, read for ``ctx import --from claude-code``.

Layout (Claude Code 2.1): ``<CLAUDE_CONFIG_DIR or ~/.claude>/projects/<key>/memory/``, the
key being the project's git root (else its folder) with every character outside
``[A-Za-z0-9]`` made ``-``; a key over 200 characters is cut there and given ``-`` and the
base-36 absolute value of a 32-bit string hash of the whole path (``project_key``). An
``autoMemoryDirectory`` setting moves the folder: pass it as PATH.

In the folder, ``MEMORY.md`` is an index (``- [Title](file.md) — hook`` lines, not
imported; any other bullet there is) and each other ``*.md`` is a topic file: frontmatter
``name``, ``description`` and ``metadata:`` holding ``node_type: memory``, ``type``,
``originSessionId``, ``modified`` (older files: a top-level ``type:``), then the body. A
``user`` or ``feedback`` memory is what the user said of themselves or of how to work:
the operator's knowledge (``source: operator``), typed in by Claude Code.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ctx.features.harness_import import Memory, Source
from ctx.harness.base import home
from ctx.harness.memory import files as mf

HARNESS = "claude-code"
KEY_BOUND = 200  # Claude Code's cut of a project key
OPERATOR_TYPES = ("user", "feedback")
INDEX = "MEMORY.md"
_INDEX_LINE = re.compile(r"\[[^\]]*\]\([^)]*\.md\)")


def config_dir() -> Path:
    given = (os.environ.get("CLAUDE_CONFIG_DIR") or "").strip()
    return Path(given) if given else home() / ".claude"


def _hash36(text: str) -> str:
    """Claude Code's suffix: a Java-style 32-bit hash over the UTF-16 code units, its absolute
    value in base 36."""
    h = 0
    data = text.encode("utf-16-le")
    for i in range(0, len(data), 2):
        h = (h * 31 + int.from_bytes(data[i:i + 2], "little")) & 0xFFFFFFFF
    value = abs(h - (1 << 32) if h >= 1 << 31 else h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def project_key(project: Path) -> str:
    """Claude Code's folder name for ``project``. Its expression replaces UTF-16 code units,
    so a character beyond the BMP (a surrogate pair) is two ``-``."""
    text = str(project)
    key = "".join(ch if ch.isascii() and ch.isalnum() else "--" if ord(ch) > 0xFFFF else "-" for ch in text)
    return key if len(key) <= KEY_BOUND else f"{key[:KEY_BOUND]}-{_hash36(text)}"


def default_path() -> Path:
    return config_dir() / "projects" / project_key(mf.project_root()) / "memory"


def read(path: Path | None = None) -> Source:
    folder = path or default_path()
    source = Source(HARNESS)
    if not folder.is_dir():
        raise mf.missing(folder, "Claude Code auto memory folder")
    prefix = f"{HARNESS}:{mf.project_slug(mf.project_root())}:"
    source.scopes.add(prefix)
    keys = mf.Keys(prefix)
    for file in mf.files(folder, "*.md", source):
        text = mf.read(file, folder, source)
        if text is None:
            continue
        shown = str(file)
        if file.name == INDEX and file.parent == folder:
            for item in mf.bullets(text):
                if not _INDEX_LINE.search(item):
                    source.memories.append(Memory(keys.key(item, "note"), mf.cut(item), shown, "MEMORY.md note"))
            continue
        fields, body = mf.frontmatter(text)
        kind = fields.get("metadata.type") or fields.get("type") or ""
        head = " — ".join(v for v in (fields.get("name"), fields.get("description")) if v)
        value = mf.cut(f"{head}\n\n{body.strip()}" if head else body)
        if not value:
            continue
        stem = file.relative_to(folder).with_suffix("").as_posix()
        source.memories.append(Memory(
            keys.key(stem, "memory"), value, shown, f"{kind or 'untyped'} memory",
            source="operator" if kind in OPERATOR_TYPES else "agent",
            tags=(f"memory-{mf.slug(kind)}",) if mf.slug(kind) else ()))
    if not source.memories:
        raise mf.empty(folder, "Claude Code memories")
    return source
