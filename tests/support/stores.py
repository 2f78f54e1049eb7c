"""Store files on disk, without ctx: set-up with chosen timestamps, and checks of
what ctx wrote."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any


def store_path(root: Path, store: str = "shared") -> Path:
    return root / "memory" / f"{store}.json"


def read_store_file(root: Path, store: str = "shared") -> dict[str, Any]:
    """The whole top-level object of a store file, or {} when it is missing."""
    path = store_path(root, store)
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def read_entries(root: Path, store: str = "shared") -> dict[str, Any]:
    """A store file's entries straight from disk ({} when the file is missing)."""
    return read_store_file(root, store).get("entries", {})


def make_entry(value: Any, source: str = "agent", tags: tuple | list = (),
               when: str = "2026-01-01T00:00:00Z", **extra: Any) -> dict[str, Any]:
    entry = {"value": value, "source": source, "basis": "inferred", "scope": "global",
             "tags": list(tags), "created": when, "timestamp": when}
    entry.update(extra)
    return entry


def write_store_file(root: Path, store: str, new_entries: dict[str, Any],
                     **top: Any) -> Path:
    """Test set-up only: merge entries straight into a store file (no ctx, no lock)."""
    path = store_path(root, store)
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"type": store, "version": "1", "last_updated": "2026-01-01T00:00:00Z", "entries": {}}
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
    data.update(top)
    data["entries"].update(new_entries)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def snapshot(directory: Path, with_cache: bool = False) -> dict[str, str]:
    """Every directory and file under ``directory`` with a hash of its bytes.

    Reads may keep a rebuildable index in ``.git/ctx/`` (issue: "a cache they
    keep lives in an ignored place"); it is left out unless ``with_cache``.
    ``start`` writes nothing at all: check it with ``with_cache=True``.
    """
    out: dict[str, str] = {}
    if not directory.exists():
        return out
    cache = os.path.join(str(directory), ".git", "ctx")
    for d, dirs, files in os.walk(directory):
        if not with_cache and (d == cache or d.startswith(cache + os.sep)):
            dirs[:] = []
            continue
        for name in dirs:
            out[os.path.join(d, name)] = "directory"
        for name in files:
            path = os.path.join(d, name)
            with open(path, "rb") as handle:
                out[path] = hashlib.sha256(handle.read()).hexdigest()
    return out


