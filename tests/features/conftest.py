"""Fixtures of the harness-wiring tests (ctx wire, with and without --mcp)."""

from __future__ import annotations

import pytest


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"  # HOME, set by conftest


@pytest.fixture
def project(tmp_path, monkeypatch):
    where = tmp_path / "project"
    where.mkdir()
    monkeypatch.chdir(where)
    return where
