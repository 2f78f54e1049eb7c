"""Every text ctx writes into a user's file, checked whole against a golden file in
this folder, byte for byte: what `ctx wire TARGET --apply` (and `--mcp`) writes into a
new file for each harness of ctx/harness/, the RULES.md `ctx init` writes, the
.gitattributes, .gitignore and .git/info/attributes a new root's repository gets, and
the pre-commit hook script. The wiring is run for real (`ctx wire`, in-process), with the
root /home/me/ctx, ctx at /usr/local/bin/ctx and each harness's default agent name, so
the golden texts are the same on every machine.

A deliberate change of a text: regenerate, then review the diff of tests/golden/:

    python -m pytest tests/golden --regen-golden

A golden file without a wiring that writes it fails too (a harness removed or renamed).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctx.harness.registry import HARNESSES

HERE = Path(__file__).resolve().parent
ROOT = "/home/me/ctx"
PROGRAM = "/usr/local/bin/ctx"
PYTHON = "/usr/local/bin/python3"

# (target, extra options): every target of `ctx wire`, with and without --mcp
WIRINGS = ([(name, ()) for name, h in HARNESSES.items() if h.starts]
           + [(name, ("--mcp",)) for name, h in HARNESSES.items() if h.has_mcp]
           + [("gemini", ("--mcp", "--trust"))])


def golden_name(target: str, options: tuple[str, ...], path: Path) -> str:
    """``gemini.GEMINI.md``, ``codex--mcp.config.toml``, ``claude-code--mcp.claude.json``..."""
    return target + "".join(options) + "." + path.name.lstrip(".")


def check(name: str, text: str, regenerate: bool) -> None:
    path = HERE / name
    if regenerate:
        path.write_bytes(text.encode("utf-8"))
        return
    assert path.exists(), f"no golden file {name}: run python -m pytest tests/golden --regen-golden"
    assert text.encode("utf-8") == path.read_bytes(), (
        f"ctx now writes another {name} than tests/golden/{name}; if on purpose: "
        "python -m pytest tests/golden --regen-golden")


@pytest.fixture
def regenerate(request) -> bool:
    return bool(request.config.getoption("--regen-golden"))


def wire(run, tmp_path: Path, monkeypatch, target: str, options: tuple[str, ...]) -> dict[str, str]:
    """What `ctx wire TARGET OPTIONS --apply` writes into a fresh HOME and project: golden name -> text."""
    monkeypatch.setattr("ctx.harness.wiring.this_ctx", lambda: PROGRAM)
    project = tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    monkeypatch.chdir(project)
    done = run("wire", target, *options, "--apply", "--json", env={"CTX_HOME": ROOT},
               author=None if HARNESSES[target].agent else "Agent One")
    assert done.exit_code == 0, done.output
    files = [Path(f["path"]) for f in json.loads(done.stdout)["files"]]
    assert files
    return {golden_name(target, options, p): p.read_text(encoding="utf-8") for p in files}


@pytest.mark.parametrize("target,options", WIRINGS, ids=[t + "".join(o) for t, o in WIRINGS])
def test_each_wiring_writes_its_golden_text(run, tmp_path, monkeypatch, regenerate, target, options):
    for name, text in wire(run, tmp_path, monkeypatch, target, options).items():
        check(name, text, regenerate)


def test_rules_md_as_ctx_init_writes_it(tmp_path, regenerate):
    from ctx.storage.root import ensure_layout
    ensure_layout(tmp_path / "root")
    check("RULES.md", (tmp_path / "root" / "RULES.md").read_text(encoding="utf-8"), regenerate)


@pytest.mark.parametrize("name", ["gitattributes", "gitignore", "info-attributes"])
def test_the_git_files_a_new_root_gets(tmp_path, regenerate, name):
    import pygit2

    from ctxgit.guard.install import ensure_as_written, ensure_gitattributes, ensure_gitignore
    if name == "info-attributes":  # (the repository's own, .git/info/attributes)
        ensure_as_written(pygit2.init_repository(str(tmp_path)))
        path = tmp_path / ".git" / "info" / "attributes"
    else:
        assert {"gitattributes": ensure_gitattributes, "gitignore": ensure_gitignore}[name](tmp_path)
        path = tmp_path / f".{name}"
    check(name, path.read_text(encoding="utf-8"), regenerate)


def test_the_pre_commit_hook(regenerate):
    from hooks.install import hook_text
    check("pre-commit", hook_text(PYTHON), regenerate)


def test_every_golden_file_is_written_by_something(run, tmp_path, monkeypatch):
    made = {"RULES.md", "pre-commit", "gitattributes", "gitignore", "info-attributes"}
    for target, options in WIRINGS:
        made |= set(wire(run, tmp_path / (target + "".join(options)), monkeypatch, target, options))
    kept = {p.name for p in HERE.iterdir() if p.is_file() and p.suffix != ".py"}
    assert kept == made, f"stale: {sorted(kept - made)}; missing: {sorted(made - kept)}"


def _sentences(text: str) -> list[str]:
    words = " ".join(re.sub(r"<!--.*?-->", " ", text).split())
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", words) if s.strip()]


@pytest.mark.parametrize("name", sorted(p.name for p in HERE.glob("*.md")))  # the pointers and RULES.md
def test_no_sentence_of_a_text_for_the_model_repeats(name):
    sentences = _sentences((HERE / name).read_text(encoding="utf-8"))
    repeated = sorted({s for s in sentences if sentences.count(s) > 1})
    assert sentences and not repeated, repeated


def test_the_sentence_check_finds_a_repeat():
    assert _sentences("Run it. You are\nX. Run it.").count("Run it.") == 2


def test_every_harness_module_is_a_target():
    """Adding a harness is one module in ctx/harness/ (and its golden files): the registry lists it."""
    import importlib
    machinery = {"__init__", "base", "edit", "registry", "texts", "tomledit", "wiring"}
    package = Path(importlib.import_module("ctx.harness").__file__).parent
    modules = sorted(p.stem for p in package.glob("*.py") if p.stem not in machinery)
    declared = {importlib.import_module(f"ctx.harness.{m}").HARNESS.name for m in modules}
    assert declared == set(HARNESSES) and len(modules) == len(HARNESSES)


def test_the_readmes_pointer_is_the_pointer_ctx_writes_without_its_budget():
    from ctx.harness.texts import pointer
    readme = (HERE.parent.parent / "README.md").read_text(encoding="utf-8")
    by_hand = readme.split("```markdown\n", 1)[1].split("```", 1)[0]
    # between the markers, less the line naming this machine's root and agent
    written = [line for line in pointer(Path("/r"), "<agent name>", 123).splitlines()[1:-1]
               if not line.startswith("Run every `ctx` command")]
    assert by_hand.splitlines() == [line.replace(" --max-chars 123", "") for line in written]
