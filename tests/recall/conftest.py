"""Fixtures of the recall tests: the evaluation set as a context root, and the real model."""

from __future__ import annotations

import subprocess
from pathlib import Path

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


@pytest.fixture(scope="session")
def embedder():
    """The real model; the test is skipped (with the reason) without the semantic extra."""
    from ctx.meaning.model import shared
    model = shared()
    if model is None:
        pytest.skip("the semantic extra is not installed (pip install 'ctx-memory[semantic]')")
    return model
