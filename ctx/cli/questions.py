"""The questions of spec §13.3, one at a time, each with a default.

``run_setup(ask)`` asks them through ``ask(question, default) -> answer``
(a prompt on a terminal, a script in tests, ``lambda q, d: d`` for
``--yes``) and returns the answers. An empty answer, or ``default``, takes
the default; an answer that is not valid is asked again, with the reason,
a few times, then refused. ``record_answers`` writes the focus and the
standing instructions into the context as one commit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from ctx import settings
from ctx.errors import InvalidArgument
from ctx.harness.registry import START_TARGETS as TARGETS

Ask = Callable[[str, str], str]
T = TypeVar("T")
ATTEMPTS = 3
NONE_WORDS = ("none", "no", "-", "nothing")


@dataclass
class SetupAnswers:
    root: Path
    agent: str
    harnesses: list[str] = field(default_factory=list)
    version_control: bool = True
    focus: str | None = None
    instructions: list[str] = field(default_factory=list)


def _is_default(answer: str | None) -> bool:
    return answer is None or not answer.strip() or answer.strip().lower() in ("default", "the default")


def _ask_until(ask: Ask, question: str, default: str, parse: Callable[[str], T]) -> T:
    """Ask until ``parse`` accepts the answer (the default when none is given)."""
    prompt = question
    for _ in range(ATTEMPTS):
        answer = ask(prompt, default)
        text = default if _is_default(answer) else answer.strip()
        try:
            return parse(_utf8(text))
        except InvalidArgument as error:
            prompt = f"{error}. {question}"
    raise InvalidArgument(f"no valid answer to {question!r} after {ATTEMPTS} tries")


def _utf8(text: str) -> str:
    """``text``, unless it carries bytes that were not UTF-8 (the lone surrogates a terminal's
    reader makes of them), which no file ctx writes could hold (tests/cli/test_setup.py)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise InvalidArgument(f"the answer is not UTF-8 text (character {error.start + 1})") from None
    return text


def _root(text: str) -> Path:
    path = Path(os.path.expanduser(text)).absolute()
    if path.exists() and not path.is_dir():
        raise InvalidArgument(f"{path} is a file, not a directory")
    return path


def _name(text: str) -> str:
    if not text.strip():
        raise InvalidArgument("the name must not be empty")
    if re.search(r"[\x00-\x1f<>]", text):
        raise InvalidArgument("the name must not hold control characters or < >")
    from ctx.model import validate_author
    return validate_author(text, "the name") or text.strip()  # (it becomes CTX_AUTHOR: the same rule)


def _harnesses(text: str) -> list[str]:
    if text.strip().lower() in NONE_WORDS:
        return []
    chosen = [t for t in re.split(r"[,\s]+", text.strip().lower()) if t]
    unknown = [t for t in chosen if t not in TARGETS]
    if unknown:
        raise InvalidArgument(f"unknown harness {unknown[0]!r}: use {', '.join(TARGETS)}, or none")
    return list(dict.fromkeys(chosen))


def _yes_no(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("y", "yes", "true", "local", "git"):
        return True
    if lowered in ("n", "no", "false", "none"):
        return False
    raise InvalidArgument("answer yes or no")


def _optional(text: str) -> str | None:
    return None if text.strip().lower() in NONE_WORDS else text.strip()


def _instructions(text: str) -> list[str]:
    if text.strip().lower() in NONE_WORDS:
        return []
    return [part.strip() for part in re.split(r"\s*;\s*|\n+", text) if part.strip()]


def run_setup(ask: Ask, *, harness: str | None = None, agent: str | None = None,
              root: Path | None = None) -> SetupAnswers:
    """Ask §13.3's questions one at a time and return the answers.

    ``harness`` is the one ctx runs in (the default of question 3), ``agent``
    the default name (else CTX_AUTHOR, else the harness's name).
    """
    default_root = str(root or settings.home())
    default_agent = agent or settings.author() or {"claude-code": "Claude", "codex": "Codex",
                                                   "gemini": "Gemini"}.get(harness or "", "Agent")
    answers = SetupAnswers(root=Path(), agent="")
    answers.root = _ask_until(ask, "Where should the context root go? (CTX_HOME)",
                              default_root, _root)
    answers.agent = _ask_until(ask, "Which name should this agent use, for CTX_AUTHOR and "
                               "its summaries?", default_agent, _name)
    answers.harnesses = _ask_until(ask, f"Which harnesses should start from ctx? "
                                   f"({', '.join(TARGETS)}, or none)", harness or "none", _harnesses)
    answers.version_control = _ask_until(ask, "Keep the root under version control "
                                         "(a local git repository, no remote)?", "yes", _yes_no)
    answers.focus = _ask_until(ask, "What is the work about now, in one paragraph? "
                               "(current_focus)", "none", _optional)
    answers.instructions = _ask_until(ask, "Standing instructions for every agent, "
                                      "separated by ';' (the operator store)", "none", _instructions)
    return answers


def instruction_key(text: str, taken: set[str]) -> str:
    """``operator_instruction_<words>``: a snake_case key from the instruction's first words."""
    words = re.findall(r"[a-z0-9]+", text.lower())[:5] or ["item"]
    key = "operator_instruction_" + "_".join(words)
    candidate, n = key, 2
    while candidate in taken:
        candidate, n = f"{key}_{n}", n + 1
    return candidate


def record_answers(context, answers: SetupAnswers) -> list:
    """Write current_focus and the standing instructions as one commit (operation ``setup``).

    Both are the operator's words typed by the agent: source operator,
    basis reported (§13.5). An instruction already stored with the same
    text is not written again.
    """
    from ctx import model
    from ctx.changes import Edit
    from ctx.credentials import scan
    from ctx.errors import CredentialRefused
    for text in ([answers.focus] if answers.focus else []) + answers.instructions:
        findings = scan(text)
        if findings:
            raise CredentialRefused(f"an answer looks like it holds a credential "
                                    f"({findings[0].description}: {findings[0].preview}); "
                                    "credentials must not be stored in ctx", findings)

    def mutate(stores) -> list:
        when = model.now()
        edits = []
        if answers.focus:
            shared = stores["shared"].entries
            before = shared.get(model.FOCUS_KEY)
            after = model.apply_set(before, answers.focus, author=context.author, when=when,
                                    source="operator", basis="reported")
            shared[model.FOCUS_KEY] = after
            edits.append(Edit("shared", model.FOCUS_KEY, before, after))
        operator = stores["operator"].entries
        known = {model.value_text(e.get("value")) for e in operator.values()}
        for text in answers.instructions:
            if text in known:
                continue
            key = instruction_key(text, set(operator))
            entry = model.apply_set(None, text, author=context.author, when=when,
                                    source="operator", basis="reported", tags=["preference"])
            operator[key] = entry
            known.add(text)
            edits.append(Edit("operator", key, None, entry))
        return edits
    return context.transact("setup", ["shared", "operator"], mutate)
