"""The phase timer (ctx/phases.py): off, it records nothing; on, a write's phases are
charged and appended as one JSON line."""

from __future__ import annotations

import atexit
import importlib
import json

from ctx import phases
from support.contexts import Context


def test_off_it_records_nothing(monkeypatch):
    monkeypatch.delenv("CTX_PHASES", raising=False)
    importlib.reload(phases)
    phases.lap("parse")
    assert phases._laps is None


def test_on_a_write_charges_its_phases_and_appends_one_line(monkeypatch, tmp_path, root):
    out = tmp_path / "phases.jsonl"
    monkeypatch.setenv("CTX_PHASES", str(out))
    try:
        importlib.reload(phases)
        Context(root).set("k", "v")
        atexit.unregister(phases._flush)
        phases._flush(str(out))
    finally:
        monkeypatch.delenv("CTX_PHASES")
        importlib.reload(phases)
    line = json.loads(out.read_text().splitlines()[-1])
    assert {"start", "check", "prepare", "parse", "write", "index"} <= set(line)
    assert all(ms >= 0 for ms in line.values())
