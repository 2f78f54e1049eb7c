"""Fixtures of the recall tests: the evaluation set as a context root, and the real model."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from recall.evalset import entries_by_store
from support.stores import write_store_file


@pytest.fixture
def evalset_root(root: Path) -> Path:
    """The evaluation set written as store files in a git repository (so the index is kept)."""
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for store, entries in entries_by_store().items():
        write_store_file(root, store, entries)
    return root


class Remembering:
    """The real model, remembering each text's vector for the test session: the recall tests
    embed the same sets again and again, and the model's cost is paid once per text."""

    def __init__(self, model) -> None:
        self.model = model
        self.name, self.dim, self.related, self.near = model.name, model.dim, model.related, model.near
        self.seen: dict[str, Any] = {}

    def __getattr__(self, name: str):
        return getattr(self.model, name)

    def embed(self, texts: list[str]):
        import numpy as np
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if new:
            self.seen.update(zip(new, self.model.embed(new), strict=True))
        return np.stack([self.seen[t] for t in texts]) if texts else self.model.embed([])


@pytest.fixture(scope="session")
def embedder():
    """The real model, loaded once a session (and kept as the process's: ``ctx search --semantic``
    run in the test's process uses it); skipped (with the reason) without the semantic extra."""
    from ctx.meaning import model as meaning_model
    model = meaning_model.shared()
    if model is None:
        pytest.skip("the semantic extra is not installed (pip install 'ctx-memory[semantic]')")
    remembering = Remembering(model)
    meaning_model._loaded[:] = [remembering]
    return remembering
