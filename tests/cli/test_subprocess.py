"""ctx as a real process: the installed console script and ``python -m ctx``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from support.stores import read_entries, snapshot, store_path

CTX = Path(sys.executable).parent / "ctx"


def ctx(*args: str, author: str | None = None, module: bool = False,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("CTX_AUTHOR", None)
    if author is not None:
        env["CTX_AUTHOR"] = author
    env.update(extra_env or {})
    command = [sys.executable, "-m", "ctx"] if module else [str(CTX)]
    return subprocess.run(command + list(args), env=env, capture_output=True, text=True,
                          timeout=60, cwd=os.environ["HOME"])


def test_console_script_is_installed():
    assert CTX.is_file() and os.access(CTX, os.X_OK)


@pytest.mark.parametrize("module", [False, True], ids=["script", "python-m"])
@pytest.mark.slow
def test_set_get_round_trip(root, module):
    r = ctx("set", "k_round", "Grüße", "aus", "Köln", "--tag", "t", author="Agent One",
            module=module)
    assert r.returncode == 0, r.stderr
    entry = read_entries(root)["k_round"]
    assert entry["value"] == "Grüße aus Köln"
    assert entry["author"] == "Agent One" and entry["source"] == "agent"
    r = ctx("get", "k_round", "--json", module=module)
    assert r.returncode == 0
    assert json.loads(r.stdout)["entry"]["value"] == "Grüße aus Köln"
    r = ctx("get", "k_round", module=module)
    assert "Grüße aus Köln" in r.stdout


@pytest.mark.slow
def test_exit_statuses(root):
    assert ctx("set", "k", "-5").returncode == 0
    assert read_entries(root)["k"]["value"] == -5
    r = ctx("get", "missing")
    assert r.returncode == 1 and r.stderr.startswith("ctx: ") and r.stdout == ""
    assert ctx("set", "k", "v", "--basis", "guessed").returncode == 2
    assert ctx("set", "k", "a", "--tag", "x", "b").returncode == 2
    r = ctx("set", "k_leak", "AKIA" + "ABCDEFGHIJKLMNOP")
    assert r.returncode == 4 and "k_leak" not in read_entries(root)
    raw = b"{ not json"
    store_path(root, "agent").write_bytes(raw)
    assert ctx("set", "k", "v", "--store", "agent").returncode == 3
    assert store_path(root, "agent").read_bytes() == raw
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_python_m_version_and_help():
    r = ctx("--version", module=True)
    assert r.returncode == 0 and "ctx specification 1.0" in r.stdout
    r = ctx("--help", module=True)
    assert r.returncode == 0 and "~/ctx" in r.stdout


@pytest.mark.slow
def test_start_on_an_empty_root_exits_0(root):
    r = ctx("start")
    assert r.returncode == 0, r.stderr
    assert "no session summary yet" in r.stdout
    assert not root.exists()
    root.mkdir()
    r = ctx("start")
    assert r.returncode == 0
    assert snapshot(root) == {}


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(root):
    assert ctx("init").returncode == 0
    failures: list[str] = []

    def writer(name: str) -> None:
        for i in range(10):
            r = ctx("set", f"conc_{name}_{i:02d}", f"value {i}", author=name)
            if r.returncode != 0:
                failures.append(f"{name} {i}: {r.returncode} {r.stderr}")
    threads = [threading.Thread(target=writer, args=(f"w{n}",)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not failures
    found = read_entries(root)
    assert sorted(k for k in found if k.startswith("conc_")) == sorted(
        f"conc_w{n}_{i:02d}" for n in range(3) for i in range(10))
    assert all(found[f"conc_w{n}_03"]["author"] == f"w{n}" for n in range(3))
    assert not [n for n in os.listdir(root / "memory") if n.endswith(".tmp")]


@pytest.mark.slow
def test_concurrent_library_processes_lose_nothing(root):
    script = ("import sys\nfrom ctx.context import Context\n"
              "c = Context()\n"
              "for i in range(10):\n"
              "    c.set(f'lib_{sys.argv[1]}_{i:02d}', i, store='agent')\n")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(n)], cwd=os.environ["HOME"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    assert len([k for k in read_entries(root, "agent") if k.startswith("lib_")]) == 30


# --- the exit (ctx.cli.console): nothing registered or printed is lost ------------------------

@pytest.mark.parametrize("module", [False, True], ids=["script", "python-m"])
@pytest.mark.slow
def test_the_exit_runs_exit_functions_and_flushes_everything(root, tmp_path, module):
    """What was registered to run at exit runs (CTX_PHASES writes its line then), and every
    line printed arrives."""
    for i in range(3):
        assert ctx("set", f"k{i:03}", f"value {i} " + "word " * 40, author="A").returncode == 0
    phases = tmp_path / "phases.jsonl"
    r = ctx("set", "k_phase", "v", author="A", module=module, extra_env={"CTX_PHASES": str(phases)})
    assert r.returncode == 0, r.stderr
    line = json.loads(phases.read_text().splitlines()[-1])
    assert {"prepare", "write", "index"} <= set(line)
    listed = ctx("list", module=module)
    assert listed.returncode == 0 and listed.stdout.count("\n") == 4   # k000..k002 and k_phase
    missing = ctx("get", "nothing_here", module=module)
    assert missing.returncode == 1 and missing.stderr.startswith("ctx: ") and missing.stdout == ""


@pytest.mark.slow
def test_a_profiler_writes_its_report(root, tmp_path):
    """Under cProfile (which writes its report once the program returns) the report is there."""
    report = tmp_path / "set.prof"
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(report), str(CTX), "set", "k", "v"],
                          env=dict(os.environ, CTX_AUTHOR="A"), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert report.is_file() and report.stat().st_size > 0


@pytest.mark.slow
def test_a_reader_that_goes_away_gets_the_ordinary_error(root):
    """`ctx get k | nothing`: output that cannot be flushed takes the ordinary path, the
    same one-line error and status as a process that exits the ordinary way."""
    assert ctx("set", "big", "word " * 2000, author="A").returncode == 0
    ordinary = ("import sys; sys.argv = ['ctx'] + sys.argv[1:]\n"
                "from ctx.cli import main\nmain()")
    seen = []
    for command in ([str(CTX)], [sys.executable, "-m", "ctx"], [sys.executable, "-c", ordinary]):
        reader = subprocess.Popen([*command, "get", "big"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=dict(os.environ), cwd=os.environ["HOME"])
        assert reader.stdout is not None and reader.stderr is not None
        reader.stdout.close()   # the reader is gone before ctx prints
        seen.append((reader.stderr.read().decode(), reader.wait(timeout=60)))
    assert seen[0] == seen[1] == seen[2] == ("ctx: Broken pipe\n", 6), seen
