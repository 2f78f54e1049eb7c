"""The scanner measured the way agents write (§11): every provider token in a sentence,
an environment line and JSON; high-entropy values next to a credential word; and a
corpus of ordinary memory entries that must all pass.

Targets: at least 98% of the prefixed formats refused, by the rule that names them, in
every form; at least 90% of the keyword + high-entropy values; no ordinary entry
refused. Each test prints its count, so ``pytest -s`` shows the figures."""

from __future__ import annotations

import pytest

from ctx.credentials import scan
from support.hookutil import (
    FORMS,
    KEYWORD_CASES,
    KEYWORD_FORMS,
    ORDINARY_NOTES,
    PREFIXED,
    SAMPLES,
    secret_body,
    shows_part,
)


def _refused_by_its_rule(form: str) -> tuple[list[str], list[str]]:
    caught: list[str] = []
    missed: list[str] = []
    for rule in PREFIXED:
        text = FORMS[form](rule, SAMPLES[rule])
        (caught if rule in {f.rule for f in scan(text)} else missed).append(rule)
    return caught, missed


def test_the_corpus_is_broad():
    assert len(PREFIXED) >= 140
    assert len(KEYWORD_CASES) >= 100
    assert len(ORDINARY_NOTES) >= 150


@pytest.mark.parametrize("form", list(FORMS))
def test_prefixed_formats_are_refused_in_every_form(form):
    caught, missed = _refused_by_its_rule(form)
    print(f"\n{form}: {len(caught)}/{len(PREFIXED)} refused by their own rule; missed: {missed}")
    assert len(caught) >= 0.98 * len(PREFIXED), missed


@pytest.mark.parametrize("form", list(FORMS))
def test_a_refusal_never_quotes_the_token(form):
    for rule in PREFIXED:
        body = secret_body(rule)
        for finding in scan(FORMS[form](rule, SAMPLES[rule])):
            assert shows_part(finding.preview, body) == [], (rule, finding)
            assert body not in finding.describe()


@pytest.mark.parametrize("form", list(KEYWORD_FORMS))
def test_high_entropy_values_next_to_a_credential_word_are_refused(form):
    cases = [c for c in KEYWORD_CASES if c[0] == form]
    missed = [text for _form, _name, _value, text in cases if not scan(text)]
    print(f"\n{form}: {len(cases) - len(missed)}/{len(cases)} refused; missed: {missed}")
    assert len(cases) - len(missed) >= 0.9 * len(cases), missed


def test_high_entropy_values_are_refused_overall():
    refused = sum(1 for *_rest, text in KEYWORD_CASES if scan(text))
    print(f"\nkeyword + high entropy: {refused}/{len(KEYWORD_CASES)} refused")
    assert refused >= 0.9 * len(KEYWORD_CASES)


def test_no_ordinary_entry_is_refused():
    refused = {name: scan(text) for name, text in ORDINARY_NOTES.items() if scan(text)}
    print(f"\nordinary entries: {len(refused)}/{len(ORDINARY_NOTES)} refused")
    assert refused == {}


def test_ordinary_entries_around_a_token_do_not_hide_it():
    """The corpus as one long value with one token in the middle: found, and only it."""
    notes = list(ORDINARY_NOTES.values())
    middle = len(notes) // 2
    text = "\n".join(notes[:middle] + ["rotated: " + SAMPLES["gitlab-deploy-token"]] + notes[middle:])
    found = scan(text)
    assert [f.rule for f in found] == ["gitlab-deploy-token"]
    assert found[0].line == text.split("\n").index("rotated: " + SAMPLES["gitlab-deploy-token"]) + 1
