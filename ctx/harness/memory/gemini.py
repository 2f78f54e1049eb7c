"""Gemini CLI's memories, read for ``ctx import --from gemini``.

Layout: what ``save_memory`` adds is a ``- fact`` line in the ``## Gemini Added
Memories`` section (to the next ``## ``) of ``~/.gemini/GEMINI.md`` (every project) and
of the project's own ``GEMINI.md`` (at its git root); newer versions keep a project's
facts in ``~/.gemini/tmp/<slug>/memory/MEMORY.md`` (and other ``*.md`` beside it: every
``- `` line is a fact), the slug being the project's entry in ``~/.gemini/projects.json``
(``{"projects": {"/abs/path": "slug"}}``). Each fact is one memory, ``source: agent``:
the model saves it, and the format does not say whether the user asked. A GEMINI.md
renamed by the ``context.fileName`` setting is not looked for: pass it as PATH.
"""

from __future__ import annotations

import json
from pathlib import Path

from ctx.features.harness_import import Memory, Source
from ctx.harness.base import home
from ctx.harness.memory import files as mf

HARNESS = "gemini"
SECTION = "Gemini Added Memories"
CONTEXT_FILE = "GEMINI.md"


def gemini_dir() -> Path:
    return home() / ".gemini"


def project_memory_dir(project: Path, source: Source) -> Path | None:
    """``~/.gemini/tmp/<slug>/memory`` of ``project``, when projects.json names it."""
    registry = gemini_dir() / "projects.json"
    text = mf.read(registry, gemini_dir(), source) if registry.is_file() else None
    try:
        data = json.loads(text) if text else {}
    except ValueError:
        source.notes.append(f"{registry}: not JSON; project memories not looked for")
        return None
    projects = data.get("projects") if isinstance(data, dict) else None
    found = projects.get(str(project)) if isinstance(projects, dict) else None
    if not isinstance(found, str) or not found or "/" in found or found in (".", ".."):
        return None
    return gemini_dir() / "tmp" / found / "memory"


def _added(text: str) -> str | None:
    """The ``## Gemini Added Memories`` section's text, or None."""
    for title, body in mf.sections(text):
        if title == SECTION:
            return body
    return None


def _facts(file: Path, top: Path, keys: mf.Keys, source: Source, whole: bool) -> None:
    text = mf.read(file, top, source)
    if text is None:
        return
    section = _added(text)
    body = text if section is None and whole else section or ""
    for fact in mf.bullets(body):
        source.memories.append(Memory(keys.key(fact, "fact"), mf.cut(fact), str(file), SECTION, "agent",
                                      ("gemini-memory",)))


def read(path: Path | None = None) -> Source:
    source = Source(HARNESS)
    project = mf.project_root()
    here = mf.Keys(f"{HARNESS}:{mf.project_slug(project)}:")
    if path is not None:
        if not path.exists():
            raise mf.missing(path, "Gemini CLI memory file or folder")
        source.scopes.add(here.prefix)
        if path.is_dir():
            for file in mf.files(path, "*.md", source):
                _facts(file, path, here, source, whole=True)
        else:
            _facts(path, path.parent, here, source, whole=False)
        if not source.memories:
            raise mf.empty(path, "Gemini CLI memories")
        return source
    users = mf.Keys(f"{HARNESS}:user:")
    places = [(gemini_dir() / CONTEXT_FILE, users, False), (project / CONTEXT_FILE, here, False)]
    memory_dir = project_memory_dir(project, source)
    if memory_dir is not None and memory_dir.is_dir():
        places += [(file, here, True) for file in mf.files(memory_dir, "*.md", source)]
    present = [(file, keys, whole) for file, keys, whole in places if file.is_file()]
    if not present:
        raise mf.missing(gemini_dir() / CONTEXT_FILE, f"{CONTEXT_FILE} (nor {project / CONTEXT_FILE})")
    source.scopes |= {users.prefix, here.prefix}
    for file, keys, whole in present:
        _facts(file, file.parent, keys, source, whole)
    if not source.memories:
        raise mf.empty(present[0][0], f"'## {SECTION}' facts")
    return source
