"""The credential pattern table (``ctx.credentials``, §11): one realistic fake
secret per rule, where a finding points, what it shows of the secret, no
false positive on ordinary notes, placeholders ignored.

No timing is asserted here; the keyword prefilter is checked by behaviour
(a rule whose keywords are absent never runs its expression)."""

from __future__ import annotations

import re

import pytest

from ctx import credentials as secrets
from ctx.credentials import RULES, Finding, redact, scan
from support.hookutil import (ALNUM, BASE32, ORDINARY_NOTES, SAMPLES, URLSAFE, chars, in_prose,
                      pieces, secret_body, shows_part)

RULE_IDS = [r.id for r in RULES]

# gitleaks rule ids (https://github.com/gitleaks/gitleaks, config/gitleaks.toml) the
# table claims to follow; generic-api-key is gitleaks' generic rule
GITLEAKS_IDS = {
    "private-key", "aws-access-token", "github-pat", "github-oauth", "github-app-token",
    "github-refresh-token", "github-fine-grained-pat", "gitlab-pat", "slack-bot-token",
    "slack-user-token", "slack-legacy-token", "slack-app-token", "anthropic-api-key",
    "openai-api-key", "gcp-api-key", "stripe-access-token", "generic-api-key",
}


# --- the table itself -------------------------------------------------------------------

def test_every_rule_has_a_sample_and_every_sample_a_rule():
    assert set(SAMPLES) == set(RULE_IDS)
    assert len(RULE_IDS) == len(set(RULE_IDS)), "rule ids are unique"


def test_rule_ids_are_gitleaks_ids():
    assert set(RULE_IDS) <= GITLEAKS_IDS


@pytest.mark.parametrize("rule", RULES, ids=RULE_IDS)
def test_rule_is_well_formed(rule):
    assert rule.description and rule.keywords
    assert all(k == k.lower() and k for k in rule.keywords), "keywords are matched on lowered text"
    assert isinstance(rule.pattern, re.Pattern)


@pytest.mark.parametrize("rule", RULE_IDS)
def test_every_keyword_list_admits_its_own_sample(rule):
    """The prefilter must not keep a rule from seeing its own kind of secret."""
    keywords = next(r.keywords for r in RULES if r.id == rule)
    assert any(k in SAMPLES[rule].lower() for k in keywords)


# --- each pattern finds its own kind -------------------------------------------------------

@pytest.mark.parametrize("rule", RULE_IDS)
def test_pattern_catches_its_secret(rule):
    found = scan(SAMPLES[rule])
    assert [f.rule for f in found][:1] == [rule], found
    assert all(isinstance(f, Finding) for f in found)


@pytest.mark.parametrize("rule", RULE_IDS)
def test_pattern_catches_its_secret_inside_a_note(rule):
    """In a sentence, on a later line, after ordinary text: line and column point at it."""
    sample = SAMPLES[rule]
    note = "Deploy notes\n\nStep two: export it\n" + in_prose(sample)
    found = [f for f in scan(note) if f.rule == rule]
    assert len(found) == 1, found
    f = found[0]
    assert f.line == 4
    line_text = note.split("\n")[3]
    # where the match starts: the sample's first line (for an assignment, the whole name)
    anchor = sample.split("\n")[0]
    assert f.column == line_text.index(anchor) + 1
    assert f.description == next(r.description for r in RULES if r.id == rule)


@pytest.mark.parametrize("rule", RULE_IDS)
def test_a_finding_never_shows_the_secret_whole(rule):
    body = secret_body(rule)
    for f in scan(in_prose(SAMPLES[rule])):
        assert body not in f.preview
        assert body.replace("\n", "") not in f.preview
        assert shows_part(f.preview, body) == []
        assert f.rule in f.describe() and f.description in f.describe()
        assert body not in f.describe()


@pytest.mark.parametrize("rule", RULE_IDS)
def test_two_secrets_two_findings_in_order(rule):
    text = f"old: {SAMPLES['aws-access-token']}\nnew: {SAMPLES[rule]}"
    found = scan(text)
    assert found[0].rule == "aws-access-token" and found[0].line == 1
    assert any(f.rule == rule and f.line >= 2 for f in found)
    assert [(f.line, f.column) for f in found] == sorted((f.line, f.column) for f in found)


# realistic variants of a kind: other key types, other prefixes, where it sits
VARIANTS = {
    "pem openssh": ("private-key", "-----BEGIN " + "OPENSSH PRIVATE" + " KEY-----\nb3Blbn" + chars(60, ALNUM)),
    "pem pkcs8": ("private-key", "-----BEGIN " + "PRIVATE" + " KEY-----\nMIIEvg" + chars(58, ALNUM)),
    "pem ec": ("private-key", "-----BEGIN " + "EC PRIVATE" + " KEY-----"),
    "pem encrypted": ("private-key", "-----BEGIN " + "ENCRYPTED PRIVATE" + " KEY-----"),
    "pgp block": ("private-key", "-----BEGIN " + "PGP PRIVATE KEY" + " BLOCK-----"),
    "aws temporary": ("aws-access-token", "AS" + "IA" + chars(16, BASE32)),
    "aws in env line": ("aws-access-token", "AWS_ACCESS_KEY_ID=" + "AK" + "IA" + chars(16, BASE32)),
    "github token in url": ("github-pat", "https://" + "gh" + "p_" + chars(36, ALNUM) + "@github.com/o/r.git"),
    "github user-to-server": ("github-app-token", "gh" + "u_" + chars(36, ALNUM)),
    "slack config token": ("slack-user-token", "xo" + "xe.xoxp-1-" + chars(40, ALNUM)),
    "openai legacy": ("openai-api-key", "sk" + "-" + chars(20, ALNUM) + "T3Blbk" + "FJ" + chars(20, ALNUM)),
    "openai service account": ("openai-api-key", "sk" + "-svcacct-" + chars(40, URLSAFE)),
    "openai in env": ("openai-api-key", "OPENAI_API_KEY=" + "sk" + "-proj-" + chars(40, URLSAFE)),
    "anthropic admin": ("anthropic-api-key", "sk" + "-ant-admin01-" + chars(80, URLSAFE)),
    "stripe test": ("stripe-access-token", "sk" + "_test_" + "51" + chars(30, ALNUM)),
    "stripe restricted": ("stripe-access-token", "rk" + "_live_" + "51" + chars(30, ALNUM)),
    "generic token=": ("generic-api-key", "token=" + chars(24, ALNUM)),
    "generic secret=": ("generic-api-key", "client_secret=" + chars(32, ALNUM)),
    "generic spaced": ("generic-api-key", "password = '" + chars(14, ALNUM) + "'"),
    "generic json": ("generic-api-key", '{"api_key": "' + chars(32, ALNUM) + '"}'),
    "generic api-key": ("generic-api-key", "X-Api-Key=" + chars(32, ALNUM)),
    "generic aws secret": ("generic-api-key", "aws_secret_access_key = " + chars(20, ALNUM) + "/" + chars(19, ALNUM)),
    "generic passwd": ("generic-api-key", "passwd=" + chars(12, ALNUM)),
    "generic in url": ("generic-api-key", "https://api.internal/v1/hook?access_token=" + chars(30, ALNUM)),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_realistic_variants_are_caught(name):
    rule, text = VARIANTS[name]
    assert rule in {f.rule for f in scan("note: " + text)}


# realistic formats the table misses: each is a bug (see the report)
def test_secret_key_assignment_is_caught():
    assert scan("SECRET_KEY=" + "dj-" + chars(40, ALNUM))


def test_yaml_password_is_caught():
    assert scan("staging db\nuser: deploy\npassword: " + chars(16, ALNUM + "!#%"))


def test_password_starting_with_dollar_is_caught():
    assert scan("password=$" + "3" + chars(15, ALNUM + "!#%"))


# --- no false positives -------------------------------------------------------------------

@pytest.mark.parametrize("name", list(ORDINARY_NOTES))
def test_ordinary_note_is_not_flagged(name):
    assert scan(ORDINARY_NOTES[name]) == []


def test_a_long_ordinary_note_is_not_flagged():
    note = "\n".join(ORDINARY_NOTES.values()) * 3
    assert scan(note) == []


@pytest.mark.parametrize("note", [
    "Pass the token" + "= parameter to the endpoint",
    "The login form posts password" + "= together with username=",
    "The service reads it with password" + " = os.environ['DB_PASSWORD']",
    "In the fixture: secret" + " = make_secret(length=32)",
])
def test_prose_mentioning_an_assignment_is_not_flagged(note):
    assert scan(note) == []


def test_kebab_case_sk_name_is_not_flagged():
    assert scan("Moved the sk" + "-learn-compatible-estimators to the new package") == []


def test_empty_and_none_like_texts():
    assert scan("") == []
    assert scan("\n\n") == []
    assert scan("token") == []


# --- placeholders ----------------------------------------------------------------------------

@pytest.mark.parametrize("placeholder", [
    "EXAMPLE", "REDACTED", "YOUR_API_KEY_HERE", "$VAR", "<token>", "{secret}", "${TOKEN}",
])
@pytest.mark.parametrize("form", ["token={}", "api_key = {}", 'password="{}"', '"secret": "{}"'])
def test_placeholders_are_not_reported(placeholder, form):
    value = placeholder if len(placeholder) >= 8 else placeholder + "_DB_PASSWORD"
    if placeholder in ("<token>", "{secret}", "${TOKEN}"):
        value = placeholder
    assert scan(form.format(value)) == []


@pytest.mark.parametrize("rule", ["github-pat", "aws-access-token", "openai-api-key", "slack-bot-token"])
def test_placeholder_words_inside_a_token_shape_are_not_reported(rule):
    sample = SAMPLES[rule]
    fake = sample[:len(sample) - 7] + "EXAMPLE"
    assert scan(fake) == []


def test_a_placeholder_next_to_a_real_secret_does_not_hide_it():
    text = "token=${TOKEN}\n" + in_prose(SAMPLES["github-pat"])
    assert [f.rule for f in scan(text)] == ["github-pat"]


# --- redaction and the keyword prefilter ---------------------------------------------------

def test_redact_keeps_a_short_prefix_and_the_length():
    shown = redact("abcdefghijklmnopqrst")
    assert shown.startswith("abcd") and "20" in shown and "efgh" not in shown
    short = redact("abcdefgh")
    assert short.startswith("ab") and "cdef" not in short and "8" in short


def test_prefilter_skips_rules_whose_keywords_are_absent(monkeypatch):
    """A rule's expression runs only when one of its keywords is in the text."""
    ran: list[str] = []

    class Spy:
        def __init__(self, rule):
            self.rule, self.groups = rule, rule.pattern.groups

        def finditer(self, text):
            ran.append(self.rule.id)
            return self.rule.pattern.finditer(text)

    spied = tuple(secrets.Rule(r.id, r.description, r.keywords, Spy(r), r.check) for r in RULES)
    monkeypatch.setattr(secrets, "RULES", spied)
    assert scan("The pool of 20 connections holds under load; p95 412ms") == []
    assert ran == []
    found = scan(SAMPLES["github-pat"])
    assert [f.rule for f in found] == ["github-pat"]
    assert ran == ["github-pat"]


def test_pieces_helper_sees_a_partial_leak():
    # the tests' own check for "no part of the secret" must be able to fail
    secret = SAMPLES["github-pat"]
    assert shows_part("x " + secret[5:20] + " y", secret)
    assert shows_part(redact(secret), secret) == []
    assert len(pieces(secret)) == len(secret) - 9
