"""The questions of §13.3 (run_setup), asked one at a time with defaults,
through a scripted ``ask``; and record_answers, one commit."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctx.cli.questions import SetupAnswers, record_answers, run_setup
from ctx.errors import CredentialRefused, InvalidArgument
from support.gitutil import commit_count, message
from support.stores import read_entries


class Script:
    """An ``ask`` that answers from a list and records every question and default."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, str]] = []

    def __call__(self, question: str, default: str) -> str:
        self.asked.append((question, default))
        return self.answers.pop(0) if self.answers else ""


def test_all_defaults(root, monkeypatch):
    ask = Script()
    answers = run_setup(ask, harness="claude-code")
    assert answers == SetupAnswers(root=root, agent="Claude", harnesses=["claude-code"],
                                   version_control=True, focus=None, instructions=[])
    assert len(ask.asked) == 6  # one question at a time, each with its default
    questions = [q for q, _ in ask.asked]
    assert "context root" in questions[0] and "name" in questions[1]
    assert "harnesses" in questions[2] and "version control" in questions[3]
    assert "about now" in questions[4] and "Standing instructions" in questions[5]
    assert [d for _, d in ask.asked] == [str(root), "Claude", "claude-code", "yes", "none", "none"]


def test_defaults_follow_the_environment(root, monkeypatch):
    monkeypatch.setenv("CTX_AUTHOR", "Agent One")
    monkeypatch.delenv("CTX_HOME")
    ask = Script("default", "the default")
    answers = run_setup(ask)
    assert answers.root == Path.home() / "ctx"
    assert answers.agent == "Agent One" and answers.harnesses == []


def test_answers_are_taken(root, tmp_path):
    ask = Script(str(tmp_path / "my ctx"), "  Agent Two ", "codex, gemini codex", "no",
                 "Ship the upload fix.", "Ask one question at a time; No new dependencies")
    answers = run_setup(ask)
    assert answers.root == tmp_path / "my ctx"
    assert answers.agent == "Agent Two"
    assert answers.harnesses == ["codex", "gemini"]
    assert answers.version_control is False
    assert answers.focus == "Ship the upload fix."
    assert answers.instructions == ["Ask one question at a time", "No new dependencies"]


def test_an_invalid_answer_is_asked_again_with_the_reason(root, tmp_path):
    a_file = tmp_path / "a file"
    a_file.write_text("x")
    ask = Script(str(a_file), str(tmp_path / "ok"), "", "vim-code", "agents-md")
    answers = run_setup(ask)
    assert answers.root == tmp_path / "ok" and answers.harnesses == ["agents-md"]
    assert "is a file" in ask.asked[1][0] and ask.asked[1][0].endswith("(CTX_HOME)")
    assert "unknown harness 'vim-code'" in ask.asked[4][0]


def test_three_invalid_answers_are_refused(root):
    with pytest.raises(InvalidArgument, match="no valid answer"):
        run_setup(Script("", "", "x", "y", "z"))


def test_record_answers_is_one_commit(root, make_context):
    context = make_context(author="Agent One", git=True)
    answers = SetupAnswers(root=root, agent="Agent One", focus="Ship the upload fix.",
                           instructions=["Ask one question at a time.", "No new dependencies."])
    edits = record_answers(context, answers)
    assert len(edits) == 3 and commit_count(root) == 1
    assert "Ctx-Operation: setup" in message(root)
    focus = read_entries(root)["current_focus"]
    assert (focus["value"], focus["source"], focus["basis"], focus["author"]) == \
        ("Ship the upload fix.", "operator", "reported", "Agent One")
    operator = read_entries(root, "operator")
    assert sorted(operator) == ["operator_instruction_ask_one_question_at_a",
                                "operator_instruction_no_new_dependencies"]
    assert all(e["source"] == "operator" and e["tags"] == ["preference"] for e in operator.values())
    # recording the same answers again adds no instruction twice
    record_answers(context, SetupAnswers(root=root, agent="Agent One",
                                         instructions=["No new dependencies.", "Be brief."]))
    assert len(read_entries(root, "operator")) == 3 and commit_count(root) == 2


def test_record_answers_refuses_a_credential(root, make_context):
    answers = SetupAnswers(root=root, agent="A", instructions=["password=hunter2hunter2"])
    with pytest.raises(CredentialRefused):
        record_answers(make_context(), answers)
    assert commit_count(root) == 0


# --- the questions on a real terminal (a pseudo-terminal, the installed ctx) -------------------

def _converse(argv, env, cwd, script, timeout=30.0):
    """Run ARGV on a pseudo-terminal; answer each prompt that contains a script's cue
    with its line. Returns (exit code, everything the terminal showed)."""
    import os
    import select
    import subprocess
    import time
    master, slave = os.openpty()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                            close_fds=True)
    os.close(slave)
    shown, pending, deadline = "", list(script), time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 4096).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            if pending and pending[0][0] in shown.rsplit("\n", 1)[-1]:
                os.write(master, pending.pop(0)[1].encode() + b"\r")
            elif proc.poll() is not None and not ready:
                break
        return proc.wait(timeout=max(1.0, deadline - time.monotonic())), shown
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)


@pytest.mark.slow
def test_init_on_a_terminal_asks_each_question_and_records_the_answers(tmp_path):
    import os
    import sys
    ctx = str(Path(sys.executable).parent / "ctx")
    project, root = tmp_path / "project", tmp_path / "my ctx"
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CTX_")}  # HOME: conftest's
    env.update(CTX_HOME=str(tmp_path / "default root"), TERM="dumb")
    code, shown = _converse([ctx, "init"], env, project, [
        ("Where should the context root go?", str(root)),
        ("Which name should this agent use", "Agent Pty"),
        ("Which harnesses should start from ctx?", "agents-md, warp"),  # an unknown one: asked again
        ("Which harnesses should start from ctx?", "agents-md"),
        ("Keep the root under version control", "yes"),
        ("What is the work about now", "Ship the terminal test"),
        ("Standing instructions for every agent", "Never force-push; Ask before deleting files"),
        ("Apply this change to", "y"),
    ])
    assert code == 0, shown
    assert "unknown harness 'warp'" in shown
    assert not (tmp_path / "default root").exists()  # the answer, not the default, was taken
    assert read_entries(root, "shared")["current_focus"]["value"] == "Ship the terminal test"
    instructions = sorted(e["value"] for e in read_entries(root, "operator").values())
    assert instructions == ["Ask before deleting files", "Never force-push"]
    assert all(e["source"] == "operator" and e["basis"] == "reported"
               for e in read_entries(root, "operator").values())
    pointer = (project / "AGENTS.md").read_text()
    assert "Agent Pty" in pointer and str(root) in pointer
    assert f"CTX_HOME={root}" in shown and "Next: export CTX_HOME=" in shown


def test_an_answer_that_is_not_utf8_is_asked_again(root, tmp_path):
    """A terminal reading bytes that are not UTF-8 hands them on as lone surrogates
    (surrogateescape): each such answer is asked again, with the reason, never taken."""
    bad = "caf\udce9"
    ask = Script(str(tmp_path / bad), str(tmp_path / "ok"), f"Agent {bad}", "Agent Two", "", "", bad, "Fine.")
    answers = run_setup(ask)
    assert answers.root == tmp_path / "ok" and answers.agent == "Agent Two" and answers.focus == "Fine."
    retried = [q for q, _ in ask.asked if q.startswith("the answer is not UTF-8 text")]
    assert len(retried) == 3, ask.asked
